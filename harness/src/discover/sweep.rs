//! A whole architecture: the census, every form solved by concurrent solvers that share
//! nvdisasm batches, one page per instruction.
//!
//! The output folder holds `census.json` (the forms and their seeds, written once),
//! `solved.jsonl` (one record per form of this shard, appended as each is solved, so a
//! rerun continues where an interrupted one stopped), `pages/` (one page per mnemonic,
//! rendered from the records) and `summary.md`. Records are rendered in opclass order, so
//! the output does not depend on thread timing, and `merge` of shard folders renders what
//! one run renders.

use super::batch::Batcher;
use super::census::{Census, Form, Scope};
use super::{discover, page, DiscoverError, Oracle, Source};
use crate::spec::Arch;
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// `i/n`: this run solves the forms whose index in opclass order is `i` modulo `n`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `i/n`: the `i`th of `n` shards.
    pub fn parse(s: &str) -> Result<Shard, SweepError> {
        let bad = || SweepError::Shard(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

pub struct Options {
    pub arch: Arch,
    pub out: PathBuf,
    pub shard: Shard,
    /// Solver threads (each holds one form at a time; they share nvdisasm batches).
    pub solvers: usize,
    /// Only forms whose mnemonic is in this list (all when empty).
    pub only: Vec<String>,
    /// The census's opcodes (all when empty).
    pub scope: Scope,
    /// Words known to be instructions (real code for this architecture), census seeds.
    pub seeds: Vec<Word>,
    /// Words of other architectures' forms, tried after the census's own rounds (see
    /// [`Census::run`]).
    pub borrowed: Vec<Word>,
    /// nvdisasm's version line, for the banner.
    pub tool: String,
}

/// The census as stored in `census.json`.
#[derive(Serialize, Deserialize)]
pub struct CensusFile {
    pub arch: u32,
    pub tool: String,
    pub words: usize,
    pub forms: Vec<FormRecord>,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct FormRecord {
    pub opclass: String,
    pub seed: String,
    pub text: String,
    /// More words of the form, tried in order when `seed` does not solve.
    #[serde(default)]
    pub alternates: Vec<String>,
    /// A word of the form from real code: the page's ignored bits take its values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<String>,
    /// A word met after the census's own rounds, tried after the alternates (see
    /// [`Form::late`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<String>,
}

/// One solved (or failed) form, a line of `solved.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub opclass: String,
    pub seed: String,
    pub text: String,
    /// The page's instruction name; empty when the form was not solved.
    pub mnemonic: String,
    pub key: String,
    /// The variant block in page format (with `key: <key>`); empty when not solved.
    pub block: String,
    pub fields: usize,
    pub rows: usize,
    /// Why the form is not on a page (an operand kind pages cannot name, a failed check).
    pub unsolved: Option<String>,
    pub notes: Vec<String>,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub forms: usize,
    pub solved: usize,
    pub pages: usize,
    pub fields: usize,
    pub rows: usize,
    pub batches: usize,
    pub words: usize,
    pub seconds: f64,
    /// Of the distinct words the census kept for the run's forms, (those no written page
    /// decodes, all): worked out when the run covers every form (no shard of several).
    pub census_left: Option<(usize, usize)>,
    /// Why they were not counted, where that failed (a census word that is not hex, a
    /// written page that does not load): the pages stand, and `summary.md` says so.
    pub census_error: Option<String>,
}

impl Summary {
    /// Counts the census words the pages in `out` leave undecoded into
    /// [`Summary::census_left`], or keeps why that failed in [`Summary::census_error`].
    fn count_census_left(&mut self, out: &Path, arch: Arch, forms: &[&FormRecord]) {
        match census_left(out, arch, forms) {
            Ok(counts) => self.census_left = Some(counts),
            Err(e) => self.census_error = Some(e.to_string()),
        }
    }
}

/// Why a discovery run stopped: a file it needs, a tool failure, shards that do not fit.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("--shard '{0}': expected i/n with 0 <= i < n, e.g. 0/4")]
    Shard(String),
    /// A file or folder of the run, and what went wrong with it.
    #[error("{}: {why}", path.display())]
    File { path: PathBuf, why: String },
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error("census seed '{0}' is not a word")]
    Seed(String),
    #[error("form {0} has no seed")]
    NoSeed(String),
    /// A failure mid-run; the records solved before it are kept in `log`.
    #[error("{cause} (the forms solved so far are kept in {}; rerun to continue)", log.display())]
    Stopped { cause: Box<SweepError>, log: PathBuf },
    #[error("{} and {} hold different censuses: shards of different runs", first.display(), other.display())]
    MixedShards { first: PathBuf, other: PathBuf },
    #[error("no shard folders given")]
    NoShards,
    #[error("no shard solved form {opclass} ({text}): a shard is missing or unfinished")]
    Unsolved { opclass: String, text: String },
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> SweepError {
    SweepError::File { path: path.to_path_buf(), why: e.to_string() }
}

/// Runs (or continues) a discovery of `opts.arch` into `opts.out`.
pub fn run(nv: &dyn Source, opts: &Options, progress: &(dyn Fn(&str) + Sync)) -> Result<Summary, SweepError> {
    let t0 = Instant::now();
    std::fs::create_dir_all(&opts.out).map_err(|e| io_err(&opts.out, e))?;
    let census = census(nv, opts, progress)?;
    let mut forms: Vec<&FormRecord> = census.forms.iter().collect();
    forms.retain(|f| opts.only.is_empty() || opts.only.iter().any(|m| m.eq_ignore_ascii_case(&mnemonic_of(&f.text))));
    let mine: Vec<&FormRecord> = forms.iter().enumerate().filter(|(i, _)| i % opts.shard.count == opts.shard.index).map(|(_, f)| *f).collect();
    let log = opts.out.join("solved.jsonl");
    drop_torn_tail(&log)?;
    let mut records = read_records(&log)?;
    let done: BTreeSet<String> = records.iter().map(|r| r.opclass.clone()).collect();
    let todo: Vec<&FormRecord> = mine.iter().filter(|f| !done.contains(&f.opclass)).copied().collect();
    if !done.is_empty() {
        progress(&format!("resuming: {} of {} forms already in {}", done.len(), mine.len(), log.display()));
    }
    let (batches, words) = solve_all(nv, opts, &todo, &log, progress)?;
    records = read_records(&log)?;
    records.retain(|r| mine.iter().any(|f| f.opclass == r.opclass));
    let mut s = write_pages(&opts.out, opts.arch, &opts.tool, &records)?;
    s.batches = batches;
    s.words = census.words + words;
    s.seconds = t0.elapsed().as_secs_f64();
    // A count, not the run's work: the pages are written, so a failure here only leaves
    // the summary without it.
    if opts.shard.count == 1 && s.pages > 0 {
        s.count_census_left(&opts.out, opts.arch, &forms);
        if let Some(e) = &s.census_error {
            progress(&format!("census words not counted: {e}"));
        }
    }
    write_summary(&opts.out, opts, &s, &records)?;
    Ok(s)
}

impl CensusFile {
    /// `census.json` at `path`, which must hold `arch`'s census.
    pub fn read(path: &Path, arch: Arch) -> Result<CensusFile, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
        let c: CensusFile = serde_json::from_str(&text).map_err(|e| io_err(path, format!("not a census file ({e})")))?;
        if c.arch != arch.0 {
            return Err(io_err(path, format!("holds SM{}'s census, not {arch}'s", c.arch)));
        }
        Ok(c)
    }

    /// Every word the census kept, form by form: the seed, the alternates, the real-code
    /// and the late word. A seed may print with an operand left out (SM90 IADD3's second
    /// carry-out at PT) where another word of its opclass prints it: `discover --fill
    /// --census` adds the forms of such words that no page decodes.
    pub fn words(&self) -> Result<Vec<Word>, String> {
        let mut out = vec![];
        for f in &self.forms {
            out.extend(f.words()?);
        }
        Ok(out)
    }
}

