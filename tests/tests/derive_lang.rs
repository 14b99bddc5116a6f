//! The derive's whole language on the CPU and through NVRTC: the Rust semantics of monoids
//! written with loops, mutation, run-time indices, `match`, nested structs, helpers, const
//! generics and lifts; the CUDA text they become; and every generated kernel compiling with
//! NVRTC (plain and segmented, lifted or not). The GPU side is `lang_plain.rs` and
//! `lang_segmented.rs`.

use reduce_core::{fold, CudaMonoid, Lift, Monoid, SegIndex};
use reduce_cuda::testing::{
    compile_kernel_lifted, compile_seg_kernel, compile_seg_kernel_lifted, seg_kernel_source_lifted,
};
use reduce_cuda::{Algorithm, Config, Error, SegAlgorithm, SegConfig};
use reduce_tests::monoids::lang::*;
use reduce_tests::{
    assert_contains, assert_monoid_laws, compiles_every_algorithm, require_nvrtc, Random, CI_ARCH,
};

#[test]
fn automaton_composes_transition_tables() {
    let xs = Automaton::random_vec(12, 1);
    assert_monoid_laws(&xs);
    let (f, g) = (xs[0], xs[1]);
    let fg = Automaton::combine(f, g);
    for s in 0..8 {
        assert_eq!(fg.t[s], g.t[f.t[s] as usize]);
    }
    const { assert!(Automaton::CAN_FAULT) };
    let text = Automaton::cuda_source();
    assert_contains(
        &text,
        "struct Automaton {\n    r_array<unsigned char, 8> t;\n};",
    );
    assert_contains(
        &text,
        "    r_array<unsigned char, 8> v_t = {\n        (unsigned char)0, (unsigned char)0,",
    );
    // the loop counter is in bounds by construction; the table entry is checked
    assert_contains(
        &text,
        "        v_t[v_s] = r.t[r_ix((unsigned long long)l.t[v_s], 8)];\n",
    );
}

#[test]
fn an_index_out_of_bounds_panics_in_rust() {
    let bad = Automaton {
        t: [0, 1, 2, 200, 4, 5, 6, 7],
    };
    let ok = Automaton::identity();
    let panic = std::panic::catch_unwind(|| Automaton::combine(bad, ok)).unwrap_err();
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("index out of bounds: the len is 8 but the index is 200"),
        "{msg}"
    );
}

#[test]
fn matrix_chain_through_helpers_and_nested_structs() {
    let xs = MatChain::random_vec(6, 2);
    assert_monoid_laws(&xs);
    let total = fold(&xs);
    assert_eq!(total.count, 6);
    assert_ne!(
        MatChain::combine(xs[0], xs[1]),
        MatChain::combine(xs[1], xs[0])
    );
    // loops over constant ranges index constant-length arrays: nothing to check, no fault
    const { assert!(!MatChain::CAN_FAULT) };
    let text = MatChain::cuda_source();
    assert_contains(
        &text,
        "struct M3 {\n    r_array<r_array<unsigned int, 3>, 3> m;\n};",
    );
    assert_contains(
        &text,
        "struct MatChain {\n    M3 m;\n    unsigned int count;\n};",
    );
    assert_contains(
        &text,
        "__device__ inline M3 fn_mul(const M3 v_a, const M3 v_b) {",
    );
    assert_contains(&text, "__device__ inline M3 fn_eye() {");
    assert_contains(
        &text,
        "                v_s = v_s + (v_a.m[v_i][v_k] * v_b.m[v_k][v_j]);\n",
    );
    assert_contains(&text, "M m_identity() { return MatChain{fn_eye(), 0u}; }");
    assert_contains(
        &text,
        "return MatChain{fn_mul(l.m, r.m), l.count + r.count};",
    );
    // structs first (M3 before MatChain), then functions, then the monoid
    let m3 = text.find("struct M3").unwrap();
    let chain = text.find("struct MatChain").unwrap();
    let mul = text.find("fn_mul(const").unwrap();
    let typedef = text.find("typedef MatChain M;").unwrap();
    assert!(m3 < chain && chain < mul && mul < typedef, "{text}");
    // each definition once
    assert_eq!(text.matches("struct M3 {").count(), 1);
}

