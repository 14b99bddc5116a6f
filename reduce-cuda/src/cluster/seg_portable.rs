//! A rank's part of a segmented reduction over shards in the portable grouping
//! (`SegConfig::portable` over more than one rank), both forms. Its shard is cut where the
//! global tree splits (`reduce_core::shard::portable`): each aligned block is reduced alone by
//! the single-GPU portable kernel, with its own layout, into its slots of the shard's local
//! values — final for every segment inside one block — and the host makes the values of the
//! segments that cross pieces or lie in the shard's head or tail (fewer than a run each) from
//! the blocks' first and last values and the raw items, writes them back, and keeps the
//! shard's carry for the join of the segments that cross shards.

use super::comm::bind;
use super::error::{ClusterError, Result};
use super::shard_ops::{copy_device, diagnose, rebase_owner_into, write_values};
use crate::catalogue::SegConfig;
use crate::device::{DeviceSlice, DeviceSliceMut, DeviceVec};
use crate::gpu::Gpu;
use reduce_core::portable::run_len;
use reduce_core::shard::portable::{
    item_segments, join_shard, piece_ends, piece_offsets, piece_segments, pieces, Piece,
    PieceValues, PortableCarry,
};
use reduce_core::shard::{ShardError, Touch};
use reduce_core::CudaMonoid;
use std::ops::Range;

/// A rank's local values (one per segment its shard touches) and its carry.
pub(super) type PortableLocal<M> = (DeviceVec<M>, PortableCarry<M>);

/// The offsets form: the non-empty shard `items` (global items from `lo`) touching `count`
/// segments, with its local CSR offsets (`local`: `SegmentPlan::local_offsets`, validated).
pub(super) fn by_offsets<M: CudaMonoid>(
    gpu: &Gpu,
    items: &DeviceVec<M>,
    lo: usize,
    local: &[u32],
    config: SegConfig,
) -> Result<PortableLocal<M>> {
    bind(gpu)?;
    let pieces = pieces(lo, lo + items.len(), run_len::<M>());
    let ends = piece_ends(local, lo, &pieces);
    let cut = Cut::new(gpu, items, lo, pieces, ends, local.len() - 1);
    // Every block's own offsets, uploaded once: block k's from `starts[k]`.
    let mut starts = Vec::with_capacity(cut.pieces.len());
    let mut all = Vec::new();
    for (piece, range) in cut.pieces.iter().zip(&cut.ranges) {
        starts.push(all.len());
        if piece.node.is_some() {
            all.extend(piece_offsets(local, lo, range.clone(), piece.items.clone()));
        }
    }
    let all = gpu.upload(&all)?;
    let raw_segments = |piece: &Piece| Ok(item_segments(local, lo, piece.items.clone()));
    let config = SegConfig {
        trusted: true,
        ..config
    };
    cut.run(raw_segments, |k, input, out| {
        // SAFETY: block k's offsets lie inside `all`, which outlives the call.
        let offsets = unsafe {
            DeviceSlice::<u32>::from_raw(
                all.address() + 4 * starts[k] as u64,
                cut.ranges[k].len() + 1,
                gpu,
            )
        }?;
        Ok(gpu.reduce_segments_into(input, &offsets, out, config)?)
    })
}

/// The owner form: the non-empty shard `items` (global items from `lo`) with its owners
/// (global segment ids below `segments`). Returns the segments it touches too. A bad owner is
/// the [`ShardError`] naming its global index (checked on the host on error paths only).
pub(super) fn by_owner<M: CudaMonoid>(
    gpu: &Gpu,
    rank: usize,
    items: &DeviceVec<M>,
    owners: &DeviceVec<u32>,
    lo: usize,
    segments: usize,
    config: SegConfig,
) -> Result<(Touch, PortableLocal<M>)> {
    bind(gpu)?;
    let pieces = pieces(lo, lo + items.len(), run_len::<M>());
    // A bad owner, named by the host's check of the shard's owners.
    let bad = || -> ClusterError {
        diagnose(gpu, owners, lo, segments).unwrap_or_else(|| {
            let read = |i| owners.read_at(gpu.device(), i).unwrap_or(0) as u64;
            ShardError::ShardUnsorted {
                rank,
                first: read(0),
                last: read(items.len() - 1),
            }
            .into()
        })
    };
    // The owners of each piece's first and last item, gathered on the device, read once.
    let staged = DeviceVec::<u32>::alloc(gpu.device(), 2 * pieces.len())?;
    for (k, piece) in pieces.iter().enumerate() {
        for (slot, i) in [piece.items.start, piece.items.end - 1]
            .into_iter()
            .enumerate()
        {
            let src = owners.address() + 4 * (i - lo) as u64;
            copy_device(gpu, staged.address() + 4 * (2 * k + slot) as u64, src, 4)?;
        }
    }
    let bounds = gpu.download(&staged)?;
    let (first, last) = (bounds[0] as usize, bounds[bounds.len() - 1] as usize);
    if bounds.windows(2).any(|w| w[0] > w[1]) || last >= segments {
        return Err(bad());
    }
    let ends: Vec<(usize, usize)> = (bounds.chunks(2))
        .map(|b| (b[0] as usize - first, b[1] as usize - first))
        .collect();
    let cut = Cut::new(gpu, items, lo, pieces, ends, last - first + 1);
    // Each block's owners minus its first segment, in one buffer laid out like the shard.
    let rebased = DeviceVec::<u32>::alloc(gpu.device(), items.len())?;
    let raw_segments = |piece: &Piece| -> Result<Vec<usize>> {
        let host = gpu.download(&slice(owners, lo, piece.items.clone(), gpu)?)?;
        if host.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad());
        }
        Ok(host.iter().map(|&o| o as usize - first).collect())
    };
    let touch = Touch { first, last };
    let values = cut.run(raw_segments, |k, input, out| {
        let (piece, segments) = (&cut.pieces[k], cut.ranges[k].clone());
        let at = 4 * (piece.items.start - lo) as u64;
        let base = (first + segments.start) as u64;
        let n = piece.items.len();
        rebase_owner_into(gpu, owners.address() + at, n, base, rebased.address() + at)?;
        let block_owners = slice(&rebased, lo, piece.items.clone(), gpu)?;
        match gpu.reduce_by_owner_into(input, &block_owners, segments.len(), out, config) {
            Err(crate::Error::Layout(_)) => Err(bad()),
            done => Ok(done?),
        }
    })?;
    Ok((touch, values))
}

