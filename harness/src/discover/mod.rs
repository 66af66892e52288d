//! Discovery: instruction forms and their layouts from nvdisasm alone.
//!
//! [`census`] finds every form an architecture has (by nvdisasm's opclass names),
//! [`sweep`] solves them all with solvers that share nvdisasm batches ([`batch`]) and
//! writes pages, [`seeded`] rediscovers hand-written pages and lists their differences.
//! The single-form solver is [`discover`]:
//!
//! From the seed (an instruction word with neutral control bits), every non-control bit is
//! flipped singly (and each flip's opclass asked: a flip into another form is a form bit); each flip's effect ([`probe::Effect`]) says whether the bit is fixed, the
//! predicate, a value bit of one operand (with its weight), a `cABS`/`cNEG`/`cNOT` decoration
//! of one operand, a suffix bit of one operand (`R0.H1`), or a modifier bit. Value bits become
//! `operand N` fields in weight order; an operand's suffix bits one plain `modi` field whose
//! values are enumerated for its "Operand K Modifiers" table; modifier
//! bits are joined into one group whenever a pair's joint modifiers are not what the two
//! single flips' changes give together (a flip that replaces a token, `ADD` → `MIN`, is
//! independent of one that adds `EF`), then groups whose value pairs clash are joined
//! until none do; each group is enumerated for its table; every operand field is checked at
//! all-ones and random values, and random words with every field set check the operands again
//! and that the bits called ignored stay ignored in context; in forms with operand-suffix
//! tables or fp16 immediates, random words printed by the page as written must show the
//! suffixes, floats and modifiers (as a multiset) nvdisasm shows, and in every form random
//! words with each group and flag set show nvdisasm's modifiers. Each step is one nvdisasm
//! batch.
//! [`page::render`] writes the result in the ISA-viewer page format that `spec::parse` reads.

pub mod batch;
pub mod census;
pub mod fill;
pub mod layout;
pub mod page;
pub mod probe;
pub mod seeded;
pub mod swap;
pub mod sweep;

use crate::oracle::nvdisasm::{Nvdisasm, Outcome};
use crate::oracle::replies::Replies;
use crate::spec::{Arch, OperandKind};
use crate::word::Word;
use probe::{Effect, Seed};

/// Control fields (bits 105–125) are never probed: most values are illegal for most words.
pub const CONTROL: std::ops::Range<u8> = 105..126;

/// The control bits every form's words carry: both scoreboard barriers 7 ("none", bits
/// 110–115), everything else zero. Branches, EXIT, BAR, MEMBAR and the like are illegal
/// with barrier 0, and every form legal with zero control bits is legal with these too
/// (SM90 census: 960 of 964 forms print the same text; the other 4 differ only in a
/// PC-relative value or spacing).
pub const NEUTRAL_CONTROL: u128 = 0x3f << 110;

/// `w` with its control bits replaced by [`NEUTRAL_CONTROL`].
pub fn neutral(w: Word) -> Word {
    let control: u128 = CONTROL.fold(0, |m, b| m | 1u128 << b);
    Word(w.0 & !control | NEUTRAL_CONTROL)
}

/// One field of a discovered layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub kind: FieldKind,
    /// Bit positions, least significant value bit first.
    pub bits: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Pred,
    /// Page operand number (`c[I][I]`/`cx[UR][I]` take two).
    Operand(usize),
    /// `modi N`, N counted from 1 in nvdisasm's print order.
    Group(u32),
    /// `cABS` / `cNEG` / `cNOT` of a form operand.
    Abs(usize),
    Neg(usize),
    Not(usize),
    /// A one-bit instruction modifier such as `SAT`.
    Modifier(String),
    /// A plain `modi` span (`operand K modi` spans when split): the suffixes of page
    /// operand `operand` (`R0.H1`), one row per value (the page's "Operand K Modifiers"
    /// table).
    Suffix {
        operand: usize,
        table: Table,
    },
}

