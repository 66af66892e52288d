//! The assembler's results over many texts, for comparing two builds, and its bench loop
//! alone, for valgrind.
//!
//!     cargo run --release --example asm_equiv -- dump PER_VARIANT > results.txt
//!     cargo run --release --example asm_equiv -- dump-sets PER_VARIANT > results.txt
//!     valgrind --tool=cachegrind target/release/examples/asm_equiv passes N
//!     cargo run --release --example asm_equiv -- tail N
//!     valgrind --tool=callgrind target/release/examples/asm_equiv listing N
//!
//! `dump`: for every variant of `corpus/isa-discovered`, `PER_VARIANT` random words, each
//! printed plainly and with its stored conventions, and each print mutated once (a byte
//! dropped, doubled or changed): one line per text, the text and a hash of
//! `Assembler::assemble`'s result (its `Debug`, messages included). Two builds whose dumps
//! are equal gave byte-identical results on those texts. `dump-sets`: the same, with a
//! text that reads as several words hashed as the set of its (variant, word) pairs, not
//! their order, and a text no variant reads as that error without its detail: equal
//! dumps then say two builds read the same words, whichever order they find them in.
//!
//! `passes N [REPEAT [DISTINCT]]`: the bench's `discovered/assemble` texts (4 096 from its
//! seed), assembled `N` times; the difference of two runs' counts over their difference in
//! passes is the cost per pass without the set-up. With `REPEAT`, each text is assembled
//! that many times in a row: its forms and code are then in cache after the first, so the
//! time against a plain run's (the same number of assemblies) tells what cold memory
//! costs. With `DISTINCT`, the draw's first `DISTINCT` texts stand for all 4 096, cycled:
//! the same work on fewer forms, whose memory stays in cache when they are few (the time
//! against `DISTINCT` is how the assembler's time grows with the memory a draw touches).
//!
//! `listing N`: the lines of `corpus/bench/sm90-listing.txt` (the bench's
//! `realcode/assemble`) assembled in order, `N` times.
//!
//! `tail N`: the same texts, `N` passes, each assembly timed: the time a text of each
//! outcome (one word, several, none) takes, and the slowest texts.
//!
//! `cold N DISTINCT MIB`: the draw's first `DISTINCT` texts cycled, `N` passes, with `MIB`
//! MiB of memory read (a load a line) before each assembly, which is timed alone: every
//! cache is cold for each text, whichever `DISTINCT`, so the time against `DISTINCT` is
//! what the draw's diversity costs besides memory (the branch predictor's history).

use sass_harness::codec::{self, asm, Codec};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec::{self, Arch};
use sass_harness::word::Word;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(n)) = (args.get(1), args.get(2).and_then(|a| a.parse::<usize>().ok())) else { usage() };
    // `passes`' REPEAT and DISTINCT, `cold`'s DISTINCT and MIB.
    let more: Vec<usize> = args[3.min(args.len())..]
        .iter()
        .map(|a| match a.parse::<usize>() {
            Ok(r) if (mode == "passes" || mode == "cold") && r > 0 => r,
            _ => usage(),
        })
        .collect();
    if more.len() > 2 || mode == "cold" && more.len() != 2 {
        usage();
    }
    let (repeat, distinct) = (more.first().copied().unwrap_or(1), more.get(1).copied().unwrap_or(4096));
    let s = match spec::load(&[sass_harness::oracle::tools::repo_root().join("corpus/isa-discovered")]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("asm_equiv: {e}");
            std::process::exit(1)
        }
    };
    let c = Codec::new(&s);
    let a = asm::Assembler::new(&c);
    match mode.as_str() {
        "dump" => dump(&c, &a, n, false),
        "dump-sets" => dump(&c, &a, n, true),
        "passes" => passes(&c, &a, n, repeat, distinct),
        "tail" => tail(&c, &a, n),
        "listing" => listing(&a, n),
        // `cold N DISTINCT MIB`.
        "cold" => cold(&c, &a, n, repeat, distinct),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: asm_equiv dump|dump-sets PER_VARIANT | passes N [REPEAT [DISTINCT]] | tail N | listing N | cold N DISTINCT MIB");
    std::process::exit(2)
}

