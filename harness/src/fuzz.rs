//! The fuzz targets' input model and properties, so each target in `fuzz/` is a few lines
//! and `sass-harness crosscheck` reads (and writes back) the same inputs.
//!
//! An [`Input`] is parsed by hand from libFuzzer's bytes, not derived with `Arbitrary`, so
//! that [`Input::to_bytes`] can write a minimized input back as a regression seed that
//! [`Input::parse`] reads as exactly the same variant and values.
//!
//! Byte format of a `roundtrip` input: 4 bytes (little-endian) choose the variant: a
//! variant's [`codec::stable_id`] names it (a hash of its architecture and key, so a
//! written seed means the same variant when pages gain or lose others), any other number
//! is an index modulo the codec's variant count; then per field, in field order, a mode
//! byte ([`Mode`], taken modulo 8) and the bytes that mode reads (none, one, or a LEB128
//! number). Missing bytes read as zero, so every byte string is an input.

use crate::check::{Checker, RoundtripFailure};
use crate::codec::{self, Codec, Values};
use crate::spec::{self, Arch, Field, FieldKind, MemSlot, OperandKind, PageError, RowKind, Spec, Variant};
use crate::word::Word;
use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable naming the spec the fuzz targets use: page folders joined by
/// `:`. Unset, they use [`default_spec_dirs`].
pub const SPEC_ENV: &str = "SASS_HARNESS_FUZZ_SPEC";

/// The whole spec of a repository: every page of `corpus/isa-discovered` (all
/// architectures), then `corpus/isa` (whose variants the discovered pages mostly define
/// already; see [`load_spec`]).
pub fn default_spec_dirs(repo: &Path) -> Vec<PathBuf> {
    vec![repo.join("corpus/isa-discovered"), repo.join("corpus/isa")]
}

/// The page folders to fuzz: [`SPEC_ENV`] when set (relative paths are taken from `repo`),
/// else [`default_spec_dirs`].
pub fn spec_dirs(repo: &Path) -> Vec<PathBuf> {
    match std::env::var_os(SPEC_ENV) {
        Some(v) if !v.is_empty() => std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()).map(|p| repo.join(p)).collect(),
        _ => default_spec_dirs(repo),
    }
}

/// Loads each folder as its own spec (with its stored conventions) and joins them in
/// order. A variant whose (architecture, key) an earlier folder defined is left out: the
/// seed pages of `corpus/isa` repeat forms `corpus/isa-discovered` has, and one spec must
/// not hold a key twice (decode would read the copy's words as the first).
pub fn load_spec(dirs: &[PathBuf]) -> Result<Spec, PageError> {
    let mut out = Spec::default();
    let mut seen: std::collections::HashSet<(Arch, String)> = std::collections::HashSet::new();
    for dir in dirs {
        let spec = spec::load(std::slice::from_ref(dir))?;
        let before: std::collections::HashSet<(Arch, String)> = seen.clone();
        for mut page in spec.pages {
            page.variants.retain(|v| !before.contains(&(v.arch, v.key.clone())));
            for v in &page.variants {
                seen.insert((v.arch, v.key.clone()));
            }
            if !page.variants.is_empty() {
                out.pages.push(page);
            }
        }
    }
    Ok(out)
}

/// How a mode byte (modulo 8) picks a field's value: the edges first, raw bytes otherwise.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 0.
    Zero,
    /// The field's all-ones value.
    Max,
    /// One bit, chosen by the next byte modulo the width.
    Bit,
    /// The zero register (`RZ`, `URZ`, `PT`, `UPT`: all ones) where the field holds a
    /// register or predicate; 0 elsewhere.
    ZeroReg,
    /// A value the spec marks illegal (a table's unlisted or `INVALID` row, all ones where
    /// the page says it is illegal, a derived register past the zero register), chosen by
    /// the next byte; raw bytes where the spec names none.
    Illegal,
    /// A LEB128 number (small values take one byte), masked to the width.
    Raw,
}

impl Mode {
    /// The byte [`Input::to_bytes`] writes for a raw value.
    pub const RAW_BYTE: u8 = 5;

    pub fn of(byte: u8) -> Mode {
        match byte % 8 {
            0 => Mode::Zero,
            1 => Mode::Max,
            2 => Mode::Bit,
            3 => Mode::ZeroReg,
            4 => Mode::Illegal,
            _ => Mode::Raw,
        }
    }
}

