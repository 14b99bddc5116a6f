// reduce prelude, floats: float -> int `as`, float bit patterns, the exact float methods
// (floor, round, copysign, clamp, the class tests, ...). After integers.cuh.

// --- float -> int `as`: truncate toward zero, saturate, NaN -> 0 -------------------------------
// LO and HI are powers of two (exact in float and double): x <= LO gives MIN, x >= HI gives MAX,
// anything strictly between truncates to a representable value.
#define R_FLOAT_AS_INT(F, FS, T, S, LO, HI, MIN, MAX)                                            \
    __device__ __forceinline__ T r_##FS##_as_##S(F x) {                                         \
        x = r_fhide(x);                                                                         \
        return x != x ? (T)0 : x <= (F)(LO) ? (T)(MIN) : x >= (F)(HI) ? (T)(MAX) : (T)x;        \
    }
#define R_FLOAT_AS_INTS(F, FS)                                                                   \
    R_FLOAT_AS_INT(F, FS, unsigned char, u8, 0.0, 0x1p8, 0, 255)                                \
    R_FLOAT_AS_INT(F, FS, signed char, i8, -0x1p7, 0x1p7, -128, 127)                            \
    R_FLOAT_AS_INT(F, FS, unsigned short, u16, 0.0, 0x1p16, 0, 65535)                           \
    R_FLOAT_AS_INT(F, FS, short, i16, -0x1p15, 0x1p15, -32768, 32767)                           \
    R_FLOAT_AS_INT(F, FS, unsigned int, u32, 0.0, 0x1p32, 0u, 4294967295u)                      \
    R_FLOAT_AS_INT(F, FS, int, i32, -0x1p31, 0x1p31, -2147483647 - 1, 2147483647)               \
    R_FLOAT_AS_INT(F, FS, unsigned long long, u64, 0.0, 0x1p64, 0ull, 18446744073709551615ull)  \
    R_FLOAT_AS_INT(F, FS, long long, i64, -0x1p63, 0x1p63, -9223372036854775807ll - 1,          \
                   9223372036854775807ll)
R_FLOAT_AS_INTS(float, f32)
R_FLOAT_AS_INTS(double, f64)


#undef R_FLOAT_AS_INT
#undef R_FLOAT_AS_INTS

// --- float bit patterns (infinities and NaN literals) -----------------------------------------
__device__ __forceinline__ float r_f32_from_bits(unsigned int b) { return __int_as_float((int)b); }
__device__ __forceinline__ double r_f64_from_bits(unsigned long long b) {
    return __longlong_as_double((long long)b);
}

__device__ __forceinline__ unsigned long long r_f64_bits(double x) {
#if defined(__CUDA_ARCH__)
    return (unsigned long long)__double_as_longlong(x);
#else
    unsigned long long b;
    __builtin_memcpy(&b, &x, 8);
    return b;
#endif
}
__device__ __forceinline__ unsigned int r_f32_bits(float x) {
#if defined(__CUDA_ARCH__)
    return (unsigned int)__float_as_int(x);
#else
    unsigned int b;
    __builtin_memcpy(&b, &x, 4);
    return b;
#endif
}
// The device's math functions, or the host compiler's builtins (the derive's fuzzer and the
// emulator compile this prelude on the host). fma: a * b + c rounded once (Rust's mul_add);
// fmax, fmin: the larger, the smaller, the other one where one is NaN.
#if defined(__CUDA_ARCH__)
#define R_MATH(DEVICE, HOST) DEVICE
#else
#define R_MATH(DEVICE, HOST) HOST
#endif
__device__ __forceinline__ double r_floor64(double x) { return R_MATH(floor, __builtin_floor)(x); }
__device__ __forceinline__ double r_fma64(double a, double b, double c) {
    return R_MATH(fma, __builtin_fma)(a, b, c);
}
__device__ __forceinline__ float r_fma32(float a, float b, float c) {
    return R_MATH(fmaf, __builtin_fmaf)(a, b, c);
}
__device__ __forceinline__ float r_fmax32(float a, float b) { return R_MATH(fmaxf, __builtin_fmaxf)(a, b); }
__device__ __forceinline__ float r_fmin32(float a, float b) { return R_MATH(fminf, __builtin_fminf)(a, b); }

