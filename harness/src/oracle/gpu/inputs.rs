//! Per-thread inputs, biased to the values where arithmetic goes wrong: ±0, subnormals,
//! ±inf, quiet and signalling NaNs with payloads, ties, extremes, large integers.

use super::template::Kind;
use crate::gen::Rng;

const F64_EDGES: [u64; 24] = [
    0,
    0x8000_0000_0000_0000,
    1,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x8010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0xffef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff8_dead_beef_0001,
    0x7ff0_0000_0000_0001,
    0xfff4_0000_0000_1234,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x3ff0_0000_0000_0001,
    0x3ca0_0000_0000_0000,
    0x3fe0_0000_0000_0000,
    0x4340_0000_0000_0000,
    0x3ff8_0000_0000_0000,
    0x0018_0000_0000_0000,
    0x7fe0_0000_0000_0000,
    0x0000_0000_0000_0003,
];
const F32_EDGES: [u32; 14] = [
    0,
    0x8000_0000,
    1,
    0x007f_ffff,
    0x0080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x3f80_0000,
    0x3380_0000,
    0xbf80_0001,
];
/// f16 and bf16 edges together (a half is read as either).
const HALF_EDGES: [u16; 22] = [
    0, 0x8000, 1, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0x3c00, 0x3c01, 0xbc00, 0x007f, 0x0080, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81,
    0x3f80, 0x3f81,
];
const INT_EDGES: [u32; 18] = [
    0,
    1,
    0xffff_ffff,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0x0100_0001,
    0x0100_0003,
    0x0080_0001,
    0x0000_0801,
    0x0000_0fff,
    0xff7f_fffd,
    0x00ff_ff80,
];
const FP8_EDGES: [u8; 16] = [0, 0x80, 1, 0x07, 0x08, 0x7e, 0x7f, 0xfe, 0xff, 0x7b, 0x7c, 0x7d, 0x38, 0x3c, 0xbc, 0x77];

fn pick<T: Copy>(rng: &mut Rng, edges: &[T], random: impl FnOnce(&mut Rng) -> T) -> T {
    if rng.below(2) == 0 {
        edges[rng.below(edges.len() as u64) as usize]
    } else {
        random(rng)
    }
}

fn f64_value(rng: &mut Rng) -> u64 {
    pick(rng, &F64_EDGES, |r| match r.below(3) {
        // 1 + 2^-a: products of two such are exact ties for some a, b.
        0 => 0x3ff0_0000_0000_0000 | 1u64 << r.below(52),
        1 => r.next_u64() & 0x800f_ffff_ffff_ffff,
        _ => r.next_u64(),
    })
}

fn half_pair(rng: &mut Rng) -> u32 {
    let mut h = || pick(rng, &HALF_EDGES, |r| r.next_u64() as u16) as u32;
    h() | h() << 16
}

fn int_value(rng: &mut Rng) -> u32 {
    pick(rng, &INT_EDGES, |r| (r.next_u64() >> r.below(40)) as u32)
}

fn int64_value(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => int_value(rng) as i32 as i64 as u64,
        1 => [0, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 1 << 53, (1 << 53) + 1, (1 << 24) + 1, 0x0020_0000_0000_0003][rng.below(9) as usize],
        _ => rng.next_u64() >> rng.below(64),
    }
}

fn fp8x4(rng: &mut Rng) -> u32 {
    let mut b = || pick(rng, &FP8_EDGES, |r| r.next_u64() as u8) as u32;
    b() | b() << 8 | b() << 16 | b() << 24
}

/// One slot's input record for one thread (the layout `template::ptx` loads).
fn slot_record(kind: Kind, rng: &mut Rng, out: &mut Vec<u8>) {
    match kind {
        Kind::Dfma => (0..3).for_each(|_| out.extend(f64_value(rng).to_le_bytes())),
        Kind::Fhfma => {
            out.extend(half_pair(rng).to_le_bytes());
            out.extend(half_pair(rng).to_le_bytes());
            out.extend(pick(rng, &F32_EDGES, |r| r.next_u64() as u32).to_le_bytes());
        }
        Kind::I2f | Kind::I2fF64 => out.extend(int_value(rng).to_le_bytes()),
        Kind::I2fS64 | Kind::I2fF64S64 => out.extend(int64_value(rng).to_le_bytes()),
        Kind::Hadd2 => (0..2).for_each(|_| out.extend(fp8x4(rng).to_le_bytes())),
    }
}

