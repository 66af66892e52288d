//! Token lists (an instruction's modifiers, an operand's suffixes) read against a form's
//! slots: fixed tokens, table values and flags.

use super::error::{owned, TokensMismatch};
use super::vocab::{Vocabulary, UNLISTED_BIT};
use crate::codec::bits::Values;
use crate::codec::print::UNLISTED;
use crate::spec::{ModSlot, RowKind, Variant};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One place in a token list as [`Slots::new`] takes it: a fixed token, a table's value
/// (its row's name, one token per `.`-separated part) or a flag's name; each token with
/// its [`Vocabulary`] id. [`Slots::new`] packs a list of them into a few arrays.
pub(super) enum Slot {
    Fixed {
        id: u32,
    },
    Table {
        field: usize,
        hidden_zero: bool,
        /// False: the page has no table for the field, and no text reads as it.
        listed: bool,
        /// Non-default rows by first token id, then most tokens first, else in table order
        /// (the order their readings are tried in).
        rows: Vec<Row>,
        ids: Vec<u32>,
        default: Option<u64>,
    },
    Flag {
        field: usize,
        id: u32,
    },
}

/// A table row as a [`Slot`] reads it: its first token's id kept with it, as a text's first
/// token picks the rows to try (and most rows have one token: then the rest is not read).
/// 24 bytes: a slot's rows are scanned.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Row {
    value: u64,
    first: u32,
    /// Where its token ids start in the ids (the slot's while built, then the list's),
    /// and how many.
    start: u32,
    n: u32,
}

/// What reading a slot needs, packed (24 bytes): the slots of a list lie together, and
/// their rows and token ids in two more arrays, so that reading a form's modifiers touches
/// a few cache lines (most texts meet forms not read lately, whose memory is not in cache).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Packed {
    kind: Kind,
    hidden_zero: bool,
    /// Under [`crate::codec::bits::MAX_FIELDS`], which the page parser holds variants to.
    field: u8,
    /// A fixed token's or a flag's id.
    id: u32,
    /// A table's rows in [`Slots::rows`].
    rows: (u32, u32),
    /// A table's default row's value, if it has one (`has_default`; not an `Option`,
    /// which would take 8 bytes more).
    default: u64,
    has_default: bool,
}

const _: () = assert!(std::mem::size_of::<Packed>() <= 24 && std::mem::size_of::<Row>() <= 24);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Fixed,
    Table,
    /// A field without its table: no text reads as it.
    Dead,
    Flag,
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

impl Slot {
    pub fn table<'a, 's>(v: &'s Variant, field: usize, hidden_zero: bool, vocabulary: &mut Vocabulary<'a>) -> Slot
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
            rows.push(Row { value: r.value, first: ids[start], start: index(start), n: index(ids.len() - start) });
        }
        // Grouped by first token (a text's first token picks its group), most tokens first.
        rows.sort_by_key(|r| (r.first, std::cmp::Reverse(r.n)));
        let default = all.iter().find(|r| r.kind == RowKind::Default).map(|r| r.value);
        Slot::Table { field, hidden_zero, listed: table.is_some(), rows, ids, default }
    }

    pub fn flag<'a, 's>(v: &'s Variant, field: usize, vocabulary: &mut Vocabulary<'a>) -> Slot
    where
        's: 'a,
    {
        Slot::Flag { field, id: vocabulary.intern(&v.fields[field].name) }
    }
}

/// `n` as a `u32`: a slot list comes from one variant of one page, whose text
/// ([`crate::spec::MAX_PAGE_BYTES`]) holds far fewer rows and tokens. (`u16` would not
/// do: a hostile page may give one table 2^16 rows.)
fn index(n: usize) -> u32 {
    u32::try_from(n).expect("a page of at most 4 MiB has fewer than 2^32 rows and tokens")
}

/// A field's index as [`Packed`] keeps it.
fn field_index(field: usize) -> u8 {
    u8::try_from(field).expect("variants have at most MAX_FIELDS fields (checked by the page parser)")
}

/// A token list's slots packed (see [`Packed`]), and the tokens they can read (for a quick
/// rejection). What only messages and `UNLISTED` values read (a table, a name) is read
/// from the variant then, not kept here: the lists of every form are shared by the forms
/// alike, and their arrays by the lists alike (see [`SlotPool`]).
#[derive(PartialEq, Eq, Hash)]
pub(super) struct Slots {
    slots: Arc<[Packed]>,
    /// Every table's rows, each table's together.
    rows: Arc<[Row]>,
    /// The rows' token ids ([`Row::start`] counts from here).
    row_ids: Arc<[u32]>,
    /// The ids of every token some slot reads, sorted; then those of the tokens that must
    /// appear (fixed slots); then the order nvdisasm prints the slots in, where it differs
    /// from the page's (the form's stored conventions: tried first, as two slots may read
    /// the same token).
    ids: Arc<[u32]>,
    /// Where the required ids and the printed order start in `ids`.
    n_vocabulary: u32,
    printed_at: u32,
    /// Whether `UNLISTED<n>` tokens may read (a slot has a table).
    unlisted: bool,
    /// Whether some slot reads nothing at all (a field without its table).
    dead: bool,
}

