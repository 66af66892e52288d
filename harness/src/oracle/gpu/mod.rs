//! Running words on a GPU: PTX templates, cubin patching, the dry run that proves patches
//! on the CPU, and the CUDA executor (cudarc, with the `gpu` feature) behind
//! [`crate::oracle::exec::Executor`].

pub mod barrier;
pub mod cli;
#[cfg(feature = "gpu")]
pub mod cuda;
/// Built without the `gpu` feature: the same names, and no device.
#[cfg(not(feature = "gpu"))]
#[path = "no_cuda.rs"]
pub mod cuda;
pub mod dryrun;
pub mod error;
pub mod inputs;
pub mod patch;
pub mod relations;
pub mod slots;
pub mod template;
pub mod worker;

pub use error::{CudaError, FitError, GpuError, PinError, SlotError, WorkerError};
