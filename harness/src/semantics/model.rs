//! Instruction → per-thread result: operand reading, then one of the ops.
//!
//! Assumptions a GPU run has not confirmed yet (all `exec` findings against them are
//! `semantics` findings that may be the model's fault):
//! - FHFMA: sources 1 and 2 are 16-bit (f16, bf16 with `.BF16`), `.H1` selects the upper
//!   half, else the lower; source 3 and the result are fp32.
//! - I2F: the source type is the widest integer token, signed if any token is signed
//!   (`S8.U16` is S16; none: S32); `.Bk` takes the source from byte k up. The result is
//!   F32 unless `F16`/`BF16`/`F64` is named; 16-bit results are zero-extended.
//! - QADD4: both format tokens must name the same fp8 format (E4M3x4/E5M2x4), which is also
//!   the result's; `B3210` is lanes as stored, `Bk` broadcasts byte k to all lanes.

use super::float::{neg_abs, Format, Rounding};
use super::{guard, ops, Inputs, Loc, ModelError};
use crate::sass::{Body, Instruction, Operand, RZ, URZ};

/// One predicted destination value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub loc: Loc,
    pub bits: u64,
    /// 32 or 64: a 64-bit value names the pair by its even register.
    pub width: u32,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={:#0w$x}", self.loc, self.bits, w = (self.width / 4 + 2) as usize)
    }
}

/// What the instruction writes; empty when the guard is false or the destination is RZ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs(pub Vec<Output>);

/// Evaluate `insn` on `inputs`.
pub fn evaluate(insn: &Instruction, inputs: &Inputs) -> Result<Outputs, ModelError> {
    let ops = &insn.operands;
    let need = |n: usize| {
        if ops.len() == n {
            Ok(())
        } else {
            Err(ModelError::Unmodelled(format!("{insn} (expected {n} operands)")))
        }
    };
    let (width, bits) = match insn.mnemonic.as_str() {
        "DFMA" => {
            need(4)?;
            (64, dfma(insn, inputs)?)
        }
        "FHFMA" => {
            need(4)?;
            (32, fhfma(insn, inputs)? as u64)
        }
        "I2F" => {
            need(2)?;
            (32, i2f(insn, inputs)?)
        }
        "QADD4" => {
            need(3)?;
            (32, qadd4(insn, inputs)? as u64)
        }
        _ => return Err(ModelError::Unmodelled(insn.to_string())),
    };
    // Sources are read (and their absence reported) even when the guard is false.
    if !guard(insn, inputs)? {
        return Ok(Outputs::default());
    }
    match ops[0].body {
        Body::Reg { n } if n == RZ => Ok(Outputs::default()),
        Body::Reg { n } if width == 64 && n % 2 == 1 => Err(ModelError::OddPair(format!("R{n}"))),
        Body::Reg { n } => Ok(Outputs(vec![Output { loc: Loc::R(n), bits, width }])),
        _ => Err(ModelError::Unmodelled(format!("{insn}: destination is not a register"))),
    }
}

/// The raw bits of a source operand, `width` 32 or 64 (no `-`/`|…|` applied).
pub fn raw(op: &Operand, width: u32, inputs: &Inputs) -> Result<u64, ModelError> {
    let mask = if width == 64 { u64::MAX } else { u32::MAX as u64 };
    let pair = |l: Loc, n: u16, z: u16| {
        if width == 64 && n != z && n % 2 == 1 {
            Err(ModelError::OddPair(l.to_string()))
        } else {
            inputs.get(&l)
        }
    };
    let v = match &op.body {
        Body::Reg { n } => pair(Loc::R(*n), *n, RZ)?,
        Body::UReg { n } => pair(Loc::Ur(*n), *n, URZ)?,
        Body::Imm { value } => *value as u64,
        // fp64 instructions: the printed double is exact; fp32: the f32 it came from.
        Body::Float { value, .. } if width == 64 => value.to_bits(),
        Body::Float { value, .. } => (*value as f32).to_bits() as u64,
        Body::Const { bank, offset } => inputs.get(&Loc::Const { bank: *bank, offset: *offset })?,
        Body::ConstX { ureg, offset } => inputs.get(&Loc::ConstX { ureg: *ureg, offset: *offset })?,
        other => return Err(ModelError::Unmodelled(format!("operand {other}"))),
    };
    Ok(v & mask)
}

fn dfma(insn: &Instruction, inputs: &Inputs) -> Result<u64, ModelError> {
    let src = |k: usize| -> Result<u64, ModelError> {
        let o = &insn.operands[k];
        Ok(neg_abs(Format::F64, raw(o, 64, inputs)?, o.neg, o.abs))
    };
    let r = Rounding::from_modifiers(&insn.modifiers);
    Ok(ops::dfma(src(1)?, src(2)?, src(3)?, r))
}

