//! Raw bytes → 16-byte words → decode for every architecture. Never panics; a word that
//! decodes must print and re-encode to itself. (The text direction for decoded values is
//! the `roundtrip` target's job: any value vector is one of its inputs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use sass_harness::codec;
use sass_harness::word::Word;

fuzz_target!(|data: &[u8]| {
    let c = sass_harness_fuzz::codec();
    for chunk in data.chunks_exact(16) {
        let w = Word::from_le_bytes(chunk.try_into().unwrap());
        for &arch in sass_harness_fuzz::archs() {
            match c.decode(arch, w) {
                Ok((vi, values)) => {
                    let v = c.variant(vi);
                    assert_eq!(v.arch, arch, "{w}: decoded as {} of another arch", v.key);
                    let _text = codec::print(v, &values).to_string();
                    let again = c.encode(vi, &values).unwrap_or_else(|e| panic!("{w} as {}: decoded values do not encode: {e}", v.key));
                    assert_eq!(again, w, "{w} as {}: encode∘decode differs", v.key);
                }
                Err(e) => {
                    let _ = e.to_string();
                }
            }
        }
    }
});
