//! The nvdisasm oracle: what NVIDIA's disassembler prints for raw instruction words.
//!
//! Raw mode (`nvdisasm -b SM90 -hex words.bin`, a file of 16-byte little-endian words)
//! costs about 0.3–0.55 s per process plus ~20 µs per word, so words are sent in large
//! batches and several processes run at once. Where it can, a run goes to a fork server
//! ([`super::server`]), which pays the start once per architecture and base address.
//!
//! Behaviours this module relies on (nvdisasm 13.5):
//! - One illegal word anywhere in a file makes stdout empty and the exit status 1; stderr
//!   then has one line per bad word naming `at address 0x00000010` (plus, for some kinds,
//!   a separate `Illegal instruction found` line that names no address). All bad
//!   addresses are reported in one run. We record them, put a NOP in their place and run
//!   the batch again.
//! - Some illegal words are reported by `Illegal instruction found` lines alone, with no
//!   address (seen on SM100 with double-bit mutations of census seeds). A round that fails
//!   with nothing but such lines is split in halves until the word is found: it costs
//!   about two runs per halving, and only batches that hold such a word pay it.
//! - Some words are *silent*: no listing line and no error. In the middle of a listing
//!   their two `/* 0x… */` hex comments still appear (without an address); at the very
//!   end of a file even those vanish, so every batch ends with a sentinel NOP.
//! - A tool fault (a crash, a timeout, a failure that names no illegal address, a listing
//!   that does not map back to the words sent) is never a finding: the batch is retried
//!   once, then the whole call fails with an [`NvdisasmError`] naming the tool, the
//!   architecture, the batch and what happened.
//!
//! The listing and stderr formats are read by [`super::listing`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::cache;
use super::listing::{parse_errors, parse_listing};
use super::merge::Merger;
use super::process::{self, describe_status, excerpt, Limits, ProcessError};
use super::replies::Replies;
use super::server;
use super::tools::{self, Tool, ToolError, ToolVersion};
use crate::word::Word;

pub use super::listing::error_message;

/// Most words one nvdisasm process gets; larger inputs are split into more chunks than
/// jobs and served by a worker pool. nvdisasm's time is linear in the words (about
/// 16 µs each, 125 MB at 100 000 words), so this only bounds memory and the rerun cost.
pub const MAX_CHUNK: usize = 100_000;
/// Fewest words worth a process of their own: a start-up costs nvdisasm about 0.3 s of
/// CPU, as much as some 20 000 words, so small batches are not split across cores.
pub const MIN_CHUNK: usize = 16_384;
/// Rounds of "replace the illegal words by NOPs and run again" per chunk. nvdisasm
/// reports every illegal address in one run, so two rounds normally suffice.
pub const MAX_ROUNDS: usize = 6;
/// Default wall-clock limit per nvdisasm process (see [`process::timeout_from_env`]).
pub const DEFAULT_TIMEOUT: Duration = process::DEFAULT_TIMEOUT;
/// Most words of a run whose reply [`Nvdisasm::cache`] keeps (a listing is some 200 bytes
/// a word: at most about 3 MB an entry).
pub const CACHE_MAX_WORDS: usize = MIN_CHUNK;
/// The variable that names a folder of kept replies for [`Nvdisasm::locate`]: a run asked
/// again with the same nvdisasm, arguments and input is answered from there (the test
/// suite points its program runs at one, so tests asking the same share the answer).
pub const CACHE_VAR: &str = "SASS_HARNESS_NVDISASM_CACHE";
/// Limit for `nvdisasm --version`, which answers at once.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// nvdisasm runs for batches so far (each a process, ~0.25 s of CPU to start, or a child
/// of a fork server, ~20 ms: [`super::server`]): what the benchmark reports per phase.
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Words (sentinels included) given to those processes: nvdisasm's time is about linear
/// in them, so the benchmark reports them beside the process starts.
static SENT: AtomicUsize = AtomicUsize::new(0);

/// nvdisasm runs this process started for batches so far.
pub fn processes_started() -> usize {
    STARTED.load(Ordering::Relaxed)
}

/// Words this process gave nvdisasm in those batches so far.
pub fn words_sent() -> usize {
    SENT.load(Ordering::Relaxed)
}

/// The NOP used as filler and sentinel: `NOP;` with the control bits ptxas gives its
/// padding NOPs (stall 0, yield clear, no barriers; 0x000fc00000000000 high,
/// 0x7918 low). Checked to print `NOP;` for every architecture nvdisasm 13.5 accepts
/// in raw mode (SM75 … SM121, including the `a`/`f` variants).
pub fn nop(arch: &str) -> Word {
    let _ = arch; // the same encoding on every Volta-and-later architecture
    Word((0x000f_c000_0000_0000u128 << 64) | 0x7918)
}

/// What nvdisasm said about one word.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Outcome {
    /// The instruction text exactly as printed, without the address and the hex
    /// comments; whitespace after the terminator trimmed, spacing before it kept
    /// (e.g. `@P0 DFMA R0, R0, R0, +INF  ;`).
    Printed { text: String },
    /// nvdisasm rejected the word; its stderr line(s) for the word's address, without
    /// the `nvdisasm error   : ` prefix and the (batch-relative) ` at address 0x…` suffix,
    /// e.g. `Unrecognized operation for functional unit 'uC'`. Several lines for one
    /// address are joined with newlines.
    Illegal { message: String },
    /// No error and no line: the word decodes to nothing printable.
    Silent,
}

