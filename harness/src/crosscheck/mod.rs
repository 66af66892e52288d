//! `crosscheck`: libFuzzer corpora and crash artifacts replayed against nvdisasm.
//!
//! Each input file is mapped to the words its fuzz target builds ([`crate::fuzz::words`]),
//! duplicates dropped, and the words sent to nvdisasm in the large batches `validate`
//! uses, a slice at a time (memory stays bounded however large the corpus). Each word must
//! print byte-identical to the spec's offline print with its stored conventions, or be
//! rejected where the spec says so ([`judge()`]); everything else is a finding in the
//! validate format. A disagreeing word of a form is minimized ([`minimize`]) and written
//! as a `roundtrip` regression seed under `OUT/seeds/roundtrip/`.

pub mod cli;
pub mod explain;
pub mod inputs;
pub mod judge;
pub mod minimize;

use crate::budget::{human, Budget};
use crate::codec::Codec;
use crate::fuzz::{self, Target};
use crate::oracle::exec::PlanSummary;
use crate::oracle::nvdisasm::Nvdisasm;
use crate::output::OutputDir;
use crate::spec::{Arch, Spec};
use crate::validate::finding::{BitStatus, Class, Finding, Severity, VariantSummary};
use crate::word::Word;
use explain::{explain, Explanation};
use inputs::{Item, Skipped, Walker};
use judge::{expect, form_of, judge, Disagreement, Expect};
use minimize::Candidate;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Words judged per slice: several nvdisasm processes' worth (see
/// [`crate::oracle::nvdisasm::MAX_CHUNK`]), so batches stay large.
pub const SLICE_WORDS: usize = 1 << 17;
/// Memory a word of a slice holds at its peak: the word, the spec's text, nvdisasm's
/// listing line and outcome, the judging.
pub const BYTES_PER_WORD: u64 = 600;
/// Memory a word costs in the set that drops duplicates.
pub const SEEN_BYTES_PER_WORD: u64 = 64;
/// Skipped-input lines kept for the summary; the rest are counted.
pub const MAX_SKIPPED_LINES: usize = 1000;
/// The marker of an unfinished run, as `validate` leaves it.
pub const INCOMPLETE: &str = crate::output::INCOMPLETE;
/// Where regression seeds go under the output folder (then the target's name).
pub const SEEDS_DIR: &str = "seeds";

#[derive(Clone, Debug)]
pub struct Options {
    /// Corpus folders or files.
    pub inputs: Vec<PathBuf>,
    /// Every input's target, instead of its folder's name.
    pub target: Option<Target>,
    pub minimize_rounds: usize,
    /// Words per slice (lowered to fit the memory budget).
    pub slice_words: usize,
    /// Also time nvdisasm alone on each slice's words (twice the nvdisasm work).
    pub bench: bool,
    /// Keep the unique words for [`execute`].
    pub keep_words: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { inputs: vec![], target: None, minimize_rounds: 8, slice_words: SLICE_WORDS, bench: false, keep_words: false }
    }
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub inputs: usize,
    pub skipped: Vec<Skipped>,
    /// Skipped lines past [`MAX_SKIPPED_LINES`].
    pub skipped_more: usize,
    /// Words the inputs built, and how many were new.
    pub words: usize,
    pub unique: usize,
    /// Unique words no form of the spec decodes.
    pub no_form: usize,
    pub agreeing: usize,
    pub findings: Vec<Finding>,
    /// Findings (not notes) a documented limitation of the pages explains
    /// ([`explain::explain`]); each says why in its `proposal`.
    pub explained: usize,
    pub seeds: Vec<PathBuf>,
    pub seconds: f64,
    /// Judging the slices: nvdisasm plus the spec's side, from words to verdicts.
    pub replay_seconds: f64,
    /// nvdisasm alone on the same batches (`bench`).
    pub alone_seconds: Option<f64>,
    pub minimized: minimize::Stats,
    /// Times the duplicate set was full and started again (duplicates across that point
    /// are judged twice).
    pub seen_resets: usize,
    /// The unique words, when [`Options::keep_words`].
    pub kept: Vec<(Arch, Word)>,
    pub files: Vec<PathBuf>,
}