impl FormRecord {
    /// The words the census kept of this form (see [`CensusFile::words`]).
    pub fn words(&self) -> Result<Vec<Word>, String> {
        let all = std::iter::once(&self.seed).chain(&self.alternates).chain(&self.real).chain(&self.late);
        all.map(|w| Word::parse_hex(w).ok_or_else(|| format!("{}: '{w}' is not a word of up to 32 hex digits", self.opclass))).collect()
    }
}

/// Of the distinct words the census kept for `forms`, (those the pages in `out/pages` do
/// not decode, all): forms a seed left out, which `discover --fill --census` adds.
fn census_left(out: &Path, arch: Arch, forms: &[&FormRecord]) -> Result<(usize, usize), SweepError> {
    let mut words = BTreeSet::new();
    for f in forms {
        words.extend(f.words().map_err(|e| io_err(&out.join("census.json"), e))?);
    }
    let dir = out.join("pages");
    let spec = crate::spec::load(std::slice::from_ref(&dir)).map_err(|e| io_err(&dir, e))?;
    let codec = crate::codec::Codec::new(&spec);
    Ok((words.iter().filter(|&&w| codec.decode(arch, w).is_err()).count(), words.len()))
}

/// The census, from `census.json` when an earlier run wrote it.
fn census(nv: &dyn Source, opts: &Options, progress: &(dyn Fn(&str) + Sync)) -> Result<CensusFile, SweepError> {
    let path = opts.out.join("census.json");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let c: CensusFile = serde_json::from_str(&text).map_err(|e| io_err(&path, format!("not a census file ({e}); remove it to start over")))?;
        if c.arch != opts.arch.0 {
            return Err(io_err(&path, format!("holds SM{}, not {}: use another --out", c.arch, opts.arch)));
        }
        progress(&format!("census: {} forms (from {})", c.forms.len(), path.display()));
        return Ok(c);
    }
    let file = take_census(nv, opts, progress)?;
    let json = serde_json::to_string_pretty(&file).map_err(|e| io_err(&path, e))?;
    crate::output::write_atomic(&path, json.as_bytes()).map_err(|e| io_err(&path, e))?;
    Ok(file)
}