/// Why a call to nvdisasm produced no outcomes. Never a finding: the tool, not the page,
/// is at fault, and the run must stop.
#[derive(Debug, thiserror::Error)]
pub enum NvdisasmError {
    #[error("cannot create a temporary folder under {dir} (the system temp dir; set TMPDIR to change it): {err}")]
    TempDir { dir: PathBuf, err: String },
    #[error("{tool} -b {arch}, batch of {words} words at {base:#x} (first word {first}){}: {fault}", if *.retried { ", tried twice" } else { "" })]
    Batch { tool: PathBuf, arch: String, words: usize, first: Word, base: u64, retried: bool, fault: Box<BatchFault> },
    /// The error of a run merged with other threads' requests ([`Merger`]), which each
    /// of them gets.
    #[error(transparent)]
    Merged(Arc<NvdisasmError>),
    /// A broken invariant of the harness itself, never nvdisasm's doing.
    #[error("internal: {0}")]
    Internal(String),
}

/// What went wrong with one batch.
#[derive(Debug, thiserror::Error)]
pub enum BatchFault {
    #[error("cannot write the batch file {path}: {err}")]
    Write { path: PathBuf, err: String },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("failed ({status}) without a usable list of illegal addresses; stderr: {stderr}")]
    NoAddress { status: String, stderr: String },
    #[error("exited 1 saying only 'Illegal instruction found', naming no address; stderr: {stderr}")]
    Unaddressed { stderr: String },
    #[error("reported {why} ({addr:#x}); stderr: {stderr}")]
    BadAddress { why: &'static str, addr: u64, stderr: String },
    #[error("printed address {addr:#x} twice")]
    DuplicateAddress { addr: u64 },
    #[error("the sentinel NOP at {addr:#x} is missing from the listing: {stdout}")]
    NoSentinel { addr: u64, stdout: String },
    #[error("the listing at {addr:#x} ({text}) shows hex {shown} but the word sent was {sent}")]
    HexMismatch { addr: u64, text: String, shown: String, sent: String },
    #[error("still illegal words after {MAX_ROUNDS} rounds")]
    Rounds,
    #[error("internal: a worker produced no result for its chunk")]
    NoResult,
}

impl BatchFault {
    /// Faults worth one more try: the process misbehaved. Wrong listings and an
    /// interrupt are not retried.
    fn transient(&self) -> bool {
        matches!(self, BatchFault::NoAddress { .. }) || matches!(self, BatchFault::Process(e) if !matches!(e, ProcessError::Interrupted { .. }))
    }
}

#[derive(Clone, Debug)]
pub struct Nvdisasm {
    pub path: PathBuf,
    /// The version line, e.g. `release 13.5, V13.5.37`.
    pub version: String,
    /// The full version (`13.5.37`) where `--version` names one.
    pub version_number: Option<String>,
    /// Processes run at once.
    pub jobs: usize,
    /// Wall-clock limit per process.
    pub timeout: Duration,
    /// Fewest words per process ([`MIN_CHUNK`]; lowered by tests to force many chunks).
    pub min_chunk: usize,
    /// Replies kept across calls, shared by clones: a request asked again is answered
    /// without a process (see [`Replies`]). `None` ([`Nvdisasm::locate`]'s): every
    /// request runs nvdisasm. The tests that rediscover the same words keep them.
    pub replies: Option<Arc<Replies>>,
    /// Where requests of several threads that accept any address wait to share one run,
    /// shared by clones (see [`Merger`] and [`Nvdisasm::disassemble_anywhere`]). `None`
    /// ([`Nvdisasm::locate`]'s): each request runs alone.
    pub merger: Option<Arc<Merger>>,
    /// A folder where each run's reply is kept on disk for the next identical run (same
    /// binary, version, architecture, base address and words), by this or another
    /// process ([`crate::oracle::cache`]); runs of more than [`CACHE_MAX_WORDS`] words
    /// are not kept. A cubin's listing ([`crate::oracle::gpu::dryrun::cubin_listing`]) is
    /// kept too. `None` (what [`Nvdisasm::locate`] gives without [`CACHE_VAR`]): every run
    /// starts nvdisasm. The test suite keeps one under the target folder.
    pub cache: Option<PathBuf>,
    /// Whether raw-mode runs go to fork servers ([`server`]: nvdisasm's start-up paid
    /// once per architecture and address, not per run). [`Nvdisasm::locate`] sets it as
    /// [`server::wanted`] says; where no server can start, runs start processes all the
    /// same.
    pub serve: bool,
}

impl Nvdisasm {
    /// Find nvdisasm (see [`tools::locate`]), check that it is nvdisasm and read its
    /// version; `jobs` is the number of available cores, the timeout comes from
    /// `SASS_HARNESS_TOOL_TIMEOUT` (seconds) or [`DEFAULT_TIMEOUT`], the folder of kept
    /// replies ([`Nvdisasm::cache`]) from [`CACHE_VAR`] (none when unset or empty).
    pub fn locate() -> Result<Nvdisasm, ToolError> {
        let path = tools::locate(Tool::Nvdisasm)?;
        let timeout = process::timeout_from_env().map_err(ToolError::Setting)?;
        let v = tools::version(Tool::Nvdisasm, &path, VERSION_TIMEOUT.min(timeout.max(Duration::from_secs(5))))?;
        let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let cache = std::env::var_os(CACHE_VAR).filter(|d| !d.is_empty()).map(PathBuf::from);
        let serve = server::wanted(v.number.as_deref());
        Ok(Nvdisasm { path, version: v.line, version_number: v.number, jobs, timeout, min_chunk: MIN_CHUNK, replies: None, merger: None, cache, serve })
    }

    /// A warning when this nvdisasm is not the pinned version ([`tools::PINNED_VERSION`]).
    pub fn pin_warning(&self) -> Option<String> {
        let v = ToolVersion { line: self.version.clone(), number: self.version_number.clone() };
        v.pin_warning(Tool::Nvdisasm, &self.path)
    }