impl Summary {
    /// Words per second of the replay, and the ratio to nvdisasm alone.
    pub fn throughput(&self) -> (f64, Option<f64>) {
        let judged = self.unique as f64;
        (judged / self.replay_seconds.max(1e-9), self.alone_seconds.map(|a| a / self.replay_seconds.max(1e-9)))
    }

    /// Findings that are not notes and that no documented limitation explains.
    pub fn unexplained(&self) -> usize {
        self.findings.iter().filter(|f| f.severity != Severity::Note).count() - self.explained
    }
}

/// A word waiting for its slice.
struct Pending {
    arch: Arch,
    word: Word,
    built_as: Option<usize>,
    target: Target,
}

/// Findings that say the same thing: architecture, form, and the disagreement's
/// [`Disagreement::signature`].
type Key = (Arch, String, (Class, String));

struct Entry {
    finding: Finding,
    cand: Option<Candidate>,
    target: Target,
    /// What explains every word of the finding so far (none: some word is unexplained).
    explained: Option<Explanation>,
}

/// A run in progress.
struct Run<'a> {
    codec: Codec<'a>,
    nv: &'a Nvdisasm,
    opts: &'a Options,
    stream: std::fs::File,
    stream_path: PathBuf,
    seen: HashSet<(Arch, Word)>,
    seen_cap: usize,
    pending: Vec<Pending>,
    tallies: HashMap<usize, (usize, usize)>,
    entries: BTreeMap<Key, Entry>,
    summary: Summary,
}

