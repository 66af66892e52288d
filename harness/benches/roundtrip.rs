//! Codec throughput over the corpus variants.
//!
//! `cargo bench --bench roundtrip` — criterion prints elements/s, one element being one
//! roundtrip of one instruction word:
//! - `codec/encode_decode_encode`: `encode_unchecked → decode → encode_unchecked`, the bit
//!   codec alone (the target is ≥ 10 M roundtrips per second per core);
//! - `codec/decode`: `decode` alone, of words encoded beforehand (the decode target);
//! - `codec/print_assemble`: `print → to_string → assemble` with an [`asm::Assembler`]
//!   built beforehand, the text direction;
//! - `codec/assemble`: `Assembler::assemble` alone (the same [`asm::Assembler`], the path to
//!   use for many texts), of texts printed beforehand (the target is ≥ 1 M instructions
//!   per second per core with a whole discovered architecture loaded);
//! - `codec/parse`: `sass::parse_instruction` of those texts (how the validator reads
//!   nvdisasm's lines);
//! - `codec/print`: `print → to_string` alone;
//! - `codec/print_word`: the same with the stored printing conventions (what `decode` prints);
//! - `codec/printer`, `codec/printer_word`: `print` and `print_word` through a
//!   [`codec::Printer`] built beforehand (its compiled forms), into one reused buffer: the
//!   fast path to print many words (the target is ≥ 2 M words per second per core with a
//!   whole discovered architecture loaded);
//! - `realcode/assemble`: the assembler over the lines of a real SM90 listing, in order
//!   (see [`bench_listing`]).
//!
//! `BENCH_CPU_TIME=1 cargo bench --bench roundtrip` measures the thread's CPU time instead
//! of wall-clock time: on a shared machine, time spent descheduled does not count.
//!
//! Inputs are pregenerated with a fixed seed: `random_values` for a variant chosen
//! uniformly at random, so every run measures the same words.
//!
//! The groups run over two specs: `codec/…` over the hand-written seed pages (18 variants)
//! and `discovered/…` over every page under `corpus/isa-discovered` (all architectures at
//! once, the scale at which finding a word's variant must not become a linear scan).

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput};
use sass_harness::codec::{self, asm, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec::{self, Arch};
use sass_harness::word::Word;
use std::hint::black_box;

const N_BITS: usize = 4096;
/// Texts per text-direction run: enough to draw the rare slow ones of a 2 800-variant spec
/// (before the assembler's any-order reading was bounded, 8 of 4 096 random texts took
/// milliseconds each, and 512 drew none of them).
const N_TEXT: usize = 4096;
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

fn bench<M: Measurement + 'static>(cr: &mut Criterion<M>) {
    let root = sass_harness::oracle::tools::repo_root();
    bench_spec(cr, "codec", &root.join("corpus/isa"));
    let discovered = root.join("corpus/isa-discovered");
    if discovered.exists() {
        bench_spec(cr, "discovered", &discovered);
        bench_listing(cr, &discovered, &root.join("corpus/bench/sm90-listing.txt"));
    }
}

/// `realcode/assemble`: every line of real SM90 code (`corpus/bench/sm90-listing.txt`, the
/// instruction texts `disasm` lists for the corpus PTX compiled by ptxas, made by
/// `tools/bench-listing.sh`) assembled in file order with the whole discovered spec loaded:
/// what assembling a listing meets (a compiler's few forms, many texts of each, aliases
/// such as `IMAD.MOV.U32` and left-out PT operands), where `discovered/assemble` draws
/// every form alike.
fn bench_listing<M: Measurement + 'static>(cr: &mut Criterion<M>, pages: &std::path::Path, listing: &std::path::Path) {
    let s = spec::load(&[pages.to_path_buf()]).expect("corpus pages parse");
    let c = Codec::new(&s);
    let a = asm::Assembler::new(&c);
    let text = std::fs::read_to_string(listing).unwrap_or_else(|e| panic!("{}: {e}", listing.display()));
    let lines: Vec<&str> = text.lines().collect();
    // Every line reads as one word, or as several that print alike (`asm` then takes the
    // listing's or the first): the listing was made so, and a line that stops reading fails
    // here rather than changing what is timed.
    let mut several = 0;
    for (i, t) in lines.iter().enumerate() {
        match a.assemble(Arch(90), t, Word(0)) {
            Ok(_) => {}
            Err(asm::AsmError::Ambiguous { .. }) => several += 1,
            Err(e) => panic!("{}:{}: {e}", listing.display(), i + 1),
        }
    }
    eprintln!("realcode: {} lines of {} ({several} read as several words)", lines.len(), listing.display());
    let mut g = cr.benchmark_group("realcode");
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("assemble", |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for t in black_box(&lines) {
                if let Ok((_, w)) = a.assemble(Arch(90), t, Word(0)) {
                    acc ^= w.0;
                }
            }
            acc
        })
    });
    g.finish();
}