/// A fresh census of `opts.arch` over `opts.scope` and `opts.seeds`, as `census.json`
/// holds it (nothing written). Sweeps that share one census (the tests' sweeps of a few
/// opcodes each) take it once and give each its forms in `census.json`.
pub fn take_census(nv: &dyn Source, opts: &Options, progress: &(dyn Fn(&str) + Sync)) -> Result<CensusFile, SweepError> {
    let mut o = Oracle::new(nv, opts.arch);
    let c = Census::run(&mut o, &opts.scope, &opts.seeds, &opts.borrowed, &mut |m| progress(&format!("census: {m}")))?;
    let forms = c
        .forms
        .values()
        .map(|f: &Form| FormRecord {
            opclass: f.opclass.clone(),
            seed: f.seed.to_string(),
            text: f.text.clone(),
            alternates: f.alternates.iter().map(Word::to_string).collect(),
            real: f.real.map(|w| w.to_string()),
            late: f.late.map(|w| w.to_string()),
        })
        .collect();
    Ok(CensusFile { arch: opts.arch.0, tool: opts.tool.clone(), words: c.words, forms })
}

fn mnemonic_of(text: &str) -> String {
    super::census::text_signature(text).split(' ').next().unwrap_or("").to_string()
}

/// Cuts a torn last line (a run killed mid-write) off `path`, so appending starts clean.
fn drop_torn_tail(path: &Path) -> Result<(), SweepError> {
    let Ok(bytes) = std::fs::read(path) else { return Ok(()) };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| io_err(path, e))?;
    f.set_len(keep as u64).map_err(|e| io_err(path, e))
}

