//! The portable grouping over several GPUs ([`Cluster::reduce`] with `Config::portable`): the
//! bits of `reduce_core::portable::fold` of the concatenated shards — one GPU's and the CPU's —
//! whatever the shard boundaries. Each rank summarises its shard
//! (`reduce_core::portable::parts`): the items before its first run boundary and after its last
//! (fewer than a run each, read back as they are) and the aligned blocks of whole runs between
//! (each `Gpu::reduce_into` of its items with the same configuration: an aligned block is a
//! subtree, so one GPU computes its node as the whole sequence's tree would). The host joins
//! the summaries in rank order (`parts::combine`): runs that straddle shards are folded from
//! their items, in order, then every node takes its place in the tree. With every rank in this
//! process the summaries are read directly; with one process per GPU they are all-gathered
//! through NCCL as fixed-size records.

use super::agreement;
use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::{ClusterError, Result};
use super::shard_ops::shard_view;
use super::{Cluster, State};
use crate::backend::on_host;
use crate::catalogue::Config;
use crate::device::{DeviceSliceMut, DeviceVec};
use crate::gpu::Gpu;
use crate::jit::{Own, Program};
use reduce_core::portable::parts::{combine, plan, Block, Summary};
use reduce_core::portable::record::{failed_record, matches_plan, record_bytes, word};
use reduce_core::portable::run_len;
use reduce_core::shard::Shards;
use reduce_core::CudaMonoid;

impl Cluster {
    /// [`Cluster::reduce`] in the portable grouping (more than one rank).
    pub(super) fn reduce_portable<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        config: Config,
    ) -> Result<M> {
        check_config::<M>(config)?;
        let run = run_len::<M>();
        // With one process per GPU, the records' buffers first, each holding a failure until
        // its rank's summary replaces it: a rank whose summary fails still joins the exchange.
        let buffers = match self.all_local() {
            true => Vec::new(),
            false => self.record_buffers::<M>(run)?,
        };
        let summaries = self
            .crew
            .run(self.members.len(), |i| -> Result<Summary<M>> {
                let member = &self.members[i];
                let range = xs.shards().range(member.rank);
                summary(
                    &member.gpu,
                    xs.local(i),
                    range.start,
                    range.end,
                    run,
                    config,
                )
            });
        if self.all_local() {
            let summaries = summaries.into_iter().collect::<Result<Vec<_>>>()?;
            return Ok(on_host::<M, _>(|| combine(&summaries, run))?);
        }
        let gathered = self.gather_summaries(state, summaries, run, buffers, xs.shards())?;
        Ok(on_host::<M, _>(|| combine(&gathered, run))?)
    }

    /// Per local rank, the send buffer of its record (holding a failed record) and the receive
    /// buffer of every rank's.
    fn record_buffers<M: CudaMonoid>(
        &self,
        run: usize,
    ) -> Result<Vec<(DeviceVec<u8>, DeviceVec<u8>)>> {
        let bytes = record_bytes::<M>(run);
        let failed = failed_record::<M>(run);
        (self.members.iter())
            .map(|m| {
                bind(&m.gpu)?;
                Ok((
                    m.gpu.upload(&failed)?,
                    m.gpu.zeroed::<u8>(bytes * self.world)?,
                ))
            })
            .collect()
    }

    /// Every rank's summary, in rank order, through an NCCL all-gather of fixed-size records
    /// (one process per GPU) in `buffers` (from `record_buffers`); a rank whose summary failed,
    /// or whose record could not be written, sends the failed record, and every rank returns
    /// the first failure; a record that is not the summary of its rank's shard under `shards`
    /// (a peer given another `Sharded`) is [`ClusterError::Mismatch`].
    fn gather_summaries<M: CudaMonoid>(
        &self,
        state: &mut State,
        local: Vec<Result<Summary<M>>>,
        run: usize,
        mut buffers: Vec<(DeviceVec<u8>, DeviceVec<u8>)>,
        shards: &Shards,
    ) -> Result<Vec<Summary<M>>> {
        let bytes = record_bytes::<M>(run);
        let monoid = agreement::monoid_fingerprint::<M>();
        let mut errors = Vec::with_capacity(local.len());
        for ((m, summary), (send, _)) in self.members.iter().zip(local).zip(&mut buffers) {
            let written = summary.and_then(|s| {
                bind(&m.gpu)?;
                let mut record = s.to_record(run);
                sign_record::<M>(&mut record);
                Ok(m.gpu.upload_into(send, &record)?)
            });
            errors.push(written.err());
        }
        let ops: Vec<Vec<Op>> = (buffers.iter())
            .map(|(send, recv)| {
                vec![Op::AllGather {
                    send: send.address(),
                    recv: recv.address(),
                    bytes,
                }]
            })
            .collect();
        self.collective(
            state,
            &ops,
            "the all-gather of the portable summaries",
            true,
        )?;
        let first = &self.members[0].gpu;
        bind(first)?;
        let all = first.download(&buffers[0].1)?;
        let records: Vec<&[u8]> = all.chunks(bytes).collect();
        let statuses = records.iter().map(|r| word(r, 0));
        self.first_failure(statuses, &mut errors, "the portable reduction")?;
        let fingerprints = records.iter().map(|r| word(r, MONOID_WORD));
        agreement::check(fingerprints, monoid, "the monoid")?;
        check_headers::<M>(&records, shards, run)?;
        // SAFETY: every rank wrote its record with `to_record` for this `M` (the fingerprints
        // agree) and `run` (a failed one was reported above).
        Ok((records.iter())
            .map(|r| unsafe { Summary::from_record(r, run) })
            .collect())
    }
}

