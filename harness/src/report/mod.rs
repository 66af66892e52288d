//! Reports: a Markdown summary of a validation run, one self-contained HTML page per
//! instruction page that draws each variant's 128-bit layout coloured by what was verified,
//! and `findings.sarif` (SARIF 2.1.0) for code-scanning tools.
//!
//! Every report leads with errors (a verified page edit: its diff, the edit in words and the
//! evidence), then warnings (why no page edit explains them), then notes collapsed to one
//! line per variant. `findings.jsonl` is streamed by the validator itself; this module only
//! renders.

mod html;
mod markdown;
mod sarif;

pub use html::{html_index, html_page};
pub use markdown::markdown_summary;
pub use sarif::sarif_log;

use crate::spec::{Arch, Page, Spec, Variant};
use crate::validate::finding::{Class, Correction, Edit, Finding, Severity, VariantSummary};
use crate::word::format_ranges;
use std::path::{Path, PathBuf};

/// Does this finding belong to this variant?
pub(crate) fn finding_matches(f: &Finding, v: &Variant) -> bool {
    f.variant == v.key && f.arch == v.arch
}

/// Does this summary belong to this variant?
pub(crate) fn summary_matches(s: &VariantSummary, v: &Variant) -> bool {
    s.variant == v.key && s.arch == v.arch
}

/// The HTML file name (without folder) for a page: `DFMA_SM90.html`. Characters other than
/// ASCII letters, digits, `_`, `-` and `.` become `_`.
pub fn html_file_name(page: &Page) -> String {
    let stem: String = format!("{}_{}", page.instruction, page.arch)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' { c } else { '_' })
        .collect();
    format!("{stem}.html")
}

/// What a finding is about: `field_bits, field modi 1, bits 9..10`.
pub(crate) fn about(f: &Finding) -> String {
    let mut s = f.class.name().to_string();
    if let Some(field) = &f.field {
        s += &format!(", field {field}");
    }
    if !f.bits.is_empty() {
        s += &format!(", bits {}", format_ranges(&f.bits));
    }
    s
}

/// Errors, warnings and notes among some findings.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
}

impl Counts {
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Note => c.notes += 1,
            }
        }
        c
    }
    pub fn total(self) -> usize {
        self.errors + self.warnings + self.notes
    }
}

/// The findings of one severity, in input order.
pub(crate) fn of_severity<'a>(findings: impl IntoIterator<Item = &'a Finding>, s: Severity) -> Vec<&'a Finding> {
    findings.into_iter().filter(|f| f.severity == s).collect()
}

/// Errors grouped by the page edit that explains them (same page, same correction), groups
/// in order of first appearance; an error without a correction is a group of its own.
pub(crate) fn error_groups<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Vec<Vec<&'a Finding>> {
    // A correction is identified by its page and diff; one without is a group of its own.
    let errors = findings.into_iter().filter(|f| f.severity == Severity::Error).enumerate();
    let grouped = group_in_order(errors, |(i, f)| match &f.correction {
        Some(c) => (f.page.clone(), c.diff.clone(), usize::MAX),
        None => (f.page.clone(), String::new(), *i),
    });
    grouped.into_iter().map(|(_, g)| g.into_iter().map(|(_, f)| f).collect()).collect()
}

/// Groups in order of first appearance, items in input order; linear in the items (a hash
/// map finds each item's group: reports of whole architectures have 10⁵–10⁶ findings).
pub(crate) fn group_in_order<T, K: Eq + std::hash::Hash + Clone>(items: impl IntoIterator<Item = T>, key: impl Fn(&T) -> K) -> Vec<(K, Vec<T>)> {
    let mut at: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut groups: Vec<(K, Vec<T>)> = vec![];
    for it in items {
        let k = key(&it);
        match at.get(&k) {
            Some(&i) => groups[i].1.push(it),
            None => {
                at.insert(k.clone(), groups.len());
                groups.push((k, vec![it]));
            }
        }
    }
    groups
}

/// Distinct `variant (arch)` names of some findings, `, `-separated.
pub(crate) fn variants_of(fs: &[&Finding]) -> String {
    let names: Vec<String> = fs.iter().map(|f| format!("{} ({})", f.variant, f.arch)).collect();
    distinct(names.iter().map(String::as_str)).join(", ")
}

