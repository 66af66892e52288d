//! SASS text → word: the assembler direction of the printer.
//!
//! Control fields (stall, yield, barriers, reuse) never appear in nvdisasm's text, so they
//! come from a separate word (`controls_from`), as an assembler takes scheduling info.

use super::bits::{Codec, Values};
use super::print::{f64_to_bfloat, f64_to_half, guard_is_uniform, FloatFormat};
use crate::sass::{self, Body, Instruction, MemSpace};
use crate::spec::{Arch, FieldKind, ImmMap, MemImm, MemShape, MemSlot, MemSpaceKind, ModSlot, OperandKind, OperandSpec, Variant};
use crate::word::Word;
use slots::{Slot, Slots, Toks};
use smallvec::SmallVec;
use std::fmt;
use text::{InstRef, OperandRef};
use vocab::{StrMap, Vocabulary, UNLISTED_BIT};

mod slots;
mod text;
mod vocab;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("cannot read the text: {0}")]
    Syntax(#[from] sass::ParseError),
    #[error("no {arch} variant of '{mnemonic}' takes these operands{detail}")]
    NoVariant { arch: Arch, mnemonic: String, detail: String },
    /// Two encodings print this text (nvdisasm's printing loses the bits that differ).
    #[error("'{text}' reads as several different words ({keys:?})")]
    Ambiguous { text: String, keys: Vec<String>, words: Vec<Word> },
}

/// Assembles `text` for `arch`; control fields are copied from `controls_from`.
///
/// Looks the mnemonic up by scanning the codec's variants: to assemble many texts, build an
/// [`Assembler`] once, which indexes them.
pub fn assemble(codec: &Codec, arch: Arch, text: &str, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let inst = sass::parse_instruction(text)?;
    assemble_inst(codec, arch, &inst, controls_from)
}

/// [`assemble`] for a parsed instruction.
pub fn assemble_inst(codec: &Codec, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let first = assemble_as_written(codec, arch, inst, controls_from);
    if first.is_err() {
        let again = |u: &Instruction| assemble_as_written(codec, arch, u, controls_from);
        return unaliased(codec, arch, inst, again).or_else(|| unnamed(codec, inst, again)).unwrap_or(first);
    }
    first
}

/// A register nvdisasm names `???255` (`???63`), not the zero register, in forms whose
/// stored conventions say so ([`super::conventions::FormConventions::unnamed`]): a text
/// that does not assemble as written is read with such names as `RZ` or `URZ` (each
/// choice per operand: a name operand may print `???255` too, FOOTPRINT's), and a reading counts
/// only where the word it gives prints the text's operands again; one that reads as
/// several words is that ambiguity.
fn unnamed(
    codec: &Codec,
    inst: &Instruction,
    mut assemble: impl FnMut(&Instruction) -> Result<(usize, Word), AsmError>,
) -> Option<Result<(usize, Word), AsmError>> {
    let unknown: Vec<usize> = (0..inst.operands.len()).filter(|&k| matches!(&inst.operands[k].body, Body::Other { text } if text.contains("???"))).collect();
    let mut ambiguous = None;
    // Each operand kept, read as RZ or as URZ (SM90 TEX prints `???255` and `???63`).
    for choice in 1..3u32.pow(unknown.len().min(4) as u32) {
        let zeros = (0..unknown.len().min(4)).filter_map(|i| match choice / 3u32.pow(i as u32) % 3 {
            0 => None,
            1 => Some((unknown[i], "RZ")),
            _ => Some((unknown[i], "URZ")),
        });
        let Some(u) = named_zero(inst, zeros) else { continue };
        match assemble(&u) {
            Ok((vi, w)) if super::print_word(codec.variant(vi), &codec.extract(vi, w), w).operands == inst.operands => return Some(Ok((vi, w))),
            Err(e @ AsmError::Ambiguous { .. }) => ambiguous = ambiguous.or(Some(e)),
            _ => {}
        }
    }
    ambiguous.map(Err)
}

/// `inst` with the `???N` of each operand `k` read as the register `zero`.
fn named_zero<'z>(inst: &Instruction, zeros: impl Iterator<Item = (usize, &'z str)>) -> Option<Instruction> {
    let mut u = inst.clone();
    for (k, zero) in zeros {
        let op = &mut u.operands[k];
        let Body::Other { text } = &op.body else { return None };
        let at = text.find("???")?;
        let digits = text[at + 3..].chars().take_while(char::is_ascii_digit).count();
        let read = sass::parse_operand(&format!("{}{zero}{}", &text[..at], &text[at + 3 + digits..])).ok()?;
        (op.body, op.suffixes) = (read.body, read.suffixes);
    }
    Some(u)
}

/// nvdisasm's alias modifiers (`IMAD.MOV.U32` for the page's `IMAD.U32`: see
/// [`super::conventions::Alias`]): a text that does not assemble as written is read
/// without each candidate form's alias tokens, and a reading counts only where the form's
/// stored conventions print the text's modifiers again for the word it gives.
fn unaliased(
    codec: &Codec,
    arch: Arch,
    inst: &Instruction,
    mut assemble: impl FnMut(&Instruction) -> Result<(usize, Word), AsmError>,
) -> Option<Result<(usize, Word), AsmError>> {
    let mut tried: Vec<Instruction> = vec![];
    for v in codec.variants().iter().filter(|v| v.arch == arch && v.mnemonic == inst.mnemonic) {
        let Some(c) = v.conventions.as_deref() else { continue };
        let u = c.unalias(inst);
        if u.modifiers == inst.modifiers || tried.contains(&u) {
            continue;
        }
        if let Ok((vi, w)) = assemble(&u) {
            if super::print_word(codec.variant(vi), &codec.extract(vi, w), w).modifiers == inst.modifiers {
                return Some(Ok((vi, w)));
            }
        }
        tried.push(u);
    }
    None
}

/// [`assemble_inst`] without reading alias modifiers.
fn assemble_as_written(codec: &Codec, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
    let inst = &InstRef::of(inst);
    let mut vocabulary = Vocabulary::of_text(inst);
    let tokens = vocabulary.ids(inst);
    let candidates: Vec<usize> =
        (0..codec.variants().len()).filter(|&vi| codec.variant(vi).arch == arch && codec.variant(vi).mnemonic == inst.mnemonic).collect();
    // Forms only for the variants whose operands fit: building one costs more than this look.
    let fitting: Vec<(usize, Form)> = candidates
        .iter()
        .filter(|&&vi| shape_fits(codec.variant(vi), guard_is_uniform(codec.variant(vi)), inst))
        .map(|&vi| (vi, Form::new(codec.variant(vi), &mut vocabulary)))
        .collect();
    let mut hits = hits(codec, fitting.iter().map(|(vi, f)| (*vi, f)).filter(|(_, f)| f.tokens_fit(inst, &tokens)), inst, &tokens, controls_from);
    let longer: Vec<(usize, Form)> = candidates
        .iter()
        .filter(|&&vi| codec.variant(vi).operands.len() > inst.operands.len())
        .map(|&vi| (vi, Form::new(codec.variant(vi), &mut vocabulary)))
        .collect();
    omitted_pt_hits(codec, longer.iter().map(|(vi, f)| (*vi, f)), inst, &tokens, controls_from, &mut hits);
    outcome(codec, hits, arch, inst, || candidates.iter().filter_map(|&vi| Form::new(codec.variant(vi), &mut vocabulary).reason(inst, &tokens)).collect())
}

