//! Generality: monoids and segment layouts that no other test file uses, bit for bit against
//! the sequential CPU fold.
//!
//! The other files test a fixed set of monoids (`reduce_tests::Affine`, `Mat2`, `Tri`, ...) and
//! the benchmark's segment-length distributions. A user's monoid and layout will be neither, so
//! this file brings its own:
//!
//! - **Monoids** of shapes not used elsewhere, each exactly associative and (but one) not
//!   commutative, written only in the derive's language: 1 byte (`i8`, affine maps mod 16 packed
//!   in a nibble pair: arithmetic shifts of a signed byte), 2 bytes (one `u16`, packed affine maps
//!   mod 2^8), 3 bytes (`[u8; 3]`), 4 bytes with a padding byte (`u16` + `u8`, run-time
//!   `rotate_left`), 6 bytes (a tuple struct of three `u16`), 7 bytes (`[u8; 7]`, a transition table
//!   with run-time indices: can fault), 12 bytes (`u32`, `i32`, `u32`), 12 bytes aligned to 2
//!   (a nested array `[[u16; 3]; 2]`), 16 bytes mixing `i64`, `i16` and `bool` (padding), 16 bytes
//!   of `f64` + `u32` (argmax, first index on ties), 20 bytes (`[u32; 5]`), 24 bytes with tail
//!   padding (`u64`, `u64`, `u32`), 24 bytes through a `#[device_fn]` helper over `[u32; 6]`,
//!   40 bytes (a nested `#[derive(DeviceCopy)]` 2x2 `u64` matrix, a `u32` and a `u8`: padding),
//!   `f32` minimum declared `commutative` (Auto's order-free path for a derived monoid), 16
//!   bytes over-aligned with `#[repr(C, align(16))]` (8 bytes of padding, written with `Self`
//!   and typed closure parameters), and a const-generic keep-last record (`..base` updates) at
//!   128, 256 and 512 bytes, past the 72 bytes the README says were tested.
//! - **Layouts**: no segments (S = 0), every segment empty (S > 0, N = 0), N = 1, S = 1 with odd
//!   N, all items in the last segment after thousands of empty ones (and in the first, before),
//!   alternating empty and long segments, geometric lengths (growing, shrinking, drawn), lengths
//!   at and around tile sizes (255/256/257 ... 16385) and at multiples of 16 x block (aligned and
//!   shifted), one huge segment then many of size 1 (and the reverse), segment counts 2^k - 1,
//!   2^k and 2^k + 1 (on both sides of SegShuffle's early-check limit of 4096 offsets), mostly
//!   empty, and random mixtures of all of these.
//! - **Calls**: every `SegAlgorithm` and `Auto`, validated and trusted (plus two non-default
//!   configurations), both forms (CSR offsets, owners), `u32` layouts for all and `u64` for those
//!   that take them (the others must refuse with `InvalidConfig`), the allocating calls and the
//!   `_into` calls into a longer, poisoned buffer (its tail must stay as it was); plain: every
//!   `Algorithm` and `Auto` at N = 0, 1, 2^k +- 1 and a few large N, `reduce_into` likewise;
//!   inputs and layouts at addresses that are not 16-byte aligned; an index fault in a segment
//!   after thousands of empty ones.
//! - **Without a GPU**: the monoid laws, the CPU backend (`Cpu`) against the fold on every
//!   layout, NVRTC compilation of every kernel for every new monoid (`REDUCE_REQUIRE_NVRTC=1`
//!   makes a missing NVRTC a failure), and SegShuffle's kernel for some of the new monoids and
//!   layouts under the CPU emulator of `tests/emu` (needs a host C++ compiler).
//!
//! GPU tests use [`reduce_tests::gpu`]: they skip without a device, and fail under
//! `REDUCE_REQUIRE_GPU=1`.
//!
//! Large items (found by this file, 2026-11-26): with default parameters SegShuffle's owner form
//! did not compile from 224-byte items (its static shared memory passed 48 KiB), so `Auto` in the
//! owner form failed, and plain `Shuffle` and `Auto` refused 512-byte items. Both now shrink their
//! defaults to fit, and `Auto` takes SegMerge where SegShuffle cannot fit at all; the paper's
//! algorithms may refuse large items with an `InvalidConfig` that names shared memory
//! ([`refused`]).

use reduce_core::{fold, fold_segments, Cpu, SegIndex};
use reduce_cuda::testing::{
    compile_kernel, compile_seg_kernel, compile_seg_kernel_for, seg_kernel_variants_for,
};
use reduce_cuda::{
    device_fn, Algorithm, Config, CudaMonoid, DeviceCopy, DeviceSlice, DeviceSliceMut, DeviceVec,
    Error, Gpu, Monoid, SegAlgorithm, SegConfig,
};
use reduce_tests::{assert_monoid_laws, emu, gpu, require_nvrtc, Random, TestRng, CI_ARCH};
use std::fmt::Debug;

// ---------------------------------------------------------------------------------------------
// Monoids
// ---------------------------------------------------------------------------------------------

/// Affine maps x -> a*x + b mod 16, `a` in the high nibble and `b` in the low one of a signed
/// byte (so `>>` is arithmetic and the masks matter). 1 byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Nib8 { p: 16 },
    combine = |l, r| {
        let la = (l.p >> 4) & 15;
        let lb = l.p & 15;
        let ra = (r.p >> 4) & 15;
        let rb = r.p & 15;
        let a = la.wrapping_mul(ra) & 15;
        let b = lb.wrapping_mul(ra).wrapping_add(rb) & 15;
        Nib8 { p: (a << 4) | b }
    }
)]
struct Nib8 {
    p: i8,
}

/// Affine maps mod 2^8 packed in one `u16` (`a` high byte, `b` low byte). 2 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Packed16 { p: 0x0100 },
    combine = |l, r| {
        let a = (l.p >> 8).wrapping_mul(r.p >> 8) & 0xff;
        let b = (l.p & 0xff).wrapping_mul(r.p >> 8).wrapping_add(r.p & 0xff) & 0xff;
        Packed16 { p: (a << 8) | b }
    }
)]
struct Packed16 {
    p: u16,
}

/// Upper-triangular 2x2 matrices [[a, b], [0, c]] over u8 as `[a, b, c]`. 3 bytes: no power
/// of two, alignment 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Tri8 { m: [1, 0, 1] },
    combine = |l, r| Tri8 { m: [
        l.m[0].wrapping_mul(r.m[0]),
        l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
        l.m[2].wrapping_mul(r.m[2]),
    ] }
)]
struct Tri8 {
    m: [u8; 3],
}

/// w -> rotl(w, r) ^ x on 16-bit words, "l first, then r": rotation by a run-time amount. 4
/// bytes: a `u16`, a `u8` and a padding byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = RotXor { x: 0, r: 0 },
    combine = |l, r| RotXor {
        x: l.x.rotate_left(r.r as u32) ^ r.x,
        r: l.r.wrapping_add(r.r) & 15,
    }
)]
struct RotXor {
    x: u16,
    r: u8,
}

/// Affine maps mod 2^16 with an item count, as a tuple struct. 6 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Aff16n(1, 0, 0),
    combine = |l, r| Aff16n(
        l.0.wrapping_mul(r.0),
        l.1.wrapping_mul(r.0).wrapping_add(r.1),
        l.2.wrapping_add(r.2),
    )
)]
struct Aff16n(u16, u16, u16);

/// Transition tables of an automaton with 7 states, "l first, then r": run-time indices that
/// can fault (`CAN_FAULT`). 7 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Auto7 { t: [0, 1, 2, 3, 4, 5, 6] },
    combine = |l, r| {
        let mut t = [0u8; 7];
        for s in 0..7 {
            t[s] = r.t[l.t[s] as usize];
        }
        Auto7 { t }
    }
)]
struct Auto7 {
    t: [u8; 7],
}

/// Affine maps over Z/2^32 with a signed offset and an item count. 12 bytes, three fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = AffCount { a: 1, b: 0, n: 0 },
    combine = |l, r| AffCount {
        a: l.a.wrapping_mul(r.a),
        b: l.b.wrapping_mul(r.a as i32).wrapping_add(r.b),
        n: l.n.wrapping_add(r.n),
    }
)]
struct AffCount {
    a: u32,
    b: i32,
    n: u32,
}

