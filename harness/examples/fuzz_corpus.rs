//! Fuzz corpus tools over the fuzzed spec (`sass_harness::fuzz::spec_dirs`, from the
//! repository root):
//!
//!   cargo run --release --example fuzz_corpus -- coverage TARGET DIR...
//!       how many of the spec's variants the inputs in DIR... reach (the words
//!       `fuzz::words` says the target builds); exit 1 below `--min PERCENT` if given;
//!       `--missing` lists the variants none reaches
//!   cargo run --release --example fuzz_corpus -- seeds OUT
//!       one seed per variant: OUT/roundtrip/*.bin (base values), OUT/asm/*.txt (their
//!       text), OUT/decode/*.bin (a page's words, one file per page)
//!   cargo run --release --example fuzz_corpus -- why KEY_ARCH...
//!       for seeds named KEY_ARCH (as `coverage --missing` lists them): the seed's word and
//!       text, the form and word the text assembles to, and what nvdisasm prints for both
//!   cargo run --release --example fuzz_corpus -- bench [EXECS]
//!       execs/s of the roundtrip property on random inputs, and what each step costs

use sass_harness::check::Checker;
use sass_harness::codec::{self, Codec};
use sass_harness::fuzz::{self, Generated, Input, Target};
use sass_harness::gen::{base_values, random_values, Rng};
use sass_harness::word::Word;
use std::collections::HashSet;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo = std::env::current_dir().expect("a current directory");
    let dirs = fuzz::spec_dirs(&repo);
    let spec = fuzz::load_spec(&dirs).unwrap_or_else(|e| die(&format!("cannot load the spec {dirs:?}: {e}")));
    let c = Codec::new(&spec);
    let result = match args.first().map(String::as_str) {
        Some("coverage") if args.len() >= 3 => coverage(&c, &args[1], &args[2..]),
        Some("seeds") if args.len() == 2 => seeds(&c, Path::new(&args[1])),
        Some("why") if args.len() >= 2 => why(&c, &args[1..]),
        Some("bench") => bench(&c, args.get(1).map_or(Ok(200_000), |n| n.parse()).unwrap_or_else(|e| die(&format!("EXECS: {e}")))),
        _ => Err("usage: fuzz_corpus coverage TARGET DIR... [--min PERCENT] [--missing] | seeds OUT | why KEY_ARCH... | bench [EXECS]".into()),
    };
    if let Err(e) = result {
        die(&e);
    }
}

fn die(message: &str) -> ! {
    eprintln!("fuzz_corpus: {message}");
    std::process::exit(1)
}

fn coverage(c: &Codec, target: &str, rest: &[String]) -> Result<(), String> {
    let target: Target = target.parse()?;
    let missing = rest.iter().any(|a| a == "--missing");
    let rest: Vec<String> = rest.iter().filter(|a| *a != "--missing").cloned().collect();
    let (dirs, min) = match rest.iter().position(|a| a == "--min") {
        Some(i) => (&rest[..i], Some(rest.get(i + 1).ok_or("--min needs a percentage")?.parse::<f64>().map_err(|e| format!("--min: {e}"))?)),
        None => (&rest[..], None),
    };
    let mut reached: HashSet<usize> = HashSet::new();
    let mut inputs = 0usize;
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{dir}: {e}"))?;
        for e in entries {
            let path = e.map_err(|e| format!("{dir}: {e}"))?.path();
            if !path.is_file() {
                continue;
            }
            let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            inputs += 1;
            reached.extend(fuzz::words(target, c, &data).iter().flat_map(|g| exercised(c, g)));
        }
    }
    let total = c.variants().len();
    let pct = 100.0 * reached.len() as f64 / total.max(1) as f64;
    println!("{target}: {inputs} inputs reach {} of {total} variants ({pct:.1}%)", reached.len());
    if missing {
        for vi in (0..total).filter(|vi| !reached.contains(vi)) {
            println!("missing {}", seed_name(c, vi));
        }
    }
    match min {
        Some(m) if pct < m => Err(format!("{target}: {pct:.1}% of the variants is below {m}%")),
        _ => Ok(()),
    }
}

/// The variants a generated word exercises: the form the target built it as and the form
/// it decodes as, whose property the target then checks. They differ where a more specific
/// form owns part of a general form's words: `ST [RZ], R0` assembles through `ST_M_R_I_R`
/// (register RZ, offset 0) to a word that decodes as `ST_M_uI_R`, and nvdisasm prints that
/// word as `ST [RZ], R0` too (checked with `why`), so no text reaches `ST_M_uI_R` otherwise.
fn exercised(c: &Codec, g: &Generated) -> impl Iterator<Item = usize> {
    g.variant.into_iter().chain(c.find(g.arch, g.word).ok())
}

