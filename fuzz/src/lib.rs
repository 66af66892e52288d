//! Shared set-up for the fuzz targets: the spec, loaded once per process.
//!
//! By default the whole spec of the repository this crate lives in (found from its
//! manifest directory): every page of `corpus/isa-discovered` and `corpus/isa`, all
//! architectures (see `sass_harness::fuzz::default_spec_dirs`). `SASS_HARNESS_FUZZ_SPEC`
//! (page folders joined by `:`, relative to the repository root) picks another.

use sass_harness::check::Checker;
use sass_harness::codec::Codec;
use sass_harness::fuzz;
use sass_harness::spec;
use sass_harness::Assembler;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The root of the repository this crate lives in.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The codec over the fuzzed spec; the spec is leaked so the codec can be `'static`.
pub fn codec() -> &'static Codec<'static> {
    static CODEC: OnceLock<Codec<'static>> = OnceLock::new();
    CODEC.get_or_init(|| {
        let dirs = fuzz::spec_dirs(&repo_root());
        let spec =
            fuzz::load_spec(&dirs).unwrap_or_else(|e| panic!("fuzz set-up: cannot load the spec {dirs:?} (set {} to pick another): {e}", fuzz::SPEC_ENV));
        Codec::new(Box::leak(Box::new(spec)))
    })
}

/// The assembler over [`codec`] (its variants indexed once).
pub fn assembler() -> &'static Assembler<'static, 'static> {
    static ASM: OnceLock<Assembler<'static, 'static>> = OnceLock::new();
    ASM.get_or_init(|| Assembler::new(codec()))
}

/// The assembler and every form's print plan over [`codec`], built once: what the
/// properties take.
pub fn checker() -> &'static Checker<'static, 'static, 'static> {
    static CHECKER: OnceLock<Checker<'static, 'static, 'static>> = OnceLock::new();
    CHECKER.get_or_init(|| Checker::new(assembler()))
}

/// The codec over the built-in spec (every architecture of `corpus/isa-discovered`), for
/// the targets that read real code (`cubin`).
pub fn builtin_codec() -> &'static Codec<'static> {
    static CODEC: OnceLock<Codec<'static>> = OnceLock::new();
    CODEC.get_or_init(|| {
        let spec = spec::builtin::load_all().unwrap_or_else(|e| panic!("fuzz set-up: built-in spec: {e}"));
        Codec::new(Box::leak(Box::new(spec)))
    })
}

/// AddressSanitizer's defaults for every target (the `ASAN_OPTIONS` environment variable
/// still overrides them): no fake stack frames for use-after-return. That check costs a
/// third of an exec (`__asan_stack_malloc_*` writes a fresh 2–4 KiB frame per call of the
/// printer's and assembler's larger functions; docs/measurements.md) and cannot fire in
/// safe Rust, where no reference outlives its stack frame.
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const std::ffi::c_char {
    c"detect_stack_use_after_return=0".as_ptr()
}
