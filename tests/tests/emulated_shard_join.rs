//! The cluster's portable join on the device (`kernels/shard_join.cu`, `Cluster::reduce_into`
//! with `Config::portable`) on the CPU emulator: the ranks' records (`Summary::to_record`) of
//! every way of cutting a few sequences into shards — boundaries inside runs, empty shards,
//! shards inside one run — joined to `reduce_core::portable::parts::combine`'s bits, which are
//! `portable::fold`'s; an exact non-commutative monoid to the sequential fold; a failed rank's
//! status copied and the value left unwritten, and so where the records disagree.

use reduce_core::portable::parts::{combine, Summary};
use reduce_core::portable::record::{failed_record, record_bytes, RecordPart};
use reduce_core::portable::run_len;
use reduce_core::Sum;
use reduce_cuda::testing::{shard_join_scratch_bytes, shard_join_source, SHARD_JOIN_NODES};
use reduce_tests::emu::{compiler, join_kernel, values_from};
use reduce_tests::floats::hard_f32;
use reduce_tests::*;

/// The scratch the cluster gives a join of `nodes` nodes: (nodes, bytes).
fn scratch<M>(nodes: usize) -> (usize, usize) {
    (nodes, shard_join_scratch_bytes::<M>(nodes))
}

/// Random cuts of `n` items into `parts` shards (sorted, some equal: empty shards).
fn cuts(n: usize, parts: usize, rng: &mut TestRng) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..parts - 1)
        .map(|_| rng.range(0, n as u64) as usize)
        .collect();
    cuts.sort_unstable();
    std::iter::once(0).chain(cuts).chain([n]).collect()
}

#[test]
fn the_device_join_is_the_host_join() {
    let Some(cxx) = compiler() else { return };
    let run = run_len::<Sum<f32>>();
    let bytes = record_bytes::<Sum<f32>>(run);
    let kernel = join_kernel(&cxx, &shard_join_source::<Sum<f32>>(), "f32", 4);
    let nodes = scratch::<Sum<f32>>(SHARD_JOIN_NODES);
    let mut rng = TestRng::new(7);
    let mut cases = Vec::new();
    let mut want = Vec::new();
    for n in [0usize, 1, 15, 16, 17, 100, 1000, 4099, 70_001] {
        let xs: Vec<Sum<f32>> = hard_f32(n, n as u64 + 3, true)
            .into_iter()
            .map(Sum)
            .collect();
        let fold = reduce_core::portable::fold(&xs);
        for parts in [1usize, 2, 3, 4, 8] {
            for _ in 0..6 {
                let bounds = cuts(n, parts, &mut rng);
                let summaries: Vec<_> = (bounds.windows(2))
                    .map(|w| Summary::of(&xs, w[0], w[1], run))
                    .collect();
                let joined = combine(&summaries, run);
                assert!(
                    floats::same_f32(joined.0, fold.0),
                    "the host join, {bounds:?}"
                );
                cases.push((summaries.iter().map(|s| s.to_record(run)).collect(), run));
                want.push((bounds, fold));
            }
        }
    }
    for (got, (bounds, fold)) in kernel.run(&cases, bytes, nodes).into_iter().zip(want) {
        assert!(got.statuses.iter().all(|&s| s == 0), "{bounds:?}");
        let value: Sum<f32> = values_from(&got.value.expect("written"))[0];
        assert!(
            floats::same_f32(value.0, fold.0),
            "shards {bounds:?}: {:08x} != {:08x}",
            value.0.to_bits(),
            fold.0.to_bits()
        );
    }
}

/// Exact non-commutative monoids of 8 and 36 bytes (runs of 8 and of 1) get the sequential fold.
#[test]
fn exact_monoids_get_the_fold() {
    let Some(cxx) = compiler() else { return };
    fn check<M: reduce_cuda::CudaMonoid + Random + PartialEq + std::fmt::Debug>(
        cxx: &str,
        tag: &str,
    ) {
        let run = run_len::<M>();
        let bytes = record_bytes::<M>(run);
        let kernel = join_kernel(
            cxx,
            &shard_join_source::<M>(),
            tag,
            std::mem::size_of::<M>(),
        );
        let nodes = scratch::<M>(SHARD_JOIN_NODES);
        let xs = M::random_vec(5000, 3);
        let mut rng = TestRng::new(11);
        let cases: Vec<(Vec<Vec<u8>>, usize)> = [1usize, 2, 4, 7]
            .into_iter()
            .map(|parts| {
                let bounds = cuts(xs.len(), parts, &mut rng);
                let records = (bounds.windows(2))
                    .map(|w| Summary::of(&xs, w[0], w[1], run).to_record(run))
                    .collect();
                (records, run)
            })
            .collect();
        for got in kernel.run(&cases, bytes, nodes) {
            let value: M = values_from(got.value.as_ref().expect("written"))[0];
            assert_eq!(value, reduce_core::fold(&xs), "{tag}");
        }
    }
    check::<Affine>(&cxx, "affine");
    check::<Mat3>(&cxx, "mat3");
}

