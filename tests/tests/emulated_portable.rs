//! The portable reduction's kernel logic (kernels/portable.cu, `Config::portable`) without a
//! GPU: the generated CUDA text runs on the CPU under `tests/emu/cuda_emu.hpp` (every CUDA
//! thread a fiber, barriers and warp collectives as real rendezvous, AddressSanitizer on every
//! access, the fibers of a block in three orders), block by block, the last block taking the
//! tree over the nodes — and must give `reduce_core::portable::fold`'s bits: f32 and f64 sums of
//! mixed magnitudes and signs (whose bits depend on the grouping), with zeros of both signs and
//! infinities, an exactly associative 8-byte monoid, lifted items and an input at an odd
//! offset, at sizes around runs, lanes, tiles and nodes, on grids of 1 to 7 blocks and with
//! several block sizes, tile groups and runs per lane — the knobs that must change nothing.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{portable, CudaMonoid, Lift};
use reduce_cuda::testing::{kernel_source_at, kernel_source_lifted};
use reduce_cuda::{Algorithm, Config, Sum};
use reduce_tests::emu::{check_plain, compiler};
use reduce_tests::monoids::lang::{ArgMax, LogSumExp};
use reduce_tests::monoids::wide::Record;
use reduce_tests::{Affine, Random, TestRng};
use std::fmt::Debug;

/// Three shapes of the kernel: one warp per block and one run per lane (nodes of 512 f32), two
/// warps with two runs per lane and nodes of four block tiles, and the default.
fn configs<M>() -> [Config; 3] {
    let run = portable::run_len::<M>() as u32;
    [
        Config::new(Algorithm::Shuffle)
            .portable()
            .block(32)
            .tile_group(1),
        Config::new(Algorithm::Shuffle)
            .portable()
            .block(64)
            .items_per_thread(2 * run)
            .tile_group(4),
        Config::default().portable(),
    ]
}

/// Item counts around runs, lanes, tiles and nodes of `node` items, and (`long`) 2100 nodes'
/// worth: five steps of a one-warp last block's tree, whose counter then carries twice.
fn sizes(run: usize, node: usize, long: bool) -> Vec<usize> {
    let mut n = vec![
        0,
        1,
        run - 1,
        run,
        run + 1,
        33 * run + 3,
        node - 1,
        node,
        node + 1,
    ];
    n.extend([3 * node + 5 * run + 7, 17 * node]);
    if long {
        n.push(2100 * node + 3);
    }
    n
}

/// Floats of magnitudes from 2^-10 to 2^14, both signs: sums that round at every step, whose
/// bits depend on the grouping at every level (a wider range lets the largest items decide).
fn wide_f32(n: usize, seed: u64) -> Vec<Sum<f32>> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|_| {
            let e = rng.range(117, 141) as u32;
            let bits = (rng.next_u64() as u32 & 0x807f_ffff) | (e << 23);
            Sum(f32::from_bits(bits))
        })
        .collect()
}

fn wide_f64(n: usize, seed: u64) -> Vec<Sum<f64>> {
    wide_f32(n, seed)
        .into_iter()
        .map(|x| Sum(x.0 as f64 * (1.0 + 1e-9)))
        .collect()
}

/// The portable fold of f32 items lifted into M, each with its global index.
fn fold_lifted<M: Lift<f32>>(xs: &[f32]) -> M {
    let lifted: Vec<M> = (xs.iter().enumerate())
        .map(|(i, &x)| M::lift(x, i as u64))
        .collect();
    portable::fold(&lifted)
}

fn node_items<M>(config: &Config) -> usize {
    let run = portable::run_len::<M>();
    let lane = config.items_per_thread.map_or(run, |k| k as usize);
    config.block.unwrap_or(512) as usize * lane * config.tile_group.unwrap_or(1) as usize
}

