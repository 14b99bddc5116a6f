//! Elementary functions that give the same bits on the CPU and the GPU.
//!
//! Rust's `f32::exp` calls the platform's libm and CUDA's `expf` is another implementation: their
//! bits differ, and a monoid that called them would break the promise that the CPU backend, the
//! references and the GPU agree bit for bit. The routines here are written once in Rust and
//! once, operation for operation, in the CUDA prelude (`r_exp_f64`, ... in
//! `reduce-core/src/cuda/prelude/math.cuh`). They use only IEEE-754 `+ - * /`, fused multiply-adds
//! written as such (`mul_add` here, `fma`/`fmaf` there), exact conversions and integer bit
//! operations, and the kernels are compiled with `--fmad=false`, so both sides round every step
//! alike.
//!
//! `#[derive(Monoid)]` rewrites the calls it translates (`x.exp()`, `x.ln()`, ... inside
//! `combine`, `identity`, lifts and `#[device_fn]`s) to these routines on both sides, through
//! [`Math`]. Rust code outside the derive keeps `std`'s functions.
//!
//! - `f64`: [`exp`], [`exp2`], [`ln`], [`log2`], [`log10`] after FreeBSD's msun / musl (table-free
//!   fdlibm algorithms, documented there as under 1 ulp); [`pow`] (and `powi`) through ln as a
//!   double-double; checked against correctly rounded results.
//! - `f64` [`tanh`]: a series below 0.55, above it `1 - 2/(e^2x + 1)` in double-doubles.
//! - `f64` [`ln_1p`] and [`exp_m1`]: `1 + x` and `e^x` as double-doubles through the parts of
//!   `pow` and `tanh` (and exp's reduced form for small `x`), accurate where `x` is small.
//! - `f32`: `exp` in f32 arithmetic (a degree-7 polynomial in fused multiply-adds, `mul_add` on
//!   both sides: within 1 ulp for every f32 input, checked exhaustively; cheap on a GPU, where
//!   f64 arithmetic is slow); `exp2`, `ln`, `log2`, `log10`, `powf`, `powi`, `tanh`, `ln_1p`,
//!   `exp_m1` computed in
//!   `f64` and rounded once: the `f64` results carry errors far below an `f32` ulp,
//!   so the `f32` results are within 1 ulp (almost always correctly rounded). NaN inputs come back unchanged; results that are
//!   NaN for other inputs are `f32::NAN` / `f64::NAN`.
//! - Special values follow C99 Annex F: `exp(-inf) = 0`, `exp(+inf) = +inf`, `ln(0) = -inf`,
//!   `ln(x < 0) = NaN`, `ln(+inf) = +inf`, `pow` as `powf` in Annex F.9.4.4.

