//! The portable mode (`Config::portable`) on the GPU: float reductions whose bits are those of
//! the CPU reference `reduce_core::portable::fold` — f32 and f64 sums and a float monoid of two
//! fields (log-sum-exp), random and adversarial inputs (cancellation, mixed magnitudes, NaN,
//! zeros of both signs, infinities, subnormals), sizes around runs, lanes, tiles and nodes,
//! with the knobs forced (grids of 1, 7, 132 and 1000 blocks, blocks of 32 to 1024 threads, tile
//! groups, runs per lane), lifted inputs and views at odd offsets; the CPU backend gives the
//! same bits; and the configurations the mode refuses are typed errors. Each case prints a
//! hash of its bits (`portable-hash`), to compare devices.
//!
//! GPU tests skip without a device and fail under `REDUCE_REQUIRE_GPU=1`; the refusals run
//! everywhere.

use reduce_bench::monoids::LogSumExp;
use reduce_core::{portable, Lift};
use reduce_cuda::{Algorithm, Backend, Config, CudaMonoid, Error, Gpu, Sum};
use reduce_tests::floats::SameBits;
use reduce_tests::{bits_hash, gpu, placed, TestRng};

/// Item counts around runs (16 f32), lanes, tiles (512 f32), block tiles (8192) and nodes, and
/// large ones (many nodes: the last block's tree takes several steps).
const SIZES: [usize; 14] = [
    0,
    1,
    15,
    16,
    17,
    511,
    513,
    8191,
    8193,
    65_537,
    1_000_003,
    (1 << 20) + 7,
    (1 << 24) + 3,
    (1 << 26) + 5,
];

/// The knobs that must not change a bit.
fn configs() -> Vec<Config> {
    let portable = Config::default().portable();
    let shuffle = Config::new(Algorithm::Shuffle).portable();
    vec![
        portable,
        shuffle,
        portable.grid(1),
        portable.grid(7),
        portable.grid(132),
        portable.grid(1000),
        shuffle.block(32).tile_group(1),
        shuffle.block(128).tile_group(8).grid(7),
        shuffle.block(1024),
        shuffle.block(256).tile_group(2),
    ]
}

/// `configs` plus two runs per lane for a run of `run` items.
fn configs_for(run: u32) -> Vec<Config> {
    let mut c = configs();
    c.push(Config::default().portable().items_per_thread(2 * run));
    c.push(
        Config::default()
            .portable()
            .items_per_thread(4 * run)
            .grid(3),
    );
    c
}

/// Runs every configuration on `items` and compares with the reference bits (any NaN matching
/// any NaN).
fn check<M: CudaMonoid + SameBits>(gpu: &Gpu, name: &str, items: &[M]) {
    let want = portable::fold(items);
    println!(
        "portable-hash {name} n={} {:016x}",
        items.len(),
        bits_hash(std::slice::from_ref(&want))
    );
    let xs = gpu.upload(items).unwrap();
    let run = portable::run_len::<M>() as u32;
    for config in configs_for(run) {
        let got = gpu
            .reduce(&xs, config)
            .unwrap_or_else(|e| panic!("{name} n={} {config:?}: {e}", items.len()));
        assert!(
            got.same_bits(&want),
            "{name} n={} {config:?}: {got:?} != {want:?}",
            items.len()
        );
    }
}

/// Random f32 of magnitudes 2^-10 to 2^14, both signs: a sum rounds at every step.
fn mixed(rng: &mut TestRng) -> f32 {
    let e = rng.range(117, 141) as u32;
    f32::from_bits((rng.next_u64() as u32 & 0x807f_ffff) | (e << 23))
}

/// The inputs of one size: random mixed magnitudes; cancellation (pairs x, -x around a few
/// small values); every exponent (subnormals included) with zeros of both signs; and the last
/// with infinities and NaN sprinkled in.
fn f32_inputs(n: usize, seed: u64) -> Vec<(&'static str, Vec<f32>)> {
    let mut rng = TestRng::new(seed);
    let random: Vec<f32> = (0..n).map(|_| mixed(&mut rng)).collect();
    let cancel: Vec<f32> = (0..n)
        .map(|i| {
            let x = (1u64 << rng.range(10, 30)) as f32;
            if i % 64 == 63 {
                mixed(&mut rng) * 1e-3
            } else if i % 2 == 0 {
                x
            } else {
                -x * 1.000_000_1
            }
        })
        .collect();
    let every: Vec<f32> = (0..n)
        .map(|i| match i % 41 {
            0 => -0.0,
            1 => 0.0,
            2 => f32::from_bits(rng.range(1, 0x80_0000) as u32), // subnormal
            _ => f32::from_bits(rng.next_u64() as u32 & 0xff7f_ffff),
        })
        .collect();
    let mut special = random.clone();
    for (i, x) in special.iter_mut().enumerate() {
        match i % 4099 {
            7 => *x = f32::INFINITY,
            2000 => *x = f32::NEG_INFINITY,
            4000 => *x = f32::NAN,
            _ => {}
        }
    }
    vec![
        ("random", random),
        ("cancel", cancel),
        ("every-exponent", every),
        ("special", special),
    ]
}

