//! From single-flip effects to fields and tables, and the multi-value checks of the result.

mod floats;
mod learn;
mod verify;

pub use floats::*;
pub use learn::*;
pub use verify::*;

use super::probe::{Effect, Fixed, Seed};
use super::{census, DiscoverError, Discovered, Field, FieldKind, Oracle, Table};
use crate::gen::Rng;
use crate::oracle::nvdisasm::Outcome;
use crate::sass;
use crate::spec::{Derived, FlagRole, FloatFormat, ImmMap, LeftOutAtZero, MemSlot, OperandKind};
use crate::word::Word;
use std::collections::BTreeMap;

/// Page operand numbers of each form operand (`c[I][I]`, `cx[UR][I]` take two).
pub fn slots(s: &Seed) -> Vec<Vec<usize>> {
    let mut n = 0;
    s.kinds
        .iter()
        .map(|k| {
            let v: Vec<usize> = (n..n + k.page_slots()).collect();
            n += k.page_slots();
            v
        })
        .collect()
}

/// The widest modifier group enumerated (2^14 rows): wider tables would take minutes to
/// enumerate and make pages of tens of megabytes (the page loader takes 4 MiB). The memory
/// forms' 15–20 modifier bits are independent groups of at most 5 (see [`components`]).
const MAX_GROUP_BITS: usize = 14;

/// The single-bit effects sorted by what they touch, before any batch is sent.
struct Sorted {
    /// One-bit decoration fields (`|x|`, `!`, `-`).
    fields: Vec<Field>,
    notes: Vec<String>,
    /// Page operand → (weight, bit) of each bit that changes its value.
    values: BTreeMap<usize, Vec<(u32, u8)>>,
    /// The guard predicate's bits.
    pred: Vec<u8>,
    /// Form operand → the bits that change its suffix.
    suffix: BTreeMap<usize, Vec<u8>>,
    /// Page operand that another prints plus a constant → (source page operand, plus).
    links: BTreeMap<usize, Vec<(usize, u8)>>,
}

impl Sorted {
    fn of(s: &Seed, seed: Word, effects: &[(u8, Effect)]) -> Sorted {
        let sl = slots(s);
        let mut out = Sorted { fields: vec![], notes: vec![], values: BTreeMap::new(), pred: vec![], suffix: BTreeMap::new(), links: BTreeMap::new() };
        for (b, e) in effects {
            match e {
                Effect::Linked { operand, sub, weight, derived: (j, jsub), plus } => {
                    out.value_bit(*b, *operand, sl[*operand][*sub], *weight);
                    out.links.entry(sl[*j][*jsub]).or_default().push((sl[*operand][*sub], *plus));
                }
                Effect::Pred => out.pred.push(*b),
                Effect::Suffix { operand } => out.suffix.entry(*operand).or_default().push(*b),
                Effect::Value { operand, sub, weight } => out.value_bit(*b, *operand, sl[*operand][*sub], *weight),
                Effect::Flag { operand, role } => out.flag(s, seed, *b, *operand, *role),
                Effect::Unexpressible(t) => out.notes.push(format!("bit {b}: no page cell can say this: {t}")),
                Effect::Modifiers(_) | Effect::Fixed(_) => {}
            }
        }
        out
    }

    /// Bit `b` adds `2^weight` to page operand `po` (of form operand `operand`).
    fn value_bit(&mut self, b: u8, operand: usize, po: usize, weight: Option<u32>) {
        if weight.is_none() {
            self.notes.push(format!("bit {b}: operand {operand} changes by a step that is not a power of two"));
        }
        self.values.entry(po).or_default().push((weight.unwrap_or(99), b));
    }

    /// Bit `b` shows decoration `role` on form operand `operand`.
    fn flag(&mut self, s: &Seed, seed: Word, b: u8, operand: usize, role: FlagRole) {
        let o = &s.inst.operands[operand];
        let (shown, kind) = match role {
            FlagRole::Abs => (o.abs, FieldKind::Abs(operand)),
            FlagRole::Not => (o.not, FieldKind::Not(operand)),
            _ => (o.neg, FieldKind::Neg(operand)),
        };
        if shown != seed.bit(b) {
            self.notes.push(format!("bit {b}: operand {operand}'s decoration shows when the bit is 0 (a page flag shows when set)"));
        }
        self.fields.push(Field { kind, bits: vec![b] });
    }
}

/// One field per page operand from its value bits; a note where the weights are not 1, 2,
/// 4, … in bit order.
fn value_fields(values: BTreeMap<usize, Vec<(u32, u8)>>, notes: &mut Vec<String>) -> Vec<Field> {
    let mut fields = vec![];
    for (po, mut wb) in values {
        wb.sort();
        let weights: Vec<u32> = wb.iter().map(|x| x.0).collect();
        let bits: Vec<u8> = wb.iter().map(|x| x.1).collect();
        if weights != (0..wb.len() as u32).collect::<Vec<_>>() || !bits.windows(2).all(|w| w[0] < w[1]) {
            notes.push(format!("operand {po}: value weights {weights:?} at bits {bits:?} are not 1, 2, 4, … in bit order"));
        }
        let mut sorted = bits;
        sorted.sort_unstable();
        fields.push(Field { kind: FieldKind::Operand(po), bits: sorted });
    }
    fields
}

