//! Floats spelled from their exact decimal digits in integer arithmetic: what
//! [`super::format_float`] prints (nvdisasm's `%.20e` / `%.20g`), without `fmt`'s exact
//! mode, whose big-number fallback (Dragon4) took a sixth of the compiled printer's time.
//!
//! A finite double is `m · 2^k`; with `m` odd, `m · 2^k` (k ≥ 0) or `m · 5^-k` (k < 0,
//! then times `10^k`) is an integer holding every decimal digit of the value. Where that
//! integer fits a `u128` (every fp16, every fp32 from 2^-44 up, doubles near 1) the digits
//! are exact and rounded as `fmt` rounds (half to even). Below 10^22 otherwise (every
//! other fp32, small doubles), `floor(x · 10^p) = m · 5^p · 2^(k+p)` for a `p` that gives
//! it 22 to 24 digits is worked out in a small big number, and whether anything was cut
//! below it: its digits then round as the exact value's. Past 2^128 (doubles), the integer
//! `m · 2^k` is divided by 10^9 until it fits a `u128`, noting whether anything was cut.

/// Significant digits a `u128` holds at most.
const MAX_DIGITS: usize = 39;

/// 5^j for j ≤ 55 (5^55 < 2^128).
const POW5: [u128; 56] = {
    let mut t = [1u128; 56];
    let mut j = 1;
    while j < 56 {
        t[j] = t[j - 1] * 5;
        j += 1;
    }
    t
};

/// A value's decimal digits (`d[0]` first, none of them a leading zero) and the power of
/// ten of the first: the value is `d0.d1d2… · 10^exp`.
#[derive(Clone, Copy)]
struct Digits {
    d: [u8; MAX_DIGITS + 1],
    len: usize,
    exp: i32,
}

impl Digits {
    /// `|x|`'s exact digits (x finite and non-zero), if its integer fits a `u128`.
    fn exact(x: f64) -> Option<Digits> {
        let bits = x.to_bits();
        let (e, frac) = ((bits >> 52 & 0x7ff) as i32, bits & ((1 << 52) - 1));
        let (mut m, mut k) = if e == 0 { (frac, -1074) } else { (frac | 1 << 52, e - 1075) };
        if m == 0 {
            return None;
        }
        let tz = m.trailing_zeros();
        m >>= tz;
        k += tz as i32;
        let (n, ten) = if k >= 0 {
            // `m` has 64 - lz bits, shifted 64 - lz + k: at most 128.
            if k > m.leading_zeros() as i32 + 64 {
                return None;
            }
            (u128::from(m) << k, 0)
        } else {
            let j = usize::try_from(-k).ok().filter(|&j| j < POW5.len())?;
            (u128::from(m).checked_mul(POW5[j])?, k)
        };
        let mut d = Digits { d: [0; MAX_DIGITS + 1], len: 0, exp: 0 };
        d.len = write_u128(n, &mut d.d);
        d.exp = d.len as i32 - 1 + ten;
        Some(d)
    }

    /// `|x|`'s first 22 to 24 digits, and a digit 1 after them where the exact value has
    /// more (nonzero) digits: rounding at the 21st digit or before then rounds as the exact
    /// value rounds. For `|x|` below 10^22 (x finite and non-zero).
    fn scaled(x: f64) -> Option<Digits> {
        let bits = x.to_bits();
        let (e, frac) = ((bits >> 52 & 0x7ff) as i32, bits & ((1 << 52) - 1));
        let (m, k) = if e == 0 { (frac, -1074) } else { (frac | 1 << 52, e - 1075) };
        if m == 0 {
            return None;
        }
        // |x| lies in [2^top, 2^(top + 1)); its power of ten is `est - 1`, `est` or
        // `est + 1` (78913 / 2^18 is log10(2) from below, to within 2^-24).
        let top = k + 63 - m.leading_zeros() as i32;
        let est = (top * 78913) >> 18;
        let p = 22 - est;
        if p < 0 {
            return None;
        }
        // floor(x · 10^p) = (m · 5^p) · 2^(k + p), in [10^21, 10^24).
        let big = Big::times_pow5(m, p as u32);
        let (n, cut) = big.shifted(k + p)?;
        let mut d = Digits { d: [0; MAX_DIGITS + 1], len: 0, exp: 0 };
        d.len = write_u128(n, &mut d.d);
        d.exp = d.len as i32 - 1 - p;
        if cut {
            d.d[d.len] = 1;
            d.len += 1;
        }
        Some(d)
    }