/// The elementary functions of this module as methods of `f32` and `f64`, for the code that
/// `#[derive(Monoid)]` generates (`Math::exp(x)` wherever the closure wrote `x.exp()`).
pub trait Math: Copy {
    /// e^x.
    fn exp(self) -> Self;
    /// 2^x.
    fn exp2(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// The base-2 logarithm.
    fn log2(self) -> Self;
    /// The base-10 logarithm.
    fn log10(self) -> Self;
    /// self^y (C's `pow`, with C99 Annex F's special values).
    fn powf(self, y: Self) -> Self;
    /// self^n, with the integer exponent exact.
    fn powi(self, n: i32) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// ln(1 + self), accurate where self is small.
    fn ln_1p(self) -> Self;
    /// e^self - 1, accurate where self is small.
    fn exp_m1(self) -> Self;
}

impl Math for f64 {
    fn exp(self) -> f64 {
        exp(self)
    }
    fn exp2(self) -> f64 {
        exp2(self)
    }
    fn ln(self) -> f64 {
        ln(self)
    }
    fn log2(self) -> f64 {
        log2(self)
    }
    fn log10(self) -> f64 {
        log10(self)
    }
    fn powf(self, y: f64) -> f64 {
        pow(self, y)
    }
    fn powi(self, n: i32) -> f64 {
        pow(self, n as f64)
    }
    fn tanh(self) -> f64 {
        tanh(self)
    }
    fn ln_1p(self) -> f64 {
        ln_1p(self)
    }
    fn exp_m1(self) -> f64 {
        exp_m1(self)
    }
}

/// An `f32` function through its `f64` form: NaN unchanged, else rounded once.
fn via_f64(x: f32, f: fn(f64) -> f64) -> f32 {
    if x.is_nan() {
        x
    } else {
        f(x as f64) as f32
    }
}

impl Math for f32 {
    fn exp(self) -> f32 {
        exp_f32(self)
    }
    fn exp2(self) -> f32 {
        via_f64(self, exp2)
    }
    fn ln(self) -> f32 {
        via_f64(self, ln)
    }
    fn log2(self) -> f32 {
        via_f64(self, log2)
    }
    fn log10(self) -> f32 {
        via_f64(self, log10)
    }
    // Through f64 rounded once; a NaN base comes back unchanged (pow(NaN, 0) is 1).
    fn powf(self, y: f32) -> f32 {
        if self.is_nan() && y != 0.0 {
            self
        } else {
            pow(self as f64, y as f64) as f32
        }
    }
    fn powi(self, n: i32) -> f32 {
        if self.is_nan() && n != 0 {
            self
        } else {
            pow(self as f64, n as f64) as f32
        }
    }
    fn tanh(self) -> f32 {
        via_f64(self, tanh)
    }
    fn ln_1p(self) -> f32 {
        via_f64(self, ln_1p)
    }
    fn exp_m1(self) -> f32 {
        via_f64(self, exp_m1)
    }
}

const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
const INV_LN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
const P1: f64 = f64::from_bits(0x3fc5_5555_5555_553e);
const P2: f64 = f64::from_bits(0xbf66_c16c_16be_bd93);
const P3: f64 = f64::from_bits(0x3f11_566a_af25_de2c);
const P4: f64 = f64::from_bits(0xbebb_bd41_c5d2_6bf1);
const P5: f64 = f64::from_bits(0x3e66_3769_72be_a4d0);
/// ln 2 rounded, and the rest of it (exp2's argument as a double-double).
const LN2: f64 = f64::from_bits(0x3fe6_2e42_fefa_39ef);
const LN2_TAIL: f64 = f64::from_bits(0x3c7a_bc9e_3b39_803f);

/// x · 2^n, rounded once (musl's scalbn: the scaling in steps keeps the last one exact or the
/// only rounding, also for subnormal results).
fn scalbn(x: f64, mut n: i32) -> f64 {
    let mut y = x;
    if n > 1023 {
        y *= f64::from_bits(0x7fe0_0000_0000_0000); // 2^1023
        n -= 1023;
        if n > 1023 {
            y *= f64::from_bits(0x7fe0_0000_0000_0000);
            n -= 1023;
            if n > 1023 {
                n = 1023;
            }
        }
    } else if n < -1022 {
        // 2^-1022 · 2^53: the final n stays below -53, so no double rounding.
        y *= f64::from_bits(0x0360_0000_0000_0000);
        n += 1022 - 53;
        if n < -1022 {
            y *= f64::from_bits(0x0360_0000_0000_0000);
            n += 1022 - 53;
            if n < -1022 {
                n = -1022;
            }
        }
    }
    y * f64::from_bits(((0x3ff + n) as u64) << 52)
}

/// e^(hi - lo) - 1 for |hi - lo| ≤ ln2/2: fdlibm's rational form (`r_exp_reduced` in the
/// prelude).
fn exp_reduced(hi: f64, lo: f64) -> f64 {
    let x = hi - lo;
    let xx = x * x;
    let c = x - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
    x * c / (2.0 - c) - lo + hi
}

/// e^(hi - lo) · 2^k for |hi - lo| ≤ ln2 / 2 (the core of exp and exp2).
fn exp_core(hi: f64, lo: f64, k: i32) -> f64 {
    let y = 1.0 + exp_reduced(hi, lo);
    if k == 0 {
        y
    } else {
        scalbn(y, k)
    }
}

/// e^x (f64; fdlibm's algorithm).
pub fn exp(x: f64) -> f64 {
    let bits = x.to_bits();
    let sign = (bits >> 63) as usize;
    let hx = (bits >> 32) as u32 & 0x7fff_ffff;
    if hx >= 0x4086_232b {
        // |x| >= 708.39...
        if x.is_nan() {
            return x;
        }
        if x > f64::from_bits(0x4086_2e42_fefa_39ef) {
            // > 709.78...: past f64::MAX
            return f64::INFINITY;
        }
        if x < f64::from_bits(0xc087_4910_d52d_3051) {
            // < -745.13...: below half the least subnormal
            return 0.0;
        }
    }
    let (hi, lo, k);
    if hx > 0x3fd6_2e42 {
        // |x| > ln2 / 2
        let kk = if hx >= 0x3ff0_a2b2 {
            // |x| >= 1.5 ln2
            (INV_LN2 * x + [0.5, -0.5][sign]) as i32
        } else {
            1 - sign as i32 - sign as i32
        };
        hi = x - kk as f64 * LN2_HI; // exact
        lo = kk as f64 * LN2_LO;
        k = kk;
    } else if hx > 0x3e30_0000 {
        // |x| > 2^-28
        hi = x;
        lo = 0.0;
        k = 0;
    } else {
        return 1.0 + x;
    }
    exp_core(hi, lo, k)
}

/// 2^x (f64): x = k + f with |f| ≤ 1/2, and f·ln2 as a double-double into exp's core.
pub fn exp2(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 1024.0 {
        return f64::INFINITY;
    }
    if x < -1075.0 {
        return 0.0;
    }
    let k = (x + 0.5).floor();
    let f = x - k;
    let hi = f * LN2;
    let lo = f.mul_add(LN2, -hi) + f * LN2_TAIL;
    exp_core(hi, -lo, k as i32)
}

/// ln 2 rounded to f32, and the rest of it; 1/ln 2.
const LN2_HI_F: f32 = f32::from_bits(0x3f31_7218);
const LN2_LO_F: f32 = f32::from_bits(0xb102_e308);
const INV_LN2_F: f32 = f32::from_bits(0x3fb8_aa3b);
/// 1.5 · 2^23: a float in [2^23, 2^24) has unit spacing, so x + ROUND_F rounds x to an integer.
const ROUND_F: f32 = 12_582_912.0;
/// e^r ≈ 1 + r + r² (c2 + c3 r + c4 r² + c5 r³ + c6 r⁴) on |r| ≤ ln2/2: a minimax fit for the
/// relative error (3.8 · 10^-9 with the coefficients rounded to f32; Taylor's 1/n! would need
/// degree 7).
const EXP_F: [f32; 5] = [
    f32::from_bits(0x3eff_fffe),
    f32::from_bits(0x3e2a_aa49),
    f32::from_bits(0x3d2a_ac79),
    f32::from_bits(0x3c09_1cea),
    f32::from_bits(0x3ab5_1224),
];

/// e^x for f32 in f32 arithmetic and without branches, so that a reduction calling it per item
/// stays cheap on a GPU (f64 arithmetic is slow there, and a branch per item keeps the compiler
/// from interleaving the items' work): x = k ln2 + r with |r| ≤ ln2/2 (two fused steps), e^r by
/// a polynomial of degree 6 in fused multiply-adds, 2^k as two normal factors. Within
/// 1 ulp of e^x rounded once from f64 for every f32 input (`exp_f32_everywhere`).
fn exp_f32(x: f32) -> f32 {
    // Below -104, e^x rounds to 0 (k = -150, p < 1); above 89, to infinity (k = 128): clamped
    // there, every k stays within [-150, 128]. NaN is given back at the end.
    let xc = x.clamp(-104.0, 89.0);
    // k = x/ln2 rounded to nearest by the fma's own rounding: adding 1.5 · 2^23 leaves the
    // integer in the low bits (no conversion instructions, which are slow on the GPU).
    let t = xc.mul_add(INV_LN2_F, ROUND_F);
    let kf = t - ROUND_F;
    let r = (-kf).mul_add(LN2_HI_F, xc);
    let r = (-kf).mul_add(LN2_LO_F, r);
    let mut q = EXP_F[4];
    for c in [EXP_F[3], EXP_F[2], EXP_F[1], EXP_F[0]] {
        q = q.mul_add(r, c);
    }
    let u = (r * r).mul_add(q, r);
    // 2^k = 2^(k - j) · 2^j with j = floor(k/2): both factors normal. (1 + u) · 2^(k - j) in one
    // fma is the f32 rounding of 1 + u, scaled exactly; the product with 2^j rounds once more
    // only where the result is subnormal, 0 or infinite. t's bits are c + k with c = ROUND_F's
    // bits, a multiple of 2^10, so h = bits / 2 = c/2 + j and c/2 · 2^23 wraps to 0:
    // the exponent fields are (h << 23) and ((bits - h) << 23), plus 127's.
    let bits = t.to_bits();
    let h = bits >> 1;
    let s1 = f32::from_bits((bits - h).wrapping_shl(23).wrapping_add(0x3f80_0000));
    let s2 = f32::from_bits(h.wrapping_shl(23).wrapping_add(0x3f80_0000));
    let y = s1.mul_add(u, s1) * s2;
    if x.is_nan() {
        x
    } else {
        y
    }
}

const LG1: f64 = f64::from_bits(0x3fe5_5555_5555_5593);
const LG2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04);
const LG3: f64 = f64::from_bits(0x3fd2_4924_9422_9359);
const LG4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af);
const LG5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de);
const LG6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f);
const LG7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244);

