//! `sass-harness crosscheck`: a planted codec bug is found, minimized and seeded; the
//! committed roundtrip corpus replays clean; hostile corpora are skipped line by line;
//! `--exec` without a GPU is exit 3. Needs nvdisasm (`bash ci/install-cuda-tools.sh`).

use crate::common;
use sass_harness::codec::Codec;
use sass_harness::fuzz::{load_spec, Input};
use sass_harness::gen::{distilled_values, random_listed_values, Rng};
use sass_harness::oracle::tools::repo_root;
use sass_harness::spec::Arch;
use sass_harness::validate::{Class, Finding, Severity};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    // Fails, not skips, without nvdisasm: the run below needs it.
    sass_harness::oracle::nvdisasm::Nvdisasm::locate().expect("nvdisasm is required: bash ci/install-cuda-tools.sh");
    common::bin()
}

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("xcheck-{tag}"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn findings(out: &Path) -> Vec<Finding> {
    let t = std::fs::read_to_string(out.join("findings.jsonl")).unwrap();
    t.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The discovered SM90 DFMA page with one form's layout wrong: in `DFMA_R_R_R_R` the
/// cells of operands 1 and 2 (bits 24–31, 32–39) traded names, as a copy-paste slip does.
fn planted_spec(dir: &Path) -> PathBuf {
    let src = repo_root().join("corpus/isa-discovered/sm90");
    let spec = dir.join("spec");
    std::fs::create_dir_all(&spec).unwrap();
    std::fs::copy(src.join("conventions.json"), spec.join("conventions.json")).unwrap();
    let page = std::fs::read_to_string(src.join("dfma.txt")).unwrap();
    let mut lines: Vec<String> = page.lines().map(String::from).collect();
    let key = lines.iter().position(|l| l == "key: DFMA_R_R_R_R").expect("the form is on the page");
    let row = (key..).find(|&i| lines[i].contains("\toperand 1\t")).unwrap();
    assert!(row - key <= 4, "the first layout row of the form");
    lines[row] = lines[row].replace("\toperand 1\t", "\tTMP\t").replace("\toperand 2\t", "\toperand 1\t").replace("\tTMP\t", "\toperand 2\t");
    std::fs::write(spec.join("dfma.txt"), lines.join("\n") + "\n").unwrap();
    spec
}

/// Fields of a roundtrip seed away from their distilled value (controls aside).
fn moved_fields(codec: &Codec, seed: &[u8]) -> (usize, usize) {
    let input = Input::parse(codec, seed).unwrap();
    let v = codec.variant(input.variant);
    let d = distilled_values(v);
    let n = (0..v.fields.len()).filter(|&i| !v.fields[i].is_control() && input.values.get(i) != d.get(i)).count();
    (input.variant, n)
}

#[test]
fn a_planted_layout_bug_is_found_minimized_and_its_seed_reproduces_it() {
    let dir = scratch("planted");
    let spec_dir = planted_spec(&dir);
    let spec = load_spec(std::slice::from_ref(&spec_dir)).unwrap();
    let codec = Codec::new(&spec);
    let vi = codec.index_of("DFMA_R_R_R_R", Some(Arch(90))).unwrap();
    let corpus = dir.join("corpus/roundtrip");
    std::fs::create_dir_all(&corpus).unwrap();
    let mut rng = Rng::new(21);
    for i in 0..12 {
        let values = random_listed_values(codec.variant(vi), &mut rng);
        std::fs::write(corpus.join(format!("in{i}")), Input::from_values(&codec, vi, &values).to_bytes(&codec)).unwrap();
    }
    let out = dir.join("out");
    let o = bin().args(["crosscheck", "--spec"]).arg(&spec_dir).arg(dir.join("corpus")).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let fs = findings(&out);
    let bug = fs
        .iter()
        .find(|f| f.variant == "DFMA_R_R_R_R" && f.class == Class::FieldBits && f.severity == Severity::Warning)
        .unwrap_or_else(|| panic!("no field finding for the planted form: {fs:#?}\n{}", text(&o)));
    assert!(matches!(bug.field.as_deref(), Some("operand 1" | "operand 2")), "{bug:#?}");
    assert!(bug.page.ends_with("dfma.txt") && bug.line > 0, "{bug:#?}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("DFMA_R_R_R_R"));
    // No documented limitation explains a swapped layout: it counts as unexplained.
    assert!(!sass_harness::crosscheck::is_explained(bug), "{bug:#?}");
    let unexplained = fs.iter().filter(|f| f.severity != Severity::Note && !sass_harness::crosscheck::is_explained(f)).count();
    assert!(unexplained >= 1 && summary.contains(&format!("explained, {unexplained} unexplained)")), "{unexplained}: {summary}");
    assert!(std::fs::read_to_string(out.join("findings.sarif")).unwrap().contains("DFMA_R_R_R_R"));
    // The seed: minimized to the one register field that shows the swap.
    let seeds: Vec<PathBuf> = std::fs::read_dir(out.join("seeds/roundtrip")).unwrap().map(|e| e.unwrap().path()).collect();
    let seed = seeds.iter().find(|p| p.to_string_lossy().contains("DFMA_R_R_R_R")).unwrap_or_else(|| panic!("{seeds:?}"));
    let (svi, moved) = moved_fields(&codec, &std::fs::read(seed).unwrap());
    assert_eq!((svi, moved), (vi, 1), "{}", seed.display());
    // Replayed alone, the seed shows the same finding.
    let again = dir.join("again");
    let o = bin().args(["crosscheck", "--spec"]).arg(&spec_dir).arg(seed).args(["--target", "roundtrip", "--out"]).arg(&again).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let fs2 = findings(&again);
    assert!(fs2.iter().any(|f| f.variant == bug.variant && f.class == bug.class && f.word == bug.word), "{fs2:#?}");
    // --add-seeds copies it into a corpus folder.
    let corpus2 = dir.join("corpus2");
    let o = bin()
        .args(["crosscheck", "--spec"])
        .arg(&spec_dir)
        .arg(seed)
        .args(["--target", "roundtrip", "--add-seeds", "--corpus"])
        .arg(&corpus2)
        .arg("--out")
        .arg(dir.join("third"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(corpus2.join("roundtrip").join(seed.file_name().unwrap()).is_file(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A word whose table field holds a value the discovered page leaves out (found by a
/// 10-minute roundtrip run): the spec prints `I2F.UNLISTED0.U64`, nvdisasm rejects it. A
/// documented limitation of the pages: the finding stays, and says why.
#[test]
fn an_unlisted_row_nvdisasm_rejects_is_a_finding_with_its_explanation() {
    let dir = scratch("unlisted");
    let spec = load_spec(&sass_harness::fuzz::default_spec_dirs(&repo_root())).unwrap();
    let codec = Codec::new(&spec);
    let vi = codec.index_of("I2F_R_R__i2f__Rb_64b", Some(Arch(90))).unwrap();
    let w = sass_harness::Word::parse_hex("00000000003000000000000000000312").unwrap();
    let corpus = dir.join("corpus/roundtrip");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("unlisted"), Input::from_values(&codec, vi, &codec.extract(vi, w)).to_bytes(&codec)).unwrap();
    let out = dir.join("out");
    let o = bin().arg("crosscheck").arg(dir.join("corpus")).arg("--out").arg(&out).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let fs = findings(&out);
    assert!(fs.iter().any(|f| f.variant == "I2F_R_R__i2f__Rb_64b" && f.class == Class::Legality), "{fs:#?}");
    assert!(fs.iter().all(|f| f.severity == Severity::Note || sass_harness::crosscheck::is_explained(f)), "{fs:#?}");
    assert!(t.contains("1 explained, 0 unexplained"), "{t}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("1 explained, 0 unexplained"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_committed_roundtrip_corpus_replays_with_no_unexplained_disagreement() {
    let out = scratch("clean");
    let o = bin().args(["crosscheck", "corpus/fuzz/roundtrip", "--bench", "--out"]).arg(&out).output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("ratio (crosscheck / nvdisasm throughput)"), "{t}");
    let unexplained: Vec<Finding> = findings(&out).into_iter().filter(|f| f.severity != Severity::Note).collect();
    assert!(unexplained.is_empty(), "{unexplained:#?}");
    assert!(t.contains("0 unexplained"), "{t}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn hostile_corpora_are_skipped_line_by_line_in_bounded_memory() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("hostile");
    let rt = dir.join("corpus/roundtrip");
    std::fs::create_dir_all(rt.join("nested")).unwrap();
    let good = std::fs::read_dir(repo_root().join("corpus/fuzz/roundtrip")).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&good, rt.join("good")).unwrap();
    std::fs::copy(&good, rt.join("nested/good2")).unwrap();
    std::fs::write(rt.join("empty"), b"").unwrap();
    // 64 MiB, sparse: never read.
    std::fs::File::create(rt.join("huge")).unwrap().set_len(64 << 20).unwrap();
    std::fs::copy(&good, rt.join(std::ffi::OsStr::from_bytes(b"name-\xff\xfe"))).unwrap();
    std::os::unix::fs::symlink("missing", rt.join("dangling")).unwrap();
    std::os::unix::fs::symlink("self", rt.join("self")).unwrap();
    std::os::unix::fs::symlink("..", rt.join("nested/up")).unwrap();
    let fifo = std::ffi::CString::new(rt.join("fifo").as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::fs::write(dir.join("corpus/stray"), b"x").unwrap();
    // A file a fuzzer is writing while the run reads the folder.
    let growing = rt.join("growing");
    std::fs::write(&growing, b"").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, growing) = (stop.clone(), growing.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(&growing).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && f.metadata().unwrap().len() < 200_000 {
                let _ = f.write_all(&[7; 64]);
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let out = dir.join("out");
    let script = format!(
        "ulimit -v 3000000 && exec '{}' --memory-budget 256M crosscheck '{}' --out '{}'",
        env!("CARGO_BIN_EXE_sass-harness"),
        dir.join("corpus").display(),
        out.display()
    );
    let o = Command::new("sh").arg("-c").arg(&script).current_dir(repo_root()).output().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for (name, why) in [
        ("empty", "empty: replayed"),
        ("huge", "67108864 bytes, above the 1048576-byte cap"),
        ("name-\\xff\\xfe", "not UTF-8"),
        ("dangling", "cannot read"),
        ("self", "cannot read"),
        ("up", "already walked"),
        ("fifo", "not a regular file"),
        ("stray", "no target"),
    ] {
        let line = summary.lines().find(|l| l.contains(&format!("{name}`")) && l.contains(why));
        assert!(line.is_some(), "no line for {name} ({why}) in:\n{summary}\n{t}");
    }
    // good, good2, empty, the non-UTF-8 name, and the growing file if it held still.
    assert!(t.contains("crosscheck: 4 inputs") || t.contains("crosscheck: 5 inputs"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exec_without_a_gpu_is_exit_3_before_any_work() {
    let out = scratch("exec");
    // SASS_HARNESS_NO_GPU=1 hides the driver (oracle::gpu::cuda::driver_present), so the
    // refusal shows on a GPU machine too.
    let o = bin().args(["crosscheck", "corpus/fuzz/roundtrip", "--exec", "--out"]).arg(out.join("run")).env("SASS_HARNESS_NO_GPU", "1").output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("nothing was run"), "{}", text(&o));
    assert!(!out.join("run/findings.jsonl").exists(), "no work before the refusal");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "slow: every committed seed's words planned and proven in place, 259 s at load 12 on 2 cores (bash ci/test.sh runs the slow set)"]
fn the_exec_dry_run_writes_the_plan_of_the_replayed_words() {
    let out = scratch("exec-dry");
    // The dry run is the executor's plan for the replayed words (oracle::exec::plan_words):
    // patched cubins proven in place by nvdisasm, with the relations.
    let o = bin().args(["crosscheck", "corpus/fuzz/roundtrip", "--exec", "--dry-run", "--out"]).arg(out.join("dry")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 patch failures"), "{}", text(&o));
    let plan = sass_harness::oracle::gpu::cli::read_plan(&out.join("dry/exec/plan.jsonl")).unwrap();
    assert!(!plan.is_empty(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&out);
}