/// The record's spare header word that carries the monoid's fingerprint between the ranks
/// (`reduce_core::portable::record`: words 6 and 7 are spare).
const MONOID_WORD: usize = 6;

/// Writes `M`'s fingerprint into `record`'s spare word (the host join checks it with the ranks'
/// records, `kernels/shard_join.cu` with the records it joins).
pub(super) fn sign_record<M: CudaMonoid>(record: &mut [u8]) {
    let monoid = agreement::monoid_fingerprint::<M>().to_le_bytes();
    record[8 * MONOID_WORD..8 * MONOID_WORD + 8].copy_from_slice(&monoid);
}

/// Checks that every gathered record's header (words 1 to 5: `lo`, head length, `tail_at`,
/// tail length, block count, which fix the rank's items `lo..hi`) and block keys are those of
/// the plan of its rank's shard under `shards`, this rank's view (`matches_plan`): a peer given
/// another `Sharded` (other lengths) would otherwise be joined into a value of no sequence.
fn check_headers<M>(records: &[&[u8]], shards: &Shards, run: usize) -> Result<()> {
    if records.len() != shards.ranks() {
        return Err(ClusterError::Mismatch {
            what: "the items",
            reason: format!(
                "{} record(s) gathered for {} shard(s)",
                records.len(),
                shards.ranks()
            ),
        });
    }
    for (rank, record) in records.iter().enumerate() {
        let range = shards.range(rank);
        if !matches_plan::<M>(record, run, &plan(range.start, range.end, run)) {
            return Err(ClusterError::Mismatch {
                what: "the items",
                reason: format!(
                    "rank {rank} did not reduce items {range:?}: the ranks were given different shards"
                ),
            });
        }
    }
    Ok(())
}

/// Checks a portable configuration the same way on every rank, before any launch: a rank whose
/// shard holds no aligned block would never plan one.
pub(super) fn check_config<M: CudaMonoid>(config: Config) -> Result<()> {
    crate::catalogue::plain_plan(config, Own::<M>::new().items(), 0)?;
    Ok(())
}

