//! A [`Summary`] as a fixed-size record of bytes: what the ranks of a cluster exchange, and
//! what the device join of `reduce-cuda` (`kernels/shard_join.cu`) reads — the layout below is
//! its contract.
//!
//! For runs of `run` values of `M` (`S = size_of::<M>()`), a record of [`record_bytes`] bytes:
//!
//! | bytes | what |
//! |---|---|
//! | `0 .. 64` | eight little-endian u64 words: status (0 = good), `lo`, head length, `tail_at`, tail length, block count, two spare (free for an exchange's own use: reduce-cuda's cluster sends the monoid's fingerprint in word 6) |
//! | `64 ..` | the head's values (`run` slots) |
//! | then | the tail's values (`run` slots) |
//! | then | [`MAX_BLOCKS`] keys of two u64 words: level, index |
//! | then | [`MAX_BLOCKS`] block values |
//!
//! Values are stored byte for byte, unaligned.

use super::parts::{PartPlan, Summary};
use crate::monoid::put_bytes;
use crate::{DeviceCopy, Monoid};

/// The most blocks a summary holds: two per level of a 64-bit run index.
pub const MAX_BLOCKS: usize = 128;

/// The header's words.
const WORDS: usize = 8;

/// The bytes of a record for runs of `run` values of `M`.
pub fn record_bytes<M>(run: usize) -> usize {
    let size = std::mem::size_of::<M>();
    WORDS * 8 + 2 * run * size + MAX_BLOCKS * (16 + size)
}

/// The byte offsets of the head, the tail, the keys and the block values.
fn offsets<M>(run: usize) -> [usize; 4] {
    let size = std::mem::size_of::<M>();
    let head = WORDS * 8;
    let tail = head + run * size;
    let keys = tail + run * size;
    [head, tail, keys, keys + MAX_BLOCKS * 16]
}

/// A part of a record that holds values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordPart {
    /// The head's items.
    Head,
    /// The tail's items.
    Tail,
    /// The blocks' values.
    Block,
}

/// The byte offset of value `k` of `part` in a record for runs of `run` values of `M`.
pub fn value_offset<M>(run: usize, part: RecordPart, k: usize) -> usize {
    let [head, tail, _, values] = offsets::<M>(run);
    let start = match part {
        RecordPart::Head => head,
        RecordPart::Tail => tail,
        RecordPart::Block => values,
    };
    start + k * std::mem::size_of::<M>()
}

/// The record of the part of `plan` with identities for its values: its header (the places and
/// sizes of its pieces), which a device then fills by writing the values at [`value_offset`].
pub fn header_record<M: Monoid + DeviceCopy>(plan: &PartPlan, run: usize) -> Vec<u8> {
    Summary {
        lo: plan.head.start,
        head: vec![M::identity(); plan.head.len()],
        blocks: (plan.blocks.iter())
            .map(|b| (b.level, b.index, M::identity()))
            .collect(),
        tail_at: plan.tail.start,
        tail: vec![M::identity(); plan.tail.len()],
    }
    .to_record(run)
}

/// Word `k` of a record's header.
pub fn word(record: &[u8], k: usize) -> u64 {
    u64::from_le_bytes(record[8 * k..8 * k + 8].try_into().expect("8 bytes"))
}

/// Whether `record` is a record of `M` values for runs of `run` items whose header (words 1 to
/// 5) and block keys are those of `plan`, whatever its status: what a reader checks before
/// [`Summary::from_record`] on a record another process wrote (a peer given other shards, or
/// one that sent garbage, is then an error rather than a value of no sequence or a panic).
pub fn matches_plan<M>(record: &[u8], run: usize, plan: &PartPlan) -> bool {
    if record.len() != record_bytes::<M>(run) {
        return false;
    }
    let header = [
        plan.head.start as u64,
        plan.head.len() as u64,
        plan.tail.start as u64,
        plan.tail.len() as u64,
        plan.blocks.len() as u64,
    ];
    let [_, _, keys, _] = offsets::<M>(run);
    (1..=5).map(|k| word(record, k)).eq(header)
        && plan.blocks.iter().enumerate().all(|(k, b)| {
            let key = &record[keys + 16 * k..keys + 16 * (k + 1)];
            word(key, 0) == b.level as u64 && word(key, 1) == b.index
        })
}

/// A record whose status is 1 (failed) and which holds nothing else.
pub fn failed_record<M>(run: usize) -> Vec<u8> {
    let mut record = vec![0u8; record_bytes::<M>(run)];
    record[..8].copy_from_slice(&1u64.to_le_bytes());
    record
}

/// A value from the bytes of one.
///
/// # Safety
/// `bytes` are those of an `M`: written by [`DeviceCopy::write_bytes`], or by device code for
/// an `M` (which `DeviceCopy` promises is a valid value).
pub unsafe fn value_from_bytes<M: DeviceCopy>(bytes: &[u8]) -> M {
    assert_eq!(bytes.len(), std::mem::size_of::<M>());
    // SAFETY: the caller's promise; the read is unaligned.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<M>()) }
}

