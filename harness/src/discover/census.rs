//! The opcode census: every instruction form nvdisasm knows on an architecture, each with
//! one word that prints as it.
//!
//! A form's identity is nvdisasm's own name for it, the opclass (`dfma__RRR_RRR`): a word
//! whose opex field (bits 105–109) holds a value its table leaves undefined makes nvdisasm
//! say `Opclass 'dfma__RRR_RRR', undefined value 0x10 for table 'TABLES_opex_4'`. Two
//! values are tried (0x10, then 0x1f) because a table may define one of them; a form that
//! defines both is named by its mnemonic and operand text instead (marked `~`).
//!
//! Seeds: the words real code uses (ptxas output, control bits made neutral: see
//! [`super::NEUTRAL_CONTROL`]) and every value of bits 0–11 on a few body templates, then
//! single-bit mutations of each form found, and double-bit ones over the bits whose single
//! flip is illegal, until no new form appears; then random rounds: words with every non-control bit random
//! (opcodes illegal on every template) and words around each form (its opcode kept, the
//! other bits random, or the seed with a few bits flipped), which reach forms selected by
//! several bits at once; each new form is mutated again. Every step is one nvdisasm batch;
//! the random words come from a fixed seed, so a census is repeatable.

use super::{neutral, DiscoverError, Oracle, CONTROL};
use crate::gen::Rng;
use crate::oracle::nvdisasm::Outcome;
use crate::word::Word;
use std::collections::{BTreeMap, BTreeSet};

/// Bits 105–109: the field nvdisasm's opex tables decode (stall and yield on most forms).
const OPEX: std::ops::Range<u8> = 105..110;

/// Body templates the opcode values are tried on: all zero; RZ/PT everywhere an operand
/// usually sits; and the upper half's modifier area set, which some forms need to be legal.
pub const TEMPLATES: [u128; 3] = [0, 0x0000_0000_0000_00ff_0000_0000_ffff_7000, 0x0000_0000_07ff_ff00_0000_0000_0000_7000];

/// Most rounds of single-bit mutation after the opcode sweep (each finds forms selected
/// by bits outside 0–11, reached through the forms of the round before).
pub const MUTATION_ROUNDS: usize = 32;

/// Other seed words kept per form.
pub const ALTERNATES: usize = 3;

/// Random words per known form in a random round, and most random rounds (they stop
/// early when one finds nothing new).
pub const RANDOM_PER_FORM: usize = 64;
pub const RANDOM_ROUNDS: usize = 12;
/// Random rounds run even when one finds nothing new: a round finds the last few forms
/// by chance (SM100's `ldc_ur__URRzI` in one census, not in another; SM120's three
/// `f2fp_4b_upconvert` forms in round 5 after two empty rounds). A census of 24 rounds
/// found nothing more on SM100 and SM120 after round 5 (a round costs about 6 s).
pub const MIN_RANDOM_ROUNDS: usize = 8;
/// Words with every non-control bit random, per random round: they reach opcodes whose
/// words are illegal on every template.
pub const RANDOM_GLOBAL: usize = 65_536;

/// One instruction form and a word of it (control bits neutral).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// nvdisasm's opclass name, or `~MNEMONIC OPERANDS` when it never named the form.
    pub opclass: String,
    pub seed: Word,
    /// nvdisasm's text for `seed`.
    pub text: String,
    /// Other words of the form seen later (at most [`ALTERNATES`], and the sparsest: see
    /// `Form::offer_alternate`): seeds to try when the first one's operands or modifiers
    /// defeat the solver.
    pub alternates: Vec<Word>,
    /// The first real-code word of the form: the page's bits that nvdisasm ignores take its
    /// values, so that real code decodes (ptxas sets IADD3's unused carry-in to PT).
    pub real: Option<Word>,
    /// The first word of the form met after the census's own rounds (another
    /// architecture's form, or a mutation of one): tried last, when neither the seed nor an
    /// alternate solves (SM100's `ALD.P R0, a[R0], ???0`: SM90's page's word solves where
    /// the census's own did not).
    pub late: Option<Word>,
}