/// Records already in `solved.jsonl`; a torn last line (a killed run) is dropped.
pub fn read_records(path: &Path) -> Result<Vec<Record>, SweepError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(io_err(path, e)),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Record>(l) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => return Err(io_err(path, format!("line {}: not a record ({e})", i + 1))),
        }
    }
    Ok(out)
}

/// Solves `todo` with `opts.solvers` threads over one [`Batcher`], appending each record
/// to `log` as it is done. Returns (batches, words) sent.
fn solve_all(nv: &dyn Source, opts: &Options, todo: &[&FormRecord], log: &Path, progress: &(dyn Fn(&str) + Sync)) -> Result<(usize, usize), SweepError> {
    if todo.is_empty() {
        return Ok((0, 0));
    }
    let file = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(|e| io_err(log, e))?;
    let file = Mutex::new(file);
    let batcher = Batcher::new(nv);
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let failure: Mutex<Option<SweepError>> = Mutex::new(None);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..opts.solvers.clamp(1, todo.len()) {
            s.spawn(|| {
                let _active = batcher.enter();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= todo.len() || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                        break;
                    }
                    let rec = match solve_one(&batcher, opts.arch, todo[i]) {
                        Ok(r) => r,
                        Err(e) => {
                            *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                            break;
                        }
                    };
                    let line = serde_json::to_string(&rec).unwrap_or_default() + "\n";
                    let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush()) {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(io_err(log, e));
                        break;
                    }
                    let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
                    if n.is_multiple_of(50) || n == todo.len() {
                        progress(&format!("solved {n}/{} forms, {:.0} s", todo.len(), t0.elapsed().as_secs_f64()));
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(SweepError::Stopped { cause: Box::new(e), log: log.to_path_buf() });
    }
    Ok(batcher.totals())
}

/// One form: its page block, or why it has none (the first seed's reason when no seed
/// solves). A tool failure is an error, not a record.
fn solve_one(src: &dyn Source, arch: Arch, f: &FormRecord) -> Result<Record, SweepError> {
    let mut first: Option<Record> = None;
    for hex in std::iter::once(&f.seed).chain(&f.alternates).chain(&f.late) {
        let seed = Word::parse_hex(hex).ok_or_else(|| SweepError::Seed(hex.clone()))?;
        // A solver bug on one form costs that form, not the run (the others go on).
        let rec = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solve_seed(src, arch, f, seed))) {
            Ok(rec) => rec?,
            Err(p) => Record::unsolved(f, seed, format!("the solver panicked: {}", panic_message(p.as_ref()))),
        };
        if rec.unsolved.is_none() {
            return Ok(rec);
        }
        first.get_or_insert(rec);
    }
    first.ok_or_else(|| SweepError::NoSeed(f.opclass.clone()))
}

/// A panic's message (`panic!` with a string or a format).
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(no message)".into())
}

impl Record {
    /// The record of form `f` from `seed` before (or instead of) solving: `unsolved` says why.
    fn unsolved(f: &FormRecord, seed: Word, why: String) -> Record {
        Record {
            opclass: f.opclass.clone(),
            seed: seed.to_string(),
            text: f.text.clone(),
            mnemonic: String::new(),
            key: String::new(),
            block: String::new(),
            fields: 0,
            rows: 0,
            unsolved: Some(why),
            notes: vec![],
        }
    }
}

