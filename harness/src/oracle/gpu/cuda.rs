//! The CUDA executor (cudarc, driver API, loaded at run time). Only a worker process
//! creates one: a sticky error (illegal instruction, illegal address, launch failure)
//! poisons the context, and the process with it.

use super::error::CudaError;
use crate::oracle::exec::{Batch, Executor, Trap};
use cudarc::driver::{CudaContext, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// What `exec` says when [`driver_present`] is false.
pub const NO_DRIVER: &str = "no CUDA driver on this machine (libcuda cannot be loaded)";

/// Is the CUDA driver library loadable? Asks the loader only (no `cuInit`), so a parent
/// can call it before starting workers. `SASS_HARNESS_NO_GPU=1` answers no.
pub fn driver_present() -> bool {
    if std::env::var_os("SASS_HARNESS_NO_GPU").is_some_and(|v| v == "1") {
        return false;
    }
    // SAFETY: only tries to dlopen the driver library; nothing is called through it.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

pub struct CudaExecutor {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    tool: String,
}

fn err(what: &str, e: impl std::fmt::Debug) -> Trap {
    Trap { message: format!("{what}: {e:?}") }
}

impl CudaExecutor {
    /// Device 0. Call only after [`driver_present`].
    pub fn new() -> Result<CudaExecutor, CudaError> {
        let ctx = CudaContext::new(0).map_err(|e| CudaError::NoDevice(format!("{e:?}")))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown device".into());
        let (ma, mi) = ctx.compute_capability().map_err(|e| CudaError::Capability(format!("{e:?}")))?;
        let mut v: std::ffi::c_int = 0;
        // SAFETY: the driver is loaded (the context exists); `v` outlives the call.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
        let tool = format!("{name}, driver {}.{}, sm_{ma}{mi}", v / 1000, (v % 1000) / 10);
        let stream = ctx.default_stream();
        Ok(CudaExecutor { ctx, stream, tool })
    }
    pub fn sm(&self) -> u32 {
        self.ctx.compute_capability().map(|(a, b)| (a * 10 + b) as u32).unwrap_or(0)
    }
}

impl Executor for CudaExecutor {
    fn tool(&self) -> String {
        self.tool.clone()
    }
    fn run(&mut self, b: &Batch, input: &[u8]) -> Result<Vec<u8>, Trap> {
        let image = std::fs::read(&b.cubin).map_err(|e| err("reading the cubin", e))?;
        let module = self.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image)).map_err(|e| err("cuModuleLoadData", e))?;
        let f = module.load_function(&b.function).map_err(|e| err("cuModuleGetFunction", e))?;
        let din = self.stream.clone_htod(input).map_err(|e| err("copy in", e))?;
        let fill: Vec<u8> = b.sentinel.to_le_bytes().iter().copied().cycle().take((b.threads * b.out_stride) as usize).collect();
        let mut dout = self.stream.clone_htod(&fill).map_err(|e| err("copy sentinel", e))?;
        let cfg = LaunchConfig { grid_dim: (b.threads.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut l = self.stream.launch_builder(&f);
        l.arg(&mut dout).arg(&din).arg(&b.k);
        // SAFETY: the kernel's parameters are (u64 out, u64 in, b64 k), as built above;
        // the grid covers `threads` rounded up and `threads` is a multiple of 256.
        unsafe { l.launch(cfg) }.map_err(|e| err("launch", e))?;
        self.stream.synchronize().map_err(|e| err("synchronize (kernel fault?)", e))?;
        self.stream.clone_dtoh(&dout).map_err(|e| err("copy out", e))
    }
}
