//! The write-barrier experiment: is the page's `w-bar` field really the write barrier?
//!
//! A variable-latency placeholder (ptxas set a write barrier on it) and its store, whose
//! wait mask waits on that barrier. Three cubins per template:
//! - `as_compiled`: unchanged; every thread must match the model.
//! - `no_write_barrier`: the producer's `w-bar` set to 7 (none). If that field is the
//!   write barrier, the store no longer waits and reads the destination's old value
//!   (stale) in some threads.
//! - `no_wait`: the barrier's bit cleared from the wait mask of every instruction between
//!   the producer and its store: the same hazard from the consumer side.
//!
//! Verdict: `as_compiled` all model and both others showing stale values confirms the
//! fields; stale values in `as_compiled`, or none anywhere, say the labels (or the
//! latency) are not what the page assumes. Only a GPU can run it (`exec --barrier-experiment`).

use super::dryrun::{build_template, SECTION};
use super::slots::Slot;
use super::template::Kind;
use super::{inputs, patch};
use crate::codec::Codec;
use crate::cubin;
use crate::oracle::exec::{strides, Batch, Executor};
use crate::oracle::nvdisasm::Nvdisasm;
use crate::semantics::{evaluate, Inputs, Loc};
use crate::spec::{Arch, Control, FieldKind, Variant};
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

