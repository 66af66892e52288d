//! Raw bytes → `parse_page` must not panic. A page that parses must give a codec, and
//! every variant's all-zero field values must encode (to the fixed bits) and print.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sass_harness::codec::{self, Codec, Values};
use sass_harness::spec::{parse_page, Spec};

fuzz_target!(|data: &[u8]| {
    let page = match parse_page("fuzz.txt", data) {
        Ok(p) => p,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for w in &page.warnings {
        let _ = w.to_string();
    }
    let spec = Spec { pages: vec![page] };
    let c = Codec::new(&spec);
    for (vi, v) in c.variants().iter().enumerate() {
        let zero = Values::zero(v.fields.len());
        let w = c.encode(vi, &zero).unwrap_or_else(|e| panic!("{}: zero values do not encode: {e}", v.key));
        assert_eq!(w, v.fixed_value, "{}: zero word is not the fixed bits", v.key);
        let _ = codec::print(v, &zero).to_string();
    }
});
