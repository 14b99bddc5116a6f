// reduce prelude, integers: Rust's integer arithmetic and methods (wrapping, saturating, bit
// counts and orders, Euclid's), division with its faults. After base.cuh (see lib.rs's
// CUDA_PRELUDE for the order of the parts).

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
        /* ma * mb is at most `limit`: no overflow, even where UT is promoted to int */          \
        const UT m = (UT)(ma * mb);                                                             \
        return r_pin(neg ? (T)(UT)((UT)0 - m) : (T)m);                                          \
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

#undef R_INT_HELPERS
#undef R_SIGNED_HELPERS
#undef R_UNSIGNED_HELPERS
#undef R_SATURATING_UNSIGNED
#undef R_SATURATING_SIGNED
#undef R_INT_METHODS
#undef R_SIGNED_METHODS
#undef R_UNSIGNED_METHODS
