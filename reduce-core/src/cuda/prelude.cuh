// reduce prelude: device helpers for the CUDA text that #[derive(Monoid)] generates.
// Pasted first into every kernel, before the monoid. Each helper computes exactly what the Rust
// operation computes in a release build: wrapping integer arithmetic, shift amounts masked to the
// type width, saturating float -> int `as` (NaN -> 0); where Rust panics (an index out of bounds,
// an integer division by zero, the operators' MIN / -1) a recorded fault (see "faults").
// Names are r_<op>_<Rust type> (r_add_i32, r_f32_as_u8, ...); Rust types are spelled in C as
// u8 = unsigned char, i8 = signed char, u16 = unsigned short, i16 = short, u32 = unsigned int,
// i32 = int, u64 = unsigned long long, i64 = long long.
// No #include: this compiles under NVRTC without the CUDA headers.

// Results pinned to their type. NVRTC 13.0's optimizer miscompiles some chains of narrow
// (8- and 16-bit) integer operations, dropping the sign or zero extension of a wrapped result
// (`(-x) / 4849` with x = i16::MIN gave +6; found by fuzz-derive on an H200:
// docs/decisions/0037-nvrtc-miscompiles.md), and
// treats the absolute value of MIN (`x < 0 ? -x : x`) as non-negative in a following `%`, and
// takes the wrong `match` arm on the maximum of two 8-bit values (`u8::max(x >> 1, 1)`). The
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

// --- faults: where Rust panics -----------------------------------------------------------------
// Rust panics on an index out of bounds and on an integer division by zero (and on MIN / -1 and
// MIN % -1 by the operators). Translated code records a fault instead: an index out of bounds
// (r_ix) reads or writes element 0, a division gives 0 (MIN / -1 its wrapped value), never
// memory out of bounds or undefined behaviour. The runtime reads r_fault_info after the launch of
// a monoid that can fault, resets it, and returns an error.
// [0]: 0 until a fault, then its kind (R_FAULT_*); for an index, [1] the first faulting index
// and [2] the array's length.
#define R_FAULT_INDEX 1ull
#define R_FAULT_DIV_ZERO 2ull
#define R_FAULT_DIV_OVERFLOW 3ull
__device__ unsigned long long r_fault_info[3];

__device__ __noinline__ void r_record_fault(unsigned long long kind, unsigned long long i,
                                            unsigned long long n) {
    if (atomicCAS(&r_fault_info[0], 0ull, kind) == 0ull) {
        r_fault_info[1] = i;
        r_fault_info[2] = n;
    }
}

// A test harness may define R_ON_FAULT before the prelude to record faults its own way.
#ifndef R_ON_FAULT
#define R_ON_FAULT(kind, i, n) r_record_fault(kind, i, n)
#endif

__device__ __forceinline__ unsigned long long r_ix(unsigned long long i, unsigned long long n) {
    if (i < n) return i;
    R_ON_FAULT(R_FAULT_INDEX, i, n);
    return 0;
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
    __device__ __forceinline__ T r_min_##S(T a, T b) { return r_pin(b < a ? b : a); }           \
    __device__ __forceinline__ T r_max_##S(T a, T b) { return r_pin(b < a ? a : b); }           \
    /* count_ones, leading_zeros, trailing_zeros: of the BITS-bit pattern, as u32 */            \
    __device__ __forceinline__ unsigned int r_popc_##S(T a) { return r_popc64((UT)a); }         \
    __device__ __forceinline__ unsigned int r_clz_##S(T a) { return r_clz64((UT)a) - (64 - BITS); } \
    __device__ __forceinline__ unsigned int r_ctz_##S(T a) {                                    \
        return (UT)a == 0 ? BITS : r_ctz64((UT)a);                                              \
    }                                                                                           \
    /* pow: by squaring, wrapping (Rust's release semantics) */                                 \
    __device__ __forceinline__ T r_pow_##S(T a, unsigned int e) {                               \
        W acc = 1, b = (W)a;                                                                    \
        for (; e != 0; e >>= 1) {                                                               \
            if (e & 1u) acc = acc * b;                                                          \
            b = b * b;                                                                          \
        }                                                                                       \
        return r_pin((T)acc);                                                                   \
    }

