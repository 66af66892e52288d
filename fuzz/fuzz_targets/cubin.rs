//! Bytes → fatbin and cubin readers → offline disassembly with the built-in spec. Never
//! panics: any input is listings or errors (a fatbin's or host file's cubins each in turn).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sass_harness::fatbin::{contents, Contents, Entry};

fuzz_target!(|data: &[u8]| {
    let c = sass_harness_fuzz::builtin_codec();
    let found = contents(data);
    let cubins: Vec<&[u8]> = match &found {
        Ok(Contents::Fat(entries)) => entries.iter().filter_map(Entry::cubin).collect(),
        _ => vec![data],
    };
    // The last byte's low bit picks `--hex` (its first pass finds the widest line), the next
    // `--controls`; the first is 0x7f in every ELF.
    let last = data.last().copied().unwrap_or(0);
    let style = sass_harness::disasm::Style { hex: last & 1 == 1, controls: last & 2 == 2 };
    for cubin in cubins {
        match sass_harness::disasm::disassemble_bytes(c, "fuzz.cubin", cubin, None, style, &mut std::io::sink()) {
            Ok(stats) => assert!(stats.words >= stats.undecoded),
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
