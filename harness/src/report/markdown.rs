//! The Markdown summary: per page/arch tallies, then every finding grouped by variant.

use crate::validate::finding::{Class, Finding, VariantSummary};
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
fn group_by<T, K: PartialEq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<(K, Vec<&T>)> {
    let mut groups: Vec<(K, Vec<&T>)> = vec![];
    for it in items {
        let k = key(it);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(it),
            None => groups.push((k, vec![it])),
        }
    }
    groups
}

/// The Markdown report: title, nvdisasm version, a tally table per page/arch (a row per
/// variant plus a totals row), an overall table when there are several pages, then the
/// findings grouped by variant. Input order is kept throughout.
pub fn markdown_summary(summaries: &[VariantSummary], findings: &[Finding], tool_version: &str) -> String {
    let mut out = String::new();
    out.push_str("# SASS encoding validation\n\n");
    let _ = writeln!(out, "nvdisasm: {}\n", md_code(tool_version.trim()));

    let mut all = Tally::default();
    summaries.iter().for_each(|s| all.add(s));
    let _ = write!(
        out,
        "{} variants, {} words checked, {} agreeing, {} findings",
        summaries.len(),
        all.words,
        all.agreeing,
        all.total
    );
    if findings.len() != all.total {
        let _ = write!(out, " ({} listed below)", findings.len());
    }
    out.push_str(".\n\n");

    let pages = group_by(summaries, |s| (s.page.clone(), s.arch.clone()));
    if pages.len() > 1 {
        out.push_str("## Overview\n\n");
        table_header(&mut out, "page");
        for ((page, arch), rows) in &pages {
            let mut t = Tally::default();
            rows.iter().for_each(|s| t.add(s));
            t.row(&mut out, &format!("{} ({})", md_text(page), md_text(arch)));
        }
        all.row(&mut out, "**total**");
        out.push('\n');
    }

    for ((page, arch), rows) in &pages {
        let _ = writeln!(out, "## {} ({})\n", md_text(page), md_text(arch));
        table_header(&mut out, "variant");
        let mut t = Tally::default();
        for s in rows {
            t.add(s);
            let mut by_class = [0usize; Class::ALL.len()];
            for (i, c) in Class::ALL.iter().enumerate() {
                by_class[i] = s.findings.get(c.name()).copied().unwrap_or(0);
            }
            tally_row(&mut out, &md_text(&s.variant), s.words, s.agreeing, &by_class, total(s));
        }
        t.row(&mut out, "**total**");
        out.push('\n');
    }

    out.push_str("## Findings\n\n");
    if findings.is_empty() {
        out.push_str("No findings.\n");
        return out;
    }
    for ((variant, arch), fs) in group_by(findings, |f| (f.variant.clone(), f.arch.clone())) {
        let _ = writeln!(out, "### {} ({})\n", md_text(&variant), md_text(&arch));
        out.push_str("| class | field | bits | word | expected | actual | proposal | seen |\n");
        out.push_str("|---|---|---|---|---|---|---|---:|\n");
        for f in fs {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                f.class.name(),
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn report_markdown_rows_and_counts() {
        let spec = fixture::spec();
        let (summaries, findings) = fixture::data(&spec);
        let md = markdown_summary(&summaries, &findings, fixture::TOOL);
        let v0 = &spec.pages[0].variants[0].key;
        let v1 = &spec.pages[0].variants[1].key;
        assert!(md.starts_with("# SASS encoding validation\n"));
        assert!(md.contains(&format!("nvdisasm: `{}`", fixture::TOOL)), "{md}");
        assert!(md.contains("## DFMA (SM90)\n"), "{md}");
        // Header: variant, words, agreeing, the 8 classes, total.
        let header = md.lines().find(|l| l.starts_with("| variant |")).unwrap();
        assert_eq!(header.matches('|').count(), 3 + Class::ALL.len() + 2);
        assert!(header.contains("| field_bits | table_row |") && header.ends_with("| syntax | total findings |"));
        // Columns: field_bits .. syntax in Class::ALL order.
        let row0 = format!("| {v0} | 40 | 37 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 2 |");
        let row1 = format!("| {v1} | 25 | 25 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |");
        let lines: Vec<&str> = md.lines().collect();
        let i0 = lines.iter().position(|l| *l == row0).unwrap_or_else(|| panic!("row {row0} in\n{md}"));
        assert_eq!(lines[i0 + 1], row1);
        assert_eq!(lines[i0 + 2], "| **total** | 65 | 62 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 2 |");
        // One page: no overview table.
        assert!(!md.contains("## Overview"));
        // Findings, grouped under the variant, pipes escaped, `<` inside code spans.
        let fi = lines.iter().position(|l| *l == format!("### {v0} (SM90)")).expect("findings heading");
        let modi = format_ranges(&fixture::disputed_bits(&spec.pages[0].variants[0]));
        assert_eq!(
            lines[fi + 4],
            format!("| field_bits | modi 1 | {modi} | `000fe20000004000000000000000722b` | `DFMA.RM R0, R0, R0, R0 ;` | `DFMA.RP R0, R0, R0, R0 ;` | swap RM and RP | 3 |")
        );
        assert_eq!(
            lines[fi + 5],
            "| syntax | — | — | `000fe20000000000000000000000722b` | `a < b \\| c & d` | `<illegal: x\\|y & z>` | — | 1 |"
        );
        // Every table line has the same number of unescaped cell separators as its header.
        for l in lines.iter().filter(|l| l.starts_with("| syntax") || l.starts_with("| field_bits")) {
            assert_eq!(l.replace("\\|", "").matches('|').count(), 9, "{l}");
        }
        // Deterministic.
        assert_eq!(md, markdown_summary(&summaries, &findings, fixture::TOOL));
    }

    #[test]
    fn report_markdown_overview_for_several_pages_and_no_findings() {
        let spec = fixture::spec();
        let (mut summaries, _) = fixture::data(&spec);
        let mut other = summaries[1].clone();
        other.page = "FOO|BAR".into();
        other.arch = "SM100".into();
        summaries.push(other);
        let md = markdown_summary(&summaries, &[], "v1");
        assert!(md.contains("## Overview"));
        assert!(md.contains("| DFMA (SM90) | 65 | 62 |"), "{md}");
        assert!(md.contains("| FOO\\|BAR (SM100) | 25 | 25 |"), "{md}");
        assert!(md.contains("| **total** | 90 | 87 |"), "{md}");
        assert!(md.ends_with("## Findings\n\nNo findings.\n"));
    }

    #[test]
    fn report_md_code_fences() {
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x"), "`` `x ``");
        assert_eq!(md_code(""), "—");
        assert_eq!(md_text("a|b<c>"), "a\\|b\\<c\\>");
    }
}
