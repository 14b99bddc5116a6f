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

use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::Result;
use super::plain::value_from_device_bytes;
use super::shard_ops::shard_view;
use super::{Cluster, State};
use crate::catalogue::Config;
use crate::device::{DeviceSliceMut, DeviceVec};
use crate::gpu::Gpu;
use crate::jit::{Own, Program};
use reduce_core::portable::parts::{combine, plan, Summary};
use reduce_core::portable::run_len;
use reduce_core::CudaMonoid;

/// The most blocks a summary holds: two per level of a 64-bit run index.
const MAX_BLOCKS: usize = 128;

impl Cluster {
    /// [`Cluster::reduce`] in the portable grouping (more than one rank).
    pub(super) fn reduce_portable<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        config: Config,
    ) -> Result<M> {
        // The configuration is checked here, the same on every rank: a rank whose shard has no
        // aligned block would never plan a launch.
        crate::catalogue::plain_plan(config, Own::<M>::new().items(), 0)?;
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
            return Ok(combine(&summaries, run));
        }
        let gathered = self.gather_summaries(state, summaries, run, buffers)?;
        Ok(combine(&gathered, run))
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
    /// the first failure.
    fn gather_summaries<M: CudaMonoid>(
        &self,
        state: &mut State,
        local: Vec<Result<Summary<M>>>,
        run: usize,
        mut buffers: Vec<(DeviceVec<u8>, DeviceVec<u8>)>,
    ) -> Result<Vec<Summary<M>>> {
        let bytes = record_bytes::<M>(run);
        let mut errors = Vec::with_capacity(local.len());
        for ((m, summary), (send, _)) in self.members.iter().zip(local).zip(&mut buffers) {
            let written = summary.and_then(|s| {
                bind(&m.gpu)?;
                Ok(m.gpu.upload_into(send, &encode(&s, run))?)
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
        Ok(records.iter().map(|r| decode(r, run)).collect())
    }
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
    let size = std::mem::size_of::<M>() as u64;
    // SAFETY: `plan` keeps every piece within lo..hi, and the shard outlives this call.
    let view = |range| unsafe { shard_view(shard, lo, range, gpu) };
    let read = |range: std::ops::Range<usize>| -> Result<Vec<M>> {
        match range.is_empty() {
            true => Ok(Vec::new()),
            false => Ok(gpu.download(&view(range)?)?),
        }
    };
    let values = gpu.identities::<M>(p.blocks.len().max(1))?;
    for (k, block) in p.blocks.iter().enumerate() {
        // SAFETY: value k of `values`, which lives until the download below.
        let mut out =
            unsafe { DeviceSliceMut::<M>::from_raw(values.address() + k as u64 * size, 1, gpu) }?;
        gpu.reduce_into(&view(block.items.clone())?, &mut out, config)?;
    }
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

// A summary's record: eight u64 words (status, lo, head length, tail start, tail length, block
// count, two spare), then the head and the tail (`run` values each), then the blocks' (level,
// index) words and their values (MAX_BLOCKS of each).
const WORDS: usize = 8;

pub(super) fn record_bytes<M>(run: usize) -> usize {
    let size = std::mem::size_of::<M>();
    WORDS * 8 + 2 * run * size + MAX_BLOCKS * (16 + size)
}

fn word(record: &[u8], k: usize) -> u64 {
    u64::from_le_bytes(record[8 * k..8 * k + 8].try_into().expect("8 bytes"))
}

fn failed_record<M>(run: usize) -> Vec<u8> {
    let mut record = vec![0u8; record_bytes::<M>(run)];
    record[..8].copy_from_slice(&1u64.to_le_bytes());
    record
}

/// The bytes of `values`.
pub(super) fn bytes_of<M: CudaMonoid>(values: &[M]) -> &[u8] {
    // SAFETY: `CudaMonoid` values are plain data copied to and from devices byte for byte.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// `n` values from the bytes at `at`.
fn values_at<M: CudaMonoid>(record: &[u8], at: usize, n: usize) -> Vec<M> {
    let size = std::mem::size_of::<M>();
    (0..n)
        .map(|k| value_from_device_bytes(&record[at + k * size..at + (k + 1) * size]))
        .collect()
}

pub(super) fn encode<M: CudaMonoid>(s: &Summary<M>, run: usize) -> Vec<u8> {
    assert!(s.head.len() <= run && s.tail.len() <= run && s.blocks.len() <= MAX_BLOCKS);
    let size = std::mem::size_of::<M>();
    let mut r = vec![0u8; record_bytes::<M>(run)];
    let words = [
        0,
        s.lo as u64,
        s.head.len() as u64,
        s.tail_at as u64,
        s.tail.len() as u64,
        s.blocks.len() as u64,
    ];
    for (k, w) in words.iter().enumerate() {
        r[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
    }
    let head_at = WORDS * 8;
    let tail_at = head_at + run * size;
    let keys_at = tail_at + run * size;
    let values_at = keys_at + MAX_BLOCKS * 16;
    r[head_at..head_at + s.head.len() * size].copy_from_slice(bytes_of(&s.head));
    r[tail_at..tail_at + s.tail.len() * size].copy_from_slice(bytes_of(&s.tail));
    for (k, (level, index, value)) in s.blocks.iter().enumerate() {
        let at = keys_at + 16 * k;
        r[at..at + 8].copy_from_slice(&(*level as u64).to_le_bytes());
        r[at + 8..at + 16].copy_from_slice(&index.to_le_bytes());
        let v = values_at + k * size;
        r[v..v + size].copy_from_slice(bytes_of(std::slice::from_ref(value)));
    }
    r
}

pub(super) fn decode<M: CudaMonoid>(r: &[u8], run: usize) -> Summary<M> {
    let size = std::mem::size_of::<M>();
    let (head_len, tail_len) = (word(r, 2) as usize, word(r, 4) as usize);
    let blocks = word(r, 5) as usize;
    let head_at = WORDS * 8;
    let tail_at = head_at + run * size;
    let keys_at = tail_at + run * size;
    let values = values_at::<M>(r, keys_at + MAX_BLOCKS * 16, blocks);
    Summary {
        lo: word(r, 1) as usize,
        head: values_at(r, head_at, head_len),
        blocks: (0..blocks)
            .zip(values)
            .map(|(k, v)| {
                let key = &r[keys_at + 16 * k..];
                (word(key, 0) as u32, word(key, 1), v)
            })
            .collect(),
        tail_at: word(r, 3) as usize,
        tail: values_at(r, tail_at, tail_len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduce_core::Sum;

    #[test]
    fn records_round_trip() {
        let items: Vec<Sum<f32>> = (0..1000).map(|i| Sum(i as f32 * 0.37)).collect();
        for (lo, hi) in [(0, 1000), (5, 700), (17, 30), (999, 1000), (40, 40)] {
            let s = Summary::of(&items, lo, hi, 16);
            let back = decode::<Sum<f32>>(&encode(&s, 16), 16);
            assert_eq!(back, s);
        }
        // A segment's part that starts with a node (its block's first item, no head), as the
        // segmented reductions' carries hold them.
        let s = Summary {
            lo: 64,
            head: Vec::new(),
            blocks: vec![(2, 1, Sum(1.5f32)), (1, 4, Sum(-2.0))],
            tail_at: 64,
            tail: Vec::new(),
        };
        assert_eq!(decode::<Sum<f32>>(&encode(&s, 16), 16), s);
        assert_eq!(word(&failed_record::<Sum<f32>>(16), 0), 1);
    }
}
