//! Corpus inputs, read as untrusted files: the folders and files given are walked lazily
//! (one folder listing open per level, never the whole tree in memory), and every file
//! that cannot be replayed faithfully becomes one [`Skipped`] line instead of an error or
//! a panic: unreadable files, special files, files above [`MAX_INPUT_BYTES`], files that
//! changed while read, symlink loops. Each input's target comes from the nearest folder
//! named after a fuzz target, or from `--target`.

use crate::fuzz::Target;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest input replayed (libFuzzer's default `-max_len` is far below it); a larger file
/// is reported and skipped, and never read whole.
pub const MAX_INPUT_BYTES: u64 = 1 << 20;
/// Deepest folder nesting walked below a root.
pub const MAX_DEPTH: usize = 16;

/// One corpus file, read whole.
#[derive(Debug)]
pub struct Input {
    pub path: PathBuf,
    pub target: Target,
    pub bytes: Vec<u8>,
}

/// A file or folder not replayed (or replayed with a caveat), and why: one line each in
/// the summary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The path as the file system has it, non-UTF-8 bytes escaped.
    pub path: String,
    pub why: String,
    /// Still replayed (an empty file, a name that is not UTF-8): the line is a note.
    pub replayed: bool,
}

pub enum Item {
    Input(Input),
    Skipped(Skipped),
}

/// A path for messages: lossless where it is UTF-8, escaped bytes otherwise.
pub fn show(p: &Path) -> String {
    match p.to_str() {
        Some(s) => s.to_string(),
        None => p.as_os_str().as_encoded_bytes().escape_ascii().to_string(),
    }
}

/// The target a folder's name says, if it names one.
fn target_of(dir: &Path) -> Option<Target> {
    dir.file_name()?.to_str()?.parse().ok()
}

fn target_names() -> String {
    Target::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

/// A folder being listed, with the target its files belong to.
struct Open {
    entries: std::fs::ReadDir,
    target: Option<Target>,
    depth: usize,
}

/// Walks the roots, yielding inputs and skipped lines in turn.
pub struct Walker {
    roots: std::collections::VecDeque<PathBuf>,
    stack: Vec<Open>,
    forced: Option<Target>,
    /// (device, inode) of every folder entered: a symlink loop or a folder given twice is
    /// walked once.
    seen: HashSet<(u64, u64)>,
}

impl Walker {
    pub fn new(roots: &[PathBuf], forced: Option<Target>) -> Walker {
        Walker { roots: roots.iter().cloned().collect(), stack: vec![], forced, seen: HashSet::new() }
    }

    fn skip(path: &Path, why: impl Into<String>) -> Item {
        Item::Skipped(Skipped { path: show(path), why: why.into(), replayed: false })
    }

    /// A root or a folder entry: a folder is entered (yields nothing now), a file is read.
    fn visit(&mut self, path: PathBuf, inherited: Option<Target>, depth: usize) -> Option<Item> {
        // Follows symlinks: a loop or a dangling link is an error here, named.
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => return Some(Self::skip(&path, format!("cannot read: {e}"))),
        };
        if meta.is_dir() {
            return self.enter(path, &meta, inherited, depth);
        }
        let target = self.forced.or(inherited).or_else(|| path.parent().and_then(target_of));
        let Some(target) = target else {
            return Some(Self::skip(&path, format!("no target: put it in a folder named after one ({}) or pass --target", target_names())));
        };
        Some(read_input(&path, &meta, target))
    }

    fn enter(&mut self, path: PathBuf, meta: &std::fs::Metadata, inherited: Option<Target>, depth: usize) -> Option<Item> {
        use std::os::unix::fs::MetadataExt;
        if !self.seen.insert((meta.dev(), meta.ino())) {
            return Some(Self::skip(&path, "a folder already walked (a symlink loop, or given twice): not walked again"));
        }
        if depth > MAX_DEPTH {
            return Some(Self::skip(&path, format!("deeper than {MAX_DEPTH} folders below the root: not walked")));
        }
        match std::fs::read_dir(&path) {
            Ok(entries) => {
                let target = target_of(&path).or(inherited);
                self.stack.push(Open { entries, target, depth });
                None
            }
            Err(e) => Some(Self::skip(&path, format!("cannot list folder: {e}"))),
        }
    }
}