impl Field {
    /// The name a page writes in the field's first cell.
    pub fn name(&self) -> String {
        match &self.kind {
            FieldKind::Pred => "pred".into(),
            FieldKind::Operand(n) => format!("operand {n}"),
            FieldKind::Group(n) => format!("modi {n}"),
            FieldKind::Abs(_) => "cABS".into(),
            FieldKind::Neg(_) => "cNEG".into(),
            FieldKind::Not(_) => "cNOT".into(),
            FieldKind::Modifier(m) => m.clone(),
            // Bits in several spans (or across the row break at 64) name their operand.
            FieldKind::Suffix { operand, .. } if !self.one_span() => format!("operand {operand} modi"),
            FieldKind::Suffix { .. } => "modi".into(),
        }
    }
}

impl Field {
    /// Are the bits one span of one layout row (a plain cell can say them)?
    pub fn one_span(&self) -> bool {
        self.bits.windows(2).all(|w| w[0] + 1 == w[1] && w[1] != 64)
    }
}

/// A modifier group's table: (value, row name) for every legal value, `(default)` for none.
pub type Table = Vec<(u64, String)>;

/// The value a table's field takes in the page's base word: 0, or the lowest listed value
/// when the table leaves 0 out (see [`crate::spec::Table::base_row`]).
pub fn base_value(t: &Table) -> u64 {
    if t.iter().any(|(v, _)| *v == 0) {
        0
    } else {
        t.iter().map(|(v, _)| *v).min().unwrap_or(0)
    }
}

/// A solved variant.
#[derive(Clone, Debug)]
pub struct Discovered {
    pub arch: Arch,
    pub mnemonic: String,
    pub kinds: Vec<OperandKind>,
    /// The seed with every field zero (the page's fixed bits). The distilled line is
    /// nvdisasm's text for [`Discovered::base`].
    pub zero: Word,
    pub distilled: String,
    pub fields: Vec<Field>,
    /// Tables of `modi 1`, `modi 2`, … in order.
    pub tables: Vec<Table>,
    /// Fixed bits whose single flip prints the same text (written as the zero word's bit).
    pub ignored: Vec<u8>,
    /// What the page cannot say, and checks that failed (empty for a clean variant).
    pub notes: Vec<String>,
    /// Form operands nvdisasm leaves out when their value field is all ones and they are
    /// undecorated (`P`/`UP` at PT/UPT, `BAR.SYNC 0x0` for `BAR.SYNC 0x0, RZ`, MOV's
    /// `0xf`): a printing convention the checks allow for (validation learns it again;
    /// pages do not say it).
    pub omitted: Vec<usize>,
    /// Page operands nvdisasm leaves out when their field is zero (`BAR.SYNC 0x0` for a
    /// count of 0, `BRX P0, R0` for an offset of 0; the page's `left out at zero:` line),
    /// learned by [`layout::learn_left_out`] on a seed that shows them.
    pub left_out: Vec<crate::spec::LeftOutAtZero>,
    /// Modifiers of the distilled line that an ordinary immediate takes away: aliases
    /// nvdisasm prints for some values (`IMAD.MOV R0, R1, 0x0, R2`: a zero multiplier). The
    /// heading leaves them out; validation learns when they print.
    pub value_aliases: Vec<String>,
    /// Modifiers that choose the format of the `F` operands (`BF16_V2` → bf16 pairs; the
    /// page's `floats:` line), learned by [`layout::float_formats`].
    pub float_by: Vec<(String, crate::spec::FloatFormat)>,
    /// Page operands with no field that print another's field plus a constant (the page's
    /// `derived:` line).
    pub derived: Vec<crate::spec::Derived>,
    /// Page operands whose suffixes nvdisasm prints after their `|…|` bars (`|R0|.H1`; the
    /// others keep them inside, `|UR0.H1|`), seen on the zero word with each such operand's
    /// bars and suffixes set; `None` when no operand has both (the page then says nothing).
    pub after_bars: Option<Vec<usize>>,
    /// Register and predicate page operands whose field nvdisasm prints inverted (the
    /// page's `inverted:` line; see [`crate::spec::Inverted`]), learned by
    /// [`layout::inverted`] from the seed's text.
    pub inverted: Vec<usize>,
    /// Page operands whose field nvdisasm rejects at the all-ones value (the page's
    /// `illegal at all ones:` line), learned by [`layout::learn_illegal_all_ones`].
    pub illegal_all_ones: Vec<usize>,
}

