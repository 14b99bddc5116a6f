//! The monoids the benchmarks reduce, and the random data each is filled with.

use crate::kernels::{AnyBits, FillMasks};
use reduce_cuda::Monoid;

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

// SAFETY: u32 fields only: any bits are a valid value.
unsafe impl AnyBits for Affine {}
unsafe impl AnyBits for Mat2 {}

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