/// `threads` input records of `slots` slots each.
pub fn generate(kind: Kind, slots: u32, threads: u32, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity((threads * slots * kind.slot_bytes().0) as usize);
    for _ in 0..threads * slots {
        slot_record(kind, &mut rng, &mut out);
    }
    out
}

/// The `k` parameter (every `c[0x0][…]` source) for a run: an edge value per run.
pub fn constant(kind: Kind, run: u64) -> u64 {
    let mut rng = Rng::new(run ^ 0xc0ffee);
    match kind {
        Kind::Dfma => f64_value(&mut rng),
        Kind::Fhfma => pick(&mut rng, &F32_EDGES, |r| r.next_u64() as u32) as u64,
        Kind::I2f | Kind::I2fF64 => int_value(&mut rng) as u64,
        Kind::I2fS64 | Kind::I2fF64S64 => int64_value(&mut rng),
        Kind::Hadd2 => fp8x4(&mut rng) as u64,
    }
}

/// Input records where each listed entry's source values come from its own key: entries
/// (of any cubin) with equal keys get equal values per source, thread by thread, whatever
/// input offsets ptxas gave their slots, which lets two words be compared with each other
/// rather than with a model. A record is its sources' values in order (every template's
/// layout); `entries` holds (key, each source's input offset). The rest stays 0.
pub fn generate_for(kind: Kind, slots: u32, threads: u32, entries: &[(u64, Vec<u32>)]) -> Vec<u8> {
    let stride = (kind.slot_bytes().0 * slots) as usize;
    let chunk = (kind.src_bits() / 8) as usize;
    let mut out = vec![0u8; stride * threads as usize];
    let mut rec = Vec::with_capacity(kind.slot_bytes().0 as usize);
    for (key, offsets) in entries {
        let mut rng = Rng::new(*key);
        for t in 0..threads as usize {
            rec.clear();
            slot_record(kind, &mut rng, &mut rec);
            for (j, &off) in offsets.iter().enumerate() {
                let (at, from) = (t * stride + off as usize, j * chunk);
                if let (Some(dst), Some(src)) = (out.get_mut(at..at + chunk), rec.get(from..from + chunk)) {
                    dst.copy_from_slice(src);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn records_have_the_template_layout_and_cover_edges() {
        let n = 10_240;
        let buf = generate(Kind::Dfma, 2, n, 1);
        assert_eq!(buf.len(), (n * 2 * 24) as usize);
        let vals: Vec<u64> = buf.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        for e in F64_EDGES {
            assert!(vals.contains(&e), "edge {e:#x} missing");
        }
        let nans = vals.iter().filter(|&&v| f64::from_bits(v).is_nan()).count();
        assert!(nans > 100 && nans < vals.len() / 2, "{nans}");
        assert_eq!(generate(Kind::Hadd2, 3, 10, 5), generate(Kind::Hadd2, 3, 10, 5));
        assert_ne!(generate(Kind::I2f, 3, 10, 5), generate(Kind::I2f, 3, 10, 6));
        // Keyed: the same key in two slots gives the same value per source, even where
        // the slots' sources sit in another order.
        let k = generate_for(Kind::Dfma, 2, 16, &[(7, vec![0, 8, 16]), (7, vec![40, 32, 24])]);
        let at = |t: usize, o: usize| &k[t * 48 + o..t * 48 + o + 8];
        assert!((0..16).all(|t| at(t, 0) == at(t, 40) && at(t, 8) == at(t, 32) && at(t, 16) == at(t, 24)));
        assert_ne!(at(0, 0), at(1, 0));
        let z = generate_for(Kind::I2f, 3, 4, &[(1, vec![4])]);
        assert!((0..4).all(|t| z[t * 12..t * 12 + 4] == [0; 4] && z[t * 12 + 8..t * 12 + 12] == [0; 4]));
    }
}
