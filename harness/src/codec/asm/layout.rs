//! A form's encoding kept with the form: the bit runs of its fields, small and inline, so
//! that encoding a filled form does not read the codec's tables for the variant (mostly
//! not in cache: most texts meet variants not read lately).

use crate::codec::bits::Values;
use crate::spec::Variant;
use crate::word::Word;
use smallvec::SmallVec;

/// Bits `at..at + len` of a field's value, at word bits `shift..shift + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BitRun {
    field: u8,
    at: u8,
    shift: u8,
    /// The run's length (1..=64), and [`INVERTED`] for a field the word holds complemented.
    len: u8,
}

/// Set in [`BitRun::len`] for an inverted field ([`crate::spec::Field::inverted`]).
const INVERTED: u8 = 0x80;

/// A variant's word as the assembler builds it: the fixed bits, then each field's runs; the
/// control fields are left out (a text does not say them: they come from another word).
pub(super) struct Layout {
    fixed: u128,
    /// The control fields' bits.
    pub(super) control_bits: u128,
    /// Inline for most variants (a dozen fields outside the controls).
    runs: SmallVec<[BitRun; 12]>,
}

impl Layout {
    pub(super) fn new(v: &Variant) -> Layout {
        let control_bits = v.fields.iter().filter(|f| f.is_control()).flat_map(|f| &f.bits).fold(0, |m, &b| m | 1u128 << b);
        let mut runs = SmallVec::new();
        for (fi, f) in v.fields.iter().enumerate().filter(|(_, f)| !f.is_control()) {
            // Contiguous increasing stretches of word bits; a value has 64 bits at most.
            let mut i = 0;
            while i < f.bits.len().min(64) {
                let mut n = 1;
                while i + n < f.bits.len().min(64) && f.bits[i + n] as usize == f.bits[i] as usize + n {
                    n += 1;
                }
                let flag = if f.inverted { INVERTED } else { 0 };
                runs.push(BitRun { field: fi as u8, at: i as u8, shift: f.bits[i], len: n as u8 | flag });
                i += n;
            }
        }
        Layout { fixed: v.fixed_value.0 & !control_bits, control_bits, runs }
    }

    /// The word of `values` (the fields' printed values), with the control fields of
    /// `controls_from`.
    #[inline]
    pub(super) fn encode(&self, values: &Values, controls_from: Word) -> Word {
        let mut w = self.fixed;
        for r in &self.runs {
            let len = u32::from(r.len & !INVERTED);
            let mask = u64::MAX >> (64 - len);
            let mut x = values.get(usize::from(r.field)) >> r.at & mask;
            if r.len & INVERTED != 0 {
                x ^= mask;
            }
            w |= u128::from(x) << r.shift;
        }
        Word(w & !self.control_bits | controls_from.0 & self.control_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Codec;
    use crate::gen::{random_values, Rng};

    /// Every variant of the seed and discovered pages encodes as the codec does, for
    /// random values and control words; every other variant with a field made inverted
    /// (the pages have few).
    #[test]
    fn layout_encodes_as_the_codec() {
        let root = crate::oracle::tools::repo_root();
        let mut n = 0;
        for pages in ["corpus/isa", "corpus/isa-discovered"] {
            let mut s = crate::spec::load(&[root.join(pages)]).unwrap();
            for v in s.pages.iter_mut().flat_map(|p| p.variants.iter_mut()).step_by(2) {
                if let Some(f) = v.fields.iter_mut().find(|f| !f.is_control()) {
                    f.inverted = true;
                }
            }
            n += encodes_as_the_codec(&Codec::new(&s));
        }
        assert!(n > 3000, "{n} variants");
    }

    /// Checks each of `c`'s variants on random values; the number of variants.
    fn encodes_as_the_codec(c: &Codec) -> usize {
        let mut rng = Rng::new(7);
        for (vi, v) in c.variants().iter().enumerate() {
            let layout = Layout::new(v);
            for _ in 0..8 {
                let values = random_values(v, &mut rng);
                let controls = Word(u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()));
                let want = c.encode_unchecked(vi, &values).0 & !layout.control_bits | controls.0 & layout.control_bits;
                assert_eq!(layout.encode(&values, controls), Word(want), "{}", v.key);
            }
        }
        c.variants().len()
    }
}
