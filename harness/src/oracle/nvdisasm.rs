//! The nvdisasm oracle: what NVIDIA's disassembler prints for raw instruction words.
//!
//! Raw mode (`nvdisasm -b SM90 -hex words.bin`, a file of 16-byte little-endian words)
//! costs about 0.3–0.55 s per process plus ~20 µs per word, so words are sent in large
//! batches and several processes run at once.
//!
//! Behaviours this module relies on (nvdisasm 13.5):
//! - One illegal word anywhere in a file makes stdout empty and the exit status 1; stderr
//!   then has one line per bad word naming `at address 0x00000010` (plus, for some kinds,
//!   a separate `Illegal instruction found` line that names no address). All bad
//!   addresses are reported in one run. We record them, put a NOP in their place and run
//!   the batch again.
//! - Some words are *silent*: no listing line and no error. In the middle of a listing
//!   their two `/* 0x… */` hex comments still appear (without an address); at the very
//!   end of a file even those vanish, so every batch ends with a sentinel NOP.
//! - Instruction lines look like
//!   `        /*0010*/               @P0 DFMA R0, R0, R0, R1 ;      /* 0x000000000000022b */`
//!   followed by a line holding only `/* 0x0000000000000001 */` (the high 64 bits).
//!   Addresses grow past four digits (`/*4e200*/`) in large files.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::tools::{self, Tool, ToolError};
use crate::word::Word;

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
/// Default wall-clock limit per nvdisasm process.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

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
    /// The tool crashed, timed out, failed without naming addresses, or printed
    /// something we could not map back to the word.
    ToolFailure { message: String },
}

#[derive(Clone, Debug)]
pub struct Nvdisasm {
    pub path: PathBuf,
    pub version: String,
    /// Processes run at once.
    pub jobs: usize,
    /// Wall-clock limit per process.
    pub timeout: Duration,
    /// Fewest words per process ([`MIN_CHUNK`]; lowered by tests to force many chunks).
    pub min_chunk: usize,
}

impl Nvdisasm {
    /// Find nvdisasm (see [`tools::locate`]) and read its version; `jobs` is the number
    /// of available cores.
    pub fn locate() -> Result<Nvdisasm, ToolError> {
        let path = tools::locate(Tool::Nvdisasm)?;
        let version = tools::version(&path)?;
        let jobs = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Ok(Nvdisasm {
            path,
            version,
            jobs,
            timeout: DEFAULT_TIMEOUT,
            min_chunk: MIN_CHUNK,
        })
    }

    /// Disassemble `words` for `arch` (`"SM90"`, `"SM100"`, … as `nvdisasm -b` takes it).
    /// The result has the same length and order as `words`. Word `i` is disassembled at
    /// address `16 * i`, whatever the chunking: PC-relative operands (`BRA 0x10`, `LEPC
    /// R104, 0x…`) print targets computed from that address.
    pub fn disassemble(&self, arch: &str, words: &[Word]) -> Vec<Outcome> {
        self.disassemble_at(arch, 0, words)
    }

