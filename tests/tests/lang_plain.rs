//! The derive's whole language on the GPU: monoids written with loops, mutation, run-time
//! indices, `match`, nested structs, helpers and const generics reduce to exactly the Rust
//! fold with every algorithm; an index out of bounds is an error value; lifted inputs
//! (transform-reduce) give the fold of the lifted items. Needs a GPU (`REDUCE_REQUIRE_GPU=1`
//! makes its absence a failure).

use reduce_core::{fold, CudaMonoid, Lift};
use reduce_cuda::{Algorithm, Config, Error, Gpu};
use reduce_tests::monoids::lang::*;
use reduce_tests::{assert_every_algorithm, gpu, Random, TestRng};

const SIZES: [usize; 6] = [0, 1, 31, 1000, 65_537, 1_000_003];

fn every_algorithm() -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL.into_iter().chain([Algorithm::Auto])
}

fn check_every_algorithm<M: CudaMonoid + Random + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    seed: u64,
) {
    for n in SIZES {
        let items = M::random_vec(n, seed ^ n as u64);
        let xs = gpu.upload(&items).unwrap();
        assert_every_algorithm(gpu, &xs, fold(&items), &format!("n={n}"));
    }
}

#[test]
fn automaton_with_run_time_indices() {
    if let Some(gpu) = gpu() {
        check_every_algorithm::<Automaton>(&gpu, 1);
    }
}

#[test]
fn matrix_chain_with_helpers_and_nested_structs() {
    if let Some(gpu) = gpu() {
        check_every_algorithm::<MatChain>(&gpu, 2);
    }
}

#[test]
fn match_and_early_returns() {
    if let Some(gpu) = gpu() {
        check_every_algorithm::<LastDigit>(&gpu, 3);
        check_every_algorithm::<Words>(&gpu, 4);
        check_every_algorithm::<Window>(&gpu, 5);
    }
}

#[test]
fn fuzzer_regressions_on_the_device() {
    let Some(gpu) = gpu() else { return };
    let items: Vec<Regress> = (0..10_000u32)
        .map(|i| Regress {
            t: [i % 3, (i / 3) % 3, (i / 9) % 3],
            set: i % 7 == 0,
        })
        .collect();
    let xs = gpu.upload(&items).unwrap();
    assert_every_algorithm(&gpu, &xs, fold(&items), "");
    // An index out of bounds on the right of `&`, with a false left side (no item is set), is
    // still a fault, with every algorithm: the combine joining the bad item's part with the
    // part after it evaluates `r.t[9]`.
    let mut bad = items.clone();
    bad.iter_mut().for_each(|x| x.set = false);
    bad[5000].t[2] = 9;
    let xs = gpu.upload(&bad).unwrap();
    for algorithm in every_algorithm() {
        let result = gpu.reduce(&xs, algorithm);
        assert!(
            matches!(
                result,
                Err(Error::DeviceFault {
                    index: 9,
                    len: 3,
                    ..
                })
            ),
            "{algorithm}: {result:?}"
        );
    }
}

#[test]
fn an_index_out_of_bounds_is_an_error_value() {
    let Some(gpu) = gpu() else { return };
    // Every entry out of bounds: whatever the grouping, a later item looks it up (a single bad
    // entry may be dropped by a composition that never reaches it, in Rust's fold too).
    let mut items = Automaton::random_vec(50_000, 5);
    items[31_337].t = [200; 8];
    let xs = gpu.upload(&items).unwrap();
    for algorithm in every_algorithm() {
        match gpu.reduce(&xs, algorithm) {
            Err(Error::DeviceFault { monoid, index, len }) => {
                assert_eq!((monoid, index, len), ("Automaton", 200, 8), "{algorithm}");
            }
            other => panic!("{algorithm}: expected a device fault, got {other:?}"),
        }
        // The record is cleared: the next good reduction succeeds.
        let good = gpu.upload(&items[..31_000]).unwrap();
        assert_eq!(
            gpu.reduce(&good, algorithm).unwrap(),
            fold(&items[..31_000]),
            "{algorithm}"
        );
    }
    let mut out = gpu.zeroed::<Automaton>(1).unwrap();
    assert!(matches!(
        gpu.reduce_into(&xs, &mut out, Algorithm::Auto),
        Err(Error::DeviceFault { .. })
    ));
    let message = gpu.reduce(&xs, Algorithm::Shuffle).unwrap_err().to_string();
    assert!(
        message.contains("the len is 8 but the index is 200"),
        "{message}"
    );
}

