// reduce prelude, math: reduce_core::math's elementary functions, operation for operation.
// After floats.cuh.

// --- elementary functions ----------------------------------------------------------------------
// reduce_core::math, operation for operation (IEEE + - * /, one fma in exp2, exact conversions,
// integer bit operations): the same bits as the CPU. f64: exp, exp2, ln, log2, log10 (fdlibm's
// algorithms), pow and powi (ln as a double-double), tanh, ln_1p, exp_m1; f32: exp in f32 (a
// degree-7 polynomial in fmas), the others through f64 rounded once.
// x * 2^n, rounded once (musl's scalbn).
__device__ __forceinline__ double r_scalbn(double x, int n) {
    double y = x;
    if (n > 1023) {
        y *= r_f64_from_bits(0x7fe0000000000000ull);
        n -= 1023;
        if (n > 1023) {
            y *= r_f64_from_bits(0x7fe0000000000000ull);
            n -= 1023;
            if (n > 1023) n = 1023;
        }
    } else if (n < -1022) {
        y *= r_f64_from_bits(0x0360000000000000ull);
        n += 1022 - 53;
        if (n < -1022) {
            y *= r_f64_from_bits(0x0360000000000000ull);
            n += 1022 - 53;
            if (n < -1022) n = -1022;
        }
    }
    return y * r_f64_from_bits((unsigned long long)(0x3ff + n) << 52);
}

// e^(hi - lo) - 1 for |hi - lo| <= ln2 / 2 (fdlibm's rational form; reduce_core::math's
// exp_reduced).
__device__ __forceinline__ double r_exp_reduced(double hi, double lo) {
    const double x = hi - lo, xx = x * x;
    const double c = x - xx * (r_f64_from_bits(0x3fc555555555553eull) +
                                xx * (r_f64_from_bits(0xbf66c16c16bebd93ull) +
                                      xx * (r_f64_from_bits(0x3f11566aaf25de2cull) +
                                            xx * (r_f64_from_bits(0xbebbbd41c5d26bf1ull) +
                                                  xx * r_f64_from_bits(0x3e66376972bea4d0ull)))));
    return x * c / (2.0 - c) - lo + hi;
}

// e^(hi - lo) * 2^k for |hi - lo| <= ln2 / 2.
__device__ __forceinline__ double r_exp_core(double hi, double lo, int k) {
    const double y = 1.0 + r_exp_reduced(hi, lo);
    return k == 0 ? y : r_scalbn(y, k);
}

__device__ __noinline__ double r_exp_f64(double x) {
    const unsigned long long bits = r_f64_bits(x);
    const int sign = (int)(bits >> 63);
    const unsigned int hx = (unsigned int)(bits >> 32) & 0x7fffffffu;
    if (hx >= 0x4086232bu) {
        if (r_isnan(x)) return x;
        if (x > r_f64_from_bits(0x40862e42fefa39efull)) return R_INF64;
        if (x < r_f64_from_bits(0xc0874910d52d3051ull)) return 0.0;
    }
    double hi, lo;
    int k;
    if (hx > 0x3fd62e42u) {
        const int kk = hx >= 0x3ff0a2b2u
                           ? (int)(r_f64_from_bits(0x3ff71547652b82feull) * x + (sign ? -0.5 : 0.5))
                           : 1 - sign - sign;
        hi = x - (double)kk * r_f64_from_bits(0x3fe62e42fee00000ull);
        lo = (double)kk * r_f64_from_bits(0x3dea39ef35793c76ull);
        k = kk;
    } else if (hx > 0x3e300000u) {
        hi = x;
        lo = 0.0;
        k = 0;
    } else {
        return 1.0 + x;
    }
    return r_exp_core(hi, lo, k);
}

__device__ __noinline__ double r_exp2_f64(double x) {
    if (r_isnan(x)) return x;
    if (x >= 1024.0) return R_INF64;
    if (x < -1075.0) return 0.0;
    const double k = r_floor64(x + 0.5);
    const double f = x - k;
    const double ln2 = r_f64_from_bits(0x3fe62e42fefa39efull);
    const double hi = f * ln2;
    const double lo = r_fma64(f, ln2, -hi) + f * r_f64_from_bits(0x3c7abc9e3b39803full);
    return r_exp_core(hi, -lo, (int)k);
}

