//! Differential validation of pages against nvdisasm.
//!
//! Per page (one architecture): build probe words for every variant (table rows, field bit
//! walks and boundaries, flags, fixed-bit flips, seeded random combinations), disassemble
//! them in batches, compare structurally with what the page predicts, attribute each
//! disagreement to a field and bits, minimize random ones, merge duplicates, and hand the
//! findings to the caller as soon as a page is done.

pub mod compare;
pub mod finding;

use crate::codec::{self, Codec, Values};
use crate::gen::{random_listed_values, Rng};
use crate::oracle::nvdisasm::{Nvdisasm, Outcome};
use crate::sass::{self, Instruction};
use crate::spec::{FieldKind, FlagRole, Page, RowKind, Variant};
use crate::word::{format_ranges, Word};
use compare::{changed, compare, element_value, Verdict};
pub use finding::{BitStatus, Class, Finding, VariantSummary};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Options {
    pub random_per_variant: usize,
    pub seed: u64,
    pub minimize_rounds: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { random_per_variant: 10_000, seed: 0x5eed, minimize_rounds: 8 }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Base,
    /// Field `field` set to `value` from the base (bit walks, boundaries, table rows, flags).
    Field { field: usize, value: u64 },
    /// Fixed bit flipped.
    Fixed { bit: u8 },
    Random,
}

struct Probe {
    vi: usize,
    values: Values,
    word: Word,
    kind: Kind,
}

/// The outcome as a string for `actual`.
fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Printed { text } => text.clone(),
        Outcome::Illegal { message } => finding::illegal_text(message),
        Outcome::Silent => finding::SILENT.to_string(),
        Outcome::ToolFailure { message } => format!("<tool failure: {message}>"),
    }
}

fn printed(o: &Outcome) -> Option<Instruction> {
    match o {
        Outcome::Printed { text } => sass::parse_instruction(text).ok(),
        _ => None,
    }
}

