//! The device operations on a rank's shard that both segmented paths (`segmented.rs`,
//! `seg_portable.rs`) use: views of its items, stream-ordered copies between its buffers and
//! from the host, and the owner form's rebase (on the device) and diagnosis of a bad owner (on
//! the host).

use super::comm::bind;
use super::error::{ClusterError, Result};
use super::kernels::{launch_shard, RebaseArgs, SHARD_REBASE_OWNER};
use crate::device::{DeviceSlice, DeviceVec};
use crate::gpu::Gpu;
use reduce_core::shard::{check_shard_owner, ShardError};
use reduce_core::{DeviceCopy, Sum};
use std::ops::Range;

/// The first bad owner of a shard, with its global index, checked on the host (error paths
/// only: the shard's owners are copied back).
pub(super) fn diagnose(
    gpu: &Gpu,
    owners: &DeviceVec<u32>,
    start: usize,
    segments: usize,
) -> Option<ClusterError> {
    match gpu.download(owners) {
        Ok(host) => check_shard_owner(&host, start, None, segments)
            .err()
            .map(ClusterError::from),
        Err(e) => Some(e.into()),
    }
}

/// A shard's bad owner as an error: the first bad owner the host's check names, or, where it
/// finds none (the device read another layout), `ShardUnsorted` with the shard's first and
/// last owner. Error paths only.
pub(super) fn bad_owner(
    gpu: &Gpu,
    rank: usize,
    owners: &DeviceVec<u32>,
    start: usize,
    segments: usize,
) -> ClusterError {
    diagnose(gpu, owners, start, segments).unwrap_or_else(|| {
        let read = |i| owners.read_at(gpu.device(), i).map_or(0, u64::from);
        ShardError::ShardUnsorted {
            rank,
            first: read(0),
            last: read(owners.len().saturating_sub(1)),
        }
        .into()
    })
}

/// A view of the global items `range` of a shard buffer whose first item is global `lo`.
///
/// # Safety
/// `range` lies inside `lo .. lo + buffer.len()`; the view is used while the buffer lives.
pub(super) unsafe fn shard_view<T: DeviceCopy>(
    buffer: &DeviceVec<T>,
    lo: usize,
    range: Range<usize>,
    gpu: &Gpu,
) -> Result<DeviceSlice<T>> {
    debug_assert!(range.start >= lo && range.end <= lo + buffer.len());
    let at = buffer.address() + ((range.start - lo) * std::mem::size_of::<T>()) as u64;
    // SAFETY: the caller's contract: the range lies inside the live buffer.
    Ok(unsafe { DeviceSlice::from_raw(at, range.len(), gpu) }?)
}

/// `owner[i] - base` for every item of a shard, on its device (`kernels/shard.cu`).
pub(super) fn rebase_owner(gpu: &Gpu, owner: &DeviceVec<u32>, base: u32) -> Result<DeviceVec<u32>> {
    let out = DeviceVec::<u32>::alloc(gpu.device(), owner.len())?;
    rebase_owner_into(
        gpu,
        owner.address(),
        owner.len(),
        base as u64,
        out.address(),
    )?;
    Ok(out)
}

/// `out[i] = owner[i] - base` for the `n` owners at device address `owner` into `out`
/// (stream-ordered; both ranges live buffers of `gpu`'s device).
pub(super) fn rebase_owner_into(
    gpu: &Gpu,
    owner: u64,
    n: usize,
    base: u64,
    out: u64,
) -> Result<()> {
    let args = RebaseArgs {
        owner,
        n: n as u64,
        base,
        out,
    };
    // The kernel does not use the monoid: one module per device, keyed by a fixed type.
    launch_shard::<Sum<u32>, _>(gpu, SHARD_REBASE_OWNER, 256, Some(n as u64), args)
}

/// Stream-ordered device-to-device copy of `bytes` bytes.
pub(super) fn copy_device(gpu: &Gpu, dst: u64, src: u64, bytes: usize) -> Result<()> {
    bind(gpu)?;
    // SAFETY: both ranges lie in live buffers of this device (the callers' offsets and sizes).
    Ok(unsafe { gpu.device().copy_on_device(src, dst, bytes) }?)
}

/// Copies host values to device address `dst` (stream-ordered; done when this returns).
pub(super) fn write_values<M: DeviceCopy>(gpu: &Gpu, dst: u64, values: &[M]) -> Result<()> {
    bind(gpu)?;
    // SAFETY: `dst` starts `values.len()` writable values of a live buffer of this device.
    Ok(unsafe { gpu.device().copy_from_host(dst, values) }?)
}
