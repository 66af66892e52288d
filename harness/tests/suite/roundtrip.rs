//! The roundtrip property (`check::roundtrip_in`) on the whole built-in spec: every form of
//! `corpus/isa-discovered` (SM90, SM100, SM120), random field values, encode → decode →
//! encode and nvdisasm's text (stored conventions) → assemble. What the fuzz targets and
//! `sass-harness check` assert, here with a fixed seed.

use sass_harness::check::{roundtrip_in, RoundtripFailure};
use sass_harness::gen::{random_values, Rng};
use sass_harness::{spec, Assembler, Codec};

#[test]
fn every_discovered_form_roundtrips_on_random_words() {
    let s = spec::builtin::load_all().expect("built-in spec");
    let c = Codec::new(&s);
    let a = Assembler::new(&c);
    let mut rng = Rng::new(0x0f0f);
    let mut failures: Vec<String> = vec![];
    for vi in 0..c.variants().len() {
        for _ in 0..40 {
            let vals = random_values(c.variant(vi), &mut rng);
            if let Err(e) = roundtrip_in(&a, vi, &vals) {
                failures.push(format!("{} {}: {e}", c.variant(vi).arch, c.variant(vi).key));
            }
        }
    }
    assert!(c.variants().len() > 3000, "{} forms", c.variants().len());
    assert!(failures.is_empty(), "{} failures, first: {:#?}", failures.len(), &failures[..failures.len().min(10)]);
}

/// The property can fail: a word read back as other values is reported.
#[test]
fn a_wrong_value_is_a_failure() {
    let s = spec::builtin::load_all().expect("built-in spec");
    let c = Codec::new(&s);
    let a = Assembler::new(&c);
    // DFMA's first source register field set past its width cannot encode.
    let vi = c.variants().iter().position(|v| v.key == "DFMA_R_R_R_R" && v.arch == spec::Arch(90)).expect("SM90 DFMA");
    let mut vals = random_values(c.variant(vi), &mut Rng::new(1));
    let f = c.variant(vi).fields.iter().position(|f| f.name == "operand 1").expect("operand 1");
    vals.set(f, c.variant(vi).fields[f].max() + 1);
    assert!(matches!(roundtrip_in(&a, vi, &vals), Err(RoundtripFailure::Encode(_))));
}
