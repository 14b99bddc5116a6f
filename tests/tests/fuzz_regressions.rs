//! Regressions of the differential fuzzer's GPU run of seed 0x5eedf00d (16 programs with
//! mismatches), one monoid per root cause (`reduce_tests::monoids::fuzz_regressions`): the Rust
//! semantics (every `bad` flag 0), the CUDA text the fix relies on, the prelude's helpers, and
//! every kernel compiling with NVRTC; then, on the GPU, the reduction with every algorithm of
//! inputs full of the values that were miscompiled (i16::MIN, i8::MIN, i32::MIN, NaN-valued
//! constant operations), whose `bad` flags are 0 as in Rust. The host backend did not reproduce
//! these (they are NVRTC 13.0 optimizer behaviour), so there is no host-compiler check beyond
//! the fuzzer's own (`fuzz-derive`). The GPU tests skip without a device, and fail under
//! `REDUCE_REQUIRE_GPU=1`.

use reduce_core::{fold, CudaMonoid, Monoid, CUDA_PRELUDE};
use reduce_tests::monoids::fuzz_regressions::*;
use reduce_tests::{
    assert_contains, assert_every_algorithm, assert_monoid_laws, compiles_every_algorithm, gpu,
    require_nvrtc, Random,
};

fn compiles<M: CudaMonoid>() {
    if require_nvrtc() {
        compiles_every_algorithm::<M>();
    }
}

const NARROW: [i16; 7] = [i16::MIN, i16::MIN + 1, -1, 0, 1, 4849, i16::MAX];
const TINY: [i8; 6] = [i8::MIN, -1, 0, 1, 100, i8::MAX];

#[test]
fn narrow_wrapped_results_keep_their_sign() {
    let mut xs = Vec::new();
    for &a in &NARROW {
        for &b in &TINY {
            xs.push(NarrowWrap { a, b, bad: 0 });
        }
    }
    // Rust: every fact holds, for every pair (i16::MIN and i8::MIN included)
    for &l in &xs {
        for &r in &xs {
            assert_eq!(NarrowWrap::combine(l, r).bad, 0, "{l:?} {r:?}");
        }
    }
    // p01272's value: !(-MIN / (MIN | 1)) is -2 (the GPU gave 0)
    assert_eq!(!(i16::MIN.wrapping_neg() / (i16::MIN | 1)), -2);
    assert_monoid_laws(&xs[..12]);
    assert_monoid_laws(&NarrowWrap::random_vec(6, 29));
    let all = fold(&xs);
    assert_eq!((all.a, all.b, all.bad), (i16::MAX, i8::MAX, 0));

    let text = NarrowWrap::cuda_source();
    assert_contains(&text, "const short v_n = r_neg_i16(r.a);");
    assert_contains(&text, "r_div_i16(v_n, (short)(r.a | (short)1))");
    assert_contains(&text, "r_shr_i16(r.a, v_s)");
    // the prelude pins narrow results (and a shifted narrow operand) by explicit extensions
    assert_contains(CUDA_PRELUDE, "asm(\"cvt.s32.s16 %0, %0;\" : \"+r\"(y));");
    assert_contains(CUDA_PRELUDE, "asm(\"cvt.s32.s8 %0, %0;\" : \"+r\"(y));");
    assert_contains(
        CUDA_PRELUDE,
        "T r_neg_##S(T a) { return r_opaque((T)((W)0 - (W)a)); }",
    );
    assert_contains(
        CUDA_PRELUDE,
        "return r_pin((T)(r_pin(a) >> (s & (BITS - 1))));",
    );
    compiles::<NarrowWrap>();
}

#[test]
fn abs_of_min_stays_negative() {
    // i32::MIN.abs() panics in a debug build: Rust's release value, by hand.
    assert_eq!(i32::MIN.wrapping_abs() % 7, -2);
    let xs: Vec<AbsRem> = [i32::MIN + 1, -9, -1, 0, 5, i32::MAX]
        .iter()
        .map(|&a| AbsRem { a, bad: 0 })
        .collect();
    for &l in &xs {
        for &r in &xs {
            assert_eq!(AbsRem::combine(l, r).bad, 0, "{l:?} {r:?}");
        }
    }
    // (sums that reach i32::MIN would panic in `abs` here: small values)
    let small: Vec<AbsRem> = [-9, -1, 0, 5, 1000]
        .iter()
        .map(|&a| AbsRem { a, bad: 0 })
        .collect();
    assert_monoid_laws(&small);
    let text = AbsRem::cuda_source();
    assert_contains(&text, "r_rem_i32(r_abs_i32(r.a), (l.a & 255) | 7)");
    // the wrapped negation of MIN is opaque to the optimizer (no `abs >= 0` assumption)
    // the wrapped negation (inside abs too) is opaque: r_neg returns through r_opaque
    assert_contains(CUDA_PRELUDE, "return a < 0 ? r_neg_##S(a) : a;");
    assert_contains(CUDA_PRELUDE, "{ return r_opaque((T)((W)0 - (W)a)); }");
    assert_contains(
        CUDA_PRELUDE,
        "__device__ __forceinline__ int r_opaque(int x) {",
    );
    compiles::<AbsRem>();
}

#[test]
fn comparisons_of_nan_valued_constants() {
    let xs = NanCmp::random_vec(8, 8819);
    for &l in &xs {
        for &r in &xs {
            assert_eq!(NanCmp::combine(l, r).bad, 0);
        }
    }
    assert_monoid_laws(&xs[..5]);
    let text = NanCmp::cuda_source();
    // p08819's comparison: the division is the intrinsic, the comparison the prelude's helper
    assert_contains(
        &text,
        "!r_fne(__fdiv_rn((-0.0f), (-0.0f)), __fdiv_rn((-0.0f), (-0.0f)))",
    );
    assert_contains(&text, "r_isnan(v_inf - v_inf)");
    assert_contains(&text, "r_feq(v_inf - v_inf, v_inf - v_inf)");
    assert_contains(&text, "r_fle(v_big - v_big, v_big - v_big)");
    assert_contains(&text, "r_f32_as_i32(v_inf - v_inf)");
    assert!(!text.contains("v_big * 0.0 =="), "{text}");
    // the helpers hide one operand behind an empty asm (also the NaN test of float -> int `as`)
    assert_contains(CUDA_PRELUDE, "asm(\"\" : \"+f\"(x));");
    assert_contains(CUDA_PRELUDE, "asm(\"\" : \"+d\"(x));");
    assert_contains(
        CUDA_PRELUDE,
        "bool r_fne(F a, F b) { return r_fhide(a) != b; }",
    );
    assert_contains(CUDA_PRELUDE, "x = r_fhide(x);");
    compiles::<NanCmp>();
}

// On the GPU.

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