/// Why a crosscheck stopped.
#[derive(Debug, thiserror::Error)]
pub enum CrosscheckError {
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    #[error(transparent)]
    Nvdisasm(#[from] crate::oracle::nvdisasm::NvdisasmError),
    #[error(transparent)]
    Gpu(#[from] crate::oracle::gpu::GpuError),
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{path}: {err}")]
    Record { path: PathBuf, err: serde_json::Error },
    #[error("internal: the nvdisasm thread panicked")]
    Panicked,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CrosscheckError + '_ {
    move |err| CrosscheckError::Io { path: path.to_path_buf(), err }
}

/// Replays `opts.inputs` against nvdisasm with `spec` (the spec the fuzz targets used:
/// a `roundtrip` input names its variant by index) into `out`.
pub fn run(spec: &Spec, nv: &Nvdisasm, out: &OutputDir, opts: &Options) -> Result<Summary, CrosscheckError> {
    let started = Instant::now();
    let budget = Budget::from_env()?;
    let slice_words = fit_slice(&budget, opts.slice_words)?;
    let seen_cap = ((budget.bytes / 2) / SEEN_BYTES_PER_WORD) as usize;
    out.write(INCOMPLETE, b"a crosscheck is running or was interrupted; run it again\n")?;
    let (stream, stream_path) = out.create("findings.jsonl")?;
    let opts = Options { slice_words, ..opts.clone() };
    let mut run = Run {
        codec: Codec::new(spec),
        nv,
        opts: &opts,
        stream,
        stream_path,
        seen: HashSet::new(),
        seen_cap,
        pending: vec![],
        tallies: HashMap::new(),
        entries: BTreeMap::new(),
        summary: Summary::default(),
    };
    run.replay()?;
    run.minimize()?;
    run.write_seeds(out.path())?;
    let mut summary = run.finish(spec, out)?;
    summary.seconds = started.elapsed().as_secs_f64();
    let marker = out.path().join(INCOMPLETE);
    std::fs::remove_file(&marker).map_err(io_error(&marker))?;
    Ok(summary)
}

/// The slice size the budget allows: at most `want` words, half the budget; an error when
/// not even a small slice fits.
fn fit_slice(budget: &Budget, want: usize) -> Result<usize, CrosscheckError> {
    let fits = (budget.bytes / 2 / BYTES_PER_WORD) as usize;
    const SMALLEST: usize = 4096;
    if fits < SMALLEST {
        budget.check("crosscheck", SMALLEST as u64 * BYTES_PER_WORD * 2, "raise the budget")?;
    }
    Ok(want.min(fits).max(1))
}

impl Run<'_> {
    /// Reads every input, judging a slice whenever one is full.
    fn replay(&mut self) -> Result<(), CrosscheckError> {
        for item in Walker::new(&self.opts.inputs, self.opts.target) {
            match item {
                Item::Skipped(s) => self.skip(s),
                Item::Input(input) => {
                    self.summary.inputs += 1;
                    for n in inputs::notes(&input) {
                        self.skip(n);
                    }
                    for g in fuzz::words(input.target, &self.codec, &input.bytes) {
                        self.add(g.arch, g.word, g.variant, input.target);
                    }
                    if self.pending.len() >= self.opts.slice_words {
                        self.judge_slice()?;
                    }
                }
            }
        }
        self.judge_slice()
    }

    fn skip(&mut self, s: Skipped) {
        if self.summary.skipped.len() < MAX_SKIPPED_LINES {
            self.summary.skipped.push(s);
        } else {
            self.summary.skipped_more += 1;
        }
    }

    fn add(&mut self, arch: Arch, word: Word, built_as: Option<usize>, target: Target) {
        self.summary.words += 1;
        if self.seen.len() >= self.seen_cap {
            self.seen.clear();
            self.summary.seen_resets += 1;
        }
        if !self.seen.insert((arch, word)) {
            return;
        }
        self.summary.unique += 1;
        // Bounded like the duplicate set: past it, words are counted, not kept.
        if self.opts.keep_words && self.summary.kept.len() < self.seen_cap {
            self.summary.kept.push((arch, word));
        }
        self.pending.push(Pending { arch, word, built_as, target });
    }

    /// Judges the pending words: per architecture one nvdisasm call (chunked over the
    /// cores), the spec's side computed while nvdisasm runs.
    fn judge_slice(&mut self) -> Result<(), CrosscheckError> {
        let pending = std::mem::take(&mut self.pending);
        let mut by_arch: BTreeMap<Arch, Vec<usize>> = BTreeMap::new();
        for (i, p) in pending.iter().enumerate() {
            by_arch.entry(p.arch).or_default().push(i);
        }
        let mut touched: HashSet<Key> = HashSet::new();
        for (arch, idx) in by_arch {
            let words: Vec<Word> = idx.iter().map(|&i| pending[i].word).collect();
            let name = arch.nvdisasm_name();
            if self.opts.bench {
                let t = Instant::now();
                self.nv.disassemble(&name, &words)?;
                *self.summary.alone_seconds.get_or_insert(0.0) += t.elapsed().as_secs_f64();
            }
            let t = Instant::now();
            let (outs, spec_side) = std::thread::scope(|s| {
                let nv = s.spawn(|| self.nv.disassemble(&name, &words));
                let side: Vec<(Option<usize>, Option<Expect>)> = idx
                    .iter()
                    .map(|&i| {
                        let p = &pending[i];
                        let vi = form_of(&self.codec, arch, p.word, p.built_as);
                        (vi, vi.map(|vi| expect(&self.codec, vi, p.word)))
                    })
                    .collect();
                (nv.join(), side)
            });
            let outs = outs.map_err(|_| CrosscheckError::Panicked)??;
            for (k, ((&i, o), (vi, exp))) in idx.iter().zip(&outs).zip(&spec_side).enumerate() {
                let p = &pending[i];
                let d = judge(&self.codec, *vi, p.word, 16 * k as u64, exp.as_ref(), o);
                self.tally(*vi, d.is_none());
                if let Some(d) = d {
                    touched.insert(self.record(p, *vi, d));
                }
            }
            self.summary.replay_seconds += t.elapsed().as_secs_f64();
        }
        self.stream_touched(&touched)
    }

    fn tally(&mut self, vi: Option<usize>, agrees: bool) {
        match vi {
            Some(vi) => {
                let t = self.tallies.entry(vi).or_default();
                t.0 += 1;
                t.1 += agrees as usize;
            }
            None => self.summary.no_form += 1,
        }
        self.summary.agreeing += agrees as usize;
    }

    /// Merges a disagreement into its finding; the smallest word stands for it (the same
    /// one whatever order the corpus is read in).
    fn record(&mut self, p: &Pending, vi: Option<usize>, d: Disagreement) -> Key {
        let form = vi.map(|vi| self.codec.variant(vi).key.clone()).unwrap_or_else(|| NO_FORM.to_string());
        let key: Key = (p.arch, form, d.signature());
        let cand = vi.map(|vi| Candidate { arch: p.arch, vi, word: p.word, disagreement: d.clone() });
        let explained = explain(&self.codec, vi, p.word, &d);
        match self.entries.get_mut(&key) {
            Some(e) => {
                e.finding.add_occurrence(vec![]);
                if explained.is_none() {
                    e.explained = None;
                }
                if p.word.0 < e.finding.word().map_or(u128::MAX, |w| w.0) {
                    e.finding.word = p.word.hex();
                    e.finding.expected = d.expected;
                    e.finding.actual = d.actual;
                    e.cand = cand;
                    e.target = p.target;
                }
            }
            None => {
                let finding = new_finding(&self.codec, p, vi, &d, &self.nv.version);
                self.entries.insert(key.clone(), Entry { finding, cand, target: p.target, explained });
            }
        }
        key
    }

    /// The findings this slice touched, as they stand, onto `findings.jsonl` in one write
    /// (an interrupted run keeps what it found; the final file is written merged).
    fn stream_touched(&mut self, touched: &HashSet<Key>) -> Result<(), CrosscheckError> {
        let mut lines = String::new();
        for k in touched {
            if let Some(e) = self.entries.get(k) {
                lines += &serde_json::to_string(&e.finding).map_err(|err| CrosscheckError::Record { path: self.stream_path.clone(), err })?;
                lines.push('\n');
            }
        }
        self.stream.write_all(lines.as_bytes()).and_then(|_| self.stream.flush()).map_err(io_error(&self.stream_path))
    }

    /// Minimizes every finding's word that has a form, and puts the result in the finding.
    fn minimize(&mut self) -> Result<(), CrosscheckError> {
        let keys: Vec<Key> = self.entries.iter().filter(|(_, e)| e.cand.is_some()).map(|(k, _)| k.clone()).collect();
        let mut cands: Vec<Candidate> = keys.iter().filter_map(|k| self.entries[k].cand.clone()).collect();
        if cands.is_empty() {
            return Ok(());
        }
        self.summary.minimized = minimize::minimize(self.nv, &self.codec, &mut cands, self.opts.minimize_rounds)?;
        for (k, c) in keys.iter().zip(cands) {
            let Some(e) = self.entries.get_mut(k) else { continue };
            e.finding.word = c.word.hex();
            e.finding.expected = c.disagreement.expected.clone();
            e.finding.actual = c.disagreement.actual.clone();
            e.cand = Some(c);
        }
        Ok(())
    }

    /// Each minimized word as a `roundtrip` input under `OUT/seeds/roundtrip/`, named by
    /// its form and word (the same disagreement gives the same file).
    fn write_seeds(&mut self, out: &Path) -> Result<(), CrosscheckError> {
        let dir = out.join(SEEDS_DIR).join(Target::Roundtrip.name());
        for e in self.entries.values_mut() {
            let Some(c) = &e.cand else { continue };
            let v = self.codec.variant(c.vi);
            let input = fuzz::Input::from_values(&self.codec, c.vi, &self.codec.extract(c.vi, c.word));
            let name = seed_name(v.arch, &v.key, c.word);
            std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
            let path = dir.join(&name);
            crate::output::write_atomic(&path, &input.to_bytes(&self.codec))?;
            let from = if e.target == Target::Roundtrip { String::new() } else { format!(" (found by a {} input)", e.target) };
            let what = e.finding.proposal.take().unwrap_or_default();
            e.finding.proposal = Some(format!("{what}; minimized seed: {SEEDS_DIR}/roundtrip/{name}{from}"));
            self.summary.seeds.push(path);
        }
        Ok(())
    }

    /// The findings merged and ordered, `findings.jsonl` rewritten whole, the reports.
    fn finish(mut self, spec: &Spec, out: &OutputDir) -> Result<Summary, CrosscheckError> {
        let entries: Vec<Entry> = std::mem::take(&mut self.entries).into_values().collect();
        self.summary.explained = entries.iter().filter(|e| e.explained.is_some() && e.finding.severity != Severity::Note).count();
        let mut findings: Vec<Finding> = entries.into_iter().map(|e| with_explanation(e.finding, e.explained)).collect();
        let order: HashMap<(Arch, &str), usize> = self.codec.variants().iter().enumerate().map(|(i, v)| ((v.arch, v.key.as_str()), i)).collect();
        findings.sort_by_key(|f| (order.get(&(f.arch, f.variant.as_str())).copied().unwrap_or(usize::MAX), f.severity, f.class));
        let summaries = self.summaries(&findings);
        let mut jsonl = String::new();
        for f in &findings {
            jsonl += &serde_json::to_string(f).map_err(|err| CrosscheckError::Record { path: self.stream_path.clone(), err })?;
            jsonl.push('\n');
        }
        drop(self.stream);
        let mut files = vec![out.write("findings.jsonl", jsonl.as_bytes())?];
        let touched = touched_spec(spec, &summaries);
        self.summary.findings = findings;
        let section = summary_section(&self.summary);
        let version = self.nv.version.clone();
        let written = out.stage(|dir| -> std::io::Result<Vec<PathBuf>> {
            let w = crate::report::write_reports(dir, &touched, &summaries, &self.summary.findings, &version)?;
            let md = dir.join("summary.md");
            let text = std::fs::read_to_string(&md)?.replacen("# SASS encoding validation", "# SASS crosscheck of fuzz corpora", 1);
            std::fs::write(&md, text + &section)?;
            Ok(w)
        })?;
        files.extend(written);
        self.summary.files = files;
        Ok(self.summary)
    }

    /// A summary per form that saw a word.
    fn summaries(&self, findings: &[Finding]) -> Vec<VariantSummary> {
        let mut vis: Vec<usize> = self.tallies.keys().copied().collect();
        vis.sort_unstable();
        vis.into_iter()
            .map(|vi| {
                let v = self.codec.variant(vi);
                let (words, agreeing) = self.tallies[&vi];
                let mine: Vec<&Finding> = findings.iter().filter(|f| f.arch == v.arch && f.variant == v.key).collect();
                let mut by_class: BTreeMap<String, usize> = BTreeMap::new();
                let mut bit_status = vec![BitStatus::Unconfirmed; 128];
                for f in &mine {
                    *by_class.entry(f.class.name().to_string()).or_default() += 1;
                    for &b in &f.bits {
                        bit_status[b as usize] = BitStatus::Disputed;
                    }
                }
                VariantSummary { arch: v.arch, variant: v.key.clone(), page: v.file.clone(), words, agreeing, findings: by_class, bit_status }
            })
            .collect()
    }
}

/// The `variant` of a finding for a word no form decodes.
pub const NO_FORM: &str = "(no form)";

/// A seed's file name: `xcheck-sm90-DFMA_R_R_R_R-<word>`.
pub fn seed_name(arch: Arch, key: &str, word: Word) -> String {
    let key: String = key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
    format!("xcheck-sm{}-{key}-{}", arch.0, word.hex())
}

fn new_finding(codec: &Codec, p: &Pending, vi: Option<usize>, d: &Disagreement, tool: &str) -> Finding {
    let v = vi.map(|vi| codec.variant(vi));
    let field = d.field.and_then(|fi| v.map(|v| &v.fields[fi]));
    let proposal = match d.class {
        Class::Unexpressible => "nvdisasm prints a word no form of the spec decodes: the spec lacks this form",
        Class::Legality => "the spec and nvdisasm disagree on whether the word is legal",
        Class::Syntax => "same instruction, spelled differently from the offline print",
        _ => "the spec's offline print differs from nvdisasm",
    };
    Finding {
        arch: p.arch,
        variant: v.map(|v| v.key.clone()).unwrap_or_else(|| NO_FORM.to_string()),
        class: d.class,
        severity: d.severity,
        page: v.map(|v| v.file.clone()).unwrap_or_default(),
        line: field.map(|f| f.line).or(v.map(|v| v.line)).unwrap_or(0),
        field: field.map(|f| f.name.clone()),
        bits: field.map(|f| f.bits.clone()).unwrap_or_default(),
        word: p.word.hex(),
        expected: d.expected.clone(),
        actual: d.actual.clone(),
        proposal: Some(format!("{proposal} ({})", d.elements.join(", "))),
        correction: None,
        occurrences: 1,
        tool: tool.to_string(),
    }
}

/// The finding with its explanation, if any, at the head of its `proposal`.
fn with_explanation(mut f: Finding, e: Option<Explanation>) -> Finding {
    if let Some(e) = e {
        f.proposal = Some(format!("{e}; {}", f.proposal.unwrap_or_default()));
    }
    f
}

/// Does a finding read back from `findings.jsonl` carry an explanation (its proposal
/// starts `explained: `)?
pub fn is_explained(f: &Finding) -> bool {
    f.severity != Severity::Note && f.proposal.as_deref().is_some_and(|p| p.starts_with(explain::EXPLAINED))
}

/// The spec's pages that have a summary (the reports' HTML covers those alone).
fn touched_spec(spec: &Spec, summaries: &[VariantSummary]) -> Spec {
    let files: HashSet<&str> = summaries.iter().map(|s| s.page.as_str()).collect();
    Spec { pages: spec.pages.iter().filter(|p| files.contains(p.file.as_str())).cloned().collect() }
}

/// The crosscheck's own section of `summary.md`: inputs, throughput, skipped inputs, seeds.
fn summary_section(s: &Summary) -> String {
    let mut md = String::from("\n## Crosscheck\n\n");
    let (rate, ratio) = s.throughput();
    md += &format!("- inputs: {} replayed, {} skipped or noted\n", s.inputs, s.skipped.len() + s.skipped_more);
    md += &format!("- words: {} built, {} unique ({} with no form in the spec), {} agreeing with nvdisasm\n", s.words, s.unique, s.no_form, s.agreeing);
    let notes = s.findings.len() - s.unexplained() - s.explained;
    md += &format!("- findings: {} ({} notes, {} explained, {} unexplained)\n", s.findings.len(), notes, s.explained, s.unexplained());
    md += &format!("- replay: {:.2} s, {rate:.0} words/s", s.replay_seconds);
    if let (Some(a), Some(r)) = (s.alone_seconds, ratio) {
        md += &format!("; nvdisasm alone on the same batches {a:.2} s: ratio {r:.2}");
    }
    md += &format!("\n- minimization: {} nvdisasm batches, {} words\n", s.minimized.batches, s.minimized.words);
    if s.seen_resets > 0 {
        md += &format!("- the duplicate set filled {} time(s) and started again\n", s.seen_resets);
    }
    if !s.skipped.is_empty() {
        md += "\n### Inputs skipped or noted\n\n";
        for k in &s.skipped {
            md += &format!("- `{}`: {}\n", k.path.replace('`', "'"), k.why);
        }
        if s.skipped_more > 0 {
            md += &format!("- … and {} more\n", s.skipped_more);
        }
    }
    if !s.seeds.is_empty() {
        md += "\n### Regression seeds\n\n";
        for p in &s.seeds {
            md += &format!("- `{}`\n", p.display());
        }
    }
    md
}

/// Copies the seeds into the corpus folder `corpus` (`corpus/fuzz`), under their target's
/// folder; returns the files added (a seed already there is left alone).
pub fn add_seeds(seeds: &[PathBuf], corpus: &Path) -> Result<Vec<PathBuf>, CrosscheckError> {
    let dir = corpus.join(Target::Roundtrip.name());
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    let mut added = vec![];
    for s in seeds {
        let Some(name) = s.file_name() else { continue };
        let dest = dir.join(name);
        if dest.exists() {
            continue;
        }
        let bytes = std::fs::read(s).map_err(io_error(s))?;
        crate::output::write_atomic(&dest, &bytes)?;
        added.push(dest);
    }
    Ok(added)
}

/// Runs the replayed words on a GPU through the executor's planner
/// ([`crate::oracle::exec::plan_words`]): each word that a template holds, with the
/// relations that need no CPU model (ignored bits, operand forms, reruns) and the models
/// where there are. `dry_run` builds the plan (patched cubins proven in place by
/// nvdisasm) under `OUT/exec` and runs nothing; otherwise `time_limit` bounds the run.
pub fn execute(
    codec: &crate::codec::Codec,
    words: &[(Arch, Word)],
    out: &Path,
    dry_run: bool,
    time_limit: Option<u64>,
) -> Result<PlanSummary, CrosscheckError> {
    use crate::oracle::exec::{plan_words, PlanOptions, RunSettings};
    let run = (!dry_run).then(|| RunSettings {
        inputs: 10_240,
        timeout: std::time::Duration::from_secs(60),
        time_limit: time_limit.map(std::time::Duration::from_secs),
        fake: None,
        spec: vec![],
        exe: None,
    });
    Ok(plan_words(codec, words, &PlanOptions { out: out.join("exec"), slots: 64, seed: 0x5eed, run, nvdisasm: None })?)
}

/// `2.0 GiB` and the like, for messages about the budget.
pub fn budget_line() -> String {
    Budget::from_env().map(|b| format!("{} ({})", human(b.bytes), b.source)).unwrap_or_else(|e| e.to_string())
}
