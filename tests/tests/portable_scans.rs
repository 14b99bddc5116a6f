//! The portable scans (`ScanConfig::portable`) against the reference that defines their bits,
//! `reduce_core::portable::{scan, scan_segments, scan_by_key}`: f32 and f64 sums and a float
//! monoid of two fields (log-sum-exp, its values and lifted from f32 logits), on inputs whose
//! sums every grouping rounds differently (mixed magnitudes, cancelling pairs, zeros of both
//! signs, subnormals, infinities and NaN), at sizes around the portable tile and past groups of
//! 32 tiles; plain, by CSR offsets and by keys (`u32` and `u64`), both kinds; by every scan
//! algorithm (the algorithm changes the speed, never the bits); on the GPU and on the CPU
//! backend; setting the tile (the grouping) is refused. Any NaN matches any NaN (payloads differ
//! between CPU and GPU). Each case prints a hash of its bits (`portable-scan-hash`), to compare
//! devices.
//!
//! GPU cases skip without a device and fail under `REDUCE_REQUIRE_GPU=1`; the CPU backend's run
//! everywhere (CI too).

use reduce_bench::monoids::LogSumExp;
use reduce_core::{portable, Scan};
use reduce_cuda::{Backend, CudaMonoid, Error, Gpu, ScanAlgorithm, ScanConfig, Sum};
use reduce_tests::floats::{assert_same_bits, hard_f32, SameBits};
use reduce_tests::monoids::lang::lifted;
use reduce_tests::{bits_hash, convert, gpu, TestRng};

const KINDS: [Scan; 2] = [Scan::Inclusive, Scan::Exclusive];

/// Every scan algorithm in the portable mode: the same bits from each.
fn configs() -> Vec<ScanConfig> {
    let mut configs = vec![ScanConfig::default().portable()];
    configs.extend(ScanAlgorithm::ALL.map(|a| ScanConfig::new(a).portable()));
    configs
}

/// Item counts around the portable tile of `M` (256 threads × `portable::scan_items`), past a
/// group of 32 tiles, and (on the GPU) a large one.
fn sizes<M>(gpu: bool) -> Vec<usize> {
    let tile = portable::SCAN_BLOCK * portable::scan_items(std::mem::size_of::<M>());
    let mut sizes = vec![0, 1, tile - 1, tile, tile + 1, 33 * tile + 5];
    if gpu {
        sizes.push((1 << 22) + 3);
    }
    sizes
}

/// Segment lengths over `n` items: short ones, empty ones and some longer than a tile.
fn lengths(n: usize, rng: &mut TestRng) -> Vec<u64> {
    let mut lengths = Vec::new();
    let mut total = 0;
    while total < n as u64 {
        let l = match rng.range(0, 9) {
            0 => 0,
            1 => rng.range(1, 20_000),
            _ => rng.range(1, 60),
        }
        .min(n as u64 - total);
        lengths.push(l);
        total += l;
    }
    lengths
}

/// `items` scanned plain, by offsets and by keys in both widths, both kinds, by every
/// configuration on `backend`, against the reference's bits.
fn check<M: CudaMonoid + SameBits>(backend: &Backend, name: &str, items: &[M], seed: u64) {
    let n = items.len();
    let mut rng = TestRng::new(seed);
    let offsets = reduce_tests::offsets_of(&lengths(n, &mut rng));
    // keys: three labels over runs of 1 to 40, so that neighbouring runs may merge
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    while keys.len() < n {
        let (key, run) = (rng.range(0, 2), rng.range(1, 40) as usize);
        keys.extend(std::iter::repeat_n(key, run.min(n - keys.len())));
    }
    let (offsets32, keys32) = (convert::<u32>(&offsets), convert::<u32>(&keys));
    for kind in KINDS {
        let plain = portable::scan(items, kind);
        let by_offsets = portable::scan_segments(items, &offsets, kind).unwrap();
        let by_keys = portable::scan_by_key(items, &keys, kind).unwrap();
        for (form, want) in [
            ("plain", &plain),
            ("offsets", &by_offsets),
            ("keys", &by_keys),
        ] {
            println!(
                "portable-scan-hash {name} {form} n={n} {kind:?} {:016x}",
                bits_hash(want)
            );
        }
        for config in configs() {
            let what = |form: &str| {
                format!(
                    "{} {name} {form} n={n} {kind:?} {config:?}",
                    backend.describe()
                )
            };
            let got = backend.scan(items, kind, config).unwrap();
            assert_same_bits(&got, &plain, &what("plain"));
            let got = backend
                .scan_segments(items, &offsets, kind, config)
                .unwrap();
            assert_same_bits(&got, &by_offsets, &what("offsets u64"));
            let got = backend
                .scan_segments(items, &offsets32, kind, config)
                .unwrap();
            assert_same_bits(&got, &by_offsets, &what("offsets u32"));
            let got = backend.scan_by_key(items, &keys, kind, config).unwrap();
            assert_same_bits(&got, &by_keys, &what("keys u64"));
            let got = backend.scan_by_key(items, &keys32, kind, config).unwrap();
            assert_same_bits(&got, &by_keys, &what("keys u32"));
            if matches!(backend, Backend::Cpu { .. }) {
                break; // the CPU backend has one portable scan, whatever the algorithm
            }
        }
    }
}

