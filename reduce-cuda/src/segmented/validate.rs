//! Layout checks on the device: the exact check (first bad index, as a typed error) and the
//! readback of the checks fused into SegShuffle (owner form) and SegMerge.

use super::launch::{Carver, Job};
use crate::error::{DriverContext, Error, Result};
use crate::gpu::{Gpu, Scratch};
use reduce_core::LayoutError;

const NO_INDEX: u64 = u64::MAX;
/// The pinned word while a launch's status is still to come (no kernel stores this value:
/// statuses are an index below 2^62 with a class, 0, 1 or `NO_INDEX`).
const PENDING: u64 = u64::MAX - 1;

impl Gpu {
    /// Reads the 8-byte status word (waits for the work queued before it).
    pub(crate) fn read_status(&self, scratch: &mut Scratch, status: u64) -> Result<u64> {
        let host = scratch.pinned_word(self)?;
        // SAFETY: `status` holds one u64 written by a kernel or a memset; `host` is a pinned
        // u64 that nothing else uses while the scratch lock is held.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                host.as_mut_slice()
                    .during("reading the validation status")?,
                status,
                self.inner.stream.cu_stream(),
            )
        }
        .during("reading the validation status")?;
        self.wait_pinned_status(scratch)
    }

    /// Waits for the queued work and reads the pinned host word (a copy wrote it).
    fn wait_pinned_status(&self, scratch: &mut Scratch) -> Result<u64> {
        self.synchronize()?;
        Ok(scratch
            .pinned_word(self)?
            .as_slice()
            .during("reading the validation status")?[0])
    }

    /// Marks the pinned host word pending, before a launch whose last block stores its status
    /// there (`poll_pinned_status` then waits for the store). Returns the word's device address.
    pub(crate) fn arm_pinned_status(&self, scratch: &mut Scratch) -> Result<u64> {
        let host = scratch.pinned_word_host(self)?;
        // SAFETY: `host` is the scratch's live pinned word; no kernel is left to store into it
        // (every launch given its address was waited for by `poll_pinned_status`, every copy
        // into it by `wait_pinned_status`), and the scratch lock is held.
        unsafe { std::ptr::write_volatile(host, PENDING) };
        scratch.pinned_word_device(self)
    }

    /// Waits until the last block of the launch `arm_pinned_status` prepared has stored its
    /// status into the pinned word, and returns it: the host sees the store as soon as it
    /// lands, without waiting for the launch to retire (the stream keeps later work behind
    /// it). The stream is queried now and then, so that a failed launch is an error, not a hang.
    pub(crate) fn poll_pinned_status(&self, scratch: &mut Scratch) -> Result<u64> {
        let host = scratch.pinned_word_host(self)?;
        let stream = self.inner.stream.cu_stream();
        let read = || {
            // SAFETY: the scratch's live pinned word, written only by the armed launch.
            let value = unsafe { std::ptr::read_volatile(host) };
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
            if spins.is_multiple_of(256) {
                use cudarc::driver::sys::{cuStreamQuery, CUresult};
                // SAFETY: the Gpu's live stream.
                match unsafe { cuStreamQuery(stream) } {
                    CUresult::CUDA_ERROR_NOT_READY => {}
                    done => {
                        done.result().during("waiting for the validation status")?;
                        let value = read();
                        return if value == PENDING {
                            Err(Error::Internal(
                                "a validated launch finished without storing its status".into(),
                            ))
                        } else {
                            Ok(value)
                        };
                    }
                }
            }
            std::hint::spin_loop();
        }
    }

    /// Entry `index` of the layout array, widened.
    fn layout_entry(&self, job: &Job, index: usize) -> Result<u64> {
        let width = if job.layout.wide { 8 } else { 4 };
        let mut bytes = [0u8; 8];
        // SAFETY: `index < job.layout.len`, checked by the callers' kernels' reports.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                &mut bytes[..width],
                job.layout.ptr + (index * width) as u64,
                self.inner.stream.cu_stream(),
            )
        }
        .during("copying a layout entry to the host")?;
        self.synchronize()?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// Validates the layout on the device with the exact check, and returns the first bad
    /// index as a [`LayoutError`].
    pub(crate) fn validate_exact(&self, job: &Job, scratch: &mut Scratch) -> Result<()> {
        let mut carve = Carver::new();
        carve.add(8);
        let status = carve.carve(self, scratch)?[0];
        self.clear_status(status)?;
        let n = job.items.len as u64;
        let count = job.layout.len as u64;
        if job.layout.offsets_form {
            let f = job.module.function("seg_validate_offsets")?;
            self.launch_over(&f, count, &[job.layout.ptr, count, n, status])?;
        } else if n > 0 {
            let f = job.module.function("seg_validate_owner")?;
            self.launch_over(&f, n, &[job.layout.ptr, n, job.segments as u64, status])?;
        }
        self.check_status(job, scratch, status)
    }

    /// Waits for what the kernels reported in `status` and turns it into the layout's typed
    /// error: the offsets' first error key (`seg_validate_offsets`: class << 62 | index), or the
    /// first bad owner index (`seg_validate_owner`, SegShuffle's owner form).
    pub(crate) fn check_status(&self, job: &Job, scratch: &mut Scratch, status: u64) -> Result<()> {
        let value = self.read_status(scratch, status)?;
        self.status_error(job, value)
    }

    /// The layout's typed error for a status value (see `check_status`).
    pub(crate) fn status_error(&self, job: &Job, status: u64) -> Result<()> {
        match status {
            NO_INDEX => Ok(()),
            bad if job.layout.offsets_form => self.offsets_error(job, bad),
            bad => self.owner_error(job, bad),
        }
    }

    /// The offsets' error of key `bad`.
    fn offsets_error(&self, job: &Job, bad: u64) -> Result<()> {
        let index = (bad & ((1 << 62) - 1)) as usize;
        let value = self.layout_entry(job, index)?;
        Err(match bad >> 62 {
            0 => LayoutError::FirstOffsetNotZero { value },
            1 => LayoutError::OffsetsDecreasing {
                index,
                value,
                previous: self.layout_entry(job, index - 1)?,
            },
            _ => LayoutError::LastOffsetNotLen {
                index,
                value,
                items: job.items.len,
            },
        }
        .into())
    }

    /// The owners' error at the first bad owner index `bad`.
    fn owner_error(&self, job: &Job, bad: u64) -> Result<()> {
        if bad as usize >= job.items.len {
            return Ok(());
        }
        let index = bad as usize;
        let value = self.layout_entry(job, index)?;
        if index > 0 {
            let previous = self.layout_entry(job, index - 1)?;
            if value < previous {
                return Err(LayoutError::OwnerNotSorted {
                    index,
                    value,
                    previous,
                }
                .into());
            }
        }
        Err(LayoutError::OwnerOutOfRange {
            index,
            value,
            num_segments: job.segments,
        }
        .into())
    }
}
