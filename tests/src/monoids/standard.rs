//! The standard test monoids: exactly associative and NOT commutative, of every item size the
//! runtime must handle (1, 2, 4, 8, 12, 16, 32 and 72 bytes), each with the random values it is
//! tested on. Most test files use these; the shapes no other monoid has are in [`super::small`]
//! and [`super::wide`].

use crate::{Random, TestRng};
use reduce_core::Monoid;

/// Affine maps (8 bytes) and 2x2 matrices (16 bytes), composed left to right: the benchmark's.
pub use reduce_bench::monoids::{Affine, Mat2};

impl Random for Affine {
    fn random(rng: &mut TestRng) -> Self {
        Affine {
            a: rng.next_u32() | 1,
            b: rng.next_u32(),
        }
    }
}

impl Random for Mat2 {
    fn random(rng: &mut TestRng) -> Self {
        // det = a*d - b*c odd: invertible mod 2^32.
        let (a, b, c) = (rng.next_u32() | 1, rng.next_u32() & !1, rng.next_u32());
        Mat2 {
            m: [a, b, c, rng.next_u32() | 1],
        }
    }
}

/// The first item that is set. 8 bytes (bool + padding + u32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = KeepFirst { set: false, value: 0 },
         combine = |l, r| if l.set { l } else { r })]
pub struct KeepFirst {
    pub set: bool,
    pub value: u32,
}

impl Random for KeepFirst {
    fn random(rng: &mut TestRng) -> Self {
        // An unset item carries value 0: the identity's, so that the laws hold bit for bit.
        let set = rng.next_u32().is_multiple_of(64);
        KeepFirst {
            set,
            value: if set { rng.next_u32() } else { 0 },
        }
    }
}

/// The last item that is set. 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = KeepLast { set: false, value: 0 },
         combine = |l, r| if r.set { r } else { l })]
pub struct KeepLast {
    pub set: bool,
    pub value: u32,
}

impl Random for KeepLast {
    fn random(rng: &mut TestRng) -> Self {
        // An unset item carries value 0: the identity's, so that the laws hold bit for bit.
        let set = rng.next_u32().is_multiple_of(64);
        KeepLast {
            set,
            value: if set { rng.next_u32() } else { 0 },
        }
    }
}

/// Polynomial rolling hash of a byte string: hash(s ++ t) = hash(s) * B^|t| + hash(t)
/// (mod 2^64). `pow` carries B^len. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = RollingHash { hash: 0, pow: 1 },
         combine = |l, r| RollingHash { hash: l.hash.wrapping_mul(r.pow).wrapping_add(r.hash), pow: l.pow.wrapping_mul(r.pow) })]
pub struct RollingHash {
    pub hash: u64,
    pub pow: u64,
}

impl Random for RollingHash {
    fn random(rng: &mut TestRng) -> Self {
        RollingHash {
            hash: rng.next_u64() & 0xff,
            pow: 1_000_003,
        }
    }
}

/// Permutations of {0, 1, 2, 3}, two bits per image, composed "l first, then r": the
/// symmetric group S4 in one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Perm4 { p: 0b11_10_01_00 },
         combine = |l, r| Perm4 { p:
             ((r.p >> (2 * (l.p & 3))) & 3)
             | (((r.p >> (2 * ((l.p >> 2) & 3))) & 3) << 2)
             | (((r.p >> (2 * ((l.p >> 4) & 3))) & 3) << 4)
             | (((r.p >> (2 * ((l.p >> 6) & 3))) & 3) << 6) })]
pub struct Perm4 {
    pub p: u8,
}

impl Random for Perm4 {
    fn random(rng: &mut TestRng) -> Self {
        const PERMS: [[u8; 4]; 24] = [
            [0, 1, 2, 3],
            [0, 1, 3, 2],
            [0, 2, 1, 3],
            [0, 2, 3, 1],
            [0, 3, 1, 2],
            [0, 3, 2, 1],
            [1, 0, 2, 3],
            [1, 0, 3, 2],
            [1, 2, 0, 3],
            [1, 2, 3, 0],
            [1, 3, 0, 2],
            [1, 3, 2, 0],
            [2, 0, 1, 3],
            [2, 0, 3, 1],
            [2, 1, 0, 3],
            [2, 1, 3, 0],
            [2, 3, 0, 1],
            [2, 3, 1, 0],
            [3, 0, 1, 2],
            [3, 0, 2, 1],
            [3, 1, 0, 2],
            [3, 1, 2, 0],
            [3, 2, 0, 1],
            [3, 2, 1, 0],
        ];
        let q = PERMS[(rng.next_u32() % 24) as usize];
        Perm4 {
            p: q[0] | (q[1] << 2) | (q[2] << 4) | (q[3] << 6),
        }
    }
}

