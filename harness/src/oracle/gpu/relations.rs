//! Relations that need no CPU model: what a word's results must equal, whatever they are.
//!
//! - `ignored_bit`: a fixed bit nvdisasm ignores, flipped, must not change any output
//!   (the partner is the page word without the flip).
//! - `operand_form`: the same operation with a register where the word has a uniform
//!   register, an immediate or a constant-bank source must give the same result when the
//!   register holds that operand's value (the partner is the word with the non-register
//!   source). The register form is found through the spec: the word's text with each such
//!   source written as a register, assembled; it must print the same mnemonic and
//!   modifiers, so the pair differs in operand kinds only.
//! - `rerun`: every word runs twice (two output sentinels) and must give the same result.
//!
//! Equal inputs: entries with the same `input_key` get the same per-thread source values
//! (see `inputs::generate_keyed`), and an `operand_form` entry's replaced sources are
//! pinned, at run time, to the partner's operand value (`pin_value`).

use super::error::PinError;
use crate::codec::{Codec, Values};
use crate::sass::{Body, Instruction, URZ};
use crate::semantics::{Inputs, Loc};
use crate::spec::Arch;
use crate::word::Word;
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelKind {
    IgnoredBit,
    OperandForm,
}

/// A plan entry's relation: its outputs must equal those of the `page` entry whose
/// `values_id` is `with`, on equal inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    pub kind: RelKind,
    pub with: String,
    /// `operand_form`: the printed operand positions (1 = first source) that are
    /// registers here and something else in the partner.
    #[serde(default)]
    pub operands: Vec<usize>,
}

/// A source the register form replaces: uniform register, immediate, float, constant.
fn replaceable(b: &Body) -> bool {
    matches!(b, Body::UReg { .. } | Body::Imm { .. } | Body::Float { .. } | Body::Const { .. } | Body::ConstX { .. })
}

/// The register-form twin of `word`: (variant, values, operand positions replaced), or
/// `None` when the word has no non-register source or the spec has no such form with the
/// same mnemonic and modifiers.
pub fn register_twin(codec: &Codec, arch: Arch, word: Word) -> Option<(usize, Values, Vec<usize>)> {
    let (vi, values) = codec.decode(arch, word).ok()?;
    let insn = crate::codec::print(codec.variant(vi), &values);
    let (twin, replaced) = with_registers(&insn)?;
    let (ti, tw) = crate::codec::asm::assemble_inst(codec, arch, &twin, word).ok()?;
    let (ti2, tvals) = codec.decode(arch, tw).ok()?;
    let back = crate::codec::print(codec.variant(ti2), &tvals);
    let same = ti == ti2 && back.mnemonic == insn.mnemonic && back.modifiers == insn.modifiers && back.pred == insn.pred;
    same.then_some((ti, tvals, replaced))
}

/// `insn` with every replaceable source written as a register (even, so a pair fits).
fn with_registers(insn: &Instruction) -> Option<(Instruction, Vec<usize>)> {
    let mut twin = insn.clone();
    let mut replaced = vec![];
    for (k, o) in twin.operands.iter_mut().enumerate().skip(1) {
        if replaceable(&o.body) {
            o.body = Body::Reg { n: 2 * k as u16 };
            replaced.push(k);
        }
    }
    (!replaced.is_empty()).then_some((twin, replaced))
}

/// Spec-level pairs: for every variant with a replaceable source, its register-form
/// variant (from the variant's plainest word). `(from, to)` variant indices.
pub fn operand_form_pairs(codec: &Codec) -> Vec<(usize, usize)> {
    (0..codec.variants().len())
        .filter_map(|vi| {
            let v = codec.variant(vi);
            let w = codec.encode_unchecked(vi, &super::patch::default_values(v));
            register_twin(codec, v.arch, w).map(|(ti, _, _)| (vi, ti))
        })
        .collect()
}

/// What the register at operand `k` of the twin must hold: the partner's operand value,
/// `k_param` standing for every constant-bank source (the template's `k`).
pub fn pin_value(codec: &Codec, arch: Arch, partner: Word, k: usize, bits: u32, k_param: u64) -> Result<u64, PinError> {
    let insn = crate::semantics::instruction(codec, arch, partner)?;
    let Some(op) = insn.operands.get(k) else {
        return Err(PinError::NoOperand { insn: Box::new(insn), k });
    };
    let mut inputs = Inputs::default();
    let off = super::template::const_input_offset(arch) as i64;
    inputs.set(Loc::Const { bank: 0, offset: off }, k_param);
    inputs.set(Loc::ConstX { ureg: URZ, offset: off }, k_param);
    crate::semantics::raw(op, bits, &inputs).map_err(|source| PinError::Operand { insn: Box::new(insn.clone()), k, source })
}