// The logarithms' shared part (reduce_core::math's log_parts): special inputs set *special.
struct r_log_parts {
    double f, hfsq, sr;
    int k;
};
__device__ __forceinline__ bool r_log_split(double x, r_log_parts* p, double* special) {
    // The special inputs by comparisons made at run time (r_f*: see r_fhide).
    if (r_isnan(x) || r_feq(x, R_INF64)) {
        *special = x;
        return true;
    }
    if (r_flt(x, 0.0)) {
        *special = R_NAN64;
        return true;
    }
    if (r_feq(x, 0.0)) {
        *special = -R_INF64;
        return true;
    }
    if (r_feq(x, 1.0)) {
        *special = 0.0;
        return true;
    }
    unsigned long long ui = r_f64_bits(x);
    unsigned int hx = (unsigned int)(ui >> 32);
    int k = 0;
    if (hx < 0x00100000u) {
        k -= 54;
        ui = r_f64_bits(x * r_f64_from_bits(0x4350000000000000ull));
        hx = (unsigned int)(ui >> 32);
    }
    hx += 0x3ff00000u - 0x3fe6a09eu;
    k += (int)(hx >> 20) - 0x3ff;
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    const double m = r_f64_from_bits((unsigned long long)hx << 32 | (ui & 0xffffffffull));
    const double f = m - 1.0;
    const double hfsq = 0.5 * f * f;
    const double s = f / (2.0 + f);
    const double z = s * s, w = z * z;
    const double t1 = w * (r_f64_from_bits(0x3fd999999997fa04ull) +
                           w * (r_f64_from_bits(0x3fcc71c51d8e78afull) + w * r_f64_from_bits(0x3fc39a09d078c69full)));
    const double t2 =
        z * (r_f64_from_bits(0x3fe5555555555593ull) +
             w * (r_f64_from_bits(0x3fd2492494229359ull) +
                  w * (r_f64_from_bits(0x3fc7466496cb03deull) + w * r_f64_from_bits(0x3fc2f112df3e5244ull))));
    p->f = f;
    p->hfsq = hfsq;
    p->sr = s * (hfsq + (t2 + t1));
    p->k = k;
    return false;
}

__device__ __noinline__ double r_ln_f64(double x) {
    r_log_parts p;
    double special;
    if (r_log_split(x, &p, &special)) return special;
    const double dk = (double)p.k;
    return p.sr + dk * r_f64_from_bits(0x3dea39ef35793c76ull) - p.hfsq + p.f +
           dk * r_f64_from_bits(0x3fe62e42fee00000ull);
}

// log(1 + f) as hi + lo, hi with its low 32 bits cleared.
__device__ __forceinline__ void r_log1p_split(const r_log_parts& p, double* hi, double* lo) {
    *hi = r_f64_from_bits(r_f64_bits(p.f - p.hfsq) & 0xffffffff00000000ull);
    *lo = p.f - *hi - p.hfsq + p.sr;
}

__device__ __noinline__ double r_log2_f64(double x) {
    r_log_parts p;
    double special, hi, lo;
    if (r_log_split(x, &p, &special)) return special;
    r_log1p_split(p, &hi, &lo);
    const double ivln2hi = r_f64_from_bits(0x3ff7154765200000ull), ivln2lo = r_f64_from_bits(0x3de705fc2eefa200ull);
    const double val_hi = hi * ivln2hi;
    double val_lo = (lo + hi) * ivln2lo + lo * ivln2hi;
    const double y = (double)p.k;
    const double w = y + val_hi;
    val_lo += (y - w) + val_hi;
    return val_lo + w;
}

__device__ __noinline__ double r_log10_f64(double x) {
    r_log_parts p;
    double special, hi, lo;
    if (r_log_split(x, &p, &special)) return special;
    r_log1p_split(p, &hi, &lo);
    const double val_hi = hi * r_f64_from_bits(0x3fdbcb7b15200000ull);
    const double dk = (double)p.k;
    const double y = dk * r_f64_from_bits(0x3fd34413509f6000ull);
    double val_lo = dk * r_f64_from_bits(0x3d59fef311f12b36ull) + (lo + hi) * r_f64_from_bits(0x3dbb9438ca9aadd5ull) +
                    lo * r_f64_from_bits(0x3fdbcb7b15200000ull);
    const double w = y + val_hi;
    val_lo += (y - w) + val_hi;
    return val_lo + w;
}

#define R_F32_VIA_F64(NAME)                                                                     \
    __device__ __forceinline__ float r_##NAME##_f32(float x) {                                  \
        return r_isnan(x) ? x : (float)r_##NAME##_f64((double)x);                               \
    }
R_F32_VIA_F64(exp2)
R_F32_VIA_F64(ln)
R_F32_VIA_F64(log2)
R_F32_VIA_F64(log10)
#undef R_F32_VIA_F64

