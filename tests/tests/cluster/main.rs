//! Reductions over several GPUs (`reduce_cuda::cluster`, feature `nccl`): one process driving
//! 1, 2, 3 and 4 GPUs, and one process per GPU (this test binary re-executes itself as one child
//! per rank and passes the NCCL unique id in an environment variable). Non-commutative monoids
//! bit for bit against the CPU fold; float sums in the portable grouping bit for bit against
//! `reduce_core::portable::fold` (one GPU's and the CPU's bits); uneven and empty shards; segments that cross one or every
//! shard boundary; bad layouts named by global index; a missing peer, a wrong rank count or a
//! peer that leaves is an error value within the timeout, never a hang.
//!
//! Needs libnccl and at least two GPUs: skipped (saying why) without them, failed with
//! `REDUCE_REQUIRE_GPU=1`. The tests run one at a time (`reduce_tests::serial`): they share the
//! GPUs, and some measure timeouts.

use reduce_core::shard::{fold_sharded_by_owner, fold_sharded_segments, ShardError, Shards};
use reduce_cuda::cluster::{Cluster, ClusterError, ClusterId, Exchange, Placement};
use reduce_cuda::{fold, Algorithm, Config, CudaMonoid, Gpu, SegAlgorithm, SegConfig};
use reduce_tests::*;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod portable;

/// The environment variable that makes this binary a rank: `scenario:rank:world:ordinal:id`.
const CHILD: &str = "REDUCE_CLUSTER_TEST_CHILD";

fn require_gpu() -> bool {
    std::env::var("REDUCE_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The number of GPUs that open.
fn gpu_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| (0..16).take_while(|&i| Gpu::new(i).is_ok()).count())
}

/// The GPU count when NCCL and at least two GPUs are there; `None` (after saying why)
/// otherwise. Panics with `REDUCE_REQUIRE_GPU=1`.
fn gpus() -> Option<usize> {
    let count = gpu_count();
    let why = if count < 2 {
        Some(format!(
            "{count} GPU(s) open here; the cluster tests need two or more"
        ))
    } else {
        // NCCL too: the tests of several processes and of the NCCL exchange need it.
        Cluster::new_with_exchange(&[0], Exchange::Nccl, Cluster::DEFAULT_TIMEOUT)
            .err()
            .map(|e| e.to_string())
    };
    match why {
        None => Some(count),
        Some(why) if require_gpu() => panic!("REDUCE_REQUIRE_GPU=1 but {why}"),
        Some(why) => {
            eprintln!(
                "cluster test skipped (set REDUCE_REQUIRE_GPU=1 to make this a failure): {why}"
            );
            None
        }
    }
}

/// Shard lengths for `world` ranks over about `n` items: even, all empty, a single non-empty
/// shard, empty shards between non-empty ones, random uneven, tiny.
fn shard_patterns(world: usize, n: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = TestRng::new(seed);
    vec![
        Shards::even(n, world).unwrap().lens(),
        vec![0; world],
        (0..world)
            .map(|r| if r == world / 2 { n } else { 0 })
            .collect(),
        (0..world)
            .map(|r| {
                if r % 2 == 1 {
                    0
                } else {
                    rng.range(1, n as u64) as usize
                }
            })
            .collect(),
        (0..world)
            .map(|_| rng.range(0, n as u64) as usize)
            .collect(),
        (0..world).map(|r| r + 1).collect(),
    ]
}

/// Plain reductions, host and device fold, against the CPU fold.
fn check_plain<M: CudaMonoid + Random>(cluster: &Cluster, lens: &[usize], seed: u64) {
    let shards = Shards::from_lens(lens).unwrap();
    let items = M::random_vec(shards.items(), seed);
    let xs = cluster.scatter_with(&items, &shards).unwrap();
    let expected = fold(&items);
    for config in [Algorithm::Auto, Algorithm::Matrix] {
        assert_eq!(
            cluster.reduce(&xs, config).unwrap(),
            expected,
            "{} over shards {lens:?} with {config:?}",
            M::CUDA_NAME
        );
    }
    let mut out = cluster.replicated::<M>().unwrap();
    for _ in 0..2 {
        cluster.reduce_into(&xs, &mut out, Algorithm::Auto).unwrap();
    }
    assert_eq!(
        cluster.read(&out).unwrap(),
        expected,
        "reduce_into {lens:?}"
    );
    for rank in cluster.local_ranks() {
        let gpu = cluster.gpu(rank).unwrap();
        assert_eq!(
            gpu.download(out.value(rank).unwrap()).unwrap(),
            vec![expected],
            "rank {rank}'s copy, shards {lens:?}"
        );
    }
}

