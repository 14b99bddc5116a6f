//! Monoids written in the derive's whole language: `let mut`, assignment, `for` loops,
//! run-time indices, `match`, nested `#[derive(DeviceCopy)]` structs, `#[device_fn]` helpers,
//! const generics and lifted inputs. Shared by the CPU/NVRTC tests (`derive_lang.rs`), the GPU
//! tests (`lang_plain.rs`, `lang_segmented.rs`) and the emulator's (`emulated_kernels.rs`).

use crate::{Random, TestRng};
use reduce_core::{DeviceCopy, Lift, Monoid};

/// Each item lifted into `M` with its index in `xs`: what a lifted reduction folds.
pub fn lifted<M: Lift<X>, X: DeviceCopy>(xs: &[X]) -> Vec<M> {
    xs.iter()
        .enumerate()
        .map(|(i, &x)| M::lift(x, i as u64))
        .collect()
}

/// Transition tables of an automaton with 8 states: `t[s]` is the state reached from `s`.
/// Composition "l first, then r": a classic non-commutative monoid indexed by computed values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Automaton { t: [0, 1, 2, 3, 4, 5, 6, 7] },
    combine = |l, r| {
        let mut t = [0u8; 8];
        for s in 0..8 {
            t[s] = r.t[l.t[s] as usize];
        }
        Automaton { t }
    }
)]
pub struct Automaton {
    pub t: [u8; 8],
}

impl Random for Automaton {
    fn random(rng: &mut TestRng) -> Self {
        let mut t = [0u8; 8];
        for s in t.iter_mut() {
            *s = (rng.next_u32() % 8) as u8;
        }
        Automaton { t }
    }
}

/// 3x3 matrices and their product, in their own module (used through paths and `use`).
pub mod linalg {
    use reduce_core::{device_fn, DeviceCopy};

    /// A 3x3 matrix over u32, wrapping.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
    #[repr(C)]
    pub struct M3 {
        pub m: [[u32; 3]; 3],
    }

    /// The matrix product, with loops and mutation.
    #[device_fn]
    pub fn mul(a: M3, b: M3) -> M3 {
        let mut c = M3 { m: [[0; 3]; 3] };
        for i in 0..3 {
            for j in 0..3 {
                let mut s = 0u32;
                for k in 0..3 {
                    s = s.wrapping_add(a.m[i][k].wrapping_mul(b.m[k][j]));
                }
                c.m[i][j] = s;
            }
        }
        c
    }

    /// The identity matrix (a helper without parameters).
    #[device_fn]
    pub fn eye() -> M3 {
        let mut c = M3 { m: [[0; 3]; 3] };
        for i in 0..3 {
            c.m[i][i] = 1;
        }
        c
    }
}

/// A chain of 3x3 matrix products with a count: a nested struct, helpers by path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = MatChain { m: linalg::eye(), count: 0 },
    combine = |l, r| MatChain { m: linalg::mul(l.m, r.m), count: l.count.wrapping_add(r.count) }
)]
pub struct MatChain {
    pub m: linalg::M3,
    pub count: u32,
}

impl Random for MatChain {
    fn random(rng: &mut TestRng) -> Self {
        // Unit upper triangular times anything with even entries below: det odd, invertible.
        let mut m = [[0u32; 3]; 3];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = match i.cmp(&j) {
                    std::cmp::Ordering::Equal => rng.next_u32() | 1,
                    std::cmp::Ordering::Less => rng.next_u32(),
                    std::cmp::Ordering::Greater => rng.next_u32() & !1,
                };
            }
        }
        MatChain {
            m: linalg::M3 { m },
            count: 1,
        }
    }
}

/// The K largest values, sorted in decreasing order (`-inf` pads): a const generic k-best
/// list, lifted from plain `f32` items.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = TopK { v: [f32::NEG_INFINITY; K] },
    combine = |l, r| {
        let mut v = [f32::NEG_INFINITY; K];
        let mut i = 0usize;
        let mut j = 0usize;
        for k in 0..K {
            // i + j == k < K: both in bounds.
            if l.v[i] >= r.v[j] {
                v[k] = l.v[i];
                i += 1;
            } else {
                v[k] = r.v[j];
                j += 1;
            }
        }
        TopK { v }
    },
    commutative,
    lift(f32) = |x, _i| {
        let mut v = [f32::NEG_INFINITY; K];
        v[0] = x;
        TopK { v }
    }
)]
pub struct TopK<const K: usize> {
    pub v: [f32; K],
}