/// Floats away from zero and NaN: the test monoids' laws hold bit for bit on them.
fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|_| (rng.next_u32() % 200_000) as f32 * 0.25 - 25_000.125)
        .collect()
}

fn lifted_configs() -> [Config; 4] {
    [
        Config::new(Algorithm::Auto),
        Config::new(Algorithm::Shuffle),
        Config::new(Algorithm::Shuffle).items_per_thread(3),
        Config::new(Algorithm::Shuffle).tile_group(0),
    ]
}

fn check_lifted<M, X>(gpu: &Gpu, items: &[X])
where
    M: Lift<X> + PartialEq + std::fmt::Debug,
    X: reduce_core::DeviceCopy,
{
    let xs = gpu.upload(items).unwrap();
    let want = fold(&lifted::<M, X>(items));
    for config in lifted_configs() {
        let got = gpu
            .reduce_lifted::<M, X>(&xs, config)
            .unwrap_or_else(|e| panic!("{} n={} {config:?}: {e}", M::CUDA_NAME, items.len()));
        assert_eq!(got, want, "{} n={} {config:?}", M::CUDA_NAME, items.len());
    }
}

#[test]
fn lifted_argmax_top_k_and_bounding_box() {
    let Some(gpu) = gpu() else { return };
    for n in SIZES {
        let xs = floats(n, 7 + n as u64);
        check_lifted::<ArgMax, f32>(&gpu, &xs);
        check_lifted::<TopK<8>, f32>(&gpu, &xs);
        check_lifted::<TopK<3>, f32>(&gpu, &xs);
        let points: Vec<geom::Point> = xs
            .chunks(2)
            .map(|c| geom::Point {
                x: c[0],
                y: *c.last().unwrap(),
            })
            .collect();
        check_lifted::<BBox, geom::Point>(&gpu, &points);
    }
    // The index is the global one: the maximum at the end of a long input.
    let mut xs = floats(3_000_000, 8);
    xs[2_999_999] = 1e30;
    let dev = gpu.upload(&xs).unwrap();
    let got: ArgMax = gpu.reduce_lifted(&dev, Algorithm::Auto).unwrap();
    assert_eq!(
        got,
        ArgMax {
            v: 1e30,
            i: 2_999_999
        }
    );
}

#[test]
fn lifted_reductions_need_shuffle() {
    let Some(gpu) = gpu() else { return };
    let xs = gpu.upload(&floats(100, 9)).unwrap();
    for algorithm in Algorithm::ALL {
        let result = gpu.reduce_lifted::<ArgMax, f32>(&xs, algorithm);
        match algorithm {
            Algorithm::Shuffle => assert!(result.is_ok()),
            _ => assert!(
                matches!(result, Err(Error::InvalidConfig { .. })),
                "{algorithm}: {result:?}"
            ),
        }
    }
}

