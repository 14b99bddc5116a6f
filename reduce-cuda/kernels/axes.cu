// Axes: an array seen as (B, K, C), row-major, reduced along its middle axis K in strips of S
// (the host's passes: catalogue/axes.rs).
//
// ORDER INVARIANT. Thread t owns one (b, strip s, c) with t = (b * strips + s) * C + c: it
// folds the items (b, k, c) for k in [s * S, min((s + 1) * S, K)) in increasing k, from the
// first of them on, and writes the fold to out[t]. The host folds the strips of each (b, c)
// again in order (a pass with K = strips) until one is left, so each result is the fold over
// k in order. Several reduced axes are one such reduction per run of adjacent reduced axes,
// innermost first: folding the inner coordinates first and the outer ones after is the
// row-major fold, by associativity. Neighbouring threads own neighbouring c: for C of a warp
// or more the loads are coalesced.

// Item i of `in`: lifted with its flat index when LIFT (the call's items), else a value.
template <typename T, bool LIFT>
__device__ __forceinline__ M r_axes_item(const T* __restrict__ in, r_size i) {
    if constexpr (LIFT) return m_lift(in[i], i);
    else return in[i];
}

// Every (b, s, c) of a pass over the items at `in`.
template <typename T, bool LIFT>
__device__ __forceinline__ void r_axes_strips(const T* __restrict__ in, r_size batches,
                                              r_size k, r_size c, r_size strip, r_size strips,
                                              M* __restrict__ out) {
    const r_size total = batches * strips * c;
    for (r_size t = (r_size)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (r_size)gridDim.x * blockDim.x) {
        const r_size col = t % c, rest = t / c;
        const r_size s = rest % strips, b = rest / strips;
        const r_size k0 = s * strip;
        const r_size k1 = k0 + strip < k ? k0 + strip : k;
        r_size i = (b * k + k0) * c + col;
        M acc = r_axes_item<T, LIFT>(in, i);
        for (r_size kk = k0 + 1; kk < k1; ++kk) {
            i += c;
            acc = m_combine(acc, r_axes_item<T, LIFT>(in, i));
        }
        out[t] = acc;
    }
}

// The first pass: the call's items (lifted items read as r_in).
extern "C" __global__ void __launch_bounds__(256)
reduce_axes(const r_in* __restrict__ in, r_size batches, r_size k, r_size c, r_size strip,
            r_size strips, M* __restrict__ out) {
    r_axes_strips<r_in, true>(in, batches, k, c, strip, strips, out);
}

// Later passes: monoid values (strips, or a pass's results).
extern "C" __global__ void __launch_bounds__(256)
reduce_axes_values(const M* __restrict__ in, r_size batches, r_size k, r_size c, r_size strip,
                   r_size strips, M* __restrict__ out) {
    r_axes_strips<M, false>(in, batches, k, c, strip, strips, out);
}

// out[0 .. count) = the identity (results of a reduced extent of 0).
extern "C" __global__ void __launch_bounds__(256)
axes_fill_identity(M* __restrict__ out, r_size count) {
    for (r_size t = (r_size)blockIdx.x * blockDim.x + threadIdx.x; t < count;
         t += (r_size)gridDim.x * blockDim.x)
        out[t] = m_identity();
}