impl<M: DeviceCopy> Summary<M> {
    /// The record of this summary (status 0).
    ///
    /// # Panics
    /// When the head or the tail holds more than `run` values, or there are more than
    /// [`MAX_BLOCKS`] blocks (a [`super::parts::plan`] never makes such a summary).
    pub fn to_record(&self, run: usize) -> Vec<u8> {
        assert!(self.head.len() <= run && self.tail.len() <= run);
        assert!(self.blocks.len() <= MAX_BLOCKS);
        let size = std::mem::size_of::<M>();
        let [head, tail, keys, values] = offsets::<M>(run);
        let mut r = vec![0u8; record_bytes::<M>(run)];
        let words = [
            0,
            self.lo as u64,
            self.head.len() as u64,
            self.tail_at as u64,
            self.tail.len() as u64,
            self.blocks.len() as u64,
        ];
        for (k, w) in words.iter().enumerate() {
            r[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        put_bytes(&mut r[head..head + self.head.len() * size], &self.head);
        put_bytes(&mut r[tail..tail + self.tail.len() * size], &self.tail);
        for (k, (level, index, value)) in self.blocks.iter().enumerate() {
            let at = keys + 16 * k;
            r[at..at + 8].copy_from_slice(&(*level as u64).to_le_bytes());
            r[at + 8..at + 16].copy_from_slice(&index.to_le_bytes());
            let v = values + k * size;
            value.write_bytes(&mut r[v..v + size]);
        }
        r
    }

    /// The summary of a record.
    ///
    /// # Safety
    /// `record` was made by [`Summary::to_record`] for the same `run` and `M`, or copied from
    /// one (its values are then valid values of `M`).
    pub unsafe fn from_record(record: &[u8], run: usize) -> Summary<M> {
        let size = std::mem::size_of::<M>();
        let [head, tail, keys, values] = offsets::<M>(run);
        let read = |at: usize, n: usize| -> Vec<M> {
            (0..n)
                // SAFETY: the caller's promise: the record's values are values of M.
                .map(|k| unsafe { value_from_bytes(&record[at + k * size..at + (k + 1) * size]) })
                .collect()
        };
        let blocks = (word(record, 5) as usize).min(MAX_BLOCKS);
        let block_values = read(values, blocks);
        Summary {
            lo: word(record, 1) as usize,
            head: read(head, (word(record, 2) as usize).min(run)),
            blocks: (0..blocks)
                .zip(block_values)
                .map(|(k, v)| {
                    let key = &record[keys + 16 * k..];
                    (word(key, 0) as u32, word(key, 1), v)
                })
                .collect(),
            tail_at: word(record, 3) as usize,
            tail: read(tail, (word(record, 4) as usize).min(run)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sum;

    #[test]
    fn records_round_trip() {
        let items: Vec<Sum<f32>> = (0..1000).map(|i| Sum(i as f32 * 0.37)).collect();
        for (lo, hi) in [(0, 1000), (5, 700), (17, 30), (999, 1000), (40, 40)] {
            let s = Summary::of(&items, lo, hi, 16);
            // SAFETY: made by to_record.
            let back = unsafe { Summary::<Sum<f32>>::from_record(&s.to_record(16), 16) };
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
        // SAFETY: made by to_record.
        assert_eq!(unsafe { Summary::from_record(&s.to_record(16), 16) }, s);
        assert_eq!(word(&failed_record::<Sum<f32>>(16), 0), 1);
    }

    /// What a device does: the header of a part's plan, then its values written at their
    /// offsets, gives the record of its summary, byte for byte.
    #[test]
    fn a_header_filled_at_the_offsets_is_the_summary_s_record() {
        let items: Vec<Sum<f32>> = (0..5000).map(|i| Sum(i as f32 * 0.37 - 9.0)).collect();
        let run = 16;
        for (lo, hi) in [
            (0, 5000),
            (5, 4321),
            (17, 30),
            (999, 1000),
            (40, 40),
            (32, 64),
        ] {
            let p = crate::portable::parts::plan(lo, hi, run);
            let mut record = header_record::<Sum<f32>>(&p, run);
            let mut put = |part, values: &[Sum<f32>]| {
                let at = value_offset::<Sum<f32>>(run, part, 0);
                put_bytes(&mut record[at..at + 4 * values.len()], values);
            };
            put(RecordPart::Head, &items[p.head.clone()]);
            put(RecordPart::Tail, &items[p.tail.clone()]);
            let blocks: Vec<Sum<f32>> = (p.blocks.iter())
                .map(|b| crate::portable::fold(&items[b.items.clone()]))
                .collect();
            put(RecordPart::Block, &blocks);
            assert_eq!(
                record,
                Summary::of(&items, lo, hi, run).to_record(run),
                "{lo}..{hi}"
            );
        }
    }
}
