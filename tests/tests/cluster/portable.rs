//! The portable grouping over several GPUs: `Cluster::reduce` and the queued `reduce_into` with
//! `Config::portable`, and the segmented reductions with `SegConfig::portable`, against
//! `reduce_core::portable`'s bits (one GPU's and the CPU's) for any shards.

use super::{segment_cases, shard_patterns};
use reduce_core::shard::Shards;
use reduce_cuda::cluster::{Cluster, Placement};
use reduce_cuda::{fold, SegConfig};
use reduce_tests::*;

/// Every portable check over `cluster`: the plain reductions over shard patterns whose boundaries
/// fall inside runs, the segmented ones over many layouts, and queued `reduce_into` calls.
pub(crate) fn check_all(cluster: &Cluster) {
    let world = cluster.world_size();
    for (i, lens) in portable_patterns(world, 60 + world as u64)
        .iter()
        .enumerate()
    {
        check_portable(cluster, lens, i as u64);
    }
    for (name, lengths, lens) in portable_segment_cases(world) {
        check_portable_segments(cluster, name, &lengths, &lens);
    }
    check_portable_pipeline(cluster);
}

/// The portable grouping (`Config::portable`) over the shards `lens`: f32 sums of mixed
/// magnitudes and signs (whose bits depend on the grouping) with the bits of
/// `reduce_core::portable::fold` — one GPU's and the CPU's — whatever the boundaries (inside
/// runs, empty shards, shards inside one run), and an exact non-commutative monoid equal to the
/// fold; by `reduce` and by `reduce_into` (the value on every local rank's GPU).
fn check_portable(cluster: &Cluster, lens: &[usize], seed: u64) {
    let shards = Shards::from_lens(lens).unwrap();
    let mut rng = TestRng::new(seed);
    let items: Vec<reduce_cuda::Sum<f32>> = (0..shards.items())
        .map(|_| {
            let e = rng.range(100, 150) as u32;
            reduce_cuda::Sum(f32::from_bits((rng.next_u32() & 0x807f_ffff) | (e << 23)))
        })
        .collect();
    let portable = reduce_cuda::Config::default().portable();
    let xs = cluster.scatter_with(&items, &shards).unwrap();
    let want = reduce_core::portable::fold(&items).0.to_bits();
    let mut out = cluster.replicated::<reduce_cuda::Sum<f32>>().unwrap();
    for config in [portable, portable.grid(7)] {
        let got = cluster.reduce(&xs, config).unwrap().0.to_bits();
        assert_eq!(
            got, want,
            "portable f32 over shards {lens:?}: {got:08x} != {want:08x}"
        );
        cluster.reduce_into(&xs, &mut out, config).unwrap();
        let got = cluster.read(&out).unwrap().0.to_bits();
        assert_eq!(
            got, want,
            "portable f32 reduce_into over shards {lens:?}: {got:08x} != {want:08x}"
        );
        for rank in cluster.local_ranks() {
            let value = out.value(rank).unwrap();
            let on_rank = cluster.gpu(rank).unwrap().download(value).unwrap();
            assert_eq!(on_rank[0].0.to_bits(), want, "rank {rank}");
        }
    }
    println!("portable-cluster-hash shards {lens:?} {want:08x}");
    let affine = Affine::random_vec(shards.items(), seed + 1);
    let xa = cluster.scatter_with(&affine, &shards).unwrap();
    assert_eq!(cluster.reduce(&xa, portable).unwrap(), fold(&affine));
    let mut out = cluster.replicated::<Affine>().unwrap();
    cluster.reduce_into(&xa, &mut out, portable).unwrap();
    assert_eq!(cluster.read(&out).unwrap(), fold(&affine));
}

/// `reduce_into` with `Config::portable` queued several times into one output, other items each
/// time, over two shard layouts in turn with no `read` between them (the change of layout waits
/// for the first layout's calls before rewriting the records' headers): the value read at the
/// end, and
/// every rank's copy, has the last items' `portable::fold` bits.
fn check_portable_pipeline(cluster: &Cluster) {
    let world = cluster.world_size();
    let n = 100_003;
    let portable = reduce_cuda::Config::default().portable();
    let mut out = cluster.replicated::<reduce_cuda::Sum<f32>>().unwrap();
    let mut uneven: Vec<usize> = (0..world).map(|r| 16 * r + 3).collect();
    uneven[world - 1] += n - uneven.iter().sum::<usize>();
    let mut want = 0;
    for (layout, lens) in [Shards::even(n, world).unwrap().lens(), uneven]
        .into_iter()
        .enumerate()
    {
        let shards = Shards::from_lens(&lens).unwrap();
        for call in 0..3 {
            let seed = 10 * layout as u64 + call;
            let items: Vec<reduce_cuda::Sum<f32>> = reduce_tests::floats::hard_f32(n, seed, false)
                .into_iter()
                .map(reduce_cuda::Sum)
                .collect();
            let xs = cluster.scatter_with(&items, &shards).unwrap();
            cluster.reduce_into(&xs, &mut out, portable).unwrap();
            want = reduce_core::portable::fold(&items).0.to_bits();
        }
    }
    let got = cluster.read(&out).unwrap().0.to_bits();
    assert_eq!(
        got, want,
        "queued portable reduce_into: {got:08x} != {want:08x}"
    );
    for rank in cluster.local_ranks() {
        let on_rank = cluster
            .gpu(rank)
            .unwrap()
            .download(out.value(rank).unwrap())
            .unwrap();
        assert_eq!(on_rank[0].0.to_bits(), want, "rank {rank}'s copy");
    }
}