/// Reads bytes front to back; past the end every byte is 0.
struct Bytes<'a> {
    data: &'a [u8],
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    /// `n` ≤ 8 bytes, little-endian.
    fn le(&mut self, n: usize) -> u64 {
        (0..n).fold(0u64, |x, i| x | (self.byte() as u64) << (8 * i))
    }
    /// An unsigned LEB128 number: 7 bits a byte, low first, high bit set on all but the
    /// last; at most 10 bytes (bits past 64 are dropped).
    fn leb128(&mut self) -> u64 {
        let mut x = 0u64;
        for i in 0..10 {
            let b = self.byte();
            x |= ((b & 0x7f) as u64).checked_shl(7 * i).unwrap_or(0);
            if b & 0x80 == 0 {
                break;
            }
        }
        x
    }
}

/// One roundtrip input: a variant of the codec and a value for each of its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub variant: usize,
    pub values: Values,
}

impl Input {
    /// The input `data` means for `codec`; `None` when the codec has no variants.
    pub fn parse(codec: &Codec, data: &[u8]) -> Option<Input> {
        let n = codec.variants().len();
        if n == 0 {
            return None;
        }
        let mut b = Bytes { data };
        let selector = b.le(4);
        let variant = u32::try_from(selector).ok().and_then(|id| codec.by_stable_id(id)).unwrap_or((selector % n as u64) as usize);
        let v = codec.variant(variant);
        let mut values = Values::zero(v.fields.len());
        for (i, f) in v.fields.iter().enumerate() {
            values.set(i, field_value(v, i, f, Mode::of(b.byte()), &mut b));
        }
        Some(Input { variant, values })
    }

    /// The input for `values` of variant `variant` (values masked to their fields).
    pub fn from_values(codec: &Codec, variant: usize, values: &Values) -> Input {
        let v = codec.variant(variant);
        let mut vals = Values::zero(v.fields.len());
        for (i, f) in v.fields.iter().enumerate() {
            vals.set(i, values.as_slice().get(i).copied().unwrap_or(0) & f.max());
        }
        Input { variant, values: vals }
    }

    /// Bytes that [`Input::parse`] reads back as this input with `codec`, and with any
    /// codec that has its variant (named by its [`codec::stable_id`]; by index where
    /// another variant has the same id, which then holds only for the same pages): every
    /// field written as a raw value.
    pub fn to_bytes(&self, codec: &Codec) -> Vec<u8> {
        let id = codec::stable_id(codec.variant(self.variant));
        let selector = if codec.by_stable_id(id) == Some(self.variant) { id } else { index_selector(self.variant) };
        let mut out = Vec::with_capacity(4 + self.values.len() * 9);
        out.extend_from_slice(&selector.to_le_bytes());
        for &x in self.values.as_slice() {
            out.push(Mode::RAW_BYTE);
            let mut x = x;
            loop {
                let low = (x & 0x7f) as u8;
                x >>= 7;
                if x == 0 {
                    out.push(low);
                    break;
                }
                out.push(low | 0x80);
            }
        }
        out
    }
}

/// Variant `vi` named by its index (below 2^31, so no [`codec::stable_id`]).
fn index_selector(vi: usize) -> u32 {
    u32::try_from(vi).ok().filter(|&i| i < 1 << 31).expect("fewer than 2^31 variants")
}

/// Field `fi`'s value in `mode`, reading what the mode needs from `b`.
fn field_value(v: &Variant, fi: usize, f: &Field, mode: Mode, b: &mut Bytes) -> u64 {
    let width = f.width();
    match mode {
        Mode::Zero => 0,
        Mode::Max => f.max(),
        Mode::Bit if width == 0 => 0,
        Mode::Bit => 1u64 << (b.byte() as u32 % width),
        // The guard's top bit negates: PT is the index bits all ones, not negated.
        Mode::ZeroReg if f.kind == FieldKind::Pred => f.max() >> 1,
        Mode::ZeroReg if holds_register(v, fi) => f.max(),
        Mode::ZeroReg => 0,
        Mode::Illegal => {
            let k = b.byte();
            illegal_value(v, fi, k).unwrap_or_else(|| raw(f, b))
        }
        Mode::Raw => raw(f, b),
    }
}