/// Affine maps of (Z/2^16)^2 as 2x3 matrices [A | b] in a nested array, "l first, then r":
/// [Ar Al | Ar bl + br]. 12 bytes aligned to 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Grid16 { t: [[1, 0, 0], [0, 1, 0]] },
    combine = |l, r| {
        let mut t = [[0u16; 3]; 2];
        for i in 0..2 {
            for j in 0..3 {
                let mut s: u16 = if j == 2 { r.t[i][2] } else { 0 };
                for k in 0..2 {
                    s = s.wrapping_add(r.t[i][k].wrapping_mul(l.t[k][j]));
                }
                t[i][j] = s;
            }
        }
        Grid16 { t }
    }
)]
struct Grid16 {
    t: [[u16; 3]; 2],
}

/// x -> s*x + v over Z/2^64 with s = -1 when `neg`, and a count of type i16. 16 bytes: an
/// `i64`, an `i16`, a `bool` and 5 padding bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = SignedAff { v: 0, k: 0, neg: false },
    combine = |l, r| SignedAff {
        v: (if r.neg { l.v.wrapping_neg() } else { l.v }).wrapping_add(r.v),
        k: l.k.wrapping_add(r.k),
        neg: l.neg != r.neg,
    }
)]
struct SignedAff {
    v: i64,
    k: i16,
    neg: bool,
}

/// The maximum and the index of its first occurrence (ties keep the left one; `-0.0` ties
/// `0.0`): a selection, so exactly associative on NaN-free data without `-inf`. 16 bytes: an
/// `f64`, a `u32` and padding. Compared bit for bit.
#[derive(Clone, Copy, Debug, Monoid)]
#[repr(C)]
#[monoid(
    identity = ArgMaxF64 { v: f64::NEG_INFINITY, i: u32::MAX },
    combine = |l, r| if r.v > l.v { r } else { l }
)]
struct ArgMaxF64 {
    v: f64,
    i: u32,
}

impl PartialEq for ArgMaxF64 {
    fn eq(&self, other: &Self) -> bool {
        self.v.to_bits() == other.v.to_bits() && self.i == other.i
    }
}

/// The minimum of f32 values without NaN or `-0.0`, declared `commutative` (exactly so on such
/// data): `Auto` takes its order-free path. 4 bytes. Compared bit for bit.
#[derive(Clone, Copy, Debug, Monoid)]
#[repr(C)]
#[monoid(
    identity = MinF32 { v: f32::INFINITY },
    combine = |l, r| MinF32 { v: l.v.min(r.v) },
    commutative
)]
struct MinF32 {
    v: f32,
}

impl PartialEq for MinF32 {
    fn eq(&self, other: &Self) -> bool {
        self.v.to_bits() == other.v.to_bits()
    }
}

/// Affine maps of (Z/2^32)^2 with an upper-triangular linear part, [a, b, c, u, v]:
/// x -> [[a, b], [0, c]] x + [u, v]. 20 bytes (no power of two, no multiple of 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = UtAff20 { c: [1, 0, 1, 0, 0] },
    combine = |l, r| UtAff20 { c: [
        r.c[0].wrapping_mul(l.c[0]),
        r.c[0].wrapping_mul(l.c[1]).wrapping_add(r.c[1].wrapping_mul(l.c[2])),
        r.c[2].wrapping_mul(l.c[2]),
        r.c[0].wrapping_mul(l.c[3]).wrapping_add(r.c[1].wrapping_mul(l.c[4])).wrapping_add(r.c[3]),
        r.c[2].wrapping_mul(l.c[4]).wrapping_add(r.c[4]),
    ] }
)]
struct UtAff20 {
    c: [u32; 5],
}

/// A polynomial hash with its multiplier (any odd one per item) and the length. 24 bytes: two
/// `u64`, a `u32` and 4 bytes of tail padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Hash24 { hash: 0, pow: 1, len: 0 },
    combine = |l, r| Hash24 {
        hash: l.hash.wrapping_mul(r.pow).wrapping_add(r.hash),
        pow: l.pow.wrapping_mul(r.pow),
        len: l.len.wrapping_add(r.len),
    }
)]
struct Hash24 {
    hash: u64,
    pow: u64,
    len: u32,
}

/// Composes affine maps of (Z/2^32)^2 stored as [a00, a01, a10, a11, b0, b1]: `l` first, then
/// `r`.
#[device_fn]
fn aff2_then(l: [u32; 6], r: [u32; 6]) -> [u32; 6] {
    [
        r[0].wrapping_mul(l[0])
            .wrapping_add(r[1].wrapping_mul(l[2])),
        r[0].wrapping_mul(l[1])
            .wrapping_add(r[1].wrapping_mul(l[3])),
        r[2].wrapping_mul(l[0])
            .wrapping_add(r[3].wrapping_mul(l[2])),
        r[2].wrapping_mul(l[1])
            .wrapping_add(r[3].wrapping_mul(l[3])),
        r[0].wrapping_mul(l[4])
            .wrapping_add(r[1].wrapping_mul(l[5]))
            .wrapping_add(r[4]),
        r[2].wrapping_mul(l[4])
            .wrapping_add(r[3].wrapping_mul(l[5]))
            .wrapping_add(r[5]),
    ]
}

/// Affine maps of (Z/2^32)^2 through a `#[device_fn]` helper. 24 bytes, `[u32; 6]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Aff2 { m: [1, 0, 0, 1, 0, 0] },
    combine = |l, r| Aff2 { m: aff2_then(l.m, r.m) }
)]
struct Aff2 {
    m: [u32; 6],
}

/// A 2x2 matrix over u64 (a nested plain-data struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
struct M2w {
    m: [[u64; 2]; 2],
}

/// The matrix product, wrapping.
#[device_fn]
fn m2w_mul(a: M2w, b: M2w) -> M2w {
    let mut c = M2w { m: [[0; 2]; 2] };
    for i in 0..2 {
        for j in 0..2 {
            c.m[i][j] = a.m[i][0]
                .wrapping_mul(b.m[0][j])
                .wrapping_add(a.m[i][1].wrapping_mul(b.m[1][j]));
        }
    }
    c
}

/// A matrix product, an item count and the first non-zero tag. 40 bytes: a nested 32-byte
/// struct, a `u32`, a `u8` and 3 padding bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Big40 { m: M2w { m: [[1, 0], [0, 1]] }, n: 0, tag: 0 },
    combine = |l, r| Big40 {
        m: m2w_mul(l.m, r.m),
        n: l.n.wrapping_add(r.n),
        tag: if l.tag != 0 { l.tag } else { r.tag },
    }
)]
struct Big40 {
    m: M2w,
    n: u32,
    tag: u8,
}

/// Affine maps mod 2^32 in a struct over-aligned to 16 (`#[repr(C, align(16))]`: 8 bytes of
/// tail padding), written with `Self` and typed closure parameters. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C, align(16))]
#[monoid(
    identity = Self { a: 1, b: 0 },
    combine = |l: Aligned16, r: Aligned16| Self {
        a: l.a.wrapping_mul(r.a),
        b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
    }
)]
struct Aligned16 {
    a: u32,
    b: u32,
}

/// The last record that is set, and how many items were folded: a large item with a cheap
/// combine, written once for every size with a const generic and `..base` struct updates.
/// `K` = 15, 31, 63: 128, 256 and 512 bytes (`K` u64, a `u32`, a `bool`, padding), past the
/// 72 bytes the README says were tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Record { v: [0; K], n: 0, set: false },
    combine = |l, r| if r.set {
        Record { n: l.n.wrapping_add(r.n), ..r }
    } else {
        Record { n: l.n.wrapping_add(r.n), ..l }
    }
)]
struct Record<const K: usize> {
    v: [u64; K],
    n: u32,
    set: bool,
}

/// 128 bytes.
type Record128 = Record<15>;
/// 256 bytes.
type Record256 = Record<31>;
/// 512 bytes.
type Record512 = Record<63>;

// ---------------------------------------------------------------------------------------------
// Random values (chosen so that long products do not collapse to a fixed point)
// ---------------------------------------------------------------------------------------------

