//! The write-barrier experiment: is the page's `w-bar` field really the write barrier?
//!
//! Label-agnostic: a slot qualifies when one of the page's two 3-bit barrier fields
//! (`r-bar`, `w-bar`) holds a barrier b on the placeholder and its store's wait mask has
//! bit b (a variable-latency producer and a consumer that waits for it). Per template:
//! - `as_compiled`: unchanged; every thread must match the model.
//! - `clear_<field>`: that field set to 7 (none) on the producer; `move_to_<other>`: the
//!   barrier moved into the other field. Where the moved-from field is the write barrier,
//!   the store stops waiting and reads the destination's old value (stale) in some threads.
//! - `no_wait`: bit b cleared from the wait mask of every instruction between producer
//!   and store: the same hazard from the consumer side (checks the wait-mask field).
//!
//! Without a GPU, [`build`] reports ptxas's own evidence: which page field ptxas puts the
//! barrier in that consumers wait on. Only a GPU runs the cubins (`exec --barrier-experiment`).

use super::dryrun::{build_template, SECTION};
use super::error::GpuError;
use super::inputs;
use super::slots::Slot;
use super::template::Kind;
use crate::codec::Codec;
use crate::cubin;
use crate::oracle::exec::{strides, Batch, Executor};
use crate::oracle::nvdisasm::Nvdisasm;
use crate::spec::{Control, FieldKind, Variant};
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

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

/// The page's barrier fields: (label, bits) of `r-bar` and `w-bar`.
fn barrier_fields(v: &Variant) -> Vec<(String, Vec<u8>)> {
    v.fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Control { control: Control::ReadBarrier | Control::WriteBarrier }))
        .map(|f| (f.name.clone(), f.bits.clone()))
        .collect()
}

/// Which page field of the placeholder holds a barrier its store waits on: (field, b).
fn waited_field(v: &Variant, s: &Slot, store: Word) -> Option<(usize, u64)> {
    let wm = control_bits(v, Control::WaitMask);
    barrier_fields(v).iter().enumerate().find_map(|(i, (_, bits))| {
        let b = get(s.word, bits);
        (b != 7 && get(store, &wm) >> b & 1 == 1).then_some((i, b))
    })
}