/// Fields and tables from the flips (plus two batches: modifier pairs, group rows and order).
/// A group holding one of the `paired` bits (one-hot pairs, see [`super::swap`]) keeps only
/// the values that stay in the seed's form.
pub fn solve(o: &mut Oracle, s: &Seed, seed: Word, effects: &[(u8, Effect)], paired: &[(u8, u8)]) -> Result<Discovered, DiscoverError> {
    let Sorted { mut fields, mut notes, values, pred, suffix, links } = Sorted::of(s, seed, effects);
    if !pred.is_empty() {
        fields.push(Field { kind: FieldKind::Pred, bits: pred });
    }
    let derived = derived_operands(&links, &values, &mut notes);
    fields.extend(value_fields(values, &mut notes));
    let single: BTreeMap<u8, Vec<String>> = effects
        .iter()
        .filter_map(|(b, e)| match e {
            Effect::Modifiers(m) => Some((*b, m.clone())),
            _ => None,
        })
        .collect();
    let comps = components(o, s, seed, &single, paired)?;
    let parts = independent_parts(o, s, seed, comps, paired, &mut notes)?;
    let (mut mods, tables) = groups(o, s, seed, parts, &single)?;
    fields.append(&mut mods);
    fields.append(&mut suffix_fields(o, s, seed, &suffix, &mut notes)?);
    let distilled = s.text.clone();
    // A bit that changes only the terminator's spacing is ignored too: the printer's
    // learned conventions say where it prints ` ;` (`FormConventions::space_bits`).
    let ignored = effects.iter().filter(|(_, e)| matches!(e, Effect::Fixed(Fixed::Ignored | Fixed::Terminator))).map(|(b, _)| *b).collect();
    Ok(Discovered {
        arch: s.arch,
        mnemonic: s.inst.mnemonic.clone(),
        kinds: page_kinds(s, &fields),
        zero: seed,
        distilled,
        fields,
        tables,
        ignored,
        notes,
        derived,
        // Learned once the zero word is known (see `solve_checked`).
        ..Discovered::empty(s.arch)
    })
}

/// The page operands that print another's field plus a constant: every bit of the source's
/// field must show the same link, and the derived operand must have no bits of its own.
fn derived_operands(links: &BTreeMap<usize, Vec<(usize, u8)>>, values: &BTreeMap<usize, Vec<(u32, u8)>>, notes: &mut Vec<String>) -> Vec<Derived> {
    let mut out = vec![];
    for (&po, seen) in links {
        let (source, plus) = seen[0];
        let bits = values.get(&source).map(Vec::len).unwrap_or(0);
        if seen.iter().any(|&x| x != (source, plus)) || seen.len() != bits || values.contains_key(&po) {
            notes.push(format!("operand {po} prints operand {source}'s value + {plus} for {} of its {bits} bits, or other links too", seen.len()));
            continue;
        }
        out.push(Derived { page_operand: po, source, plus });
    }
    out
}

/// The form's kinds as the page writes them: an `F` operand names its format where the
/// page's default for its width would read it otherwise (`F.BF16`, `F.F64` in FRND).
fn page_kinds(s: &Seed, fields: &[Field]) -> Vec<OperandKind> {
    let sl = slots(s);
    let width = |k: usize| fields.iter().find(|f| f.kind == FieldKind::Operand(sl[k][0])).map(|f| f.bits.len() as u32);
    (0..s.kinds.len())
        .map(|k| match (s.kinds[k], width(k)) {
            (OperandKind::Float(None), Some(w)) if FloatFormat::of(&s.inst.mnemonic, w) != s.float => OperandKind::Float(Some(s.float)),
            (kind, _) => kind,
        })
        .collect()
}

/// A multiset of modifier tokens (`F2FP.F16.F16` holds `F16` twice).
type Bag = BTreeMap<String, usize>;

fn bag(m: &[String]) -> Bag {
    let mut b = Bag::new();
    for x in m {
        *b.entry(x.clone()).or_default() += 1;
    }
    b
}

/// `a` less `b`, counts floored at zero.
fn minus(a: &Bag, b: &Bag) -> Bag {
    a.iter().filter_map(|(k, &n)| n.checked_sub(b.get(k).copied().unwrap_or(0)).filter(|&d| d > 0).map(|d| (k.clone(), d))).collect()
}

fn plus(a: &Bag, b: &Bag) -> Bag {
    let mut out = a.clone();
    for (k, n) in b {
        *out.entry(k.clone()).or_default() += n;
    }
    out
}

/// The modifiers independent changes of `base` print together: each takes from `base`
/// what it lacks and adds what it brings (`ADD` → `MIN` with `STRONG.GPU` → `STRONG.SM`
/// gives `MIN.STRONG.SM`). `None` when two take the same token: they are not independent.
fn combine(base: &Bag, changed: &[&Bag]) -> Option<Bag> {
    let mut taken = Bag::new();
    let mut added = Bag::new();
    for c in changed {
        taken = plus(&taken, &minus(base, c));
        added = plus(&added, &minus(c, base));
    }
    minus(&taken, base).is_empty().then(|| plus(&minus(base, &taken), &added))
}

/// The modifiers of a text, `None` when it is illegal, silent or unreadable.
fn printed_mods(t: &Option<String>) -> Option<Bag> {
    t.as_deref().filter(|t| !t.is_empty()).and_then(|t| sass::parse_instruction(t).ok()).map(|i| bag(&i.modifiers))
}

