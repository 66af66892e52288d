//! The 128-bit instruction word and bit sets over it.

use std::fmt;

/// One 128-bit SASS instruction word (Volta and later), bit 0 = least significant bit
/// of the first little-endian byte.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Word(pub u128);

impl Word {
    /// Every bit clear.
    pub const ZERO: Word = Word(0);

    /// The word as 16 bytes in memory (a cubin's text section, nvdisasm's input), least
    /// significant first.
    pub fn from_le_bytes(b: [u8; 16]) -> Word {
        Word(u128::from_le_bytes(b))
    }
    /// The 16 bytes in memory order, least significant first.
    pub fn to_le_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }
    /// Bit `i` (0–127).
    pub fn bit(self, i: u8) -> bool {
        (self.0 >> i) & 1 == 1
    }
    /// The word with bit `i` set to `v`.
    pub fn with_bit(self, i: u8, v: bool) -> Word {
        if v {
            Word(self.0 | (1u128 << i))
        } else {
            Word(self.0 & !(1u128 << i))
        }
    }
    /// The word with bit `i` inverted.
    pub fn flip(self, i: u8) -> Word {
        Word(self.0 ^ (1u128 << i))
    }
    /// 32 hex digits, bit 127 first: the form findings use.
    pub fn hex(self) -> String {
        format!("{:032x}", self.0)
    }
    /// Up to 32 hex digits, bit 127 first (leading zeros optional, an optional `0x`);
    /// `None` for anything else.
    pub fn parse_hex(s: &str) -> Option<Word> {
        let s = s.trim().trim_start_matches("0x");
        if s.is_empty() || s.len() > 32 {
            return None;
        }
        u128::from_str_radix(s, 16).ok().map(Word)
    }
    /// Bits 0–63.
    pub fn low(self) -> u64 {
        self.0 as u64
    }
    /// Bits 64–127.
    pub fn high(self) -> u64 {
        (self.0 >> 64) as u64
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Word({})", self.hex())
    }
}
impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// A set of bit positions in a word.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct BitSet(pub u128);

impl BitSet {
    /// No bit.
    pub const EMPTY: BitSet = BitSet(0);
    /// All 128 bits.
    pub const ALL: BitSet = BitSet(u128::MAX);

    /// Bit `i` alone.
    pub fn single(i: u8) -> BitSet {
        BitSet(1u128 << i)
    }
    /// The bits listed.
    pub fn from_bits<I: IntoIterator<Item = u8>>(it: I) -> BitSet {
        BitSet(it.into_iter().fold(0u128, |a, b| a | (1u128 << b)))
    }
    /// Is bit `i` in the set?
    pub fn contains(self, i: u8) -> bool {
        (self.0 >> i) & 1 == 1
    }
    /// Adds bit `i`.
    pub fn insert(&mut self, i: u8) {
        self.0 |= 1u128 << i;
    }
    /// Bits in either set.
    pub fn union(self, o: BitSet) -> BitSet {
        BitSet(self.0 | o.0)
    }
    /// Bits in this set and not in `o`.
    pub fn minus(self, o: BitSet) -> BitSet {
        BitSet(self.0 & !o.0)
    }
    /// Bits in both sets.
    pub fn intersect(self, o: BitSet) -> BitSet {
        BitSet(self.0 & o.0)
    }
    /// [`BitSet::is_empty`] by reference (for serde's `skip_serializing_if`).
    pub fn is_empty_ref(&self) -> bool {
        self.is_empty()
    }
    /// No bit at all?
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// How many bits.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    /// The bits in increasing order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0u8..128).filter(move |&i| self.contains(i))
    }
}

impl fmt::Debug for BitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", format_ranges(&self.iter().collect::<Vec<_>>()))
    }
}

/// `[3, 4, 5, 9]` → `"3..5,9"` (inclusive ranges, in the given order).
pub fn format_ranges(bits: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < bits.len() {
        let mut j = i;
        while j + 1 < bits.len() && bits[j + 1] == bits[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j == i {
            out.push_str(&bits[i].to_string());
        } else {
            out.push_str(&format!("{}..{}", bits[i], bits[j]));
        }
        i = j + 1;
    }
    out
}

/// Words serialize as their 32-digit hex form (bit 127 first).
impl serde::Serialize for Word {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

/// Bit sets serialize as inclusive ranges (`"12..15,72"`): readable in snapshots.
impl serde::Serialize for BitSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_ranges(&self.iter().collect::<Vec<_>>()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hex_is_bit127_first() {
        let w = Word(1u128 << 127 | 0x22b);
        assert_eq!(w.hex(), "8000000000000000000000000000022b");
        assert_eq!(Word::parse_hex(&w.hex()), Some(w));
        assert_eq!(Word::from_le_bytes(w.to_le_bytes()), w);
    }
    #[test]
    fn ranges() {
        assert_eq!(format_ranges(&[3, 4, 5, 9, 11, 12]), "3..5,9,11..12");
        assert_eq!(format!("{:?}", BitSet::from_bits([0, 1, 127])), "0..1,127");
    }
}