/// The logarithms' shared part: x = 2^k · (1 + f) with 1 + f in [√2/2, √2), and
/// (f, hfsq = f²/2, s·(hfsq + R)) where log(1 + f) = f - hfsq + s·(hfsq + R). `Err` is the result
/// for the special inputs (0, negative, inf, NaN, 1).
fn log_parts(x: f64) -> Result<(f64, f64, f64, i32), f64> {
    if x.is_nan() {
        return Err(x);
    }
    if x < 0.0 {
        return Err(f64::NAN);
    }
    if x == 0.0 {
        return Err(f64::NEG_INFINITY);
    }
    if x == f64::INFINITY {
        return Err(x);
    }
    if x == 1.0 {
        return Err(0.0);
    }
    let mut ui = x.to_bits();
    let mut hx = (ui >> 32) as u32;
    let mut k = 0i32;
    if hx < 0x0010_0000 {
        // subnormal: scale up
        k -= 54;
        ui = (x * f64::from_bits(0x4350_0000_0000_0000)).to_bits(); // 2^54
        hx = (ui >> 32) as u32;
    }
    hx = hx.wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    k += (hx >> 20) as i32 - 0x3ff;
    hx = (hx & 0x000f_ffff) + 0x3fe6_a09e;
    let m = f64::from_bits((hx as u64) << 32 | (ui & 0xffff_ffff));
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    Ok((f, hfsq, s * (hfsq + (t2 + t1)), k))
}

