//! The reference models against independent arithmetic: the host's `f64::mul_add` for RN,
//! exact big-integer arithmetic with a rounding written here for every mode and format.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Signed, Zero};
use sass_harness::gen::Rng;
use sass_harness::semantics::float::{canonical_nan, Format, Rounding};
use sass_harness::semantics::ops;

/// An IEEE binary format: precision (hidden bit included), exponent range.
#[derive(Copy, Clone)]
struct Fmt {
    p: u32,
    emin: i64,
    emax: i64,
    w: u32,
}
const F64: Fmt = Fmt { p: 53, emin: -1022, emax: 1023, w: 64 };
const F32: Fmt = Fmt { p: 24, emin: -126, emax: 127, w: 32 };
const F16: Fmt = Fmt { p: 11, emin: -14, emax: 15, w: 16 };
const BF16: Fmt = Fmt { p: 8, emin: -126, emax: 127, w: 16 };
const E5M2: Fmt = Fmt { p: 3, emin: -14, emax: 15, w: 8 };

impl Fmt {
    fn width(self) -> u32 {
        self.w
    }
    fn ebits(self) -> u32 {
        self.width() - self.p
    }
    fn inf(self, neg: bool) -> u64 {
        let e = ((1u64 << self.ebits()) - 1) << (self.p - 1);
        e | if neg { 1 << (self.width() - 1) } else { 0 }
    }
    fn max(self, neg: bool) -> u64 {
        self.inf(neg) - 1
    }
    fn zero(self, neg: bool) -> u64 {
        if neg {
            1 << (self.width() - 1)
        } else {
            0
        }
    }
    /// Finite value → (negative, integer significand, exponent): value = n · 2^e.
    fn split(self, bits: u64) -> (bool, BigUint, i64) {
        let neg = bits >> (self.width() - 1) & 1 == 1;
        let be = (bits >> (self.p - 1)) & ((1 << self.ebits()) - 1);
        let frac = bits & ((1u64 << (self.p - 1)) - 1);
        let (n, e) = if be == 0 { (frac, self.emin) } else { (frac | 1 << (self.p - 1), be as i64 - 1 + self.emin) };
        (neg, BigUint::from(n), e - (self.p as i64 - 1))
    }
    fn is_nan(self, bits: u64) -> bool {
        let emask = (1u64 << self.ebits()) - 1;
        (bits >> (self.p - 1)) & emask == emask && bits & ((1 << (self.p - 1)) - 1) != 0
    }
    fn is_inf(self, bits: u64) -> bool {
        bits & !(1u64 << (self.width() - 1)) == self.inf(false)
    }
}

/// Round ±n·2^e (n > 0) to `f` under `r`: written from the IEEE definition, not apfloat.
fn round_exact(f: Fmt, neg: bool, n: &BigUint, e: i64, r: Rounding) -> u64 {
    let (m, q) = round_parts(f, neg, n, e, r);
    if q > f.emax {
        let to_inf = match r {
            Rounding::Rn => true,
            Rounding::Rz => false,
            Rounding::Rp => !neg,
            Rounding::Rm => neg,
        };
        return if to_inf { f.inf(neg) } else { f.max(neg) };
    }
    let hidden = 1u64 << (f.p - 1);
    let biased = if m < hidden { 0 } else { (q - f.emin + 1) as u64 };
    f.zero(neg) | biased << (f.p - 1) | (m & (hidden - 1))
}

/// The rounded significand m (< 2^p) and exponent q: value = m · 2^(q − p + 1); no overflow check.
fn round_parts(f: Fmt, neg: bool, n: &BigUint, e: i64, r: Rounding) -> (u64, i64) {
    let len = n.bits() as i64;
    let mut q = (len - 1 + e).max(f.emin);
    let s = q - (f.p as i64 - 1) - e;
    let (mut m, up) = if s <= 0 {
        (n << (-s) as usize, false)
    } else {
        let m: BigUint = n >> s as usize;
        let rem = n - (&m << s as usize);
        let half = BigUint::one() << (s - 1) as usize;
        let inexact = !rem.is_zero();
        let up = match r {
            Rounding::Rn => rem > half || (rem == half && m.bit(0)),
            Rounding::Rz => false,
            Rounding::Rp => !neg && inexact,
            Rounding::Rm => neg && inexact,
        };
        (m, up)
    };
    if up {
        m += 1u32;
        if m == BigUint::one() << f.p as usize {
            m = BigUint::one() << (f.p - 1) as usize;
            q += 1;
        }
    }
    (m.try_into().unwrap(), q)
}