/// A fault in the monoid's code that only the combine of the ranks' partials meets (the first
/// items of ranks 0 and 1 sum to a trap) is the GPU's error for it, not a panic or a wrong value:
/// on the host (`reduce`) and on every GPU (`reduce_into`), in both modes; the cluster then
/// reduces on.
fn check_combine_faults(cluster: &Cluster) {
    use reduce_tests::monoids::lang::Trap;
    if cluster.world_size() < 2 {
        return;
    }
    let shards = Shards::even(10_007 * cluster.world_size(), cluster.world_size()).unwrap();
    let second = shards.range(1).start;
    let trap = |first: u32, other: u32| {
        let mut items = vec![Trap { v: 0 }; shards.items()];
        items[0] = Trap { v: first };
        items[second] = Trap { v: other };
        cluster.scatter_with(&items, &shards).unwrap()
    };
    let division = trap(Trap::DIVIDES_BY_ZERO - 7, 7);
    let index = trap(1 << 30, 1 << 30);
    for config in [Config::default(), Config::default().portable()] {
        let result = cluster.reduce(&division, config);
        assert!(
            matches!(
                result,
                Err(ClusterError::Gpu(reduce_cuda::Error::DivisionFault { .. }))
            ),
            "{config:?}: {result:?}"
        );
        let result = cluster.reduce(&index, config);
        assert!(
            matches!(
                result,
                Err(ClusterError::Gpu(reduce_cuda::Error::DeviceFault {
                    index: 2,
                    len: 2,
                    ..
                }))
            ),
            "{config:?}: {result:?}"
        );
    }
    // reduce_into combines the partials on every GPU: the same faults, found there
    let mut out = cluster.replicated::<Trap>().unwrap();
    for config in [Config::default(), Config::default().portable()] {
        let result = cluster.reduce_into(&division, &mut out, config);
        assert!(
            matches!(
                result,
                Err(ClusterError::Gpu(reduce_cuda::Error::DivisionFault { .. }))
            ),
            "reduce_into, {config:?}: {result:?}"
        );
    }
    let fine = trap(5, 6);
    assert_eq!(
        cluster.reduce(&fine, Algorithm::Auto).unwrap(),
        Trap { v: 11 }
    );
    cluster
        .reduce_into(&fine, &mut out, Algorithm::Auto)
        .unwrap();
    assert_eq!(cluster.read(&out).unwrap(), Trap { v: 11 });
}

/// Segment layouts (segment lengths) and shard lengths over their items, for `world` ranks.
fn segment_cases(world: usize) -> Vec<(&'static str, Vec<u32>, Vec<usize>)> {
    let mut rng = TestRng::new(77 + world as u64);
    let mut cases = Vec::new();
    // One segment over every shard, with empty shards in the middle.
    let n = 300_001usize;
    let mut lens = Shards::even(n, world).unwrap().lens();
    if world >= 3 {
        let moved = lens[1];
        lens[1] = 0;
        lens[0] += moved;
    }
    cases.push(("one segment over every shard", vec![n as u32], lens));
    // Size 3: a boundary almost always cuts a segment.
    let lengths = vec![3u32; 100_001];
    cases.push((
        "all size 3",
        lengths,
        Shards::even(300_003, world).unwrap().lens(),
    ));
    // Random 10..50 with uneven, partly empty shards.
    let lengths: Vec<u32> = (0..20_000).map(|_| rng.range(10, 50) as u32).collect();
    let total: usize = lengths.iter().map(|&l| l as usize).sum();
    let mut cuts: Vec<usize> = (1..world)
        .map(|_| rng.range(0, total as u64) as usize)
        .collect();
    cuts.sort_unstable();
    if world >= 3 {
        cuts[1] = cuts[0]; // an empty shard in the middle
    }
    let lens = std::iter::once(0)
        .chain(cuts.iter().copied())
        .zip(cuts.iter().copied().chain(std::iter::once(total)))
        .map(|(a, b)| b - a)
        .collect();
    cases.push(("random 10..50", lengths, lens));
    // Empty segments exactly on the shard boundaries, and at both ends.
    let piece = 1000u32;
    let mut lengths = vec![0, 0];
    for _ in 0..world {
        lengths.extend([piece / 2, piece / 2, 0, 0, 0]);
    }
    lengths.extend([0, 0, 0]);
    cases.push((
        "empty segments on the boundaries",
        lengths,
        vec![piece as usize; world],
    ));
    // No items, some segments.
    cases.push(("no items", vec![0; 5], vec![0; world]));
    cases
}

