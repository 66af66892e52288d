//! The execution oracle seam: run patched words on inputs, compare with the CPU models.
//!
//! An [`Executor`] runs one batch (a patched cubin, per-thread input records) and returns
//! the output records, or a [`Trap`]. Implementations: `gpu::cuda::CudaExecutor` (in the
//! process that owns the CUDA context), `gpu::worker::ChildExecutor` (each batch in a
//! child process with a time limit), and [`ModelExecutor`] (the CPU models themselves:
//! a fake device for testing everything around the launch).

use crate::codec::Codec;
use crate::oracle::gpu::dryrun::PlanEntry;
use crate::oracle::gpu::template::{const_input_offset, Kind};
use crate::oracle::gpu::GpuError;
use crate::sass::Instruction;
use crate::semantics::{evaluate, Inputs, Loc, ModelError};
use crate::spec::Arch;
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One launch: a patched cubin and the shape of its records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub cubin: PathBuf,
    pub function: String,
    pub threads: u32,
    /// Bytes per thread of input and of output.
    pub in_stride: u32,
    pub out_stride: u32,
    /// The 64-bit kernel parameter `k` (the value of every `c[0x0][…]` source).
    pub k: u64,
    /// The output buffer is filled with this 32-bit pattern before the launch.
    pub sentinel: u32,
}

/// The GPU faulted, hung or the worker died: the batch has no results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trap {
    pub message: String,
}

pub trait Executor {
    /// Device and driver, for the `tool` field of findings.
    fn tool(&self) -> String;
    /// Run `batch` on `input` (`threads * in_stride` bytes); the output records.
    fn run(&mut self, batch: &Batch, input: &[u8]) -> Result<Vec<u8>, Trap>;
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecClass {
    /// The result differs from the model.
    Semantics,
    /// A fixed bit nvdisasm ignores changes the result.
    HiddenSemantics,
    /// The GPU faulted (or the batch hung / its worker died).
    Trap,
    /// The register form of the word, its source holding the operand's value, gave a
    /// different result (no model needed).
    OperandForm,
    /// Two runs of the same word on the same inputs gave different results (or the result
    /// shows the output buffer's fill: nothing was stored).
    Rerun,
}

/// One JSON line of `exec-findings.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecFinding {
    /// Device and driver (`NVIDIA H200, driver 13000, sm_90`).
    pub tool: String,
    pub class: ExecClass,
    pub arch: u32,
    pub variant: String,
    pub word: String,
    /// For `hidden_semantics`: the flipped bit, and the word without it.
    pub bit: Option<u8>,
    pub base_word: Option<String>,
    pub text: String,
    /// Up to [`EXAMPLES`] inputs that show it, with what the model and the GPU wrote.
    pub examples: Vec<Example>,
    /// How many of the inputs disagreed.
    pub mismatches: usize,
    /// How many of those stored the destination's old value (when a source shares the
    /// destination register): a latency or barrier problem rather than semantics.
    #[serde(default)]
    pub stale_reads: usize,
    pub inputs_run: usize,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    pub inputs: BTreeMap<String, String>,
    pub expected: BTreeMap<String, String>,
    pub actual: BTreeMap<String, String>,
}

pub const EXAMPLES: usize = 8;

/// Why a plan entry has no instruction for the model to evaluate.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("plan word '{0}' is not hex")]
    NotHex(String),
    /// The word decodes as no variant (or its instruction cannot be built).
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Why [`check_entry`] has nothing to compare an entry's outputs with.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot decode: {0}")]
    Decode(#[from] EntryError),
    /// The model does not evaluate the instruction (no model for its mnemonic, a missing
    /// input).
    #[error(transparent)]
    Model(#[from] ModelError),
}

fn hex(v: u64, bytes: u32) -> String {
    format!("{v:#0w$x}", w = (bytes * 2 + 2) as usize)
}

fn read(buf: &[u8], at: usize, bytes: u32) -> u64 {
    buf.get(at..at + bytes as usize).map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64)).unwrap_or(0)
}

/// The model's inputs for one thread of one plan entry.
pub fn thread_inputs(e: &PlanEntry, input: &[u8], thread: usize, in_stride: u32, k: u64) -> Inputs {
    let bytes = e.template.src_bits() / 8;
    let mut i = Inputs::default();
    for s in &e.sources {
        i.set(Loc::R(s.reg), read(input, thread * in_stride as usize + s.in_offset as usize, bytes));
    }
    let offset = const_input_offset(Arch(e.arch)) as i64;
    i.set(Loc::Const { bank: 0, offset }, k);
    // `cx[URZ][…]`: bank 0 assumed (see `patch::not_executable`).
    i.set(Loc::ConstX { ureg: crate::sass::URZ, offset }, k);
    i
}

