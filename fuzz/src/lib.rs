//! Shared set-up for the fuzz targets: the corpus spec, loaded once per process.
//!
//! The pages are read from `corpus/isa` in the repository (found from this crate's
//! manifest directory), so a target always fuzzes the spec the harness itself uses.

use sass_harness::codec::Codec;
use sass_harness::spec::{self, Arch, Spec};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `corpus/isa` of the repository this crate lives in.
pub fn pages_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/isa")
}

/// The codec over every corpus page; the spec is leaked so the codec can be `'static`.
pub fn codec() -> &'static Codec<'static> {
    static CODEC: OnceLock<Codec<'static>> = OnceLock::new();
    CODEC.get_or_init(|| {
        let dir = pages_dir();
        let spec: Spec = spec::load(std::slice::from_ref(&dir)).unwrap_or_else(|e| panic!("fuzz set-up: cannot load {}: {e}", dir.display()));
        Codec::new(Box::leak(Box::new(spec)))
    })
}

/// The architectures the spec covers, each once, in first-seen order.
pub fn archs() -> &'static [Arch] {
    static ARCHS: OnceLock<Vec<Arch>> = OnceLock::new();
    ARCHS.get_or_init(|| {
        let mut out: Vec<Arch> = vec![];
        for v in codec().variants() {
            if !out.contains(&v.arch) {
                out.push(v.arch);
            }
        }
        out
    })
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