impl Discovered {
    /// The number page operand `po` prints for value `v` of its `width`-bit field.
    pub fn printed(&self, po: usize, v: u64, width: usize) -> u64 {
        if self.inverted.contains(&po) {
            crate::spec::Inverted::apply(v, width as u32)
        } else {
            v
        }
    }

    /// The zero word with each table field whose table leaves 0 out (illegal, or another
    /// form: a one-hot pair, see [`swap`]) at its lowest listed row: the word the distilled
    /// line prints and the checks start from, as [`crate::gen::distilled_values`] does for
    /// the page read back.
    pub fn base(&self) -> Word {
        self.fields.iter().fold(self.zero, |w, f| match &f.kind {
            FieldKind::Group(n) => self.tables.get(*n as usize - 1).map_or(w, |t| layout::set(w, &f.bits, base_value(t))),
            FieldKind::Suffix { table, .. } => layout::set(w, &f.bits, base_value(table)),
            _ => w,
        })
    }

    /// The value field of page operand `po`, if it has one.
    pub fn operand_field(&self, po: usize) -> Option<&Field> {
        self.fields.iter().find(|f| f.kind == FieldKind::Operand(po))
    }

    /// Nothing solved yet on `arch`: the start a solution fills in.
    pub fn empty(arch: Arch) -> Discovered {
        Discovered {
            arch,
            mnemonic: String::new(),
            kinds: vec![],
            zero: Word::ZERO,
            distilled: String::new(),
            fields: vec![],
            tables: vec![],
            ignored: vec![],
            notes: vec![],
            omitted: vec![],
            left_out: vec![],
            value_aliases: vec![],
            float_by: vec![],
            derived: vec![],
            after_bars: None,
            inverted: vec![],
            illegal_all_ones: vec![],
        }
    }
}

#[derive(Clone, Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("seed {0} is not a printable instruction on {1} ({2})")]
    Seed(Word, Arch, String),
    #[error("nvdisasm failed: {0}")]
    Tool(String),
}

/// Where probe words go: nvdisasm itself, or a [`batch::Batcher`] that merges the
/// requests of many solvers into one nvdisasm batch.
pub trait Source: Sync {
    fn outcomes(&self, arch: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError>;
    /// The outcomes and the address word 0 was disassembled at (word `i` at that plus
    /// `16 * i`): PC-relative operands print targets computed from it.
    fn outcomes_at(&self, arch: Arch, words: &[Word]) -> Result<(u64, Vec<Outcome>), DiscoverError> {
        Ok((0, self.outcomes(arch, words)?))
    }
    /// The replies it keeps, if it keeps any: a [`batch::Batcher`] answers a request
    /// from them before merging the rest (see [`Replies`]).
    fn replies(&self) -> Option<&Replies> {
        None
    }
}

impl Source for Nvdisasm {
    fn outcomes(&self, arch: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
        self.disassemble(&arch.nvdisasm_name(), words).map_err(|e| DiscoverError::Tool(e.to_string()))
    }

    fn outcomes_at(&self, arch: Arch, words: &[Word]) -> Result<(u64, Vec<Outcome>), DiscoverError> {
        self.disassemble_anywhere(&arch.nvdisasm_name(), words).map_err(|e| DiscoverError::Tool(e.to_string()))
    }

    fn replies(&self) -> Option<&Replies> {
        self.replies.as_deref()
    }
}

/// One solver's view of the oracle; `requests` counts its calls.
pub struct Oracle<'a> {
    pub src: &'a dyn Source,
    pub arch: Arch,
    pub requests: usize,
    /// Form operands that are PC-relative: their printed targets are rewritten as at
    /// address 0 (see [`crate::codec::conventions::target_at_zero`]).
    pub targets: Vec<usize>,
    /// The form's operand count (the seed's).
    pub form_len: usize,
}

impl<'a> Oracle<'a> {
    pub fn new(src: &'a dyn Source, arch: Arch) -> Self {
        Oracle { src, arch, requests: 0, targets: vec![], form_len: 0 }
    }

    pub fn outcomes(&mut self, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
        let (base, mut outs) = self.outcomes_at(words)?;
        self.at_zero(base, &mut outs);
        Ok(outs)
    }