/// Points and their componentwise minimum and maximum.
pub mod geom {
    use reduce_core::{device_fn, DeviceCopy};

    /// A point in the plane.
    #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
    #[repr(C)]
    pub struct Point {
        pub x: f32,
        pub y: f32,
    }

    /// The componentwise minimum.
    #[device_fn]
    pub fn lower(a: Point, b: Point) -> Point {
        Point {
            x: a.x.min(b.x),
            y: a.y.min(b.y),
        }
    }

    /// The componentwise maximum.
    #[device_fn]
    pub fn upper(a: Point, b: Point) -> Point {
        Point {
            x: a.x.max(b.x),
            y: a.y.max(b.y),
        }
    }
}

use geom::{lower, upper, Point};

/// The bounding box of points: an array of nested structs, helpers imported with `use`, a lift
/// from `Point` items.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = BBox {
        corners: [
            Point { x: f32::INFINITY, y: f32::INFINITY },
            Point { x: f32::NEG_INFINITY, y: f32::NEG_INFINITY },
        ],
    },
    combine = |a, b| BBox {
        corners: [lower(a.corners[0], b.corners[0]), upper(a.corners[1], b.corners[1])],
    },
    commutative,
    lift(Point) = |p, _i| BBox { corners: [p, p] }
)]
pub struct BBox {
    pub corners: [Point; 2],
}

/// The last non-zero digit: `match` with a wildcard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = LastDigit { d: 0 }, combine = |l, r| match r.d { 0 => l, _ => r })]
pub struct LastDigit {
    pub d: u8,
}

impl Random for LastDigit {
    fn random(rng: &mut TestRng) -> Self {
        LastDigit {
            d: if rng.next_u32().is_multiple_of(4) {
                (rng.next_u32() % 9 + 1) as u8
            } else {
                0
            },
        }
    }
}

/// The maximum and its first index, lifted from `f32` items (argmax): `lift` with the index.
pub use reduce_bench::monoids::ArgMax;

/// Run-length state of a byte string: classifies bytes with `match` ranges and counts the
/// runs of letters ("words"). Exactly associative and not commutative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Words { words: 0, first: 0, last: 0, empty: true },
    combine = |l, r| {
        if l.empty {
            return r;
        }
        if r.empty {
            return l;
        }
        let mut words = l.words.wrapping_add(r.words);
        // a word cut in two is counted once
        let l_letter = match l.last { b'a'..=b'z' | b'A'..=b'Z' => true, _ => false };
        let r_letter = match r.first { b'a'..=b'z' | b'A'..=b'Z' => true, _ => false };
        if l_letter && r_letter {
            words = words.wrapping_sub(1);
        }
        Words { words, first: l.first, last: r.last, empty: false }
    }
)]
pub struct Words {
    pub words: u32,
    pub first: u8,
    pub last: u8,
    pub empty: bool,
}

impl Words {
    /// One byte.
    pub fn of(b: u8) -> Words {
        let letter = b.is_ascii_alphabetic();
        Words {
            words: u32::from(letter),
            first: b,
            last: b,
            empty: false,
        }
    }
}

impl Random for Words {
    fn random(rng: &mut TestRng) -> Self {
        const BYTES: &[u8] = b"ab  cd,e;f Z.y";
        Words::of(BYTES[(rng.next_u32() as usize) % BYTES.len()])
    }
}

/// Rotations of 4 states built from input symbols by a table lookup that can go out of
/// bounds (symbols past 2): a lift that can fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Shift { t: [0, 1, 2, 3] },
    combine = |l, r| Shift { t: [r.t[l.t[0] as usize], r.t[l.t[1] as usize], r.t[l.t[2] as usize], r.t[l.t[3] as usize]] },
    lift(u32) = |x, _i| {
        let rotations = [[1u8, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]];
        Shift { t: rotations[x as usize] }
    }
)]
pub struct Shift {
    pub t: [u8; 4],
}

