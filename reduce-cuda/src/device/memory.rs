//! `DeviceVec<T>`, a typed buffer in device memory, and the stream-ordered copies and fills
//! of raw device ranges that the layers above use.

use super::Device;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{result, CudaSlice, CudaStream, DevicePtr};
use reduce_core::DeviceCopy;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in the memory of one [`crate::Gpu`]. Freed (stream-ordered) on drop.
///
/// Items are stored exactly as on the host (`T: DeviceCopy` has the same layout on both
/// sides), so a buffer uploaded from `&[T]` downloads to the same `Vec<T>`.
pub struct DeviceVec<T> {
    pub(super) bytes: CudaSlice<u8>,
    len: usize,
    ordinal: usize,
    marker: PhantomData<T>,
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
        let stream = &device.stream;
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::TooLarge {
                what: "buffer size in bytes",
                value: len as u64,
                limit: usize::MAX as u64,
            })?;
        // Never a zero-byte allocation; 16 bytes keep vector loads of tails in bounds.
        let alloc_bytes = bytes.max(16);
        // SAFETY: u8 has no invalid values; the contents are only read after being written.
        let slice = unsafe { stream.alloc::<u8>(alloc_bytes) }.map_err(|e| {
            if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                let (free, total) = stream.context().mem_get_info().unwrap_or((0, 0));
                Error::OutOfMemory {
                    requested: alloc_bytes,
                    free,
                    total,
                }
            } else {
                Error::Driver {
                    during: "allocating device memory",
                    source: e,
                }
            }
        })?;
        Ok(DeviceVec {
            bytes: slice,
            len,
            ordinal: device.info.ordinal,
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
        let (ptr, _record) = self.bytes.device_ptr(self.bytes.stream());
        ptr
    }

    /// The stream the buffer was allocated on (its `Gpu`'s).
    pub(crate) fn home(&self) -> &Arc<CudaStream> {
        self.bytes.stream()
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
        let mut host: Vec<std::mem::MaybeUninit<T>> = Vec::with_capacity(len);
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
