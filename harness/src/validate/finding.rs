//! What validation reports: one finding per disagreement (merged), and per-variant tallies.

use crate::oracle::nvdisasm::Outcome;
use crate::spec::Arch;
use crate::word::Word;
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A field's bits are not where (or as wide as) the page says.
    FieldBits,
    /// A table row's name is wrong, or a value the table omits prints a name.
    TableRow,
    /// A cABS/cNEG/selector flag applies to another operand (or is another flag).
    FlagOperand,
    /// Two fields interact: together they print what neither predicts alone.
    Interaction,
    /// nvdisasm rejects (or prints nothing for) a word the page describes.
    Legality,
    /// nvdisasm accepts a word the page cannot express (a fixed bit that selects a meaning).
    Unexpressible,
    /// A bit the page calls fixed changes nothing nvdisasm prints.
    FixedIgnored,
    /// A word this form's fixed bits (or an unlisted table value) exclude that nvdisasm
    /// prints as a form no variant of the spec decodes: a coverage gap for discovery, not
    /// a mistake of this page (a note, unless a page edit explains it).
    MissingForm,
    /// Same meaning, different text (spacing, float spelling, modifier order).
    Syntax,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::FieldBits,
        Class::TableRow,
        Class::FlagOperand,
        Class::Interaction,
        Class::Legality,
        Class::Unexpressible,
        Class::FixedIgnored,
        Class::MissingForm,
        Class::Syntax,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Class::FieldBits => "field_bits",
            Class::TableRow => "table_row",
            Class::FlagOperand => "flag_operand",
            Class::Interaction => "interaction",
            Class::Legality => "legality",
            Class::Unexpressible => "unexpressible",
            Class::FixedIgnored => "fixed_ignored",
            Class::MissingForm => "missing_form",
            Class::Syntax => "syntax",
        }
    }
}

/// How much a finding asks of the page's author.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A page mistake: a page edit ([`Correction`]) explains it, verified against nvdisasm.
    Error,
    /// nvdisasm disagrees and no page edit explains it: the harness's own model, or
    /// something the page format cannot say (`proposal` says which).
    Warning,
    /// Fixed bits nvdisasm ignores, constraints among control fields, spelling only.
    Note,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Note];
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

pub use crate::spec::edit::Edit;

/// A page edit and the evidence that it is right.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Correction {
    pub edits: Vec<Edit>,
    /// Probe words of the variant that disagreed with the page and agree with the edit.
    pub fixes: usize,
    /// Probe words that agreed with the page and disagree with the edit: always 0 for a
    /// correction that is reported (the verification's condition).
    pub regressions: usize,
    /// Probe words judged under the edit.
    pub probes: usize,
    /// The edit as a unified diff of the page file.
    pub diff: String,
}

/// One reproducible disagreement between a page and nvdisasm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Written as nvdisasm names it (`"SM90"`).
    #[serde(with = "arch_name")]
    pub arch: Arch,
    pub variant: String,
    pub class: Class,
    pub severity: Severity,
    /// The page file and the 1-based line of what the finding blames (the layout row of the
    /// field, the table row, the heading); the variant's heading line when nothing narrower.
    pub page: String,
    pub line: usize,
    /// The page's field the finding is about, if any.
    pub field: Option<String>,
    /// The word bits involved, ascending.
    pub bits: Vec<u8>,
    /// 32 hex digits, bit 127 first: `nvdisasm -b <arch> -hex` on it reproduces `actual`.
    pub word: String,
    /// What the page predicts nvdisasm prints.
    pub expected: String,
    /// What nvdisasm printed (or `<illegal: …>`, `<silent>`).
    pub actual: String,
    /// What the finding means, in a sentence: the correction, or why there is none.
    pub proposal: Option<String>,
    /// The verified page edit behind an `error` (none for warnings and notes).
    pub correction: Option<Correction>,
    /// How many probe words showed this same disagreement.
    pub occurrences: usize,
    /// nvdisasm's version line.
    pub tool: String,
}

impl Finding {
    /// One more word showed this finding; its bits join the finding's.
    pub fn add_occurrence(&mut self, bits: Vec<u8>) {
        self.occurrences += 1;
        self.bits.extend(bits);
        self.bits.sort_unstable();
        self.bits.dedup();
    }

    pub fn word(&self) -> Option<Word> {
        Word::parse_hex(&self.word)
    }
}

/// An [`Arch`] in findings and summaries as nvdisasm's `-b` name (`"SM90"`), as they
/// always were.
mod arch_name {
    use crate::spec::Arch;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(a: &Arch, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&a.nvdisasm_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arch, D::Error> {
        let name = String::deserialize(d)?;
        name.strip_prefix("SM")
            .and_then(|n| n.parse().ok())
            .map(Arch)
            .ok_or_else(|| serde::de::Error::custom(format!("'{name}' is not an architecture such as SM90")))
    }
}

/// How an illegal outcome is rendered in `actual`.
pub fn illegal_text(message: &str) -> String {
    format!("{ILLEGAL_PREFIX}{message}>")
}
/// How `actual` starts when nvdisasm rejected the word.
pub const ILLEGAL_PREFIX: &str = "<illegal: ";
pub const SILENT: &str = "<silent>";

/// An nvdisasm outcome as a finding's `actual` shows it.
pub fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Printed { text } => text.clone(),
        Outcome::Illegal { message } => illegal_text(message),
        Outcome::Silent => SILENT.to_string(),
    }
}

/// Per-variant tallies for the summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantSummary {
    #[serde(with = "arch_name")]
    pub arch: Arch,
    pub variant: String,
    pub page: String,
    pub words: usize,
    pub agreeing: usize,
    /// Findings (after merging) by class name.
    pub findings: std::collections::BTreeMap<String, usize>,
    /// Per bit 0..127: "verified", "disputed", "unconfirmed" or "fixed".
    pub bit_status: Vec<BitStatus>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BitStatus {
    /// A probe isolating this bit agreed with the page.
    Verified,
    /// A finding names this bit.
    Disputed,
    /// Nothing nvdisasm prints can confirm it (control bits), or no probe isolated it.
    Unconfirmed,
}
