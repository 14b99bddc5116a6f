//! What `#[derive(Monoid)]` produces: the Rust-side `identity`/`combine`/`COMMUTATIVE`, and the
//! CUDA text of `CudaMonoid::cuda_source()`.
//!
//! NVRTC compiles these texts in the kernel tests (through `reduce_cuda::kernel_source`); here
//! the text is checked for the pieces the translation must produce.

use reduce_core::{CudaMonoid, Monoid};
use reduce_tests::{assert_associative, assert_contains, assert_identity};
use std::mem::{align_of, size_of};

/// x -> a*x + b (mod 2^32); `combine(f, g)` applies `f` first. Not commutative.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Affine { a: 1, b: 0 },
    combine = |l, r| Affine {
        a: l.a.wrapping_mul(r.a),
        b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
    }
)]
pub struct Affine {
    pub a: u32,
    pub b: u32,
}

/// 2x2 matrices over u32 (wrapping), row-major; parameters named `x`, `y`.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Mat2 { m: [1, 0, 0, 1] },
    combine = |x, y| Mat2 {
        m: [
            x.m[0].wrapping_mul(y.m[0]).wrapping_add(x.m[1].wrapping_mul(y.m[2])),
            x.m[0].wrapping_mul(y.m[1]).wrapping_add(x.m[1].wrapping_mul(y.m[3])),
            x.m[2].wrapping_mul(y.m[0]).wrapping_add(x.m[3].wrapping_mul(y.m[2])),
            x.m[2].wrapping_mul(y.m[1]).wrapping_add(x.m[3].wrapping_mul(y.m[3])),
        ],
    }
)]
pub struct Mat2 {
    pub m: [u32; 4],
}

/// Keep the first set value: a tuple struct with a bool, `if`/`else` on whole structs.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = KeepFirst(0, false), combine = |l, r| if l.1 { l } else { r })]
pub struct KeepFirst(pub u32, pub bool);

/// Component-wise sums and products in narrow types (wrapping, commutative).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Narrow { a: 0, b: 1, c: 0, d: 0 },
    combine = |l, r| Narrow {
        d: l.d ^ r.d,
        a: l.a.wrapping_add(r.a),
        b: l.b.wrapping_mul(r.b),
        c: l.c.wrapping_sub(r.c.wrapping_neg()),
    },
    commutative
)]
pub struct Narrow {
    pub a: i8,
    pub b: u16,
    pub c: i16,
    pub d: u8,
}

/// Composition of clamps `x -> x.max(lo).min(hi)` in f32: `let` blocks, `min`/`max`,
/// infinities. Not commutative.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Clamp { lo: f32::NEG_INFINITY, hi: f32::INFINITY },
    combine = |f, g| {
        let lo = f.lo.max(g.lo).min(g.hi);
        let hi = f.hi.max(g.lo).min(g.hi);
        Clamp { lo, hi }
    }
)]
pub struct Clamp {
    pub lo: f32,
    pub hi: f32,
}

/// Minimum with its index, ties to the smaller index (commutative for non-NaN values).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = MinIdx { v: f32::INFINITY, i: u32::MAX },
    combine = |l, r| if r.v < l.v || (r.v == l.v && r.i < l.i) { r } else { l },
    commutative
)]
pub struct MinIdx {
    pub v: f32,
    pub i: u32,
}

/// Not a lawful monoid: exercises casts, `else if`, nested blocks, shifts, rotations, constants,
/// 2-D arrays, struct update syntax and f64 through the translator.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Zoo { f: 0.0, d: 0.0, w: 0, i: 0, u: 0, b: false, g: [[0; 2]; 2] },
    combine = |l, r| {
        let k: i32 = if l.f > 1.5 { 1 } else if l.f < -0.5 { -1 } else { 0 };
        let big = (r.d * 1e300) as i32;
        let x = {
            let t = l.w.rotate_left(7) ^ (r.w >> 3u8);
            t.wrapping_add(r.w << r.u)
        };
        Zoo {
            f: (l.i as f32).mul_add(0.1, r.f).max(f32::MIN_POSITIVE),
            d: (l.d - r.d).abs().sqrt() + f64::EPSILON,
            w: x,
            i: k.wrapping_mul(big).wrapping_add(-(r.i >> 1)) % 7,
            u: (r.f as u8).wrapping_add(l.b as u8) | 1,
            g: [[l.g[1][1], r.g[0][0] * 2], l.g[0]],
            ..l
        }
    }
)]
pub struct Zoo {
    pub f: f32,
    pub d: f64,
    pub w: u64,
    pub i: i32,
    pub u: u8,
    pub b: bool,
    pub g: [[i16; 2]; 2],
}