/// Both forms, both placements, two algorithms: owned parts against the CPU plan, all
/// segments against the sequential segmented fold.
fn check_segments<M: CudaMonoid + Random>(
    cluster: &Cluster,
    name: &str,
    lengths: &[u32],
    lens: &[usize],
    seed: u64,
) {
    let offsets = offsets_of(lengths);
    let owner = owners_of(lengths);
    let shards = Shards::from_lens(lens).unwrap();
    assert_eq!(shards.items(), *offsets.last().unwrap() as usize, "{name}");
    let items = M::random_vec(shards.items(), seed);
    let xs = cluster.scatter_with(&items, &shards).unwrap();
    let owners = cluster.scatter_with(&owner, &shards).unwrap();
    let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
    let all = reduce_core::fold_segments(&items, &offsets).unwrap();
    let owned = fold_sharded_segments(&shards, &items, &offsets).unwrap();
    assert_eq!(
        owned,
        fold_sharded_by_owner(&shards, &items, &owner, lengths.len()).unwrap()
    );
    for config in [
        SegConfig::new(SegAlgorithm::Auto),
        SegConfig::new(SegAlgorithm::MatrixSeg),
    ] {
        for placement in [Placement::Owned, Placement::All] {
            let by_offsets = cluster
                .reduce_segments(&xs, &wide, config, placement)
                .unwrap();
            let by_owner = cluster
                .reduce_by_owner(&xs, &owners, lengths.len(), config, placement)
                .unwrap();
            for result in [by_offsets, by_owner] {
                for part in result.parts() {
                    let gpu = cluster.gpu(part.rank).unwrap();
                    let values = gpu.download(&part.values).unwrap();
                    let what = format!(
                        "{} {name}, shards {lens:?}, {:?}, {placement:?}, rank {}",
                        M::CUDA_NAME,
                        config.algorithm,
                        part.rank
                    );
                    match placement {
                        Placement::Owned => {
                            assert_eq!(part.segments, result.plan().owned(part.rank), "{what}");
                            assert_eq!(values, owned[part.rank], "{what}");
                        }
                        Placement::All => {
                            assert_eq!(part.segments, 0..lengths.len(), "{what}");
                            assert_eq!(values, all, "{what}");
                        }
                    }
                }
            }
        }
    }
}