/// Union-find roots over `n` items joined at `pairs`: the joined sets, each sorted.
fn join(n: usize, pairs: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &[usize], mut x: usize) -> usize {
        while p[x] != x {
            x = p[x];
        }
        x
    }
    for &(a, b) in pairs {
        let (ra, rb) = (find(&parent, a), find(&parent, b));
        parent[ra] = rb;
    }
    let mut sets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for x in 0..n {
        sets.entry(find(&parent, x)).or_default().push(x);
    }
    sets.into_values().collect()
}

/// Modifier bits joined wherever a pair's joint modifiers are not what the two single
/// flips' changes give together (see [`combine`]): a bit that replaces a token (`ADD` →
/// `MIN`) is independent of one that adds another (`EF`). A one-hot pair (see
/// [`super::swap`]) flips as one: each of its bits alone is illegal or another form; pairs
/// sharing a bit flip as one unit of three bits.
fn components(o: &mut Oracle, s: &Seed, seed: Word, single: &BTreeMap<u8, Vec<String>>, paired: &[(u8, u8)]) -> Result<Vec<Vec<u8>>, DiscoverError> {
    let units: Vec<Vec<u8>> = single.keys().map(|&b| unit_of(paired, b)).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let flip = |w: Word, u: &[u8]| u.iter().fold(w, |w, &b| w.flip(b));
    let pairs: Vec<(usize, usize)> = (0..units.len()).flat_map(|i| (i + 1..units.len()).map(move |j| (i, j))).collect();
    let texts = o.texts(&pairs.iter().map(|&(a, b)| flip(flip(seed, &units[a]), &units[b])).collect::<Vec<_>>())?;
    let base = bag(&s.inst.modifiers);
    let apart = |&(a, b): &(usize, usize), t: &Option<String>| {
        let want = combine(&base, &[&bag(&single[&units[a][0]]), &bag(&single[&units[b][0]])]);
        printed_mods(t).is_none() || printed_mods(t) != want
    };
    let joined: Vec<(usize, usize)> = pairs.iter().zip(&texts).filter(|(p, t)| apart(p, t)).map(|(p, _)| *p).collect();
    let mut out: Vec<Vec<u8>> = join(units.len(), &joined).into_iter().map(|set| sorted(set.into_iter().flat_map(|i| units[i].clone()).collect())).collect();
    out.sort();
    Ok(out)
}

/// Bit `b` with every bit joined to it through `paired` (pairs sharing a bit are one
/// field: see [`super::swap`]), sorted.
fn unit_of(paired: &[(u8, u8)], b: u8) -> Vec<u8> {
    let mut unit = vec![b];
    let mut grew = true;
    while grew {
        grew = false;
        for &(x, y) in paired {
            for (p, q) in [(x, y), (y, x)] {
                if unit.contains(&p) && !unit.contains(&q) {
                    unit.push(q);
                    grew = true;
                }
            }
        }
    }
    sorted(unit)
}

/// A modifier component and nvdisasm's text for each of its values, the rest of the word
/// the seed's.
#[derive(Clone, Debug)]
pub struct Part {
    pub bits: Vec<u8>,
    pub texts: Vec<Option<String>>,
}

/// Each component's values enumerated (one batch; one more for those with `paired` bits).
fn enumerate(o: &mut Oracle, seed: Word, comps: Vec<Vec<u8>>, paired: &[(u8, u8)]) -> Result<Vec<Part>, DiscoverError> {
    let words: Vec<Word> = comps.iter().flat_map(|g| (0..1u64 << g.len()).map(move |v| set(seed, g, v))).collect();
    let mut texts = o.texts(&words)?.into_iter();
    let mut parts: Vec<Part> = comps.into_iter().map(|bits| Part { texts: texts.by_ref().take(1 << bits.len()).collect(), bits }).collect();
    same_form_only(o, seed, &mut parts, paired)?;
    Ok(parts)
}

/// Leaves out (as illegal) the values of parts holding `paired` bits whose word is another
/// form: the single flips never tried them, and a one-hot pair's `00` may be another
/// opclass that prints alike (MUFU's bits 72–73: `01` `.F16`, `10` `.BF16`, `00` the fp32
/// form's). nvdisasm names the opclass of a word with an undefined opex value (one batch).
fn same_form_only(o: &mut Oracle, seed: Word, parts: &mut [Part], paired: &[(u8, u8)]) -> Result<(), DiscoverError> {
    let mut at: Vec<(usize, usize)> = vec![];
    let mut words = vec![census::with_opex(seed, 0x10)];
    for (i, p) in parts.iter().enumerate().filter(|(_, p)| p.bits.iter().any(|&b| paired.iter().any(|q| q.0 == b || q.1 == b))) {
        for v in (0..p.texts.len()).filter(|&v| p.texts[v].is_some()) {
            at.push((i, v));
            words.push(census::with_opex(set(seed, &p.bits, v as u64), 0x10));
        }
    }
    if at.is_empty() {
        return Ok(());
    }
    let outs = o.outcomes(&words)?;
    let class = |x: &Outcome| match x {
        Outcome::Illegal { message } => census::opclass_of(message).map(str::to_string),
        _ => None,
    };
    let want = class(&outs[0]);
    for (&(i, v), out) in at.iter().zip(&outs[1..]) {
        if class(out) != want {
            parts[i].texts[v] = None;
        }
    }
    Ok(())
}

