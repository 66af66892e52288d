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
    pub fn zero(n: usize) -> Values {
        assert!(n <= MAX_FIELDS, "variants have at most {MAX_FIELDS} fields (checked by the page parser)");
        Values { len: n as u8, v: [0; MAX_FIELDS] }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[u64] {
        &self.v[..self.len as usize]
    }
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.v[..self.len as usize]
    }
    pub fn get(&self, i: usize) -> u64 {
        self.as_slice()[i]
    }
    pub fn set(&mut self, i: usize, x: u64) {
        self.as_mut_slice()[i] = x;
    }
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// A field's bits as contiguous runs: (first word bit, length, first value bit).
#[derive(Clone, Debug)]
struct Runs(Vec<(u8, u8, u8)>);

impl Runs {
    fn of(bits: &[u8]) -> Runs {
        let mut out: Vec<(u8, u8, u8)> = vec![];
        for (i, &b) in bits.iter().enumerate() {
            match out.last_mut() {
                Some((s, l, _)) if *s + *l == b => *l += 1,
                _ => out.push((b, 1, i as u8)),
            }
        }
        Runs(out)
    }
    #[inline]
    fn extract(&self, w: u128) -> u64 {
        let mut v = 0u64;
        for &(s, l, at) in &self.0 {
            let m = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
            v |= (((w >> s) as u64) & m) << at;
        }
        v
    }
    #[inline]
    fn insert(&self, x: u64) -> u128 {
        let mut w = 0u128;
        for &(s, l, at) in &self.0 {
            let m = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
            w |= (((x >> at) & m) as u128) << s;
        }
        w
    }
}

struct Compiled {
    arch: Arch,
    mask: u128,
    value: u128,
    fields: Vec<Runs>,
    maxes: Vec<u64>,
}

/// The codec for a whole spec: precomputed bit runs per field, and the variant table
/// decode matches against.
pub struct Codec<'s> {
    pub spec: &'s Spec,
    variants: Vec<&'s Variant>,
    compiled: Vec<Compiled>,
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
            .map(|v| Compiled {
                arch: v.arch,
                mask: v.fixed_mask.0,
                value: v.fixed_value.0,
                fields: v.fields.iter().map(|f| Runs::of(&f.bits)).collect(),
                maxes: v.fields.iter().map(|f| f.max()).collect(),
            })
            .collect();
        Codec { spec, variants, compiled }
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
        let mut w = c.value;
        for (r, &x) in c.fields.iter().zip(values.as_slice()) {
            w |= r.insert(x);
        }
        Word(w)
    }

    /// Field values of `word` read as variant `vi` (no fixed-bit check).
    #[inline]
    pub fn extract(&self, vi: usize, word: Word) -> Values {
        let c = &self.compiled[vi];
        let mut v = Values::zero(c.fields.len());
        for (i, r) in c.fields.iter().enumerate() {
            v.v[i] = r.extract(word.0);
        }
        v
    }

    /// The variant whose fixed bits all match `word`.
    #[inline]
    pub fn find(&self, arch: Arch, word: Word) -> Result<usize, DecodeError> {
        let mut found = None;
        for (i, c) in self.compiled.iter().enumerate() {
            if c.arch == arch && word.0 & c.mask == c.value {
                if found.is_some() {
                    return Err(self.ambiguous(arch, word));
                }
                found = Some(i);
            }
        }
        found.ok_or_else(|| self.no_match(arch, word))
    }

    pub fn decode(&self, arch: Arch, word: Word) -> Result<(usize, Values), DecodeError> {
        let vi = self.find(arch, word)?;
        Ok((vi, self.extract(vi, word)))
    }

    #[cold]
    fn ambiguous(&self, arch: Arch, word: Word) -> DecodeError {
        let keys = self
            .compiled
            .iter()
            .enumerate()
            .filter(|(_, c)| c.arch == arch && word.0 & c.mask == c.value)
            .map(|(i, _)| self.variants[i].key.clone())
            .collect();
        DecodeError::Ambiguous { word, keys }
    }

    #[cold]
    fn no_match(&self, arch: Arch, word: Word) -> DecodeError {
        let best = self
            .compiled
            .iter()
            .enumerate()
            .filter(|(_, c)| c.arch == arch)
            .min_by_key(|(_, c)| ((word.0 & c.mask) ^ c.value).count_ones());
        match best {
            None => DecodeError::NoArch { arch },
            Some((i, c)) => DecodeError::NoMatch {
                arch,
                word,
                nearest: self.variants[i].key.clone(),
                differ: BitSet((word.0 & c.mask) ^ c.value),
            },
        }
    }
}