/// A failed rank: every status copied, no value written. Records that do not agree (another
/// monoid's fingerprint, shards that do not follow each other, garbage lengths): the first such
/// rank's status is 2 and nothing is joined. Garbage keys read nothing past the records
/// (AddressSanitizer would say so).
#[test]
fn a_failed_rank_is_reported_and_bad_lengths_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    let run = run_len::<Affine>();
    let bytes = record_bytes::<Affine>(run);
    let source = shard_join_source::<Affine>();
    let kernel = join_kernel(&cxx, &source, "affine_bad", std::mem::size_of::<Affine>());
    let nodes = scratch::<Affine>(SHARD_JOIN_NODES);
    let xs = Affine::random_vec(3000, 5);
    let good = |lo, hi| Summary::of(&xs, lo, hi, run).to_record(run);
    let failed = vec![
        good(0, 1000),
        failed_record::<Affine>(run),
        good(2000, 3000),
    ];
    let mut garbage = good(1000, 2000);
    for k in 1..8 {
        garbage[8 * k..8 * k + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    }
    let bad = vec![good(0, 1000), garbage, good(2000, 3000)];
    // Keys of levels past 63 and odd indices.
    let mut keys = good(1000, 2000);
    let keys_at = reduce_core::portable::record::value_offset::<Affine>(run, RecordPart::Tail, run);
    for k in 0..reduce_core::portable::record::MAX_BLOCKS {
        let at = keys_at + 16 * k;
        keys[at..at + 8].copy_from_slice(&(64 + k as u64).to_le_bytes());
        keys[at + 8..at + 16].copy_from_slice(&(2 * k as u64 + 1).to_le_bytes());
    }
    keys[40..48].copy_from_slice(&128u64.to_le_bytes()); // every block slot counted
    let bad_keys = vec![good(0, 1000), keys, good(2000, 3000)];
    // Another monoid's fingerprint (spare word 6) on rank 2; rank 1 given other shards.
    let mut other_monoid = good(2000, 3000);
    other_monoid[48..56].copy_from_slice(&7u64.to_le_bytes());
    let other_monoid = vec![good(0, 1000), good(1000, 2000), other_monoid];
    let other_shards = vec![good(0, 1000), good(1100, 2000), good(2000, 3000)];
    // Garbage lengths whose shards still follow each other (tail_at + tail length wraps to the
    // next rank's first item): joined, every length clamped to its slots.
    let mut lengths = good(1000, 2000);
    for (k, word) in [(2, u64::MAX), (3, 2001), (4, u64::MAX), (5, u64::MAX)] {
        lengths[8 * k..8 * k + 8].copy_from_slice(&word.to_le_bytes());
    }
    let lengths = vec![good(0, 1000), lengths, good(2000, 3000)];
    let cases = [
        (failed, run),
        (bad, run),
        (bad_keys, run),
        (other_monoid, run),
        (other_shards, run),
        (lengths, run),
    ];
    let results = kernel.run(&cases, bytes, nodes);
    // A failed rank; garbage (its `lo` follows no shard); garbage keys; another monoid; a gap;
    // garbage lengths.
    let statuses: [&[u64]; 6] = [
        &[0, 1, 0],
        &[0, 2, 0],
        &[0, 0, 0],
        &[0, 0, 2],
        &[0, 2, 0],
        &[0, 0, 0],
    ];
    for (got, want) in results.iter().zip(statuses) {
        assert_eq!(got.statuses, want);
        assert_eq!(got.value.is_some(), want.iter().all(|&s| s == 0));
    }
    // A scratch of two nodes for a join that keeps more: nothing written past it.
    let xs = Affine::random_vec(70_001, 9);
    let many = vec![Summary::of(&xs, 0, 70_001, run).to_record(run)];
    let small = kernel.run(&[(many, run)], bytes, scratch::<Affine>(2));
    assert!(small[0].value.is_some());
}
