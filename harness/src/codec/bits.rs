//! Encoding and decoding field values to and from words.

use crate::spec::{Arch, Spec, Variant};
use crate::word::{BitSet, Word};
use std::collections::HashMap;

/// The most fields a variant may have (the page parser refuses more), so that [`Values`]
/// lives inline, with no allocation per decoded word.
pub const MAX_FIELDS: usize = 40;

/// Field values of one variant, in `Variant::fields` order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Values {
    len: u8,
    v: [u64; MAX_FIELDS],
}

impl Values {
    /// `n` fields, each 0. Panics past [`MAX_FIELDS`].
    #[inline]
    pub fn zero(n: usize) -> Values {
        assert!(n <= MAX_FIELDS, "variants have at most {MAX_FIELDS} fields (checked by the page parser)");
        Values { len: n as u8, v: [0; MAX_FIELDS] }
    }
    /// How many fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there are no fields.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The values, field by field.
    #[inline]
    pub fn as_slice(&self) -> &[u64] {
        &self.v[..self.len as usize]
    }
    /// The values, field by field, to change.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.v[..self.len as usize]
    }
    /// Field `i`'s value. Panics past [`Values::len`].
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.as_slice()[i]
    }
    /// Sets field `i` to `x` (not checked against the field's width: [`Codec::encode`] does).
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
/// `at..at+len` sit at bits `shift..shift+len` of that half (`mask` = `len` ones). `flip`:
/// all ones for an inverted field's run (the word holds the complement of its bits), else
/// 0; the runs partition the field, so flipping each run flips the field. 16 bytes.
#[derive(Copy, Clone, Debug)]
struct Run {
    mask: u64,
    field: u8,
    shift: u8,
    at: u8,
    flip: u8,
}

impl Run {
    /// The run's bits of `x`, flipped if inverted.
    #[inline]
    fn bits(&self, x: u64) -> u64 {
        (x & self.mask) ^ (self.mask & u64::from(self.flip).wrapping_neg())
    }
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
                let flip = u8::from(f.inverted);
                to.push(Run { mask, field: fi as u8, shift: shift as u8, at: at as u8, flip });
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

/// [`Compiled::listed`] of `v`.
fn listed_values(v: &Variant) -> Box<[(usize, Box<[u64]>)]> {
    (0..v.fields.len())
        .filter_map(|f| {
            let mut values: Vec<u64> = v.field_table(f)?.rows.iter().map(|r| r.value).collect();
            values.sort_unstable();
            values.dedup();
            Some((f, values.into_boxed_slice()))
        })
        .collect()
}

/// What `find` scans: kept apart from the runs so the scan touches little memory.
#[derive(Copy, Clone)]
struct Pattern {
    mask: u128,
    value: u128,
    arch: Arch,
}

/// Where a variant's runs are in [`Codec::runs`]: `start..start + n_lo` in the low half of
/// the word, then `n_hi` in the high half. Small and `Copy`, so the decode index carries
/// a copy beside each pattern and decoding reads no per-variant record of its own.
#[derive(Copy, Clone, Debug)]
struct Shape {
    start: u32,
    n_lo: u8,
    n_hi: u8,
    n_fields: u8,
}

impl Shape {
    fn lo(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + usize::from(self.n_lo)
    }
    fn hi(self) -> std::ops::Range<usize> {
        let lo_end = self.start as usize + usize::from(self.n_lo);
        lo_end..lo_end + usize::from(self.n_hi)
    }
}

struct Compiled {
    /// Fixed bits, low and high halves.
    value: [u64; 2],
    shape: Shape,
    maxes: Vec<u64>,
    /// Each table field with the values its rows list, sorted: what [`Codec::lists`] asks
    /// (scanning the page's rows took a seventh of the decode bench).
    listed: Box<[(usize, Box<[u64]>)]>,
}

/// The codec for a whole spec: precomputed bit runs per field, and the variant table
/// decode matches against.
pub struct Codec<'s> {
    /// The spec the codec was built from.
    pub spec: &'s Spec,
    variants: Vec<&'s Variant>,
    compiled: Vec<Compiled>,
    /// Every variant's runs, one after the other ([`Shape`]).
    runs: Vec<Run>,
    patterns: Vec<Pattern>,
    /// Each variant's whole fixed mask and value, the bits nvdisasm ignores included: of
    /// several matches, those that match these too come first (see `most_specific`).
    strict: Vec<(u128, u128)>,
    index: OpcodeIndex,
    /// Variant indices by mnemonic, then architecture, ascending ([`Codec::named`]).
    named: HashMap<&'s str, Vec<(Arch, Vec<usize>)>>,
    /// Variant indices by [`stable_id`], built when first asked ([`Codec::by_stable_id`]).
    stable_ids: std::sync::OnceLock<HashMap<u32, usize>>,
}