/// Sums of `random` items on every configuration; on the one-warp configuration also `steps`:
/// n items, zeros but for a few, that tell the tree over the last block's steps of `step` items
/// from any other grouping.
fn floats<M: CudaMonoid + Debug>(
    cxx: &str,
    random: impl Fn(usize, u64) -> Vec<M>,
    steps: impl Fn(usize, usize) -> Vec<M>,
    bits: impl Fn(&M) -> u64,
) {
    for (k, config) in configs::<M>().into_iter().enumerate() {
        let small = config.block == Some(32);
        let ns = sizes(portable::run_len::<M>(), node_items::<M>(&config), small);
        let mut inputs: Vec<Vec<M>> = ns.iter().map(|&n| random(n, n as u64 + 7)).collect();
        if small {
            inputs.push(steps(*ns.last().unwrap(), node_items::<M>(&config) * 512));
        }
        let source = kernel_source_at::<M>(config, 0).unwrap();
        check_plain(
            cxx,
            &source,
            &format!("{}_{k}", M::CUDA_NAME),
            &inputs,
            portable::fold,
            |a, b| bits(a) == bits(b),
        );
    }
}

#[test]
fn f32_sums_have_the_reference_bits_on_every_grid_and_shape() {
    let Some(cxx) = compiler() else { return };
    // 2^24 + 1 + 1 is 2^24 + 2 as ((s0 s1) (s2 s3)), but 2^24 as (((s0 s1) s2) s3).
    let steps = |n: usize, step: usize| {
        let mut xs = vec![Sum(0.0f32); n];
        (xs[0], xs[2 * step], xs[3 * step]) = (Sum(16777216.0), Sum(1.0), Sum(1.0));
        xs
    };
    floats::<Sum<f32>>(&cxx, wide_f32, steps, |x| x.0.to_bits() as u64);
}

#[test]
fn f64_sums_have_the_reference_bits() {
    let Some(cxx) = compiler() else { return };
    let steps = |n: usize, step: usize| {
        let mut xs = vec![Sum(0.0f64); n];
        (xs[0], xs[2 * step], xs[3 * step]) = (Sum(9007199254740992.0), Sum(1.0), Sum(1.0));
        xs
    };
    floats::<Sum<f64>>(&cxx, wide_f64, steps, |x| x.0.to_bits());
}

