// Sharding across devices (reduce-cuda's `cluster` module): per-shard layout helpers and the
// rank-order fold of the partials the ranks gathered.
//
// Order invariant: the layout kernels never combine monoid values; they rewrite indices element
// by element, so every item keeps its place and every segment its items, in order. The fold of
// the gathered partials is one thread's left-to-right loop over them, in rank order: exactly
// reduce_core::fold of the partials, the grouping the host fold uses, so a value folded on the
// device and one folded on the host are the same bits (floats included). The pieces of segments
// that cross shard boundaries are joined in rank order on the host
// (reduce_core::shard::SegmentPlan::join).

// out[i] = owner[i] - base (mod 2^32) for the n items of a shard whose first item lies in global
// segment `base`: global segment ids become ids local to the shard. An owner below `base` (an
// unsorted layout) wraps to a local id past the shard's segments, which the local validation
// reports as out of range.
extern "C" __global__ void shard_rebase_owner(const unsigned int* __restrict__ owner, r_size n, r_size base,
                                              unsigned int* __restrict__ out) {
    const unsigned int b = (unsigned int)base;
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n; i += (r_size)gridDim.x * blockDim.x)
        out[i] = owner[i] - b;
}

// *out = identity ⊕ partials[0] ⊕ partials[1] ⊕ ... ⊕ partials[count - 1], by thread 0 of block 0
// (count is the number of ranks: a handful of values).
extern "C" __global__ void shard_fold(const M* __restrict__ partials, r_size count, M* __restrict__ out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    M acc = m_identity();
    for (r_size i = 0; i < count; ++i) acc = m_combine(acc, partials[i]);
    *out = acc;
}
