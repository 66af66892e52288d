//! The conventions stored beside the pages ([`crate::spec::conventions`]), checked against
//! what nvdisasm shows now: each kind of convention that differs for a form is an `error`
//! whose correction is the learned conventions (what `fix` writes), shown by a word that
//! nvdisasm prints otherwise than the stored conventions predict; a form with none stored
//! is a `note` carrying the same correction, so `fix` writes them.

use super::finding::{outcome_text, Class, Correction, Finding, Severity};
use crate::codec::{print_with, Codec};
use crate::oracle::nvdisasm::{Nvdisasm, NvdisasmError, Outcome};
use crate::spec::conventions::{FormConventions, StoredControl, StoredForm};
use crate::spec::edit::Edit;
use crate::word::Word;
use std::collections::BTreeMap;

/// The kinds of convention a finding names, each replaced on its own to find its evidence.
const KINDS: [&str; 8] = [
    "control bits (legality, .reuse, terminator)",
    "modifier order",
    "immediate signedness",
    "operands left out",
    "alias modifiers",
    "space bits",
    "registers printed ???255",
    "offsets beside RZ",
];

/// The kind of a form with no stored conventions (a note).
const UNSTORED: usize = usize::MAX;

/// `stored` with kind `k` taken from `learned`.
fn with_kind(stored: &FormConventions, learned: &FormConventions, k: usize) -> FormConventions {
    let mut c = stored.clone();
    match k {
        0 => {
            c.opex = learned.opex.clone();
            c.opex_semicolon = learned.opex_semicolon.clone();
            c.terminator = learned.terminator.clone();
            c.barrier_legal = learned.barrier_legal.clone();
            c.wait_semicolon = learned.wait_semicolon.clone();
        }
        1 => c.modifier_order = learned.modifier_order.clone(),
        2 => {
            c.signed_imm = learned.signed_imm;
            c.signed_imm_by = learned.signed_imm_by.clone();
        }
        3 => c.omitted = learned.omitted.clone(),
        4 => c.aliases = learned.aliases.clone(),
        5 => c.space_bits = learned.space_bits.clone(),
        6 => c.unnamed = learned.unnamed.clone(),
        _ => c.rz_offsets = learned.rz_offsets.clone(),
    }
    c
}

/// Conventions as the file stores them: the form written back, so that entries the file
/// does not keep (such as the terminator of a rejected barrier) do not count.
struct AsStored {
    control: Option<StoredControl>,
    form: StoredForm,
}

impl AsStored {
    fn of(c: &FormConventions) -> AsStored {
        AsStored { control: StoredControl::of(c).ok(), form: StoredForm::of(c, String::new()) }
    }

    /// Do the two agree in kind `k`?
    fn same_kind(&self, other: &AsStored, k: usize) -> bool {
        let (a, b) = (&self.form, &other.form);
        match k {
            0 => self.control == other.control,
            1 => a.order == b.order,
            2 => a.signed == b.signed && a.signed_by == b.signed_by,
            3 => a.omitted == b.omitted,
            4 => a.aliases == b.aliases,
            5 => a.space_bits == b.space_bits,
            6 => a.unnamed == b.unnamed,
            _ => a.rz_offsets == b.rz_offsets,
        }
    }
}

/// What conventions `c` predict nvdisasm prints for word `w` of variant `vi`.
fn predict(codec: &Codec, vi: usize, c: &FormConventions, w: Word) -> String {
    if !c.legal(w) || !c.legal_barriers().contains(&crate::codec::conventions::barrier_index(w)) {
        return "<rejected>".into();
    }
    print_with(codec.variant(vi), &codec.extract(vi, w), Some((c, w))).to_string()
}

/// One disagreement to show: variant, kind and the word that shows it.
pub struct Shown {
    vi: usize,
    kind: usize,
    word: Word,
    expected: String,
}

/// What nvdisasm printed for words already sent (the learning batch's): the word's
/// address in its batch and the outcome, as nvdisasm gave it.
pub type Seen = std::collections::HashMap<Word, (u64, Outcome)>;

/// The words that show where the stored conventions of the variants `vis` differ from
/// the learned ones `learned` (and, for a form with none stored, one word): learning
/// probe words, so nvdisasm has answered them already when it taught `learned`.
pub fn to_show(codec: &Codec, vis: &[usize], learned: &crate::codec::conventions::Conventions) -> Vec<Shown> {
    let mut shown: Vec<Shown> = vec![];
    for &vi in vis {
        let v = codec.variant(vi);
        let Some(l) = learned.get(v.arch, &v.key) else { continue };
        // The learning probes: built again only for forms that need a word shown.
        let probes = || crate::oracle::learn::probe_words(codec, vi);
        let Some(s) = v.conventions.as_deref() else {
            // The opex sweep's first word: one nvdisasm accepts, printed from the page alone.
            let word = probes()[0];
            shown.push(Shown { vi, kind: UNSTORED, word, expected: crate::codec::print(v, &codec.extract(vi, word)).to_string() });
            continue;
        };
        // A kind that differs only where no probe word prints differently (entries of a
        // rejected combination) changes no text nvdisasm prints: nothing to report.
        let (stored, now) = (AsStored::of(s), AsStored::of(l));
        let differ: Vec<usize> = (0..KINDS.len()).filter(|&k| !stored.same_kind(&now, k)).collect();
        let probes = if differ.is_empty() { vec![] } else { probes() };
        for k in differ {
            let fixed = with_kind(s, l, k);
            let word = probes.iter().copied().find(|&w| predict(codec, vi, s, w) != predict(codec, vi, &fixed, w));
            if let Some(word) = word {
                shown.push(Shown { vi, kind: k, word, expected: predict(codec, vi, s, word) });
            }
        }
    }
    shown
}