/// Affine maps mod 2^8. 2 bytes: exercises 8-bit wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine8 { a: 1, b: 0 },
         combine = |l, r| Affine8 { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine8 {
    pub a: u8,
    pub b: u8,
}

impl Random for Affine8 {
    fn random(rng: &mut TestRng) -> Self {
        Affine8 {
            a: (rng.next_u32() as u8) | 1,
            b: rng.next_u32() as u8,
        }
    }
}

/// Affine maps mod 2^16. 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine16 { a: 1, b: 0 },
         combine = |l, r| Affine16 { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine16 {
    pub a: u16,
    pub b: u16,
}

impl Random for Affine16 {
    fn random(rng: &mut TestRng) -> Self {
        Affine16 {
            a: (rng.next_u32() as u16) | 1,
            b: rng.next_u32() as u16,
        }
    }
}

/// Upper-triangular 2x2 matrices [[a, b], [0, c]] over u32. 12 bytes (no 16-byte multiple).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Tri { a: 1, b: 0, c: 1 },
         combine = |l, r| Tri { a: l.a.wrapping_mul(r.a), b: l.a.wrapping_mul(r.b).wrapping_add(l.b.wrapping_mul(r.c)), c: l.c.wrapping_mul(r.c) })]
pub struct Tri {
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

impl Random for Tri {
    fn random(rng: &mut TestRng) -> Self {
        Tri {
            a: rng.next_u32() | 1,
            b: rng.next_u32(),
            c: rng.next_u32() | 1,
        }
    }
}

/// 2x2 matrices over u64, wrapping. 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2w { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2w { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
pub struct Mat2w {
    pub m: [u64; 4],
}

impl Random for Mat2w {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b, c) = (rng.next_u64() | 1, rng.next_u64() & !1, rng.next_u64());
        Mat2w {
            m: [a, b, c, rng.next_u64() | 1],
        }
    }
}

/// 3x3 matrices over u64, wrapping, row-major. 72 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat3 { m: [1, 0, 0, 0, 1, 0, 0, 0, 1] },
         combine = |l, r| Mat3 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[3])).wrapping_add(l.m[2].wrapping_mul(r.m[6])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[4])).wrapping_add(l.m[2].wrapping_mul(r.m[7])),
             l.m[0].wrapping_mul(r.m[2]).wrapping_add(l.m[1].wrapping_mul(r.m[5])).wrapping_add(l.m[2].wrapping_mul(r.m[8])),
             l.m[3].wrapping_mul(r.m[0]).wrapping_add(l.m[4].wrapping_mul(r.m[3])).wrapping_add(l.m[5].wrapping_mul(r.m[6])),
             l.m[3].wrapping_mul(r.m[1]).wrapping_add(l.m[4].wrapping_mul(r.m[4])).wrapping_add(l.m[5].wrapping_mul(r.m[7])),
             l.m[3].wrapping_mul(r.m[2]).wrapping_add(l.m[4].wrapping_mul(r.m[5])).wrapping_add(l.m[5].wrapping_mul(r.m[8])),
             l.m[6].wrapping_mul(r.m[0]).wrapping_add(l.m[7].wrapping_mul(r.m[3])).wrapping_add(l.m[8].wrapping_mul(r.m[6])),
             l.m[6].wrapping_mul(r.m[1]).wrapping_add(l.m[7].wrapping_mul(r.m[4])).wrapping_add(l.m[8].wrapping_mul(r.m[7])),
             l.m[6].wrapping_mul(r.m[2]).wrapping_add(l.m[7].wrapping_mul(r.m[5])).wrapping_add(l.m[8].wrapping_mul(r.m[8])),
         ] })]
pub struct Mat3 {
    pub m: [u64; 9],
}

impl Random for Mat3 {
    fn random(rng: &mut TestRng) -> Self {
        // Unit upper-triangular times a random lower part with even entries: det odd.
        let mut m = [0u64; 9];
        for (i, v) in m.iter_mut().enumerate() {
            let (row, col) = (i / 3, i % 3);
            *v = match row.cmp(&col) {
                std::cmp::Ordering::Equal => rng.next_u64() | 1,
                std::cmp::Ordering::Less => rng.next_u64(),
                std::cmp::Ordering::Greater => rng.next_u64() & !1,
            };
        }
        Mat3 { m }
    }
}
