//! Running an external tool with a time limit and bounded output.
//!
//! The child runs in its own process group, so a timeout, an output flood or an
//! interrupt kills everything it started, grandchildren included. Its pipes are read by
//! detached threads: a grandchild that keeps stdout open after the child exits cannot
//! make us wait (the group is killed once the child is gone, and the readers get a short
//! grace period after that, then are abandoned).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Environment variable: seconds an external tool may run before it is killed.
pub const TIMEOUT_VAR: &str = "SASS_HARNESS_TOOL_TIMEOUT";
/// Default wall-clock limit per tool process.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Most stdout read from a tool: a 100 000-word nvdisasm listing is about 125 MB.
pub const MAX_STDOUT: usize = 512 << 20;
/// Most stderr read from a tool: nvdisasm writes up to ~160 bytes per illegal word (an
/// address line and an `Illegal instruction found` line), 16 MB for a 100 000-word chunk
/// of illegal words; four times that is still a bounded read.
pub const MAX_STDERR: usize = 64 << 20;
/// How long the pipe readers get to finish after the child's group is killed: they only
/// drain what is left in the pipes, unless something outside the group holds them open.
const READER_GRACE: Duration = Duration::from_secs(5);

/// Set by the signal handler (see [`install_interrupt_handler`]); every running tool is
/// killed and its run ends with [`ProcessError::Interrupted`].
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    // A second signal ends the program at once.
    // SAFETY: signal() with SIG_DFL is async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// Turn the first SIGINT or SIGTERM into the [`interrupted`] flag: running tools are
/// killed, no new ones start, their temporaries are removed by their owners, and the
/// command ends with an error. A second signal kills the program as usual.
pub fn install_interrupt_handler() {
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
}

/// Limits for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub max_stdout: usize,
    pub max_stderr: usize,
}

impl Limits {
    pub fn with_timeout(timeout: Duration) -> Limits {
        Limits { timeout, max_stdout: MAX_STDOUT, max_stderr: MAX_STDERR }
    }
}

/// The timeout from [`TIMEOUT_VAR`], else [`DEFAULT_TIMEOUT`]. A value that is not a
/// positive number of seconds is an error naming the variable.
pub fn timeout_from_env() -> Result<Duration, TimeoutSettingError> {
    match std::env::var(TIMEOUT_VAR) {
        Err(_) => Ok(DEFAULT_TIMEOUT),
        Ok(value) => parse_seconds(&value).map_err(|err| TimeoutSettingError { value, err }),
    }
}

/// `"30"`, `"0.5"` → a duration; zero, negative or non-numbers are errors.
pub fn parse_seconds(s: &str) -> Result<Duration, SecondsError> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x < 1e9 => Ok(Duration::from_secs_f64(x)),
        _ => Err(SecondsError),
    }
}

/// A time limit that is not a positive number of seconds (below 10⁹).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a positive number of seconds, e.g. 120 or 0.5")]
pub struct SecondsError;

/// [`TIMEOUT_VAR`] holds something [`parse_seconds`] refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{TIMEOUT_VAR}={value:?}: {err}")]
pub struct TimeoutSettingError {
    pub value: String,
    pub err: SecondsError,
}

/// A finished run: the tool exited by itself within the limits.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start {program}: {err}")]
    Spawn { program: PathBuf, err: String },
    #[error("{program} timed out after {:.1} s and was killed (set {TIMEOUT_VAR} or --tool-timeout to allow more)", after.as_secs_f64())]
    TimedOut { program: PathBuf, after: Duration },
    #[error("{program} wrote more than {limit} bytes to {stream:?} and was killed")]
    TooMuchOutput { program: PathBuf, stream: Stream, limit: usize },
    #[error("{program} was interrupted (SIGINT/SIGTERM) and killed")]
    Interrupted { program: PathBuf },
    #[error("{program} exited but its output pipes stayed open (a process outside its group holds them)")]
    PipeHeld { program: PathBuf },
    #[error("waiting for {program} failed: {err}")]
    Wait { program: PathBuf, err: String },
}

