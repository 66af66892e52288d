//! nvdisasm without its start-up, for raw-mode runs.
//!
//! A raw-mode nvdisasm process (`nvdisasm -b SM90 … words.bin`) spends some 0.25–0.5 s of
//! CPU building its tables before it reads a word, as much as 10 000–20 000 words: in the
//! test suite, three quarters of nvdisasm's CPU (docs/measurements.md). A *server* is an
//! nvdisasm started on a sentinel input with `shim/nvdisasm_server.c` preloaded: at the
//! second `fopen` of its input, where the tables are built, it forks one child per
//! request, and the child reads the request's file in place of the sentinel and prints
//! what a fresh process given the same arguments prints (`tests::` below compare the
//! two byte for byte, legal words and illegal ones, at several sizes).
//!
//! Only the pinned nvdisasm is served unless [`SERVER_VAR`] says otherwise ([`wanted`]).
//! Servers are kept per tool and arguments (an address given by `--base-address` is an
//! argument), at most [`MAX_IDLE`] idle ones in all, and stopped at exit. A request is
//! answered the way [`super::process::run`] answers a run: its exit status and output, or
//! a timeout, an interrupt or too much output as a [`ProcessError`], the server then
//! killed. Wherever a server cannot serve, [`run`] answers `None` and the caller starts a
//! process as before: not Linux, no C compiler when the crate was built, a program and
//! arguments that never reach the hook (a script standing in for nvdisasm, another
//! version that reads its input otherwise, an architecture nvdisasm does not know: not
//! tried again), a server that died.

use super::process::{Limits, Output, ProcessError};
use std::path::Path;

/// Environment variable: `0` runs every nvdisasm request as a process of its own, `1`
/// tries servers with any nvdisasm version ([`wanted`]).
pub const SERVER_VAR: &str = "SASS_HARNESS_NVDISASM_SERVER";

/// Whether an nvdisasm of this version (`13.5.37`) is to be served: by default only the
/// pinned one, whose served runs the tests compare with fresh processes byte for byte
/// (another version might read its input otherwise before the hook); [`SERVER_VAR`]
/// decides where it is set.
pub fn wanted(version: Option<&str>) -> bool {
    match std::env::var_os(SERVER_VAR) {
        Some(v) if v == "0" => false,
        Some(v) if v == "1" => true,
        _ => version == Some(super::tools::PINNED_VERSION),
    }
}

/// Most idle servers kept (each holds nvdisasm's tables: some 50 MB).
pub const MAX_IDLE: usize = 8;

/// Runs `tool args input` on a server: `None` where no server can (the caller then runs
/// a process). The child's stdout and stderr go through files beside `input`.
pub fn run(tool: &Path, args: &[&str], input: &Path, limits: &Limits) -> Option<Result<Output, ProcessError>> {
    imp::run(tool, args, input, limits)
}