    /// The outcomes as printed, and the address of word 0.
    fn outcomes_at(&mut self, words: &[Word]) -> Result<(u64, Vec<Outcome>), DiscoverError> {
        if words.is_empty() {
            return Ok((0, vec![]));
        }
        self.requests += 1;
        self.src.outcomes_at(self.arch, words)
    }

    /// Rewrites the targets of `outs` (word 0 at `base`) as at address 0.
    fn at_zero(&self, base: u64, outs: &mut [Outcome]) {
        if self.targets.is_empty() {
            return;
        }
        for (i, o) in outs.iter_mut().enumerate() {
            if let Outcome::Printed { text } = o {
                *text = crate::codec::conventions::target_at_zero(text, &self.targets, self.form_len, base.wrapping_add(16 * i as u64));
            }
        }
    }

    /// Texts: `None` = illegal, `""` = silent.
    pub fn texts(&mut self, words: &[Word]) -> Result<Vec<Option<String>>, DiscoverError> {
        Ok(self.outcomes(words)?.iter().map(outcome_text).collect())
    }
}

/// An outcome as text: `None` = illegal, `""` = silent.
fn outcome_text(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Printed { text } => Some(text.clone()),
        Outcome::Silent => Some(String::new()),
        Outcome::Illegal { .. } => None,
    }
}

/// Bits probed by single flips: all but the control fields.
pub fn probe_bits() -> Vec<u8> {
    (0..128u8).filter(|b| !CONTROL.contains(b)).collect()
}

/// Solves the variant of `seed` (control bits neutral: [`NEUTRAL_CONTROL`]).
pub fn discover(src: &dyn Source, arch: Arch, seed: Word) -> Result<Discovered, DiscoverError> {
    discover_from(src, arch, seed, RESEEDS)
}

/// How many times a seed that leaves an operand out (`B2R.RESULT R15` for `B2R.RESULT R15,
/// PT`) is replaced by a flip that shows it: IADD3.X leaves out two carry predicates.
const RESEEDS: u8 = 2;

/// A seed and its single flips as nvdisasm printed them: what the solver starts from.
struct Flips {
    seed: Word,
    s: Seed,
    /// The probed bits ([`probe_bits`]).
    bits: Vec<u8>,
    /// The seed's text, then each flip's (`None`: illegal, `""`: silent).
    texts: Vec<Option<String>>,
    /// Per flip: nvdisasm names another opclass than the seed's.
    other: Vec<bool>,
    seed_class: Option<String>,
}

impl Flips {
    /// Prints the seed and each single flip of it (and each again with an undefined opex
    /// value, so that nvdisasm names its form); notes the operands that move with the address
    /// (PC-relative) in `o`.
    fn probe(o: &mut Oracle, arch: Arch, seed: Word) -> Result<Flips, DiscoverError> {
        let bits = probe_bits();
        let mut words = vec![seed];
        words.extend(bits.iter().map(|&b| seed.flip(b)));
        let n = words.len();
        let probes: Vec<Word> = words.iter().map(|&w| census::with_opex(w, 0x10)).collect();
        words.extend(probes);
        // The seed once more, last: an operand that moves with the address is PC-relative.
        words.push(seed);
        let (base, mut outs) = o.outcomes_at(&words)?;
        let again = outs.pop();
        o.targets = pc_relative(&outs[0], again.as_ref(), 16 * (words.len() as u64 - 1));
        o.form_len = match &outs[0] {
            Outcome::Printed { text } => crate::sass::parse_instruction(text).map(|i| i.operands.len()).unwrap_or(0),
            _ => 0,
        };
        o.at_zero(base, &mut outs);
        let texts: Vec<Option<String>> = outs[..n].iter().map(outcome_text).collect();
        let class = |i: usize| match &outs[n + i] {
            Outcome::Illegal { message } => census::opclass_of(message).map(str::to_string),
            _ => None,
        };
        let seed_text = match &texts[0] {
            Some(t) if !t.is_empty() => t.clone(),
            Some(_) => return Err(DiscoverError::Seed(seed, arch, "silent".into())),
            None => return Err(DiscoverError::Seed(seed, arch, "illegal".into())),
        };
        let mut s = Seed::new(arch, &seed_text).map_err(|e| DiscoverError::Seed(seed, arch, e.to_string()))?;
        for &k in &o.targets {
            // In bytes until the flips show the unit (see `Seed::fit_scales`).
            s.kinds[k] = OperandKind::Target(0);
        }
        let seed_class = class(0);
        // A flip into another form (nvdisasm names another opclass) is a form bit, whatever
        // the text shows: two forms may print alike.
        let other: Vec<bool> = (1..n).map(|k| matches!((&seed_class, class(k)), (Some(a), Some(c)) if *a != c)).collect();
        let same_form: Vec<&str> = (1..n).filter(|&k| !other[k - 1]).filter_map(|k| texts[k].as_deref()).collect();
        s.widen(&same_form);
        Ok(Flips { seed, s, bits, texts, other, seed_class })
    }