/// Exact a·b + c, rounded once: the fused multiply-add by definition.
fn fma_exact(f: Fmt, pf: Fmt, a: u64, b: u64, c: u64, r: Rounding) -> Option<u64> {
    if pf.is_nan(a) || pf.is_nan(b) || f.is_nan(c) {
        return None;
    }
    let (sa, sb) = (a >> (pf.width() - 1) & 1 == 1, b >> (pf.width() - 1) & 1 == 1);
    let sp = sa != sb;
    let sc = c >> (f.width() - 1) & 1 == 1;
    let (ia, ib, ic) = (pf.is_inf(a), pf.is_inf(b), f.is_inf(c));
    let (na, ea) = {
        let (_, n, e) = pf.split(a);
        (n, e)
    };
    let (nb, eb) = {
        let (_, n, e) = pf.split(b);
        (n, e)
    };
    if ia || ib {
        let other_zero = (ia && !ib && nb.is_zero()) || (ib && !ia && na.is_zero());
        if other_zero || (ic && sc != sp) {
            return None;
        }
        return Some(f.inf(sp));
    }
    if ic {
        return Some(f.inf(sc));
    }
    let (_, nc, ec) = f.split(c);
    let (np, ep) = (na * nb, ea + eb);
    let e = ep.min(ec);
    let tp = BigInt::from_biguint(if sp { Sign::Minus } else { Sign::Plus }, np.clone() << (ep - e) as usize);
    let tc = BigInt::from_biguint(if sc { Sign::Minus } else { Sign::Plus }, nc.clone() << (ec - e) as usize);
    let sum = tp + tc;
    if sum.is_zero() {
        // Exact zero: the common sign of two zero addends, else +0 (−0 under RM).
        let both_zero_same = np.is_zero() && nc.is_zero() && sp == sc;
        return Some(f.zero(if both_zero_same { sp } else { r == Rounding::Rm }));
    }
    Some(round_exact(f, sum.is_negative(), sum.magnitude(), e, r))
}

const EDGE64: [u64; 20] = [
    0,
    0x8000_0000_0000_0000,
    1,
    0x8000_0000_0000_0001,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0xffef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0xfff4_0000_dead_beef,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x3ff0_0000_0000_0001,
    0x3fe0_0000_0000_0000,
    0x4340_0000_0000_0000,
    0x3ca0_0000_0000_0000,
    0x0000_0000_0000_0003,
];

/// Random doubles biased to edges, exponents near each other, and cancellation.
fn gen_f64(rng: &mut Rng) -> u64 {
    match rng.below(8) {
        0 | 1 => EDGE64[rng.below(EDGE64.len() as u64) as usize],
        2 => rng.next_u64() & 0x800f_ffff_ffff_ffff,                                   // subnormal
        3 => (rng.next_u64() & 0x800f_ffff_ffff_ffff) | (0x3f0 + rng.below(32)) << 52, // near 1
        _ => rng.next_u64(),
    }
}

fn fma_triples(seed: u64, n: usize) -> Vec<(u64, u64, u64)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let (a, b) = (gen_f64(&mut rng), gen_f64(&mut rng));
            let c = if i % 4 == 0 {
                // c ≈ −a·b: massive cancellation, exact zeros, sticky bits.
                let p = -(f64::from_bits(a) * f64::from_bits(b));
                p.to_bits().wrapping_add(rng.below(5)).wrapping_sub(2)
            } else {
                gen_f64(&mut rng)
            };
            (a, b, c)
        })
        .collect()
}

#[test]
fn dfma_rn_matches_host_fma() {
    let cases = fma_triples(1, 200_000);
    for &(a, b, c) in &cases {
        let host = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
        let want = if host.is_nan() { canonical_nan(Format::F64) } else { host.to_bits() };
        let got = ops::dfma(a, b, c, Rounding::Rn);
        assert_eq!(got, want, "DFMA {a:#x} {b:#x} {c:#x}: {got:#x} != host {want:#x}");
    }
}

#[test]
fn dfma_every_rounding_matches_exact_arithmetic() {
    let cases = fma_triples(2, 20_000);
    let mut directed_inexact = 0;
    for &(a, b, c) in &cases {
        for r in Rounding::ALL {
            let want = fma_exact(F64, F64, a, b, c, r).unwrap_or(canonical_nan(Format::F64));
            let got = ops::dfma(a, b, c, r);
            assert_eq!(got, want, "DFMA.{r:?} {a:#x} {b:#x} {c:#x}");
        }
        if ops::dfma(a, b, c, Rounding::Rm) != ops::dfma(a, b, c, Rounding::Rp) {
            directed_inexact += 1;
        }
    }
    // The test means something only if many cases round differently per mode.
    assert!(directed_inexact > 5_000, "only {directed_inexact} inexact cases");
}