#if !defined(__CUDA_ARCH__)
// The host's division (what `__fdiv_rn` / `__ddiv_rn` compute on the device).
template <typename F>
__device__ __forceinline__ F r_host_div(F a, F b) {
    return a / b;
}
#endif
// The f32 and f64 methods of Rust that are exact in IEEE arithmetic: floor, ceil, trunc, round
// (halves away from zero), round_ties_even, fract (x - trunc(x)), copysign, signum (NaN for NaN,
// else 1 with x's sign), clamp (bounds in order: the translation takes only literals), to_bits,
// and the class tests on the bit pattern (no float comparison for NVVM to fold); rem_euclid
// and div_euclid as Rust's std computes them (fmod, IEEE division, trunc). SUF: the C
// functions' suffix (f or none); DIV: the device's IEEE division; U, SIGN: the bits' type and
// the sign bit; NAN: Rust's NaN.
#define R_FLOAT_METHODS(F, S, SUF, DIV, U, SIGN, INF, NAN)                                           \
    __device__ __forceinline__ F r_floor_##S(F x) { return R_MATH(floor##SUF, __builtin_floor##SUF)(x); } \
    __device__ __forceinline__ F r_ceil_##S(F x) { return R_MATH(ceil##SUF, __builtin_ceil##SUF)(x); } \
    __device__ __forceinline__ F r_trunc_##S(F x) { return R_MATH(trunc##SUF, __builtin_trunc##SUF)(x); } \
    __device__ __forceinline__ F r_round_##S(F x) { return R_MATH(round##SUF, __builtin_round##SUF)(x); } \
    __device__ __forceinline__ F r_round_ties_even_##S(F x) {                                   \
        return R_MATH(rint##SUF, __builtin_rint##SUF)(x);                                       \
    }                                                                                           \
    __device__ __forceinline__ F r_fract_##S(F x) { return x - r_trunc_##S(x); }               \
    __device__ __forceinline__ F r_copysign_##S(F x, F y) {                                     \
        return R_MATH(copysign##SUF, __builtin_copysign##SUF)(x, y);                            \
    }                                                                                           \
    __device__ __forceinline__ F r_signum_##S(F x) {                                            \
        return r_isnan(x) ? r_##S##_from_bits(NAN) : r_copysign_##S((F)1, x);                   \
    }                                                                                           \
    __device__ __forceinline__ F r_clamp_##S(F x, F lo, F hi) {                                 \
        return r_flt(x, lo) ? lo : r_fgt(x, hi) ? hi : x;                                       \
    }                                                                                           \
    __device__ __forceinline__ U r_to_bits_##S(F x) { return r_##S##_bits(x); }                 \
    __device__ __forceinline__ bool r_is_finite_##S(F x) { return (r_##S##_bits(x) & ~SIGN) < INF; } \
    __device__ __forceinline__ bool r_is_infinite_##S(F x) { return (r_##S##_bits(x) & ~SIGN) == INF; } \
    __device__ __forceinline__ bool r_is_sign_negative_##S(F x) { return (r_##S##_bits(x) & SIGN) != 0; } \
    __device__ __forceinline__ bool r_is_sign_positive_##S(F x) { return (r_##S##_bits(x) & SIGN) == 0; } \
    __device__ __forceinline__ F r_fmod_##S(F x, F y) { return R_MATH(fmod##SUF, __builtin_fmod##SUF)(x, y); } \
    __device__ __forceinline__ F r_rem_euclid_##S(F x, F y) {                                   \
        const F r = r_fmod_##S(x, y);                                                           \
        return r_flt(r, (F)0) ? r + R_MATH(fabs##SUF, __builtin_fabs##SUF)(y) : r;              \
    }                                                                                           \
    __device__ __forceinline__ F r_div_euclid_##S(F x, F y) {                                   \
        const F q = r_trunc_##S(R_MATH(DIV, r_host_div)(x, y));                                 \
        if (r_flt(r_fmod_##S(x, y), (F)0)) return r_fgt(y, (F)0) ? q - (F)1 : q + (F)1;         \
        return q;                                                                               \
    }
R_FLOAT_METHODS(float, f32, f, __fdiv_rn, unsigned int, 0x80000000u, 0x7f800000u, 0x7fc00000u)
R_FLOAT_METHODS(double, f64, , __ddiv_rn, unsigned long long, 0x8000000000000000ull, 0x7ff0000000000000ull,
                0x7ff8000000000000ull)
#undef R_FLOAT_METHODS
#undef R_MATH
__device__ __forceinline__ double r_abs64(double x) { return r_f64_from_bits(r_f64_bits(x) & 0x7fffffffffffffffull); }
#define R_INF64 r_f64_from_bits(0x7ff0000000000000ull)
#define R_NAN64 r_f64_from_bits(0x7ff8000000000000ull)
#define R_INF32 r_f32_from_bits(0x7f800000u)
#define R_NAN32 r_f32_from_bits(0x7fc00000u)