/// Shard lengths whose boundaries fall inside runs of 16 f32 and on them, for `world` ranks.
fn portable_patterns(world: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut patterns = shard_patterns(world, 300_007, seed);
    patterns.push((0..world).map(|r| 16 * (r + 1) + r).collect()); // boundaries inside runs
    patterns.push((0..world).map(|_| 4096).collect()); // on aligned blocks
    patterns.push((0..world).map(|r| if r == 0 { 5 } else { 3 }).collect()); // inside one run
    patterns
}

/// The portable grouping of the segmented reductions (`SegConfig::portable`) over the shards
/// `lens`: f32 sums whose bits depend on the grouping (cancellation, mixed magnitudes, ±0,
/// subnormals, infinities, NaN) with `reduce_core::portable::fold_segments`' bits — one GPU's
/// and the CPU's — in both forms (u32 and u64 offsets; validated and trusted owners), both
/// placements; and an exact non-commutative monoid equal to the sequential fold.
fn check_portable_segments(cluster: &Cluster, name: &str, lengths: &[u32], lens: &[usize]) {
    use reduce_tests::floats::{assert_same_bits, hard_f32};
    let offsets = offsets_of(lengths);
    let owner = owners_of(lengths);
    let shards = Shards::from_lens(lens).unwrap();
    let items: Vec<reduce_cuda::Sum<f32>> = hard_f32(shards.items(), 17, true)
        .into_iter()
        .map(reduce_cuda::Sum)
        .collect();
    let xs = cluster.scatter_with(&items, &shards).unwrap();
    let owners = cluster.scatter_with(&owner, &shards).unwrap();
    let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
    let want = reduce_core::portable::fold_segments(&items, &offsets).unwrap();
    let portable = SegConfig::default().portable();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for placement in [Placement::Owned, Placement::All] {
        let results = [
            (
                "u32 offsets",
                cluster.reduce_segments(&xs, &offsets, portable, placement),
            ),
            (
                "u64 offsets",
                cluster.reduce_segments(&xs, &wide, portable, placement),
            ),
            (
                "owners",
                cluster.reduce_by_owner(&xs, &owners, lengths.len(), portable, placement),
            ),
            (
                "trusted owners",
                cluster.reduce_by_owner(&xs, &owners, lengths.len(), portable.trusted(), placement),
            ),
        ];
        for (form, result) in results {
            let result = result.unwrap();
            for part in result.parts() {
                let gpu = cluster.gpu(part.rank).unwrap();
                let values = gpu.download(&part.values).unwrap();
                let what = format!(
                    "portable f32 {name}, {form}, shards {lens:?}, {placement:?}, rank {}",
                    part.rank
                );
                assert_same_bits(&values, &want[part.segments.clone()], &what);
                for v in &values {
                    hash = (hash ^ v.0.to_bits() as u64).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
    }
    println!("portable-cluster-segments-hash {name} shards {lens:?} {hash:016x}");
    let affine = Affine::random_vec(shards.items(), 19);
    let xa = cluster.scatter_with(&affine, &shards).unwrap();
    let all = reduce_core::fold_segments(&affine, &offsets).unwrap();
    let result = cluster
        .reduce_segments(&xa, &offsets, portable, Placement::All)
        .unwrap();
    for part in result.parts() {
        let values = cluster
            .gpu(part.rank)
            .unwrap()
            .download(&part.values)
            .unwrap();
        assert_eq!(
            values, all,
            "portable affine {name}, shards {lens:?}, rank {}",
            part.rank
        );
    }
}

/// Layouts for the portable segmented reductions over `world` ranks: [`segment_cases`], and
/// segments of many runs with shards whose boundaries fall inside runs, on aligned blocks and
/// inside one run.
fn portable_segment_cases(world: usize) -> Vec<(&'static str, Vec<u32>, Vec<usize>)> {
    let mut cases = segment_cases(world);
    let mut rng = TestRng::new(91 + world as u64);
    let lengths: Vec<u32> = (0..300)
        .map(|i| match i % 7 {
            0 => 0,
            1 => rng.range(1, 40) as u32,
            _ => rng.range(100, 5000) as u32,
        })
        .collect();
    let n: usize = lengths.iter().map(|&l| l as usize).sum();
    for lens in portable_patterns(world, 7 + world as u64) {
        let used: usize = lens.iter().sum();
        if used <= n {
            let mut lens = lens;
            *lens.last_mut().unwrap() += n - used;
            cases.push(("long segments", lengths.clone(), lens));
        }
    }
    cases
}
