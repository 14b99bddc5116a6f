//! The public calls that move memory: uploads, downloads, device copies, filled buffers, the
//! memory pool every buffer comes from, and borrowing another library's device memory by its
//! raw address.

use crate::device::{
    host_vec, DeviceInput, DeviceOutput, DeviceSlice, DeviceSliceMut, DeviceVec, PoolUsage,
};
use crate::error::{Error, Result};
use crate::Gpu;
use reduce_core::{CudaMonoid, DeviceCopy};

impl Gpu {
    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceCopy>(&self, host: &[T]) -> Result<DeviceVec<T>> {
        let mut buffer = DeviceVec::alloc(self.device(), host.len())?;
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
        let device = self.device();
        let dst = device.output(memory)?;
        if dst.len != host.len() {
            return Err(Error::LengthMismatch {
                what: "device memory and host slice",
                left: dst.len,
                right: host.len(),
            });
        }
        // SAFETY: `dst` was checked for this context and holds host.len() values of T.
        unsafe { device.copy_from_host(dst.address, host) }?;
        dst.release()
    }

    /// A new buffer holding a copy of `memory` (a cudarc slice, a raw [`DeviceSlice`], ...),
    /// copied on the device: no host round trip. Queued; does not wait.
    pub fn copy<T: DeviceCopy>(&self, memory: &impl DeviceInput<T>) -> Result<DeviceVec<T>> {
        let mut buffer = DeviceVec::alloc(self.device(), memory.len())?;
        self.copy_into(memory, &mut buffer)?;
        Ok(buffer)
    }

    /// Copies `src` into `dst` of the same length on the device (queued; does not wait).
    pub fn copy_into<T: DeviceCopy>(
        &self,
        src: &impl DeviceInput<T>,
        dst: &mut impl DeviceOutput<T>,
    ) -> Result<()> {
        let device = self.device();
        let from = device.input(src)?;
        let to = device.output(dst)?;
        if from.len != to.len {
            return Err(Error::LengthMismatch {
                what: "copy source and destination",
                left: from.len,
                right: to.len,
            });
        }
        let bytes = to.len * std::mem::size_of::<T>();
        // SAFETY: both were checked for this context and hold `len` values of T; a shared and
        // a mutable borrow cannot be the same memory, and a raw output promises no overlap.
        unsafe { device.copy_on_device(from.address, to.address, bytes) }?;
        to.release()?;
        from.release()
    }

    /// A device buffer of `len` values whose bytes are all zero (a valid value of every
    /// [`DeviceCopy`] type), filled on the device: no host copy.
    pub fn zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceVec<T>> {
        DeviceVec::filled(self.device(), len, 0)
    }

    /// A device buffer of `len` values, every one the monoid's identity.
    pub fn identities<M: CudaMonoid>(&self, len: usize) -> Result<DeviceVec<M>> {
        // The device buffer first: a length past the address space is an error, not the host
        // vector's capacity overflow.
        let mut buffer = DeviceVec::alloc(self.device(), len)?;
        let mut identities = host_vec(len, "the identities")?;
        identities.resize(len, M::identity());
        self.upload_into(&mut buffer, &identities)?;
        Ok(buffer)
    }

    /// What the memory pool holds. Every buffer the library allocates (the allocating calls'
    /// results, uploads, copies, scratch memory) comes from one stream-ordered pool per CUDA
    /// context, shared by every `Gpu` of the context; a dropped buffer goes back to the pool,
    /// which keeps it for the next one (reused in stream order: never while a kernel queued
    /// before the drop may still read it) instead of handing it back to the driver.
    pub fn pool_usage(&self) -> Result<PoolUsage> {
        self.device().pool.usage()
    }

    /// Hands the memory the pool keeps for reuse back to the device; buffers in use stay. The
    /// last few freed buffers wait on the host for reuse on their stream: this hands them to the
    /// driver too, and waits for the work queued on their streams before their memory can go.
    pub fn trim_pool(&self) -> Result<()> {
        self.device().pool.trim(0)
    }

    /// Caps the memory the pool holds at `bytes` (`None`: no cap, the default), and hands back
    /// what it keeps past the cap. An allocation that would put more than the cap in use fails
    /// with [`Error::OutOfMemory`], which reports the cap and the pool's use. The cap is the
    /// context's: it applies to every `Gpu` of it.
    pub fn set_pool_cap(&self, bytes: Option<usize>) -> Result<()> {
        self.device().pool.set_cap(bytes)
    }

    /// Copies device memory (a [`DeviceVec`], a cudarc slice, ...) back to the host (waits for
    /// all work queued before on this `Gpu`'s stream and on the memory's own).
    pub fn download<T: DeviceCopy>(&self, memory: &impl DeviceInput<T>) -> Result<Vec<T>> {
        let device = self.device();
        let src = device.input(memory)?;
        // SAFETY: `src` was checked for this context and holds `len` values of T.
        let host = unsafe { device.copy_to_host(src.address, src.len) }?;
        src.release()?;
        Ok(host)
    }
}

impl<T: DeviceCopy> DeviceSlice<T> {
    /// Borrows the `len` values of `T` at device address `address` for reductions on `gpu`.
    ///
    /// Checked here, each an error value: `len * size_of::<T>()` bytes from `address` fit in
    /// the address space ([`Error::TooLarge`]); `address` is a multiple of `align_of::<T>()`
    /// ([`Error::Misaligned`]); and, for `len > 0`, what the driver knows of the address
    /// (`cuPointerGetAttributes`): it is device or managed memory, not host memory, freed
    /// memory or an address CUDA never gave out ([`Error::InvalidPointer`]); it is on `gpu`'s
    /// device and, unless it is a stream-ordered or managed allocation (which belong to no
    /// context), in `gpu`'s context ([`Error::ForeignBuffer`]); and the range ends inside the
    /// allocation that holds `address` ([`Error::InvalidPointer`]; a caching allocator's block,
    /// such as PyTorch's, counts as one allocation, so a range past a tensor but inside its
    /// block is not caught).
    ///
    /// # Safety
    ///
    /// - The range holds `len` initialised values of `T` (for a derived monoid: values made
    ///   from `T` values; any bits for the primitives and the built-in monoids over them).
    /// - The memory stays allocated, and nothing writes to it, until the reductions that read
    ///   it have run on the device: [`Gpu::reduce`] returns after that; after
    ///   [`Gpu::reduce_into`], synchronize `gpu` ([`Gpu::synchronize`]) or queue the free or
    ///   the next write on `gpu`'s stream.
    /// - Writes to it that may still be in flight were queued on `gpu`'s stream
    ///   ([`Gpu::stream`]; a `Gpu` made with [`Gpu::from_stream`] on the producer's stream
    ///   gives exactly that), or have finished (e.g. `torch.cuda.synchronize()`).
    pub unsafe fn from_raw(address: u64, len: usize, gpu: &Gpu) -> Result<Self> {
        DeviceSlice::checked(address, len, gpu.device())
    }
}

impl<T: DeviceCopy> DeviceSliceMut<T> {
    /// Borrows the `len` values of `T` at device address `address` for reading and writing by
    /// reductions on `gpu`. Checks as [`DeviceSlice::from_raw`].
    ///
    /// # Safety
    ///
    /// As for [`DeviceSlice::from_raw`], and: nothing else reads or writes the memory until the
    /// reductions that write it have run on the device, and it does not overlap an input of
    /// the same call.
    pub unsafe fn from_raw(address: u64, len: usize, gpu: &Gpu) -> Result<Self> {
        DeviceSliceMut::checked(address, len, gpu.device())
    }
}