    /// `|x|`'s first 30 to 39 digits, and a digit 1 after them where the exact value has
    /// more (nonzero) digits, as [`Digits::scaled`] gives them. For `|x|` of 2^128 and up,
    /// an integer `m · 2^k` of up to 1 024 bits: divided by 10^9 until it fits a `u128`.
    fn large(x: f64) -> Option<Digits> {
        let bits = x.to_bits();
        let (e, frac) = ((bits >> 52 & 0x7ff) as i32, bits & ((1 << 52) - 1));
        let k = e - 1075;
        if e == 0x7ff || k <= 0 {
            return None;
        }
        let mut big = Big32::shifted(frac | 1 << 52, k.unsigned_abs());
        let (mut ten, mut cut) = (0, false);
        // Past 4 limbs it is 2^128 or more; divided once more, still 2^128 / 10^9 or more:
        // 30 digits at least, of which `%.20e` reads 22.
        while big.len > 4 {
            cut |= big.div_1e9() != 0;
            ten += 9;
        }
        let n = big.limbs[..big.len].iter().rev().fold(0u128, |n, &l| n << 32 | u128::from(l));
        let mut d = Digits { d: [0; MAX_DIGITS + 1], len: 0, exp: 0 };
        d.len = write_u128(n, &mut d.d);
        d.exp = d.len as i32 - 1 + ten;
        if cut {
            d.d[d.len] = 1;
            d.len += 1;
        }
        Some(d)
    }

    /// Rounded to `keep` significant digits (half to even, as `fmt` rounds); a carry out of
    /// the first digit raises the exponent. `keep` ≥ 1.
    fn round(&mut self, keep: usize) {
        if self.len <= keep {
            return;
        }
        let first = self.d[keep];
        let rest_zero = self.d[keep + 1..self.len].iter().all(|&c| c == 0);
        let up = first > 5 || (first == 5 && (!rest_zero || self.d[keep - 1] & 1 == 1));
        self.len = keep;
        if up {
            self.increment();
        }
    }

    /// Adds one unit in the last kept digit.
    fn increment(&mut self) {
        for i in (0..self.len).rev() {
            if self.d[i] < 9 {
                self.d[i] += 1;
                return;
            }
            self.d[i] = 0;
        }
        // 99…9 + 1: the digits become 10…0, one place up.
        self.d[0] = 1;
        self.exp += 1;
    }

    /// The digit at position `i` (zeros past the end).
    fn at(&self, i: usize) -> u8 {
        if i < self.len {
            self.d[i]
        } else {
            0
        }
    }
}

/// A non-negative integer of up to 16 64-bit limbs, least significant first: enough for
/// `m · 5^p` with `m < 2^53` and `p ≤ 22 + 324` (some 860 bits).
struct Big {
    limbs: [u64; 16],
    len: usize,
}

impl Big {
    /// `m · 5^p`.
    fn times_pow5(m: u64, p: u32) -> Big {
        // 5^27 is the largest power of five below 2^64.
        const POW5_27: u64 = 7_450_580_596_923_828_125;
        let mut b = Big { limbs: [0; 16], len: 1 };
        b.limbs[0] = m;
        for _ in 0..p / 27 {
            b.times(POW5_27);
        }
        b.times(POW5[(p % 27) as usize] as u64);
        b
    }

    fn times(&mut self, f: u64) {
        let mut carry = 0u128;
        for l in &mut self.limbs[..self.len] {
            let x = u128::from(*l) * u128::from(f) + carry;
            *l = x as u64;
            carry = x >> 64;
        }
        if carry > 0 {
            self.limbs[self.len] = carry as u64;
            self.len += 1;
        }
    }

    /// `self · 2^s` as a `u128` (its integer part), and whether a nonzero fraction was
    /// cut; `None` past a `u128`.
    fn shifted(&self, s: i32) -> Option<(u128, bool)> {
        let limbs = &self.limbs[..self.len];
        if s >= 0 {
            let n = match limbs {
                [a] => u128::from(*a),
                [a, b] => u128::from(*b) << 64 | u128::from(*a),
                _ => return None,
            };
            return (n.leading_zeros() as i32 > s).then(|| (n << s, false));
        }
        let r = s.unsigned_abs() as usize;
        let (whole, bits) = (r / 64, r % 64);
        let limb = |i: usize| limbs.get(i).copied().map_or(0, u128::from);
        // Three limbs from `whole` on hold the 128 bits kept (and `bits` more, cut).
        let window = limb(whole) | limb(whole + 1) << 64;
        let above = limb(whole + 2);
        if limbs.len() > whole + 3 || above >> bits != 0 {
            return None;
        }
        let n = window >> bits | if bits > 0 { above << (128 - bits) } else { 0 };
        let cut = limbs[..whole.min(limbs.len())].iter().any(|&l| l != 0) || window & ((1u128 << bits) - 1) != 0;
        Some((n, cut))
    }
}