/// The window length of [`Window`]: a `usize` constant, known when the kernel is generated.
pub const WINDOW: usize = 5;

/// The last `WINDOW` values, oldest first (a sliding window), and their maximum: a `const` item
/// as an array length and a loop bound, `for x in array`, shifts by a run-time amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Window { v: [0; WINDOW], n: 0, max: 0 },
    combine = |l, r| {
        // r's values come last; keep the newest WINDOW of l's and r's together
        let mut v = [0u32; WINDOW];
        let take = if r.n as usize >= WINDOW { WINDOW } else { r.n as usize };
        let keep = WINDOW - take;
        for i in 0..WINDOW {
            if i < keep {
                v[i] = l.v[i + take];
            } else {
                v[i] = r.v[i];
            }
        }
        let mut max = 0u32;
        for x in v {
            max = max.max(x);
        }
        Window { v, n: l.n.wrapping_add(r.n), max }
    }
)]
pub struct Window {
    pub v: [u32; WINDOW],
    pub n: u32,
    /// The largest value in the window.
    pub max: u32,
}

impl Window {
    /// One value.
    pub fn of(x: u32) -> Window {
        let mut v = [0; WINDOW];
        v[WINDOW - 1] = x;
        Window { v, n: 1, max: x }
    }
}

impl Random for Window {
    fn random(rng: &mut TestRng) -> Self {
        Window::of(rng.next_u32())
    }
}

/// Regressions found by the differential fuzzer (`fuzz-derive`), end to end, in a lawful monoid
/// (elementwise max of three small counters, or of the flags): an index that is a block with a
/// value (a lambda in C++: `a[[&]...]` opened an attribute), `&` on bools whose right side may
/// fault (C++'s `&&` skipped it), and `for x in array` over an array the body assigns to (Rust
/// iterates over a copy: `t[2] = x` over the copy leaves `t[2]` as it was; over the live array
/// it would end as `t[1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Regress { t: [0, 0, 0], set: false },
    combine = |l, r| {
        let mut t = [l.t[0].max(r.t[0]), l.t[1].max(r.t[1]), l.t[2].max(r.t[2])];
        t[0] = t[(match t[1] { 0 => 3u64, _ => 0 }) as usize % 3];
        let set = l.set & ((r.t[l.t[2] as usize] >> 31) < 2) | r.set;
        for x in t {
            t[2] = x;
        }
        Regress { t, set }
    }
)]
pub struct Regress {
    pub t: [u32; 3],
    pub set: bool,
}

/// What NVRTC 13.0 miscompiled in the fuzzer's GPU run of seed 0x5eedf00d (16 programs; see the
/// prelude's `r_pin`), computed per item by a lift so that each expression meets Rust on the
/// device with chosen inputs, not only through a combine: an `i16` negation of MIN divided
/// (p03344: +6 for -6) and shifted right (p02456: logical instead of arithmetic), and the
/// absolute value of `i32::MIN` (written `if w < 0 { w.wrapping_neg() } else { w }`) followed by
/// a remainder (p01238: treated as non-negative). The combine adds (wrapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Probe { a: 0, b: 0, c: 0 },
    combine = |l, r| Probe {
        a: l.a.wrapping_add(r.a),
        b: l.b.wrapping_add(r.b),
        c: l.c.wrapping_add(r.c),
    },
    commutative,
    lift(u64) = |x, _i| {
        let h = (x >> 48) as i16;
        let w = x as i32;
        let v = (x >> 32) as i32;
        let n = ((x >> 8) & 15) as u32;
        Probe {
            a: (h.wrapping_neg() / 4849) as i32,
            b: (if w < 0 { w.wrapping_neg() } else { w }).wrapping_rem(v.wrapping_neg() | 1),
            c: (h.wrapping_neg() >> n) as i32,
        }
    }
)]
pub struct Probe {
    pub a: i32,
    pub b: i32,
    pub c: i32,
}