/// The assembler for one codec: variants indexed by architecture and mnemonic, each with
/// what matching text against it needs (modifier slots, the tokens they can read) worked
/// out once, so that assembling a text tries a handful of variants and rejects most by
/// their operand shape, tokens and memory operands before filling any field. A plain text
/// is read without allocating (`text`), and token names are looked up once per text.
///
/// Most texts meet variants not read lately (thousands of them), whose memory is not in
/// cache: what a text reads of a variant is kept small and together (an `Entry` per
/// candidate, then the variant's `Form`), not read from the spec.
pub struct Assembler<'c, 's> {
    codec: &'c Codec<'s>,
    /// Variants by architecture and mnemonic, in codec order (the order of
    /// [`AsmError::Ambiguous`]'s keys).
    index: Vec<(Arch, ByMnemonic)>,
    /// One per codec variant.
    forms: Vec<Form<'s>>,
    vocabulary: Vocabulary<'s>,
}

/// One architecture's variants by mnemonic.
type ByMnemonic = StrMap<Vec<Entry>>;

impl<'c, 's> Assembler<'c, 's> {
    pub fn new(codec: &'c Codec<'s>) -> Assembler<'c, 's> {
        let mut vocabulary = Vocabulary::All(StrMap::default());
        let forms: Vec<Form> = codec.variants().iter().map(|v| Form::new(v, &mut vocabulary)).collect();
        let mut index: Vec<(Arch, ByMnemonic)> = vec![];
        for (vi, v) in codec.variants().iter().enumerate() {
            let k = match index.iter().position(|(a, _)| *a == v.arch) {
                Some(k) => k,
                None => {
                    index.push((v.arch, StrMap::default()));
                    index.len() - 1
                }
            };
            index[k].1.get_or_insert_with(&v.mnemonic, Vec::new).push(Entry::new(vi, &forms[vi]));
        }
        Assembler { codec, index, forms, vocabulary }
    }

    /// The codec it assembles for.
    pub fn codec(&self) -> &'c Codec<'s> {
        self.codec
    }

    /// Same result as [`assemble`].
    pub fn assemble(&self, arch: Arch, text: &str, controls_from: Word) -> Result<(usize, Word), AsmError> {
        // A plain text is read without allocating; the full parser reads the rest.
        if let Some(inst) = &InstRef::parse(text) {
            let first = self.assemble_ref(arch, inst, controls_from);
            if first.is_ok() {
                return first;
            }
        }
        self.assemble_inst(arch, &sass::parse_instruction(text)?, controls_from)
    }

    /// Same result as [`assemble_inst`].
    pub fn assemble_inst(&self, arch: Arch, inst: &Instruction, controls_from: Word) -> Result<(usize, Word), AsmError> {
        let first = self.assemble_ref(arch, &InstRef::of(inst), controls_from);
        if first.is_err() {
            let again = |u: &Instruction| self.assemble_ref(arch, &InstRef::of(u), controls_from);
            return unaliased(self.codec, arch, inst, again).or_else(|| unnamed(self.codec, inst, again)).unwrap_or(first);
        }
        first
    }

    fn assemble_ref(&self, arch: Arch, inst: &InstRef, controls_from: Word) -> Result<(usize, Word), AsmError> {
        let found = self.index.iter().find(|(a, _)| *a == arch).and_then(|(_, m)| m.get(inst.mnemonic));
        let candidates = found.map(Vec::as_slice).unwrap_or_default();
        let tokens = self.vocabulary.ids(inst);
        let text = Summary::of_text(inst, &tokens);
        let fitting = candidates
            .iter()
            .filter(|e| e.summary.admits(&text))
            .map(|e| (e, &self.forms[e.vi()]))
            .filter(|(e, f)| (e.summary.packs(&text) || shape_fits(f.v, f.uniform_guard, inst)) && f.tokens_fit(inst, &tokens) && f.mems_fit(inst))
            .map(|(e, f)| (e.vi(), f));
        let mut hits = hits(self.codec, fitting, inst, &tokens, controls_from);
        let longer = candidates.iter().filter(|e| e.summary.may_omit(&text, e.omittable)).map(|e| (e.vi(), &self.forms[e.vi()]));
        omitted_pt_hits(self.codec, longer, inst, &tokens, controls_from, &mut hits);
        outcome(self.codec, hits, arch, inst, || candidates.iter().filter_map(|e| self.forms[e.vi()].reason(inst, &tokens)).collect())
    }
}

/// A variant in the index: its summary lies next to it, so that most candidates are
/// passed over without reading their forms. At most a cache line (asserted below): a
/// text's candidates are scanned.
struct Entry {
    summary: Summary,
    /// The variant's index, as a `u32` (codecs have thousands).
    vi: u32,
    /// The operands nvdisasm may leave out (bit k: operand k; see [`with_omitted`]).
    omittable: u16,
}

const _: () = assert!(std::mem::size_of::<Entry>() <= 64);

impl Entry {
    fn vi(&self) -> usize {
        self.vi as usize
    }

    fn new(vi: usize, form: &Form) -> Entry {
        let n = form.v.operands.len().min(PACKED);
        let omittable = (0..n).filter(|&k| omitted_body(form.v, k, true).is_some()).fold(0, |m, k| m | 1 << k);
        let vi = u32::try_from(vi).expect("fewer than 2^32 variants");
        Entry { summary: Summary::of_form(form), vi, omittable }
    }
}

/// What [`shape_fits`] and [`Form::tokens_fit`] look at, packed into integers: for a
/// variant, what it accepts; for a text, what it has. A `shape` of `None`: too many
/// operands to pack (then the shape rejects nothing).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Summary {
    shape: Option<Shape>,
    /// Modifier token ids as a 64-bit Bloom filter: for a variant, those its slots read
    /// (any `UNLISTED` reads as a table); for a text, those not starting with `UNLISTED`.
    tokens: u64,
    /// For a variant, the fixed tokens; for a text, all its modifier tokens.
    required: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Shape {
    /// 4 bits per operand (see [`kind_code`]).
    kinds: u64,
    /// For a variant, 0xf in the 4 bits of each memory operand: it prints as a memory
    /// operand or as a constant (`c[0x0][0x10]` when its register is RZ), so its kind is
    /// left to [`shape_fits`]. Zero for a text.
    wild: u64,
    /// 3 bits per operand: `|…|`, `-`, `~`/`!` (for a variant, those it has fields for);
    /// from bit [`SUFFIXED`], one per operand: it has suffix tokens (for a variant, it may).
    flags: u64,
    /// At most [`PACKED`].
    n: u8,
    /// 0 for no guard (text only), 1 for a plain predicate, 2 for a uniform one.
    guard: u8,
}

/// Operands a [`Shape`] packs.
const PACKED: usize = 16;
/// Where [`Shape::flags`]' suffix bits start, after 3 bits per operand.
const SUFFIXED: usize = 3 * PACKED;

fn bloom<'a>(ids: impl IntoIterator<Item = &'a u32>) -> u64 {
    ids.into_iter().fold(0, |b, &id| b | 1 << ((id & !UNLISTED_BIT) % 64))
}

