//! Decodes words and prints them as nvdisasm would.
//!
//!     cargo run --example decode -- 90 004fc80000000008000000060204722b
//!
//! The first argument is the architecture (`90`, `100`, …), the rest are words (32 hex
//! digits, bit 127 first). Pages come from `corpus/isa`, or from `SASS_PAGES` (a folder).

use sass_harness::{load_spec, print_word, Arch, Codec, Word};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let arch = Arch(args.next().ok_or("usage: decode ARCH WORD…")?.parse()?);
    let pages = std::env::var_os("SASS_PAGES").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa")));
    let spec = load_spec(&[pages])?;
    let codec = Codec::new(&spec);
    for hex in args {
        let word = Word::parse_hex(&hex).ok_or_else(|| format!("'{hex}' is not up to 32 hex digits"))?;
        match codec.decode(arch, word) {
            Ok((variant, values)) => println!("{word}  {}", print_word(codec.variant(variant), &values, word)),
            Err(e) => println!("{word}  error: {e}"),
        }
    }
    Ok(())
}
