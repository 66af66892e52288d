//! The `sass-harness` program as a user meets it: exit statuses, messages, pipes.

use crate::common;

use common::{bin, root};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;

fn temp_page(name: &str, text: &str) -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let p = DIR.get_or_init(|| common::scratch("cli")).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn malformed_pages_exit_2_with_file_line_and_no_panic() {
    let seed = std::fs::read_to_string(root().join("corpus/isa/sm90/003_ab0fe5b2f4c60028.txt")).unwrap();
    let cut: String = seed.chars().take(3000).collect();
    for (name, text, want) in [
        ("garbage.txt", "garbage\n".to_string(), "garbage.txt:1: expected an instruction name"),
        ("cut.txt", cut, "cut.txt:100: unexpected end of page: expected a layout index row"),
    ] {
        let p = temp_page(name, &text);
        let out = bin().arg("parse").arg(&p).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn parse_json_lists_the_18_variants() {
    let out = bin().args(["parse", "corpus/isa", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    for key in ["QADD4_R_R_UR", "FHFMA_R_R_R_UR", "I2F_R_I", "DFMA_R_R_UR_I_R"] {
        assert!(text.contains(key), "{key}");
    }
    let keys = text.matches("\"key\":").count();
    assert_eq!(keys, 18);
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    // The JSON spec (~200 kB) is larger than a pipe's buffer, so the writer meets the
    // closed pipe. Read one byte, then hang up, as `| head -c1` does.
    let mut child = bin().args(["parse", "corpus/isa", "--json"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    stdout.read_exact(&mut one).unwrap();
    drop(stdout);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(!status.success() || err.is_empty(), "{status:?} {err}");
}

#[test]
fn arch_is_accepted_as_number_or_name() {
    for arch in ["90", "SM90", "sm_90"] {
        let out = bin().args(["asm", "--spec", "corpus/isa", "--arch", arch, "@!P0 DFMA R53, RZ, -QNAN, R0 ;"]).output().unwrap();
        assert!(out.status.success(), "{arch}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0000000000000000fff80000ff35882b  DFMA_R_R_F_R");
    }
    let out = bin().args(["asm", "--arch", "SMX", "NOP ;"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected an architecture such as 90"));
}

/// A fresh scratch folder for one test.
fn scratch(tag: &str) -> std::path::PathBuf {
    common::scratch(&format!("cli-{tag}"))
}

/// A fake nvdisasm that answers `--version` as the real one and runs `script` otherwise.
fn fake_nvdisasm(dir: &std::path::Path, script: &str) -> std::path::PathBuf {
    let real = common::nvdisasm_path();
    let p = dir.join("nvdisasm");
    std::fs::write(&p, format!("#!/bin/sh\nif [ \"$1\" = --version ]; then exec {} --version; fi\n{script}\n", real.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn validate_with(env: &[(&str, &std::path::Path)], out: &std::path::Path) -> (Option<i32>, String) {
    let mut c = bin();
    c.args(["validate", "corpus/isa", "--random", "20", "--out"]).arg(out);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Tool faults end the run with an error naming the tool and what happened; they are
/// never findings.
#[test]
fn tool_faults_fail_validate_with_a_clear_message() {
    let dir = scratch("toolfault");
    let out = dir.join("out");
    let crash = fake_nvdisasm(&dir, "echo 'internal compiler error' >&2; kill -SEGV $$");
    for (env, want) in [
        (vec![("NVDISASM", Path::new("/bin/false"))], vec!["/bin/false is not nvdisasm"]),
        (vec![("NVDISASM", Path::new("/bin/true"))], vec!["/bin/true is not nvdisasm"]),
        (vec![("NVDISASM", crash.as_path())], vec!["killed by signal 11", "internal compiler error", "tried twice", " -b SM", "first word"]),
        (vec![("TMPDIR", Path::new("/nonexistent/tmp"))], vec!["/nonexistent/tmp", "temporary folder"]),
    ] {
        let (code, err) = validate_with(&env, &out);
        assert_eq!(code, Some(2), "{env:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{env:?}: {w:?} not in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        let findings = std::fs::read_to_string(out.join("findings.jsonl")).unwrap_or_default();
        assert!(!findings.contains("tool failure"), "{findings}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hung_nvdisasm_times_out_by_flag_and_by_variable() {
    let dir = scratch("hang");
    let out = dir.join("out");
    let hang = fake_nvdisasm(&dir, "sleep 100000 & exec sleep 100000");
    let t = std::time::Instant::now();
    let (code, err) = validate_with(&[("NVDISASM", &hang), ("SASS_HARNESS_TOOL_TIMEOUT", Path::new("0.5"))], &out);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("timed out after 0.5 s"), "{err}");
    let o = bin().args(["validate", "corpus/isa", "--random", "20", "--tool-timeout", "0.3", "--out"]).arg(&out).env("NVDISASM", &hang).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("timed out after 0.3 s"), "{err}");
    assert!(t.elapsed() < std::time::Duration::from_secs(60), "{:?}", t.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn strict_turns_page_warnings_into_errors() {
    let ok = bin().args(["parse", "corpus/isa"]).output().unwrap();
    assert!(ok.status.success());
    for cmd in [&["parse", "corpus/isa", "--strict"][..], &["check", "corpus/isa", "--words", "1", "--strict"]] {
        let o = bin().args(cmd).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("--strict: 171 page warning(s)") && err.contains("warning: corpus/isa/"), "{cmd:?}: {err}");
    }
}

#[test]
fn decode_fails_on_words_that_match_nothing() {
    let good = "0000000000000000000000000000022b";
    let o = bin().args(["decode", "--spec", "corpus/isa", "--arch", "90", good]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("DFMA_R_R_R_R"));
    // Every word is still printed; the status says one matched nothing.
    let o = bin().args(["decode", "--spec", "corpus/isa", "--arch", "90", good, "ffffffffffffffffffffffffffffffff"]).output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.contains("DFMA_R_R_R_R") && out.contains("ffffffffffffffffffffffffffffffff  error:"), "{out}");
    assert!(err.contains("1 of 2 word(s) matched no variant"), "{err}");
    let o = bin().args(["decode", "--spec", "corpus/isa", "--arch", "75", good]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no variant for SM75"), "{err}");
}

/// Every option of every command says what it does in `--help`.
#[test]
fn every_option_has_help_text() {
    for cmd in ["parse", "check", "validate", "run", "realcode", "decode", "asm", "disasm", "bench"] {
        let o = bin().args([cmd, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{cmd}");
        let mut options = 0;
        for line in help.lines().skip_while(|l| !l.starts_with("Arguments:") && !l.starts_with("Options:")) {
            let t = line.trim_start();
            if t.starts_with('-') || t.starts_with('<') || t.starts_with('[') {
                options += 1;
                // `--flag <V>  Text`: the text follows two or more spaces.
                let text = t.split("  ").skip(1).map(str::trim).find(|s| !s.is_empty());
                assert!(text.is_some(), "{cmd}: option without help text: {line:?}\n{help}");
            }
        }
        assert!(options >= 3, "{cmd}: {help}");
    }
}

#[test]
fn run_reads_ptx_from_the_folder_given() {
    let dir = scratch("runptx");
    let o = bin().args(["run", "corpus/isa", "--words", "10", "--random", "10", "--ptx", "/nonexistent/ptx", "--out"]).arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/ptx"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines of a file the fake tools append their pids to.
fn pids(p: &Path) -> Vec<i32> {
    std::fs::read_to_string(p).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Whether a process is gone (or a zombie nobody has reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit_once(')').map(|(_, r)| r.trim_start().starts_with('Z')).unwrap_or(false),
    }
}

fn wait_for(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !ok() {
        assert!(t.elapsed() < std::time::Duration::from_secs(secs), "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A second run on a busy output folder is refused; SIGINT kills the first run's
/// nvdisasm processes (grandchildren too), removes its temporaries and exits non-zero.
#[test]
fn output_folder_is_locked_and_sigint_cleans_up() {
    let dir = scratch("lock");
    let (tmp, out, pidfile) = (dir.join("tmp"), dir.join("out"), dir.join("pids"));
    std::fs::create_dir_all(&tmp).unwrap();
    let p = pidfile.display();
    let hang = fake_nvdisasm(&dir, &format!("sleep 100000 & echo $! >> {p}; echo $$ >> {p}; exec sleep 100000"));
    let validate = || {
        let mut c = bin();
        c.args(["validate", "corpus/isa", "--random", "20", "--tool-timeout", "60", "--out"]).arg(&out);
        c.env("NVDISASM", &hang).env("TMPDIR", &tmp);
        c
    };
    let mut first = validate().stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for("the fake nvdisasm to start", 60, || pids(&pidfile).len() >= 2);
    let second = validate().output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("is in use by another sass-harness run") && err.contains(&out.display().to_string()), "{err}");
    let has_temporaries = || std::fs::read_dir(&tmp).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("sass-harness-nvdisasm-"));
    assert!(has_temporaries());
    // SAFETY: signalling the child we started.
    assert_eq!(unsafe { libc::kill(first.id() as i32, libc::SIGINT) }, 0);
    let mut status = None;
    wait_for("the first run to end", 20, || {
        status = first.try_wait().unwrap();
        status.is_some()
    });
    let mut err = String::new();
    first.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.unwrap().code(), Some(2), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!has_temporaries(), "temporaries left in {}", tmp.display());
    for pid in pids(&pidfile) {
        wait_for(&format!("pid {pid} to die"), 5, || gone(pid));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An interrupted validation (a page done, the next one's findings torn mid-line) is
/// finished by `--resume` with exactly the findings of an uninterrupted run; the folder
/// says INCOMPLETE until the reports are in place.
#[test]
fn resume_finishes_an_interrupted_run_with_the_same_findings() {
    // A path of its own, not yet there: the run makes it.
    let dir = common::scratch("cli-resume");
    let _ = std::fs::remove_dir_all(&dir);
    let run = |extra: &[&str]| {
        let out = bin().args(["validate", "corpus/isa", "--random", "30", "--out"]).arg(&dir).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let sorted = |p: &Path| {
        let mut l: Vec<String> = std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect();
        l.sort();
        l
    };
    run(&[]);
    let whole = sorted(&dir.join("findings.jsonl"));
    assert!(!dir.join("INCOMPLETE").exists());
    // Interrupt it after its first page: one progress line, and a torn findings line.
    let progress = std::fs::read_to_string(dir.join("progress.jsonl")).unwrap();
    let first = progress.lines().next().unwrap().to_string();
    let page: serde_json::Value = serde_json::from_str(&first).unwrap();
    let page = page["page"].as_str().unwrap().to_string();
    std::fs::write(dir.join("progress.jsonl"), format!("{first}\n{{\"page\":")).unwrap();
    let findings = std::fs::read_to_string(dir.join("findings.jsonl")).unwrap();
    let kept: Vec<&str> = findings.lines().filter(|l| l.contains(&format!("\"page\":\"{page}\""))).collect();
    let other = findings.lines().find(|l| !l.contains(&format!("\"page\":\"{page}\""))).unwrap();
    std::fs::write(dir.join("findings.jsonl"), format!("{}\n{}\n{}", kept.join("\n"), other, &other[..other.len() / 2])).unwrap();
    std::fs::write(dir.join("INCOMPLETE"), "").unwrap();
    let out = run(&["--resume"]);
    assert!(out.contains("resuming: 1 page(s) done before"), "{out}");
    assert_eq!(sorted(&dir.join("findings.jsonl")), whole);
    assert!(!dir.join("INCOMPLETE").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
