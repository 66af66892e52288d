//! Token lists (an instruction's modifiers, an operand's suffixes) read against a form's
//! slots: fixed tokens, table values and flags.

use super::error::{owned, TokensMismatch};
use super::vocab::{Vocabulary, UNLISTED_BIT};
use crate::codec::bits::Values;
use crate::codec::print::UNLISTED;
use crate::spec::{RowKind, Table, Variant};
use smallvec::SmallVec;

/// One place in a token list: a fixed token, a table's value (its row's name, one token
/// per `.`-separated part) or a flag's name; each token with its [`Vocabulary`] id.
pub(super) enum Slot<'s> {
    Fixed {
        text: &'s str,
        id: u32,
    },
    Table {
        field: usize,
        hidden_zero: bool,
        /// None: the page has no table for the field, and no text reads as it.
        table: Option<&'s Table>,
        /// Non-default rows by first token id, then most tokens first, else in table order
        /// (the order their readings are tried in).
        rows: Vec<Row>,
        ids: Vec<u32>,
        default: Option<u64>,
    },
    Flag {
        field: usize,
        name: &'s str,
        id: u32,
    },
}

/// A table row as a [`Slot`] reads it: its first token's id kept with it, as a text's first
/// token picks the rows to try (and most rows have one token: then the rest is not read).
pub(super) struct Row {
    value: u64,
    first: u32,
    /// Where its token ids start in the slot's `ids`, and how many.
    start: usize,
    n: usize,
}

/// Tokens as text and as [`Vocabulary`] ids (without [`UNLISTED_BIT`], equal ids are equal
/// texts).
#[derive(Clone, Copy)]
pub(super) struct Toks<'t> {
    pub text: &'t [&'t str],
    pub ids: &'t [u32],
}

impl<'t> Toks<'t> {
    pub fn skip(self, n: usize) -> Toks<'t> {
        Toks { text: &self.text[n..], ids: &self.ids[n..] }
    }

    /// Whether the tokens start with those whose ids are `ids`.
    pub fn starts_with(&self, ids: &[u32]) -> bool {
        ids.len() <= self.ids.len() && ids.iter().zip(self.ids).all(|(a, b)| *a == b & !UNLISTED_BIT)
    }
}

impl<'s> Slot<'s> {
    pub fn table<'a>(v: &'s Variant, field: usize, hidden_zero: bool, vocabulary: &mut Vocabulary<'a>) -> Slot<'s>
    where
        's: 'a,
    {
        let table = v.field_table(field);
        let all = table.map(|t| t.rows.as_slice()).unwrap_or_default();
        let mut ids = vec![];
        let mut rows: Vec<Row> = vec![];
        for r in all.iter().filter(|r| r.kind != RowKind::Default) {
            let start = ids.len();
            ids.extend(r.name.split('.').map(|t| vocabulary.intern(t)));
            // `split` yields at least one token.
            rows.push(Row { value: r.value, first: ids[start], start, n: ids.len() - start });
        }
        // Grouped by first token (a text's first token picks its group), most tokens first.
        rows.sort_by_key(|r| (r.first, std::cmp::Reverse(r.n)));
        let default = all.iter().find(|r| r.kind == RowKind::Default).map(|r| r.value);
        Slot::Table { field, hidden_zero, table, rows, ids, default }
    }

    pub fn flag<'a>(v: &'s Variant, field: usize, vocabulary: &mut Vocabulary<'a>) -> Slot<'s>
    where
        's: 'a,
    {
        let name = v.fields[field].name.as_str();
        Slot::Flag { field, name, id: vocabulary.intern(name) }
    }

    /// What the slot looks like in a message.
    fn expected(&self) -> String {
        match self {
            Slot::Fixed { text, .. } => text.to_string(),
            Slot::Table { table, .. } => table.map(|t| t.title.clone()).unwrap_or_default(),
            Slot::Flag { name, .. } => format!("[{name}]"),
        }
    }

