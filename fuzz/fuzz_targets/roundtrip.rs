//! Arbitrary variant and field values → `check::roundtrip` (encode → decode → encode and
//! print → assemble → encode) must hold.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sass_harness::check;
use sass_harness::codec::Values;

#[derive(Debug, Arbitrary)]
struct Input {
    /// Taken modulo the number of variants.
    variant: u16,
    /// One per field, in field order, masked to the field's width; missing values are 0.
    values: Vec<u64>,
}

fuzz_target!(|input: Input| {
    let c = sass_harness_fuzz::codec();
    let n = c.variants().len();
    if n == 0 {
        return;
    }
    let vi = input.variant as usize % n;
    let v = c.variant(vi);
    let mut values = Values::zero(v.fields.len());
    for (i, f) in v.fields.iter().enumerate() {
        values.set(i, input.values.get(i).copied().unwrap_or(0) & f.max());
    }
    if let Err(e) = check::roundtrip(c, vi, &values) {
        panic!("{}: values {values:?}: {e}", v.key);
    }
});