// Division (see "faults"): by zero a fault and 0; by -1 the wrapped negation, MIN / -1 and
// MIN % -1 a fault by the operators (r_div, r_rem), Rust's wrapped values by wrapping_div and
// wrapping_rem (r_wdiv, r_wrem). MIN is the one a != 0 with -a == a.
#define R_SIGNED_HELPERS(T, S)                                                                  \
    __device__ __forceinline__ T r_wdiv_##S(T a, T b) {                                         \
        if (b == 0) {                                                                           \
            R_ON_FAULT(R_FAULT_DIV_ZERO, 0, 0);                                                 \
            return 0;                                                                           \
        }                                                                                       \
        return b == (T)-1 ? r_neg_##S(a) : r_pin((T)(a / b));                                   \
    }                                                                                           \
    __device__ __forceinline__ T r_div_##S(T a, T b) {                                          \
        if (b == (T)-1 && a != 0 && r_neg_##S(a) == a) R_ON_FAULT(R_FAULT_DIV_OVERFLOW, 0, 0);  \
        return r_wdiv_##S(a, b);                                                                \
    }                                                                                           \
    __device__ __forceinline__ T r_wrem_##S(T a, T b) {                                         \
        if (b == 0) {                                                                           \
            R_ON_FAULT(R_FAULT_DIV_ZERO, 0, 0);                                                 \
            return 0;                                                                           \
        }                                                                                       \
        return b == (T)-1 ? (T)0 : r_pin((T)(a % b));                                          \
    }                                                                                           \
    __device__ __forceinline__ T r_rem_##S(T a, T b) {                                          \
        if (b == (T)-1 && a != 0 && r_neg_##S(a) == a) R_ON_FAULT(R_FAULT_DIV_OVERFLOW, 0, 0);  \
        return r_wrem_##S(a, b);                                                                \
    }                                                                                           \
    __device__ __forceinline__ T r_abs_##S(T a) { return a < 0 ? r_neg_##S(a) : a; }

#define R_UNSIGNED_HELPERS(T, S)                                                                \
    __device__ __forceinline__ T r_div_##S(T a, T b) {                                          \
        if (b == 0) {                                                                           \
            R_ON_FAULT(R_FAULT_DIV_ZERO, 0, 0);                                                 \
            return 0;                                                                           \
        }                                                                                       \
        return (T)(a / b);                                                                      \
    }                                                                                           \
    __device__ __forceinline__ T r_rem_##S(T a, T b) {                                          \
        if (b == 0) {                                                                           \
            R_ON_FAULT(R_FAULT_DIV_ZERO, 0, 0);                                                 \
            return 0;                                                                           \
        }                                                                                       \
        return (T)(a % b);                                                                      \
    }                                                                                           \
    __device__ __forceinline__ T r_wdiv_##S(T a, T b) { return r_div_##S(a, b); }              \
    __device__ __forceinline__ T r_wrem_##S(T a, T b) { return r_rem_##S(a, b); }

// saturating_add, saturating_sub, saturating_mul: the result clamped to [MIN, MAX] of T (UT: the
// unsigned type of the same width, in which the wrapped results and magnitudes are computed).
#define R_SATURATING_UNSIGNED(T, S)                                                             \
    __device__ __forceinline__ T r_sat_add_##S(T a, T b) {                                      \
        const T r = (T)(a + b);                                                                 \
        return r < a ? (T)~(T)0 : r;                                                            \
    }                                                                                           \
    __device__ __forceinline__ T r_sat_sub_##S(T a, T b) { return a < b ? (T)0 : (T)(a - b); }  \
    __device__ __forceinline__ T r_sat_mul_##S(T a, T b) {                                      \
        const T max = (T)~(T)0;                                                                 \
        return b != 0 && a > (T)(max / b) ? max : (T)(a * b);                                   \
    }
#define R_SATURATING_SIGNED(T, UT, S)                                                           \
    __device__ __forceinline__ T r_sat_add_##S(T a, T b) {                                      \
        const T r = (T)(UT)((UT)a + (UT)b);                                                     \
        const T max = (T)((UT)~(UT)0 >> 1), min = (T)(-max - 1);                                \
        return ((a ^ r) & (b ^ r)) < 0 ? (a < 0 ? min : max) : r;                               \
    }                                                                                           \
    __device__ __forceinline__ T r_sat_sub_##S(T a, T b) {                                      \
        const T r = (T)(UT)((UT)a - (UT)b);                                                     \
        const T max = (T)((UT)~(UT)0 >> 1), min = (T)(-max - 1);                                \
        return ((a ^ b) & (a ^ r)) < 0 ? (a < 0 ? min : max) : r;                               \
    }                                                                                           \
    __device__ __forceinline__ T r_sat_mul_##S(T a, T b) {                                      \
        const T max = (T)((UT)~(UT)0 >> 1), min = (T)(-max - 1);                                \
        if (a == 0 || b == 0) return (T)0;                                                      \
        const bool neg = (a < 0) != (b < 0);                                                    \
        const UT ma = a < 0 ? (UT)((UT)0 - (UT)a) : (UT)a, mb = b < 0 ? (UT)((UT)0 - (UT)b) : (UT)b; \
        const UT limit = neg ? (UT)((UT)max + 1) : (UT)max;                                     \
        if (ma > (UT)(limit / mb)) return neg ? min : max;                                      \
        return (T)(UT)((UT)a * (UT)b);                                                          \
    }

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
R_SATURATING_UNSIGNED(unsigned char, u8)
R_SATURATING_SIGNED(signed char, unsigned char, i8)
R_SATURATING_UNSIGNED(unsigned short, u16)
R_SATURATING_SIGNED(short, unsigned short, i16)
R_SATURATING_UNSIGNED(unsigned int, u32)
R_SATURATING_SIGNED(int, unsigned int, i32)
R_SATURATING_UNSIGNED(unsigned long long, u64)
R_SATURATING_SIGNED(long long, unsigned long long, i64)

