//! Modifier fields of two bits whose single flips are illegal or another form, but whose
//! joint flip prints other modifiers: one-hot fields, where the flip moves the set bit
//! (`MUFU.EX2.F16` → `.BF16`, bits 72–73 `01` → `10`; `BSSY.RECONVERGENT` → `.RELIABLE`;
//! `F2F.F32.F64` → `.F16.F64`), and fields whose only other legal value sets both bits
//! (SM100 `F2FP.F16.F32.PACK_AB` → `.RZ`, bits 79–80 `00` → `11`). Single flips reach
//! neither, so without the pair the bits look fixed. One-hot fields of three bits are two
//! pairs sharing a bit (`I2F.S64` bits 75–77: `.F16`, the fp32 default, `.BF16`), and a bit
//! whose flip alone is another form may pair with a modifier bit (`F2I.F64` bits 72, 75,
//! 76: `101` is the s32 default, `111` the 64-bit form `.S64`, `011` `.S16`): the layout
//! joins pairs that share a bit into one unit. So may a bit whose flip alone is illegal and
//! a modifier bit, of any seed values: SM90 CCTL's table reads bits 87–90, and bit 90 only
//! ever shows with 87 or 88 set (`.PML2`, `.DML2`). A pair that widens a field may join two
//! fields into one group whose rows nvdisasm prints apart: the solver then keeps the pairs
//! without it (`layout::rows_print_whole`).

use super::probe::{Effect, Fixed, Seed};
use super::{census, DiscoverError, Oracle};
use crate::oracle::nvdisasm::Outcome;
use crate::word::Word;

/// The farthest apart two bits of one such field are tried (the fields seen are adjacent).
const SPAN: u8 = 3;

/// Opcode bits (0–11) are left out: a swap there is another instruction, and trying them
/// would double the probe words of every form.
const FIRST: u8 = 12;

/// A pair found: the indices of its two bits in the effects, and their joint flip's effect.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub bits: (usize, usize),
    pub effect: Effect,
    /// The two bits differ in the seed (`01` ↔ `10`), rather than both flip the same way.
    pub one_hot: bool,
    /// Shares a bit with a pair found before, or pairs a modifier bit: the solver tries the
    /// pairs without these too, so that a field they widen wrongly costs nothing.
    pub joined: bool,
}

/// A bit whose flip alone is illegal or another form.
fn fixed(e: &Effect) -> bool {
    matches!(e, Effect::Fixed(Fixed::Illegal | Fixed::Other))
}

/// Pairs of fixed bits worth a joint flip: both flips illegal or another form, at most
/// [`SPAN`] apart; the one-hot pairs (one bit set in the seed, the other clear) first, so
/// that a bit both kinds could claim goes to its one-hot pair as before the others were tried.
/// Last, a modifier bit paired with a bit whose flip is another form (one-hot pairs only) or
/// illegal (any pair: SM90 CCTL's `.PML2` sets bit 90 beside the `PF2` bit 87, and bit 90
/// alone is illegal), unless that bit neighbours an operand's value bits (a register at RZ
/// may be another form: it is the operand's bit, not a modifier's).
fn candidates(seed: Word, effects: &[(u8, Effect)]) -> Vec<(usize, usize)> {
    let value = |k: usize| effects.get(k).is_some_and(|(_, e)| matches!(e, Effect::Value { .. } | Effect::Linked { .. }));
    let apart = |k: usize| !value(k.wrapping_sub(1)) && !value(k + 1);
    let other = |k: usize| matches!(effects[k].1, Effect::Fixed(Fixed::Other)) && apart(k);
    let illegal = |k: usize| matches!(effects[k].1, Effect::Fixed(Fixed::Illegal)) && apart(k);
    let modifier = |k: usize| matches!(effects[k].1, Effect::Modifiers(_));
    let one_hot = |&(i, j): &(usize, usize)| seed.bit(effects[i].0) != seed.bit(effects[j].0);
    let mut out = vec![];
    let mut mixed = vec![];
    for (i, (a, ea)) in effects.iter().enumerate() {
        for (j, (b, eb)) in effects.iter().enumerate().skip(i + 1) {
            if *a < FIRST || b - a > SPAN {
                continue;
            }
            if fixed(ea) && fixed(eb) {
                out.push((i, j));
            } else if (other(i) && modifier(j) || modifier(i) && other(j)) && one_hot(&(i, j)) || illegal(i) && modifier(j) || modifier(i) && illegal(j) {
                mixed.push((i, j));
            }
        }
    }
    out.sort_by_key(|p| !one_hot(p));
    out.extend(mixed);
    out
}