    /// The first probed bit whose flip, in the same form, prints a text `like` accepts.
    fn first_flip(&self, like: impl Fn(&crate::sass::Instruction) -> bool) -> Option<u8> {
        let parsed = |t: &Option<String>| t.as_deref().and_then(|t| crate::sass::parse_instruction(t).ok());
        (0..self.bits.len()).find(|&k| !self.other[k] && parsed(&self.texts[k + 1]).is_some_and(|i| like(&i))).map(|k| self.bits[k])
    }

    /// The first flip that prints one operand more than the seed: an operand the seed's
    /// value leaves out.
    fn showing_bit(&self) -> Option<u8> {
        let seed = &self.s.inst;
        self.first_flip(|i| i.mnemonic == seed.mnemonic && i.operands.len() == seed.operands.len() + 1)
    }

    /// The first flip that prints the seed without one of its operands, a negated true
    /// predicate (`!UPT`): the flip clears the negation and nvdisasm leaves the plain UPT
    /// out. A seed of that flip shows the predicate's field through [`Flips::showing_bit`]
    /// (HGMMA.SP's census word `…, RZ, !UPT, R38, 0x0, gsb0`).
    fn hiding_bit(&self) -> Option<u8> {
        let seed = &self.s.inst;
        let negated_true = |o: &crate::sass::Operand| o.not && matches!(o.body, crate::sass::Body::Pred { n: 7 } | crate::sass::Body::UPred { n: 7 });
        let k = seed.operands.iter().position(negated_true)?;
        let mut without = seed.operands.clone();
        without.remove(k);
        self.first_flip(|i| i.mnemonic == seed.mnemonic && i.modifiers == seed.modifiers && i.operands == without)
    }

    /// Each probed bit's effect, from its flip's text (a flip into another form is a fixed
    /// bit); fits the seed's branch-target scales on the way.
    fn effects(&mut self) -> Vec<(u8, Effect)> {
        let flipped: Vec<Option<&str>> = self.texts[1..].iter().zip(&self.other).map(|(t, &o)| if o { Some("") } else { t.as_deref() }).collect();
        let mut classified = self.s.classify_all(&flipped);
        if self.s.fit_scales(&classified) {
            classified = self.s.classify_all(&flipped);
        }
        self.bits.iter().zip(classified).zip(&self.other).map(|((&b, e), &o)| (b, if o { Effect::Fixed(probe::Fixed::Other) } else { e })).collect()
    }

    /// The layout the flips give, checked: with the modifier pairs [`swap::find`] finds,
    /// if every check passes with them (all of them, else the one-hot ones alone: a bad
    /// `00`/`11` pair must not cost them), else without. A pair's values other than the two
    /// seen are often illegal or another form: the table leaves them out, and the page's
    /// base word takes a listed row.
    fn solve(mut self, o: &mut Oracle) -> Result<Discovered, DiscoverError> {
        let effects = self.effects();
        let d = self.solve_effects(o, &effects)?;
        // A bit whose flip changes only the seed's terminator may matter in context (SM100
        // HMMA.SP: `.reuse` on its last register): then it stays a fixed bit.
        let spacing = |e: &Effect| *e == Effect::Fixed(probe::Fixed::Terminator);
        if !d.notes.iter().any(|n| n.starts_with(layout::IGNORED_IN_CONTEXT)) || !effects.iter().any(|(_, e)| spacing(e)) {
            return Ok(d);
        }
        let kept: Vec<(u8, Effect)> = effects.iter().map(|(b, e)| (*b, if spacing(e) { Effect::Fixed(probe::Fixed::Other) } else { e.clone() })).collect();
        self.solve_effects(o, &kept)
    }

