//! One word judged: what the spec says nvdisasm prints for it (the offline print with the
//! stored conventions, or a rejection the spec predicts), against what nvdisasm did.

use crate::codec::conventions::target_at_zero;
use crate::codec::{print_word, Codec};
use crate::compare::{changed, compare, Element, Part, Verdict};
use crate::oracle::nvdisasm::Outcome;
use crate::spec::conventions::barrier_index;
use crate::spec::{Arch, FieldKind};
use crate::validate::finding::{outcome_text, Class, Severity};
use crate::word::Word;

/// The form the spec gives a word: the one it decodes as, else the one its input built it
/// as (a word the spec encodes but cannot decode is still that form's), else none.
pub fn form_of(codec: &Codec, arch: Arch, word: Word, built_as: Option<usize>) -> Option<usize> {
    codec.decode(arch, word).ok().map(|(vi, _)| vi).or(built_as)
}

/// What the spec predicts nvdisasm does with a word of form `vi`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Prints exactly this line.
    Text(String),
    /// Rejects it, for this reason.
    Rejected(String),
}

impl Expect {
    /// As a finding's `expected` shows it.
    pub fn shown(&self) -> String {
        match self {
            Expect::Text(t) => t.clone(),
            Expect::Rejected(why) => format!("<rejected: {why}>"),
        }
    }
}

/// The spec's own prediction: a rejection when the stored conventions reject the word's
/// control bits or a field holds a value the page calls illegal, else the offline print.
pub fn expect(codec: &Codec, vi: usize, word: Word) -> Expect {
    let v = codec.variant(vi);
    let values = codec.extract(vi, word);
    if let Some(c) = v.conventions.as_deref() {
        if !c.legal(word) {
            return Expect::Rejected("the stored conventions reject its stall/yield/reuse bits".into());
        }
        if !c.legal_barriers().contains(&barrier_index(word)) {
            return Expect::Rejected("the stored conventions reject its barrier bits".into());
        }
    }
    if let Some(fi) = (0..v.fields.len()).find(|&fi| v.value_illegal(fi, values.get(fi))) {
        return Expect::Rejected(format!("the page calls {} = {:#x} illegal", v.fields[fi].name, values.get(fi)));
    }
    Expect::Text(print_word(v, &values, word).to_string())
}

/// A word on which the spec and nvdisasm disagree.
#[derive(Clone, Debug, PartialEq)]
pub struct Disagreement {
    pub class: Class,
    pub severity: Severity,
    /// The elements that differ (`op1.body`, `mods`, …), or what happened (`rejected`,
    /// `printed`, `no form`): with the class, what minimization keeps constant.
    pub elements: Vec<String>,
    /// The field of form `vi` the first differing element belongs to, if any.
    pub field: Option<usize>,
    pub expected: String,
    pub actual: String,
}

impl Disagreement {
    /// What one finding stands for, and what must stay the same while a word is
    /// minimized: the class and the field blamed (else the first differing element). The
    /// flags riding on an operand (`op1.neg`) do not split a field's finding.
    pub fn signature(&self) -> (Class, String) {
        let anchor = match self.field {
            Some(fi) => format!("field {fi}"),
            None => self.elements.first().cloned().unwrap_or_default(),
        };
        (self.class, anchor)
    }
}

/// Judges `word` of form `vi` (none: the spec has no form for it), which nvdisasm saw at
/// address `addr`, given the spec's expectation `exp` (for `vi`). `None`: they agree.
pub fn judge(codec: &Codec, vi: Option<usize>, word: Word, addr: u64, exp: Option<&Expect>, out: &Outcome) -> Option<Disagreement> {
    let printed = match out {
        Outcome::Printed { text } => Some(text.as_str()),
        _ => None,
    };
    let (Some(vi), Some(exp)) = (vi, exp) else {
        // No form: nvdisasm rejecting it agrees with the spec's silence.
        let text = printed?;
        let mnemonic = crate::sass::parse_instruction(text).map(|i| i.mnemonic).unwrap_or_default();
        return Some(Disagreement {
            class: Class::Unexpressible,
            severity: Severity::Warning,
            elements: vec![format!("no form ({mnemonic})")],
            field: None,
            expected: "<no form of the spec decodes it>".into(),
            actual: text.to_string(),
        });
    };
    let v = codec.variant(vi);
    match (exp, printed) {
        (Expect::Rejected(_), None) => None,
        (Expect::Rejected(_), Some(text)) => Some(legality(exp, text.to_string(), "printed")),
        (Expect::Text(_), None) => Some(legality(exp, outcome_text(out), "rejected")),
        (Expect::Text(e), Some(text)) => {
            let text = target_at_zero(text, &v.target_operands(), v.operands.len(), addr);
            if *e == text {
                return None;
            }
            Some(differ(codec, vi, word, e, text))
        }
    }
}