/// The arrays of the token lists built so far, each distinct one once: the discovered
/// spec's 4 100 lists (an instruction's modifiers, an operand's suffixes) are about 1 000
/// distinct ones, and their 6 000 tables 377 (one table serves every form of an
/// instruction, on each architecture). A text's candidate forms, mostly not in cache, then
/// find their slots in cache more often: read lately by a form alike.
#[derive(Default)]
pub(super) struct SlotPool {
    lists: HashSet<Arc<Slots>>,
    slots: HashMap<Vec<Packed>, Arc<[Packed]>>,
    rows: HashMap<Vec<Row>, Arc<[Row]>>,
    ids: HashMap<Vec<u32>, Arc<[u32]>>,
}

/// The array in `pool` equal to `items`, added if none is.
fn share<T: Clone + Eq + std::hash::Hash>(pool: &mut HashMap<Vec<T>, Arc<[T]>>, items: Vec<T>) -> Arc<[T]> {
    pool.entry(items).or_insert_with_key(|items| items.as_slice().into()).clone()
}

impl Slots {
    /// `printed`: the order nvdisasm prints the slots in, a permutation of their indices
    /// (none, or the identity: the page's).
    pub fn new(list: Vec<Slot>, printed: &[usize], pool: &mut SlotPool) -> Arc<Slots> {
        let (mut vocabulary, mut required, mut row_ids) = (vec![], vec![], vec![]);
        let (mut slots, mut rows) = (vec![], vec![]);
        let (mut unlisted, mut dead) = (false, false);
        for s in list {
            let mut p = Packed { kind: Kind::Fixed, hidden_zero: false, field: 0, id: 0, rows: (0, 0), default: 0, has_default: false };
            match s {
                Slot::Fixed { id } => {
                    vocabulary.push(id);
                    required.push(id);
                    p.id = id;
                }
                Slot::Flag { field, id } => {
                    vocabulary.push(id);
                    (p.kind, p.field, p.id) = (Kind::Flag, field_index(field), id);
                }
                Slot::Table { field, hidden_zero, listed, rows: table_rows, ids, default } => {
                    unlisted |= listed;
                    dead |= !listed;
                    vocabulary.extend(&ids);
                    let (first_row, base) = (rows.len(), row_ids.len());
                    rows.extend(table_rows.iter().map(|r| Row { start: index(base) + r.start, ..*r }));
                    row_ids.extend(ids);
                    let kind = if listed { Kind::Table } else { Kind::Dead };
                    let span = (index(first_row), index(rows.len()));
                    p = Packed {
                        kind,
                        hidden_zero,
                        field: field_index(field),
                        id: 0,
                        rows: span,
                        default: default.unwrap_or(0),
                        has_default: default.is_some(),
                    };
                }
            }
            slots.push(p);
        }
        vocabulary.sort_unstable();
        vocabulary.dedup();
        let n_vocabulary = index(vocabulary.len());
        let printed_at = index(vocabulary.len() + required.len());
        // The identity is the page's order: nothing to store.
        let printed = if printed.iter().enumerate().any(|(i, &k)| i != k) { printed } else { &[] };
        let ids = vocabulary.into_iter().chain(required).chain(printed.iter().map(|&k| index(k))).collect();
        let (slots, rows, row_ids, ids) =
            (share(&mut pool.slots, slots), share(&mut pool.rows, rows), share(&mut pool.ids, row_ids), share(&mut pool.ids, ids));
        let list = Slots { slots, rows, row_ids, ids, n_vocabulary, printed_at, unlisted, dead };
        if let Some(alike) = pool.lists.get(&list) {
            return alike.clone();
        }
        let list = Arc::new(list);
        pool.lists.insert(list.clone());
        list
    }