fn bench_spec<M: Measurement + 'static>(cr: &mut Criterion<M>, group: &str, pages: &std::path::Path) {
    let s = spec::load(&[pages.to_path_buf()]).expect("corpus pages parse");
    let c = Codec::new(&s);
    eprintln!("{group}: {} variants from {}", c.variants().len(), pages.display());
    let mut rng = Rng::new(SEED);

    let mut bits = inputs(&c, N_BITS, &mut rng);
    // Sanity, outside the timing: inputs roundtrip. Words two variants both match (fixed
    // patterns that overlap, which validation reports) or that decode as another variant
    // are counted and left out.
    let before = bits.len();
    bits.retain(|(vi, arch, vals)| {
        let w = c.encode_unchecked(*vi, vals);
        match c.decode(*arch, w) {
            Ok((vj, back)) if vj == *vi => {
                assert_eq!(c.encode_unchecked(vj, &back), w);
                true
            }
            // Another variant's pattern also matches (one more specific; BSSY's one-hot
            // RELIABLE group and its plain form): left out like the ambiguous ones.
            _ => false,
        }
    });
    eprintln!("{group}: {} of {before} random words decode to their own variant", bits.len());

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

    // Decoding alone (finding the variant and extracting its fields), of words encoded
    // beforehand: what the ≥ 10 M words/s target is about.
    let encoded: Vec<(Arch, Word)> = bits.iter().map(|(vi, arch, vals)| (*arch, c.encode_unchecked(*vi, vals))).collect();
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for (arch, w) in black_box(&encoded) {
                if let Ok((vi, vals)) = &c.decode(*arch, *w) {
                    acc ^= *vi as u64 ^ vals.as_slice().first().copied().unwrap_or(0);
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
    // Reading texts back as the validator reads nvdisasm's: `sass::parse_instruction`.
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut n = 0;
            for t in black_box(&printed) {
                n += sass_harness::sass::parse_instruction(t).map_or(0, |i| i.operands.len());
            }
            n
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
    // With the conventions stored beside the pages (`.reuse`, terminator, aliases, order):
    // what `decode` prints.
    g.bench_function("print_word", |b| {
        b.iter(|| {
            let mut n = 0;
            for ((vi, _, vals), &w) in black_box(&text).iter().zip(&words) {
                n += codec::print_word(c.variant(*vi), vals, w).to_string().len();
            }
            n
        })
    });
    // The same through a `Printer` built once (its per-form plans), into one reused buffer.
    let printer = codec::Printer::new(&c);
    let mut buf = String::new();
    for ((vi, _, vals), &w) in text.iter().zip(&words) {
        buf.clear();
        printer.print_into(*vi, vals, &mut buf);
        assert_eq!(buf, codec::print(c.variant(*vi), vals).to_string(), "Printer::print_into, variant {vi}");
        buf.clear();
        printer.print_word_into(*vi, vals, w, &mut buf);
        assert_eq!(buf, codec::print_word(c.variant(*vi), vals, w).to_string(), "Printer::print_word_into, variant {vi}");
    }
    g.bench_function("printer", |b| {
        b.iter(|| {
            let mut n = 0;
            for (vi, _, vals) in black_box(&text) {
                buf.clear();
                printer.print_into(*vi, vals, &mut buf);
                n += buf.len();
            }
            n
        })
    });
    g.bench_function("printer_word", |b| {
        b.iter(|| {
            let mut n = 0;
            for ((vi, _, vals), &w) in black_box(&text).iter().zip(&words) {
                buf.clear();
                printer.print_word_into(*vi, vals, w, &mut buf);
                n += buf.len();
            }
            n
        })
    });
    g.finish();
}

fn main() {
    if std::env::var_os("BENCH_CPU_TIME").is_some() {
        let mut cr = Criterion::default().with_measurement(CpuTime).configure_from_args();
        bench(&mut cr);
        cr.final_summary();
    } else {
        let mut cr = Criterion::<WallTime>::default().configure_from_args();
        bench(&mut cr);
        cr.final_summary();
    }
}

/// The calling thread's CPU time, in nanoseconds.
struct CpuTime;

fn thread_cpu_ns() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

impl Measurement for CpuTime {
    type Intermediate = f64;
    type Value = f64;
    fn start(&self) -> f64 {
        thread_cpu_ns()
    }
    fn end(&self, start: f64) -> f64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self
    }
}

impl ValueFormatter for CpuTime {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if ns < 1e3 {
            (1.0, "ns")
        } else if ns < 1e6 {
            (1e-3, "µs")
        } else {
            (1e-6, "ms")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(&self, typical: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => n as f64,
        };
        let per_s = n * 1e9 / typical;
        let (div, unit) = if per_s < 1e3 {
            (1.0, "elem/s (CPU)")
        } else if per_s < 1e6 {
            (1e3, "Kelem/s (CPU)")
        } else {
            (1e6, "Melem/s (CPU)")
        };
        values.iter_mut().for_each(|v| *v = n * 1e9 / *v / div);
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
