//! From disagreements to page corrections: a finding blames the page (severity `error`)
//! only when a page edit explains it. Candidate edits are read off the probes (where each
//! bit's flip landed, what each table value printed); each candidate is applied to the page
//! text, the text is parsed again, and every probe word of the variant is judged anew: the
//! edit is kept when some words that disagreed now agree and none that agreed now
//! disagrees. Disagreements no kept edit explains are warnings; fixed bits nvdisasm
//! ignores, control-field constraints and spelling are notes.

use super::finding::{Class, Correction, Finding, Severity};
use crate::codec::conventions::FormConventions;
use crate::codec::print::row_tokens;
use crate::codec::{self, Codec};
use crate::compare::{changed, compare, Element, Part, Verdict};
use crate::oracle::nvdisasm::Outcome;
use crate::sass::{self, Instruction};
use crate::spec::edit::{self, Edit};
use crate::spec::{FieldKind, FlagRole, ModSlot, Page, RowKind, Spec, Variant};
use crate::word::Word;
use std::collections::{BTreeMap, HashMap};

/// How one probe word reads against a version of the page.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum V {
    Agree,
    /// nvdisasm prints another meaning than the page predicts (or a bit the page calls
    /// fixed changes an operand).
    Differ,
    /// The page calls a bit of the word fixed, and nvdisasm ignores it: what a corrected
    /// page that narrows a field predicts, and only a note.
    Ignored,
    /// Illegal words, spelling, other variants: no evidence either way.
    Other,
}

fn printed(o: &Outcome) -> Option<Instruction> {
    match o {
        Outcome::Printed { text } => sass::parse_instruction(text).ok(),
        _ => None,
    }
}

/// A probe word of the variant as triage reads it: the word, nvdisasm's outcome, and,
/// where judging it compared the page's prediction with nvdisasm's text (a random
/// word), that comparison's verdict (`Agree` where the texts were the same): the page as
/// written is judged the same way here, so its verdict on the word is read, not worked
/// out again (printing, parsing and comparing were most of triage's time).
pub struct Observed<'o> {
    pub word: Word,
    pub outcome: &'o Outcome,
    pub compared: Option<Verdict>,
}

/// The verdict of [`Judge::verdict_of`] on a comparison that gave `v`.
fn of_comparison(v: Verdict) -> V {
    match v {
        Verdict::Agree => V::Agree,
        Verdict::Syntax(_) => V::Other,
        Verdict::Differ => V::Differ,
    }
}

/// A version of the page, parsed, with the variant under judgement.
struct Version {
    spec: Spec,
    text: String,
}

impl Version {
    fn parse(file: &str, text: String) -> Option<Version> {
        let page = crate::spec::parse_page(file, text.as_bytes()).ok()?;
        Some(Version { spec: Spec { pages: vec![page] }, text })
    }
    fn page(&self) -> &Page {
        &self.spec.pages[0]
    }
}

/// Judges words against one version of the page.
struct Judge<'a> {
    codec: Codec<'a>,
    vi: usize,
    base: Option<&'a Instruction>,
    /// The variant's printing with the learned conventions, built once (every probe word
    /// of the variant is judged).
    printer: codec::FormPrinter<'a>,
    /// This is the page as written, whose comparisons judging kept ([`Observed`]).
    as_written: bool,
}

/// nvdisasm's text of an observed word, parsed only when a verdict needs more than the
/// text: most words of a version print it exactly. The verdicts of the last few versions'
/// predicted texts that differed from it are kept: most candidate edits leave most words'
/// texts as the page as written prints them, and the predicted instruction a verdict
/// compares is the one that prints as its text.
struct Seen<'o> {
    text: Option<&'o str>,
    parsed: std::cell::OnceCell<Option<Instruction>>,
    judged: std::cell::RefCell<Vec<(Box<str>, V)>>,
    /// The page as written's verdict, where judging kept it ([`Observed::compared`]).
    as_written: Option<V>,
}

/// How many predicted texts a [`Seen`] keeps verdicts for.
const JUDGED_TEXTS: usize = 4;