fn raw(f: &Field, b: &mut Bytes) -> u64 {
    b.leb128() & f.max()
}

/// Does field `fi` hold a register or predicate, whose all-ones value is the zero register
/// (or `PT`)?
fn holds_register(v: &Variant, fi: usize) -> bool {
    let FieldKind::Operand { .. } = v.fields[fi].kind else { return false };
    v.operands.iter().any(|o| {
        let Some(slot) = o.value_fields.iter().position(|&x| x == Some(fi)) else { return false };
        match o.kind {
            OperandKind::Reg | OperandKind::UReg | OperandKind::Pred | OperandKind::UPred => true,
            OperandKind::ConstX => slot == 0,
            OperandKind::Mem(shape) => matches!(shape.slot_roles().get(slot), Some(MemSlot::Reg | MemSlot::UReg)),
            _ => false,
        }
    })
}

/// The `k`-th (modulo their count) value of field `fi` the spec marks illegal, if any.
fn illegal_value(v: &Variant, fi: usize, k: u8) -> Option<u64> {
    let f = &v.fields[fi];
    if let Some(t) = v.field_table(fi) {
        let invalid = t.rows.iter().filter(|r| r.kind == RowKind::Invalid).map(|r| r.value);
        let n = t.omitted.len() + t.rows.iter().filter(|r| r.kind == RowKind::Invalid).count();
        if n > 0 {
            return t.omitted.iter().copied().chain(invalid).nth(k as usize % n);
        }
    }
    if f.illegal_at_all_ones {
        return Some(f.max());
    }
    // A derived register past the zero register: the values just below all ones.
    (1..=f.max().min(4)).map(|d| f.max() - d).find(|&x| v.derived_illegal(fi, x))
}

/// The fuzz targets, named as their `fuzz/fuzz_targets/*.rs` and corpus folders.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Roundtrip,
    Decode,
    Asm,
    Cubin,
    ParsePage,
}

impl Target {
    pub const ALL: [Target; 5] = [Target::Roundtrip, Target::Decode, Target::Asm, Target::Cubin, Target::ParsePage];

    pub fn name(self) -> &'static str {
        match self {
            Target::Roundtrip => "roundtrip",
            Target::Decode => "decode",
            Target::Asm => "asm",
            Target::Cubin => "cubin",
            Target::ParsePage => "parse_page",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        Target::ALL.into_iter().find(|t| t.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
            format!("unknown fuzz target '{s}' (targets: {})", names.join(", "))
        })
    }
}

/// A word a fuzz input makes its target build, for architecture `arch`; `variant` is the
/// codec's variant the word is (or decodes as), `None` where it decodes as none.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Generated {
    pub arch: Arch,
    pub variant: Option<usize>,
    pub word: Word,
}

/// The words input `data` makes `target` build with `codec`: the encoded word
/// (`roundtrip`), each 16-byte chunk on every architecture (`decode`), what the text
/// assembles to on each architecture, with neutral control bits (`asm`), the words of
/// every code section of the cubin on its architecture (`cubin`), none (`parse_page`).
pub fn words(target: Target, codec: &Codec, data: &[u8]) -> Vec<Generated> {
    match target {
        Target::Roundtrip => Input::parse(codec, data)
            .map(|i| Generated { arch: codec.variant(i.variant).arch, variant: Some(i.variant), word: codec.encode_unchecked(i.variant, &i.values) })
            .into_iter()
            .collect(),
        Target::Decode => {
            let archs = archs(codec);
            decode_words(data).flat_map(|w| archs.iter().map(move |&arch| (arch, w))).map(|(arch, w)| generated(codec, arch, w)).collect()
        }
        Target::Asm => {
            let Ok(text) = std::str::from_utf8(data) else { return vec![] };
            archs(codec)
                .into_iter()
                // With the control bits every form is legal with (zero control bits make
                // nvdisasm reject branches, STG and the like, and then no text is compared).
                .filter_map(|arch| {
                    let controls = Word(crate::discover::NEUTRAL_CONTROL);
                    codec::asm::assemble(codec, arch, text, controls).ok().map(|(vi, w)| Generated { arch, variant: Some(vi), word: w })
                })
                .collect()
        }
        // A cubin's words; a fatbin's or host file's, cubin by cubin (as the target reads them).
        Target::Cubin => match crate::fatbin::contents(data) {
            Ok(crate::fatbin::Contents::Fat(entries)) => entries.iter().filter_map(crate::fatbin::Entry::cubin).flat_map(|b| cubin_words(codec, b)).collect(),
            _ => cubin_words(codec, data),
        },
        Target::ParsePage => vec![],
    }
}

