//! Device memory the calls of one `Gpu` reuse: regions for partial values, the completion
//! ticket of single-launch kernels, the segmented kernels' status word, and the pinned host
//! word they report to. Guarded by a mutex held for a whole call, so host threads sharing a
//! `Gpu` never interleave their use of it.

use crate::device::{Device, DeviceVec, PinnedWord};
use crate::error::Result;

/// Every region is aligned to this many bytes.
const ALIGN: usize = 256;

/// The scratch memory of one `Gpu`.
pub(crate) struct Scratch {
    buffer: Option<DeviceVec<u8>>,
    /// One u32, zero between launches (single-launch kernels reset it).
    pub ticket: DeviceVec<u32>,
    /// SegShuffle's and SegMerge's status word: all ones between launches (their last block
    /// reads and resets it).
    pub seg_status: DeviceVec<u64>,
    /// Allocated on first use.
    pinned: Option<PinnedWord>,
}

impl Scratch {
    /// The scratch of a device: the ticket and status word are set on its stream (queued, no
    /// synchronisation).
    pub fn new(device: &Device) -> Result<Scratch> {
        Ok(Scratch {
            buffer: None,
            ticket: DeviceVec::filled(device, 1, 0)?,
            seg_status: DeviceVec::filled(device, 1, 0xff)?,
            pinned: None,
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

    /// The pinned host word (allocated on first use).
    pub fn pinned(&mut self, device: &Device) -> Result<&mut PinnedWord> {
        if self.pinned.is_none() {
            self.pinned = Some(PinnedWord::new(device)?);
        }
        Ok(self.pinned.as_mut().expect("allocated above"))
    }
}
