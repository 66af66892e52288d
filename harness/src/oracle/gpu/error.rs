//! Why a plan could not be built or run: [`GpuError`], shared by the dry run, the barrier
//! experiment and `exec` (a tool, a file, a template ptxas compiled unexpectedly, a device
//! that cannot run the plan). Never a word that disagrees: those are findings. The leaf
//! errors of single steps ([`SlotError`], [`FitError`], [`PinError`], [`WorkerError`],
//! [`CudaError`]) live here too, so both builds (with and without the `gpu` feature)
//! name the same types.

use crate::budget::BudgetError;
use crate::cubin::CubinError;
use crate::oracle::nvdisasm::NvdisasmError;
use crate::oracle::process::ProcessError;
use crate::oracle::ptxas::PtxasError;
use crate::oracle::tools::ToolError;
use crate::sass::Instruction;
use crate::semantics::ModelError;
use crate::spec::PageError;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A file or folder of the plan or the run could not be read, written or created.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    /// A JSON line of a plan (`plan.jsonl`, `barrier/plan.jsonl`) that does not read.
    #[error("{}:{line}: {source}", path.display())]
    PlanLine { path: PathBuf, line: usize, source: serde_json::Error },
    /// A JSON file (a worker's request) that does not read.
    #[error("{}: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    /// A plan line or finding that could not be written as JSON.
    #[error("cannot write as JSON: {0}")]
    ToJson(#[from] serde_json::Error),
    #[error("cannot find this program: {0}")]
    CurrentExe(#[source] std::io::Error),
    #[error("no pages given (try: corpus/isa)")]
    NoPages,
    #[error(transparent)]
    Pages(#[from] PageError),
    #[error(transparent)]
    Budget(#[from] BudgetError),
    #[error(transparent)]
    Tool(#[from] ToolError),
    #[error(transparent)]
    Ptxas(#[from] PtxasError),
    #[error(transparent)]
    Nvdisasm(#[from] NvdisasmError),
    #[error(transparent)]
    Cubin(#[from] CubinError),
    /// nvdisasm could not be run on a cubin (`-hex -c`).
    #[error("running {} on {}: {source}", tool.display(), cubin.display())]
    ListingRun { tool: PathBuf, cubin: PathBuf, source: ProcessError },
    /// nvdisasm ran on a cubin and failed; its stderr.
    #[error("nvdisasm {}: {stderr}", cubin.display())]
    Listing { cubin: PathBuf, stderr: String },
    /// A template whose placeholders cannot be traced to their loads and store.
    #[error("{}: {source}", cubin.display())]
    Slots { cubin: PathBuf, source: SlotError },
    #[error("{}: ptxas emitted no {placeholder} placeholder", cubin.display())]
    NoPlaceholder { cubin: PathBuf, placeholder: &'static str },
    #[error("{}: no EIATTR_REGCOUNT in .nv.info", cubin.display())]
    NoRegisterCount { cubin: PathBuf },
    #[error("{}: placeholder '{text}' uses registers beyond the kernel's {regs}", cubin.display())]
    RegistersBeyond { cubin: PathBuf, text: String, regs: u32 },
    /// The template's listing has no word where a placeholder (or the word before it) is.
    #[error("no word at {addr:#x} in the template's listing")]
    NoWordAt { addr: u64 },
    #[error(transparent)]
    Fit(#[from] FitError),
    /// `exec --barrier-experiment` without the dry run that builds its cubins.
    #[error("{}: {source} (build it with exec --dry-run --barrier-experiment)", path.display())]
    NoBarrierPlan { path: PathBuf, source: std::io::Error },
    /// The device runs none of the plan's architectures.
    #[error(
        "the device is {tool}; the plan has runnable words for {} only: nothing would run (build the plan for this architecture, or run it where one of those is)",
        if archs.is_empty() { "no architecture".to_string() } else { archs.join(", ") }
    )]
    NothingRuns { tool: String, archs: Vec<String> },
    /// The unpatched template failed on the device: nothing else can work here.
    #[error("canary: the unpatched template {} failed on {tool}: {trap}. Nothing else was run: this machine cannot load or run these cubins (a driver older than the ptxas that built them?)", cubin.display())]
    CanaryTrap { cubin: PathBuf, tool: String, trap: String },
    /// The unpatched template ran and left the output buffer's fill everywhere.
    #[error("canary: the unpatched template {} ran on {tool} but stored nothing. Nothing else was run", cubin.display())]
    CanaryStoredNothing { cubin: PathBuf, tool: String },
}

impl GpuError {
    /// A [`GpuError::File`] for `path`.
    pub fn file(path: &Path) -> impl FnOnce(std::io::Error) -> GpuError + '_ {
        move |source| GpuError::File { path: path.to_path_buf(), source }
    }
}

/// Why a placeholder of a template cannot be used: `text` is the placeholder as nvdisasm
/// prints it.
#[derive(Debug, thiserror::Error)]
pub enum SlotError {
    #[error("{text}: the listing has no encoding (run nvdisasm with -hex)")]
    NoEncoding { text: String },
    #[error("{text}: no register destination")]
    NoDestination { text: String },
    #[error("{text}: nothing writes R{reg} before it")]
    NotWritten { text: String, reg: u16 },
    /// The source comes from another instruction than a full-width `LDG` (`from`, at `addr`).
    #[error("{text}: R{reg} comes from '{from}' at {addr:#x}, not a full-width load")]
    NotLoaded { text: String, reg: u16, from: String, addr: u64 },
    #[error("{text}: cannot read the offset of {operand}")]
    NoOffset { text: String, operand: String },
    #[error("{text}: R{reg} is stored by {store} (wrong width)")]
    StoreWidth { text: String, reg: u16, store: String },
    #[error("{text}: R{reg} is overwritten or the kernel ends before it is stored")]
    Overwritten { text: String, reg: u16 },
    #[error("{text}: R{reg} is never stored")]
    NeverStored { text: String, reg: u16 },
}

/// A word that does not fit a placeholder: its operand `operand` is a register and the
/// placeholder has no register there.
#[derive(Debug, thiserror::Error)]
#[error("{variant}: operand {operand} is a register, the placeholder '{placeholder}' has none there")]
pub struct FitError {
    pub variant: String,
    pub operand: usize,
    pub placeholder: String,
}

/// Why an `operand_form` register cannot be pinned to the partner's operand value.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// The partner word has no model instruction (it decodes as no variant, say).
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{insn}: no operand {k}")]
    NoOperand { insn: Box<Instruction>, k: usize },
    #[error("{insn}: operand {k}: {source}")]
    Operand { insn: Box<Instruction>, k: usize, source: ModelError },
}

/// A worker child that gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot start worker: {0}")]
    Start(#[source] std::io::Error),
    #[error("worker timed out after {:.0} s (hang?) and was killed", .0.as_secs_f64())]
    TimedOut(Duration),
    #[error("waiting for worker: {0}")]
    Wait(#[source] std::io::Error),
    #[error("reading worker output: {0}")]
    Output(#[source] std::io::Error),
    #[error("worker died ({status}): {stderr}")]
    Died { status: std::process::ExitStatus, stderr: String },
    /// The probe exited 0 with an answer that is not `{"tool":…}`.
    #[error("probe answered '{answer}': {source}")]
    BadAnswer { answer: String, source: serde_json::Error },
    /// The probe found no device: what the child said (stdout, then stderr).
    #[error("{0}")]
    NoDevice(String),
}

/// Why no CUDA executor exists in this process.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// No driver can be loaded here: [`super::cuda::NO_DRIVER`] (always, in a build
    /// without the `gpu` feature).
    #[error("{}", super::cuda::NO_DRIVER)]
    NoDriver,
    /// `cuInit` or the context for device 0 failed: the driver's error.
    #[error("no usable CUDA device: {0}")]
    NoDevice(String),
    /// The driver did not say the device's compute capability: its error.
    #[error("cannot read the device's compute capability: {0}")]
    Capability(String),
}