/// The natural logarithm (f64; fdlibm's algorithm).
pub fn ln(x: f64) -> f64 {
    match log_parts(x) {
        Err(special) => special,
        Ok((f, hfsq, sr, k)) => {
            let dk = k as f64;
            sr + dk * LN2_LO - hfsq + f + dk * LN2_HI
        }
    }
}

/// log(1 + f) as hi + lo, hi with its low 32 bits cleared (exact products with the split
/// constants below).
fn log1p_split(f: f64, hfsq: f64, sr: f64) -> (f64, f64) {
    let hi = f64::from_bits((f - hfsq).to_bits() & 0xffff_ffff_0000_0000);
    (hi, f - hi - hfsq + sr)
}

/// The base-2 logarithm (f64; musl's log2).
pub fn log2(x: f64) -> f64 {
    const IVLN2HI: f64 = f64::from_bits(0x3ff7_1547_6520_0000);
    const IVLN2LO: f64 = f64::from_bits(0x3de7_05fc_2eef_a200);
    match log_parts(x) {
        Err(special) => special,
        Ok((f, hfsq, sr, k)) => {
            let (hi, lo) = log1p_split(f, hfsq, sr);
            let val_hi = hi * IVLN2HI;
            let mut val_lo = (lo + hi) * IVLN2LO + lo * IVLN2HI;
            let y = k as f64;
            let w = y + val_hi;
            val_lo += (y - w) + val_hi;
            val_lo + w
        }
    }
}