impl Iterator for Walker {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                let root = self.roots.pop_front()?;
                if let Some(item) = self.visit(root, None, 0) {
                    return Some(item);
                }
                continue;
            };
            let (target, depth) = (top.target, top.depth);
            match top.entries.next() {
                None => {
                    self.stack.pop();
                }
                Some(Err(e)) => {
                    self.stack.pop();
                    return Some(Item::Skipped(Skipped { path: "(folder listing)".into(), why: format!("cannot list folder: {e}"), replayed: false }));
                }
                Some(Ok(entry)) => {
                    if let Some(item) = self.visit(entry.path(), target, depth + 1) {
                        return Some(item);
                    }
                }
            }
        }
    }
}

/// Reads one regular file of at most [`MAX_INPUT_BYTES`]; a file whose size or
/// modification time changed while it was read (a fuzzer writing it) is skipped.
fn read_input(path: &Path, meta: &std::fs::Metadata, target: Target) -> Item {
    if !meta.is_file() {
        return Walker::skip(path, "not a regular file (a FIFO, socket or device): not read");
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Walker::skip(path, format!("{} bytes, above the {MAX_INPUT_BYTES}-byte cap on an input: not read", meta.len()));
    }
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Walker::skip(path, format!("cannot read: {e}")),
    };
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = (&mut f).take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes) {
        return Walker::skip(path, format!("cannot read: {e}"));
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Walker::skip(path, format!("grew above the {MAX_INPUT_BYTES}-byte cap while read: skipped"));
    }
    let after = f.metadata().ok();
    let changed = after.as_ref().is_none_or(|m| m.len() != bytes.len() as u64 || m.modified().ok() != meta.modified().ok());
    if bytes.len() as u64 != meta.len() || changed {
        let now = after.map(|m| m.len().to_string()).unwrap_or_else(|| "?".into());
        return Walker::skip(path, format!("changed while read ({} bytes listed, {} read, {now} now; being written?): skipped", meta.len(), bytes.len()));
    }
    Item::Input(Input { path: path.to_path_buf(), target, bytes })
}

/// The caveats of an input that is replayed all the same: one line each.
pub fn notes(input: &Input) -> Vec<Skipped> {
    let mut out = vec![];
    if input.bytes.is_empty() {
        out.push(Skipped { path: show(&input.path), why: "empty: replayed as libFuzzer's empty input".into(), replayed: true });
    }
    if input.path.to_str().is_none() {
        out.push(Skipped { path: show(&input.path), why: "the name is not UTF-8 (shown with escaped bytes): replayed".into(), replayed: true });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sass-harness-xinputs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_that_changes_while_read_is_skipped() {
        let d = scratch("grow");
        let p = d.join("x");
        std::fs::write(&p, b"abc").unwrap();
        let before = std::fs::metadata(&p).unwrap();
        // A fuzzer appends between our listing and our read.
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"def").unwrap();
        match read_input(&p, &before, Target::Roundtrip) {
            Item::Skipped(s) => assert!(s.why.contains("changed while read") && s.why.contains("3 bytes listed, 6 read"), "{s:?}"),
            Item::Input(i) => panic!("read {:?}", i.bytes),
        }
        let now = std::fs::metadata(&p).unwrap();
        assert!(matches!(read_input(&p, &now, Target::Roundtrip), Item::Input(i) if i.bytes == b"abcdef"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn targets_come_from_the_nearest_named_folder_or_the_flag() {
        let d = scratch("targets");
        std::fs::create_dir_all(d.join("decode/sub")).unwrap();
        std::fs::write(d.join("decode/sub/a"), b"1").unwrap();
        std::fs::write(d.join("stray"), b"2").unwrap();
        let items: Vec<Item> = Walker::new(std::slice::from_ref(&d), None).collect();
        let mut got: Vec<String> = items
            .iter()
            .map(|i| match i {
                Item::Input(x) => format!("{} {}", x.target, x.path.file_name().unwrap().to_string_lossy()),
                Item::Skipped(s) => format!("skipped {}", s.why.split(':').next().unwrap()),
            })
            .collect();
        got.sort();
        assert_eq!(got, vec!["decode a".to_string(), "skipped no target".to_string()]);
        let forced: Vec<Item> = Walker::new(&[d.join("stray")], Some(Target::Asm)).collect();
        assert!(matches!(&forced[..], [Item::Input(x)] if x.target == Target::Asm));
        let _ = std::fs::remove_dir_all(&d);
    }
}
