//! The output folder of a run: locked against a second run, reports replaced whole.
//!
//! - One run at a time per folder: an exclusive `flock` on `<dir>/.sass-harness.lock`,
//!   released by the kernel when the process ends however it ends (no stale locks).
//! - Reports appear whole or not at all: they are written into a staging folder inside
//!   `<dir>` (same file system) and renamed into place, so a reader (or a crash) never
//!   sees half a `summary.md`. `findings.jsonl` is the exception on purpose: it is
//!   streamed page by page, so an interrupted run keeps what it found.
//! - Every I/O error names its path.

use std::fs::File;
use std::path::{Path, PathBuf};

/// The lock file's name inside the output folder.
pub const LOCK_FILE: &str = ".sass-harness.lock";

/// The marker file that says a run into the folder is unfinished (running, or
/// interrupted); a run removes it once its reports are in place.
pub const INCOMPLETE: &str = "INCOMPLETE";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{dir} is in use by another sass-harness run (it holds {lock}); wait for it to end or choose another --out")]
    Busy { dir: PathBuf, lock: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |err| OutputError::Io { path: path.to_path_buf(), err }
}

/// A locked output folder; the lock lasts as long as this value (or the process).
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    _lock: File,
}

impl OutputDir {
    /// Creates `dir` if needed and locks it; a folder locked by another run is
    /// [`OutputError::Busy`].
    pub fn lock(dir: &Path) -> Result<OutputDir, OutputError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let lock = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock).map_err(io(&lock))?;
        try_lock(&file).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => OutputError::Busy { dir: dir.to_path_buf(), lock: lock.clone() },
            _ => OutputError::Io { path: lock.clone(), err: e },
        })?;
        Ok(OutputDir { dir: dir.to_path_buf(), _lock: file })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<name>`, created (truncated) for streaming.
    pub fn create(&self, name: &str) -> Result<(File, PathBuf), OutputError> {
        let path = self.dir.join(name);
        let f = File::create(&path).map_err(io(&path))?;
        Ok((f, path))
    }

    /// Writes `<dir>/<name>` whole: a temporary file next to it, then a rename.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        let path = self.dir.join(name);
        write_atomic(&path, bytes)?;
        Ok(path)
    }

    /// Runs `write` on a fresh staging folder inside `<dir>` and moves every file it
    /// reports to the same place under `<dir>`. Returns the final paths.
    pub fn stage<E: std::fmt::Display>(&self, write: impl FnOnce(&Path) -> Result<Vec<PathBuf>, E>) -> Result<Vec<PathBuf>, OutputError> {
        let staging = self.dir.join(format!(".staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        let result = write(&staging)
            .map_err(|e| OutputError::Io { path: staging.clone(), err: std::io::Error::other(e.to_string()) })
            .and_then(|files| self.move_in(&staging, files));
        let _ = std::fs::remove_dir_all(&staging);
        result
    }

    fn move_in(&self, staging: &Path, files: Vec<PathBuf>) -> Result<Vec<PathBuf>, OutputError> {
        let mut out = Vec::with_capacity(files.len());
        for f in files {
            let rel = f.strip_prefix(staging).map_err(|_| OutputError::Io {
                path: f.clone(),
                err: std::io::Error::other(format!("written outside the staging folder {}", staging.display())),
            })?;
            let dest = self.dir.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::rename(&f, &dest).map_err(io(&dest))?;
            out.push(dest);
        }
        Ok(out)
    }
}

#[cfg(unix)]
fn try_lock(f: &File) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor we own.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn try_lock(_: &File) -> std::io::Result<()> {
    Ok(())
}

/// Writes `path` whole: a temporary file next to it, then a rename (the error names the
/// path that failed).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        OutputError::Io { path: path.to_path_buf(), err: e }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sass-harness-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused_until_the_first_ends() {
        let d = scratch("lock");
        let first = OutputDir::lock(&d).unwrap();
        let e = OutputDir::lock(&d).unwrap_err();
        assert!(matches!(e, OutputError::Busy { .. }), "{e}");
        assert!(e.to_string().contains(&d.display().to_string()) && e.to_string().contains("another"), "{e}");
        drop(first);
        OutputDir::lock(&d).unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn staged_files_land_whole_and_staging_is_removed() {
        let d = scratch("stage");
        let out = OutputDir::lock(&d).unwrap();
        std::fs::write(d.join("summary.md"), "old").unwrap();
        let files = out
            .stage(|s: &Path| -> std::io::Result<Vec<PathBuf>> {
                std::fs::create_dir_all(s.join("html"))?;
                std::fs::write(s.join("summary.md"), "new")?;
                std::fs::write(s.join("html/index.html"), "<html>")?;
                Ok(vec![s.join("summary.md"), s.join("html/index.html")])
            })
            .unwrap();
        assert_eq!(files, vec![d.join("summary.md"), d.join("html/index.html")]);
        assert_eq!(std::fs::read_to_string(d.join("summary.md")).unwrap(), "new");
        // A failing writer leaves the old reports and no staging folder.
        let e = out.stage(|_: &Path| -> Result<Vec<PathBuf>, String> { Err("disk full".into()) }).unwrap_err();
        assert!(e.to_string().contains("disk full") && e.to_string().contains(".staging-"), "{e}");
        assert_eq!(std::fs::read_to_string(d.join("summary.md")).unwrap(), "new");
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(!left.iter().any(|n| n.to_string_lossy().starts_with(".staging")), "{left:?}");
        let p = out.write("realcode.json", b"{}").unwrap();
        assert_eq!(std::fs::read(p).unwrap(), b"{}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn io_errors_name_the_path() {
        let e = OutputDir::lock(Path::new("/proc/sass-harness-cannot-be-here")).unwrap_err();
        assert!(e.to_string().contains("/proc/sass-harness-cannot-be-here"), "{e}");
    }
}
