//! UTF-8 text → assemble for every architecture. Never panics; text that assembles must
//! decode to the variant it assembled as, and print∘decode of the word must assemble back
//! to the same word (the same text, where a table gives two values one name).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sass_harness::codec::{self, asm};
use sass_harness::word::Word;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let c = sass_harness_fuzz::codec();
    for &arch in sass_harness_fuzz::archs() {
        let (vi, w) = match asm::assemble(c, arch, text, Word::ZERO) {
            Ok(x) => x,
            Err(e) => {
                let _ = e.to_string();
                continue;
            }
        };
        let (vj, values) = c.decode(arch, w).unwrap_or_else(|e| panic!("'{text}' assembles to {w}, which does not decode: {e}"));
        assert_eq!(vj, vi, "'{text}' assembles as {} but {w} decodes as {}", c.variant(vi).key, c.variant(vj).key);
        let v = c.variant(vj);
        let printed = codec::print(v, &values).to_string();
        let (vk, w2) = asm::assemble(c, arch, &printed, w).unwrap_or_else(|e| panic!("'{text}' → {w} prints as '{printed}', which does not assemble: {e}"));
        if codec::print::injective(v) {
            assert_eq!((vk, w2), (vj, w), "'{text}' → {w} prints as '{printed}', which assembles to {w2}");
        } else {
            let (vl, v2) = c.decode(arch, w2).unwrap_or_else(|e| panic!("'{printed}' assembles to {w2}, which does not decode: {e}"));
            let again = codec::print(c.variant(vl), &v2).to_string();
            assert_eq!(again, printed, "'{text}' → {w} prints as '{printed}', which assembles to {w2} and reprints differently");
        }
    }
});
