//! Judging a probe: nvdisasm's text against what the page predicts, the element and
//! bits a disagreement is attributed to, and the page edit proposed for it.

use super::*;
use crate::compare::{changed_of, compare_changed_of, Element, Part};
use crate::sass::InstRef;

/// A probe's verdict. Random probes' verdicts are kept from batch one to the judging of
/// all (hundreds of thousands in a slice by default): the finding is boxed to keep them
/// small.
pub(super) enum Judged {
    /// Agreement; the bits it confirms.
    Agree(u128),
    Found(Box<Finding>),
    /// Same meaning, other text; the finding is built by [`Analysis::syntax_finding`].
    Syntax {
        what: &'static str,
        bits: Vec<u8>,
    },
    /// A random word that disagrees on these elements: minimize before reporting.
    Minimize(Vec<Element>),
}

/// What a single-field probe showed: the page's text, nvdisasm's, the zero word's, and
/// the elements that changed from the zero word.
pub(super) struct Seen<'s> {
    expected: &'s Instruction,
    actual: &'s Instruction,
    base: Option<&'s Instruction>,
    changes: Vec<Element>,
}

pub(super) struct Analysis<'a> {
    pub(super) nv_tool: &'a str,
    pub(super) v: &'a Variant,
    /// The variant's codec index.
    pub(super) vi: usize,
    /// Every variant's prediction with the conventions learned at the start of the run:
    /// this form's, and what the form a word that is not this one's belongs to prints.
    pub(super) printer: &'a codec::Printer<'a, 'a>,
    pub(super) fixed: &'a FixedIndex,
    /// The whole spec: which form a word that is not this one's belongs to.
    pub(super) codec: &'a Codec<'a>,
}

/// Who the codec gives a word this variant does not describe to.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Claim {
    /// Another variant, which prints nvdisasm's text: that form's word, nothing to report.
    Prints,
    /// Another variant that prints something else (its own probes judge it), or several.
    Differs,
    /// No variant: a form the spec lacks.
    Nobody,
}

/// Which printed element does page operand `po` show as?
pub(super) fn element_of_page_operand(v: &Variant, po: usize) -> Option<Element> {
    v.operands.iter().enumerate().find_map(|(k, o)| {
        let i = o.page_operands.iter().position(|&x| x == po)?;
        let part = match (o.kind, i) {
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, 0) => Part::Bank,
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, _) => Part::Offset,
            _ => Part::Body,
        };
        Some(Element::Operand { k, part })
    })
}

/// Describes an element for a proposal (`op3.offset` → `operand 4 (offset)`, numbered as
/// the page numbers its operands).
pub(super) fn describe_element(v: &Variant, el: Element) -> String {
    let Element::Operand { k, part } = el else { return el.to_string() };
    let Some(o) = v.operands.get(k) else { return el.to_string() };
    let po = match part {
        Part::Offset => o.page_operands.last().copied(),
        _ => o.page_operands.first().copied(),
    }
    .unwrap_or(k);
    match part {
        Part::Body => format!("operand {po}"),
        Part::Bank | Part::Offset => format!("operand {po} ({})", part.name()),
        Part::Neg => format!("cNEG of operand {po}"),
        Part::Abs => format!("cABS of operand {po}"),
        Part::Sfx => format!("a suffix of operand {po}"),
        Part::Not => format!("operand {po} not"),
    }
}

