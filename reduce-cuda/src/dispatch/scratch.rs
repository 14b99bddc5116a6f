//! Device memory the calls of one `Gpu` reuse: regions for partial values, the completion
//! ticket of single-launch kernels, the segmented kernels' status word, words that are zero
//! between calls (SegHeads' head bits, SegBlocks' counts, the scans' tile states and heads'
//! bitmap), the pinned host word they report to, and the pinned host memory a reduction to the
//! host writes its value into.
//! Guarded by a mutex held for a whole call, so host threads sharing a `Gpu` never interleave
//! their use of it.

use crate::device::{Device, DeviceVec, Pinned, PinnedWord};
use crate::error::Result;

/// Every region is aligned to this many bytes.
const ALIGN: usize = 256;

/// The scratch memory of one `Gpu`.
pub(crate) struct Scratch {
    buffer: Option<DeviceVec<u8>>,
    /// One u32, zero between launches (single-launch kernels reset it).
    pub ticket: DeviceVec<u32>,
    /// The segmented kernels' status word: all ones between launches (their last block, or
    /// `seg_hand_status` behind SegBlocks' launch, reads and resets it).
    pub seg_status: DeviceVec<u64>,
    /// The identity fills' budget of SegShuffle and the portable segmented kernel: a count of
    /// ids, zero between launches (their last block resets it). See `r_take_fill_budget`
    /// (kernels/seg_common.cuh).
    pub fill_budget: DeviceVec<u64>,
    /// Words that are all zero between calls: a call that sets some clears them before it ends
    /// (SegHeads' fold clears the bits its marks set; a fill queued behind a scan's kernels
    /// clears their states and bitmap, and one behind SegBlocks' launch its counts). Zero-filled when allocated, grown to the largest call's
    /// need (a power of two; kept apart from `buffer`, and as long as the `Gpu`), dropped when a
    /// clearing fill fails to queue.
    zeroed: Option<DeviceVec<u32>>,
    /// Allocated on first use.
    pinned: Option<PinnedWord>,
    /// Where a reduction to the host writes its value (allocated on first use, grown to the
    /// largest value).
    result: Option<Pinned>,
}

impl Scratch {
    /// The scratch of a device: the ticket and status word are set on its stream (queued, no
    /// synchronisation).
    pub fn new(device: &Device) -> Result<Scratch> {
        Ok(Scratch {
            buffer: None,
            ticket: DeviceVec::filled(device, 1, 0)?,
            seg_status: DeviceVec::filled(device, 1, 0xff)?,
            fill_budget: DeviceVec::filled(device, 1, 0)?,
            zeroed: None,
            pinned: None,
            result: None,
        })
    }

    /// Regions of the given sizes (each rounded up to [`ALIGN`] bytes), one after the other in
    /// one allocation that grows to the largest call's need and is kept.
    pub fn carve(&mut self, device: &Device, sizes: &[usize]) -> Result<Vec<u64>> {
        let rounded: Vec<usize> = sizes
            .iter()
            .map(|bytes| bytes.max(&1).div_ceil(ALIGN) * ALIGN)
            .collect();
        let total = rounded.iter().sum::<usize>();
        if self.buffer.as_ref().is_none_or(|b| b.len() < total) {
            self.buffer = None; // free first: the old one may be most of the card
            self.buffer = Some(DeviceVec::alloc(
                device,
                total.next_power_of_two().max(4096),
            )?);
        }
        let mut at = self.buffer.as_ref().map_or(0, DeviceVec::address);
        Ok(rounded
            .iter()
            .map(|size| {
                let here = at;
                at += *size as u64;
                here
            })
            .collect())
    }

    /// At least `words` u32 that are zero now, and that the call must leave zero: their device
    /// address.
    pub fn zeroed(&mut self, device: &Device, words: usize) -> Result<u64> {
        if self.zeroed.as_ref().is_none_or(|z| z.len() < words) {
            self.zeroed = None; // free first, as for the regions
            self.zeroed = Some(DeviceVec::filled(
                device,
                words.next_power_of_two().max(1024),
                0,
            )?);
        }
        Ok(self.zeroed.as_ref().map_or(0, DeviceVec::address))
    }

    /// Queues a fill of the first `bytes` bytes of the zeroed words (at most all of them) with
    /// zeros; should it fail to queue, forgets the words, so that the next call allocates them
    /// zero-filled again.
    pub fn clear_zeroed(&mut self, device: &Device, bytes: usize) -> Result<()> {
        let Some(words) = &self.zeroed else {
            return Ok(());
        };
        let bytes = bytes.min(words.len() * 4);
        // SAFETY: the first `bytes` bytes of the live allocation `words`.
        let cleared = unsafe { device.fill(words.address(), 0, bytes) };
        if cleared.is_err() {
            self.zeroed = None;
        }
        cleared
    }

    /// Pinned host memory for a value of `bytes` bytes, mapped for the device.
    pub fn result(&mut self, device: &Device, bytes: usize) -> Result<&Pinned> {
        if self.result.as_ref().is_none_or(|r| r.len() < bytes) {
            self.result = Some(Pinned::new(&device.ctx, bytes.next_power_of_two().max(64))?);
        }
        Ok(self.result.as_ref().expect("allocated above"))
    }

    /// The pinned host word (allocated on first use).
    pub fn pinned(&mut self, device: &Device) -> Result<&mut PinnedWord> {
        if self.pinned.is_none() {
            self.pinned = Some(PinnedWord::new(&device.ctx)?);
        }
        Ok(self.pinned.as_mut().expect("allocated above"))
    }
}