/// A variant's id that stays the same when pages gain or lose other variants (its index
/// does not): a hash of its architecture and key, with bit 31 set, so that no id is an
/// index below 2^31. Distinct variants may share one (a spec of 3 000 variants has such
/// a pair about once in 500: 3 000² / 2 pairs over 2^31 ids); [`Codec::by_stable_id`]
/// then gives the first.
pub fn stable_id(v: &Variant) -> u32 {
    // FNV-1a: stable across builds and platforms, as std's hashers are not promised to be.
    let bytes = v.arch.0.to_le_bytes().into_iter().chain(v.key.bytes());
    bytes.fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193)) | 1 << 31
}

/// One candidate of an [`OpcodeIndex`] list: the pattern, its variant and the variant's
/// [`Shape`], side by side, so that finding and extracting a word reads one list entry
/// and the runs (each a cache miss on a spec of 3 000 variants).
#[derive(Copy, Clone)]
struct Entry {
    mask: u128,
    value: u128,
    vi: u32,
    shape: Shape,
}

/// Candidate patterns by architecture and bits 0–11 (the opcode and form bits every
/// variant fixes), so finding a word's variant scans a handful of patterns, not the
/// whole architecture. A pattern that leaves some of those bits open is listed under
/// every value it matches; each list keeps pattern order. The lists lie in one array
/// (`starts[a << 12 | bits]..starts[(a << 12 | bits) + 1]` for the `a`th architecture).
#[derive(Default)]
struct OpcodeIndex {
    archs: Vec<Arch>,
    starts: Vec<u32>,
    entries: Vec<Entry>,
}

const INDEX_BITS: u32 = 12;

impl OpcodeIndex {
    fn new(patterns: &[Pattern], compiled: &[Compiled]) -> OpcodeIndex {
        let low = (1u128 << INDEX_BITS) - 1;
        let mut archs: Vec<Arch> = vec![];
        for p in patterns {
            if !archs.contains(&p.arch) {
                archs.push(p.arch);
            }
        }
        let mut lists: Vec<Vec<Entry>> = vec![vec![]; archs.len() << INDEX_BITS];
        for (i, (p, c)) in patterns.iter().zip(compiled).enumerate() {
            let a = archs.iter().position(|&a| a == p.arch).unwrap_or(0);
            let (m, v) = (p.mask & low, p.value & low);
            for op in (0..1u128 << INDEX_BITS).filter(|op| op & m == v) {
                lists[a << INDEX_BITS | op as usize].push(Entry { mask: p.mask, value: p.value, vi: i as u32, shape: c.shape });
            }
        }
        let mut idx = OpcodeIndex { archs, starts: Vec::with_capacity(lists.len() + 1), entries: vec![] };
        idx.starts.push(0);
        for l in lists {
            idx.entries.extend(l);
            idx.starts.push(idx.entries.len() as u32);
        }
        idx
    }

    #[inline]
    fn candidates(&self, arch: Arch, word: Word) -> &[Entry] {
        match self.archs.iter().position(|&a| a == arch) {
            Some(a) => {
                let k = a << INDEX_BITS | (word.0 & ((1 << INDEX_BITS) - 1)) as usize;
                &self.entries[self.starts[k] as usize..self.starts[k + 1] as usize]
            }
            None => &[],
        }
    }
}