/// The base-10 logarithm (f64; musl's log10).
pub fn log10(x: f64) -> f64 {
    const IVLN10HI: f64 = f64::from_bits(0x3fdb_cb7b_1520_0000);
    const IVLN10LO: f64 = f64::from_bits(0x3dbb_9438_ca9a_add5);
    const LOG10_2HI: f64 = f64::from_bits(0x3fd3_4413_509f_6000);
    const LOG10_2LO: f64 = f64::from_bits(0x3d59_fef3_11f1_2b36);
    match log_parts(x) {
        Err(special) => special,
        Ok((f, hfsq, sr, k)) => {
            let (hi, lo) = log1p_split(f, hfsq, sr);
            let val_hi = hi * IVLN10HI;
            let dk = k as f64;
            let y = dk * LOG10_2HI;
            let mut val_lo = dk * LOG10_2LO + (lo + hi) * IVLN10LO + lo * IVLN10HI;
            let w = y + val_hi;
            val_lo += (y - w) + val_hi;
            val_lo + w
        }
    }
}

/// a + b as hi + lo, exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// 2/3 as hi + lo.
const TWO_THIRDS: f64 = f64::from_bits(0x3fe5_5555_5555_5555);
const TWO_THIRDS_LO: f64 = f64::from_bits(0x3c85_5555_5555_5555);

/// ln x as hi + lo for a finite x > 0, to about 2^-64 relative: x = 2^k · m with m in
/// [√2/2, √2), ln m = 2 atanh(s) with s = (m - 1)/(m + 1), its terms 2s and (2/3)s³ in
/// double-double (fused multiply-adds), the rest of the series, 2s⁵ Σ s^2i/(2i + 5), in f64.
fn ln_dd(x: f64) -> (f64, f64) {
    let mut ui = x.to_bits();
    let mut k = 0i32;
    if ui >> 52 == 0 {
        // subnormal: scale up
        ui = (x * f64::from_bits(0x4350_0000_0000_0000)).to_bits();
        k -= 54;
    }
    let mut hx = (ui >> 32) as u32;
    hx = hx.wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    k += (hx >> 20) as i32 - 0x3ff;
    hx = (hx & 0x000f_ffff) + 0x3fe6_a09e;
    let m = f64::from_bits((hx as u64) << 32 | (ui & 0xffff_ffff));
    let f = m - 1.0; // exact
    let (d, d_lo) = two_sum(m, 1.0);
    let s = f / d;
    let s_lo = ((-s).mul_add(d, f) - s * d_lo) / d;
    let t = s * s;
    let t_lo = s.mul_add(s, -t) + 2.0 * s * s_lo;
    let c = s * t;
    let c_lo = s.mul_add(t, -c) + s * t_lo + s_lo * t;
    let u = c * TWO_THIRDS;
    let u_lo = c.mul_add(TWO_THIRDS, -u) + c * TWO_THIRDS_LO + c_lo * TWO_THIRDS;
    let mut q: f64 = 1.0 / 27.0;
    for inv in [
        1.0 / 25.0,
        1.0 / 23.0,
        1.0 / 21.0,
        1.0 / 19.0,
        1.0 / 17.0,
        1.0 / 15.0,
        1.0 / 13.0,
        1.0 / 11.0,
        1.0 / 9.0,
        1.0 / 7.0,
        1.0 / 5.0,
    ] {
        q = q.mul_add(t, inv);
    }
    let rest = 2.0 * c * t * q;
    let (h, l) = two_sum(2.0 * s, u);
    let l = l + (2.0 * s_lo + u_lo + rest);
    let kf = k as f64;
    let kh = kf * LN2;
    let kl = kf.mul_add(LN2, -kh) + kf * LN2_TAIL;
    let (h2, l2) = two_sum(kh, h);
    let l2 = l2 + (kl + l);
    let hi = h2 + l2;
    (hi, l2 - (hi - h2))
}