// e^x for f32 in f32 arithmetic (reduce_core::math's exp_f32): x = k ln2 + r in two fused
// steps, e^r by a polynomial of degree 6 in fmas, 2^k as two normal factors.
__device__ __forceinline__ float r_exp_f32(float x) {
    // Below -104, e^x rounds to 0; above 89, to infinity: clamped there, every k stays within
    // [-150, 128]. NaN is given back at the end. No branch: the items of a thread's fold
    // interleave.
    const float xc = r_fmin32(r_fmax32(x, -104.0f), 89.0f);
    // k = x/ln2 rounded to nearest by the fma's rounding (1.5 * 2^23 leaves the integer in the
    // low bits): no conversion instructions.
    const float t = r_fma32(xc, r_f32_from_bits(0x3fb8aa3bu), 12582912.0f);
    const float kf = t - 12582912.0f;
    float r = r_fma32(-kf, r_f32_from_bits(0x3f317218u), xc);
    r = r_fma32(-kf, r_f32_from_bits(0xb102e308u), r);
    float q = r_f32_from_bits(0x3ab51224u);  // reduce_core::math's EXP_F, a minimax fit
    q = r_fma32(q, r, r_f32_from_bits(0x3c091ceau));
    q = r_fma32(q, r, r_f32_from_bits(0x3d2aac79u));
    q = r_fma32(q, r, r_f32_from_bits(0x3e2aaa49u));
    q = r_fma32(q, r, r_f32_from_bits(0x3efffffeu));
    const float u = r_fma32(r * r, q, r);
    // 2^k = 2^(k - j) * 2^j, j = floor(k / 2), both normal: the fma rounds 1 + u and scales it
    // exactly; the product rounds again only into subnormals, 0 or infinity. t's bits are
    // c + k, c a multiple of 2^10: h = bits / 2 = c/2 + j, and c/2 << 23 wraps to 0.
    const unsigned int bits = r_f32_bits(t), h = bits >> 1;
    const float s1 = r_f32_from_bits(((bits - h) << 23) + 0x3f800000u);
    const float s2 = r_f32_from_bits((h << 23) + 0x3f800000u);
    const float y = r_fma32(s1, u, s1) * s2;
    return r_isnan(x) ? x : y;
}

// Whether y is an odd integer (every f64 from 2^53 up is even).
__device__ __forceinline__ bool r_is_odd_integer(double y) {
    return r_abs64(y) < 9007199254740992.0 && r_floor64(y) == y && ((long long)y & 1) == 1;
}

// a + b as *hi + *lo, exactly.
__device__ __forceinline__ void r_two_sum(double a, double b, double* hi, double* lo) {
    const double s = a + b, bb = s - a;
    *hi = s;
    *lo = (a - (s - bb)) + (b - bb);
}

// ln x as *hi + *lo for a finite x > 0 (reduce_core::math's ln_dd).
__device__ __noinline__ void r_ln_dd(double x, double* hi, double* lo) {
    unsigned long long ui = r_f64_bits(x);
    int k = 0;
    if ((ui >> 52) == 0) {
        ui = r_f64_bits(x * r_f64_from_bits(0x4350000000000000ull));
        k -= 54;
    }
    unsigned int hx = (unsigned int)(ui >> 32);
    hx += 0x3ff00000u - 0x3fe6a09eu;
    k += (int)(hx >> 20) - 0x3ff;
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    const double m = r_f64_from_bits((unsigned long long)hx << 32 | (ui & 0xffffffffull));
    const double f = m - 1.0;
    double d, d_lo;
    r_two_sum(m, 1.0, &d, &d_lo);
    const double s = f / d;
    const double s_lo = (r_fma64(-s, d, f) - s * d_lo) / d;
    const double t = s * s;
    const double t_lo = r_fma64(s, s, -t) + 2.0 * s * s_lo;
    const double c = s * t;
    const double c_lo = r_fma64(s, t, -c) + s * t_lo + s_lo * t;
    const double two_thirds = r_f64_from_bits(0x3fe5555555555555ull);
    const double u = c * two_thirds;
    const double u_lo = r_fma64(c, two_thirds, -u) + c * r_f64_from_bits(0x3c85555555555555ull) + c_lo * two_thirds;
    double q = 1.0 / 27.0;
    q = r_fma64(q, t, 1.0 / 25.0);
    q = r_fma64(q, t, 1.0 / 23.0);
    q = r_fma64(q, t, 1.0 / 21.0);
    q = r_fma64(q, t, 1.0 / 19.0);
    q = r_fma64(q, t, 1.0 / 17.0);
    q = r_fma64(q, t, 1.0 / 15.0);
    q = r_fma64(q, t, 1.0 / 13.0);
    q = r_fma64(q, t, 1.0 / 11.0);
    q = r_fma64(q, t, 1.0 / 9.0);
    q = r_fma64(q, t, 1.0 / 7.0);
    q = r_fma64(q, t, 1.0 / 5.0);
    const double rest = 2.0 * c * t * q;
    double h, l;
    r_two_sum(2.0 * s, u, &h, &l);
    l = l + (2.0 * s_lo + u_lo + rest);
    const double kf = (double)k;
    const double ln2 = r_f64_from_bits(0x3fe62e42fefa39efull);
    const double kh = kf * ln2;
    const double kl = r_fma64(kf, ln2, -kh) + kf * r_f64_from_bits(0x3c7abc9e3b39803full);
    double h2, l2;
    r_two_sum(kh, h, &h2, &l2);
    l2 = l2 + (kl + l);
    *hi = h2 + l2;
    *lo = l2 - (*hi - h2);
}