/// Distinct `page:line` locations of some findings, `, `-separated.
pub(crate) fn locations_of(fs: &[&Finding]) -> String {
    let locs: Vec<String> = fs.iter().map(|f| format!("{}:{}", f.page, f.line)).collect();
    distinct(locs.iter().map(String::as_str)).join(", ")
}

/// What a finding class means, in a sentence (SARIF rule descriptions, legends).
pub fn class_description(c: Class) -> &'static str {
    match c {
        Class::FieldBits => "A field's bits are not where (or as wide as) the page says.",
        Class::TableRow => "A table row's name is wrong, or a value the table omits prints a name.",
        Class::FlagOperand => "A cABS/cNEG/selector flag applies to another operand (or is another flag).",
        Class::Interaction => "Two fields interact: together they print what neither predicts alone.",
        Class::Legality => "nvdisasm rejects (or prints nothing for) a word the page describes.",
        Class::Unexpressible => "nvdisasm accepts a word the page cannot express (a fixed bit that selects a meaning).",
        Class::FixedIgnored => "A bit the page calls fixed changes nothing nvdisasm prints.",
        Class::MissingForm => "A word this form excludes prints as a form no variant of the spec decodes (a coverage gap).",
        Class::Syntax => "Same meaning, different text (spacing, float spelling, modifier order).",
    }
}

/// A page edit in words (plain text: callers escape it).
pub fn edit_words(e: &Edit) -> String {
    e.describe()
}

/// All edits of a correction in words, `; `-separated (`no edit recorded` when empty).
pub fn edits_words(c: &Correction) -> String {
    if c.edits.is_empty() {
        return "no edit recorded".into();
    }
    c.edits.iter().map(edit_words).collect::<Vec<_>>().join("; ")
}

/// The evidence behind a correction: `fixes 3 of 40 probe words, 0 regressions`.
pub fn evidence(c: &Correction) -> String {
    format!(
        "fixes {} of {} probe word{}, {} regression{}",
        c.fixes,
        c.probes,
        if c.probes == 1 { "" } else { "s" },
        c.regressions,
        if c.regressions == 1 { "" } else { "s" }
    )
}

/// A variant's notes collapsed to one line: `text` is its clauses, one per class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteLine {
    pub arch: Arch,
    pub variant: String,
    pub count: usize,
    pub text: String,
}

/// The order of a note line's clauses: what nvdisasm ignores, then what it rejects, then
/// the rest, spelling last.
const NOTE_ORDER: [Class; 9] = [
    Class::FixedIgnored,
    Class::Legality,
    Class::MissingForm,
    Class::Unexpressible,
    Class::Interaction,
    Class::FlagOperand,
    Class::FieldBits,
    Class::TableRow,
    Class::Syntax,
];

/// The notes among `findings`, one line per variant (variants in order of first appearance):
/// one clause per class in `NOTE_ORDER`, bits grouped by what nvdisasm does, e.g.
/// `bits 40..61,76..77: nvdisasm ignores them (fixed_ignored: 22 findings, 24 bits)`.
pub fn note_lines<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Vec<NoteLine> {
    let notes = findings.into_iter().filter(|f| f.severity == Severity::Note);
    group_in_order(notes, |f| (f.arch, f.variant.clone()))
        .into_iter()
        .map(|((arch, variant), fs)| {
            let clauses: Vec<String> = NOTE_ORDER
                .iter()
                .filter_map(|&c| {
                    let of: Vec<&Finding> = fs.iter().copied().filter(|f| f.class == c).collect();
                    (!of.is_empty()).then(|| note_clause(c, &of))
                })
                .collect();
            NoteLine { arch, variant, count: fs.len(), text: clauses.join("; ") }
        })
        .collect()
}

/// Distinct items in order of first appearance.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = std::collections::HashSet::new();
    items.filter(|i| !i.trim().is_empty() && seen.insert(*i)).collect()
}