/// Inputs of [`Probe`]'s lift that reach the miscompiled cases, then `n` random ones.
pub fn probe_inputs(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = TestRng::new(seed);
    let mut xs = vec![
        0x7fff_ffff_8000_0000, // w = i32::MIN, v = i32::MAX: |MIN| % -(MAX) | 1
        0x8000_0000_0000_0100, // h = i16::MIN, shift by 1
        0x8000_0000_0000_0f00, // h = i16::MIN, shift by 15
        0x8001_0000_8000_0000,
    ];
    xs.extend((0..n).map(|_| (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32())));
    xs
}

/// Integer divisions by run-time values in a lift: `i32` `/` (a fault by zero and for
/// `i32::MIN / -1`, where Rust panics) and `u64` `wrapping_rem` (a fault by zero only), summed
/// with wrapping adds. The high and low halves of the item are the numerator and the divisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Quotients { q: 0, r: 0, e: 0 },
    combine = |a, b| Quotients {
        q: a.q.wrapping_add(b.q),
        r: a.r.wrapping_add(b.r),
        e: a.e.wrapping_add(b.e),
    },
    commutative,
    lift(u64) = |x, _i| Quotients {
        q: (x >> 32) as i32 / x as i32,
        r: (x >> 40).wrapping_rem(x & 0xffff),
        e: ((x >> 32) as i32).rem_euclid(x as i32),
    }
)]
pub struct Quotients {
    pub q: i32,
    pub r: u64,
    pub e: i32,
}

/// Items of [`Quotients`] whose divisors are never 0 and never divide `i32::MIN` by -1.
pub fn quotient_inputs(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|_| {
            let x = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
            // a divisor of 0 or -1 becomes 7 (low half), and the low 16 bits are never 0
            let low = x as u32;
            let low = if low == 0 || low == u32::MAX || low & 0xffff == 0 {
                7
            } else {
                low
            };
            (x & !0xffff_ffff) | u64::from(low)
        })
        .collect()
}

/// A float's bits as a `u64`, every NaN as 1 (NaN payloads may differ between CPU and GPU).
#[reduce_core::device_fn]
fn bits32(x: f32) -> u64 {
    if x.is_nan() {
        1
    } else {
        x.to_bits() as u64
    }
}

/// [`bits32`] for f64.
#[reduce_core::device_fn]
fn bits64(x: f64) -> u64 {
    if x.is_nan() {
        1
    } else {
        x.to_bits()
    }
}