// x^y (f64; reduce_core::math's pow).
__device__ __noinline__ double r_powf_f64(double x, double y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (r_isnan(x)) return x;
    if (r_isnan(y)) return R_NAN64;
    const bool odd = r_is_odd_integer(y);
    const bool integer = r_floor64(y) == y;
    if (x == 0.0) {
        if (y < 0.0) return odd ? 1.0 / x : R_INF64;
        return odd ? x : 0.0;
    }
    if (r_abs64(y) == R_INF64) {
        const double ax = r_abs64(x);
        if (ax == 1.0) return 1.0;
        return (ax < 1.0) == (y < 0.0) ? R_INF64 : 0.0;
    }
    if (r_abs64(x) == R_INF64) {
        const double magnitude = y < 0.0 ? 0.0 : R_INF64;
        return x < 0.0 && odd ? -magnitude : magnitude;
    }
    if (x < 0.0 && !integer) return R_NAN64;
    double lh, ll;
    r_ln_dd(r_abs64(x), &lh, &ll);
    const double z = y * lh;
    const double z_lo = r_fma64(y, lh, -z) + y * ll;
    double r;
    if (z > 710.0) {
        r = R_INF64;
    } else if (z < -746.0) {
        r = 0.0;
    } else {
        const int k = (int)(r_f64_from_bits(0x3ff71547652b82feull) * z + (z < 0.0 ? -0.5 : 0.5));
        r = r_exp_core(z - (double)k * r_f64_from_bits(0x3fe62e42fee00000ull),
                       (double)k * r_f64_from_bits(0x3dea39ef35793c76ull) - z_lo, k);
    }
    return x < 0.0 && odd ? -r : r;
}
__device__ __forceinline__ double r_powi_f64(double x, int n) { return r_powf_f64(x, (double)n); }
__device__ __forceinline__ float r_powf_f32(float x, float y) {
    return r_isnan(x) && y != 0.0f ? x : (float)r_powf_f64((double)x, (double)y);
}
__device__ __forceinline__ float r_powi_f32(float x, int n) {
    return r_isnan(x) && n != 0 ? x : (float)r_powf_f64((double)x, (double)n);
}


// e^x as *hi + *lo for |x| <= 50 (reduce_core::math's exp_dd).
__device__ __forceinline__ void r_exp_dd(double x, double* hi, double* lo) {
    const unsigned long long bits = r_f64_bits(x);
    const int sign = (int)(bits >> 63);
    const unsigned int hx = (unsigned int)(bits >> 32) & 0x7fffffffu;
    double h = x, l = 0.0;
    int k = 0;
    if (hx > 0x3fd62e42u) {
        k = (int)(r_f64_from_bits(0x3ff71547652b82feull) * x + (sign ? -0.5 : 0.5));
        h = x - (double)k * r_f64_from_bits(0x3fe62e42fee00000ull);
        l = (double)k * r_f64_from_bits(0x3dea39ef35793c76ull);
    }
    const double v = r_exp_reduced(h, l);
    const double y = 1.0 + v;
    const double y_lo = v - (y - 1.0);
    const double scale = r_f64_from_bits((unsigned long long)(0x3ff + k) << 52);
    *hi = y * scale;
    *lo = y_lo * scale;
}