    /// Tries each way the slot can read tokens at `toks[0..]`, longest first: sets its
    /// field and asks `rest` about the remaining tokens, until `rest` says yes.
    fn try_each(&self, v: &Variant, toks: Toks, values: &mut Values, rest: &mut dyn FnMut(Toks, &mut Values) -> bool) -> bool {
        let mut take = |set: Option<(usize, u64)>, used: usize, values: &mut Values| {
            if let Some((f, x)) = set {
                values.set(f, x);
            }
            rest(toks.skip(used), values)
        };
        match self {
            Slot::Fixed { id, .. } => toks.starts_with(&[*id]) && take(None, 1, values),
            Slot::Flag { field, id, .. } => (toks.starts_with(&[*id]) && take(Some((*field, 1)), 1, values)) || take(Some((*field, 0)), 0, values),
            Slot::Table { field, hidden_zero, table: Some(t), rows, ids, default } => {
                let first = toks.ids.first().map(|&t| t & !UNLISTED_BIT);
                let from = rows.partition_point(|r| Some(r.first) < first);
                for r in rows[from..].iter().take_while(|r| Some(r.first) == first) {
                    // The group's rows start with the text's first token.
                    if (r.n == 1 || toks.starts_with(&ids[r.start..r.start + r.n])) && take(Some((*field, r.value)), r.n, values) {
                        return true;
                    }
                }
                let unlisted = toks.text.first().and_then(|t| t.strip_prefix(UNLISTED)).and_then(|n| n.parse::<u64>().ok());
                if let Some(x) = unlisted {
                    if t.row(x).is_none() && x <= v.fields[*field].max() && take(Some((*field, x)), 1, values) {
                        return true;
                    }
                }
                (*hidden_zero && take(Some((*field, 0)), 0, values)) || default.is_some_and(|d| take(Some((*field, d)), 0, values))
            }
            Slot::Table { table: None, .. } => false,
        }
    }
}

/// A token list's slots, and the tokens they can read (for a quick rejection).
pub(super) struct Slots<'s> {
    pub slots: Vec<Slot<'s>>,
    /// The ids of every token some slot reads, sorted, then those of the tokens that must
    /// appear (fixed slots): one list, inline when short (most are), as a quick rejection
    /// should not wait for memory elsewhere.
    ids: SmallVec<[u32; 6]>,
    /// Where the required ids start in `ids`.
    n_vocabulary: usize,
    /// Whether `UNLISTED<n>` tokens may read (a slot has a table).
    unlisted: bool,
    /// Whether some slot reads nothing at all (a field without its table).
    dead: bool,
    /// The order nvdisasm prints the slots in, where it differs from the page's (the
    /// form's stored conventions): tried first, as two slots may read the same token.
    printed: Option<Box<[usize]>>,
}

impl<'s> Slots<'s> {
    pub fn new(slots: Vec<Slot<'s>>) -> Slots<'s> {
        let (mut vocabulary, mut required) = (vec![], vec![]);
        let (mut unlisted, mut dead) = (false, false);
        for s in &slots {
            match s {
                Slot::Fixed { id, .. } => {
                    vocabulary.push(*id);
                    required.push(*id);
                }
                Slot::Flag { id, .. } => vocabulary.push(*id),
                Slot::Table { table: Some(_), ids, .. } => {
                    unlisted = true;
                    vocabulary.extend(ids);
                }
                Slot::Table { table: None, .. } => dead = true,
            }
        }
        vocabulary.sort_unstable();
        vocabulary.dedup();
        let n_vocabulary = vocabulary.len();
        Slots { slots, ids: vocabulary.into_iter().chain(required).collect(), n_vocabulary, unlisted, dead, printed: None }
    }

    /// These slots, read first in `order` (a permutation of their indices: nvdisasm's
    /// print order); the identity changes nothing.
    pub fn printed_in(mut self, order: Vec<usize>) -> Slots<'s> {
        if order.iter().enumerate().any(|(i, &k)| i != k) {
            self.printed = Some(order.into_boxed_slice());
        }
        self
    }