/// FNV-1a, 64 bits: stable across builds (std's hashers are not promised to be).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// `text` with one byte dropped, doubled or changed (ASCII kept, so it stays a `str`).
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut b = text.as_bytes().to_vec();
    if b.is_empty() {
        return String::new();
    }
    let at = rng.below(b.len() as u64) as usize;
    const BYTES: &[u8] = b"0123456789abcdefxRUPZT.,[]|-!~+ ";
    match rng.below(3) {
        0 => drop(b.remove(at)),
        1 => b.insert(at, b[at]),
        _ => b[at] = BYTES[rng.below(BYTES.len() as u64) as usize],
    }
    String::from_utf8(b).unwrap_or_default()
}

/// Stops quietly when stdout goes away (`| head`), as a filter should.
fn dump(c: &Codec, a: &asm::Assembler, per_variant: usize, sets: bool) {
    if let Err(e) = try_dump(c, a, per_variant, sets) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("asm_equiv: {e}");
            std::process::exit(1);
        }
    }
}

fn try_dump(c: &Codec, a: &asm::Assembler, per_variant: usize, sets: bool) -> std::io::Result<()> {
    let mut rng = Rng::new(0x5eed_a55e);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut n = 0usize;
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        for _ in 0..per_variant {
            let vals = random_values(v, &mut rng);
            let w = c.encode_unchecked(vi, &vals);
            let plain = codec::print(v, &vals).to_string();
            let stored = codec::print_word(v, &vals, w).to_string();
            let (m1, m2) = (mutate(&plain, &mut rng), mutate(&stored, &mut rng));
            for t in [plain, stored, m1, m2] {
                let got = match a.assemble(v.arch, &t, w) {
                    Err(asm::AsmError::Ambiguous { keys, words, .. }) if sets => {
                        let mut pairs: Vec<(String, u128)> = keys.into_iter().zip(words.iter().map(|w| w.0)).collect();
                        pairs.sort();
                        format!("ambiguous {pairs:?}")
                    }
                    Err(asm::AsmError::NoVariant { arch, mnemonic, .. }) if sets => format!("no variant {arch} {mnemonic}"),
                    r => format!("{r:?}"),
                };
                writeln!(out, "{t}\t{:016x}", fnv(got.as_bytes()))?;
                n += 1;
            }
        }
    }
    out.flush()?;
    eprintln!("{n} texts");
    Ok(())
}

/// The bench's draw: its inputs are drawn after its 4 096 bit-direction inputs, from the
/// same seed. Each text with its architecture and word.
fn bench_texts(c: &Codec) -> Vec<(Arch, Word, String)> {
    let mut rng = Rng::new(0x00be_7c4a);
    let nv = c.variants().len() as u64;
    let mut draw = || {
        let vi = rng.below(nv) as usize;
        (vi, random_values(c.variant(vi), &mut rng))
    };
    for _ in 0..4096 {
        let _ = draw();
    }
    (0..4096)
        .map(|_| {
            let (vi, vals) = draw();
            (c.variant(vi).arch, c.encode_unchecked(vi, &vals), codec::print(c.variant(vi), &vals).to_string())
        })
        .collect()
}

/// The bench's draw, `n` passes, each text `repeat` times in a row; its first `distinct`
/// texts cycled to its length.
fn passes(c: &Codec, a: &asm::Assembler, n: usize, repeat: usize, distinct: usize) {
    let drawn = bench_texts(c);
    let texts: Vec<&(Arch, Word, String)> = (0..drawn.len()).map(|i| &drawn[i % distinct.min(drawn.len())]).collect();
    let mut acc = 0u128;
    for _ in 0..n {
        for (arch, w, t) in std::hint::black_box(&texts) {
            for _ in 0..repeat {
                if let Ok((_, w2)) = a.assemble(*arch, std::hint::black_box(t), *w) {
                    acc ^= w2.0;
                }
            }
        }
    }
    eprintln!("{} texts ({} distinct) x {n} x {repeat}, {acc:x}", texts.len(), distinct.min(drawn.len()));
}