fn gen_half(rng: &mut Rng) -> u16 {
    const EDGE: [u16; 10] = [0, 0x8000, 1, 0x3ff, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0x3c00];
    if rng.below(4) == 0 {
        EDGE[rng.below(10) as usize]
    } else {
        rng.next_u64() as u16
    }
}

#[test]
fn fhfma_every_rounding_matches_exact_arithmetic() {
    let mut rng = Rng::new(3);
    for i in 0..20_000 {
        let bf16 = i % 2 == 1;
        let pf = if bf16 { BF16 } else { F16 };
        let (a, b) = (gen_half(&mut rng), gen_half(&mut rng));
        let c = match rng.below(4) {
            0 => [0u32, 0x8000_0000, 1, 0x7f80_0000, 0xff80_0000, 0x7f7f_ffff][rng.below(6) as usize],
            _ => rng.next_u64() as u32 & 0xc7ff_ffff,
        };
        for r in Rounding::ALL {
            let want = fma_exact(F32, pf, a as u64, b as u64, c as u64, r).unwrap_or(canonical_nan(Format::F32));
            let got = ops::fhfma(a, b, c, bf16, r, false) as u64;
            assert_eq!(got, want, "FHFMA bf16={bf16} {r:?} {a:#x} {b:#x} {c:#x}");
        }
    }
}

#[test]
fn i2f_every_type_format_and_rounding_matches_exact_conversion() {
    let mut rng = Rng::new(4);
    let edges: [i128; 12] = [0, 1, -1, 127, -128, 255, 0x7fff, -0x8000, 0xffff, i32::MAX as i128, i32::MIN as i128, u32::MAX as i128];
    let mut n = 0;
    for i in 0..20_000 {
        let raw: i128 = if i < edges.len() { edges[i] } else { rng.next_u64() as i64 as i128 >> rng.below(60) };
        for (w, signed) in [(8, false), (8, true), (16, false), (16, true), (32, false), (32, true), (64, false), (64, true)] {
            let v = wrap(raw, w, signed);
            for (fmt, f) in [(Format::F32, F32), (Format::F16, F16), (Format::Bf16, BF16), (Format::F64, F64)] {
                for r in Rounding::ALL {
                    let want = if v == 0 { 0 } else { round_exact(f, v < 0, &BigUint::from(v.unsigned_abs()), 0, r) };
                    assert_eq!(ops::i2f(v, fmt, r), want, "I2F {v} → {fmt:?} {r:?}");
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 20_000 * 8 * 4 * 4);
}

/// `raw` reduced to a w-bit integer, sign-extended when signed.
fn wrap(raw: i128, w: u32, signed: bool) -> i128 {
    let m = (raw as u128) & ((1u128 << w) - 1);
    if signed && m >> (w - 1) & 1 == 1 {
        m as i128 - (1i128 << w)
    } else {
        m as i128
    }
}

/// fp8 add against exact arithmetic: every pair of E4M3 and E5M2 values (65 536 each).
#[test]
fn fp8_add_matches_exact_arithmetic_for_every_pair() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            for sat in [false, true] {
                let got = ops::fp8_add(Format::E5m2, a, b, sat);
                assert_eq!(got, e5m2_expected(a, b, sat), "E5M2 {a:#x}+{b:#x} sat={sat}");
                let got = ops::fp8_add(Format::E4m3, a, b, sat);
                assert_eq!(got, e4m3_expected(a, b, sat), "E4M3 {a:#x}+{b:#x} sat={sat}");
            }
        }
    }
}

/// E5M2 is IEEE-shaped: a + b = a·1 + b exactly rounded; SATFINITE clamps infinities.
fn e5m2_expected(a: u8, b: u8, sat: bool) -> u8 {
    match fma_exact(E5M2, E5M2, a as u64, 0x3c, b as u64, Rounding::Rn) {
        None => 0x7f,
        Some(x) if sat && E5M2.is_inf(x) => (0x7b | (x & 0x80)) as u8,
        Some(x) => x as u8,
    }
}

/// E4M3FN: S1E4M3, bias 7, no infinities, 0x7f/0xff NaN, largest 448 (0x7e).
fn e4m3_value(x: u8) -> Option<(bool, BigUint, i64)> {
    let neg = x & 0x80 != 0;
    let (e, m) = ((x >> 3) & 0xf, x & 7);
    if e == 0xf && m == 7 {
        return None;
    }
    let (n, ex) = if e == 0 { (m as u64, -6) } else { (8 | m as u64, e as i64 - 7) };
    Some((neg, BigUint::from(n), ex - 3))
}

