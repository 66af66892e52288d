//! Encoding and decoding field values to and from words.

use crate::spec::{Arch, Spec, Variant};
use crate::word::{BitSet, Word};

/// Field values of one variant, in `Variant::fields` order.
pub const MAX_FIELDS: usize = 40;

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Values {
    len: u8,
    v: [u64; MAX_FIELDS],
}

impl Values {
    #[inline]
    pub fn zero(n: usize) -> Values {
        assert!(n <= MAX_FIELDS, "variants have at most {MAX_FIELDS} fields (checked by the page parser)");
        Values { len: n as u8, v: [0; MAX_FIELDS] }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn as_slice(&self) -> &[u64] {
        &self.v[..self.len as usize]
    }
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.v[..self.len as usize]
    }
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.as_slice()[i]
    }
    #[inline]
    pub fn set(&mut self, i: usize, x: u64) {
        self.as_mut_slice()[i] = x;
    }
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// One contiguous run of a field's bits inside one 64-bit half of the word: value bits
/// `at..at+len` sit at bits `shift..shift+len` of that half (`mask` = `len` ones).
#[derive(Copy, Clone, Debug)]
struct Run {
    field: u8,
    shift: u8,
    at: u8,
    mask: u64,
}

/// A variant's fields as runs, those in the low half of the word first.
fn runs_of(fields: &[crate::spec::Field]) -> (Vec<Run>, usize) {
    let mut lo: Vec<Run> = vec![];
    let mut hi: Vec<Run> = vec![];
    for (fi, f) in fields.iter().enumerate() {
        // Contiguous increasing stretches: (first word bit, length, first value bit).
        let mut stretches: Vec<(u32, u32, u32)> = vec![];
        for (i, &b) in f.bits.iter().enumerate() {
            match stretches.last_mut() {
                Some((s, l, _)) if *s + *l == b as u32 => *l += 1,
                _ => stretches.push((b as u32, 1, i as u32)),
            }
        }
        for (s, l, at) in stretches {
            // Split a stretch that crosses bit 64 in two.
            let lo_len = if s < 64 { l.min(64 - s) } else { 0 };
            let push = |to: &mut Vec<Run>, shift: u32, len: u32, at: u32| {
                let mask = if len >= 64 { u64::MAX } else { (1u64 << len) - 1 };
                to.push(Run { field: fi as u8, shift: shift as u8, at: at as u8, mask });
            };
            if lo_len > 0 {
                push(&mut lo, s, lo_len, at);
            }
            if l > lo_len {
                push(&mut hi, (s + lo_len) - 64, l - lo_len, at + lo_len);
            }
        }
    }
    let n_lo = lo.len();
    lo.extend(hi);
    (lo, n_lo)
}

/// What `find` scans: kept apart from the runs so the scan touches little memory.
#[derive(Copy, Clone)]
struct Pattern {
    mask: u128,
    value: u128,
    arch: Arch,
}

struct Compiled {
    /// Fixed bits, low and high halves.
    value: [u64; 2],
    /// Runs of every field; `runs[..n_lo]` lie in the low half, the rest in the high half.
    runs: Vec<Run>,
    n_lo: usize,
    n_fields: usize,
    maxes: Vec<u64>,
    /// Inverted fields (see [`crate::spec::Inverted`]): (field, all ones). A value is the
    /// printed number; the word holds its complement.
    flips: Vec<(usize, u64)>,
}

/// The codec for a whole spec: precomputed bit runs per field, and the variant table
/// decode matches against.
pub struct Codec<'s> {
    pub spec: &'s Spec,
    variants: Vec<&'s Variant>,
    compiled: Vec<Compiled>,
    patterns: Vec<Pattern>,
    /// Each variant's whole fixed mask and value, the bits nvdisasm ignores included: of
    /// several matches, those that match these too come first (see `most_specific`).
    strict: Vec<(u128, u128)>,
    index: OpcodeIndex,
}

/// Candidate patterns by architecture and bits 0–11 (the opcode and form bits every
/// variant fixes), so finding a word's variant scans a handful of patterns, not the
/// whole architecture. A pattern that leaves some of those bits open is listed under
/// every value it matches; each list keeps pattern order.
#[derive(Debug, Default)]
struct OpcodeIndex {
    archs: Vec<(Arch, Vec<Vec<u32>>)>,
}

const INDEX_BITS: u32 = 12;

