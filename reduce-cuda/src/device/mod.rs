//! The device layer: the only code that calls cudarc's driver API — contexts, streams, device
//! memory, modules, launches, pinned host memory. Everything above it works with [`Device`],
//! [`DeviceVec`], [`Access`], [`Module`] and typed kernel arguments ([`KernelArgs`]).
//!
//! - `mod.rs`: [`Device`] (a context and the stream work is queued on) and [`DeviceInfo`];
//! - `pool.rs`: the stream-ordered memory pool of each context, which every buffer comes from;
//! - `memory.rs`: [`DeviceVec`] and stream-ordered copies and fills;
//! - `monoid_view.rs`: a [`DeviceVec`] of a primitive read as a built-in monoid;
//! - `view.rs`: the memory reductions read and write in place ([`DeviceInput`],
//!   [`DeviceOutput`], raw [`DeviceSlice`]s) and how a call enters it ([`Access`]);
//! - `module.rs`: loaded CUBINs, their entry points and their fault records;
//! - `launch.rs`: typed kernel arguments and launches;
//! - `pinned.rs`: mapped host memory: results to the host and the status words kernels report
//!   into;
//! - `peer.rs`: peer access between the devices of one process (multi-GPU);
//! - `health.rs`: driver errors, and the contexts lost to a fault in a kernel: which launch
//!   lost one, and starting again; `launches.rs`: the launches not known to have completed.

mod health;
mod launch;
mod launches;
mod memory;
mod module;
mod monoid_view;
#[cfg(feature = "nccl")]
mod peer;
mod pinned;
mod pool;
mod view;

pub(crate) use health::DriverContext;
use health::Health;
pub(crate) use launch::{kernel_signature, Entry, Kernel, KernelArgs};
use launches::LaunchLog;
pub(crate) use memory::host_vec;
pub use memory::DeviceVec;
pub(crate) use module::{Fault, Module};
pub use monoid_view::{MonoidOf, MonoidView, MonoidViewMut};
pub(crate) use pinned::{Pinned, PinnedWord};
pub use pool::PoolUsage;
pub(crate) use view::Access;
pub use view::{DeviceInput, DeviceOutput, DeviceSlice, DeviceSliceMut, SegLayout};

use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUdevice_attribute};
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::Arc;

/// Facts about the device the runtime plans with.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The device ordinal.
    pub ordinal: usize,
    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// L2 cache size in bytes.
    pub l2_bytes: usize,
    /// The most dynamic shared memory one block may opt in to, in bytes.
    pub max_shared_per_block: usize,
    /// Shared memory per SM, in bytes.
    pub shared_per_sm: usize,
    /// The shared memory the system takes per resident block, in bytes.
    pub reserved_shared_per_block: usize,
    /// The most resident threads per SM.
    pub threads_per_sm: u32,
    /// The most resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Total device memory in bytes.
    pub total_memory: usize,
    /// The NVRTC version kernels are compiled with.
    pub nvrtc_version: (i32, i32),
}

impl DeviceInfo {
    /// The NVRTC target, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// Driver entry points the library (or cudarc for it) calls that old drivers lack; the newest,
/// `cuStreamWriteValue32_v2`, came with CUDA 11.7. cudarc panics on a missing one at its first
/// call, so [`check_driver`] looks them up first.
const NEWER_DRIVER_SYMBOLS: [&str; 8] = [
    "cuStreamWriteValue32_v2",
    "cuMemPoolCreate",
    "cuMemAllocFromPoolAsync",
    "cuMemFreeAsync",
    "cuMemPoolTrimTo",
    "cuMemPoolSetAccess",
    "cuDevicePrimaryCtxReset_v2",
    "cuPointerGetAttributes",
];

/// [`Error::LibraryTooOld`] where the driver (present: [`driver_available`]) lacks an entry
/// point of [`NEWER_DRIVER_SYMBOLS`].
pub(crate) fn check_driver() -> Result<()> {
    // SAFETY: the library is present; symbols are only looked up, never called.
    let lib = unsafe { sys::culib() };
    let missing: Vec<&str> = (NEWER_DRIVER_SYMBOLS.iter().copied())
        .filter(|name| unsafe { lib.get::<unsafe extern "C" fn()>(name.as_bytes()) }.is_err())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut version = 0;
    // SAFETY: cuDriverGetVersion is in every driver; the pointer is valid for the call.
    let version = match unsafe { sys::cuDriverGetVersion(&mut version) }.result() {
        Ok(()) => format!("CUDA {}.{}", version / 1000, version % 1000 / 10),
        Err(_) => "of unknown version".into(),
    };
    Err(Error::LibraryTooOld {
        library: "CUDA driver",
        version,
        missing: missing.join(", "),
    })
}

/// One CUDA context and the stream all of a `Gpu`'s work is queued on, in call order, with the
/// context's memory pool.
pub(crate) struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    pub pool: Arc<pool::Pool>,
    health: Arc<Health>,
    log: Arc<LaunchLog>,
}

