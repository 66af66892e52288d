//! Findings → corrected pages: every verified correction of a page's `error` findings,
//! applied to the page text (see `spec::edit`), with a unified diff.

use crate::spec::conventions::{ConventionsFile, StoredError, FILE_NAME};
use crate::spec::{edit, Spec};
use crate::validate::correct::unified_diff;
use crate::validate::{Finding, Severity};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why corrections could not be applied: a page that cannot be read again, a correction
/// that does not fit its page, a conventions file that does not read.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error("{file}: {source}")]
    Read { file: String, source: std::io::Error },
    #[error(transparent)]
    Edit(#[from] edit::EditError),
    #[error(transparent)]
    Conventions(#[from] StoredError),
}

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
pub fn correct_pages(spec: &Spec, findings: &[Finding]) -> Result<Vec<CorrectedPage>, FixError> {
    spec.pages
        .iter()
        .map(|page| {
            let original = std::fs::read_to_string(&page.file).map_err(|source| FixError::Read { file: page.file.clone(), source })?;
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

/// Each page folder's conventions file (see [`crate::spec::conventions`]) with the
/// conventions edits of `findings` applied: those of errors, and of the notes of forms with
/// none stored (so that `fix` stores them). By folder; folders left with no form are left
/// out.
pub fn correct_conventions(spec: &Spec, findings: &[Finding]) -> Result<BTreeMap<PathBuf, ConventionsFile>, FixError> {
    let mut out: BTreeMap<PathBuf, ConventionsFile> = BTreeMap::new();
    for page in &spec.pages {
        let dir = Path::new(&page.file).parent().unwrap_or(Path::new(".")).to_path_buf();
        if !out.contains_key(&dir) {
            let path = dir.join(FILE_NAME);
            let file = match std::fs::read(&path) {
                Ok(bytes) => ConventionsFile::from_text(&path.display().to_string(), &bytes)?,
                Err(_) => ConventionsFile::new(findings.first().map(|f| f.tool.as_str()).unwrap_or_default()),
            };
            out.insert(dir.clone(), file);
        }
        let edits: Vec<edit::Edit> = findings
            .iter()
            .filter(|f| f.page == page.file && f.severity != Severity::Warning)
            .filter_map(|f| f.correction.as_ref())
            .flat_map(|c| c.edits.iter().filter(|e| matches!(e, edit::Edit::Conventions { .. })).cloned())
            .collect();
        if let Some(file) = out.get_mut(&dir) {
            edit::apply_conventions(file, page.arch, &edits);
        }
    }
    out.retain(|_, f| !f.forms.is_empty());
    Ok(out)
}
