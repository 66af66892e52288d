//! The `decode` property over the whole spec: see `sass_harness::fuzz::decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(f) = sass_harness::fuzz::decode(sass_harness_fuzz::checker(), data) {
        panic!("{f}");
    }
});