impl<'a> Analysis<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finding(
        &self,
        class: Class,
        field: Option<usize>,
        bits: Vec<u8>,
        word: Word,
        expected: String,
        actual: String,
        proposal: Option<String>,
    ) -> Finding {
        Finding {
            arch: self.v.arch,
            variant: self.v.key.clone(),
            class,
            severity: Severity::Warning,
            page: self.v.file.clone(),
            line: field.map(|f| self.v.fields[f].line).unwrap_or(self.v.line),
            correction: None,
            field: field.map(|f| self.v.fields[f].name.clone()),
            bits,
            word: word.hex(),
            expected,
            actual,
            proposal,
            occurrences: 1,
            tool: self.nv_tool.to_string(),
        }
    }

    /// Word bits that carry value bits set in `x` of field `fi`.
    pub(super) fn bits_of(&self, fi: usize, x: u64) -> Vec<u8> {
        let raw = self.v.fields[fi].raw(x);
        self.v.fields[fi].bits.iter().enumerate().filter(|(k, _)| raw >> k & 1 == 1).map(|(_, &b)| b).collect()
    }

    /// What the page predicts nvdisasm prints for `word`.
    pub(super) fn predict(&self, values: &Values, word: Word) -> Instruction {
        self.printer.print_word(self.vi, values, word)
    }

    pub(super) fn judge(&self, p: &Probe, values: &Values, o: &Outcome, base_actual: Option<&Instruction>) -> Judged {
        self.judge_compared(p, values, o, base_actual).0
    }

    /// [`Analysis::judge`], and the verdict of comparing the page's prediction with
    /// nvdisasm's text where that was worked out (`Agree` where the texts are the same,
    /// else the parsed texts' comparison): what triage's judgement of the page as written
    /// would work out again (see `correct::Observed`).
    pub(super) fn judge_compared(&self, p: &Probe, values: &Values, o: &Outcome, base_actual: Option<&Instruction>) -> (Judged, Option<Verdict>) {
        let word_bits: u128 = match &p.kind {
            Kind::Field { field, value } => self.bits_of(*field, *value).iter().fold(0u128, |a, &b| a | 1u128 << b),
            Kind::Fixed { bit } => 1u128 << bit,
            _ => 0,
        };
        // Fast path: nvdisasm printed exactly the predicted text (no parse needed), the
        // text printed straight into a buffer (the `Printer`'s text is the predicted
        // instruction's, `print_word_into` as `print_word(..).to_string()`).
        if let (Outcome::Printed { text }, false) = (o, matches!(p.kind, Kind::Fixed { .. })) {
            let mut exp = String::with_capacity(text.len());
            self.printer.print_word_into(self.vi, values, p.word, &mut exp);
            if *text == exp {
                return (Judged::Agree(word_bits), Some(Verdict::Agree));
            }
        }
        let expected = self.predict(values, p.word);
        if let (Kind::Random, Outcome::Printed { text }) = (&p.kind, o) {
            // Most disagreeing words are random ones: nvdisasm's text read as borrowed
            // tokens (no copy), compared as the path below compares it.
            if let Some(actual) = InstRef::parse(text) {
                return self.judge_random_text(&expected, &actual);
            }
        }
        if self.another_form(p, values) {
            return (Judged::Agree(word_bits), None);
        }
        if let Some(j) = self.unlisted_other_form(p, values, o, base_actual, word_bits) {
            return (j, None);
        }
        // Fixed-bit flips: the page predicts "not this variant".
        if let Kind::Fixed { bit } = p.kind {
            return (self.judge_fixed(p.word, bit, o, base_actual, word_bits), None);
        }
        let Some(actual) = printed(o) else { return (self.judge_unprinted(p, o, expected.to_string(), word_bits), None) };
        // A random word's differences are what its minimization looks for.
        let ch = changed(&expected, &actual);
        let verdict = compare_changed(&expected, &actual, &ch);
        let judged = match verdict {
            Verdict::Agree => Judged::Agree(word_bits),
            Verdict::Syntax(what) => {
                let bits = match &p.kind {
                    Kind::Field { field, value } => self.bits_of(*field, *value),
                    _ => vec![],
                };
                Judged::Syntax { what, bits }
            }
            Verdict::Differ => self.judge_differ(p, values, o, &expected, &actual, ch, base_actual),
        };
        (judged, Some(verdict))
    }

    /// A random word's verdict, nvdisasm's text read as `actual`: as the general path
    /// judges it (no other form, no fixed bit: its differences are what minimization
    /// looks for).
    fn judge_random_text(&self, expected: &Instruction, actual: &InstRef) -> (Judged, Option<Verdict>) {
        let ch = changed_of(expected, actual);
        let verdict = compare_changed_of(expected, actual, &ch);
        let judged = match verdict {
            Verdict::Agree => Judged::Agree(0),
            Verdict::Syntax(what) => Judged::Syntax { what, bits: vec![] },
            Verdict::Differ => Judged::Minimize(ch),
        };
        (judged, Some(verdict))
    }

    /// Does the probe set a table value the table leaves out, in a word that a more
    /// specific variant claims (I2F's one-hot `11` is the F64 form)? The page then gives
    /// the word to that variant, whose own probes check it.
    pub(super) fn another_form(&self, p: &Probe, values: &Values) -> bool {
        let unlisted = |f: usize| self.v.field_table(f).is_some_and(|t| t.row(values.get(f)).is_none());
        let set = match p.kind {
            Kind::Field { field, .. } => unlisted(field),
            Kind::Pair { a, b } => unlisted(a) || unlisted(b),
            _ => false,
        };
        set && self.fixed.more_specific(self.v.arch, p.word, self.v.fixed_mask.0)
    }

    /// Which variant the codec gives `word` to (not this one: a fixed bit or an unlisted
    /// table value excludes it), and whether that variant prints nvdisasm's text.
    pub(super) fn claim(&self, word: Word, actual: &Instruction) -> Claim {
        match self.codec.decode(self.v.arch, word) {
            // The codec gives a word to this form only when no other form lists its values.
            Ok((vi, _)) if self.codec.variant(vi).key == self.v.key => Claim::Nobody,
            Ok((vi, vals)) => {
                let shown = self.printer.print_word(vi, &vals, word);
                if compare(&shown, actual) != Verdict::Differ {
                    Claim::Prints
                } else {
                    Claim::Differs
                }
            }
            Err(codec::DecodeError::NoMatch { .. }) => Claim::Nobody,
            Err(_) => Claim::Differs,
        }
    }

    /// Every modifier token this form can print: its heading's, its modifier groups' rows,
    /// its modifier flags', and those nvdisasm prints for its zero word (an operand's
    /// suffix rows, `INVALID1` of `R0.INVALID1`, are no modifiers).
    fn vocabulary(&self, base: &Instruction) -> std::collections::HashSet<String> {
        let v = self.v;
        let groups = (0..v.fields.len()).filter(|&f| matches!(v.fields[f].kind, FieldKind::Group { .. })).filter_map(|f| v.field_table(f));
        let rows = groups.flat_map(|t| t.rows.iter().map(|r| r.name.as_str()));
        let flags = v.fields.iter().filter_map(|f| match &f.kind {
            FieldKind::Flag { name, role: FlagRole::Modifier, .. } => Some(name.as_str()),
            _ => None,
        });
        let heading = v.modifiers.iter().filter_map(|m| match m {
            crate::spec::ModSlot::Fixed { text } => Some(text.as_str()),
            _ => None,
        });
        let zero = base.modifiers.iter().map(String::as_str);
        rows.chain(flags).chain(heading).chain(zero).flat_map(|t| t.split('.')).map(str::to_string).collect()
    }

    /// Does nvdisasm's text show another form than this one: a modifier no row, flag or
    /// heading of this form prints (`.CONV`, `.U16` on an `.S64`-only form)?
    fn beyond_form(&self, base: &Instruction, actual: &Instruction) -> bool {
        let known = self.vocabulary(base);
        actual.modifiers.iter().flat_map(|m| m.split('.')).any(|t| !t.is_empty() && !known.contains(t))
    }

    /// A word of a form the spec lacks: nvdisasm's text, for discovery to seed it.
    fn missing_form(&self, word: Word, bits: Vec<u8>, expected: String, o: &Outcome, how: &str) -> Judged {
        let why = format!("no form of the spec decodes this word ({how}): nvdisasm prints another form, a seed for discovery");
        Judged::Found(Box::new(self.finding(Class::MissingForm, None, bits, word, expected, outcome_text(o), Some(why))))
    }

    /// A table value the page leaves out (`UNLISTEDn`) that another variant decodes and
    /// prints as nvdisasm does (variants that split a table's rows, as `discover --fill`
    /// adds them), or that nvdisasm prints with other operands (`CCTL.WB [RZ]` from the
    /// operand-less CCTL): another form's word, which that form's page describes, or a
    /// form the spec lacks. `None`: judge it as a row.
    pub(super) fn unlisted_other_form(&self, p: &Probe, values: &Values, o: &Outcome, base: Option<&Instruction>, word_bits: u128) -> Option<Judged> {
        let fields = match p.kind {
            Kind::Field { field, .. } => vec![field],
            Kind::Pair { a, b } => vec![a, b],
            _ => return None,
        };
        let unlisted = |&f: &usize| self.v.field_table(f).is_some_and(|t| t.row(values.get(f)).is_none());
        let field = fields.iter().copied().find(unlisted)?;
        let actual = printed(o)?;
        // Another variant that prints nvdisasm's text has the value, whatever it prints
        // (two variants of one form may split a table's rows: `discover --fill`).
        let claim = self.claim(p.word, &actual);
        if claim == Claim::Prints {
            return Some(Judged::Agree(word_bits));
        }
        if kinds(&actual) == kinds(base?) {
            return None;
        }
        match claim {
            Claim::Nobody => {
                let how = format!("'{}' = {:#b}, which the page leaves out", self.v.fields[field].name, values.get(field));
                let bits = fields.iter().flat_map(|&f| self.bits_of(f, values.get(f))).collect();
                Some(self.missing_form(p.word, bits, self.predict(values, p.word).to_string(), o, &how))
            }
            Claim::Prints | Claim::Differs => None,
        }
    }

    /// A flipped fixed bit: opcode (another form or instruction, as the page says), a bit
    /// nvdisasm ignores, a form the spec lacks, or a meaning the page cannot express.
    pub(super) fn judge_fixed(&self, word: Word, bit: u8, o: &Outcome, base_actual: Option<&Instruction>, word_bits: u128) -> Judged {
        let v = self.v;
        let note = if v.inferred.contains(bit) { " (the page dropped this cell; it was inferred as 0)" } else { "" };
        let Some(actual) = printed(o) else { return Judged::Agree(word_bits) };
        let Some(base) = base_actual else { return Judged::Agree(0) };
        if actual.mnemonic != base.mnemonic || kinds(&actual) != kinds(base) || self.fixed.unique(v.arch, word) {
            return Judged::Agree(word_bits);
        }
        let ch: Vec<Element> = changed(base, &actual);
        let expected = format!("not {} (bit {bit} is fixed {})", v.key, v.fixed_value.bit(bit) as u8);
        // A bit the page marks as ignored (`ignored bits:`) agrees when nvdisasm ignores it.
        if ch.is_empty() && v.ignored.contains(bit) {
            return Judged::Agree(word_bits);
        }
        if ch.is_empty() {
            return Judged::Found(Box::new(self.finding(
                Class::FixedIgnored,
                None,
                vec![bit],
                word,
                expected,
                outcome_text(o),
                Some(ignored_proposal(v, &[bit])),
            )));
        }
        // The bit selects another form: the page is right that the word is not its own.
        let claim = self.claim(word, &actual);
        if claim == Claim::Prints {
            return Judged::Agree(word_bits);
        }
        if claim == Claim::Nobody && (self.beyond_form(base, &actual) || zero_register_flip(&actual, &ch)) {
            return self.missing_form(word, vec![bit], expected, o, &format!("bit {bit} flipped"));
        }
        let what: Vec<String> = ch.iter().map(|&c| describe_element(v, c)).collect();
        let proposal = format!("bit {bit} is not fixed: it changes {}{note}", what.join(", "));
        Judged::Found(Box::new(self.finding(Class::Unexpressible, None, vec![bit], word, expected, outcome_text(o), Some(proposal))))
    }

    /// nvdisasm rejected the word or printed nothing for it.
    pub(super) fn judge_unprinted(&self, p: &Probe, o: &Outcome, exp_text: String, word_bits: u128) -> Judged {
        let v = self.v;
        let Kind::Field { field, value } = p.kind else {
            if p.kind == Kind::Random {
                return Judged::Minimize(vec![Element::Legality]);
            }
            return Judged::Found(Box::new(self.finding(Class::Legality, None, vec![], p.word, exp_text, outcome_text(o), None)));
        };
        if let Some(t) = v.field_table(field) {
            return match t.row(value) {
                // An INVALID row, or a value the table omits: the page claims nothing.
                Some(r) if r.kind == RowKind::Invalid => Judged::Agree(word_bits),
                None => Judged::Agree(word_bits),
                Some(r) => {
                    let why = format!("{}: value {:0w$b} is not '{}' but illegal: mark it INVALID{}", t.title, value, r.name, value, w = t.width as usize);
                    let bits = v.fields[field].bits.clone();
                    Judged::Found(Box::new(self.finding(Class::TableRow, Some(field), bits, p.word, exp_text, outcome_text(o), Some(why))))
                }
            };
        }
        // The page says so: a derived register would pass the zero register, or the field
        // may not print all ones.
        if v.value_illegal(field, value) {
            return Judged::Agree(word_bits);
        }
        let f = &v.fields[field];
        let what = if f.is_control() { "control field" } else { "field" };
        let why = format!("{what} '{}' = {value:#x} is rejected by nvdisasm", f.name);
        Judged::Found(Box::new(self.finding(Class::Legality, Some(field), self.bits_of(field, value), p.word, exp_text, outcome_text(o), Some(why))))
    }

    /// nvdisasm printed another meaning than the page predicts; `ch`: [`changed`] of the two
    /// (a random word's minimization looks for it).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn judge_differ(
        &self,
        p: &Probe,
        values: &Values,
        o: &Outcome,
        expected: &Instruction,
        actual: &Instruction,
        ch: Vec<Element>,
        base_actual: Option<&Instruction>,
    ) -> Judged {
        let v = self.v;
        let exp_text = || expected.to_string();
        match p.kind {
            Kind::Field { field, value } => Judged::Found(Box::new(self.field_finding(field, value, p.word, expected, actual, base_actual, o))),
            Kind::Pair { a, b } => {
                // A value its table leaves out prints otherwise whatever it is paired with: the
                // missing row is its field probe's finding, and this pair would report it again.
                let unlisted = |f: usize| v.field_table(f).is_some_and(|t| t.row(values.get(f)).is_none());
                if unlisted(a) || unlisted(b) {
                    return Judged::Agree(0);
                }
                let mut bits = self.bits_of(a, values.get(a));
                bits.extend(self.bits_of(b, values.get(b)));
                bits.sort_unstable();
                let (na, nb) = (&v.fields[a].name, &v.fields[b].name);
                let why = format!("fields interact: '{na}' and '{nb}' together print what the page does not predict");
                let mut f = self.finding(Class::Interaction, Some(a), bits, p.word, exp_text(), outcome_text(o), Some(why));
                f.field = Some(format!("{na} + {nb}"));
                Judged::Found(Box::new(f))
            }
            Kind::Base => {
                let why = "the distilled line does not match nvdisasm for the zero word".to_string();
                Judged::Found(Box::new(self.finding(Class::FieldBits, None, vec![], p.word, exp_text(), outcome_text(o), Some(why))))
            }
            Kind::Random => Judged::Minimize(ch),
            Kind::Fixed { .. } => unreachable!("fixed-bit probes are judged by judge_fixed"),
        }
    }

    /// Same meaning, other text (built once per variant and kind of difference: a page
    /// whose selector syntax differs shows it on nearly every word).
    pub(super) fn syntax_finding(&self, values: &Values, word: Word, o: &Outcome, what: &'static str, bits: Vec<u8>) -> Finding {
        let exp_text = self.predict(values, word).to_string();
        let mut f = self.finding(Class::Syntax, None, bits, word, exp_text, outcome_text(o), Some(format!("syntax only: {what}")));
        f.field = Some(what.to_string());
        f
    }

    /// A single field set to `value` printed something other than predicted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn field_finding(
        &self,
        fi: usize,
        value: u64,
        word: Word,
        expected: &Instruction,
        actual: &Instruction,
        base: Option<&Instruction>,
        o: &Outcome,
    ) -> Finding {
        let v = self.v;
        let bits = self.bits_of(fi, value);
        let seen = Seen { expected, actual, base, changes: base.map(|b| changed(b, actual)).unwrap_or_default() };
        let (class, proposal) = match &v.fields[fi].kind {
            FieldKind::Group { .. } | FieldKind::OperandModifier { .. } => (Class::TableRow, Some(self.table_proposal(fi, value, &seen))),
            FieldKind::Flag { role, .. } if value.is_power_of_two() => {
                let class = if *role == FlagRole::Modifier { Class::FieldBits } else { Class::FlagOperand };
                (class, Some(self.flag_proposal(fi, bits[0], &seen)))
            }
            _ => (Class::FieldBits, self.value_proposal(fi, value, bits.first().copied(), &seen)),
        };
        self.finding(class, Some(fi), bits, word, expected.to_string(), outcome_text(o), proposal)
    }

    /// A table field's value printed another row: which name it printed, or what else changed.
    pub(super) fn table_proposal(&self, fi: usize, value: u64, seen: &Seen) -> String {
        let v = self.v;
        let t = v.field_table(fi).expect("table field");
        let (new_tokens, where_) = match &v.fields[fi].kind {
            FieldKind::Group { .. } => {
                (token_diff(seen.base.map(|b| b.modifiers.clone()).unwrap_or_default(), seen.actual.modifiers.clone()), "modifiers".to_string())
            }
            _ => {
                let el = seen.changes.iter().copied().find(|c| c.is_suffix());
                let toks = el
                    .and_then(|e| element_value(seen.actual, e))
                    .map(|s| s.split('.').filter(|x| !x.is_empty()).map(str::to_string).collect())
                    .unwrap_or_default();
                (toks, el.map(|e| e.to_string()).unwrap_or_default())
            }
        };
        let name = if new_tokens.is_empty() { "(default)".to_string() } else { new_tokens.join(".") };
        let others: Vec<String> = seen.changes.iter().filter(|c| **c != Element::Mods && !c.is_suffix()).map(|&c| describe_element(v, c)).collect();
        let w = t.width as usize;
        if others.is_empty() {
            let missing = if t.row(value).is_none() { " (row missing from the page)" } else { "" };
            format!("{}: {value:0w$b} → {name}{missing}", t.title)
        } else {
            format!("{}: {value:0w$b} also changes {} ({where_})", t.title, others.join(", "))
        }
    }

    /// A one-bit flag printed something else: nothing, another modifier, or another operand's flag.
    pub(super) fn flag_proposal(&self, fi: usize, bit: u8, seen: &Seen) -> String {
        let v = self.v;
        let FieldKind::Flag { role, name, .. } = &v.fields[fi].kind else { unreachable!("flag field") };
        let act_desc: Vec<String> = seen.changes.iter().map(|&c| describe_element(v, c)).collect();
        if seen.changes.is_empty() {
            format!("'{name}' at bit {bit}: nvdisasm prints no change")
        } else if *role == FlagRole::Modifier {
            let toks = token_diff(seen.base.map(|b| b.modifiers.clone()).unwrap_or_default(), seen.actual.modifiers.clone());
            format!("bit {bit} prints {} (page: .{name})", if toks.is_empty() { act_desc.join(", ") } else { format!(".{}", toks.join(".")) })
        } else {
            let base_pred = codec::print(v, &crate::gen::base_values(v));
            let page: Vec<String> = changed(&base_pred, seen.expected).into_iter().map(|c| describe_element(v, c)).collect();
            format!("bit {bit} is {} (page: '{name}' of {})", act_desc.join(" and "), page.join(", "))
        }
    }

    /// Operand values, predicate, wider flags: where did a single bit land?
    pub(super) fn value_proposal(&self, fi: usize, value: u64, bit: Option<u8>, seen: &Seen) -> Option<String> {
        let v = self.v;
        let f = &v.fields[fi];
        let bit = bit.filter(|_| value.is_power_of_two())?;
        let own = match &f.kind {
            FieldKind::Operand { page_operand } => element_of_page_operand(v, *page_operand),
            FieldKind::Pred => Some(Element::Pred),
            _ => None,
        };
        let act_desc: Vec<String> = seen.changes.iter().map(|&c| describe_element(v, c)).collect();
        Some(match own {
            _ if seen.changes.is_empty() => format!("bit {bit}: nvdisasm ignores it; '{}' does not include it", f.name),
            Some(el) if seen.changes == [el] => {
                let got = element_value(seen.actual, el).unwrap_or_default();
                format!("bit {bit} of '{}' prints {got} where the page predicts {}", f.name, element_value(seen.expected, el).unwrap_or_default())
            }
            _ => format!("bit {bit} belongs to {} (page: '{}')", act_desc.join(" and "), f.name),
        })
    }

    /// A minimized random word that still disagrees.
    pub(super) fn random_finding(&self, vals: &Values, w: Word, o: &Outcome, base: Option<&Instruction>) -> Option<Finding> {
        let v = self.v;
        let nonzero: Vec<usize> = (0..v.fields.len()).filter(|&i| vals.get(i) != 0 && !v.fields[i].is_control()).collect();
        let expected = self.predict(vals, w);
        let p = Probe { vi: 0, word: w, kind: Kind::Random };
        if nonzero.len() == 1 {
            // One field alone: judge it as a field probe.
            let fi = nonzero[0];
            let q = Probe { kind: Kind::Field { field: fi, value: vals.get(fi) }, ..p };
            return match self.judge(&q, vals, o, base) {
                Judged::Found(f) => Some(*f),
                Judged::Syntax { what, bits } => Some(self.syntax_finding(vals, w, o, what, bits)),
                _ => None,
            };
        }
        let actual = printed(o);
        if let Some(a) = &actual {
            if compare(&expected, a) != Verdict::Differ {
                return None;
            }
        }
        let bits: Vec<u8> = {
            let mut b: Vec<u8> = nonzero.iter().flat_map(|&i| self.bits_of(i, vals.get(i))).collect();
            b.sort_unstable();
            b
        };
        let names: Vec<String> = nonzero.iter().map(|&i| format!("'{}' = {:#x}", v.fields[i].name, vals.get(i))).collect();
        let class = if actual.is_none() { Class::Legality } else { Class::Interaction };
        let what = match &actual {
            None => "together they are rejected though each alone is accepted".to_string(),
            Some(a) => {
                let ch = base.map(|b| changed(b, a)).unwrap_or_default();
                format!("together they print {}", ch.into_iter().map(|c| describe_element(v, c)).collect::<Vec<_>>().join(", "))
            }
        };
        let mut f = self.finding(
            class,
            nonzero.first().copied(),
            bits,
            w,
            expected.to_string(),
            outcome_text(o),
            Some(format!("fields interact: {}: {what}", names.join(", "))),
        );
        f.field = Some(nonzero.iter().map(|&i| v.fields[i].name.clone()).collect::<Vec<_>>().join(" + "));
        Some(f)
    }
}

