//! CPU reference semantics, bit-exact: what a decoded instruction computes per thread.
//!
//! Driven by the printed instruction (`codec::decode` → `codec::print` → [`Instruction`]),
//! so the models read mnemonic, modifiers and operands (with `-`, `|…|`, selectors), never
//! page internals. Registers, uniform registers, predicates and constants are all inputs,
//! named like nvdisasm names them (`R2`, `UR4`, `P0`, `c[0x0][0x10]`, `cx[UR4][0x8]`).
//! A 64-bit operand is one input named by its even register (`R2` holds R2:R3).

pub mod batch;
pub mod float;
pub mod model;
pub mod ops;

use crate::sass::{Body, Instruction, RZ, URZ};
use std::collections::BTreeMap;

pub use float::{Format, Rounding, NAN_RULES};
pub use model::{evaluate, raw, Outputs};

/// A storage location an instruction reads or writes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loc {
    R(u16),
    Ur(u16),
    P(u8),
    Up(u8),
    Const { bank: u32, offset: i64 },
    ConstX { ureg: u16, offset: i64 },
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loc::R(n) => write!(f, "R{n}"),
            Loc::Ur(n) => write!(f, "UR{n}"),
            Loc::P(n) => write!(f, "P{n}"),
            Loc::Up(n) => write!(f, "UP{n}"),
            Loc::Const { bank, offset } => write!(f, "c[{bank:#x}][{}]", crate::sass::hex_signed(*offset)),
            Loc::ConstX { ureg, offset } => write!(f, "cx[UR{ureg}][{}]", crate::sass::hex_signed(*offset)),
        }
    }
}

impl std::str::FromStr for Loc {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Loc, ModelError> {
        let bad = || ModelError::BadInput(format!("'{s}' is not a register, predicate or constant name"));
        match crate::sass::parse_body(s.trim()).ok_or_else(bad)? {
            Body::Reg { n } => Ok(Loc::R(n)),
            Body::UReg { n } => Ok(Loc::Ur(n)),
            Body::Pred { n } => Ok(Loc::P(n)),
            Body::UPred { n } => Ok(Loc::Up(n)),
            Body::Const { bank, offset } => Ok(Loc::Const { bank, offset }),
            Body::ConstX { ureg, offset } => Ok(Loc::ConstX { ureg, offset }),
            _ => Err(bad()),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("missing input {0} (give it as {0}=0x…)")]
    Missing(String),
    #[error("{0}")]
    BadInput(String),
    #[error("no model for '{0}'")]
    Unmodelled(String),
    #[error("{0} is odd: a 64-bit operand needs an even register")]
    OddPair(String),
    /// The word decodes as no variant of the spec.
    #[error(transparent)]
    Decode(#[from] crate::codec::DecodeError),
    #[error("'{0}' is not a word of up to 32 hex digits")]
    BadWord(String),
}

/// Input values by location. Values are raw bits; a 64-bit operand's value is one entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs(pub BTreeMap<Loc, u64>);

impl Inputs {
    pub fn set(&mut self, l: Loc, v: u64) {
        self.0.insert(l, v);
    }
    /// `REG=VALUE` (`R2=0x3ff0000000000000`, `P0=1`, `c[0x0][0x10]=5`).
    pub fn parse_assignment(&mut self, text: &str) -> Result<(), ModelError> {
        let (k, v) = text.split_once('=').ok_or_else(|| ModelError::BadInput(format!("'{text}' is not REG=VALUE")))?;
        let value = parse_value(v).ok_or_else(|| ModelError::BadInput(format!("'{v}' is not a number (0x… or decimal)")))?;
        self.set(k.parse()?, value);
        Ok(())
    }
    fn get(&self, l: &Loc) -> Result<u64, ModelError> {
        match l {
            Loc::R(n) if *n == RZ => Ok(0),
            Loc::Ur(n) if *n == URZ => Ok(0),
            Loc::P(7) | Loc::Up(7) => Ok(1),
            _ => self.0.get(l).copied().ok_or_else(|| ModelError::Missing(l.to_string())),
        }
    }
}

pub fn parse_value(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16).ok(),
        None => v.parse().ok(),
    }
}

/// The guard: `None` when the instruction runs, `Some(false)` when it does not.
fn guard(insn: &Instruction, inputs: &Inputs) -> Result<bool, ModelError> {
    match &insn.pred {
        None => Ok(true),
        Some(p) => {
            let v = inputs.get(&Loc::P(p.index))? & 1 == 1;
            Ok(v != p.negated)
        }
    }
}

/// Decode `word` for `arch` and print it: the instruction the models read. Text a page
/// heading carries (`I2F.???0`: printed always, a label of the page generator rather than
/// a field's value) is dropped, so it does not make a word unmodellable.
pub fn instruction(codec: &crate::codec::Codec, arch: crate::spec::Arch, word: crate::word::Word) -> Result<Instruction, ModelError> {
    let (vi, values) = codec.decode(arch, word)?;
    let v = codec.variant(vi);
    let mut insn = crate::codec::print(v, &values);
    for slot in &v.modifiers {
        if let crate::spec::ModSlot::Fixed { text } = slot {
            if let Some(i) = insn.modifiers.iter().position(|m| m == text) {
                insn.modifiers.remove(i);
            }
        }
    }
    Ok(insn)
}

/// Decode and evaluate: what `word` writes on `inputs`.
pub fn predict(codec: &crate::codec::Codec, arch: crate::spec::Arch, word: crate::word::Word, inputs: &Inputs) -> Result<Outputs, ModelError> {
    let insn = instruction(codec, arch, word)?;
    evaluate(&insn, inputs)
}