    fn solve_effects(&self, o: &mut Oracle, effects: &[(u8, Effect)]) -> Result<Discovered, DiscoverError> {
        let (s, seed) = (&self.s, self.seed);
        let pairs = swap::find(o, s, seed, self.seed_class.as_deref(), effects)?;
        let one_hot: Vec<swap::Pair> = pairs.iter().filter(|p| p.one_hot).cloned().collect();
        let mut tries = if one_hot.len() < pairs.len() { vec![pairs, one_hot] } else { vec![pairs] };
        // Then without the pairs that widen a field (see `swap::Pair::joined`).
        let plain: Vec<Vec<swap::Pair>> = tries.iter().map(|t| t.iter().filter(|p| !p.joined).cloned().collect()).collect();
        tries.extend(plain);
        let mut distinct: Vec<Vec<swap::Pair>> = vec![];
        for t in tries.into_iter().filter(|t| !t.is_empty()) {
            if !distinct.contains(&t) {
                distinct.push(t);
            }
        }
        for t in distinct {
            let paired: Vec<(u8, u8)> = t.iter().map(|p| (effects[p.bits.0].0, effects[p.bits.1].0)).collect();
            let d = solve_checked(o, s, seed, &swap::apply(effects, &t), &paired)?;
            // A pair that widens a field may join two of them into one group whose rows
            // nvdisasm prints apart: then the pairs without it.
            if d.notes.is_empty() && !d.distilled.is_empty() && (!t.iter().any(|p| p.joined) || layout::rows_print_whole(o, &d, 0x5eed, 64)?) {
                return Ok(d);
            }
        }
        solve_checked(o, s, seed, effects, &[])
    }
}