    /// Like [`Nvdisasm::disassemble`], with word `i` at address `base + 16 * i`
    /// (`nvdisasm --base-address`).
    pub fn disassemble_at(&self, arch: &str, base: u64, words: &[Word]) -> Vec<Outcome> {
        if words.is_empty() {
            return vec![];
        }
        let jobs = self.jobs.max(1);
        let chunk = words.len().div_ceil(jobs).max(self.min_chunk.max(1)).min(MAX_CHUNK);
        let chunks: Vec<&[Word]> = words.chunks(chunk).collect();
        let dir = match TempDir::new() {
            Ok(d) => d,
            Err(e) => {
                let message = format!("cannot create a temporary directory: {e}");
                return vec![Outcome::ToolFailure { message }; words.len()];
            }
        };
        let results: Vec<Mutex<Option<Vec<Outcome>>>> =
            chunks.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let workers = jobs.min(chunks.len());
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= chunks.len() {
                        break;
                    }
                    let start = base.wrapping_add((i * chunk) as u64 * 16);
                    let out = self.run_chunk(arch, start, chunks[i], &dir.path, i);
                    *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
                });
            }
        });
        let mut out = Vec::with_capacity(words.len());
        for (r, c) in results.into_iter().zip(&chunks) {
            match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(v) if v.len() == c.len() => out.extend(v),
                _ => {
                    let message = "internal: a worker produced no result for its chunk".to_string();
                    out.extend(std::iter::repeat_n(
                        Outcome::ToolFailure { message },
                        c.len(),
                    ));
                }
            }
        }
        out
    }

    /// One chunk: run, replace illegal words by NOPs, run again, until clean.
    fn run_chunk(
        &self,
        arch: &str,
        base: u64,
        words: &[Word],
        dir: &Path,
        chunk_no: usize,
    ) -> Vec<Outcome> {
        let n = words.len();
        let filler = nop(arch);
        let mut current: Vec<Word> = words.to_vec();
        let mut done: Vec<Option<Outcome>> = vec![None; n];
        let fail_rest = |done: &mut Vec<Option<Outcome>>, message: String| {
            for d in done.iter_mut().filter(|d| d.is_none()) {
                *d = Some(Outcome::ToolFailure {
                    message: message.clone(),
                });
            }
        };
        for round in 0..MAX_ROUNDS {
            let file = dir.join(format!("chunk{chunk_no}-round{round}.bin"));
            let mut bytes = Vec::with_capacity((n + 1) * 16);
            for w in current.iter().chain(std::iter::once(&filler)) {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
            if let Err(e) = std::fs::write(&file, &bytes) {
                fail_rest(&mut done, format!("cannot write {}: {e}", file.display()));
                break;
            }
            let run = run_with_timeout(
                Command::new(&self.path)
                    .arg("-b")
                    .arg(arch)
                    .arg("-hex")
                    .arg("--base-address")
                    .arg(format!("{base:#x}"))
                    .arg(&file),
                self.timeout,
            );
            let _ = std::fs::remove_file(&file);
            let run = match run {
                Ok(r) => r,
                Err(message) => {
                    fail_rest(&mut done, message);
                    break;
                }
            };
            if run.success {
                let listing = parse_listing(&run.stdout);
                let mut by_addr: BTreeMap<u64, (String, Option<Word>)> = BTreeMap::new();
                let mut duplicate = None;
                // Keys are offsets from the chunk's base address.
                for (addr, text, hex) in listing {
                    let addr = addr.wrapping_sub(base);
                    if by_addr.insert(addr, (text, hex)).is_some() {
                        duplicate = Some(addr);
                    }
                }
                if let Some(a) = duplicate {
                    fail_rest(
                        &mut done,
                        format!("nvdisasm printed address {:#x} twice", base.wrapping_add(a)),
                    );
                    break;
                }
                let sentinel = (n as u64) * 16;
                match by_addr.get(&sentinel) {
                    Some((_, Some(h))) if *h == filler => {}
                    _ => {
                        fail_rest(
                            &mut done,
                            format!(
                                "the sentinel NOP at {:#x} is missing from nvdisasm's output: {}",
                                base.wrapping_add(sentinel),
                                excerpt(&run.stdout)
                            ),
                        );
                        break;
                    }
                }
                for (i, d) in done.iter_mut().enumerate() {
                    if d.is_some() {
                        continue;
                    }
                    *d = Some(match by_addr.get(&((i as u64) * 16)) {
                        None => Outcome::Silent,
                        Some((text, Some(h))) if *h == words[i] => {
                            Outcome::Printed { text: text.clone() }
                        }
                        Some((text, h)) => Outcome::ToolFailure {
                            message: format!(
                                "listing at {:#x} ({text}) shows hex {} but the word sent was {}",
                                base.wrapping_add(i as u64 * 16),
                                h.map(|h| h.hex()).unwrap_or_else(|| "none".into()),
                                words[i].hex()
                            ),
                        },
                    });
                }
                return done.into_iter().map(|d| d.expect("all resolved")).collect();
            }
            // Failure: expect addresses of illegal words on stderr.
            // Keys are offsets from the chunk's base address; below the base wraps to huge.
            let reported: BTreeMap<u64, Vec<String>> = parse_errors(&run.stderr)
                .into_iter()
                .map(|(a, m)| (a.wrapping_sub(base), m))
                .collect();
            if reported.is_empty() {
                fail_rest(
                    &mut done,
                    format!(
                        "nvdisasm failed ({}) without naming an address: {}",
                        run.status,
                        excerpt(&run.stderr)
                    ),
                );
                break;
            }
            let mut bad = None;
            for addr in reported.keys() {
                let i = usize::try_from(addr / 16).unwrap_or(usize::MAX);
                if addr % 16 != 0 || i >= n || done[i].is_some() {
                    bad = Some(*addr);
                    break;
                }
            }
            if let Some(a) = bad {
                let why = if a % 16 != 0 {
                    "an unaligned address"
                } else if a / 16 == n as u64 {
                    "the sentinel NOP's address"
                } else if a / 16 > n as u64 {
                    "an address past the end of the batch"
                } else {
                    "an address already replaced by a NOP"
                };
                fail_rest(
                    &mut done,
                    format!(
                        "nvdisasm reported {why} ({:#x}): {}",
                        base.wrapping_add(a),
                        excerpt(&run.stderr)
                    ),
                );
                break;
            }
            for (addr, lines) in reported {
                let i = (addr / 16) as usize;
                done[i] = Some(Outcome::Illegal {
                    message: lines.join("\n"),
                });
                current[i] = filler;
            }
            if done.iter().all(Option::is_some) {
                break;
            }
        }
        fail_rest(
            &mut done,
            format!("still illegal words after {MAX_ROUNDS} rounds"),
        );
        done.into_iter().map(|d| d.expect("all resolved")).collect()
    }
}