/// The most value pairs of two parts tried together (sampled beyond).
const PAIR_WORDS: usize = 1024;

/// The components as parts whose values combine independently: every pair of parts is
/// tried at every pair of their legal values (sampled beyond [`PAIR_WORDS`]), and parts
/// whose joint modifiers are not their changes together are joined, until none clash.
/// Parts wider than [`MAX_GROUP_BITS`] are left out with a note.
fn independent_parts(
    o: &mut Oracle,
    s: &Seed,
    seed: Word,
    comps: Vec<Vec<u8>>,
    paired: &[(u8, u8)],
    notes: &mut Vec<String>,
) -> Result<Vec<Part>, DiscoverError> {
    let mut parts = enumerate(o, seed, enumerable(comps, notes), paired)?;
    loop {
        let clashes = clashes(o, s, seed, &parts)?;
        if clashes.is_empty() {
            return Ok(parts);
        }
        let sets = join(parts.len(), &clashes);
        let (alone, merged): (Vec<Vec<usize>>, Vec<Vec<usize>>) = sets.into_iter().partition(|set| set.len() == 1);
        let wider: Vec<Vec<u8>> = merged.iter().map(|set| set.iter().flat_map(|&i| parts[i].bits.clone()).collect::<Vec<u8>>()).map(sorted).collect();
        let mut next: Vec<Part> = alone.into_iter().map(|set| parts[set[0]].clone()).collect();
        next.extend(enumerate(o, seed, enumerable(wider, notes), paired)?);
        next.sort_by(|a, b| a.bits.cmp(&b.bits));
        parts = next;
    }
}

fn sorted(mut v: Vec<u8>) -> Vec<u8> {
    v.sort_unstable();
    v
}

/// The components narrow enough to enumerate; a note for each other.
fn enumerable(comps: Vec<Vec<u8>>, notes: &mut Vec<String>) -> Vec<Vec<u8>> {
    comps
        .into_iter()
        .filter(|c| {
            let ok = c.len() <= MAX_GROUP_BITS;
            if !ok {
                notes.push(format!("modifier bits {c:?} interact as one group of {} bits: too many rows to enumerate and write", c.len()));
            }
            ok
        })
        .collect()
}

/// The value of `bits` in `w`.
fn value_of(w: Word, bits: &[u8]) -> u64 {
    bits.iter().enumerate().fold(0, |a, (k, &b)| a | u64::from(w.bit(b)) << k)
}

/// Pairs of parts (indices) whose values do not combine independently, from one batch.
fn clashes(o: &mut Oracle, s: &Seed, seed: Word, parts: &[Part]) -> Result<Vec<(usize, usize)>, DiscoverError> {
    let base = bag(&s.inst.modifiers);
    let mods: Vec<Vec<Option<Bag>>> = parts.iter().map(|p| p.texts.iter().map(printed_mods).collect()).collect();
    // The values other than the seed's that print: the seed's combines trivially.
    let moved: Vec<Vec<u64>> =
        parts.iter().zip(&mods).map(|(p, m)| (0..m.len() as u64).filter(|&v| v != value_of(seed, &p.bits) && m[v as usize].is_some()).collect()).collect();
    let mut rng = Rng::new(0x6a01);
    let mut tries: Vec<(usize, usize, u64, u64)> = vec![];
    for i in 0..parts.len() {
        for j in i + 1..parts.len() {
            let all = moved[i].len() * moved[j].len();
            let pick = |k: usize| (moved[i][k / moved[j].len()], moved[j][k % moved[j].len()]);
            let ks: Vec<usize> = if all <= PAIR_WORDS { (0..all).collect() } else { (0..PAIR_WORDS).map(|_| rng.below(all as u64) as usize).collect() };
            tries.extend(ks.into_iter().map(pick).map(|(a, b)| (i, j, a, b)));
        }
    }
    let words: Vec<Word> = tries.iter().map(|&(i, j, a, b)| set(set(seed, &parts[i].bits, a), &parts[j].bits, b)).collect();
    let texts = o.texts(&words)?;
    let mut out: Vec<(usize, usize)> = vec![];
    for (&(i, j, a, b), t) in tries.iter().zip(&texts) {
        let (Some(x), Some(y)) = (&mods[i][a as usize], &mods[j][b as usize]) else { continue };
        let got = printed_mods(t);
        if (got.is_none() || got != combine(&base, &[x, y])) && !out.contains(&(i, j)) {
            out.push((i, j));
        }
    }
    Ok(out)
}

/// Each part: a one-bit modifier flag, or a group with its table; groups are numbered in
/// nvdisasm's print order.
fn groups(o: &mut Oracle, s: &Seed, seed: Word, parts: Vec<Part>, single: &BTreeMap<u8, Vec<String>>) -> Result<(Vec<Field>, Vec<Table>), DiscoverError> {
    let mut fields = vec![];
    let mut multi = vec![];
    let mut tables = vec![];
    for p in parts {
        // A flag prints its name when set: a bit the seed has set, whose flip adds a
        // modifier, prints it at 0 and is a one-bit group instead.
        if let [b] = p.bits.as_slice() {
            let m = &single[b];
            let added: Vec<&String> = m.iter().filter(|x| !s.inst.modifiers.contains(x)).collect();
            let rest: Vec<&String> = m.iter().filter(|x| !added.contains(x)).collect();
            if !seed.bit(*b) && added.len() == 1 && rest.len() == s.inst.modifiers.len() && added[0].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                fields.push(Field { kind: FieldKind::Modifier(added[0].clone()), bits: p.bits });
                continue;
            }
        }
        tables.push(rows(&p.texts));
        multi.push(p.bits);
    }
    let order = print_order(o, seed, &multi, &tables)?;
    let mut out_tables = vec![];
    for (k, &i) in order.iter().enumerate() {
        fields.push(Field { kind: FieldKind::Group(k as u32 + 1), bits: multi[i].clone() });
        out_tables.push(tables[i].clone());
    }
    Ok((fields, out_tables))
}