/// A pipe reader's result: the bytes, or that the limit was passed.
type Read_ = Result<Vec<u8>, ()>;

/// Run `cmd` (stdin closed, stdout and stderr captured) within `limits`.
pub fn run(cmd: &mut Command, limits: &Limits) -> Result<Output, ProcessError> {
    let program = PathBuf::from(cmd.get_program());
    if interrupted() {
        return Err(ProcessError::Interrupted { program });
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ProcessError::Spawn { program: program.clone(), err: e.to_string() })?;
    let flood = Arc::new(AtomicBool::new(false));
    let out_rx = reader(child.stdout.take(), limits.max_stdout, flood.clone());
    let err_rx = reader(child.stderr.take(), limits.max_stderr, flood.clone());
    let waited = wait(&mut child, limits.timeout, &flood);
    kill_group(&child);
    let status = child.wait();
    let deadline = Instant::now() + READER_GRACE;
    let streams = collect(&out_rx, deadline).zip(collect(&err_rx, deadline));
    match waited {
        Waited::Exited => {}
        Waited::TimedOut => return Err(ProcessError::TimedOut { program, after: limits.timeout }),
        Waited::Interrupted => return Err(ProcessError::Interrupted { program }),
        Waited::Flood => {}
        Waited::Failed(err) => return Err(ProcessError::Wait { program, err }),
    }
    let Some((stdout, stderr)) = streams else { return Err(ProcessError::PipeHeld { program }) };
    let too_much = |stream, limit| ProcessError::TooMuchOutput { program: program.clone(), stream, limit };
    let stdout = stdout.map_err(|_| too_much(Stream::Stdout, limits.max_stdout))?;
    let stderr = stderr.map_err(|_| too_much(Stream::Stderr, limits.max_stderr))?;
    let status = status.map_err(|e| ProcessError::Wait { program: program.clone(), err: e.to_string() })?;
    Ok(Output { status, stdout, stderr })
}

/// `f(0)`, …, `f(n - 1)` on up to `jobs` threads, each taking the next index when it is
/// free (one call is typically an external process), the results in index order. A
/// panic in `f` is raised again here.
pub fn in_parallel<R: Send>(jobs: usize, n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.clamp(1, n.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = vec![];
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return mine;
                        }
                        mine.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Reads a pipe on a detached thread, up to `limit` bytes; past it, raises `flood`.
fn reader<R: Read + Send + 'static>(pipe: Option<R>, limit: usize, flood: Arc<AtomicBool>) -> Receiver<Read_> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = match pipe {
            None => Ok(buf),
            Some(p) => match p.take(limit as u64 + 1).read_to_end(&mut buf) {
                _ if buf.len() > limit => {
                    flood.store(true, Ordering::Relaxed);
                    Err(())
                }
                // A read error mid-way leaves what was read; the exit status tells the rest.
                _ => Ok(buf),
            },
        };
        let _ = tx.send(r);
    });
    rx
}

/// What the reader sent by `deadline`; None when it is still blocked (then it is
/// abandoned rather than waited for).
fn collect(rx: &Receiver<Read_>, deadline: Instant) -> Option<Read_> {
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()
}

enum Waited {
    Exited,
    TimedOut,
    Interrupted,
    Flood,
    Failed(String),
}

