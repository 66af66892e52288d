//! sass-harness: ISA-viewer pages → spec → codec → oracles → compare → findings → reports.

pub mod check;
pub mod codec;
pub mod compare;
pub mod cubin;
pub mod disasm;
pub mod discover;
pub mod fix;
pub mod gen;
pub mod listing;
pub mod oracle;
pub mod output;
pub mod realcode;
pub mod report;
pub mod sass;
pub mod semantics;
pub mod spec;
pub mod validate;
pub mod word;