fn kind_code(kind: OperandKind) -> u64 {
    match kind {
        OperandKind::Reg => 1,
        OperandKind::UReg => 2,
        OperandKind::Imm(_) => 3,
        OperandKind::Float(_) => 4,
        OperandKind::Const => 5,
        OperandKind::ConstX => 6,
        OperandKind::Pred => 7,
        OperandKind::UPred => 8,
        // A branch target prints as an immediate, a special register as a name.
        OperandKind::Target(_) => 3,
        OperandKind::Barrier => 9,
        OperandKind::Special | OperandKind::Name => 15,
        OperandKind::Mem(_) => 10,
    }
}

fn body_code(body: &Body) -> u64 {
    match body {
        Body::Reg { .. } => 1,
        Body::UReg { .. } => 2,
        Body::Imm { .. } => 3,
        Body::Float { .. } => 4,
        Body::Const { .. } => 5,
        Body::ConstX { .. } => 6,
        Body::Pred { .. } => 7,
        Body::UPred { .. } => 8,
        Body::Barrier { .. } => 9,
        Body::Mem { .. } => 10,
        Body::Other { .. } => 15,
    }
}

fn flag_bits(abs: bool, neg: bool, not: bool) -> u64 {
    abs as u64 | (neg as u64) << 1 | (not as u64) << 2
}

impl Summary {
    fn of_form(f: &Form) -> Summary {
        let ops = &f.v.operands;
        let flags = |(i, o): (usize, &OperandSpec)| flag_bits(o.abs_field.is_some(), o.neg_field.is_some(), o.not_field.is_some()) << (3 * i);
        // An operand reads suffix tokens with its slots, as fixed suffixes or as part of a name.
        let suffixed =
            |(i, op): (usize, &FormOperand)| u64::from(!op.suffixes.slots.is_empty() || !op.fixed.is_empty() || op.kind.is_named()) << (SUFFIXED + i);
        let shape = (ops.len() <= PACKED).then(|| Shape {
            kinds: ops.iter().enumerate().fold(0, |k, (i, o)| k | kind_code(o.kind) << (4 * i)),
            wild: ops.iter().enumerate().fold(0, |k, (i, o)| k | (u64::from(matches!(o.kind, OperandKind::Mem(_))) * 0xf) << (4 * i)),
            flags: ops.iter().enumerate().map(flags).chain(f.operands.iter().enumerate().map(suffixed)).fold(0, |k, b| k | b),
            n: ops.len() as u8,
            guard: 1 + f.uniform_guard as u8,
        });
        Summary { shape, tokens: bloom(f.modifiers.vocabulary()), required: bloom(f.modifiers.required()) }
    }

    /// `tokens`: the text's [`Vocabulary::ids`].
    fn of_text(inst: &InstRef, tokens: &[u32]) -> Summary {
        let ops = &inst.operands;
        let shape = (ops.len() <= PACKED).then(|| Shape {
            kinds: ops.iter().enumerate().fold(0, |k, (i, o)| k | body_code(&o.body) << (4 * i)),
            wild: 0,
            flags: ops
                .iter()
                .enumerate()
                .fold(0, |k, (i, o)| k | flag_bits(o.abs, o.neg, o.not) << (3 * i) | u64::from(!o.suffixes.is_empty()) << (SUFFIXED + i)),
            n: ops.len() as u8,
            guard: inst.pred.as_ref().map_or(0, |p| 1 + p.uniform as u8),
        });
        let mods = &tokens[..inst.n_modifiers];
        Summary { shape, tokens: bloom(mods.iter().filter(|&&t| t & UNLISTED_BIT == 0)), required: bloom(mods) }
    }

    /// Whether [`Summary::admits`] checked the whole shape.
    fn packs(&self, text: &Summary) -> bool {
        self.shape.is_some() && text.shape.is_some()
    }

    /// False only where no reading of the text with left-out operands put back (see
    /// [`with_omitted`]) fits: the variant (`self`, `omittable` the operands that may be
    /// left out) has more operands, its modifier tokens admit the text's, and the text's
    /// operand kinds are the variant's with some omittable ones taken out.
    fn may_omit(&self, text: &Summary, omittable: u16) -> bool {
        let tokens_ok = text.tokens & !self.tokens == 0 && self.required & !text.required == 0;
        let (Some(v), Some(t)) = (&self.shape, &text.shape) else { return tokens_ok };
        let (vn, tn) = (usize::from(v.n), usize::from(t.n));
        if !tokens_ok || vn <= tn || (vn - tn) > omittable.count_ones() as usize {
            return false;
        }
        let code = |kinds: u64, i: usize| kinds >> (4 * i) & 0xf;
        // Bit j of `at`: the variant's operands so far can read the text's first j.
        let mut at: u32 = 1;
        for k in 0..vn {
            let mut next = if omittable >> k & 1 == 1 { at } else { 0 };
            for j in (0..tn).filter(|&j| at >> j & 1 == 1) {
                if code(v.kinds, k) == code(t.kinds, j) || code(v.wild, k) != 0 {
                    next |= 1 << (j + 1);
                }
            }
            at = next;
        }
        at >> tn & 1 == 1
    }

    /// False only where [`shape_fits`] or [`Form::tokens_fit`] is (`self` a variant's,
    /// `text` a text's); the shape is checked in full when both are packed.
    fn admits(&self, text: &Summary) -> bool {
        let shape_ok = match (&self.shape, &text.shape) {
            (Some(v), Some(t)) => v.n == t.n && (v.kinds ^ t.kinds) & !v.wild == 0 && t.flags & !v.flags == 0 && (t.guard == 0 || t.guard == v.guard),
            _ => true,
        };
        shape_ok && text.tokens & !self.tokens == 0 && self.required & !text.required == 0
    }
}

/// The distinct words `inst` assembles to as each of `forms` (codec order), with their
/// variants.
fn hits<'f, 's: 'f>(codec: &Codec, forms: impl Iterator<Item = (usize, &'f Form<'s>)>, inst: &InstRef, tokens: &[u32], controls_from: Word) -> Hits {
    let mut hits = Hits { first: None, more: vec![] };
    for (vi, form) in forms {
        let mut values = Values::zero(form.n_fields);
        if form.fill_into(inst, tokens, &mut values).is_ok() {
            // Control fields are zero in `values`: their bits come straight from `controls_from`.
            let own = codec.encode_unchecked(vi, &values).0 & !form.control_bits;
            hits.add(vi, Word(own | controls_from.0 & form.control_bits));
        }
    }
    hits
}

/// Adds to `hits` the words of `inst` read as each of `forms` (whose forms have more
/// operands) with the operands nvdisasm leaves out put back (see [`with_omitted`]): PT/UPT
/// first, and other operands at all ones (RZ, URZ, `0xf`) only when nothing else reads the
/// text, as the assembler does not know which forms leave them out. Token ids stay
/// valid: the operands put back have no suffixes.
fn omitted_pt_hits<'f, 's: 'f>(
    codec: &Codec,
    forms: impl Iterator<Item = (usize, &'f Form<'s>)>,
    inst: &InstRef,
    tokens: &[u32],
    controls_from: Word,
    hits: &mut Hits,
) {
    let forms: Vec<(usize, &Form)> = forms.collect();
    for general in [false, true] {
        if general && hits.first.is_some() {
            break;
        }
        for &(vi, form) in &forms {
            for read in with_omitted(form.v, inst, general).into_iter().flatten() {
                if shape_fits(form.v, form.uniform_guard, &read) && form.tokens_fit(&read, tokens) {
                    let found = self::hits(codec, std::iter::once((vi, form)), &read, tokens, controls_from);
                    for (vj, w) in found.first.into_iter().chain(found.more) {
                        hits.add(vj, w);
                    }
                }
            }
        }
    }
}