/// A non-negative integer of up to 32 32-bit limbs, least significant first: a double of
/// 2^128 and up, `m · 2^k` with `m < 2^53` and `53 + k ≤ 1 024`. In 32-bit limbs, so that
/// dividing by 10^9 takes `u64` arithmetic by a constant (a multiply), not a `u128` division.
struct Big32 {
    limbs: [u32; 32],
    len: usize,
}

impl Big32 {
    /// `m · 2^k` (`m < 2^53`, `k ≤ 971`).
    fn shifted(m: u64, k: u32) -> Big32 {
        let mut b = Big32 { limbs: [0; 32], len: 0 };
        let (at, bits) = ((k / 32) as usize, k % 32);
        // `m << bits` has at most 53 + 31 bits: three limbs.
        let wide = u128::from(m) << bits;
        for i in 0..3 {
            let limb = (wide >> (32 * i)) as u32;
            if limb != 0 && at + i < b.limbs.len() {
                b.limbs[at + i] = limb;
                b.len = at + i + 1;
            }
        }
        b
    }

    /// Divides by 10^9; the remainder.
    fn div_1e9(&mut self) -> u32 {
        const E9: u64 = 1_000_000_000;
        let mut rem = 0u64;
        for l in self.limbs[..self.len].iter_mut().rev() {
            let cur = rem << 32 | u64::from(*l);
            *l = (cur / E9) as u32;
            rem = cur % E9;
        }
        while self.len > 0 && self.limbs[self.len - 1] == 0 {
            self.len -= 1;
        }
        rem as u32
    }
}

/// `n`'s decimal digits (values 0–9, no leading zero; `0` is one digit) into `out`; their
/// number. Two `u128` divisions at most, the rest in `u64`.
fn write_u128(n: u128, out: &mut [u8; MAX_DIGITS + 1]) -> usize {
    const E19: u128 = 10_000_000_000_000_000_000;
    let (hi, lo) = (n / E19, (n % E19) as u64);
    let (top, mid) = ((hi / E19) as u64, (hi % E19) as u64);
    let mut len = 0;
    let mut push = |x: u64, width: Option<usize>| {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut x = x;
        loop {
            i -= 1;
            buf[i] = (x % 10) as u8;
            x /= 10;
            if x == 0 && width.is_none_or(|w| buf.len() - i >= w) {
                break;
            }
        }
        for &c in &buf[i..] {
            out[len] = c;
            len += 1;
        }
    };
    if top > 0 {
        push(top, None);
        push(mid, Some(19));
        push(lo, Some(19));
    } else if hi > 0 {
        push(mid, None);
        push(lo, Some(19));
    } else {
        push(lo, None);
    }
    len
}

/// [`super::format_float`]'s text for a finite non-zero `x` (no trailing space to add),
/// appended to `out`; false, with nothing appended, where the digits do not fit.
pub(super) fn push_finite(x: f64, out: &mut String) -> bool {
    let Some(mut d) = Digits::exact(x).or_else(|| Digits::scaled(x)).or_else(|| Digits::large(x)) else { return false };
    if x.is_sign_negative() {
        out.push('-');
    }
    if x.abs() >= 1e9 {
        // `%.20e`: 21 digits, all kept.
        d.round(21);
        push_sci(&d, 21, out);
        return true;
    }
    // `%.20g`: the exponent after rounding to 20 significant digits picks the style.
    let mut g = d;
    g.round(20);
    if g.exp < -4 {
        let shown = (0..20).rev().find(|&i| g.at(i) != 0).map_or(1, |i| i + 1);
        push_sci(&g, shown, out);
        return true;
    }
    // Fixed, with 19 - exp decimals (rounded at that place), trailing zeros cut.
    let decimals = 19 - g.exp;
    let keep = d.exp + 1 + decimals;
    match usize::try_from(keep) {
        Ok(keep) if keep >= 1 => d.round(keep),
        // Every digit lies past the last decimal: it rounds to 0 or one unit there (never
        // met for what `%.20g` prints in fixed style, where the first digit is kept).
        _ => return false,
    }
    push_fixed(&d, decimals, out);
    true
}

fn digit(c: u8) -> char {
    char::from(b'0' + c)
}