/// x^y (f64; C99 Annex F's special cases, else e^(y ln|x|) with ln|x| and the product as
/// double-doubles, into exp's core).
pub fn pow(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() {
        return x;
    }
    if y.is_nan() {
        return f64::NAN;
    }
    let odd = is_odd_integer(y);
    let integer = y.floor() == y;
    if x == 0.0 {
        return match (y < 0.0, odd) {
            (true, true) => 1.0 / x,
            (true, false) => f64::INFINITY,
            (false, true) => x,
            (false, false) => 0.0,
        };
    }
    if y.is_infinite() {
        let ax = x.abs();
        return if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y < 0.0) {
            f64::INFINITY
        } else {
            0.0
        };
    }
    if x.is_infinite() {
        let magnitude = if y < 0.0 { 0.0 } else { f64::INFINITY };
        return if x < 0.0 && odd {
            -magnitude
        } else {
            magnitude
        };
    }
    if x < 0.0 && !integer {
        return f64::NAN;
    }
    let (lh, ll) = ln_dd(x.abs());
    let z = y * lh;
    let z_lo = y.mul_add(lh, -z) + y * ll;
    let r = if z > 710.0 {
        f64::INFINITY
    } else if z < -746.0 {
        0.0
    } else {
        let sign = (z < 0.0) as usize;
        let k = (INV_LN2 * z + [0.5, -0.5][sign]) as i32;
        exp_core(z - k as f64 * LN2_HI, k as f64 * LN2_LO - z_lo, k)
    };
    if x < 0.0 && odd {
        -r
    } else {
        r
    }
}

/// e^x as hi + lo for |x| ≤ 50: exp's reduction and core, the core's last addition kept exact
/// (the core's own error, about 2^-54 relative, stays).
fn exp_dd(x: f64) -> (f64, f64) {
    let bits = x.to_bits();
    let sign = (bits >> 63) as usize;
    let hx = (bits >> 32) as u32 & 0x7fff_ffff;
    let (hi, lo, k) = if hx > 0x3fd6_2e42 {
        let kk = (INV_LN2 * x + [0.5, -0.5][sign]) as i32;
        (x - kk as f64 * LN2_HI, kk as f64 * LN2_LO, kk)
    } else {
        (x, 0.0, 0)
    };
    let v = exp_reduced(hi, lo);
    let y = 1.0 + v;
    let y_lo = v - (y - 1.0);
    let scale = f64::from_bits(((0x3ff + k) as u64) << 52);
    (y * scale, y_lo * scale)
}