fn e4m3_expected(a: u8, b: u8, sat: bool) -> u8 {
    let (Some((sa, na, ea)), Some((sb, nb, eb))) = (e4m3_value(a), e4m3_value(b)) else { return 0x7f };
    let e = ea.min(eb);
    let ta = BigInt::from_biguint(if sa { Sign::Minus } else { Sign::Plus }, na << (ea - e) as usize);
    let tb = BigInt::from_biguint(if sb { Sign::Minus } else { Sign::Plus }, nb << (eb - e) as usize);
    let s = ta + tb;
    if s.is_zero() {
        return if sa && sb { 0x80 } else { 0 };
    }
    let neg = s.is_negative();
    let (m, q) = round_parts(Fmt { p: 4, emin: -6, emax: 8, w: 8 }, neg, s.magnitude(), e, Rounding::Rn);
    let sign = if neg { 0x80 } else { 0 };
    if q > 8 || (q == 8 && m == 15) {
        return if sat { 0x7e | sign } else { 0x7f };
    }
    let biased = if m < 8 { 0 } else { (q + 7) as u8 };
    sign | biased << 3 | (m as u8 & 7)
}

// ---- The models as decoded instructions: text → word → decode → print → evaluate. ----

use sass_harness::codec::{assemble, Codec};
use sass_harness::semantics::{predict, Inputs, Loc};
use sass_harness::spec::Arch;
use sass_harness::word::Word;

use crate::common;
use common::corpus;

/// Assemble `text`, then predict its single output from `inputs`.
fn run(c: &Codec, arch: u32, text: &str, inputs: &[(&str, u64)]) -> Result<(String, u64), String> {
    let (_, w) = assemble(c, Arch(arch), text, Word::ZERO).map_err(|e| e.to_string())?;
    let mut i = Inputs::default();
    for (k, v) in inputs {
        i.set(k.parse::<Loc>().unwrap(), *v);
    }
    let out = predict(c, Arch(arch), w, &i).map_err(|e| e.to_string())?;
    assert_eq!(out.0.len(), 1, "{text}: {out:?}");
    Ok((out.0[0].loc.to_string(), out.0[0].bits))
}

const S64: u64 = 1 << 63;

#[test]
fn dfma_words_apply_modifiers_neg_abs_and_every_source_kind() {
    let s = corpus();
    let c = Codec::new(&s);
    let mut rng = Rng::new(5);
    for _ in 0..2_000 {
        let (a, b, cc) = (gen_f64(&mut rng), gen_f64(&mut rng), gen_f64(&mut rng));
        let r = run(&c, 90, "DFMA.RP R0, -R2, |R4|, -|R6| ;", &[("R2", a), ("R4", b), ("R6", cc)]).unwrap();
        assert_eq!(r, ("R0".into(), ops::dfma(a ^ S64, b & !S64, cc | S64, Rounding::Rp)));
        let r = run(&c, 90, "DFMA.RZ R10, R2, c[0x3][0x10], -R6 ;", &[("R2", a), ("c[0x3][0x10]", b), ("R6", cc)]).unwrap();
        assert_eq!(r, ("R10".into(), ops::dfma(a, b, cc ^ S64, Rounding::Rz)));
        let r = run(&c, 90, "DFMA.RM R4, R2, UR4, R6 ;", &[("R2", a), ("UR4", b), ("R6", cc)]).unwrap();
        assert_eq!(r, ("R4".into(), ops::dfma(a, b, cc, Rounding::Rm)));
    }
    // F: the high 32 bits of a double; RZ reads zero.
    let r = run(&c, 90, "DFMA R0, R2, RZ, 1.5 ;", &[("R2", 0x4000_0000_0000_0000)]).unwrap();
    assert_eq!(r.1, 0x3ff8_0000_0000_0000);
}

#[test]
fn missing_and_misaligned_inputs_are_named() {
    let s = corpus();
    let c = Codec::new(&s);
    let e = run(&c, 90, "DFMA R0, R2, R4, R6 ;", &[("R2", 0), ("R4", 0)]).unwrap_err();
    assert!(e.contains("missing input R6"), "{e}");
    let e = run(&c, 90, "DFMA R0, R3, R4, R6 ;", &[("R3", 0), ("R4", 0), ("R6", 0)]).unwrap_err();
    assert!(e.contains("R3 is odd"), "{e}");
    let e = run(&c, 90, "@P1 DFMA R0, R2, R4, R6 ;", &[("R2", 0), ("R4", 0), ("R6", 0)]).unwrap_err();
    assert!(e.contains("missing input P1"), "{e}");
}