/// The candidate pairs whose joint flip stays in the seed's form (nvdisasm names the same
/// opclass, or none for both) and changes only the modifiers (one nvdisasm batch): first
/// those of two fixed bits, each bit in one pair at most (as before pairs could join); then
/// the pairs that widen a field (`Pair::joined`): a one-hot pair sharing a bit with a
/// one-hot pair found before (the two are one field of three bits), or a pair with a
/// modifier bit. [`apply`] makes them modifier bits with that change; the group solver then
/// joins and enumerates them. A pair's other values were never tried alone and may be
/// another form (see [`super::layout::solve`]).
pub fn find(o: &mut Oracle, s: &Seed, seed: Word, seed_class: Option<&str>, effects: &[(u8, Effect)]) -> Result<Vec<Pair>, DiscoverError> {
    let pairs = candidates(seed, effects);
    if pairs.is_empty() {
        return Ok(vec![]);
    }
    let words: Vec<Word> = pairs.iter().map(|&(i, j)| seed.flip(effects[i].0).flip(effects[j].0)).collect();
    let mut batch = words.clone();
    batch.extend(words.iter().map(|&w| census::with_opex(w, 0x10)));
    let outs = o.outcomes(&batch)?;
    let (plain, named) = outs.split_at(words.len());
    let mut found: Vec<Pair> = vec![];
    for joining in [false, true] {
        for ((&(i, j), out), id) in pairs.iter().zip(plain).zip(named) {
            let class = match id {
                Outcome::Illegal { message } => census::opclass_of(message),
                _ => None,
            };
            let Outcome::Printed { text } = out else { continue };
            let one_hot = seed.bit(effects[i].0) != seed.bit(effects[j].0);
            let both_fixed = fixed(&effects[i].1) && fixed(&effects[j].1);
            let taken = |k: usize| found.iter().find(|p| p.bits.0 == k || p.bits.1 == k).map(|p| p.one_hot);
            let free = match (taken(i), taken(j)) {
                (None, None) => both_fixed != joining,
                (Some(a), None) | (None, Some(a)) => joining && a && one_hot,
                _ => false,
            };
            if class != seed_class || !free {
                continue;
            }
            if let e @ Effect::Modifiers(_) = s.classify(Some(text)) {
                found.push(Pair { bits: (i, j), effect: e, one_hot, joined: joining });
            }
        }
    }
    Ok(found)
}

/// `effects` with each pair's two bits given its joint effect.
pub fn apply(effects: &[(u8, Effect)], pairs: &[Pair]) -> Vec<(u8, Effect)> {
    let mut out = effects.to_vec();
    for p in pairs {
        out[p.bits.0].1 = p.effect.clone();
        out[p.bits.1].1 = p.effect.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_near_fixed_bits_of_unlike_seed_values() {
        let seed = Word(1 << 72);
        let ill = Effect::Fixed(Fixed::Illegal);
        let effects = vec![(5, ill.clone()), (6, ill.clone()), (72, ill.clone()), (73, ill.clone()), (74, Effect::Pred), (75, ill.clone()), (76, ill)];
        // 5–6: opcode bits; 72 set pairs with the clear 73 and 75 first (74 is no fixed bit,
        // 76 too far), then the clear ones pair among themselves (73–75, 73–76, 75–76).
        assert_eq!(candidates(Word(seed.0 | 1 << 5), &effects), vec![(2, 3), (2, 5), (3, 5), (3, 6), (5, 6)]);
    }

    #[test]
    fn a_bit_whose_flip_is_another_form_pairs_with_a_near_modifier_bit_of_unlike_value() {
        let other = Effect::Fixed(Fixed::Other);
        let m = Effect::Modifiers(vec!["S8".into()]);
        // F2I.F64's seed 101 at bits 72, 75, 76: 75 alone is the 64-bit form.
        let effects = vec![(72, m.clone()), (75, other.clone()), (76, m.clone())];
        let seed = Word(1 << 72 | 1 << 76);
        // 72–75 too: its joint flip, `110`, is the 64-bit form, which `find` leaves out.
        assert_eq!(candidates(seed, &effects), vec![(0, 1), (1, 2)]);
        // ALD's bit 24 (R254 → RZ, another form) is its register's, not a modifier's.
        let value = Effect::Value { operand: 1, sub: 0, weight: Some(1) };
        let effects = vec![(22, m), (24, other), (25, value)];
        assert_eq!(candidates(Word(1 << 22), &effects), vec![]);
    }

    #[test]
    fn a_bit_whose_flip_is_illegal_pairs_with_a_near_modifier_bit_of_any_value() {
        let ill = Effect::Fixed(Fixed::Illegal);
        let m = Effect::Modifiers(vec!["PF2".into()]);
        // SM90 CCTL's second table: bits 87-88 flip alone (PF2, WB); bit 90 alone is illegal,
        // with 87 it is `.PML2`. Both seed bits clear: no one-hot pair, a mixed one still.
        let effects = vec![(87, m.clone()), (88, m.clone()), (89, ill.clone()), (90, ill.clone())];
        assert_eq!(candidates(Word(0), &effects), vec![(2, 3), (0, 2), (0, 3), (1, 2), (1, 3)]);
        // Next to an operand's value bits, an illegal bit is the operand's (a register value
        // nvdisasm rejects), not a modifier's.
        let value = Effect::Value { operand: 1, sub: 0, weight: Some(1) };
        let effects = vec![(22, m), (24, ill), (25, value)];
        assert_eq!(candidates(Word(0), &effects), vec![]);
    }
}
