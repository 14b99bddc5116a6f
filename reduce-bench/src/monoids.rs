//! The monoids the benchmarks reduce, and the random data each is filled with.

use crate::kernels::{AnyBits, FillMasks};
use reduce_cuda::{DeviceCopy, Monoid};

/// Affine maps `x -> a x + b` mod 2^32, composed left to right: exactly associative and not
/// commutative. 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine {
    pub a: u32,
    pub b: u32,
}

/// 2x2 matrices over u32 (wrapping), row-major, multiplied left to right: 16-byte items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2 { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
pub struct Mat2 {
    pub m: [u32; 4],
}

/// The maximum and its first index (NaN-free data), lifted from f32 items.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = ArgMax { v: f32::NEG_INFINITY, i: u32::MAX },
    combine = |l, r| if r.v > l.v || (r.v == l.v && r.i < l.i) { r } else { l },
    commutative,
    lift(f32) = |x, i| ArgMax { v: x, i: i as u32 }
)]
pub struct ArgMax {
    pub v: f32,
    pub i: u32,
}

/// Unitriangular 3x3 matrices over u32 (wrapping), `[[1, a, c], [0, 1, b], [0, 0, 1]]`,
/// multiplied left to right (the Heisenberg group): exactly associative, not commutative.
/// 12-byte items; lifted from 8-byte [`Pair`] and 12-byte [`Triple`] items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Heis { a: 0, b: 0, c: 0 },
    combine = |l, r| Heis {
        a: l.a.wrapping_add(r.a),
        b: l.b.wrapping_add(r.b),
        c: l.c.wrapping_add(r.c).wrapping_add(l.a.wrapping_mul(r.b)),
    },
    lift(Pair) = |p, i| Heis { a: p.a, b: p.b, c: i as u32 },
    lift(Triple) = |t, _i| Heis { a: t.a, b: t.b, c: t.c }
)]
pub struct Heis {
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

/// Two words: an 8-byte item that [`Heis`] lifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
}

/// Three words: a 12-byte item that [`Heis`] lifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct Triple {
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

// SAFETY: u32 fields only: any bits are a valid value.
/// The f32 linear recurrence h -> a h + b: affine maps over floats composed left to right
/// (the scans' float monoid: not exactly associative, so the grouping shows in the bits).
/// 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = AffineF32 { a: 1.0, b: 0.0 },
         combine = |l, r| AffineF32 { a: l.a * r.a, b: l.b * r.a + r.b })]
pub struct AffineF32 {
    pub a: f32,
    pub b: f32,
}

/// Recurrences that neither vanish nor blow up: a in [0.5, 1), b in [1, 2).
pub fn masks_affine_f32() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 0x3f00_0000;
    m.and_mask[0] = 0x3f7f_ffff;
    m.or_mask[1] = 0x3f80_0000;
    m.and_mask[1] = 0x3fff_ffff;
    m
}

// SAFETY: fields of f32 and integers only: any bits are a value.
unsafe impl AnyBits for AffineF32 {}
unsafe impl AnyBits for ArgMax {}
unsafe impl AnyBits for LogSumExp {}
unsafe impl AnyBits for Affine {}
unsafe impl AnyBits for Mat2 {}
unsafe impl AnyBits for Heis {}
unsafe impl AnyBits for Pair {}
unsafe impl AnyBits for Triple {}

/// Affine maps with odd multipliers: long products stay informative.
pub fn masks_affine() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 1;
    m
}

/// Matrices with a and d odd and b even: invertible mod 2^32.
pub fn masks_mat2() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 1;
    m.or_mask[3] = 1;
    m.and_mask[1] = !1;
    m
}

/// f32 in [1, 2): sign 0, exponent 127, random mantissa.
pub fn masks_f32() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 0x3f80_0000;
    m.and_mask[0] = 0x3fff_ffff;
    m
}

/// f64 items in [1, 2): random mantissas, the exponent word fixed.
pub fn masks_f64() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[1] = 0x3ff0_0000;
    m.and_mask[1] = 0x3fff_ffff;
    m
}

/// Log-sum-exp: (the maximum, the sum of e^(x - maximum)) — the reduction behind softmax and
/// cross-entropy, lifted from f32 logits. Not exactly associative (floats): tests compare it
/// within a tolerance, and its lift and combine bit for bit between the CPU and the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = LogSumExp { m: f32::NEG_INFINITY, s: 0.0 },
    combine = |a, b| {
        // One exp per combine, and no branch: the larger maximum's sum is kept, the other one
        // scaled by e^(smaller - larger). A NaN maximum is the larger one (it stays in m). Two
        // maxima infinite alike (two empty sums, both -inf; or both +inf) differ by NaN: the
        // sum is then the larger's.
        let first = a.m >= b.m || a.m.is_nan();
        let big = if first { a } else { b };
        let small = if first { b } else { a };
        let d = small.m - big.m;
        let e = d.exp();
        let s = if d.is_nan() { big.s } else { small.s.mul_add(e, big.s) };
        LogSumExp { m: big.m, s }
    },
    commutative,
    lift(f32) = |x, _i| LogSumExp { m: x, s: 1.0 }
)]
pub struct LogSumExp {
    pub m: f32,
    pub s: f32,
}

impl LogSumExp {
    /// ln Σ e^x.
    pub fn value(self) -> f32 {
        self.m + reduce_cuda::reduce_core::math::Math::ln(self.s)
    }
}

/// The last record that is set, and how many items were folded: a large item with a cheap
/// combine, written once for every size with a const generic and `..base` struct updates.
/// `K` = 15, 31, 63, 127, 255: 128 to 2048 bytes (`K` u64, a `u32`, a `bool`, padding), past
/// the 72 bytes the README says were tested.
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
pub struct Record<const K: usize> {
    pub v: [u64; K],
    pub n: u32,
    pub set: bool,
}

/// 128 bytes.
pub type Record128 = Record<15>;
/// 256 bytes.
pub type Record256 = Record<31>;
/// 512 bytes.
pub type Record512 = Record<63>;
/// 1024 bytes: past the static shared memory of SegShuffle and SegMerge.
pub type Record1024 = Record<127>;
/// 2048 bytes: past the static shared memory of the scans and of the segmented reductions
/// by owners.
pub type Record2048 = Record<255>;