/// The code words of the cubin `data` (none when it is no cubin).
fn cubin_words(codec: &Codec, data: &[u8]) -> Vec<Generated> {
    let (Ok(sm), Ok(sections)) = (crate::cubin::cubin_arch(data), crate::cubin::code_section_words(data)) else { return vec![] };
    sections.iter().flat_map(|s| s.words.iter()).map(|&w| generated(codec, Arch(sm), w)).collect()
}

fn generated(codec: &Codec, arch: Arch, word: Word) -> Generated {
    Generated { arch, variant: codec.find(arch, word).ok(), word }
}

/// The architectures `codec` covers, each once, in variant order.
pub fn archs(codec: &Codec) -> Vec<Arch> {
    let mut out: Vec<Arch> = vec![];
    for v in codec.variants() {
        if !out.contains(&v.arch) {
            out.push(v.arch);
        }
    }
    out
}

/// The 16-byte words of a `decode` input (a ragged tail is left out).
fn decode_words(data: &[u8]) -> impl Iterator<Item = Word> + '_ {
    data.chunks_exact(16).map(|c| Word::from_le_bytes(c.try_into().expect("16 bytes")))
}

/// A property that does not hold: what was checked, and why it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The architecture, where the property is one architecture's (reading a text is not).
    pub arch: Option<Arch>,
    /// The variant's key, where one is known.
    pub key: Option<String>,
    pub word: Option<Word>,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.arch {
            Some(a) => write!(f, "{a}")?,
            None => write!(f, "any architecture")?,
        }
        if let Some(k) = &self.key {
            write!(f, " {k}")?;
        }
        if let Some(w) = self.word {
            write!(f, " {w}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Failure {}

fn roundtrip_failure(codec: &Codec, vi: usize, values: &Values, e: RoundtripFailure) -> Failure {
    let v = codec.variant(vi);
    Failure { arch: Some(v.arch), key: Some(v.key.clone()), word: None, message: format!("values {values:?}: {e}") }
}

/// `roundtrip`: the input's values hold [`crate::check::roundtrip`] (encode → decode →
/// encode, print → assemble → encode).
pub fn roundtrip(k: &Checker, data: &[u8]) -> Result<(), Failure> {
    let codec = k.codec();
    let Some(input) = Input::parse(codec, data) else { return Ok(()) };
    k.roundtrip(input.variant, &input.values).map(|_| ()).map_err(|e| roundtrip_failure(codec, input.variant, &input.values, e))
}

/// `decode`: each 16-byte word, on every architecture, either does not decode or decodes to
/// values that encode back to the word (but for bits the page marks ignored) and hold
/// [`crate::check::roundtrip`].
pub fn decode(k: &Checker, data: &[u8]) -> Result<(), Failure> {
    let codec = k.codec();
    let archs = archs(codec);
    for w in decode_words(data) {
        for &arch in &archs {
            let Ok((vi, values)) = codec.decode(arch, w) else { continue };
            let v = codec.variant(vi);
            let fail = |message: String| Failure { arch: Some(arch), key: Some(v.key.clone()), word: Some(w), message };
            if v.arch != arch {
                return Err(fail(format!("decoded as a variant of {}", v.arch)));
            }
            // Bits nvdisasm ignores decode to nothing: encode gives the word without them.
            let again = codec.encode_unchecked(vi, &values);
            if (again.0 ^ w.0) & !v.ignored.0 != 0 {
                return Err(fail(format!("encode∘decode gives {again}")));
            }
            k.roundtrip(vi, &values).map_err(|e| roundtrip_failure(codec, vi, &values, e))?;
        }
    }
    Ok(())
}

/// `asm`: UTF-8 text is read in one pass as the full parser reads it, or left to that
/// parser (see [`reads_as_the_full_parser`]); text that assembles on an architecture gives
/// a word that decodes (as the variant it assembled as, or one the decoder prefers) to
/// values that encode back to the word and hold [`crate::check::roundtrip`].
pub fn asm(k: &Checker, data: &[u8]) -> Result<(), Failure> {
    let codec = k.codec();
    let Ok(text) = std::str::from_utf8(data) else { return Ok(()) };
    reads_as_the_full_parser(text)?;
    for arch in archs(codec) {
        let Ok((vi, w)) = k.assembler().assemble(arch, text, Word::ZERO) else { continue };
        let key = Some(codec.variant(vi).key.clone());
        let fail = |message: String| Failure { arch: Some(arch), key: key.clone(), word: Some(w), message };
        let (vj, values) = codec.decode(arch, w).map_err(|e| fail(format!("'{text}' assembles to a word that does not decode: {e}")))?;
        if codec.encode_unchecked(vj, &values) != w {
            return Err(fail(format!("'{text}' assembles to a word that decodes as {} and does not encode back", codec.variant(vj).key)));
        }
        k.roundtrip(vj, &values).map_err(|e| roundtrip_failure(codec, vj, &values, e))?;
    }
    Ok(())
}

/// The assembler's and [`crate::sass::parse_instruction`]'s one-pass reading of `text`, where
/// it reads it, is the full parser's (which it stands in for: a text it reads goes no
/// further): the instruction, its tokens and where each operand's suffixes are.
pub fn reads_as_the_full_parser(text: &str) -> Result<(), Failure> {
    // `full` first, so that it outlives `fast`: comparing makes them one type, which
    // borrows `full` for as long as `fast` borrows the text.
    let full = crate::sass::parse_full(text);
    let Some(fast) = crate::sass::InstRef::parse(text) else { return Ok(()) };
    match &full {
        Ok(f) if crate::sass::InstRef::of(f) == fast && fast.to_instruction() == *f => Ok(()),
        _ => Err(Failure { arch: None, key: None, word: None, message: format!("'{text}': read in one pass as {fast:?}, by the full parser as {full:?}") }),
    }
}

/// The text a roundtrip input's word prints as (the `asm` seed for it).
pub fn asm_seed(codec: &Codec, input: &Input) -> String {
    let v = codec.variant(input.variant);
    codec::print(v, &input.values).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_codec() -> &'static Codec<'static> {
        static C: std::sync::OnceLock<Codec<'static>> = std::sync::OnceLock::new();
        C.get_or_init(|| {
            let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa"));
            Codec::new(Box::leak(Box::new(load_spec(&[dir]).expect("corpus/isa loads"))))
        })
    }

    #[test]
    fn bytes_read_as_zero_past_the_end() {
        let mut b = Bytes { data: &[1, 2] };
        assert_eq!(b.le(4), 0x0201);
        assert_eq!(b.byte(), 0);
    }

    #[test]
    fn modes_cycle_every_eight_bytes() {
        assert_eq!(Mode::of(0), Mode::Zero);
        assert_eq!(Mode::of(9), Mode::Max);
        assert_eq!(Mode::of(Mode::RAW_BYTE), Mode::Raw);
        assert_eq!(Mode::of(255), Mode::Raw);
    }

    #[test]
    fn leb128_reads_what_to_bytes_writes() {
        for x in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Bytes { data: &[] };
            let mut out = vec![];
            let mut y = x;
            loop {
                out.push((y & 0x7f) as u8 | if y >> 7 == 0 { 0 } else { 0x80 });
                y >>= 7;
                if y == 0 {
                    break;
                }
            }
            b.data = &out;
            assert_eq!(b.leb128(), x);
        }
    }

    /// parse ∘ to_bytes ∘ from_values is the identity, for every variant at its edges and
    /// at random values.
    #[test]
    fn inputs_written_back_read_the_same() {
        let c = seed_codec();
        let mut rng = crate::gen::Rng::new(21);
        for vi in 0..c.variants().len() {
            let v = c.variant(vi);
            let max = Values::zero(v.fields.len());
            let mut all_max = max;
            for (i, f) in v.fields.iter().enumerate() {
                all_max.set(i, f.max());
            }
            for values in [max, all_max, crate::gen::random_values(v, &mut rng)] {
                let input = Input::from_values(c, vi, &values);
                assert_eq!(input.values, values, "{}", v.key);
                assert_eq!(Input::parse(c, &input.to_bytes(c)), Some(input), "{}", v.key);
            }
        }
    }

    /// A written input names its variant by architecture and key, not by index: read with
    /// the same pages in reverse order (every variant's index changed) it is the same
    /// variant with the same values. A selector that is no variant's id still reads as an
    /// index (every byte string is an input).
    #[test]
    fn inputs_written_back_name_their_variant_whatever_its_index() {
        let c = seed_codec();
        let mut reversed = c.spec.clone();
        reversed.pages.reverse();
        let r = Codec::new(&reversed);
        let mut rng = crate::gen::Rng::new(22);
        for vi in 0..c.variants().len() {
            let v = c.variant(vi);
            let input = Input::from_values(c, vi, &crate::gen::random_values(v, &mut rng));
            let back = Input::parse(&r, &input.to_bytes(c)).expect("an input");
            let w = r.variant(back.variant);
            assert_eq!((w.arch, &w.key, &back.values), (v.arch, &v.key, &input.values));
        }
        assert!(c.variants().len() > 2 && (0..c.variants().len()).any(|vi| r.variant(vi).key != c.variant(vi).key), "the order changed");
        let n = c.variants().len() as u32;
        assert_eq!(Input::parse(c, &(n + 1).to_le_bytes()).map(|i| i.variant), Some(1));
    }

    #[test]
    fn modes_reach_the_edges() {
        let c = seed_codec();
        let vi = c.index_of("DFMA_R_R_R_R", Some(Arch(90))).expect("seed variant");
        let v = c.variant(vi);
        let n = v.fields.len();
        let pick = |mode: u8| {
            let mut data = (vi as u32).to_le_bytes().to_vec();
            // Bit reads one more byte (the bit); Zero, Max and ZeroReg read none.
            let field: &[u8] = if Mode::of(mode) == Mode::Bit { &[mode, 3] } else { &[mode] };
            data.extend(std::iter::repeat_n(field, n).flatten());
            Input::parse(c, &data).expect("an input").values
        };
        let reg = v.fields.iter().position(|f| matches!(f.kind, FieldKind::Operand { .. })).expect("a register field");
        let pred = v.fields.iter().position(|f| f.kind == FieldKind::Pred).expect("a guard");
        assert_eq!(pick(0).as_slice(), &vec![0; n][..]);
        assert_eq!(pick(1).get(reg), v.fields[reg].max());
        assert_eq!(pick(2).get(reg), 1 << 3);
        assert_eq!((pick(3).get(reg), pick(3).get(pred)), (v.fields[reg].max(), 7));
    }

    #[test]
    fn words_follow_the_target() {
        let c = seed_codec();
        let input = Input::from_values(c, 0, &Values::zero(c.variant(0).fields.len()));
        let w = c.encode_unchecked(0, &input.values);
        let g = words(Target::Roundtrip, c, &input.to_bytes(c));
        assert_eq!(g, vec![Generated { arch: c.variant(0).arch, variant: Some(0), word: w }]);
        let d = words(Target::Decode, c, &w.to_le_bytes());
        assert!(d.contains(&Generated { arch: c.variant(0).arch, variant: Some(0), word: w }), "{d:?}");
        assert_eq!(d.len(), archs(c).len());
        let text = asm_seed(c, &input);
        let a = words(Target::Asm, c, text.as_bytes());
        // Built with the neutral control bits every form is legal with.
        let neutral = crate::discover::neutral(w);
        assert!(a.iter().any(|g| g.word == neutral && g.variant == Some(0)), "'{text}': {a:?}");
        assert!(words(Target::ParsePage, c, b"anything").is_empty());
        assert!(words(Target::Cubin, c, b"not elf").is_empty());
        // A fatbin's cubins, each its architecture's.
        let fatbin = std::fs::read(crate::oracle::tools::repo_root().join("corpus/fatbin/atomics_global.fatbin")).unwrap();
        let archs: std::collections::BTreeSet<Arch> = words(Target::Cubin, c, &fatbin).iter().map(|g| g.arch).collect();
        assert_eq!(archs.into_iter().collect::<Vec<_>>(), [Arch(90), Arch(100), Arch(120)]);
    }

    #[test]
    fn target_names_parse_back() {
        for t in Target::ALL {
            assert_eq!(t.to_string().parse::<Target>(), Ok(t));
        }
        assert!("nope".parse::<Target>().unwrap_err().contains("roundtrip"));
    }
}
