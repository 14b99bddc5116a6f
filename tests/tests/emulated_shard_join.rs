//! The cluster's portable join on the device (`kernels/shard_join.cu`, `Cluster::reduce_into`
//! with `Config::portable`) on the CPU emulator: the ranks' records (`Summary::to_record`) of
//! every way of cutting a few sequences into shards — boundaries inside runs, empty shards,
//! shards inside one run — joined to `reduce_core::portable::parts::combine`'s bits, which are
//! `portable::fold`'s; an exact non-commutative monoid to the sequential fold; a failed rank's
//! status copied and the value left unwritten.

use reduce_core::portable::parts::{combine, Summary};
use reduce_core::portable::record::{failed_record, record_bytes};
use reduce_core::portable::run_len;
use reduce_core::Sum;
use reduce_cuda::testing::shard_join_source;
use reduce_tests::emu::{compiler, join_kernel, values_from};
use reduce_tests::floats::hard_f32;
use reduce_tests::*;

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
    for (got, (bounds, fold)) in kernel.run(&cases, bytes).into_iter().zip(want) {
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

#[test]
fn an_exact_monoid_gets_the_fold_and_a_failed_rank_is_reported() {
    let Some(cxx) = compiler() else { return };
    let run = run_len::<Affine>();
    let bytes = record_bytes::<Affine>(run);
    let size = std::mem::size_of::<Affine>();
    let kernel = join_kernel(&cxx, &shard_join_source::<Affine>(), "affine", size);
    let xs = Affine::random_vec(5000, 3);
    let mut rng = TestRng::new(11);
    let mut cases = Vec::new();
    for parts in [1usize, 2, 4, 7] {
        let bounds = cuts(xs.len(), parts, &mut rng);
        let records: Vec<Vec<u8>> = (bounds.windows(2))
            .map(|w| Summary::of(&xs, w[0], w[1], run).to_record(run))
            .collect();
        cases.push((records, run));
    }
    // Rank 1 of 3 failed: its status is copied, the value not written.
    let mut failed: Vec<Vec<u8>> = (cases[0].0.iter().take(1).cloned()).collect();
    failed.push(failed_record::<Affine>(run));
    failed.push(Summary::of(&xs, 5000, 5000, run).to_record(run));
    cases.push((failed, run));
    let results = kernel.run(&cases, bytes);
    for got in &results[..4] {
        let value: Affine = values_from(got.value.as_ref().expect("written"))[0];
        assert_eq!(value, reduce_core::fold(&xs));
    }
    assert_eq!(results[4].statuses, [0, 1, 0]);
    assert!(results[4].value.is_none());
}
