//! What the test modules share: the repository and its corpora, the NVIDIA tools (a test
//! that needs one fails without it, with the command that installs it), fresh scratch
//! folders and the program itself. `use crate::common;` in a test module brings them in.

use sass_harness::oracle::merge::Merger;
use sass_harness::oracle::nvdisasm::Nvdisasm;
use sass_harness::oracle::ptxas;
use sass_harness::oracle::replies::Replies;
use sass_harness::oracle::tools::{self, Tool};
use sass_harness::spec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// What a test says when a tool it needs is missing.
pub const INSTALL: &str = "bash ci/install-cuda-tools.sh";

/// The repository's root folder.
pub fn root() -> PathBuf {
    tools::repo_root()
}

/// The seed pages (`corpus/isa`: DFMA, I2F, FHFMA, FP8 on SM90 and SM100, 18 variants).
pub fn corpus() -> spec::Spec {
    spec::load(&[root().join("corpus/isa")]).unwrap_or_else(|e| panic!("corpus/isa: {e}"))
}

/// The discovered pages (`corpus/isa-discovered`: every architecture's folder).
pub fn discovered() -> spec::Spec {
    spec::load(&[root().join("corpus/isa-discovered")]).unwrap_or_else(|e| panic!("corpus/isa-discovered: {e}"))
}

/// nvdisasm, as the oracle, its replies kept under the target folder (`nvdisasm-cache`)
/// for the next identical run, by any test of this run or of a later one: the same
/// binary, architecture, base address and words (`Nvdisasm::cache`). Each run costs
/// about 0.25 s of CPU to start; the fast set starts some 230.
pub fn nvdisasm() -> Nvdisasm {
    let nv = Nvdisasm::locate().unwrap_or_else(|e| panic!("nvdisasm is required ({INSTALL}): {e}"));
    Nvdisasm { cache: Some(cache_dir()), ..nv }
}

/// nvdisasm, as the oracle, answering a request asked before in this test process from
/// its reply (every clone shares one [`Replies`]): for the tests that ask the same
/// requests again (`discover`'s discoveries rediscover the same seeds and census).
/// Requests that accept any address (discovery's) wait while a run is under way and go
/// together in the next ([`Merger`]): the discoveries of tests side by side share process
/// starts. What the tests check is unchanged: a word's outcome depends on the word and
/// its address alone.
pub fn nvdisasm_keeping_replies() -> Nvdisasm {
    static NV: std::sync::OnceLock<Nvdisasm> = std::sync::OnceLock::new();
    NV.get_or_init(|| Nvdisasm { replies: Some(Arc::new(Replies::default())), merger: Some(Arc::new(Merger::new(1))), ..nvdisasm() }).clone()
}

/// `f` of every item, each in a thread of its own, all at once, in the items' order:
/// cases that each wait on a chain of nvdisasm runs (discoveries) then share the runs of
/// [`nvdisasm_keeping_replies`]'s merger. A case that panics fails the caller, its
/// message printed as it happens.
pub fn map_at_once<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let threads: Vec<_> = items.iter().map(|it| s.spawn(move || f(it))).collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// [`map_at_once`] for cases that return nothing.
pub fn each_at_once<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    map_at_once(items, f);
}

/// nvdisasm's path.
pub fn nvdisasm_path() -> PathBuf {
    tools::locate(Tool::Nvdisasm).unwrap_or_else(|e| panic!("nvdisasm is required ({INSTALL}): {e}"))
}

/// ptxas's path. Its cubins are kept under the target folder from now on (keyed by the
/// PTX bytes, ptxas and `-arch`: see `ptxas::cache`), so every test that compiles
/// `corpus/ptx` after the first copies them.
pub fn ptxas() -> PathBuf {
    ptxas::cache::set_dir(ptxas_cache());
    tools::locate(Tool::Ptxas).unwrap_or_else(|e| panic!("ptxas is required ({INSTALL}): {e}"))
}

/// The ptxas cache folder the tests share (pass it as `SASS_HARNESS_PTXAS_CACHE` to the
/// program).
pub fn ptxas_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("ptxas-cache")
}

/// A fresh, empty folder `sass-harness-<tag>-<pid>-<n>` under the system's temp folder,
/// `n` counting the calls: every module's tests run in this one process, so two tests
/// that pick the same tag still get folders of their own.
///
/// The folders stay after the run (a failing test's files are there to read); the first
/// call of a run removes those of earlier runs whose process has ended.
pub fn scratch(tag: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(remove_scratch_of_ended_runs);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("sass-harness-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

/// Removes the `sass-harness-<tag>-<pid>-<n>` folders of [`scratch`] whose process no
/// longer runs (no `/proc/<pid>`; where there is no `/proc`, nothing is removed).
fn remove_scratch_of_ended_runs() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("sass-harness-") else { continue };
        let mut parts = rest.rsplitn(3, '-');
        let (n, pid, tag) = (parts.next(), parts.next(), parts.next());
        let ours = n.is_some_and(|n| n.parse::<u64>().is_ok()) && tag.is_some_and(|t| !t.is_empty());
        if let Some(pid) = pid.filter(|_| ours).and_then(|p| p.parse::<u32>().ok()) {
            if !Path::new("/proc").join(pid.to_string()).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// The program, run from the repository's root.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sass-harness"));
    c.current_dir(root());
    // nvdisasm's replies kept where the suite's own oracle keeps them ([`nvdisasm`]): a
    // run another test (or process) already made is answered from there. A stand-in
    // nvdisasm is another binary, so it never meets the real one's replies.
    c.env(sass_harness::oracle::nvdisasm::CACHE_VAR, cache_dir());
    c
}

/// Where the suite keeps nvdisasm's replies (`Nvdisasm::cache`).
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvdisasm-cache")
}
