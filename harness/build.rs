//! Embeds the validated whole-ISA spec (`corpus/isa-discovered`: every page and each
//! folder's `conventions.json`) in the binary, so that `decode`, `asm` and `disasm` work
//! from any directory with no files beside them (see `spec::builtin`).
//!
//! Uncompressed: the pages are 3.4 MB of text, and no pure-Rust compressor is among the
//! workspace's dependencies; a whole binary of some 10 MB does not justify a new one.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/isa-discovered");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = vec![];
    if root.is_dir() {
        collect(&root, &mut files);
    }
    files.sort();
    let mut src = String::from("/// Embedded `corpus/isa-discovered`: (path relative to it, bytes).\npub static FILES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/");
        let abs = f.canonicalize().expect("canonical path");
        writeln!(src, "    ({rel:?}, include_bytes!({:?})),", abs.display().to_string()).unwrap();
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("builtin_spec.rs");
    std::fs::write(out, src).expect("write builtin_spec.rs");
}

/// Pages (`*.txt`) and `conventions.json` files under `dir`, recursively.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read corpus/isa-discovered") {
        let p = e.expect("folder entry").path();
        println!("cargo:rerun-if-changed={}", p.display());
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "txt") || p.file_name().is_some_and(|n| n == "conventions.json") {
            out.push(p);
        }
    }
}