/// One class's notes of one variant as a clause.
fn note_clause(c: Class, fs: &[&Finding]) -> String {
    let mut bits: Vec<u8> = fs.iter().flat_map(|f| f.bits.iter().copied()).collect();
    bits.sort_unstable();
    bits.dedup();
    let fields = distinct(fs.iter().filter_map(|f| f.field.as_deref()));
    let what = match c {
        Class::FixedIgnored => "nvdisasm ignores them",
        Class::Legality => "nvdisasm rejects some combinations",
        Class::Syntax => "spelling",
        Class::Interaction => "fields interact",
        Class::FieldBits => "bits differ from the page",
        Class::TableRow => "table rows differ",
        Class::FlagOperand => "flags apply to another operand",
        Class::Unexpressible => "nvdisasm accepts words the page cannot express",
        Class::MissingForm => "words it excludes are forms the spec lacks",
    };
    let subject = if !fields.is_empty() && c != Class::FixedIgnored {
        Some(format!("field{} {}", if fields.len() == 1 { "" } else { "s" }, fields.join(", ")))
    } else if !bits.is_empty() {
        Some(format!("bit{} {}", if bits.len() == 1 { "" } else { "s" }, format_ranges(&bits)))
    } else {
        None
    };
    let mut text = match subject {
        Some(s) => format!("{s}: {what}"),
        None => what.to_string(),
    };
    // Proposals say what differs in spelling; for bits and legality they repeat the bits.
    if !matches!(c, Class::FixedIgnored | Class::Legality) {
        let ps = distinct(fs.iter().filter_map(|f| f.proposal.as_deref()));
        if !ps.is_empty() {
            let more = if ps.len() > 3 { format!("; +{} more", ps.len() - 3) } else { String::new() };
            text = format!("{text}: {}{more}", ps[..ps.len().min(3)].join("; "));
        } else if c == Class::Syntax {
            text += " differs";
        }
    }
    let n = fs.len();
    let nbits = if bits.is_empty() { String::new() } else { format!(", {} bit{}", bits.len(), if bits.len() == 1 { "" } else { "s" }) };
    format!("{text} ({}: {n} finding{}{nbits})", c.name(), if n == 1 { "" } else { "s" })
}

/// Indices of each page's findings and summaries (by `spec.pages` index), in input order.
pub(crate) fn by_page<'p>(pages: impl IntoIterator<Item = &'p Page>, summaries: &[VariantSummary], findings: &[Finding]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let mut page_of: std::collections::HashMap<(Arch, &str), usize> = std::collections::HashMap::new();
    let mut n = 0;
    for (pi, p) in pages.into_iter().enumerate() {
        for v in &p.variants {
            page_of.entry((v.arch, v.key.as_str())).or_insert(pi);
        }
        n = pi + 1;
    }
    let mut fs = vec![vec![]; n];
    let mut ss = vec![vec![]; n];
    for (i, f) in findings.iter().enumerate() {
        if let Some(&pi) = page_of.get(&(f.arch, f.variant.as_str())) {
            fs[pi].push(i);
        }
    }
    for (i, s) in summaries.iter().enumerate() {
        if let Some(&pi) = page_of.get(&(s.arch, s.variant.as_str())) {
            ss[pi].push(i);
        }
    }
    (fs, ss)
}