/// `d0.d1…` with `n` digits, then `e+NN` (two digits at least).
fn push_sci(d: &Digits, n: usize, out: &mut String) {
    out.push(digit(d.at(0)));
    if n > 1 {
        out.push('.');
        (1..n).for_each(|i| out.push(digit(d.at(i))));
    }
    out.push('e');
    out.push(if d.exp < 0 { '-' } else { '+' });
    let e = d.exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(itoa_small(e, &mut [0; 10]));
}

/// `e` in decimal.
fn itoa_small(mut e: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (e % 10) as u8;
        e /= 10;
        if e == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

/// The value with `decimals` (> 0) places after the point, trailing zeros and a bare point
/// cut.
fn push_fixed(d: &Digits, decimals: i32, out: &mut String) {
    let start = out.len();
    if d.exp < 0 {
        out.push('0');
    } else {
        (0..=d.exp as usize).for_each(|i| out.push(digit(d.at(i))));
    }
    out.push('.');
    for p in 1..=decimals {
        // The digit at 10^-p is digit number exp + p.
        let i = d.exp + p;
        out.push(if i < 0 { '0' } else { digit(d.at(i as usize)) });
    }
    let kept = out[start..].trim_end_matches('0').trim_end_matches('.').len();
    out.truncate(start + kept);
}

#[cfg(test)]
mod tests {
    use super::super::{format_float, format_float_fmt};
    use crate::gen::Rng;

    /// The integer path prints what `fmt`'s exact mode prints, over every fp16, every
    /// bfloat16, random fp32 and fp64-high bits, and values that round at a tie.
    #[test]
    fn exact_digits_print_as_fmt() {
        let check = |x: f64| {
            let quiet = x.to_bits() >> 51 & 1 == 1;
            assert_eq!(format_float(x, quiet), format_float_fmt(x, quiet), "{x:e} ({:#x})", x.to_bits());
        };
        for b in 0..=u16::MAX {
            check(super::super::half_to_f64(b).0);
            check(f64::from(f32::from_bits(u32::from(b) << 16)));
        }
        let mut rng = Rng::new(5);
        for _ in 0..200_000 {
            let b = rng.next_u64();
            check(f64::from(f32::from_bits(b as u32)));
            check(f64::from_bits(b << 32));
            check(f64::from_bits(b & 0x000f_ffff_0000_0000 | 0x3ff0_0000_0000_0000));
        }
        // Ties: `m · 2^-j` (m odd) has the digits of `m · 5^j`, whose last is 5, so those with
        // 21 or 22 digits round at a tie; and carries through nines.
        for j in 1..=55 {
            for _ in 0..2_000 {
                let m = (rng.next_u64() >> 40) | 1;
                check(m as f64 * 2f64.powi(-j));
            }
        }
        let below = |x: f64| f64::from_bits(x.to_bits() - 1);
        for x in [0.5, 2.5, 9.5e-20, 1e9, below(1e9), 999_999_999.5, 5e-324, f64::MAX, 1e-4, below(1e-4), f64::from_bits(0x3ff0_0000_0000_0001)] {
            check(x);
            check(-x);
        }
    }

    /// The integer path is taken where the module says (else this tests `fmt` against itself).
    #[test]
    fn exact_digits_cover_fp16_and_fp32_from_2_to_the_minus_44() {
        let mut out = String::new();
        for b in 1..0x7c00u16 {
            assert!(super::push_finite(super::super::half_to_f64(b).0, &mut out), "{b:#x}");
        }
        for b in [1.0f32, 3.4e38, 2f32.powi(-44), 1.1920929e-7, 0.1, 123456.79] {
            assert!(super::push_finite(f64::from(b), &mut out), "{b:e}");
        }
        // Below 2^-44 and every subnormal too (through `Digits::scaled`), and past 2^128
        // (through `Digits::large`): every finite double.
        for x in [f64::from(1e-30f32), f64::from(f32::from_bits(1)), 5e-324, 1e-300, 9.999e21, 1e39, f64::MAX] {
            assert!(super::push_finite(x, &mut out), "{x:e}");
        }
    }

    /// The large path's digits are the exact integer's, read from an independent big
    /// integer (`num-bigint`): its first digits, and a last digit 1 exactly where the
    /// digits it dropped are not all zero (that `1` decides ties at the 22nd digit).
    #[test]
    fn large_digits_are_the_integers_digits() {
        let mut rng = Rng::new(17);
        let mut cut = 0;
        for i in 0..20_000 {
            let b = rng.next_u64();
            // Exponent field 1151 (2^128) to 2046. Every tenth is a multiple of 5^18 just
            // past 2^128: one division by 10^9 leaves nothing, as 10^9 divides it.
            let x = if i % 10 == 0 {
                let m = 3_814_697_265_625u64 * (1181 + b % 1180);
                f64::from_bits((1151 + (b >> 60) % 8) << 52 | m & ((1 << 52) - 1))
            } else {
                f64::from_bits((1151 + (b >> 52) % (2047 - 1151)) << 52 | b & ((1 << 52) - 1))
            };
            let (m, k) = (x.to_bits() & ((1 << 52) - 1) | 1 << 52, (x.to_bits() >> 52) as i32 - 1075);
            let exact = (num_bigint::BigUint::from(m) << k as usize).to_string();
            let d = super::Digits::large(x).expect("a double past 2^128");
            assert_eq!(d.exp as usize, exact.len() - 1, "{x:e}");
            let dropped = &exact.as_bytes()[d.len.min(exact.len())..];
            let (kept, sticky) = if d.len > exact.len() || dropped.iter().any(|&c| c != b'0') { (d.len - 1, true) } else { (d.len, false) };
            let digits: String = d.d[..kept].iter().map(|&c| char::from(b'0' + c)).collect();
            assert!(exact.starts_with(&digits) && kept >= 30, "{x:e}: {digits} of {exact}");
            let rest = &exact.as_bytes()[kept..];
            assert_eq!(sticky, rest.iter().any(|&c| c != b'0'), "{x:e}: {digits} of {exact}");
            cut += usize::from(!sticky);
        }
        assert!(cut > 0, "no value whose dropped digits are all zero");
    }

    /// The large path (doubles of 2^128 and up, beyond a `u128`) prints what `fmt` prints:
    /// random doubles over every exponent from 2^128 up, both sides of 2^128, of powers of
    /// ten, and of the largest double, and values whose digits carry through nines or stop
    /// at a 5.
    #[test]
    fn large_digits_print_as_fmt() {
        let check = |x: f64| {
            assert_eq!(format_float(x, false), format_float_fmt(x, false), "{x:e} ({:#x})", x.to_bits());
            assert_eq!(format_float(-x, false), format_float_fmt(-x, false), "{:e}", -x);
        };
        let mut rng = Rng::new(13);
        for _ in 0..100_000 {
            let b = rng.next_u64();
            // Exponent field 1151 (2^128) to 2046 (the largest), any mantissa.
            let e = 1151 + (b >> 52) % (2047 - 1151);
            check(f64::from_bits(e << 52 | b & ((1 << 52) - 1)));
        }
        let near = |x: f64| [f64::from_bits(x.to_bits() - 1), x, f64::from_bits(x.to_bits() + 1)];
        for p in 38..=308 {
            near(10f64.powi(p)).into_iter().for_each(check);
        }
        for x in [2f64.powi(128), f64::MAX / 2.0, 2f64.powi(1000), 3.4e38, 1e39] {
            near(x).into_iter().for_each(check);
        }
        check(f64::MAX);
        for j in 128..=1023 {
            for m in [1u64, 3, 5, 999, (1 << 53) - 1] {
                let x = m as f64 * 2f64.powi(j);
                if x.is_finite() {
                    check(x);
                }
            }
        }
    }

    /// The scaled path (below 2^-44, beyond a `u128` of digits) prints what `fmt` prints:
    /// every fp32 exponent down to the subnormals, random small doubles, subnormal doubles
    /// and the values that round at a tie or carry there.
    #[test]
    fn scaled_digits_print_as_fmt() {
        let check = |x: f64| {
            let quiet = x.to_bits() >> 51 & 1 == 1;
            assert_eq!(format_float(x, quiet), format_float_fmt(x, quiet), "{x:e} ({:#x})", x.to_bits());
        };
        let mut rng = Rng::new(11);
        for _ in 0..100_000 {
            let b = rng.next_u64();
            // fp32 below 2^-44: exponent field 0..=82, any mantissa.
            check(f64::from(f32::from_bits((b as u32 % (83 << 23)) | (b >> 63 << 31) as u32)));
            // Doubles from 2^-1074 to 10^22, exponent uniform.
            let e = (b >> 52) % (1023 + 73);
            check(f64::from_bits(e << 52 | b & ((1 << 52) - 1)));
        }
        // Numbers whose digits carry through nines or stop at a 5 (m · 2^-j, small m).
        for j in 56..=1074 {
            for m in [1u64, 3, 5, 999, (1 << 53) - 1] {
                // In two steps: `2f64.powi(-j)` alone underflows to 0 for large `j`.
                check(m as f64 * 2f64.powi(-(j / 2)) * 2f64.powi(-(j - j / 2)));
            }
        }
    }
}
