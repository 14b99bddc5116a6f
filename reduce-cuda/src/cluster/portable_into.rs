//! [`Cluster::reduce_into`] in the portable grouping over several ranks, queued without
//! waiting: each rank writes its shard's summary (`reduce_core::portable::parts`) as a record
//! (`reduce_core::portable::record`) on its own GPU — the aligned blocks' values by the portable
//! reduction of each block, the raw items at the shard's two ends, copied in — the records are
//! all-gathered, and every rank joins them on its GPU
//! (`kernels/shard_join.cu`: `parts::combine`, step for step), so every copy of the value has
//! `reduce_core::portable::fold`'s bits.
//!
//! A record's header (its pieces' places and sizes) depends on the shards only: it is written
//! once per layout (that call waits for the upload, and first for the exchanges in flight, which
//! may still read the old records); later calls only rewrite the values and the status word.
//! Each rank keeps two records and uses them in turn, as the peer-access exchange requires of a
//! send buffer (`kernels/shard.cu`). Every buffer is allocated with the [`Replicated`], so that a
//! rank that fails still takes part in the exchange, with a record of status 1: every rank's
//! join then copies the statuses, writes no value, and [`Cluster::read`] reports the failure.

use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::Result;
use super::kernels::{launch_shard, load_shard, PortableJoinArgs, JOIN_NODES, SHARD_PORTABLE_JOIN};
use super::portable::{check_config, reduce_blocks, sign_record};
use super::replicated::{PortableRecords, Replicated, ReplicatedPart};
use super::shard_ops::copy_device;
use super::{Cluster, State};
use crate::catalogue::Config;
use crate::device::DeviceVec;
use crate::gpu::Gpu;
use reduce_core::portable::parts::{plan, PartPlan};
use reduce_core::portable::record::{
    header_record, record_bytes, value_offset, RecordPart, MAX_BLOCKS,
};
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
        check_config::<M>(config)?;
        let run = run_len::<M>();
        let bytes = record_bytes::<M>(run);
        let lens = xs.shards().lens();
        if out.parts.iter().any(|p| records_of(p).lens != lens) && out.calls > 0 {
            self.wait(state, "rewriting the portable records")?;
        }
        let which = (out.calls % 2) as usize;
        // 1. Each rank's record. A failure here has queued no exchange; with one process per
        //    GPU the rank still takes part, sending status 1.
        let with_status = !self.all_local();
        let mut failure = None;
        for (i, m) in self.members.iter().enumerate() {
            let range = xs.shards().range(m.rank);
            let records =
                (out.parts[i].portable.as_mut()).expect("allocated for more than one rank");
            let written = bind(&m.gpu).and_then(|()| {
                let p = plan(range.start, range.end, run);
                if records.lens != lens {
                    records.lens.clear(); // until both headers are written
                    let mut header = header_record::<M>(&p, run);
                    sign_record::<M>(&mut header);
                    for record in &mut records.records {
                        m.gpu.upload_into(record, &header)?;
                    }
                    records.lens = lens.clone();
                }
                write_record(&m.gpu, xs.local(i), range.start, &p, records, which, config)?;
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
            let record = records.records[which].address();
            copy_device(&m.gpu, record, state.statuses[i].address() + 8 * status, 8)?;
        }
        // 2. The all-gather of the records, then every rank's join (a failed rank's too: its
        //    statuses say so to `read`).
        let ops: Vec<Vec<Op>> = (out.parts.iter())
            .map(|part| {
                vec![Op::AllGather {
                    send: records_of(part).records[which].address(),
                    recv: records_of(part).gathered.address(),
                    bytes,
                }]
            })
            .collect();
        self.collective(state, &ops, "the all-gather of the portable records", false)?;
        out.calls += 1;
        out.signed = false;
        for (m, part) in self.members.iter().zip(&out.parts) {
            bind(&m.gpu)?;
            let args = PortableJoinArgs {
                records: records_of(part).gathered.address(),
                world: self.world as u64,
                record_bytes: bytes as u64,
                run: run as u64,
                max_blocks: MAX_BLOCKS as u64,
                scratch: records_of(part).scratch.address(),
                capacity: JOIN_NODES as u64,
                out: part.value.address(),
                statuses: part.statuses.address(),
            };
            launch_shard::<M, _>(&m.gpu, SHARD_PORTABLE_JOIN, 32, None, args)?;
        }
        failure.map_or(Ok(()), Err)
    }
}

/// A part's portable records (allocated where there is more than one rank, the only case this
/// path runs).
fn records_of<M>(part: &ReplicatedPart<M>) -> &PortableRecords<M> {
    part.portable
        .as_ref()
        .expect("allocated for more than one rank")
}

/// Queues the values of the shard `shard` (global items from `lo`, pieces `p`) into record
/// `which` of `records`: each block's portable reduction into the blocks' buffer, then copied
/// into the record's block slots; the head's and the tail's items copied into theirs.
fn write_record<M: CudaMonoid>(
    gpu: &Gpu,
    shard: &DeviceVec<M>,
    lo: usize,
    p: &PartPlan,
    records: &PortableRecords<M>,
    which: usize,
    config: Config,
) -> Result<()> {
    let size = std::mem::size_of::<M>();
    let record = &records.records[which];
    let at =
        |part: RecordPart| record.address() + value_offset::<M>(run_len::<M>(), part, 0) as u64;
    reduce_blocks(gpu, shard, lo, &p.blocks, &records.blocks, config)?;
    if !p.blocks.is_empty() {
        let src = records.blocks.address();
        copy_device(gpu, at(RecordPart::Block), src, p.blocks.len() * size)?;
    }
    for (part, range) in [
        (RecordPart::Head, p.head.clone()),
        (RecordPart::Tail, p.tail.clone()),
    ] {
        if !range.is_empty() {
            let src = shard.address() + ((range.start - lo) * size) as u64;
            copy_device(gpu, at(part), src, range.len() * size)?;
        }
    }
    Ok(())
}