impl Shown {
    pub fn word(&self) -> Word {
        self.word
    }
}

/// Findings for what [`to_show`] picked (learned conventions `learned`), by page file.
/// A word is looked up in `seen`; the others are sent in one batch.
pub fn check(
    nv: &Nvdisasm,
    codec: &Codec,
    learned: &crate::codec::conventions::Conventions,
    shown: &[Shown],
    seen: &Seen,
) -> Result<BTreeMap<String, Vec<Finding>>, NvdisasmError> {
    let mut out: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for (s, (addr, o)) in shown.iter().zip(outcomes(nv, codec, shown, seen)?) {
        let actual = at_zero(codec.variant(s.vi), outcome_text(&o), addr);
        let rejected = !matches!(o, Outcome::Printed { .. });
        if s.kind != UNSTORED && (actual == s.expected || rejected && s.expected == "<rejected>") {
            continue;
        }
        let v = codec.variant(s.vi);
        let Some(l) = learned.get(v.arch, &v.key) else { continue };
        let (severity, proposal) = match KINDS.get(s.kind) {
            Some(kind) => (Severity::Error, format!("the stored {kind} differ from nvdisasm's: store the learned conventions")),
            None => (Severity::Note, "no conventions are stored for this form: learned from nvdisasm for this run (fix stores them)".to_string()),
        };
        let mut f = finding(codec, s.vi, l, &nv.version, severity);
        f.word = s.word.hex();
        f.expected = s.expected.clone();
        f.actual = actual;
        f.proposal = Some(proposal);
        out.entry(v.file.clone()).or_default().push(f);
    }
    Ok(out)
}

/// Each shown word's address and outcome: from `seen`, else from one batch of the
/// others (word `i` of it at address `16 i`).
fn outcomes(nv: &Nvdisasm, codec: &Codec, shown: &[Shown], seen: &Seen) -> Result<Vec<(u64, Outcome)>, NvdisasmError> {
    let unseen: Vec<Word> = shown.iter().map(|s| s.word).filter(|w| !seen.contains_key(w)).collect();
    // `vis` are one architecture's (validation groups pages by architecture).
    let sent = match shown.first() {
        Some(first) if !unseen.is_empty() => nv.disassemble(&codec.variant(first.vi).arch.nvdisasm_name(), &unseen)?,
        _ => vec![],
    };
    let mut sent = sent.into_iter().enumerate();
    let mut next = || sent.next().map(|(i, o)| (16 * i as u64, o)).unwrap_or((0, Outcome::Silent));
    Ok(shown.iter().map(|s| seen.get(&s.word).cloned().unwrap_or_else(&mut next)).collect())
}

/// nvdisasm's `text` of a word of `v` at address `addr` with its branch targets as at
/// address 0, as the codec prints them and findings show them (a note's word then
/// reproduces wherever it is run: `BRA P0, 0x10`, not this batch's `0x640`).
fn at_zero(v: &crate::spec::Variant, text: String, addr: u64) -> String {
    let targets = v.target_operands();
    if targets.is_empty() || crate::codec::conventions::target_is_absolute(&text) {
        return text;
    }
    crate::codec::conventions::target_at_zero(&text, &targets, v.operands.len(), addr)
}

/// A finding of variant `vi` whose correction stores `l`.
fn finding(codec: &Codec, vi: usize, l: &FormConventions, tool: &str, severity: Severity) -> Finding {
    let v = codec.variant(vi);
    let control = StoredControl::of(l).ok();
    let edits = control.map(|control| vec![Edit::Conventions { variant: v.key.clone(), form: StoredForm::of(l, control.id()), control }]).unwrap_or_default();
    let diff = edits.first().map(|e| e.describe()).unwrap_or_default();
    Finding {
        arch: v.arch,
        variant: v.key.clone(),
        class: Class::Syntax,
        severity,
        page: v.file.clone(),
        line: v.line,
        field: None,
        bits: vec![],
        word: String::new(),
        expected: String::new(),
        actual: String::new(),
        proposal: None,
        correction: (!edits.is_empty()).then_some(Correction { edits, fixes: 1, regressions: 0, probes: 1, diff }),
        occurrences: 1,
        tool: tool.to_string(),
    }
}
