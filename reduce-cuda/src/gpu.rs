//! `Gpu`: one device and stream, its kernels and its scratch memory — opening one, and what it
//! can tell of its device. The reductions and transfers are in `calls/`.

use crate::device::{check_driver, driver_available, Device, DeviceInfo};
use crate::dispatch::{Dispatch, Loader, Scratch};
use crate::error::{Error, Result};
use crate::jit::{compile, KernelCache, Program};
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::{Arc, Mutex};

pub(crate) struct GpuInner {
    pub device: Device,
    kernels: KernelCache,
    scratch: Mutex<Scratch>,
}

/// The handle of the per-thread default stream (`CU_STREAM_PER_THREAD`): a different stream
/// on each host thread.
const PER_THREAD_STREAM: usize = 0x2;

/// One CUDA device with its stream, kernel cache and scratch memory.
///
/// Cheap to clone (shared); `Send + Sync`: host threads may share one `Gpu`. All work goes to
/// one stream, in call order; a reduction holds the scratch lock from its first launch to its
/// result, so concurrent calls from several threads are serialised, never interleaved.
///
/// [`Gpu::new`] opens a device with a stream of its own; [`Gpu::from_stream`] runs on a stream
/// of yours, so that reductions are ordered with your own kernels. Several `Gpu`s on one
/// device, each on its own stream, run concurrently (each has its own scratch memory).
///
/// Its methods, by family: opening and device facts here; transfers and borrowed memory in
/// `calls/memory.rs`; [`Gpu::reduce`] and the plain reductions in `calls/plain.rs`;
/// [`Gpu::reduce_segments`], [`Gpu::reduce_by_owner`] and the segmented reductions in
/// `calls/segmented.rs`.
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.inner.device.info)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` (its primary context, shared with every `CudaContext::new` of the
    /// same ordinal in the process) with a new stream of its own. Returns an error — never
    /// panics — when the driver or NVRTC library is missing, when there is no such device, or
    /// when the driver fails.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        if !driver_available() {
            return Err(Error::DriverMissing);
        }
        check_driver()?;
        compile::nvrtc_version()?;
        Gpu::open(Device::new_stream(ordinal)?)
    }

    /// Runs on `stream`, a cudarc stream of yours (of any context: `CudaContext::new`, a
    /// non-primary context, `ctx.default_stream()`): every reduction is queued on it, so it is
    /// ordered after your kernels queued before and before those queued after, with no
    /// synchronisation. For a stream of its own in your context, pass `ctx.new_stream()?`.
    ///
    /// Your context's cudarc settings (event tracking) are left as they are. Returns an error
    /// when NVRTC is missing or the driver fails, and [`Error::InvalidConfig`] for the
    /// per-thread default stream (`ctx.per_thread_stream()`, `CU_STREAM_PER_THREAD`): that
    /// handle names another stream on each thread, and a `Gpu` is shared between threads, its
    /// scratch and freed memory ordered by its one stream. Queues no synchronisation: the ticket
    /// and status words it allocates are set on the stream.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Gpu> {
        if stream.cu_stream() as usize == PER_THREAD_STREAM {
            return Err(Error::InvalidConfig {
                algorithm: "Gpu::from_stream",
                reason: "the per-thread default stream is another stream on each thread, and a \
                         Gpu is used from any thread: pass a stream of its own \
                         (ctx.new_stream()) or the context's default stream"
                    .into(),
            });
        }
        check_driver()?;
        Gpu::open(stream)
    }

    /// The `Gpu` of a stream: reads the device, allocates the scratch's words.
    fn open(stream: Arc<CudaStream>) -> Result<Gpu> {
        let nvrtc_version = compile::nvrtc_version()?;
        let device = Device::open(stream, nvrtc_version)?;
        let scratch = Scratch::new(&device)?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                kernels: KernelCache::new(device.info.arch(), nvrtc_version),
                device,
                scratch: Mutex::new(scratch),
            }),
        })
    }

    /// The stream every reduction of this `Gpu` is queued on: queue your own kernels on it to
    /// order them with the reductions, or allocate cudarc slices on it.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.device.stream
    }

    /// The CUDA context this `Gpu` runs in (load your own modules into it).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.device.ctx
    }

    /// The device this `Gpu` drives.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.device.info
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.device.synchronize()
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.inner.device.memory_info()
    }

    /// Number of kernels compiled or loaded in this process for this device.
    pub fn loaded_kernels(&self) -> usize {
        self.inner.kernels.len()
    }

    /// The NVRTC compilations this `Gpu`'s kernel cache started (for the tests of the caches).
    pub(crate) fn compilations(&self) -> u64 {
        self.inner.kernels.compilations()
    }

    /// The device layer under this `Gpu`.
    pub(crate) fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The kernels of `program` on this device (loading needs no scratch memory).
    pub(crate) fn loader<'a>(&'a self, program: &'a dyn Program) -> Loader<'a> {
        Loader {
            device: &self.inner.device,
            kernels: &self.inner.kernels,
            program,
        }
    }

    /// A call of `program`'s kernels: holds the scratch memory until it ends.
    pub(crate) fn dispatch<'a>(&'a self, program: &'a dyn Program) -> Result<Dispatch<'a>> {
        let scratch = self.inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        Dispatch::new(self.loader(program), scratch)
    }
}
