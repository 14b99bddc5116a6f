//! `Gpu`: one device, one stream, its kernels and its scratch memory.

use crate::buffer::{self, DeviceVec};
use crate::codegen::KernelSpec;
use crate::compile;
use crate::error::{DriverContext, Error, Result};
use crate::jit::{JitReport, KernelCache, LoadedKernel};
use crate::view::{DeviceInput, DeviceOutput};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use reduce_core::{CudaMonoid, DeviceCopy, Lift};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// `REDUCE_SMEM_CARVEOUT` (0..=100), if set: see [`Gpu::prepare_smem`].
fn smem_carveout() -> Option<i32> {
    static CARVEOUT: OnceLock<Option<i32>> = OnceLock::new();
    *CARVEOUT.get_or_init(|| {
        std::env::var("REDUCE_SMEM_CARVEOUT")
            .ok()
            .and_then(|v| v.parse::<i32>().ok())
            .filter(|p| (0..=100).contains(p))
    })
}

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

/// Device memory the reductions reuse between calls: partial values and the completion
/// ticket of single-launch kernels. Guarded by a mutex held for a whole reduction, so
/// host threads sharing a `Gpu` never interleave their use of it.
pub(crate) struct Scratch {
    buffer: Option<DeviceVec<u8>>,
    /// One u32, zero between launches (single-launch kernels reset it).
    pub ticket: DeviceVec<u32>,
    /// SegShuffle's and SegMerge's status word: all ones between launches (their last block
    /// reads and resets it, so that a call queues no memset before the launch).
    pub seg_status: DeviceVec<u64>,
    /// One pinned host word for status readbacks, mapped for the device (allocated on first
    /// use), its device address and its host address.
    pinned: Option<(cudarc::driver::PinnedHostSlice<u64>, u64, usize)>,
}

impl Scratch {
    /// A device region of at least `bytes` bytes, 256-byte aligned, valid until the next call.
    ///
    /// Every reduction asks for its region before its first driver call, so this also makes
    /// the `Gpu`'s context current on the calling thread: the raw copies and memsets that follow
    /// act on the current context (a thread may drive `Gpu`s of several contexts).
    pub fn region(&mut self, gpu: &Gpu, bytes: usize) -> Result<u64> {
        gpu.inner
            .ctx
            .bind_to_thread()
            .during("binding the context")?;
        let enough = self.buffer.as_ref().is_some_and(|b| b.len() >= bytes);
        if !enough {
            self.buffer = None; // free first: the old one may be most of the card
            self.buffer = Some(DeviceVec::alloc(
                &gpu.inner.stream,
                gpu.inner.info.ordinal,
                bytes.next_power_of_two().max(4096),
            )?);
        }
        Ok(self.buffer.as_ref().unwrap().device_ptr(&gpu.inner.stream))
    }

    /// A pinned host u64 (a device-to-host copy into it needs no staging), mapped into the
    /// device's address space: a kernel may write it directly.
    pub fn pinned_word(&mut self, gpu: &Gpu) -> Result<&mut cudarc::driver::PinnedHostSlice<u64>> {
        Ok(&mut self.mapped_word(gpu)?.0)
    }

    /// The device address of `pinned_word` (a kernel's store there reaches the host word).
    pub fn pinned_word_device(&mut self, gpu: &Gpu) -> Result<u64> {
        Ok(self.mapped_word(gpu)?.1)
    }

    /// The host address of `pinned_word`, for reads and writes that do not wait for the
    /// stream (a kernel stores into the word while the host polls it).
    pub fn pinned_word_host(&mut self, gpu: &Gpu) -> Result<*mut u64> {
        Ok(self.mapped_word(gpu)?.2 as *mut u64)
    }