/// Distinct words with their variants, in the order found; the first kept apart, as
/// usually there is only one.
struct Hits {
    first: Option<(usize, Word)>,
    more: Vec<(usize, Word)>,
}

impl Hits {
    fn add(&mut self, vi: usize, w: Word) {
        match self.first {
            None => self.first = Some((vi, w)),
            Some((_, x)) if x == w => {}
            Some(_) if self.more.iter().any(|(_, x)| *x == w) => {}
            Some(_) => self.more.push((vi, w)),
        }
    }
}

/// One word, or why none or several; `reasons` (why each variant of the mnemonic fails,
/// in codec order) is asked for only when none fits.
fn outcome(codec: &Codec, hits: Hits, arch: Arch, inst: &InstRef, reasons: impl FnOnce() -> Vec<String>) -> Result<(usize, Word), AsmError> {
    match hits.first {
        Some(hit) if hits.more.is_empty() => Ok(hit),
        None => {
            let reasons = reasons();
            Err(AsmError::NoVariant {
                arch,
                mnemonic: inst.mnemonic.to_string(),
                detail: if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join("; ")) },
            })
        }
        Some(first) => {
            let all: Vec<(usize, Word)> = std::iter::once(first).chain(hits.more).collect();
            // A reading in another modifier order than nvdisasm's is a word that prints
            // other text: keep the words that print the text's modifiers as written, where
            // every reading's form has stored conventions (its print is nvdisasm's).
            let modifiers = inst.to_instruction().modifiers;
            let stored = all.iter().all(|&(vi, _)| codec.variant(vi).conventions.is_some());
            let as_written: Vec<(usize, Word)> = all.iter().copied().filter(|&(_, w)| stored && prints_modifiers(codec, arch, w, &modifiers)).collect();
            let all = match as_written[..] {
                [one] => return Ok(one),
                [] => all,
                _ => as_written,
            };
            Err(AsmError::Ambiguous {
                text: inst.to_instruction().to_string(),
                keys: all.iter().map(|(i, _)| codec.variant(*i).key.clone()).collect(),
                words: all.iter().map(|(_, w)| *w).collect(),
            })
        }
    }
}

/// Whether word `w` decodes as a form that prints `modifiers` (with its stored
/// conventions).
fn prints_modifiers(codec: &Codec, arch: Arch, w: Word, modifiers: &[String]) -> bool {
    codec.decode(arch, w).is_ok_and(|(vi, vals)| super::print_word(codec.variant(vi), &vals, w).modifiers == modifiers)
}

/// Highest predicate index (`PT`); the predicate field holds it and a negation bit above.
const PT: u8 = 7;

/// The readings of `inst` as variant `v`: as written (`None`), or, when it has fewer
/// operands than the form, with the missing ones taken for operands that nvdisasm leaves
/// out at all ones (`IADD3 R0, R1, R2, RZ` for two PT; `BAR.SYNC 0x0` for an RZ): `P`/`UP`
/// operands and those the page says are left out at zero (`BRX R6` for `BRX PT, R6 0x0`),
/// or with `general` also `R`, `UR` and `I` operands of one field (those the form's stored
/// conventions leave out, where it has them); one reading per choice of which: two
/// encodings may print alike.
fn with_omitted<'t>(v: &Variant, inst: &InstRef<'t>, general: bool) -> Vec<Option<InstRef<'t>>> {
    let missing = v.operands.len().saturating_sub(inst.operands.len());
    if missing == 0 {
        return vec![None];
    }
    // The stored conventions name the operands nvdisasm leaves out; without them, any
    // that may be.
    let stored = |k: usize| v.conventions.as_deref().is_none_or(|c| c.omitted.contains(&k));
    let cands: Vec<(usize, Body)> =
        (0..v.operands.len()).filter_map(|k| omitted_body(v, k, false).or_else(|| omitted_body(v, k, general).filter(|_| stored(k))).map(|b| (k, b))).collect();
    let mut out = vec![];
    for mask in 0u32..1 << cands.len().min(8) {
        if mask.count_ones() as usize != missing {
            continue;
        }
        let mut given = inst.operands.iter();
        let mut operands = SmallVec::with_capacity(v.operands.len());
        for k in 0..v.operands.len() {
            match cands.iter().position(|(p, _)| *p == k).filter(|i| mask >> i & 1 == 1) {
                Some(i) => operands.push(OperandRef::new(cands[i].1.clone())),
                None => operands.extend(given.next().cloned()),
            }
        }
        out.push(Some(InstRef { operands, ..inst.clone() }));
    }
    if out.is_empty() {
        out.push(None);
    }
    out
}

/// What operand `k` of `v` prints at the value it is left out at, if it may be left out
/// (see [`with_omitted`]): zero for one the page says so of, else all ones.
fn omitted_body(v: &Variant, k: usize, general: bool) -> Option<Body> {
    let o = &v.operands[k];
    match o.kind {
        OperandKind::Imm(m) if o.zero_omitted => return Some(Body::Imm { value: m.apply(0) }),
        OperandKind::Pred => return Some(Body::Pred { n: PT }),
        OperandKind::UPred => return Some(Body::UPred { n: PT }),
        // A name whose table has a row that prints nothing (HGMMA's `gsb0` at 7).
        OperandKind::Name if has_nameless_row(v, o) => return Some(Body::Other { text: String::new() }),
        _ if !general => return None,
        _ => {}
    }
    let [Some(f)] = o.value_fields.as_slice() else { return None };
    let max = v.fields[*f].max();
    match o.kind {
        OperandKind::Reg if max == u64::from(sass::RZ) => Some(Body::Reg { n: sass::RZ }),
        OperandKind::UReg if max == u64::from(super::conventions::uniform_zero(v.arch)) => Some(Body::UReg { n: sass::URZ }),
        OperandKind::Imm(crate::spec::ImmMap::PLAIN) if v.fields[*f].width() <= 32 => Some(Body::Imm { value: max.into() }),
        _ => None,
    }
}

/// Does name operand `o`'s table have a `(default)` row, which nvdisasm prints by leaving
/// the operand out?
fn has_nameless_row(v: &Variant, o: &OperandSpec) -> bool {
    o.suffix_fields.first().and_then(|&f| v.field_table(f)).is_some_and(|t| t.rows.iter().any(|r| r.kind == crate::spec::RowKind::Default))
}