/// A file name for variant `vi`: its key and architecture (keys repeat across them).
fn seed_name(c: &Codec, vi: usize) -> String {
    let v = c.variant(vi);
    format!("{}_{}", v.key.replace(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_', "-"), v.arch.nvdisasm_name())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `base`, variant `vi`'s seed word, where it decodes as `vi`; else the first of 64
/// random words of `vi` that does (its base word may be a more specific variant's:
/// `DEPBAR {…}`'s at 0 is `DEPBAR`'s), so that the page's decode seed reaches `vi`.
fn own_word(c: &Codec, vi: usize, base: Word) -> Word {
    let v = c.variant(vi);
    let mut rng = Rng::new(0x5eed ^ vi as u64);
    std::iter::once(base)
        .chain((0..64).map(|_| c.encode_unchecked(vi, &random_values(v, &mut rng))))
        .find(|&w| c.find(v.arch, w).is_ok_and(|vj| vj == vi))
        .unwrap_or(base)
}

fn seeds(c: &Codec, out: &Path) -> Result<(), String> {
    let mut pages: std::collections::BTreeMap<(String, String), Vec<u8>> = std::collections::BTreeMap::new();
    for vi in 0..c.variants().len() {
        let v = c.variant(vi);
        let input = Input::from_values(c, vi, &base_values(v));
        let name = seed_name(c, vi);
        write(&out.join("roundtrip"), &format!("{name}.bin"), &input.to_bytes(c))?;
        write(&out.join("asm"), &format!("{name}.txt"), asm_text(c, &input).as_bytes())?;
        let stem = Path::new(&v.file).file_stem().map_or("page".into(), |s| s.to_string_lossy().into_owned());
        let words = pages.entry((v.arch.nvdisasm_name(), stem)).or_default();
        words.extend_from_slice(&own_word(c, vi, c.encode_unchecked(vi, &input.values)).to_le_bytes());
    }
    for ((arch, stem), words) in &pages {
        write(&out.join("decode"), &format!("{stem}_{arch}.bin"), words)?;
    }
    println!(
        "{} variants: {} roundtrip and asm seeds, {} decode seeds (one per page) in {}",
        c.variants().len(),
        c.variants().len(),
        pages.len(),
        out.display()
    );
    Ok(())
}

/// A text that assembles as the input's variant, where one of those tried does: the page's
/// print of the base values, nvdisasm's (stored conventions), then seeded random values.
fn asm_text(c: &Codec, input: &Input) -> String {
    let v = c.variant(input.variant);
    let reaches = |t: &str| fuzz::words(Target::Asm, c, t.as_bytes()).iter().any(|g| exercised(c, g).any(|vi| vi == input.variant));
    let page = fuzz::asm_seed(c, input);
    if reaches(&page) {
        return page;
    }
    let mut rng = Rng::new(input.variant as u64);
    let mut tries = vec![codec::print_word(v, &input.values, c.encode_unchecked(input.variant, &input.values)).to_string()];
    for _ in 0..32 {
        let values = sass_harness::gen::random_listed_values(v, &mut rng);
        let w = c.encode_unchecked(input.variant, &values);
        tries.push(codec::print(v, &values).to_string());
        tries.push(codec::print_word(v, &values, w).to_string());
    }
    tries.into_iter().find(|t| reaches(t)).unwrap_or(page)
}

fn why(c: &Codec, names: &[String]) -> Result<(), String> {
    let nv = sass_harness::oracle::nvdisasm::Nvdisasm::locate().map_err(|e| e.to_string())?;
    let a = sass_harness::Assembler::new(c);
    for name in names {
        let vi = (0..c.variants().len()).find(|&vi| seed_name(c, vi) == *name).ok_or(format!("no variant's seed is named {name}"))?;
        let v = c.variant(vi);
        let input = Input::from_values(c, vi, &base_values(v));
        let w = c.encode_unchecked(vi, &input.values);
        let text = asm_text(c, &input);
        let (key, others) = match a.assemble(v.arch, &text, w) {
            Ok((vk, w2)) => (c.variant(vk).key.clone(), vec![w2]),
            Err(sass_harness::AsmError::Ambiguous { words, .. }) => ("several forms".to_string(), words),
            Err(e) => (format!("error: {e}"), vec![]),
        };
        let words: Vec<_> = std::iter::once(w).chain(others).collect();
        let nvd = nv.disassemble(&v.arch.nvdisasm_name(), &words).map_err(|e| e.to_string())?;
        println!("{name}\n  seed '{text}'\n  assembles as {key}");
        for (x, n) in words.iter().zip(&nvd) {
            let form = c.find(v.arch, *x).map_or("no form".into(), |vk| c.variant(vk).key.clone());
            println!("  {x} ({form}): nvdisasm {n:?}");
        }
    }
    Ok(())
}

/// Seconds per call of `f` over `inputs`, as the median of five passes, with the range:
/// wall time, or with `BENCH_CPU_TIME` set the thread's CPU time (a loaded machine
/// stretches wall time, not CPU time).
fn time<T>(inputs: &[T], mut f: impl FnMut(&T)) -> (f64, f64, f64) {
    let cpu = std::env::var_os("BENCH_CPU_TIME").is_some();
    let now = || if cpu { thread_cpu_s() } else { START.get_or_init(Instant::now).elapsed().as_secs_f64() };
    let mut per: Vec<f64> = (0..5)
        .map(|_| {
            let t = now();
            inputs.iter().for_each(&mut f);
            (now() - t) / inputs.len() as f64
        })
        .collect();
    per.sort_by(f64::total_cmp);
    (per[2], per[0], per[4])
}

static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// The calling thread's CPU time, in seconds.
fn thread_cpu_s() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn report(what: &str, (median, lo, hi): (f64, f64, f64)) {
    println!("{what:<34} {:>8.2} µs  ({:.2}–{:.2})  {:>9.0}/s", median * 1e6, lo * 1e6, hi * 1e6, 1.0 / median);
}

fn bench(c: &Codec, execs: usize) -> Result<(), String> {
    let mut rng = Rng::new(5);
    let data: Vec<Vec<u8>> = (0..execs).map(|_| (0..64).map(|_| rng.next_u64() as u8).collect()).collect();
    let inputs: Vec<Input> = data.iter().filter_map(|d| Input::parse(c, d)).collect();
    let words: Vec<(usize, sass_harness::Word)> = inputs.iter().map(|i| (i.variant, c.encode_unchecked(i.variant, &i.values))).collect();
    let texts: Vec<(usize, String)> = inputs.iter().map(|i| (i.variant, codec::print(c.variant(i.variant), &i.values).to_string())).collect();
    let to_print: Vec<(&Input, sass_harness::Word)> = inputs.iter().zip(words.iter().map(|x| x.1)).collect();
    let a = sass_harness::Assembler::new(c);
    let k = Checker::new(&a);
    let failures = data.iter().filter(|d| fuzz::roundtrip(&k, d).is_err()).count();
    println!("{} variants, {execs} random 64-byte inputs, {failures} fail the roundtrip property", c.variants().len());
    report("fuzz::roundtrip (whole property)", time(&data, |d| _ = black_box(fuzz::roundtrip(&k, black_box(d)))));
    report("check::roundtrip_in (no Printer)", time(&inputs, |i| _ = black_box(sass_harness::check::roundtrip_in(&a, i.variant, black_box(&i.values)))));
    report("Input::parse", time(&data, |d| _ = black_box(Input::parse(c, black_box(d)))));
    report("encode", time(&inputs, |i| _ = black_box(c.encode(i.variant, black_box(&i.values)))));
    report("decode", time(&words, |&(vi, w)| _ = black_box(c.decode(c.variant(vi).arch, black_box(w)))));
    report("print to a String", time(&inputs, |i| _ = black_box(codec::print(c.variant(i.variant), black_box(&i.values)).to_string())));
    report("print_word to a String", time(&to_print, |&(i, w)| _ = black_box(codec::print_word(c.variant(i.variant), black_box(&i.values), w).to_string())));
    let p = codec::Printer::new(c);
    let mut buf = String::new();
    report(
        "Printer::print_word_into",
        time(&to_print, |&(i, w)| {
            buf.clear();
            p.print_word_into(i.variant, black_box(&i.values), w, &mut buf);
        }),
    );
    report("print::lossless", time(&inputs, |i| _ = black_box(codec::print::lossless(c.variant(i.variant), black_box(&i.values)))));
    report(
        "asm::assemble (unindexed)",
        time(&texts, |(vi, t)| _ = black_box(codec::asm::assemble(c, c.variant(*vi).arch, black_box(t), sass_harness::Word::ZERO))),
    );
    let a = sass_harness::Assembler::new(c);
    report("Assembler::assemble (indexed)", time(&texts, |(vi, t)| _ = black_box(a.assemble(c.variant(*vi).arch, black_box(t), sass_harness::Word::ZERO))));
    Ok(())
}