/// Bad layouts over shards: the same typed error as the CPU plan, naming global indices.
fn check_bad_layouts(cluster: &Cluster) {
    let world = cluster.world_size();
    // Shards that start and end inside runs (8 Affine items): the portable grouping cuts each
    // into raw items at its ends and aligned blocks between.
    let lens = vec![1003usize; world];
    let shards = Shards::from_lens(&lens).unwrap();
    let n = shards.items();
    let items = Affine::random_vec(n, 5);
    let xs = cluster.scatter_with(&items, &shards).unwrap();
    let segments = n.div_ceil(10);
    let good: Vec<u32> = (0..n as u32).map(|i| i / 10).collect();
    let last = shards.range(world - 1);
    let mut cases: Vec<(&str, Vec<u32>)> = Vec::new();
    let mut inside = good.clone();
    inside[n - 500] = 0; // unsorted inside the last shard
    cases.push(("unsorted inside a shard", inside));
    let mut out_of_range = good.clone();
    out_of_range[n - 1] = segments as u32 + 3;
    cases.push(("out of range at the end", out_of_range));
    // Where the portable grouping's pieces meet: the last shard's first run boundary, an item
    // of its head (before that boundary) and of its tail (after its last boundary).
    let boundary = last.start.next_multiple_of(8);
    for (name, at) in [
        ("unsorted at a piece boundary", boundary),
        ("unsorted in a shard's head", boundary.saturating_sub(1)),
        ("unsorted in a shard's tail", last.end - 1),
    ] {
        if last.contains(&at) && at > last.start {
            let mut bad = good.clone();
            bad[at] = 0;
            cases.push((name, bad));
        }
    }
    if world > 1 {
        let mut across = good.clone();
        for o in &mut across[shards.range(1)] {
            *o = 0; // shard 1 starts below shard 0's last owner, sorted inside
        }
        for o in &mut across[shards.range(1).end..] {
            *o = (*o).max(99);
        }
        cases.push(("unsorted across shards", across));
    }
    let portable = SegConfig::new(SegAlgorithm::Auto).portable();
    for (name, owner) in cases {
        let expected = fold_sharded_by_owner(&shards, &items, &owner, segments).unwrap_err();
        let owners = cluster.scatter_with(&owner, &shards).unwrap();
        let index = match expected {
            ShardError::OwnerNotSorted { index, .. }
            | ShardError::OwnerOutOfRange { index, .. } => index,
            ref other => panic!("{name}: {other:?}"),
        };
        let culprit = (0..world).find(|&r| shards.range(r).contains(&index));
        for config in [SegConfig::new(SegAlgorithm::Auto), portable] {
            match cluster.reduce_by_owner(&xs, &owners, segments, config, Placement::Owned) {
                Err(ClusterError::Shard(e)) => assert_eq!(e, expected, "{name}, {config:?}"),
                // One process per GPU: the other ranks learn that the culprit's shard is bad.
                Err(ClusterError::PeerFailed { rank, .. })
                    if Some(rank) == culprit && !cluster.local_ranks().contains(&rank) => {}
                other => panic!("{name}, {config:?}: expected {expected:?}, got {other:?}"),
            }
        }
    }
    let mut offsets: Vec<u64> = (0..=segments as u64).map(|s| s * 10).collect();
    offsets[7] = 5;
    for config in [SegConfig::new(SegAlgorithm::Auto), portable] {
        match cluster.reduce_segments(&xs, &offsets, config, Placement::Owned) {
            Err(ClusterError::Shard(ShardError::OffsetsDecreasing { index: 7, .. })) => {}
            other => panic!("decreasing offsets, {config:?}: {other:?}"),
        }
    }
    let short: Vec<u64> = vec![0, 10];
    assert!(matches!(
        cluster.reduce_segments(&xs, &short, SegAlgorithm::Auto, Placement::Owned),
        Err(ClusterError::Shard(ShardError::LastOffsetNotLen { .. }))
    ));
    // The cluster still works after input errors.
    assert_eq!(cluster.reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
}

/// NVLink SHARP is off in a program that links the cluster, from before `main`: the variable
/// is set as the program loads, not when NCCL is first called (run this binary without
/// `NCCL_NVLS_ENABLE` in the environment, as CI does, for it to say something).
#[test]
fn nvls_is_off_before_any_cluster_call() {
    assert!(std::env::var_os("NCCL_NVLS_ENABLE").is_some());
}

#[test]
fn one_process_many_gpus() {
    if child().is_some() {
        return;
    }
    let _serial = serial();
    let Some(count) = gpus() else { return };
    let worlds: Vec<usize> = [1, 2, 3, 4].into_iter().filter(|&w| w <= count).collect();
    // Auto: peer access where the GPUs have it; then NCCL, the exchange of several processes.
    for (&world, exchange) in worlds
        .iter()
        .flat_map(|w| [(w, Exchange::Auto), (w, Exchange::Nccl)])
    {
        let ordinals: Vec<usize> = (0..world).collect();
        let cluster =
            Cluster::new_with_exchange(&ordinals, exchange, Cluster::DEFAULT_TIMEOUT).unwrap();
        if exchange == Exchange::Nccl {
            assert_eq!(cluster.exchange(), Exchange::Nccl);
        }
        assert_eq!(cluster.local_ranks(), ordinals);
        for (i, lens) in shard_patterns(world, 1_000_003, world as u64)
            .iter()
            .enumerate()
        {
            check_plain::<Affine>(&cluster, lens, i as u64);
            check_plain::<Mat2>(&cluster, lens, i as u64 + 100);
            check_plain::<KeepFirst>(&cluster, lens, i as u64 + 200);
        }
        check_plain::<RollingHash>(&cluster, &Shards::even(77_777, world).unwrap().lens(), 3);
        check_plain::<Mat3>(&cluster, &Shards::even(55_555, world).unwrap().lens(), 4);
        check_plain::<Perm4>(&cluster, &Shards::even(99_999, world).unwrap().lens(), 5);
        for (name, lengths, lens) in segment_cases(world) {
            check_segments::<Affine>(&cluster, name, &lengths, &lens, 11);
            check_segments::<KeepLast>(&cluster, name, &lengths, &lens, 12);
        }
        check_segments::<Mat2>(
            &cluster,
            "random",
            &[5, 0, 70_000, 1, 1, 0, 33_333, 2],
            &Shards::even(103_342, world).unwrap().lens(),
            13,
        );
        check_bad_layouts(&cluster);
        check_combine_faults(&cluster);
        portable::check_all(&cluster);
        // Built from each rank's own buffer.
        let items = Affine::random_vec(123_457, 9);
        let shards = Shards::even(items.len(), world).unwrap();
        let parts = cluster
            .local_ranks()
            .into_iter()
            .map(|r| {
                cluster
                    .gpu(r)
                    .unwrap()
                    .upload(&items[shards.range(r)])
                    .unwrap()
            })
            .collect();
        let xs = cluster.shard(parts).unwrap();
        assert_eq!(xs.shards(), &shards);
        assert_eq!(cluster.reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
        eprintln!(
            "one process, {world} GPU(s), {:?}: ok (NCCL {:?})",
            cluster.exchange(),
            cluster.nccl_version()
        );
    }
    println!("cluster tests in one process ran with worlds {worlds:?}, Auto and NCCL");
}

/// The peer-access exchange in one process: chosen by `Auto` where every pair of GPUs can
/// reach each other; many queued reductions of two monoids into two outputs, each exchange
/// reusing the mailboxes of the one before, and segmented calls between them, all equal to the
/// fold; a cluster dropped with nothing pending, and a new one on the same GPUs.
#[test]
fn peer_access_exchange_back_to_back() {
    if child().is_some() {
        return;
    }
    let _serial = serial();
    let Some(count) = gpus() else { return };
    let ordinals: Vec<usize> = (0..count.min(4)).collect();
    let cluster =
        match Cluster::new_with_exchange(&ordinals, Exchange::PeerAccess, Cluster::DEFAULT_TIMEOUT)
        {
            Ok(cluster) => cluster,
            Err(e) => {
                eprintln!("no peer access between GPUs {ordinals:?} ({e}): Auto uses NCCL");
                let auto = Cluster::new(&ordinals).unwrap();
                assert_eq!(auto.exchange(), Exchange::Nccl);
                return;
            }
        };
    assert_eq!(
        Cluster::new(&ordinals).unwrap().exchange(),
        Exchange::PeerAccess
    );
    assert_eq!(cluster.nccl_version(), "");
    let world = ordinals.len();
    let a_items = Affine::random_vec(300_007, 21);
    // Uneven shards (random lengths).
    let m_shards = Shards::from_lens(&shard_patterns(world, 200_003, 5)[4]).unwrap();
    let m_items = Mat2::random_vec(m_shards.items(), 22);
    let a = cluster.scatter(&a_items).unwrap();
    let m = cluster.scatter_with(&m_items, &m_shards).unwrap();
    let (a_fold, m_fold) = (fold(&a_items), fold(&m_items));
    let mut a_out = cluster.replicated::<Affine>().unwrap();
    let mut m_out = cluster.replicated::<Mat2>().unwrap();
    for round in 0..100 {
        cluster
            .reduce_into(&a, &mut a_out, Algorithm::Auto)
            .unwrap();
        cluster
            .reduce_into(&m, &mut m_out, Algorithm::Auto)
            .unwrap();
        if round % 25 == 0 {
            assert_eq!(cluster.reduce(&m, Algorithm::Auto).unwrap(), m_fold);
            let (name, lengths, lens) = segment_cases(world).swap_remove(round % 3);
            check_segments::<Affine>(&cluster, name, &lengths, &lens, round as u64);
        }
    }
    assert_eq!(cluster.read(&a_out).unwrap(), a_fold);
    assert_eq!(cluster.read(&m_out).unwrap(), m_fold);
    for rank in cluster.local_ranks() {
        let gpu = cluster.gpu(rank).unwrap();
        assert_eq!(
            gpu.download(a_out.value(rank).unwrap()).unwrap(),
            vec![a_fold]
        );
        assert_eq!(
            gpu.download(m_out.value(rank).unwrap()).unwrap(),
            vec![m_fold]
        );
    }
    drop((a, m, a_out, m_out, cluster));
    let again = Cluster::new(&ordinals).unwrap();
    let xs = again.scatter(&a_items).unwrap();
    assert_eq!(again.reduce(&xs, Algorithm::Auto).unwrap(), a_fold);
}

/// Float sums over shards are deterministic from run to run (same grouping every time).
#[test]
fn float_sums_are_deterministic() {
    if child().is_some() {
        return;
    }
    let _serial = serial();
    let Some(count) = gpus() else { return };
    let cluster = Cluster::new(&(0..count.min(4)).collect::<Vec<_>>()).unwrap();
    let mut rng = TestRng::new(3);
    let items: Vec<reduce_cuda::Sum<f32>> = (0..4_000_037)
        .map(|_| reduce_cuda::Sum(f32::from_bits(rng.next_u32() & 0x3fff_ffff) - 1.0))
        .collect();
    let xs = cluster.scatter(&items).unwrap();
    let first = cluster.reduce(&xs, Algorithm::Auto).unwrap().0.to_bits();
    for _ in 0..20 {
        assert_eq!(
            cluster.reduce(&xs, Algorithm::Auto).unwrap().0.to_bits(),
            first
        );
    }
}

/// Buffers of another cluster or another shape are errors, not UB; the portable grouping over
/// two ranks gives one rank's bits.
#[test]
fn foreign_and_mismatched_data_are_errors() {
    if child().is_some() {
        return;
    }
    let _serial = serial();
    let Some(_) = gpus() else { return };
    let a = Cluster::new(&[0]).unwrap();
    let b = Cluster::new(&[0]).unwrap();
    let pair = Cluster::new(&[0, 1]).unwrap();
    let items = Affine::random_vec(1000, 1);
    let xs = a.scatter(&items).unwrap();
    assert!(matches!(
        b.reduce(&xs, Algorithm::Auto),
        Err(ClusterError::Gpu(reduce_cuda::Error::ForeignBuffer { .. }))
    ));
    assert!(matches!(
        pair.reduce(&xs, Algorithm::Auto),
        Err(ClusterError::Mismatch { .. })
    ));
    assert!(matches!(
        pair.scatter_with(&items, &Shards::even(1000, 3).unwrap()),
        Err(ClusterError::Mismatch { .. })
    ));
    assert!(matches!(
        pair.scatter_with(&items, &Shards::even(999, 2).unwrap()),
        Err(ClusterError::Shard(ShardError::LengthMismatch { .. }))
    ));
    let out = a.replicated::<Affine>().unwrap();
    assert!(matches!(
        pair.read(&out),
        Err(ClusterError::Mismatch { .. })
    ));
    assert_eq!(a.reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
    // The portable grouping: one rank's is one GPU's; over several ranks `reduce` and
    // `reduce_into` give it.
    let portable = reduce_cuda::Config::default().portable();
    assert_eq!(a.reduce(&xs, portable).unwrap(), fold(&items));
    let spread = pair.scatter(&items).unwrap();
    assert_eq!(pair.reduce(&spread, portable).unwrap(), fold(&items));
    let mut out = pair.replicated::<Affine>().unwrap();
    pair.reduce_into(&spread, &mut out, portable).unwrap();
    assert_eq!(pair.read(&out).unwrap(), fold(&items));
    // So do the segmented reductions.
    let seg_portable = SegConfig::default().portable();
    let offsets = [0u32, 300, 300, 1000];
    let owners = pair.scatter(&owners_of(&[300, 0, 700])).unwrap();
    let want = reduce_core::fold_segments(&items, &offsets).unwrap();
    for placement in [Placement::Owned, Placement::All] {
        let by_offsets = pair.reduce_segments(&spread, &offsets, seg_portable, placement);
        let by_owner = pair.reduce_by_owner(&spread, &owners, 3, seg_portable, placement);
        for result in [by_offsets.unwrap(), by_owner.unwrap()] {
            for part in result.parts() {
                let values = pair.gpu(part.rank).unwrap().download(&part.values).unwrap();
                assert_eq!(values, want[part.segments.clone()]);
            }
        }
    }
    // An algorithm without the portable grouping is refused on every rank, even where no
    // shard holds a whole aligned block (shards of 3 items: no launch to check it).
    let tiny = pair.scatter(&items[..6]).unwrap();
    let merge = SegConfig::new(SegAlgorithm::SegMerge).portable();
    for (lengths, offsets) in [(vec![6u32], vec![0u32, 6]), (vec![2, 4], vec![0, 2, 6])] {
        let owners = pair.scatter(&owners_of(&lengths)).unwrap();
        for result in [
            pair.reduce_segments(&tiny, &offsets, merge, Placement::Owned),
            pair.reduce_by_owner(&tiny, &owners, lengths.len(), merge, Placement::Owned),
            pair.reduce_segments(&spread, &[0u32, 1000], merge, Placement::Owned),
        ] {
            assert!(matches!(
                result,
                Err(ClusterError::Gpu(reduce_cuda::Error::InvalidConfig { .. }))
            ));
        }
    }
    let one = a.reduce_segments(&xs, &offsets, seg_portable, Placement::All);
    assert_eq!(
        a.gpu(0)
            .unwrap()
            .download(&one.unwrap().parts()[0].values)
            .unwrap(),
        want
    );
}

// ------------------------------------------------------------- one process per GPU

/// This process's role when it is a child rank.
struct Role {
    scenario: String,
    rank: usize,
    world: usize,
    ordinal: usize,
    id: ClusterId,
}

fn child() -> Option<Role> {
    let text = std::env::var(CHILD).ok()?;
    let mut fields = text.splitn(5, ':');
    let mut next = || fields.next().expect("scenario:rank:world:ordinal:id");
    let scenario = next().to_string();
    let rank = next().parse().unwrap();
    let world = next().parse().unwrap();
    let ordinal = next().parse().unwrap();
    let id = ClusterId::from_hex(next()).unwrap();
    Some(Role {
        scenario,
        rank,
        world,
        ordinal,
        id,
    })
}

/// Starts one child per (rank, world, ordinal), running `test` in `scenario`.
fn spawn(
    test: &str,
    scenario: &str,
    ranks: &[(usize, usize, usize)],
    id: &ClusterId,
) -> Vec<(Child, std::path::PathBuf)> {
    let exe = std::env::current_exe().unwrap();
    ranks
        .iter()
        .map(|&(rank, world, ordinal)| {
            let log = std::env::temp_dir().join(format!(
                "reduce-cluster-{}-{scenario}-{rank}.log",
                std::process::id()
            ));
            let file = std::fs::File::create(&log).unwrap();
            let child = Command::new(&exe)
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env(
                    CHILD,
                    format!("{scenario}:{rank}:{world}:{ordinal}:{}", id.to_hex()),
                )
                .stdout(Stdio::from(file.try_clone().unwrap()))
                .stderr(Stdio::from(file))
                .spawn()
                .unwrap();
            (child, log)
        })
        .collect()
}

/// Waits for every child (killing them all past `limit`) and asserts that each passed.
fn expect_success(what: &str, children: Vec<(Child, std::path::PathBuf)>, limit: Duration) {
    let start = Instant::now();
    let mut children: Vec<_> = children
        .into_iter()
        .map(|(c, log)| (c, log, None))
        .collect();
    while children.iter().any(|(_, _, status)| status.is_none()) {
        for (child, _, status) in &mut children {
            if status.is_none() {
                *status = child.try_wait().unwrap();
            }
        }
        if start.elapsed() > limit {
            for (child, _, status) in &mut children {
                if status.is_none() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
            let logs: Vec<String> = children
                .iter()
                .map(|(_, log, _)| std::fs::read_to_string(log).unwrap_or_default())
                .collect();
            panic!(
                "{what}: the ranks did not finish within {limit:?} (a hang):\n{}",
                logs.join("\n----\n")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (i, (_, log, status)) in children.iter().enumerate() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let _ = std::fs::remove_file(log);
        assert!(
            status.unwrap().success(),
            "{what}: rank {i} failed ({:?}):\n{text}",
            status.unwrap()
        );
        eprintln!(
            "{what}, rank {i}: {}",
            text.lines()
                .filter(|l| l.starts_with("rank "))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
}

#[test]
fn one_process_per_gpu() {
    if let Some(role) = child() {
        return run_child(role);
    }
    let _serial = serial();
    let Some(count) = gpus() else { return };
    for world in [2, 4].into_iter().filter(|&w| w <= count) {
        let id = ClusterId::new().unwrap();
        let ranks: Vec<_> = (0..world).map(|r| (r, world, r)).collect();
        let children = spawn("one_process_per_gpu", "work", &ranks, &id);
        expect_success(
            &format!("{world} processes"),
            children,
            Duration::from_secs(100),
        );
    }
}

#[test]
fn a_missing_rank_or_a_wrong_world_is_a_timeout() {
    if let Some(role) = child() {
        return run_child(role);
    }
    let _serial = serial();
    let Some(_) = gpus() else { return };
    // Rank 1 of 2 never comes.
    let id = ClusterId::new().unwrap();
    let children = spawn(
        "a_missing_rank_or_a_wrong_world_is_a_timeout",
        "alone",
        &[(0, 2, 0)],
        &id,
    );
    expect_success("a missing rank", children, Duration::from_secs(60));
    // The ranks disagree on the world size.
    let id = ClusterId::new().unwrap();
    let children = spawn(
        "a_missing_rank_or_a_wrong_world_is_a_timeout",
        "alone",
        &[(0, 2, 0), (1, 3, 1)],
        &id,
    );
    expect_success("a wrong world size", children, Duration::from_secs(60));
}

/// Ranks in two processes given different inputs: offsets that move a partial another rank
/// joins, another monoid of the same size (segmented, plain in the default mode and in the
/// portable grouping), other shards in the portable grouping. Each is
/// `Mismatch` on both ranks, never a value of other items or other types, nor a hang.
#[test]
fn ranks_given_different_inputs_are_a_mismatch() {
    if let Some(role) = child() {
        return run_child(role);
    }
    let _serial = serial();
    let Some(_) = gpus() else { return };
    let test = "ranks_given_different_inputs_are_a_mismatch";
    two_ranks(
        test,
        "disagree",
        "ranks that disagree",
        Duration::from_secs(100),
    );
}

#[test]
fn a_peer_that_leaves_is_an_error() {
    if let Some(role) = child() {
        return run_child(role);
    }
    let _serial = serial();
    let Some(_) = gpus() else { return };
    let test = "a_peer_that_leaves_is_an_error";
    two_ranks(test, "leave", "a peer that leaves", Duration::from_secs(60));
}

/// Ranks 0 and 1 of two processes on GPUs 0 and 1, running `scenario` as test `test`; each
/// must pass within `limit`.
fn two_ranks(test: &str, scenario: &str, what: &str, limit: Duration) {
    let id = ClusterId::new().unwrap();
    let children = spawn(test, scenario, &[(0, 2, 0), (1, 2, 1)], &id);
    expect_success(what, children, limit);
}

/// The `disagree` scenario's calls on rank `rank` of two (every collective call made by both
/// ranks in the same order).
fn disagree(cluster: &Cluster, rank: usize) {
    use reduce_cuda::{Config, Sum};
    let gpu = cluster.gpu(rank).unwrap();
    let mismatch = |result: Result<(), ClusterError>, what: &str| match result {
        Err(ClusterError::Mismatch { what: w, .. }) if w == what => {}
        other => panic!("rank {rank}: expected a mismatch of {what}, got {other:?}"),
    };
    let shard = |lens: [usize; 2]| {
        let items: Vec<Sum<u32>> = (0..10).map(Sum).collect();
        let range = Shards::from_lens(&lens).unwrap().range(rank);
        cluster
            .shard(vec![gpu.upload(&items[range]).unwrap()])
            .unwrap()
    };
    let xs = shard([5, 5]);
    let theirs = shard([6, 4]);
    let floats: Vec<Sum<f32>> = (0..10).map(|i| Sum(i as f32)).collect();
    let range = Shards::from_lens(&[5, 5]).unwrap().range(rank);
    let ys = cluster
        .shard(vec![gpu.upload(&floats[range]).unwrap()])
        .unwrap();
    let owned = Placement::Owned;
    // Rank 1's offsets end segment 1 at 7, rank 0's at 8: the partial of items 5.. that rank 0
    // joins into segment 1 covers other items. Both ranks see it, so neither goes on alone to
    // the broadcast of `Placement::All`.
    let offsets: [u32; 4] = if rank == 0 {
        [0, 2, 8, 10]
    } else {
        [0, 2, 7, 10]
    };
    for placement in [owned, Placement::All] {
        let result = cluster.reduce_segments(&xs, &offsets, SegConfig::default(), placement);
        mismatch(result.map(drop), "the offsets");
    }
    // Another monoid of the same size (u32 sums on rank 0, f32 sums on rank 1): both ranks
    // refuse before reading the other's bytes.
    let offsets = [0u32, 3, 10];
    let result = match rank {
        0 => cluster
            .reduce_segments(&xs, &offsets, SegConfig::default(), owned)
            .map(drop),
        _ => cluster
            .reduce_segments(&ys, &offsets, SegConfig::default(), owned)
            .map(drop),
    };
    mismatch(result, "the monoid");
    // The default mode, another monoid of the same size: both ranks read each other's status
    // as a mismatch before they fold bytes of another type, returned (`reduce`) or read back
    // (`reduce_into`).
    let default = Config::default();
    let result = match rank {
        0 => cluster.reduce(&xs, default).map(drop),
        _ => cluster.reduce(&ys, default).map(drop),
    };
    mismatch(result, "the monoid");
    let result = match rank {
        0 => {
            let mut out = cluster.replicated::<Sum<u32>>().unwrap();
            (cluster.reduce_into(&xs, &mut out, default))
                .and_then(|()| cluster.read(&out).map(drop))
        }
        _ => {
            let mut out = cluster.replicated::<Sum<f32>>().unwrap();
            (cluster.reduce_into(&ys, &mut out, default))
                .and_then(|()| cluster.read(&out).map(drop))
        }
    };
    mismatch(result, "the monoid");
    // Portable: other shards on rank 1 (both made collectively), then another monoid.
    let portable = Config::default().portable();
    let mine = if rank == 0 { &xs } else { &theirs };
    mismatch(cluster.reduce(mine, portable).map(drop), "the items");
    let result = match rank {
        0 => cluster.reduce(&xs, portable).map(drop),
        _ => cluster.reduce(&ys, portable).map(drop),
    };
    mismatch(result, "the monoid");
}

/// What a child rank does; a panic fails it (exit code 101).
fn run_child(role: Role) {
    let Role {
        scenario,
        rank,
        world,
        ordinal,
        id,
    } = role;
    let short = Duration::from_secs(5);
    match scenario.as_str() {
        "work" => {
            let cluster =
                Cluster::join_with_timeout(&id, rank, world, ordinal, Duration::from_secs(60))
                    .unwrap();
            assert_eq!(cluster.local_ranks(), vec![rank]);
            for (i, lens) in shard_patterns(world, 500_009, 40 + world as u64)
                .iter()
                .enumerate()
            {
                check_plain::<Affine>(&cluster, lens, i as u64);
                check_plain::<Mat2>(&cluster, lens, i as u64 + 50);
            }
            for (name, lengths, lens) in segment_cases(world) {
                check_segments::<Affine>(&cluster, name, &lengths, &lens, 21);
            }
            check_bad_layouts(&cluster);
            portable::check_all(&cluster);
            let items = KeepLast::random_vec(200_003, 8);
            let shards = Shards::even(items.len(), world).unwrap();
            let own = cluster
                .gpu(rank)
                .unwrap()
                .upload(&items[shards.range(rank)])
                .unwrap();
            let xs = cluster.shard(vec![own]).unwrap();
            assert_eq!(cluster.reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
            println!(
                "rank {rank} of {world}: ok (NCCL {})",
                cluster.nccl_version()
            );
        }
        "disagree" => {
            let cluster =
                Cluster::join_with_timeout(&id, rank, world, ordinal, Duration::from_secs(60))
                    .unwrap();
            disagree(&cluster, rank);
            println!("rank {rank}: every disagreement was a mismatch");
        }
        "alone" => {
            let start = Instant::now();
            let result = Cluster::join_with_timeout(&id, rank, world, ordinal, short);
            let waited = start.elapsed();
            match result {
                Err(e @ (ClusterError::Timeout { .. } | ClusterError::Nccl { .. })) => {
                    println!("rank {rank} (world {world}): {e} after {waited:?}")
                }
                other => panic!("rank {rank}: expected a timeout, got {other:?}"),
            }
            assert!(waited < short + Duration::from_secs(30), "took {waited:?}");
        }
        "leave" => {
            let mut cluster =
                Cluster::join_with_timeout(&id, rank, world, ordinal, Duration::from_secs(60))
                    .unwrap();
            let items = Affine::random_vec(100_000, 1);
            let xs = cluster.scatter(&items).unwrap();
            assert_eq!(cluster.reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
            if rank == 1 {
                println!("rank 1: leaving");
                std::process::exit(0);
            }
            std::thread::sleep(Duration::from_secs(1));
            cluster.set_timeout(short);
            let start = Instant::now();
            let result = cluster.reduce(&xs, Algorithm::Auto);
            let waited = start.elapsed();
            match result {
                Err(e @ (ClusterError::Timeout { .. } | ClusterError::Nccl { .. })) => {
                    println!("rank 0: {e} after {waited:?}")
                }
                other => panic!("rank 0: expected an error, got {other:?}"),
            }
            assert!(waited < short + Duration::from_secs(30), "took {waited:?}");
            assert!(cluster.is_aborted());
            assert!(matches!(
                cluster.reduce(&xs, Algorithm::Auto),
                Err(ClusterError::Aborted)
            ));
            println!("rank 0: aborted, later calls are errors");
        }
        other => panic!("unknown scenario {other}"),
    }
}
