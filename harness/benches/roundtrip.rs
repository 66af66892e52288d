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
//!
//! The groups run over two specs: `codec/…` over the hand-written seed pages (18 variants)
//! and `discovered/…` over every page under `corpus/isa-discovered` (all architectures at
//! once, the scale at which finding a word's variant must not become a linear scan).

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
    bench_spec(cr, "codec", &root.join("corpus/isa"));
    let discovered = root.join("corpus/isa-discovered");
    if discovered.exists() {
        bench_spec(cr, "discovered", &discovered);
    }
}

fn bench_spec(cr: &mut Criterion, group: &str, pages: &std::path::Path) {
    let s = spec::load(&[pages.to_path_buf()]).expect("corpus pages parse");
    let c = Codec::new(&s);
    eprintln!("{group}: {} variants from {}", c.variants().len(), pages.display());
    let mut rng = Rng::new(SEED);

    let mut bits = inputs(&c, N_BITS, &mut rng);
    // Sanity, outside the timing: inputs roundtrip. Words two variants both match (fixed
    // patterns that overlap, which validation reports) are counted and left out.
    let before = bits.len();
    bits.retain(|(vi, arch, vals)| {
        let w = c.encode_unchecked(*vi, vals);
        match c.decode(*arch, w) {
            Ok((vj, back)) => {
                assert_eq!((vj, c.encode_unchecked(vj, &back)), (*vi, w));
                true
            }
            Err(_) => false,
        }
    });
    eprintln!("{group}: {} of {before} random words decode to one variant", bits.len());

    let mut g = cr.benchmark_group(group);
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
    let printed: Vec<String> = text.iter().map(|(vi, _, vals)| codec::print(c.variant(*vi), vals).to_string()).collect();
    // Built once, as a user assembling many texts would (it indexes the variants).
    let a = asm::Assembler::new(&c);
    g.throughput(Throughput::Elements(text.len() as u64));
    g.bench_function("print_assemble", |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for ((vi, arch, vals), &w) in black_box(&text).iter().zip(&words) {
                let t = codec::print(c.variant(*vi), vals).to_string();
                if let Ok((_, w2)) = a.assemble(*arch, &t, w) {
                    acc ^= w2.0;
                }
            }
            acc
        })
    });
    g.bench_function("assemble", |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for (((_, arch, _), &w), t) in black_box(&text).iter().zip(&words).zip(&printed) {
                if let Ok((_, w2)) = a.assemble(*arch, t, w) {
                    acc ^= w2.0;
                }
            }
            acc
        })
    });
    g.bench_function("print", |b| {
        b.iter(|| {
            let mut n = 0;
            for (vi, _, vals) in black_box(&text) {
                n += codec::print(c.variant(*vi), vals).to_string().len();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
