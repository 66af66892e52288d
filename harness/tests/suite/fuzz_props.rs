//! The fuzz targets' properties (`sass_harness::fuzz`) on seeded random inputs, as the
//! targets run them, and the committed seed corpora against the whole spec they index.
//!
//! The properties run over the whole spec the targets fuzz (`corpus/isa-discovered` and
//! `corpus/isa`).

use sass_harness::check::Checker;
use sass_harness::codec::Codec;
use sass_harness::fuzz::{self, Input, Target};
use sass_harness::gen::{random_values, Rng};
use sass_harness::oracle::tools::repo_root;
use sass_harness::Assembler;
use std::collections::HashSet;
use std::sync::OnceLock;

fn whole_codec() -> &'static Codec<'static> {
    static C: OnceLock<Codec<'static>> = OnceLock::new();
    C.get_or_init(|| Codec::new(Box::leak(Box::new(fuzz::load_spec(&fuzz::default_spec_dirs(&repo_root())).expect("the whole spec loads")))))
}

fn whole_assembler() -> &'static Assembler<'static, 'static> {
    static A: OnceLock<Assembler<'static, 'static>> = OnceLock::new();
    A.get_or_init(|| Assembler::new(whole_codec()))
}

/// What the fuzz targets check with (`sass_harness_fuzz::checker`).
fn whole_checker() -> &'static Checker<'static, 'static, 'static> {
    static K: OnceLock<Checker<'static, 'static, 'static>> = OnceLock::new();
    K.get_or_init(|| Checker::new(whole_assembler()))
}

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

#[test]
fn roundtrip_holds_on_random_inputs() {
    let a = whole_checker();
    let mut rng = Rng::new(0x21_01);
    for _ in 0..20_000 {
        let len = rng.below(96) as usize;
        let data = random_bytes(&mut rng, len);
        if let Err(f) = fuzz::roundtrip(a, &data) {
            panic!("input {data:02x?}: {f}");
        }
    }
}

#[test]
fn decode_holds_on_encoded_and_flipped_words() {
    let a = whole_checker();
    let c = a.codec();
    let mut rng = Rng::new(0x21_02);
    for _ in 0..5_000 {
        let vi = rng.below(c.variants().len() as u64) as usize;
        let w = c.encode_unchecked(vi, &random_values(c.variant(vi), &mut rng));
        // The word, the word with one bit flipped, and a random word: one input.
        let mut data = w.to_le_bytes().to_vec();
        data.extend(w.flip(rng.below(128) as u8).to_le_bytes());
        data.extend(random_bytes(&mut rng, 16));
        if let Err(f) = fuzz::decode(a, &data) {
            panic!("words {data:02x?}: {f}");
        }
    }
}

#[test]
fn asm_holds_on_printed_and_mutated_texts() {
    let a = whole_checker();
    let c = a.codec();
    let mut rng = Rng::new(0x21_03);
    let mut assembled = 0;
    for _ in 0..2_000 {
        let vi = rng.below(c.variants().len() as u64) as usize;
        let input = Input::from_values(c, vi, &random_values(c.variant(vi), &mut rng));
        let mut text = fuzz::asm_seed(c, &input).into_bytes();
        if let Err(f) = fuzz::asm(a, &text) {
            panic!("'{}': {f}", String::from_utf8_lossy(&text));
        }
        assembled += usize::from(!fuzz::words(Target::Asm, c, &text).is_empty());
        // One byte changed: most such texts do not assemble; those that do must hold.
        let at = rng.below(text.len().max(1) as u64) as usize;
        if let Some(b) = text.get_mut(at) {
            *b = b" ,.[]+-|!0123456789RUPZT"[rng.below(24) as usize];
        }
        if let Err(f) = fuzz::asm(a, &text) {
            panic!("'{}': {f}", String::from_utf8_lossy(&text));
        }
    }
    assert!(assembled > 1_900, "only {assembled} of 2000 printed texts assemble");
}