fn solve_seed(src: &dyn Source, arch: Arch, f: &FormRecord, seed: Word) -> Result<Record, SweepError> {
    let mut rec = Record { unsolved: None, ..Record::unsolved(f, seed, String::new()) };
    match discover(src, arch, seed) {
        Ok(mut d) => {
            // Bits nvdisasm ignores are don't-cares: real code's values make its words decode;
            // without a real word, zero (what ptxas writes in bits it does not use), not the
            // census seed's values (a random round's seed has junk there: SM100 UTCATOMSWS).
            let real = f.real.as_deref().and_then(Word::parse_hex).unwrap_or(Word(0));
            d.zero = d.ignored.iter().fold(d.zero, |z, &b| z.with_bit(b, real.bit(b)));
            rec.notes = d.notes.clone();
            rec.text = d.distilled.clone();
            // The page must say it: a block our parser rejects (tokens of one group printed
            // apart, say) leaves the form off the pages, with the parser's reason.
            let text = page::render(&d.mnemonic, None, std::slice::from_ref(&d));
            let parsed = crate::spec::parse_page(&d.mnemonic, text.as_bytes());
            if let Err(e) = &parsed {
                rec.unsolved = Some(format!("the page format cannot say it: {}", e.message));
            } else if d.notes.is_empty() {
                rec.mnemonic = d.mnemonic.clone();
                rec.key = page::key(&d);
                rec.block = page::variant_block(&d);
                rec.fields = d.fields.len();
                rec.rows = page::table_rows(&d);
            } else {
                rec.unsolved = Some(format!("{} check(s) failed", d.notes.len()));
            }
        }
        Err(DiscoverError::Seed(_, _, why)) => rec.unsolved = Some(why),
        Err(e @ DiscoverError::Tool(_)) => return Err(e.into()),
    }
    Ok(rec)
}

/// Pages from the solved records (opclass order; a key seen twice on a page gets the
/// opclass appended). Removes pages of an earlier run first.
pub fn write_pages(out: &Path, arch: Arch, tool: &str, records: &[Record]) -> Result<Summary, SweepError> {
    let dir = out.join("pages");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    let mut sorted: Vec<&Record> = records.iter().filter(|r| r.unsolved.is_none()).collect();
    sorted.sort_by(|a, b| a.opclass.cmp(&b.opclass));
    let mut by_page: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in &sorted {
        by_page.entry(&r.mnemonic).or_default().push(r);
    }
    let mut s = Summary { forms: records.len(), solved: sorted.len(), pages: by_page.len(), ..Summary::default() };
    for (name, recs) in &by_page {
        let mut seen = BTreeSet::new();
        let blocks: Vec<String> = recs
            .iter()
            .map(|r| {
                if seen.insert(r.key.clone()) {
                    r.block.clone()
                } else {
                    r.block.replacen(&format!("\nkey: {}\n", r.key), &format!("\nkey: {}__{}\n", r.key, r.opclass), 1)
                }
            })
            .collect();
        s.fields += recs.iter().map(|r| r.fields).sum::<usize>();
        s.rows += recs.iter().map(|r| r.rows).sum::<usize>();
        let banner = format!("Discovered by sass-harness from {tool} on {arch}: {} form(s) by opclass", recs.len());
        let path = dir.join(format!("{}.txt", name.to_lowercase()));
        crate::output::write_atomic(&path, page::render_blocks(name, Some(&banner), arch, &blocks).as_bytes()).map_err(|e| io_err(&path, e))?;
    }
    Ok(s)
}

fn write_summary(out: &Path, opts: &Options, s: &Summary, records: &[Record]) -> Result<(), SweepError> {
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        if let Some(u) = &r.unsolved {
            *why.entry(reason_class(u)).or_default() += 1;
        }
    }
    let mut md = format!(
        "# Discovery of {}\n\n{}\n\nshard {}/{}: {} forms, {} solved onto {} pages ({} fields, {} table rows); {} nvdisasm batches, {} words, {:.1} s\n\n## Not on a page\n\n",
        opts.arch, opts.tool, opts.shard.index, opts.shard.count, s.forms, s.solved, s.pages, s.fields, s.rows, s.batches, s.words, s.seconds
    );
    for (w, n) in &why {
        md.push_str(&format!("- {n} × {w}\n"));
    }
    if let Some((left, all)) = s.census_left {
        md.push_str(&format!(
            "\n## Census words no page decodes\n\n{left} of the {all} words the census kept (a seed that prints an operand left out, a word of another table row); \
             `sass-harness discover --arch {} --fill {} --ptx none --census {} --out DIR` adds their forms.\n",
            opts.arch.0,
            out.join("pages").display(),
            out.join("census.json").display()
        ));
    }
    if let Some(e) = &s.census_error {
        md.push_str(&format!("\n## Census words not counted\n\n{e}\n"));
    }
    let path = out.join("summary.md");
    crate::output::write_atomic(&path, md.as_bytes()).map_err(|e| io_err(&path, e))
}

