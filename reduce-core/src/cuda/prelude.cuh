// reduce prelude: device helpers for the CUDA text that #[derive(Monoid)] generates.
// Pasted first into every kernel, before the monoid. Each helper computes exactly what the Rust
// operation computes in a release build: wrapping integer arithmetic, shift amounts masked to the
// type width, wrapping MIN / -1, saturating float -> int `as` (NaN -> 0).
// Names are r_<op>_<Rust type> (r_add_i32, r_f32_as_u8, ...); Rust types are spelled in C as
// u8 = unsigned char, i8 = signed char, u16 = unsigned short, i16 = short, u32 = unsigned int,
// i32 = int, u64 = unsigned long long, i64 = long long.
// No #include: this compiles under NVRTC without the CUDA headers.

// Results pinned to their type. NVRTC 13.0's optimizer miscompiles some chains of narrow
// (8- and 16-bit) integer operations, dropping the sign or zero extension of a wrapped result
// (`(-x) / 4849` with x = i16::MIN gave +6; found by fuzz-derive on an H200:
// docs/decisions/0037-nvrtc-miscompiles.md), and
// treats the absolute value of MIN (`x < 0 ? -x : x`) as non-negative in a following `%`. The
// helpers below make each narrow result an explicit PTX extension and each wrapped negation
// opaque, so the value is Rust's whatever the optimizer assumes. 32- and 64-bit results pass through, and
// on a host compiler (fuzz-derive's host backend) every helper is a plain copy.
__device__ __forceinline__ short r_pin(short x) {
    int y = x;
#if defined(__CUDA_ARCH__)
    asm("cvt.s32.s16 %0, %0;" : "+r"(y));
#endif
    return (short)y;
}
__device__ __forceinline__ signed char r_pin(signed char x) {
    int y = x;
#if defined(__CUDA_ARCH__)
    asm("cvt.s32.s8 %0, %0;" : "+r"(y));
#endif
    return (signed char)y;
}
__device__ __forceinline__ unsigned short r_pin(unsigned short x) {
    unsigned int y = x;
#if defined(__CUDA_ARCH__)
    asm("and.b32 %0, %0, 0xffff;" : "+r"(y));
#endif
    return (unsigned short)y;
}
__device__ __forceinline__ unsigned char r_pin(unsigned char x) {
    unsigned int y = x;
#if defined(__CUDA_ARCH__)
    asm("and.b32 %0, %0, 0xff;" : "+r"(y));
#endif
    return (unsigned char)y;
}
__device__ __forceinline__ int r_pin(int x) { return x; }
__device__ __forceinline__ unsigned int r_pin(unsigned int x) { return x; }
__device__ __forceinline__ long long r_pin(long long x) { return x; }
__device__ __forceinline__ unsigned long long r_pin(unsigned long long x) { return x; }
// An opaque copy: the optimizer knows nothing of the result (no range, no sign).
__device__ __forceinline__ short r_opaque(short x) { return r_pin(x); }
__device__ __forceinline__ signed char r_opaque(signed char x) { return r_pin(x); }
__device__ __forceinline__ int r_opaque(int x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+r"(x));
#endif
    return x;
}
__device__ __forceinline__ unsigned char r_opaque(unsigned char x) { return r_pin(x); }
__device__ __forceinline__ unsigned short r_opaque(unsigned short x) { return r_pin(x); }
__device__ __forceinline__ unsigned int r_opaque(unsigned int x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+r"(x));
#endif
    return x;
}
__device__ __forceinline__ unsigned long long r_opaque(unsigned long long x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+l"(x));
#endif
    return x;
}
__device__ __forceinline__ long long r_opaque(long long x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+l"(x));
#endif
    return x;
}

// Float comparisons, `is_nan` and the NaN test of float -> int `as`. NVVM (NVRTC 13.0) folds a
// comparison of two identical constant operations that it cannot evaluate (`inf - inf`,
// `0 * inf`, `0 / 0` of constants, also constants only after inlining) as if the operands were
// ordered and equal: `(c - c) != (c - c)` became false and `==` true, though c - c is NaN (found
// by fuzz-derive: `(-0.0 / -0.0) != (-0.0 / -0.0)`; docs/decisions/0037-nvrtc-miscompiles.md).
// One operand goes through an empty
// asm, which the optimizer cannot see through, so the comparison is made at run time on the
// value; the asm itself emits nothing. On a host compiler the helpers are the plain operators.
__device__ __forceinline__ float r_fhide(float x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+f"(x));
#endif
    return x;
}
__device__ __forceinline__ double r_fhide(double x) {
#if defined(__CUDA_ARCH__)
    asm("" : "+d"(x));
#endif
    return x;
}
#define R_FLOAT_CMP(F)                                                                          \
    __device__ __forceinline__ bool r_feq(F a, F b) { return r_fhide(a) == b; }                 \
    __device__ __forceinline__ bool r_fne(F a, F b) { return r_fhide(a) != b; }                 \
    __device__ __forceinline__ bool r_flt(F a, F b) { return r_fhide(a) < b; }                  \
    __device__ __forceinline__ bool r_fle(F a, F b) { return r_fhide(a) <= b; }                 \
    __device__ __forceinline__ bool r_fgt(F a, F b) { return r_fhide(a) > b; }                  \
    __device__ __forceinline__ bool r_fge(F a, F b) { return r_fhide(a) >= b; }                 \
    __device__ __forceinline__ bool r_isnan(F a) {                                              \
        const F h = r_fhide(a);                                                                 \
        return h != h;                                                                          \
    }
