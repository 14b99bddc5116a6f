//! What every segmented family shares: the job (items, layout, output), the helper kernels of
//! `kernels/seg_common.cuh` that every segmented module holds (identity fill, the exact layout
//! checks, offsets to owners and back, the status word handed out behind a launch:
//! `hand_status`), and the layout's typed errors from a check's status.

use super::Dispatch;
use crate::device::{kernel_signature, Entry, Module};
use crate::error::{Error, Result};
use reduce_core::LayoutError;
use std::sync::Arc;

/// A status that names no bad index: the layout is valid.
pub(crate) const NO_INDEX: u64 = u64::MAX;

/// Where the segments come from: a device array of owners or CSR offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Device address of the owners (one per item) or offsets (segments + 1 entries).
    pub ptr: u64,
    /// Entries in that array.
    pub len: usize,
    /// CSR offsets (else owners).
    pub offsets_form: bool,
    /// u64 entries (else u32).
    pub wide: bool,
}

/// One segmented reduction: its items, layout and output, and the module of the kernel that
/// runs it (which also holds the helper kernels of this file).
pub(crate) struct SegJob {
    /// Device address and count of the items.
    pub items: (u64, usize),
    pub layout: Layout,
    pub segments: usize,
    /// Device address of the output (`segments` values).
    pub out: u64,
    pub module: Arc<Module>,
}

impl Layout {
    /// The bytes of one entry: 8 for u64 layouts, else 4.
    pub fn entry_bytes(&self) -> usize {
        if self.wide {
            8
        } else {
            4
        }
    }
}

impl SegJob {
    /// The number of items.
    pub fn n(&self) -> u64 {
        self.items.1 as u64
    }
}

kernel_signature! {
    /// `out[0 .. count]` = the identity.
    pub(crate) struct FillArgs { out, count }
}
kernel_signature! {
    /// The first bad owner index into `first_bad` (atomic min; all ones when none).
    pub(crate) struct ValidateOwnerArgs { owner, n, segments, first_bad }
}
kernel_signature! {
    /// The offsets' first error key (class << 62 | index) into `first_bad`.
    pub(crate) struct ValidateOffsetsArgs { offsets, count, n, first_bad }
}
kernel_signature! {
    /// `status` into `status_out` (a word of host memory mapped for the device), and `status`
    /// reset to all ones.
    pub(crate) struct HandStatusArgs { status, status_out }
}
kernel_signature! {
    /// `owner[i]` = the segment of item i, from u32 offsets.
    pub(crate) struct OffsetsToOwnerArgs { offsets, segments, owner, n }
}
kernel_signature! {
    /// `offsets[0 ..= segments]` = the CSR offsets of the owners (entries of the layout's width).
    pub(crate) struct OwnerToOffsetsArgs { owner, n, offsets, segments }
}

pub(crate) const SEG_FILL_IDENTITY: Entry<FillArgs> = Entry::new("seg_fill_identity");
pub(crate) const SEG_VALIDATE_OWNER: Entry<ValidateOwnerArgs> = Entry::new("seg_validate_owner");
pub(crate) const SEG_VALIDATE_OFFSETS: Entry<ValidateOffsetsArgs> =
    Entry::new("seg_validate_offsets");
pub(crate) const SEG_HAND_STATUS: Entry<HandStatusArgs> = Entry::new("seg_hand_status");
pub(crate) const SEG_OFFSETS_TO_OWNER: Entry<OffsetsToOwnerArgs> =
    Entry::new("seg_offsets_to_owner");
pub(crate) const SEG_OWNER_TO_OFFSETS: Entry<OwnerToOffsetsArgs> =
    Entry::new("seg_owner_to_offsets");

/// The helper kernels' signatures (checked against the kernel files).
#[cfg(test)]
pub(crate) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (SEG_FILL_IDENTITY.name, FillArgs::PARAMS),
        (SEG_VALIDATE_OWNER.name, ValidateOwnerArgs::PARAMS),
        (SEG_VALIDATE_OFFSETS.name, ValidateOffsetsArgs::PARAMS),
        (SEG_HAND_STATUS.name, HandStatusArgs::PARAMS),
        (SEG_OFFSETS_TO_OWNER.name, OffsetsToOwnerArgs::PARAMS),
        (SEG_OWNER_TO_OFFSETS.name, OwnerToOffsetsArgs::PARAMS),
    ]
}