#[test]
fn top_k_is_generic_over_k() {
    let mut rng = reduce_tests::TestRng::new(3);
    let xs: Vec<f32> = (0..200)
        .map(|_| (rng.next_u32() % 1000) as f32 - 500.0)
        .collect();
    let lifted: Vec<TopK<4>> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| <TopK<4> as Lift<f32>>::lift(x, i as u64))
        .collect();
    let top = fold(&lifted);
    let mut sorted = xs.clone();
    sorted.sort_by(|a, b| b.partial_cmp(a).unwrap());
    assert_eq!(top.v, [sorted[0], sorted[1], sorted[2], sorted[3]]);
    assert_monoid_laws(&lifted[..8]);
    const { assert!(TopK::<4>::CAN_FAULT) };

    // the CUDA text is produced for each K
    let four = TopK::<4>::cuda_source();
    let sixteen = TopK::<16>::cuda_source();
    assert_contains(&four, "// monoid TopK (K = 4) (commutative)");
    assert_contains(&four, "struct TopK {\n    r_array<float, 4> v;\n};");
    assert_contains(&sixteen, "struct TopK {\n    r_array<float, 16> v;\n};");
    assert_contains(&sixteen, "static_assert(sizeof(TopK) == 64, ");
    assert_contains(
        &four,
        "    auto v_v = r_fill<float, 4>(r_f32_from_bits(0xff800000u));\n",
    );
    assert_contains(
        &four,
        "    for (unsigned long long v_k = 0ull; v_k < 4ull; ++v_k) {\n",
    );
    let lifted_text = <TopK<8> as Lift<f32>>::cuda_source_lifted();
    assert_contains(&lifted_text, "typedef float r_in;\n");
    assert_contains(
        &lifted_text,
        "__device__ __forceinline__ M m_lift(r_in x, unsigned long long i) {\n",
    );
    // K is a const generic: the index is checked against the array's own length
    assert_contains(&lifted_text, "    v_v.at(0ull) = x;\n");
}

#[test]
fn bounding_box_of_nested_points() {
    let p = |x, y| geom::Point { x, y };
    let b = |x, y| BBox {
        corners: [p(x, y), p(x, y)],
    };
    let xs = [b(1.0, 2.0), b(-3.0, 5.0), b(4.0, -1.0)];
    assert_monoid_laws(&xs);
    assert_eq!(
        fold(&xs),
        BBox {
            corners: [p(-3.0, -1.0), p(4.0, 5.0)]
        }
    );
    const { assert!(!BBox::CAN_FAULT) };
    let text = BBox::cuda_source();
    assert_contains(&text, "struct BBox {\n    r_array<Point, 2> corners;\n};");
    assert_contains(
        &text,
        "return BBox{{fn_lower(l.corners[0], r.corners[0]), fn_upper(l.corners[1], r.corners[1])}};",
    );
    let lifted = <BBox as Lift<geom::Point>>::cuda_source_lifted();
    assert_contains(&lifted, "typedef Point r_in;\n");
    assert_contains(
        &lifted,
        "M m_lift(r_in x, unsigned long long i) { return BBox{{x, x}}; }",
    );
}