pub const EXPERIMENTS: [&str; 3] = ["as_compiled", "no_write_barrier", "no_wait"];

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BarrierCubin {
    pub arch: u32,
    pub kind: Kind,
    pub experiment: String,
    pub cubin: String,
    /// Placeholders the template was compiled with: the records are laid out for all.
    pub template_slots: u32,
    pub slots: Vec<Slot>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BarrierResult {
    pub arch: u32,
    pub kind: Kind,
    pub experiment: String,
    pub slot_offset: u64,
    pub threads: u32,
    pub model: u32,
    pub stale: u32,
    pub other: u32,
}

fn control_bits(v: &Variant, c: Control) -> Vec<u8> {
    v.fields.iter().find(|f| f.kind == FieldKind::Control { control: c }).map(|f| f.bits.clone()).unwrap_or_default()
}

fn get(w: Word, bits: &[u8]) -> u64 {
    bits.iter().enumerate().fold(0, |a, (k, &b)| a | (w.bit(b) as u64) << k)
}

fn set(w: Word, bits: &[u8], x: u64) -> Word {
    bits.iter().enumerate().fold(w, |w, (k, &b)| w.with_bit(b, x >> k & 1 == 1))
}

/// The experiment's cubin bytes from the template.
fn variant_bytes(t: &super::dryrun::Template, v: &Variant, slots: &[Slot], exp: &str) -> Result<Vec<u8>, String> {
    let (wb, wm) = (control_bits(v, Control::WriteBarrier), control_bits(v, Control::WaitMask));
    let mut bytes = t.bytes.clone();
    let words: std::collections::BTreeMap<u64, Word> = t.listing.iter().filter_map(|(a, _, w)| w.map(|w| (*a, w))).collect();
    let mut edits: std::collections::BTreeMap<u64, Word> = Default::default();
    for s in slots {
        let bar = get(s.word, &wb);
        match exp {
            "no_write_barrier" => {
                edits.insert(s.offset, set(s.word, &wb, 7));
            }
            "no_wait" => {
                for (&a, &w) in words.range(s.offset + 16..=s.store_at) {
                    let w = *edits.get(&a).unwrap_or(&w);
                    edits.insert(a, set(w, &wm, get(w, &wm) & !(1 << bar)));
                }
            }
            _ => {}
        }
    }
    for (a, w) in edits {
        bytes = cubin::patch_word(&bytes, SECTION, a, w).map_err(|e| e.to_string())?;
    }
    Ok(bytes)
}

/// Build the experiment cubins for every template kind whose placeholder has a write
/// barrier; write `barrier/plan.jsonl`. Kinds without one are listed as not applicable.
pub fn build(codec: &Codec, nv: &Nvdisasm, ptxas: &Path, out: &Path, nslots: u32) -> Result<usize, String> {
    let dir = out.join("barrier");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut plan = std::fs::File::create(dir.join("plan.jsonl")).map_err(|e| e.to_string())?;
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    for v in codec.variants() {
        let Some(kind) = Kind::for_mnemonic(&v.mnemonic) else { continue };
        if !seen.insert((v.arch, kind)) {
            continue;
        }
        let t = build_template(nv, ptxas, kind, v.arch, nslots, &dir.join("templates"))?;
        let wb = control_bits(v, Control::WriteBarrier);
        let slots: Vec<Slot> = t.slots.iter().filter(|s| get(s.word, &wb) != 7).cloned().collect();
        if slots.is_empty() {
            println!("barrier experiment: {} on {}: placeholder has no write barrier (fixed latency), not applicable", kind.name(), v.arch);
            continue;
        }
        for exp in EXPERIMENTS {
            let rel = format!("barrier/{}.{}.{exp}.cubin", kind.name(), v.arch.ptxas_name());
            std::fs::write(out.join(&rel), variant_bytes(&t, v, &slots, exp)?).map_err(|e| e.to_string())?;
            let c = BarrierCubin { arch: v.arch.0, kind, experiment: exp.into(), cubin: rel, template_slots: nslots, slots: slots.clone() };
            writeln!(plan, "{}", serde_json::to_string(&c).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            n += 1;
        }
    }
    Ok(n)
}

/// Classify each thread's stored value: the model's result, the destination's old value
/// (the source loaded into the same register), or something else.
pub fn classify(codec: &Codec, c: &BarrierCubin, b: &Batch, input: &[u8], output: &[u8]) -> Vec<BarrierResult> {
    let bytes = (c.kind.reg_bits() / 8) as usize;
    let rd = |buf: &[u8], at: usize| buf.get(at..at + bytes).map(|x| x.iter().rev().fold(0u64, |a, &y| a << 8 | y as u64));
    c.slots
        .iter()
        .map(|s| {
            let v = codec.variants().iter().find(|v| v.arch.0 == c.arch);
            let insn = v.and_then(|v| crate::semantics::instruction(codec, Arch(c.arch), patch::clear_reuse(v, s.word)).ok());
            let mut r = BarrierResult { arch: c.arch, kind: c.kind, experiment: c.experiment.clone(), slot_offset: s.offset, threads: b.threads, model: 0, stale: 0, other: 0 };
            for t in 0..b.threads as usize {
                let mut i = Inputs::default();
                let vals: Vec<(u16, Option<u64>)> = s.sources.iter().map(|x| (x.reg, rd(input, t * b.in_stride as usize + x.in_offset as usize))).collect();
                vals.iter().for_each(|(reg, v)| i.set(Loc::R(*reg), v.unwrap_or(0)));
                let want = insn.as_ref().and_then(|insn| evaluate(insn, &i).ok()).and_then(|o| o.0.first().map(|o| o.bits));
                let got = rd(output, t * b.out_stride as usize + s.out_offset as usize);
                let stale = vals.iter().find(|(reg, _)| *reg == s.dest).and_then(|x| x.1);
                match got {
                    g if g.is_some() && g == want => r.model += 1,
                    g if g.is_some() && g == stale => r.stale += 1,
                    _ => r.other += 1,
                }
            }
            r
        })
        .collect()
}

/// Run every experiment cubin once; write `barrier/results.jsonl` and print a verdict.
pub fn run(codec: &Codec, dev: &mut dyn Executor, out: &Path, threads: u32, seed: u64) -> Result<(), String> {
    let plan = std::fs::read_to_string(out.join("barrier/plan.jsonl")).map_err(|e| e.to_string())?;
    let mut res = std::fs::File::create(out.join("barrier/results.jsonl")).map_err(|e| e.to_string())?;
    for line in plan.lines() {
        let c: BarrierCubin = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let (in_stride, out_stride) = strides(c.kind, c.template_slots);
        let input = inputs::generate(c.kind, c.template_slots, threads, seed);
        let b = Batch { cubin: out.join(&c.cubin), function: "slots".into(), threads, in_stride, out_stride, k: 0, sentinel: 0xa5a5_a5a5 };
        match dev.run(&b, &input) {
            Ok(o) => {
                for r in classify(codec, &c, &b, &input, &o) {
                    println!("barrier {} {:?} {} slot {:#x}: model {} stale {} other {}", c.arch, c.kind, c.experiment, r.slot_offset, r.model, r.stale, r.other);
                    writeln!(res, "{}", serde_json::to_string(&r).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
                }
            }
            Err(t) => println!("barrier {} {:?} {}: trap: {}", c.arch, c.kind, c.experiment, t.message),
        }
    }
    Ok(())
}
