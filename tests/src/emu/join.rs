//! The portable join of the ranks' summaries on the device (kernels/shard_join.cu, the
//! cluster's `reduce_into` with `Config::portable`) on the emulator, through
//! `shard_join_main.cpp`.

use super::{values_from, Build, Order};
use reduce_cuda::KernelSource;

const SHARD_JOIN_MAIN_CPP: &str = include_str!("../../emu/shard_join_main.cpp");

/// The join kernel of `source` (`reduce_cuda::testing::shard_join_source`) compiled for the
/// emulator.
pub struct EmulatedJoin {
    build: Build,
    m_size: usize,
}

/// What one join gave: every rank's status, and the value where the kernel wrote one.
pub struct Joined {
    pub statuses: Vec<u64>,
    pub value: Option<Vec<u8>>,
}

/// The join kernel of `source`, tagged `tag`, for a monoid of `m_size` bytes.
pub fn join_kernel(cxx: &str, source: &KernelSource, tag: &str, m_size: usize) -> EmulatedJoin {
    let tag = format!("join_{tag}");
    let main = ("shard_join_main.cpp", SHARD_JOIN_MAIN_CPP);
    let build = Build::compile(cxx, &source.text, main, &tag);
    EmulatedJoin { build, m_size }
}

impl EmulatedJoin {
    /// Joins each case's records (every rank's, in rank order, each `record_bytes` long, for
    /// runs of `run` values) in one process, with `capacity` nodes of scratch in
    /// `scratch_bytes` bytes.
    pub fn run(
        &self,
        cases: &[(Vec<Vec<u8>>, usize)],
        record_bytes: usize,
        (capacity, scratch_bytes): (usize, usize),
    ) -> Vec<Joined> {
        let mut input = Vec::new();
        for (records, run) in cases {
            let max_blocks = reduce_core::portable::record::MAX_BLOCKS;
            let header = [
                records.len(),
                record_bytes,
                *run,
                max_blocks,
                capacity,
                scratch_bytes,
            ];
            for word in header {
                input.extend_from_slice(&(word as u64).to_le_bytes());
            }
            for r in records {
                assert_eq!(r.len(), record_bytes, "a record's length");
                input.extend_from_slice(r);
            }
        }
        let bytes = self.build.execute(input, Order::Increasing);
        let mut at = 0;
        cases
            .iter()
            .map(|(records, _)| {
                let world = records.len();
                let statuses = values_from::<u64>(&bytes[at..at + 8 * world]);
                at += 8 * world;
                let written = values_from::<u64>(&bytes[at..at + 8])[0] == 1;
                let value = bytes[at + 8..at + 8 + self.m_size].to_vec();
                at += 8 + self.m_size;
                Joined {
                    statuses,
                    value: written.then_some(value),
                }
            })
            .collect()
    }
}