impl Form {
    /// Keeps `w` as an alternate seed: the first [`ALTERNATES`] words seen, then one more,
    /// the word with the fewest body bits set, if it has fewer than the seed and every
    /// alternate. The first words seen may all be template words full of ones (SM90
    /// `RET.ABS.NODEC !PT, UR0 -0x1000000000000`, whose `!PT` defeats the solver) where a
    /// sparse word (`RET.ABS P0, UR0 0x0`) solves.
    fn offer_alternate(&mut self, w: Word) {
        if self.alternates.len() < ALTERNATES {
            self.alternates.push(w);
            return;
        }
        let body: u128 = !CONTROL.fold(0u128, |m, b| m | 1u128 << b);
        let ones = |w: &Word| (w.0 & body).count_ones();
        if std::iter::once(&self.seed).chain(&self.alternates).all(|a| ones(&w) < ones(a)) {
            self.alternates.truncate(ALTERNATES);
            self.alternates.push(w);
        }
    }
}

/// What one word is, as far as the census is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    Illegal,
    Form { opclass: String, text: String },
}

/// The census of one architecture.
#[derive(Clone, Debug, Default)]
pub struct Census {
    /// Forms by opclass, each with the first word (in probe order) that showed it.
    pub forms: BTreeMap<String, Form>,
    /// Words sent to nvdisasm.
    pub words: usize,
    pub scope: Scope,
    /// Forms whose seed and alternates are settled: a word of another architecture's form
    /// (see [`Census::run`]'s `borrowed`) adds a form, or is a settled form's `late` word.
    sealed: BTreeSet<String>,
}

/// Which opcodes a census covers: all, or the listed values of bits 0–8 (each with every
/// value of the form bits 9–11); mutations and random words then stay within them.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub opcodes: Vec<u16>,
}

impl Scope {
    fn admits(&self, w: Word) -> bool {
        // A word whose non-control bits are all zero is rejected without an address.
        w.0 & !CONTROL.fold(0u128, |m, b| m | 1u128 << b) != 0 && (self.opcodes.is_empty() || self.opcodes.contains(&((w.0 & 0x1ff) as u16)))
    }

    fn sweep(&self) -> Vec<u128> {
        if self.opcodes.is_empty() {
            (0..4096).collect()
        } else {
            self.opcodes.iter().flat_map(|&op| (0..8u128).map(move |form| form << 9 | op as u128)).collect()
        }
    }
}

impl Census {
    /// Sweeps bits 0–11 on every template, then mutates the forms found until none is new.
    /// `seeds` are words known to be instructions (real code): their forms join the sweep's.
    /// `borrowed` (other architectures' forms, a word each) come last, with their
    /// mutations: a form this architecture shares that nothing above met is found, and a
    /// form found before keeps its seed and alternates and may gain a `late` word, tried
    /// when they do not solve (SM100's `ALD.P` with a register address).
    pub fn run(o: &mut Oracle, scope: &Scope, seeds: &[Word], borrowed: &[Word], progress: &mut dyn FnMut(&str)) -> Result<Census, DiscoverError> {
        let mut c = Census { scope: scope.clone(), ..Census::default() };
        // Words with no non-control bit set are left out (see `Scope::admits`).
        let ops = scope.sweep();
        let mut sweep: Vec<Word> = TEMPLATES.iter().flat_map(|&t| ops.iter().map(move |&op| neutral(Word(t & !0xfff | op)))).collect();
        sweep.retain(|&w| scope.admits(w));
        let mut fresh = c.add(o, &sweep)?;
        // Real code's words after the templates: a template word prints every operand (real
        // code leaves PT predicates out), and each form remembers a real word (see `real`).
        let real: Vec<Word> = seeds.iter().map(|&w| neutral(w)).filter(|&w| scope.admits(w)).collect();
        fresh.extend(c.add_real(o, &real)?);
        sweep.extend(real);
        progress(&format!("opcode sweep and {} seed words: {} forms from {} words", seeds.len(), c.forms.len(), sweep.len()));
        c.mutate(o, fresh, progress)?;
        let mut rng = Rng::new(0xc0de_5eed);
        for round in 0..RANDOM_ROUNDS {
            let words = c.random_words(&mut rng);
            let fresh = c.add(o, &words)?;
            progress(&format!("random round {}: {} forms ({} new) from {} words", round + 1, c.forms.len(), fresh.len(), words.len()));
            if fresh.is_empty() && round + 1 >= MIN_RANDOM_ROUNDS {
                break;
            }
            c.mutate(o, fresh, progress)?;
        }
        if !borrowed.is_empty() {
            c.sealed = c.forms.keys().cloned().collect();
            let words: Vec<Word> = borrowed.iter().map(|&w| neutral(w)).filter(|&w| scope.admits(w)).collect();
            let fresh = c.add(o, &words)?;
            progress(&format!("{} words of other architectures' forms: {} forms ({} new)", words.len(), c.forms.len(), fresh.len()));
            c.mutate(o, fresh, progress)?;
        }
        Ok(c)
    }

