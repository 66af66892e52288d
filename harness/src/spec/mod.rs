//! Pages → spec: the model, the page parser, loading files and folders.

pub mod model;
pub mod edit;
pub mod parse;

pub use model::*;
pub use parse::{parse_page, PageError};

use std::path::{Path, PathBuf};

/// Every `.txt` page under the given files or folders, sorted, recursively.
pub fn collect_pages(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PageError> {
    let mut out = vec![];
    for p in paths {
        collect(p, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), PageError> {
    let err = |m: String| PageError { file: p.display().to_string(), line: 0, message: m };
    let meta = std::fs::metadata(p).map_err(|e| err(format!("cannot read: {e}")))?;
    if meta.is_dir() {
        let rd = std::fs::read_dir(p).map_err(|e| err(format!("cannot list folder: {e}")))?;
        for e in rd {
            let e = e.map_err(|e| err(format!("cannot list folder: {e}")))?;
            let path = e.path();
            if path.is_dir() {
                collect(&path, out)?;
            } else if path.extension().map(|x| x == "txt").unwrap_or(false) {
                out.push(path);
            }
        }
    } else {
        out.push(p.to_path_buf());
    }
    Ok(())
}

/// Loads pages into one spec. Errors stop the load: no partial spec.
pub fn load(paths: &[PathBuf]) -> Result<Spec, PageError> {
    let mut spec = Spec::default();
    for f in collect_pages(paths)? {
        let name = f.display().to_string();
        let bytes = std::fs::read(&f).map_err(|e| PageError { file: name.clone(), line: 0, message: format!("cannot read: {e}") })?;
        let page = parse_page(&name, &bytes)?;
        if let Some(v) = page.variants.iter().find(|v| spec.variants().any(|w| w.key == v.key && w.arch == v.arch)) {
            return Err(PageError { file: name, line: v.line, message: format!("key '{}' for {} already defined by another page", v.key, v.arch) });
        }
        spec.pages.push(page);
    }
    if spec.pages.is_empty() {
        return Err(PageError { file: paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "), line: 0, message: "no pages (.txt files) found".into() });
    }
    Ok(spec)
}