impl Random for Nib8 {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b) = ((rng.next_u32() & 15) | 1, rng.next_u32() & 15);
        Nib8 {
            p: ((a << 4) | b) as u8 as i8,
        }
    }
}
impl Random for Packed16 {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b) = ((rng.next_u32() & 0xff) | 1, rng.next_u32() & 0xff);
        Packed16 {
            p: ((a << 8) | b) as u16,
        }
    }
}
impl Random for Tri8 {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u32();
        Tri8 {
            m: [w as u8 | 1, (w >> 8) as u8, (w >> 16) as u8 | 1],
        }
    }
}
impl Random for RotXor {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u32();
        RotXor {
            x: w as u16,
            r: ((w >> 16) & 15) as u8,
        }
    }
}
impl Random for Aff16n {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u64();
        Aff16n(w as u16 | 1, (w >> 16) as u16, (w >> 32) as u16)
    }
}
impl Random for Auto7 {
    fn random(rng: &mut TestRng) -> Self {
        let mut t = [0u8; 7];
        for s in t.iter_mut() {
            *s = (rng.next_u32() % 7) as u8;
        }
        // Mostly permutations (products stay varied), sometimes a general table.
        if !rng.next_u32().is_multiple_of(8) {
            t = [0, 1, 2, 3, 4, 5, 6];
            for i in (1..7).rev() {
                let j = (rng.next_u32() as usize) % (i + 1);
                t.swap(i, j);
            }
        }
        Auto7 { t }
    }
}
impl Random for AffCount {
    fn random(rng: &mut TestRng) -> Self {
        AffCount {
            a: rng.next_u32() | 1,
            b: rng.next_u32() as i32,
            n: 1,
        }
    }
}
impl Random for Grid16 {
    fn random(rng: &mut TestRng) -> Self {
        // det = a00 a11 - a01 a10 odd: invertible mod 2^16.
        let w = rng.next_u64();
        let v = rng.next_u32();
        Grid16 {
            t: [
                [w as u16 | 1, (w >> 16) as u16 & !1, v as u16],
                [(w >> 32) as u16, (w >> 48) as u16 | 1, (v >> 16) as u16],
            ],
        }
    }
}
impl Random for SignedAff {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u32();
        SignedAff {
            v: rng.next_u64() as i64,
            k: w as i16,
            neg: w & (1 << 20) != 0,
        }
    }
}
impl Random for ArgMaxF64 {
    fn random(rng: &mut TestRng) -> Self {
        // Many ties (small integers, both zeros), extremes and subnormals; no NaN, no -inf.
        let v = match rng.range(0, 15) {
            0 => 0.0,
            1 => -0.0,
            2 => f64::INFINITY,
            3 => f64::MAX,
            4 => f64::MIN,
            5 => 5e-324,
            6 => -5e-324,
            7 => f64::from_bits(rng.next_u64() & 0x7fef_ffff_ffff_ffff),
            8 => -f64::from_bits(rng.next_u64() & 0x7fef_ffff_ffff_ffff),
            _ => rng.range(0, 6) as f64 - 3.0,
        };
        ArgMaxF64 {
            v,
            i: rng.next_u32(),
        }
    }
}
impl Random for MinF32 {
    fn random(rng: &mut TestRng) -> Self {
        // Finite or +inf, never NaN or -0.0 (min of -0.0 and 0.0 may pick either sign).
        let v = match rng.range(0, 9) {
            0 => 0.0,
            1 => f32::INFINITY,
            2 => 1e-45,
            3 => -1e-45,
            _ => f32::from_bits(rng.next_u32() & 0xff7f_ffff),
        };
        MinF32 {
            v: if v == 0.0 { 0.0 } else { v },
        }
    }
}
impl Random for UtAff20 {
    fn random(rng: &mut TestRng) -> Self {
        UtAff20 {
            c: [
                rng.next_u32() | 1,
                rng.next_u32(),
                rng.next_u32() | 1,
                rng.next_u32(),
                rng.next_u32(),
            ],
        }
    }
}
impl Random for Hash24 {
    fn random(rng: &mut TestRng) -> Self {
        Hash24 {
            hash: rng.next_u64() & 0xff,
            pow: rng.next_u64() | 1,
            len: 1,
        }
    }
}
impl Random for Aff2 {
    fn random(rng: &mut TestRng) -> Self {
        Aff2 {
            m: [
                rng.next_u32() | 1,
                rng.next_u32() & !1,
                rng.next_u32(),
                rng.next_u32() | 1,
                rng.next_u32(),
                rng.next_u32(),
            ],
        }
    }
}
impl Random for Big40 {
    fn random(rng: &mut TestRng) -> Self {
        let tag = if rng.next_u32().is_multiple_of(50) {
            (rng.next_u32() % 255 + 1) as u8
        } else {
            0
        };
        Big40 {
            m: M2w {
                m: [
                    [rng.next_u64() | 1, rng.next_u64() & !1],
                    [rng.next_u64(), rng.next_u64() | 1],
                ],
            },
            n: 1,
            tag,
        }
    }
}