/// Servers started so far by this process (each cost one nvdisasm start-up).
pub fn started() -> usize {
    imp::STARTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Stops the idle servers (the next request starts one). A server's CPU, its children's
/// included, counts among this process's children's (`RUSAGE_CHILDREN`) only once it has
/// been waited for: what `bench` measures nvdisasm by. Idle servers are stopped so at
/// exit too.
pub fn stop_idle() {
    imp::stop_idle()
}

#[cfg(not(all(target_os = "linux", nvdisasm_server)))]
mod imp {
    use super::*;
    pub static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    pub fn run(_: &Path, _: &[&str], _: &Path, _: &Limits) -> Option<Result<Output, ProcessError>> {
        None
    }

    pub fn stop_idle() {}
}

#[cfg(all(target_os = "linux", nvdisasm_server))]
mod imp {
    use super::*;
    use crate::oracle::process::{self, Stream};
    use std::io::{Read, Write};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::DirBuilderExt;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::path::PathBuf;
    use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    /// The preload library `build.rs` compiled from `shim/nvdisasm_server.c`.
    static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/nvdisasm_server.so"));
    pub static STARTED: AtomicUsize = AtomicUsize::new(0);

    #[derive(Clone, PartialEq, Eq)]
    struct Key {
        tool: PathBuf,
        args: Vec<String>,
    }

    struct Pool {
        /// Oldest first.
        idle: Vec<Server>,
        /// Programs and arguments that did not become servers (`-b SM999` is refused by
        /// nvdisasm itself; a stand-in script never gets to the hook).
        refused: Vec<Key>,
    }

    /// Refusals remembered (the oldest forgotten: one more failed start each).
    const MAX_REFUSED: usize = 256;

    static POOL: Mutex<Pool> = Mutex::new(Pool { idle: Vec::new(), refused: Vec::new() });

    fn pool() -> MutexGuard<'static, Pool> {
        POOL.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn run(tool: &Path, args: &[&str], input: &Path, limits: &Limits) -> Option<Result<Output, ProcessError>> {
        let key = Key { tool: tool.to_path_buf(), args: args.iter().map(|a| a.to_string()).collect() };
        let mut server = match take(&key)? {
            Some(s) => s,
            None => match Server::start(key, limits)? {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            },
        };
        match server.serve(input, limits) {
            Served::Done(out) => {
                keep(server);
                Some(out)
            }
            Served::Stopped(e) => Some(Err(e)),
            Served::Broken => None,
        }
    }

    /// An idle server for `key` (the newest), `Some(None)` where one is to start, `None`
    /// where its program did not become a server before.
    fn take(key: &Key) -> Option<Option<Server>> {
        let mut p = pool();
        if p.refused.contains(key) {
            return None;
        }
        Some(p.idle.iter().rposition(|s| s.key == *key).map(|i| p.idle.remove(i)))
    }

    pub fn stop_idle() {
        let idle = std::mem::take(&mut pool().idle);
        drop(idle);
    }

    /// At exit: the idle servers stopped and waited for, not left to end by themselves.
    extern "C" fn stop_at_exit() {
        // Not waiting for a lock a thread may hold as the process ends.
        if let Ok(mut p) = POOL.try_lock() {
            let idle = std::mem::take(&mut p.idle);
            drop(p);
            drop(idle);
        }
    }

    fn keep(server: Server) {
        let mut p = pool();
        p.idle.push(server);
        let extra = p.idle.len().saturating_sub(MAX_IDLE);
        let gone: Vec<Server> = p.idle.drain(..extra).collect();
        drop(p);
        drop(gone);
    }

    /// How a request ended.
    enum Served {
        /// The child ran: its status and output (or too much output); the server goes on.
        Done(Result<Output, ProcessError>),
        /// Timed out or interrupted: the server and its child were killed.
        Stopped(ProcessError),
        /// The server failed or died: a process is to run instead.
        Broken,
    }

    /// Why a reply did not come.
    enum NoReply {
        TimedOut,
        Interrupted,
        Broken,
    }

    struct Server {
        key: Key,
        child: Child,
        requests: ChildStdin,
        replies: ChildStdout,
    }

    impl Server {
        /// An nvdisasm on a sentinel, stopped at its hook (`ready`). `None` where it
        /// cannot start, or says or does anything else (its program is then not tried
        /// again); a timeout or an interrupt on the way is the request's error, as for a
        /// process that hangs before reading its input.
        fn start(key: Key, limits: &Limits) -> Option<Result<Server, ProcessError>> {
            let dir = PrivateDir::new()?;
            let (shim, sentinel) = (dir.0.join("nvdisasm_server.so"), dir.0.join("sentinel.bin"));
            std::fs::write(&shim, SHIM).ok()?;
            std::fs::write(&sentinel, [0u8; 64]).ok()?;
            let mut preload = shim.clone().into_os_string();
            if let Some(other) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
                preload.push(":");
                preload.push(other);
            }
            let cap = limits.max_stdout.max(limits.max_stderr) + 1;
            let mut cmd = Command::new(&key.tool);
            cmd.args(&key.args).arg(&sentinel).env("LD_PRELOAD", preload);
            cmd.env("SASS_HARNESS_SERVER_SENTINEL", &sentinel).env("SASS_HARNESS_SERVER_FSIZE", cap.to_string());
            cmd.process_group(0).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a plain function with no arguments.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(stop_at_exit);
            });
            let mut child = cmd.spawn().ok()?;
            STARTED.fetch_add(1, Ordering::Relaxed);
            let (requests, replies) = (child.stdin.take()?, child.stdout.take()?);
            let mut server = Server { key, child, requests, replies };
            let program = server.key.tool.clone();
            match server.reply(Instant::now() + limits.timeout) {
                Ok(line) if line == "ready" => Some(Ok(server)),
                Err(NoReply::Interrupted) => Some(Err(ProcessError::Interrupted { program })),
                // Not refused: the limit is the request's (a short one may end any start).
                Err(NoReply::TimedOut) => Some(Err(ProcessError::TimedOut { program, after: limits.timeout })),
                _ => {
                    let mut p = pool();
                    p.refused.push(server.key.clone());
                    if p.refused.len() > MAX_REFUSED {
                        p.refused.remove(0);
                    }
                    None
                }
            }
        }

        /// One request: `input` read by a child, its output through files beside it.
        fn serve(&mut self, input: &Path, limits: &Limits) -> Served {
            let (out, err) = (input.with_extension("out"), input.with_extension("err"));
            let mut request = vec![];
            for p in [input, &out, &err] {
                let bytes = p.as_os_str().as_bytes();
                if bytes.contains(&b'\n') {
                    return Served::Broken;
                }
                request.extend_from_slice(bytes);
                request.push(b'\n');
            }
            if self.requests.write_all(&request).and_then(|()| self.requests.flush()).is_err() {
                return Served::Broken;
            }
            let program = self.key.tool.clone();
            let status = match self.reply(Instant::now() + limits.timeout).map(|l| status(&l)) {
                Ok(Some(s)) => s,
                Ok(None) | Err(NoReply::Broken) => return Served::Broken,
                Err(NoReply::TimedOut) => return Served::Stopped(ProcessError::TimedOut { program, after: limits.timeout }),
                Err(NoReply::Interrupted) => return Served::Stopped(ProcessError::Interrupted { program }),
            };
            let read = |p: &Path| {
                let bytes = std::fs::read(p).unwrap_or_default();
                let _ = std::fs::remove_file(p);
                bytes
            };
            let (stdout, stderr) = (read(&out), read(&err));
            let too_much = |stream, limit| Served::Done(Err(ProcessError::TooMuchOutput { program: program.clone(), stream, limit }));
            if stdout.len() > limits.max_stdout || (status.signal() == Some(libc::SIGXFSZ) && stderr.len() <= limits.max_stderr) {
                return too_much(Stream::Stdout, limits.max_stdout);
            }
            if stderr.len() > limits.max_stderr {
                return too_much(Stream::Stderr, limits.max_stderr);
            }
            Served::Done(Ok(Output { status, stdout, stderr }))
        }

        /// The server's next line, waiting until `deadline`, a signal to stop, or its end.
        fn reply(&mut self, deadline: Instant) -> Result<String, NoReply> {
            let mut line = vec![];
            loop {
                if process::interrupted() {
                    return Err(NoReply::Interrupted);
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(NoReply::TimedOut);
                }
                if !readable(&self.replies, left.min(Duration::from_millis(50))) {
                    continue;
                }
                let mut buf = [0u8; 64];
                match self.replies.read(&mut buf) {
                    Ok(0) => return Err(NoReply::Broken),
                    Ok(n) => line.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return Err(NoReply::Broken),
                }
                if let Some(l) = line.strip_suffix(b"\n") {
                    return Ok(String::from_utf8_lossy(l).into_owned());
                }
            }
        }
    }

    impl Drop for Server {
        /// Kills the server and any child of a request it was serving (one process group).
        fn drop(&mut self) {
            // SAFETY: signalling the process group created for this server.
            unsafe {
                libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
            }
            let _ = self.child.wait();
        }
    }

    /// Whether `pipe` has bytes (or its end) within `wait`.
    fn readable(pipe: &ChildStdout, wait: Duration) -> bool {
        use std::os::fd::AsRawFd;
        let mut p = libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut p, 1, wait.as_millis().max(1) as libc::c_int) > 0 }
    }

    /// `exit N` or `signal N` as the child's status.
    fn status(line: &str) -> Option<ExitStatus> {
        let (what, n) = line.split_once(' ')?;
        let n: i32 = n.parse().ok()?;
        match what {
            "exit" => Some(ExitStatus::from_raw((n & 0xff) << 8)),
            "signal" => Some(ExitStatus::from_raw(n & 0x7f)),
            _ => None,
        }
    }

    /// A folder only this user can enter (the preload library is written there, and
    /// the folder is removed once the server has loaded it).
    struct PrivateDir(PathBuf);

    impl PrivateDir {
        fn new() -> Option<PrivateDir> {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let k = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("sass-harness-server-{}-{k}", std::process::id()));
            std::fs::DirBuilder::new().mode(0o700).create(&path).ok()?;
            Some(PrivateDir(path))
        }
    }

    impl Drop for PrivateDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(all(test, target_os = "linux", nvdisasm_server))]