/// Writes `summary.md`, `findings.sarif`, `html/<INSTRUCTION>_<ARCH>.html` per page and
/// `html/index.html` under `dir` (created as needed). Returns the written paths, in that order.
pub fn write_reports(dir: &Path, spec: &Spec, summaries: &[VariantSummary], findings: &[Finding], tool_version: &str) -> std::io::Result<Vec<PathBuf>> {
    let html_dir = dir.join("html");
    std::fs::create_dir_all(&html_dir)?;
    let mut written = vec![];

    let md = dir.join("summary.md");
    std::fs::write(&md, markdown_summary(summaries, findings, tool_version))?;
    written.push(md);

    let sarif = dir.join("findings.sarif");
    // Streamed to the file: a whole architecture's log is hundreds of MB as one string.
    let mut w = std::io::BufWriter::new(std::fs::File::create(&sarif)?);
    sarif::write_sarif(&mut w, findings, tool_version).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut w, b"\n")?;
    std::io::Write::flush(&mut w)?;
    written.push(sarif);

    let (page_findings, page_summaries) = by_page(&spec.pages, summaries, findings);
    let mut used = std::collections::BTreeSet::new();
    let mut entries: Vec<(&Page, String)> = vec![];
    for (pi, page) in spec.pages.iter().enumerate() {
        // Two pages with the same instruction and arch (should not happen) get distinct files.
        let base = html_file_name(page);
        let mut name = base.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{}_{n}.html", base.trim_end_matches(".html"));
            n += 1;
        }
        let path = html_dir.join(&name);
        // This page's findings only (one pass over them all, not one per page).
        let fs: Vec<Finding> = page_findings[pi].iter().map(|&i| findings[i].clone()).collect();
        let ss: Vec<VariantSummary> = page_summaries[pi].iter().map(|&i| summaries[i].clone()).collect();
        std::fs::write(&path, html_page(page, &ss, &fs, tool_version))?;
        written.push(path);
        entries.push((page, name));
    }

    let index = html_dir.join("index.html");
    std::fs::write(&index, html_index(&entries, summaries, findings, tool_version))?;
    written.push(index);
    Ok(written)
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::spec::{Spec, Variant};
    use crate::validate::finding::{BitStatus, Class, Correction, Edit, Finding, Severity, VariantSummary};

    pub const TOOL: &str = "nvdisasm: Cuda compilation tools, release 12.8, V12.8.93";

    pub fn spec() -> Spec {
        crate::spec::load(&[crate::oracle::tools::repo_root().join("corpus/isa/sm90")]).expect("corpus/isa/sm90 loads")
    }

    /// The `modi 1` field's bits of a variant: the bits the fixture disputes.
    pub fn disputed_bits(v: &Variant) -> Vec<u8> {
        let i = v.field_by_name("modi 1").expect("DFMA variants have modi 1");
        v.fields[i].bits.clone()
    }

    /// Summaries for the page's first two variants, and findings on them in scrambled
    /// severity order (notes first, the error fifth): on the first variant an error (a
    /// corrected `modi 1` row with a diff), a warning whose proposal needs escaping, a
    /// syntax note with text that needs escaping, two fixed_ignored notes (bits 40..45 and
    /// 76..77) and a legality note on `reuse`; on the second a fixed_ignored note.
    pub fn data(spec: &Spec) -> (Vec<VariantSummary>, Vec<Finding>) {
        let page = &spec.pages[0];
        let v0 = &page.variants[0];
        let v1 = &page.variants[1];
        let status = |v: &Variant, disputed: &[u8]| -> Vec<BitStatus> {
            (0u8..128)
                .map(|b| {
                    if disputed.contains(&b) {
                        BitStatus::Disputed
                    } else if v.fields.iter().any(|f| f.is_control() && f.bits.contains(&b)) {
                        BitStatus::Unconfirmed
                    } else {
                        BitStatus::Verified
                    }
                })
                .collect()
        };
        let d = disputed_bits(v0);
        let by_class = |pairs: &[(&str, usize)]| pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        let s0 = VariantSummary {
            arch: v0.arch,
            variant: v0.key.clone(),
            page: page.instruction.clone(),
            words: 40,
            agreeing: 37,
            findings: by_class(&[("field_bits", 1), ("interaction", 1), ("legality", 1), ("fixed_ignored", 2), ("syntax", 1)]),
            bit_status: status(v0, &d),
        };
        let s1 = VariantSummary {
            arch: v1.arch,
            variant: v1.key.clone(),
            page: page.instruction.clone(),
            words: 25,
            agreeing: 25,
            findings: by_class(&[("fixed_ignored", 1)]),
            bit_status: status(v1, &[]),
        };
        (vec![s0, s1], findings(v0, v1, &d))
    }

    /// The findings of [`data`], on its two variants; `d` are the error's bits.
    fn findings(v0: &Variant, v1: &Variant, d: &[u8]) -> Vec<Finding> {
        let note = |v: &Variant, class: Class, bits: Vec<u8>| Finding {
            arch: v.arch,
            variant: v.key.clone(),
            class,
            severity: Severity::Note,
            page: v.file.clone(),
            line: v.layout_lines[1],
            field: None,
            bits,
            word: "000fe20000000000000000000000722b".into(),
            expected: "DFMA R0, R0, R0, R0 ;".into(),
            actual: "DFMA R0, R0, R0, R0 ;".into(),
            proposal: Some("nvdisasm ignores this fixed bit".into()),
            correction: None,
            occurrences: 1,
            tool: TOOL.into(),
        };
        let error = Finding {
            class: Class::FieldBits,
            severity: Severity::Error,
            line: v0.layout_lines[3],
            correction: Some(Correction {
                edits: vec![Edit::RowName {
                    variant: v0.key.clone(),
                    table: "Modifier Group 1".into(),
                    value: 1,
                    width: 2,
                    from: Some("RM".into()),
                    name: "RP".into(),
                }],
                fixes: 3,
                regressions: 0,
                probes: 40,
                diff: "--- a/DFMA.txt\n+++ b/DFMA.txt\n@@ -22,1 +22,1 @@\n-01\tRM\n+01\tRP\n".into(),
            }),
            field: Some("modi 1".into()),
            bits: d.to_vec(),
            word: "000fe20000004000000000000000722b".into(),
            expected: "DFMA.RM R0, R0, R0, R0 ;".into(),
            actual: "DFMA.RP R0, R0, R0, R0 ;".into(),
            proposal: Some("swap RM and RP".into()),
            occurrences: 3,
            ..note(v0, Class::FieldBits, vec![])
        };
        let warning = Finding {
            class: Class::Interaction,
            severity: Severity::Warning,
            line: v0.line,
            bits: vec![80, 81],
            word: "000fe20000030000000000000000722b".into(),
            expected: "DFMA.RZ R0, R0, R0, R0 ;".into(),
            actual: "DFMA.RZ.FTZ R0, R0, R0, R0 ;".into(),
            proposal: Some("no page edit explains it: bits 80 & 81 together print <.FTZ>".into()),
            occurrences: 2,
            ..note(v0, Class::Interaction, vec![])
        };
        let syntax = Finding {
            line: v0.line,
            word: "000fe20000000000000000000000722b".into(),
            expected: "a < b | c & d".into(),
            actual: "<illegal: x|y & z>".into(),
            proposal: Some("terminator spacing".into()),
            ..note(v0, Class::Syntax, vec![])
        };
        let legality = Finding { field: Some("reuse".into()), proposal: None, ..note(v0, Class::Legality, vec![122, 123]) };
        vec![
            syntax,
            note(v1, Class::FixedIgnored, (100..=103).collect()),
            warning,
            note(v0, Class::FixedIgnored, (40..=45).collect()),
            error,
            legality,
            note(v0, Class::FixedIgnored, vec![76, 77]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_write_reports_writes_expected_files() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("sass-report-test-{}-{nanos}", std::process::id()));
        let written = write_reports(&dir, &spec, &summaries, &findings, fixture::TOOL).unwrap();

        let page = &spec.pages[0];
        let page_html = dir.join("html").join(format!("{}_{}.html", page.instruction, page.arch));
        assert_eq!(page_html.file_name().unwrap(), "DFMA_SM90.html");
        let mut expected = vec![dir.join("summary.md"), dir.join("findings.sarif")];
        expected.extend(spec.pages.iter().map(|p| dir.join("html").join(html_file_name(p))));
        expected.push(dir.join("html/index.html"));
        assert_eq!(written, expected);
        for p in &written {
            assert!(p.is_file(), "{} written", p.display());
        }
        let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert_eq!(md, markdown_summary(&summaries, &findings, fixture::TOOL));
        let index = std::fs::read_to_string(dir.join("html/index.html")).unwrap();
        assert!(index.contains("href=\"DFMA_SM90.html\""), "{index}");
        let html = std::fs::read_to_string(&page_html).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        let sarif: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("findings.sarif")).unwrap()).unwrap();
        assert_eq!(sarif, serde_json::to_value(sarif_log(&findings, fixture::TOOL)).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn report_note_lines_one_per_variant_grouped_by_what_nvdisasm_does() {
        let spec = fixture::spec();
        let (_, findings) = fixture::data(&spec);
        let v = &spec.pages[0].variants;
        let lines = note_lines(&findings);
        // Two variants have notes: one line each, in order of first appearance.
        assert_eq!(lines.iter().map(|l| l.variant.as_str()).collect::<Vec<_>>(), [v[0].key.as_str(), v[1].key.as_str()]);
        assert_eq!(lines.iter().map(|l| l.count).collect::<Vec<_>>(), [4, 1]);
        assert_eq!(
            lines[0].text,
            "bits 40..45,76..77: nvdisasm ignores them (fixed_ignored: 2 findings, 8 bits); \
             field reuse: nvdisasm rejects some combinations (legality: 1 finding, 2 bits); \
             spelling: terminator spacing (syntax: 1 finding)"
        );
        assert_eq!(lines[1].text, "bits 100..103: nvdisasm ignores them (fixed_ignored: 1 finding, 4 bits)");
        // Errors and warnings are not notes.
        let loud: Vec<&Finding> = findings.iter().filter(|f| f.severity != Severity::Note).collect();
        assert_eq!(loud.len(), 2);
        assert!(note_lines(loud).is_empty());
        assert_eq!(Counts::of(&findings), Counts { errors: 1, warnings: 1, notes: 5 });
    }

    #[test]
    fn report_errors_grouped_by_page_edit() {
        let spec = fixture::spec();
        let (_, findings) = fixture::data(&spec);
        let e = &findings[4];
        let twin = Finding { word: "1".into(), ..e.clone() };
        let mut other_diff = e.clone();
        other_diff.correction.as_mut().unwrap().diff.push_str("+x\n");
        let other_page = Finding { page: "other.txt".into(), ..e.clone() };
        let bare = Finding { correction: None, ..e.clone() };
        let all = [e.clone(), other_diff.clone(), findings[2].clone(), twin.clone(), bare.clone(), bare.clone(), other_page.clone()];
        let groups = error_groups(&all);
        let words: Vec<Vec<&str>> = groups.iter().map(|g| g.iter().map(|f| f.word.as_str()).collect()).collect();
        assert_eq!(words, [vec![e.word.as_str(), "1"], vec![e.word.as_str()], vec![e.word.as_str()], vec![e.word.as_str()], vec![e.word.as_str()]]);
        assert_eq!(groups[1][0].correction, other_diff.correction);
        assert!(groups[2][0].correction.is_none() && groups[3][0].correction.is_none(), "no correction: never merged");
        assert_eq!(groups[4][0].page, "other.txt");
        assert_eq!(locations_of(&groups[0]), format!("{}:{}", e.page, e.line));
        assert_eq!(variants_of(&[e, &findings[1]]), format!("{} (SM90), {} (SM90)", e.variant, findings[1].variant));
    }

    #[test]
    fn report_edits_in_words_and_evidence() {
        let v = || "V".to_string();
        let cases = [
            (Edit::FieldBits { variant: v(), field: "Ra".into(), bits: vec![24, 25, 26, 40] }, "field \u{201c}Ra\u{201d} occupies bits 24..26,40"),
            (Edit::FixedToFlag { variant: v(), bit: 73, name: "cABS".into() }, "fixed bit 73 is the one-bit field \u{201c}cABS\u{201d}"),
            (
                Edit::RenameFlag { variant: v(), bit: 72, from: "cABS".into(), to: "cNEG".into() },
                "the one-bit field at bit 72 is \u{201c}cNEG\u{201d}, not \u{201c}cABS\u{201d}",
            ),
            (
                Edit::RowName { variant: v(), table: "T".into(), value: 5, width: 4, from: None, name: "X".into() },
                "row 5 (0b0101) of table \u{201c}T\u{201d} is missing: it is \u{201c}X\u{201d}",
            ),
            (Edit::Heading { variant: v(), from: "I2F.???0".into(), to: "I2F".into() }, "the heading is \u{201c}I2F\u{201d}, not \u{201c}I2F.???0\u{201d}"),
            (Edit::Distilled { variant: v(), from: "a".into(), to: "b".into() }, "the distilled line is \u{201c}b\u{201d}, not \u{201c}a\u{201d}"),
        ];
        for (e, words) in &cases {
            assert_eq!(edit_words(e), *words);
        }
        let c = Correction { edits: cases.iter().take(2).map(|(e, _)| e.clone()).collect(), fixes: 1, regressions: 0, probes: 1, diff: String::new() };
        assert_eq!(edits_words(&c), format!("{}; {}", cases[0].1, cases[1].1));
        assert_eq!(evidence(&c), "fixes 1 of 1 probe word, 0 regressions");
        assert_eq!(edits_words(&Correction { edits: vec![], ..c }), "no edit recorded");
    }

    #[test]
    fn report_file_names_are_sanitized() {
        let spec = fixture::spec();
        let mut page = spec.pages[0].clone();
        page.instruction = "I2F.???0/x".into();
        assert_eq!(html_file_name(&page), "I2F.___0_x_SM90.html");
    }
}