    /// Single-bit mutations of `fresh` and of every form they lead to, until none is new;
    /// with each seed's single flips go its double flips over the bits whose single flip is
    /// illegal (opcode-like bits: a form that two of them select together is reached through
    /// no legal neighbour).
    fn mutate(&mut self, o: &mut Oracle, mut fresh: Vec<Word>, progress: &mut dyn FnMut(&str)) -> Result<(), DiscoverError> {
        let bits: Vec<u8> = mutation_bits().collect();
        for _ in 0..MUTATION_ROUNDS {
            if fresh.is_empty() {
                break;
            }
            let singles: Vec<Word> = fresh.iter().flat_map(|seed| bits.iter().map(move |&b| seed.flip(b))).collect();
            let (found, ids) = self.record(o, &singles, false)?;
            let mut pairs: Vec<Word> = fresh.iter().zip(ids.chunks(bits.len())).flat_map(|(seed, ids)| illegal_pairs(*seed, &bits, ids)).collect();
            pairs.extend(fresh.iter().flat_map(|&seed| windows(seed)));
            let (more, _) = self.record(o, &pairs, false)?;
            progress(&format!("mutations: {} forms ({} new) from {} words", self.forms.len(), found.len() + more.len(), singles.len() + pairs.len()));
            fresh = found.into_iter().chain(more).collect();
        }
        Ok(())
    }

    /// [`RANDOM_GLOBAL`] random words, and [`RANDOM_PER_FORM`] around each known form: half keep its bits 0–11 and draw
    /// the rest, half flip each of its other bits with probability 1/8.
    fn random_words(&self, rng: &mut Rng) -> Vec<Word> {
        let body_mask: u128 = mutation_bits().filter(|&b| b >= 12).fold(0, |m, b| m | 1u128 << b);
        let mut words = vec![];
        for _ in 0..if self.scope.opcodes.is_empty() { RANDOM_GLOBAL } else { 0 } {
            let r = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
            words.push(neutral(Word(r & (body_mask | 0xfff))));
        }
        for f in self.forms.values() {
            for k in 0..RANDOM_PER_FORM {
                let r = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
                let w = if k % 2 == 0 {
                    f.seed.0 & !body_mask | r & body_mask
                } else {
                    let sparse = r & ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128);
                    f.seed.0 ^ sparse & body_mask
                };
                if self.scope.admits(Word(w)) {
                    words.push(Word(w));
                }
            }
        }
        words
    }

    /// Identifies `words` and records the forms not seen before; returns their seeds.
    fn add(&mut self, o: &mut Oracle, words: &[Word]) -> Result<Vec<Word>, DiscoverError> {
        Ok(self.record(o, words, false)?.0)
    }

    /// [`Census::add`] for real code's words: each also becomes its form's `real` word.
    fn add_real(&mut self, o: &mut Oracle, words: &[Word]) -> Result<Vec<Word>, DiscoverError> {
        Ok(self.record(o, words, true)?.0)
    }

    /// The seeds of the forms not seen before, and every word's identity (words the scope
    /// leaves out are illegal).
    fn record(&mut self, o: &mut Oracle, words: &[Word], real: bool) -> Result<(Vec<Word>, Vec<Identity>), DiscoverError> {
        let admitted: Vec<Word> = words.iter().copied().filter(|&w| self.scope.admits(w)).collect();
        let mut known = identify(o, &admitted)?.into_iter();
        let ids: Vec<Identity> =
            words.iter().map(|&w| if self.scope.admits(w) { known.next().unwrap_or(Identity::Illegal) } else { Identity::Illegal }).collect();
        self.words += admitted.len();
        let mut fresh = vec![];
        for (&w, id) in words.iter().zip(&ids) {
            let Identity::Form { opclass, text } = id.clone() else { continue };
            match self.forms.get_mut(&opclass) {
                Some(f) if self.sealed.contains(&opclass) => {
                    f.late.get_or_insert(w);
                }
                Some(f) => {
                    if real {
                        f.real.get_or_insert(w);
                    } else if w != f.seed && !f.alternates.contains(&w) {
                        f.offer_alternate(w);
                    }
                }
                None => {
                    fresh.push(w);
                    let form = Form { opclass: opclass.clone(), seed: w, text, alternates: vec![], real: real.then_some(w), late: None };
                    self.forms.insert(opclass, form);
                }
            }
        }
        Ok((fresh, ids))
    }
}