/// Does a changed element show a zero register with one bit cleared (`R254`, `R127`,
/// `UR62`)? Then the page fixes that register to RZ or URZ, as a form nvdisasm names for
/// the zero register (`a[uI]`) does, and the flip is the general form's word. A field a
/// page narrowed by a fixed 0 bit reads `R128` instead: the base word's other bits are 0.
fn zero_register_flip(actual: &Instruction, changed: &[Element]) -> bool {
    let one_off = |n: u32, zero: u32| n < zero && (n ^ zero).is_power_of_two();
    changed.iter().filter_map(|&el| element_value(actual, el)).any(|t| {
        // URZ is UR63 on SM90 (6 bits), UR255 later; RZ is R255.
        t.split(|c: char| !c.is_ascii_alphanumeric()).any(|tok| match (tok.strip_prefix("UR"), tok.strip_prefix('R')) {
            (Some(n), _) => n.parse().is_ok_and(|n| one_off(n, 0xff) || one_off(n, 0x3f)),
            (_, Some(n)) => n.parse().is_ok_and(|n| one_off(n, 0xff)),
            _ => false,
        })
    })
}

/// The kinds of an instruction's operands, in order: a form's shape.
fn kinds(i: &Instruction) -> Vec<std::mem::Discriminant<crate::sass::Body>> {
    i.operands.iter().map(|o| std::mem::discriminant(&o.body)).collect()
}