#[test]
fn a_lift_out_of_bounds_is_an_error_value() {
    let Some(gpu) = gpu() else { return };
    const { assert!(<Shift as Lift<u32>>::LIFT_CAN_FAULT) };
    let mut symbols: Vec<u32> = (0..100_000u32).map(|i| i % 3).collect();
    let good = gpu.upload(&symbols).unwrap();
    let want = fold(&lifted::<Shift, u32>(&symbols));
    assert_eq!(
        gpu.reduce_lifted::<Shift, u32>(&good, Algorithm::Auto)
            .unwrap(),
        want
    );
    symbols[77_777] = 9;
    let bad = gpu.upload(&symbols).unwrap();
    match gpu.reduce_lifted::<Shift, u32>(&bad, Algorithm::Auto) {
        Err(Error::DeviceFault { monoid, index, len }) => {
            assert_eq!((monoid, index, len), ("Shift", 9, 3));
        }
        other => panic!("expected a device fault, got {other:?}"),
    }
    assert_eq!(
        gpu.reduce_lifted::<Shift, u32>(&good, Algorithm::Auto)
            .unwrap(),
        want
    );
}

/// The patterns NVRTC 13.0 miscompiled (found by fuzz-derive, seed 0x5eedf00d), on the device
/// with the inputs that reach them: lifted per item, so every value meets Rust's.
#[test]
fn what_nvrtc_miscompiled_is_rust_on_the_device() {
    let Some(gpu) = gpu() else { return };
    let xs = probe_inputs(100_000, 41);
    let dev = gpu.upload(&xs).unwrap();
    for config in lifted_configs() {
        // one item at a time: each lifted value on its own
        for (k, &x) in xs.iter().take(4).enumerate() {
            let one = gpu.upload(&[x]).unwrap();
            let got: Probe = gpu.reduce_lifted(&one, config).unwrap();
            assert_eq!(got, Probe::lift(x, 0), "input {k} {x:#x} {config:?}");
        }
        let got: Probe = gpu.reduce_lifted(&dev, config).unwrap();
        assert_eq!(got, fold(&lifted::<Probe, u64>(&xs)), "{config:?}");
    }
}

/// The elementary functions give the CPU's bits on the device: every input of 10^6 (random bit
/// patterns of every exponent, and values in [-120, 120]) in its own segment of one item, each
/// segment's value the lift of its item (`MathFns`: exp, exp2, ln, log2, log10, powf, powi,
/// tanh in f32, the first five in f64, integer pow and saturating operations) compared bit for
/// bit; the max-fold of all of them with every lifted configuration; log-sum-exp of 2^20 logits
/// within 1e-5 of the f64 value.
#[test]
fn elementary_functions_give_the_cpu_bits_on_the_device() {
    use reduce_cuda::SegAlgorithm;
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(41);
    let n = 1_000_000usize;
    let xs: Vec<f32> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                // Any bits but NaN (max ignores NaN: it would break the identity law).
                let x = f32::from_bits(rng.next_u32());
                if x.is_nan() {
                    -0.0
                } else {
                    x
                }
            } else {
                (rng.next_u32() % 240_000) as f32 / 1000.0 - 120.0
            }
        })
        .collect();
    let d_xs = gpu.upload(&xs).unwrap();
    let offsets: Vec<u32> = (0..=n as u32).collect();
    let d_offsets = gpu.upload(&offsets).unwrap();
    let want = lifted::<MathFns, f32>(&xs);
    let bits = |m: &MathFns| {
        let mut b: Vec<u64> = m.f.iter().map(|x| x.to_bits() as u64).collect();
        b.extend(m.d.iter().map(|x| x.to_bits()));
        b.extend(m.n.iter().map(|&x| x as u32 as u64));
        b
    };
    for algorithm in [SegAlgorithm::Auto, SegAlgorithm::SegMerge] {
        let got = gpu
            .reduce_segments_lifted::<MathFns, f32>(&d_xs, &d_offsets, algorithm)
            .unwrap();
        let got = gpu.download(&got).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                bits(g),
                bits(w),
                "{algorithm:?}: item {i} ({:e}): {g:?} against {w:?}",
                xs[i]
            );
        }
    }
    check_lifted::<MathFns, f32>(&gpu, &xs);
    let logits = floats(1 << 20, 43);
    let logits: Vec<f32> = logits.iter().map(|x| x / 1000.0).collect();
    let d_logits = gpu.upload(&logits).unwrap();
    let want = logits.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
    for config in lifted_configs() {
        let got = gpu
            .reduce_lifted::<LogSumExp, f32>(&d_logits, config)
            .unwrap()
            .value() as f64;
        assert!(
            (got - want).abs() < 1e-5 * want.abs(),
            "{config:?}: {got} against {want}"
        );
    }
}