/// An stderr line without what depends on the batch: the `nvdisasm error   : ` prefix
/// and the ` at address 0x…` suffix (addresses are relative to the chunk's file, so they
/// would change with `jobs`). `nvdisasm error   : Opclass 'nop_', undefined value 0x3b
/// for table 'TABLES_opex_1' at address 0x00000a50` → `Opclass 'nop_', undefined value
/// 0x3b for table 'TABLES_opex_1'`.
pub fn error_message(line: &str) -> String {
    let mut m = line.trim();
    if let Some(rest) = m.strip_prefix("nvdisasm") {
        if let Some(colon) = rest.find(':') {
            if rest[..colon]
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphabetic())
            {
                m = rest[colon + 1..].trim_start();
            }
        }
    }
    if let Some(pos) = m.rfind(" at address ") {
        m = m[..pos].trim_end();
    }
    m.to_string()
}

/// stderr lines that name an address, grouped by address (in order of appearance), as
/// [`error_message`]s.
fn parse_errors(stderr: &str) -> BTreeMap<u64, Vec<String>> {
    let mut out: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in stderr.lines() {
        let Some(pos) = line.find("at address ") else {
            continue;
        };
        let rest = line[pos + "at address ".len()..].trim_start();
        let rest = rest
            .strip_prefix("0x")
            .or_else(|| rest.strip_prefix("0X"))
            .unwrap_or(rest);
        let digits: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        if let Ok(a) = u64::from_str_radix(&digits, 16) {
            out.entry(a).or_default().push(error_message(line));
        }
    }
    out
}

/// Instruction lines of an nvdisasm listing (raw `-b` output or a cubin's): the address,
/// the text (trimmed, spacing before `;` kept) and, with `-hex`, the word from the two
/// hex comments. Labels, directives (`.byte …` even when addressed), section banners and
/// the orphan hex comments of silent words are skipped.
pub fn parse_listing(stdout: &str) -> Vec<(u64, String, Option<Word>)> {
    let mut out: Vec<(u64, String, Option<Word>)> = vec![];
    // Index into `out` of an instruction whose low half came on its own line and whose
    // high half is expected on the very next line.
    let mut awaiting_high: Option<(usize, u64)> = None;
    for line in stdout.lines() {
        let t = line.trim();
        if let Some(v) = comment_only(t) {
            if let Some((k, low)) = awaiting_high.take() {
                out[k].2 = Some(Word(((v as u128) << 64) | low as u128));
            }
            continue;
        }
        awaiting_high = None;
        let Some((addr, rest)) = address_prefix(t) else {
            continue;
        };
        let (body, low) = split_hex_comment(rest);
        let text = body.trim();
        if text.is_empty() || text.starts_with('.') {
            continue;
        }
        out.push((addr, normalise_text(text), None));
        if let Some(low) = low {
            awaiting_high = Some((out.len() - 1, low));
        }
    }
    out
}