/// A word with a bit the page marks ignored set (found by `decode` on the whole spec)
/// decodes, and encodes back to the word without it.
#[test]
fn decode_forgives_ignored_bits() {
    let c = whole_codec();
    let w = sass_harness::Word::parse_hex("00000000080200000000000000000e23").expect("a word");
    let (vi, values) = c.decode(sass_harness::Arch(90), w).expect("decodes");
    let v = c.variant(vi);
    let again = c.encode_unchecked(vi, &values);
    assert_ne!(again, w, "{}: the bit is not kept", v.key);
    assert_eq!((again.0 ^ w.0) & !v.ignored.0, 0, "{}: {again} differs outside the ignored bits", v.key);
    let data = w.to_le_bytes();
    if let Err(f) = fuzz::decode(whole_checker(), &data) {
        panic!("{f}");
    }
}

/// The variants the committed seeds of `target` reach on the whole spec: for each word the
/// target builds, the form it was built as and the form it decodes as (whose property the
/// target checks; `fuzz_corpus coverage` counts alike).
fn seed_coverage(target: Target) -> (usize, usize) {
    let c = whole_codec();
    let dir = repo_root().join("corpus/fuzz").join(target.to_string());
    let mut reached: HashSet<usize> = HashSet::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.expect("a directory entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        reached.extend(fuzz::words(target, c, &data).iter().flat_map(|g| g.variant.into_iter().chain(c.find(g.arch, g.word).ok())));
    }
    (reached.len(), c.variants().len())
}

/// The committed seeds reach every variant of the whole spec (add the seeds of new forms
/// with `cargo run --release --example fuzz_corpus -- seeds OUT` when the pages change:
/// a seed names its variant by stable id, so the others stay as they are).
#[test]
fn committed_seeds_reach_the_whole_spec() {
    for target in [Target::Roundtrip, Target::Decode] {
        let (reached, total) = seed_coverage(target);
        assert_eq!(reached, total, "{target}: the seeds reach {reached} of {total} variants");
    }
    // 10 forms' texts read as several words (`JMP.U P0, 0x0` also as JMP_P_UP_I with UPT
    // left out, which neither nvdisasm nor the printer leaves out; SM90 IADD3/UIADD3 with
    // one carry-out also as the form with both, either at PT): 3143 of 3153 today.
    let (reached, total) = seed_coverage(Target::Asm);
    assert!(reached * 100 >= total * 99, "asm: the seeds reach {reached} of {total} variants");
}

#[test]
fn the_whole_spec_has_every_architecture_once_per_key() {
    let c = whole_codec();
    let archs = fuzz::archs(c);
    assert_eq!(archs.len(), 3, "{archs:?}");
    let keys: HashSet<(sass_harness::Arch, &str)> = c.variants().iter().map(|v| (v.arch, v.key.as_str())).collect();
    assert_eq!(keys.len(), c.variants().len(), "a key is defined twice");
}

/// Regression (`cargo fuzz run roundtrip`, seed `corpus/fuzz/roundtrip/regress_reuse_past_eight_operands`):
/// a form with more than eight operands printed operand 8 with operand 0's reuse flag (a
/// shift past the 8-bit reuse mask; a panic under debug assertions).
#[test]
fn operands_past_the_eight_reuse_slots_print_no_reuse() {
    let a = whole_checker();
    let c = a.codec();
    let data = std::fs::read(repo_root().join("corpus/fuzz/roundtrip/regress_reuse_past_eight_operands")).expect("the seed");
    let input = Input::parse(c, &data).expect("an input");
    let v = c.variant(input.variant);
    // The seed names its form by stable id (before, by an index that pages gaining forms
    // shifted: it read as SYNCS for a while); a form of fewer operands tests nothing here.
    assert!(v.operands.len() > 8, "the seed reads as {} ({} operands): re-point its index at a form with more than eight", v.key, v.operands.len());
    let w = c.encode_unchecked(input.variant, &input.values);
    let text = sass_harness::print_word(v, &input.values, w);
    assert!(text.operands.iter().skip(8).all(|o| !o.reuse), "{}: {text}", v.key);
    fuzz::roundtrip(a, &data).unwrap_or_else(|f| panic!("{f}"));
    // Every form with more than eight operands, with every reuse bit set.
    for (vi, v) in c.variants().iter().enumerate().filter(|(_, v)| v.operands.len() > 8 && v.conventions.is_some()) {
        let w = sass_harness::Word(c.encode_unchecked(vi, &sass_harness::codec::Values::zero(v.fields.len())).0 | 0xf << 122);
        let text = sass_harness::print_word(v, &c.extract(vi, w), w);
        assert!(text.operands.iter().skip(8).all(|o| !o.reuse), "{}: {text}", v.key);
    }
}
