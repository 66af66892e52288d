//! The `sass-harness` program as a user meets it: exit statuses, messages, pipes.

use std::io::Read;
use std::process::{Command, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sass-harness"));
    c.current_dir(sass_harness::oracle::tools::repo_root());
    c
}

fn temp_page(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sass-harness-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn malformed_pages_exit_2_with_file_line_and_no_panic() {
    let seed = std::fs::read_to_string(sass_harness::oracle::tools::repo_root().join("corpus/isa/sm90/003_ab0fe5b2f4c60028.txt")).unwrap();
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
        let out = bin().args(["asm", "--arch", arch, "@!P0 DFMA R53, RZ, -QNAN, R0 ;"]).output().unwrap();
        assert!(out.status.success(), "{arch}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0000000000000000fff80000ff35882b  DFMA_R_R_F_R");
    }
    let out = bin().args(["asm", "--arch", "SMX", "NOP ;"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected an architecture such as 90"));
}
