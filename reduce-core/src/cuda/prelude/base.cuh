// reduce prelude: device helpers for the CUDA text that #[derive(Monoid)] generates.
// Pasted first into every kernel, before the monoid. Each helper computes exactly what the Rust
// operation computes in a release build: wrapping integer arithmetic, shift amounts masked to the
// type width, saturating float -> int `as` (NaN -> 0); where Rust panics (an index out of bounds,
// an integer division by zero, the operators' MIN / -1) a recorded fault (see "faults").
// Names are r_<op>_<Rust type> (r_add_i32, r_f32_as_u8, ...); Rust types are spelled in C as
// u8 = unsigned char, i8 = signed char, u16 = unsigned short, i16 = short, u32 = unsigned int,
// i32 = int, u64 = unsigned long long, i64 = long long.
// No #include: this compiles under NVRTC without the CUDA headers.
// The text is five parts, pasted in this order (reduce_core::CUDA_PRELUDE): base.cuh (this:
// results pinned to their type, float comparisons, bit counts, the fault record, offsetof),
// integers.cuh, floats.cuh, math.cuh, arrays.cuh.

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

// --- layout checks ---------------------------------------------------------------------------
// offsetof without <cstddef>; NVRTC's front end (EDG) has no __builtin_offsetof but __INTADDR__.
#if defined(__CUDACC_RTC__)
#define r_offsetof(T, member) ((unsigned long long)__INTADDR__(&(((T*)0)->member)))
#else
#define r_offsetof(T, member) __builtin_offsetof(T, member)
#endif