/// Why a word does not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No variant's fixed bits match the word.
    #[error("no {arch} variant matches {word}; nearest is {nearest} (fixed bits {differ:?} differ)")]
    NoMatch {
        /// The architecture asked for.
        arch: Arch,
        /// The word.
        word: Word,
        /// The key of the variant whose fixed bits differ in the fewest places.
        nearest: String,
        /// Those bits.
        differ: BitSet,
    },
    /// The spec has no variant of that architecture.
    #[error("no variant for {arch} in the spec")]
    NoArch {
        /// The architecture asked for.
        arch: Arch,
    },
    /// Several variants match, none more specific than the others (a page mistake).
    #[error("{word} matches several variants: {keys:?}")]
    Ambiguous {
        /// The word.
        word: Word,
        /// The keys of the variants that match.
        keys: Vec<String>,
    },
}

/// A field value wider than the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: field '{field}' value {value:#x} does not fit its {width} bits")]
pub struct EncodeError {
    /// The variant's key.
    pub key: String,
    /// The field's name.
    pub field: String,
    /// The value given.
    pub value: u64,
    /// The field's width in bits.
    pub width: u32,
}

impl<'s> Codec<'s> {
    /// Builds the codec for every variant of `spec` (all architectures): each field's bit
    /// runs and the opcode index decode looks words up in.
    pub fn new(spec: &'s Spec) -> Codec<'s> {
        let variants: Vec<&Variant> = spec.variants().collect();
        let mut runs = vec![];
        let compiled: Vec<Compiled> = variants
            .iter()
            .map(|v| {
                let (own, n_lo) = runs_of(&v.fields);
                // At most 40 fields (`MAX_FIELDS`) of at most 128 bits: under 256 runs per half.
                let shape = Shape { start: runs.len() as u32, n_lo: n_lo as u8, n_hi: (own.len() - n_lo) as u8, n_fields: v.fields.len() as u8 };
                runs.extend(own);
                Compiled {
                    value: [v.fixed_value.0 as u64, (v.fixed_value.0 >> 64) as u64],
                    shape,
                    maxes: v.fields.iter().map(|f| f.max()).collect(),
                    listed: listed_values(v),
                }
            })
            .collect();
        let patterns: Vec<Pattern> =
            variants.iter().map(|v| Pattern { mask: v.fixed_mask.minus(v.ignored).0, value: v.fixed_value.0 & !v.ignored.0, arch: v.arch }).collect();
        let index = OpcodeIndex::new(&patterns, &compiled);
        let strict = variants.iter().map(|v| (v.fixed_mask.0, v.fixed_value.0 & v.fixed_mask.0)).collect();
        let mut named: HashMap<&str, Vec<(Arch, Vec<usize>)>> = HashMap::new();
        for (vi, v) in variants.iter().enumerate() {
            let arches = named.entry(v.mnemonic.as_str()).or_default();
            match arches.iter_mut().find(|(a, _)| *a == v.arch) {
                Some((_, vis)) => vis.push(vi),
                None => arches.push((v.arch, vec![vi])),
            }
        }
        Codec { spec, variants, compiled, runs, patterns, strict, index, named, stable_ids: std::sync::OnceLock::new() }
    }

    /// The variant whose [`stable_id`] is `id` (of several, the first), if any.
    pub fn by_stable_id(&self, id: u32) -> Option<usize> {
        let ids = self.stable_ids.get_or_init(|| {
            let mut ids = HashMap::with_capacity(self.variants.len());
            for (vi, v) in self.variants.iter().enumerate() {
                ids.entry(stable_id(v)).or_insert(vi);
            }
            ids
        });
        ids.get(&id).copied()
    }

    /// Every variant, in the order variant indices (`vi`) count.
    pub fn variants(&self) -> &[&'s Variant] {
        &self.variants
    }

    /// The index of the variant with this key (of this architecture, when given; else the
    /// first architecture that has it).
    pub fn index_of(&self, key: &str, arch: Option<Arch>) -> Option<usize> {
        self.variants.iter().position(|v| v.key == key && arch.map(|a| a == v.arch).unwrap_or(true))
    }

    /// The indices of `arch`'s variants named `mnemonic`, ascending (none: empty).
    pub fn named(&self, arch: Arch, mnemonic: &str) -> &[usize] {
        let arches = self.named.get(mnemonic).map_or(&[][..], Vec::as_slice);
        arches.iter().find(|(a, _)| *a == arch).map_or(&[], |(_, vis)| vis.as_slice())
    }

    /// Variant `i` ([`Codec::variants`] order).
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
        // Slots past `values.len()` are zero (no constructor writes them), so they add nothing.
        let x = &values.v;
        let pack = |mut half: u64, runs: &[Run]| {
            for r in runs {
                half |= r.bits(x[usize::from(r.field)] >> r.at) << r.shift;
            }
            half
        };
        let lo = pack(c.value[0], &self.runs[c.shape.lo()]);
        let hi = pack(c.value[1], &self.runs[c.shape.hi()]);
        Word(lo as u128 | (hi as u128) << 64)
    }