impl Random for Aligned16 {
    fn random(rng: &mut TestRng) -> Self {
        Aligned16 {
            a: rng.next_u32() | 1,
            b: rng.next_u32(),
        }
    }
}
impl<const K: usize> Random for Record<K> {
    fn random(rng: &mut TestRng) -> Self {
        // An unset record carries the identity's payload, so that the laws hold bit for bit.
        let set = rng.next_u32().is_multiple_of(16);
        Record {
            v: std::array::from_fn(|_| if set { rng.next_u64() } else { 0 }),
            n: 1,
            set,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------------

/// CSR offsets (u64) of segments with these lengths.
fn offsets_of(lengths: &[u64]) -> Vec<u64> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    offsets.push(0u64);
    for &l in lengths {
        offsets.push(offsets.last().unwrap() + l);
    }
    offsets
}

/// The owner (u64) of every item of segments with these lengths.
fn owners_of(lengths: &[u64]) -> Vec<u64> {
    lengths
        .iter()
        .enumerate()
        .flat_map(|(s, &l)| std::iter::repeat_n(s as u64, l as usize))
        .collect()
}

fn convert<I: SegIndex>(values: &[u64]) -> Vec<I> {
    values.iter().map(|&v| I::from_u64(v)).collect()
}

/// A length drawn from a geometric distribution with mean `mean` (0 included).
fn geometric(rng: &mut TestRng, mean: u64) -> u64 {
    let mut l = 0;
    while rng.range(0, mean) != 0 {
        l += 1;
    }
    l
}

/// Segment lengths around tile sizes: SegShuffle's tiles are 256 threads x 1..64 items,
/// SegMerge's 128 x 1..16 path steps, the paper algorithms' data blocks 512..8192.
const TILE_LENGTHS: [u64; 27] = [
    127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072,
    3073, 4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385,
];

/// A random mixture of the shapes below, about `n` items.
fn mixture(rng: &mut TestRng, n: u64) -> Vec<u64> {
    let mut lengths = Vec::new();
    let mut total = 0;
    while total < n {
        match rng.range(0, 6) {
            0 => lengths.extend(std::iter::repeat_n(0, rng.range(1, 3000) as usize)),
            1 => lengths.extend(std::iter::repeat_n(1, rng.range(1, 3000) as usize)),
            2 => lengths.push(rng.range(1000, 50_000)),
            3 => lengths.push(TILE_LENGTHS[rng.range(0, 26) as usize]),
            4 => lengths.extend((0..rng.range(1, 500)).map(|_| geometric(rng, 8))),
            _ => lengths.extend((0..rng.range(1, 500)).map(|_| rng.range(0, 50))),
        }
        total = lengths.iter().sum();
    }
    lengths
}

/// Every layout shape of this file, as (name, segment lengths).
fn layouts() -> Vec<(String, Vec<u64>)> {
    let mut rng = TestRng::new(0x6e6e);
    let mut out: Vec<(String, Vec<u64>)> = vec![
        ("S = 0, N = 0".into(), vec![]),
        ("S = 1, N = 0".into(), vec![0]),
        ("S = 5000, every segment empty".into(), vec![0; 5000]),
        ("N = 1, S = 1".into(), vec![1]),
        ("N = 1 among empties".into(), vec![0, 0, 0, 1, 0, 0]),
        ("S = 1, N = 200_003".into(), vec![200_003]),
        ("S = 1, N = 2^16 + 1".into(), vec![65_537]),
        (
            "all items in the last segment after 5000 empty ones".into(),
            [vec![0; 5000], vec![100_001]].concat(),
        ),
        (
            "all items in the first segment, then 6000 empty ones".into(),
            [vec![100_001], vec![0; 6000]].concat(),
        ),
        (
            "alternating empty / 3001".into(),
            (0..60).flat_map(|_| [0, 3001]).collect(),
        ),
        (
            "geometric 1, 2, 4 .. 2^17".into(),
            (0..18).map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric 2^17 .. 4, 2, 1".into(),
            (0..18).rev().map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric lengths drawn, mean 8".into(),
            (0..40_001).map(|_| geometric(&mut rng, 8)).collect(),
        ),
        (
            "tile lengths, three of each, then a size 1".into(),
            TILE_LENGTHS.iter().flat_map(|&l| [l, l, l, 1]).collect(),
        ),
        (
            "huge segment, then 100_000 of size 1".into(),
            [vec![1_000_003], vec![1; 100_000]].concat(),
        ),
        (
            "100_000 of size 1, then a huge segment".into(),
            [vec![1; 100_000], vec![1_000_003]].concat(),
        ),
        ("S = 2^16 + 1 of size 1".into(), vec![1; 65_537]),
        ("mostly empty (S = 200_000, 0.1% long)".into(), {
            (0..200_000)
                .map(|_| {
                    if rng.range(0, 999) == 0 {
                        rng.range(1, 5000)
                    } else {
                        0
                    }
                })
                .collect()
        }),
    ];
    // Multiples of 16 x block (SegShuffle's 16 items per thread at 64..1024 threads), from an
    // aligned start and shifted by 1 and 15 items.
    let multiples: Vec<u64> = [
        1024u64, 2048, 3072, 4096, 8192, 12_288, 16_384, 24_576, 32_768,
    ]
    .iter()
    .flat_map(|&l| [l, l])
    .collect();
    for shift in [0u64, 1, 15] {
        let mut lengths = if shift == 0 { vec![] } else { vec![shift] };
        lengths.extend(&multiples);
        out.push((
            format!("multiples of 16 x block, shifted by {shift}"),
            lengths,
        ));
    }
    // Segment counts 2^k - 1, 2^k, 2^k + 1 (4095 segments are 4096 offsets: SegShuffle's early
    // check at 256 threads; one more takes the fused check).
    for segments in [4095usize, 4096, 4097, 65_535, 65_537] {
        out.push((
            format!("S = {segments}, lengths 0..6"),
            (0..segments).map(|_| rng.range(0, 6)).collect(),
        ));
    }
    for k in 0..2 {
        out.push((format!("random mixture {k}"), mixture(&mut rng, 600_000)));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// GPU checks
// ---------------------------------------------------------------------------------------------

/// The monoid's CUDA name and size, for messages (a const-generic monoid has one name).
fn name<M: CudaMonoid>() -> String {
    format!("{} ({} B)", M::CUDA_NAME, std::mem::size_of::<M>())
}

/// Every SegAlgorithm and Auto, validated and trusted, and two non-default configurations.
fn seg_configs() -> Vec<SegConfig> {
    let mut out = Vec::new();
    for algorithm in SegAlgorithm::ALL.into_iter().chain([SegAlgorithm::Auto]) {
        out.push(SegConfig::new(algorithm));
        out.push(SegConfig::new(algorithm).trusted());
    }
    out.push(
        SegConfig::new(SegAlgorithm::SegShuffle)
            .block(64)
            .items_per_thread(3)
            .grid(5),
    );
    out.push(
        SegConfig::new(SegAlgorithm::SegMerge)
            .block(64)
            .items_per_thread(2)
            .stages(4)
            .grid(7)
            .trusted(),
    );
    out
}

/// Whether a configuration takes u64 layouts.
fn takes_u64(config: &SegConfig) -> bool {
    matches!(
        config.algorithm,
        SegAlgorithm::SegShuffle | SegAlgorithm::SegMerge | SegAlgorithm::Auto
    )
}

/// The first segment where `got` differs from `want` (or a length mismatch), as a message.
fn diff<M: PartialEq + Debug>(got: &[M], want: &[M]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    match (0..want.len()).find(|&i| got[i] != want[i]) {
        Some(i) => Err(format!(
            "segment {i} of {}: got {:?}, expected {:?}",
            want.len(),
            got[i],
            want[i]
        )),
        None => Ok(()),
    }
}

/// Panics at the first segment where `got` differs from `want` (or on a length mismatch).
fn same<M: PartialEq + Debug>(ctx: &str, got: &[M], want: &[M]) {
    if let Err(e) = diff(got, want) {
        panic!("{ctx}: {e}");
    }
}

/// Failed calls, one entry per kind of call (algorithm, form, index type, ...): the first
/// failure's message and how many cases failed. A test collects them all and then panics with
/// the whole list, so that one run shows every configuration a monoid or layout breaks.
#[derive(Default)]
struct Failures(std::collections::BTreeMap<String, (usize, String)>);

impl Failures {
    fn note(&mut self, key: String, outcome: Result<(), String>) {
        if let Err(message) = outcome {
            let entry = self.0.entry(key).or_insert((0, message));
            entry.0 += 1;
        }
    }

    /// Whether calls of this kind already failed (then they are not made again: a kernel that
    /// does not compile is compiled anew, slowly, by every call).
    fn failed(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    fn finish(self, what: &str) {
        if self.0.is_empty() {
            return;
        }
        let list: Vec<String> = self
            .0
            .iter()
            .map(|(key, (_, first))| format!("- {key}: {first}"))
            .collect();
        panic!(
            "{what}: {} kinds of call failed:\n{}",
            list.len(),
            list.join("\n")
        );
    }
}

/// An error a call may return for large items: the paper's algorithms (research baselines at the
/// paper's parameters) keep their tiles in shared memory and refuse items too large for it (only
/// [`large`] ones) with `InvalidConfig` naming shared memory. `Auto`, `Shuffle`, `SegShuffle` and
/// `SegMerge` must not refuse (`SegShuffle` only past the sizes this file uses, where `Auto` takes
/// `SegMerge`).
fn refused(e: Error, paper: bool) -> Result<(), String> {
    match e {
        Error::InvalidConfig { ref reason, .. } if paper && reason.contains("shared memory") => {
            Ok(())
        }
        e => Err(format!("{e}")),
    }
}

/// Items of 128 bytes and more, the only ones a paper algorithm may refuse.
fn large<M>() -> bool {
    std::mem::size_of::<M>() >= 128
}

/// What one layout's reductions share.
struct SegCase<'a, M: CudaMonoid> {
    name: &'a str,
    xs: &'a DeviceVec<M>,
    offsets: &'a [u64],
    owner: &'a [u64],
    expected: &'a [M],
    /// The initial contents of the `_into` calls' output: one value per segment and 3 more.
    poison: &'a [M],
}

/// Both forms with index type `I`, every configuration that takes it: the allocating calls
/// (u32 only) and the `_into` calls into a poisoned buffer longer than the segments.
fn run_index<M: CudaMonoid + Random, I: SegIndex>(
    gpu: &Gpu,
    case: &SegCase<'_, M>,
    configs: &[SegConfig],
    failures: &mut Failures,
) {
    let segments = case.offsets.len() - 1;
    let d_offsets = gpu.upload(&convert::<I>(case.offsets)).unwrap();
    let d_owner = gpu.upload(&convert::<I>(case.owner)).unwrap();
    let mut out = gpu.upload(case.poison).unwrap();
    for config in configs {
        if I::WIDE && !takes_u64(config) {
            continue;
        }
        let width = if I::WIDE { "u64" } else { "u32" };
        let paper = !matches!(
            config.algorithm,
            SegAlgorithm::SegShuffle | SegAlgorithm::SegMerge | SegAlgorithm::Auto
        );
        for offsets_form in [true, false] {
            let form = if offsets_form { "offsets" } else { "owner" };
            let key = format!("{} {config:?} {width} {form}", name::<M>());
            let into = format!("{key} into");
            if failures.failed(&key) || failures.failed(&into) {
                continue;
            }
            if !I::WIDE {
                let got = if offsets_form {
                    gpu.reduce_segments(case.xs, &d_offsets, *config)
                } else {
                    gpu.reduce_by_owner(case.xs, &d_owner, segments, *config)
                };
                let outcome = match got {
                    Ok(got) => diff(&gpu.download(&got).unwrap(), case.expected),
                    Err(e) => refused(e, paper && large::<M>()),
                };
                failures.note(
                    key.clone(),
                    outcome.map_err(|e| format!("layout `{}`: {e}", case.name)),
                );
            }
            gpu.upload_into(&mut out, case.poison).unwrap();
            let done = if offsets_form {
                gpu.reduce_segments_into(case.xs, &d_offsets, &mut out, *config)
            } else {
                gpu.reduce_by_owner_into(case.xs, &d_owner, segments, &mut out, *config)
            };
            let check_output = || {
                let got = gpu.download(&out).unwrap();
                diff(&got[..segments], case.expected)?;
                if got[segments..] != case.poison[segments..] {
                    return Err(format!(
                        "values past the segments were written: {:?}",
                        &got[segments..]
                    ));
                }
                Ok(())
            };
            let outcome = match done {
                Ok(()) => check_output(),
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(
                into,
                outcome.map_err(|e| format!("layout `{}`: {e}", case.name)),
            );
        }
    }
}

/// Reduces random items over one layout with every configuration, both forms, u32 and u64,
/// allocating and into, against the sequential fold.
fn check_layout<M: CudaMonoid + Random>(
    gpu: &Gpu,
    name: &str,
    lengths: &[u64],
    configs: &[SegConfig],
    seed: u64,
    failures: &mut Failures,
) {
    let offsets = offsets_of(lengths);
    let owner = owners_of(lengths);
    let items = M::random_vec(owner.len(), seed);
    let expected = fold_segments(&items, &offsets).unwrap();
    let xs = gpu.upload(&items).unwrap();
    let poison = M::random_vec(lengths.len() + 3, !seed);
    let case = SegCase {
        name,
        xs: &xs,
        offsets: &offsets,
        owner: &owner,
        expected: &expected,
        poison: &poison,
    };
    run_index::<M, u32>(gpu, &case, configs, failures);
    run_index::<M, u64>(gpu, &case, configs, failures);
}

/// Every layout of [`layouts`] named in `only` (all when `None`).
fn check_layouts<M: CudaMonoid + Random>(gpu: &Gpu, only: Option<&[&str]>, seed: u64) {
    check_layouts_with::<M>(gpu, only, seed, &seg_configs());
}

/// [`check_layouts`] with these configurations.
fn check_layouts_with<M: CudaMonoid + Random>(
    gpu: &Gpu,
    only: Option<&[&str]>,
    seed: u64,
    configs: &[SegConfig],
) {
    let start = std::time::Instant::now();
    let mut failures = Failures::default();
    for (k, (layout, lengths)) in layouts().iter().enumerate() {
        if only.is_none_or(|names| names.contains(&layout.as_str())) {
            check_layout::<M>(
                gpu,
                layout,
                lengths,
                configs,
                seed + k as u64,
                &mut failures,
            );
        }
    }
    eprintln!("segmented {}: {:.1?}", name::<M>(), start.elapsed());
    failures.finish(&name::<M>());
}

macro_rules! every_layout_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_layouts::<$m>(&gpu, None, 1000);
            }
        }
    )*};
}

