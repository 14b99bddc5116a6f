//! A rank's part of a segmented reduction over shards in the portable grouping
//! (`SegConfig::portable` over more than one rank), both forms. Its shard is cut where the
//! global tree splits (`reduce_core::shard::portable::ShardCut`): each aligned block is reduced
//! alone by the single-GPU portable kernel, with its own layout, into its slots of the shard's
//! local values — final for every segment inside one block — and the host makes the values of
//! the segments that cross pieces or lie in the shard's head or tail (fewer than a run each)
//! from the blocks' first and last values and the raw items, writes them back, and keeps the
//! shard's carry for the join of the segments that cross shards.

use super::comm::bind;
use super::error::Result;
use super::shard_ops::{bad_owner, copy_device, rebase_owner_into, shard_view, write_values};
use crate::backend::on_host;
use crate::catalogue::SegConfig;
use crate::device::{DeviceSlice, DeviceSliceMut, DeviceVec};
use crate::gpu::Gpu;
use reduce_core::portable::run_len;
use reduce_core::shard::portable::{
    cut_on_host, local_segment, piece_offsets, pieces, PortableCarry, ShardCut,
};
use reduce_core::shard::Touch;
use reduce_core::CudaMonoid;

/// A rank's local values (one per segment its shard touches) and its carry.
pub(super) type PortableLocal<M> = (DeviceVec<M>, PortableCarry<M>);

/// The offsets form: the non-empty shard `items` (global items from `lo`), with its local CSR
/// offsets (`local`: `SegmentPlan::local_offsets`, validated).
pub(super) fn by_offsets<M: CudaMonoid>(
    gpu: &Gpu,
    items: &DeviceVec<M>,
    lo: usize,
    local: &[u32],
    config: SegConfig,
) -> Result<PortableLocal<M>> {
    bind(gpu)?;
    let local_of = |i: usize| local_segment(local, lo, i);
    let cut = cut_on_host(
        lo,
        lo + items.len(),
        run_len::<M>(),
        local.len() - 1,
        local_of,
    );
    // Every block's own offsets, uploaded once: block k's from `starts[k]`.
    let mut starts = vec![0; cut.pieces.len()];
    let mut all = Vec::new();
    for (k, piece) in cut.blocks() {
        starts[k] = all.len();
        all.extend(piece_offsets(
            local,
            lo,
            cut.ranges[k].clone(),
            piece.items.clone(),
        ));
    }
    let all = gpu.upload(&all)?;
    let config = SegConfig {
        trusted: true,
        ..config
    };
    let shard = Shard { gpu, items, lo };
    let raw = |range: std::ops::Range<usize>| Ok(range.map(local_of).collect());
    shard.run(&cut, raw, |k, input, out| {
        let at = all.address() + 4 * starts[k] as u64;
        // SAFETY: block k's offsets lie inside `all`, which outlives the call.
        let offsets = unsafe { DeviceSlice::<u32>::from_raw(at, cut.ranges[k].len() + 1, gpu) }?;
        Ok(gpu.reduce_segments_into(input, &offsets, out, config)?)
    })
}

