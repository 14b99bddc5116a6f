//! Wide test monoids of shapes the standard ones do not have (16 to 512 bytes), each exactly
//! associative and not commutative, written only in the derive's language: `i64` + `i16` +
//! `bool` (padding), `f64` + `u32` (argmax, first index on ties), `[u32; 5]`, `u64` + `u64` +
//! `u32` (tail padding), `[u32; 6]` through a `#[device_fn]` helper, a nested
//! `#[derive(DeviceCopy)]` 2x2 `u64` matrix with a `u32` and a `u8` (40 bytes), a struct
//! over-aligned with `#[repr(C, align(16))]` (and 64 and 256), and a const-generic keep-last
//! record (`..base` updates; defined in `reduce_bench::monoids`, whose `bench large` times it)
//! at 128 to 2048 bytes, past the 72 bytes the README says were tested. Each comes with the random values it is tested on, chosen so that long products do not
//! collapse to a fixed point.

use crate::{Random, TestRng};
use reduce_cuda::{device_fn, DeviceCopy, Monoid};

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
pub struct SignedAff {
    pub v: i64,
    pub k: i16,
    pub neg: bool,
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

/// The maximum and the index of its first occurrence (ties keep the left one; `-0.0` ties
/// `0.0`): a selection, so exactly associative on NaN-free data without `-inf`. 16 bytes: an
/// `f64`, a `u32` and padding. Compared bit for bit.
#[derive(Clone, Copy, Debug, Monoid)]
#[repr(C)]
#[monoid(
    identity = ArgMaxF64 { v: f64::NEG_INFINITY, i: u32::MAX },
    combine = |l, r| if r.v > l.v { r } else { l }
)]
pub struct ArgMaxF64 {
    pub v: f64,
    pub i: u32,
}

impl PartialEq for ArgMaxF64 {
    fn eq(&self, other: &Self) -> bool {
        self.v.to_bits() == other.v.to_bits() && self.i == other.i
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
pub struct UtAff20 {
    pub c: [u32; 5],
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
pub struct Hash24 {
    pub hash: u64,
    pub pow: u64,
    pub len: u32,
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
pub struct Aff2 {
    pub m: [u32; 6],
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

/// A 2x2 matrix over u64 (a nested plain-data struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct M2w {
    pub m: [[u64; 2]; 2],
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
pub struct Big40 {
    pub m: M2w,
    pub n: u32,
    pub tag: u8,
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

/// Affine maps mod 2^32 (`a`, `b`: u32) in a struct over-aligned to `$align`, written with `Self`
/// and typed closure parameters: one definition for the three alignments below.
macro_rules! aligned_affine {
    ($(#[$doc:meta])* $name:ident, $align:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
        #[repr(C, align($align))]
        #[monoid(
            identity = Self { a: 1, b: 0 },
            combine = |l: $name, r: $name| Self {
                a: l.a.wrapping_mul(r.a),
                b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
            }
        )]
        pub struct $name {
            pub a: u32,
            pub b: u32,
        }

        impl Random for $name {
            fn random(rng: &mut TestRng) -> Self {
                $name {
                    a: rng.next_u32() | 1,
                    b: rng.next_u32(),
                }
            }
        }
    };
}

aligned_affine!(
    /// Affine maps mod 2^32 over-aligned to 16 (`#[repr(C, align(16))]`: 8 bytes of tail
    /// padding). 16 bytes.
    Aligned16,
    16
);
aligned_affine!(
    /// [`Aligned16`]'s maps over-aligned to 64 (56 bytes of tail padding), past the 16 bytes a
    /// vector load takes. 64 bytes.
    Aligned64,
    64
);
aligned_affine!(
    /// [`Aligned16`]'s maps aligned to 256 bytes, the largest alignment the derive accepts
    /// (CUDA's guarantee for device allocations). 256 bytes.
    Aligned256,
    256
);

/// The const-generic keep-last record at 128 to 2048 bytes (`bench large` times it too).
pub use reduce_bench::monoids::{Record, Record1024, Record128, Record2048, Record256, Record512};

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