fn fhfma(insn: &Instruction, inputs: &Inputs) -> Result<u32, ModelError> {
    let bf16 = insn.modifiers.iter().any(|m| m == "BF16");
    let fmt = if bf16 { Format::Bf16 } else { Format::F16 };
    let half = |k: usize| -> Result<u16, ModelError> {
        let o = &insn.operands[k];
        let x = raw(o, 32, inputs)?;
        let h = if o.suffixes.iter().any(|s| s == "H1") { x >> 16 } else { x } & 0xffff;
        Ok(neg_abs(fmt, h, o.neg, o.abs) as u16)
    };
    let o3 = &insn.operands[3];
    let c = neg_abs(Format::F32, raw(o3, 32, inputs)?, o3.neg, o3.abs) as u32;
    let sat = insn.modifiers.iter().any(|m| m == "SAT");
    Ok(ops::fhfma(half(1)?, half(2)?, c, bf16, Rounding::from_modifiers(&insn.modifiers), sat))
}

/// Integer source type of I2F: (bits, signed).
fn i2f_source(mods: &[String]) -> (u32, bool) {
    let mut width = 0;
    let mut signed = false;
    for m in mods {
        let (s, digits) = match m.split_at(1.min(m.len())) {
            ("S", d) => (true, d),
            ("U", d) => (false, d),
            _ => continue,
        };
        if let Ok(w @ (8 | 16 | 32 | 64)) = digits.parse::<u32>() {
            width = width.max(w);
            signed |= s;
        }
    }
    if width == 0 {
        (32, true)
    } else {
        (width, signed)
    }
}

fn i2f(insn: &Instruction, inputs: &Inputs) -> Result<u64, ModelError> {
    let mods = &insn.modifiers;
    if let Some(m) = mods.iter().find(|m| m.starts_with("???") || m.starts_with("INVALID") || m.starts_with("UNLISTED")) {
        return Err(ModelError::Unmodelled(format!("{insn}: result type {m}")));
    }
    let o = &insn.operands[1];
    if o.neg || o.abs {
        return Err(ModelError::Unmodelled(format!("{insn}: -/|…| on an integer source")));
    }
    let (w, signed) = i2f_source(mods);
    let mut x = raw(o, w.max(32), inputs)?;
    for s in &o.suffixes {
        match s.strip_prefix('B').and_then(|k| k.parse::<u32>().ok()) {
            Some(k @ 1..=3) => x >>= 8 * k,
            _ => return Err(ModelError::Unmodelled(format!("{insn}: selector {s}"))),
        }
    }
    let v = if w == 64 { x } else { x & ((1u64 << w) - 1) };
    let value = if signed { ((v << (64 - w)) as i64 >> (64 - w)) as i128 } else { v as i128 };
    let fmt = if mods.iter().any(|m| m == "F16") {
        Format::F16
    } else if mods.iter().any(|m| m == "BF16") {
        Format::Bf16
    } else if mods.iter().any(|m| m == "F64") {
        return Err(ModelError::Unmodelled(format!("{insn}: F64 result (needs a register pair)")));
    } else {
        Format::F32
    };
    Ok(ops::i2f(value, fmt, Rounding::from_modifiers(mods)))
}

fn qadd4(insn: &Instruction, inputs: &Inputs) -> Result<u32, ModelError> {
    let fmts: Vec<Format> = insn
        .modifiers
        .iter()
        .filter(|m| m.as_str() != "SATFINITE")
        .map(|m| match m.as_str() {
            "E4M3x4" => Ok(Format::E4m3),
            "E5M2x4" => Ok(Format::E5m2),
            _ => Err(ModelError::Unmodelled(format!("{insn}: format {m}"))),
        })
        .collect::<Result<_, _>>()?;
    let f = match fmts.as_slice() {
        [a, b] if a == b => *a,
        _ => return Err(ModelError::Unmodelled(format!("{insn}: mixed or missing formats"))),
    };
    let sat = insn.modifiers.iter().any(|m| m == "SATFINITE");
    let lanes = |k: usize| -> Result<[u8; 4], ModelError> {
        let o = &insn.operands[k];
        let x = (raw(o, 32, inputs)? as u32).to_le_bytes();
        let sel = o.suffixes.first().map(String::as_str).unwrap_or("B3210");
        let l = match sel {
            "B3210" => x,
            "B0" => [x[0]; 4],
            "B1" => [x[1]; 4],
            "B2" => [x[2]; 4],
            "B3" => [x[3]; 4],
            s => return Err(ModelError::Unmodelled(format!("{insn}: selector {s}"))),
        };
        Ok(l.map(|b| neg_abs(f, b as u64, o.neg, o.abs) as u8))
    };
    Ok(ops::qadd4(f, lanes(1)?, lanes(2)?, sat))
}