#[test]
fn f32_sums_equal_the_reference_with_every_knob() {
    let Some(gpu) = gpu() else { return };
    for (k, &n) in SIZES.iter().enumerate() {
        for (what, xs) in f32_inputs(n, k as u64) {
            let items: Vec<Sum<f32>> = xs.into_iter().map(Sum).collect();
            check(&gpu, &format!("f32-{what}"), &items);
        }
    }
}

#[test]
fn f64_sums_equal_the_reference_with_every_knob() {
    let Some(gpu) = gpu() else { return };
    for (k, &n) in SIZES.iter().enumerate() {
        for (what, xs) in f32_inputs(n, 100 + k as u64) {
            let items: Vec<Sum<f64>> = xs
                .into_iter()
                .map(|x| Sum(x as f64 * (1.0 + 1e-12)))
                .collect();
            check(&gpu, &format!("f64-{what}"), &items);
        }
    }
}

/// A float monoid of two fields whose combine calls `exp` (reduce_core's, the same bits on
/// both sides), as values and lifted from f32 (lifted first, grouped as the lifted values).
#[test]
fn log_sum_exp_equals_the_reference_as_values_and_lifted() {
    let Some(gpu) = gpu() else { return };
    for (k, &n) in SIZES.iter().enumerate() {
        let mut rng = TestRng::new(200 + k as u64);
        let xs: Vec<f32> = (0..n)
            .map(|_| (rng.range(0, 1 << 20) as f32 / 65536.0) - 8.0)
            .collect();
        let lifted: Vec<LogSumExp> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| <LogSumExp as Lift<f32>>::lift(x, i as u64))
            .collect();
        check(&gpu, "lse", &lifted);
        let want = portable::fold(&lifted);
        let device = gpu.upload(&xs).unwrap();
        for config in configs_for(portable::run_len::<LogSumExp>() as u32) {
            let got: LogSumExp = gpu.reduce_lifted(&device, config).unwrap();
            assert!(
                got.same_bits(&want),
                "lifted n={n} {config:?}: {got:?} != {want:?}"
            );
        }
    }
}

/// Views 0 to 5 items past a 16-byte boundary: the same bits (the grouping follows the items'
/// indices, never their address).
#[test]
fn views_at_any_offset_give_the_same_bits() {
    let Some(gpu) = gpu() else { return };
    for n in [1usize, 17, 8193, 300_007] {
        let xs: Vec<Sum<f32>> = f32_inputs(n, 9).remove(0).1.into_iter().map(Sum).collect();
        let want = portable::fold(&xs);
        for skip in 0..6 {
            let (_buffer, view) = placed(&gpu, &xs, skip);
            for config in [Config::default().portable(), configs()[7]] {
                let got = gpu.reduce(&view, config).unwrap();
                assert!(got.same_bits(&want), "n={n} skip {skip} {config:?}");
            }
        }
    }
}

/// The backends: the CPU gives the reference bits (in parallel), and so does the GPU.
#[test]
fn the_backends_give_the_reference_bits() {
    let mut backends = vec![Backend::cpu()];
    if let Some(gpu) = gpu() {
        backends.push(Backend::Gpu(gpu));
    }
    for n in [0usize, 5, 100_000, 3_000_017] {
        let xs: Vec<Sum<f32>> = f32_inputs(n, 11).remove(1).1.into_iter().map(Sum).collect();
        let want = portable::fold(&xs);
        let raw: Vec<f32> = xs.iter().map(|x| x.0).collect();
        let lifted: Vec<LogSumExp> = raw
            .iter()
            .enumerate()
            .map(|(i, &x)| <LogSumExp as Lift<f32>>::lift(x * 1e-6, i as u64))
            .collect();
        let scaled: Vec<f32> = raw.iter().map(|x| x * 1e-6).collect();
        let want_lse = portable::fold(&lifted);
        for backend in &backends {
            let got = backend.reduce(&xs, Config::default().portable()).unwrap();
            assert!(got.same_bits(&want), "{} n={n}", backend.describe());
            let got: LogSumExp = backend
                .reduce_lifted(&scaled, Config::default().portable())
                .unwrap();
            assert!(
                got.same_bits(&want_lse),
                "{} lifted n={n}",
                backend.describe()
            );
        }
    }
}

/// What the mode refuses, on every backend: the paper's algorithms, and knobs that would not
/// be aligned nodes of the tree.
#[test]
fn refused_configurations_are_typed_errors() {
    let items = vec![Sum(1.0f32); 100];
    let backend = Backend::cpu();
    let refused = [
        Config::new(Algorithm::Matrix).portable(),
        Config::new(Algorithm::Tb2).portable(),
        Config::default().portable().block(96),
        Config::default().portable().tile_group(3),
        Config::default().portable().items_per_thread(24),
        Config::default().portable().items_per_thread(16 * 32),
    ];
    for config in refused {
        match backend.reduce(&items, config) {
            Err(Error::InvalidConfig { reason, .. }) => {
                assert!(!reason.is_empty(), "{config:?}")
            }
            other => panic!("{config:?}: {other:?}"),
        }
    }
    assert_eq!(
        backend
            .reduce(&items, Config::default().portable())
            .unwrap(),
        Sum(100.0)
    );
}