/// A reason without its word and text, so reasons of many forms count together.
fn reason_class(why: &str) -> String {
    if let Some(i) = why.find("has an operand kind") {
        return why[i..].to_string();
    }
    why.split(':').next().unwrap_or(why).to_string()
}

/// Joins shard folders into `out`: the census (all shards must hold the same one), the
/// records of every shard in opclass order, pages and summary rendered as one run would.
pub fn merge(shards: &[PathBuf], out: &Path) -> Result<Summary, SweepError> {
    let mut census: Option<(PathBuf, String)> = None;
    let mut records: BTreeMap<String, Record> = BTreeMap::new();
    for dir in shards {
        let path = dir.join("census.json");
        let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
        match &census {
            Some((first, t)) if *t != text => return Err(SweepError::MixedShards { first: first.clone(), other: path.clone() }),
            Some(_) => {}
            None => census = Some((path.clone(), text)),
        }
        for r in read_records(&dir.join("solved.jsonl"))? {
            records.insert(r.opclass.clone(), r);
        }
    }
    let (first, text) = census.ok_or(SweepError::NoShards)?;
    let c: CensusFile = serde_json::from_str(&text).map_err(|e| io_err(&first, format!("not a census file ({e})")))?;
    if let Some(f) = c.forms.iter().find(|f| !records.contains_key(&f.opclass)) {
        return Err(SweepError::Unsolved { opclass: f.opclass.clone(), text: f.text.clone() });
    }
    std::fs::create_dir_all(out).map_err(|e| io_err(out, e))?;
    crate::output::write_atomic(&out.join("census.json"), text.as_bytes()).map_err(|e| io_err(&out.join("census.json"), e))?;
    let records: Vec<Record> = records.into_values().collect();
    let lines: String = records.iter().map(|r| serde_json::to_string(r).unwrap_or_default() + "\n").collect();
    crate::output::write_atomic(&out.join("solved.jsonl"), lines.as_bytes()).map_err(|e| io_err(&out.join("solved.jsonl"), e))?;
    let arch = Arch(c.arch);
    let mut s = write_pages(out, arch, &c.tool, &records)?;
    if s.pages > 0 {
        s.count_census_left(out, arch, &c.forms.iter().collect::<Vec<_>>());
    }
    let opts = Options {
        arch,
        out: out.to_path_buf(),
        shard: Shard::ALL,
        solvers: 0,
        only: vec![],
        scope: Scope::default(),
        seeds: vec![],
        borrowed: vec![],
        tool: c.tool.clone(),
    };
    write_summary(out, &opts, &s, &records)?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::nvdisasm::Outcome;

    /// An oracle whose every answer panics, as a solver bug would.
    struct Panics;
    impl Source for Panics {
        fn outcomes(&self, _: Arch, _: &[Word]) -> Result<Vec<Outcome>, DiscoverError> {
            panic!("solver bug")
        }
    }

    #[test]
    fn a_panic_solving_one_form_leaves_it_unsolved_with_the_message() {
        let f = FormRecord { opclass: "x_".into(), seed: Word(0x7947).to_string(), text: "BRA 0x0;".into(), alternates: vec![], real: None, late: None };
        let rec = solve_one(&Panics, Arch(90), &f).expect("a record, not an error");
        assert_eq!(rec.unsolved.as_deref(), Some("the solver panicked: solver bug"));
        assert_eq!((rec.opclass.as_str(), rec.key.as_str()), ("x_", ""));
    }
}