// The hyperbolic tangent (f64; reduce_core::math's tanh).
__device__ __noinline__ double r_tanh_f64(double x) {
    if (r_isnan(x)) return x;
    const double a = r_abs64(x);
    double t;
    if (a < r_f64_from_bits(0x3e30000000000000ull)) {
        t = a;
    } else if (a < 0.55) {
        const double z = a * a;
        double p = r_f64_from_bits(0x3e48e25ff9327e2cull);
    p = r_fma64(p, z, r_f64_from_bits(0xbe5eb3229047434cull));
    p = r_fma64(p, z, r_f64_from_bits(0x3e72efe8db3aff1full));
    p = r_fma64(p, z, r_f64_from_bits(0xbe875cde6563fed9ull));
    p = r_fma64(p, z, r_f64_from_bits(0x3e9cd299de4ae6bbull));
    p = r_fma64(p, z, r_f64_from_bits(0xbeb1c77df95c1c0dull));
    p = r_fma64(p, z, r_f64_from_bits(0x3ec5ef2da474e5b7ull));
    p = r_fma64(p, z, r_f64_from_bits(0xbedb0f72d3ee24e9ull));
    p = r_fma64(p, z, r_f64_from_bits(0x3ef0b132d39a6050ull));
    p = r_fma64(p, z, r_f64_from_bits(0xbf0497d8eea25259ull));
    p = r_fma64(p, z, r_f64_from_bits(0x3f1967e18afcafadull));
    p = r_fma64(p, z, r_f64_from_bits(0xbf2f57d7734d1664ull));
    p = r_fma64(p, z, r_f64_from_bits(0x3f43558248036744ull));
    p = r_fma64(p, z, r_f64_from_bits(0xbf57da36452b75e3ull));
    p = r_fma64(p, z, r_f64_from_bits(0x3f6d6d3d0e157de0ull));
    p = r_fma64(p, z, r_f64_from_bits(0xbf8226e355e6c23dull));
    p = r_fma64(p, z, r_f64_from_bits(0x3f9664f4882c10faull));
    p = r_fma64(p, z, r_f64_from_bits(0xbfaba1ba1ba1ba1cull));
    p = r_fma64(p, z, r_f64_from_bits(0x3fc1111111111111ull));
    p = r_fma64(p, z, r_f64_from_bits(0xbfd5555555555555ull));
        t = r_fma64(a * z, p, a);
    } else if (a < 22.0) {
        double eh, el, dh, dl, sh, sl;
        r_exp_dd(2.0 * a, &eh, &el);
        r_two_sum(eh, 1.0, &dh, &dl);
        dl = dl + el;
        const double wh = 2.0 / dh;
        const double wl = (r_fma64(-wh, dh, 2.0) - wh * dl) / dh;
        r_two_sum(1.0, -wh, &sh, &sl);
        t = sh + (sl - wl);
    } else {
        t = 1.0;
    }
    return (r_f64_bits(x) >> 63) != 0 ? -t : t;
}
__device__ __forceinline__ float r_tanh_f32(float x) { return r_isnan(x) ? x : (float)r_tanh_f64((double)x); }

// ln(1 + x) (f64; reduce_core::math's ln_1p): 1 + x as a double-double, ln of its high part as
// a double-double plus the low part's first-order term.
__device__ __noinline__ double r_ln_1p_f64(double x) {
    if (r_isnan(x) || r_feq(x, 0.0) || r_feq(x, R_INF64)) return x;
    if (r_fle(x, -1.0)) return r_feq(x, -1.0) ? -R_INF64 : R_NAN64;
    double h, l, lh, ll;
    r_two_sum(1.0, x, &h, &l);
    r_ln_dd(h, &lh, &ll);
    return lh + (ll + l / h);
}
__device__ __forceinline__ float r_ln_1p_f32(float x) { return r_isnan(x) ? x : (float)r_ln_1p_f64((double)x); }

// e^x - 1 (f64; reduce_core::math's exp_m1): exp's reduced form where |x| <= ln2/2, else e^x as
// a double-double with 1 taken off exactly; e^x - 1 rounded where |x| > 40.
__device__ __noinline__ double r_exp_m1_f64(double x) {
    if (r_isnan(x) || r_feq(x, 0.0)) return x;
    if (r_fgt(r_abs64(x), 40.0)) return r_exp_f64(x) - 1.0;
    if (((unsigned int)(r_f64_bits(x) >> 32) & 0x7fffffffu) <= 0x3fd62e42u) return r_exp_reduced(x, 0.0);
    double h, l, sh, sl;
    r_exp_dd(x, &h, &l);
    r_two_sum(h, -1.0, &sh, &sl);
    return sh + (sl + l);
}
__device__ __forceinline__ float r_exp_m1_f32(float x) { return r_isnan(x) ? x : (float)r_exp_m1_f64((double)x); }
#undef R_INF64
#undef R_NAN64
#undef R_INF32
#undef R_NAN32