every_layout_tests! {
    segmented_nib8_1_byte: Nib8,
    segmented_packed16_2_bytes: Packed16,
    segmented_tri8_3_bytes: Tri8,
    segmented_rot_xor_4_bytes_padded: RotXor,
    segmented_aff16n_6_bytes_tuple: Aff16n,
    segmented_grid16_12_bytes_align_2: Grid16,
    segmented_signed_aff_i64_i16_bool: SignedAff,
    segmented_argmax_f64: ArgMaxF64,
    segmented_ut_aff20_20_bytes: UtAff20,
    segmented_hash24_24_bytes_padded: Hash24,
    segmented_big40_40_bytes: Big40,
    segmented_aligned16_over_aligned: Aligned16,
}

/// The layouts the remaining new monoids run on (their shapes are covered above).
const SOME_LAYOUTS: [&str; 8] = [
    "S = 0, N = 0",
    "S = 5000, every segment empty",
    "N = 1 among empties",
    "all items in the last segment after 5000 empty ones",
    "tile lengths, three of each, then a size 1",
    "S = 4095, lengths 0..6",
    "S = 4097, lengths 0..6",
    "random mixture 0",
];

macro_rules! some_layout_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_layouts::<$m>(&gpu, Some(&SOME_LAYOUTS), 2000);
            }
        }
    )*};
}

some_layout_tests! {
    segmented_aff_count_12_bytes: AffCount,
    segmented_aff2_device_fn_24_bytes: Aff2,
    segmented_min_f32_commutative: MinF32,
    segmented_auto7_7_bytes_can_fault: Auto7,
}

/// Items past the 72 bytes the README says were tested, on a few layouts.
const LARGE_ITEM_LAYOUTS: [&str; 4] = [
    "S = 0, N = 0",
    "N = 1 among empties",
    "tile lengths, three of each, then a size 1",
    "S = 4097, lengths 0..6",
];

/// Every SegAlgorithm once, validated, default parameters (SegShuffle as `Auto`, which is
/// SegShuffle here): for the items whose kernels NVRTC takes long, and fails slowly, on.
fn default_configs() -> Vec<SegConfig> {
    SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| a != SegAlgorithm::SegShuffle)
        .chain([SegAlgorithm::Auto])
        .map(SegConfig::new)
        .collect()
}

/// 128-byte items: every configuration of this file works.
#[test]
fn segmented_record128_128_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts::<Record128>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 3000);
    }
}

/// 256-byte items: every default configuration works, or (the paper's algorithms) refuses the
/// size with a clear error.
#[test]
fn segmented_record256_256_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts_with::<Record256>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 4000, &default_configs());
    }
}

/// 512-byte items: as above.
#[test]
fn segmented_record512_512_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts_with::<Record512>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 5000, &default_configs());
    }
}

/// The paper's algorithms take u32 layouts only: u64 offsets or owners are `InvalidConfig`,
/// in both forms, for a new monoid.
#[test]
fn u64_layouts_with_the_paper_algorithms_are_invalid_config() {
    let Some(gpu) = gpu() else { return };
    let lengths = [3u64, 0, 5];
    let xs = gpu.upload(&Tri8::random_vec(8, 1)).unwrap();
    let offsets = gpu.upload(&offsets_of(&lengths)).unwrap();
    let owner = gpu.upload(&owners_of(&lengths)).unwrap();
    for algorithm in SegAlgorithm::ALL {
        if takes_u64(&SegConfig::new(algorithm)) {
            continue;
        }
        let got = gpu.reduce_segments(&xs, &offsets, algorithm);
        assert!(
            matches!(got, Err(Error::InvalidConfig { .. })),
            "{algorithm} u64 offsets: {got:?}"
        );
        let got = gpu.reduce_by_owner(&xs, &owner, 3, algorithm);
        assert!(
            matches!(got, Err(Error::InvalidConfig { .. })),
            "{algorithm} u64 owners: {got:?}"
        );
    }
}

/// Plain sizes: 0, 1, tiny, 2^k +- 1 around warps, blocks and tiles, and one large odd N.
const PLAIN_SIZES: [usize; 20] = [
    0, 1, 2, 3, 5, 15, 16, 17, 31, 33, 255, 256, 257, 4095, 4096, 4097, 65_535, 65_537, 1_048_577,
    3_000_001,
];