impl OpcodeIndex {
    fn new(patterns: &[Pattern]) -> OpcodeIndex {
        let low = (1u128 << INDEX_BITS) - 1;
        let mut idx = OpcodeIndex::default();
        for (i, p) in patterns.iter().enumerate() {
            let pos = match idx.archs.iter().position(|(a, _)| *a == p.arch) {
                Some(k) => k,
                None => {
                    idx.archs.push((p.arch, vec![vec![]; 1 << INDEX_BITS]));
                    idx.archs.len() - 1
                }
            };
            let (m, v) = (p.mask & low, p.value & low);
            for (op, list) in idx.archs[pos].1.iter_mut().enumerate() {
                if op as u128 & m == v {
                    list.push(i as u32);
                }
            }
        }
        idx
    }

    #[inline]
    fn candidates(&self, arch: Arch, word: Word) -> &[u32] {
        match self.archs.iter().find(|(a, _)| *a == arch) {
            Some((_, lists)) => &lists[(word.0 & ((1 << INDEX_BITS) - 1)) as usize],
            None => &[],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("no {arch} variant matches {word}; nearest is {nearest} (fixed bits {differ:?} differ)")]
    NoMatch { arch: Arch, word: Word, nearest: String, differ: BitSet },
    #[error("no variant for {arch} in the spec")]
    NoArch { arch: Arch },
    #[error("{word} matches several variants: {keys:?}")]
    Ambiguous { word: Word, keys: Vec<String> },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: field '{field}' value {value:#x} does not fit its {width} bits")]
pub struct EncodeError {
    pub key: String,
    pub field: String,
    pub value: u64,
    pub width: u32,
}

impl<'s> Codec<'s> {
    pub fn new(spec: &'s Spec) -> Codec<'s> {
        let variants: Vec<&Variant> = spec.variants().collect();
        let compiled = variants
            .iter()
            .map(|v| {
                let (runs, n_lo) = runs_of(&v.fields);
                Compiled {
                    value: [v.fixed_value.0 as u64, (v.fixed_value.0 >> 64) as u64],
                    runs,
                    n_lo,
                    n_fields: v.fields.len(),
                    maxes: v.fields.iter().map(|f| f.max()).collect(),
                    flips: v.fields.iter().enumerate().filter(|(_, f)| f.inverted).map(|(i, f)| (i, f.max())).collect(),
                }
            })
            .collect();
        let patterns: Vec<Pattern> =
            variants.iter().map(|v| Pattern { mask: v.fixed_mask.minus(v.ignored).0, value: v.fixed_value.0 & !v.ignored.0, arch: v.arch }).collect();
        let index = OpcodeIndex::new(&patterns);
        let strict = variants.iter().map(|v| (v.fixed_mask.0, v.fixed_value.0 & v.fixed_mask.0)).collect();
        Codec { spec, variants, compiled, patterns, strict, index }
    }

    pub fn variants(&self) -> &[&'s Variant] {
        &self.variants
    }

    pub fn index_of(&self, key: &str, arch: Option<Arch>) -> Option<usize> {
        self.variants.iter().position(|v| v.key == key && arch.map(|a| a == v.arch).unwrap_or(true))
    }

    pub fn variant(&self, i: usize) -> &'s Variant {
        self.variants[i]
    }

    /// Encodes; values wider than their field are an error.
    pub fn encode(&self, vi: usize, values: &Values) -> Result<Word, EncodeError> {
        let c = &self.compiled[vi];
        for (i, &x) in values.as_slice().iter().enumerate() {
            if x > c.maxes[i] {
                let f = &self.variants[vi].fields[i];
                return Err(EncodeError { key: self.variants[vi].key.clone(), field: f.name.clone(), value: x, width: f.width() });
            }
        }
        Ok(self.encode_unchecked(vi, values))
    }

    /// Encodes, masking each value to its field.
    #[inline]
    pub fn encode_unchecked(&self, vi: usize, values: &Values) -> Word {
        let c = &self.compiled[vi];
        if c.flips.is_empty() {
            return Self::pack(c, values);
        }
        let mut raw = *values;
        for &(f, max) in &c.flips {
            raw.v[f] = (raw.v[f] & max) ^ max;
        }
        Self::pack(c, &raw)
    }

    /// The word of `values` as the fields' bits hold them.
    #[inline]
    fn pack(c: &Compiled, values: &Values) -> Word {
        // Slots past `values.len()` are zero (no constructor writes them), so they add nothing.
        let x = &values.v;
        let (lo_runs, hi_runs) = c.runs.split_at(c.n_lo);
        let mut lo = c.value[0];
        for r in lo_runs {
            lo |= ((x[r.field as usize] >> r.at) & r.mask) << r.shift;
        }
        let mut hi = c.value[1];
        for r in hi_runs {
            hi |= ((x[r.field as usize] >> r.at) & r.mask) << r.shift;
        }
        Word(lo as u128 | (hi as u128) << 64)
    }

    /// Field values of `word` read as variant `vi` (no fixed-bit check).
    #[inline]
    pub fn extract(&self, vi: usize, word: Word) -> Values {
        let c = &self.compiled[vi];
        let mut v = Values::zero(c.n_fields);
        let (lo_runs, hi_runs) = c.runs.split_at(c.n_lo);
        let (lo, hi) = (word.0 as u64, (word.0 >> 64) as u64);
        for r in lo_runs {
            v.v[r.field as usize] |= ((lo >> r.shift) & r.mask) << r.at;
        }
        for r in hi_runs {
            v.v[r.field as usize] |= ((hi >> r.shift) & r.mask) << r.at;
        }
        for &(f, max) in &c.flips {
            v.v[f] ^= max;
        }
        v
    }

    /// The variant whose fixed bits all match `word`.
    #[inline]
    pub fn find(&self, arch: Arch, word: Word) -> Result<usize, DecodeError> {
        let mut found = None;
        for &i in self.index.candidates(arch, word) {
            let p = &self.patterns[i as usize];
            if word.0 & p.mask == p.value {
                if found.is_some() {
                    return self.most_specific(arch, word);
                }
                found = Some(i as usize);
            }
        }
        found.ok_or_else(|| self.no_match(arch, word))
    }

    /// Of several variants that match `word`, the one whose fixed bits include every other
    /// match's and more: a form with a register fixed to RZ (LDS `[uI]`, nvdisasm's own
    /// opclass) over the general one whose field allows RZ. Two matches neither of which
    /// is more specific are ambiguous.
    #[cold]
    fn most_specific(&self, arch: Arch, word: Word) -> Result<usize, DecodeError> {
        let all: Vec<usize> =
            self.index.candidates(arch, word).iter().map(|&i| i as usize).filter(|&i| word.0 & self.patterns[i].mask == self.patterns[i].value).collect();
        // Matches whose ignored bits hold their page's values too come first: a word another
        // form owns is not read as a form that merely ignores where they differ (CCTL's
        // operand-less form ignores bits where CCTL [R+I] has its register).
        let strict: Vec<usize> = all.iter().copied().filter(|&i| word.0 & self.strict[i].0 == self.strict[i].1).collect();
        let (all, mask): (Vec<usize>, &dyn Fn(usize) -> u128) =
            if strict.is_empty() { (all, &|i| self.patterns[i].mask) } else { (strict, &|i| self.strict[i].0) };
        // Then those whose tables list every value the word holds: a table leaves out the
        // values nvdisasm reads as another form (CCTL.IVALL's group `001` is the
        // `CCTL.U.WB [RZ]` form's word).
        let listed: Vec<usize> = all.iter().copied().filter(|&i| self.lists(i, &self.extract(i, word))).collect();
        let all = if listed.is_empty() { all } else { listed };
        if let [one] = all[..] {
            return Ok(one);
        }
        let covers = |a: usize, b: usize| mask(a) & mask(b) == mask(b) && mask(a) != mask(b);
        if let Some(a) = all.iter().copied().find(|&a| all.iter().all(|&b| a == b || covers(a, b))) {
            return Ok(a);
        }
        Err(self.ambiguous(arch, word))
    }

    /// Whether every table field of variant `vi` holds a value its table lists.
    pub fn lists(&self, vi: usize, vals: &Values) -> bool {
        let v = self.variant(vi);
        (0..v.fields.len()).all(|f| v.field_table(f).is_none_or(|t| t.row(vals.get(f)).is_some()))
    }

    #[inline]
    pub fn decode(&self, arch: Arch, word: Word) -> Result<(usize, Values), DecodeError> {
        let vi = self.find(arch, word)?;
        Ok((vi, self.extract(vi, word)))
    }

    #[cold]
    fn ambiguous(&self, arch: Arch, word: Word) -> DecodeError {
        let keys =
            self.patterns.iter().enumerate().filter(|(_, c)| c.arch == arch && word.0 & c.mask == c.value).map(|(i, _)| self.variants[i].key.clone()).collect();
        DecodeError::Ambiguous { word, keys }
    }

    #[cold]
    fn no_match(&self, arch: Arch, word: Word) -> DecodeError {
        let best = self.patterns.iter().enumerate().filter(|(_, c)| c.arch == arch).min_by_key(|(_, c)| ((word.0 & c.mask) ^ c.value).count_ones());
        match best {
            None => DecodeError::NoArch { arch },
            Some((i, c)) => DecodeError::NoMatch { arch, word, nearest: self.variants[i].key.clone(), differ: BitSet((word.0 & c.mask) ^ c.value) },
        }
    }
}
