//! Reliability at the edges (issue 23): bounded memory for any request, per-target PTX
//! compilation, interrupted discovery. Each test runs the program as a user would.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin_path() -> &'static str {
    env!("CARGO_BIN_EXE_sass-harness")
}

fn bin() -> Command {
    let mut c = Command::new(bin_path());
    c.current_dir(sass_harness::oracle::tools::repo_root());
    c
}

/// A fresh scratch folder for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sass-harness-rel-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The program under `ulimit -v 3000000` (about 2.9 GiB of address space).
fn under_ulimit(args: &str) -> Output {
    let root = sass_harness::oracle::tools::repo_root();
    let script = format!("ulimit -v 3000000 && cd '{}' && exec '{}' {args}", root.display(), bin_path());
    Command::new("bash").args(["-c", &script]).output().unwrap()
}

/// `--random 100000000` used to abort (`memory allocation of 3221225472 bytes failed`,
/// exit 134) under a 3 GB limit: now it is refused before any work, naming the budget
/// and the largest `--random` that fits; a small request under the same limit succeeds.
#[test]
fn a_huge_random_is_refused_up_front_under_ulimit_and_a_small_one_runs() {
    let dir = scratch("ulimit");
    let o = under_ulimit(&format!("validate corpus/isa --random 100000000 --out '{}'", dir.join("big").display()));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in ["--random 100000000", "memory budget", "ulimit -v 3000000", "lower --random to"] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
    // Refused before any work: no run was started in the folder.
    assert!(!dir.join("big/INCOMPLETE").exists() && !dir.join("big/findings.jsonl").exists());
    let small = dir.join("small");
    let o = under_ulimit(&format!("validate corpus/isa/sm90 --random 100 --out '{}'", small.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(small.join("findings.jsonl").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The budget is a flag and a variable; a bad value names where it came from.
#[test]
fn the_memory_budget_is_set_by_flag_or_variable() {
    let dir = scratch("budget");
    let out = dir.join("o");
    let o = bin().args(["validate", "corpus/isa", "--random", "1000000", "--memory-budget", "64M", "--out"]).arg(&out).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("memory budget of 64.0 MiB") && err.contains("--memory-budget"), "{err}");
    let o = bin().args(["validate", "corpus/isa", "--random", "1000000", "--out"]).arg(&out).env("SASS_HARNESS_MEMORY_BUDGET", "64M").output().unwrap();
    assert!(stderr(&o).contains("SASS_HARNESS_MEMORY_BUDGET=64M"), "{}", stderr(&o));
    let o = bin().args(["validate", "corpus/isa", "--out"]).arg(&out).env("SASS_HARNESS_MEMORY_BUDGET", "lots").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("SASS_HARNESS_MEMORY_BUDGET=\"lots\"") && stderr(&o).contains("not a size"), "{}", stderr(&o));
    let o = bin().args(["bench", "corpus/isa", "--words", "100000000", "--memory-budget", "1G"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bench --words 100000000") && stderr(&o).contains("1.0 GiB"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