/// The derive's exact float methods (and `ln_1p`, `exp_m1`) and its integer bit methods on one
/// `u64` input: its bits as
/// an f32 and an f64 (a value with a fraction, halves included, on odd indices), and as every
/// integer width, each result kept as a bit pattern and the items combined by wrapping adds
/// (exact in any order). A segment of one item must hold exactly its lift, on the CPU, the
/// emulator and the GPU alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Methods { f: [0; 28], n: [0; 26] },
    combine = |a, b| {
        let mut m = a;
        for k in 0..28 {
            m.f[k] = a.f[k].wrapping_add(b.f[k]);
        }
        for k in 0..26 {
            m.n[k] = a.n[k].wrapping_add(b.n[k]);
        }
        m
    },
    commutative,
    lift(u64) = |b, i| {
        let x = if i & 1 == 0 {
            f32::from_bits(b as u32)
        } else {
            (b % 40_000) as f32 / 64.0 - 300.0
        };
        let y = if i & 1 == 0 {
            f64::from_bits(b.rotate_left(29))
        } else {
            (b % 90_000) as f64 / 128.0 - 350.0
        };
        let z = f32::from_bits((b >> 32) as u32);
        let class = (x.is_finite() as u64)
            | ((x.is_infinite() as u64) << 1)
            | ((x.is_sign_positive() as u64) << 2)
            | ((x.is_sign_negative() as u64) << 3)
            | ((y.is_finite() as u64) << 4)
            | ((y.is_infinite() as u64) << 5)
            | ((y.is_sign_positive() as u64) << 6)
            | ((y.is_sign_negative() as u64) << 7);
        let (w8, u8v) = (b as i8, (b >> 8) as u8);
        let (w16, u16v): (i16, u16) = ((b >> 16) as i16, (b >> 24) as u16);
        let w32 = b as i32;
        let u32v = (b >> 32) as u32;
        let w64 = b as i64;
        let e = ((b >> 40) % 70) as u32;
        Methods {
            f: [
                bits32(x.floor()),
                bits32(x.ceil()),
                bits32(x.trunc()),
                bits32(x.round()),
                bits32(x.round_ties_even()),
                bits32(x.fract()),
                bits32(x.signum()),
                bits32(x.copysign(z)),
                bits32(x.recip()),
                bits32(x.clamp(-2.5, 100.0)),
                bits64(y.floor()),
                bits64(f64::ceil(y)),
                bits64(y.trunc()),
                bits64(y.round()),
                bits64(y.round_ties_even()),
                bits64(y.fract()),
                bits64(y.signum()),
                bits64(y.copysign(f64::from_bits(b.rotate_left(3)))),
                bits64(y.recip()),
                bits64(y.clamp(f64::NEG_INFINITY, 1e10)) ^ class,
                bits32(x.rem_euclid(2.5)),
                bits32(x.div_euclid(-1.5)),
                bits64(y.rem_euclid(0.75)) ^ bits64(y.div_euclid(3.0)),
                bits64(f64::from(x) * std::f64::consts::PI),
                bits32(x.ln_1p()),
                bits32(x.exp_m1()),
                bits64(y.ln_1p()),
                bits64(f64::exp_m1(y)),
            ],
            n: [
                w8.abs_diff((b >> 56) as i8) as u64,
                w8.unsigned_abs() as u64 | ((w8.signum() as u8 as u64) << 8),
                w8.saturating_pow(e) as u8 as u64 | ((w8.saturating_neg() as u8 as u64) << 8),
                w8.saturating_abs() as u8 as u64 | ((w8.wrapping_abs() as u8 as u64) << 8),
                u8v.reverse_bits() as u64 | ((u8v.swap_bytes() as u64) << 8),
                u8v.saturating_pow(e) as u64 | ((u8v.is_power_of_two() as u64) << 8),
                (w16.leading_ones() | (w16.trailing_ones() << 8)) as u64,
                w16.reverse_bits() as u16 as u64 | ((w16.swap_bytes() as u16 as u64) << 16),
                w16.saturating_pow(e % 20) as u16 as u64 | ((w16.clamp(-300, 300) as u16 as u64) << 16),
                u16v.abs_diff((b >> 48) as u16) as u64 | ((u16v.count_zeros() as u64) << 16),
                u16v.wrapping_pow(e) as u64 | ((u16v.is_power_of_two() as u64) << 16),
                w32.abs_diff((b >> 32) as i32) as u64,
                w32.unsigned_abs() as u64 | ((w32.signum() as u32 as u64) << 32),
                w32.reverse_bits() as u32 as u64 | ((w32.swap_bytes() as u32 as u64) << 32),
                w32.saturating_pow(e % 40) as u32 as u64 | ((w32.saturating_neg() as u32 as u64) << 32),
                (w32.leading_ones() | (w32.trailing_ones() << 8) | (w32.count_zeros() << 16)) as u64,
                u32v.reverse_bits() as u64 | ((u32v.swap_bytes() as u64) << 32),
                u32v.saturating_pow(e % 40) as u64 | ((u32v.clamp(7, 1000) as u64) << 32),
                w64.abs_diff(b.rotate_left(13) as i64),
                w64.unsigned_abs() ^ (w64.signum() as u64),
                w64.reverse_bits() as u64 ^ (w64.swap_bytes() as u64).rotate_left(7),
                w64.saturating_pow(e) as u64 ^ (w64.saturating_abs() as u64).rotate_left(3),
                b.reverse_bits() ^ b.swap_bytes().rotate_left(5) ^ (b.is_power_of_two() as u64),
                (b.leading_ones() | (b.trailing_ones() << 8) | (b.count_zeros() << 16)) as u64
                    ^ b.saturating_pow(e % 20).wrapping_pow(3),
                w32.rem_euclid(7) as u32 as u64 | ((w16.div_euclid(-3) as u16 as u64) << 32),
                (i64::from(w32) as u64 ^ u64::from(u32v))
                    .wrapping_add(u64::from(w8.is_positive()) | (u64::from(w64.is_negative()) << 1)),
            ],
        }
    }
)]
pub struct Methods {
    pub f: [u64; 28],
    pub n: [u64; 26],
}