/// The widest operand-suffix field enumerated (its table lists up to 2^N values).
const MAX_SUFFIX_BITS: usize = 6;
/// The widest name field enumerated (S2R's special registers and FSWZADD's are 8 bits).
const MAX_SPECIAL_BITS: usize = 8;

/// Each operand's suffix bits as one operand-modifier field (plain `modi`, or `operand K
/// modi` spans when in several) with its table enumerated (one nvdisasm batch).
fn suffix_fields(o: &mut Oracle, s: &Seed, seed: Word, suffix: &BTreeMap<usize, Vec<u8>>, notes: &mut Vec<String>) -> Result<Vec<Field>, DiscoverError> {
    let sl = slots(s);
    let mut ops = vec![];
    for (&i, bits) in suffix {
        if bits.len() > MAX_SUFFIX_BITS && !(s.kinds[i].is_named() && bits.len() <= MAX_SPECIAL_BITS) {
            notes.push(format!("operand {i}'s suffix bits {bits:?} are more than {MAX_SUFFIX_BITS}"));
        } else {
            ops.push((i, bits));
        }
    }
    let words: Vec<Word> = ops.iter().flat_map(|(_, g)| (0..1u64 << g.len()).map(move |v| set(seed, g, v))).collect();
    let texts = o.texts(&words)?;
    let mut fields = vec![];
    let mut at = 0;
    for (i, bits) in ops {
        let n = 1usize << bits.len();
        match suffix_table(s, i, &texts[at..at + n]) {
            Ok(table) => fields.push(Field { kind: FieldKind::Suffix { operand: sl[i][0], table }, bits: bits.clone() }),
            Err(e) => notes.push(e),
        }
        at += n;
    }
    Ok(fields)
}

/// Rows of form operand `i`'s suffix table from the texts of its values: the suffixes it
/// prints (`H0_H0`, `INVALID1`, `(default)` for none); values nvdisasm rejects or prints
/// nothing for are left out. An error when a value changes more than that operand's suffixes.
fn suffix_table(s: &Seed, i: usize, texts: &[Option<String>]) -> Result<Table, String> {
    let mut table = vec![];
    for (v, t) in texts.iter().enumerate() {
        let Some(t) = t.as_deref().filter(|t| !t.is_empty()) else { continue };
        let inst = sass::parse_instruction(t).map_err(|e| format!("operand {i}'s suffix value {v} prints '{t}' ({e})"))?;
        let special = s.kinds[i].is_named();
        if s.kinds[i] == OperandKind::Name && is_seed_without(s, i, &inst) {
            table.push((v as u64, "(default)".to_string()));
            continue;
        }
        let bare = |x: &sass::Operand| sass::Operand {
            suffixes: vec![],
            body: if special { sass::Body::Other { text: String::new() } } else { without_rz(&x.body) },
            ..x.clone()
        };
        let same = inst.mnemonic == s.inst.mnemonic
            && inst.pred == s.inst.pred
            && inst.modifiers == s.inst.modifiers
            && inst.operands.len() == s.inst.operands.len()
            && inst.operands.iter().zip(&s.inst.operands).enumerate().all(|(j, (a, b))| if j == i { bare(a) == bare(b) } else { a == b });
        // A name stays a name (OUT.CUT's `???0` turns into `RZ` at 255); a special
        // register's table also holds names without `SR` (`SM_SHADER_TYPE`).
        let kind_kept = !special || inst.operands.get(i).and_then(super::probe::kind_of).is_some_and(OperandKind::is_named);
        if !same || !kind_kept {
            return Err(format!("operand {i}'s suffix value {v} prints '{t}': more than the suffix changes"));
        }
        let sfx = super::probe::suffix_tokens(s.kinds[i], &inst.operands[i]);
        table.push((v as u64, if sfx.is_empty() { "(default)".to_string() } else { sfx.join(".") }));
    }
    Ok(table)
}

/// Is `inst` the seed's text with operand `i` left out, as nvdisasm prints a name operand
/// at a value it has no name for (HGMMA's `gsb0` field at 7)?
fn is_seed_without(s: &Seed, i: usize, inst: &sass::Instruction) -> bool {
    if i >= s.inst.operands.len() {
        return false;
    }
    let mut rest = s.inst.operands.clone();
    rest.remove(i);
    inst.mnemonic == s.inst.mnemonic && inst.pred == s.inst.pred && inst.modifiers == s.inst.modifiers && inst.operands == rest
}

