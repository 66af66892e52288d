//! Tool outputs kept on disk for the next identical request (ptxas's cubins, nvdisasm's
//! raw-mode replies): a test suite asks the same of the same tool again and again, and
//! every nvdisasm process costs about 0.25 s of CPU before its first word.
//!
//! An entry's file name is a hash of its key: what decides the output (the tool's binary,
//! its version, the arguments, the input bytes). The `.key` file beside the data holds
//! the whole key, compared byte for byte on a hit, so a hash collision is a miss.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One request's place in a cache folder.
pub struct Entry {
    pub(crate) data: PathBuf,
    pub(crate) key_file: PathBuf,
    key: Vec<u8>,
}

impl Entry {
    /// The entry for `key` in `dir`; `tag` ends the file name (`-sm_90`, `.nvdisasm`), for
    /// a reader of the folder.
    pub fn new(dir: &Path, tag: &str, key: Vec<u8>) -> Entry {
        let name = format!("{:016x}{tag}", fnv1a(&key));
        Entry { data: dir.join(format!("{name}.data")), key_file: dir.join(format!("{name}.key")), key }
    }

    /// The kept output, when the key file matches and the data is there.
    pub fn read(&self) -> Option<Vec<u8>> {
        let hit = std::fs::read(&self.key_file).is_ok_and(|k| k == self.key);
        hit.then(|| std::fs::read(&self.data).ok()).flatten()
    }

    /// Keeps `bytes`: the data first, then its key, each by a rename, so a reader never
    /// sees a key without its whole data. Failing to keep is not an error of the request.
    pub fn write(&self, bytes: &[u8]) {
        let Some(dir) = self.data.parent() else { return };
        let _ = std::fs::create_dir_all(dir);
        if write_atomic(&self.data, bytes) {
            write_atomic(&self.key_file, &self.key);
        }
    }
}

/// What names a tool's binary in a key: its canonical path, size and modification time
/// (a stand-in that prints the real version is another tool; a rewritten stand-in is
/// another binary).
pub fn tool_stamp(tool: &Path) -> Option<String> {
    let exe = std::fs::canonicalize(tool).ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let stamp = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some(format!("{} ({} bytes, modified {stamp} ns)", exe.display(), meta.len()))
}

/// `bytes` to `path` through a temporary unique to this process and call (tests in one
/// process ask the same at once).
fn write_atomic(path: &Path, bytes: &[u8]) -> bool {
    static N: AtomicUsize = AtomicUsize::new(0);
    let tmp = path.with_extension(format!("tmp-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let ok = std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_ok();
    if !ok {
        let _ = std::fs::remove_file(&tmp);
    }
    ok
}

/// 64-bit FNV-1a: a file name, not a proof (the key is compared in full).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}