    /// Field values of `word` read as variant `vi` (no fixed-bit check).
    #[inline]
    pub fn extract(&self, vi: usize, word: Word) -> Values {
        self.extract_shaped(self.compiled[vi].shape, word)
    }

    #[inline]
    fn extract_shaped(&self, shape: Shape, word: Word) -> Values {
        let mut v = Values::zero(usize::from(shape.n_fields));
        let (lo, hi) = (word.0 as u64, (word.0 >> 64) as u64);
        for r in &self.runs[shape.lo()] {
            v.v[usize::from(r.field)] |= r.bits(lo >> r.shift) << r.at;
        }
        for r in &self.runs[shape.hi()] {
            v.v[usize::from(r.field)] |= r.bits(hi >> r.shift) << r.at;
        }
        v
    }

    /// The variant whose fixed bits all match `word`.
    #[inline]
    pub fn find(&self, arch: Arch, word: Word) -> Result<usize, DecodeError> {
        self.find_entry(arch, word).map(|(vi, _)| vi)
    }

    /// [`Codec::find`] with the variant's [`Shape`].
    #[inline]
    fn find_entry(&self, arch: Arch, word: Word) -> Result<(usize, Shape), DecodeError> {
        let mut found: Option<&Entry> = None;
        for e in self.index.candidates(arch, word) {
            if word.0 & e.mask == e.value {
                if found.is_some() {
                    return self.most_specific(arch, word).map(|vi| (vi, self.compiled[vi].shape));
                }
                found = Some(e);
            }
        }
        found.map(|e| (e.vi as usize, e.shape)).ok_or_else(|| self.no_match(arch, word))
    }

    /// Of several variants that match `word`, the one whose fixed bits include every other
    /// match's and more: a form with a register fixed to RZ (LDS `[uI]`, nvdisasm's own
    /// opclass) over the general one whose field allows RZ. Two matches neither of which
    /// is more specific are ambiguous.
    #[cold]
    fn most_specific(&self, arch: Arch, word: Word) -> Result<usize, DecodeError> {
        let all: Vec<usize> = self.index.candidates(arch, word).iter().filter(|e| word.0 & e.mask == e.value).map(|e| e.vi as usize).collect();
        // Matches whose ignored bits hold their page's values too come first: a word another
        // form owns is not read as a form that merely ignores where they differ (CCTL's
        // operand-less form ignores bits where CCTL [R+I] has its register).
        let strict: Vec<usize> = all.iter().copied().filter(|&i| word.0 & self.strict[i].0 == self.strict[i].1).collect();
        // One strict match is the answer whatever the steps below find: `lists` alone costs
        // more than the rest of a decode.
        if let [one] = strict[..] {
            return Ok(one);
        }
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
        self.compiled[vi].listed.iter().all(|(f, values)| values.binary_search(&vals.get(*f)).is_ok())
    }

    /// The variant of `arch` whose fixed bits `word` matches (the most specific one, where
    /// several do), with its field values.
    #[inline]
    pub fn decode(&self, arch: Arch, word: Word) -> Result<(usize, Values), DecodeError> {
        let (vi, shape) = self.find_entry(arch, word)?;
        Ok((vi, self.extract_shaped(shape, word)))
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