/// A memory operand's body with a printed RZ taken out: RZ stands in for no register, and
/// prints when a suffix does (`[RZ.X4+UR5]` is `[UR5]` with suffix X4, ATOMS).
fn without_rz(body: &sass::Body) -> sass::Body {
    match body.as_mem() {
        Some((space, Some(sass::RZ), ureg, imm)) => sass::Body::Mem { space, reg: None, ureg, imm },
        _ => body.clone(),
    }
}

/// `seed` with value `v` written into `bits` (LSB first).
pub fn set(seed: Word, bits: &[u8], v: u64) -> Word {
    bits.iter().enumerate().fold(seed, |w, (k, &b)| w.with_bit(b, v >> k & 1 == 1))
}

/// Row names: the modifiers a value prints beyond those every legal value prints, counted
/// as a multiset (`F2FP.F16.F16` where another value prints `F2FP.E5M2.F16`: one `F16` is
/// common, the other is the zero row's).
fn rows(texts: &[Option<String>]) -> Table {
    let mods: Vec<Option<Vec<String>>> = texts.iter().map(|t| t.as_deref().and_then(|t| sass::parse_instruction(t).ok()).map(|i| i.modifiers)).collect();
    let legal: Vec<&Vec<String>> = mods.iter().flatten().collect();
    let count = |l: &[String], m: &str| l.iter().filter(|x| *x == m).count();
    let mut common: Vec<&str> = vec![];
    for m in legal.first().map(|f| f.as_slice()).unwrap_or_default() {
        let k = count_str(&common, m) + 1;
        if legal.iter().all(|l| count(l, m) >= k) {
            common.push(m);
        }
    }
    mods.iter()
        .enumerate()
        .filter_map(|(v, m)| {
            let mut left = common.clone();
            let mut own: Vec<&str> = vec![];
            for x in m.as_ref()? {
                match left.iter().position(|c| c == x) {
                    Some(i) => {
                        left.remove(i);
                    }
                    None => own.push(x),
                }
            }
            Some((v as u64, if own.is_empty() { "(default)".to_string() } else { own.join(".") }))
        })
        .collect()
}

fn count_str(l: &[&str], m: &str) -> usize {
    l.iter().filter(|x| **x == m).count()
}

/// Group indices sorted by where nvdisasm prints them, from one word with every group set
/// to its first named row.
fn print_order(o: &mut Oracle, seed: Word, groups: &[Vec<u8>], tables: &[Table]) -> Result<Vec<usize>, DiscoverError> {
    let mut w = seed;
    let mut first = vec![];
    for (g, t) in groups.iter().zip(tables) {
        let row = t.iter().find(|(v, n)| *v != 0 && n != "(default)");
        if let Some((v, _)) = row {
            w = set(w, g, *v);
        }
        first.push(row.map(|(_, n)| n.split('.').next().unwrap_or("").to_string()));
    }
    let text = o.texts(&[w])?.remove(0).unwrap_or_default();
    let mods = sass::parse_instruction(&text).map(|i| i.modifiers).unwrap_or_default();
    let mut idx: Vec<usize> = (0..groups.len()).collect();
    idx.sort_by_key(|&i| first[i].as_ref().and_then(|n| mods.iter().position(|m| m == n)).unwrap_or(usize::MAX));
    Ok(idx)
}