/// `seed` with two of the `bits` flipped, for every pair whose single flips (`ids`, in
/// the order of `bits`) are both illegal.
fn illegal_pairs(seed: Word, bits: &[u8], ids: &[Identity]) -> Vec<Word> {
    let illegal: Vec<u8> = bits.iter().zip(ids).filter(|(_, id)| **id == Identity::Illegal).map(|(&b, _)| b).collect();
    illegal.iter().enumerate().flat_map(|(i, &a)| illegal[i + 1..].iter().map(move |&b| seed.flip(a).flip(b))).collect()
}

/// `seed` with each run of 3, 6 or 8 bits set to ones (PT, URZ, RZ where a predicate or
/// register field sits): forms named `…RaRZ…` are selected by a register's value, which
/// single flips of a seed whose register is not RZ never reach.
fn windows(seed: Word) -> impl Iterator<Item = Word> {
    [3u8, 6, 8].into_iter().flat_map(move |width| {
        let ones = (1u128 << width) - 1;
        (0..=CONTROL.start - width).map(move |at| Word(seed.0 | ones << at)).filter(move |&w| w != seed)
    })
}

/// Bits a mutation flips: everything outside the control fields.
fn mutation_bits() -> impl Iterator<Item = u8> {
    (0..128u8).filter(|b| !CONTROL.contains(b))
}

/// The opclass named in an error message, if any.
pub fn opclass_of(message: &str) -> Option<&str> {
    let rest = &message[message.find("Opclass '")? + "Opclass '".len()..];
    Some(&rest[..rest.find('\'')?])
}

pub fn with_opex(w: Word, v: u128) -> Word {
    let mask = ((1u128 << OPEX.len()) - 1) << OPEX.start;
    Word(w.0 & !mask | v << OPEX.start)
}

/// Each word's identity: two batches (the words with opex 0x10 next to the plain words,
/// then opex 0x1f for the words whose 0x10 printed).
fn identify(o: &mut Oracle, words: &[Word]) -> Result<Vec<Identity>, DiscoverError> {
    let n = words.len();
    let mut batch = words.to_vec();
    batch.extend(words.iter().map(|&w| with_opex(w, 0x10)));
    let out = o.outcomes(&batch)?;
    let mut ids: Vec<Identity> = vec![Identity::Illegal; n];
    let mut again = vec![];
    for i in 0..n {
        let Outcome::Printed { text } = &out[i] else { continue };
        match &out[n + i] {
            Outcome::Illegal { message } => match opclass_of(message) {
                Some(name) => ids[i] = Identity::Form { opclass: name.to_string(), text: text.clone() },
                None => again.push(i),
            },
            _ => again.push(i),
        }
    }
    let second = o.outcomes(&again.iter().map(|&i| with_opex(words[i], 0x1f)).collect::<Vec<_>>())?;
    for (&i, out2) in again.iter().zip(second) {
        let Outcome::Printed { text } = &out[i] else { continue };
        let opclass = match &out2 {
            Outcome::Illegal { message } => opclass_of(message).map(str::to_string),
            _ => None,
        };
        let opclass = opclass.unwrap_or_else(|| format!("~{}", text_signature(text)));
        ids[i] = Identity::Form { opclass, text: text.clone() };
    }
    Ok(ids)
}