/// tanh's Taylor coefficients of x^3, x^5, …, x^41 (mpmath), for |x| < 0.55.
const TANH_SERIES: [f64; 20] = [
    f64::from_bits(0xbfd5555555555555),
    f64::from_bits(0x3fc1111111111111),
    f64::from_bits(0xbfaba1ba1ba1ba1c),
    f64::from_bits(0x3f9664f4882c10fa),
    f64::from_bits(0xbf8226e355e6c23d),
    f64::from_bits(0x3f6d6d3d0e157de0),
    f64::from_bits(0xbf57da36452b75e3),
    f64::from_bits(0x3f43558248036744),
    f64::from_bits(0xbf2f57d7734d1664),
    f64::from_bits(0x3f1967e18afcafad),
    f64::from_bits(0xbf0497d8eea25259),
    f64::from_bits(0x3ef0b132d39a6050),
    f64::from_bits(0xbedb0f72d3ee24e9),
    f64::from_bits(0x3ec5ef2da474e5b7),
    f64::from_bits(0xbeb1c77df95c1c0d),
    f64::from_bits(0x3e9cd299de4ae6bb),
    f64::from_bits(0xbe875cde6563fed9),
    f64::from_bits(0x3e72efe8db3aff1f),
    f64::from_bits(0xbe5eb3229047434c),
    f64::from_bits(0x3e48e25ff9327e2c),
];

/// The hyperbolic tangent (f64): x for |x| < 2^-28; x + x³ Σ c_i x^2i below 0.55;
/// 1 - 2 / (e^2|x| + 1) with e^2|x| and the quotient as double-doubles below 22; 1 above; the
/// sign of x.
pub fn tanh(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let t = if a < f64::from_bits(0x3e30_0000_0000_0000) {
        a
    } else if a < 0.55 {
        let z = a * a;
        let mut p = TANH_SERIES[19];
        for &c in TANH_SERIES[..19].iter().rev() {
            p = p.mul_add(z, c);
        }
        (a * z).mul_add(p, a)
    } else if a < 22.0 {
        let (eh, el) = exp_dd(2.0 * a);
        let (dh, dl) = two_sum(eh, 1.0);
        let dl = dl + el;
        let wh = 2.0 / dh;
        let wl = ((-wh).mul_add(dh, 2.0) - wh * dl) / dh;
        let (sh, sl) = two_sum(1.0, -wh);
        sh + (sl - wl)
    } else {
        1.0
    };
    if x.is_sign_negative() {
        -t
    } else {
        t
    }
}

/// ln(1 + x) (f64): 1 + x as a double-double (exact), ln of its high part as a double-double,
/// plus the low part's first-order term (its second is below 2^-106 of the result); x itself
/// for ±0, NaN and +inf.
pub fn ln_1p(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 || x == f64::INFINITY {
        return x;
    }
    if x <= -1.0 {
        return if x == -1.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    let (h, l) = two_sum(1.0, x);
    let (lh, ll) = ln_dd(h);
    lh + (ll + l / h)
}

/// e^x - 1 (f64): exp's reduced form (fdlibm's e^r - 1, no cancellation) where |x| ≤ ln2/2;
/// else e^x as a double-double with 1 taken off exactly; e^x - 1 rounded where |x| > 40 (the
/// 1 or the e^x is below half an ulp of the other there). x itself for ±0 and NaN.
pub fn exp_m1(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        return x;
    }
    if x.abs() > 40.0 {
        return exp(x) - 1.0;
    }
    if (x.to_bits() >> 32) as u32 & 0x7fff_ffff <= 0x3fd6_2e42 {
        return exp_reduced(x, 0.0);
    }
    let (h, l) = exp_dd(x);
    let (s, e) = two_sum(h, -1.0);
    s + (e + l)
}

/// Whether `y` is an odd integer (every f64 from 2^53 up is even).
fn is_odd_integer(y: f64) -> bool {
    y.abs() < 9_007_199_254_740_992.0 && y.floor() == y && (y as i64) & 1 == 1
}

#[cfg(test)]
mod tests;