/// How many of `suffixes` are fixed by the form (no field): a memory form's register
/// suffix (`[R2.64+UR4]`) or an operand's fixed suffixes (`R0.SIGN`); an error when the
/// text lacks them.
fn fixed_suffix(spec: &OperandSpec, suffixes: &[&str]) -> Result<usize, String> {
    let printed = &spec.fixed_suffixes;
    match spec.kind {
        OperandKind::Mem(MemShape { reg_suffix: Some(fixed), .. }) => match suffixes.first() {
            Some(&s) if s == fixed => Ok(1),
            _ => Err(format!("the form's register prints '.{fixed}', not {suffixes:?}")),
        },
        _ if printed.len() <= suffixes.len() && printed.iter().zip(suffixes).all(|(f, s)| f == s) => Ok(printed.len()),
        _ => Err(format!("the form's operand prints '.{}', not {suffixes:?}", spec.fixed_suffixes.join("."))),
    }
}

/// A special register: its name (body and suffixes) is a row of the operand's table.
fn fill_special(v: &Variant, k: usize, o: &OperandRef, tokens: &[&str], spec: &OperandSpec, values: &mut Values) -> Result<(), String> {
    let name = sass::Operand { reuse: false, ..o.to_operand(tokens) }.to_string();
    let Some(&f) = spec.suffix_fields.first() else {
        // No table: the one name the form prints.
        return match &spec.fixed_name {
            Some(n) if *n == name => Ok(()),
            n => Err(format!("operand {k}: '{name}' is not this form's name '{}'", n.as_deref().unwrap_or(""))),
        };
    };
    let nameless = |r: &&crate::spec::Row| name.is_empty() && r.kind == crate::spec::RowKind::Default;
    let row = v.field_table(f).and_then(|t| t.rows.iter().find(|r| r.name == name || nameless(r)));
    let row = row.ok_or_else(|| format!("operand {k}: '{name}' is not a name of this form's table"))?;
    values.set(f, row.value);
    Ok(())
}

/// Field values for `inst` read as variant `v`, control fields zero.
pub fn fill(v: &Variant, inst: &Instruction) -> Result<Values, String> {
    let inst = &InstRef::of(inst);
    let mut vocabulary = Vocabulary::of_text(inst);
    let tokens = vocabulary.ids(inst);
    Form::new(v, &mut vocabulary).fill(inst, &tokens)
}

/// A variant as the assembler reads text against it.
struct Form<'s> {
    v: &'s Variant,
    /// The variant's number of fields and its `URZ` index, kept here with what else a text
    /// reads, so that filling one does not read the variant (mostly not in cache).
    n_fields: usize,
    urz: u64,
    /// The predicate fields with their largest values.
    pred_fields: SmallVec<[(usize, u64); 1]>,
    uniform_guard: bool,
    /// The bits of the control fields (a text does not say them; see [`assemble`]).
    control_bits: u128,
    /// The instruction's modifiers, in page order.
    modifiers: Slots<'s>,
    operands: Vec<FormOperand<'s>>,
}

/// An operand as the assembler reads text against it: what filling it reads of its
/// [`OperandSpec`] and fields, kept together. (The spec's lie in several allocations, and
/// most texts meet variants not read lately, whose memory is not in cache.)
struct FormOperand<'s> {
    kind: OperandKind,
    /// [`OperandSpec::value_fields`], with their widths and [`OperandSpec::derived`].
    value: SmallVec<[ValueSlot; 4]>,
    abs_field: Option<Field>,
    neg_field: Option<Field>,
    not_field: Option<Field>,
    suffixes_after_bars: bool,
    /// A float operand's format when no modifier names one (see [`OperandFill::float_format`]).
    float: FloatFormat,
    /// Ids of the suffixes the form prints before those its fields read (see [`fixed_suffix`]).
    fixed: SmallVec<[u32; 2]>,
    /// Its suffixes: operand-modifier tables in order, then selector flags.
    suffixes: Slots<'s>,
}

/// A value slot of an operand: its field (none: no bits), the field's width and largest
/// value, and for a derived register what it adds to its source.
#[derive(Clone, Copy)]
struct ValueSlot {
    max: u64,
    at: Option<Field>,
    width: u16,
    plus: Option<u8>,
}

impl ValueSlot {
    fn field(&self) -> Option<usize> {
        self.at.map(usize::from)
    }

    fn width(&self) -> u32 {
        self.width.into()
    }
}

/// A field's index, small: a variant has at most [`super::bits::MAX_FIELDS`] fields (and a
/// field at most 128 bits, which a `u16` width holds too).
type Field = u16;

impl<'s> FormOperand<'s> {
    fn new<'a>(v: &'s Variant, o: &'s OperandSpec, vocabulary: &mut Vocabulary<'a>) -> FormOperand<'s>
    where
        's: 'a,
    {
        let mut slots: Vec<Slot> = o.suffix_fields.iter().map(|&f| Slot::table(v, f, false, vocabulary)).collect();
        slots.extend(o.selector_fields.iter().map(|&f| Slot::flag(v, f, vocabulary)));
        let slot = |(k, f): (usize, &Option<usize>)| {
            let (width, max) = f.map_or((0, 0), |f| (v.fields[f].width(), v.fields[f].max()));
            ValueSlot { max, at: f.map(|f| f as Field), width: width as u16, plus: o.derived_plus(k) }
        };
        let fixed: Vec<&str> = match o.kind {
            OperandKind::Mem(MemShape { reg_suffix: Some(fixed), .. }) => vec![fixed],
            _ => o.fixed_suffixes.iter().map(String::as_str).collect(),
        };
        FormOperand {
            kind: o.kind,
            value: o.value_fields.iter().enumerate().map(slot).collect(),
            abs_field: o.abs_field.map(|f| f as Field),
            neg_field: o.neg_field.map(|f| f as Field),
            not_field: o.not_field.map(|f| f as Field),
            suffixes_after_bars: o.suffixes_after_bars,
            float: v.float_format(o, &[]),
            fixed: fixed.into_iter().map(|t| vocabulary.intern(t)).collect(),
            suffixes: Slots::new(slots),
        }
    }

    /// How many of `toks` are [`FormOperand::fixed`], as [`fixed_suffix`] (`spec` the
    /// operand's) counts them, with its error.
    fn fixed_suffix(&self, spec: &OperandSpec, toks: Toks) -> Result<usize, String> {
        if toks.starts_with(&self.fixed) {
            return Ok(self.fixed.len());
        }
        fixed_suffix(spec, toks.text)
    }
}

/// The page's modifier slots in the order the form's stored conventions print them; the
/// page's order where none is stored or a slot has no place in it.
fn printed_order(v: &Variant) -> Vec<usize> {
    let page: Vec<usize> = (0..v.modifiers.len()).collect();
    let Some(c) = v.conventions.as_deref() else { return page };
    let ranks: Option<Vec<usize>> = v.modifiers.iter().map(|m| c.modifier_order.iter().position(|id| super::print::is_slot(v, m, id))).collect();
    match ranks {
        Some(ranks) => {
            let mut order = page;
            order.sort_by_key(|&k| ranks[k]);
            order
        }
        None => page,
    }
}

