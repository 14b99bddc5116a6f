//! Monoids that replay, one per root cause, the translation bugs the differential fuzzer
//! (`fuzz-derive`) found on the GPU (seed 0x5eedf00d, 10^4 programs): shared by the CPU/NVRTC
//! and the GPU tests of `fuzz_regressions.rs`.
//!
//! Each is lawful: a max (or an or) beside `bad`, the or of flags of facts that hold in Rust for
//! every input (so `bad` is 0 in Rust whatever the inputs) and that the miscompiled
//! translation got wrong. A reduction on the GPU whose `bad` is not 0 replays the bug.

// `(c - c) != (c - c)` on purpose: comparisons of identical NaN-valued operations (NanCmp).
#![allow(clippy::eq_op)]

use crate::{Random, TestRng};
use reduce_core::Monoid;

/// Narrow (8- and 16-bit) wrapped results (p01145, p01272, p01333, p01590, p02456, ...). NVRTC
/// 13.0 dropped the sign extension of a wrapped narrow result: `i16::MIN.wrapping_neg()`
/// (`neg.s16`) compared as +32768 (`< 0` false: p01145), divided as +32768 (`!(-x / (x | 1))`
/// gave 0 instead of -2: p01272), and `i16::MIN >> n` shifted in zeros (p02456). The prelude
/// now pins every narrow result with an explicit PTX extension (`r_pin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = NarrowWrap { a: i16::MIN, b: i8::MIN, bad: 0 },
    combine = |l, r| {
        let mut bad = l.bad | r.bad;
        let n = r.a.wrapping_neg();
        // p01145: -x < 0 exactly when x > 0 or x is MIN
        if (n < 0) != (r.a > 0 || r.a == i16::MIN) {
            bad |= 1;
        }
        // p01272: !(-x / (x | 1)) through i32 (no wrapped narrow value on that side)
        let wide = ((n as i32) / ((r.a | 1) as i32)) as i16;
        if !(n / (r.a | 1)) != !wide {
            bad |= 2;
        }
        // p02456: an arithmetic right shift of a negative narrow value stays negative
        let s = (l.b.wrapping_neg() as u32) % 8;
        if (r.a < 0) != ((r.a >> s) < 0) || (r.b < 0) != ((r.b >> s) < 0) {
            bad |= 4;
        }
        // a wrapped narrow product, sum and remainder against the same through i32
        let p = r.b.wrapping_mul(l.b).wrapping_add(r.b);
        if p as i32 != (((r.b as i32) * (l.b as i32) + (r.b as i32)) as i8) as i32 {
            bad |= 8;
        }
        if (n % 7) as i32 != (n as i32) % 7 {
            bad |= 16;
        }
        NarrowWrap { a: l.a.max(r.a), b: l.b.max(r.b), bad }
    }
)]
pub struct NarrowWrap {
    pub a: i16,
    pub b: i8,
    pub bad: u32,
}

/// `abs` of MIN wraps to MIN, which stays negative (p01238: `x.abs() % y` with x = i32::MIN
/// gave 1 where Rust gives -1: the optimizer took the absolute value as non-negative and
/// computed an unsigned remainder). The prelude's `r_abs_*` hides the wrapped negation
/// (`r_opaque`). In a debug build `i32::MIN.abs()` panics: the CPU side uses other values.
/// `a` is a wrapping sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = AbsRem { a: 0, bad: 0 },
    combine = |l, r| {
        let m = r.a.abs() % ((l.a & 0xff) | 7);
        let bad = l.bad | r.bad | if (m < 0) != (r.a == i32::MIN) { 1 } else { 0 };
        AbsRem { a: l.a.wrapping_add(r.a), bad }
    }
)]
pub struct AbsRem {
    pub a: i32,
    pub bad: u32,
}

/// Comparisons of NaN-valued operations on constants (p08819: `(-0.0 / -0.0) != (-0.0 /
/// -0.0)` was false; p02012). NVVM folds a comparison of two identical constant operations
/// it cannot evaluate (`0 / 0`, `inf - inf`, `0 * inf`, also constants only after inlining)
/// as if the operands were ordered and equal. Float division is `__fdiv_rn`/`__ddiv_rn`, and
/// every float comparison and `is_nan` goes through the prelude's `r_f<op>`, which hides an
/// operand from the optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = NanCmp { x: f32::NEG_INFINITY, bad: 0 },
    combine = |l, r| {
        let inf = f32::INFINITY;
        let big = f64::MAX * 2.0;
        let mut bad = l.bad | r.bad;
        if !((-0.0f32 / -0.0f32) != (-0.0f32 / -0.0f32)) {
            bad |= 1;
        }
        if !(inf - inf).is_nan() || (inf - inf) == (inf - inf) {
            bad |= 2;
        }
        if (big * 0.0) == (big * 0.0) || (big - big) <= (big - big) {
            bad |= 4;
        }
        if ((inf - inf) as i32) != 0 || ((big - big) as u8) != 0 {
            bad |= 8;
        }
        NanCmp { x: l.x.max(r.x), bad }
    }
)]
pub struct NanCmp {
    pub x: f32,
    pub bad: u32,
}

impl Random for NarrowWrap {
    fn random(rng: &mut TestRng) -> Self {
        let v = rng.next_u32();
        let a = match v % 4 {
            0 => i16::MIN,
            1 => -1,
            _ => (v >> 8) as i16,
        };
        let b = match (v >> 2) % 4 {
            0 => i8::MIN,
            1 => i8::MAX,
            _ => (v >> 24) as i8,
        };
        NarrowWrap { a, b, bad: 0 }
    }
}

impl Random for NanCmp {
    fn random(rng: &mut TestRng) -> Self {
        NanCmp {
            x: (rng.next_u32() >> 8) as f32 - 8e6,
            bad: 0,
        }
    }
}
