// reduce prelude, arrays: Rust arrays as values (r_array), [x; N], array ==. After math.cuh.

// --- arrays ------------------------------------------------------------------------------------
// A Rust array `[T; N]` is an r_array<T, N>: a struct around a C array (same size, alignment and
// element offsets), so that it is a value: copied, returned, compared, like the Rust array.
template <typename T, unsigned long long N>
struct r_array {
    T v[N];
    __device__ __forceinline__ T& operator[](unsigned long long i) { return v[i]; }
    __device__ __forceinline__ const T& operator[](unsigned long long i) const { return v[i]; }
    __device__ __forceinline__ static constexpr unsigned long long size() { return N; }
    // Index i checked against this array's own length (r_ix), for an index the derive could not
    // prove in bounds of a length named by a constant.
    __device__ __forceinline__ T& at(unsigned long long i) { return v[r_ix(i, N)]; }
    __device__ __forceinline__ const T& at(unsigned long long i) const { return v[r_ix(i, N)]; }
    // Index i, which the derive proved below the constant B that names this array's length:
    // B is that constant at the monoid's site, so a different constant of the same name that
    // passes the array's own length fails here, not out of bounds on the device.
    template <unsigned long long B>
    __device__ __forceinline__ T& within(unsigned long long i) {
        static_assert(B <= N, "a loop bound named like this array's length passes it: the two constants differ");
        return v[i];
    }
    template <unsigned long long B>
    __device__ __forceinline__ const T& within(unsigned long long i) const {
        static_assert(B <= N, "a loop bound named like this array's length passes it: the two constants differ");
        return v[i];
    }
};

// An array literal of arrays whose length a constant names: its type is its elements' (the
// derive does not spell it: the constant may mean another value where the literal is written).
template <typename T, typename... U>
__device__ __forceinline__ r_array<T, 1 + sizeof...(U)> r_make(const T& a, const U&... b) {
    return r_array<T, 1 + sizeof...(U)>{{a, b...}};
}

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