/// The experiment's cubin bytes from the template.
fn variant_bytes(t: &super::dryrun::Template, v: &Variant, slots: &[Slot], exp: &str) -> Result<Vec<u8>, cubin::CubinError> {
    let (fields, wm) = (barrier_fields(v), control_bits(v, Control::WaitMask));
    let words: std::collections::BTreeMap<u64, Word> = t.listing.iter().filter_map(|(a, _, w)| w.map(|w| (*a, w))).collect();
    let mut edits: std::collections::BTreeMap<u64, Word> = Default::default();
    for s in slots {
        let Some(store) = words.get(&s.store_at) else { continue };
        let Some((fi, bar)) = waited_field(v, s, *store) else { continue };
        let (from, other) = (&fields[fi].1, &fields[1 - fi.min(1)].1);
        match exp {
            e if e.starts_with("clear_") => {
                edits.insert(s.offset, set(s.word, from, 7));
            }
            e if e.starts_with("move_to_") => {
                edits.insert(s.offset, set(set(s.word, from, 7), other, bar));
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
    let mut bytes = t.bytes.clone();
    for (a, w) in edits {
        bytes = cubin::patch_word(&bytes, SECTION, a, w)?;
    }
    Ok(bytes)
}

/// The experiments for a template whose waited barrier sits in page field `fi`.
fn experiments(fields: &[(String, Vec<u8>)], fi: usize) -> Vec<String> {
    let other = &fields[1 - fi.min(1)].0;
    vec!["as_compiled".into(), format!("clear_{}", fields[fi].0), format!("move_to_{other}"), "no_wait".into()]
}

/// Build the experiment cubins for every template kind whose placeholder's store waits
/// on a barrier the placeholder sets; write `barrier/plan.jsonl` and ptxas's evidence
/// (`barrier/ptxas-evidence.jsonl`: which page field holds the barrier consumers wait on).
pub fn build(codec: &Codec, nv: &Nvdisasm, ptxas: &Path, out: &Path, nslots: u32) -> Result<usize, GpuError> {
    let dir = out.join("barrier");
    std::fs::create_dir_all(&dir).map_err(GpuError::file(&dir))?;
    let (plan_path, evidence_path) = (dir.join("plan.jsonl"), dir.join("ptxas-evidence.jsonl"));
    let mut plan = std::fs::File::create(&plan_path).map_err(GpuError::file(&plan_path))?;
    let mut evidence = std::fs::File::create(&evidence_path).map_err(GpuError::file(&evidence_path))?;
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    // I2F (cvt.rn.f32.s16) is variable-latency on every architecture: one template per
    // architecture of the spec, whatever its pages; the reference is the PTX op itself.
    let kind = Kind::I2f;
    for v in codec.variants() {
        if !seen.insert(v.arch) {
            continue;
        }
        let t = build_template(nv, ptxas, kind, v.arch, nslots, &dir.join("templates"))?;
        let words: std::collections::HashMap<u64, Word> = t.listing.iter().filter_map(|(a, _, w)| w.map(|w| (*a, w))).collect();
        let fields = barrier_fields(v);
        let waited: Vec<(Slot, usize)> = t.slots.iter().filter_map(|s| waited_field(v, s, *words.get(&s.store_at)?).map(|(fi, _)| (s.clone(), fi))).collect();
        let Some(&(_, fi)) = waited.first() else {
            println!("barrier experiment: {} on {}: the placeholder sets no barrier its store waits on (fixed latency): not applicable", kind.name(), v.arch);
            continue;
        };
        let (label, bits) = &fields[fi];
        let line =
            serde_json::json!({"arch": v.arch.0, "template": kind, "placeholder": t.slots[0].text, "waited_field": label, "bits": bits, "slots": waited.len()});
        writeln!(evidence, "{line}").map_err(GpuError::file(&evidence_path))?;
        println!(
            "barrier evidence: ptxas puts the barrier that {}'s store waits on in the page's `{label}` field (bits {bits:?}), {} slots",
            kind.placeholder(),
            waited.len()
        );
        let slots: Vec<Slot> = waited.into_iter().filter(|w| w.1 == fi).map(|w| w.0).collect();
        for exp in experiments(&fields, fi) {
            let rel = format!("barrier/{}.{}.{exp}.cubin", kind.name(), v.arch.ptxas_name());
            let path = out.join(&rel);
            std::fs::write(&path, variant_bytes(&t, v, &slots, &exp)?).map_err(GpuError::file(&path))?;
            let c = BarrierCubin { arch: v.arch.0, kind, experiment: exp, cubin: rel, template_slots: nslots, slots: slots.clone() };
            writeln!(plan, "{}", serde_json::to_string(&c)?).map_err(GpuError::file(&plan_path))?;
            n += 1;
        }
    }
    Ok(n)
}

/// What the placeholder computes, from its PTX (`cvt.rn.f32.s16`): the reference the
/// experiment compares with, independent of any page.
fn reference(kind: Kind, src: u64) -> Option<u64> {
    match kind {
        Kind::I2f => Some(crate::semantics::ops::i2f(src as u16 as i16 as i128, crate::semantics::Format::F32, crate::semantics::Rounding::Rn)),
        _ => None,
    }
}

/// Classify each thread's stored value: the reference result, the destination's old
/// value (the source loaded into the same register), or something else.
pub fn classify(c: &BarrierCubin, b: &Batch, input: &[u8], output: &[u8]) -> Vec<BarrierResult> {
    let bytes = (c.kind.dst_bits() / 8) as usize;
    let rd = |buf: &[u8], at: usize| buf.get(at..at + bytes).map(|x| x.iter().rev().fold(0u64, |a, &y| a << 8 | y as u64));
    c.slots
        .iter()
        .map(|s| {
            let mut r = BarrierResult {
                arch: c.arch,
                kind: c.kind,
                experiment: c.experiment.clone(),
                slot_offset: s.offset,
                threads: b.threads,
                model: 0,
                stale: 0,
                other: 0,
            };
            for t in 0..b.threads as usize {
                let vals: Vec<(u16, Option<u64>)> = s.sources.iter().map(|x| (x.reg, rd(input, t * b.in_stride as usize + x.in_offset as usize))).collect();
                let want = vals.first().and_then(|v| v.1).and_then(|x| reference(c.kind, x));
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

/// One line per experiment: what the counts say about the field it changed.
pub fn verdict(experiment: &str, model: u32, hazard: u32) -> String {
    let what = match experiment {
        "as_compiled" if hazard == 0 => "as compiled: every result is the reference (the template works)".to_string(),
        "as_compiled" => "as compiled: results differ from the reference: template or device problem, the rest is void".to_string(),
        e if hazard > 0 => format!("{e}: the store read before the result was written ({hazard} threads): the field changed carries the wait"),
        e => format!("{e}: no hazard seen (the field changed is not the one waited on, or the latency was hidden)"),
    };
    format!("{what} [model {model}, other {hazard}]")
}

/// Run every experiment cubin for the device's architecture once; write
/// `barrier/results.jsonl` (per slot) and print one verdict per experiment.
pub fn run(dev: &mut dyn Executor, plan_dir: &Path, out: &Path, threads: u32, seed: u64) -> Result<(), GpuError> {
    let p = plan_dir.join("barrier/plan.jsonl");
    let plan = std::fs::read_to_string(&p).map_err(|source| GpuError::NoBarrierPlan { path: p.clone(), source })?;
    let (dir, res_path) = (out.join("barrier"), out.join("barrier/results.jsonl"));
    std::fs::create_dir_all(&dir).map_err(GpuError::file(&dir))?;
    let mut res = std::fs::File::create(&res_path).map_err(GpuError::file(&res_path))?;
    let sm = dev.tool().rsplit("sm_").next().and_then(|d| d.parse::<u32>().ok());
    for (i, line) in plan.lines().enumerate() {
        let c: BarrierCubin = serde_json::from_str(line).map_err(|source| GpuError::PlanLine { path: p.clone(), line: i + 1, source })?;
        if sm.is_some_and(|sm| sm != c.arch) {
            continue;
        }
        let (in_stride, out_stride) = strides(c.kind, c.template_slots);
        let input = inputs::generate(c.kind, c.template_slots, threads, seed);
        let b = Batch { cubin: plan_dir.join(&c.cubin), function: "slots".into(), threads, in_stride, out_stride, k: 0, sentinel: 0xa5a5_a5a5 };
        match dev.run(&b, &input) {
            Ok(o) => {
                let rs = classify(&c, &b, &input, &o);
                for r in &rs {
                    writeln!(res, "{}", serde_json::to_string(r)?).map_err(GpuError::file(&res_path))?;
                }
                let model = rs.iter().map(|r| r.model).sum();
                let hazard = rs.iter().map(|r| r.stale + r.other).sum();
                println!("barrier sm_{}: {}", c.arch, verdict(&c.experiment, model, hazard));
            }
            Err(t) => println!("barrier sm_{} {}: trap: {}", c.arch, c.experiment, t.message),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::gpu::slots::Source;

    #[test]
    fn classify_counts_reference_stale_and_other() {
        // One slot: I2F.S16 R0, R0 (destination = source: the stale value is the input).
        let slot = Slot {
            offset: 0x40,
            word: Word(0),
            text: "I2F.S16 R0, R0 ;".into(),
            dest: 0,
            sources: vec![Source { reg: 0, in_offset: 0 }],
            out_offset: 0,
            store_at: 0x60,
        };
        let c = BarrierCubin { arch: 90, kind: Kind::I2f, experiment: "clear_r-bar".into(), cubin: String::new(), template_slots: 1, slots: vec![slot] };
        let b = Batch { cubin: Default::default(), function: "slots".into(), threads: 3, in_stride: 4, out_stride: 4, k: 0, sentinel: 0 };
        let input: Vec<u8> = [5u32, 7, 9].iter().flat_map(|x| x.to_le_bytes()).collect();
        // Thread 0: 5.0f (the reference); thread 1: 7 (stale: the old R0); thread 2: junk.
        let output: Vec<u8> = [0x40a0_0000u32, 7, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
        let r = &classify(&c, &b, &input, &output)[0];
        assert_eq!((r.model, r.stale, r.other), (1, 1, 1));
        assert!(verdict("clear_r-bar", 1, 2).contains("carries the wait"));
        assert!(verdict("as_compiled", 3, 1).contains("void"));
        assert!(verdict("move_to_w-bar", 3, 0).contains("no hazard"));
    }
}
