//! The fuzzer's run-29 regressions (`reduce_tests::fuzz_regressions`) on the GPU: with every
//! algorithm, the reduction of inputs full of the values that were miscompiled (i16::MIN,
//! i8::MIN, i32::MIN, NaN-valued constant operations) has every `bad` flag 0, as in Rust.
//! Needs a GPU (`REDUCE_REQUIRE_GPU=1` makes its absence a failure).

use reduce_core::fold;

use reduce_tests::fuzz_regressions::*;
use reduce_tests::{assert_every_algorithm, gpu, Random};

#[test]
fn narrow_wrapped_results_on_the_device() {
    let Some(gpu) = gpu() else { return };
    let items = NarrowWrap::random_vec(100_003, 1145);
    let want = fold(&items);
    assert_eq!(want.bad, 0);
    let xs = gpu.upload(&items).unwrap();
    assert_every_algorithm(&gpu, &xs, want, "");
}

#[test]
fn abs_of_min_on_the_device() {
    let Some(gpu) = gpu() else { return };
    // i32::MIN is in the input: Rust's value by hand (a debug build panics on MIN.abs()).
    let items: Vec<AbsRem> = (0..50_000i32)
        .map(|i| AbsRem {
            a: if i % 5 == 0 {
                i32::MIN
            } else {
                i.wrapping_mul(-7919)
            },
            bad: 0,
        })
        .collect();
    let want = AbsRem {
        a: items.iter().fold(0i32, |s, x| s.wrapping_add(x.a)),
        bad: 0,
    };
    let xs = gpu.upload(&items).unwrap();
    assert_every_algorithm(&gpu, &xs, want, "");
}

#[test]
fn nan_valued_constants_on_the_device() {
    let Some(gpu) = gpu() else { return };
    let items = NanCmp::random_vec(10_007, 8819);
    let want = fold(&items);
    assert_eq!(want.bad, 0);
    let xs = gpu.upload(&items).unwrap();
    assert_every_algorithm(&gpu, &xs, want, "");
}
