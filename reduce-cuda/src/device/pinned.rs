//! One pinned host word, mapped into the device's address space: a kernel's store there reaches
//! the host without a copy queued behind the kernel, and the host may poll it while the launch
//! still runs (the validated segmented reductions report their layout status this way).

use super::Device;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{sys, PinnedHostSlice};

/// The word while a launch's status is still to come (no kernel stores this value: statuses
/// are an index below 2^62 with a class, 0, 1 or all ones).
const PENDING: u64 = u64::MAX - 1;

/// A pinned, device-mapped host `u64`.
pub(crate) struct PinnedWord {
    word: PinnedHostSlice<u64>,
    device_address: u64,
    /// The word's host address (kept as an integer: the word is moved between threads with
    /// its owner, the dispatch scratch, behind a mutex).
    host: usize,
}

impl PinnedWord {
    /// Allocates the word in `device`'s context.
    pub fn new(device: &Device) -> Result<PinnedWord> {
        // SAFETY: the word is only read after a copy into it, or the kernel writing it, has
        // completed.
        let mut word = unsafe {
            device
                .ctx
                .alloc_pinned_with_flags::<u64>(1, sys::CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .during("allocating pinned host memory")?;
        let host = word.as_mut_ptr().during("allocating pinned host memory")?;
        let mut device_address: sys::CUdeviceptr = 0;
        // SAFETY: `host` is a live allocation of cuMemHostAlloc with DEVICEMAP, in the current
        // context (`alloc_pinned_with_flags` bound it).
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_address, host.cast(), 0) }
            .result()
            .during("mapping pinned host memory for the device")?;
        Ok(PinnedWord {
            word,
            device_address,
            host: host as usize,
        })
    }

    /// Marks the word pending, before a launch whose last block stores its status there
    /// (`poll` then waits for the store). Returns the word's device address, the launch's
    /// argument.
    pub fn arm(&mut self) -> u64 {
        // SAFETY: the live pinned word; no kernel is left to store into it (every launch given
        // its address was waited for by `poll`, every copy into it by `copy_from`).
        unsafe { std::ptr::write_volatile(self.host as *mut u64, PENDING) };
        self.device_address
    }

    /// Waits until the last block of the launch `arm` prepared has stored its status, and
    /// returns it: the host sees the store as soon as it lands, without waiting for the launch
    /// to retire (the stream keeps later work behind it). The stream is queried now and then,
    /// so that a failed launch is an error, not a hang.
    pub fn poll(&mut self, device: &Device) -> Result<u64> {
        let read = || {
            // SAFETY: the live pinned word, written only by the armed launch.
            let value = unsafe { std::ptr::read_volatile(self.host as *const u64) };
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            value
        };
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
            .word
            .as_mut_slice()
            .during("reading the validation status")?;
        // SAFETY: `status` holds one u64 written by a kernel or a fill; the word is pinned and
        // read only after the synchronisation below.
        unsafe { device.queue_copy_to_host(status, host) }?;
        device.synchronize()?;
        Ok(self
            .word
            .as_slice()
            .during("reading the validation status")?[0])
    }
}
