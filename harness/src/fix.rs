//! Findings → corrected pages: every verified correction of a page's `error` findings,
//! applied to the page text (see `spec::edit`), with a unified diff.

use crate::spec::{edit, Spec};
use crate::validate::correct::unified_diff;
use crate::validate::{Finding, Severity};

/// One page after its corrections.
pub struct CorrectedPage {
    /// The page file as loaded.
    pub file: String,
    pub original: String,
    pub text: String,
    /// Distinct corrections applied.
    pub corrections: usize,
}

impl CorrectedPage {
    pub fn changed(&self) -> bool {
        self.text != self.original
    }
    pub fn diff(&self) -> String {
        unified_diff(&self.file, &self.original, &self.text)
    }
}

/// Every page of `spec` with the corrections of its error findings applied, in the order
/// validation kept them (each was verified on top of those before it).
pub fn correct_pages(spec: &Spec, findings: &[Finding]) -> Result<Vec<CorrectedPage>, String> {
    spec.pages
        .iter()
        .map(|page| {
            let original = std::fs::read_to_string(&page.file).map_err(|e| format!("{}: {e}", page.file))?;
            let mut seen: Vec<&Vec<edit::Edit>> = vec![];
            for f in findings.iter().filter(|f| f.page == page.file && f.severity == Severity::Error) {
                if let Some(c) = &f.correction {
                    if !seen.contains(&&c.edits) {
                        seen.push(&c.edits);
                    }
                }
            }
            let edits: Vec<edit::Edit> = seen.iter().flat_map(|e| e.iter().cloned()).collect();
            let text = edit::apply(&original, page, &edits)?;
            Ok(CorrectedPage { file: page.file.clone(), original, text, corrections: seen.len() })
        })
        .collect()
}
