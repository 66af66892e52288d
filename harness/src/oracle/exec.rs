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
use crate::sass::Instruction;
use crate::semantics::{evaluate, Inputs, Loc};
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

fn hex(v: u64, bytes: u32) -> String {
    format!("{v:#0w$x}", w = (bytes * 2 + 2) as usize)
}

fn read(buf: &[u8], at: usize, bytes: u32) -> u64 {
    buf.get(at..at + bytes as usize).map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64)).unwrap_or(0)
}

/// The model's inputs for one thread of one plan entry.
pub fn thread_inputs(e: &PlanEntry, input: &[u8], thread: usize, in_stride: u32, k: u64) -> Inputs {
    let bytes = e.template.reg_bits() / 8;
    let mut i = Inputs::default();
    for s in &e.sources {
        i.set(Loc::R(s.reg), read(input, thread * in_stride as usize + s.in_offset as usize, bytes));
    }
    i.set(Loc::Const { bank: 0, offset: const_input_offset(Arch(e.arch)) as i64 }, k);
    i
}

/// The instruction the model evaluates for an entry: the word itself, or for a hidden
/// bit the word without the flip (nvdisasm says they are the same instruction).
pub fn entry_instruction(codec: &Codec, e: &PlanEntry) -> Result<Instruction, String> {
    let w = e.base_word.as_deref().unwrap_or(&e.word);
    let w = Word::parse_hex(w).ok_or_else(|| format!("plan word '{w}' is not hex"))?;
    crate::semantics::instruction(codec, Arch(e.arch), w)
}

/// Compare one entry's outputs over every thread of a batch with the model: a finding
/// when some differ; `Err` when the word has no model (nothing to compare with).
pub fn check_entry(codec: &Codec, tool: &str, e: &PlanEntry, b: &Batch, input: &[u8], output: &[u8]) -> Result<Option<ExecFinding>, String> {
    let insn = entry_instruction(codec, e).map_err(|m| format!("cannot decode: {m}"))?;
    let bytes = e.template.reg_bits() / 8;
    let mut f = finding(tool, e, if e.bit.is_some() { ExecClass::HiddenSemantics } else { ExecClass::Semantics }, &insn.to_string(), String::new());
    for t in 0..b.threads as usize {
        let inputs = thread_inputs(e, input, t, b.in_stride, b.k);
        let want = match evaluate(&insn, &inputs) {
            Ok(o) => o.0.iter().find(|o| o.loc == Loc::R(e.dest)).map(|o| o.bits),
            Err(m) => return Err(m.to_string()),
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

/// The CPU models as a device: what a correct GPU would write. `flip_results` corrupts
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
        for e in self.entries.iter().filter(|e| b.cubin.ends_with(&e.cubin)) {
            let insn = entry_instruction(self.codec, e).map_err(|m| Trap { message: m })?;
            let bytes = e.template.reg_bits() / 8;
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
