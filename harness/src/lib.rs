//! sass-harness: ISA-viewer pages → spec → codec → oracles → findings → reports.

pub mod oracle;
pub mod sass;
pub mod word;