/// nvdisasm pads an unnamed enum value (`???1`) with spaces that depend on the widest
/// line in the whole listing, so the same word prints differently in different batches
/// (`[R195],     ???1` alone, ~100 spaces in a 30000-word batch). Collapse the blanks
/// before `???` to one space; all other spacing (`+INF  ;`, `+INF ,`) is stable and kept.
fn normalise_text(text: &str) -> String {
    if !text.contains("???") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("???") {
        let before = &rest[..pos];
        let trimmed = before.trim_end_matches([' ', '\t']);
        out.push_str(trimmed);
        if trimmed.len() < before.len() {
            out.push(' ');
        }
        out.push_str("???");
        rest = &rest[pos + 3..];
    }
    out.push_str(rest);
    out
}

/// `/*0010*/ rest` → (0x10, rest).
fn address_prefix(t: &str) -> Option<(u64, &str)> {
    let inner = t.strip_prefix("/*")?;
    let end = inner.find("*/")?;
    let a = inner[..end].trim();
    if a.is_empty() || !a.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some((u64::from_str_radix(a, 16).ok()?, &inner[end + 2..]))
}

/// A trimmed line that is only `/* 0x0123… */`.
fn comment_only(t: &str) -> Option<u64> {
    let inner = t.strip_prefix("/*")?.strip_suffix("*/")?.trim();
    let h = inner.strip_prefix("0x")?;
    if h.is_empty() || h.len() > 16 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

/// `text ;      /* 0x… */` → (`text ;      `, Some(low)); without a trailing hex comment,
/// (rest, None).
fn split_hex_comment(rest: &str) -> (&str, Option<u64>) {
    let r = rest.trim_end();
    if let Some(pos) = r.rfind("/*") {
        if let Some(v) = comment_only(&r[pos..]) {
            return (&r[..pos], Some(v));
        }
    }
    (rest, None)
}

fn excerpt(s: &str) -> String {
    let s = s.trim();
    if s.is_empty() {
        return "(no output)".into();
    }
    let mut e: String = s.chars().take(400).collect();
    if e.len() < s.len() {
        e.push('…');
    }
    e
}

struct RunOutput {
    success: bool,
    status: String,
    stdout: String,
    stderr: String,
}

/// Run to completion or kill at `timeout`. Err only when the tool could not be run or
/// was killed.
fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Result<RunOutput, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start nvdisasm: {e}"))?;
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let (status, stdout, stderr) = std::thread::scope(|s| {
        let ho = s.spawn(move || {
            let mut b = Vec::new();
            if let Some(p) = so.as_mut() {
                let _ = p.read_to_end(&mut b);
            }
            b
        });
        let he = s.spawn(move || {
            let mut b = Vec::new();
            if let Some(p) = se.as_mut() {
                let _ = p.read_to_end(&mut b);
            }
            b
        });
        let start = Instant::now();
        let mut nap = Duration::from_millis(2);
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Ok(st),
                Ok(None) if start.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!(
                        "nvdisasm timed out after {:.1} s and was killed",
                        timeout.as_secs_f64()
                    ));
                }
                Ok(None) => {
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(Duration::from_millis(20));
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!("waiting for nvdisasm failed: {e}"));
                }
            }
        };
        (
            status,
            ho.join().unwrap_or_default(),
            he.join().unwrap_or_default(),
        )
    });
    let status = status?;
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    if status.code().is_none() {
        return Err(format!(
            "nvdisasm was killed ({status}): {}",
            excerpt(&stderr)
        ));
    }
    Ok(RunOutput {
        success: status.success(),
        status: status.to_string(),
        stdout,
        stderr,
    })
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let k = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("sass-harness-nvdisasm-{}-{k}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
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
    fn printed(t: &str) -> Outcome {
        Outcome::Printed { text: t.into() }
    }
    /// A word nvdisasm 13.5 neither prints nor rejects on SM90 (found by random search).
    const SILENT_SM90: Word = Word(0x0000_01b8_fc28_6e97_a02a_c240_ae41_bc78);

    #[test]
    fn nop_prints_as_nop() {
        let d = nv();
        for arch in ["SM90", "SM100"] {
            assert_eq!(
                d.disassemble(arch, &[nop(arch)]),
                vec![printed("NOP;")],
                "{arch}"
            );
        }
    }

    #[test]
    fn legal_words_print_in_order_and_last_word_survives() {
        let d = nv();
        let words = [dfma(0, 0), dfma(0, 1), nop("SM90"), dfma(7, 3)];
        let out = d.disassemble("SM90", &words);
        assert_eq!(
            out,
            vec![
                printed("@P0 DFMA R0, R0, R0, R0 ;"),
                printed("@P0 DFMA R0, R0, R0, R1 ;"),
                printed("NOP;"),
                printed("@P0 DFMA R7, R0, R0, R3 ;"),
            ]
        );
        // A single word: the sentinel keeps it printed.
        assert_eq!(
            d.disassemble("SM100", &[dfma(2, 0)]),
            vec![printed("@P0 DFMA R2, R0, R0, R0 ;")]
        );
        assert!(d.disassemble("SM90", &[]).is_empty());
    }

    #[test]
    fn illegal_words_are_reported_exactly() {
        let d = nv();
        let all_ones = Word(u128::MAX);
        let words = [
            dfma(1, 0),
            all_ones,
            dfma(2, 0),
            all_ones,
            all_ones,
            dfma(3, 0),
        ];
        let out = d.disassemble("SM90", &words);
        assert_eq!(out.len(), words.len());
        for (i, o) in out.iter().enumerate() {
            if words[i] == all_ones {
                match o {
                    Outcome::Illegal { message } => {
                        assert_eq!(
                            message, "Unrecognized operation for functional unit 'uC'",
                            "{i}"
                        )
                    }
                    o => panic!("{i}: expected Illegal, got {o:?}"),
                }
            }
        }
        assert_eq!(out[0], printed("@P0 DFMA R1, R0, R0, R0 ;"));
        assert_eq!(out[2], printed("@P0 DFMA R2, R0, R0, R0 ;"));
        assert_eq!(out[5], printed("@P0 DFMA R3, R0, R0, R0 ;"));
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
            let out = d.disassemble("SM100", &words);
            let illegal = |m: &str| Outcome::Illegal { message: m.into() };
            assert_eq!(
                out,
                vec![
                    printed("@P0 DFMA R1, R0, R0, R0 ;"),
                    illegal("Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1'"),
                    illegal("Unrecognized operation for functional unit 'uC'"),
                    illegal(
                        "Opclass 'dfma__RsIR_RIR', undefined value 0x5d for table 'TABLES_opex_3'"
                    ),
                    printed("@P0 DFMA R2, R0, R0, R0 ;"),
                ],
                "jobs={jobs}"
            );
        }
        // All illegal: no second run needed, nothing else reported.
        d.jobs = 1;
        let out = d.disassemble("SM90", &[Word(u128::MAX); 3]);
        assert!(
            out.iter().all(|o| matches!(o, Outcome::Illegal { .. })),
            "{out:?}"
        );
    }

    #[test]
    fn pc_relative_text_follows_the_word_index_not_the_chunk() {
        // `BRA` to itself (offset -16 from the next instruction), from a ptxas cubin.
        let bra = Word(0x000fc0000383ffff_fffffffc00fc7947);
        let mut d = nv();
        let words = vec![bra; 7];
        for jobs in [1, 3] {
            d.jobs = jobs;
            let out = d.disassemble("SM90", &words);
            let want: Vec<Outcome> = (0..7)
                .map(|i| printed(&format!("BRA {:#x};", i * 16)))
                .collect();
            assert_eq!(out, want, "jobs={jobs}");
        }
        d.jobs = 2;
        let out = d.disassemble_at("SM90", 0x1000, &[bra, Word(u128::MAX), bra]);
        assert_eq!(out[0], printed("BRA 0x1000;"));
        assert!(matches!(out[1], Outcome::Illegal { .. }), "{:?}", out[1]);
        assert_eq!(out[2], printed("BRA 0x1020;"));
    }

    #[test]
    fn silent_words_do_not_shift_neighbours() {
        let d = nv();
        // In the middle, and last (where only the sentinel keeps the mapping honest).
        let words = [dfma(1, 0), SILENT_SM90, dfma(2, 0), SILENT_SM90];
        assert_eq!(
            d.disassemble("SM90", &words),
            vec![
                printed("@P0 DFMA R1, R0, R0, R0 ;"),
                Outcome::Silent,
                printed("@P0 DFMA R2, R0, R0, R0 ;"),
                Outcome::Silent
            ]
        );
    }

    #[test]
    fn many_words_on_many_jobs_keep_order() {
        let mut d = nv();
        d.jobs = 3;
        d.min_chunk = 1000;
        // R255 is RZ, so stay below it.
        let words: Vec<Word> = (0..5000).map(|i| dfma((i % 255) as u8, 0)).collect();
        let out = d.disassemble("SM90", &words);
        assert_eq!(out.len(), words.len());
        for (i, o) in out.iter().enumerate() {
            let want = format!("@P0 DFMA R{}, R0, R0, R0 ;", i % 255);
            assert_eq!(*o, printed(&want), "word {i}");
        }
    }

    #[test]
    fn bad_arch_is_a_tool_failure() {
        let d = nv();
        let out = d.disassemble("SM50", &[dfma(0, 0), dfma(1, 0)]);
        assert_eq!(out.len(), 2);
        for o in out {
            assert!(
                matches!(&o, Outcome::ToolFailure { message } if message.contains("SM50")),
                "{o:?}"
            );
        }
    }

    #[test]
    fn timeout_is_a_tool_failure() {
        let mut d = nv();
        d.timeout = Duration::from_millis(1);
        let out = d.disassemble("SM90", &[dfma(0, 0)]);
        assert!(
            matches!(&out[0], Outcome::ToolFailure { message } if message.contains("timed out")),
            "{out:?}"
        );
    }

    #[test]
    fn parse_listing_handles_raw_and_cubin_forms() {
        let listing = "\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90\"
//--------------------- .text.k                   --------------------------
\t.section\t.text.k,\"ax\",@progbits
        .global         k
k:
.text.k:
        /*0000*/ \t.byte\t0xff, 0xff, 0xff, 0xff
        /*0000*/               @P0 DFMA R0, R0, R0, +INF  ;      /* 0x000000000000022b */
                                                              /* 0x0000000000000001 */
                                                              /* 0xa02ac240ae41bc78 */
                                                              /* 0x000001b8fc286e97 */
.L_x_0:
        /*0020*/                   BRA `(.L_x_0);                          /* 0xfffffffc00fc7947 */
                                                                           /* 0x000fc0000383ffff */
        /*4e200*/                   NOP;                       /* 0x0000000000007918 */
                                                              /* 0x000fc00000000000 */
        /*4e210*/                   EXIT ;
";
        let got = parse_listing(listing);
        assert_eq!(
            got,
            vec![
                (
                    0x0,
                    "@P0 DFMA R0, R0, R0, +INF  ;".to_string(),
                    Some(w(0x22b, 1))
                ),
                (
                    0x20,
                    "BRA `(.L_x_0);".to_string(),
                    Some(w(0xfffffffc00fc7947, 0x000fc0000383ffff))
                ),
                (0x4e200, "NOP;".to_string(), Some(nop("SM90"))),
                (0x4e210, "EXIT ;".to_string(), None),
            ]
        );
        assert!(parse_listing("garbage /*zz*/\n/* 0xnothex */\n").is_empty());
        // Batch-dependent padding before `???` is collapsed.
        let wide = "        /*0000*/               @P3 SUQUERY.BA.1D P0, R31, [R195],                    ???1, UR24, 0x77 ; /* 0x191dd843c31f3fb3 */
                                                                                         /* 0x000001be2b907d09 */";
        assert_eq!(
            parse_listing(wide),
            vec![(
                0,
                "@P3 SUQUERY.BA.1D P0, R31, [R195], ???1, UR24, 0x77 ;".to_string(),
                Some(Word(0x000001be2b907d09191dd843c31f3fb3))
            )]
        );
    }

    #[test]
    fn parse_errors_groups_by_address() {
        let e = "nvdisasm error   : Unrecognized operation for functional unit 'uC' at address 0x00000010\n\
                 nvdisasm error   : Illegal instruction found\n\
                 nvdisasm error   : Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1' at address 0x00000a50\n";
        let m = parse_errors(e);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![0x10, 0xa50]);
        assert_eq!(
            m[&0x10],
            vec!["Unrecognized operation for functional unit 'uC'".to_string()]
        );
        assert_eq!(
            m[&0xa50],
            vec!["Opclass 'nop_', undefined value 0x3b for table 'TABLES_opex_1'".to_string()]
        );
    }
}
