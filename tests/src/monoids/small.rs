//! Small test monoids of shapes the standard ones do not have (1 to 12 bytes), each exactly
//! associative and (but `MinF32`) not commutative, written only in the derive's language: a
//! signed byte of packed nibbles (arithmetic shifts), packed bytes in a `u16`, `[u8; 3]`, a
//! `u16` + `u8` with a padding byte (run-time `rotate_left`), a tuple struct of three `u16`,
//! `[u8; 7]` with run-time indices (can fault), `u32` + `i32` + `u32`, a nested array
//! `[[u16; 3]; 2]` aligned to 2, and an `f32` minimum declared `commutative` (Auto's order-free
//! path for a derived monoid). Each comes with the random values it is tested on, chosen so
//! that long products do not collapse to a fixed point.

use crate::{Random, TestRng};
use reduce_cuda::Monoid;

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
pub struct Nib8 {
    pub p: i8,
}

impl Random for Nib8 {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b) = ((rng.next_u32() & 15) | 1, rng.next_u32() & 15);
        Nib8 {
            p: ((a << 4) | b) as u8 as i8,
        }
    }
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
pub struct Packed16 {
    pub p: u16,
}

impl Random for Packed16 {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b) = ((rng.next_u32() & 0xff) | 1, rng.next_u32() & 0xff);
        Packed16 {
            p: ((a << 8) | b) as u16,
        }
    }
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
pub struct Tri8 {
    pub m: [u8; 3],
}

impl Random for Tri8 {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u32();
        Tri8 {
            m: [w as u8 | 1, (w >> 8) as u8, (w >> 16) as u8 | 1],
        }
    }
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
pub struct RotXor {
    pub x: u16,
    pub r: u8,
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
pub struct Aff16n(pub u16, pub u16, pub u16);

impl Random for Aff16n {
    fn random(rng: &mut TestRng) -> Self {
        let w = rng.next_u64();
        Aff16n(w as u16 | 1, (w >> 16) as u16, (w >> 32) as u16)
    }
}

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
pub struct Auto7 {
    pub t: [u8; 7],
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
pub struct AffCount {
    pub a: u32,
    pub b: i32,
    pub n: u32,
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
pub struct Grid16 {
    pub t: [[u16; 3]; 2],
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

/// The minimum of f32 values without NaN or `-0.0`, declared `commutative` (exactly so on such
/// data): `Auto` takes its order-free path. 4 bytes. Compared bit for bit.
#[derive(Clone, Copy, Debug, Monoid)]
#[repr(C)]
#[monoid(
    identity = MinF32 { v: f32::INFINITY },
    combine = |l, r| MinF32 { v: l.v.min(r.v) },
    commutative
)]
pub struct MinF32 {
    pub v: f32,
}

impl PartialEq for MinF32 {
    fn eq(&self, other: &Self) -> bool {
        self.v.to_bits() == other.v.to_bits()
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
