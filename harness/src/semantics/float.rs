//! Floating-point formats, rounding modes and the one table of rules that hardware has
//! not yet confirmed (NaN results, saturation). Arithmetic itself is `rustc_apfloat`
//! (LLVM's APFloat): correctly rounded in every mode, subnormals kept.

use rustc_apfloat::ieee::{BFloat, Double, Float8E4M3FN, Float8E5M2, Half, Single};
use rustc_apfloat::{Float, Round};
use serde::Serialize;

/// SASS rounding modifiers: none (RN), `RM`, `RP`, `RZ`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Rounding {
    Rn,
    Rm,
    Rp,
    Rz,
}

impl Rounding {
    pub const ALL: [Rounding; 4] = [Rounding::Rn, Rounding::Rm, Rounding::Rp, Rounding::Rz];

    /// The rounding a modifier list names (`RN` when none does).
    pub fn from_modifiers(mods: &[String]) -> Rounding {
        for m in mods {
            match m.as_str() {
                "RM" => return Rounding::Rm,
                "RP" => return Rounding::Rp,
                "RZ" => return Rounding::Rz,
                _ => {}
            }
        }
        Rounding::Rn
    }

    pub fn apfloat(self) -> Round {
        match self {
            Rounding::Rn => Round::NearestTiesToEven,
            Rounding::Rm => Round::TowardNegative,
            Rounding::Rp => Round::TowardPositive,
            Rounding::Rz => Round::TowardZero,
        }
    }
}

/// Result formats the models produce.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Format {
    F64,
    F32,
    F16,
    Bf16,
    E4m3,
    E5m2,
}

/// What a format's NaN result is, and whether a GPU run has confirmed it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NanRule {
    pub format: Format,
    /// The bits every NaN result of this format is predicted to have.
    pub canonical: u64,
    /// `false` until an `exec` run on hardware agrees; findings of class `semantics`
    /// on NaN results are then about this rule, not about the encoding.
    pub measured: bool,
    pub source: &'static str,
}

/// THE table of NaN results. One place to change once hardware has spoken.
/// fp32: NVIDIA GPUs return 0x7fffffff for every NaN result (the well-known fp32 canonical
/// NaN, also what PTX `fma.f32` produces). fp64, f16, bf16, fp8: assumed the same shape
/// (sign 0, every exponent and mantissa bit 1); not yet measured.
pub const NAN_RULES: [NanRule; 6] = [
    NanRule { format: Format::F64, canonical: 0x7fff_ffff_ffff_ffff, measured: false, source: "assumed like fp32" },
    NanRule { format: Format::F32, canonical: 0x7fff_ffff, measured: false, source: "NVIDIA fp32 canonical NaN" },
    NanRule { format: Format::F16, canonical: 0x7fff, measured: false, source: "assumed like fp32" },
    NanRule { format: Format::Bf16, canonical: 0x7fff, measured: false, source: "assumed like fp32" },
    NanRule { format: Format::E4m3, canonical: 0x7f, measured: false, source: "the only E4M3 NaN, sign 0" },
    NanRule { format: Format::E5m2, canonical: 0x7f, measured: false, source: "assumed like fp32" },
];

pub fn canonical_nan(f: Format) -> u64 {
    NAN_RULES.iter().find(|r| r.format == f).map(|r| r.canonical).unwrap_or(0)
}

/// Largest finite value's bits (for SATFINITE).
pub fn max_finite(f: Format) -> u64 {
    match f {
        Format::F64 => 0x7fef_ffff_ffff_ffff,
        Format::F32 => 0x7f7f_ffff,
        Format::F16 => 0x7bff,
        Format::Bf16 => 0x7f7f,
        Format::E4m3 => 0x7e,
        Format::E5m2 => 0x7b,
    }
}

pub fn width(f: Format) -> u32 {
    match f {
        Format::F64 => 64,
        Format::F32 => 32,
        Format::F16 | Format::Bf16 => 16,
        Format::E4m3 | Format::E5m2 => 8,
    }
}

pub fn sign_bit(f: Format) -> u64 {
    1u64 << (width(f) - 1)
}

/// Is `bits` a NaN of format `f`?
pub fn is_nan(f: Format, bits: u64) -> bool {
    let b = bits as u128;
    match f {
        Format::F64 => Double::from_bits(b).is_nan(),
        Format::F32 => Single::from_bits(b).is_nan(),
        Format::F16 => Half::from_bits(b).is_nan(),
        Format::Bf16 => BFloat::from_bits(b).is_nan(),
        Format::E4m3 => Float8E4M3FN::from_bits(b).is_nan(),
        Format::E5m2 => Float8E5M2::from_bits(b).is_nan(),
    }
}

/// Apply `|x|` then `-x` to the sign bit (what `-|R2|` means): exact, NaNs included.
pub fn neg_abs(f: Format, bits: u64, neg: bool, abs: bool) -> u64 {
    let s = sign_bit(f);
    let x = if abs { bits & !s } else { bits };
    if neg {
        x ^ s
    } else {
        x
    }
}

/// Integer → float, correctly rounded (`rustc_apfloat`'s `from_i128_r`).
pub fn from_int(f: Format, v: i128, r: Rounding) -> u64 {
    let m = r.apfloat();
    (match f {
        Format::F64 => Double::from_i128_r(v, m).value.to_bits(),
        Format::F32 => Single::from_i128_r(v, m).value.to_bits(),
        Format::F16 => Half::from_i128_r(v, m).value.to_bits(),
        Format::Bf16 => BFloat::from_i128_r(v, m).value.to_bits(),
        Format::E4m3 => Float8E4M3FN::from_i128_r(v, m).value.to_bits(),
        Format::E5m2 => Float8E5M2::from_i128_r(v, m).value.to_bits(),
    }) as u64
}
