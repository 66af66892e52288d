//! Spec → codec: bit-exact encode and decode, the SASS printer and the assembler.

pub mod asm;
pub mod bits;
pub mod conventions;
pub mod print;
pub mod schedule;

pub use asm::{assemble, AsmError};
pub use bits::{stable_id, Codec, DecodeError, Values, MAX_FIELDS};
pub use print::{print, print_with, print_with_plan, print_word, FormPrinter, PrintPlan, Printer};
pub use schedule::Schedule;
