//! [`Cluster::reduce_into`] in the portable grouping over several ranks, queued without
//! waiting: each rank writes its shard's summary (`reduce_core::portable::parts`) as a record
//! (`reduce_core::portable::record`) on its own GPU — the aligned blocks' values by the portable
//! reduction of each block straight into the record, the raw items at the shard's two ends
//! copied in — the records are all-gathered, and every rank joins them on its GPU
//! (`kernels/shard_join.cu`: `parts::combine`, step for step), so every copy of the value has
//! `reduce_core::portable::fold`'s bits.
//!
//! A record's header (its pieces' places and sizes) depends on the shards only: it is written
//! once per layout (that call waits for the upload); later calls only rewrite the values and the
//! status word. Each rank keeps two records and uses them in turn, as the peer-access exchange
//! requires of a send buffer (`kernels/shard.cu`).

use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::Result;
use super::kernels::{launch_shard, load_shard, PortableJoinArgs, SHARD_PORTABLE_JOIN};
use super::replicated::{PortableRecords, Replicated};
use super::shard_ops::{copy_device, shard_view};
use super::{Cluster, State};
use crate::catalogue::Config;
use crate::device::{DeviceSliceMut, DeviceVec};
use crate::gpu::Gpu;
use crate::jit::{Own, Program};
use reduce_core::portable::parts::{plan, PartPlan, Summary};
use reduce_core::portable::record::{record_bytes, value_offset, RecordPart};
use reduce_core::portable::run_len;
use reduce_core::CudaMonoid;

impl Cluster {
    /// [`Cluster::reduce_into`] with `config.portable` over more than one rank.
    pub(super) fn reduce_into_portable<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        out: &mut Replicated<M>,
        config: Config,
    ) -> Result<()> {
        // Checked here, the same on every rank (a rank without blocks plans no launch).
        crate::catalogue::plain_plan(config, Own::<M>::new().items(), 0)?;
        let run = run_len::<M>();
        let bytes = record_bytes::<M>(run);
        self.prepare_records(state, xs, out, run)?;
        let which = (out.calls % 2) as usize;
        // 1. Each rank's record. A failure here has queued no exchange; with one process per
        //    GPU the rank still takes part, sending status 1.
        let with_status = !self.all_local();
        let mut failure = None;
        for (i, m) in self.members.iter().enumerate() {
            let range = xs.shards().range(m.rank);
            let record = &out.parts[i].portable.as_ref().expect("prepared").records[which];
            let written = bind(&m.gpu).and_then(|()| {
                let p = plan(range.start, range.end, run);
                write_record(&m.gpu, xs.local(i), range.start, &p, record, run, config)?;
                // Loaded before the exchange is queued (see `load_shard`).
                load_shard::<M, _>(&m.gpu, SHARD_PORTABLE_JOIN, 32)
            });
            let status = match written {
                Ok(()) => 0,
                Err(e) if !with_status => return Err(e),
                Err(e) => {
                    failure.get_or_insert(e);
                    1
                }
            };
            copy_device(
                &m.gpu,
                record.address(),
                state.statuses[i].address() + 8 * status,
                8,
            )?;
        }
        // 2. The all-gather of the records, then each rank's join.
        let ops: Vec<Vec<Op>> = (out.parts.iter())
            .map(|part| {
                let p = part.portable.as_ref().expect("prepared");
                vec![Op::AllGather {
                    send: p.records[which].address(),
                    recv: p.gathered.address(),
                    bytes,
                }]
            })
            .collect();
        self.collective(state, &ops, "the all-gather of the portable records", false)?;
        out.calls += 1;
        if let Some(e) = failure {
            return Err(e);
        }
        for (m, part) in self.members.iter().zip(&out.parts) {
            bind(&m.gpu)?;
            let args = PortableJoinArgs {
                records: part.portable.as_ref().expect("prepared").gathered.address(),
                world: self.world as u64,
                record_bytes: bytes as u64,
                run: run as u64,
                out: part.value.address(),
                statuses: part.statuses.address(),
            };
            launch_shard::<M, _>(&m.gpu, SHARD_PORTABLE_JOIN, 32, None, args)?;
        }
        Ok(())
    }

    /// Gives every local part of `out` its records for the shards of `xs`, their headers written
    /// (once per layout: the upload waits). Records of another layout are replaced once every
    /// queued exchange has ended: a peer may read a rank's record until then.
    fn prepare_records<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        out: &mut Replicated<M>,
        run: usize,
    ) -> Result<()> {
        let lens = xs.shards().lens();
        let bytes = record_bytes::<M>(run);
        let stale = |p: &Option<PortableRecords>| p.as_ref().is_some_and(|p| p.lens != lens);
        if out.parts.iter().any(|part| stale(&part.portable)) {
            self.wait(state, "replacing the portable records")?;
        }
        for (m, part) in self.members.iter().zip(&mut out.parts) {
            if part.portable.as_ref().is_some_and(|p| p.lens == lens) {
                continue;
            }
            bind(&m.gpu)?;
            let range = xs.shards().range(m.rank);
            let header = header::<M>(&plan(range.start, range.end, run)).to_record(run);
            part.portable = Some(PortableRecords {
                lens: lens.clone(),
                records: [m.gpu.upload(&header)?, m.gpu.upload(&header)?],
                gathered: m.gpu.zeroed::<u8>(bytes * self.world)?,
            });
        }
        Ok(())
    }
}

/// A summary with the places and sizes of `p`'s pieces and identities for their values: what a
/// record's header needs.
fn header<M: CudaMonoid>(p: &PartPlan) -> Summary<M> {
    Summary {
        lo: p.head.start,
        head: vec![M::identity(); p.head.len()],
        blocks: (p.blocks.iter())
            .map(|b| (b.level, b.index, M::identity()))
            .collect(),
        tail_at: p.tail.start,
        tail: vec![M::identity(); p.tail.len()],
    }
}

/// Queues the values of the shard `shard` (global items from `lo`, pieces `p`) into `record`:
/// each block's portable reduction into its slot, the head's and the tail's items copied.
fn write_record<M: CudaMonoid>(
    gpu: &Gpu,
    shard: &DeviceVec<M>,
    lo: usize,
    p: &PartPlan,
    record: &DeviceVec<u8>,
    run: usize,
    config: Config,
) -> Result<()> {
    let size = std::mem::size_of::<M>();
    let at = |part: RecordPart, k: usize| record.address() + value_offset::<M>(run, part, k) as u64;
    for (k, block) in p.blocks.iter().enumerate() {
        // SAFETY: the block lies inside the shard, which outlives the call.
        let items = unsafe { shard_view(shard, lo, block.items.clone(), gpu) }?;
        // SAFETY: block slot k of the record, inside it (`plan` makes at most MAX_BLOCKS).
        let mut slot = unsafe { DeviceSliceMut::<M>::from_raw(at(RecordPart::Block, k), 1, gpu) }?;
        gpu.reduce_into(&items, &mut slot, config)?;
    }
    for (part, range) in [
        (RecordPart::Head, p.head.clone()),
        (RecordPart::Tail, p.tail.clone()),
    ] {
        if !range.is_empty() {
            let src = shard.address() + ((range.start - lo) * size) as u64;
            copy_device(gpu, at(part, 0), src, range.len() * size)?;
        }
    }
    Ok(())
}