/// The affine map again, with a hand-written CUDA combine and an over-aligned layout.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C, align(16))]
#[monoid(
    identity = HandAffine { a: 1, b: 0 },
    combine = |l, r| HandAffine {
        a: l.a.wrapping_mul(r.a),
        b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
    },
    cuda = "
        const unsigned int a = l.a * r.a;
        return HandAffine{a, l.b * r.a + r.b};
    "
)]
pub struct HandAffine {
    pub a: u32,
    pub b: u32,
}

/// A hand-written CUDA combine beside a translated identity that calls `exp`: the identity's
/// Rust side uses `reduce_core::math` as its CUDA text does (the platform's `expf` rounds
/// `exp(0.3)` the other way).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = HandMax { x: f32::exp(0.3) },
    combine = |l, r| HandMax { x: l.x.max(r.x) },
    cuda = "return HandMax{fmaxf(l.x, r.x)};"
)]
pub struct HandMax {
    pub x: f32,
}

/// `f32::exp` of a literal, where nothing else pins the type: an f32 call on the CPU as in
/// CUDA (`r_exp_f32(20.0f)`): exp(20) rounds to 485165184 in f32, 485165195 in f64.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = ExpCount { n: 0 },
    combine = |l, r| ExpCount { n: l.n.wrapping_add(r.n).wrapping_add(f32::exp(20.0) as u64) }
)]
pub struct ExpCount {
    pub n: u64,
}

/// A constant index into an array of a const generic length: checked on the CPU as on the
/// device (a fault there, `r_ix`), not left to a panic of rustc's indexing.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Second::<K> { v: [0; K] },
    combine = |l, r| Second::<K> { v: [l.v[1].wrapping_add(r.v[0]); K] }
)]
pub struct Second<const K: usize> {
    pub v: [u32; K],
}

/// Derived through `reduce_cuda` alone (`reduce_cuda::Monoid` is the `MonoidViaCuda` derive,
/// which names the traits as `::reduce_cuda::reduce_core::...`).
pub mod via_cuda {
    use reduce_cuda::Monoid;

    #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
    #[repr(C)]
    #[monoid(identity = MaxU64 { x: 0 }, combine = |l, r| MaxU64 { x: l.x.max(r.x) }, commutative)]
    pub struct MaxU64 {
        pub x: u64,
    }
}
use via_cuda::MaxU64;

/// Every monoid of this file with its CUDA text (also compiled with NVRTC by an out-of-tree
/// check; see the derive's report).
pub fn all_cuda_sources() -> Vec<(&'static str, String)> {
    vec![
        (Affine::CUDA_NAME, Affine::cuda_source()),
        (Mat2::CUDA_NAME, Mat2::cuda_source()),
        (KeepFirst::CUDA_NAME, KeepFirst::cuda_source()),
        (Narrow::CUDA_NAME, Narrow::cuda_source()),
        (Clamp::CUDA_NAME, Clamp::cuda_source()),
        (MinIdx::CUDA_NAME, MinIdx::cuda_source()),
        (Zoo::CUDA_NAME, Zoo::cuda_source()),
        (HandAffine::CUDA_NAME, HandAffine::cuda_source()),
        (MaxU64::CUDA_NAME, MaxU64::cuda_source()),
        (Shadow::CUDA_NAME, Shadow::cuda_source()),
    ]
}

#[test]
fn affine_rust_side() {
    let f = Affine {
        a: 0x8000_0001,
        b: 3,
    };
    let g = Affine { a: 2, b: u32::MAX };
    // wraps modulo 2^32 instead of panicking in this debug build
    assert_eq!(Affine::combine(f, g), Affine { a: 2, b: 5 });
    assert_eq!(
        Affine::combine(g, f),
        Affine {
            a: 2,
            b: 0x8000_0002
        }
    );
    assert_eq!(Affine::identity(), Affine { a: 1, b: 0 });
    const { assert!(!Affine::COMMUTATIVE) };
    assert_identity(&[f, g]);
    assert_associative(&[f, g, Affine { a: 7, b: 11 }]);
}