/// The instruction the model evaluates for an entry: the word itself, or for a hidden
/// bit the word without the flip (nvdisasm says they are the same instruction).
pub fn entry_instruction(codec: &Codec, e: &PlanEntry) -> Result<Instruction, EntryError> {
    let w = e.base_word.as_deref().unwrap_or(&e.word);
    let w = Word::parse_hex(w).ok_or_else(|| EntryError::NotHex(w.into()))?;
    Ok(crate::semantics::instruction(codec, Arch(e.arch), w)?)
}

/// Compare one entry's outputs over every thread of a batch with the model: a finding
/// when some differ; `Err` when the word has no model (nothing to compare with).
pub fn check_entry(codec: &Codec, tool: &str, e: &PlanEntry, b: &Batch, input: &[u8], output: &[u8]) -> Result<Option<ExecFinding>, CheckError> {
    let insn = entry_instruction(codec, e)?;
    let bytes = e.template.dst_bits() / 8;
    let mut f = finding(tool, e, if e.bit.is_some() { ExecClass::HiddenSemantics } else { ExecClass::Semantics }, &insn.to_string(), String::new());
    for t in 0..b.threads as usize {
        let inputs = thread_inputs(e, input, t, b.in_stride, b.k);
        let want = match evaluate(&insn, &inputs) {
            Ok(o) => o.0.iter().find(|o| o.loc == Loc::R(e.dest)).map(|o| o.bits),
            Err(m) => return Err(m.into()),
        };
        let got = read(output, t * b.out_stride as usize + e.out_offset as usize, bytes);
        if want == Some(got) {
            continue;
        }
        f.mismatches += 1;
        let old = e.sources.iter().find(|s| s.reg == e.dest).and_then(|s| inputs.0.get(&Loc::R(s.reg)));
        if old == Some(&got) {
            f.stale_reads += 1;
        }
        if f.examples.len() < EXAMPLES {
            let show = |m: &Inputs| m.0.iter().map(|(k, v)| (k.to_string(), hex(*v, 8))).collect();
            let want_s = want.map(|w| hex(w, bytes)).unwrap_or_else(|| "(not written)".into());
            f.examples.push(Example {
                inputs: show(&inputs),
                expected: [(format!("R{}", e.dest), want_s)].into(),
                actual: [(format!("R{}", e.dest), hex(got, bytes))].into(),
            });
        }
    }
    f.inputs_run = b.threads as usize;
    Ok((f.mismatches > 0).then(|| {
        f.message = format!("{} of {} inputs differ from the model", f.mismatches, b.threads);
        if f.stale_reads > 0 {
            f.message.push_str(&format!("; {} stored the destination's old value (latency/barrier?)", f.stale_reads));
        }
        f
    }))
}

pub fn finding(tool: &str, e: &PlanEntry, class: ExecClass, text: &str, message: String) -> ExecFinding {
    ExecFinding {
        tool: tool.into(),
        class,
        arch: e.arch,
        variant: e.variant.clone(),
        word: e.word.clone(),
        bit: e.bit,
        base_word: e.base_word.clone(),
        text: text.into(),
        examples: vec![],
        mismatches: 0,
        stale_reads: 0,
        inputs_run: 0,
        message,
    }
}

/// The CPU models as a device: what a correct GPU would write (nothing for a word without
/// a model: the output keeps its fill). `flip_results` corrupts
/// one output bit of every thread (a wrong device, for testing the comparison);
/// `hidden_only` limits that to hidden-bit words (a device where a flipped bit matters).
pub struct ModelExecutor<'a> {
    pub codec: &'a Codec<'a>,
    pub entries: Vec<PlanEntry>,
    pub flip_results: bool,
    pub hidden_only: bool,
}

impl Executor for ModelExecutor<'_> {
    fn tool(&self) -> String {
        "cpu-model (fake device)".into()
    }
    fn run(&mut self, b: &Batch, input: &[u8]) -> Result<Vec<u8>, Trap> {
        let mut out: Vec<u8> = b.sentinel.to_le_bytes().iter().copied().cycle().take((b.threads * b.out_stride) as usize).collect();
        if !self.entries.iter().any(|e| b.cubin.ends_with(&e.cubin)) {
            // A cubin without plan words (a template alone, the canary) stores zeros.
            return Ok(vec![0; out.len()]);
        }
        for e in self.entries.iter().filter(|e| b.cubin.ends_with(&e.cubin)) {
            let insn = entry_instruction(self.codec, e).map_err(|m| Trap { message: m.to_string() })?;
            let bytes = e.template.dst_bits() / 8;
            for t in 0..b.threads as usize {
                let inputs = thread_inputs(e, input, t, b.in_stride, b.k);
                let Ok(o) = evaluate(&insn, &inputs) else { continue };
                let flip = self.flip_results && (!self.hidden_only || e.bit.is_some());
                let Some(v) = o.0.first().map(|o| o.bits ^ flip as u64) else { continue };
                let at = t * b.out_stride as usize + e.out_offset as usize;
                out[at..at + bytes as usize].copy_from_slice(&v.to_le_bytes()[..bytes as usize]);
            }
        }
        Ok(out)
    }
}