    /// Disassemble `words` for `arch` (`"SM90"`, `"SM100"`, … as `nvdisasm -b` takes it).
    /// The result has the same length and order as `words`. Word `i` is disassembled at
    /// address `16 * i`, whatever the chunking: PC-relative operands (`BRA 0x10`, `LEPC
    /// R104, 0x…`) print targets computed from that address.
    pub fn disassemble(&self, arch: &str, words: &[Word]) -> Result<Vec<Outcome>, NvdisasmError> {
        self.disassemble_at(arch, 0, words)
    }

    /// Like [`Nvdisasm::disassemble`], with word `i` at address `base + 16 * i`
    /// (`nvdisasm --base-address`).
    pub fn disassemble_at(&self, arch: &str, base: u64, words: &[Word]) -> Result<Vec<Outcome>, NvdisasmError> {
        let kept = self.replies.as_deref();
        if let Some((_, outs)) = kept.and_then(|r| r.get(arch, words)).filter(|(at, _)| *at == base) {
            return Ok(outs);
        }
        let outs = self.each_chunk(arch, base, words, |b, stem| self.run_chunk(b, stem))?;
        if let Some(r) = kept {
            r.put(arch, words, (base, outs.clone()));
        }
        Ok(outs)
    }

    /// Like [`Nvdisasm::disassemble`], at an address of this oracle's choosing, given with
    /// the outcomes (word `i` at it plus `16 i`): for callers that read PC-relative targets
    /// relative to it, or not at all. A kept reply ([`Replies`]) answers at whatever
    /// address it was printed at; with a [`Merger`], the words go in one run with the
    /// requests of other threads.
    pub fn disassemble_anywhere(&self, arch: &str, words: &[Word]) -> Result<(u64, Vec<Outcome>), NvdisasmError> {
        let kept = self.replies.as_deref();
        if let Some(r) = kept.and_then(|r| r.get(arch, words)) {
            return Ok(r);
        }
        let Some(m) = self.merger.as_deref().filter(|_| !words.is_empty()) else {
            return Ok((0, self.disassemble(arch, words)?));
        };
        let reply = m.ask(arch, words, |a, all| self.each_chunk(a, 0, all, |b, stem| self.run_chunk(b, stem)));
        let (base, outs) = reply.map_err(NvdisasmError::Merged)?;
        if let Some(r) = kept {
            r.put(arch, words, (base, outs.clone()));
        }
        Ok((base, outs))
    }

    /// One nvdisasm run per chunk of `words` (word `i` at `base + 16 i`, chunked as
    /// [`Nvdisasm::disassemble_at`] chunks them): per word, its outcome where that run
    /// settles it (a word it names illegal; every word of a chunk it prints), `None` where
    /// the word is to be sent again, the settled ones replaced by NOPs ([`nop`]): what
    /// `disassemble_at`'s next round would send, so that a caller can send it with other
    /// words and save that round's process starts. A chunk nvdisasm rejects without naming
    /// an address is settled whole, as `disassemble_at` settles it.
    pub fn screen(&self, arch: &str, base: u64, words: &[Word]) -> Result<Vec<Option<Outcome>>, NvdisasmError> {
        self.each_chunk(arch, base, words, |b, stem| self.screen_chunk(b, stem))
    }

    /// `run` on each chunk of `words` (at most [`MAX_CHUNK`], at least `min_chunk` words,
    /// as many as `jobs` at once), the results in word order.
    fn each_chunk<T: Send>(
        &self,
        arch: &str,
        base: u64,
        words: &[Word],
        run: impl Fn(&Batch, &Path) -> Result<Vec<T>, NvdisasmError> + Sync,
    ) -> Result<Vec<T>, NvdisasmError> {
        if words.is_empty() {
            return Ok(vec![]);
        }
        let jobs = self.jobs.max(1);
        let chunk = words.len().div_ceil(jobs).max(self.min_chunk.max(1)).min(MAX_CHUNK);
        let chunks: Vec<&[Word]> = words.chunks(chunk).collect();
        let dir = TempDir::new()?;
        let results = process::in_parallel(jobs, chunks.len(), |i| {
            let batch = Batch { arch, base: base.wrapping_add((i * chunk) as u64 * 16), words: chunks[i] };
            run(&batch, &dir.path.join(format!("chunk{i}")))
        });
        let mut out = Vec::with_capacity(words.len());
        for (r, c) in results.into_iter().zip(&chunks) {
            match r {
                Ok(v) if v.len() == c.len() => out.extend(v),
                Err(e) => return Err(e),
                Ok(_) => return Err(self.error(&Batch { arch, base, words: c }, false, BatchFault::NoResult)),
            }
        }
        Ok(out)
    }

    /// [`Nvdisasm::screen`] of one chunk: its first round of [`Nvdisasm::run_rounds`].
    fn screen_chunk(&self, b: &Batch, file_stem: &Path) -> Result<Vec<Option<Outcome>>, NvdisasmError> {
        let mut state = ChunkState::new(b.words, nop(b.arch));
        match self.run_round_retrying(b, b.words, &file_stem.with_extension("round0.bin")) {
            Ok((Some(stdout), ..)) => Ok(state.finish(b, &stdout).map_err(|f| self.error(b, false, f))?.into_iter().map(Some).collect()),
            Ok((None, reported, stderr)) => {
                state.replace_illegal(reported, &stderr, &b.base).map_err(|f| self.error(b, false, f))?;
                Ok(state.done)
            }
            Err(NvdisasmError::Batch { fault, .. }) if matches!(*fault, BatchFault::Unaddressed { .. }) => {
                Ok(self.run_chunk(b, file_stem)?.into_iter().map(Some).collect())
            }
            Err(e) => Err(e),
        }
    }