/// Mnemonic and operand shapes (digits dropped) of a text: a form name when nvdisasm
/// gives none.
pub fn text_signature(text: &str) -> String {
    let body = text.trim_end().trim_end_matches(';').trim();
    let body = body.strip_prefix('@').map(|b| b.split_once(' ').map_or("", |x| x.1)).unwrap_or(body);
    let mnemonic = body.split_whitespace().next().unwrap_or("").split('.').next().unwrap_or("");
    let ops = body.split_once(' ').map_or("", |x| x.1);
    let shape: String = ops.chars().filter(|c| !c.is_ascii_digit() && !c.is_whitespace()).collect();
    format!("{mnemonic} {shape}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opclass_is_read_from_nvdisasm_message() {
        let m = "Opclass 'dfma__RRR_RRR', undefined value 0x10 for table 'TABLES_opex_4'";
        assert_eq!(opclass_of(m), Some("dfma__RRR_RRR"));
        assert_eq!(opclass_of("Unrecognized operation for functional unit 'uC'"), None);
    }

    #[test]
    fn text_signature_drops_predicate_numbers_and_modifiers() {
        assert_eq!(text_signature("@P0 DFMA.RM R0, R1, c[0x0][0x10], R2 ;"), "DFMA R,R,c[x][x],R");
        assert_eq!(text_signature("NOP;"), "NOP ");
    }

    #[test]
    fn opex_is_set_over_bits_105_to_109() {
        let w = with_opex(Word(u128::MAX), 0x10);
        assert_eq!((w.0 >> 105) & 0x1f, 0x10);
        assert_eq!(w.0 & ((1 << 105) - 1), (1 << 105) - 1);
    }

    #[test]
    fn windows_set_register_and_predicate_fields_to_their_zero_register() {
        // SM100's `LDG…256 R0, R68, [R6.U32+UR2]` seed: the `[UR2]` form is the same word
        // with bits 24–31 (Ra) at RZ.
        let seed = Word(0x000f_c000_0b80_0000_0000_0002_0644_797e);
        let w: Vec<Word> = windows(seed).collect();
        assert!(w.contains(&Word(seed.0 | 0xff << 24)), "RZ at bits 24-31");
        assert!(w.contains(&Word(seed.0 | 0x3f << 32)), "URZ at bits 32-37");
        assert!(w.contains(&Word(seed.0 | 0x7 << 84)), "PT at bits 84-86");
        let control: u128 = CONTROL.fold(0, |m, b| m | 1u128 << b);
        assert!(w.iter().all(|x| x.0 & control == seed.0 & control && *x != seed));
        // Every start of every width, less those that leave the seed as it is.
        assert!(w.len() > 250 && w.len() <= (105 - 3 + 1) + (105 - 6 + 1) + (105 - 8 + 1), "{}", w.len());
    }

    #[test]
    fn the_sparsest_word_seen_is_kept_as_one_more_alternate() {
        let word = |body: u128| Word(super::super::NEUTRAL_CONTROL | body);
        let mut f =
            Form { opclass: "ret__ABS_UR".into(), seed: word(0x0fff_ff00 << 64 | 0x7950), text: String::new(), alternates: vec![], real: None, late: None };
        for body in [0x0ff0_0000u128 << 64 | 0x950, 0x1fe0_0000 << 64 | 0x950, 0x1fff_ff00 << 64 | 0x7950] {
            f.offer_alternate(word(body));
        }
        assert_eq!(f.alternates.len(), ALTERNATES);
        // Denser than the others: not kept; sparser: kept, and replaced by a sparser still.
        f.offer_alternate(word(0x0fff_ffff << 64 | 0x950));
        assert_eq!(f.alternates.len(), ALTERNATES);
        f.offer_alternate(word(0x0830_0000 << 64 | 0x950));
        f.offer_alternate(word(0x0820_0000 << 64 | 0x950));
        assert_eq!(f.alternates.len(), ALTERNATES + 1);
        assert_eq!(f.alternates[ALTERNATES], word(0x0820_0000 << 64 | 0x950));
    }
}