/// Validates one page; `sink` receives each page's findings as soon as they are known.
pub fn validate_page(
    page: &Page,
    codec: &Codec,
    nv: &Nvdisasm,
    opts: &Options,
    progress: &dyn Fn(u64),
) -> (Vec<VariantSummary>, Vec<Finding>) {
    let arch = page.arch.nvdisasm_name();
    let vis: Vec<usize> = page.variants.iter().map(|v| codec.index_of(&v.key, Some(v.arch)).expect("variant in codec")).collect();
    let mut probes: Vec<Probe> = vec![];
    let mut rng = Rng::new(opts.seed ^ (page.arch.0 as u64) << 32);
    for &vi in &vis {
        probes.extend(probes_for(codec, vi, opts, &mut rng));
    }
    let words: Vec<Word> = probes.iter().map(|p| p.word).collect();
    let outs = nv.disassemble(&arch, &words);
    progress(words.len() as u64);
    let mut checked: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut raw: Vec<Finding> = vec![];
    let mut verified: BTreeMap<usize, u128> = BTreeMap::new();
    let mut disputed: BTreeMap<usize, u128> = BTreeMap::new();
    let mut to_minimize: Vec<(usize, Values, Vec<String>)> = vec![];
    let base_of: BTreeMap<usize, (Instruction, Outcome)> = probes
        .iter()
        .zip(&outs)
        .filter(|(p, _)| p.kind == Kind::Base)
        .map(|(p, o)| (p.vi, (codec::print(codec.variant(p.vi), &p.values), o.clone())))
        .collect();
    for (p, o) in probes.iter().zip(&outs) {
        let v = codec.variant(p.vi);
        let e = checked.entry(p.vi).or_default();
        e.0 += 1;
        let (_, base_out) = &base_of[&p.vi];
        let base_actual = printed(base_out);
        let a = Analysis { codec, nv_tool: &nv.version, v, arch: &arch };
        let verdict = a.judge(p, o, base_actual.as_ref());
        match verdict {
            Judged::Agree(bits) => {
                e.1 += 1;
                *verified.entry(p.vi).or_default() |= bits;
            }
            Judged::Found(f) => {
                for &b in &f.bits {
                    *disputed.entry(p.vi).or_default() |= 1u128 << b;
                }
                raw.push(f);
            }
            Judged::Minimize(elems) => to_minimize.push((p.vi, p.values, elems)),
        }
    }
    // Random disagreements: one per (variant, changed elements), minimized.
    to_minimize.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    let mut dedup: Vec<(usize, Values, Vec<String>, usize)> = vec![];
    for (vi, vals, el) in to_minimize {
        match dedup.iter_mut().find(|d| d.0 == vi && d.2 == el) {
            Some(d) => d.3 += 1,
            None => dedup.push((vi, vals, el, 1)),
        }
    }
    let minimized = minimize(codec, nv, &arch, dedup, opts.minimize_rounds);
    let final_words: Vec<Word> = minimized.iter().map(|(vi, vals, _)| codec.encode_unchecked(*vi, vals)).collect();
    let final_outs = nv.disassemble(&arch, &final_words);
    for ((vi, vals, count), (w, out)) in minimized.into_iter().zip(final_words.into_iter().zip(final_outs)) {
        let v = codec.variant(vi);
        let a = Analysis { codec, nv_tool: &nv.version, v, arch: &arch };
        if let Some(mut f) = a.random_finding(&vals, w, &out, base_of.get(&vi).and_then(|b| printed(&b.1)).as_ref()) {
            f.occurrences = count;
            for &b in &f.bits {
                *disputed.entry(vi).or_default() |= 1u128 << b;
            }
            raw.push(f);
        }
    }
    let findings = merge(raw);
    let summaries = vis
        .iter()
        .map(|&vi| {
            let v = codec.variant(vi);
            let (words, agreeing) = checked.get(&vi).copied().unwrap_or_default();
            let mut by_class = BTreeMap::new();
            for f in findings.iter().filter(|f| f.variant == v.key) {
                *by_class.entry(f.class.name().to_string()).or_insert(0) += 1;
            }
            let ver = verified.get(&vi).copied().unwrap_or(0);
            let dis = disputed.get(&vi).copied().unwrap_or(0);
            let bit_status = (0..128u32)
                .map(|b| {
                    if dis >> b & 1 == 1 {
                        BitStatus::Disputed
                    } else if ver >> b & 1 == 1 {
                        BitStatus::Verified
                    } else {
                        BitStatus::Unconfirmed
                    }
                })
                .collect();
            VariantSummary { arch: arch.clone(), variant: v.key.clone(), page: page.file.clone(), words, agreeing, findings: by_class, bit_status }
        })
        .collect();
    (summaries, findings)
}

fn probes_for(codec: &Codec, vi: usize, opts: &Options, rng: &mut Rng) -> Vec<Probe> {
    let v = codec.variant(vi);
    let base = Values::zero(v.fields.len());
    let mut out = vec![];
    let mut push = |values: Values, kind: Kind| {
        let word = codec.encode_unchecked(vi, &values);
        out.push(Probe { vi, values, word, kind });
    };
    push(base, Kind::Base);
    for (fi, f) in v.fields.iter().enumerate() {
        let max = f.max();
        let mut vals: Vec<u64> = (0..f.width()).map(|k| 1u64 << k).collect();
        vals.extend([max, max.saturating_sub(1)]);
        if let Some(t) = v.field_table(fi) {
            vals.extend(t.rows.iter().map(|r| r.value));
            vals.extend(t.omitted.iter().copied());
        }
        vals.sort_unstable();
        vals.dedup();
        for x in vals.into_iter().filter(|&x| x != 0) {
            let mut vv = base;
            vv.set(fi, x);
            push(vv, Kind::Field { field: fi, value: x });
        }
    }
    for bit in v.fixed_mask.iter() {
        let word = v.fixed_value.flip(bit);
        out.push(Probe { vi, values: base, word, kind: Kind::Fixed { bit } });
    }
    for _ in 0..opts.random_per_variant {
        let vals = random_listed_values(v, rng);
        let word = codec.encode_unchecked(vi, &vals);
        out.push(Probe { vi, values: vals, word, kind: Kind::Random });
    }
    out
}

enum Judged {
    /// Agreement; the bits it confirms.
    Agree(u128),
    Found(Finding),
    /// A random word that disagrees on these elements: minimize before reporting.
    Minimize(Vec<String>),
}