    fn error(&self, b: &Batch, retried: bool, fault: BatchFault) -> NvdisasmError {
        NvdisasmError::Batch {
            tool: self.path.clone(),
            arch: b.arch.to_string(),
            words: b.words.len(),
            first: b.words.first().copied().unwrap_or(Word::ZERO),
            base: b.base,
            retried,
            fault: Box::new(fault),
        }
    }

    /// One chunk: [`Nvdisasm::run_rounds`]; halved while nvdisasm rejects a word without
    /// naming its address (a single such word is illegal).
    fn run_chunk(&self, b: &Batch, file_stem: &Path) -> Result<Vec<Outcome>, NvdisasmError> {
        match self.run_rounds(b, file_stem) {
            Err(NvdisasmError::Batch { fault, .. }) if matches!(*fault, BatchFault::Unaddressed { .. }) => {
                if b.words.len() == 1 {
                    return Ok(vec![Outcome::Illegal { message: UNADDRESSED.to_string() }]);
                }
                let mid = b.words.len() / 2;
                let left = Batch { arch: b.arch, base: b.base, words: &b.words[..mid] };
                let right = Batch { arch: b.arch, base: b.base.wrapping_add(mid as u64 * 16), words: &b.words[mid..] };
                let mut out = self.run_chunk(&left, file_stem)?;
                out.extend(self.run_chunk(&right, file_stem)?);
                Ok(out)
            }
            r => r,
        }
    }

    /// Run, replace illegal words by NOPs, run again, until clean.
    fn run_rounds(&self, b: &Batch, file_stem: &Path) -> Result<Vec<Outcome>, NvdisasmError> {
        let mut state = ChunkState::new(b.words, nop(b.arch));
        for round in 0..MAX_ROUNDS {
            let file = file_stem.with_extension(format!("round{round}.bin"));
            let (stdout, reported, stderr) = self.run_round_retrying(b, &state.current, &file)?;
            if let Some(stdout) = stdout {
                return state.finish(b, &stdout).map_err(|f| self.error(b, false, f));
            }
            state.replace_illegal(reported, &stderr, &b.base).map_err(|f| self.error(b, false, f))?;
            if state.all_done() {
                return Ok(state.into_outcomes());
            }
        }
        Err(self.error(b, false, BatchFault::Rounds))
    }

    /// [`Nvdisasm::run_round`], once more if the process misbehaved.
    fn run_round_retrying(&self, b: &Batch, words: &[Word], file: &Path) -> Result<RoundResult, NvdisasmError> {
        match self.run_round(b, words, file) {
            Err(f) if f.transient() => self.run_round(b, words, file).map_err(|f| self.error(b, true, f)),
            r => r.map_err(|f| self.error(b, false, f)),
        }
    }

    /// Writes `words` and the sentinel to `file`, runs nvdisasm on it (or takes its kept
    /// reply) and returns its listing, or the illegal words it named (offsets from the
    /// batch's base).
    fn run_round(&self, b: &Batch, words: &[Word], file: &Path) -> Result<RoundResult, BatchFault> {
        let mut bytes = Vec::with_capacity((words.len() + 1) * 16);
        for w in words.iter().chain(std::iter::once(&nop(b.arch))) {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        let kept = self.cache.as_deref().filter(|_| words.len() <= CACHE_MAX_WORDS).and_then(|dir| kept_reply(dir, self, b, &bytes));
        let run = match kept.as_ref().and_then(|k| k.read().as_deref().and_then(Ran::from_bytes)) {
            Some(ran) => ran,
            None => {
                let ran = self.start(b, &bytes, file)?;
                if let Some(k) = &kept {
                    ran.keep(k);
                }
                ran
            }
        };
        // Without a copy when it is UTF-8 (a listing is some 20 MB per 100 000 words).
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let (stdout, stderr) = (text(run.stdout), text(run.stderr));
        if run.status.success() {
            return Ok((Some(stdout), BTreeMap::new(), String::new()));
        }
        // Keys are offsets from the chunk's base address; below the base wraps to huge.
        let reported: BTreeMap<u64, Vec<String>> = parse_errors(&stderr).into_iter().map(|(a, m)| (a.wrapping_sub(b.base), m)).collect();
        if reported.is_empty() && run.status.code() == Some(1) && only_unaddressed_illegal(&stderr) {
            return Err(BatchFault::Unaddressed { stderr: excerpt(&stderr) });
        }
        if reported.is_empty() || run.status.code().is_none() {
            return Err(BatchFault::NoAddress { status: describe_status(&run.status), stderr: excerpt(&stderr) });
        }
        Ok((None, reported, stderr))
    }

    /// Writes `bytes` to `file` and runs nvdisasm on it at the batch's base address.
    fn start(&self, b: &Batch, bytes: &[u8], file: &Path) -> Result<Ran, BatchFault> {
        std::fs::write(file, bytes).map_err(|e| BatchFault::Write { path: file.to_path_buf(), err: e.to_string() })?;
        STARTED.fetch_add(1, Ordering::Relaxed);
        SENT.fetch_add(bytes.len() / 16, Ordering::Relaxed);
        let base = format!("{:#x}", b.base);
        let args = ["-b", b.arch, "-hex", "--base-address", &base];
        let limits = Limits::with_timeout(self.timeout);
        let served = if self.serve { server::run(&self.path, &args, file, &limits) } else { None };
        let run = served.unwrap_or_else(|| process::run(Command::new(&self.path).args(args).arg(file), &limits));
        let _ = std::fs::remove_file(file);
        let run = run?;
        Ok(Ran { status: run.status, stdout: run.stdout, stderr: run.stderr })
    }
}

/// What one nvdisasm run gave: its exit status and output.
struct Ran {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Ran {
    /// Keeps a run that ended with nvdisasm's own status (0: a listing, 1: illegal words);
    /// a crash, a kill or another status is a fault to meet again, not a reply.
    fn keep(&self, entry: &cache::Entry) {
        if let Some(code @ (0 | 1)) = self.status.code() {
            let mut bytes = format!("status {code}\nstdout {}\n", self.stdout.len()).into_bytes();
            bytes.extend_from_slice(&self.stdout);
            bytes.extend_from_slice(&self.stderr);
            entry.write(&bytes);
        }
    }

