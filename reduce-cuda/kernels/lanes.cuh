// A lane's run of input items (Shuffle, Portable, SegPortable, SegHeads, SegBlocks): R_ITEMS
// consecutive items of type r_in, loaded with 16-byte vectors where the kernel is specialised
// for them, and its folds.
//
// Parameters: R_ITEMS items per lane; R_VECS 16-byte loads per lane (R_ITEMS * sizeof(r_in) ==
// 16 * R_VECS), or 0 for item-by-item loads; R_ITEM_SHIFT: `in` lies that many bytes past a
// 16-byte boundary (the kernel is specialised for it, so that a view at any offset reads whole
// runs as vectors, one more per run, shifted into place at no cost per word: r_load_shifted; the
// first and last runs of such a view are read item by item, as is an `in` elsewhere, which the
// runtime never passes).

#if R_VECS > 0
union r_lane_tile {
    uint4 v[R_VECS];
    r_in m[R_ITEMS];
};
static_assert(sizeof(r_in) * R_ITEMS == 16 * R_VECS, "a lane's items must fill its vectors exactly");
#endif

// Calls f(i, x) for the R_ITEMS items x = in[first + i] (all below n), i = 0, 1, ... in order.
template <typename F>
__device__ __forceinline__ void r_lane_items(const r_in* __restrict__ in, r_size first, r_size n, F f) {
#if R_VECS > 0
#if R_ITEM_SHIFT == 0
    const bool whole = true;
#else
    const bool whole = ((unsigned long long)in & 15u) == R_ITEM_SHIFT &&
                       r_vectors_inside<R_VECS>(in + first, R_ITEM_SHIFT, in, in + n);
#endif
    if (whole) {
        r_lane_tile t;
        r_load_shifted(in + first, R_ITEM_SHIFT, t.v, [](const uint4* p) { return __ldcs(p); });
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) f(i, t.m[i]);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) f(i, in[first + i]);
}

// The fold of the R_ITEMS items from `first` (all below n), left to right.
__device__ __forceinline__ M r_fold_lane_full(const r_in* __restrict__ in, r_size first, r_size n) {
    M acc;
    r_lane_items(in, first, n, [&](int i, const r_in& x) {
        const M v = m_lift(x, first + i);
        acc = i == 0 ? v : m_combine(acc, v);
    });
    return acc;
}

// The fold of the run's items from `first` that lie in lo .. hi - 1, item by item, from the
// identity (a run a bound cuts: the globally last, partial tile; a segment's first or last run).
__device__ __forceinline__ M r_fold_lane_within(const r_in* __restrict__ in, r_size first, r_size lo,
                                                r_size hi) {
    M acc = m_identity();
    for (int i = 0; i < R_ITEMS; ++i) {
        const r_size k = first + i;
        if (k >= lo && k < hi) acc = m_combine(acc, m_lift(in[k], k));
    }
    return acc;
}