impl<'s> Form<'s> {
    fn new<'a>(v: &'s Variant, vocabulary: &mut Vocabulary<'a>) -> Form<'s>
    where
        's: 'a,
    {
        let modifiers = v
            .modifiers
            .iter()
            .map(|m| match m {
                ModSlot::Fixed { text } => Slot::Fixed { text, id: vocabulary.intern(text) },
                ModSlot::Group { field, hidden_zero } => Slot::table(v, *field, *hidden_zero, vocabulary),
                ModSlot::Flag { field } => Slot::flag(v, *field, vocabulary),
            })
            .collect();
        let operands = v.operands.iter().map(|o| FormOperand::new(v, o, vocabulary)).collect();
        Form {
            v,
            n_fields: v.fields.len(),
            urz: super::conventions::uniform_zero(v.arch) as u64,
            pred_fields: (0..v.fields.len()).filter(|&i| v.fields[i].kind == FieldKind::Pred).map(|i| (i, v.fields[i].max())).collect(),
            uniform_guard: guard_is_uniform(v),
            control_bits: v.fields.iter().filter(|f| f.is_control()).flat_map(|f| &f.bits).fold(0, |m, &b| m | 1u128 << b),
            modifiers: Slots::new(modifiers).printed_in(printed_order(v)),
            operands,
        }
    }

    /// False only where [`Form::fill`] fails on the modifier and suffix tokens (`tokens`:
    /// their [`Vocabulary::ids`]); the operands' shape is [`shape_fits`]' to check.
    fn tokens_fit(&self, inst: &InstRef, tokens: &[u32]) -> bool {
        let (mods, mut rest) = tokens.split_at(inst.n_modifiers);
        self.modifiers.may_read(mods)
            && inst.operands.iter().zip(&self.operands).all(|(o, op)| {
                let (ids, after) = rest.split_at(o.suffixes.len());
                rest = after;
                // A special register's suffix is part of its name (see `fill_special`).
                op.kind.is_named() || Toks { text: inst.suffixes(o), ids }.starts_with(&op.fixed) && op.suffixes.may_read(&ids[op.fixed.len()..])
            })
    }

    /// False only where [`Form::fill`] fails on a memory operand's shape (see [`mem_fit`]):
    /// a quick rejection, without the message.
    fn mems_fit(&self, inst: &InstRef) -> bool {
        inst.operands.iter().zip(&self.operands).all(|(o, op)| match (op.kind, o.body.as_mem()) {
            (OperandKind::Mem(m), Some(parts)) => mem_fit(m, parts, self.urz).is_ok(),
            _ => true,
        })
    }

    /// Why `inst` (whose token ids are `tokens`) does not read as this variant, if it
    /// does not.
    fn reason(&self, inst: &InstRef, tokens: &[u32]) -> Option<String> {
        self.fill(inst, tokens).err().map(|e| format!("{}: {e}", self.v.key))
    }

    /// Field values for `inst`, whose modifier and suffix token ids are `tokens`.
    fn fill(&self, inst: &InstRef, tokens: &[u32]) -> Result<Values, String> {
        let mut values = Values::zero(self.n_fields);
        self.fill_into(inst, tokens, &mut values)?;
        Ok(values)
    }

    /// [`Form::fill`] into `values` (zero, of the variant's length), which are left
    /// partly set on failure: written in place, as moving 328-byte values costs.
    fn fill_into(&self, inst: &InstRef, tokens: &[u32], values: &mut Values) -> Result<(), String> {
        let v = self.v;
        self.fill_pred(inst, values)?;
        if inst.operands.len() != self.operands.len() {
            return Err(format!("{} operands, the form '{}' has {}", inst.operands.len(), v.form, v.operands.len()));
        }
        let (mods, mut rest) = tokens.split_at(inst.n_modifiers);
        for (k, (o, op)) in inst.operands.iter().zip(&self.operands).enumerate() {
            let (ids, after) = rest.split_at(o.suffixes.len());
            rest = after;
            if op.kind.is_named() {
                fill_special(v, k, o, &inst.tokens, &v.operands[k], values)?;
                continue;
            }
            let fill = OperandFill { v, k, op, modifiers: inst.modifiers(), urz: self.urz };
            fill.body(o, values)?;
            fill.flags(o, values)?;
            let toks = Toks { text: inst.suffixes(o), ids };
            let n = op.fixed_suffix(&v.operands[k], toks).map_err(|e| format!("operand {k}: {e}"))?;
            op.suffixes.read(v, toks.skip(n), values).map_err(|e| format!("operand {k}: {e}"))?;
        }
        self.modifiers.read(v, Toks { text: inst.modifiers(), ids: mods }, values)?;
        Ok(())
    }

    /// The guard predicate's field value (`@!P3` → 0b1011; none → PT), range-checked.
    fn fill_pred(&self, inst: &InstRef, values: &mut Values) -> Result<(), String> {
        let v = self.v;
        let x = match &inst.pred {
            Some(p) if p.index > PT => return Err(format!("predicate P{} does not exist (P0..P6, PT)", p.index)),
            Some(p) if p.uniform != self.uniform_guard => {
                return Err(format!("this form's guard is {} predicate, not '{p}'", if p.uniform { "a plain" } else { "a uniform" }))
            }
            Some(p) => p.index as u64 | if p.negated { 8 } else { 0 },
            None => PT as u64,
        };
        if self.pred_fields.is_empty() && x != PT as u64 {
            return Err("the page has no predicate field for '@…'".into());
        }
        for &(i, max) in &self.pred_fields {
            if x > max {
                return Err(format!("predicate value {x:#x} does not fit '{}' ({} bits)", v.fields[i].name, v.fields[i].width()));
            }
            values.set(i, x);
        }
        Ok(())
    }
}

/// False only where [`Form::fill`] fails on the guard's kind (`uniform_guard`: the
/// variant's), the number of operands or an operand's kind or flags.
fn shape_fits(v: &Variant, uniform_guard: bool, inst: &InstRef) -> bool {
    inst.pred.as_ref().is_none_or(|p| p.uniform == uniform_guard)
        && inst.operands.len() == v.operands.len()
        && inst.operands.iter().zip(&v.operands).all(|(o, spec)| operand_may_fit(o, spec))
}

/// False only where [`OperandFill`] fails on the operand's kind or flags.
fn operand_may_fit(o: &OperandRef, spec: &OperandSpec) -> bool {
    let kind_ok = matches!(
        (spec.kind, &o.body),
        (OperandKind::Reg, Body::Reg { .. })
            | (OperandKind::UReg, Body::UReg { .. })
            | (OperandKind::Imm(_), Body::Imm { .. })
            | (OperandKind::Float(_), Body::Float { .. })
            | (OperandKind::Const, Body::Const { .. })
            | (OperandKind::ConstX, Body::ConstX { .. })
            | (OperandKind::Pred, Body::Pred { .. })
            | (OperandKind::UPred, Body::UPred { .. })
            | (OperandKind::Target(_), Body::Imm { .. })
            | (OperandKind::Barrier, Body::Barrier { .. })
            | (OperandKind::Special | OperandKind::Name, Body::Other { .. })
    ) || matches!(spec.kind, OperandKind::Mem(_)) && o.body.as_mem().is_some();
    kind_ok && (!o.abs || spec.abs_field.is_some()) && (!o.neg || spec.neg_field.is_some()) && (!o.not || spec.not_field.is_some())
}

/// An integer immediate as its field's bits: non-negative values must fit the field (`f`,
/// whose slot is `s`), negative ones its two's complement range.
fn imm_bits(v: &Variant, s: ValueSlot, f: usize, k: usize, value: i128) -> Result<u64, String> {
    let (w, max) = (s.width(), s.max);
    let fits = if value >= 0 { value <= i128::from(max) } else { w > 0 && value >= -(1i128 << (w - 1)) };
    if w == 0 || !fits {
        return Err(format!("operand {k}: {} does not fit '{}' ({w} bits)", sass::hex_signed(value), v.fields[f].name));
    }
    Ok(value as u64 & max)
}