/// Every plain algorithm and Auto at `sizes`, `reduce` and `reduce_into` (into a poisoned
/// buffer of 3 values: the 2 after the first must stay as they were); panics with every
/// failing call.
fn check_plain<M: CudaMonoid + Random>(gpu: &Gpu, sizes: &[usize], seed: u64) {
    let start = std::time::Instant::now();
    let mut failures = Failures::default();
    for &n in sizes {
        let items = M::random_vec(n, seed ^ n as u64);
        let want = fold(&items);
        let xs = gpu.upload(&items).unwrap();
        let poison = M::random_vec(3, seed);
        let mut out = gpu.upload(&poison).unwrap();
        for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            let paper = !matches!(algorithm, Algorithm::Shuffle | Algorithm::Auto);
            let key = format!("{} {algorithm}", name::<M>());
            if failures.failed(&key) || failures.failed(&format!("{key} into")) {
                continue;
            }
            let outcome = match gpu.reduce(&xs, algorithm) {
                Ok(got) if got == want => Ok(()),
                Ok(got) => Err(format!("got {got:?}, expected {want:?}")),
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(key.clone(), outcome.map_err(|e| format!("n = {n}: {e}")));
            gpu.upload_into(&mut out, &poison).unwrap();
            let outcome = match gpu.reduce_into(&xs, &mut out, algorithm) {
                Ok(()) => {
                    let got = gpu.download(&out).unwrap();
                    if got[0] != want {
                        Err(format!("got {:?}, expected {want:?}", got[0]))
                    } else if got[1..] != poison[1..] {
                        Err("wrote past the first value".to_string())
                    } else {
                        Ok(())
                    }
                }
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(
                format!("{key} into"),
                outcome.map_err(|e| format!("n = {n}: {e}")),
            );
        }
    }
    eprintln!("plain {}: {:.1?}", name::<M>(), start.elapsed());
    failures.finish(&name::<M>());
}

macro_rules! plain_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_plain::<$m>(&gpu, &PLAIN_SIZES, 77);
            }
        }
    )*};
}

plain_tests! {
    plain_nib8_1_byte: Nib8,
    plain_packed16_2_bytes: Packed16,
    plain_tri8_3_bytes: Tri8,
    plain_rot_xor_4_bytes_padded: RotXor,
    plain_aff16n_6_bytes_tuple: Aff16n,
    plain_auto7_7_bytes: Auto7,
    plain_aff_count_12_bytes: AffCount,
    plain_grid16_12_bytes_align_2: Grid16,
    plain_signed_aff_i64_i16_bool: SignedAff,
    plain_argmax_f64: ArgMaxF64,
    plain_min_f32_commutative: MinF32,
    plain_ut_aff20_20_bytes: UtAff20,
    plain_hash24_24_bytes_padded: Hash24,
    plain_aff2_device_fn_24_bytes: Aff2,
    plain_big40_40_bytes: Big40,
    plain_aligned16_over_aligned: Aligned16,
}

/// Plain sizes for items past the 72 bytes the README says were tested.
const LARGE_ITEM_SIZES: [usize; 8] = [0, 1, 2, 31, 33, 257, 4097, 65_537];

/// 128-byte items, every plain algorithm with default parameters (DiffWarps refuses them: it
/// needs 270336 bytes of shared memory).
#[test]
fn plain_record128_128_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record128>(&gpu, &LARGE_ITEM_SIZES, 8);
    }
}

/// 256-byte items (Tb4Warp, Matrix, PersistentMatrix and DiffWarps refuse them).
#[test]
fn plain_record256_256_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record256>(&gpu, &LARGE_ITEM_SIZES, 9);
    }
}

/// 512-byte items (Tb2 refuses them too; Shuffle shrinks its tile group).
#[test]
fn plain_record512_512_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record512>(&gpu, &LARGE_ITEM_SIZES, 10);
    }
}

/// A few large N for the smallest items (most items per tile) and an odd size.
#[test]
fn plain_large_inputs() {
    let Some(gpu) = gpu() else { return };
    check_plain::<Nib8>(&gpu, &[(1 << 24) + 1], 5);
    check_plain::<Tri8>(&gpu, &[(1 << 24) - 1], 6);
    check_plain::<Aff16n>(&gpu, &[(3 << 20) + 5], 7);
}

/// Device memory of `len` values of `M` written from `host` at `skip` values into a larger
/// buffer (so `skip = 1` is not 16-byte aligned for items of fewer than 16 bytes, or of 24 or 40);
/// the returned buffer must outlive the slice.
fn placed<M: DeviceCopy>(
    gpu: &Gpu,
    host: &[M],
    skip: usize,
) -> (reduce_cuda::cudarc::driver::CudaSlice<u8>, DeviceSlice<M>) {
    use reduce_cuda::cudarc::driver::DevicePtr;
    let size = std::mem::size_of::<M>();
    let stream = gpu.stream();
    let bytes = stream
        .alloc_zeros::<u8>((host.len() + skip + 1) * size)
        .unwrap();
    let base = bytes.device_ptr(stream).0;
    let address = base + (skip * size) as u64;
    // SAFETY: live device memory of this context, large enough for host.len() values past
    // `skip`; nothing else reads or writes it while the slices are used.
    let mut dst = unsafe { DeviceSliceMut::<M>::from_raw(address, host.len(), gpu) }.unwrap();
    gpu.upload_into(&mut dst, host).unwrap();
    // SAFETY: as above.
    let src = unsafe { DeviceSlice::<M>::from_raw(address, host.len(), gpu) }.unwrap();
    (bytes, src)
}

/// Items and layouts that are not 16-byte aligned (the item-by-item paths): every plain
/// algorithm, and every segmented one in both forms, against the fold.
fn check_unaligned<M: CudaMonoid + Random>(gpu: &Gpu, seed: u64) {
    let mut rng = TestRng::new(seed);
    let lengths = mixture(&mut rng, 200_000);
    let offsets = offsets_of(&lengths);
    let owner = owners_of(&lengths);
    let items = M::random_vec(owner.len(), seed);
    let expected = fold_segments(&items, &offsets).unwrap();
    let want = fold(&items);
    for skip in [1usize, 3] {
        let (_keep, xs) = placed(gpu, &items, skip);
        for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            let got = gpu.reduce(&xs, algorithm).unwrap();
            assert_eq!(got, want, "{} skip {skip} {algorithm}", M::CUDA_NAME);
        }
        let (_k32, off32) = placed(gpu, &convert::<u32>(&offsets), skip);
        let (_k64, off64) = placed(gpu, &offsets, skip);
        let (_o32, own32) = placed(gpu, &convert::<u32>(&owner), skip);
        let (_o64, own64) = placed(gpu, &owner, skip);
        for config in seg_configs() {
            let ctx = format!("{} skip {skip} {config:?}", M::CUDA_NAME);
            let got = gpu.reduce_segments(&xs, &off32, config).unwrap();
            same(
                &format!("{ctx} u32 offsets"),
                &gpu.download(&got).unwrap(),
                &expected,
            );
            let got = gpu
                .reduce_by_owner(&xs, &own32, lengths.len(), config)
                .unwrap();
            same(
                &format!("{ctx} u32 owner"),
                &gpu.download(&got).unwrap(),
                &expected,
            );
            if takes_u64(&config) {
                let got = gpu.reduce_segments(&xs, &off64, config).unwrap();
                same(
                    &format!("{ctx} u64 offsets"),
                    &gpu.download(&got).unwrap(),
                    &expected,
                );
                let got = gpu
                    .reduce_by_owner(&xs, &own64, lengths.len(), config)
                    .unwrap();
                same(
                    &format!("{ctx} u64 owner"),
                    &gpu.download(&got).unwrap(),
                    &expected,
                );
            }
        }
    }
}

macro_rules! unaligned_tests {
    ($($name:ident: $m:ty, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_unaligned::<$m>(&gpu, $seed);
            }
        }
    )*};
}

unaligned_tests! {
    unaligned_tri8: Tri8, 1;
    unaligned_packed16: Packed16, 2;
    unaligned_grid16: Grid16, 3;
    unaligned_hash24: Hash24, 4;
    unaligned_big40: Big40, 5;
}

