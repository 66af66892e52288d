//! Embeds the validated whole-ISA spec (`corpus/isa-discovered`: every page and each
//! folder's `conventions.json`) in the binary, so that `decode`, `asm` and `disasm` work
//! from any directory with no files beside them (see `spec::builtin`).
//!
//! Each file is deflated (miniz_oxide, level 9): 3.9 MB of text becomes 0.4 MB, which
//! took the stripped binary from 8.7 to 5.7 MB (4.9 MB without a built-in spec);
//! inflating one architecture's files at start-up costs a few milliseconds.
//!
//! On Linux it also compiles `shim/nvdisasm_server.c`, the library that makes an nvdisasm
//! process a fork server (`oracle::server`), with the C compiler Rust links with. Without
//! one the library builds all the same and every nvdisasm run starts its own process.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    // Read at run time: `env!` would bake in the directory the build script was compiled
    // in, and a target directory copied to another checkout would embed that one's pages.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest.join("../corpus/isa-discovered");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = vec![];
    if root.is_dir() {
        collect(&root, &mut files);
    } else {
        // A packaged crate has no corpus: it builds with no built-in spec (`--spec` then).
        println!("cargo:warning=no {} to embed: the binary has no built-in spec", root.display());
    }
    files.sort();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let blobs = out_dir.join("builtin_spec");
    std::fs::create_dir_all(&blobs).expect("create OUT_DIR/builtin_spec");
    let mut src = String::from(
        "/// Embedded `corpus/isa-discovered`: (path relative to it, deflated bytes, inflated length).\npub static FILES: &[(&str, &[u8], usize)] = &[\n",
    );
    for (i, f) in files.iter().enumerate() {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/");
        let raw = std::fs::read(f).expect("read a spec file");
        let blob = blobs.join(format!("{i}.deflate"));
        std::fs::write(&blob, miniz_oxide::deflate::compress_to_vec(&raw, 9)).expect("write a deflated spec file");
        writeln!(src, "    ({rel:?}, include_bytes!({:?}), {}),", blob.display().to_string(), raw.len()).unwrap();
    }
    src.push_str("];\n");
    std::fs::write(out_dir.join("builtin_spec.rs"), src).expect("write builtin_spec.rs");
    server_shim(&manifest, &out_dir);
}

/// Compiles the fork server's preload library into `OUT_DIR/nvdisasm_server.so` and sets
/// `cfg(nvdisasm_server)` when that works (Linux, with a C compiler).
fn server_shim(manifest: &Path, out_dir: &Path) {
    println!("cargo:rustc-check-cfg=cfg(nvdisasm_server)");
    println!("cargo:rerun-if-env-changed=CC");
    let src = manifest.join("shim/nvdisasm_server.c");
    println!("cargo:rerun-if-changed={}", src.display());
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = out_dir.join("nvdisasm_server.so");
    let built = std::process::Command::new(&cc).args(["-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o"]).arg(&out).arg(&src).arg("-ldl").output();
    match built {
        Ok(o) if o.status.success() => println!("cargo:rustc-cfg=nvdisasm_server"),
        Ok(o) => {
            println!("cargo:warning={cc} could not build {}: nvdisasm runs start a process each ({})", src.display(), String::from_utf8_lossy(&o.stderr).trim())
        }
        Err(e) => println!("cargo:warning=no C compiler ({cc}: {e}): nvdisasm runs start a process each"),
    }
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