impl<'o> Seen<'o> {
    fn new(o: &'o Outcome) -> Seen<'o> {
        let text = match o {
            Outcome::Printed { text } => Some(text.as_str()),
            _ => None,
        };
        Seen { text, parsed: std::cell::OnceCell::new(), judged: Default::default(), as_written: None }
    }

    fn observed(o: &Observed<'o>) -> Seen<'o> {
        Seen { as_written: o.compared.map(of_comparison), ..Seen::new(o.outcome) }
    }

    fn parsed(&self) -> Option<&Instruction> {
        self.parsed.get_or_init(|| self.text.and_then(|t| sass::parse_instruction(t).ok())).as_ref()
    }

    /// The verdict on a prediction printed as `predicted`, judged once per text.
    fn verdict(&self, predicted: &str, judge: impl FnOnce(&Instruction) -> V) -> V {
        if let Some((_, v)) = self.judged.borrow().iter().find(|(t, _)| &**t == predicted) {
            return *v;
        }
        let Some(actual) = self.parsed() else { return V::Other };
        let v = judge(actual);
        self.keep(predicted, v)
    }

    /// Keeps `v` as the verdict on `predicted`.
    fn keep(&self, predicted: &str, v: V) -> V {
        let mut judged = self.judged.borrow_mut();
        if judged.len() == JUDGED_TEXTS {
            judged.remove(0);
        }
        judged.push((predicted.into(), v));
        v
    }
}

impl<'a> Judge<'a> {
    fn new(version: &'a Version, key: &str, base: Option<&'a Instruction>, learned: Option<&'a FormConventions>) -> Option<Judge<'a>> {
        let codec = Codec::new(&version.spec);
        let vi = codec.index_of(key, None)?;
        let printer = codec::FormPrinter::new(codec.variant(vi), learned);
        Some(Judge { codec, vi, base, printer, as_written: false })
    }

    /// This judge, of the page as written: it reads the verdicts judging kept.
    fn of_page_as_written(self) -> Judge<'a> {
        Judge { as_written: true, ..self }
    }

    /// What the version predicts for `word` of its variant `v`.
    fn expect(&self, v: &Variant, word: Word) -> Instruction {
        self.printer.print_word(v, &self.codec.extract(self.vi, word), word)
    }

    fn verdict(&self, word: Word, o: &Outcome) -> V {
        self.verdict_of(word, &Seen::new(o))
    }

    /// The verdict on `word`, of which nvdisasm printed `seen`. The prediction is printed
    /// as text first: the same text as nvdisasm's agrees (the printed text is the
    /// predicted instruction's: equal texts compare alike), and another text is compared
    /// once per `seen` ([`Seen::verdict`]).
    fn verdict_of(&self, word: Word, seen: &Seen) -> V {
        let v = self.codec.variant(self.vi);
        let Some(text) = seen.text else { return V::Other };
        match self.codec.find(v.arch, word) {
            Ok(vi) if vi == self.vi => {
                // Judging found the page as written's text the same as nvdisasm's, or
                // one that compares alike: agreed, not printed again (a word whose text
                // compared otherwise is printed below, its verdict kept by that text).
                if let (true, Some(V::Agree)) = (self.as_written, seen.as_written) {
                    return V::Agree;
                }
                let values = self.codec.extract(self.vi, word);
                let mut predicted = String::with_capacity(text.len());
                self.printer.print_word_into(v, &values, word, &mut predicted);
                if predicted == text {
                    return V::Agree;
                }
                if let (true, Some(v)) = (self.as_written, seen.as_written) {
                    return seen.keep(&predicted, v);
                }
                seen.verdict(&predicted, |actual| match compare(&self.printer.print_word(v, &values, word), actual) {
                    Verdict::Agree => V::Agree,
                    Verdict::Syntax(_) => V::Other,
                    Verdict::Differ => V::Differ,
                })
            }
            Ok(_) => V::Other,
            Err(_) => self.verdict_elsewhere(v, word, seen),
        }
    }

    /// The verdict on `word`, which the version cannot express.
    fn verdict_elsewhere(&self, v: &Variant, word: Word, seen: &Seen) -> V {
        let Some(actual) = seen.parsed() else { return V::Other };
        // With its fixed bits restored it is one the page describes: printing that word's
        // text means the bits are ignored.
        let restored = restore_fixed(v, word);
        if self.codec.find(v.arch, restored) == Ok(self.vi) {
            return if compare(&self.expect(v, restored), actual) == Verdict::Differ { V::Differ } else { V::Ignored };
        }
        match self.base {
            // Evidence against the page when it prints this variant's instruction with a
            // changed operand.
            Some(b) if same_shape(b, actual) && !changed(b, actual).is_empty() => V::Differ,
            Some(b) if same_shape(b, actual) => V::Ignored,
            _ => V::Other,
        }
    }

    /// Is this version an edit to keep, against the `current` verdicts on `obs`: does it
    /// explain some words that differed (its fixes), and make none that agreed differ?
    /// Then its fixes and verdicts on every word. The words that agreed and those that
    /// differed are judged in turn, so that either way of failing ends it early: the
    /// first regression, or the last differing word with nothing fixed (an edit that
    /// fixes nothing is often judged on a few differing words against some 10 000 that
    /// agreed).
    fn weigh(&self, obs: &[Observed], seen: &[Seen], current: &[V]) -> Option<(usize, Vec<V>)> {
        let mut next: Vec<Option<V>> = vec![None; obs.len()];
        let (agreed, differed): (Vec<usize>, Vec<usize>) =
            (0..obs.len()).filter(|&i| matches!(current[i], V::Agree | V::Differ)).partition(|&i| current[i] == V::Agree);
        if differed.is_empty() {
            return None;
        }
        let mut verdict = |i: usize| *next[i].insert(self.verdict_of(obs[i].word, &seen[i]));
        let mut fixes = 0;
        for k in 0..agreed.len().max(differed.len()) {
            if agreed.get(k).is_some_and(|&i| verdict(i) == V::Differ) {
                return None;
            }
            if let Some(&i) = differed.get(k) {
                fixes += usize::from(explained(verdict(i)));
            }
            if k + 1 == differed.len() && fixes == 0 {
                return None;
            }
        }
        let next = next.into_iter().zip(obs.iter().zip(seen)).map(|(n, (o, s))| n.unwrap_or_else(|| self.verdict_of(o.word, s))).collect();
        Some((fixes, next))
    }

    /// The verdicts on `obs`, nvdisasm's texts as `seen` (each parsed at most once for
    /// every version judged).
    fn verdicts(&self, obs: &[Observed], seen: &[Seen]) -> Vec<V> {
        obs.iter().zip(seen).map(|(o, s)| self.verdict_of(o.word, s)).collect()
    }
}

/// `word` with the bits the variant calls fixed set to their fixed values.
fn restore_fixed(v: &Variant, word: Word) -> Word {
    Word(word.0 & !v.fixed_mask.0 | v.fixed_value.0)
}

/// A disagreement a page edit explains: the word agrees with the edited page, or the
/// edited page calls the disputed bit fixed and nvdisasm ignores it.
fn explained(v: V) -> bool {
    matches!(v, V::Agree | V::Ignored)
}

/// Same mnemonic and operand kinds: the same instruction form.
fn same_shape(a: &Instruction, b: &Instruction) -> bool {
    let kinds = |i: &Instruction| i.operands.iter().map(|o| std::mem::discriminant(&o.body)).collect::<Vec<_>>();
    a.mnemonic == b.mnemonic && kinds(a) == kinds(b)
}

/// What flipping one bit did to the zero word's text.
enum Effect {
    Ignored,
    /// The value of page operand `po` changed.
    Value(usize),
    /// `cABS`/`cNEG` of the form operand at this index appeared.
    Flag(&'static str),
    /// Modifiers appeared that only this modifier-group field's table lists.
    Group(usize),
}

fn effect(v: &Variant, base: &Instruction, actual: &Instruction) -> Option<Effect> {
    if !same_shape(base, actual) {
        return None;
    }
    let ch = changed(base, actual);
    let [el] = ch.as_slice() else { return if ch.is_empty() { Some(Effect::Ignored) } else { None } };
    if *el == Element::Mods {
        let new = minus(&actual.modifiers, &base.modifiers);
        let lists =
            |fi: usize| v.field_table(fi).is_some_and(|t| t.rows.iter().any(|r| !new.is_empty() && new.iter().all(|x| r.tokens().contains(&x.as_str()))));
        let groups: Vec<usize> = (0..v.fields.len()).filter(|&fi| matches!(v.fields[fi].kind, FieldKind::Group { .. }) && lists(fi)).collect();
        return match groups.as_slice() {
            [fi] => Some(Effect::Group(*fi)),
            _ => None,
        };
    }
    let Element::Operand { k, part } = *el else { return None };
    let o = v.operands.get(k)?;
    match part {
        Part::Body | Part::Bank => o.page_operands.first().map(|&po| Effect::Value(po)),
        Part::Offset => o.page_operands.get(1).map(|&po| Effect::Value(po)),
        Part::Neg => Some(Effect::Flag("cNEG")),
        Part::Abs => Some(Effect::Flag("cABS")),
        Part::Not => Some(Effect::Flag("cNOT")),
        Part::Sfx => None,
    }
}

/// Where the page's layout and the single-bit probes disagree, the layout the probes
/// show: operand bits moved, dropped (nvdisasm ignores them) or found among fixed bits;
/// cABS/cNEG/cNOT flags found among fixed bits or renamed.
fn layout_candidate(v: &Variant, by_word: &HashMap<Word, &Outcome>, base_word: Word, base: &Instruction) -> Vec<Edit> {
    let owner = |b: u8| v.fields.iter().position(|f| f.bits.contains(&b));
    let mut sets: BTreeMap<String, Vec<u8>> =
        v.fields.iter().filter(|f| matches!(f.kind, FieldKind::Operand { .. } | FieldKind::Group { .. })).map(|f| (f.name.clone(), f.bits.clone())).collect();
    let before = sets.clone();
    let mut flags = vec![];
    for b in 0..105u8 {
        let own = owner(b);
        let movable = match own {
            None => !v.fixed_value.bit(b),
            Some(fi) => {
                matches!(
                    v.fields[fi].kind,
                    FieldKind::Operand { .. } | FieldKind::Group { .. } | FieldKind::Flag { role: FlagRole::Abs | FlagRole::Neg | FlagRole::Not, .. }
                )
            }
        };
        let actual = by_word.get(&base_word.flip(b)).and_then(|o| printed(o));
        let (true, Some(actual)) = (movable, actual) else { continue };
        let own_name = own.map(|fi| v.fields[fi].name.clone());
        match (effect(v, base, &actual), &own_name) {
            (Some(Effect::Ignored), Some(n)) if sets.contains_key(n) => sets.get_mut(n).unwrap().retain(|&x| x != b),
            (Some(e @ (Effect::Value(_) | Effect::Group(_))), _) => {
                let target = match e {
                    Effect::Value(po) => format!("operand {po}"),
                    Effect::Group(fi) => v.fields[fi].name.clone(),
                    _ => unreachable!(),
                };
                if own_name.as_ref() != Some(&target) && sets.contains_key(&target) {
                    for s in sets.values_mut() {
                        s.retain(|&x| x != b);
                    }
                    sets.get_mut(&target).unwrap().push(b);
                }
            }
            (Some(Effect::Flag(name)), None) => flags.push(Edit::FixedToFlag { variant: v.key.clone(), bit: b, name: name.into() }),
            (Some(Effect::Flag(name)), Some(n))
                if n != name
                    && own.is_some_and(|fi| matches!(&v.fields[fi].kind, FieldKind::Flag { role: FlagRole::Abs | FlagRole::Neg | FlagRole::Not, .. })) =>
            {
                flags.push(Edit::RenameFlag { variant: v.key.clone(), bit: b, from: n.clone(), to: name.into() })
            }
            _ => {}
        }
    }
    let mut edits: Vec<Edit> = sets
        .into_iter()
        .filter(|(n, s)| before.get(n) != Some(s) && !s.is_empty())
        .map(|(field, mut bits)| {
            bits.sort_unstable();
            Edit::FieldBits { variant: v.key.clone(), field, bits }
        })
        .collect();
    edits.extend(flags);
    edits
}

/// Tokens of `a` not matched in `b` (multiset difference, order of `a` kept).
fn minus(a: &[String], b: &[String]) -> Vec<String> {
    let mut rest: Vec<&String> = b.iter().collect();
    a.iter()
        .filter(|t| match rest.iter().position(|x| x == t) {
            Some(i) => {
                rest.remove(i);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

/// Per modifier-group field: the row names its values print, and the heading without
/// modifiers nvdisasm does not print with every value.
fn table_candidates(v: &Variant, codec: &Codec, vi: usize, by_word: &HashMap<Word, &Outcome>) -> Vec<Vec<Edit>> {
    let fixed: Vec<String> = v.modifiers.iter().filter_map(|m| if let ModSlot::Fixed { text } = m { Some(text.clone()) } else { None }).collect();
    let mut out = vec![];
    for slot in &v.modifiers {
        let ModSlot::Group { field, hidden_zero } = slot else { continue };
        let Some(t) = v.field_table(*field) else { continue };
        let mut seen: Vec<(u64, Vec<String>, Vec<String>)> = vec![];
        let mut heading_missing = false;
        for x in 0..(1u64 << t.width) {
            let mut vals = crate::gen::base_values(v);
            vals.set(*field, x);
            let Some(actual) = by_word.get(&codec.encode_unchecked(vi, &vals)).and_then(|o| printed(o)) else { continue };
            let own = if *hidden_zero && x == 0 { vec![] } else { row_tokens(Some(t), x) };
            let others = minus(&codec::print(v, &vals).modifiers, &own);
            heading_missing |= fixed.iter().any(|f| !actual.modifiers.contains(f));
            seen.push((x, actual.modifiers.clone(), others));
        }
        let mut edits = vec![];
        if heading_missing {
            edits.push(Edit::Heading { variant: v.key.clone(), from: v.heading.clone(), to: v.mnemonic.clone() });
        }
        for (x, actual, others) in seen {
            let others = if heading_missing { minus(&others, &fixed) } else { others };
            let toks = minus(&actual, &others);
            let name = if toks.is_empty() { "(default)".to_string() } else { toks.join(".") };
            let row = t.row(x);
            let same = row.is_some_and(|r| r.name == name || (r.kind == RowKind::Default && toks.is_empty()));
            if !same && (row.is_some() || !toks.is_empty()) {
                edits.push(Edit::RowName { variant: v.key.clone(), table: t.title.clone(), value: x, width: t.width, from: row.map(|r| r.name.clone()), name });
            }
        }
        if !edits.is_empty() {
            out.push(edits);
        }
    }
    out
}

/// Two modifier groups that nvdisasm reads as one field (I2F: signedness and width print
/// `U16`, `S16`, not `U8.U16`): the first takes both fields' bits and a table of what
/// every combination printed; the second and its table go.
fn merge_candidates(v: &Variant, codec: &Codec, vi: usize, by_word: &HashMap<Word, &Outcome>) -> Vec<Vec<Edit>> {
    let zero = crate::gen::base_values(v);
    let mut out = vec![];
    let mut pairs: Vec<(usize, usize)> = super::group_pairs(v).into_iter().map(|(a, b, _, _)| (a, b)).collect();
    pairs.dedup();
    for (a, b) in pairs {
        let (Some(ta), Some(tb)) = (v.field_table(a), v.field_table(b)) else { continue };
        let others = minus(&minus(&codec::print(v, &zero).modifiers, &row_tokens(Some(ta), 0)), &row_tokens(Some(tb), 0));
        let mut bits: Vec<u8> = v.fields[a].bits.iter().chain(&v.fields[b].bits).copied().collect();
        bits.sort_unstable();
        let mut rows = vec![];
        let mut differs = false;
        for x in 0..=v.fields[a].max() {
            for y in 0..=v.fields[b].max() {
                let mut vals = zero;
                vals.set(a, x);
                vals.set(b, y);
                let Some(o) = by_word.get(&codec.encode_unchecked(vi, &vals)) else { return out };
                let value = merged_value(&bits, &v.fields[a].bits, x, &v.fields[b].bits, y);
                let name = match printed(o) {
                    Some(i) => {
                        differs |= i.modifiers != codec::print(v, &vals).modifiers;
                        let toks = minus(&i.modifiers, &others);
                        if toks.is_empty() {
                            "(default)".to_string()
                        } else {
                            toks.join(".")
                        }
                    }
                    None => format!("INVALID{value}"),
                };
                rows.push((value, name));
            }
        }
        if !differs {
            continue;
        }
        rows.sort();
        out.push(vec![
            Edit::FieldBits { variant: v.key.clone(), field: v.fields[a].name.clone(), bits: bits.clone() },
            Edit::Table { variant: v.key.clone(), table: ta.title.clone(), width: bits.len() as u32, rows },
            Edit::RemoveTable { variant: v.key.clone(), table: tb.title.clone() },
        ]);
    }
    out
}

/// The value of a field on `bits` (increasing) holding `x` on `a`'s bits and `y` on `b`'s.
fn merged_value(bits: &[u8], a: &[u8], x: u64, b: &[u8], y: u64) -> u64 {
    bits.iter().enumerate().fold(0, |acc, (k, bit)| {
        let set = match (a.iter().position(|p| p == bit), b.iter().position(|p| p == bit)) {
            (Some(i), _) => x >> i & 1,
            (_, Some(j)) => y >> j & 1,
            _ => 0,
        };
        acc | set << k
    })
}

/// Classes that never blame the page.
fn is_note(f: &Finding, v: &Variant) -> bool {
    match f.class {
        Class::FixedIgnored | Class::Syntax => true,
        Class::Legality => f.field.as_ref().is_none_or(|n| v.fields.iter().any(|x| &x.name == n && x.is_control())),
        _ => false,
    }
}

fn outcome_of(f: &Finding) -> Outcome {
    if f.actual.starts_with('<') {
        Outcome::Silent
    } else {
        Outcome::Printed { text: f.actual.clone() }
    }
}

/// A kept edit: the page after it, and the evidence.
struct Kept {
    version: Version,
    correction: Correction,
}

/// Gives every finding of variant `v` its severity, and errors their verified correction.
/// `obs` are the variant's probe words with nvdisasm's outcomes, the zero word first.
pub fn triage(page: &Page, v: &Variant, obs: &[Observed], learned: Option<&FormConventions>, findings: &mut [Finding]) {
    let prepared = warned(v, findings).then(|| prepare(page, v, obs, learned));
    apply(prepared.as_ref(), v, learned, findings);
}

/// Will [`apply`] leave a finding of `v` a warning, before corrections? Only then can a
/// page edit make one an error: without one, [`prepare`]'s work would be thrown away.
pub fn warned(v: &Variant, findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.variant == v.key && !is_note(f, v))
}

/// What [`triage`] works out for a variant before it reads the findings: the page as
/// written and the kept edits, each verified on every probe word of the variant (most of
/// triage's time), so that several variants' can be worked out at once.
pub struct Prepared {
    edits: Option<(Version, Vec<Kept>)>,
    /// nvdisasm's text of the zero word, parsed.
    base: Option<Instruction>,
}

/// [`triage`]'s first half: the verified edits of variant `v` (see [`Prepared`]).
pub fn prepare(page: &Page, v: &Variant, obs: &[Observed], learned: Option<&FormConventions>) -> Prepared {
    // The page as written, parsed once: the starting point of every edit and the judge of
    // what disagreed.
    let original = std::fs::read_to_string(&page.file).ok().and_then(|t| Version::parse(&page.file, t));
    let edits = original.and_then(|original| {
        let kept = corrections(page, v, &original, obs, learned)?;
        Some((original, kept))
    });
    Prepared { edits, base: obs.first().and_then(|o| printed(o.outcome)) }
}

/// [`triage`]'s second half: the severities of `v`'s findings, with `prepared`'s edits
/// (worked out with the same `learned` conventions).
/// `prepared`: none where [`warned`] says no finding of `v` stays a warning.
pub fn apply(prepared: Option<&Prepared>, v: &Variant, learned: Option<&FormConventions>, findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.variant == v.key) {
        f.severity = if is_note(f, v) { Severity::Note } else { Severity::Warning };
    }
    if let Some(prepared) = prepared {
        mark_corrected(prepared, v, learned, findings);
    }
    missing_forms_are_notes(v, findings);
}

/// Makes each warning of `v` that a verified page edit explains an error with that edit.
fn mark_corrected(prepared: &Prepared, v: &Variant, learned: Option<&FormConventions>, findings: &mut [Finding]) {
    let Some((original, kept)) = &prepared.edits else { return };
    let base = &prepared.base;
    let judge0 = Judge::new(original, &v.key, base.as_ref(), learned);
    let judges: Vec<Option<Judge>> = kept.iter().map(|k| Judge::new(&k.version, &v.key, base.as_ref(), learned)).collect();
    let zero_fixed = kept.iter().find(|k| matches!(k.correction.edits.as_slice(), [Edit::FixedBit { .. }]));
    for f in findings.iter_mut().filter(|f| f.variant == v.key && f.severity == Severity::Warning) {
        // Every word of a variant whose zero word nvdisasm rejects is rejected: one cause.
        if let (Some(k), true) = (zero_fixed, f.actual.starts_with("<illegal")) {
            mark_error(f, k);
            continue;
        }
        let (Some(w), Some(j0)) = (f.word(), judge0.as_ref()) else { continue };
        let o = outcome_of(f);
        if j0.verdict(w, &o) != V::Differ {
            continue;
        }
        if let Some(k) = kept.iter().zip(&judges).find(|(_, j)| j.as_ref().is_some_and(|j| explained(j.verdict(w, &o)))).map(|(k, _)| k) {
            mark_error(f, k);
        }
    }
}

/// A form the spec lacks that no page edit explained is a coverage gap, not a page
/// mistake: a note (it was a warning only so that the corrections were tried on it).
fn missing_forms_are_notes(v: &Variant, findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.variant == v.key && f.class == Class::MissingForm && f.severity == Severity::Warning) {
        f.severity = Severity::Note;
    }
}

/// The finding blames the page: its correction, the sentence, and the line the edit changes.
fn mark_error(f: &mut Finding, k: &Kept) {
    f.severity = Severity::Error;
    f.correction = Some(k.correction.clone());
    // What was seen is in `expected` and `actual`; the sentence is the edit that explains it.
    f.proposal = Some(k.summary());
    if let Some(line) = first_changed_line(&k.correction.diff) {
        f.line = line;
    }
}

/// The first line of the original file a unified diff removes or changes.
fn first_changed_line(diff: &str) -> Option<usize> {
    let mut line = 0usize;
    for l in diff.lines() {
        if let Some(h) = l.strip_prefix("@@ -") {
            line = h.split([',', ' ']).next()?.parse().ok()?;
        } else if l.starts_with("---") || l.starts_with("+++") {
            continue;
        } else if l.starts_with('-') || l.starts_with('+') {
            return Some(line.max(1));
        } else if l.starts_with(' ') {
            line += 1;
        }
    }
    None
}

impl Kept {
    /// "page edit: …; verified on N probe words, 0 regressions".
    fn summary(&self) -> String {
        let c = &self.correction;
        let what: Vec<String> = c.edits.iter().map(Edit::describe).collect();
        format!("page edit: {} (verified: {} of {} probe words fixed, {} regressions)", what.join("; "), c.fixes, c.probes, c.regressions)
    }
}

/// When nvdisasm rejects the variant's zero word: the fixed bit whose flip makes it print
/// the page's distilled line exactly (an opcode bit the page writes wrong).
fn fixed_bit_correction(page: &Page, v: &Variant, original: &Version, obs: &[Observed]) -> Option<Kept> {
    let by_word: HashMap<Word, &Outcome> = obs.iter().map(|o| (o.word, o.outcome)).collect();
    let base_word = obs.first()?.word;
    let bit = v
        .fixed_mask
        .iter()
        .filter(|&b| b < 105)
        .find(|&b| matches!(by_word.get(&base_word.flip(b)), Some(Outcome::Printed { text }) if *text == v.distilled))?;
    let e = Edit::FixedBit { variant: v.key.clone(), bit, value: !v.fixed_value.bit(bit) };
    let text = edit::apply(&original.text, original.page(), std::slice::from_ref(&e)).ok()?;
    let version = Version::parse(&page.file, text)?;
    let diff = unified_diff(&page.file, &original.text, &version.text);
    // The evidence is the zero word itself: rejected as the page writes it, the distilled
    // line exactly as corrected.
    let correction = Correction { edits: vec![e], fixes: 1, regressions: 0, probes: 2, diff };
    Some(Kept { version, correction })
}

/// The kept edits of one variant, each applied on top of those before it.
fn corrections(page: &Page, v: &Variant, original: &Version, obs: &[Observed], learned: Option<&FormConventions>) -> Option<Vec<Kept>> {
    let Some(base) = obs.first().and_then(|o| printed(o.outcome)) else {
        return Some(fixed_bit_correction(page, v, original, obs).into_iter().collect());
    };
    let by_word: HashMap<Word, &Outcome> = obs.iter().map(|o| (o.word, o.outcome)).collect();
    let codec = Codec::new(&original.spec);
    let vi = codec.index_of(&v.key, None)?;
    // The whole layout repair first, then each of its edits alone (one wrong part must not
    // sink the rest), then the tables.
    let layout = layout_candidate(v, &by_word, obs[0].word, &base);
    let mut cands = vec![layout.clone()];
    if layout.len() > 1 {
        cands.extend(layout.into_iter().map(|e| vec![e]));
    }
    cands.extend(table_candidates(v, &codec, vi, &by_word));
    cands.extend(merge_candidates(v, &codec, vi, &by_word));
    let judge0 = Judge::new(original, &v.key, Some(&base), learned)?.of_page_as_written();
    let seen: Vec<Seen> = obs.iter().map(Seen::observed).collect();
    // The verdicts of the page as it is, worked out when a candidate needs them.
    let mut current: Option<Vec<V>> = None;
    let mut edits: Vec<Edit> = vec![];
    let mut kept: Vec<Kept> = vec![];
    let mut prev_text = original.text.clone();
    for cand in cands.into_iter().filter(|c| !c.is_empty()) {
        let all: Vec<Edit> = edits.iter().chain(&cand).cloned().collect();
        let Ok(text) = edit::apply(&original.text, original.page(), &all) else { continue };
        let Some(version) = Version::parse(&page.file, text) else { continue };
        let Some(judge) = Judge::new(&version, &v.key, Some(&base), learned) else { continue };
        let current = current.get_or_insert_with(|| judge0.verdicts(obs, &seen));
        let Some((fixes, next)) = judge.weigh(obs, &seen, current) else { continue };
        let diff = unified_diff(&page.file, &prev_text, &version.text);
        prev_text = version.text.clone();
        // `weigh` keeps no edit under which a word that agreed differs.
        let correction = Correction { edits: cand.clone(), fixes, regressions: 0, probes: obs.len(), diff };
        edits.extend(cand);
        *current = next;
        kept.push(Kept { version, correction });
    }
    Some(kept)
}

/// A unified diff of a page file, three lines of context.
pub fn unified_diff(file: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(3).header(file, file).to_string()
}
