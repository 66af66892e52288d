//! The commands that judge pages: `check` (the codec against itself), `validate` and
//! `fix` (against nvdisasm), `realcode`, `conventions` and `bench`.

use super::{load_spec, lock_out, nvdisasm, Result};
use crate::check::Checker;
use crate::codec::Codec;
use crate::gen::{random_values, Rng};
use crate::oracle::nvdisasm::Nvdisasm;
use crate::output::OutputDir;
use crate::spec::{self, Spec};
use crate::validate::{self, Finding, VariantSummary};
use crate::word::Word;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub fn check(s: &Spec, words: usize, seed: u64) -> Result {
    let c = Codec::new(s);
    let a = crate::Assembler::new(&c);
    let k = Checker::new(&a);
    let mut rng = Rng::new(seed);
    println!("{:<22} {:>6} {:>10} {:>9}", "variant", "arch", "words", "failures");
    let mut total_fail = 0;
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        let mut fails = 0;
        let mut first = None;
        for _ in 0..words {
            let vals = random_values(v, &mut rng);
            if let Err(e) = k.roundtrip(vi, &vals) {
                fails += 1;
                first.get_or_insert(e);
            }
        }
        println!("{:<22} {:>6} {:>10} {:>9}", v.key, v.arch.to_string(), words, fails);
        if let Some(e) = first {
            println!("    first failure: {e}");
        }
        total_fail += fails;
    }
    if total_fail > 0 {
        return Err(format!("{total_fail} roundtrip failure(s)").into());
    }
    Ok(())
}

/// A validation into `out` (see [`super::validation::validate_into`]), keeping what
/// `previous` (an interrupted run) finished. SASS_HARNESS_TIMINGS=1 prints each phase's
/// time to stderr (for profiling big runs).
pub fn validate(s: &Spec, out: &OutputDir, random: usize, seed: u64, previous: validate::resume::Previous) -> Result<(Vec<VariantSummary>, Vec<Finding>)> {
    let timings = std::env::var_os("SASS_HARNESS_TIMINGS").is_some_and(|v| v != "0");
    let opts = validate::Options { random_per_variant: random, seed, timings, ..Default::default() };
    Ok(super::validation::validate_into(s, out, &nvdisasm()?, &opts, previous)?)
}

/// Where a page found under one of `roots` goes under `out`: its path below that root
/// (a file given directly: its file name).
pub fn output_path(page: &Path, roots: &[PathBuf], out: &Path) -> PathBuf {
    for r in roots {
        if let Ok(rel) = page.strip_prefix(r) {
            if !rel.as_os_str().is_empty() {
                return out.join(rel);
            }
        }
    }
    out.join(page.file_name().unwrap_or(page.as_os_str()))
}