mod tests {
    use super::*;
    use crate::codec::Codec;
    use crate::gen::{random_values, Rng};
    use crate::oracle::nvdisasm::Nvdisasm;
    use crate::oracle::process;
    use crate::oracle::ptxas::test_support::scratch;
    use crate::spec::{builtin, Arch};
    use std::path::PathBuf;
    use std::process::Command;
    use std::time::Duration;

    fn nvdisasm() -> PathBuf {
        Nvdisasm::locate().expect("nvdisasm is required: bash ci/install-cuda-tools.sh").path
    }

    /// `n` words of `arch` as nvdisasm reads them: every other one encoded from a random
    /// form of the built-in spec (mostly legal), the others random bits (mostly illegal).
    fn words(c: &Codec, arch: Arch, n: usize, rng: &mut Rng) -> Vec<u8> {
        let mine: Vec<usize> = (0..c.variants().len()).filter(|&i| c.variant(i).arch == arch).collect();
        let mut bytes = vec![];
        for i in 0..n {
            let w = if i % 2 == 0 {
                let vi = mine[rng.below(mine.len() as u64) as usize];
                c.encode_unchecked(vi, &random_values(c.variant(vi), rng)).0
            } else {
                (rng.next_u64() as u128) << 64 | rng.next_u64() as u128
            };
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes
    }

    fn limits() -> Limits {
        Limits::with_timeout(Duration::from_secs(120))
    }

    /// The oracle's whole trust in a server: a served run gives what a fresh process
    /// gives, status, stdout and stderr byte for byte, for each architecture, one word to
    /// thousands, listings and illegal words, with and without `-hex` and another base.
    #[test]
    fn a_served_run_prints_what_a_process_prints() {
        let (tool, dir) = (nvdisasm(), scratch("server-same"));
        let mut rng = Rng::new(0x5e7e);
        let mut cases = vec![];
        for arch in [Arch(90), Arch(100), Arch(120)] {
            for n in [1, 300, 5000] {
                cases.push((arch, n, vec!["-hex", "--base-address", "0x0"]));
            }
        }
        cases.push((Arch(90), 200, vec![]));
        cases.push((Arch(90), 200, vec!["-hex", "--base-address", "0x1230"]));
        let (mut illegal, all) = (0, cases.len());
        for (i, (arch, n, extra)) in cases.into_iter().enumerate() {
            let spec = builtin::load_builtin(arch).unwrap();
            let c = Codec::new(&spec);
            let input = dir.join(format!("case{i}.bin"));
            std::fs::write(&input, words(&c, arch, n, &mut rng)).unwrap();
            let name = arch.nvdisasm_name();
            let args: Vec<&str> = ["-b", &name].into_iter().chain(extra).collect();
            let served = run(&tool, &args, &input, &limits()).expect("a server for nvdisasm").unwrap();
            let plain = process::run(Command::new(&tool).args(&args).arg(&input), &limits()).unwrap();
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            assert_eq!(served.status, plain.status, "case {i}: {}", text(&plain.stderr));
            assert_eq!(text(&served.stdout), text(&plain.stdout), "case {i}");
            assert_eq!(text(&served.stderr), text(&plain.stderr), "case {i}");
            illegal += usize::from(!plain.status.success());
            assert!(!dir.join(format!("case{i}.out")).exists(), "the output files are removed");
        }
        assert!(illegal > 0 && illegal < all, "both listings and illegal words were compared ({illegal} of {all} rejected)");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A program that never reaches the hook is run as a process (`None`), and not tried
    /// again; one that hangs before it times out, as its process would, each time.
    #[test]
    fn a_program_that_is_not_nvdisasm_is_left_to_a_process() {
        let dir = scratch("server-refused");
        let input = dir.join("in.bin");
        std::fs::write(&input, [0u8; 16]).unwrap();
        for (name, script) in [("talks", "echo hello"), ("quits", "exit 3"), ("hangs", "exec sleep 100")] {
            let tool = dir.join(name);
            std::fs::write(&tool, format!("#!/bin/sh\n{script}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
            let limits = Limits::with_timeout(Duration::from_millis(500));
            for attempt in 0..2 {
                let t = std::time::Instant::now();
                let r = run(&tool, &["-b", "SM90"], &input, &limits);
                if name == "hangs" {
                    assert!(matches!(r, Some(Err(ProcessError::TimedOut { .. }))), "{r:?}");
                    continue;
                }
                assert!(r.is_none(), "{name}: {r:?}");
                assert!(attempt == 0 || t.elapsed() < Duration::from_millis(100), "{name} is not tried again: {:?}", t.elapsed());
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// This process's servers whose arguments include `arg` (children whose command line
    /// names a sentinel of ours).
    fn servers_with(arg: &str) -> Vec<i32> {
        let mine = format!("sass-harness-server-{}-", std::process::id());
        let ppid = |pid: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| s.rsplit(')').next()?.split_whitespace().nth(1)?.parse::<u32>().ok())
        };
        let line = |pid: &str| std::fs::read(format!("/proc/{pid}/cmdline")).map(|c| String::from_utf8_lossy(&c).replace('\0', " ")).unwrap_or_default();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()) && ppid(pid) == Some(std::process::id()))
            .filter(|pid| line(pid).contains(&mine) && line(pid).split(' ').any(|a| a == arg))
            .filter_map(|pid| pid.parse().ok())
            .collect()
    }

    /// A server that died while idle is not an answer: that request is left to a process
    /// (`None`), and the next gets a new server. Idle servers stopped are waited for.
    #[test]
    fn a_dead_server_leaves_its_request_to_a_process() {
        let (tool, dir) = (nvdisasm(), scratch("server-dead"));
        let spec = builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&spec);
        let input = dir.join("in.bin");
        std::fs::write(&input, words(&c, Arch(90), 8, &mut Rng::new(3))).unwrap();
        // An address no other test uses: this test's own server.
        let args = ["-b", "SM90", "-hex", "--base-address", "0x9990"];
        let want = run(&tool, &args, &input, &limits()).expect("a server").unwrap();
        assert_eq!(servers_with("0x9990").len(), 1, "the idle server is found");
        stop_idle();
        assert!(servers_with("0x9990").is_empty(), "stop_idle stops and waits for it");
        run(&tool, &args, &input, &limits()).expect("a server").unwrap();
        for pid in servers_with("0x9990") {
            // SAFETY: SIGKILL to a child of this process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(100));
        assert!(run(&tool, &args, &input, &limits()).is_none(), "a dead server's request goes to a process");
        let again = run(&tool, &args, &input, &limits()).expect("a new server").unwrap();
        assert_eq!((again.status, again.stdout, again.stderr), (want.status, want.stdout, want.stderr));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A request past its time limit kills its server and child (a timeout, as for a
    /// process); the next request gets a new server.
    #[test]
    fn a_request_past_its_limit_is_a_timeout_and_the_next_gets_a_new_server() {
        let (tool, dir) = (nvdisasm(), scratch("server-timeout"));
        let spec = builtin::load_builtin(Arch(90)).unwrap();
        let c = Codec::new(&spec);
        let mut rng = Rng::new(7);
        let (small, big) = (dir.join("small.bin"), dir.join("big.bin"));
        std::fs::write(&small, words(&c, Arch(90), 4, &mut rng)).unwrap();
        std::fs::write(&big, words(&c, Arch(90), 60_000, &mut rng)).unwrap();
        // An address no other test uses: this test's own server.
        let args = ["-b", "SM90", "--base-address", "0x7710"];
        let want = run(&tool, &args, &small, &limits()).expect("a server").unwrap();
        let short = Limits::with_timeout(Duration::from_millis(20));
        let e = run(&tool, &args, &big, &short).expect("a server");
        assert!(matches!(e, Err(ProcessError::TimedOut { .. })), "{e:?}");
        let before = started();
        let again = run(&tool, &args, &small, &limits()).expect("a server").unwrap();
        assert_eq!((again.status, again.stdout), (want.status, want.stdout));
        assert!(started() > before, "a new server");
        let _ = std::fs::remove_dir_all(dir);
    }
}