#[test]
fn match_and_early_returns() {
    let xs = LastDigit::random_vec(50, 4);
    assert_monoid_laws(&xs[..10]);
    let last = xs.iter().rev().find(|d| d.d != 0).copied().unwrap();
    assert_eq!(fold(&xs), last);

    let text: Vec<Words> = b"hello wor".iter().map(|&b| Words::of(b)).collect();
    let more: Vec<Words> = b"ld, it's me".iter().map(|&b| Words::of(b)).collect();
    let all: Vec<Words> = text.iter().chain(&more).copied().collect();
    assert_eq!(fold(&all).words, 5); // hello world it s me
    assert_eq!(
        Words::combine(fold(&text), fold(&more)),
        fold(&all),
        "cut inside a word"
    );
    assert_monoid_laws(&Words::random_vec(8, 5));
    let cuda = Words::cuda_source();
    assert_contains(&cuda, "    if (l.empty) {\n        return r;\n    }\n");
    assert_contains(
        &cuda,
        "if ((l.last >= (unsigned char)97 && l.last <= (unsigned char)122) || \
         (l.last >= (unsigned char)65 && l.last <= (unsigned char)90)) {",
    );
}

#[test]
fn argmax_lifts_the_index() {
    let xs = [3.0f32, 9.0, -1.0, 9.0, 2.0];
    let lifted: Vec<ArgMax> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| <ArgMax as Lift<f32>>::lift(x, i as u64))
        .collect();
    assert_eq!(fold(&lifted), ArgMax { v: 9.0, i: 1 });
    assert_monoid_laws(&lifted);
    let text = <ArgMax as Lift<f32>>::cuda_source_lifted();
    assert_contains(
        &text,
        "M m_lift(r_in x, unsigned long long i) {\n    return ArgMax{x, (unsigned int)i};\n}\n",
    );
}

/// Every segmented algorithm's kernel for `M`, both forms, through NVRTC.
fn compiles_segmented<M: CudaMonoid>() {
    for algorithm in SegAlgorithm::ALL {
        for offsets_form in [false, true] {
            if let Err(e) = compile_seg_kernel::<M>(algorithm.into(), offsets_form, CI_ARCH) {
                panic!(
                    "{algorithm:?} (offsets: {offsets_form}) for {} does not compile:\n{e}",
                    M::CUDA_NAME
                );
            }
        }
    }
}

/// The lifted segmented kernels (SegShuffle, u32 layouts; SegMerge) for `M` lifting `X`, both
/// forms, `I` layouts.
fn compiles_segmented_lifted<M: Lift<X>, X: reduce_core::DeviceCopy, I: SegIndex>() {
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let shuffles = if I::WIDE {
        vec![]
    } else {
        vec![shuffle, shuffle.items_per_thread(3)]
    };
    for config in [merge, merge.block(64).items_per_thread(2).stages(3)]
        .into_iter()
        .chain(shuffles)
    {
        for offsets_form in [false, true] {
            if let Err(e) = compile_seg_kernel_lifted::<M, X, I>(config, offsets_form, CI_ARCH) {
                panic!(
                    "lifted {config:?} (offsets: {offsets_form}) for {} does not compile:\n{e}",
                    M::CUDA_NAME
                );
            }
        }
    }
    // The paper's segmented algorithms read monoid values only.
    let e = seg_kernel_source_lifted::<M, X, I>(SegAlgorithm::Tb2Seg.into(), true);
    assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
}

