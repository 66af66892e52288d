//! sass-harness: ISA-viewer pages → spec → codec → oracles → compare → findings → reports.
//!
//! The everyday path needs a few names from the crate root: load pages into a [`Spec`]
//! ([`load_spec`]), build a [`Codec`] over it, then [`Codec::decode`] a [`Word`], print it
//! in nvdisasm's syntax ([`print_word`], with the conventions stored beside the pages;
//! [`print()`] from the page alone), [`assemble`] text back, or [`Codec::encode`] field
//! values.
//!
//! ```
//! use sass_harness::{assemble, load_spec, print_word, Arch, Codec, Word};
//!
//! // The seed pages in the repository: DFMA on SM90, three SM100 pages.
//! let pages = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/isa"));
//! let spec = load_spec(&[pages])?;
//! let codec = Codec::new(&spec);
//!
//! // A DFMA as ptxas writes it (32 hex digits, bit 127 first; control bits included).
//! let word = Word::parse_hex("004fc80000000008000000060204722b").ok_or("not a word")?;
//! let (variant, values) = codec.decode(Arch(90), word)?;
//! assert_eq!(codec.variant(variant).key, "DFMA_R_R_R_R");
//!
//! let text = print_word(codec.variant(variant), &values, word).to_string();
//! assert_eq!(text, "DFMA R4, R2, R6, R8 ;"); // what `nvdisasm -b SM90` prints
//!
//! // Text carries no control bits (stall, yield, barriers): take them from the word.
//! let (again, back) = assemble(&codec, Arch(90), &text, word)?;
//! assert_eq!((again, back), (variant, word));
//! assert_eq!(codec.encode(variant, &values)?, word);
//!
//! // Or from their notation (`disasm --controls`; the reuse flags, scoreboards waited on,
//! // read and write scoreboards, yield, stall).
//! let schedule = sass_harness::Schedule::of(word);
//! assert_eq!(schedule.to_string(), "[----:B--2---:R-:W-:Y:S04]");
//! let controls = "[B--2---:R-:W-:Y:S04]".parse::<sass_harness::Schedule>()?.apply(Word::ZERO);
//! assert_eq!(assemble(&codec, Arch(90), &text, controls)?, (variant, word));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! To print or assemble many words, build the per-form tables once: a
//! [`codec::Printer`] (`Printer::new(&codec)`), whose [`codec::Printer::print_word_into`]
//! appends the text of one word to a reused `String` without building an
//! [`sass::Instruction`] (the fast path: what the `discovered/printer_word` bench
//! measures), and a [`codec::asm::Assembler`] (`Assembler::new(&codec)`), which indexes
//! the variants by mnemonic and reads a plain text without allocating: its
//! [`codec::asm::Assembler::assemble`] is the fast path to assemble many texts (what the
//! `discovered/assemble` bench measures). Its errors are typed: [`AsmError`], whose
//! `NoVariant` lists each variant's [`codec::asm::FillError`], and
//! [`sass::ParseError`] for text that is no instruction.
//!
//! The modules follow the pipeline: [`spec`] (pages), [`codec`] (bits, printer,
//! assembler), [`validate`] (against nvdisasm, through [`oracle`]), [`report`]; see
//! `docs/` in the repository for each topic.

// No `unsafe` outside `oracle` (process groups, signals, CUDA), `output` (a file lock),
// `budget` (getrlimit) and `commands` (getrusage): what the fuzz targets run is safe Rust,
// which is why they fuzz without a sanitizer by default (docs/testing.md). `spec`'s tests
// make a FIFO with libc. The crate denies it, so a new module is safe unless it says
// otherwise here; the safe modules forbid it, so nothing inside them can allow it again.
#![deny(unsafe_code)]
// Issue 22's house rule, checked by CI's `clippy -D warnings`: no function over 80 lines
// (the threshold is in clippy.toml).
#![warn(clippy::too_many_lines)]
#[allow(unsafe_code)]
pub mod budget;
#[forbid(unsafe_code)]
pub mod check;
// Every public item documented, and kept so.
#[warn(missing_docs)]
#[forbid(unsafe_code)]
pub mod codec;
#[allow(unsafe_code)]
pub mod commands;
#[forbid(unsafe_code)]
pub mod compare;
#[forbid(unsafe_code)]
pub mod crosscheck;
#[forbid(unsafe_code)]
pub mod cubin;
#[forbid(unsafe_code)]
pub mod disasm;
#[forbid(unsafe_code)]
pub mod discover;
#[forbid(unsafe_code)]
pub mod fatbin;
#[forbid(unsafe_code)]
pub mod fatpatch;
#[forbid(unsafe_code)]
pub mod fix;
#[forbid(unsafe_code)]
pub mod fuzz;
#[forbid(unsafe_code)]
pub mod gen;
#[forbid(unsafe_code)]
pub mod listing;
#[allow(unsafe_code)]
pub mod oracle;
#[allow(unsafe_code)]
pub mod output;
#[forbid(unsafe_code)]
pub mod realcode;
#[forbid(unsafe_code)]
pub mod reloc;
#[forbid(unsafe_code)]
pub mod report;
// Every public item documented, and kept so.
#[warn(missing_docs)]
#[forbid(unsafe_code)]
pub mod sass;
#[forbid(unsafe_code)]
pub mod semantics;
// Every public item documented, and kept so.
#[warn(missing_docs)]
#[cfg_attr(not(test), forbid(unsafe_code))]
#[cfg_attr(test, allow(unsafe_code))]
pub mod spec;
#[forbid(unsafe_code)]
pub mod validate;
// Every public item documented, and kept so.
#[warn(missing_docs)]
#[forbid(unsafe_code)]
pub mod word;

// The everyday path, re-exported so a codec user needs no module paths.
pub use codec::asm::Assembler;
pub use codec::bits::EncodeError;
pub use codec::{assemble, print, print_word, AsmError, Codec, DecodeError, Schedule, Values};
pub use sass::{parse_instruction, Instruction};
pub use spec::{load as load_spec, parse_page, Arch, PageError, Spec, Variant};
pub use word::Word;