/// What a scaled immediate must be, for messages: `a multiple of 4`, `2 × n + 1`.
fn scale_text(m: ImmMap) -> String {
    match m.offset {
        0 => format!("a multiple of {}", 1u64 << m.shift),
        o => format!("{} × n + {o}", 1u64 << m.shift),
    }
}

/// Why a memory operand's printed parts do not fit a form's shape.
enum MemMismatch {
    /// Another space (`desc[…][…]` for `[…]`).
    Space,
    /// A register, uniform register or immediate the form has no place for.
    Lacks(&'static str),
    /// No uniform register, which the form always prints.
    UregAlways,
    /// A negative offset for an unsigned one.
    Unsigned(i64),
}

/// The space's field value of a memory operand's printed `parts` read as shape `m` (`urz`:
/// the architecture's `URZ` index), or why they do not fit it. A register or immediate the
/// text leaves out takes the value nvdisasm leaves out (RZ, 0: `conventions::mem_printed`);
/// one the form lacks may only stand in for nothing printed (`[RZ]`, `a[0x0]`).
fn mem_fit(m: MemShape, parts: sass::MemParts, urz: u64) -> Result<u64, MemMismatch> {
    let (space, reg, ur, imm) = parts;
    let ureg_index = |n: u16| if n == sass::URZ { urz } else { u64::from(n) };
    let space_value = match (m.space, space) {
        (MemSpaceKind::Plain, MemSpace::Plain) | (MemSpaceKind::Attr, MemSpace::Attr) => 0,
        (MemSpaceKind::Desc, MemSpace::Desc { ureg }) | (MemSpaceKind::ConstX, MemSpace::ConstX { ureg }) => ureg_index(ureg),
        (MemSpaceKind::Const, MemSpace::Const { bank }) => bank as u64,
        (MemSpaceKind::Named(a), MemSpace::Named { name }) if a == name => 0,
        _ => return Err(MemMismatch::Space),
    };
    if let (false, Some(n)) = (m.reg, reg) {
        if n != sass::RZ {
            return Err(MemMismatch::Lacks("register"));
        }
    }
    match (m.ureg, ur) {
        (false, Some(_)) => return Err(MemMismatch::Lacks("uniform register")),
        // nvdisasm prints a form's uniform register always (`[R0+URZ]`), unless the form
        // leaves URZ out (`MemShape::ureg_elided`): then a missing one is URZ.
        (true, None) if !m.ureg_elided => return Err(MemMismatch::UregAlways),
        _ => {}
    }
    match (m.imm, imm) {
        (MemImm::Absent, Some(x)) if x != 0 => Err(MemMismatch::Lacks("immediate")),
        (MemImm::Unsigned, Some(x)) if x < 0 => Err(MemMismatch::Unsigned(x)),
        _ => Ok(space_value),
    }
}

/// Operand `k` of an instruction read as variant `v`, whose fields `op` names.
struct OperandFill<'a> {
    v: &'a Variant,
    k: usize,
    op: &'a FormOperand<'a>,
    /// The instruction's modifiers: one may choose a float immediate's format.
    modifiers: &'a [&'a str],
    /// The architecture's `URZ` index.
    urz: u64,
}

