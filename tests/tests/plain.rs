//! Plain reductions on the GPU, bit for bit against the sequential fold, with non-commutative
//! monoids of every item size. Skips (saying so) without a GPU unless REDUCE_REQUIRE_GPU=1.

use reduce_cuda::{fold, Algorithm, Config, CudaMonoid, Gpu, Max, Min, Monoid, Sum};
use reduce_tests::configs::{every_config, plain_declined};
use reduce_tests::*;

/// Sizes every algorithm must pass: tiny, around a warp and a block, and large.
const SIZES: [usize; 10] = [0, 1, 31, 32, 33, 1023, 1024, 1025, (1 << 20) + 7, 1 << 24];

/// Uploads each size once and runs every algorithm on it (a device with less shared memory a
/// block than an H100 may decline a paper algorithm's tile or knobs set by hand:
/// [`plain_declined`]).
fn check<M: CudaMonoid + Random>(gpu: &Gpu, sizes: &[usize], configs: &[Config]) {
    for (i, &n) in sizes.iter().enumerate() {
        let items = M::random_vec(n, 0x5eed + i as u64);
        let expected = fold(&items);
        let xs = gpu.upload(&items).unwrap();
        for config in configs {
            match gpu.reduce(&xs, *config) {
                Ok(got) => assert_eq!(got, expected, "{} n={n} {:?}", M::CUDA_NAME, config),
                Err(e) if plain_declined(gpu, config, &e) => {}
                Err(e) => panic!("{} n={n} {config:?}: {e}", M::CUDA_NAME),
            }
        }
    }
}

macro_rules! gpu_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check::<$m>(&gpu, &SIZES, &every_config());
            }
        }
    )*};
}

gpu_tests! {
    affine: Affine,
    mat2: Mat2,
    keep_first: KeepFirst,
    keep_last: KeepLast,
    rolling_hash: RollingHash,
    perm4_one_byte: Perm4,
    affine8_two_bytes: Affine8,
    affine16_four_bytes: Affine16,
    tri_twelve_bytes: Tri,
    mat2w_thirty_two_bytes: Mat2w,
    mat3_seventy_two_bytes: Mat3,
}

/// Built-in float and integer monoids, compared bit for bit. Float sums use small integers so
/// that every grouping is exact; min/max use arbitrary floats with NaNs and signed zeros.
#[test]
fn builtins_bit_for_bit() {
    let Some(gpu) = gpu() else { return };
    for (i, &n) in SIZES.iter().enumerate() {
        let mut rng = TestRng::new(77 + i as u64);
        // Small integers whose every partial sum stays below 2^24: exact in f32, any grouping.
        let hi = ((1u64 << 24) / n.max(1) as u64).clamp(1, 7);
        let small: Vec<u64> = (0..n).map(|_| rng.range(0, hi)).collect();
        let sum_f32: Vec<Sum<f32>> = small.iter().map(|&v| Sum(v as f32)).collect();
        let sum_f64: Vec<Sum<f64>> = small.iter().map(|&v| Sum(v as f64)).collect();
        let sum_i64: Vec<Sum<i64>> = (0..n).map(|_| Sum(rng.next_u64() as i64)).collect();
        let max_isize: Vec<Max<isize>> = (0..n).map(|_| Max(rng.next_u64() as isize)).collect();
        let weird = |rng: &mut TestRng| match rng.range(0, 999) {
            0 => f32::from_bits(0x7fc0_0000 | rng.range(1, 1000) as u32),
            1 => -0.0,
            2 => 0.0,
            _ => f32::from_bits(rng.next_u32() & 0xbf7f_ffff),
        };
        let min_f32: Vec<Min<f32>> = (0..n).map(|_| Min(weird(&mut rng))).collect();
        let max_f64: Vec<Max<f64>> = (0..n).map(|_| Max(weird(&mut rng) as f64)).collect();
        let d_sum_f32 = gpu.upload(&sum_f32).unwrap();
        let d_sum_f64 = gpu.upload(&sum_f64).unwrap();
        let d_sum_i64 = gpu.upload(&sum_i64).unwrap();
        let d_max_isize = gpu.upload(&max_isize).unwrap();
        let d_min_f32 = gpu.upload(&min_f32).unwrap();
        let d_max_f64 = gpu.upload(&max_f64).unwrap();
        for alg in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            let ctx = format!("n={n} {alg}");
            assert_eq!(
                gpu.reduce(&d_sum_f32, alg).unwrap().0.to_bits(),
                fold(&sum_f32).0.to_bits(),
                "Sum<f32> {ctx}"
            );
            assert_eq!(
                gpu.reduce(&d_sum_f64, alg).unwrap().0.to_bits(),
                fold(&sum_f64).0.to_bits(),
                "Sum<f64> {ctx}"
            );
            assert_eq!(
                gpu.reduce(&d_sum_i64, alg).unwrap(),
                fold(&sum_i64),
                "Sum<i64> {ctx}"
            );
            assert_eq!(
                gpu.reduce(&d_max_isize, alg).unwrap(),
                fold(&max_isize),
                "Max<isize> {ctx}"
            );
            assert_eq!(
                gpu.reduce(&d_min_f32, alg).unwrap().0.to_bits(),
                fold(&min_f32).0.to_bits(),
                "Min<f32> {ctx}"
            );
            assert_eq!(
                gpu.reduce(&d_max_f64, alg).unwrap().0.to_bits(),
                fold(&max_f64).0.to_bits(),
                "Max<f64> {ctx}"
            );
        }
    }
}