/// Inputs of [`Methods`]' lift: the special floats' bits (in the low 32 bits and, rotated, as
/// f64), halves, powers of two and integer extremes, then `n` random ones.
pub fn method_inputs(n: usize, seed: u64) -> Vec<u64> {
    let f32s: [u32; 12] = [
        0,
        0x8000_0000,
        1,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x3f00_0000,
        0xbf00_0000,
        0x3fc0_0000,
        0x4020_0000,
        0x4b00_0001,
        0x7f7f_ffff,
    ];
    let f64s: [u64; 8] = [
        0,
        0x8000_0000_0000_0000,
        1,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x3fe0_0000_0000_0000,
        0x4330_0000_0000_0001,
    ];
    let mut xs: Vec<u64> = f32s.iter().map(|&b| u64::from(b)).collect();
    // rotate_left(29) in the lift puts these back
    xs.extend(f64s.iter().map(|&b| b.rotate_right(29)));
    xs.extend([
        u64::MAX,
        1 << 63,
        0x80,
        0x8000,
        0x8000_0000,
        0x0100_0000_0000,
        0xff00,
    ]);
    let mut rng = TestRng::new(seed);
    xs.extend((0..n).map(|_| (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32())));
    xs
}

/// Every elementary function of the derive's language on one f32 input (the f64 ones on the
/// input widened; the logarithms of |x|), and the integer `pow` and saturating operations on its
/// bits; combined by a field-wise max (exact in any order; NaN-free inputs keep the identity
/// law). Segments of one item each hold the lift of their item: the CPU and the GPU must give the
/// same bits for every function on every input.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = MathFns {
        f: [f32::NEG_INFINITY; 8],
        d: [f64::NEG_INFINITY; 8],
        n: [i32::MIN; 4],
    },
    combine = |a, b| {
        let mut m = a;
        for k in 0..8 {
            m.f[k] = a.f[k].max(b.f[k]);
        }
        for k in 0..8 {
            m.d[k] = a.d[k].max(b.d[k]);
        }
        for k in 0..4 {
            m.n[k] = a.n[k].max(b.n[k]);
        }
        m
    },
    commutative,
    lift(f32) = |x, i| {
        let w = x as f64;
        let bits = (x * 1000.0) as i32;
        MathFns {
            f: [
                x.exp(),
                x.exp2(),
                x.abs().ln(),
                x.abs().log2(),
                f32::log10(x.abs()),
                x.abs().powf(0.37 * x),
                x.powi((i % 7) as i32 - 3),
                x.tanh(),
            ],
            d: [
                w.exp(),
                w.exp2(),
                w.abs().ln(),
                w.abs().log2(),
                w.abs().log10(),
                w.abs().powf(0.37 * w),
                w.powi((i % 7) as i32 - 3),
                w.tanh(),
            ],
            n: [
                (bits % 100).pow((i % 5) as u32),
                bits.saturating_add(i32::MAX - 1000),
                bits.saturating_sub(i32::MIN + 1000),
                bits.saturating_mul(bits),
            ],
        }
    }
)]
pub struct MathFns {
    pub f: [f32; 8],
    pub d: [f64; 8],
    pub n: [i32; 4],
}

pub use reduce_bench::monoids::LogSumExp;

/// Wrapping sums of `u32` whose combine faults where a partial sum is [`Trap::DIVIDES_BY_ZERO`]
/// (a division by zero) or at least 2^31 (an index past a table of two): a fault that only the
/// combine of two partials meets, wherever the items are cut (another GPU's, or the host's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Trap { v: 0 },
    combine = |a, b| {
        let s = a.v.wrapping_add(b.v);
        let table = [0u32, 0u32];
        Trap { v: s + table[(s >> 30) as usize] + ((1 / (s ^ 0x1ead_beef)) >> 1) }
    }
)]
pub struct Trap {
    pub v: u32,
}

impl Trap {
    /// The partial sum whose combine divides by zero.
    pub const DIVIDES_BY_ZERO: u32 = 0x1ead_beef;
}
