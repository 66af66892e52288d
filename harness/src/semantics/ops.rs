//! The operations on raw bits: what one thread computes, given its source values.

use super::float::{canonical_nan, is_nan, max_finite, Format, Rounding};
use rustc_apfloat::ieee::{BFloat, Double, Float8E4M3FN, Float8E5M2, Half, Single};
use rustc_apfloat::{Float, FloatConvert};

/// DFMA: `a * b + c` in fp64, rounded once. Subnormals are kept (fp64 has no FTZ).
pub fn dfma(a: u64, b: u64, c: u64, r: Rounding) -> u64 {
    let (x, y, z) = (Double::from_bits(a as u128), Double::from_bits(b as u128), Double::from_bits(c as u128));
    let d = x.mul_add_r(y, z, r.apfloat()).value;
    if d.is_nan() {
        canonical_nan(Format::F64)
    } else {
        d.to_bits() as u64
    }
}

/// A 16-bit source of FHFMA, widened exactly to fp32.
fn half_to_single(bits: u16, bf16: bool) -> Single {
    let mut loses = false;
    if bf16 {
        BFloat::from_bits(bits as u128).convert(&mut loses).value
    } else {
        Half::from_bits(bits as u128).convert(&mut loses).value
    }
}

/// FHFMA: `a * b + c` where `a`, `b` are f16 (bf16 with `.BF16`) and `c`, the result are
/// fp32; one rounding. `.SAT` (assumed like PTX `.sat`): NaN → +0, clamp to [+0, 1].
pub fn fhfma(a: u16, b: u16, c: u32, bf16: bool, r: Rounding, sat: bool) -> u32 {
    let (x, y) = (half_to_single(a, bf16), half_to_single(b, bf16));
    let d = x.mul_add_r(y, Single::from_bits(c as u128), r.apfloat()).value;
    if sat {
        if d.is_nan() || d.is_negative() || d.is_zero() {
            return 0;
        }
        let one = Single::from_bits(0x3f80_0000);
        return if d > one { 0x3f80_0000 } else { d.to_bits() as u32 };
    }
    if d.is_nan() {
        canonical_nan(Format::F32) as u32
    } else {
        d.to_bits() as u32
    }
}

/// I2F: an integer (already extracted, sign-extended where signed) to `f`, rounded.
pub fn i2f(v: i128, f: Format, r: Rounding) -> u64 {
    super::float::from_int(f, v, r)
}

/// One fp8 lane of QADD4: `a + b` rounded to nearest even; `.SATFINITE` clamps results
/// beyond the largest finite value (infinities included) to ±max, NaN stays NaN.
pub fn fp8_add(f: Format, a: u8, b: u8, satfinite: bool) -> u8 {
    let (sum, inputs_nan) = match f {
        Format::E4m3 => {
            let (x, y) = (Float8E4M3FN::from_bits(a as u128), Float8E4M3FN::from_bits(b as u128));
            ((x + y).value.to_bits() as u64, x.is_nan() || y.is_nan())
        }
        _ => {
            let (x, y) = (Float8E5M2::from_bits(a as u128), Float8E5M2::from_bits(b as u128));
            let d = (x + y).value;
            // E5M2 has infinities; saturation applies to them like to overflow.
            let inf_minus_inf = x.is_infinite() && y.is_infinite() && x.is_negative() != y.is_negative();
            if satfinite && d.is_infinite() {
                let s = if d.is_negative() { 0x80 } else { 0 };
                return (max_finite(f) as u8) | s;
            }
            (d.to_bits() as u64, x.is_nan() || y.is_nan() || inf_minus_inf)
        }
    };
    if is_nan(f, sum) {
        // E4M3FN has no infinity: a NaN from finite inputs is an overflow.
        if satfinite && !inputs_nan && f == Format::E4m3 {
            let exact = e4m3_value(a) + e4m3_value(b);
            return (max_finite(f) as u8) | if exact < 0.0 { 0x80 } else { 0 };
        }
        return canonical_nan(f) as u8;
    }
    sum as u8
}

/// An E4M3 value as f64 (exact): the sign of an overflowing sum.
fn e4m3_value(a: u8) -> f64 {
    let mut loses = false;
    let d: Double = Float8E4M3FN::from_bits(a as u128).convert(&mut loses).value;
    f64::from_bits(d.to_bits() as u64)
}

/// QADD4: four fp8 lanes, lane i in byte i.
pub fn qadd4(f: Format, a: [u8; 4], b: [u8; 4], satfinite: bool) -> u32 {
    let mut out = 0u32;
    for i in 0..4 {
        out |= (fp8_add(f, a[i], b[i], satfinite) as u32) << (8 * i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn e4m3_overflow_saturates_or_is_nan() {
        // 448 + 448 overflows: NaN (0x7f) without SATFINITE, 448 (0x7e) with it.
        assert_eq!(fp8_add(Format::E4m3, 0x7e, 0x7e, false), 0x7f);
        assert_eq!(fp8_add(Format::E4m3, 0x7e, 0x7e, true), 0x7e);
        assert_eq!(fp8_add(Format::E4m3, 0xfe, 0xfe, true), 0xfe);
        // E5M2: max + max = inf (0x7c); SATFINITE clamps to 57344 (0x7b).
        assert_eq!(fp8_add(Format::E5m2, 0x7b, 0x7b, false), 0x7c);
        assert_eq!(fp8_add(Format::E5m2, 0x7b, 0x7b, true), 0x7b);
        // 1 + 1 = 2 in both.
        assert_eq!(fp8_add(Format::E4m3, 0x38, 0x38, false), 0x40);
        assert_eq!(fp8_add(Format::E5m2, 0x3c, 0x3c, false), 0x40);
    }
    #[test]
    fn fhfma_sat_clamps() {
        // 1.0h * 1.0h + 1.0f = 2 → 1 with SAT; NaN → +0.
        assert_eq!(fhfma(0x3c00, 0x3c00, 0x3f80_0000, false, Rounding::Rn, true), 0x3f80_0000);
        assert_eq!(fhfma(0x7e00, 0x3c00, 0, false, Rounding::Rn, true), 0);
        assert_eq!(fhfma(0x7e00, 0x3c00, 0, false, Rounding::Rn, false), 0x7fff_ffff);
        // bf16 1.0 = 0x3f80.
        assert_eq!(fhfma(0x3f80, 0x3f80, 0, true, Rounding::Rn, false), 0x3f80_0000);
    }
}