R_FLOAT_CMP(float)
R_FLOAT_CMP(double)
#undef R_FLOAT_CMP

// --- bit counts of 64-bit words: the device's instructions, or the host compiler's builtins
// (the derive's fuzzer and the emulator compile this prelude on the host) --------------------
__device__ __forceinline__ unsigned int r_popc64(unsigned long long x) {
#ifdef __CUDA_ARCH__
    return (unsigned int)__popcll(x);
#else
    return (unsigned int)__builtin_popcountll(x);
#endif
}
__device__ __forceinline__ unsigned int r_clz64(unsigned long long x) {
#ifdef __CUDA_ARCH__
    return (unsigned int)__clzll((long long)x);
#else
    return x == 0 ? 64u : (unsigned int)__builtin_clzll(x);
#endif
}
__device__ __forceinline__ unsigned int r_ctz64(unsigned long long x) {
#ifdef __CUDA_ARCH__
    return x == 0 ? 64u : (unsigned int)(__ffsll((long long)x) - 1);
#else
    return x == 0 ? 64u : (unsigned int)__builtin_ctzll(x);
#endif
}

// --- integers ----------------------------------------------------------------------------------
// T: the type; UT: the unsigned type of the same width; W: the unsigned type the arithmetic is
// done in (unsigned int for types up to 32 bits, where C would promote to a signed int);
// S: the Rust name; BITS: the width.
#define R_INT_HELPERS(T, UT, W, S, BITS)                                                          \
    __device__ __forceinline__ T r_add_##S(T a, T b) { return r_pin((T)((W)a + (W)b)); }               \
    __device__ __forceinline__ T r_sub_##S(T a, T b) { return r_pin((T)((W)a - (W)b)); }               \
    __device__ __forceinline__ T r_mul_##S(T a, T b) { return r_pin((T)((W)a * (W)b)); }               \
    __device__ __forceinline__ T r_neg_##S(T a) { return r_opaque((T)((W)0 - (W)a)); }                    \
    __device__ __forceinline__ T r_shl_##S(T a, unsigned int s) {                               \
        return r_pin((T)((W)a << (s & (BITS - 1))));                                                   \
    }                                                                                           \
    /* arithmetic on signed types: C++ promotes narrow values sign- or zero-extended */         \
    __device__ __forceinline__ T r_shr_##S(T a, unsigned int s) {                               \
        return r_pin((T)(r_pin(a) >> (s & (BITS - 1))));                                                      \
    }                                                                                           \
    __device__ __forceinline__ T r_rotl_##S(T a, unsigned int n) {                              \
        n &= BITS - 1;                                                                          \
        return (T)(UT)(((W)(UT)a << n) | ((W)(UT)a >> ((BITS - n) & (BITS - 1))));             \
    }                                                                                           \
    __device__ __forceinline__ T r_rotr_##S(T a, unsigned int n) {                              \
        n &= BITS - 1;                                                                          \
        return (T)(UT)(((W)(UT)a >> n) | ((W)(UT)a << ((BITS - n) & (BITS - 1))));             \
    }                                                                                           \
    __device__ __forceinline__ T r_min_##S(T a, T b) { return b < a ? b : a; }                  \
    __device__ __forceinline__ T r_max_##S(T a, T b) { return b < a ? a : b; }                  \
    /* count_ones, leading_zeros, trailing_zeros: of the BITS-bit pattern, as u32 */            \
    __device__ __forceinline__ unsigned int r_popc_##S(T a) { return r_popc64((UT)a); }         \
    __device__ __forceinline__ unsigned int r_clz_##S(T a) { return r_clz64((UT)a) - (64 - BITS); } \
    __device__ __forceinline__ unsigned int r_ctz_##S(T a) {                                    \
        return (UT)a == 0 ? BITS : r_ctz64((UT)a);                                              \
    }

// Division by zero is undefined here (Rust panics); MIN / -1 wraps to MIN, MIN % -1 is 0.
#define R_SIGNED_HELPERS(T, S)                                                                  \
    __device__ __forceinline__ T r_div_##S(T a, T b) {                                          \
        return b == (T)-1 ? r_neg_##S(a) : r_pin((T)(a / b));                                          \
    }                                                                                           \
    __device__ __forceinline__ T r_rem_##S(T a, T b) { return b == (T)-1 ? (T)0 : r_pin((T)(a % b)); } \
    __device__ __forceinline__ T r_abs_##S(T a) { return a < 0 ? r_neg_##S(a) : a; }

