//! `DeviceVec<T>`, a typed buffer in device memory from the context's pool (`pool.rs`), and
//! the stream-ordered copies and fills of raw device ranges that the layers above use.

use super::health::DriverContext;
use super::pool::Pool;
use super::Device;
use crate::error::{Error, Result};
use cudarc::driver::{result, CudaStream};
use reduce_core::DeviceCopy;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in the memory of one [`crate::Gpu`]. Freed on drop, in the order of the
/// `Gpu`'s stream, into the memory pool of its context, which keeps it for the next buffer.
///
/// Items are stored exactly as on the host (`T: DeviceCopy` has the same layout on both
/// sides), so a buffer uploaded from `&[T]` downloads to the same `Vec<T>`.
pub struct DeviceVec<T> {
    address: u64,
    /// Bytes allocated (at least 16).
    bytes: usize,
    len: usize,
    ordinal: usize,
    pool: Arc<Pool>,
    stream: Arc<CudaStream>,
    marker: PhantomData<T>,
}

// SAFETY: the buffer is plain device memory owned by this value; freeing it from another
// thread is stream-ordered on its own stream.
unsafe impl<T: Send> Send for DeviceVec<T> {}
unsafe impl<T: Sync> Sync for DeviceVec<T> {}

impl<T> Drop for DeviceVec<T> {
    fn drop(&mut self) {
        self.pool.free(self.address, self.bytes, &self.stream);
    }
}

impl<T> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVec")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device", &self.ordinal)
            .finish()
    }
}

impl<T: DeviceCopy> DeviceVec<T> {
    /// Allocates room for `len` values on `device`'s stream, contents unspecified.
    pub(crate) fn alloc(device: &Device, len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::TooLarge {
                what: "buffer size in bytes",
                value: len as u64,
                limit: usize::MAX as u64,
            })?;
        // Never a zero-byte allocation; 16 bytes keep vector loads of tails in bounds.
        let bytes = bytes.max(16);
        device.bind()?;
        let address = device.pool.alloc(bytes, &device.stream)?;
        Ok(DeviceVec {
            address,
            bytes,
            len,
            ordinal: device.info.ordinal,
            pool: device.pool.clone(),
            stream: device.stream.clone(),
            marker: PhantomData,
        })
    }

    /// A buffer of `len` values on `device` whose bytes are all `byte` (queued; no host copy).
    pub(crate) fn filled(device: &Device, len: usize, byte: u8) -> Result<Self> {
        let buffer = DeviceVec::alloc(device, len)?;
        // SAFETY: the buffer holds len values of T.
        unsafe { device.fill(buffer.address(), byte, len * std::mem::size_of::<T>()) }?;
        Ok(buffer)
    }

    /// Copies value `index < len` to the host (waits for the work queued on `device`).
    #[cfg(feature = "nccl")]
    pub(crate) fn read_at(&self, device: &Device, index: usize) -> Result<T> {
        debug_assert!(index < self.len);
        let address = self.address() + (index * std::mem::size_of::<T>()) as u64;
        // SAFETY: one T inside the buffer, written as a T.
        Ok(unsafe { device.copy_to_host::<T>(address, 1) }?[0])
    }
}

impl<T> DeviceVec<T> {
    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ordinal of the device that holds the buffer.
    pub fn device(&self) -> usize {
        self.ordinal
    }

    /// The raw device address, for kernel arguments and copies.
    pub(crate) fn address(&self) -> u64 {
        self.address
    }

    /// The stream the buffer was allocated on (its `Gpu`'s), which frees it.
    pub(crate) fn home(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl Device {
    /// Copies `host` to device address `dst` (`host` is pageable, so the copy has completed
    /// when this returns).
    ///
    /// # Safety
    /// `dst` is device memory of this context with room for `host.len()` values of `T`.
    pub unsafe fn copy_from_host<T: DeviceCopy>(&self, dst: u64, host: &[T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: the caller's; T is plain data.
        unsafe { result::memcpy_htod_async(dst, host, self.stream.cu_stream()) }
            .during("copying to the device")?;
        self.synchronize()
    }

    /// Queues a copy of the values at device address `src` into `host`; they are there once
    /// the stream has been synchronized.
    ///
    /// # Safety
    /// `src` is device memory of this context holding `host.len()` values of `T` (written as
    /// `T` values: by kernels of this crate, copies of `T` values, or a caller's promise), and
    /// `host` is not read before the stream is synchronized.
    pub unsafe fn queue_copy_to_host<T: DeviceCopy>(&self, src: u64, host: &mut [T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: the caller's.
        unsafe { result::memcpy_dtoh_async(host, src, self.stream.cu_stream()) }
            .during("copying to the host")
    }

    /// Copies the `len` values of `T` at device address `src` to a new host vector (waits for
    /// the work queued before).
    ///
    /// # Safety
    /// As for [`Device::queue_copy_to_host`].
    pub unsafe fn copy_to_host<T: DeviceCopy>(&self, src: u64, len: usize) -> Result<Vec<T>> {
        let mut host: Vec<std::mem::MaybeUninit<T>> = host_vec(len, "a copy to the host")?;
        // SAFETY: MaybeUninit needs no initialisation.
        unsafe { host.set_len(len) };
        if len > 0 {
            // SAFETY: the source holds len * size_of::<T>() bytes (the caller's promise).
            unsafe { result::memcpy_dtoh_async(&mut host[..], src, self.stream.cu_stream()) }
                .during("copying to the host")?;
        }
        self.synchronize()?;
        let mut host = std::mem::ManuallyDrop::new(host);
        // SAFETY: every element was written by the copy with the bytes of a valid T (the
        // caller's promise); MaybeUninit<T> has the layout of T; pointer, length and capacity
        // come from a live Vec that is not dropped.
        Ok(unsafe {
            Vec::from_raw_parts(host.as_mut_ptr().cast::<T>(), host.len(), host.capacity())
        })
    }

    /// Queues a copy of `bytes` bytes from device address `src` to `dst` (no host copy).
    ///
    /// # Safety
    /// Both are device memory of this context holding `bytes` bytes; they do not overlap.
    pub unsafe fn copy_on_device(&self, src: u64, dst: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream.cu_stream()) }
            .during("copying on the device")
    }

    /// Queues setting `bytes` bytes at device address `dst` to `byte`.
    ///
    /// # Safety
    /// `dst` is device memory of this context holding `bytes` bytes.
    pub unsafe fn fill(&self, dst: u64, byte: u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's.
        unsafe { result::memset_d8_async(dst, byte, bytes, self.stream.cu_stream()) }
            .during("filling device memory")
    }
}

/// An empty host vector with room for `len` values: an error where the host cannot give it (the
/// allocator's failure would abort the process).
pub(crate) fn host_vec<T>(len: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::HostOutOfMemory {
            requested: len.saturating_mul(std::mem::size_of::<T>()),
            what,
        })?;
    Ok(v)
}