struct Analysis<'a> {
    codec: &'a Codec<'a>,
    nv_tool: &'a str,
    v: &'a Variant,
    arch: &'a str,
}

/// Which printed element does page operand `po` show as?
fn element_of_page_operand(v: &Variant, po: usize) -> Option<String> {
    v.operands.iter().enumerate().find_map(|(k, o)| {
        let i = o.page_operands.iter().position(|&x| x == po)?;
        Some(match (o.kind, i) {
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, 0) => format!("op{k}.bank"),
            (crate::spec::OperandKind::Const | crate::spec::OperandKind::ConstX, _) => format!("op{k}.offset"),
            _ => format!("op{k}.body"),
        })
    })
}

/// Describes an element for a proposal (`op3.offset` → `operand 4 (offset)`).
fn describe_element(v: &Variant, el: &str) -> String {
    let Some((op, part)) = el.split_once('.') else { return el.to_string() };
    let Some(k) = op.strip_prefix("op").and_then(|k| k.parse::<usize>().ok()) else { return el.to_string() };
    let Some(o) = v.operands.get(k) else { return el.to_string() };
    let po = match part {
        "offset" => o.page_operands.last().copied(),
        _ => o.page_operands.first().copied(),
    }
    .unwrap_or(k);
    match part {
        "body" | "bank" | "offset" => format!("operand {po}{}", if part == "body" { String::new() } else { format!(" ({part})") }),
        "neg" => format!("cNEG of operand {po}"),
        "abs" => format!("cABS of operand {po}"),
        "sfx" => format!("a suffix of operand {po}"),
        other => format!("operand {po} {other}"),
    }
}

