//! Codec throughput over the corpus variants.
//!
//! `cargo bench --bench roundtrip` — criterion prints elements/s, one element being one
//! roundtrip of one instruction word:
//! - `codec/encode_decode_encode`: `encode_unchecked → decode → encode_unchecked`, the bit
//!   codec alone (the target is ≥ 10 M roundtrips per second per core);
//! - `codec/print_assemble`: `print → to_string → assemble`, the text direction, for
//!   information.
//!
//! Inputs are pregenerated with a fixed seed: `random_values` for a variant chosen
//! uniformly at random, so every run measures the same words.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sass_harness::codec::{self, asm, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec::{self, Arch};
use std::hint::black_box;

const N_BITS: usize = 4096;
const N_TEXT: usize = 512;
const SEED: u64 = 0x00be_7c4a;

fn inputs(c: &Codec, n: usize, rng: &mut Rng) -> Vec<(usize, Arch, Values)> {
    let nv = c.variants().len() as u64;
    (0..n)
        .map(|_| {
            let vi = rng.below(nv) as usize;
            let v = c.variant(vi);
            (vi, v.arch, random_values(v, rng))
        })
        .collect()
}

fn bench(cr: &mut Criterion) {
    let root = sass_harness::oracle::tools::repo_root();
    let s = spec::load(&[root.join("corpus/isa")]).expect("corpus pages parse");
    let c = Codec::new(&s);
    let mut rng = Rng::new(SEED);

    let bits = inputs(&c, N_BITS, &mut rng);
    // Sanity, outside the timing: every input roundtrips.
    for (vi, arch, vals) in &bits {
        let w = c.encode_unchecked(*vi, vals);
        let (vj, back) = c.decode(*arch, w).expect("decodes");
        assert_eq!((vj, c.encode_unchecked(vj, &back)), (*vi, w));
    }

    let mut g = cr.benchmark_group("codec");
    g.throughput(Throughput::Elements(bits.len() as u64));
    g.bench_function("encode_decode_encode", |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for (vi, arch, vals) in black_box(&bits) {
                let w = c.encode_unchecked(*vi, vals);
                // Borrowed, not moved out: moving the 328-byte `Values` out of the `Result`
                // is a memcpy that costs about a fifth of the loop.
                match &c.decode(*arch, w) {
                    Ok((vj, back)) => acc ^= c.encode_unchecked(*vj, back).0,
                    Err(_) => unreachable!("checked above"),
                }
            }
            acc
        })
    });

    let text = inputs(&c, N_TEXT, &mut rng);
    let words: Vec<_> = text.iter().map(|(vi, _, vals)| c.encode_unchecked(*vi, vals)).collect();
    g.throughput(Throughput::Elements(text.len() as u64));
    g.bench_function("print_assemble", |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for ((vi, arch, vals), &w) in black_box(&text).iter().zip(&words) {
                let t = codec::print(c.variant(*vi), vals).to_string();
                if let Ok((_, w2)) = asm::assemble(&c, *arch, &t, w) {
                    acc ^= w2.0;
                }
            }
            acc
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
