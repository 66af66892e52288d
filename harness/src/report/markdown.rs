//! The Markdown summary: pages with their errors, warnings and notes; every error with its
//! page diff; warnings; notes one line per variant; tallies by class.

use super::{about, edits_words, error_groups, evidence, locations_of, note_lines, of_severity, variants_of, Counts};
use crate::spec::Arch;
use crate::validate::finding::{Class, Finding, Severity, VariantSummary};
use crate::word::format_ranges;
use std::fmt::Write as _;

/// Text for a table cell or a heading: one line, Markdown punctuation that could change the
/// meaning (`|`, `\`, `<`, `>`, `*`, `` ` ``, `[`, `]`) backslash-escaped.
pub(crate) fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '<' | '>' | '*' | '`' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// A code span safe inside a table cell: `|` escaped (GFM splits cells before code spans),
/// a fence longer than any backtick run inside, `—` for empty text.
pub(crate) fn md_code(s: &str) -> String {
    let s: String = s.chars().map(|c| if matches!(c, '\n' | '\r' | '\t') { ' ' } else { c }).collect();
    if s.trim().is_empty() {
        return "—".into();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|"))
}

fn total(s: &VariantSummary) -> usize {
    s.findings.values().sum()
}

fn tally_row(out: &mut String, label: &str, words: usize, agreeing: usize, by_class: &[usize], total: usize) {
    let _ = write!(out, "| {label} | {words} | {agreeing} |");
    for n in by_class {
        let _ = write!(out, " {n} |");
    }
    let _ = writeln!(out, " {total} |");
}

fn table_header(out: &mut String, first: &str) {
    let _ = write!(out, "| {first} | words checked | agreeing |");
    for c in Class::ALL {
        let _ = write!(out, " {} |", c.name());
    }
    out.push_str(" total findings |\n|---|---:|---:|");
    for _ in Class::ALL {
        out.push_str("---:|");
    }
    out.push_str("---:|\n");
}

#[derive(Default)]
struct Tally {
    words: usize,
    agreeing: usize,
    by_class: [usize; Class::ALL.len()],
    total: usize,
}

impl Tally {
    fn add(&mut self, s: &VariantSummary) {
        self.words += s.words;
        self.agreeing += s.agreeing;
        for (i, c) in Class::ALL.iter().enumerate() {
            self.by_class[i] += s.findings.get(c.name()).copied().unwrap_or(0);
        }
        self.total += total(s);
    }
    fn row(&self, out: &mut String, label: &str) {
        tally_row(out, label, self.words, self.agreeing, &self.by_class, self.total);
    }
}

/// Groups items by a key, groups in order of first appearance, items in input order.
fn group_by<T, K: Eq + std::hash::Hash + Clone>(items: &[T], key: impl Fn(&T) -> K) -> Vec<(K, Vec<&T>)> {
    super::group_in_order(items.iter(), |it| key(it))
}

/// A fenced code block (fence longer than any backtick run in `text`), `text` verbatim.
pub(crate) fn md_block(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let body = text.trim_end_matches('\n');
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// The Markdown report: title, nvdisasm version and totals; a table of pages with their
/// errors, warnings and notes; every error (where, the edit in words, evidence, word, the
/// page diff); the warnings; the notes one line per variant; then tallies by class per page.
/// Input order is kept throughout.
pub fn markdown_summary(summaries: &[VariantSummary], findings: &[Finding], tool_version: &str) -> String {
    let mut out = String::new();
    out.push_str("# SASS encoding validation\n\n");
    let _ = writeln!(out, "nvdisasm: {}\n", md_code(tool_version.trim()));
    let mut all = Tally::default();
    summaries.iter().for_each(|s| all.add(s));
    let c = Counts::of(findings);
    let _ = write!(
        out,
        "{} variants, {} words checked, {} agreeing: {}, {}, {}",
        summaries.len(),
        all.words,
        all.agreeing,
        plural(c.errors, "error"),
        plural(c.warnings, "warning"),
        plural(c.notes, "note")
    );
    if findings.len() != all.total {
        let _ = write!(out, " ({} findings in the variant tallies)", all.total);
    }
    out.push_str(".\n\n");
    pages_table(&mut out, summaries, findings);
    errors_section(&mut out, findings);
    warnings_section(&mut out, findings);
    notes_section(&mut out, findings);
    tallies_section(&mut out, summaries);
    out
}

/// `## Pages`: per page (and arch) its variants, words, agreeing, errors, warnings, notes,
/// and a totals row; findings of variants without a summary get a row of their own.
fn pages_table(out: &mut String, summaries: &[VariantSummary], findings: &[Finding]) {
    out.push_str("## Pages\n\n| page | variants | words checked | agreeing | errors | warnings | notes |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    // Findings by (arch, variant), once: a scan per page would be quadratic.
    let by_variant = super::group_in_order(findings.iter(), |f| (f.arch, f.variant.as_str()));
    let by_variant: std::collections::HashMap<(Arch, &str), Vec<&Finding>> = by_variant.into_iter().collect();
    let of_rows = |rows: &[&VariantSummary]| {
        rows.iter().flat_map(|s| by_variant.get(&(s.arch, s.variant.as_str())).into_iter().flatten().copied()).collect::<Vec<&Finding>>()
    };
    let row = |out: &mut String, label: &str, variants: usize, words: usize, agreeing: usize, c: Counts| {
        let _ = writeln!(out, "| {label} | {variants} | {words} | {agreeing} | {} | {} | {} |", c.errors, c.warnings, c.notes);
    };
    for ((page, arch), rows) in group_by(summaries, |s| (s.page.clone(), s.arch)) {
        let c = Counts::of(of_rows(&rows));
        let (words, agreeing) = rows.iter().fold((0, 0), |(w, a), s| (w + s.words, a + s.agreeing));
        row(out, &format!("{} ({})", md_text(&page), md_text(&arch.to_string())), rows.len(), words, agreeing, c);
    }
    let known: std::collections::HashSet<(Arch, &str)> = summaries.iter().map(|s| (s.arch, s.variant.as_str())).collect();
    let orphans = Counts::of(findings.iter().filter(|f| !known.contains(&(f.arch, f.variant.as_str()))));
    if orphans.total() > 0 {
        row(out, "(variants without a summary)", 0, 0, 0, orphans);
    }
    let (words, agreeing) = summaries.iter().fold((0, 0), |(w, a), s| (w + s.words, a + s.agreeing));
    row(out, "**total**", summaries.len(), words, agreeing, Counts::of(findings));
    out.push('\n');
}

/// `## Errors (n)`: per page edit (errors sharing one correction together) a heading, where,
/// the edit in words, evidence, each error's word with expected and actual text and its
/// proposal, and the page diff.
fn errors_section(out: &mut String, findings: &[Finding]) {
    let groups = error_groups(findings);
    let n: usize = groups.iter().map(Vec::len).sum();
    let _ = writeln!(out, "## Errors ({n})\n");
    if groups.is_empty() {
        out.push_str("No errors.\n\n");
        return;
    }
    let _ = writeln!(out, "{}, explained by {}.\n", plural(n, "error"), plural(groups.len(), "page edit"));
    for (i, g) in groups.iter().enumerate() {
        let f = g[0];
        let what = if g.len() == 1 { about(f) } else { format!("{} errors, one page edit", g.len()) };
        let _ = writeln!(out, "### E{}. {}: {}\n", i + 1, md_text(&variants_of(g)), md_text(&what));
        let _ = writeln!(out, "- **where**: {}", md_code(&locations_of(g)));
        match &f.correction {
            Some(c) => {
                let _ = writeln!(out, "- **edit**: {}", md_text(&edits_words(c)));
                let _ = writeln!(out, "- **evidence**: {}", evidence(c));
            }
            None => out.push_str("- **edit**: none recorded (an error should carry a verified correction)\n"),
        }
        for e in g {
            let lead = if g.len() == 1 { "- **word**".to_string() } else { format!("- {}, **word**", md_text(&about(e))) };
            let _ = write!(
                out,
                "{lead} {}: the page expects {}, nvdisasm prints {} (seen {})",
                md_code(&e.word),
                md_code(&e.expected),
                md_code(&e.actual),
                plural(e.occurrences, "time")
            );
            match e.proposal.as_deref().filter(|p| !p.trim().is_empty()) {
                Some(p) if g.len() == 1 => {
                    let _ = write!(out, "\n- **proposal**: {}", md_text(p));
                }
                Some(p) => {
                    let _ = write!(out, "; {}", md_text(p));
                }
                None => {}
            }
            out.push('\n');
        }
        match f.correction.as_ref().filter(|c| !c.diff.trim().is_empty()) {
            Some(c) => {
                let _ = write!(out, "\n{}", md_block(&c.diff, "diff"));
            }
            None => out.push_str("\n(no diff recorded)\n"),
        }
        out.push('\n');
    }
}

/// `## Warnings (n)`: one table row each, with why no page edit explains it.
fn warnings_section(out: &mut String, findings: &[Finding]) {
    let warnings = of_severity(findings, Severity::Warning);
    let _ = writeln!(out, "## Warnings ({})\n", warnings.len());
    if warnings.is_empty() {
        out.push_str("No warnings.\n\n");
        return;
    }
    out.push_str("| variant | class | where | field | bits | word | expected | actual | why no page edit explains it | seen |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---:|\n");
    for f in warnings {
        let _ = writeln!(
            out,
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_text(&f.variant),
            md_text(&f.arch.to_string()),
            f.class.name(),
            md_code(&format!("{}:{}", f.page, f.line)),
            f.field.as_deref().map(md_text).unwrap_or_else(|| "—".into()),
            if f.bits.is_empty() { "—".into() } else { format_ranges(&f.bits) },
            md_code(&f.word),
            md_code(&f.expected),
            md_code(&f.actual),
            f.proposal.as_deref().map(md_text).filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "—".into()),
            f.occurrences,
        );
    }
    out.push('\n');
}

/// `## Notes (n)`: one line per variant, its notes grouped by what nvdisasm does.
fn notes_section(out: &mut String, findings: &[Finding]) {
    let lines = note_lines(findings);
    let n: usize = lines.iter().map(|l| l.count).sum();
    let _ = writeln!(out, "## Notes ({n})\n");
    if lines.is_empty() {
        out.push_str("No notes.\n\n");
        return;
    }
    for l in &lines {
        let _ = writeln!(out, "- **{}** ({}): {}", md_text(&l.variant), md_text(&l.arch.to_string()), md_text(&l.text));
    }
    out.push('\n');
}

/// `## Tallies by class`: per page a row per variant (findings by class) and a totals row.
fn tallies_section(out: &mut String, summaries: &[VariantSummary]) {
    out.push_str("## Tallies by class\n\n");
    if summaries.is_empty() {
        out.push_str("No variants validated.\n");
        return;
    }
    for ((page, arch), rows) in group_by(summaries, |s| (s.page.clone(), s.arch)) {
        let _ = writeln!(out, "### {} ({})\n", md_text(&page), md_text(&arch.to_string()));
        table_header(out, "variant");
        let mut t = Tally::default();
        for s in rows {
            t.add(s);
            let mut by_class = [0usize; Class::ALL.len()];
            for (i, c) in Class::ALL.iter().enumerate() {
                by_class[i] = s.findings.get(c.name()).copied().unwrap_or(0);
            }
            tally_row(out, &md_text(&s.variant), s.words, s.agreeing, &by_class, total(s));
        }
        t.row(out, "**total**");
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    /// The lines of the section that starts with `heading` (up to the next `## `).
    fn section<'a>(md: &'a str, heading: &str) -> Vec<&'a str> {
        let lines: Vec<&str> = md.lines().collect();
        let at = lines.iter().position(|l| *l == heading).unwrap_or_else(|| panic!("{heading} in\n{md}"));
        lines[at + 1..].iter().take_while(|l| !l.starts_with("## ")).copied().collect()
    }

    #[test]
    fn report_markdown_rows_and_counts() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let md = markdown_summary(&summaries, &findings, fixture::TOOL);
        let v0 = &spec.pages[0].variants[0].key;
        let v1 = &spec.pages[0].variants[1].key;
        assert!(md.starts_with("# SASS encoding validation\n"));
        assert!(md.contains(&format!("nvdisasm: `{}`", fixture::TOOL)), "{md}");
        assert!(md.contains("2 variants, 65 words checked, 62 agreeing: 1 error, 1 warning, 5 notes.\n"), "{md}");
        // The pages table: errors, warnings, notes per page and in total.
        let pages = section(&md, "## Pages");
        assert_eq!(pages[1], "| page | variants | words checked | agreeing | errors | warnings | notes |");
        assert_eq!(pages[3], "| DFMA (SM90) | 2 | 65 | 62 | 1 | 1 | 5 |");
        assert_eq!(pages[4], "| **total** | 2 | 65 | 62 | 1 | 1 | 5 |");
        // Tallies by class: variant, words, agreeing, the 9 classes, total.
        let tallies = section(&md, "## Tallies by class");
        assert_eq!(tallies[1], "### DFMA (SM90)");
        let header = tallies.iter().find(|l| l.starts_with("| variant |")).unwrap();
        assert_eq!(header.matches('|').count(), 3 + Class::ALL.len() + 2);
        assert!(header.contains("| field_bits | table_row |") && header.ends_with("| syntax | total findings |"));
        let row0 = format!("| {v0} | 40 | 37 | 1 | 0 | 0 | 1 | 1 | 0 | 2 | 0 | 1 | 6 |");
        let i0 = tallies.iter().position(|l| *l == row0).unwrap_or_else(|| panic!("row {row0} in\n{md}"));
        assert_eq!(tallies[i0 + 1], format!("| {v1} | 25 | 25 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 1 |"));
        assert_eq!(tallies[i0 + 2], "| **total** | 65 | 62 | 1 | 0 | 0 | 1 | 1 | 0 | 3 | 0 | 1 | 7 |");
        // Warnings: pipes escaped, `<` escaped outside code spans, one row each.
        let warnings = section(&md, "## Warnings (1)");
        let rows: Vec<&&str> = warnings.iter().filter(|l| l.starts_with(&format!("| {v0}"))).collect();
        assert_eq!(rows.len(), 1, "{md}");
        let file = &spec.pages[0].variants[0].file;
        let line = spec.pages[0].variants[0].line;
        assert_eq!(
            *rows[0],
            format!("| {v0} (SM90) | interaction | `{file}:{line}` | — | 80..81 | `000fe20000030000000000000000722b` | `DFMA.RZ R0, R0, R0, R0 ;` | `DFMA.RZ.FTZ R0, R0, R0, R0 ;` | no page edit explains it: bits 80 & 81 together print \\<.FTZ\\> | 2 |")
        );
        assert_eq!(rows[0].replace("\\|", "").matches('|').count(), 11, "{}", rows[0]);
        assert_eq!(md, markdown_summary(&summaries, &findings, fixture::TOOL), "deterministic");
    }

    #[test]
    fn report_markdown_errors_then_warnings_then_notes() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let md = markdown_summary(&summaries, &findings, fixture::TOOL);
        let v0 = &spec.pages[0].variants[0];
        let v1 = &spec.pages[0].variants[1];
        // The input has notes first and the error fifth; the report leads with the error.
        let at = |h: &str| md.find(h).unwrap_or_else(|| panic!("{h} in\n{md}"));
        let order = ["## Pages\n", "## Errors (1)\n", "## Warnings (1)\n", "## Notes (5)\n", "## Tallies by class\n"].map(at);
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{md}");
        // The error: heading, where, edit in words, evidence, word, proposal, and the diff.
        let error = section(&md, "## Errors (1)");
        let modi = format_ranges(&fixture::disputed_bits(v0));
        let expected = [
            "".to_string(),
            "1 error, explained by 1 page edit.".into(),
            "".into(),
            format!("### E1. {} (SM90): field_bits, field modi 1, bits {modi}", v0.key),
            "".into(),
            format!("- **where**: `{}:{}`", v0.file, v0.layout_lines[3]),
            "- **edit**: row 1 (0b01) of table \u{201c}Modifier Group 1\u{201d} is \u{201c}RP\u{201d}, not \u{201c}RM\u{201d}".into(),
            "- **evidence**: fixes 3 of 40 probe words, 0 regressions".into(),
            "- **word** `000fe20000004000000000000000722b`: the page expects `DFMA.RM R0, R0, R0, R0 ;`, nvdisasm prints `DFMA.RP R0, R0, R0, R0 ;` (seen 3 times)".into(),
            "- **proposal**: swap RM and RP".into(),
            "".into(),
            "```diff".into(),
            "--- a/DFMA.txt".into(),
            "+++ b/DFMA.txt".into(),
            "@@ -22,1 +22,1 @@".into(),
            "-01\tRM".into(),
            "+01\tRP".into(),
            "```".into(),
        ];
        assert_eq!(error[..expected.len()], expected, "{md}");
        // Errors that one page edit explains are listed under it, with the diff once.
        let mut more = findings.clone();
        let mut twin = findings[4].clone();
        twin.word = "000fe20000004000000000000000f22b".into();
        twin.proposal = None;
        more.push(twin);
        let md2 = markdown_summary(&summaries, &more, fixture::TOOL);
        let error = section(&md2, "## Errors (2)");
        assert_eq!(error[1], "2 errors, explained by 1 page edit.");
        assert_eq!(error[3], format!("### E1. {} (SM90): 2 errors, one page edit", v0.key));
        assert_eq!(error[8], format!("- field_bits, field modi 1, bits {modi}, **word** `000fe20000004000000000000000722b`: the page expects `DFMA.RM R0, R0, R0, R0 ;`, nvdisasm prints `DFMA.RP R0, R0, R0, R0 ;` (seen 3 times); swap RM and RP"));
        assert!(
            error[9].starts_with("- field_bits, field modi 1")
                && error[9].contains("`000fe20000004000000000000000f22b`")
                && error[9].ends_with("(seen 3 times)"),
            "{}",
            error[9]
        );
        assert_eq!(md2.matches("```diff").count(), 1);
        // Notes: one line per variant, nothing else.
        let notes: Vec<&str> = section(&md, "## Notes (5)").into_iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(
            notes,
            [
                format!("- **{}** (SM90): bits 40..45,76..77: nvdisasm ignores them (fixed_ignored: 2 findings, 8 bits); field reuse: nvdisasm rejects some combinations (legality: 1 finding, 2 bits); spelling: terminator spacing (syntax: 1 finding)", v0.key),
                format!("- **{}** (SM90): bits 100..103: nvdisasm ignores them (fixed_ignored: 1 finding, 4 bits)", v1.key),
            ]
        );
        // Notes' words and texts are not listed one by one.
        assert!(!md.contains("a < b") && !md.contains("a \\< b"), "{md}");
    }

    #[test]
    fn report_markdown_overview_for_several_pages_and_no_findings() {
        let spec = fixture::spec();
        let (mut summaries, findings) = fixture::data(&spec);
        let mut other = summaries[1].clone();
        other.page = "FOO|BAR".into();
        other.arch = Arch(100);
        summaries.push(other);
        let md = markdown_summary(&summaries, &findings, "v1");
        let pages = section(&md, "## Pages");
        assert_eq!(pages[3], "| DFMA (SM90) | 2 | 65 | 62 | 1 | 1 | 5 |", "{md}");
        assert_eq!(pages[4], "| FOO\\|BAR (SM100) | 1 | 25 | 25 | 0 | 0 | 0 |", "{md}");
        assert_eq!(pages[5], "| **total** | 3 | 90 | 87 | 1 | 1 | 5 |", "{md}");
        // Findings of a variant without a summary get their own row.
        let md = markdown_summary(&summaries[1..], &findings, "v1");
        let pages = section(&md, "## Pages");
        assert_eq!(pages[5], "| (variants without a summary) | 0 | 0 | 0 | 1 | 1 | 4 |", "{md}");
        assert_eq!(pages[6], "| **total** | 2 | 50 | 50 | 1 | 1 | 5 |", "{md}");

        let md = markdown_summary(&summaries, &[], "v1");
        for (h, none) in [("## Errors (0)", "No errors."), ("## Warnings (0)", "No warnings."), ("## Notes (0)", "No notes.")] {
            assert_eq!(section(&md, h)[1], none, "{md}");
        }
        assert!(md.contains("| **total** | 3 | 90 | 87 | 0 | 0 | 0 |"), "{md}");
        assert!(markdown_summary(&[], &[], "v1").ends_with("## Tallies by class\n\nNo variants validated.\n"));
    }

    #[test]
    fn report_md_code_fences() {
        assert_eq!(md_block("x\n```y\n", "diff"), "````diff\nx\n```y\n````\n");
        assert_eq!(md_block("x", ""), "```\nx\n```\n");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x"), "`` `x ``");
        assert_eq!(md_code(""), "—");
        assert_eq!(md_text("a|b<c>"), "a\\|b\\<c\\>");
    }
}
