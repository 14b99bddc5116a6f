//! Pinned host memory mapped into the device's address space: a kernel's store there reaches
//! the host without a copy queued behind the kernel. A reduction to the host writes its value
//! there ([`Pinned`]), and the validated segmented reductions report their layout status in a
//! word the host polls while the launch still runs ([`PinnedWord`]).

use super::health::DriverContext;
use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaContext, PinnedHostSlice};
use reduce_core::DeviceCopy;
use std::sync::Arc;

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
    /// `len` bytes in `ctx`, 16-byte aligned.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Pinned> {
        // SAFETY: the bytes are only read after a copy into them, or the kernel writing them,
        // has completed.
        let mut bytes =
            unsafe { ctx.alloc_pinned_with_flags::<u8>(len, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
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

    /// `len` bytes in `ctx`, 16-byte aligned, zeroed.
    pub fn zeroed(ctx: &Arc<CudaContext>, len: usize) -> Result<Pinned> {
        let pinned = Pinned::new(ctx, len)?;
        // SAFETY: `len` bytes of live host memory no device work has been given yet.
        unsafe { std::ptr::write_bytes(pinned.host as *mut u8, 0, len) };
        Ok(pinned)
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

    /// Stores `value` at the start, for kernels that read it while they run.
    ///
    /// # Safety
    /// `size_of::<T>() <= len`, and no device work writes the bytes.
    #[cfg(feature = "nccl")]
    pub unsafe fn write<T: DeviceCopy>(&self, value: T) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: the caller's; the bytes are live host memory.
        unsafe { std::ptr::write_volatile(self.host as *mut T, value) };
    }
}

/// A pinned, device-mapped host `u64` a launch stores its status into.
pub(crate) struct PinnedWord {
    word: Pinned,
    /// Armed for a launch that `poll` has not waited for (a call that ended between the two,
    /// on an error): that launch may still store into the word.
    armed: bool,
}

impl PinnedWord {
    /// Allocates the word in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<PinnedWord> {
        Ok(PinnedWord {
            word: Pinned::new(ctx, 8)?,
            armed: false,
        })
    }

    /// Marks the word pending, before a launch whose last block stores its status there
    /// (`poll` then waits for the store). Returns the word's device address, the launch's
    /// argument. Where a launch armed before was never polled (its call ended on an error in
    /// between), `wait` first waits for the stream, so that its late store cannot pass for the
    /// next launch's status.
    pub fn arm(&mut self, wait: impl FnOnce() -> Result<()>) -> Result<u64> {
        if self.armed {
            wait()?;
        }
        // SAFETY: the live pinned word; no kernel is left to store into it (every launch given
        // its address was waited for by `poll` or `wait`, every copy into it was waited for).
        unsafe { std::ptr::write_volatile(self.word.host as *mut u64, PENDING) };
        self.armed = true;
        Ok(self.word.device_address)
    }

    /// Waits until the last block of the launch `arm` prepared has stored its status, and
    /// returns it: the host sees the store as soon as it lands, without waiting for the launch
    /// to retire (the stream keeps later work behind it). Now and then `is_idle` says whether
    /// the stream's work is done (a failed launch is its error), so that a launch that failed
    /// is an error, not a hang.
    pub fn poll(&mut self, is_idle: impl FnMut() -> Result<bool>) -> Result<u64> {
        let status = self.wait_for_store(is_idle);
        // Stored, or the stream is idle or failed: nothing is left to store into the word.
        self.armed = false;
        status
    }

    fn wait_for_store(&self, mut is_idle: impl FnMut() -> Result<bool>) -> Result<u64> {
        // SAFETY: the word was armed; only the armed launch stores into it.
        let read = || unsafe { self.word.read::<u64>() };
        let mut spins = 0u32;
        loop {
            let value = read();
            if value != PENDING {
                return Ok(value);
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && is_idle()? {
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

    /// The word's bytes, for a copy into them.
    pub fn bytes(&mut self) -> Result<&mut [u8]> {
        self.word
            .bytes
            .as_mut_slice()
            .during("reading the validation status")
    }

    /// The word's value.
    ///
    /// # Safety
    /// The work that wrote it (a kernel's store, a copy) has completed.
    pub unsafe fn value(&self) -> u64 {
        // SAFETY: the caller's.
        unsafe { self.word.read::<u64>() }
    }
}
