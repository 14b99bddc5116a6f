// Tb2Seg and Tb4WarpSeg: Zhou et al.'s left-storing segmented trees (paper IV.A).
//
// ORDER INVARIANT. A node holds (owner of its first item, fold of its items that belong to that
// owner — its "prefix"). Joining siblings L, R: if owner(L) == owner(R) the node is L ⊕ R;
// otherwise R's prefix is APPENDED to its segment's output, out[owner(R)] = out[owner(R)] ⊕ R,
// and the node is L. A segment's pieces are pushed only in the data block (data warp) where it
// starts, in increasing position order (smaller nodes first, one level at a time); the pieces in
// later blocks are those blocks' prefixes, which the next pass pushes after this one. The output
// is pre-filled with the identity by the host (the paper's contract, kept internal). Padding
// items are the identity with owner R_NO_SEGMENT and are never pushed.
//
// Each block writes its prefix (value, owner) to next_vals/next_owner for the next pass; the
// single block of the last pass appends it to the output.

__device__ __forceinline__ void r_push_append(M* out, unsigned int o, r_size segments, M v) {
    if (o < segments) out[o] = m_combine(out[o], v);
}

__device__ __forceinline__ void r_finish_block(M* out, r_size segments, M* next_vals, unsigned int* next_owner,
                                               M value, unsigned int o) {
    if (gridDim.x == 1) {
        r_push_append(out, o, segments, value);
    } else {
        next_vals[blockIdx.x] = value;
        next_owner[blockIdx.x] = o;
    }
}

// Tb2Seg: paper Alg. 1 with the segmented step, R = 2, D = 2 * R_BLOCK.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_tb2_seg(const M* __restrict__ in, const unsigned int* __restrict__ owner, r_size n, r_size segments,
               M* __restrict__ out, M* __restrict__ next_vals, unsigned int* __restrict__ next_owner) {
    extern __shared__ unsigned char r_smem[];
    const r_slots s_data{r_smem};
    unsigned int* s_owner = r_align16<unsigned int>(r_smem + R_PAD(2 * R_BLOCK) * R_SLOT_PITCH);
    const unsigned int t = threadIdx.x;
    const r_size base = (r_size)blockIdx.x * (2 * R_BLOCK);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const unsigned int i = t + k * R_BLOCK;
        const r_size j = base + i;
        s_data[R_PAD(i)] = j < n ? in[j] : m_identity();
        s_owner[R_PAD(i)] = j < n ? owner[j] : R_NO_SEGMENT;
    }
    unsigned int stride = 1;
    for (unsigned int d = R_BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            const unsigned int ai = R_PAD(2 * stride * t);
            const unsigned int bi = R_PAD(2 * stride * t + stride);
            const unsigned int lo = s_owner[ai], ro = s_owner[bi];
            if (lo != ro) r_push_append(out, ro, segments, s_data[bi]);
            else s_data[ai] = m_combine(s_data[ai], s_data[bi]);
        }
        stride <<= 1;
    }
    if (t == 0) r_finish_block(out, segments, next_vals, next_owner, s_data[0], s_owner[0]);
}

// The segmented intra-warp left-storing tree over s[base .. base + 32) (paper's
// tb_s_reduceWarp with s_reducePair_toTheLeft), __syncwarp between steps. Lane 0 returns the
// prefix (value, owner). All 32 lanes must call it after a barrier that published the slots.
__device__ __forceinline__ void r_warp_seg_tree_left(M* s, unsigned int* so, unsigned int base, M* out, r_size segments,
                                                     M* value, unsigned int* o) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
#pragma unroll
    for (unsigned int step = 1; step < R_WARP; step <<= 1) {
        if ((lane & (2 * step - 1)) == 0) {
            const unsigned int ai = base + lane, bi = base + lane + step;
            const unsigned int lo = so[ai], ro = so[bi];
            if (lo != ro) r_push_append(out, ro, segments, s[bi]);
            else s[ai] = m_combine(s[ai], s[bi]);
        }
        __syncwarp();
    }
    *value = s[base];
    *o = so[base];
}

// Tb4WarpSeg: paper Alg. 2 with the segmented pair step, R = 4, D = 4 * R_BLOCK.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_tb4_warp_seg(const M* __restrict__ in, const unsigned int* __restrict__ owner, r_size n, r_size segments,
                    M* __restrict__ out, M* __restrict__ next_vals, unsigned int* __restrict__ next_owner) {
    extern __shared__ unsigned char r_smem[];
    M* s_data = reinterpret_cast<M*>(r_smem);                                   // 4 * R_BLOCK
    M* s_result = s_data + 4 * R_BLOCK;                                         // 32
    unsigned int* s_owner = r_align16<unsigned int>(s_result + R_WARP);        // 4 * R_BLOCK
    unsigned int* s_result_owner = s_owner + 4 * R_BLOCK;                       // 32
    const unsigned int t = threadIdx.x, lane = t & (R_WARP - 1), warp = t / R_WARP;
    const r_size base = (r_size)blockIdx.x * (4 * R_BLOCK);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const r_size j = base + t + k * R_BLOCK;
        s_data[t + k * R_BLOCK] = j < n ? in[j] : m_identity();
        s_owner[t + k * R_BLOCK] = j < n ? owner[j] : R_NO_SEGMENT;
    }
    if (t < R_WARP) {
        s_result[t] = m_identity();
        s_result_owner[t] = R_NO_SEGMENT;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const unsigned int data_warp = warp + k * (R_BLOCK / R_WARP);
        M v;
        unsigned int o;
        r_warp_seg_tree_left(s_data, s_owner, data_warp * R_WARP, out, segments, &v, &o);
        if (lane == 0) {
            s_result[data_warp] = v;
            s_result_owner[data_warp] = o;
        }
    }
    __syncthreads();
    if (warp == 0) {
        M v;
        unsigned int o;
        r_warp_seg_tree_left(s_result, s_result_owner, 0, out, segments, &v, &o);
        if (lane == 0) r_finish_block(out, segments, next_vals, next_owner, v, o);
    }
}