    pub fn vocabulary(&self) -> &[u32] {
        &self.ids[..self.n_vocabulary]
    }

    pub fn required(&self) -> &[u32] {
        &self.ids[self.n_vocabulary..]
    }

    /// False only where [`Slots::read`] fails: a token no slot reads, a fixed token
    /// missing, or a slot that reads nothing.
    pub fn may_read(&self, tokens: &[u32]) -> bool {
        let known = |&t: &u32| self.vocabulary().binary_search(&(t & !UNLISTED_BIT)).is_ok() || (self.unlisted && t & UNLISTED_BIT != 0);
        !self.dead && tokens.iter().all(known) && self.required().iter().all(|&r| tokens.iter().any(|&t| t & !UNLISTED_BIT == r))
    }

    /// Sets the slots' fields from `toks`, which they must read exactly: in nvdisasm's
    /// order if stored, else in page order if possible, else in any order.
    pub fn read(&self, v: &Variant, toks: Toks, values: &mut Values) -> Result<(), TokensMismatch> {
        let n = self.slots.len();
        if self.printed.as_deref().is_some_and(|order| self.read_in(v, order, toks, values)) {
            return Ok(());
        }
        let page_order =
            if n <= IN_ORDER.len() { self.read_in(v, &IN_ORDER[..n], toks, values) } else { self.read_in(v, &(0..n).collect::<Vec<_>>(), toks, values) };
        if page_order {
            return Ok(());
        }
        // nvdisasm's modifier order is not always the page's (a syntax difference the
        // validator reports): accept any order. (Every reading in the page's order comes
        // first: `read_any` alone could settle on another order before a page-order
        // reading with other rows, and placeholder rows read in several ways.)
        if n <= 32 && self.read_any(v, 0, toks, values, &mut vec![]) {
            return Ok(());
        }
        Err(TokensMismatch { found: owned(toks.text), expected: self.slots.iter().map(Slot::expected).collect() })
    }

    /// Whether the slots not in `used` (bit k: slot k), in some order, read exactly `toks`.
    /// Slots read tokens first, and those that read none (a flag's 0, a hidden or default
    /// row) only once the tokens are used up: their order does not matter, and trying it
    /// would visit every subset of them. `failed` remembers states (slots used, tokens
    /// left) that cannot be completed, so that each is explored once rather than once per
    /// order of the slots before it.
    fn read_any(&self, v: &Variant, used: u32, toks: Toks, values: &mut Values, failed: &mut Vec<(u32, usize)>) -> bool {
        let n = self.slots.len();
        let free = (0..n).filter(|&k| used >> k & 1 == 0);
        if toks.ids.is_empty() {
            return free.into_iter().all(|k| self.slots[k].try_each(v, toks, values, &mut |_, _| true));
        }
        let state = (used, toks.ids.len());
        if failed.contains(&state) {
            return false;
        }
        for k in free {
            let mut next = |left: Toks, values: &mut Values| left.ids.len() < toks.ids.len() && self.read_any(v, used | 1 << k, left, values, failed);
            if self.slots[k].try_each(v, toks, values, &mut next) {
                return true;
            }
        }
        failed.push(state);
        false
    }

    /// Whether the slots, in `order`, read exactly `toks`.
    fn read_in(&self, v: &Variant, order: &[usize], toks: Toks, values: &mut Values) -> bool {
        let Some((&first, rest)) = order.split_first() else { return toks.ids.is_empty() };
        self.slots[first].try_each(v, toks, values, &mut |left, values| self.read_in(v, rest, left, values))
    }
}

/// `0, 1, 2, …`: the page's order of up to 32 slots, without building it.
const IN_ORDER: [usize; 32] = {
    let mut a = [0; 32];
    let mut i = 0;
    while i < 32 {
        a[i] = i;
        i += 1;
    }
    a
};
