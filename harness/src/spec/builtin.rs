//! The spec built into the binary: `corpus/isa-discovered` (pages and conventions),
//! embedded by `build.rs`, so the offline tools need no files beside the binary.
//!
//! [`load_from_memory`] is [`super::load`] for files held in memory: the same page parser,
//! the same duplicate-key rule, the same conventions per folder.

use super::{conventions, parse_page, Arch, PageError, Spec};
use std::path::Path;

mod files {
    include!(concat!(env!("OUT_DIR"), "/builtin_spec.rs"));
}

/// How built-in files are named in messages: `builtin:sm90/fadd.txt`.
pub const PREFIX: &str = "builtin:";

/// The embedded files' paths under `corpus/isa-discovered`, in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    files::FILES.iter().map(|(p, _, _)| *p)
}

/// The embedded files whose path passes `keep`, inflated: (path, bytes).
pub fn files_where(keep: impl Fn(&str) -> bool) -> Result<Vec<(&'static str, Vec<u8>)>, PageError> {
    let mut out = vec![];
    for (p, z, len) in files::FILES.iter().filter(|(p, _, _)| keep(p)) {
        let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(z, *len).map_err(|e| PageError {
            file: format!("{PREFIX}{p}"),
            line: 0,
            message: format!("the built-in copy does not inflate ({e:?}); rebuild the binary"),
        })?;
        out.push((*p, bytes));
    }
    Ok(out)
}

/// The architectures the built-in spec covers (its `smNN` folders), ascending.
pub fn archs() -> Vec<Arch> {
    let mut out: Vec<Arch> = names().filter_map(folder_arch).collect();
    out.sort();
    out.dedup();
    out
}

/// `sm90/x.txt` → SM90.
fn folder_arch(path: &str) -> Option<Arch> {
    let dir = path.split('/').next()?;
    dir.strip_prefix("sm")?.parse().ok().map(Arch)
}

/// The built-in spec of `arch` only (parsing one architecture's pages takes a fraction of
/// the time of all three), or an error naming the architectures it covers.
pub fn load_builtin(arch: Arch) -> Result<Spec, PageError> {
    let mine = files_where(|p| folder_arch(p) == Some(arch))?;
    if mine.is_empty() {
        let have: Vec<String> = archs().iter().map(|a| a.to_string()).collect();
        let message = format!("no pages for {arch} (it covers {}); give pages with --spec", have.join(", "));
        return Err(PageError { file: "built-in spec".into(), line: 0, message });
    }
    load_from_memory(&mine.iter().map(|(p, b)| (*p, b.as_slice())).collect::<Vec<_>>())
}

/// The whole built-in spec, every architecture (the fuzz targets' and tests' spec).
pub fn load_all() -> Result<Spec, PageError> {
    let all = files_where(|_| true)?;
    load_from_memory(&all.iter().map(|(p, b)| (*p, b.as_slice())).collect::<Vec<_>>())
}

/// A spec from files in memory, named by relative paths: `*.txt` are pages and a
/// folder's `conventions.json` gives its pages' conventions, as [`super::load`] reads a
/// folder. Messages name files `builtin:<path>`.
pub fn load_from_memory(files: &[(&str, &[u8])]) -> Result<Spec, PageError> {
    let mut spec = Spec::default();
    let mut keys = super::Keys::new();
    let mut pages: Vec<&(&str, &[u8])> = files.iter().filter(|(p, _)| p.ends_with(".txt")).collect();
    pages.sort_by_key(|(p, _)| *p);
    for (path, bytes) in pages {
        super::add_page(&mut spec, &mut keys, parse_page(&format!("{PREFIX}{path}"), bytes)?)?;
    }
    if spec.pages.is_empty() {
        return Err(PageError { file: PREFIX.into(), line: 0, message: "no pages (.txt files) given".into() });
    }
    for (path, bytes) in files.iter().filter(|(p, _)| Path::new(p).file_name().is_some_and(|n| n == conventions::FILE_NAME)) {
        attach(&mut spec, path, bytes)?;
    }
    Ok(spec)
}

/// Gives the pages in `conventions_path`'s folder the conventions it stores.
fn attach(spec: &mut Spec, conventions_path: &str, bytes: &[u8]) -> Result<(), PageError> {
    let name = format!("{PREFIX}{conventions_path}");
    let dir = Path::new(&name).parent().unwrap_or(Path::new("")).to_path_buf();
    super::attach_folder(spec, &dir, &name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::tools::repo_root;

    #[test]
    fn builtin_spec_equals_the_corpus_loaded_from_disk() {
        assert_eq!(archs(), vec![Arch(90), Arch(100), Arch(120)]);
        let mem = load_builtin(Arch(90)).unwrap();
        let disk = super::super::load(&[repo_root().join("corpus/isa-discovered/sm90")]).unwrap();
        assert_eq!(mem.pages.len(), disk.pages.len());
        let (a, b): (Vec<_>, Vec<_>) = (mem.variants().collect(), disk.variants().collect());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.key, x.arch, x.conventions.is_some()), (&y.key, y.arch, y.conventions.is_some()));
            assert_eq!(x.conventions, y.conventions, "{}", x.key);
        }
        assert!(a.iter().filter(|v| v.conventions.is_some()).count() > a.len() * 9 / 10);
        let e = load_builtin(Arch(75)).unwrap_err();
        assert!(e.message.contains("SM90, SM100, SM120"), "{e}");
    }

    #[test]
    fn load_from_memory_names_bad_files() {
        let e = load_from_memory(&[("sm90/x.txt", b"garbage")]).unwrap_err();
        assert!(e.file == "builtin:sm90/x.txt", "{e}");
        let page = files_where(|p| p.starts_with("sm90/") && p.ends_with(".txt")).unwrap().swap_remove(0).1;
        let e = load_from_memory(&[("sm90/a.txt", &page), ("sm90/conventions.json", b"{")]).unwrap_err();
        assert!(e.file.starts_with("builtin:sm90/conventions.json"), "{e}");
    }
}
