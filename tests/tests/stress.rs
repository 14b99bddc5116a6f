//! Stress: 10^4 reductions with random sizes, algorithms and monoids from 4 host threads sharing
//! one `Gpu`, under a cap on the memory pool. Every result is checked; the pool stays under its
//! cap, the memory in live buffers and outside the pool and the number of loaded kernels stay
//! flat after a warm-up that has seen every configuration.

use reduce_core::{fold, fold_segments};
use reduce_cuda::{Algorithm, Gpu, SegAlgorithm};
use reduce_tests::*;

const THREADS: u64 = 4;
const CALLS_PER_THREAD: u64 = 2_500;
/// The pool's cap: far above what four threads' calls hold at once (at most 300,000 items of
/// 16 bytes each, their layouts, outputs and scratch), far below any device.
const POOL_CAP: usize = 512 << 20;
/// Growth allowed where the stress should leave none (a scratch region grown for a monoid the
/// warm-up did not run at its largest size).
const SLACK: usize = 64 << 20;

/// One random call; panics with context on a wrong result.
fn one_call(gpu: &Gpu, rng: &mut TestRng) {
    let n = match rng.range(0, 9) {
        0 => rng.range(0, 40) as usize,
        1..=6 => rng.range(40, 20_000) as usize,
        _ => rng.range(20_000, 300_000) as usize,
    };
    let seed = rng.next_u64();
    let plain = Algorithm::ALL[rng.range(0, Algorithm::ALL.len() as u64 - 1) as usize];
    let runs: Vec<SegAlgorithm> = (SegAlgorithm::ALL.into_iter())
        .filter(|&a| a.runs_on(gpu.info()))
        .collect();
    let seg = runs[rng.range(0, runs.len() as u64 - 1) as usize];
    match rng.range(0, 3) {
        0 => {
            let items = Affine::random_vec(n, seed);
            let got = gpu.reduce(&gpu.upload(&items).unwrap(), plain).unwrap();
            assert_eq!(got, fold(&items), "Affine n={n} {plain}");
        }
        1 => {
            let items = Mat2::random_vec(n, seed);
            let got = gpu.reduce(&gpu.upload(&items).unwrap(), plain).unwrap();
            assert_eq!(got, fold(&items), "Mat2 n={n} {plain}");
        }
        2 => {
            let items = Perm4::random_vec(n, seed);
            let got = gpu.reduce(&gpu.upload(&items).unwrap(), plain).unwrap();
            assert_eq!(got, fold(&items), "Perm4 n={n} {plain}");
        }
        _ => {
            let offsets = offsets_of(&layouts::lengths_covering(n as u32, || rng.range(0, 50)));
            let items = KeepLast::random_vec(n, seed);
            let out = gpu
                .reduce_segments(
                    &gpu.upload(&items).unwrap(),
                    &gpu.upload(&offsets).unwrap(),
                    seg,
                )
                .unwrap();
            assert_eq!(
                gpu.download(&out).unwrap(),
                fold_segments(&items, &offsets).unwrap(),
                "KeepLast n={n} {seg}"
            );
        }
    }
}

#[test]
fn ten_thousand_calls_from_four_threads() {
    let Some(gpu) = gpu() else { return };
    gpu.set_pool_cap(Some(POOL_CAP)).unwrap();
    // Warm-up: every configuration the stress uses, at the largest size (the scratch grows once).
    let mut rng = TestRng::new(1);
    for _ in 0..200 {
        one_call(&gpu, &mut rng);
    }
    for &alg in &Algorithm::ALL {
        let items = Affine::random_vec(300_000, 2);
        gpu.reduce(&gpu.upload(&items).unwrap(), alg).unwrap();
    }
    gpu.synchronize().unwrap();
    let (free_before, total) = gpu.memory_info().unwrap();
    let pool_before = gpu.pool_usage().unwrap();
    let kernels_before = gpu.loaded_kernels();

    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let gpu = gpu.clone();
            scope.spawn(move || {
                let mut rng = TestRng::new(100 + t);
                for _ in 0..CALLS_PER_THREAD {
                    one_call(&gpu, &mut rng);
                }
            });
        }
    });
    gpu.synchronize().unwrap();
    let (free_after, _) = gpu.memory_info().unwrap();
    let pool_after = gpu.pool_usage().unwrap();
    let kernels_after = gpu.loaded_kernels();
    println!(
        "stress: {} calls; pool before {pool_before:?}, after {pool_after:?}; device memory free before {free_before} after {free_after} of {total} bytes; kernels {kernels_before} -> {kernels_after}",
        THREADS * CALLS_PER_THREAD
    );
    assert!(
        pool_after.held <= POOL_CAP,
        "the pool holds more than its cap: {pool_after:?}"
    );
    assert!(
        pool_after.in_use <= pool_before.in_use + SLACK,
        "buffers leaked: {pool_before:?} -> {pool_after:?}"
    );
    // Device memory outside the pool is flat: what the device lost, the pool holds.
    let pool_growth = pool_after.held.saturating_sub(pool_before.held);
    assert!(
        free_after + pool_growth + SLACK >= free_before,
        "device memory outside the pool grew: free {free_before} -> {free_after}, pool {pool_before:?} -> {pool_after:?}"
    );
    // Bounded kernel cache: at most the configurations the calls can use.
    let bound = 3 * Algorithm::ALL.len() + SegAlgorithm::ALL.len() + 2;
    assert!(
        kernels_after <= bound.max(kernels_before),
        "kernel cache grew to {kernels_after}"
    );
}