/// A non-empty shard cut into pieces, with the local segments of each piece's first and last
/// item (`ends`) and the segments each piece reduces (`ranges`, from `piece_segments`).
struct Cut<'a, M> {
    gpu: &'a Gpu,
    items: &'a DeviceVec<M>,
    lo: usize,
    pieces: Vec<Piece>,
    ends: Vec<(usize, usize)>,
    ranges: Vec<Range<usize>>,
}

impl<'a, M: CudaMonoid> Cut<'a, M> {
    /// The shard `items` (global items from `lo`) of `count` local segments, on `gpu`.
    fn new(
        gpu: &'a Gpu,
        items: &'a DeviceVec<M>,
        lo: usize,
        pieces: Vec<Piece>,
        ends: Vec<(usize, usize)>,
        count: usize,
    ) -> Cut<'a, M> {
        let ranges = piece_segments(&ends, count);
        Cut {
            gpu,
            items,
            lo,
            pieces,
            ends,
            ranges,
        }
    }

    /// The shard's local values: each block reduced by `reduce_block(k, items, out)` into its
    /// slots, its first and last values staged before a later block writes over a segment they
    /// share; then the host's join (`join_shard`, with the raw pieces' items and their local
    /// segments from `raw_segments`), written back.
    fn run(
        &self,
        raw_segments: impl Fn(&Piece) -> Result<Vec<usize>>,
        mut reduce_block: impl FnMut(usize, &DeviceSlice<M>, &mut DeviceSliceMut<M>) -> Result<()>,
    ) -> Result<PortableLocal<M>> {
        let Cut {
            gpu,
            items,
            lo,
            ref pieces,
            ref ends,
            ref ranges,
        } = *self;
        let size = std::mem::size_of::<M>();
        let count = ranges.last().map_or(0, |r| r.end);
        let values = DeviceVec::<M>::alloc(gpu.device(), count)?;
        let blocks = pieces.iter().filter(|p| p.node.is_some()).count();
        let staged = match blocks {
            0 => None,
            _ => Some(DeviceVec::<M>::alloc(gpu.device(), 2 * blocks)?),
        };
        let mut j = 0;
        for (k, piece) in pieces.iter().enumerate() {
            if piece.node.is_none() {
                continue;
            }
            let input = slice(items, lo, piece.items.clone(), gpu)?;
            let at = values.address() + (ranges[k].start * size) as u64;
            // SAFETY: block k's slots lie inside `values` (`piece_segments` stays below `count`).
            let mut out = unsafe { DeviceSliceMut::<M>::from_raw(at, ranges[k].len(), gpu) }?;
            reduce_block(k, &input, &mut out)?;
            for (slot, s) in [ends[k].0, ends[k].1].into_iter().enumerate() {
                let staged = staged.as_ref().expect("allocated for the blocks");
                let dst = staged.address() + ((2 * j + slot) * size) as u64;
                copy_device(gpu, dst, values.address() + (s * size) as u64, size)?;
            }
            j += 1;
        }
        let staged = match &staged {
            Some(staged) => gpu.download(staged)?,
            None => Vec::new(),
        };
        let mut parts = Vec::with_capacity(pieces.len());
        let mut j = 0;
        for piece in pieces {
            parts.push(match piece.node {
                None => PieceValues::Items {
                    items: gpu.download(&slice(items, lo, piece.items.clone(), gpu)?)?,
                    segments: raw_segments(piece)?,
                },
                Some(_) => {
                    j += 1;
                    PieceValues::Block {
                        first: staged[2 * j - 2],
                        last: staged[2 * j - 1],
                    }
                }
            });
        }
        let join = join_shard(pieces, ends, &parts, count, run_len::<M>());
        // The host's values, written back in runs of consecutive segments.
        let mut at = 0;
        while at < join.writes.len() {
            let start = join.writes[at].0;
            let len = (join.writes[at..].iter().enumerate())
                .take_while(|&(d, &(s, _))| s == start + d)
                .count();
            let run: Vec<M> = join.writes[at..at + len].iter().map(|&(_, v)| v).collect();
            write_values(gpu, values.address() + (start * size) as u64, &run)?;
            at += len;
        }
        Ok((values, join.carry))
    }
}

/// A view of the global items `range` of a shard buffer whose first item is global `lo`.
fn slice<T: reduce_core::DeviceCopy>(
    buffer: &DeviceVec<T>,
    lo: usize,
    range: Range<usize>,
    gpu: &Gpu,
) -> Result<DeviceSlice<T>> {
    let at = buffer.address() + ((range.start - lo) * std::mem::size_of::<T>()) as u64;
    // SAFETY: the callers' ranges are pieces of the shard, inside the buffer, which outlives
    // the view.
    Ok(unsafe { DeviceSlice::from_raw(at, range.len(), gpu) }?)
}