/// The owner form: the non-empty shard `items` (global items from `lo`) of rank `rank`, with its
/// owners (global segment ids below `segments`). Returns the segments it touches too. A bad
/// owner is the [`reduce_core::shard::ShardError`] naming its global index: the owners at the
/// pieces' ends and in the raw pieces are checked on the host, those inside the blocks by the
/// kernel (unless `config` is trusted).
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
    let bad = || bad_owner(gpu, rank, owners, lo, segments);
    // The owners of each piece's first and last item, gathered on the device, read once.
    let staged = DeviceVec::<u32>::alloc(gpu.device(), 2 * pieces.len())?;
    let ends_at = pieces.iter().flat_map(|p| [p.items.start, p.items.end - 1]);
    for (slot, i) in ends_at.enumerate() {
        let src = owners.address() + 4 * (i - lo) as u64;
        copy_device(gpu, staged.address() + 4 * slot as u64, src, 4)?;
    }
    let bounds = gpu.download(&staged)?;
    let (first, last) = (bounds[0] as usize, bounds[bounds.len() - 1] as usize);
    if bounds.windows(2).any(|w| w[0] > w[1]) || last >= segments {
        return Err(bad());
    }
    let ends = (bounds.chunks(2))
        .map(|b| (b[0] as usize - first, b[1] as usize - first))
        .collect();
    let cut = ShardCut::new(pieces, ends, last - first + 1);
    // Each block's owners minus its first segment, in one buffer laid out like the shard.
    let rebased = DeviceVec::<u32>::alloc(gpu.device(), items.len())?;
    let raw = |range: std::ops::Range<usize>| -> Result<Vec<usize>> {
        // SAFETY: a raw piece lies inside the shard.
        let host = gpu.download(&unsafe { shard_view(owners, lo, range, gpu) }?)?;
        if host.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad());
        }
        Ok(host.iter().map(|&o| o as usize - first).collect())
    };
    let shard = Shard { gpu, items, lo };
    let values = shard.run(&cut, raw, |k, input, out| {
        let (piece, range) = (&cut.pieces[k], cut.ranges[k].clone());
        let at = 4 * (piece.items.start - lo) as u64;
        let base = (first + range.start) as u64;
        let n = piece.items.len();
        rebase_owner_into(gpu, owners.address() + at, n, base, rebased.address() + at)?;
        // SAFETY: a block lies inside the shard.
        let block_owners = unsafe { shard_view(&rebased, lo, piece.items.clone(), gpu) }?;
        match gpu.reduce_by_owner_into(input, &block_owners, range.len(), out, config) {
            Err(crate::Error::Layout(_)) => Err(bad()),
            done => Ok(done?),
        }
    })?;
    Ok((Touch { first, last }, values))
}

/// A non-empty shard on its GPU: its items, global items from `lo`.
struct Shard<'a, M> {
    gpu: &'a Gpu,
    items: &'a DeviceVec<M>,
    lo: usize,
}

impl<M: CudaMonoid> Shard<'_, M> {
    /// The shard's local values for `cut`: each block reduced by `reduce_block(k, items, out)`
    /// into its slots, the values of the segments of its first and last item staged before a
    /// later block writes over a segment they share; then the host's join (`ShardCut::join`,
    /// with the raw pieces' items and, from `raw_segments(items)`, their local segments),
    /// written back.
    fn run(
        &self,
        cut: &ShardCut,
        raw_segments: impl Fn(std::ops::Range<usize>) -> Result<Vec<usize>>,
        mut reduce_block: impl FnMut(usize, &DeviceSlice<M>, &mut DeviceSliceMut<M>) -> Result<()>,
    ) -> Result<PortableLocal<M>> {
        let (gpu, size) = (self.gpu, std::mem::size_of::<M>());
        let values = DeviceVec::<M>::alloc(gpu.device(), cut.count)?;
        let staged = DeviceVec::<M>::alloc(gpu.device(), 2 * cut.blocks().count())?;
        let address = |buffer: &DeviceVec<M>, k: usize| buffer.address() + (k * size) as u64;
        for (j, (k, piece)) in cut.blocks().enumerate() {
            // SAFETY: a block lies inside the shard.
            let input = unsafe { shard_view(self.items, self.lo, piece.items.clone(), gpu) }?;
            let slots = cut.ranges[k].clone();
            // SAFETY: block k's slots lie inside `values` (`ShardCut` keeps them below `count`).
            let mut out = unsafe {
                DeviceSliceMut::<M>::from_raw(address(&values, slots.start), slots.len(), gpu)
            }?;
            reduce_block(k, &input, &mut out)?;
            let (first, last) = cut.ends[k];
            copy_device(gpu, address(&staged, 2 * j), address(&values, first), size)?;
            copy_device(
                gpu,
                address(&staged, 2 * j + 1),
                address(&values, last),
                size,
            )?;
        }
        let staged = gpu.download(&staged)?;
        let mut raw = Vec::new();
        for piece in cut.raw() {
            // SAFETY: a raw piece lies inside the shard.
            let view = unsafe { shard_view(self.items, self.lo, piece.items.clone(), gpu) }?;
            raw.push((gpu.download(&view)?, raw_segments(piece.items.clone())?));
        }
        let join = on_host::<M, _>(|| cut.join(&staged, raw, run_len::<M>()))?;
        for (start, chunk) in join.runs() {
            write_values(gpu, address(&values, start), &chunk)?;
        }
        Ok((values, join.carry))
    }
}
