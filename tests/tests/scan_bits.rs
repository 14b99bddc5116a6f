//! Float scans on the GPU have a fixed grouping: their bits follow from N, the layout and the
//! configuration only — the CPU model of LookBack's grouping (`reduce_core::portable::scan_grouped`,
//! which ReduceThenScan and LookAhead share) for every algorithm and tile shape, run after run;
//! while another stream of the device runs scans beside them (other timing); and on LookAhead
//! grids of 1 to 1000 blocks (the portable scans there too: `reduce_core::portable`'s bits).
//! The portable scans on every input: `portable_scans.rs`.
//!
//! GPU tests: they skip without a device, and fail under `REDUCE_REQUIRE_GPU=1`.

use reduce_core::{portable, Scan, Sum};
use reduce_cuda::{Gpu, ScanAlgorithm, ScanConfig};
use reduce_tests::{gpu, TestRng};

const KINDS: [Scan; 2] = [Scan::Inclusive, Scan::Exclusive];

/// `n` f32 sums of mixed magnitudes and signs: the grouping shows in the bits of their scans.
fn mixed_floats(n: usize, rng: &mut TestRng) -> Vec<Sum<f32>> {
    (0..n)
        .map(|_| {
            let m = (rng.next_u32() % 2_000_000) as f32 - 1_000_000.0;
            Sum(m * 2f32.powi((rng.next_u32() % 40) as i32 - 20))
        })
        .collect()
}

/// Float scans, plain and by key (u32 keys in runs of up to 600,000 items: segments over many
/// tiles and groups of 32 tiles), by every algorithm at four tile shapes, three times each: the
/// bits of the CPU model of the grouping each time.
#[test]
fn float_scans_repeat_and_follow_the_grouping() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(99);
    let xs = mixed_floats((1 << 20) + 333, &mut rng);
    let dxs = gpu.upload(&xs).unwrap();
    let mut keys: Vec<u32> = Vec::with_capacity(xs.len());
    while keys.len() < xs.len() {
        let (label, run) = (rng.range(0, 3) as u32, rng.range(1, 600_000) as usize);
        keys.extend(std::iter::repeat_n(label, run.min(xs.len() - keys.len())));
    }
    let heads: Vec<bool> = (0..keys.len())
        .map(|i| i == 0 || keys[i] != keys[i - 1])
        .collect();
    let dkeys = gpu.upload(&keys).unwrap();
    let bits = |v: &[Sum<f32>]| v.iter().map(|s| s.0.to_bits()).collect::<Vec<u32>>();
    let shapes = [(256, 32), (128, 16), (32, 1), (1024, 3)];
    for (algorithm, (block, per)) in ScanAlgorithm::ALL
        .into_iter()
        .flat_map(|a| shapes.map(|shape| (a, shape)))
    {
        let config = ScanConfig::new(algorithm)
            .block(block)
            .items_per_thread(per);
        for kind in KINDS {
            let want = bits(&portable::scan_grouped(
                &xs,
                &[],
                block as usize,
                per as usize,
                kind,
            ));
            let want_keys = bits(&portable::scan_grouped(
                &xs,
                &heads,
                block as usize,
                per as usize,
                kind,
            ));
            for _ in 0..3 {
                let got = gpu.scan(&dxs, kind, config).unwrap();
                assert!(
                    bits(&gpu.download(&got).unwrap()) == want,
                    "{config:?} {kind:?}"
                );
                let got = gpu.scan_by_key(&dxs, &dkeys, kind, config).unwrap();
                assert!(
                    bits(&gpu.download(&got).unwrap()) == want_keys,
                    "by key {config:?} {kind:?}"
                );
            }
        }
    }
}

/// Float scans beside other work: while another stream of the device runs scans of 2^26 items
/// (a different number in each round), the tiles run and publish in other orders and the
/// look-backs stop at other distances; the outputs keep the grouping's bits all the same, for
/// both algorithms and both kinds.
#[test]
fn float_scans_keep_their_bits_beside_other_work() {
    let Some(gpu) = gpu() else { return };
    let other = Gpu::new(0).unwrap();
    let load = other.upload(&vec![Sum(1.5f32); 1 << 26]).unwrap();
    let mut load_out = other.upload(&vec![Sum(0f32); 1 << 26]).unwrap();
    let xs = mixed_floats((1 << 22) + 77, &mut TestRng::new(4242));
    let dxs = gpu.upload(&xs).unwrap();
    let bits = |v: &[Sum<f32>]| v.iter().map(|s| s.0.to_bits()).collect::<Vec<u32>>();
    for algorithm in ScanAlgorithm::ALL {
        let config = ScanConfig::new(algorithm).block(256).items_per_thread(32);
        for kind in KINDS {
            let want = bits(&portable::scan_grouped(&xs, &[], 256, 32, kind));
            for round in 0..4 {
                for _ in 0..round {
                    other
                        .scan_into(&load, kind, &mut load_out, ScanAlgorithm::LookBack)
                        .unwrap();
                }
                let got = gpu
                    .download(&gpu.scan(&dxs, kind, config).unwrap())
                    .unwrap();
                assert!(
                    bits(&got) == want,
                    "{algorithm:?} {kind:?}, {round} scans beside"
                );
            }
            other.synchronize().unwrap();
        }
    }
}

/// LookAhead's persistent grid forced to 1, 7, 132 and 1000 blocks (fewer and more than are
/// resident): the same bits as the CPU model of the grouping, plain and by key (portable: the
/// portable reference's), both kinds.
#[test]
fn float_scans_keep_their_bits_on_any_grid() {
    let Some(gpu) = gpu() else { return };
    if gpu.info().compute_capability.0 < 9 {
        eprintln!("skipped: LookAhead (and its grid) needs sm_90; this device runs LookBack");
        return;
    }
    let mut rng = TestRng::new(77);
    let xs = mixed_floats((1 << 21) + 77, &mut rng);
    let keys: Vec<u32> = (0..xs.len() as u32).map(|i| (i / 3001) % 3).collect();
    let (dxs, dkeys) = (gpu.upload(&xs).unwrap(), gpu.upload(&keys).unwrap());
    let bits = |v: &[Sum<f32>]| v.iter().map(|s| s.0.to_bits()).collect::<Vec<u32>>();
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead)
        .block(256)
        .items_per_thread(32);
    for kind in KINDS {
        let heads = |keys: &[u32]| -> Vec<bool> {
            (0..keys.len())
                .map(|i| i == 0 || keys[i] != keys[i - 1])
                .collect()
        };
        let cases = [
            (
                ahead,
                bits(&portable::scan_grouped(&xs, &[], 256, 32, kind)),
                bits(&portable::scan_grouped(&xs, &heads(&keys), 256, 32, kind)),
            ),
            (
                ScanConfig::default().portable(),
                bits(&portable::scan(&xs, kind)),
                bits(&portable::scan_by_key(&xs, &keys, kind).unwrap()),
            ),
        ];
        for (config, want, want_keys) in cases {
            for grid in [1, 7, 132, 1000] {
                let config = config.grid(grid);
                let got = gpu.scan(&dxs, kind, config).unwrap();
                let got = bits(&gpu.download(&got).unwrap());
                assert!(got == want, "{config:?} {kind:?}");
                let got = gpu.scan_by_key(&dxs, &dkeys, kind, config).unwrap();
                let got = bits(&gpu.download(&got).unwrap());
                assert!(got == want_keys, "by key {config:?} {kind:?}");
            }
        }
    }
}