/// Solves from the flip of `bit` instead, if that solution is clean and covers `seed` (the
/// seed differs from its zero word only in fields, and some operand is left out at all
/// ones or at zero): a form whose operand shows only for some values then gets its field.
fn reseeded(src: &dyn Source, arch: Arch, seed: Word, bit: u8, reseeds: u8) -> Result<Option<Discovered>, DiscoverError> {
    let d = match discover_from(src, arch, seed.flip(bit), reseeds - 1) {
        Ok(d) => d,
        Err(DiscoverError::Seed(..)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let in_fields = d.fields.iter().flat_map(|f| f.bits.iter()).fold(0u128, |m, &b| m | 1u128 << b);
    let control: u128 = CONTROL.fold(0, |m, b| m | 1u128 << b);
    let covered = (seed.0 ^ d.zero.0) & !in_fields & !control == 0;
    Ok((d.notes.is_empty() && covered && !(d.omitted.is_empty() && d.left_out.is_empty())).then_some(d))
}

fn discover_from(src: &dyn Source, arch: Arch, seed: Word, reseeds: u8) -> Result<Discovered, DiscoverError> {
    let mut o = Oracle::new(src, arch);
    let flips = Flips::probe(&mut o, arch, seed)?;
    if let Some(bit) = flips.showing_bit().filter(|_| reseeds > 0) {
        if let Some(d) = reseeded(src, arch, seed, bit, reseeds)? {
            return Ok(d);
        }
    }
    let hiding = flips.hiding_bit().filter(|_| reseeds > 0);
    let d = flips.solve(&mut o)?;
    if let Some(bit) = hiding.filter(|_| !d.notes.is_empty()) {
        if let Some(d) = reseeded(src, arch, seed, bit, reseeds)? {
            return Ok(d);
        }
    }
    Ok(d)
}

/// The layout the effects give (`paired`: the one-hot pairs' bits, see [`swap::find`]),
/// its zero and base words and conventions, and every check's notes.
fn solve_checked(o: &mut Oracle, s: &Seed, seed: Word, effects: &[(u8, Effect)], paired: &[(u8, u8)]) -> Result<Discovered, DiscoverError> {
    // The checks below may learn more about the operands (a URZ the form leaves out).
    let mut s = s.clone();
    let mut d = layout::solve(o, &s, seed, effects, paired)?;
    d.inverted = layout::inverted(&s, seed, &d);
    d.zero = Word(seed.0 & !d.fields.iter().flat_map(|f| f.bits.iter()).fold(0u128, |m, &b| m | 1u128 << b));
    // The base word's text, and each operand at its all-ones value (PT, RZ, URZ, 0xf):
    // is it left out? An inverted field prints all ones at 0, in the base word: its word
    // at 1 shows whether the base word leaves it out.
    let base = d.base();
    let single = layout::single_fields(&s, &d);
    let sl = layout::slots(&s);
    let inv = d.inverted.clone();
    let inverted = |k: usize| inv.contains(&sl[k][0]);
    let mut words = vec![base];
    words.extend(single.iter().map(|(k, bits)| layout::set(base, bits, if inverted(*k) { 1 } else { u64::MAX })));
    let texts = o.texts(&words)?;
    if base != seed {
        d.distilled = texts[0].clone().unwrap_or_default();
    }
    d.left_out = layout::learn_left_out(o, &s, &d)?;
    layout::learn_ureg_elided(o, &mut s, &mut d)?;
    layout::learn_reg_elided(o, &mut s, &mut d)?;
    d.illegal_all_ones = layout::learn_illegal_all_ones(o, &s, &d)?;
    let shown = crate::sass::parse_instruction(&d.distilled).map(|i| i.operands.len()).unwrap_or(0);
    let count =
        |t: &Option<String>| t.as_deref().and_then(|t| crate::sass::parse_instruction(t).ok()).filter(|i| i.mnemonic == d.mnemonic).map(|i| i.operands.len());
    let omitted = |k: usize, t: &Option<String>| if inverted(k) { count(t) == Some(shown + 1) } else { count(t).is_some_and(|n| n + 1 == shown) };
    d.omitted = single.iter().zip(&texts[1..]).filter(|((k, _), t)| omitted(*k, t)).map(|((k, _), _)| *k).collect();
    d.value_aliases = value_aliases(o, &d)?;
    d.after_bars = layout::after_bars(o, &s, &d)?;
    let (float_by, mut notes) = layout::float_formats(o, &s, &d)?;
    d.float_by = float_by;
    d.notes.append(&mut notes);
    let mut notes = layout::verify(o, &s, &d, 0x5eed)?;
    d.notes.append(&mut notes);
    let mut notes = layout::verify_random(o, &s, &d, 0x5eed, 100)?;
    d.notes.append(&mut notes);
    let mut notes = layout::verify_page(o, &s, &d, 0x5eed, 100)?;
    d.notes.append(&mut notes);
    let mut notes = layout::verify_modifiers(o, &d, 0x5eed, 100)?;
    d.notes.append(&mut notes);
    let mut notes = layout::verify_urz(o, &s, &d)?;
    d.notes.append(&mut notes);
    d.notes.append(&mut read_back(&s, &d));
    Ok(d)
}

/// `zero` (the zero word's text, as the printer without conventions prints it but for
/// the PT/UPT of inverted predicates, which nvdisasm leaves out) with those put back.
fn put_back_inverted_pt(v: &crate::spec::Variant, zero: &mut crate::sass::Instruction) {
    let shown = v.operands.iter().filter(|o| !o.zero_omitted).count();
    if zero.operands.len() >= shown {
        return;
    }
    let mut at = 0;
    for o in &v.operands {
        let inverted = matches!(o.value_fields.as_slice(), [Some(f)] if v.fields[*f].inverted);
        let body = match o.kind {
            OperandKind::Pred if inverted => Some(crate::sass::Body::Pred { n: 7 }),
            OperandKind::UPred if inverted => Some(crate::sass::Body::UPred { n: 7 }),
            _ => None,
        };
        if let Some(body) = body.filter(|_| at <= zero.operands.len() && zero.operands.len() < shown) {
            zero.operands.insert(at, crate::sass::Operand::new(body));
        }
        at += usize::from(!o.zero_omitted);
    }
}

/// The distilled line's modifiers that the zero word with every integer immediate at an
/// ordinary value (3: neither 0, 1 nor a power of two) does not print.
fn value_aliases(o: &mut Oracle, d: &Discovered) -> Result<Vec<String>, DiscoverError> {
    let imms: Vec<&Field> = d
        .fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Operand(k) if matches!(d.kinds.get(k), Some(OperandKind::Imm(_)))) && f.bits.len() >= 2)
        .collect();
    if imms.is_empty() {
        return Ok(vec![]);
    }
    let word = imms.iter().fold(d.base(), |w, f| layout::set(w, &f.bits, 3));
    let parse = |t: &str| crate::sass::parse_instruction(t).ok();
    let (Some(zero), Some(Some(plain))) = (parse(&d.distilled), o.texts(&[word])?.pop().flatten().map(|t| parse(&t))) else { return Ok(vec![]) };
    if zero.mnemonic != plain.mnemonic || zero.operands.len() != plain.operands.len() {
        return Ok(vec![]);
    }
    let mut left = plain.modifiers;
    let mut gone = vec![];
    for m in zero.modifiers {
        match left.iter().position(|x| *x == m) {
            Some(i) => drop(left.remove(i)),
            None => gone.push(m),
        }
    }
    Ok(gone)
}

