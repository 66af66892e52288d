//! One batch per child process: the parent never touches CUDA, so a sticky error or a
//! hang ends one child (recorded as a trap) and the run goes on.
//!
//! Protocol: the parent writes the input records to a file and a [`Request`] (JSON) next
//! to it, then runs `sass-harness exec-worker --request FILE`. The child writes the
//! output records to `request.output` and one JSON [`Response`] line on stdout; exit 0
//! (ran) or 4 (trap). `--probe` prints the device (`{"tool":…}`) or exits 3 (no GPU).
//! `--fake MODE` replaces the device for tests: `model` (the CPU models), `wrong` (the
//! models with one result bit flipped), `wrong-hidden` (flipped for hidden-bit words
//! only), `trap`, `hang`, `crash`, `silent` (writes nothing).

use super::error::WorkerError;
use crate::oracle::exec::{Batch, Executor, Trap};
use crate::oracle::gpu::dryrun::PlanEntry;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    pub batch: Batch,
    pub input: PathBuf,
    pub output: PathBuf,
    /// The plan entries of this cubin (the fake `model` device needs them).
    pub entries: Vec<PlanEntry>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    pub tool: String,
    pub trap: Option<String>,
}

pub const EXIT_TRAP: i32 = 4;
pub const EXIT_NO_GPU: i32 = 3;

/// Runs batches through child processes of `exe` (this program).
pub struct ChildExecutor {
    pub exe: PathBuf,
    pub timeout: Duration,
    pub fake: Option<String>,
    pub spec: Vec<PathBuf>,
    pub dir: PathBuf,
    pub tool: String,
    /// Every plan entry; each request carries those of its cubin.
    pub entries: Vec<PlanEntry>,
    pub seq: usize,
}

impl ChildExecutor {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.exe);
        c.arg("exec-worker");
        if let Some(f) = &self.fake {
            c.args(["--fake", f]);
        }
        for s in &self.spec {
            c.arg("--spec").arg(s);
        }
        c
    }

    /// Ask a child for the device: `Ok(tool)`, or why there is none.
    pub fn probe(&self) -> Result<String, WorkerError> {
        let mut c = self.command();
        c.arg("--probe");
        let (status, stdout, stderr) = run_limited(c, self.timeout)?;
        match status {
            Some(0) => serde_json::from_str::<Response>(stdout.trim())
                .map(|r| r.tool)
                .map_err(|source| WorkerError::BadAnswer { answer: stdout.trim().into(), source }),
            _ => Err(WorkerError::NoDevice(format!("{}{}", stdout.trim(), stderr.trim()))),
        }
    }
}

/// Run `c` with a wall-clock limit: (exit code, stdout, stderr); `Err` when it could not
/// start, timed out (killed) or died of a signal.
fn run_limited(mut c: Command, limit: Duration) -> Result<(Option<i32>, String, String), WorkerError> {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(WorkerError::Start)?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(WorkerError::TimedOut(limit));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(WorkerError::Wait(e)),
        }
    }
    let out = child.wait_with_output().map_err(WorkerError::Output)?;
    let (so, se) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    match out.status.code() {
        Some(c) => Ok((Some(c), so, se)),
        None => Err(WorkerError::Died { status: out.status, stderr: se.trim().into() }),
    }
}

impl Executor for ChildExecutor {
    fn tool(&self) -> String {
        self.tool.clone()
    }
    fn run(&mut self, b: &Batch, input: &[u8]) -> Result<Vec<u8>, Trap> {
        self.seq += 1;
        let stem = self.dir.join(format!("batch{:05}", self.seq));
        let req = Request {
            batch: b.clone(),
            input: stem.with_extension("in"),
            output: stem.with_extension("out"),
            entries: self.entries.iter().filter(|e| b.cubin.ends_with(&e.cubin)).cloned().collect(),
        };
        let rpath = stem.with_extension("json");
        let result = self.run_request(&req, &rpath, input);
        // Whatever happened (a trap, a hang, a crash): no batch file stays behind.
        for p in [&req.input, &req.output, &rpath] {
            let _ = std::fs::remove_file(p);
        }
        result
    }
}

impl ChildExecutor {
    fn run_request(&self, req: &Request, rpath: &Path, input: &[u8]) -> Result<Vec<u8>, Trap> {
        let t = |m: String| Trap { message: m };
        std::fs::create_dir_all(&self.dir).map_err(|e| t(format!("{}: {e}", self.dir.display())))?;
        std::fs::write(&req.input, input).map_err(|e| t(e.to_string()))?;
        let _ = std::fs::remove_file(&req.output);
        std::fs::write(rpath, serde_json::to_vec(req).map_err(|e| t(e.to_string()))?).map_err(|e| t(e.to_string()))?;
        let mut c = self.command();
        c.arg("--request").arg(rpath);
        let (code, stdout, stderr) = run_limited(c, self.timeout).map_err(|e| t(e.to_string()))?;
        let resp: Response =
            serde_json::from_str(stdout.trim()).map_err(|e| t(format!("worker exit {code:?}, answer '{}' ({e}); stderr: {}", stdout.trim(), stderr.trim())))?;
        if let Some(m) = resp.trap {
            return Err(t(m));
        }
        let out = std::fs::read(&req.output).map_err(|e| t(format!("worker wrote no output: {e}")))?;
        let want = (req.batch.threads * req.batch.out_stride) as usize;
        if out.len() != want {
            return Err(t(format!("worker wrote {} output bytes, expected {want}", out.len())));
        }
        Ok(out)
    }
}

/// The child side: run one request on `dev`, answer on stdout; the exit status.
pub fn serve(dev: &mut dyn Executor, request: &Path) -> i32 {
    let answer = |trap: Option<String>, tool: String| {
        println!("{}", serde_json::to_string(&Response { tool, trap }).unwrap_or_default());
    };
    let req: Request = match std::fs::read(request).map_err(|e| e.to_string()).and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
        Ok(r) => r,
        Err(e) => {
            answer(Some(format!("bad request {}: {e}", request.display())), dev.tool());
            return EXIT_TRAP;
        }
    };
    let result = std::fs::read(&req.input)
        .map_err(|e| Trap { message: format!("{}: {e}", req.input.display()) })
        .and_then(|input| dev.run(&req.batch, &input))
        .and_then(|out| std::fs::write(&req.output, out).map_err(|e| Trap { message: e.to_string() }));
    match result {
        Ok(()) => {
            answer(None, dev.tool());
            0
        }
        Err(t) => {
            answer(Some(t.message), dev.tool());
            EXIT_TRAP
        }
    }
}
