//! Reports: a Markdown summary of a validation run, and one self-contained HTML page per
//! instruction page that draws each variant's 128-bit layout coloured by what was verified.
//!
//! `findings.jsonl` is streamed by the validator itself; this module only renders.

mod html;
mod markdown;

pub use html::{html_index, html_page};
pub use markdown::markdown_summary;

use crate::spec::{Page, Spec, Variant};
use crate::validate::finding::{Finding, VariantSummary};
use std::path::{Path, PathBuf};

/// Does this finding belong to this variant?
pub(crate) fn finding_matches(f: &Finding, v: &Variant) -> bool {
    f.variant == v.key && f.arch == v.arch.to_string()
}

/// Does this summary belong to this variant?
pub(crate) fn summary_matches(s: &VariantSummary, v: &Variant) -> bool {
    s.variant == v.key && s.arch == v.arch.to_string()
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

/// Writes `summary.md`, `html/<INSTRUCTION>_<ARCH>.html` per page and `html/index.html`
/// under `dir` (created as needed). Returns the written paths, in that order.
pub fn write_reports(
    dir: &Path,
    spec: &Spec,
    summaries: &[VariantSummary],
    findings: &[Finding],
    tool_version: &str,
) -> std::io::Result<Vec<PathBuf>> {
    let html_dir = dir.join("html");
    std::fs::create_dir_all(&html_dir)?;
    let mut written = vec![];

    let md = dir.join("summary.md");
    std::fs::write(&md, markdown_summary(summaries, findings, tool_version))?;
    written.push(md);

    let mut used = std::collections::BTreeSet::new();
    let mut entries: Vec<(&Page, String)> = vec![];
    for page in &spec.pages {
        // Two pages with the same instruction and arch (should not happen) get distinct files.
        let base = html_file_name(page);
        let mut name = base.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{}_{n}.html", base.trim_end_matches(".html"));
            n += 1;
        }
        let path = html_dir.join(&name);
        std::fs::write(&path, html_page(page, summaries, findings, tool_version))?;
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

    /// Summaries for the page's first two variants (the first with two findings), and two
    /// findings on the first variant, one with text that needs escaping.
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
        let s0 = VariantSummary {
            arch: v0.arch.to_string(),
            variant: v0.key.clone(),
            page: page.instruction.clone(),
            words: 40,
            agreeing: 37,
            findings: [("field_bits".to_string(), 1), ("syntax".to_string(), 1)].into_iter().collect(),
            bit_status: status(v0, &d),
        };
        let s1 = VariantSummary {
            arch: v1.arch.to_string(),
            variant: v1.key.clone(),
            page: page.instruction.clone(),
            words: 25,
            agreeing: 25,
            findings: Default::default(),
            bit_status: status(v1, &[]),
        };
        let f0 = Finding {
            arch: v0.arch.to_string(),
            variant: v0.key.clone(),
            class: Class::FieldBits,
            severity: Severity::Error,
            page: v0.file.clone(),
            line: v0.layout_lines[3],
            correction: Some(Correction {
                edits: vec![Edit::RowName { variant: v0.key.clone(), table: "Modifier Group 1".into(), value: 1, width: 2, from: Some("RM".into()), name: "RP".into() }],
                fixes: 3,
                regressions: 0,
                probes: 40,
                diff: "@@ -22,1 +22,1 @@\n-01\tRM\n+01\tRP\n".into(),
            }),
            field: Some("modi 1".into()),
            bits: d.clone(),
            word: "000fe20000004000000000000000722b".into(),
            expected: "DFMA.RM R0, R0, R0, R0 ;".into(),
            actual: "DFMA.RP R0, R0, R0, R0 ;".into(),
            proposal: Some("swap RM and RP".into()),
            occurrences: 3,
            tool: TOOL.into(),
        };
        let f1 = Finding {
            arch: v0.arch.to_string(),
            variant: v0.key.clone(),
            class: Class::Syntax,
            severity: Severity::Note,
            page: v0.file.clone(),
            line: v0.line,
            correction: None,
            field: None,
            bits: vec![],
            word: "000fe20000000000000000000000722b".into(),
            expected: "a < b | c & d".into(),
            actual: "<illegal: x|y & z>".into(),
            proposal: None,
            occurrences: 1,
            tool: TOOL.into(),
        };
        (vec![s0, s1], vec![f0, f1])
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
        let mut expected = vec![dir.join("summary.md")];
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn report_file_names_are_sanitized() {
        let spec = fixture::spec();
        let mut page = spec.pages[0].clone();
        page.instruction = "I2F.???0/x".into();
        assert_eq!(html_file_name(&page), "I2F.___0_x_SM90.html");
    }
}