    /// A kept run, as [`Ran::keep`] wrote it.
    fn from_bytes(bytes: &[u8]) -> Option<Ran> {
        let mut parts = bytes.splitn(3, |&c| c == b'\n');
        let code: i32 = std::str::from_utf8(parts.next()?.strip_prefix(b"status ")?).ok()?.parse().ok()?;
        let len: usize = std::str::from_utf8(parts.next()?.strip_prefix(b"stdout ")?).ok()?.parse().ok()?;
        let rest = parts.next()?;
        let (stdout, stderr) = (rest.get(..len)?, rest.get(len..)?);
        Some(Ran { status: exit_status(code)?, stdout: stdout.to_vec(), stderr: stderr.to_vec() })
    }
}

#[cfg(unix)]
fn exit_status(code: i32) -> Option<std::process::ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    Some(std::process::ExitStatus::from_raw((code & 0xff) << 8))
}

#[cfg(not(unix))]
fn exit_status(_code: i32) -> Option<std::process::ExitStatus> {
    None
}

/// The cache entry of a run of `bytes` on the batch's architecture and base address, when
/// the tool's binary can be named.
fn kept_reply(dir: &Path, nv: &Nvdisasm, b: &Batch, bytes: &[u8]) -> Option<cache::Entry> {
    let key = nv.reply_key(&format!("-b {} -hex --base-address {:#x}", b.arch, b.base), bytes)?;
    Some(cache::Entry::new(dir, &format!("-{}", b.arch), key))
}

impl Nvdisasm {
    /// The key of a kept reply ([`Nvdisasm::cache`]): this binary ([`cache::tool_stamp`];
    /// `None` when it cannot be named), its `--version`, the arguments and the input's
    /// bytes. Raw-mode runs and cubin listings
    /// ([`crate::oracle::gpu::dryrun::cubin_listing`]) both key their replies so.
    pub(crate) fn reply_key(&self, args: &str, input: &[u8]) -> Option<Vec<u8>> {
        let head = format!("nvdisasm {}\n--version: {}\n{args}\ninput ({} bytes):\n", cache::tool_stamp(&self.path)?, self.version, input.len());
        let mut key = head.into_bytes();
        key.extend_from_slice(input);
        Some(key)
    }
}

/// The message of a word nvdisasm rejected without naming its address.
pub const UNADDRESSED: &str = "Illegal instruction found";

/// Whether stderr says nothing but `Illegal instruction found` (with no address).
fn only_unaddressed_illegal(stderr: &str) -> bool {
    let mut lines = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).peekable();
    lines.peek().is_some() && lines.all(|l| l.trim_start_matches("nvdisasm error").trim_start().trim_start_matches(':').trim() == UNADDRESSED)
}

/// One chunk of words and where it sits.
struct Batch<'a> {
    arch: &'a str,
    base: u64,
    words: &'a [Word],
}

/// A round's result: the listing, or (offset → messages) for the illegal words it named,
/// and the whole stderr once (for messages about a bad address).
type RoundResult = (Option<String>, BTreeMap<u64, Vec<String>>, String);

/// A chunk between rounds: the words sent (illegal ones replaced by NOPs) and the
/// outcomes known so far.
struct ChunkState<'a> {
    words: &'a [Word],
    filler: Word,
    current: Vec<Word>,
    done: Vec<Option<Outcome>>,
}

impl<'a> ChunkState<'a> {
    fn new(words: &'a [Word], filler: Word) -> Self {
        ChunkState { words, filler, current: words.to_vec(), done: vec![None; words.len()] }
    }

    fn all_done(&self) -> bool {
        self.done.iter().all(Option::is_some)
    }

    fn into_outcomes(self) -> Vec<Outcome> {
        self.done.into_iter().map(|d| d.unwrap_or(Outcome::Silent)).collect()
    }

    /// Records the named words as illegal and puts NOPs in their place; an address that
    /// is not a word of this round is a tool fault.
    fn replace_illegal(&mut self, reported: BTreeMap<u64, Vec<String>>, stderr: &str, base: &u64) -> Result<(), BatchFault> {
        let n = self.words.len() as u64;
        for &addr in reported.keys() {
            let why = if addr % 16 != 0 {
                "an unaligned address"
            } else if addr / 16 == n {
                "the sentinel NOP's address"
            } else if addr / 16 > n {
                "an address past the end of the batch"
            } else if self.done[(addr / 16) as usize].is_some() {
                "an address already replaced by a NOP"
            } else {
                continue;
            };
            return Err(BatchFault::BadAddress { why, addr: base.wrapping_add(addr), stderr: excerpt(stderr) });
        }
        for (addr, lines) in reported {
            let i = (addr / 16) as usize;
            self.done[i] = Some(Outcome::Illegal { message: lines.join("\n") });
            self.current[i] = self.filler;
        }
        Ok(())
    }