impl<'a> Analysis<'a> {
    fn finding(&self, class: Class, field: Option<usize>, bits: Vec<u8>, word: Word, expected: String, actual: String, proposal: Option<String>) -> Finding {
        Finding {
            arch: self.arch.to_string(),
            variant: self.v.key.clone(),
            class,
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
    fn bits_of(&self, fi: usize, x: u64) -> Vec<u8> {
        self.v.fields[fi].bits.iter().enumerate().filter(|(k, _)| x >> k & 1 == 1).map(|(_, &b)| b).collect()
    }

    fn judge(&self, p: &Probe, o: &Outcome, base_actual: Option<&Instruction>) -> Judged {
        let v = self.v;
        let expected = codec::print(v, &p.values);
        let exp_text = expected.to_string();
        let word_bits: u128 = match &p.kind {
            Kind::Field { field, value } => self.bits_of(*field, *value).iter().fold(0u128, |a, &b| a | 1u128 << b),
            Kind::Fixed { bit } => 1u128 << bit,
            _ => 0,
        };
        if let Outcome::ToolFailure { .. } = o {
            return Judged::Found(self.finding(Class::Legality, None, vec![], p.word, exp_text, outcome_text(o), None));
        }
        // Fixed-bit flips: the page predicts "not this variant".
        if let Kind::Fixed { bit } = p.kind {
            let inferred = v.inferred.contains(bit);
            let note = if inferred { " (the page dropped this cell; it was inferred as 0)" } else { "" };
            let Some(actual) = printed(o) else { return Judged::Agree(word_bits) };
            let Some(base) = base_actual else { return Judged::Agree(0) };
            // The bit selects another instruction or operand form: it is opcode, as the page says.
            let kinds = |i: &Instruction| i.operands.iter().map(|o| std::mem::discriminant(&o.body)).collect::<Vec<_>>();
            if actual.mnemonic != base.mnemonic || kinds(&actual) != kinds(base) || self.codec.find(v.arch, p.word).is_ok() {
                return Judged::Agree(word_bits);
            }
            let ch: Vec<String> = changed(base, &actual);
            if ch.is_empty() {
                return Judged::Found(self.finding(Class::FixedIgnored, None, vec![bit], p.word, format!("not {} (bit {bit} is fixed {})", v.key, v.fixed_value.bit(bit) as u8), outcome_text(o), Some(format!("bit {bit}: nvdisasm ignores it; mark it don't-care{note}"))));
            }
            let what: Vec<String> = ch.iter().map(|c| describe_element(v, c)).collect();
            return Judged::Found(self.finding(Class::Unexpressible, None, vec![bit], p.word, format!("not {} (bit {bit} is fixed {})", v.key, v.fixed_value.bit(bit) as u8), outcome_text(o), Some(format!("bit {bit} is not fixed: it changes {}{note}", what.join(", ")))));
        }
        let Some(actual) = printed(o) else {
            // Illegal or silent.
            if let Kind::Field { field, value } = p.kind {
                if let Some(t) = v.field_table(field) {
                    match t.row(value) {
                        Some(r) if r.kind == RowKind::Invalid => return Judged::Agree(word_bits),
                        None => return Judged::Agree(word_bits), // omitted: the page claims nothing
                        Some(r) => {
                            return Judged::Found(self.finding(Class::TableRow, Some(field), self.v.fields[field].bits.clone(), p.word, exp_text, outcome_text(o), Some(format!("{}: value {:0w$b} is not '{}' but illegal: mark it INVALID{}", t.title, value, r.name, value, w = t.width as usize))));
                        }
                    }
                }
                let f = &v.fields[field];
                let what = if f.is_control() { "control field" } else { "field" };
                return Judged::Found(self.finding(Class::Legality, Some(field), self.bits_of(field, value), p.word, exp_text, outcome_text(o), Some(format!("{what} '{}' = {value:#x} is rejected by nvdisasm", f.name))));
            }
            if p.kind == Kind::Random {
                return Judged::Minimize(vec!["<legality>".into()]);
            }
            return Judged::Found(self.finding(Class::Legality, None, vec![], p.word, exp_text, outcome_text(o), None));
        };
        match compare(&expected, &actual) {
            Verdict::Agree => Judged::Agree(word_bits),
            Verdict::Syntax(what) => {
                let bits = match &p.kind {
                    Kind::Field { field, value } => self.bits_of(*field, *value),
                    _ => vec![],
                };
                let mut f = self.finding(Class::Syntax, None, bits, p.word, exp_text, outcome_text(o), Some(format!("syntax only: {what}")));
                f.field = Some(what.to_string());
                Judged::Found(f)
            }
            Verdict::Differ => match p.kind {
                Kind::Field { field, value } => Judged::Found(self.field_finding(field, value, p.word, &expected, &actual, base_actual, o)),
                Kind::Base => Judged::Found(self.finding(Class::FieldBits, None, vec![], p.word, exp_text, outcome_text(o), Some("the distilled line does not match nvdisasm for the zero word".into()))),
                Kind::Random => Judged::Minimize(changed(&expected, &actual)),
                Kind::Fixed { .. } => unreachable!(),
            },
        }
    }

    /// A single field set to `value` printed something other than predicted.
    #[allow(clippy::too_many_arguments)]
    fn field_finding(&self, fi: usize, value: u64, word: Word, expected: &Instruction, actual: &Instruction, base: Option<&Instruction>, o: &Outcome) -> Finding {
        let v = self.v;
        let f = &v.fields[fi];
        let bits = self.bits_of(fi, value);
        let exp_text = expected.to_string();
        let act_text = outcome_text(o);
        let base_pred = codec::print(v, &Values::zero(v.fields.len()));
        let pred_changes = changed(&base_pred, expected);
        let act_changes = base.map(|b| changed(b, actual)).unwrap_or_default();
        let act_desc: Vec<String> = act_changes.iter().map(|c| describe_element(v, c)).collect();
        let single = value.is_power_of_two();
        match &f.kind {
            FieldKind::Group { .. } | FieldKind::OperandModifier { .. } => {
                let t = v.field_table(fi).expect("table field");
                let (new_tokens, where_) = match &f.kind {
                    FieldKind::Group { .. } => (token_diff(base.map(|b| b.modifiers.clone()).unwrap_or_default(), actual.modifiers.clone()), "modifiers".to_string()),
                    _ => {
                        let el = act_changes.iter().find(|c| c.ends_with(".sfx")).cloned();
                        let toks = el
                            .as_ref()
                            .and_then(|e| element_value(actual, e))
                            .map(|s| s.split('.').filter(|x| !x.is_empty()).map(str::to_string).collect())
                            .unwrap_or_default();
                        (toks, el.unwrap_or_default())
                    }
                };
                let name = if new_tokens.is_empty() { "(default)".to_string() } else { new_tokens.join(".") };
                let others: Vec<&String> = act_changes.iter().filter(|c| **c != "mods" && !c.ends_with(".sfx")).collect();
                let proposal = if others.is_empty() {
                    format!("{}: {:0w$b} → {name}{}", t.title, value, if t.row(value).is_none() { " (row missing from the page)" } else { "" }, w = t.width as usize)
                } else {
                    format!("{}: {:0w$b} also changes {} ({where_})", t.title, value, others.iter().map(|c| describe_element(v, c)).collect::<Vec<_>>().join(", "), w = t.width as usize)
                };
                self.finding(Class::TableRow, Some(fi), bits, word, exp_text, act_text, Some(proposal))
            }
            FieldKind::Flag { role, name, .. } if single => {
                let class = match role {
                    FlagRole::Modifier => Class::FieldBits,
                    _ => Class::FlagOperand,
                };
                let proposal = if act_changes.is_empty() {
                    format!("'{name}' at bit {}: nvdisasm prints no change", bits[0])
                } else if *role == FlagRole::Modifier {
                    let toks = token_diff(base.map(|b| b.modifiers.clone()).unwrap_or_default(), actual.modifiers.clone());
                    format!("bit {} prints {} (page: .{name})", bits[0], if toks.is_empty() { act_desc.join(", ") } else { format!(".{}", toks.join(".")) })
                } else {
                    format!("bit {} is {} (page: '{name}' of {})", bits[0], act_desc.join(" and "), pred_changes.iter().map(|c| describe_element(v, c)).collect::<Vec<_>>().join(", "))
                };
                self.finding(class, Some(fi), bits, word, exp_text, act_text, Some(proposal))
            }
            _ => {
                // Operand values, predicate, wider flags: where did the bit land?
                let own = match &f.kind {
                    FieldKind::Operand { page_operand } => element_of_page_operand(v, *page_operand),
                    FieldKind::Pred => Some("pred".to_string()),
                    _ => None,
                };
                let proposal = if !single {
                    None
                } else if act_changes.is_empty() {
                    Some(format!("bit {}: nvdisasm ignores it; '{}' does not include it", bits[0], f.name))
                } else if own.as_ref().map(|o| act_changes == vec![o.clone()]).unwrap_or(false) {
                    let el = own.unwrap();
                    let got = element_value(actual, &el).unwrap_or_default();
                    Some(format!("bit {} of '{}' prints {got} where the page predicts {}", bits[0], f.name, element_value(expected, &el).unwrap_or_default()))
                } else {
                    Some(format!("bit {} belongs to {} (page: '{}')", bits[0], act_desc.join(" and "), f.name))
                };
                self.finding(Class::FieldBits, Some(fi), bits, word, exp_text, act_text, proposal)
            }
        }
    }

    /// A minimized random word that still disagrees.
    fn random_finding(&self, vals: &Values, w: Word, o: &Outcome, base: Option<&Instruction>) -> Option<Finding> {
        let v = self.v;
        let nonzero: Vec<usize> = (0..v.fields.len()).filter(|&i| vals.get(i) != 0 && !v.fields[i].is_control()).collect();
        let expected = codec::print(v, vals);
        let p = Probe { vi: 0, values: *vals, word: w, kind: Kind::Random };
        if nonzero.len() == 1 {
            // One field alone: judge it as a field probe.
            let fi = nonzero[0];
            let q = Probe { kind: Kind::Field { field: fi, value: vals.get(fi) }, ..p };
            return match self.judge(&q, o, base) {
                Judged::Found(f) => Some(f),
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
                format!("together they print {}", ch.iter().map(|c| describe_element(v, c)).collect::<Vec<_>>().join(", "))
            }
        };
        let mut f = self.finding(class, nonzero.first().map(|&i| i), bits, w, expected.to_string(), outcome_text(o), Some(format!("fields interact: {}: {what}", names.join(", "))));
        f.field = Some(nonzero.iter().map(|&i| v.fields[i].name.clone()).collect::<Vec<_>>().join(" + "));
        Some(f)
    }
}

/// Tokens in `after` that `before` lacks (multiset difference, order kept).
fn token_diff(before: Vec<String>, after: Vec<String>) -> Vec<String> {
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

/// Shrinks each disagreeing random word by clearing fields while the disagreement stays.
fn minimize(codec: &Codec, nv: &Nvdisasm, arch: &str, cands: Vec<(usize, Values, Vec<String>, usize)>, rounds: usize) -> Vec<(usize, Values, usize)> {
    let disagrees = |vi: usize, vals: &Values, out: &Outcome, want: &[String]| -> bool {
        let v = codec.variant(vi);
        let exp = codec::print(v, vals);
        match printed(out) {
            None => want == ["<legality>".to_string()],
            Some(a) => compare(&exp, &a) == Verdict::Differ && changed(&exp, &a) == want,
        }
    };
    let mut cur: Vec<(usize, Values, Vec<String>, usize, bool)> = cands.into_iter().map(|(a, b, c, d)| (a, b, c, d, false)).collect();
    for _ in 0..rounds {
        // Each candidate: try clearing each non-zero non-control field.
        let mut tries: Vec<(usize, usize, Values)> = vec![];
        for (ci, (vi, vals, _, _, done)) in cur.iter().enumerate() {
            if *done {
                continue;
            }
            let v = codec.variant(*vi);
            for fi in 0..v.fields.len() {
                if vals.get(fi) != 0 && !v.fields[fi].is_control() {
                    let mut t = *vals;
                    t.set(fi, 0);
                    tries.push((ci, fi, t));
                }
            }
        }
        if tries.is_empty() {
            break;
        }
        let words: Vec<Word> = tries.iter().map(|(ci, _, t)| codec.encode_unchecked(cur[*ci].0, t)).collect();
        let outs = nv.disassemble(arch, &words);
        let mut progressed = vec![false; cur.len()];
        for ((ci, _, t), o) in tries.iter().zip(&outs) {
            if progressed[*ci] {
                continue;
            }
            let (vi, _, want, _, _) = &cur[*ci];
            if disagrees(*vi, t, o, want) {
                cur[*ci].1 = *t;
                progressed[*ci] = true;
            }
        }
        for (ci, p) in progressed.iter().enumerate() {
            if !p {
                cur[ci].4 = true;
            }
        }
        if cur.iter().all(|c| c.4) {
            break;
        }
    }
    cur.into_iter().map(|(vi, vals, _, n, _)| (vi, vals, n)).collect()
}

/// Merges findings that say the same thing: same variant, class, field and proposal.
fn merge(raw: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = vec![];
    for f in raw {
        let key_match = |g: &Finding| {
            g.variant == f.variant && g.class == f.class && g.field == f.field && (g.proposal == f.proposal || (f.class == Class::Syntax))
        };
        if let Some(g) = out.iter_mut().find(|g| key_match(g)) {
            g.occurrences += f.occurrences;
            for b in f.bits {
                if !g.bits.contains(&b) {
                    g.bits.push(b);
                }
            }
            g.bits.sort_unstable();
            continue;
        }
        out.push(f);
    }
    out
}

/// `bits` as ranges, for messages.
pub fn bits_text(bits: &[u8]) -> String {
    format_ranges(bits)
}

/// Validates every page at once (one thread per page: the work is bound by nvdisasm's
/// process start-ups, not by CPU), calling `done` on this thread as each page finishes.
pub fn validate_pages(
    spec: &crate::spec::Spec,
    codec: &Codec,
    nv: &Nvdisasm,
    opts: &Options,
    mut done: impl FnMut(&Page, Vec<VariantSummary>, Vec<Finding>),
) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for (i, p) in spec.pages.iter().enumerate() {
            let tx = tx.clone();
            s.spawn(move || {
                let r = validate_page(p, codec, nv, opts, &|_| {});
                let _ = tx.send((i, r));
            });
        }
        drop(tx);
        for (i, (sums, finds)) in rx {
            done(&spec.pages[i], sums, finds);
        }
    });
}