#define R_UNSIGNED_HELPERS(T, S)                                                                \
    __device__ __forceinline__ T r_div_##S(T a, T b) { return (T)(a / b); }                     \
    __device__ __forceinline__ T r_rem_##S(T a, T b) { return (T)(a % b); }

R_INT_HELPERS(unsigned char, unsigned char, unsigned int, u8, 8)
R_INT_HELPERS(signed char, unsigned char, unsigned int, i8, 8)
R_INT_HELPERS(unsigned short, unsigned short, unsigned int, u16, 16)
R_INT_HELPERS(short, unsigned short, unsigned int, i16, 16)
R_INT_HELPERS(unsigned int, unsigned int, unsigned int, u32, 32)
R_INT_HELPERS(int, unsigned int, unsigned int, i32, 32)
R_INT_HELPERS(unsigned long long, unsigned long long, unsigned long long, u64, 64)
R_INT_HELPERS(long long, unsigned long long, unsigned long long, i64, 64)
R_UNSIGNED_HELPERS(unsigned char, u8)
R_SIGNED_HELPERS(signed char, i8)
R_UNSIGNED_HELPERS(unsigned short, u16)
R_SIGNED_HELPERS(short, i16)
R_UNSIGNED_HELPERS(unsigned int, u32)
R_SIGNED_HELPERS(int, i32)
R_UNSIGNED_HELPERS(unsigned long long, u64)
R_SIGNED_HELPERS(long long, i64)

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

// --- layout checks ---------------------------------------------------------------------------
// offsetof without <cstddef>; NVRTC's front end (EDG) has no __builtin_offsetof but __INTADDR__.
#if defined(__CUDACC_RTC__)
#define r_offsetof(T, member) ((unsigned long long)__INTADDR__(&(((T*)0)->member)))
#else
#define r_offsetof(T, member) __builtin_offsetof(T, member)
#endif

// --- float bit patterns (infinities and NaN literals) -----------------------------------------
__device__ __forceinline__ float r_f32_from_bits(unsigned int b) { return __int_as_float((int)b); }
__device__ __forceinline__ double r_f64_from_bits(unsigned long long b) {
    return __longlong_as_double((long long)b);
}

// --- arrays ------------------------------------------------------------------------------------
// A Rust array `[T; N]` is an r_array<T, N>: a struct around a C array (same size, alignment and
// element offsets), so that it is a value: copied, returned, compared, like the Rust array.
template <typename T, unsigned long long N>
struct r_array {
    T v[N];
    __device__ __forceinline__ T& operator[](unsigned long long i) { return v[i]; }
    __device__ __forceinline__ const T& operator[](unsigned long long i) const { return v[i]; }
};

// [x; N] for a length known only when the text is generated.
template <typename T, unsigned long long N>
__device__ __forceinline__ r_array<T, N> r_fill(T x) {
    r_array<T, N> a;
    for (unsigned long long i = 0; i < N; ++i) a.v[i] = x;
    return a;
}

// Array ==, element by element (floats compare as IEEE values: NaN != NaN, -0.0 == 0.0).
template <typename T>
__device__ __forceinline__ bool r_eq(const T& a, const T& b) { return a == b; }
__device__ __forceinline__ bool r_eq(const float& a, const float& b) { return r_feq(a, b); }
__device__ __forceinline__ bool r_eq(const double& a, const double& b) { return r_feq(a, b); }
template <typename T, unsigned long long N>
__device__ __forceinline__ bool r_eq(const r_array<T, N>& a, const r_array<T, N>& b) {
    for (unsigned long long i = 0; i < N; ++i) {
        if (!r_eq(a.v[i], b.v[i])) return false;
    }
    return true;
}

// --- run-time indices --------------------------------------------------------------------------
// Rust panics on an index out of bounds. Translated code checks every run-time index with r_ix:
// an index out of bounds records a fault (the first one's index and the array's length) and
// reads or writes element 0 instead, never memory out of bounds. The runtime reads r_fault_info
// after the launch of a monoid that can fault, resets it, and returns an error.
// [0]: 1 once a fault happened; [1]: the first faulting index; [2]: the array's length.
__device__ unsigned long long r_fault_info[3];

__device__ __noinline__ void r_record_fault(unsigned long long i, unsigned long long n) {
    if (atomicCAS(&r_fault_info[0], 0ull, 1ull) == 0ull) {
        r_fault_info[1] = i;
        r_fault_info[2] = n;
    }
}

// A test harness may define R_ON_FAULT before the prelude to record faults its own way.
#ifndef R_ON_FAULT
#define R_ON_FAULT(i, n) r_record_fault(i, n)
#endif

__device__ __forceinline__ unsigned long long r_ix(unsigned long long i, unsigned long long n) {
    if (i < n) return i;
    R_ON_FAULT(i, n);
    return 0;
}

#undef R_INT_HELPERS
#undef R_SIGNED_HELPERS
#undef R_UNSIGNED_HELPERS
#undef R_FLOAT_AS_INT
#undef R_FLOAT_AS_INTS