/// A run-time index out of bounds in the last segment, after thousands of empty ones, is
/// `Error::DeviceFault` for every algorithm in both forms (every entry of the bad table is out
/// of bounds and items follow it in its segment, so every grouping reads one), and the next
/// call on good data succeeds. Plain reductions of the same items fault too.
#[test]
fn a_fault_after_thousands_of_empty_segments_is_an_error_value() {
    let Some(gpu) = gpu() else { return };
    let lengths = [vec![0u64; 3000], vec![50_001], vec![0; 10]].concat();
    let offsets = offsets_of(&lengths);
    let owner = owners_of(&lengths);
    let good = Auto7::random_vec(50_001, 9);
    let mut bad = good.clone();
    bad[31_337].t = [200; 7];
    let expected = fold_segments(&good, &offsets).unwrap();
    let (d_good, d_bad) = (gpu.upload(&good).unwrap(), gpu.upload(&bad).unwrap());
    let d_offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    let d_owner = gpu.upload(&convert::<u32>(&owner)).unwrap();
    for config in seg_configs() {
        for offsets_form in [true, false] {
            let run = |xs: &DeviceVec<Auto7>| {
                if offsets_form {
                    gpu.reduce_segments(xs, &d_offsets, config)
                } else {
                    gpu.reduce_by_owner(xs, &d_owner, lengths.len(), config)
                }
            };
            let ctx = format!("{config:?} offsets form {offsets_form}");
            match run(&d_bad) {
                Err(Error::DeviceFault { monoid, index, len }) => {
                    assert_eq!((monoid, index, len), ("Auto7", 200, 7), "{ctx}")
                }
                other => panic!("{ctx}: expected a device fault, got {other:?}"),
            }
            let got = run(&d_good).unwrap_or_else(|e| panic!("{ctx} after the fault: {e}"));
            same(&ctx, &gpu.download(&got).unwrap(), &expected);
        }
    }
    for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        assert!(
            matches!(
                gpu.reduce(&d_bad, algorithm),
                Err(Error::DeviceFault {
                    index: 200,
                    len: 7,
                    ..
                })
            ),
            "{algorithm}"
        );
        assert_eq!(gpu.reduce(&d_good, algorithm).unwrap(), fold(&good));
    }
}

// ---------------------------------------------------------------------------------------------
// Without a GPU: laws, the CPU backend, NVRTC
// ---------------------------------------------------------------------------------------------

/// Sizes and alignments: the shapes this file is about.
#[test]
fn shapes_are_the_intended_ones() {
    use std::mem::{align_of, size_of};
    assert_eq!((size_of::<Nib8>(), align_of::<Nib8>()), (1, 1));
    assert_eq!((size_of::<Packed16>(), align_of::<Packed16>()), (2, 2));
    assert_eq!((size_of::<Tri8>(), align_of::<Tri8>()), (3, 1));
    assert_eq!((size_of::<RotXor>(), align_of::<RotXor>()), (4, 2));
    assert_eq!((size_of::<Aff16n>(), align_of::<Aff16n>()), (6, 2));
    assert_eq!((size_of::<Auto7>(), align_of::<Auto7>()), (7, 1));
    assert_eq!((size_of::<AffCount>(), align_of::<AffCount>()), (12, 4));
    assert_eq!((size_of::<Grid16>(), align_of::<Grid16>()), (12, 2));
    assert_eq!((size_of::<SignedAff>(), align_of::<SignedAff>()), (16, 8));
    assert_eq!((size_of::<ArgMaxF64>(), align_of::<ArgMaxF64>()), (16, 8));
    assert_eq!((size_of::<MinF32>(), align_of::<MinF32>()), (4, 4));
    assert_eq!((size_of::<UtAff20>(), align_of::<UtAff20>()), (20, 4));
    assert_eq!((size_of::<Hash24>(), align_of::<Hash24>()), (24, 8));
    assert_eq!((size_of::<Aff2>(), align_of::<Aff2>()), (24, 4));
    assert_eq!((size_of::<Big40>(), align_of::<Big40>()), (40, 8));
    assert_eq!((size_of::<Aligned16>(), align_of::<Aligned16>()), (16, 16));
    assert_eq!((size_of::<Record128>(), align_of::<Record128>()), (128, 8));
    assert_eq!((size_of::<Record256>(), align_of::<Record256>()), (256, 8));
    assert_eq!((size_of::<Record512>(), align_of::<Record512>()), (512, 8));
    const { assert!(Auto7::CAN_FAULT && !Tri8::CAN_FAULT && !Big40::CAN_FAULT) };
    const { assert!(MinF32::COMMUTATIVE && !ArgMaxF64::COMMUTATIVE) };
}

fn laws<M: Random + Debug>(extra: &[M], seed: u64) {
    let mut xs = M::random_vec(10, seed);
    xs.push(M::identity());
    xs.extend_from_slice(extra);
    assert_monoid_laws(&xs);
    // Not commutative (but MinF32): some pair differs.
    let commutes = xs
        .iter()
        .all(|&a| xs.iter().all(|&b| M::combine(a, b) == M::combine(b, a)));
    assert_eq!(commutes, M::COMMUTATIVE, "commutativity of {xs:?}");
}

/// Identity, associativity (bit for bit) and non-commutativity of every new monoid.
#[test]
fn the_new_monoids_are_lawful() {
    laws::<Nib8>(&[Nib8 { p: -1 }, Nib8 { p: i8::MIN }], 1);
    laws::<Packed16>(&[Packed16 { p: u16::MAX }], 2);
    laws::<Tri8>(&[Tri8 { m: [255, 255, 255] }], 3);
    laws::<RotXor>(&[RotXor { x: u16::MAX, r: 15 }], 4);
    laws::<Aff16n>(&[Aff16n(u16::MAX, u16::MAX, u16::MAX)], 5);
    laws::<Auto7>(&[Auto7 { t: [6; 7] }], 6);
    laws::<AffCount>(
        &[AffCount {
            a: u32::MAX,
            b: i32::MIN,
            n: u32::MAX,
        }],
        7,
    );
    laws::<Grid16>(&[], 8);
    laws::<SignedAff>(
        &[SignedAff {
            v: i64::MIN,
            k: i16::MIN,
            neg: true,
        }],
        9,
    );
    laws::<ArgMaxF64>(
        &[
            ArgMaxF64 { v: -0.0, i: 1 },
            ArgMaxF64 { v: 0.0, i: 2 },
            ArgMaxF64 {
                v: f64::INFINITY,
                i: 3,
            },
        ],
        10,
    );
    laws::<MinF32>(&[MinF32 { v: 0.0 }, MinF32 { v: f32::MIN }], 11);
    laws::<UtAff20>(&[], 12);
    laws::<Hash24>(&[], 13);
    laws::<Aff2>(&[], 14);
    laws::<Big40>(&[], 15);
    laws::<Aligned16>(&[], 16);
    fn set<const K: usize>(k: u64) -> Record<K> {
        Record {
            v: [k; K],
            n: 1,
            set: true,
        }
    }
    laws::<Record128>(&[set(1), set(2)], 17);
    laws::<Record256>(&[set(1), set(2)], 18);
    laws::<Record512>(&[set(1), set(2)], 19);
    // The helpers mean what they say.
    let (l, r) = (
        Aff2::random(&mut TestRng::new(1)),
        Aff2::random(&mut TestRng::new(2)),
    );
    let apply = |f: Aff2, x: [u32; 2]| {
        [
            f.m[0]
                .wrapping_mul(x[0])
                .wrapping_add(f.m[1].wrapping_mul(x[1]))
                .wrapping_add(f.m[4]),
            f.m[2]
                .wrapping_mul(x[0])
                .wrapping_add(f.m[3].wrapping_mul(x[1]))
                .wrapping_add(f.m[5]),
        ]
    };
    let x = [12_345, 678_910];
    assert_eq!(apply(Aff2::combine(l, r), x), apply(r, apply(l, x)));
}

/// The CPU backend (parallel chunks) equals the sequential fold on every layout of this file,
/// both forms, u32 and u64.
fn cpu_backend_on_every_layout<M: Random>(seed: u64) {
    let cpu = Cpu::new();
    for (k, (name, lengths)) in layouts().iter().enumerate() {
        let offsets = offsets_of(lengths);
        let owner = owners_of(lengths);
        let items = M::random_vec(owner.len(), seed + k as u64);
        let expected = fold_segments(&items, &offsets).unwrap();
        let ctx = format!("Cpu / {name}");
        same(
            &ctx,
            &cpu.reduce_segments(&items, &offsets).unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_segments(&items, &convert::<u32>(&offsets))
                .unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_by_owner(&items, &owner, lengths.len()).unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_by_owner(&items, &convert::<u32>(&owner), lengths.len())
                .unwrap(),
            &expected,
        );
        assert_eq!(cpu.reduce(&items), fold(&items), "{ctx}");
    }
}