fn compiles_lifted<M: Lift<X>, X: reduce_core::DeviceCopy>() {
    for config in [
        Config::new(Algorithm::Shuffle),
        Config::new(Algorithm::Auto),
        Config::new(Algorithm::Shuffle).items_per_thread(3),
    ] {
        if let Err(e) = compile_kernel_lifted::<M, X>(config, CI_ARCH) {
            panic!(
                "lifted {config:?} for {} does not compile:\n{e}",
                M::CUDA_NAME
            );
        }
    }
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    if !require_nvrtc() {
        return;
    }
    compiles_every_algorithm::<Automaton>();
    compiles_every_algorithm::<MatChain>();
    compiles_every_algorithm::<TopK<4>>();
    compiles_every_algorithm::<TopK<16>>();
    compiles_every_algorithm::<BBox>();
    compiles_every_algorithm::<LastDigit>();
    compiles_every_algorithm::<ArgMax>();
    compiles_every_algorithm::<Words>();
    compiles_every_algorithm::<Window>();
    compiles_every_algorithm::<Regress>();
    compiles_every_algorithm::<via_cuda::Scaled>();
    compiles_lifted::<TopK<8>, f32>();
    compiles_lifted::<BBox, geom::Point>();
    compiles_lifted::<ArgMax, f32>();
    compiles_lifted::<Shift, u32>();
    compiles_lifted::<Probe, u64>();
    compiles_segmented::<Automaton>();
    compiles_segmented::<MatChain>();
    compiles_segmented::<TopK<4>>();
    compiles_segmented::<Window>();
    compiles_segmented_lifted::<ArgMax, f32, u32>();
    compiles_segmented_lifted::<TopK<8>, f32, u64>();
    compiles_segmented_lifted::<BBox, geom::Point, u32>();
    compiles_segmented_lifted::<Shift, u32, u64>();
    compiles_lifted::<MathFns, f32>();
    compiles_lifted::<LogSumExp, f32>();
    compiles_segmented_lifted::<MathFns, f32, u32>();
    compiles_lifted::<Methods, u64>();
    compiles_lifted::<Quotients, u64>();
    compiles_segmented_lifted::<Methods, u64, u64>();
    compiles_every_algorithm::<LogSumExp>();
}

/// The elementary functions: the Rust side calls `reduce_core::math` (not `std`, whose bits may
/// differ), the CUDA side the prelude's copies of the same routines; integer `pow` and the
/// saturating operations are Rust's.
#[test]
fn elementary_functions_call_reduce_core_math_on_both_sides() {
    use reduce_core::math::Math;
    for (k, &x) in [
        0.5f32,
        -2.25,
        3.0,
        1e-30,
        88.0,
        -0.0,
        f32::INFINITY,
        f32::NAN,
    ]
    .iter()
    .enumerate()
    {
        let m = <MathFns as Lift<f32>>::lift(x, k as u64);
        let want = [
            Math::exp(x),
            Math::exp2(x),
            Math::ln(x.abs()),
            Math::log2(x.abs()),
            Math::log10(x.abs()),
            Math::powf(x.abs(), 0.37 * x),
            Math::powi(x, (k % 7) as i32 - 3),
            Math::tanh(x),
        ];
        for (got, want) in m.f.iter().zip(want) {
            assert_eq!(got.to_bits(), want.to_bits(), "f32 at {x}");
        }
        let w = x as f64;
        let want = [
            Math::exp(w),
            Math::exp2(w),
            Math::ln(w.abs()),
            Math::log2(w.abs()),
            Math::log10(w.abs()),
            Math::powf(w.abs(), 0.37 * w),
            Math::powi(w, (k % 7) as i32 - 3),
            Math::tanh(w),
        ];
        for (got, want) in m.d.iter().zip(want) {
            assert_eq!(got.to_bits(), want.to_bits(), "f64 at {x}");
        }
        let bits = (x * 1000.0) as i32;
        assert_eq!(m.n[0], (bits % 100).pow(k as u32 % 5));
        assert_eq!(m.n[3], bits.saturating_mul(bits));
    }
    let text = <MathFns as Lift<f32>>::cuda_source_lifted();
    for call in [
        "r_exp_f32(",
        "r_exp2_f32(",
        "r_ln_f32(",
        "r_log2_f32(",
        "r_log10_f32(",
        "r_powf_f32(",
        "r_powi_f32(",
        "r_tanh_f32(",
        "r_exp_f64(",
        "r_powf_f64(",
        "r_powi_f64(",
        "r_log10_f64(",
        "r_pow_i32(",
        "r_sat_add_i32(",
        "r_sat_sub_i32(",
        "r_sat_mul_i32(",
    ] {
        assert_contains(&text, call);
    }
    // Log-sum-exp of logits: ln Σ e^x, against f64.
    let xs: Vec<f32> = (0..1000)
        .map(|i| ((i * 37) % 101) as f32 / 7.0 - 5.0)
        .collect();
    let lse = fold(&lifted::<LogSumExp, f32>(&xs)).value() as f64;
    let want = xs.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
    assert!(
        (lse - want).abs() < 1e-5 * want.abs(),
        "{lse} against {want}"
    );
}