#[test]
fn a_false_guard_writes_nothing() {
    let s = corpus();
    let c = Codec::new(&s);
    let (_, w) = assemble(&c, Arch(90), "@!P1 DFMA R0, R2, R4, R6 ;", Word::ZERO).unwrap();
    let mut i = Inputs::default();
    for (k, v) in [("R2", 0u64), ("R4", 0), ("R6", 0), ("P1", 1)] {
        i.set(k.parse().unwrap(), v);
    }
    assert!(predict(&c, Arch(90), w, &i).unwrap().0.is_empty());
    i.set("P1".parse().unwrap(), 0);
    assert_eq!(predict(&c, Arch(90), w, &i).unwrap().0.len(), 1);
}

#[test]
fn sm100_words_select_halves_bytes_and_formats() {
    let s = corpus();
    let c = Codec::new(&s);
    let mut rng = Rng::new(6);
    for _ in 0..2_000 {
        let (x, y, z) = (rng.next_u64() as u32, rng.next_u64() as u32, rng.next_u64() as u32);
        let r = run(&c, 100, "FHFMA.BF16.RZ R1, R2.H1, -R3, R4;", &[("R2", x as u64), ("R3", y as u64), ("R4", z as u64)]);
        let want = ops::fhfma((x >> 16) as u16, (y as u16) ^ 0x8000, z, true, Rounding::Rz, false);
        assert_eq!(r.unwrap(), ("R1".into(), want as u64));
        // I2F.F16.S8.U16 with .B1: the signed 16-bit integer from byte 1 up.
        let r = run(&c, 100, "I2F.F16.S8.U16 R2, R4.B1 ;", &[("R4", x as u64)]);
        let v = ((x >> 8) as u16) as i16 as i128;
        assert_eq!(r.unwrap().1, ops::i2f(v, Format::F16, Rounding::Rn));
        let r = run(&c, 100, "QADD4.E4M3x4.E4M3x4 R1, R2.B2, -R3.B3210;", &[("R2", x as u64), ("R3", y as u64)]);
        let a = [(x >> 16) as u8; 4];
        let b = (y ^ 0x8080_8080).to_le_bytes();
        assert_eq!(r.unwrap().1, ops::qadd4(Format::E4m3, a, b, false) as u64);
    }
    let r = run(&c, 100, "QADD4.E5M2x4.E5M2x4.SATFINITE R1, R2.B3210, 0x3c3c3c3c;", &[("R2", 0x7b3c_0000)]).unwrap();
    assert_eq!(r.1, 0x7b40_3c3c);
}

#[test]
fn unmodelled_forms_say_so() {
    let s = corpus();
    let c = Codec::new(&s);
    let e = run(&c, 100, "QADD4.E4M3x4.E5M2x4 R1, R2.B3210, R3.B3210;", &[("R2", 0), ("R3", 0)]).unwrap_err();
    assert!(e.contains("no model") && e.contains("mixed"), "{e}");
}

// ---- `sass-harness model` ----

fn model_cli(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sass-harness"));
    c.current_dir(sass_harness::oracle::tools::repo_root()).arg("model").args(args);
    c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn model_cli_prints_pairs_reads_batches_and_names_missing_inputs() {
    // DFMA.RM R0, R2, R4, R6: 1 * 2 + 2^-53 rounds down to 2 under RM, up under RP.
    let w = "0000000000004006000000040200722b";
    let (code, out, _) = model_cli(&["--arch", "90", w, "R2=0x3ff0000000000000", "R4=0x4000000000000000", "R6=0x3ca0000000000000"], "");
    assert_eq!((code, out.trim()), (Some(0), "R0=0x4000000000000000"));
    let batch = format!(
        "{{\"word\":\"{w}\",\"inputs\":{{\"R2\":\"0x3ff0000000000000\",\"R4\":\"0x4000000000000000\",\"R6\":\"0xbca0000000000000\"}}}}\n{{\"word\":\"{w}\",\"inputs\":{{\"R2\":\"0x1\"}}}}\n"
    );
    let (code, out, err) = model_cli(&["--arch", "90", "--batch", "-"], &batch);
    let lines: Vec<&str> = out.lines().collect();
    // 2 - 2^-53 under RM: the largest double below 2.
    assert_eq!(lines[0], r#"{"outputs":{"R0":"0x3fffffffffffffff"}}"#);
    assert!(lines[1].contains("missing input R4"), "{out}");
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = model_cli(&["--arch", "90", w, "R2=0x1", "R4=zz"], "");
    assert_eq!(code, Some(2));
    assert!(err.contains("'zz' is not a number"), "{err}");
}
