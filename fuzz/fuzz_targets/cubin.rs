//! Bytes → cubin reader → offline disassembly with the built-in spec. Never panics: any
//! input is a listing or a `DisasmError`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let c = sass_harness_fuzz::builtin_codec();
    match sass_harness::disasm::disassemble_bytes(c, "fuzz.cubin", data, None, &mut std::io::sink()) {
        Ok(stats) => assert!(stats.words >= stats.undecoded),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