    /// Maps a clean listing back to the words: printed, or silent where no line has the
    /// word's address. The sentinel must be there, and every printed hex must be the
    /// word sent.
    fn finish(mut self, b: &Batch, stdout: &str) -> Result<Vec<Outcome>, BatchFault> {
        let mut by_addr: BTreeMap<u64, (String, Option<Word>)> = BTreeMap::new();
        for (addr, text, hex) in parse_listing(stdout) {
            if by_addr.insert(addr.wrapping_sub(b.base), (text, hex)).is_some() {
                return Err(BatchFault::DuplicateAddress { addr });
            }
        }
        let sentinel = self.words.len() as u64 * 16;
        match by_addr.get(&sentinel) {
            Some((_, Some(h))) if *h == self.filler => {}
            _ => return Err(BatchFault::NoSentinel { addr: b.base.wrapping_add(sentinel), stdout: excerpt(stdout) }),
        }
        for (i, d) in self.done.iter_mut().enumerate().filter(|(_, d)| d.is_none()) {
            let sent = self.words[i];
            *d = Some(match by_addr.remove(&(i as u64 * 16)) {
                None => Outcome::Silent,
                Some((text, Some(h))) if h == sent => Outcome::Printed { text },
                Some((text, h)) => {
                    let shown = h.map(|h| h.hex()).unwrap_or_else(|| "none".into());
                    let addr = b.base.wrapping_add(i as u64 * 16);
                    return Err(BatchFault::HexMismatch { addr, text, shown, sent: sent.hex() });
                }
            });
        }
        Ok(self.into_outcomes())
    }
}