fn legality(exp: &Expect, actual: String, what: &str) -> Disagreement {
    Disagreement { class: Class::Legality, severity: Severity::Warning, elements: vec![what.into()], field: None, expected: exp.shown(), actual }
}

/// Two texts that differ: spelling only (a note), or elements that differ (a warning: no
/// verified page edit explains it here; `validate` proposes those).
fn differ(codec: &Codec, vi: usize, word: Word, expected: &str, actual: String) -> Disagreement {
    let v = codec.variant(vi);
    let exp = print_word(v, &codec.extract(vi, word), word);
    let Ok(act) = crate::sass::parse_instruction(&actual) else {
        return Disagreement {
            class: Class::Interaction,
            severity: Severity::Warning,
            elements: vec!["text".into()],
            field: None,
            expected: expected.into(),
            actual,
        };
    };
    match compare(&exp, &act) {
        Verdict::Agree | Verdict::Syntax(_) => {
            let what = match compare(&exp, &act) {
                Verdict::Syntax(s) => s.to_string(),
                _ => "spacing".to_string(),
            };
            Disagreement { class: Class::Syntax, severity: Severity::Note, elements: vec![what], field: None, expected: expected.into(), actual }
        }
        Verdict::Differ => {
            let elements = changed(&exp, &act);
            let (class, field) = match elements.first() {
                Some(&first) => (class_of(first), field_of(v, first)),
                None => (Class::FieldBits, None),
            };
            let elements = elements.iter().map(Element::to_string).collect();
            Disagreement { class, severity: Severity::Warning, elements, field, expected: expected.into(), actual }
        }
    }
}

/// The class an element's difference suggests.
fn class_of(element: Element) -> Class {
    match element {
        Element::Mods => Class::TableRow,
        Element::Mnemonic | Element::Arity => Class::Interaction,
        Element::Operand { part: Part::Neg | Part::Abs | Part::Not | Part::Sfx, .. } => Class::FlagOperand,
        _ => Class::FieldBits,
    }
}

/// The field behind an element: the guard's, or the first value field of operand `k`.
fn field_of(v: &crate::spec::Variant, element: Element) -> Option<usize> {
    match element {
        Element::Pred => v.fields.iter().position(|f| f.kind == FieldKind::Pred),
        Element::Operand { k, .. } => v.operands.get(k)?.value_fields.iter().flatten().copied().next(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_map_to_classes() {
        assert_eq!(class_of(Element::Mods), Class::TableRow);
        assert_eq!(class_of(Element::Operand { k: 2, part: Part::Neg }), Class::FlagOperand);
        assert_eq!(class_of(Element::Operand { k: 0, part: Part::Body }), Class::FieldBits);
        assert_eq!(class_of(Element::Mnemonic), Class::Interaction);
    }

    #[test]
    fn a_word_printed_as_the_spec_says_agrees_and_a_changed_text_does_not() {
        let spec = crate::spec::builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&spec);
        // DFMA R4, R2, R6, R8 as ptxas writes it.
        let w = Word::parse_hex("004fc80000000008000000060204722b").unwrap();
        let vi = form_of(&c, Arch(90), w, None).unwrap();
        let e = expect(&c, vi, w);
        assert_eq!(e, Expect::Text("DFMA R4, R2, R6, R8 ;".into()));
        let ok = Outcome::Printed { text: "DFMA R4, R2, R6, R8 ;".into() };
        assert_eq!(judge(&c, Some(vi), w, 0, Some(&e), &ok), None);
        let bad = Outcome::Printed { text: "DFMA R5, R2, R6, R8 ;".into() };
        let d = judge(&c, Some(vi), w, 0, Some(&e), &bad).unwrap();
        assert_eq!((d.class, d.elements.clone()), (Class::FieldBits, vec!["op0.body".to_string()]));
        assert!(d.field.is_some());
        let spaced = Outcome::Printed { text: "DFMA R4, R2, R6, R8;".into() };
        assert_eq!(judge(&c, Some(vi), w, 0, Some(&e), &spaced).unwrap().class, Class::Syntax);
        let rejected = Outcome::Illegal { message: "x".into() };
        assert_eq!(judge(&c, Some(vi), w, 0, Some(&e), &rejected).unwrap().class, Class::Legality);
        // No form: only a printed word disagrees.
        assert_eq!(judge(&c, None, w, 0, None, &rejected), None);
        assert_eq!(judge(&c, None, w, 0, None, &ok).unwrap().class, Class::Unexpressible);
    }
}
