//! Discovery: instruction forms and their layouts from nvdisasm alone.
//!
//! [`census`] finds every form an architecture has (by nvdisasm's opclass names),
//! [`sweep`] solves them all with solvers that share nvdisasm batches ([`batch`]) and
//! writes pages, [`seeded`] rediscovers hand-written pages and lists their differences.
//! The single-form solver is [`discover`]:
//!
//! From the seed (an instruction word with control bits zero), every non-control bit is
//! flipped singly (and each flip's opclass asked: a flip into another form is a form bit); each flip's effect ([`probe::Effect`]) says whether the bit is fixed, the
//! predicate, a value bit of one operand (with its weight), a `cABS`/`cNEG`/`cNOT` decoration
//! of one operand, or a modifier bit. Value bits become `operand N` fields in weight order; modifier
//! bits are joined into one group whenever a pair's joint text is not the union of their
//! single effects; each group is enumerated for its table; every operand field is checked at
//! all-ones and random values, and random words with every field set check the operands again
//! and that the bits called ignored stay ignored in context. Each step is one nvdisasm batch.
//! [`page::render`] writes the result in the ISA-viewer page format that `spec::parse` reads.

pub mod batch;
pub mod census;
pub mod layout;
pub mod page;
pub mod probe;
pub mod seeded;
pub mod sweep;

use crate::oracle::nvdisasm::{Nvdisasm, Outcome};
use crate::spec::{Arch, OperandKind};
use crate::word::Word;
use probe::{Effect, Seed};

/// Control fields (bits 105–125) are never probed: most values are illegal for most words.
pub const CONTROL: std::ops::Range<u8> = 105..126;

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
        }
    }
}

/// A modifier group's table: (value, row name) for every legal value, `(default)` for none.
pub type Table = Vec<(u64, String)>;

/// A solved variant.
#[derive(Clone, Debug)]
pub struct Discovered {
    pub arch: Arch,
    pub mnemonic: String,
    pub kinds: Vec<OperandKind>,
    /// The seed with every field zero, and nvdisasm's text for it.
    pub zero: Word,
    pub distilled: String,
    pub fields: Vec<Field>,
    /// Tables of `modi 1`, `modi 2`, … in order.
    pub tables: Vec<Table>,
    /// Fixed bits whose single flip prints the same text (written as the zero word's bit).
    pub ignored: Vec<u8>,
    /// What the page cannot say, and checks that failed (empty for a clean variant).
    pub notes: Vec<String>,
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
}

impl Source for Nvdisasm {
    fn outcomes(&self, arch: Arch, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
        self.disassemble(&arch.nvdisasm_name(), words).map_err(|e| DiscoverError::Tool(e.to_string()))
    }
}

/// One solver's view of the oracle; `requests` counts its calls.
pub struct Oracle<'a> {
    pub src: &'a dyn Source,
    pub arch: Arch,
    pub requests: usize,
}

impl Oracle<'_> {
    pub fn outcomes(&mut self, words: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
        if words.is_empty() {
            return Ok(vec![]);
        }
        self.requests += 1;
        self.src.outcomes(self.arch, words)
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

/// Solves the variant of `seed` (control bits should be zero).
pub fn discover(src: &dyn Source, arch: Arch, seed: Word) -> Result<Discovered, DiscoverError> {
    let mut o = Oracle { src, arch, requests: 0 };
    let bits = probe_bits();
    let mut words = vec![seed];
    words.extend(bits.iter().map(|&b| seed.flip(b)));
    // Each word again with an undefined opex value: nvdisasm then names its form.
    let n = words.len();
    let probes: Vec<Word> = words.iter().map(|&w| census::with_opex(w, 0x10)).collect();
    words.extend(probes);
    let outs = o.outcomes(&words)?;
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
    let mut s = Seed::new(arch, &seed_text).map_err(|e| DiscoverError::Seed(seed, arch, e))?;
    let seed_class = class(0);
    let other_form = |k: usize| matches!((&seed_class, class(k)), (Some(a), Some(c)) if *a != c);
    let same_form: Vec<&str> = (1..n).filter(|&k| !other_form(k)).filter_map(|k| texts[k].as_deref()).collect();
    s.widen(&same_form);
    // A flip into another form (nvdisasm names another opclass) is a form bit, whatever
    // the text shows: two forms may print alike.
    let effects: Vec<(u8, Effect)> = bits
        .iter()
        .enumerate()
        .map(|(k, &b)| match (&seed_class, class(k + 1)) {
            (Some(a), Some(c)) if *a != c => (b, Effect::Fixed(probe::Fixed::Other)),
            _ => (b, s.classify(texts[k + 1].as_deref())),
        })
        .collect();
    let mut d = layout::solve(&mut o, &s, seed, &effects)?;
    let zero = Word(seed.0 & !d.fields.iter().flat_map(|f| f.bits.iter()).fold(0u128, |m, &b| m | 1u128 << b));
    if zero != seed {
        d.distilled = o.texts(&[zero])?[0].clone().unwrap_or_default();
    }
    d.zero = zero;
    let mut notes = layout::verify(&mut o, &s, &d, 0x5eed)?;
    d.notes.append(&mut notes);
    let mut notes = layout::verify_random(&mut o, &s, &d, 0x5eed, 100)?;
    d.notes.append(&mut notes);
    d.notes.append(&mut read_back(&s, &d));
    Ok(d)
}

/// The page as written, read back: it must print the distilled line for the zero word (a
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
    if let Ok(want) = crate::sass::parse_instruction(&d.distilled) {
        let mut got = crate::codec::print(&v, &crate::codec::Values::zero(v.fields.len()));
        got.terminator = want.terminator;
        if got != want {
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