/// Record sizes of a template kind with `slots` placeholders (what `template::ptx` lays out).
pub fn strides(kind: Kind, slots: u32) -> (u32, u32) {
    let (i, o) = kind.slot_bytes();
    (i * slots, o * slots)
}

/// How [`plan_words`] runs its plan; `None` in [`PlanOptions::run`] is a dry run.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Threads per launch (rounded up to a multiple of 256).
    pub inputs: u32,
    /// Seconds one child run may take.
    pub timeout: std::time::Duration,
    /// The whole run's limit (checked between cubins).
    pub time_limit: Option<std::time::Duration>,
    /// (testing) a fake device: see `exec --fake`.
    pub fake: Option<String>,
    /// Page files or folders, for the fake devices that run the models.
    pub spec: Vec<PathBuf>,
    /// The sass-harness binary that runs each batch (`exec-worker`); `None`: this program.
    pub exe: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Folder for the plan, the cubins and the findings.
    pub out: PathBuf,
    pub slots: u32,
    pub seed: u64,
    pub run: Option<RunSettings>,
    /// The nvdisasm that proves the patched cubins, as the caller set it up (a reply
    /// cache, a timeout); `None`: [`crate::oracle::nvdisasm::Nvdisasm::locate`]'s.
    pub nvdisasm: Option<crate::oracle::nvdisasm::Nvdisasm>,
}

/// What [`plan_words`] did: the plan (always), and the run when one was asked for and a
/// device exists.
#[derive(Clone, Debug, Default)]
pub struct PlanSummary {
    pub plan: crate::oracle::gpu::dryrun::Report,
    pub run: Option<crate::oracle::gpu::cli::RunSummary>,
    /// A run was asked for and no device can run it: why (the caller's exit status 3).
    pub no_gpu: Option<String>,
}

impl PlanSummary {
    /// The exit status this outcome means: 3 no GPU, 1 a patch failure or a finding,
    /// 5 stopped by the time limit, else 0.
    pub fn exit_status(&self) -> u8 {
        match &self.run {
            _ if self.no_gpu.is_some() => crate::oracle::gpu::worker::EXIT_NO_GPU as u8,
            _ if !self.plan.failures.is_empty() => 1,
            Some(r) if r.findings > 0 => 1,
            Some(r) if r.stopped_early => crate::oracle::gpu::cli::EXIT_TIME_LIMIT,
            _ => 0,
        }
    }
}

/// Plan (and with [`PlanOptions::run`], run) arbitrary words with the relations that need
/// no model: the seam `crosscheck --dry-run|--exec` calls with its replayed words. Words
/// no template holds are counted (`plan.no_template`), never an error. The plan goes to
/// `opts.out` (cubins proven in place by nvdisasm, as `exec --dry-run`); findings to
/// `opts.out/exec-findings.jsonl`. Err only when it cannot work (tools missing, I/O).
pub fn plan_words(codec: &Codec, words: &[(Arch, Word)], opts: &PlanOptions) -> Result<PlanSummary, GpuError> {
    use crate::oracle::gpu::{cli, dryrun};
    let mut sum = PlanSummary::default();
    let mut dev = match &opts.run {
        Some(r) => {
            let mut dev = cli::child_executor(&opts.out, r.timeout, r.fake.clone(), &r.spec)?;
            if let Some(exe) = &r.exe {
                dev.exe = exe.clone();
            }
            if let Some(why) = cli::find_device(&mut dev) {
                sum.no_gpu = Some(why);
                return Ok(sum);
            }
            Some(dev)
        }
        None => None,
    };
    let nv = match &opts.nvdisasm {
        Some(nv) => nv.clone(),
        None => crate::oracle::nvdisasm::Nvdisasm::locate()?,
    };
    let ptxas = crate::oracle::tools::locate(crate::oracle::tools::Tool::Ptxas)?;
    let dopts = dryrun::Options { out: opts.out.clone(), slots: opts.slots, random: 0, seed: opts.seed };
    sum.plan = dryrun::plan_words(codec, &nv, &ptxas, words, &dopts)?;
    let (Some(dev), Some(r), true) = (dev.as_mut(), &opts.run, sum.plan.failures.is_empty()) else {
        return Ok(sum);
    };
    let entries = cli::read_plan(&opts.out.join("plan.jsonl"))?;
    if entries.is_empty() {
        return Ok(sum);
    }
    dev.entries = entries.clone();
    let ro = cli::RunOptions {
        out: opts.out.clone(),
        slots: opts.slots,
        inputs: r.inputs.div_ceil(256) * 256,
        seed: opts.seed,
        time_limit: r.time_limit,
        resume: false,
    };
    sum.run = Some(cli::run_plan(codec, dev, &entries, &opts.out, &ro)?);
    Ok(sum)
}