#[test]
fn a_const_item_as_length_and_bound() {
    let xs: Vec<Window> = (1..=12u32).map(Window::of).collect();
    assert_monoid_laws(&xs[..6]);
    assert_eq!(
        fold(&xs),
        Window {
            v: [8, 9, 10, 11, 12],
            n: 12,
            max: 12
        }
    );
    let text = Window::cuda_source();
    assert_contains(&text, "struct Window {\n    r_array<unsigned int, 5> v;\n");
    assert_contains(
        &text,
        "for (unsigned long long v_i = 0ull; v_i < 5ull; ++v_i) {",
    );
    assert_contains(
        &text,
        "for (unsigned long long v_index = 0; v_index < r_a1.size(); ++v_index) {",
    );
}

#[test]
fn fuzzer_regressions() {
    let a = Regress {
        t: [1, 0, 2],
        set: false,
    };
    let b = Regress {
        t: [2, 2, 1],
        set: true,
    };
    // elementwise max [2, 2, 2]; `t[0] = t[0]`; `t[2] = x` over the copy ends with t[2] = 2
    assert_eq!(
        Regress::combine(a, b),
        Regress {
            t: [2, 2, 2],
            set: true
        }
    );
    let c = Regress {
        t: [0, 1, 0],
        set: false,
    };
    // Over the live array the loop would end with t[2] = t[1] = 1: the copy keeps 2.
    assert_eq!(Regress::combine(a, c).t, [1, 1, 2]);
    assert_monoid_laws(&[a, b, c, Regress::identity()]);
    // `l.set & ...` evaluates its right side in Rust: an index out of bounds panics even
    // when l.set is false, so the device must record the fault too.
    let bad = Regress {
        t: [1, 0, 7],
        set: false,
    };
    assert!(std::panic::catch_unwind(|| Regress::combine(bad, b)).is_err());
    let text = Regress::cuda_source();
    assert_contains(&text, "t[([&]() -> unsigned long long {");
    assert_contains(
        &text,
        "(bool)(l.set & ((r.t[r_ix((unsigned long long)l.t[2], 3)] >> 31) < 2u))",
    );
}

#[test]
fn probe_is_rust_on_the_miscompiled_cases() {
    let lift = |x: u64| <Probe as Lift<u64>>::lift(x, 0);
    // |i32::MIN| wraps to MIN; MIN % -2147483647 = -1
    assert_eq!(lift(0x7fff_ffff_8000_0000).b, -1);
    // -(i16::MIN) wraps to MIN: / 4849 = -6, >> 1 = -16384 (arithmetic), >> 15 = -1
    assert_eq!(lift(0x8000_0000_0000_0100).a, -6);
    assert_eq!(lift(0x8000_0000_0000_0100).c, -16384);
    assert_eq!(lift(0x8000_0000_0000_0f00).c, -1);
    let text = <Probe as Lift<u64>>::cuda_source_lifted();
    assert_contains(&text, "r_div_i16(r_neg_i16(v_h), (short)4849)");
    // the prelude pins narrow results and makes wrapped negations opaque
    assert_contains(reduce_core::CUDA_PRELUDE, "cvt.s32.s16");
    assert_contains(reduce_core::CUDA_PRELUDE, "r_opaque((T)((W)0 - (W)a))");
}

/// The derives through `reduce_cuda` alone.
mod via_cuda {
    use reduce_cuda::{device_fn, DeviceCopy, Monoid};

    #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
    #[repr(C)]
    pub struct Pair(pub f32, pub f32);

