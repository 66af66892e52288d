//! One-hot modifier fields: two bits whose single flips are illegal or another form, but
//! whose joint flip moves the set bit and prints other modifiers (`MUFU.EX2.F16` → `.BF16`,
//! bits 72–73 `01` → `10`; `BSSY.RECONVERGENT` → `.RELIABLE`; `F2F.F32.F64` → `.F16.F64`).
//! Single flips reach only `00` and `11`, so without the pair the bits look fixed.

use super::probe::{Effect, Fixed, Seed};
use super::{census, DiscoverError, Oracle};
use crate::oracle::nvdisasm::Outcome;
use crate::word::Word;

/// The farthest apart two bits of one such field are tried (the fields seen are adjacent).
const SPAN: u8 = 3;

/// Opcode bits (0–11) are left out: a swap there is another instruction, and trying them
/// would double the probe words of every form.
const FIRST: u8 = 12;

/// Pairs of fixed bits worth a joint flip: both flips illegal or another form, one bit set
/// in the seed and the other clear, at most [`SPAN`] apart.
fn candidates(seed: Word, effects: &[(u8, Effect)]) -> Vec<(usize, usize)> {
    let fixed = |e: &Effect| matches!(e, Effect::Fixed(Fixed::Illegal | Fixed::Other));
    let mut out = vec![];
    for (i, (a, ea)) in effects.iter().enumerate() {
        for (j, (b, eb)) in effects.iter().enumerate().skip(i + 1) {
            if *a >= FIRST && b - a <= SPAN && fixed(ea) && fixed(eb) && seed.bit(*a) != seed.bit(*b) {
                out.push((i, j));
            }
        }
    }
    out
}

/// Turns each candidate pair whose joint flip stays in the seed's form (nvdisasm names the
/// same opclass, or none for both) and changes only the modifiers into two modifier bits
/// with that change; the group solver then joins and enumerates them (one nvdisasm batch).
/// Returns the pairs: their group's other values were never tried alone, and
/// may be another form (see [`super::layout::solve`]).
pub fn find(o: &mut Oracle, s: &Seed, seed: Word, seed_class: Option<&str>, effects: &mut [(u8, Effect)]) -> Result<Vec<(u8, u8)>, DiscoverError> {
    let pairs = candidates(seed, effects);
    let mut paired = vec![];
    if pairs.is_empty() {
        return Ok(paired);
    }
    let words: Vec<Word> = pairs.iter().map(|&(i, j)| seed.flip(effects[i].0).flip(effects[j].0)).collect();
    let mut batch = words.clone();
    batch.extend(words.iter().map(|&w| census::with_opex(w, 0x10)));
    let outs = o.outcomes(&batch)?;
    let (plain, named) = outs.split_at(words.len());
    for ((&(i, j), out), id) in pairs.iter().zip(plain).zip(named) {
        let class = match id {
            Outcome::Illegal { message } => census::opclass_of(message),
            _ => None,
        };
        let Outcome::Printed { text } = out else { continue };
        // A bit already paired keeps its first pair.
        let free = |k: usize| matches!(effects[k].1, Effect::Fixed(_));
        if class != seed_class || !free(i) || !free(j) {
            continue;
        }
        if let e @ Effect::Modifiers(_) = s.classify(Some(text)) {
            effects[i].1 = e.clone();
            effects[j].1 = e;
            paired.push((effects[i].0, effects[j].0));
        }
    }
    Ok(paired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_near_fixed_bits_of_unlike_seed_values() {
        let seed = Word(1 << 72);
        let ill = Effect::Fixed(Fixed::Illegal);
        let effects = vec![(5, ill.clone()), (6, ill.clone()), (72, ill.clone()), (73, ill.clone()), (74, Effect::Pred), (75, ill.clone()), (76, ill)];
        // 5–6: opcode bits; 72 set pairs with the clear 73 and 75 (74 is no fixed bit, 76 too
        // far); 73, 75 and 76 are all clear.
        assert_eq!(candidates(Word(seed.0 | 1 << 5), &effects), vec![(2, 3), (2, 5)]);
    }
}