    /// Its bytes, each shared array counted as its share (its bytes over the lists that
    /// hold it; see `forms_stay_compact`).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        fn share<T>(a: &Arc<[T]>) -> usize {
            std::mem::size_of_val::<[T]>(a) / Arc::strong_count(a)
        }
        std::mem::size_of::<Slots>() + share(&self.slots) + share(&self.rows) + share(&self.row_ids) + share(&self.ids)
    }

    pub fn vocabulary(&self) -> &[u32] {
        &self.ids[..self.n_vocabulary as usize]
    }

    pub fn required(&self) -> &[u32] {
        &self.ids[self.n_vocabulary as usize..self.printed_at as usize]
    }

    /// nvdisasm's order of the slots, where it is not the page's.
    fn printed(&self) -> Option<&[u32]> {
        let order = &self.ids[self.printed_at as usize..];
        (!order.is_empty()).then_some(order)
    }

    /// A load from each of the first [`TOUCHED`] cache lines' worth of each of its arrays,
    /// for [`super::Form::warm`] (a table may have thousands of rows, of which a text
    /// reads a few).
    pub fn touch(&self) -> u64 {
        // One element a line (every element, should one outgrow a line).
        let every = |size: usize| (LINE / size).max(1);
        let slots = self.slots.iter().step_by(every(std::mem::size_of::<Packed>())).take(TOUCHED).fold(0, |x, s| x ^ u64::from(s.id));
        let rows = self.rows.iter().step_by(every(std::mem::size_of::<Row>())).take(TOUCHED).fold(0, |x, r| x ^ r.value);
        let row_ids = self.row_ids.iter().step_by(every(std::mem::size_of::<u32>())).take(TOUCHED).fold(0, |x, &i| x ^ u64::from(i));
        let ids = self.ids.iter().step_by(every(std::mem::size_of::<u32>())).take(TOUCHED).fold(0, |x, &i| x ^ u64::from(i));
        slots ^ rows ^ row_ids ^ ids
    }

    /// False only where [`Slots::read`] fails: a token no slot reads, a fixed token
    /// missing, or a slot that reads nothing.
    pub fn may_read(&self, tokens: &[u32]) -> bool {
        let known = |&t: &u32| self.vocabulary().binary_search(&(t & !UNLISTED_BIT)).is_ok() || (self.unlisted && t & UNLISTED_BIT != 0);
        !self.dead && tokens.iter().all(known) && self.required().iter().all(|&r| tokens.iter().any(|&t| t & !UNLISTED_BIT == r))
    }

    /// What slot `k` looks like in a message (`v`: the variant the list is of; a fixed
    /// token is one of its modifiers, slot k its modifier k).
    fn expected(&self, k: usize, v: &Variant) -> String {
        let field = usize::from(self.slots[k].field);
        match self.slots[k].kind {
            Kind::Fixed => match v.modifiers.get(k) {
                Some(ModSlot::Fixed { text }) => text.clone(),
                _ => String::new(),
            },
            Kind::Table | Kind::Dead => v.field_table(field).map(|t| t.title.clone()).unwrap_or_default(),
            Kind::Flag => format!("[{}]", v.fields[field].name),
        }
    }

    /// Tries each way slot `k` can read tokens at `toks[0..]`, longest first: sets its
    /// field and asks `rest` about the remaining tokens, until `rest` says yes.
    /// [`Slots::first_choice`] is the first of these ways.
    fn try_each(&self, k: usize, v: &Variant, toks: Toks, values: &mut Values, rest: &mut dyn FnMut(Toks, &mut Values) -> bool) -> bool {
        let s = self.slots[k];
        let field = usize::from(s.field);
        let mut take = |set: Option<u64>, used: usize, values: &mut Values| {
            if let Some(x) = set {
                values.set(field, x);
            }
            rest(toks.skip(used), values)
        };
        match s.kind {
            Kind::Fixed => toks.starts_with(&[s.id]) && take(None, 1, values),
            Kind::Flag => (toks.starts_with(&[s.id]) && take(Some(1), 1, values)) || take(Some(0), 0, values),
            Kind::Table => {
                if self.group(&s, toks).iter().any(|r| self.row_reads(r, toks) && take(Some(r.value), r.n as usize, values)) {
                    return true;
                }
                if self.unlisted(k, v, toks).is_some_and(|x| take(Some(x), 1, values)) {
                    return true;
                }
                (s.hidden_zero && take(Some(0), 0, values)) || (s.has_default && take(Some(s.default), 0, values))
            }
            Kind::Dead => false,
        }
    }

    /// The first way [`Slots::try_each`] tries for slot `k` at `toks`, if any: the value
    /// it sets the slot's field to (none for a fixed token) and how many tokens it reads.
    #[inline]
    fn first_choice(&self, k: usize, v: &Variant, toks: Toks) -> Option<(Option<u64>, usize)> {
        let s = &self.slots[k];
        let next = toks.ids.first().map(|&t| t & !UNLISTED_BIT);
        match s.kind {
            Kind::Fixed => (next == Some(s.id)).then_some((None, 1)),
            Kind::Flag => Some(if next == Some(s.id) { (Some(1), 1) } else { (Some(0), 0) }),
            Kind::Table => self
                .group(s, toks)
                .iter()
                .find(|r| self.row_reads(r, toks))
                .map(|r| (Some(r.value), r.n as usize))
                .or_else(|| self.unlisted(k, v, toks).map(|x| (Some(x), 1)))
                .or_else(|| s.hidden_zero.then_some((Some(0), 0)))
                .or_else(|| s.has_default.then_some((Some(s.default), 0))),
            Kind::Dead => None,
        }
    }

    /// A table slot's rows whose first token is the text's next one, most tokens first.
    fn group(&self, s: &Packed, toks: Toks) -> &[Row] {
        let Some(&next) = toks.ids.first() else { return &[] };
        let first = next & !UNLISTED_BIT;
        let rows = &self.rows[s.rows.0 as usize..s.rows.1 as usize];
        let from = rows.partition_point(|r| r.first < first);
        let n = rows[from..].iter().take_while(|r| r.first == first).count();
        &rows[from..from + n]
    }

    /// Whether `toks` start with row `r`'s tokens (one of [`Slots::group`]'s: its first
    /// token is theirs).
    fn row_reads(&self, r: &Row, toks: Toks) -> bool {
        let (start, n) = (r.start as usize, r.n as usize);
        n == 1 || toks.starts_with(&self.row_ids[start..start + n])
    }

    /// The value of an `UNLISTED<n>` token at `toks[0]` that table slot `k` may read: one its
    /// table does not list and its field holds.
    fn unlisted(&self, k: usize, v: &Variant, toks: Toks) -> Option<u64> {
        let x = toks.text.first().and_then(|t| t.strip_prefix(UNLISTED)).and_then(|n| n.parse::<u64>().ok())?;
        let t = v.field_table(usize::from(self.slots[k].field))?;
        (t.row(x).is_none() && x <= v.fields[usize::from(self.slots[k].field)].max()).then_some(x)
    }

    /// Whether the slots, in `order`, each taking its [`Slots::first_choice`], read exactly
    /// `toks`: where they do, that is the reading [`Slots::read_in`] finds first (its first
    /// path), with the same fields set, found without its backtracking (most texts).
    fn read_first(&self, v: &Variant, order: &[u32], mut toks: Toks, values: &mut Values) -> bool {
        for &k in order {
            let Some((set, used)) = self.first_choice(k as usize, v, toks) else { return false };
            if let Some(x) = set {
                values.set(usize::from(self.slots[k as usize].field), x);
            }
            toks = toks.skip(used);
        }
        toks.ids.is_empty()
    }

    /// Sets the slots' fields from `toks`, which they must read exactly: in nvdisasm's
    /// order if stored, else in page order if possible, else in any order.
    pub fn read(&self, v: &Variant, toks: Toks, values: &mut Values) -> Result<(), TokensMismatch> {
        let n = self.slots.len();
        let in_order = |order: &[u32], values: &mut Values| self.read_first(v, order, toks, values) || self.read_in(v, order, toks, values);
        if self.printed().is_some_and(|order| in_order(order, values)) {
            return Ok(());
        }
        let page_order = if n <= IN_ORDER.len() { in_order(&IN_ORDER[..n], values) } else { in_order(&(0..n as u32).collect::<Vec<_>>(), values) };
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
        Err(TokensMismatch { found: owned(toks.text), expected: (0..n).map(|k| self.expected(k, v)).collect() })
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
            return free.into_iter().all(|k| self.try_each(k, v, toks, values, &mut |_, _| true));
        }
        let state = (used, toks.ids.len());
        if failed.contains(&state) {
            return false;
        }
        for k in free {
            let mut next = |left: Toks, values: &mut Values| left.ids.len() < toks.ids.len() && self.read_any(v, used | 1 << k, left, values, failed);
            if self.try_each(k, v, toks, values, &mut next) {
                return true;
            }
        }
        failed.push(state);
        false
    }

    /// Whether the slots, in `order`, read exactly `toks`.
    fn read_in(&self, v: &Variant, order: &[u32], toks: Toks, values: &mut Values) -> bool {
        let Some((&first, rest)) = order.split_first() else { return toks.ids.is_empty() };
        self.try_each(first as usize, v, toks, values, &mut |left, values| self.read_in(v, rest, left, values))
    }
}

/// A cache line's bytes.
const LINE: usize = 64;
/// How many lines of an array [`Slots::touch`] loads at most.
const TOUCHED: usize = 4;

/// `0, 1, 2, …`: the page's order of up to 32 slots, without building it.
const IN_ORDER: [u32; 32] = {
    let mut a = [0; 32];
    let mut i = 0;
    while i < 32 {
        a[i] = i as u32;
        i += 1;
    }
    a
};