// --- bit order of 64-bit words: reverse_bits and swap_bytes of any width are these, shifted ---
__device__ __forceinline__ unsigned long long r_bswap64(unsigned long long x) {
    x = ((x & 0x00ff00ff00ff00ffull) << 8) | ((x >> 8) & 0x00ff00ff00ff00ffull);
    x = ((x & 0x0000ffff0000ffffull) << 16) | ((x >> 16) & 0x0000ffff0000ffffull);
    return (x << 32) | (x >> 32);
}
__device__ __forceinline__ unsigned long long r_brev64(unsigned long long x) {
#ifdef __CUDA_ARCH__
    return __brevll(x);
#else
    x = ((x & 0x5555555555555555ull) << 1) | ((x >> 1) & 0x5555555555555555ull);
    x = ((x & 0x3333333333333333ull) << 2) | ((x >> 2) & 0x3333333333333333ull);
    x = ((x & 0x0f0f0f0f0f0f0f0full) << 4) | ((x >> 4) & 0x0f0f0f0f0f0f0f0full);
    return r_bswap64(x);
#endif
}

// abs_diff (the unsigned type of the same width), count_zeros, leading_ones, trailing_ones,
// reverse_bits, swap_bytes, clamp (bounds in order: the translation takes only literals) and
// saturating_pow (Rust's: checked_pow, else MIN for a negative base to an odd power, else MAX)
// for any integer type; T, UT and BITS as in R_INT_HELPERS, SIGNED 1 for the signed types.
#define R_INT_METHODS(T, UT, S, BITS, SIGNED)                                                   \
    __device__ __forceinline__ UT r_abs_diff_##S(T a, T b) {                                    \
        return r_pin(a < b ? (UT)((UT)b - (UT)a) : (UT)((UT)a - (UT)b));                        \
    }                                                                                           \
    __device__ __forceinline__ unsigned int r_count_zeros_##S(T a) { return BITS - r_popc_##S(a); } \
    __device__ __forceinline__ unsigned int r_leading_ones_##S(T a) { return r_clz_##S((T)~a); } \
    __device__ __forceinline__ unsigned int r_trailing_ones_##S(T a) { return r_ctz_##S((T)~a); } \
    __device__ __forceinline__ T r_reverse_bits_##S(T a) {                                      \
        return r_pin((T)(UT)(r_brev64((UT)a) >> (64 - BITS)));                                  \
    }                                                                                           \
    __device__ __forceinline__ T r_swap_bytes_##S(T a) {                                        \
        return r_pin((T)(UT)(r_bswap64((UT)a) >> (64 - BITS)));                                 \
    }                                                                                           \
    __device__ __forceinline__ T r_clamp_##S(T a, T lo, T hi) { return r_pin(a < lo ? lo : a > hi ? hi : a); } \
    __device__ __forceinline__ T r_saturating_pow_##S(T a, unsigned int e) {                    \
        const UT max = (UT)((UT)~(UT)0 >> SIGNED);                                              \
        const bool neg = a < 0 && (e & 1u);                                                     \
        const UT limit = neg ? (UT)(max + 1) : max;                                             \
        UT base = a < 0 ? (UT)((UT)0 - (UT)a) : (UT)a, acc = 1;                                 \
        bool base_over = false, over = false;                                                   \
        for (; e != 0; e >>= 1) {                                                               \
            if (e & 1u) {                                                                       \
                if (base_over || (base != 0 && acc > (UT)(limit / base))) over = true;          \
                else acc = (UT)(acc * base);                                                    \
            }                                                                                   \
            if (e > 1u && !base_over) {                                                         \
                if (base != 0 && base > (UT)(limit / base)) base_over = true;                   \
                else base = (UT)(base * base);                                                  \
            }                                                                                   \
        }                                                                                       \
        if (over) return neg ? (T)(UT)(max + 1) : (T)max;                                       \
        return r_pin(neg ? (T)(UT)((UT)0 - acc) : (T)acc);                                      \
    }