/// The operands of `first` that print `distance` more in `moved`, the same word
/// `distance` bytes further on: PC-relative operands (branch targets).
fn pc_relative(first: &Outcome, moved: Option<&Outcome>, distance: u64) -> Vec<usize> {
    let parse = |o: Option<&Outcome>| match o {
        Some(Outcome::Printed { text }) => crate::sass::parse_instruction(text).ok(),
        _ => None,
    };
    let (Some(a), Some(b)) = (parse(Some(first)), parse(moved)) else { return vec![] };
    if a.operands.len() != b.operands.len() {
        return vec![];
    }
    let imm = |o: &crate::sass::Operand| if let crate::sass::Body::Imm { value } = o.body { Some(value) } else { None };
    (0..a.operands.len()).filter(|&k| matches!((imm(&a.operands[k]), imm(&b.operands[k])), (Some(x), Some(y)) if y - x == i128::from(distance))).collect()
}

/// The page as written, read back: it must print the distilled line for the base word (a
/// constant operand suffix such as `R0.SIGN` has no cell), and give every `cABS`/`cNEG`/
/// `cNOT` cell to the operand whose decoration the flip showed (the page does not say
/// which; the parser decides by position). One note per disagreement.
pub fn read_back(s: &Seed, d: &Discovered) -> Vec<String> {
    let text = page::render(&d.mnemonic, None, std::slice::from_ref(d));
    let v = match crate::spec::parse_page("discovered", text.as_bytes()) {
        Ok(p) => p.variants.into_iter().next(),
        Err(e) => return vec![format!("the page does not read back: {e}")],
    };
    let Some(v) = v else { return vec!["the page reads back without a variant".into()] };
    let mut notes = vec![];
    if let Ok(mut want) = crate::sass::parse_instruction(&d.distilled) {
        for a in &d.value_aliases {
            if let Some(i) = want.modifiers.iter().position(|m| m == a) {
                want.modifiers.remove(i);
            }
        }
        put_back_inverted_pt(&v, &mut want);
        let mut got = crate::codec::print(&v, &crate::gen::distilled_values(&v));
        got.terminator = want.terminator;
        // As text: spellings such as `c[0x0] [0x0]` or `|R0|.H1` are the printer's.
        if got.to_string() != want.to_string() {
            notes.push(format!("the page prints '{got}' for the zero word, nvdisasm '{}'", d.distilled));
        }
    }
    let sl = layout::slots(s);
    for f in &d.fields {
        let (FieldKind::Abs(k) | FieldKind::Neg(k) | FieldKind::Not(k)) = f.kind else { continue };
        let bound = v.fields.iter().find(|g| g.bits == f.bits).and_then(|g| match &g.kind {
            crate::spec::FieldKind::Flag { page_operand, .. } => *page_operand,
            _ => None,
        });
        let want = sl.get(k).and_then(|x| x.first().copied());
        if bound != want {
            let at = |o: Option<usize>| o.map(|o| format!("operand {o}")).unwrap_or_else(|| "no operand".into());
            notes.push(format!("'{}' at bit {}: the page's positional rule gives it to {}, nvdisasm shows it on {}", f.name(), f.bits[0], at(bound), at(want)));
        }
    }
    notes
}