/// Non-default parameters of every family still give the exact fold.
#[test]
fn researcher_parameters() {
    let Some(gpu) = gpu() else { return };
    let configs = [
        Config::new(Algorithm::Tb2).block(64),
        Config::new(Algorithm::Tb4Warp).block(128),
        Config::new(Algorithm::Matrix).block(128).matrix_width(16),
        Config::new(Algorithm::Matrix).block(32).matrix_width(1),
        Config::new(Algorithm::PersistentMatrix)
            .matrix_width(64)
            .grid(7),
        Config::new(Algorithm::PersistentMatrix).grid(1),
        Config::new(Algorithm::DiffWarps)
            .producers(4)
            .matrix_width(16),
        Config::new(Algorithm::DiffWarps).producers(1).grid(3),
        Config::new(Algorithm::Shuffle)
            .block(512)
            .items_per_thread(5),
        Config::new(Algorithm::Shuffle).block(32).grid(1),
        Config::new(Algorithm::Shuffle).grid(1000),
        Config::new(Algorithm::Shuffle).tile_group(1),
        Config::new(Algorithm::Shuffle).tile_group(3).block(128),
        Config::new(Algorithm::Shuffle).tile_group(4).grid(5),
        Config::new(Algorithm::Shuffle).tile_group(8).block(1024),
    ];
    check::<Affine>(&gpu, &[0, 1, 1000, 123_457, 3_000_001], &configs);
    check::<Mat3>(&gpu, &[5, 70_001], &configs);
}

/// The device's result lands in a device buffer without a host round trip.
#[test]
fn reduce_into_writes_the_output_buffer() {
    let Some(gpu) = gpu() else { return };
    let items = Affine::random_vec(100_000, 3);
    let xs = gpu.upload(&items).unwrap();
    let mut out = gpu.identities::<Affine>(1).unwrap();
    gpu.reduce_into(&xs, &mut out, Algorithm::Shuffle).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![fold(&items)]);
}

/// Sizes one item around each algorithm's data block D, its square (multi-pass boundaries),
/// and D x G for the persistent grids of this device.
#[test]
fn block_and_grid_boundaries() {
    let Some(gpu) = gpu() else { return };
    let sms = gpu.info().multiprocessors as usize;
    let mut sizes = Vec::new();
    // Tb2 (D = 512), Tb4Warp and Matrix (D = 1024) and their second passes; Shuffle's tiles of
    // 512 threads x 8 affine items and its grid of 2 blocks per SM; a persistent grid of 8 per SM.
    for d in [
        512usize,
        1024,
        4096,
        512 * 8,
        512 * 8 * 2 * sms,
        1024 * 8 * sms,
        512 * 512,
        1024 * 1024,
    ] {
        sizes.extend([d - 1, d, d + 1]);
    }
    sizes.push(1 << 26);
    check::<Affine>(&gpu, &sizes, &every_config());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// Random sizes from a proptest strategy, every algorithm, bit for bit.
    #[test]
    fn drawn_sizes(n in proptest::prelude::prop_oneof![0usize..5000, 5000usize..3_000_000]) {
        if let Some(gpu) = gpu() {
            check::<Mat2>(&gpu, &[n], &every_config());
        }
    }
}

/// Float sums (arbitrary floats, not exact) give the same bits on every run, per algorithm.
#[test]
fn float_sums_are_deterministic() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(3);
    let items: Vec<Sum<f32>> = (0..(1 << 20) + 7)
        .map(|_| Sum((rng.next_u32() as f32 / 1e6).sin()))
        .collect();
    let xs = gpu.upload(&items).unwrap();
    for alg in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        let first = gpu.reduce(&xs, alg).unwrap().0.to_bits();
        for run in 1..100 {
            assert_eq!(
                gpu.reduce(&xs, alg).unwrap().0.to_bits(),
                first,
                "{alg} run {run}"
            );
        }
    }
}

/// Past the u32 index range: 2^32 + 3 one-byte items (a non-commutative S4 permutation each).
/// Needs about 4.3 GB of device memory and 4.3 GB of host memory.
#[test]
fn more_than_u32_max_items() {
    let Some(gpu) = gpu() else { return };
    let n = (1usize << 32) + 3;
    if gpu.info().total_memory < 3 * n {
        eprintln!("skipped: the device has less than {} bytes", 3 * n);
        return;
    }
    // A random block of 2^26 + 1 items, repeated: the period does not divide 2^32, so an index
    // truncated to 32 bits would read other values. The expected fold is fold(block)^k . rest.
    let block = Perm4::random_vec((1 << 26) + 1, 42);
    let (k, rest) = (n / block.len(), n % block.len());
    let mut items = Vec::with_capacity(n);
    for _ in 0..k {
        items.extend_from_slice(&block);
    }
    items.extend_from_slice(&block[..rest]);
    let whole = fold(&block);
    let expected = (0..k).fold(Perm4::identity(), |acc, _| Perm4::combine(acc, whole));
    let expected = Perm4::combine(expected, fold(&block[..rest]));
    let xs = gpu.upload(&items).unwrap();
    drop(items);
    for alg in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        assert_eq!(
            gpu.reduce(&xs, alg).unwrap(),
            expected,
            "{alg} n = 2^32 + 3"
        );
    }
}