    fn mapped_word(
        &mut self,
        gpu: &Gpu,
    ) -> Result<&mut (cudarc::driver::PinnedHostSlice<u64>, u64, usize)> {
        if self.pinned.is_none() {
            use cudarc::driver::sys;
            // SAFETY: the word is only read after a copy into it, or the kernel writing it, has
            // completed.
            let mut word = unsafe {
                gpu.inner
                    .ctx
                    .alloc_pinned_with_flags::<u64>(1, sys::CU_MEMHOSTALLOC_DEVICEMAP)
            }
            .during("allocating pinned host memory")?;
            let host = word.as_mut_ptr().during("allocating pinned host memory")?;
            let mut device: sys::CUdeviceptr = 0;
            // SAFETY: `host` is a live allocation of cuMemHostAlloc with DEVICEMAP, in the
            // current context (`alloc_pinned_with_flags` bound it).
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0) }
                .result()
                .during("mapping pinned host memory for the device")?;
            self.pinned = Some((word, device, host as usize));
        }
        Ok(self.pinned.as_mut().unwrap())
    }
}

pub(crate) struct GpuInner {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    pub kernels: KernelCache,
    scratch: Mutex<Scratch>,
}

/// One CUDA device with its stream, kernel cache and scratch memory.
///
/// Cheap to clone (shared); `Send + Sync`: host threads may share one `Gpu`. All work goes to
/// one stream, in call order; a reduction holds the scratch lock from its first launch to its
/// result, so concurrent calls from several threads are serialised, never interleaved.
///
/// [`Gpu::new`] opens a device with a stream of its own; [`Gpu::from_stream`] runs on a stream
/// of yours, so that reductions are ordered with your own kernels. Several `Gpu`s on one
/// device, each on its own stream, run concurrently (each has its own scratch memory).
#[derive(Clone)]
pub struct Gpu {
    pub(crate) inner: Arc<GpuInner>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.inner.info)
            .finish()
    }
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
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
        compile::nvrtc_version()?;
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
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice {
            ordinal,
            reason: format!("creating a context failed: {e}"),
        })?;
        // One stream, used in order: cudarc's per-buffer event tracking is not needed. This
        // handle of the context is ours alone (`CudaContext::new` makes a new one each call).
        // SAFETY: called before any allocation through this handle.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().during("creating a stream")?;
        Gpu::open(stream)
    }

    /// Runs on `stream`, a cudarc stream of yours (of any context: `CudaContext::new`, a
    /// non-primary context, `ctx.default_stream()`): every reduction is queued on it, so it is
    /// ordered after your kernels queued before and before those queued after, with no
    /// synchronisation. For a stream of its own in your context, pass `ctx.new_stream()?`.
    ///
    /// Your context's cudarc settings (event tracking) are left as they are. Returns an error
    /// when NVRTC is missing or the driver fails. Queues no synchronisation: the ticket and
    /// status words it allocates are set on the stream.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Gpu> {
        Gpu::open(stream)
    }

    /// The `Gpu` of a context and stream: reads the device, allocates the ticket and status word.
    fn open(stream: Arc<CudaStream>) -> Result<Gpu> {
        let nvrtc_version = compile::nvrtc_version()?;
        let ctx = stream.context().clone();
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
            total_memory: ctx.total_mem().during("reading the memory size")?,
            nvrtc_version,
        };
        let ticket = filled_on::<u32>(&stream, info.ordinal, 1, 0)?;
        let seg_status = filled_on::<u64>(&stream, info.ordinal, 1, 0xff)?;
        let scratch = Scratch {
            buffer: None,
            ticket,
            seg_status,
            pinned: None,
        };
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                kernels: KernelCache::new(info.arch(), nvrtc_version),
                ctx,
                stream,
                info,
                scratch: Mutex::new(scratch),
            }),
        })
    }

    /// The stream every reduction of this `Gpu` is queued on: queue your own kernels on it to
    /// order them with the reductions, or allocate cudarc slices on it.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// The CUDA context this `Gpu` runs in (load your own modules into it).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The device this `Gpu` drives.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceCopy>(&self, host: &[T]) -> Result<DeviceVec<T>> {
        let mut buffer = DeviceVec::alloc(&self.inner.stream, self.inner.info.ordinal, host.len())?;
        self.upload_into(&mut buffer, host)?;
        Ok(buffer)
    }

    /// Copies `host` into existing device memory of the same length (a [`DeviceVec`], a cudarc
    /// slice, ...: any [`DeviceOutput`]).
    pub fn upload_into<T: DeviceCopy>(
        &self,
        memory: &mut impl DeviceOutput<T>,
        host: &[T],
    ) -> Result<()> {
        let dst = self.output(memory)?;
        if dst.len != host.len() {
            return Err(Error::LengthMismatch {
                what: "device memory and host slice",
                left: dst.len,
                right: host.len(),
            });
        }
        // SAFETY: `dst` was checked for this context and holds host.len() values of T.
        unsafe { buffer::copy_from_host(&self.inner.stream, dst.address, host) }?;
        dst.release()
    }

    /// A new buffer holding a copy of `memory` (a cudarc slice, a raw [`crate::DeviceSlice`],
    /// ...), copied on the device: no host round trip. Queued; does not wait.
    pub fn copy<T: DeviceCopy>(&self, memory: &impl DeviceInput<T>) -> Result<DeviceVec<T>> {
        let mut buffer =
            DeviceVec::alloc(&self.inner.stream, self.inner.info.ordinal, memory.len())?;
        self.copy_into(memory, &mut buffer)?;
        Ok(buffer)
    }

    /// Copies `src` into `dst` of the same length on the device (queued; does not wait).
    pub fn copy_into<T: DeviceCopy>(
        &self,
        src: &impl DeviceInput<T>,
        dst: &mut impl DeviceOutput<T>,
    ) -> Result<()> {
        let from = self.input(src)?;
        let to = self.output(dst)?;
        if from.len != to.len {
            return Err(Error::LengthMismatch {
                what: "copy source and destination",
                left: from.len,
                right: to.len,
            });
        }
        // SAFETY: both were checked for this context and hold `len` values of T; a shared and
        // a mutable borrow cannot be the same memory, and a raw output promises no overlap.
        unsafe {
            buffer::copy_on_device::<T>(&self.inner.stream, from.address, to.address, to.len)
        }?;
        to.release()?;
        from.release()
    }

    /// A device buffer of `len` values whose bytes are all zero (a valid value of every
    /// [`DeviceCopy`] type), filled on the device: no host copy.
    pub fn zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceVec<T>> {
        filled_on(&self.inner.stream, self.inner.info.ordinal, len, 0)
    }

    /// A device buffer of `len` values, every one the monoid's identity.
    pub fn identities<M: CudaMonoid>(&self, len: usize) -> Result<DeviceVec<M>> {
        self.upload(&vec![M::identity(); len])
    }

    /// Copies device memory (a [`DeviceVec`], a cudarc slice, ...) back to the host (waits for
    /// all work queued before on this `Gpu`'s stream and on the memory's own).
    pub fn download<T: DeviceCopy>(&self, memory: &impl DeviceInput<T>) -> Result<Vec<T>> {
        let src = self.input(memory)?;
        // SAFETY: `src` was checked for this context and holds `len` values of T.
        let host = unsafe { buffer::copy_to_host(&self.inner.stream, src.address, src.len) }?;
        src.release()?;
        Ok(host)
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .during("synchronizing the stream")
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.inner
            .ctx
            .bind_to_thread()
            .during("binding the context")?;
        self.inner.ctx.mem_get_info().during("reading memory use")
    }

    /// Number of kernels compiled or loaded in this process for this device.
    pub fn loaded_kernels(&self) -> usize {
        self.inner.kernels.len()
    }

    /// That `buffer` was made by this `Gpu` (on its stream). For the dispatchers that take
    /// [`DeviceVec`]s only; the others accept any memory of the context through
    /// [`Gpu::input`] / [`Gpu::output`], which order other streams.
    /// A `DeviceVec` this `Gpu` made (on its stream), else `ForeignBuffer`.
    #[cfg(feature = "nccl")]
    pub(crate) fn check_owned<T>(&self, buffer: &DeviceVec<T>) -> Result<()> {
        if **buffer.bytes.stream() != *self.inner.stream {
            return Err(Error::ForeignBuffer {
                buffer_ordinal: buffer.ordinal,
                gpu_ordinal: self.inner.info.ordinal,
            });
        }
        Ok(())
    }

    pub(crate) fn lock_scratch(&self) -> MutexGuard<'_, Scratch> {
        self.inner.scratch.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn kernel<M: CudaMonoid>(
        &self,
        spec: &KernelSpec,
    ) -> Result<(Arc<LoadedKernel>, JitReport)> {
        self.inner.kernels.get::<M>(&self.inner.ctx, spec)
    }

    /// The kernel of `spec` (a lifted spec, see `KernelSpec::lifted`) for `M` lifting `X`.
    pub(crate) fn kernel_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        spec: &KernelSpec,
    ) -> Result<(Arc<LoadedKernel>, JitReport)> {
        self.inner.kernels.get_lifted::<M, X>(&self.inner.ctx, spec)
    }

    /// Checks that `dynamic_smem` fits and opts the function in to it when over 48 KiB. With
    /// `REDUCE_SMEM_CARVEOUT=P` (a benchmark knob, read once), kernels that use shared memory
    /// also prefer a carveout of P% of the unified L1/shared memory for it.
    pub(crate) fn prepare_smem(
        &self,
        f: &CudaFunction,
        algorithm: &'static str,
        dynamic_smem: usize,
    ) -> Result<()> {
        let max = self.inner.info.max_shared_per_block;
        let static_smem = f
            .shared_size_bytes()
            .during("reading a kernel's shared memory")? as usize;
        if dynamic_smem + static_smem > max {
            return Err(Error::InvalidConfig {
                algorithm,
                reason: format!(
                    "needs {} bytes of shared memory per block ({dynamic_smem} for the data, {static_smem} static); the device allows {max}: use a smaller matrix or block",
                    dynamic_smem + static_smem
                ),
            });
        }
        if dynamic_smem + static_smem > 48 * 1024 {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                dynamic_smem as i32,
            )
            .during("opting a kernel in to more shared memory")?;
        }
        if let (Some(percent), true) = (smem_carveout(), dynamic_smem + static_smem > 0) {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                percent,
            )
            .during("setting a kernel's shared memory carveout")?;
        }
        Ok(())
    }

    /// Resident blocks per SM times SMs: the persistent grid.
    pub(crate) fn full_grid(
        &self,
        f: &CudaFunction,
        block: u32,
        dynamic_smem: usize,
    ) -> Result<u32> {
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(block, dynamic_smem, None)
            .during("querying occupancy")?;
        Ok((per_sm.max(1)) * self.inner.info.multiprocessors)
    }

    /// Launches `f` on the stream with raw u64 arguments (device addresses and sizes).
    pub(crate) fn launch(
        &self,
        f: &CudaFunction,
        grid: u64,
        block: u32,
        dynamic_smem: usize,
        args: &[u64],
    ) -> Result<()> {
        if grid > i32::MAX as u64 {
            return Err(Error::TooLarge {
                what: "grid size in blocks",
                value: grid,
                limit: i32::MAX as u64,
            });
        }
        let cfg = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: dynamic_smem as u32,
        };
        let mut builder = self.inner.stream.launch_builder(f);
        for arg in args {
            builder.arg(arg);
        }
        // SAFETY: every kernel of this crate takes only device addresses and 64-bit sizes, in
        // the order its dispatcher passes them; addresses point into live buffers of the sizes
        // the kernel indexes (checked by the dispatchers).
        unsafe { builder.launch(cfg) }.during("launching a kernel")?;
        Ok(())
    }
}

/// A buffer of `len` values allocated on `stream`, every byte set to `byte` (queued; no host copy).
fn filled_on<T: DeviceCopy>(
    stream: &Arc<CudaStream>,
    ordinal: usize,
    len: usize,
    byte: u8,
) -> Result<DeviceVec<T>> {
    let buffer = DeviceVec::<T>::alloc(stream, ordinal, len)?;
    let bytes = len * std::mem::size_of::<T>();
    if bytes > 0 {
        // SAFETY: the buffer holds at least `bytes` bytes; the allocation bound its context.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                buffer.device_ptr(stream),
                byte,
                bytes,
                stream.cu_stream(),
            )
        }
        .during("filling device memory")?;
    }
    Ok(buffer)
}