/// Polls until the child exits (left as a zombie, so its group id stays reserved for
/// [`kill_group`]), the time is up, output floods or a signal arrives.
fn wait(child: &mut Child, timeout: Duration, flood: &AtomicBool) -> Waited {
    let start = Instant::now();
    let mut nap = Duration::from_millis(1);
    loop {
        match exited(child) {
            Ok(true) => return Waited::Exited,
            Ok(false) => {}
            Err(e) => return Waited::Failed(e),
        }
        if flood.load(Ordering::Relaxed) {
            return Waited::Flood;
        }
        if interrupted() {
            return Waited::Interrupted;
        }
        if start.elapsed() >= timeout {
            return Waited::TimedOut;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Whether the child has exited, without reaping it.
#[cfg(unix)]
fn exited(child: &mut Child) -> Result<bool, String> {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waitid on our own child's pid with a valid siginfo pointer.
    let r = unsafe { libc::waitid(libc::P_PID, child.id() as libc::id_t, &mut info, flags) };
    if r != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    // SAFETY: waitid filled `info`; si_pid is 0 when no child changed state.
    Ok(unsafe { info.si_pid() } != 0)
}

#[cfg(not(unix))]
fn exited(child: &mut Child) -> Result<bool, String> {
    child.try_wait().map(|s| s.is_some()).map_err(|e| e.to_string())
}

/// SIGKILL to the child's whole process group (the child itself may be a zombie: the
/// group id cannot be reused until it is reaped).
fn kill_group(child: &Child) {
    #[cfg(unix)]
    // SAFETY: signalling the process group we created for this child.
    unsafe {
        libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = child;
}

/// A short, readable piece of tool output for error messages.
pub fn excerpt(s: &str) -> String {
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

/// `exit status 3`, `killed by signal 11 (core dumped)`.
pub fn describe_status(st: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = st.signal() {
            let core = if st.core_dumped() { " (core dumped)" } else { "" };
            return format!("killed by signal {sig}{core}");
        }
    }
    match st.code() {
        Some(c) => format!("exit status {c}"),
        None => st.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index once, results in index order whatever thread ran each, and with more
    /// jobs than items or none at all.
    #[test]
    fn in_parallel_gives_results_in_index_order() {
        for jobs in [0, 1, 3, 64] {
            let out = in_parallel(jobs, 50, |i| {
                std::thread::sleep(Duration::from_micros((50 - i as u64) * 10));
                i * i
            });
            assert_eq!(out, (0..50).map(|i| i * i).collect::<Vec<_>>(), "jobs {jobs}");
        }
        assert!(in_parallel(4, 0, |i| i).is_empty());
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }
    fn limits(ms: u64) -> Limits {
        Limits::with_timeout(Duration::from_millis(ms))
    }

    #[test]
    fn output_and_status_are_returned() {
        let o = run(&mut sh("echo out; echo err >&2; exit 3"), &limits(10_000)).unwrap();
        assert_eq!(o.stdout, b"out\n");
        assert_eq!(o.stderr, b"err\n");
        assert_eq!(describe_status(&o.status), "exit status 3");
        let o = run(&mut sh("kill -SEGV $$"), &limits(10_000)).unwrap();
        assert!(describe_status(&o.status).starts_with("killed by signal 11"), "{:?}", o.status);
    }

    #[test]
    fn timeout_kills_the_whole_group_quickly() {
        let t = Instant::now();
        let e = run(&mut sh("sleep 100000 & sleep 100000"), &limits(300)).unwrap_err();
        assert!(matches!(e, ProcessError::TimedOut { .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(e.to_string().contains(TIMEOUT_VAR), "{e}");
    }

    #[test]
    fn a_grandchild_holding_stdout_does_not_block() {
        // The shell exits at once; its background child keeps the pipe open.
        let t = Instant::now();
        let o = run(&mut sh("echo hi; sleep 100000 &"), &limits(60_000)).unwrap();
        assert!(o.status.success());
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn floods_are_cut_off() {
        let t = Instant::now();
        let mut l = limits(60_000);
        l.max_stdout = 1 << 20;
        let e = run(&mut sh("exec yes"), &l).unwrap_err();
        assert!(matches!(e, ProcessError::TooMuchOutput { stream: Stream::Stdout, .. }), "{e}");
        l.max_stderr = 1 << 16;
        let e = run(&mut sh("exec yes >&2"), &l).unwrap_err();
        assert!(matches!(e, ProcessError::TooMuchOutput { stream: Stream::Stderr, .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn missing_program_names_the_path() {
        let e = run(&mut Command::new("/nonexistent/tool"), &limits(1000)).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/tool"), "{e}");
    }

    #[test]
    fn seconds_parse() {
        assert_eq!(parse_seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
        for bad in ["0", "-1", "x", "", "inf", "NaN"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
