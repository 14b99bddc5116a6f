// Sharding across devices (reduce-cuda's `cluster` module): per-shard layout helpers.
//
// Order invariant: nothing here combines monoid values. The kernels rewrite layout indices
// element by element, so every item keeps its place and every segment its items, in order; the
// pieces of segments that cross shard boundaries are joined in rank order on the host
// (reduce_core::shard::SegmentPlan::join), never here.

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
