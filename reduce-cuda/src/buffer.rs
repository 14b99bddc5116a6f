//! `DeviceVec<T>`: a typed buffer in device memory.

use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use reduce_core::DeviceCopy;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in the memory of one [`crate::Gpu`]. Freed (stream-ordered) on drop.
///
/// Items are stored exactly as on the host (`T: DeviceCopy` has the same layout on both
/// sides), so a buffer uploaded from `&[T]` downloads to the same `Vec<T>`.
pub struct DeviceVec<T> {
    pub(crate) bytes: CudaSlice<u8>,
    pub(crate) len: usize,
    pub(crate) ordinal: usize,
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
    /// Allocates room for `len` values, contents unspecified.
    pub(crate) fn alloc(stream: &Arc<CudaStream>, ordinal: usize, len: usize) -> Result<Self> {
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
            ordinal,
            marker: PhantomData,
        })
    }
}

/// Copies `host` to device address `dst` on `stream` (`host` is pageable, so the copy has
/// completed when this returns).
///
/// # Safety
/// `dst` is device memory of `stream`'s context with room for `host.len()` values of `T`.
pub(crate) unsafe fn copy_from_host<T: DeviceCopy>(
    stream: &CudaStream,
    dst: u64,
    host: &[T],
) -> Result<()> {
    if host.is_empty() {
        return Ok(());
    }
    // SAFETY: the caller's; T is plain data.
    unsafe { cudarc::driver::result::memcpy_htod_async(dst, host, stream.cu_stream()) }
        .during("copying to the device")?;
    stream.synchronize().during("copying to the device")
}

/// Copies the `len` values of `T` at device address `src` to a new host vector (waits for the
/// work queued on `stream` before).
///
/// # Safety
/// `src` is device memory of `stream`'s context holding `len` values of `T` (written as `T`
/// values: by kernels of this crate, copies of `T` values, or a caller's promise).
pub(crate) unsafe fn copy_to_host<T: DeviceCopy>(
    stream: &CudaStream,
    src: u64,
    len: usize,
) -> Result<Vec<T>> {
    let mut host: Vec<std::mem::MaybeUninit<T>> = Vec::with_capacity(len);
    // SAFETY: MaybeUninit needs no initialisation.
    unsafe { host.set_len(len) };
    if len > 0 {
        // SAFETY: the source holds len * size_of::<T>() bytes (the caller's promise).
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(&mut host[..], src, stream.cu_stream())
        }
        .during("copying to the host")?;
    }
    stream.synchronize().during("copying to the host")?;
    let mut host = std::mem::ManuallyDrop::new(host);
    // SAFETY: every element was written by the copy with the bytes of a valid T (the caller's
    // promise); MaybeUninit<T> has the layout of T; pointer, length and capacity come from a
    // live Vec that is not dropped.
    Ok(unsafe { Vec::from_raw_parts(host.as_mut_ptr().cast::<T>(), host.len(), host.capacity()) })
}

/// Copies `len` values of `T` from device address `src` to `dst` on `stream` (no host copy).
///
/// # Safety
/// Both are device memory of `stream`'s context holding `len` values of `T`; they do not
/// overlap.
pub(crate) unsafe fn copy_on_device<T>(
    stream: &CudaStream,
    src: u64,
    dst: u64,
    len: usize,
) -> Result<()> {
    let bytes = len * std::mem::size_of::<T>();
    if bytes > 0 {
        // SAFETY: the caller's.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
            .during("copying on the device")?;
    }
    Ok(())
}

#[cfg(feature = "nccl")]
impl<T: DeviceCopy> DeviceVec<T> {
    /// Copies value `index < len` to the host (waits for the work queued on `stream`).
    pub(crate) fn read_at(&self, stream: &CudaStream, index: usize) -> Result<T> {
        debug_assert!(index < self.len);
        let address = self.device_ptr(stream) + (index * std::mem::size_of::<T>()) as u64;
        // SAFETY: one T inside the buffer, written as a T.
        Ok(unsafe { copy_to_host::<T>(stream, address, 1) }?[0])
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

    /// The raw device address, for kernel arguments.
    pub(crate) fn device_ptr(&self, stream: &CudaStream) -> u64 {
        let (ptr, _sync) = self.bytes.device_ptr(stream);
        ptr
    }
}