// unsigned_abs, signum, saturating_neg, saturating_abs, is_positive, is_negative, rem_euclid and
// div_euclid of the signed types (Euclid's through the operators' checked r_rem / r_div, so a
// divisor of 0 and MIN by -1 are faults, as Rust panics).
#define R_SIGNED_METHODS(T, UT, S)                                                              \
    __device__ __forceinline__ UT r_unsigned_abs_##S(T a) {                                     \
        return r_pin(a < 0 ? (UT)((UT)0 - (UT)a) : (UT)a);                                      \
    }                                                                                           \
    __device__ __forceinline__ T r_signum_##S(T a) { return r_pin((T)((a > 0) - (a < 0))); }    \
    __device__ __forceinline__ T r_saturating_neg_##S(T a) {                                    \
        const T max = (T)((UT)~(UT)0 >> 1);                                                     \
        return a == (T)(-max - 1) ? max : r_neg_##S(a);                                         \
    }                                                                                           \
    __device__ __forceinline__ T r_saturating_abs_##S(T a) {                                    \
        const T max = (T)((UT)~(UT)0 >> 1);                                                     \
        return a == (T)(-max - 1) ? max : r_abs_##S(a);                                         \
    }                                                                                           \
    __device__ __forceinline__ bool r_is_positive_##S(T a) { return a > 0; }                    \
    __device__ __forceinline__ bool r_is_negative_##S(T a) { return a < 0; }                    \
    __device__ __forceinline__ T r_rem_euclid_##S(T a, T b) {                                   \
        const T r = r_rem_##S(a, b);                                                            \
        return r < 0 ? r_add_##S(r, r_abs_##S(b)) : r;                                          \
    }                                                                                           \
    __device__ __forceinline__ T r_div_euclid_##S(T a, T b) {                                   \
        const T q = r_div_##S(a, b);                                                            \
        if (b != 0 && b != (T)-1 && r_pin((T)(a % b)) < 0) return b > 0 ? r_sub_##S(q, 1) : r_add_##S(q, 1); \
        return q;                                                                               \
    }
// is_power_of_two, and rem_euclid and div_euclid (the operators') of the unsigned types.
#define R_UNSIGNED_METHODS(T, S)                                                                \
    __device__ __forceinline__ bool r_is_power_of_two_##S(T a) {                                \
        return a != 0 && (T)(a & (T)(a - 1)) == 0;                                              \
    }                                                                                           \
    __device__ __forceinline__ T r_rem_euclid_##S(T a, T b) { return r_rem_##S(a, b); }         \
    __device__ __forceinline__ T r_div_euclid_##S(T a, T b) { return r_div_##S(a, b); }

R_INT_METHODS(unsigned char, unsigned char, u8, 8, 0)
R_INT_METHODS(signed char, unsigned char, i8, 8, 1)
R_INT_METHODS(unsigned short, unsigned short, u16, 16, 0)
R_INT_METHODS(short, unsigned short, i16, 16, 1)
R_INT_METHODS(unsigned int, unsigned int, u32, 32, 0)
R_INT_METHODS(int, unsigned int, i32, 32, 1)
R_INT_METHODS(unsigned long long, unsigned long long, u64, 64, 0)
R_INT_METHODS(long long, unsigned long long, i64, 64, 1)
R_UNSIGNED_METHODS(unsigned char, u8)
R_SIGNED_METHODS(signed char, unsigned char, i8)
R_UNSIGNED_METHODS(unsigned short, u16)
R_SIGNED_METHODS(short, unsigned short, i16)
R_UNSIGNED_METHODS(unsigned int, u32)
R_SIGNED_METHODS(int, unsigned int, i32)
R_UNSIGNED_METHODS(unsigned long long, u64)
R_SIGNED_METHODS(long long, unsigned long long, i64)

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

// --- elementary functions ----------------------------------------------------------------------
// reduce_core::math, operation for operation (IEEE + - * /, one fma in exp2, exact conversions,
// integer bit operations): the same bits as the CPU. f64: exp, exp2, ln, log2, log10 (fdlibm's
// algorithms), pow and powi (ln as a double-double), tanh; f32: exp in f32 (a degree-7 polynomial
// in fmas), the others through f64 rounded once.
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

#undef R_INT_HELPERS
#undef R_SIGNED_HELPERS
#undef R_UNSIGNED_HELPERS
#undef R_FLOAT_AS_INT
#undef R_FLOAT_AS_INTS
#undef R_SATURATING_UNSIGNED
#undef R_SATURATING_SIGNED
#undef R_INT_METHODS
#undef R_SIGNED_METHODS
#undef R_UNSIGNED_METHODS