#[test]
fn affine_cuda_text_is_exactly_this() {
    let expected = "\
// monoid Affine, generated by #[derive(Monoid)]
struct Affine {
    unsigned int a;
    unsigned int b;
};
static_assert(sizeof(Affine) == 8, \"Affine: CUDA size differs from Rust size_of\");
static_assert(alignof(Affine) == 4, \"Affine: CUDA alignment differs from Rust align_of\");
static_assert(r_offsetof(Affine, b) == 4, \"Affine.b: CUDA offset differs from Rust offset_of\");
typedef Affine M;
__device__ __forceinline__ M m_identity() { return Affine{1u, 0u}; }
__device__ __forceinline__ M m_combine(M l, M r) {
    return Affine{l.a * r.a, (l.b * r.a) + r.b};
}
";
    assert_eq!(Affine::cuda_source(), expected);
    assert_eq!(Affine::CUDA_NAME, "Affine");
}

#[test]
fn layout_numbers_come_from_rust() {
    fn check<M: CudaMonoid>() {
        let text = M::cuda_source();
        let name = M::CUDA_NAME;
        assert_contains(
            &text,
            &format!("static_assert(sizeof({name}) == {}, ", size_of::<M>()),
        );
        assert_contains(
            &text,
            &format!("static_assert(alignof({name}) == {}, ", align_of::<M>()),
        );
        assert_contains(&text, &format!("typedef {name} M;\n"));
        assert_contains(&text, "__device__ __forceinline__ M m_identity()");
        assert_contains(&text, "__device__ __forceinline__ M m_combine(M l, M r)");
        assert_eq!(
            text.matches('{').count(),
            text.matches('}').count(),
            "{text}"
        );
    }
    check::<Affine>();
    check::<Mat2>();
    check::<KeepFirst>();
    check::<Narrow>();
    check::<Clamp>();
    check::<MinIdx>();
    check::<Zoo>();
    check::<HandAffine>();
    check::<MaxU64>();
    let zoo = Zoo::cuda_source();
    assert_contains(
        &zoo,
        &format!("r_offsetof(Zoo, d) == {}, ", std::mem::offset_of!(Zoo, d)),
    );
    assert_contains(
        &zoo,
        &format!("r_offsetof(Zoo, g) == {}, ", std::mem::offset_of!(Zoo, g)),
    );
    let narrow = Narrow::cuda_source();
    assert_contains(&narrow, "r_offsetof(Narrow, d) == 6, ");
}

/// `DeviceCopy::write_bytes` (what records and hashes of values hold): the fields' bytes at
/// their offsets, every padding byte zero — never read from the value.
#[test]
fn write_bytes_zeroes_padding() {
    use reduce_core::monoid::bytes_of;
    assert_eq!(
        bytes_of(&[KeepFirst(0x0403_0201, true)]),
        [1, 2, 3, 4, 1, 0, 0, 0]
    );
    let narrow = Narrow {
        a: -1,
        b: 0x0302,
        c: 0x0504,
        d: 6,
    };
    assert_eq!(bytes_of(&[narrow]), [0xff, 0, 2, 3, 4, 5, 6, 0]);
    let hand = HandAffine { a: 7, b: 9 };
    let mut want = vec![0u8; 16];
    want[..4].copy_from_slice(&7u32.to_le_bytes());
    want[4..8].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(bytes_of(&[hand, hand]), [want.clone(), want].concat());
    let zoo = Zoo {
        f: 1.5,
        d: -2.25,
        w: 0x0102_0304_0506_0708,
        i: -3,
        u: 0xab,
        b: true,
        g: [[1, -2], [3, -4]],
    };
    let mut want = vec![0u8; size_of::<Zoo>()];
    let mut put = |at: usize, bytes: &[u8]| want[at..at + bytes.len()].copy_from_slice(bytes);
    put(std::mem::offset_of!(Zoo, f), &1.5f32.to_le_bytes());
    put(std::mem::offset_of!(Zoo, d), &(-2.25f64).to_le_bytes());
    put(
        std::mem::offset_of!(Zoo, w),
        &0x0102_0304_0506_0708u64.to_le_bytes(),
    );
    put(std::mem::offset_of!(Zoo, i), &(-3i32).to_le_bytes());
    put(std::mem::offset_of!(Zoo, u), &[0xab]);
    put(std::mem::offset_of!(Zoo, b), &[1]);
    let g: Vec<u8> = [1i16, -2, 3, -4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    put(std::mem::offset_of!(Zoo, g), &g);
    assert!(
        size_of::<Zoo>() > 4 + 8 + 8 + 4 + 1 + 1 + 8,
        "Zoo has padding"
    );
    assert_eq!(bytes_of(&[zoo]), want);
}

#[test]
fn matrix_of_u32() {
    let a = Mat2 { m: [1, 2, 3, 4] };
    let b = Mat2 {
        m: [0, 1, u32::MAX, 0],
    };
    // [[1,2],[3,4]] * [[0,1],[-1,0]] mod 2^32
    assert_eq!(
        Mat2::combine(a, b),
        Mat2 {
            m: [u32::MAX - 1, 1, u32::MAX - 3, 3]
        }
    );
    assert_ne!(Mat2::combine(a, b), Mat2::combine(b, a));
    assert_identity(&[a, b]);
    assert_associative(&[
        a,
        b,
        Mat2 {
            m: [5, 0x8000_0000, 7, 9],
        },
    ]);

    let text = Mat2::cuda_source();
    assert_contains(&text, "struct Mat2 {\n    r_array<unsigned int, 4> m;\n};");
    assert_contains(&text, "M m_identity() { return Mat2{{1u, 0u, 0u, 1u}}; }");
    // the closure's `x`, `y` are `l`, `r` in CUDA
    assert_contains(
        &text,
        "            (l.m[0] * r.m[0]) + (l.m[1] * r.m[2]),\n",
    );
    assert_contains(
        &text,
        "            (l.m[2] * r.m[1]) + (l.m[3] * r.m[3]),\n",
    );
    assert!(!text.contains("x.m") && !text.contains("y.m"), "{text}");
}

#[test]
fn keep_first_tuple_struct_with_bool() {
    let unset = KeepFirst(0, false);
    let a = KeepFirst(7, true);
    let b = KeepFirst(9, true);
    assert_eq!(KeepFirst::combine(a, b), a);
    assert_eq!(KeepFirst::combine(unset, b), b);
    assert_identity(&[a, b]);
    assert_associative(&[unset, a, b]);

    let text = KeepFirst::cuda_source();
    assert_contains(
        &text,
        "struct KeepFirst {\n    unsigned int f0;\n    bool f1;\n};",
    );
    assert_contains(
        &text,
        "r_offsetof(KeepFirst, f1) == 4, \"KeepFirst.1: CUDA offset",
    );
    assert_contains(&text, "M m_identity() { return KeepFirst{0u, false}; }");
    assert_contains(&text, "    return l.f1 ? l : r;\n");
}

#[test]
fn narrow_integers_wrap() {
    let x = Narrow {
        a: 127,
        b: 300,
        c: -32768,
        d: 0xf0,
    };
    let y = Narrow {
        a: 1,
        b: 300,
        c: 1,
        d: 0x0f,
    };
    assert_eq!(
        Narrow::combine(x, y),
        Narrow {
            a: -128,
            b: 24464,
            c: -32767,
            d: 0xff
        }
    );
    const { assert!(Narrow::COMMUTATIVE) };
    assert_eq!(Narrow::combine(x, y), Narrow::combine(y, x));
    assert_identity(&[x, y]);

    let text = Narrow::cuda_source();
    assert_contains(
        &text,
        "// monoid Narrow (commutative), generated by #[derive(Monoid)]",
    );
    assert_contains(
        &text,
        "struct Narrow {\n    signed char a;\n    unsigned short b;\n    short c;\n    \
         unsigned char d;\n};",
    );
    assert_contains(
        &text,
        "return Narrow{(signed char)0, (unsigned short)1, (short)0, (unsigned char)0};",
    );
    // fields come out in declaration order whatever order the literal uses
    let a = text.find("r_add_i8(l.a, r.a),  // a").expect("a");
    let b = text.find("r_mul_u16(l.b, r.b),  // b").expect("b");
    let c = text
        .find("r_sub_i16(l.c, r_neg_i16(r.c)),  // c")
        .expect("c");
    let d = text.find("(unsigned char)(l.d ^ r.d),  // d").expect("d");
    assert!(a < b && b < c && c < d, "{text}");
}

fn apply(c: Clamp, x: f32) -> f32 {
    x.max(c.lo).min(c.hi)
}

#[test]
fn clamp_composition_in_f32() {
    let f = Clamp { lo: -1.0, hi: 2.0 };
    let g = Clamp { lo: 0.5, hi: 10.0 };
    let h = Clamp { lo: 3.0, hi: 4.0 };
    for (p, q) in [(f, g), (g, f), (f, h), (h, f), (g, h)] {
        let pq = Clamp::combine(p, q);
        for x in [
            -5.0,
            -1.0,
            0.0,
            0.7,
            1.5,
            2.0,
            3.5,
            7.0,
            20.0,
            f32::INFINITY,
        ] {
            assert_eq!(
                apply(pq, x),
                apply(q, apply(p, x)),
                "{p:?} then {q:?} at {x}"
            );
        }
    }
    assert_eq!(
        Clamp::identity(),
        Clamp {
            lo: f32::NEG_INFINITY,
            hi: f32::INFINITY
        }
    );
    assert_identity(&[f, g, h]);
    assert_associative(&[f, g, h]);

    let text = Clamp::cuda_source();
    assert_contains(
        &text,
        "return Clamp{r_f32_from_bits(0xff800000u), r_f32_from_bits(0x7f800000u)};",
    );
    assert_contains(
        &text,
        "    const float v_lo = fminf(fmaxf(l.lo, r.lo), r.hi);\n    \
         const float v_hi = fminf(fmaxf(l.hi, r.lo), r.hi);\n    return Clamp{v_lo, v_hi};\n",
    );
}

#[test]
fn min_with_index() {
    let a = MinIdx { v: 1.0, i: 4 };
    let b = MinIdx { v: 1.0, i: 2 };
    let c = MinIdx { v: -3.0, i: 9 };
    assert_eq!(MinIdx::combine(a, b), b);
    assert_eq!(MinIdx::combine(b, a), b);
    assert_eq!(MinIdx::combine(a, c), c);
    const { assert!(MinIdx::COMMUTATIVE) };
    assert_identity(&[a, b, c]);
    assert_associative(&[a, b, c]);

    let text = MinIdx::cuda_source();
    assert_contains(
        &text,
        "return MinIdx{r_f32_from_bits(0x7f800000u), 4294967295u};",
    );
    assert_contains(
        &text,
        "return (r_flt(r.v, l.v) || (r_feq(r.v, l.v) && (r.i < l.i))) ? r : l;",
    );
}

#[test]
fn zoo_of_casts_blocks_and_constants() {
    let l = Zoo {
        f: 2.0,
        d: 3.0,
        w: 0x0123_4567_89ab_cdef,
        i: 10,
        u: 0,
        b: true,
        g: [[1, 2], [3, 4]],
    };
    let r = Zoo {
        f: 300.7,
        d: 2.5e-299,
        w: 5,
        i: -9,
        u: 3,
        b: false,
        g: [[5, 6], [7, 8]],
    };
    let z = Zoo::combine(l, r);
    assert_eq!(z.f, 10f32.mul_add(0.1, 300.7));
    assert_eq!(z.d, 3f64.sqrt() + f64::EPSILON);
    assert_eq!(z.w, 0x0123_4567_89ab_cdefu64.rotate_left(7) + (5 << 3));
    // k = 1, big = 25 (saturating cast), 1 * 25 + 5 = 30, 30 % 7 = 2
    assert_eq!(z.i, 2);
    // 300.7 as u8 saturates to 255; 255 + 1 wraps to 0; | 1
    assert_eq!(z.u, 1);
    // from `..l`
    assert!(z.b);
    assert_eq!(z.g, [[4, 10], [1, 2]]);

    let text = Zoo::cuda_source();
    for piece in [
        "struct Zoo {\n    float f;\n    double d;\n    unsigned long long w;\n    int i;\n    \
         unsigned char u;\n    bool b;\n    r_array<r_array<short, 2>, 2> g;\n};",
        "        {{{(short)0, (short)0}, {(short)0, (short)0}}},  // g\n",
        "    const int v_k = r_fgt(l.f, 1.5f) ? 1 : (r_flt(l.f, (-0.5f)) ? (-1) : 0);\n",
        "    const int v_big = r_f64_as_i32(r.d * 1e300);\n",
        "    const unsigned long long v_x = [&]() -> unsigned long long {\n        \
         const unsigned long long v_t = r_rotl_u64(l.w, 7u) ^ (r.w >> 3);\n        \
         return v_t + r_shl_u64(r.w, r.u);\n    }();\n",
        "        fmaxf(fmaf((float)l.i, 0.1f, r.f), 1.1754944e-38f),  // f\n",
        "        sqrt(fabs(l.d - r.d)) + 2.220446049250313e-16,  // d\n",
        "        v_x,  // w\n",
        "        r_rem_i32(r_add_i32(r_mul_i32(v_k, v_big), r_neg_i32(r.i >> 1)), 7),  // i\n",
        "        (unsigned char)(r_add_u8(r_f32_as_u8(r.f), (unsigned char)l.b) | \
         (unsigned char)1),  // u\n",
        "        l.b,  // b\n",
        "        {{{l.g[1][1], r_mul_i16(r.g[0][0], (short)2)}, l.g[0]}},  // g\n",
    ] {
        assert_contains(&text, piece);
    }
}

#[test]
fn hand_written_cuda_combine() {
    let f = HandAffine {
        a: 0x8000_0001,
        b: 3,
    };
    let g = HandAffine { a: 2, b: u32::MAX };
    assert_eq!(HandAffine::combine(f, g), HandAffine { a: 2, b: 5 });
    assert_eq!(align_of::<HandAffine>(), 16);

    let text = HandAffine::cuda_source();
    assert_contains(&text, "struct alignas(16) HandAffine {");
    assert_contains(&text, "static_assert(sizeof(HandAffine) == 16, ");
    assert_contains(&text, "M m_identity() { return HandAffine{1u, 0u}; }");
    assert_contains(
        &text,
        "__device__ __forceinline__ M m_combine(M l, M r) {\n    \
         // hand-written: #[monoid(cuda = \"...\")]\n    \
         const unsigned int a = l.a * r.a;\n    \
         return HandAffine{a, l.b * r.a + r.b};\n}\n",
    );
}

#[test]
fn a_hand_written_combine_keeps_the_identity_s_math_on_both_sides() {
    use reduce_core::math::Math;
    let identity = HandMax::identity().x;
    assert_eq!(identity.to_bits(), Math::exp(0.3f32).to_bits());
    assert_contains(&HandMax::cuda_source(), "r_exp_f32(");
}

#[test]
fn float_functions_of_literals_keep_their_type() {
    let one = ExpCount::combine(ExpCount { n: 0 }, ExpCount { n: 0 });
    assert_eq!(one.n, reduce_core::math::Math::exp(20.0f32) as u64);
    assert_eq!(one.n, 485_165_184);
}

#[test]
fn constant_indices_of_const_generic_arrays_are_checked() {
    let two = Second::<2>::combine(Second { v: [1, 2] }, Second { v: [3, 4] });
    assert_eq!(two.v, [5, 5]);
    // One element: index 1 is past it, a fault the fallible CPU calls record (element 0 is
    // read instead), as the device does.
    let got = reduce_core::fault::checked::<Second<1>, _>(|| {
        Second::<1>::combine(Second { v: [1] }, Second { v: [3] })
    });
    assert_eq!(got.map_err(|f| (f.index, f.len)), Err((1, 1)));
}

#[test]
fn derived_through_reduce_cuda() {
    let a = MaxU64 { x: 3 };
    let b = MaxU64 { x: u64::MAX };
    assert_eq!(MaxU64::combine(a, b), b);
    const { assert!(MaxU64::COMMUTATIVE) };
    assert_identity(&[a, b]);
    assert_contains(
        &MaxU64::cuda_source(),
        "return MaxU64{r_max_u64(l.x, r.x)};",
    );
}

/// A loop variable whose name an inner loop's variable, used as an index, shadows.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Shadow { s: 0.0, t: [0.0; 4] },
    combine = |l, r| {
        let mut s = l.s + r.s;
        for k in 0..4 {
            s += (k - 2) as f32;
            for k in 0..4 {
                s += l.t[k];
            }
        }
        let d = 3i32;
        let x = (d - 5) as f32;
        let d = (r.t[0] as u32 % 4) as usize;
        Shadow { s: s + x + l.t[d], t: r.t }
    }
)]
pub struct Shadow {
    pub s: f32,
    pub t: [f32; 4],
}

/// A name used as an index only through another binding of it keeps rustc's `i32`: the outer
/// loop variable (typed `usize` before, so that `k - 2` wrapped to about 1.8e19 on the GPU where
/// Rust gives -2), the inner one `usize`. (An untyped `let` shadowed that way is now refused:
/// its later uses are another binding's.)
#[test]
fn shadowed_names_keep_their_own_type() {
    let text = Shadow::cuda_source();
    assert_contains(&text, "for (int v_k = 0; v_k < 4; ++v_k)");
    assert_contains(
        &text,
        "for (unsigned long long v_k_2 = 0ull; v_k_2 < 4ull; ++v_k_2)",
    );
}