/// The backends: the CPU's, and the GPU's where there is one.
fn backends() -> Vec<(Backend, bool)> {
    let mut backends = vec![(Backend::cpu(), false)];
    backends.extend(gpu().map(|g| (Backend::Gpu(g), true)));
    backends
}

#[test]
fn f32_sums_have_the_reference_bits() {
    for (backend, on_gpu) in backends() {
        for (k, n) in sizes::<Sum<f32>>(on_gpu).into_iter().enumerate() {
            let items: Vec<Sum<f32>> = hard_f32(n, k as u64, k % 2 == 0)
                .into_iter()
                .map(Sum)
                .collect();
            check(&backend, "f32", &items, k as u64);
        }
    }
}

#[test]
fn f64_sums_have_the_reference_bits() {
    for (backend, on_gpu) in backends() {
        for (k, n) in sizes::<Sum<f64>>(on_gpu).into_iter().enumerate() {
            let items: Vec<Sum<f64>> = hard_f32(n, 100 + k as u64, true)
                .into_iter()
                .map(|x| Sum(x as f64 * 1.000_000_1))
                .collect();
            check(&backend, "f64", &items, k as u64);
        }
    }
}

/// Log-sum-exp of f32 logits: as values, and lifted on the GPU (grouped as the lifted values:
/// the tile follows the monoid, not the f32 input), plain and per CSR segment and key.
#[test]
fn log_sum_exp_has_the_reference_bits_as_values_and_lifted() {
    let logits = |n: usize, seed: u64| -> Vec<f32> {
        let xs = hard_f32(n, seed, false);
        xs.into_iter().map(|x| x.clamp(-80.0, 80.0)).collect()
    };
    for (backend, on_gpu) in backends() {
        for (k, n) in sizes::<LogSumExp>(on_gpu).into_iter().enumerate() {
            let items: Vec<LogSumExp> = lifted(&logits(n, 200 + k as u64));
            check(&backend, "lse", &items, k as u64);
        }
    }
    let Some(gpu) = gpu() else { return };
    for (k, n) in sizes::<LogSumExp>(true).into_iter().enumerate() {
        check_lifted(&gpu, &logits(n, 300 + k as u64), k as u64);
    }
}

/// The lifted scans of `raw` logits (plain, by offsets, by key; both kinds; every algorithm)
/// against the reference's scans of the lifted values.
fn check_lifted(gpu: &Gpu, raw: &[f32], seed: u64) {
    let items: Vec<LogSumExp> = lifted(raw);
    let n = raw.len();
    let mut rng = TestRng::new(seed);
    let offsets = convert::<u32>(&reduce_tests::offsets_of(&lengths(n, &mut rng)));
    let keys: Vec<u64> = (0..n as u64).map(|i| (i / 53) % 2).collect();
    let (xs, d_offsets, d_keys) = (
        gpu.upload(raw).unwrap(),
        gpu.upload(&offsets).unwrap(),
        gpu.upload(&keys).unwrap(),
    );
    for kind in KINDS {
        let plain = portable::scan(&items, kind);
        let by_offsets = portable::scan_segments(&items, &offsets, kind).unwrap();
        let by_keys = portable::scan_by_key(&items, &keys, kind).unwrap();
        for config in configs() {
            let what = |form: &str| format!("lifted {form} n={n} {kind:?} {config:?}");
            let got = gpu
                .scan_lifted::<LogSumExp, f32>(&xs, kind, config)
                .unwrap();
            assert_same_bits(&gpu.download(&got).unwrap(), &plain, &what("plain"));
            let got = gpu
                .scan_segments_lifted::<LogSumExp, f32, _>(&xs, &d_offsets, kind, config)
                .unwrap();
            assert_same_bits(&gpu.download(&got).unwrap(), &by_offsets, &what("offsets"));
            let got = gpu
                .scan_by_key_lifted::<LogSumExp, f32, _>(&xs, &d_keys, kind, config)
                .unwrap();
            assert_same_bits(&gpu.download(&got).unwrap(), &by_keys, &what("keys"));
        }
    }
}

/// The portable scans' tile is their grouping: setting it is refused, on both backends.
#[test]
fn setting_the_tile_is_refused() {
    let xs = vec![Sum(1.0f32); 10];
    let portable = ScanConfig::default().portable();
    for (backend, _) in backends() {
        for config in [portable.block(128), portable.items_per_thread(4)] {
            let e = backend.scan(&xs, Scan::Inclusive, config);
            assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
        }
    }
}