pub fn fix(paths: &[PathBuf], out: &Path, random: usize) -> Result {
    let first = load_spec(paths)?;
    let originals: Vec<(PathBuf, String)> = first
        .pages
        .iter()
        .map(|p| std::fs::read_to_string(&p.file).map(|t| (output_path(Path::new(&p.file), paths, out), t)).map_err(|e| format!("{}: {e}", p.file)))
        .collect::<std::result::Result<_, String>>()?;
    let mut spec = first;
    let mut errors = 0;
    for round in 1..=3 {
        let (_, findings) = validate(&spec, &lock_out(&out.join(format!("round-{round}")))?, random, 0x5eed, Default::default())?;
        errors = findings.iter().filter(|f| f.severity == validate::Severity::Error).count();
        println!("fix round {round}: {errors} error(s)");
        if errors == 0 && round > 1 {
            break;
        }
        let corrected = crate::fix::correct_pages(&spec, &findings)?;
        for (page, (dest, _)) in corrected.iter().zip(&originals) {
            if let Some(dir) = dest.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(dest, &page.text).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        write_conventions(&spec, &findings, &originals)?;
        if errors == 0 {
            break;
        }
        let next: Vec<PathBuf> = originals.iter().map(|(d, _)| d.clone()).collect();
        spec = load_spec(&next)?;
    }
    for (dest, original) in &originals {
        let now = std::fs::read_to_string(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        let diff_path = PathBuf::from(format!("{}.diff", dest.display()));
        if now != *original {
            let name = dest.display().to_string();
            std::fs::write(&diff_path, crate::validate::correct::unified_diff(&name, original, &now)).map_err(|e| format!("{}: {e}", diff_path.display()))?;
            println!("corrected {} (diff: {})", dest.display(), diff_path.display());
        } else {
            let _ = std::fs::remove_file(&diff_path);
            println!("unchanged {}", dest.display());
        }
    }
    if errors > 0 {
        return Err(format!("{errors} error(s) left after three rounds of corrections").into());
    }
    Ok(())
}

/// Writes each page folder's corrected conventions file beside its corrected pages
/// (`dests`: each page's output path, in the spec's page order).
pub fn write_conventions(spec: &Spec, findings: &[validate::Finding], dests: &[(PathBuf, String)]) -> Result {
    for (dir, file) in crate::fix::correct_conventions(spec, findings)? {
        let Some(i) = spec.pages.iter().position(|p| Path::new(&p.file).parent() == Some(dir.as_path())) else { continue };
        let Some(dest_dir) = dests[i].0.parent() else { continue };
        let path = dest_dir.join(spec::conventions::FILE_NAME);
        crate::output::write_atomic(&path, file.to_text().as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn realcode(s: &Spec, ptx: &Path, out: &OutputDir) -> Result {
    let nv = nvdisasm()?;
    let ptxas = crate::oracle::tools::locate(crate::oracle::tools::Tool::Ptxas).map_err(|e| e.to_string())?;
    let c = Codec::new(s);
    let tmp = out.path().join("cubins");
    let r = crate::realcode::run(&c, &nv, &ptxas, ptx, &tmp)?;
    println!(
        "real code: {} kernels, {} words, {} covered by the pages, {} agreeing with nvdisasm, {} printed differently",
        r.kernels,
        r.words,
        r.covered,
        r.agreeing,
        r.disagreeing.len()
    );
    println!("  byte-identical to nvdisasm: {} of {} covered words", r.identical, r.covered);
    for s in &r.skipped {
        println!("  {s}");
    }
    for (arch, (words, covered)) in &r.by_arch {
        println!("  {arch}: {covered} of {words} words covered ({:.1}%)", 100.0 * *covered as f64 / (*words).max(1) as f64);
        let mut missing: Vec<(&String, &usize)> = r.uncovered.get(arch).map(|m| m.iter().collect()).unwrap_or_default();
        missing.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        if !missing.is_empty() {
            let top: Vec<String> = missing.iter().take(12).map(|(m, n)| format!("{m} {n}")).collect();
            println!("    not covered, by mnemonic: {}{}", top.join(", "), if missing.len() > 12 { ", …" } else { "" });
        }
    }
    for e in r.not_identical.iter().take(8) {
        println!("  spelled differently: {}  ours '{}'  nvdisasm '{}'  [{}]", e.word, e.ours, e.nvdisasm, e.kernel);
    }
    println!(
        "  nvdisasm text → assembler: {} bit-exact, {} exact up to bits nvdisasm does not print{}, {} printed alike by several forms (this one among them; {} the first, what `asm` gives), {} mismatches",
        r.asm_exact,
        r.asm_up_to_ignored,
        if r.ignored_bits.is_empty() { String::new() } else { format!(" ({:?})", r.ignored_bits) },
        r.asm_ambiguous,
        r.asm_ambiguous_first,
        r.asm_mismatch
    );
    for (a, (with, page_only)) in &r.identical_by_arch {
        println!("  {a}: {with} byte-identical with the stored conventions ({page_only} from the pages alone)");
    }
    for (k, n) in &r.by_variant {
        println!("  {k:<22} {n:>5} words");
    }
    for e in r.disagreeing.iter().take(8) {
        println!("  differs: {}  ours '{}'  nvdisasm '{}'  [{}]", e.word, e.ours, e.nvdisasm, e.kernel);
    }
    let json = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
    let path = out.write("realcode.json", json.as_bytes()).map_err(|e| e.to_string())?;
    println!("wrote {}", path.display());
    if r.asm_mismatch > 0 {
        return Err(format!("{} agreeing words did not assemble back", r.asm_mismatch).into());
    }
    Ok(())
}

/// Learns every variant's conventions; writes them beside the pages, or compares.
pub fn conventions(s: &Spec, check: bool) -> Result {
    let nv = nvdisasm()?;
    let c = Codec::new(s);
    let vis: Vec<usize> = (0..c.variants().len()).collect();
    let conv = crate::oracle::learn::learn(&nv, &c, &vis).map_err(|e| e.to_string())?;
    if check {
        let diffs = crate::oracle::learn::differences(&c, &conv);
        for d in &diffs {
            println!("{d}");
        }
        println!("{} of {} forms differ from nvdisasm {}", diffs.len(), vis.len(), nv.version);
        return if diffs.is_empty() { Ok(()) } else { Err(format!("{} form(s) whose stored conventions nvdisasm contradicts", diffs.len()).into()) };
    }
    let tool = format!("nvdisasm {}", nv.version_number.clone().unwrap_or_else(|| nv.version.clone()));
    for (dir, f) in crate::oracle::learn::files(&c, &conv, &tool).map_err(|e| e.to_string())? {
        let path = dir.join(spec::conventions::FILE_NAME);
        crate::output::write_atomic(&path, f.to_text().as_bytes()).map_err(|e| e.to_string())?;
        println!("wrote {} ({} forms, {} control tables)", path.display(), f.forms.len(), f.controls.len());
    }
    Ok(())
}

/// `repeat` pairs of runs, nvdisasm alone then the validation, on the same words: each
/// pair's lines, then with more than one the medians and ranges of the two ratios (this
/// machine's nvdisasm CPU for the same words varies by a quarter between runs).
pub fn bench(s: &Spec, words: usize, repeat: usize) -> Result {
    // Every run timed is a run of nvdisasm, never a kept reply.
    let nv = Nvdisasm { cache: None, ..nvdisasm()? };
    let c = Codec::new(s);
    // The same words both ways: the validator's probes (structured and seeded random).
    let per = (words / c.variants().len()).max(1);
    let opts = validate::Options { random_per_variant: per, seed: 99, timings: true, ..Default::default() };
    // The baseline holds every probe word at once, not a slice at a time.
    let need = (per as u64).saturating_mul(c.variants().len() as u64).saturating_mul(validate::BYTES_PER_PROBE);
    crate::budget::Budget::from_env()?.check(&format!("bench --words {words}"), need, "lower --words or raise the budget")?;
    let vis: Vec<usize> = (0..c.variants().len()).collect();
    let conv = crate::oracle::learn::learn(&nv, &c, &vis).map_err(|e| e.to_string())?;
    let batches = validate::probe_words(s, &c, &conv, &opts);
    let mut ratios: Vec<(f64, Option<f64>)> = vec![];
    for _ in 0..repeat.max(1) {
        ratios.push(bench_pair(s, &c, &nv, &opts, &batches)?);
    }
    if ratios.len() > 1 {
        let wall: Vec<f64> = ratios.iter().map(|r| r.0).collect();
        println!("ratio over {} pairs: median {}", ratios.len(), median_range(wall));
        let cpu: Vec<f64> = ratios.iter().filter_map(|r| r.1).collect();
        if !cpu.is_empty() {
            println!("CPU ratio over {} pairs: median {}", cpu.len(), median_range(cpu));
        }
    }
    Ok(())
}

/// One pair: nvdisasm alone on exactly the words the validator sends first (per
/// architecture, the random words in `jobs` runs, the structured ones in one batch),
/// then the whole validation; their lines printed, and the (wall, CPU) ratios.
fn bench_pair(
    s: &Spec,
    c: &Codec,
    nv: &crate::oracle::nvdisasm::Nvdisasm,
    opts: &validate::Options,
    batches: &[(String, Vec<Word>, Vec<Word>)],
) -> Result<(f64, Option<f64>)> {
    let t0 = Usage::now();
    let alone_words = validate::disassemble_only(nv, batches).map_err(|e| e.to_string())?;
    let alone = t0.since();
    // The whole validation: the same nvdisasm work plus comparing, attributing,
    // minimizing (more nvdisasm runs) and merging.
    eprintln!("validation phases (per architecture, from its start):");
    let t1 = Usage::now();
    let mut checked = 0;
    validate::validate_pages(s, c, nv, opts, |_, sums, _| checked += sums.iter().map(|x| x.words).sum::<usize>()).map_err(|e| e.to_string())?;
    let harness = t1.since();
    if checked != alone_words {
        return Err(format!("internal: validation checked {checked} words, the baseline disassembled {alone_words}").into());
    }
    println!("words: {checked} on {} cores (nvdisasm {})", nv.jobs, nv.version);
    println!("nvdisasm alone:   {:.2} s ({:.0} words/s); {}", alone.wall, checked as f64 / alone.wall, alone.cpu_line());
    println!("harness validate: {:.2} s ({:.0} words/s); {}", harness.wall, checked as f64 / harness.wall, harness.cpu_line());
    let ratio = alone.wall / harness.wall;
    println!("ratio (harness throughput / nvdisasm throughput): {ratio:.2}");
    let cpu_ratio = alone.cpu().zip(harness.cpu()).map(|(a, h)| (a.0 + a.1) / (h.0 + h.1));
    if let Some(r) = cpu_ratio {
        // What a machine with cores to spare cannot hide: all CPU spent, both ways.
        println!("CPU ratio (nvdisasm-alone CPU / validation CPU, ours and nvdisasm's): {r:.2}");
    }
    Ok((ratio, cpu_ratio))
}

/// `0.88 (0.74–1.04)`: the median (the lower middle one of an even count) and the range.
fn median_range(mut xs: Vec<f64>) -> String {
    xs.sort_by(f64::total_cmp);
    match (xs.first(), xs.get((xs.len().saturating_sub(1)) / 2), xs.last()) {
        (Some(lo), Some(mid), Some(hi)) => format!("{mid:.2} ({lo:.2}–{hi:.2})"),
        _ => "none".to_string(),
    }
}

/// Wall time, CPU time (this process; its finished children, nvdisasm) and nvdisasm
/// processes started, at one moment: the benchmark's clocks. A shared machine's wall
/// clock depends on the others' load; CPU seconds much less.
struct Usage {
    wall: Instant,
    cpu: Option<(f64, f64)>,
    runs: usize,
    sent: usize,
}

/// What a [`Usage`] measured between two moments.
struct Spent {
    wall: f64,
    cpu: Option<(f64, f64)>,
    runs: usize,
    sent: usize,
}

impl Usage {
    fn now() -> Usage {
        crate::oracle::server::stop_idle();
        Usage { wall: Instant::now(), cpu: cpu_seconds(), runs: crate::oracle::nvdisasm::processes_started(), sent: crate::oracle::nvdisasm::words_sent() }
    }

    fn since(&self) -> Spent {
        // Their CPU counts once they have been waited for.
        crate::oracle::server::stop_idle();
        let cpu = self.cpu.zip(cpu_seconds()).map(|(a, b)| (b.0 - a.0, b.1 - a.1));
        Spent {
            wall: self.wall.elapsed().as_secs_f64(),
            cpu,
            runs: crate::oracle::nvdisasm::processes_started() - self.runs,
            sent: crate::oracle::nvdisasm::words_sent() - self.sent,
        }
    }
}

impl Spent {
    fn cpu(&self) -> Option<(f64, f64)> {
        self.cpu
    }

    fn cpu_line(&self) -> String {
        let cpu = self.cpu.map(|(own, nv)| format!("CPU: harness {own:.2} s, nvdisasm {nv:.2} s; ")).unwrap_or_default();
        format!("{cpu}{} nvdisasm runs of {} words", self.runs, self.sent)
    }
}

/// CPU seconds (user and system) so far of this process and of its children waited for
/// (every nvdisasm run is), where the platform tells.
#[cfg(unix)]
fn cpu_seconds() -> Option<(f64, f64)> {
    let of = |who| {
        // SAFETY: getrusage only writes the struct it is given; all-zero is a valid rusage.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        (unsafe { libc::getrusage(who, &mut u) } == 0).then(|| t(u.ru_utime) + t(u.ru_stime))
    };
    Some((of(libc::RUSAGE_SELF)?, of(libc::RUSAGE_CHILDREN)?))
}

#[cfg(not(unix))]
fn cpu_seconds() -> Option<(f64, f64)> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_range_takes_the_lower_middle_and_the_extremes() {
        assert_eq!(super::median_range(vec![0.9, 0.7, 1.1]), "0.90 (0.70–1.10)");
        assert_eq!(super::median_range(vec![0.8, 0.6, 1.0, 0.9]), "0.80 (0.60–1.00)");
        assert_eq!(super::median_range(vec![]), "none");
    }
}