/// The exact float methods and the integer bit methods give the CPU's bits on the device
/// (`Methods`: floor, ceil, trunc, round, round_ties_even, fract, signum, copysign, recip, clamp,
/// the class tests and to_bits/from_bits on f32 and f64; abs_diff, unsigned_abs, signum,
/// leading/trailing ones, count_zeros, reverse_bits, swap_bytes, clamp, is_power_of_two and the
/// saturating and wrapping powers on every integer width): every input of 10^6 (special values,
/// random bit patterns, values with halves) in its own segment of one item, compared bit for
/// bit with its lift, and the sum of all of them with every lifted configuration.
#[test]
fn exact_methods_give_the_cpu_bits_on_the_device() {
    use reduce_cuda::SegAlgorithm;
    let Some(gpu) = gpu() else { return };
    let xs = method_inputs(1_000_000, 47);
    let d_xs = gpu.upload(&xs).unwrap();
    let offsets: Vec<u64> = (0..=xs.len() as u64).collect();
    let d_offsets = gpu.upload(&offsets).unwrap();
    let want = lifted::<Methods, u64>(&xs);
    for algorithm in [SegAlgorithm::Auto, SegAlgorithm::SegMerge] {
        let got = gpu
            .reduce_segments_lifted::<Methods, u64>(&d_xs, &d_offsets, algorithm)
            .unwrap();
        let got = gpu.download(&got).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{algorithm:?}: item {i} ({:#x})", xs[i]);
        }
    }
    check_lifted::<Methods, u64>(&gpu, &xs);
}

/// An integer division by zero or `i32::MIN / -1` in a lift, where Rust panics, records a fault
/// on the device: `Error::DivisionFault` from plain, segmented and scan calls, whatever the
/// configuration; the record is cleared for the next call, and items without one reduce to the
/// CPU's value.
#[test]
fn a_division_by_zero_on_the_device_is_an_error() {
    use reduce_cuda::{Scan, ScanConfig, SegConfig};
    let Some(gpu) = gpu() else { return };
    let mut xs = quotient_inputs(1_000_000, 53);
    check_lifted::<Quotients, u64>(&gpu, &xs);
    for (bad, overflow) in [
        (77u64 << 32, false),
        ((0x8000_0000 << 32) | 0xffff_ffff, true),
    ] {
        let keep = xs[654_321];
        xs[654_321] = bad;
        let d_xs = gpu.upload(&xs).unwrap();
        let division = |e: Error| match e {
            Error::DivisionFault { monoid, overflow } => (monoid, overflow),
            other => panic!("expected a division fault, got {other:?}"),
        };
        for config in lifted_configs() {
            let e = gpu
                .reduce_lifted::<Quotients, u64>(&d_xs, config)
                .unwrap_err();
            assert_eq!(division(e), ("Quotients", overflow), "{config:?}");
        }
        let offsets = gpu.upload(&[0u64, 1000, 700_000, xs.len() as u64]).unwrap();
        let e = gpu
            .reduce_segments_lifted::<Quotients, u64>(&d_xs, &offsets, SegConfig::default())
            .unwrap_err();
        assert_eq!(division(e), ("Quotients", overflow));
        let e = gpu
            .scan_lifted::<Quotients, u64>(&d_xs, Scan::Inclusive, ScanConfig::default())
            .unwrap_err();
        assert_eq!(division(e), ("Quotients", overflow));
        xs[654_321] = keep;
        // cleared: the next call is clean
        check_lifted::<Quotients, u64>(&gpu, &xs);
    }
}