/// The summary of the shard `shard` (the global items `lo..hi`) on `gpu`: its head and tail
/// items read back, each aligned block reduced with `config` (portable) on the device.
fn summary<M: CudaMonoid>(
    gpu: &Gpu,
    shard: &DeviceVec<M>,
    lo: usize,
    hi: usize,
    run: usize,
    config: Config,
) -> Result<Summary<M>> {
    bind(gpu)?;
    let p = plan(lo, hi, run);
    let read = |range: std::ops::Range<usize>| -> Result<Vec<M>> {
        match range.is_empty() {
            true => Ok(Vec::new()),
            // SAFETY: `plan` keeps every piece within lo..hi; the shard outlives this call.
            false => Ok(gpu.download(&unsafe { shard_view(shard, lo, range, gpu) }?)?),
        }
    };
    let values = DeviceVec::<M>::alloc(gpu.device(), p.blocks.len())?;
    reduce_blocks(gpu, shard, lo, &p.blocks, &values, config)?;
    let values = gpu.download(&values)?;
    Ok(Summary {
        lo,
        head: read(p.head.clone())?,
        blocks: (p.blocks.iter().zip(values))
            .map(|(b, v)| (b.level, b.index, v))
            .collect(),
        tail_at: p.tail.start,
        tail: read(p.tail)?,
    })
}

/// Each of `blocks` (aligned blocks of whole runs of the shard `shard`, whose first item is
/// global `lo`) reduced with `config` (portable: an aligned block's value is its node of the
/// tree) into value k of `values`, which holds at least as many.
pub(super) fn reduce_blocks<M: CudaMonoid>(
    gpu: &Gpu,
    shard: &DeviceVec<M>,
    lo: usize,
    blocks: &[Block],
    values: &DeviceVec<M>,
    config: Config,
) -> Result<()> {
    assert!(blocks.len() <= values.len(), "a value per block");
    let size = std::mem::size_of::<M>() as u64;
    for (k, block) in blocks.iter().enumerate() {
        // SAFETY: the block lies inside the shard (`plan` keeps it there), which outlives the
        // call.
        let items = unsafe { shard_view(shard, lo, block.items.clone(), gpu) }?;
        // SAFETY: value k of `values`, which outlives the call.
        let at = values.address() + k as u64 * size;
        let mut out = unsafe { DeviceSliceMut::<M>::from_raw(at, 1, gpu) }?;
        gpu.reduce_into(&items, &mut out, config)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduce_core::portable::record::MAX_BLOCKS;
    use reduce_core::Sum;

    /// The records of the ranks' own shards pass; a peer whose record is the summary of other
    /// shards (another `Sharded`, other lengths) is a mismatch, not a wrong value.
    #[test]
    fn records_of_other_shards_are_a_mismatch() {
        let items: Vec<Sum<f32>> = (0..300).map(|i| Sum(i as f32 * 0.37)).collect();
        let run = run_len::<Sum<f32>>();
        let records_of = |lens: &[usize]| -> Vec<Vec<u8>> {
            let shards = Shards::from_lens(lens).unwrap();
            (0..shards.ranks())
                .map(|r| {
                    let range = shards.range(r);
                    Summary::of(&items, range.start, range.end, run).to_record(run)
                })
                .collect()
        };
        let mine = Shards::from_lens(&[10, 0, 150, 140]).unwrap();
        let good = records_of(&mine.lens());
        let view: Vec<&[u8]> = good.iter().map(Vec::as_slice).collect();
        check_headers::<Sum<f32>>(&view, &mine, run).unwrap();
        // Rank 2 was given other shards: its record covers items 10..170.
        let theirs = records_of(&[10, 0, 160, 130]);
        let mut mixed = view.clone();
        mixed[2] = &theirs[2];
        assert!(matches!(
            check_headers::<Sum<f32>>(&mixed, &mine, run),
            Err(ClusterError::Mismatch { .. })
        ));
        // Shards that end on the same item but start elsewhere.
        let shifted = records_of(&[10, 0, 0, 290]);
        mixed[2] = view[2];
        mixed[3] = &shifted[3];
        assert!(check_headers::<Sum<f32>>(&mixed, &mine, run).is_err());
        assert!(check_headers::<Sum<f32>>(&view[..3], &mine, run).is_err());
        // A block key that is not the plan's (a peer's garbage): a mismatch, not a decoded
        // block at another place of the tree.
        assert!(!plan(160, 300, run).blocks.is_empty());
        let mut bad = good[3].clone();
        let keys = bad.len() - MAX_BLOCKS * (16 + std::mem::size_of::<Sum<f32>>());
        bad[keys] ^= 0x40;
        mixed[3] = &bad;
        assert!(check_headers::<Sum<f32>>(&mixed, &mine, run).is_err());
    }
}
