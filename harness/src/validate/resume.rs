//! Resuming an interrupted validation: `findings.jsonl` is streamed page by page and
//! `progress.jsonl` records each page once its findings are on disk, so a rerun with
//! `--resume` keeps what finished pages found (a torn last line, or findings of a page
//! that did not finish, are dropped) and validates only the rest.

use super::finding::{Finding, VariantSummary};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

pub const PROGRESS: &str = "progress.jsonl";
pub const FINDINGS: &str = "findings.jsonl";

/// One line of `progress.jsonl`: a page whose findings are all in `findings.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageDone {
    pub page: String,
    pub summaries: Vec<VariantSummary>,
}

/// What an earlier run finished.
#[derive(Clone, Debug, Default)]
pub struct Previous {
    pub pages: Vec<PageDone>,
    pub findings: Vec<Finding>,
}

impl Previous {
    pub fn done(&self) -> HashSet<String> {
        self.pages.iter().map(|p| p.page.clone()).collect()
    }
}

/// A results file of an earlier run that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("{path}:{line}: not {what}: {err}")]
    Record { path: String, line: usize, what: &'static str, err: serde_json::Error },
}

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> ResumeError + '_ {
    move |err| ResumeError::Read { path: path.display().to_string(), err }
}

fn record_error<'p>(path: &'p Path, line: usize, what: &'static str) -> impl FnOnce(serde_json::Error) -> ResumeError + 'p {
    move |err| ResumeError::Record { path: path.display().to_string(), line, what, err }
}

/// Complete lines of a JSON-lines file that parse (a torn last line does not); a missing
/// file is empty.
fn lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, ResumeError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(read_error(path)(e)),
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = vec![];
    for (n, l) in complete.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        out.push(serde_json::from_str(l).map_err(record_error(path, n + 1, "a record of this tool"))?);
    }
    Ok(out)
}

/// Every line of a JSON-lines file of findings this run wrote, read line by line (the
/// file whole would be as large again as its findings).
pub fn read_all(path: &Path) -> Result<Vec<Finding>, ResumeError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(read_error(path))?;
    let mut out = vec![];
    for (n, l) in std::io::BufReader::new(file).lines().enumerate() {
        let l = l.map_err(read_error(path))?;
        out.push(serde_json::from_str(&l).map_err(record_error(path, n + 1, "a finding"))?);
    }
    Ok(out)
}

/// Reads what the run in `dir` finished: its done pages and their findings.
pub fn read(dir: &Path) -> Result<Previous, ResumeError> {
    let pages: Vec<PageDone> = lines(&dir.join(PROGRESS))?;
    let done: HashSet<&str> = pages.iter().map(|p| p.page.as_str()).collect();
    let findings = lines::<Finding>(&dir.join(FINDINGS))?.into_iter().filter(|f| done.contains(f.page.as_str())).collect();
    Ok(Previous { pages, findings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_lines_and_unfinished_pages_are_dropped() {
        let dir = std::env::temp_dir().join(format!("sass-harness-resume-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let done = PageDone { page: "a.txt".into(), summaries: vec![] };
        std::fs::write(dir.join(PROGRESS), format!("{}\n{{\"page\":\"b.t", serde_json::to_string(&done).unwrap())).unwrap();
        let f = |page: &str| {
            let mut x: Finding = serde_json::from_str(include_str!("../../tests/data/finding.json")).unwrap();
            x.page = page.into();
            serde_json::to_string(&x).unwrap()
        };
        std::fs::write(dir.join(FINDINGS), format!("{}\n{}\n{}", f("a.txt"), f("b.txt"), &f("a.txt")[..20])).unwrap();
        let p = read(&dir).unwrap();
        assert_eq!(p.done(), HashSet::from(["a.txt".to_string()]));
        assert_eq!(p.findings.len(), 1);
        assert_eq!(p.findings[0].page, "a.txt");
        std::fs::write(dir.join(FINDINGS), "{\"not\": 1}\n").unwrap();
        assert!(read(&dir).unwrap_err().to_string().contains("findings.jsonl:1: not a record of this tool"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
