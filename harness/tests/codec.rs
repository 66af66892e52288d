use sass_harness::check::roundtrip;
use sass_harness::codec::{self, Codec, Values};
use sass_harness::gen::{random_values, Rng};
use sass_harness::spec;

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
