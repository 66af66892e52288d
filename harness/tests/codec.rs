use sass_harness::check::roundtrip;
use sass_harness::codec::{self, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec;
use sass_harness::word::Word;

fn corpus() -> spec::Spec {
    spec::load(&[sass_harness::oracle::tools::repo_root().join("corpus/isa")]).expect("corpus parses")
}

#[test]
fn all_18_variants_parse() {
    let s = corpus();
    let keys: Vec<&str> = s.variants().map(|v| v.key.as_str()).collect();
    assert_eq!(keys.len(), 18, "{keys:?}");
}

#[test]
fn zero_word_prints_the_distilled_line() {
    let s = corpus();
    let c = Codec::new(&s);
    for (vi, v) in c.variants().iter().enumerate() {
        let zero = Values::zero(v.fields.len());
        let w = c.encode(vi, &zero).unwrap();
        assert_eq!(w, v.fixed_value);
        assert_eq!(codec::print(v, &zero).to_string(), v.distilled, "{}", v.key);
    }
}

#[test]
fn random_roundtrips_fixed_seed() {
    let s = corpus();
    let c = Codec::new(&s);
    let mut rng = Rng::new(0x5a55);
    for vi in 0..c.variants().len() {
        for _ in 0..3000 {
            let vals = random_values(c.variant(vi), &mut rng);
            if let Err(e) = roundtrip(&c, vi, &vals) {
                panic!("{}: {e}", c.variant(vi).key);
            }
        }
    }
}

/// Regression (`cargo fuzz run roundtrip`, seed `corpus/fuzz/roundtrip/regress_negative_qnan.bin`):
/// a negative NaN immediate printed `-QNAN` but read back as `+QNAN`, losing the sign bit.
#[test]
fn negative_qnan_keeps_its_sign() {
    let s = corpus();
    let c = Codec::new(&s);
    let arch = spec::Arch(90);
    let text = "@!P0 DFMA R53, RZ, -QNAN, R0 ;";
    let (vi, w) = codec::assemble(&c, arch, text, Word::ZERO).expect("assembles");
    assert_eq!(c.variant(vi).key, "DFMA_R_R_F_R");
    assert_eq!(w.hex(), "0000000000000000fff80000ff35882b", "sign bit 63 set");
    let (_, plus) = codec::assemble(&c, arch, "@!P0 DFMA R53, RZ, +QNAN, R0 ;", Word::ZERO).expect("assembles");
    assert_eq!(plus.hex(), "00000000000000007ff80000ff35882b", "sign bit 63 clear");
    // And back: the word prints the same text, which assembles to the same word.
    let (dvi, vals) = c.decode(arch, w).expect("decodes");
    assert_eq!(codec::print(c.variant(dvi), &vals).to_string(), text);
    assert!(roundtrip(&c, dvi, &vals).is_ok());
}