impl Device {
    /// A new stream on device `ordinal`'s primary context, or why there is none (the driver
    /// library must have been found: [`driver_available`]). A primary context lost to a fault
    /// that nothing holds any more is reset first.
    pub fn new_stream(ordinal: usize) -> Result<Arc<CudaStream>> {
        let count = CudaContext::device_count().map_err(|e| Error::NoDevice {
            ordinal,
            reason: format!("the driver could not count devices: {e}"),
        })?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice {
                ordinal,
                reason: format!("the driver reports {count} device(s)"),
            });
        }
        let _opening = health::opening();
        health::reset_if_lost(ordinal)?;
        let ctx = CudaContext::new(ordinal).map_err(|e| match health::is_sticky(e.0) {
            true => health::lost_on(ordinal, e),
            false => Error::NoDevice {
                ordinal,
                reason: format!("creating a context failed: {e}"),
            },
        })?;
        // One stream, used in order: cudarc's per-buffer event tracking is not needed. This
        // handle of the context is ours alone (`CudaContext::new` makes a new one each call).
        // SAFETY: called before any allocation through this handle.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(|e| match health::is_sticky(e.0) {
            true => health::lost_on(ordinal, e),
            false => Error::Driver {
                during: "creating a stream",
                source: e,
            },
        })?;
        health::recovered(ordinal);
        Ok(stream)
    }

    /// The device of `stream`'s context, with the facts the runtime plans with.
    pub fn open(stream: Arc<CudaStream>, nvrtc_version: (i32, i32)) -> Result<Device> {
        let ctx = stream.context().clone();
        let health = Health::of(&ctx);
        health.check()?;
        ctx.bind_to_thread().during("binding the context")?;
        let attribute = |a| ctx.attribute(a).during("reading device attributes");
        let info = DeviceInfo {
            ordinal: ctx.ordinal(),
            name: ctx.name().during("reading the device name")?,
            compute_capability: ctx
                .compute_capability()
                .during("reading the compute capability")?,
            multiprocessors: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )? as u32,
            l2_bytes: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            max_shared_per_block: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )? as usize,
            shared_per_sm: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )? as usize,
            reserved_shared_per_block: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            )? as usize,
            threads_per_sm: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )? as u32,
            blocks_per_sm: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            )? as u32,
            total_memory: ctx.total_mem().during("reading the memory size")?,
            nvrtc_version,
        };
        let pool = pool::Pool::of(&ctx, &health)?;
        let log = LaunchLog::new(&ctx)?;
        health.watch(Arc::downgrade(&log) as _);
        Ok(Device {
            ctx,
            stream,
            info,
            pool,
            health,
            log,
        })
    }

    /// Makes the context current on the calling thread: the raw copies, fills and launches that
    /// follow act on the current context (a thread may drive devices of several contexts).
    /// A lost context is an error here, at once.
    pub fn bind(&self) -> Result<()> {
        self.health.check()?;
        self.ctx.bind_to_thread().during("binding the context")
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.health.check()?;
        let mark = self.log.mark();
        self.stream
            .synchronize()
            .during("synchronizing the stream")?;
        self.log.synchronized(mark);
        Ok(())
    }

    /// Whether all queued work has finished, without waiting; a failed launch is an error.
    pub fn is_idle(&self, during: &'static str) -> Result<bool> {
        // SAFETY: the live stream of this device.
        match unsafe { sys::cuStreamQuery(self.stream.cu_stream()) } {
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            done => done.result().during(during).map(|()| true),
        }
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        self.ctx.mem_get_info().during("reading memory use")
    }

    /// The raw stream handle, for the NCCL layer (`cluster::comm`), which queues on it.
    #[cfg(feature = "nccl")]
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }
}