/// Zeros of both signs (a lone -0.0 must stay -0.0: no identity is ever combined in),
/// infinities and NaN (any NaN matches any NaN), and an input at a 4-byte offset (the kernel
/// specialised for it, vectors shifted into place).
#[test]
fn special_values_and_odd_offsets() {
    let Some(cxx) = compiler() else { return };
    let config = configs::<Sum<f32>>()[0];
    let special = [
        -0.0f32,
        -0.0,
        f32::INFINITY,
        1.5,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let mut inputs: Vec<Vec<Sum<f32>>> = vec![vec![Sum(-0.0)], vec![Sum(-0.0); 1000]];
    for n in [17usize, 600, 1500] {
        let mut xs = wide_f32(n, 3);
        for (i, x) in xs.iter_mut().enumerate().filter(|(i, _)| i % 97 == 5) {
            x.0 = special[i % special.len()];
        }
        inputs.push(xs);
    }
    let same = |a: &Sum<f32>, b: &Sum<f32>| {
        a.0.to_bits() == b.0.to_bits() || (a.0.is_nan() && b.0.is_nan())
    };
    for shift in [0u64, 4, 12] {
        let source = kernel_source_at::<Sum<f32>>(config, shift).unwrap();
        check_plain(
            &cxx,
            &source,
            &format!("special_{shift}"),
            &inputs,
            portable::fold,
            same,
        );
    }
}

/// An exactly associative, non-commutative monoid: the portable value is the sequential fold.
#[test]
fn exact_monoids_get_the_sequential_fold() {
    let Some(cxx) = compiler() else { return };
    for (k, config) in configs::<Affine>().into_iter().enumerate() {
        let ns = sizes(
            portable::run_len::<Affine>(),
            node_items::<Affine>(&config),
            k == 0,
        );
        let inputs: Vec<Vec<Affine>> = ns
            .iter()
            .map(|&n| Affine::random_vec(n, n as u64))
            .collect();
        let source = kernel_source_at::<Affine>(config, 0).unwrap();
        check_plain(
            &cxx,
            &source,
            &format!("affine_{k}"),
            &inputs,
            reduce_core::fold,
            |a, b| a == b,
        );
    }
}

/// Lifted items: the runs follow the lifted values (8-byte ArgMax from 4-byte f32), each item
/// lifted with its global index.
#[test]
fn lifted_items_group_as_their_lifted_values() {
    let Some(cxx) = compiler() else { return };
    for (k, config) in configs::<ArgMax>().into_iter().enumerate() {
        let ns = sizes(
            portable::run_len::<ArgMax>(),
            node_items::<ArgMax>(&config),
            false,
        );
        let inputs: Vec<Vec<f32>> = ns
            .iter()
            .map(|&n| wide_f32(n, n as u64).into_iter().map(|x| x.0).collect())
            .collect();
        let source = kernel_source_lifted::<ArgMax, f32>(config).unwrap();
        check_plain(
            &cxx,
            &source,
            &format!("argmax_{k}"),
            &inputs,
            fold_lifted::<ArgMax>,
            |a, b| a == b,
        );
    }
}

/// Log-sum-exp lifted from f32 logits: an `exp` (the prelude's `r_exp_f32`) in every combine,
/// inside the kernel, gives `reduce_core::math`'s bits. Logits from -120 to 20, so that the
/// scale factors run through subnormal results and underflow to 0, with -inf (masked) logits;
/// in some inputs a +inf or a NaN, which the result keeps (any grouping: the combine keeps a
/// NaN maximum, and two infinite maxima alike give the larger's sum).
#[test]
fn log_sum_exp_gives_the_cpu_bits() {
    let Some(cxx) = compiler() else { return };
    let config = Config::default().portable();
    let ns = sizes(
        portable::run_len::<LogSumExp>(),
        node_items::<LogSumExp>(&config),
        false,
    );
    let inputs: Vec<Vec<f32>> = ns
        .iter()
        .map(|&n| {
            let mut rng = TestRng::new(n as u64 + 11);
            let mut xs: Vec<f32> = (0..n)
                .map(|_| match rng.range(0, 16) {
                    0 => f32::NEG_INFINITY,
                    1 => rng.range(0, 140) as f32 - 120.0,
                    _ => (rng.next_u64() % 4096) as f32 / 256.0 - 8.0,
                })
                .collect();
            // one NaN or two +inf in every third input
            match (n % 3, n > 1) {
                (1, _) => xs[n / 2] = f32::NAN,
                (2, true) => {
                    xs[0] = f32::INFINITY;
                    xs[n - 1] = f32::INFINITY;
                }
                _ => {}
            }
            xs
        })
        .collect();
    for xs in &inputs {
        let want: LogSumExp = fold_lifted(xs);
        if xs.iter().any(|x| x.is_nan()) {
            assert!(want.m.is_nan(), "n = {}: a NaN item is kept", xs.len());
        } else if xs.contains(&f32::INFINITY) {
            assert!(want.m == f32::INFINITY && want.s >= 1.0, "n = {}", xs.len());
        }
    }
    let source = kernel_source_lifted::<LogSumExp, f32>(config).unwrap();
    let bits = |v: &LogSumExp| (v.m.to_bits(), v.s.to_bits());
    check_plain(
        &cxx,
        &source,
        "log_sum_exp",
        &inputs,
        fold_lifted::<LogSumExp>,
        |a, b| bits(a) == bits(b),
    );
}

/// Values of 2 and 4 KiB (a keep-last record, exact and non-commutative) in the portable mode: its
/// block, group and flush shrink and the block's values take a slot a warp, so that the
/// kernel's static shared memory fits; the value is the sequential fold.
#[test]
fn values_of_2_and_4_kib_get_the_sequential_fold() {
    let Some(cxx) = compiler() else { return };
    fn run<const K: usize>(cxx: &str) {
        let config = Config::default().portable();
        let source = kernel_source_at::<Record<K>>(config, 0).unwrap();
        // A run is one item, a node a block tile (32 items): within a tile, past one, and
        // nodes past a step of the last block's tree.
        let inputs: Vec<Vec<Record<K>>> = [1, 2, 33, 70, 1100]
            .into_iter()
            .map(|n| Record::<K>::random_vec(n, n as u64 + K as u64))
            .collect();
        let tag = format!("record_{}", std::mem::size_of::<Record<K>>());
        check_plain(cxx, &source, &tag, &inputs, reduce_core::fold, |a, b| {
            a == b
        });
    }
    run::<255>(&cxx);
    run::<511>(&cxx);
}
