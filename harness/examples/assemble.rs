//! Assembles SASS text, one instruction a line from stdin, and prints each word.
//!
//!     echo 'DFMA R4, R2, R6, R8 ;' | cargo run --example assemble -- 90
//!
//! The argument is the architecture (`90`, `100`, …). Pages come from `corpus/isa`, or
//! from `SASS_PAGES` (a folder). Control bits (stall, yield, barriers) are not in the text:
//! every word gets zero ones here.

use sass_harness::{load_spec, Arch, Assembler, Codec, Word};
use std::io::BufRead;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arch = Arch(std::env::args().nth(1).ok_or("usage: assemble ARCH < listing")?.parse()?);
    let pages = std::env::var_os("SASS_PAGES").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa")));
    let spec = load_spec(&[pages])?;
    let codec = Codec::new(&spec);
    // Indexes the variants once: worth it from the second text on.
    let assembler = Assembler::new(&codec);
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match assembler.assemble(arch, text, Word::ZERO) {
            Ok((variant, word)) => println!("{word}  {}  {text}", codec.variant(variant).key),
            Err(e) => println!("error: {text}: {e}"),
        }
    }
    Ok(())
}
