//! Running words on a GPU: PTX templates, cubin patching, the dry run that proves patches
//! on the CPU, and the CUDA executor (cudarc) behind [`crate::oracle::exec::Executor`].

pub mod template;
pub mod dryrun;
pub mod patch;
pub mod slots;
pub mod inputs;
pub mod cuda;
pub mod worker;
pub mod cli;
pub mod barrier;