/// What a fixed_ignored note proposes for `bits` (each flipped alone printed the zero
/// word's text), naming those whose cell the page dropped.
pub(super) fn ignored_proposal(v: &Variant, bits: &[u8]) -> String {
    let inferred: Vec<u8> = bits.iter().copied().filter(|&b| v.inferred.contains(b)).collect();
    match bits {
        [bit] => {
            let note = if inferred.is_empty() { "" } else { " (the page dropped this cell; it was inferred as 0)" };
            format!("bit {bit}: nvdisasm ignores it; mark it don't-care{note}")
        }
        _ => {
            let note = match inferred.as_slice() {
                [] => String::new(),
                [b] => format!(" (the page dropped the cell of bit {b}; it was inferred as 0)"),
                more => format!(" (the page dropped the cells of bits {}; they were inferred as 0)", format_ranges(more)),
            };
            format!("bits {}: nvdisasm ignores each alone; mark them don't-care{note}", format_ranges(bits))
        }
    }
}

/// Tokens in `after` that `before` lacks (multiset difference, order kept).
pub(super) fn token_diff(before: Vec<String>, after: Vec<String>) -> Vec<String> {
    let mut b = before;
    let mut out = vec![];
    for t in after {
        if let Some(i) = b.iter().position(|x| *x == t) {
            b.remove(i);
        } else {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(t: &str) -> Instruction {
        t.parse().expect("an instruction")
    }

    /// A flip inside a register the page fixes to the zero register reads as RZ with one bit
    /// cleared; a flip next to a field a page narrowed reads as a power of two.
    #[test]
    fn zero_register_flips_are_told_from_narrowed_fields() {
        let flip = |base: &str, actual: &str| {
            let (b, a) = (ins(base), ins(actual));
            zero_register_flip(&a, &changed(&b, &a))
        };
        assert!(flip("@P0 LDS R0, [0x10];", "@P0 LDS R0, [R254+0x10];"));
        assert!(flip("@P0 LDS R0, [0x10];", "@P0 LDS R0, [R127+0x10];"));
        assert!(flip("@P0 IADD3 R0, R0, URZ, R0;", "@P0 IADD3 R0, R0, UR62, R0;"));
        assert!(!flip("@P0 FADD R0, R0, R0;", "@P0 FADD R128, R0, R0;"));
        assert!(!flip("@P0 FADD R0, R0, R0;", "@P0 FADD R0, R62, R0;"));
        assert!(!flip("@P0 FADD R0, R0, R0;", "@P0 FADD R0, R0, R0;"));
    }
}
