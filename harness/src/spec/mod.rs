//! Pages → spec: the model, the page parser, loading files and folders.
//!
//! Collecting pages: every path given is read; folders are walked recursively for `*.txt`
//! files. Every `.txt` file found in a folder is read as a page, and one that is not a
//! page is an error naming it (pages folders hold pages only: a stray file is more likely
//! a broken page than something to skip). Only regular files are read (a FIFO or device
//! named `x.txt` is an error, found before it is opened), each at most [`MAX_PAGE_BYTES`];
//! a file or folder reached through several paths (symlinks, repeated arguments) counts
//! once, so symlink cycles end.

pub mod builtin;
pub mod conventions;
pub mod edit;
pub mod model;
pub mod parse;
pub mod token;

pub use model::*;
pub use parse::{parse_page, PageError};
pub use token::*;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest page read: the seed pages are 5–15 kB (about 700 bytes per variant), so
/// this allows some 6 000 variants per page, far above the ~250 mnemonics' worth of an
/// architecture's real pages.
pub const MAX_PAGE_BYTES: u64 = 4 << 20;

/// A file's identity: the same (device, inode) is the same file, whatever its path.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<FileId> {
    None
}

/// A page file to read: its path, and the folder argument it was found under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageFile {
    /// The file's path: an argument itself, or a path under the folder argument it was
    /// found in.
    pub path: PathBuf,
    /// The folder argument whose walk found it; `None` for a file given as an argument
    /// (read as a page whatever its name).
    pub found_in: Option<PathBuf>,
}

/// Every page under the given files or folders, sorted by path, each file once.
pub fn collect_pages(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PageError> {
    Ok(collect_page_files(paths)?.into_iter().map(|f| f.path).collect())
}

/// [`collect_pages`], with the folder each page was found in.
pub fn collect_page_files(paths: &[PathBuf]) -> Result<Vec<PageFile>, PageError> {
    let mut walk = Walk::default();
    for p in paths {
        walk.arg(p)?;
    }
    walk.found.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    let mut seen: HashSet<FileId> = HashSet::new();
    let mut seen_paths: HashSet<PathBuf> = HashSet::new();
    let mut out = vec![];
    for (f, id) in walk.found {
        // The first path (in sorted order) of each file stands for it.
        if id.is_none_or(|id| seen.insert(id)) && seen_paths.insert(f.path.clone()) {
            out.push(f);
        }
    }
    Ok(out)
}

#[derive(Default)]
struct Walk {
    found: Vec<(PageFile, Option<FileId>)>,
    /// Folders already walked: a symlink back to one of them is not followed again.
    dirs: HashSet<FileId>,
}

fn io_err(p: &Path, m: String) -> PageError {
    PageError { file: p.display().to_string(), line: 0, message: m }
}

impl Walk {
    /// A command-line path: a folder to walk, or a file read as a page whatever its name.
    fn arg(&mut self, p: &Path) -> Result<(), PageError> {
        let meta = std::fs::metadata(p).map_err(|e| io_err(p, format!("cannot read: {e}")))?;
        if meta.is_dir() {
            self.dir(p, &meta, p)
        } else {
            check_regular(p, &meta)?;
            self.found.push((PageFile { path: p.to_path_buf(), found_in: None }, file_id(&meta)));
            Ok(())
        }
    }

    fn dir(&mut self, d: &Path, meta: &std::fs::Metadata, root: &Path) -> Result<(), PageError> {
        if let Some(id) = file_id(meta) {
            if !self.dirs.insert(id) {
                return Ok(());
            }
        }
        let rd = std::fs::read_dir(d).map_err(|e| io_err(d, format!("cannot list folder: {e}")))?;
        for e in rd {
            let path = e.map_err(|e| io_err(d, format!("cannot list folder: {e}")))?.path();
            let is_txt = path.extension().is_some_and(|x| x == "txt");
            // Follows symlinks; an unreadable or dangling `.txt` is an error, other names
            // are no pages' business.
            let m = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) if is_txt => return Err(io_err(&path, format!("cannot read: {e}"))),
                Err(_) => continue,
            };
            if m.is_dir() {
                self.dir(&path, &m, root)?;
            } else if is_txt {
                check_regular(&path, &m)?;
                self.found.push((PageFile { path, found_in: Some(root.to_path_buf()) }, file_id(&m)));
            }
        }
        Ok(())
    }
}