/// The zero word with every field random (a group: one of its rows).
fn random_word(d: &Discovered, rng: &mut Rng) -> Word {
    d.fields.iter().fold(d.base(), |w, f| {
        let v = match f.kind {
            FieldKind::Group(n) => {
                let t = &d.tables[n as usize - 1];
                t[rng.below(t.len() as u64) as usize].0
            }
            FieldKind::Suffix { ref table, .. } if !table.is_empty() => table[rng.below(table.len() as u64) as usize].0,
            _ => legal_source(d, f, rng.next_u64() & if f.bits.len() >= 64 { u64::MAX } else { (1u64 << f.bits.len()) - 1 }),
        };
        set(w, &f.bits, v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_sharing_a_bit_are_one_unit() {
        let paired = [(75, 76), (76, 77), (90, 91)];
        assert_eq!(unit_of(&paired, 77), vec![75, 76, 77]);
        assert_eq!(unit_of(&paired, 91), vec![90, 91]);
        assert_eq!(unit_of(&paired, 12), vec![12]);
    }
    use crate::spec::Arch;

    fn some(t: &[&str]) -> Vec<Option<String>> {
        t.iter().map(|x| if x.is_empty() { None } else { Some(x.to_string()) }).collect()
    }

    #[test]
    fn group_rows_count_common_modifiers_as_a_multiset() {
        // F2FP (SM90): one of the two F16 belongs to the group (E5M2 replaces it).
        let t = some(&["@P0 F2FP.F16.F16.UNPACK_B_MERGE_C R0, R0, R0;", "@P0 F2FP.SATFINITE.E5M2.F16.UNPACK_B_MERGE_C R0, R0, R0;", ""]);
        assert_eq!(rows(&t), [(0, "F16".to_string()), (1, "SATFINITE.E5M2".to_string())]);
    }

    fn b(t: &str) -> Bag {
        bag(&t.split('.').map(str::to_string).collect::<Vec<_>>())
    }

    #[test]
    fn independent_changes_combine_as_multisets() {
        let base = b("E.ADD.STRONG.GPU");
        // A replaced token (ADD → MIN) and an added one (EF): independent.
        assert_eq!(combine(&base, &[&b("E.MIN.STRONG.GPU"), &b("E.ADD.EF.STRONG.GPU")]), Some(b("E.MIN.EF.STRONG.GPU")));
        // Two changes that take the same token (GPU) are not.
        assert_eq!(combine(&base, &[&b("E.ADD.STRONG.SM"), &b("E.ADD.CONSTANT.CTA.PRIVATE")]), None);
        // A token held twice may be taken once by each.
        assert_eq!(combine(&b("F16.F16"), &[&b("E5M2.F16"), &b("F16.BF16")]), Some(b("E5M2.BF16")));
    }

    /// A made-up disassembler: bits 0–1 print `A0`…`A3`, bits 2–3 `B0`…`B3`, bit 4 `F`;
    /// with `clash`, A3 and B3 together print `X` alone (no single flip shows it).
    struct Fake {
        clash: bool,
    }

    impl super::super::Source for Fake {
        fn outcomes(&self, _: Arch, words: &[Word]) -> Result<Vec<crate::oracle::nvdisasm::Outcome>, DiscoverError> {
            let text = |w: &Word| {
                let (a, b, f) = (w.0 & 3, w.0 >> 2 & 3, w.0 >> 4 & 1);
                let mods = if self.clash && a == 3 && b == 3 { "X".to_string() } else { format!("A{a}.B{b}") };
                format!("FOO.{mods}{} R0;", if f == 1 { ".F" } else { "" })
            };
            Ok(words.iter().map(|w| crate::oracle::nvdisasm::Outcome::Printed { text: text(w) }).collect())
        }
    }

    /// The modifier fields solved from the fake's single flips: (bits, table) per group.
    fn solved_groups(clash: bool) -> (Vec<Vec<u8>>, Vec<Table>) {
        let src = Fake { clash };
        let mut o = Oracle::new(&src, Arch(90));
        let s = Seed::new(Arch(90), "FOO.A0.B0 R0;").unwrap();
        let singles = [(0, "A1.B0"), (1, "A2.B0"), (2, "A0.B1"), (3, "A0.B2"), (4, "A0.B0.F")];
        let single: BTreeMap<u8, Vec<String>> = singles.iter().map(|(k, m)| (*k, m.split('.').map(str::to_string).collect())).collect();
        let mut notes = vec![];
        let comps = components(&mut o, &s, Word(0), &single, &[]).unwrap();
        let parts = independent_parts(&mut o, &s, Word(0), comps, &[], &mut notes).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let (fields, tables) = groups(&mut o, &s, Word(0), parts, &single).unwrap();
        assert!(fields.iter().any(|f| f.bits == [4] && f.kind == FieldKind::Modifier("F".into())), "{fields:?}");
        (fields.into_iter().filter(|f| matches!(f.kind, FieldKind::Group(_))).map(|f| f.bits).collect(), tables)
    }

    /// A made-up disassembler with a one-hot pair at bits 5–6 (`01` H16, `10` H32, `11`
    /// illegal, `00` another form that prints F32) and a flag at bit 7 (`R`); a word with
    /// opex 0x10 is illegal and names its form.
    struct OneHot;

    impl super::super::Source for OneHot {
        fn outcomes(&self, _: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
            let out = |w: &Word| {
                let pair = w.0 >> 5 & 3;
                if w.0 >> 105 & 0x1f == 0x10 {
                    let class = if pair == 0 { "foo_f32" } else { "foo_h" };
                    return Outcome::Illegal { message: format!("Opclass '{class}', undefined value 0x10 for table 'TABLES_opex_0'") };
                }
                let name = match pair {
                    0 => "F32",
                    1 => "H16",
                    2 => "H32",
                    _ => return Outcome::Illegal { message: "illegal".into() },
                };
                Outcome::Printed { text: format!("FOO.{name}{} R0;", if w.0 >> 7 & 1 == 1 { ".R" } else { "" }) }
            };
            Ok(words.iter().map(out).collect())
        }
    }

    /// A one-hot pair flips as one unit, apart from the flag, and its group keeps the
    /// values of the seed's form only: `00` (another form) and `11` (illegal) are no rows.
    #[test]
    fn a_one_hot_pair_is_one_unit_whose_group_keeps_its_own_form() {
        let mut o = Oracle::new(&OneHot, Arch(90));
        let seed = Word(1 << 5);
        let s = Seed::new(Arch(90), "FOO.H16 R0;").unwrap();
        let m = |t: &str| t.split('.').map(str::to_string).collect::<Vec<_>>();
        let single: BTreeMap<u8, Vec<String>> = [(5, m("H32")), (6, m("H32")), (7, m("H16.R"))].into_iter().collect();
        let comps = components(&mut o, &s, seed, &single, &[(5, 6)]).unwrap();
        assert_eq!(comps, [vec![5, 6], vec![7]]);
        let mut notes = vec![];
        let parts = independent_parts(&mut o, &s, seed, comps, &[(5, 6)], &mut notes).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let (fields, tables) = groups(&mut o, &s, seed, parts, &single).unwrap();
        assert!(fields.iter().any(|f| f.bits == [7] && f.kind == FieldKind::Modifier("R".into())), "{fields:?}");
        assert_eq!(tables, [vec![(1, "H16".to_string()), (2, "H32".to_string())]]);
        // Without the pair, value 00 prints and is taken for a row of the same form.
        let parts = enumerate(&mut o, seed, vec![vec![5, 6]], &[]).unwrap();
        assert!(parts[0].texts[0].is_some());
    }

    /// A type at bits 0–1 (`F32`, `F16`) and a rounding at bits 2–3 that nvdisasm prints
    /// on either side of the form's own `.F64` (SM90 `F2F.F32.F64.RZ`).
    struct Apart;

    impl super::super::Source for Apart {
        fn outcomes(&self, _: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
            let text = |w: &Word| {
                let ty = ["F32", "F16", "BF16", "E8"][(w.0 & 3) as usize];
                let rnd = ["", ".RM", ".RP", ".RZ"][(w.0 >> 2 & 3) as usize];
                Outcome::Printed { text: format!("FOO.{ty}.F64{rnd} R0;") }
            };
            Ok(words.iter().map(text).collect())
        }
    }

    /// A group whose rows join the type and the rounding (`F32.RZ`) cannot print as nvdisasm
    /// splits them; two groups, one each, can.
    #[test]
    fn rows_nvdisasm_prints_apart_are_found() {
        let mut o = Oracle::new(&Apart, Arch(90));
        let names = |v: u64| {
            let (ty, rnd) = (["F32", "F16", "BF16", "E8"][(v & 3) as usize], ["", ".RM", ".RP", ".RZ"][(v >> 2 & 3) as usize]);
            format!("{ty}{rnd}")
        };
        let mut d = Discovered::empty(Arch(90));
        d.fields = vec![Field { kind: FieldKind::Group(1), bits: vec![0, 1, 2, 3] }];
        d.tables = vec![(0..16).map(|v| (v, names(v))).collect()];
        assert!(!rows_print_whole(&mut o, &d, 1, 64).unwrap());
        d.fields = vec![Field { kind: FieldKind::Group(1), bits: vec![0, 1] }, Field { kind: FieldKind::Group(2), bits: vec![2, 3] }];
        d.tables = vec![
            (0..4).map(|v| (v, names(v))).collect(),
            (0..4).map(|v| (v, if v == 0 { "(default)".into() } else { names(v << 2)[4..].to_string() })).collect(),
        ];
        assert!(rows_print_whole(&mut o, &d, 1, 64).unwrap());
    }

    /// Bits 1–2 print `.RZ` set together and are illegal apart (SM100 F2FP's 79–80).
    struct PairFake;

    impl super::super::Source for PairFake {
        fn outcomes(&self, _: Arch, words: &[Word]) -> Result<Vec<crate::oracle::nvdisasm::Outcome>, DiscoverError> {
            use crate::oracle::nvdisasm::Outcome;
            let out = |w: &Word| match (w.0 & 1, w.0 >> 1 & 3) {
                (_, 1 | 2) => Outcome::Illegal { message: "illegal".into() },
                (f, rz) => Outcome::Printed { text: format!("FOO{}{} R0;", if f == 1 { ".F" } else { "" }, if rz == 3 { ".RZ" } else { "" }) },
            };
            Ok(words.iter().map(out).collect())
        }
    }

    /// Two bits with one change (a pair `swap` found) are flipped together: one alone is
    /// illegal, which would join the pair to every other modifier bit.
    #[test]
    fn a_pair_set_together_is_one_unit_of_its_own() {
        let mut o = Oracle::new(&PairFake, Arch(100));
        let s = Seed::new(Arch(100), "FOO R0;").unwrap();
        let single: BTreeMap<u8, Vec<String>> = [(0, vec!["F".to_string()]), (1, vec!["RZ".into()]), (2, vec!["RZ".into()])].into_iter().collect();
        assert_eq!(components(&mut o, &s, Word(0), &single, &[(1, 2)]).unwrap(), [vec![0], vec![1, 2]]);
    }

    #[test]
    fn modifier_groups_split_where_values_combine_and_join_where_they_clash() {
        let (bits, tables) = solved_groups(false);
        assert_eq!(bits, [vec![0, 1], vec![2, 3]]);
        assert_eq!(tables[1], [(0, "B0".into()), (1, "B1".into()), (2, "B2".into()), (3, "B3".into())]);
        // A3 with B3 prints neither: the two are one group of 16 rows.
        let (bits, tables) = solved_groups(true);
        assert_eq!(bits, [vec![0, 1, 2, 3]]);
        assert_eq!(tables[0].len(), 16);
        assert_eq!(tables[0][15], (15, "X".into()));
    }

    #[test]
    fn suffix_rows_are_what_the_operand_prints() {
        let s = Seed::new(Arch(90), "@P0 HADD2.F32 R0, R0, R0;").unwrap();
        let t = some(&["@P0 HADD2.F32 R0, R0, R0;", "@P0 HADD2.F32 R0, R0.INVALID1, R0;", "", "@P0 HADD2.F32 R0, R0.H1_H1, R0;"]);
        let want: Table = vec![(0, "(default)".into()), (1, "INVALID1".into()), (3, "H1_H1".into())];
        assert_eq!(suffix_table(&s, 1, &t), Ok(want));
        // A value that changes another operand is more than a suffix.
        let bad = some(&["@P0 HADD2.F32 R0, R0, R0;", "@P0 HADD2.F32 R0, R0.H0_H0, R1;"]);
        assert!(suffix_table(&s, 1, &bad).unwrap_err().contains("more than the suffix changes"));
    }
}