    #[device_fn]
    pub fn scale(p: Pair, k: f32) -> Pair {
        Pair(p.0 * k, p.1 * k)
    }

    #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
    #[repr(C)]
    #[monoid(identity = Scaled { p: Pair(0.0, 0.0), k: 1.0 },
             combine = |l, r| Scaled { p: scale(l.p, r.k), k: l.k * r.k })]
    pub struct Scaled {
        pub p: Pair,
        pub k: f32,
    }
}

#[test]
fn derived_through_reduce_cuda() {
    use via_cuda::{Pair, Scaled};
    let x = Scaled {
        p: Pair(1.0, 2.0),
        k: 3.0,
    };
    let y = Scaled {
        p: Pair(0.5, 0.25),
        k: 2.0,
    };
    assert_eq!(
        Scaled::combine(x, y),
        Scaled {
            p: Pair(2.0, 4.0),
            k: 6.0
        }
    );
    let text = Scaled::cuda_source();
    assert_contains(&text, "struct Pair {\n    float f0;\n    float f1;\n};");
    assert_contains(
        &text,
        "__device__ inline Pair fn_scale(const Pair v_p, const float v_k) {",
    );
    assert_contains(&text, "return Pair{v_p.f0 * v_k, v_p.f1 * v_k};");
}

#[test]
fn a_lift_may_fault() {
    const { assert!(<Shift as Lift<u32>>::LIFT_CAN_FAULT) };
    const { assert!(Shift::CAN_FAULT) }; // its combine looks up r.t[l.t[s]]
    const { assert!(!<ArgMax as Lift<f32>>::LIFT_CAN_FAULT) };
    assert_eq!(<Shift as Lift<u32>>::lift(1, 0), Shift { t: [2, 3, 0, 1] });
    assert!(std::panic::catch_unwind(|| <Shift as Lift<u32>>::lift(3, 0)).is_err());
}

#[test]
fn lifted_kernels_are_read_by_shuffle_only() {
    let e =
        reduce_cuda::testing::kernel_source_lifted::<ArgMax, f32>(Config::new(Algorithm::Matrix))
            .unwrap_err();
    assert!(e.to_string().contains("Shuffle only"), "{e}");
    let source =
        reduce_cuda::testing::kernel_source_lifted::<ArgMax, f32>(Config::new(Algorithm::Auto))
            .unwrap();
    // 4-byte inputs: 16 per lane, four 16-byte vectors
    assert_contains(&source.text, "#define R_ITEMS 16\n#define R_VECS 4\n");
    assert_contains(&source.text, "typedef float r_in;");
    assert_contains(
        &source.text,
        "// r_in and m_lift are defined with the monoid",
    );
}

/// An integer division by a run-time value can fault (a lift that divides is `LIFT_CAN_FAULT`
/// and its CUDA text calls the prelude's checked division); by literals other than 0 and -1 it
/// cannot (`Methods` divides only by such literals), and the text is C's division.
#[test]
fn divisions_by_run_time_values_can_fault() {
    const { assert!(<Quotients as Lift<u64>>::LIFT_CAN_FAULT) };
    const { assert!(!<Methods as Lift<u64>>::LIFT_CAN_FAULT) };
    let text = <Quotients as Lift<u64>>::cuda_source_lifted();
    for call in ["r_div_i32(", "r_wrem_u64("] {
        assert!(text.contains(call), "{call} in:\n{text}");
    }
    let text = <Methods as Lift<u64>>::cuda_source_lifted();
    assert!(text.contains("(x % 40000ull)"), "{text}");
    // The Rust side divides as Rust does.
    // 100_000 / 7, and (x >> 40) = 100_000 >> 8 = 390, 390 % 7 = 5
    let q = <Quotients as Lift<u64>>::lift((100_000 << 32) | 7, 0);
    assert_eq!((q.q, q.r, q.e), (14_285, 5, 100_000 % 7));
}