/// Pages are regular files of at most [`MAX_PAGE_BYTES`]; checked from the metadata,
/// before opening (opening a FIFO would block).
fn check_regular(p: &Path, m: &std::fs::Metadata) -> Result<(), PageError> {
    if !m.is_file() {
        return Err(io_err(p, format!("not a regular file ({}); pages are regular files", file_type(m))));
    }
    if m.len() > MAX_PAGE_BYTES {
        return Err(io_err(p, format!("{} bytes; a page may have at most {MAX_PAGE_BYTES} bytes", m.len())));
    }
    Ok(())
}

fn file_type(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if m.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Reads a page, at most [`MAX_PAGE_BYTES`] even if the file grew since it was checked.
fn read_page(p: &Path) -> Result<Vec<u8>, PageError> {
    read_bounded(p, MAX_PAGE_BYTES, "a page")
}

/// Parses one collected page; one found by walking a folder says so in its error.
fn load_page(f: &PageFile) -> Result<Page, PageError> {
    let name = f.path.display().to_string();
    let bytes = read_page(&f.path)?;
    parse_page(&name, &bytes).map_err(|mut e| {
        if let Some(dir) = &f.found_in {
            e.message.push_str(&format!(" (every .txt file under {} is read as a page; move other files out of page folders)", dir.display()));
        }
        e
    })
}

/// Loads pages into one spec. Errors stop the load: no partial spec.
pub fn load(paths: &[PathBuf]) -> Result<Spec, PageError> {
    let mut spec = Spec::default();
    let mut keys = Keys::new();
    for f in collect_page_files(paths)? {
        add_page(&mut spec, &mut keys, load_page(&f)?)?;
    }
    if spec.pages.is_empty() {
        let file = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        return Err(PageError { file, line: 0, message: "no pages (.txt files) found".into() });
    }
    attach_conventions(&mut spec)?;
    Ok(spec)
}

/// Gives each page's variants the conventions its folder's [`conventions::FILE_NAME`]
/// stores, where there is one.
fn attach_conventions(spec: &mut Spec) -> Result<(), PageError> {
    let mut dirs: Vec<PathBuf> = spec.pages.iter().filter_map(|p| Path::new(&p.file).parent().map(Path::to_path_buf)).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        let path = dir.join(conventions::FILE_NAME);
        if !path.is_file() {
            continue;
        }
        let bytes = read_bounded(&path, conventions::MAX_FILE_BYTES as u64, "a conventions file")?;
        attach_folder(spec, &dir, &path.display().to_string(), &bytes)?;
    }
    Ok(())
}

/// Variant keys seen so far, by architecture, with the page that defined each.
type Keys = std::collections::HashMap<(Arch, String), String>;

/// Adds `page` to `spec`; a key another page already defined is an error naming both.
fn add_page(spec: &mut Spec, keys: &mut Keys, page: Page) -> Result<(), PageError> {
    for v in &page.variants {
        if let Some(first) = keys.insert((v.arch, v.key.clone()), page.file.clone()) {
            let message = format!("key '{}' for {} already defined by {first}", v.key, v.arch);
            return Err(PageError { file: page.file.clone(), line: v.line, message });
        }
    }
    spec.pages.push(page);
    Ok(())
}

