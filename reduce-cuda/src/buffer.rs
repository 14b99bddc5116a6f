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

    /// Copies `host` into this buffer (stream-ordered; `host` is pageable, so the copy has
    /// completed when this returns).
    pub(crate) fn copy_from_host(&mut self, stream: &CudaStream, host: &[T]) -> Result<()> {
        debug_assert!(host.len() <= self.len);
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: the destination holds at least size_of_val(host) bytes; T is plain data.
        unsafe {
            cudarc::driver::result::memcpy_htod_async(
                self.device_ptr(stream),
                host,
                stream.cu_stream(),
            )
        }
        .during("copying to the device")?;
        stream.synchronize().during("copying to the device")
    }

    /// Copies the whole buffer to a new host vector.
    pub(crate) fn copy_to_host(&self, stream: &CudaStream) -> Result<Vec<T>> {
        let mut host: Vec<std::mem::MaybeUninit<T>> = Vec::with_capacity(self.len);
        // SAFETY: MaybeUninit needs no initialisation.
        unsafe { host.set_len(self.len) };
        if self.len > 0 {
            // SAFETY: the source holds len * size_of::<T>() bytes written as T values.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    &mut host[..],
                    self.device_ptr(stream),
                    stream.cu_stream(),
                )
            }
            .during("copying to the host")?;
        }
        stream.synchronize().during("copying to the host")?;
        // SAFETY: every element was written by the copy above with the bytes of a valid T
        // (kernels only write T values, uploads only copy T values).
        let mut host = std::mem::ManuallyDrop::new(host);
        // SAFETY: MaybeUninit<T> has the layout of T; pointer, length and capacity come from
        // a live Vec that is not dropped.
        Ok(unsafe {
            Vec::from_raw_parts(host.as_mut_ptr().cast::<T>(), host.len(), host.capacity())
        })
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
