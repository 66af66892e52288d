//! Words under test, fitted into a placeholder slot.
//!
//! The word keeps everything the test is about (modifiers, flags, immediates, fixed bits)
//! and takes from the placeholder what the template depends on: register numbers (so the
//! loads and the store ptxas emitted feed and read it), the guard (PT) and the control
//! bits ptxas chose for that placeholder (its stall, and for variable-latency ops the
//! write barrier the store waits on). Reuse bits are cleared here and on the word before.

use super::error::FitError;
use super::slots::Slot;
use super::template::{const_input_offset, Kind};
use crate::codec::{Codec, Values};
use crate::gen::{random_listed_values, Rng};
use crate::spec::{Control, FieldKind, OperandKind, RowKind, Variant};
use crate::word::Word;

/// A word to test: a variant's field values, optionally with one fixed bit flipped.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub variant: usize,
    pub values: Values,
    /// A fixed bit (the page says constant) that nvdisasm ignores, flipped.
    pub flip: Option<u8>,
}

fn field_bits(w: Word, bits: &[u8]) -> u64 {
    bits.iter().enumerate().fold(0, |a, (k, &b)| a | (w.bit(b) as u64) << k)
}

/// Why a variant cannot run in the templates (dry run still checks its patches).
/// Uniform-register sources run as URZ (reads 0: the only UR value a template knows);
/// `cx[UR][off]` sources run as `cx[URZ][k's offset]`, assuming a zero UR selects bank 0
/// (unmeasured: the `operand_form` relation against the `c[0x0][…]` form checks it).
pub fn not_executable(v: &Variant) -> Option<String> {
    v.operands.iter().find_map(|o| match o.kind {
        OperandKind::Pred | OperandKind::UPred => Some(format!("{} operand: no template sets or reads predicate registers", o.kind.form_token())),
        _ => None,
    })
}

/// `job`'s word, fitted into `slot`: registers, guard, control bits from the placeholder.
pub fn fit(codec: &Codec, job: &Job, slot: &Slot, kind: Kind) -> Result<Word, FitError> {
    let v = codec.variant(job.variant);
    let mut vals = job.values;
    for (k, o) in v.operands.iter().enumerate() {
        let fields = &o.value_fields;
        match o.kind {
            OperandKind::Reg => {
                let r = if k == 0 { Some(slot.dest) } else { slot.sources.get(k - 1).map(|s| s.reg) };
                let r = r.ok_or_else(|| FitError { variant: v.key.clone(), operand: k, placeholder: slot.text.clone() })?;
                if let Some(f) = fields[0] {
                    vals.set(f, r as u64);
                }
            }
            OperandKind::UReg => {
                if let Some(f) = fields[0] {
                    vals.set(f, crate::sass::URZ as u64);
                }
            }
            OperandKind::Const => {
                if let (Some(b), Some(off)) = (fields[0], fields.get(1).copied().flatten()) {
                    vals.set(b, 0);
                    vals.set(off, (const_input_offset(v.arch) / 4) as u64);
                }
            }
            OperandKind::ConstX => {
                if let (Some(u), Some(off)) = (fields[0], fields.get(1).copied().flatten()) {
                    vals.set(u, crate::codec::conventions::uniform_zero(v.arch) as u64);
                    vals.set(off, (const_input_offset(v.arch) / 4) as u64);
                }
            }
            _ => {}
        }
    }
    for (i, f) in v.fields.iter().enumerate() {
        match &f.kind {
            FieldKind::Pred => vals.set(i, 7),
            FieldKind::Control { control: Control::Reuse } => vals.set(i, 0),
            FieldKind::Control { control: Control::Stall } if kind == Kind::Hadd2 => vals.set(i, 15),
            FieldKind::Control { .. } => vals.set(i, field_bits(slot.word, &f.bits)),
            _ => {}
        }
    }
    let w = codec.encode_unchecked(job.variant, &vals);
    Ok(match job.flip {
        Some(b) => w.flip(b),
        None => w,
    })
}

/// `w` with every reuse bit of `v`'s layout cleared.
pub fn clear_reuse(v: &Variant, w: Word) -> Word {
    v.fields.iter().filter(|f| f.kind == FieldKind::Control { control: Control::Reuse }).flat_map(|f| f.bits.iter()).fold(w, |w, &b| w.with_bit(b, false))
}

/// The words to test for variant `vi`: every listed row of every table, every flag alone,
/// a few immediates (edges of the F/I fields), `random` random listed combinations.
pub fn page_jobs(codec: &Codec, vi: usize, random: usize, rng: &mut Rng) -> Vec<Job> {
    let v = codec.variant(vi);
    let zero = default_values(v);
    let mut out = vec![Job { variant: vi, values: zero, flip: None }];
    let mut with = |i: usize, x: u64| {
        let mut vals = zero;
        vals.set(i, x);
        out.push(Job { variant: vi, values: vals, flip: None });
    };
    for (i, f) in v.fields.iter().enumerate() {
        if let Some(t) = v.field_table(i) {
            for r in t.rows.iter().filter(|r| matches!(r.kind, RowKind::Named | RowKind::Default) && r.value != zero.get(i)) {
                with(i, r.value);
            }
        } else if matches!(f.kind, FieldKind::Flag { .. }) {
            with(i, 1);
        }
    }
    for o in v.operands.iter().filter(|o| matches!(o.kind, OperandKind::Imm(_) | OperandKind::Float(_))) {
        if let Some(i) = o.value_fields[0] {
            for x in [0x3ff0_0000u64, 0xbff8_0000, 0x7ff0_0000, 0x7ff8_0000, 0x0000_0001, 0x3c3c_3c3c, 0xffff_ffff, 0x8000] {
                with(i, x & v.fields[i].max());
            }
        }
    }
    for _ in 0..random {
        out.push(Job { variant: vi, values: random_listed_values(v, rng), flip: None });
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|j| seen.insert(codec.encode_unchecked(vi, &j.values)));
    out
}

/// Every table field at its `(default)` row where it has one, else 0: the plainest word
/// (e.g. I2F's result type F32 rather than `???0`), the base of hidden-bit words.
pub fn default_values(v: &Variant) -> Values {
    let mut vals = Values::zero(v.fields.len());
    for i in 0..v.fields.len() {
        if let Some(r) = v.field_table(i).and_then(|t| t.rows.iter().find(|r| r.kind == RowKind::Default)) {
            vals.set(i, r.value);
        }
    }
    vals
}

/// Fixed bits of `v` outside every field and control: candidates for `hidden_bit` jobs.
pub fn fixed_bits(v: &Variant) -> Vec<u8> {
    let fields = v.field_mask();
    v.fixed_mask.iter().filter(|&b| !fields.contains(b)).collect()
}