/// A fresh directory under the system temp dir, removed on drop (also when a run ends
/// with an error or an interrupt).
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, NvdisasmError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let k = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("sass-harness-nvdisasm-{}-{k}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(NvdisasmError::TempDir { dir: base, err: e.to_string() }),
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nv() -> Nvdisasm {
        Nvdisasm::locate().expect("nvdisasm is required: bash ci/install-cuda-tools.sh")
    }
    fn w(low: u64, high: u64) -> Word {
        Word(((high as u128) << 64) | low as u128)
    }
    /// `@P0 DFMA Rd, R0, R0, Rc` with Rd in bits 16..23 and Rc in high bits 0..7.
    fn dfma(rd: u8, rc: u8) -> Word {
        w(0x22b | (rd as u64) << 16, rc as u64)
    }
    impl Nvdisasm {
        fn dis(&self, arch: &str, words: &[Word]) -> Vec<Outcome> {
            self.disassemble(arch, words).unwrap_or_else(|e| panic!("{e}"))
        }
        fn dis_at(&self, arch: &str, base: u64, words: &[Word]) -> Vec<Outcome> {
            self.disassemble_at(arch, base, words).unwrap_or_else(|e| panic!("{e}"))
        }
    }
    fn printed(t: &str) -> Outcome {
        Outcome::Printed { text: t.into() }
    }
    /// A word nvdisasm 13.5 neither prints nor rejects on SM90 (found by random search).
    const SILENT_SM90: Word = Word(0x0000_01b8_fc28_6e97_a02a_c240_ae41_bc78);

    #[test]
    fn nop_prints_as_nop() {
        let d = nv();
        for arch in ["SM90", "SM100"] {
            assert_eq!(d.dis(arch, &[nop(arch)]), vec![printed("NOP;")], "{arch}");
        }
    }

    #[test]
    fn legal_words_print_in_order_and_last_word_survives() {
        let d = nv();
        let words = [dfma(0, 0), dfma(0, 1), nop("SM90"), dfma(7, 3)];
        let out = d.dis("SM90", &words);
        assert_eq!(
            out,
            vec![printed("@P0 DFMA R0, R0, R0, R0 ;"), printed("@P0 DFMA R0, R0, R0, R1 ;"), printed("NOP;"), printed("@P0 DFMA R7, R0, R0, R3 ;"),]
        );
        // A single word: the sentinel keeps it printed.
        assert_eq!(d.dis("SM100", &[dfma(2, 0)]), vec![printed("@P0 DFMA R2, R0, R0, R0 ;")]);
        assert!(d.dis("SM90", &[]).is_empty());
    }

    #[test]
    fn illegal_words_are_reported_exactly() {
        let d = nv();
        let all_ones = Word(u128::MAX);
        let words = [dfma(1, 0), all_ones, dfma(2, 0), all_ones, all_ones, dfma(3, 0)];
        let out = d.dis("SM90", &words);
        assert_eq!(out.len(), words.len());
        for (i, o) in out.iter().enumerate() {
            if words[i] == all_ones {
                match o {
                    Outcome::Illegal { message } => {
                        assert_eq!(message, "Unrecognized operation for functional unit 'uC'", "{i}")
                    }
                    o => panic!("{i}: expected Illegal, got {o:?}"),
                }
            }
        }
        assert_eq!(out[0], printed("@P0 DFMA R1, R0, R0, R0 ;"));
        assert_eq!(out[2], printed("@P0 DFMA R2, R0, R0, R0 ;"));
        assert_eq!(out[5], printed("@P0 DFMA R3, R0, R0, R0 ;"));
    }

    /// A screen settles the words its run names illegal and, where nothing is illegal,
    /// every word; the words it leaves, sent again with NOPs for the settled ones (in any
    /// batch), print as `disassemble` prints them.
    #[test]
    fn a_screen_settles_the_illegal_words_and_the_rest_print_as_disassembled() {
        let d = nv();
        let all_ones = Word(u128::MAX);
        let words = [dfma(1, 0), all_ones, dfma(2, 0), all_ones, dfma(3, 0)];
        let screened = d.screen("SM90", 0, &words).unwrap();
        let settled: Vec<bool> = screened.iter().map(Option::is_some).collect();
        assert_eq!(settled, [false, true, false, true, false]);
        let full = d.dis("SM90", &words);
        assert_eq!(screened[1].as_ref(), Some(&full[1]));
        let again: Vec<Word> = words.iter().zip(&screened).map(|(&w, s)| if s.is_some() { nop("SM90") } else { w }).collect();
        let mut with_more = again.clone();
        with_more.extend([dfma(4, 0); 3]);
        let outs = d.dis("SM90", &with_more);
        let merged: Vec<Outcome> = screened.into_iter().zip(outs).map(|(s, o)| s.unwrap_or(o)).collect();
        assert_eq!(merged, full);
        let clean = d.screen("SM90", 0, &[dfma(1, 0), dfma(2, 0)]).unwrap();
        assert_eq!(clean, vec![Some(printed("@P0 DFMA R1, R0, R0, R0 ;")), Some(printed("@P0 DFMA R2, R0, R0, R0 ;"))]);
    }

    #[test]
    fn words_rejected_without_an_address_are_found_by_halving() {
        // nvdisasm 13.5 rejects these SM100 words (opcode 0, bit 74 or 76) with a bare
        // `Illegal instruction found`: no address, exit status 1.
        let d = nv();
        let bare = [Word(0x000fc000000004000000000000000000), Word(0x000fc000000010000000000000000000)];
        let dfma = Word(0x000fc00000000000000000000000022b);
        let words = [dfma, bare[0], dfma, dfma, bare[1], dfma, dfma];
        let out = d.dis("SM100", &words);
        for (i, (w, o)) in words.iter().zip(&out).enumerate() {
            if bare.contains(w) {
                assert_eq!(*o, Outcome::Illegal { message: UNADDRESSED.into() }, "{i}");
            } else {
                assert!(matches!(o, Outcome::Printed { text } if text.contains("DFMA")), "{i}: {o:?}");
            }
        }
        // A tool that says only that, for every word, is believed word by word; a crash is not.
        let (d, dir) = fake("nvd-bare", "echo 'nvdisasm error   : Illegal instruction found' >&2; exit 1");
        assert_eq!(d.dis("SM90", &[dfma, dfma]), vec![Outcome::Illegal { message: UNADDRESSED.into() }; 2]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn illegal_messages_name_the_reason_not_the_address() {
        let mut d = nv();
        // Random SM100 words rejected for their control bits (opex tables).
        let nop_opex = Word(0x463fb7d63314ecfbcd3520dbc45a2918);
        let dfma_opex = Word(0x28b33add538396fb45e59272edfd082b);
        let words = [dfma(1, 0), nop_opex, Word(u128::MAX), dfma_opex, dfma(2, 0)];
        for jobs in [1, 4] {
            d.jobs = jobs;
            let out = d.dis("SM100", &words);
            let illegal = |m: &str| Outcome::Illegal { message: m.into() };
            assert_eq!(
                out,
                vec![
                    printed("@P0 DFMA R1, R0, R0, R0 ;"),
                    illegal("Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1'"),
                    illegal("Unrecognized operation for functional unit 'uC'"),
                    illegal("Opclass 'dfma__RsIR_RIR', undefined value 0x5d for table 'TABLES_opex_3'"),
                    printed("@P0 DFMA R2, R0, R0, R0 ;"),
                ],
                "jobs={jobs}"
            );
        }
        // All illegal: no second run needed, nothing else reported.
        d.jobs = 1;
        let out = d.dis("SM90", &[Word(u128::MAX); 3]);
        assert!(out.iter().all(|o| matches!(o, Outcome::Illegal { .. })), "{out:?}");
    }

    #[test]
    fn pc_relative_text_follows_the_word_index_not_the_chunk() {
        // `BRA` to itself (offset -16 from the next instruction), from a ptxas cubin.
        let bra = Word(0x000fc0000383ffff_fffffffc00fc7947);
        let mut d = nv();
        let words = vec![bra; 7];
        for jobs in [1, 3] {
            d.jobs = jobs;
            let out = d.dis("SM90", &words);
            let want: Vec<Outcome> = (0..7).map(|i| printed(&format!("BRA {:#x};", i * 16))).collect();
            assert_eq!(out, want, "jobs={jobs}");
        }
        d.jobs = 2;
        let out = d.dis_at("SM90", 0x1000, &[bra, Word(u128::MAX), bra]);
        assert_eq!(out[0], printed("BRA 0x1000;"));
        assert!(matches!(out[1], Outcome::Illegal { .. }), "{:?}", out[1]);
        assert_eq!(out[2], printed("BRA 0x1020;"));
    }

    #[test]
    fn silent_words_do_not_shift_neighbours() {
        let d = nv();
        // In the middle, and last (where only the sentinel keeps the mapping honest).
        let words = [dfma(1, 0), SILENT_SM90, dfma(2, 0), SILENT_SM90];
        assert_eq!(d.dis("SM90", &words), vec![printed("@P0 DFMA R1, R0, R0, R0 ;"), Outcome::Silent, printed("@P0 DFMA R2, R0, R0, R0 ;"), Outcome::Silent]);
    }

    #[test]
    fn many_words_on_many_jobs_keep_order() {
        let mut d = nv();
        d.jobs = 3;
        d.min_chunk = 1000;
        // R255 is RZ, so stay below it.
        let words: Vec<Word> = (0..5000).map(|i| dfma((i % 255) as u8, 0)).collect();
        let out = d.dis("SM90", &words);
        assert_eq!(out.len(), words.len());
        for (i, o) in out.iter().enumerate() {
            let want = format!("@P0 DFMA R{}, R0, R0, R0 ;", i % 255);
            assert_eq!(*o, printed(&want), "word {i}");
        }
    }

    #[test]
    fn bad_arch_is_an_error_naming_it() {
        let e = nv().disassemble("SM50", &[dfma(0, 0), dfma(1, 0)]).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, NvdisasmError::Batch { retried: true, .. }), "{m}");
        assert!(m.contains("SM50") && m.contains("2 words") && m.contains("exit status"), "{m}");
    }

    #[test]
    fn timeout_is_an_error() {
        let mut d = nv();
        d.timeout = Duration::from_millis(1);
        let e = d.disassemble("SM90", &[dfma(0, 0)]).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
    }

    /// A fake nvdisasm: a shell script in a fresh folder.
    fn fake(tag: &str, script: &str) -> (Nvdisasm, PathBuf) {
        let dir = crate::oracle::ptxas::test_support::scratch(tag);
        let path = dir.join("nvdisasm");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut d = nv();
        d.path = path;
        // Each run a process: these tests are about how one process fails or is counted.
        d.serve = false;
        (d, dir)
    }

    #[test]
    fn crashes_and_silent_failures_are_errors_not_outcomes() {
        for (script, want) in [
            ("exit 1", "exit status 1"),
            ("echo 'Segmentation fault' >&2; kill -SEGV $$", "killed by signal 11"),
            ("echo 'nvdisasm fatal : out of memory' >&2; exit 3", "out of memory"),
        ] {
            let (d, dir) = fake("nvd-crash", script);
            let e = d.disassemble("SM90", &[dfma(3, 0), dfma(4, 0)]).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, NvdisasmError::Batch { retried: true, .. }), "{m}");
            for part in [want, "SM90", &d.path.display().to_string(), &dfma(3, 0).to_string(), "2 words"] {
                assert!(m.contains(part), "{script}: {part:?} not in {m}");
            }
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn a_crash_is_retried_once() {
        let real = nv().path;
        let (d, dir) = fake("nvd-retry", "");
        let once = dir.join("crashed");
        let script = format!("#!/bin/sh\nif [ ! -e {o} ]; then touch {o}; kill -SEGV $$; fi\nexec {r} \"$@\"\n", o = once.display(), r = real.display());
        std::fs::write(&d.path, script).unwrap();
        assert_eq!(d.dis("SM90", &[dfma(5, 0)]), vec![printed("@P0 DFMA R5, R0, R0, R0 ;")]);
        assert!(once.exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn hung_tools_and_floods_end_in_errors_quickly() {
        let t = std::time::Instant::now();
        for (script, want, secs) in [("sleep 100000 & exec sleep 100000", "timed out", 0.5), ("exec yes", "more than", 60.0)] {
            let (mut d, dir) = fake("nvd-hang", script);
            d.timeout = Duration::from_secs_f64(secs);
            let t = std::time::Instant::now();
            let e = d.disassemble("SM90", &[dfma(0, 0)]).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            eprintln!("{script}: {:?}", t.elapsed());
            let _ = std::fs::remove_dir_all(dir);
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }

    /// A kept reply answers the same run (binary, architecture, base, words) without a
    /// process, and gives what the process gave: a listing, and illegal words found in
    /// rounds. Another base or word runs nvdisasm again; a crash is never kept.
    #[test]
    fn kept_replies_answer_only_the_same_run() {
        let real = nv().path;
        let (mut d, dir) = fake("nvd-cache", "");
        let log = dir.join("runs.log");
        let script = format!("#!/bin/sh\necho \"$*\" >> {l}\nexec {r} \"$@\"\n", l = log.display(), r = real.display());
        std::fs::write(&d.path, script).unwrap();
        d.cache = Some(dir.join("cache"));
        let runs = || std::fs::read_to_string(&log).map_or(0, |t| t.lines().count());
        let illegal = Word(u128::MAX);
        let words = [dfma(5, 0), illegal, dfma(6, 0)];
        let first = d.disassemble("SM90", &words).unwrap();
        assert!(matches!(first[1], Outcome::Illegal { .. }), "{first:?}");
        let started = runs();
        assert_eq!(d.disassemble("SM90", &words).unwrap(), first);
        assert_eq!(runs(), started, "the same run again starts no process");
        assert_eq!(d.disassemble_at("SM90", 0x100, &words).unwrap(), first);
        assert!(runs() > started, "another base address runs nvdisasm");
        let again = runs();
        d.disassemble("SM90", &[dfma(5, 0), dfma(7, 0)]).unwrap();
        assert!(runs() > again, "other words run nvdisasm");
        // A stand-in that crashes once: its crash is retried, never kept.
        let once = dir.join("crashed");
        let crash = format!(
            "#!/bin/sh\necho \"$*\" >> {l}\nif [ ! -e {o} ]; then touch {o}; kill -SEGV $$; fi\nexec {r} \"$@\"\n",
            l = log.display(),
            o = once.display(),
            r = real.display()
        );
        std::fs::write(&d.path, crash).unwrap();
        let before = runs();
        assert_eq!(d.dis("SM90", &[dfma(8, 0)]), vec![printed("@P0 DFMA R8, R0, R0, R0 ;")]);
        assert_eq!(runs(), before + 2, "the crash and its retry");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_listing_that_lies_is_an_error() {
        // Succeeds, prints nothing: the sentinel is missing.
        let (d, dir) = fake("nvd-empty", "exit 0");
        let e = d.disassemble("SM90", &[dfma(0, 0)]).unwrap_err();
        assert!(matches!(&e, NvdisasmError::Batch { fault, .. } if matches!(**fault, BatchFault::NoSentinel { .. })), "{e}");
        // Names an address that is not a word of the batch.
        let (d, dir2) = fake("nvd-addr", "echo 'nvdisasm error : bad at address 0x00000400' >&2; exit 1");
        let e = d.disassemble("SM90", &[dfma(0, 0)]).unwrap_err();
        assert!(e.to_string().contains("past the end"), "{e}");
        let _ = (std::fs::remove_dir_all(dir), std::fs::remove_dir_all(dir2));
    }
}
