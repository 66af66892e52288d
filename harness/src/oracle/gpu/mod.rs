//! Running words on a GPU: PTX templates, cubin patching, the dry run that proves patches
//! on the CPU, and the CUDA executor (cudarc) behind [`crate::oracle::exec::Executor`].

pub mod barrier;
pub mod cli;
pub mod cuda;
pub mod dryrun;
pub mod inputs;
pub mod patch;
pub mod slots;
pub mod template;
pub mod worker;