/// Gives the pages of folder `dir` the conventions of the file `name` (its `bytes`).
fn attach_folder(spec: &mut Spec, dir: &Path, name: &str, bytes: &[u8]) -> Result<(), PageError> {
    let forms = conventions::ConventionsFile::from_text(name, bytes).and_then(|f| f.read_forms()).map_err(|e| PageError {
        file: name.to_string(),
        line: 0,
        message: e.to_string(),
    })?;
    let forms: std::collections::HashMap<String, std::sync::Arc<conventions::FormConventions>> =
        forms.into_iter().map(|(k, c)| (k, std::sync::Arc::new(c))).collect();
    for page in spec.pages.iter_mut().filter(|p| Path::new(&p.file).parent() == Some(dir)) {
        for v in &mut page.variants {
            v.conventions = forms.get(&conventions::form_key(v.arch, &v.key)).cloned();
        }
    }
    Ok(())
}

/// A file's bytes, at most `limit` of them even if it grew since it was checked (more is
/// an error naming the file and `what` it is).
fn read_bounded(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, PageError> {
    let f = std::fs::File::open(path).map_err(|e| io_err(path, format!("cannot read: {e}")))?;
    let mut bytes = vec![];
    f.take(limit + 1).read_to_end(&mut bytes).map_err(|e| io_err(path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(io_err(path, format!("more than {limit} bytes; {what} may have at most {limit}")));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::tools::repo_root;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sass-harness-spec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
    fn seed() -> PathBuf {
        repo_root().join("corpus/isa/sm90/003_ab0fe5b2f4c60028.txt")
    }

    #[test]
    fn symlink_cycles_end_and_each_file_counts_once() {
        let d = scratch("cycle");
        std::fs::copy(seed(), d.join("dfma.txt")).unwrap();
        // Two links to the folder itself: walking them naively grows as 2^depth.
        std::os::unix::fs::symlink(".", d.join("a")).unwrap();
        std::os::unix::fs::symlink(".", d.join("b")).unwrap();
        std::os::unix::fs::symlink("dfma.txt", d.join("same.txt")).unwrap();
        let t = std::time::Instant::now();
        let pages = collect_pages(&[d.clone(), d.join("a"), d.join("dfma.txt")]).unwrap();
        assert_eq!(pages, vec![d.join("dfma.txt")]);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        // The same file through two paths is one page, not a duplicate key.
        let s = load(&[d.join("dfma.txt"), d.join("same.txt"), d.join("b")]).unwrap();
        assert_eq!(s.pages.len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let d = scratch("special");
        let fifo = d.join("x.txt");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = load(std::slice::from_ref(&d)).unwrap_err();
        assert!(e.file.ends_with("x.txt") && e.message.contains("FIFO"), "{e}");
        let e = load(std::slice::from_ref(&fifo)).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e}");
        let e = load(&[PathBuf::from("/dev/zero")]).unwrap_err();
        assert!(e.file == "/dev/zero" && e.message.contains("a device"), "{e}");
        std::fs::remove_file(&fifo).unwrap();
        let big = d.join("big.txt");
        std::fs::write(&big, vec![b'x'; MAX_PAGE_BYTES as usize + 1]).unwrap();
        let e = load(&[big]).unwrap_err();
        assert!(e.message.contains(&format!("{} bytes", MAX_PAGE_BYTES + 1)) && e.message.contains("at most"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_stray_txt_file_in_a_page_folder_is_named() {
        let d = scratch("stray");
        std::fs::copy(seed(), d.join("dfma.txt")).unwrap();
        std::fs::write(d.join("notes.txt"), "todo: more pages\n").unwrap();
        let e = load(std::slice::from_ref(&d)).unwrap_err();
        assert!(e.file.ends_with("notes.txt") && e.line == 1, "{e}");
        assert!(e.message.contains("expected an instruction name") && e.message.contains("every .txt file under"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_key_defined_by_two_pages_names_both() {
        let d = scratch("dupkey");
        std::fs::copy(seed(), d.join("a.txt")).unwrap();
        std::fs::copy(seed(), d.join("b.txt")).unwrap();
        let e = load(std::slice::from_ref(&d)).unwrap_err();
        assert!(e.file.ends_with("b.txt") && e.message.contains("a.txt"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