impl OperandFill<'_> {
    /// A uniform register's field value: `URZ` is the architecture's zero register.
    fn ureg_index(&self, n: u16) -> u64 {
        if n == crate::sass::URZ {
            self.urz
        } else {
            n as u64
        }
    }

    /// [`Variant::float_format`] for borrowed modifiers: the first that names a format,
    /// else the operand's own.
    fn float_format(&self) -> FloatFormat {
        match self.v.float_by.iter().find(|(m, _)| self.modifiers.contains(&m.as_str())) {
            Some((_, f)) => *f,
            None => self.op.float,
        }
    }

    /// Sets the operand's `slot`-th value field to `x`; `shown` is the value as written,
    /// for the message (formatted only then).
    fn set(&self, values: &mut Values, slot: usize, x: u64, shown: &dyn fmt::Display) -> Result<(), String> {
        let (v, k) = (self.v, self.k);
        let s = self.op.value[slot];
        if let (Some(plus), Some(f)) = (s.plus, s.field()) {
            // A derived register has no bits: it must be what its source (set before it,
            // earlier in print order) prints it as.
            let (src, name) = (values.get(f), &v.fields[f].name);
            return match crate::spec::Derived::value(plus, src, s.max) {
                Some(want) if want == x => Ok(()),
                Some(want) => Err(format!("operand {k}: {shown} is not the register '{name}' gives it ({want}: the source's value + {plus})")),
                None => Err(format!("operand {k}: the source's value {src} + {plus} passes the zero register (nvdisasm rejects the word)")),
            };
        }
        match s.field() {
            Some(f) if x <= s.max => {
                values.set(f, x);
                Ok(())
            }
            Some(f) => Err(format!("operand {k}: {shown} does not fit '{}' ({} bits)", v.fields[f].name, v.fields[f].width())),
            None if x == 0 => Ok(()),
            None => Err(format!("operand {k}: no bits for a non-zero value")),
        }
    }

    /// The value fields, from the operand's body (register, immediate, constant, …).
    fn body(&self, o: &OperandRef, values: &mut Values) -> Result<(), String> {
        let (v, k, body) = (self.v, self.k, &o.body);
        match (self.op.kind, body) {
            // Registers are checked against the page's field, not the register file: the
            // printer shows what the page's field holds (UR86 in an 8-bit field), and the
            // two must roundtrip; a field wider than the hardware's is the validator's finding.
            (OperandKind::Reg, Body::Reg { n }) => self.set(values, 0, *n as u64, &format_args!("R{n}")),
            (OperandKind::UReg, Body::UReg { n }) => self.set(values, 0, self.ureg_index(*n), body),
            (OperandKind::Imm(m), Body::Imm { value }) => {
                let f = self.op.value[0].field().ok_or("immediate without bits")?;
                let x = m.invert(*value).ok_or_else(|| format!("operand {k}: {} is not {}", sass::hex_signed(*value), scale_text(m)))?;
                // nvdisasm never prints this form's immediate negative (its stored
                // conventions): a negative one is another form's (AL2P R,R,I's, not R,I's).
                if x < 0 && v.conventions.as_deref().is_some_and(|c| !c.signed_imm && c.signed_imm_by.is_empty()) {
                    return Err(format!("operand {k}: the form prints its immediate unsigned, not {}", sass::hex_signed(*value)));
                }
                values.set(f, imm_bits(v, self.op.value[0], f, k, x)?);
                Ok(())
            }
            (OperandKind::Float(_), Body::Float { value, .. }) => self.set(values, 0, float_bits(self.float_format(), k, *value, o.text)?, &o.text),
            (OperandKind::Barrier, Body::Barrier { n }) => self.set(values, 0, *n as u64, body),
            (OperandKind::Target(shift), Body::Imm { value }) => {
                // The inverse of codec::print::target_at_zero, in the signed field.
                let value = i64::try_from(*value).map_err(|_| format!("operand {k}: target {value:#x} is past 64-bit addresses"))?;
                let w = self.op.value[0].width();
                let unit = 1i64 << shift;
                let units = value.wrapping_sub(0x10) / unit;
                if value.wrapping_sub(0x10) % unit != 0 || w == 0 || w < 64 && (units < -(1i64 << (w - 1)) || units >= 1i64 << (w - 1)) {
                    return Err(format!(
                        "operand {k}: target {value:#x} is not 0x10 plus a multiple of {unit} that fits the signed {w}-bit field ({unit}-byte units)"
                    ));
                }
                self.set(values, 0, (units as u64) & (u64::MAX >> (64 - w)), &format_args!("target {value:#x}"))
            }
            (OperandKind::Const, Body::Const { bank, offset }) => {
                // The offset field is signed (see codec::print).
                let w = self.op.value[1].width();
                let units = *offset / 4;
                if offset % 4 != 0 || w == 0 || units < -(1i64 << (w - 1)) || units >= 1i64 << (w - 1) {
                    return Err(format!("operand {k}: offset {offset:#x} does not fit: not a multiple of 4 in the signed {w}-bit field (4-byte units)"));
                }
                self.set(values, 0, *bank as u64, &format_args!("bank {bank:#x}"))?;
                self.set(values, 1, (units as u64) & ((1u64 << w) - 1), &format_args!("offset {offset:#x}"))
            }
            (OperandKind::ConstX, Body::ConstX { ureg, offset }) => {
                if *offset < 0 || offset % 4 != 0 {
                    return Err(format!("operand {k}: offset {offset:#x} is not a non-negative multiple of 4"));
                }
                self.set(values, 0, self.ureg_index(*ureg), &Body::UReg { n: *ureg })?;
                self.set(values, 1, (*offset / 4) as u64, &format_args!("offset {offset:#x}"))
            }
            (OperandKind::Pred, Body::Pred { n }) | (OperandKind::UPred, Body::UPred { n }) => {
                if *n > PT {
                    let u = if self.op.kind == OperandKind::UPred { "U" } else { "" };
                    return Err(format!("operand {k}: predicate {body} does not exist ({u}P0..{u}P6, {u}PT)"));
                }
                self.set(values, 0, *n as u64, body)
            }
            (OperandKind::Mem(m), body) if body.as_mem().is_some() => self.mem(m, body, values),
            (kind, _) => Err(format!("operand {k}: expected {}, found '{}'", kind.form_token(), o.full_body())),
        }
    }

    /// A memory operand's fields, once its parts fit the form's shape (see [`mem_fit`]).
    fn mem(&self, m: MemShape, body: &Body, values: &mut Values) -> Result<(), String> {
        let (v, k) = (self.v, self.k);
        let Some(parts @ (space, reg, ur, imm)) = body.as_mem() else { return Err(format!("operand {k}: '{body}' is not a memory operand")) };
        let space_value = mem_fit(m, parts, self.urz).map_err(|e| match e {
            MemMismatch::Space => format!("operand {k}: expected {}, found '{body}'", m.token()),
            MemMismatch::Lacks(what) => format!("operand {k}: the form {} has no {what} for '{body}'", m.token()),
            MemMismatch::UregAlways => format!("operand {k}: the form {} prints its uniform register always, '{body}' has none", m.token()),
            MemMismatch::Unsigned(x) => format!("operand {k}: the form's offset is unsigned, not {}", sass::hex_signed(x)),
        })?;
        for (slot, role) in m.slot_roles().into_iter().enumerate() {
            match role {
                MemSlot::Space => self.set(values, slot, space_value, &format_args!("{space:?}"))?,
                MemSlot::Reg => self.set(values, slot, reg.unwrap_or(sass::RZ) as u64, &format_args!("R{}", reg.unwrap_or(sass::RZ)))?,
                MemSlot::UReg => {
                    let n = ur.unwrap_or(sass::URZ);
                    self.set(values, slot, self.ureg_index(n), &Body::UReg { n })?;
                }
                MemSlot::Imm => {
                    let f = self.op.value[slot].field().ok_or("offset without bits")?;
                    let scale = ImmMap { shift: m.imm_shift, offset: 0 };
                    let x = imm.unwrap_or(0);
                    let units =
                        scale.invert(i128::from(x)).ok_or_else(|| format!("operand {k}: offset {} is not {}", sass::hex_signed(x), scale_text(scale)))?;
                    values.set(f, imm_bits(v, self.op.value[slot], f, k, units)?);
                }
            }
        }
        Ok(())
    }

    /// The `|…|`, `-` and `~`/`!` flags.
    fn flags(&self, o: &OperandRef, values: &mut Values) -> Result<(), String> {
        let k = self.k;
        let not = if matches!(self.op.kind, OperandKind::Pred | OperandKind::UPred) { "!" } else { "~" };
        for (want, field, what) in [(o.abs, self.op.abs_field, "|…|"), (o.neg, self.op.neg_field, "-"), (o.not, self.op.not_field, not)] {
            match (want, field) {
                (true, Some(f)) => values.set(f.into(), 1),
                (true, None) => return Err(format!("operand {k}: the page has no {what} flag for it")),
                _ => {}
            }
        }
        // Where the suffixes stand is the page's (`suffixes after bars:`), as printed.
        let placed = o.abs && !o.suffixes.is_empty() && !matches!(o.body, Body::Mem { .. });
        if placed && o.after_bars != self.op.suffixes_after_bars {
            let (want, got) = if self.op.suffixes_after_bars { ("after", "inside") } else { ("inside", "after") };
            return Err(format!("operand {k}: nvdisasm prints this operand's suffixes {want} its |…| bars, not {got}"));
        }
        Ok(())
    }
}

/// A floating-point literal as its field's bits: a double's high 32 bits when the variant
/// takes doubles, an exact fp16 in a 16-bit field, else an exact 32-bit float.
fn float_bits(format: FloatFormat, k: usize, value: f64, text: &str) -> Result<u64, String> {
    // A finite literal too large for f64 parses as infinity: say so, not +INF.
    if value.is_infinite() && !text.contains("INF") {
        return Err(format!("operand {k}: {text} is out of range for a floating-point literal"));
    }
    if format == FloatFormat::Half {
        return f64_to_half(value).map(u64::from).ok_or_else(|| format!("operand {k}: {text} is not exactly a 16-bit float"));
    }
    if format == FloatFormat::BFloat {
        return f64_to_bfloat(value).map(u64::from).ok_or_else(|| format!("operand {k}: {text} is not exactly a bfloat16"));
    }
    if format == FloatFormat::DoubleHigh {
        let b = value.to_bits();
        if b & 0xffff_ffff != 0 {
            return Err(format!("operand {k}: {value} needs more than the high 32 bits of a double"));
        }
        // NaNs come from parse_float with their sign and quiet bit only.
        return Ok(b >> 32);
    }
    let f = value as f32;
    if f as f64 != value && !value.is_nan() {
        return Err(format!("operand {k}: {text} is not exactly a 32-bit float"));
    }
    if value.is_nan() {
        let quiet = value.to_bits() >> 51 & 1 == 1;
        Ok((if quiet { 0x7fc0_0000 } else { 0x7fa0_0000 }) | ((value.to_bits() >> 63) << 31))
    } else {
        Ok(f.to_bits() as u64)
    }
}
