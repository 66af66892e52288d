//! Instruction generators: seeded random field values, table rows, bit walks.

use crate::codec::Values;
use crate::spec::Variant;

/// SplitMix64: small, fast, and reproducible from a seed on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Any value of every field (listed or not): what the codec must carry bit-exactly.
pub fn random_values(v: &Variant, rng: &mut Rng) -> Values {
    let mut vals = Values::zero(v.fields.len());
    for (i, f) in v.fields.iter().enumerate() {
        vals.set(i, rng.next_u64() & f.max());
    }
    vals
}

/// Bits 110–115: the two scoreboard barrier fields, whatever a page calls them.
const BARRIER_BITS: std::ops::Range<u8> = 110..116;

/// The harness's base values: every field zero except the control fields in bits 110–115
/// (the scoreboard barriers), which are all ones, "no barrier". nvdisasm rejects branches,
/// EXIT, BAR and the like with barrier 0, and accepts every other form both ways (the
/// discovery census, `discover::NEUTRAL_CONTROL`, uses the same bits). A table field
/// starts at its base row (see [`distilled_values`]).
pub fn base_values(v: &Variant) -> Values {
    let mut vals = distilled_values(v);
    for (i, f) in v.fields.iter().enumerate() {
        if f.is_control() && f.bits.iter().all(|b| BARRIER_BITS.contains(b)) {
            vals.set(i, f.max());
        }
    }
    vals
}

/// The values the distilled line is the text of: every field's bits zero (an inverted
/// field's value is then all ones, [`crate::spec::Inverted`]), except a table field whose
/// table leaves 0 out (nvdisasm rejects it, or it is another form), which takes its lowest
/// listed row ([`crate::spec::Table::base_row`]).
pub fn distilled_values(v: &Variant) -> Values {
    let mut vals = Values::zero(v.fields.len());
    for (i, f) in v.fields.iter().enumerate() {
        if let Some(r) = v.field_table(i).filter(|t| t.row(0).is_none()).and_then(|t| t.base_row()) {
            vals.set(i, r.value);
        } else if f.inverted {
            vals.set(i, f.max());
        }
    }
    vals
}

/// Values the page calls legal: table fields take a listed, non-placeholder row when one
/// exists; control fields keep their [`base_values`] (nvdisasm rejects most control-bit
/// combinations: see [`crate::codec::conventions`]).
pub fn random_listed_values(v: &Variant, rng: &mut Rng) -> Values {
    ListedValues::new(v).draw(v, rng)
}

/// [`random_listed_values`] for many words of one variant: the base values and each
/// table's listed rows worked out once (not once a word). Draws the same values from the
/// same stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedValues {
    base: Values,
    /// Per field.
    picks: Vec<Pick>,
}

#[derive(Clone, Debug, PartialEq)]
enum Pick {
    /// Any value of the field's width.
    Any,
    /// The base value (a control field).
    Base,
    /// One of these rows (a table's rows but `INVALID` ones).
    Rows(Vec<u64>),
}

impl ListedValues {
    pub fn new(v: &Variant) -> ListedValues {
        let picks = v
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| match v.field_table(i) {
                _ if f.is_control() => Pick::Base,
                Some(t) => {
                    let rows: Vec<u64> = t.rows.iter().filter(|r| !matches!(r.kind, crate::spec::RowKind::Invalid)).map(|r| r.value).collect();
                    if rows.is_empty() {
                        Pick::Any
                    } else {
                        Pick::Rows(rows)
                    }
                }
                None => Pick::Any,
            })
            .collect();
        ListedValues { base: base_values(v), picks }
    }

    /// One draw for `v` (the variant it was made for).
    pub fn draw(&self, v: &Variant, rng: &mut Rng) -> Values {
        // Every field draws first (as `random_values`), then each table field its row.
        let mut vals = random_values(v, rng);
        for (i, pick) in self.picks.iter().enumerate() {
            match pick {
                Pick::Any => {}
                Pick::Base => vals.set(i, self.base.get(i)),
                Pick::Rows(rows) => vals.set(i, rows[rng.below(rows.len() as u64) as usize]),
            }
        }
        vals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rng_is_reproducible_and_spread() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut r = Rng::new(1);
        let mut seen = [0u32; 4];
        for _ in 0..4000 {
            seen[r.below(4) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }
}