impl Dispatch<'_> {
    /// Fills the job's output with the identity.
    pub fn fill_identity(&mut self, job: &SegJob) -> Result<()> {
        let kernel = self.device.helper_kernel(&job.module, SEG_FILL_IDENTITY)?;
        let count = job.segments as u64;
        self.launch_over(
            &kernel,
            count,
            FillArgs {
                out: job.out,
                count,
            },
        )
    }

    /// Validates the layout on the device with the exact check, and returns the first bad
    /// index as a [`LayoutError`].
    pub fn validate_exact(&mut self, job: &SegJob) -> Result<()> {
        let status = self.carve(&[8])?[0];
        // SAFETY: `status` is an 8-byte scratch region: all ones is "no bad index".
        unsafe { self.device.fill(status, 0xff, 8) }?;
        let n = job.n();
        let count = job.layout.len as u64;
        if job.layout.offsets_form {
            let kernel = self
                .device
                .helper_kernel(&job.module, SEG_VALIDATE_OFFSETS)?;
            let args = ValidateOffsetsArgs {
                offsets: job.layout.ptr,
                count,
                n,
                first_bad: status,
            };
            self.launch_over(&kernel, count, args)?;
        } else if n > 0 {
            self.check_owners(job, status)?;
        }
        let value = self.read_status(status)?;
        self.status_error(job, value)
    }

    /// Queues the check of the job's owners (the owner form, at least one item): the first bad
    /// owner index into the word at `first_bad` (atomic min; left as it is if none is bad).
    pub fn check_owners(&mut self, job: &SegJob, first_bad: u64) -> Result<()> {
        let kernel = self.device.helper_kernel(&job.module, SEG_VALIDATE_OWNER)?;
        let n = job.n();
        let args = ValidateOwnerArgs {
            owner: job.layout.ptr,
            n,
            segments: job.segments as u64,
            first_bad,
        };
        self.launch_over(&kernel, n, args)
    }

    /// Queues the owner of each of the job's items (u32) from its u32 CSR offsets into `owner`,
    /// for a kernel that takes only owners.
    pub fn owners_of_offsets(&mut self, job: &SegJob, owner: u64) -> Result<()> {
        let kernel = self
            .device
            .helper_kernel(&job.module, SEG_OFFSETS_TO_OWNER)?;
        let n = job.n();
        let args = OffsetsToOwnerArgs {
            offsets: job.layout.ptr,
            segments: job.segments as u64,
            owner,
            n,
        };
        self.launch_over(&kernel, n, args)
    }

    /// Queues the CSR offsets of the job's owners (`segments + 1` entries of the layout's
    /// width) into `offsets`, for a kernel that takes only offsets.
    pub fn offsets_of_owners(&mut self, job: &SegJob, offsets: u64) -> Result<()> {
        let kernel = self
            .device
            .helper_kernel(&job.module, SEG_OWNER_TO_OFFSETS)?;
        let segments = job.segments as u64;
        let args = OwnerToOffsetsArgs {
            owner: job.layout.ptr,
            n: job.n(),
            offsets,
            segments,
        };
        self.launch_over(&kernel, segments + 1, args)
    }

    /// The layout's typed error for a status value: the offsets' first error key
    /// (`seg_validate_offsets`: class << 62 | index), or the first bad owner index
    /// (`seg_validate_owner`, SegShuffle's owner form).
    pub fn status_error(&self, job: &SegJob, status: u64) -> Result<()> {
        match status {
            NO_INDEX => Ok(()),
            bad if job.layout.offsets_form => self.offsets_error(job, bad),
            bad => self.owner_error(job, bad),
        }
    }

    /// The offsets' error of key `bad`.
    fn offsets_error(&self, job: &SegJob, bad: u64) -> Result<()> {
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
                items: job.items.1,
            },
        }
        .into())
    }

    /// The owners' error at the first bad owner index `bad`.
    fn owner_error(&self, job: &SegJob, bad: u64) -> Result<()> {
        if bad as usize >= job.items.1 {
            // No kernel reports an index past the items: a bug in a check, not a layout's fault.
            return Err(Error::Internal(format!(
                "a layout check reported owner index {bad} of {} items",
                job.items.1
            )));
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

    /// Entry `index` of the layout array, widened (waits for the queued work).
    fn layout_entry(&self, job: &SegJob, index: usize) -> Result<u64> {
        let width = job.layout.entry_bytes();
        let address = job.layout.ptr + (index * width) as u64;
        // SAFETY: `index < job.layout.len`: the checks report indices of the layout.
        let bytes = unsafe { self.device.copy_to_host::<u8>(address, width) }?;
        let mut word = [0u8; 8];
        word[..width].copy_from_slice(&bytes);
        Ok(u64::from_le_bytes(word))
    }

    /// A single-launch kernel's `status_out` argument: the device address of the pinned host
    /// word, armed, when the call waits for the status (`validate`), else null.
    pub fn status_out(&mut self, validate: bool) -> Result<u64> {
        if validate {
            self.arm_status()
        } else {
            Ok(0)
        }
    }

    /// Queues [`SEG_HAND_STATUS`] behind the launches queued so far, which hands the status word
    /// ([`Dispatch::seg_status`]) that their layout check set to the pinned host word, armed, and
    /// resets it; [`Dispatch::poll_status`] then waits for it.
    pub fn hand_status(&mut self, job: &SegJob) -> Result<()> {
        let kernel = self.device.helper_kernel(&job.module, SEG_HAND_STATUS)?;
        let args = HandStatusArgs {
            status: self.seg_status(),
            status_out: self.arm_status()?,
        };
        self.launch(&kernel, 1, args)
    }

    /// The verdict of a launch's fused layout check, once the queued work is done: in the owner
    /// form the status is the first bad owner index (its typed error); in the offsets form it
    /// says only that the launch's reads saw a bad entry, and the exact check finds the first
    /// error ([`Dispatch::confirm_bad_layout`]).
    pub fn fused_verdict(&mut self, job: &SegJob, algorithm: &str) -> Result<()> {
        let status = self.poll_status()?;
        if !job.layout.offsets_form {
            self.status_error(job, status)
        } else if status != NO_INDEX {
            self.confirm_bad_layout(job, algorithm)
        } else {
            Ok(())
        }
    }

    /// After a fused layout check reported a bad layout (`status`, not [`NO_INDEX`]): the exact
    /// check finds the first bad index; if it finds none, the two checks disagree (a bug).
    pub fn confirm_bad_layout(&mut self, job: &SegJob, algorithm: &str) -> Result<()> {
        self.validate_exact(job)?;
        Err(Error::Internal(format!(
            "{algorithm}'s layout check failed on a layout the exact check accepts"
        )))
    }
}
