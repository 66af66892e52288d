//! The CUDA executor's names in a build without the `gpu` feature (no cudarc): there is
//! no driver to find and no executor to make, so `exec` says why and runs nothing, and
//! everything else (dry runs, fake devices in tests) works as with the feature.

use super::error::CudaError;
use crate::oracle::exec::{Batch, Executor, Trap};

/// Why nothing can run: what `exec` and its worker say.
pub const NO_DRIVER: &str = "this sass-harness was built without the `gpu` feature (no cudarc): rebuild with default features to run words on a GPU";

/// Always false: no driver can be loaded without cudarc.
pub fn driver_present() -> bool {
    false
}

/// No value exists: [`CudaExecutor::new`] always fails.
pub enum CudaExecutor {}

impl CudaExecutor {
    /// Always [`CudaError::NoDriver`] (its message is [`NO_DRIVER`]).
    pub fn new() -> Result<CudaExecutor, CudaError> {
        Err(CudaError::NoDriver)
    }
    /// The device's compute capability (never called: no executor exists).
    pub fn sm(&self) -> u32 {
        match *self {}
    }
}

impl Executor for CudaExecutor {
    fn tool(&self) -> String {
        match *self {}
    }
    fn run(&mut self, _: &Batch, _: &[u8]) -> Result<Vec<u8>, Trap> {
        match *self {}
    }
}
