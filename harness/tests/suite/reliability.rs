//! Reliability at the edges (issue 23): bounded memory for any request, per-target PTX
//! compilation, interrupted discovery. Each test runs the program as a user would.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin_path() -> &'static str {
    env!("CARGO_BIN_EXE_sass-harness")
}

fn bin() -> Command {
    common::bin()
}

/// A fresh scratch folder for one test.
fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("rel-{tag}"))
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

/// The program under `ulimit -v 3000000`, spawned: `exec` keeps its pid the program's.
fn spawn_under_ulimit(args: &str) -> std::process::Child {
    let root = sass_harness::oracle::tools::repo_root();
    let script = format!("ulimit -v 3000000 && cd '{}' && exec '{}' {args}", root.display(), bin_path());
    Command::new("bash").args(["-c", &script]).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
}

/// Waits for `child`: its output and its peak resident memory in bytes, the high-water
/// mark of the program's own address space (`VmHWM`), read every 10 ms while it runs.
/// Not wait4's `ru_maxrss`: a child spawned with vfork (as `Command` spawns) starts from
/// its parent's high-water mark, and this test process is large when the whole suite
/// runs in it; the program's own mark starts afresh at its exec.
fn wait_with_peak(mut child: std::process::Child) -> (Output, u64) {
    use std::io::Read;
    let pid = child.id();
    let (mut out, mut err) = (vec![], vec![]);
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let t = std::thread::spawn(move || {
        let _ = se.read_to_end(&mut err);
        err
    });
    let sampler = std::thread::spawn(move || {
        let mut peak = 0u64;
        // Until the program has let go of its memory (the line goes) or is gone.
        while let Some(kb) = std::fs::read_to_string(format!("/proc/{pid}/status")).ok().and_then(|s| vm_hwm_kb(&s)) {
            peak = peak.max(kb * 1024);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        peak
    });
    so.read_to_end(&mut out).unwrap();
    let err = t.join().unwrap();
    // The sampler ends when the program has exited (a zombie has no `VmHWM`), before it is
    // reaped here: its pid cannot be another process's yet.
    let peak = sampler.join().unwrap();
    let status = child.wait().unwrap();
    (Output { status, stdout: out, stderr: err }, peak)
}

/// The `VmHWM:` line of a `/proc/PID/status` text, in kB.
fn vm_hwm_kb(status: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// `--random` past a slice streams: SM90's 9 variants with `--random 40000` hold about
/// 272 MiB when every random word is kept (the estimate before slices), and fit a
/// 256 MiB budget now: the run finishes under `ulimit -v 3000000` and its measured
/// peak stays under the budget, every word judged.
#[test]
fn random_words_past_a_slice_stream_in_bounded_memory_under_ulimit() {
    let dir = scratch("stream");
    let child = spawn_under_ulimit(&format!("validate corpus/isa/sm90 --random 40000 --memory-budget 256M --out '{}'", dir.join("o").display()));
    let (o, peak) = wait_with_peak(child);
    let (err, out) = (stderr(&o), String::from_utf8_lossy(&o.stdout).into_owned());
    assert!(o.status.success(), "{err}");
    // A peak of almost nothing would be a sampler that never saw the program.
    assert!(peak > 16 << 20, "peak RSS {} MiB: the program was not measured", peak >> 20);
    assert!(peak < 256 << 20, "peak RSS {} MiB, above the 256 MiB budget", peak >> 20);
    eprintln!("peak RSS {} MiB", peak >> 20);
    let words: usize = out.split("validated 9 variants: ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(words > 9 * 40_000, "every random word judged: {out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--random 100000000` used to abort under a 3 GB limit (`memory allocation of
/// 3221225472 bytes failed`, exit 134), then was refused: now it runs, in bounded
/// memory (checked while it runs: it would take hours), and SIGINT ends it cleanly. A
/// budget too small for even one slice is refused before any work; a small request
/// under the same limit succeeds.
#[test]
#[ignore = "slow: watches a huge validation on both cores for 15 s, as the quick chaos probe does (bash ci/test.sh runs the slow set)"]
fn a_huge_random_runs_in_bounded_memory_under_ulimit_and_a_budget_below_one_slice_is_refused() {
    let dir = scratch("ulimit");
    let mut child = spawn_under_ulimit(&format!("validate corpus/isa --random 100000000 --out '{}'", dir.join("big").display()));
    std::thread::sleep(std::time::Duration::from_secs(15));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    assert!(child.try_wait().unwrap().is_none(), "ended within 15 s: {status}");
    let hwm = vm_hwm_kb(&status).unwrap_or_else(|| panic!("no VmHWM after 15 s: {status}"));
    // SAFETY: kill with our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (o, _) = wait_with_peak(child);
    let err = stderr(&o);
    assert!(hwm < 512 << 10, "peak {hwm} kB after 15 s");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
    let o = under_ulimit(&format!("validate corpus/isa --random 100000000 --memory-budget 100M --out '{}'", dir.join("tiny").display()));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in ["--random 100000000", "memory budget of 100.0 MiB", "raise the budget"] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!dir.join("tiny/INCOMPLETE").exists() && !dir.join("tiny/findings.jsonl").exists());
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

/// A small kernel of `.target target`; `broken` adds a line ptxas rejects.
fn kernel(target: &str, broken: bool) -> String {
    let bad = if broken { "    frobnicate.f32 %f1;\n" } else { "" };
    format!(
        ".version 8.8\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n    .reg .b64 %rd<2>;\n    ld.param.u64 %rd1, [p];\n{bad}    st.global.u64 [%rd1], %rd1;\n    ret;\n}}\n"
    )
}

/// A PTX folder: a family-target kernel beside a portable one.
fn ptx_dir(tag: &str) -> PathBuf {
    let dir = scratch(tag);
    std::fs::write(dir.join("family.ptx"), kernel("sm_100f", false)).unwrap();
    std::fs::write(dir.join("plain.ptx"), kernel("sm_90", false)).unwrap();
    dir
}

/// `realcode` used to stop at the first PTX whose `.target` ptxas refuses for an
/// architecture of the pages; now that pair is skipped, in one line, and the rest run.
#[test]
fn realcode_skips_a_family_target_where_ptxas_refuses_it_and_goes_on() {
    let dir = ptx_dir("realcode-family");
    let o = bin().args(["realcode", "corpus/isa", "--ptx"]).arg(&dir).arg("--out").arg(dir.join("out")).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}{out}", stderr(&o));
    // plain for SM90 and SM100, family for SM100 only.
    assert!(out.contains("real code: 3 kernels"), "{out}");
    let skips: Vec<&str> = out.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skips.len(), 1, "{out}");
    assert!(skips[0].contains("skipped family.ptx for SM90: ptxas: ") && skips[0].contains(".target"), "{out}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out/realcode.json")).unwrap()).unwrap();
    let skipped = &json["skipped"];
    assert_eq!((skipped[0]["file"].as_str(), skipped[0]["arch"].as_str(), skipped[1].is_null()), (Some("family.ptx"), Some("SM90"), true), "{skipped}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `discover --ptx` seeds from: a family target is compiled within its family
/// (sm_100f for SM100) and skipped outside it (SM120) by ptxas's own answer, which is
/// kept: a second file of that target is skipped without asking ptxas again (it is
/// broken, so asking would fail the run).
#[test]
fn family_targets_compile_only_where_ptxas_allows_and_the_answer_is_kept() {
    use sass_harness::oracle::tools::{locate, Tool};
    use sass_harness::realcode::corpus_words;
    use sass_harness::spec::Arch;
    let ptxas = locate(Tool::Ptxas).expect("ptxas required: bash ci/install-cuda-tools.sh");
    let dir = ptx_dir("family-rules");
    let (words, skipped) = corpus_words(&ptxas, &dir, Arch(100), &dir.join("c100")).unwrap();
    assert!(skipped.is_empty() && words.len() >= 4, "{skipped:?}");
    std::fs::write(dir.join("family2.ptx"), kernel("sm_100f", true)).unwrap();
    let (words, skipped) = corpus_words(&ptxas, &dir, Arch(120), &dir.join("c120")).unwrap();
    assert!(!words.is_empty(), "plain.ptx compiles for SM120");
    let files: Vec<&str> = skipped.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, ["family.ptx", "family2.ptx"]);
    assert!(skipped.iter().all(|s| s.arch == "SM120" && s.reason.contains("different SM-family")), "{skipped:?}");
    // Asked where ptxas was not asked before, the broken file is an error naming it.
    let e = corpus_words(&ptxas, &dir, Arch(100), &dir.join("c100")).unwrap_err();
    assert!(e.to_string().contains("family2.ptx"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small whole-architecture discovery (SM90 DFMA: one opcode, 9 forms, ~30 s alone).
/// Four solvers: forms are solved in small groups seconds apart, so a kill after the first
/// one lands mid-solve (with the default 256 they finish within milliseconds of each other).
fn discover_dfma(out: &std::path::Path) -> Command {
    let mut c = bin();
    c.args(["discover", "--arch", "90", "--opcode", "0x2b", "--only", "DFMA", "--ptx", "none", "--solvers", "4", "--out"]).arg(out);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    c
}

/// Waits up to 600 s for `ok` (the census takes seconds alone, minutes on a loaded
/// 2-core machine: 120 s timed out at load 16).
fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !ok() {
        assert!(t.elapsed().as_secs() < 600, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Starts a discovery into `out`, waits for `moment`, then SIGKILLs it.
fn kill_at(out: &std::path::Path, what: &str, moment: impl Fn() -> bool) {
    let mut child = discover_dfma(out).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_until(what, || moment() || child.try_wait().unwrap().is_some());
    assert!(child.try_wait().unwrap().is_none(), "the run ended before {what}: no kill there");
    child.kill().unwrap();
    child.wait().unwrap();
}

fn lines(p: &std::path::Path) -> usize {
    std::fs::read_to_string(p).map(|t| t.lines().count()).unwrap_or(0)
}

/// The files of `dir/pages`, by name.
fn pages(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("pages"))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect();
    v.sort();
    v
}

/// `discover` SIGKILLed during the census, right after census.json, mid-solve (then a
/// torn last line of solved.jsonl and a page cut short, as a kill mid-write leaves),
/// each time rerun with the same arguments, ends with pages and census byte-identical
/// to an uninterrupted run's. A second run into a folder in use is refused at once.
#[test]
#[ignore = "slow: a discovery killed and rerun several times, 75 s at load 12 on 2 cores (bash ci/test.sh runs the slow set)"]
fn discover_killed_at_any_moment_then_rerun_writes_the_same_pages() {
    let dir = scratch("discover-kill");
    let (whole, killed) = (dir.join("whole"), dir.join("killed"));
    // The uninterrupted run, alongside the interrupted ones.
    let reference = std::thread::spawn({
        let whole = whole.clone();
        move || discover_dfma(&whole).output().unwrap()
    });
    let t = std::time::Instant::now();
    kill_at(&killed, "1 s into the census", || t.elapsed().as_millis() > 1000);
    let census = killed.join("census.json");
    let mut child = discover_dfma(&killed).stderr(std::process::Stdio::null()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let busy = discover_dfma(&killed).output().unwrap();
    let err = stderr(&busy);
    assert_eq!(busy.status.code(), Some(2), "{err}");
    assert!(err.contains("in use by another sass-harness run"), "{err}");
    wait_until("census.json", || census.exists() || child.try_wait().unwrap().is_some());
    child.kill().unwrap();
    child.wait().unwrap();
    let solved = killed.join("solved.jsonl");
    kill_at(&killed, "the first solved form", || lines(&solved) >= 1);
    // A kill inside a write leaves half a record.
    let mut f = std::fs::OpenOptions::new().append(true).open(&solved).unwrap();
    std::io::Write::write_all(&mut f, b"{\"opclass\":\"dfma__RR").unwrap();
    // What a kill while writing pages leaves (too short a moment to hit by timing): a
    // page cut short and a temporary file beside it.
    std::fs::create_dir_all(killed.join("pages")).unwrap();
    std::fs::write(killed.join("pages/dfma.txt"), "DFMA\n").unwrap();
    std::fs::write(killed.join("pages/.dfma.txt.tmp-1"), "DF").unwrap();
    let last = discover_dfma(&killed).output().unwrap();
    assert!(last.status.success(), "{}", stderr(&last));
    let whole_run = reference.join().unwrap();
    assert!(whole_run.status.success(), "{}", stderr(&whole_run));
    assert!(!pages(&whole).is_empty());
    assert!(pages(&killed) == pages(&whole), "pages differ after the kills");
    assert_eq!(std::fs::read(&census).unwrap(), std::fs::read(whole.join("census.json")).unwrap());
    assert_eq!(lines(&solved), lines(&whole.join("solved.jsonl")), "a form solved twice or lost");
    let _ = std::fs::remove_dir_all(&dir);
}
