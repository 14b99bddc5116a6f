//! Pinned host memory mapped into the device's address space: a kernel's store there reaches
//! the host without a copy queued behind the kernel. A reduction to the host writes its value
//! there ([`Pinned`]), and the validated segmented reductions report their layout status in a
//! word the host polls while the launch still runs ([`PinnedWord`]).

use super::Device;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{sys, PinnedHostSlice};
use reduce_core::DeviceCopy;

/// The word while a launch's status is still to come (no kernel stores this value: statuses
/// are an index below 2^62 with a class, 0, 1 or all ones).
const PENDING: u64 = u64::MAX - 1;

/// Pinned, device-mapped host bytes.
pub(crate) struct Pinned {
    bytes: PinnedHostSlice<u8>,
    device_address: u64,
    /// The bytes' host address (kept as an integer: the memory is moved between threads with
    /// its owner, the dispatch scratch, behind a mutex).
    host: usize,
}

impl Pinned {
    /// `len` bytes in `device`'s context, 16-byte aligned.
    pub fn new(device: &Device, len: usize) -> Result<Pinned> {
        // SAFETY: the bytes are only read after a copy into them, or the kernel writing them,
        // has completed.
        let mut bytes = unsafe {
            device
                .ctx
                .alloc_pinned_with_flags::<u8>(len, sys::CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .during("allocating pinned host memory")?;
        let host = bytes.as_mut_ptr().during("allocating pinned host memory")?;
        let mut device_address: sys::CUdeviceptr = 0;
        // SAFETY: `host` is a live allocation of cuMemHostAlloc with DEVICEMAP, in the current
        // context (`alloc_pinned_with_flags` bound it).
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_address, host.cast(), 0) }
            .result()
            .during("mapping pinned host memory for the device")?;
        Ok(Pinned {
            bytes,
            device_address,
            host: host as usize,
        })
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The address a kernel writes at.
    pub fn device_address(&self) -> u64 {
        self.device_address
    }

    /// The value of `T` at the start, as the device or a copy left it.
    ///
    /// # Safety
    /// A value of `T` was written there by work that has completed (the stream is synchronized
    /// or the caller saw the write land), and `size_of::<T>() <= len`.
    pub unsafe fn read<T: DeviceCopy>(&self) -> T {
        // SAFETY: the caller's; `DeviceCopy` makes every byte pattern the device writes valid.
        let value = unsafe { std::ptr::read_volatile(self.host as *const T) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        value
    }
}

/// A pinned, device-mapped host `u64` a launch stores its status into.
pub(crate) struct PinnedWord(Pinned);

impl PinnedWord {
    /// Allocates the word in `device`'s context.
    pub fn new(device: &Device) -> Result<PinnedWord> {
        Ok(PinnedWord(Pinned::new(device, 8)?))
    }

    /// Marks the word pending, before a launch whose last block stores its status there
    /// (`poll` then waits for the store). Returns the word's device address, the launch's
    /// argument.
    pub fn arm(&mut self) -> u64 {
        // SAFETY: the live pinned word; no kernel is left to store into it (every launch given
        // its address was waited for by `poll`, every copy into it by `copy_from`).
        unsafe { std::ptr::write_volatile(self.0.host as *mut u64, PENDING) };
        self.0.device_address
    }

    /// Waits until the last block of the launch `arm` prepared has stored its status, and
    /// returns it: the host sees the store as soon as it lands, without waiting for the launch
    /// to retire (the stream keeps later work behind it). The stream is queried now and then,
    /// so that a failed launch is an error, not a hang.
    pub fn poll(&mut self, device: &Device) -> Result<u64> {
        // SAFETY: the word was armed; only the armed launch stores into it.
        let read = || unsafe { self.0.read::<u64>() };
        let mut spins = 0u32;
        loop {
            let value = read();
            if value != PENDING {
                return Ok(value);
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && device.is_idle("waiting for the validation status")? {
                let value = read();
                return if value == PENDING {
                    Err(Error::Internal(
                        "a validated launch finished without storing its status".into(),
                    ))
                } else {
                    Ok(value)
                };
            }
            std::hint::spin_loop();
        }
    }

    /// Copies the 8-byte word at device address `status` into this word and returns it
    /// (waits for the work queued before).
    pub fn copy_from(&mut self, device: &Device, status: u64) -> Result<u64> {
        let host = self
            .0
            .bytes
            .as_mut_slice()
            .during("reading the validation status")?;
        // SAFETY: `status` holds one u64 written by a kernel or a fill; the word is pinned and
        // read only after the synchronisation below.
        unsafe { device.queue_copy_to_host(status, host) }?;
        device.synchronize()?;
        // SAFETY: the copy above has completed.
        Ok(unsafe { self.0.read::<u64>() })
    }
}
