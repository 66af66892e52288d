//! A whole validation into an output folder, as the `validate`, `run` and `fix` commands
//! do it (here, above both `validate` and `report`, so that neither calls the other): the
//! pages validated and streamed to `findings.jsonl` and `progress.jsonl` page by page (an
//! interrupted run keeps what it finished, see [`crate::validate::resume`]), the findings
//! read back once every page is done (they are not held while pages are validated) and put
//! in corpus order, every finding's word disassembled again (the self-check, see
//! [`crate::validate::reproduce`]), the reports staged and put in place, a summary printed.

use crate::codec::Codec;
use crate::oracle::nvdisasm::Nvdisasm;
use crate::output::OutputDir;
use crate::spec::{Arch, Spec};
use crate::validate::finding::{Finding, Severity, VariantSummary};
use crate::validate::reproduce::{self, Mismatch};
use crate::validate::resume::{self, PageDone, Previous};
use crate::validate::Options;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Why a validation into a folder stopped (or, for [`RunError::NotReproduced`], failed
/// its self-check after the reports were written).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    #[error(transparent)]
    Nvdisasm(#[from] crate::oracle::nvdisasm::NvdisasmError),
    #[error(transparent)]
    Resume(#[from] resume::ResumeError),
    #[error("{path}: {err}")]
    Write { path: PathBuf, err: std::io::Error },
    #[error("{path}: {err}")]
    Record { path: PathBuf, err: serde_json::Error },
    #[error("{mismatched} of {findings} findings did not reproduce on a second nvdisasm run")]
    NotReproduced { mismatched: usize, findings: usize },
}

/// The marker that says a run is unfinished; removed once the reports are in place.
pub const INCOMPLETE: &str = crate::output::INCOMPLETE;

/// Validates `spec` into `out` (keeping what `previous`, an interrupted run in the same
/// folder, finished) and returns every variant's summary and every finding, in corpus
/// order. `opts.skip_pages` is set from `previous`. An error when a finding's word does
/// not print its `actual` again (after the reports are written).
pub fn validate_into(spec: &Spec, out: &OutputDir, nv: &Nvdisasm, opts: &Options, previous: Previous) -> Result<(Vec<VariantSummary>, Vec<Finding>), RunError> {
    let started = Instant::now();
    let opts = Options { skip_pages: previous.done(), ..opts.clone() };
    // Refused before the folder is touched: a request too large to hold never starts.
    crate::validate::check_budget(spec, &opts)?;
    let mut run = Run::start(spec, out, nv, previous)?;
    run.validate(&opts)?;
    run.findings = resume::read_all(&run.findings_file.path)?;
    run.order();
    // Check our own output: every finding's word, in a fresh batch, prints `actual` again.
    let mismatches = reproduce::reproduce(nv, &run.findings)?;
    let written = out.stage(|dir| crate::report::write_reports(dir, spec, &run.summaries, &run.findings, &nv.version))?;
    run.print(started, &mismatches, &written);
    run.complete(&mismatches)?;
    Ok((run.summaries, run.findings))
}

/// A JSON-lines file being written.
struct Stream {
    file: std::fs::File,
    path: PathBuf,
}

impl Stream {
    fn create(out: &OutputDir, name: &str) -> Result<Stream, RunError> {
        let (file, path) = out.create(name)?;
        Ok(Stream { file, path })
    }

    /// Writes the items as lines in one write, flushed: a kill between two calls never
    /// leaves half a line (and `--resume` drops what an unfinished page left).
    fn write<'t, T: Serialize + 't>(&mut self, items: impl IntoIterator<Item = &'t T>) -> Result<(), RunError> {
        let mut lines = String::new();
        for item in items {
            lines += &serde_json::to_string(item).map_err(|err| RunError::Record { path: self.path.clone(), err })?;
            lines.push('\n');
        }
        self.file.write_all(lines.as_bytes()).and_then(|_| self.file.flush()).map_err(|err| RunError::Write { path: self.path.clone(), err })
    }
}

/// A run in progress: the folder, its streams, and what the pages gave so far.
struct Run<'a> {
    spec: &'a Spec,
    codec: Codec<'a>,
    nv: &'a Nvdisasm,
    out: &'a OutputDir,
    findings_file: Stream,
    progress_file: Stream,
    /// Pages finished before this run (`--resume`).
    resumed: usize,
    summaries: Vec<VariantSummary>,
    /// Empty until every page is done: then `findings.jsonl` read back.
    findings: Vec<Finding>,
}

impl<'a> Run<'a> {
    /// Marks the folder incomplete and starts both streams with what `previous` finished.
    fn start(spec: &'a Spec, out: &'a OutputDir, nv: &'a Nvdisasm, previous: Previous) -> Result<Run<'a>, RunError> {
        // Until the reports are in place, the folder says the run is incomplete.
        out.write(INCOMPLETE, b"a validation is running or was interrupted; rerun with --resume\n")?;
        let mut findings_file = Stream::create(out, resume::FINDINGS)?;
        let mut progress_file = Stream::create(out, resume::PROGRESS)?;
        findings_file.write(&previous.findings)?;
        progress_file.write(&previous.pages)?;
        if !previous.pages.is_empty() {
            println!("resuming: {} page(s) done before, {} finding(s) kept", previous.pages.len(), previous.findings.len());
        }
        let summaries = previous.pages.iter().flat_map(|p| p.summaries.iter().cloned()).collect();
        let resumed = previous.pages.len();
        let codec = Codec::new(spec);
        Ok(Run { spec, codec, nv, out, findings_file, progress_file, resumed, summaries, findings: vec![] })
    }

    /// Validates the pages not done yet, each page's findings, then the page, on disk as
    /// soon as it is done (the findings only there: at 1 000 pages they are some 100 MB).
    fn validate(&mut self, opts: &Options) -> Result<(), RunError> {
        let bar = indicatif::ProgressBar::new(self.spec.pages.len() as u64);
        bar.set_style(indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} pages  {msg}").unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
        bar.inc(self.resumed as u64);
        let mut err = None;
        let Run { spec, codec, nv, findings_file, progress_file, summaries, .. } = self;
        let run = crate::validate::validate_pages(spec, codec, nv, opts, |p, sums, finds| {
            bar.set_message(format!("{} {} done", p.instruction, p.arch));
            let done = PageDone { page: p.file.clone(), summaries: sums };
            if let Err(e) = findings_file.write(&finds).and_then(|_| progress_file.write([&done])) {
                err.get_or_insert(e);
            }
            summaries.extend(done.summaries);
            bar.inc(1);
        });
        bar.finish_and_clear();
        run?;
        err.map_or(Ok(()), Err)
    }

    /// Pages finish in any order; reports list them in corpus order.
    fn order(&mut self) {
        let index: HashMap<(Arch, &str), usize> = self.codec.variants().iter().enumerate().map(|(i, v)| ((v.arch, v.key.as_str()), i)).collect();
        let order = |arch: Arch, key: &str| index.get(&(arch, key)).copied();
        self.summaries.sort_by_cached_key(|x| order(x.arch, &x.variant));
        self.findings.sort_by_cached_key(|f| order(f.arch, &f.variant));
    }

    /// The summary on stdout: totals, a line per variant, the self-check, the files.
    fn print(&self, started: Instant, mismatches: &[Mismatch], written: &[PathBuf]) {
        let mut by_variant: HashMap<(Arch, &str), [usize; 3]> = HashMap::new();
        let mut total = [0usize; 3];
        for f in &self.findings {
            by_variant.entry((f.arch, f.variant.as_str())).or_default()[f.severity as usize] += 1;
            total[f.severity as usize] += 1;
        }
        let words: usize = self.summaries.iter().map(|x| x.words).sum();
        let agree: usize = self.summaries.iter().map(|x| x.agreeing).sum();
        let (n, time) = (self.findings.len(), started.elapsed().as_secs_f64());
        let (variants, version) = (self.summaries.len(), &self.nv.version);
        println!("validated {variants} variants: {words} words, {agree} agreeing, {n} findings ({}) in {time:.1} s (nvdisasm {version})", severities(total));
        println!("{:<22} {:>6} {:>8} {:>9}  findings by severity; by class", "variant", "arch", "words", "agreeing");
        for x in &self.summaries {
            let by: Vec<String> = x.findings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let sev = severities(by_variant.get(&(x.arch, x.variant.as_str())).copied().unwrap_or_default());
            println!("{:<22} {:>6} {:>8} {:>9}  {sev}; {}", x.variant, x.arch.to_string(), x.words, x.agreeing, by.join(" "));
        }
        println!("re-ran nvdisasm on the {n} finding words: {} reproduce", n - mismatches.len());
        println!("wrote {}", self.findings_file.path.display());
        for w in written {
            println!("wrote {}", w.display());
        }
    }

    /// The reports are in place: the run is complete, and fails if its self-check did.
    fn complete(&self, mismatches: &[Mismatch]) -> Result<(), RunError> {
        let marker = self.out.path().join(INCOMPLETE);
        std::fs::remove_file(&marker).map_err(|err| RunError::Write { path: marker.clone(), err })?;
        if mismatches.is_empty() {
            return Ok(());
        }
        for m in mismatches.iter().take(10) {
            let f = &self.findings[m.index];
            eprintln!("not reproduced: {} {} word {}: reported '{}', now '{}'", f.arch, f.variant, f.word, f.actual, m.got);
        }
        Err(RunError::NotReproduced { mismatched: mismatches.len(), findings: self.findings.len() })
    }
}

/// `3 error(s), 0 warning(s), 12 note(s)` from counts indexed by [`Severity`].
fn severities(n: [usize; 3]) -> String {
    let [e, w, o] = [Severity::Error, Severity::Warning, Severity::Note].map(|s| n[s as usize]);
    format!("{e} error(s), {w} warning(s), {o} note(s)")
}