/// The bench's real listing, in order, `n` times.
fn listing(a: &asm::Assembler, n: usize) {
    let path = sass_harness::oracle::tools::repo_root().join("corpus/bench/sm90-listing.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("asm_equiv: {}: {e}", path.display());
        std::process::exit(1)
    });
    let mut acc = 0u128;
    for _ in 0..n {
        for t in std::hint::black_box(text.lines()) {
            if let Ok((_, w)) = a.assemble(Arch(90), t, Word(0)) {
                acc ^= w.0;
            }
        }
    }
    eprintln!("{} lines x {n}, {acc:x}", text.lines().count());
}

/// The bench's draw, `n` passes, each text timed: the time per text of each outcome
/// (one word, several, none) and the slowest texts (the clock's own cost included).
fn tail(c: &Codec, a: &asm::Assembler, n: usize) {
    let texts = bench_texts(c);
    let mut ns = vec![0u128; texts.len()];
    let mut outcome = vec![""; texts.len()];
    for _ in 0..n {
        for (i, (arch, w, t)) in texts.iter().enumerate() {
            let start = std::time::Instant::now();
            let r = a.assemble(*arch, std::hint::black_box(t), *w);
            ns[i] += start.elapsed().as_nanos();
            outcome[i] = match r {
                Ok(_) => "one word",
                Err(asm::AsmError::Ambiguous { .. }) => "several words",
                Err(_) => "no word",
            };
        }
    }
    let total: u128 = ns.iter().sum();
    let us = |t: u128, count: usize| t as f64 / 1000.0 / (n * count.max(1)) as f64;
    println!("{} texts x {n}: {:.3} µs a text", texts.len(), us(total, texts.len()));
    for kind in ["one word", "several words", "no word"] {
        let (count, t) = (0..texts.len()).filter(|&i| outcome[i] == kind).fold((0, 0), |(k, t), i| (k + 1, t + ns[i]));
        println!("{kind}: {count} texts, {:.1} % of the time, {:.2} µs each", 100.0 * t as f64 / total as f64, us(t, count));
    }
    let mut slowest: Vec<usize> = (0..texts.len()).collect();
    slowest.sort_by_key(|&i| std::cmp::Reverse(ns[i]));
    let top = texts.len() / 20;
    let t: u128 = slowest[..top].iter().map(|&i| ns[i]).sum();
    println!("the slowest {top} texts: {:.1} % of the time", 100.0 * t as f64 / total as f64);
    for &i in &slowest[..20] {
        println!("{:8.2} µs  {}  {}", us(ns[i], 1), outcome[i], texts[i].2);
    }
}

/// `cold`: the draw's first `distinct` texts cycled, `n` passes (the first not counted),
/// each assembly timed after `mib` MiB are read a line at a time; the mean and median
/// time a text.
fn cold(c: &Codec, a: &asm::Assembler, n: usize, distinct: usize, mib: usize) {
    let texts = bench_texts(c);
    let sweep = vec![1u8; mib << 20];
    let (mut acc, mut times) = (0u64, vec![]);
    for pass in 0..n {
        for i in 0..texts.len() {
            let (arch, w, t) = &texts[i % distinct.min(texts.len())];
            acc = sweep.iter().step_by(64).fold(acc, |x, &b| x.wrapping_add(u64::from(std::hint::black_box(b))));
            let start = std::time::Instant::now();
            let r = a.assemble(*arch, std::hint::black_box(t), *w);
            let ns = start.elapsed().as_nanos();
            if pass > 0 {
                times.push(ns);
            }
            acc ^= r.map_or(0, |(_, w)| w.0 as u64);
        }
    }
    times.sort_unstable();
    let mean = times.iter().sum::<u128>() as f64 / times.len().max(1) as f64 / 1000.0;
    let median = times.get(times.len() / 2).map_or(0.0, |&t| t as f64 / 1000.0);
    println!("{} assemblies of {distinct} distinct texts, {mib} MiB read before each: mean {mean:.2} µs, median {median:.2} µs ({acc:x})", times.len());
}