#[test]
fn cpu_backend_on_every_layout_small_items() {
    cpu_backend_on_every_layout::<Nib8>(1);
    cpu_backend_on_every_layout::<Tri8>(2);
    cpu_backend_on_every_layout::<RotXor>(3);
}

#[test]
fn cpu_backend_on_every_layout_large_items() {
    cpu_backend_on_every_layout::<SignedAff>(4);
    cpu_backend_on_every_layout::<ArgMaxF64>(5);
    cpu_backend_on_every_layout::<Big40>(6);
}

/// Every plain kernel (and Auto's, order-free for a commutative monoid), every segmented one
/// in both forms with u32 layouts, SegShuffle's second u32-offsets variant, and SegShuffle and
/// SegMerge with u64 layouts compile with NVRTC.
fn compiles_everywhere<M: CudaMonoid>() {
    let mut failures = Failures::default();
    let first_lines = |e: reduce_cuda::Error| {
        let text = e.to_string();
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("error")).collect();
        if lines.is_empty() {
            text
        } else {
            lines.join(" | ")
        }
    };
    for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        let got = compile_kernel::<M>(Config::new(algorithm), CI_ARCH);
        failures.note(
            format!("plain {algorithm}"),
            got.map(drop).map_err(first_lines),
        );
    }
    for algorithm in SegAlgorithm::ALL {
        for offsets_form in [false, true] {
            let got = compile_seg_kernel::<M>(SegConfig::new(algorithm), offsets_form, CI_ARCH);
            failures.note(
                format!("{algorithm} u32 (offsets form: {offsets_form})"),
                got.map(drop).map_err(first_lines),
            );
        }
    }
    let config = SegConfig::new(SegAlgorithm::SegShuffle);
    let variants = seg_kernel_variants_for::<M, u32>(config, true).unwrap();
    for source in variants.iter().skip(1) {
        let got = reduce_cuda::testing::compile_cubin(source, CI_ARCH);
        failures.note(
            "SegShuffle's second u32 offsets variant".into(),
            got.map(drop).map_err(first_lines),
        );
    }
    for algorithm in [SegAlgorithm::SegShuffle, SegAlgorithm::SegMerge] {
        for offsets_form in [false, true] {
            let got =
                compile_seg_kernel_for::<M, u64>(SegConfig::new(algorithm), offsets_form, CI_ARCH);
            failures.note(
                format!("{algorithm} u64 (offsets form: {offsets_form})"),
                got.map(drop).map_err(first_lines),
            );
        }
    }
    failures.finish(&format!("NVRTC, {}", name::<M>()));
}

macro_rules! nvrtc_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if require_nvrtc() {
                compiles_everywhere::<$m>();
            }
        }
    )*};
}

nvrtc_tests! {
    nvrtc_nib8: Nib8,
    nvrtc_packed16: Packed16,
    nvrtc_tri8: Tri8,
    nvrtc_rot_xor: RotXor,
    nvrtc_aff16n: Aff16n,
    nvrtc_auto7: Auto7,
    nvrtc_aff_count: AffCount,
    nvrtc_grid16: Grid16,
    nvrtc_signed_aff: SignedAff,
    nvrtc_argmax_f64: ArgMaxF64,
    nvrtc_min_f32: MinF32,
    nvrtc_ut_aff20: UtAff20,
    nvrtc_hash24: Hash24,
    nvrtc_aff2: Aff2,
    nvrtc_big40: Big40,
    nvrtc_aligned16: Aligned16,
    nvrtc_record128: Record128,
    nvrtc_record256: Record256,
    nvrtc_record512: Record512,
}

// ---------------------------------------------------------------------------------------------
// SegShuffle under the CPU emulator (tests/emu), for some new monoids and layouts
// ---------------------------------------------------------------------------------------------

/// This file's layout shapes scaled to a tile of `t` items (the emulator runs a few thousand
/// items per launch at most).
fn emu_layouts(t: u64, seed: u64) -> Vec<(String, Vec<u64>)> {
    let mut rng = TestRng::new(seed);
    vec![
        ("N = 1, S = 1".into(), vec![1]),
        ("N = 1 among empties".into(), vec![0, 0, 0, 1, 0, 0]),
        ("S = 1, N = 3t + 5".into(), vec![3 * t + 5]),
        (
            "all items in the last segment after 2t + 3 empty ones".into(),
            [vec![0; 2 * t as usize + 3], vec![3 * t + 5]].concat(),
        ),
        (
            "all items in the first segment, then 2t + 3 empty ones".into(),
            [vec![3 * t + 5], vec![0; 2 * t as usize + 3]].concat(),
        ),
        (
            "alternating empty / t + 7".into(),
            (0..5).flat_map(|_| [0, t + 7]).collect(),
        ),
        (
            "geometric 1, 2, 4 .. 4t".into(),
            (0..=(4 * t).ilog2()).map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric lengths drawn, mean 4".into(),
            (0..700).map(|_| geometric(&mut rng, 4)).collect(),
        ),
        (
            "tile lengths t - 1, t, t + 1, 2t - 1, 2t, 2t + 1".into(),
            [t - 1, t, t + 1, 1, 2 * t - 1, 2 * t, 2 * t + 1, 0, t]
                .into_iter()
                .collect(),
        ),
        (
            "huge segment, then 2t of size 1".into(),
            [vec![4 * t + 1], vec![1; 2 * t as usize]].concat(),
        ),
        (
            "S = 2^7 - 1, lengths 0..6".into(),
            (0..127).map(|_| rng.range(0, 6)).collect(),
        ),
        (
            "S = 2^7 + 1, lengths 0..6".into(),
            (0..129).map(|_| rng.range(0, 6)).collect(),
        ),
        ("random mixture".into(), {
            let mut lengths = Vec::new();
            while lengths.iter().sum::<u64>() < 5 * t {
                match rng.range(0, 3) {
                    0 => lengths.extend(std::iter::repeat_n(0, rng.range(1, t + 40) as usize)),
                    1 => lengths.extend(std::iter::repeat_n(1, rng.range(1, 60) as usize)),
                    2 => lengths.push(rng.range(t / 2, 2 * t + 3)),
                    _ => lengths.extend((0..rng.range(1, 60)).map(|_| rng.range(0, 9))),
                }
            }
            lengths
        }),
    ]
}

/// SegShuffle's offsets form with u32 offsets, both kernels the runtime may run (with and
/// without a tile's first offsets loaded ahead of its marks), for the 3-byte monoid; the owner
/// form for the 1-byte one.
#[test]
fn emulated_seg_shuffle_small_items() {
    let Some(cxx) = emu::compiler() else { return };
    for variant in [0, 1] {
        let kernel = emu::seg_shuffle_kernel::<Tri8, u32>(&cxx, 64, 4, true, variant);
        emu::check_layouts::<Tri8>(&kernel, &emu_layouts(kernel.tile, 1), 11);
    }
    let kernel = emu::seg_shuffle_kernel::<Nib8, u32>(&cxx, 32, 16, false, 0);
    emu::check_layouts::<Nib8>(&kernel, &emu_layouts(kernel.tile, 2), 12);
}

/// u64 layouts: the 12-byte nested array aligned to 2 (owners) and the 20-byte monoid
/// (offsets, 3 items per thread: no whole 16-byte vectors).
#[test]
fn emulated_seg_shuffle_u64_layouts() {
    let Some(cxx) = emu::compiler() else { return };
    let kernel = emu::seg_shuffle_kernel::<Grid16, u64>(&cxx, 64, 4, false, 0);
    emu::check_layouts::<Grid16>(&kernel, &emu_layouts(kernel.tile, 3), 13);
    let kernel = emu::seg_shuffle_kernel::<UtAff20, u64>(&cxx, 96, 3, true, 0);
    emu::check_layouts::<UtAff20>(&kernel, &emu_layouts(kernel.tile, 4), 14);
}
