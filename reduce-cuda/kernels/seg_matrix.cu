// MatrixSeg, PersistentMatrixSeg, DiffWarps16Seg: Dotsenko rows for segments (paper IV.A-B).
//
// ORDER INVARIANT. A data block of D = 32 * R_W items lies in shared memory as 32 rows. Row t
// folds its items left to right; at each owner change it flushes the run it holds by PREPENDING
// it, out[o] = run ⊕ out[o]: the first run of a row may continue a segment from earlier rows,
// whose pieces arrive later, and are prepended in turn. A row's last run (its "suffix") goes to
// a right-storing warp tree: a node holds (owner of its last item, fold of its items of that
// owner); joining L, R: same owner -> R = L ⊕ R; else L is prepended to its segment's output.
// Pieces of one segment are prepended in decreasing position order, so out[o] ends as the fold
// in increasing order. The block's suffix (lane 31) goes to the next pass (or, in the persistent
// kernels, is carried into the block's next data block: same owner -> carry ⊕ suffix, else the
// carry is prepended after that data block's own prepends). The output is pre-filled with the
// identity by the host. Padding items are the identity with owner R_NO_SEGMENT, never written.

#define R_D ((r_size)R_WARP * R_W)
#define R_ROW (R_W + 1)

__device__ __forceinline__ void r_push_prepend(M* out, unsigned int o, r_size segments, M v) {
    if (o < segments) out[o] = m_combine(v, out[o]);
}

__device__ __forceinline__ void r_load_seg_block(const M* __restrict__ in, const unsigned int* __restrict__ owner,
                                                 r_size n, r_size blk, M* s, unsigned int* so,
                                                 unsigned int first_thread, unsigned int threads) {
    const r_size base = blk * R_D;
    for (unsigned int i = threadIdx.x - first_thread; i < R_D; i += threads) {
        const r_size j = base + i;
        const unsigned int slot = (i / R_W) * R_ROW + (i % R_W);
        s[slot] = j < n ? in[j] : m_identity();
        so[slot] = j < n ? owner[j] : R_NO_SEGMENT;
    }
}

// Warp 0 (lanes = rows) reduces the loaded data block: row runs, then the right-storing tree.
// Lane 31 returns the block's suffix (value, owner). Call from all 32 lanes of one warp.
__device__ __forceinline__ void r_matrix_seg_rows(M* s, unsigned int* so, M* out, r_size segments, M* value, unsigned int* o) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const M* row = s + lane * R_ROW;
    const unsigned int* row_owner = so + lane * R_ROW;
    M cur = row[0];
    unsigned int cur_owner = row_owner[0];
    for (int k = 1; k < R_W; ++k) {
        const unsigned int ok = row_owner[k];
        if (ok != cur_owner) {
            r_push_prepend(out, cur_owner, segments, cur);
            cur_owner = ok;
            cur = row[k];
        } else {
            cur = m_combine(cur, row[k]);
        }
    }
    // Right-storing tree over the 32 row suffixes, in registers via shuffles: lane i holds the
    // node ending at row i; at step `step`, lanes with (i + 1) % (2 step) == 0 join the node
    // ending at i - step (left) with their own (right).
#pragma unroll
    for (unsigned int step = 1; step < R_WARP; step <<= 1) {
        const M left = r_shfl_up(cur, step);
        const unsigned int left_owner = __shfl_up_sync(R_FULL_MASK, cur_owner, step);
        if (((lane + 1) & (2 * step - 1)) == 0) {
            if (left_owner != cur_owner) r_push_prepend(out, left_owner, segments, left);
            else cur = m_combine(left, cur);
        }
        __syncwarp();
    }
    *value = cur;
    *o = cur_owner;
}

__device__ __forceinline__ void r_finish_block(M* out, r_size segments, M* next_vals, unsigned int* next_owner,
                                               M value, unsigned int o) {
    if (gridDim.x == 1) {
        r_push_prepend(out, o, segments, value);
    } else {
        next_vals[blockIdx.x] = value;
        next_owner[blockIdx.x] = o;
    }
}

// MatrixSeg: one data block per block.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_matrix_seg(const M* __restrict__ in, const unsigned int* __restrict__ owner, r_size n, r_size segments,
                  M* __restrict__ out, M* __restrict__ next_vals, unsigned int* __restrict__ next_owner) {
    extern __shared__ unsigned char r_smem[];
    M* s = reinterpret_cast<M*>(r_smem);
    unsigned int* so = r_align16<unsigned int>(s + R_WARP * R_ROW);
    r_load_seg_block(in, owner, n, blockIdx.x, s, so, 0, R_BLOCK);
    __syncthreads();
    if (threadIdx.x < R_WARP) {
        M v;
        unsigned int o;
        r_matrix_seg_rows(s, so, out, segments, &v, &o);
        if (threadIdx.x == R_WARP - 1) r_finish_block(out, segments, next_vals, next_owner, v, o);
    }
}

// Carries the persistent block's suffix across its data blocks (lane 31 of warp 0 only).
__device__ __forceinline__ void r_carry_suffix(M* out, r_size segments, bool first, M v, unsigned int o,
                                               M* carry, unsigned int* carry_owner) {
    if (first) {
        *carry = v;
        *carry_owner = o;
    } else if (o == *carry_owner) {
        *carry = m_combine(*carry, v);  // the whole data block continues the carried segment
    } else {
        r_push_prepend(out, *carry_owner, segments, *carry);  // after this data block's prepends
        *carry = v;
        *carry_owner = o;
    }
}

// PersistentMatrixSeg: block b folds data blocks [b*q + min(b, r), ... + q + (b < r)) in order.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_matrix_seg_persistent(const M* __restrict__ in, const unsigned int* __restrict__ owner, r_size n, r_size segments,
                             r_size q, r_size r, M* __restrict__ out, M* __restrict__ next_vals,
                             unsigned int* __restrict__ next_owner) {
    extern __shared__ unsigned char r_smem[];
    M* s = reinterpret_cast<M*>(r_smem);
    unsigned int* so = r_align16<unsigned int>(s + R_WARP * R_ROW);
    const r_size b = blockIdx.x;
    const r_size first = b * q + (b < r ? b : r);
    const r_size end = first + q + (b < r ? 1 : 0);
    M carry = m_identity();
    unsigned int carry_owner = R_NO_SEGMENT;
    for (r_size blk = first; blk < end; ++blk) {
        r_load_seg_block(in, owner, n, blk, s, so, 0, R_BLOCK);
        __syncthreads();
        if (threadIdx.x < R_WARP) {
            M v;
            unsigned int o;
            r_matrix_seg_rows(s, so, out, segments, &v, &o);
            if (threadIdx.x == R_WARP - 1) r_carry_suffix(out, segments, blk == first, v, o, &carry, &carry_owner);
        }
        __syncthreads();
    }
    if (threadIdx.x == R_WARP - 1) r_finish_block(out, segments, next_vals, next_owner, carry, carry_owner);
}

// DiffWarps16Seg: persistent MatrixSeg with producer warps 1..P loading the next data block
// (items and owners) while the consumer warp 0 reduces the current one (paper IV.B, W = 16).
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_diff_warps_seg(const M* __restrict__ in, const unsigned int* __restrict__ owner, r_size n, r_size segments,
                      r_size q, r_size r, M* __restrict__ out, M* __restrict__ next_vals,
                      unsigned int* __restrict__ next_owner) {
    extern __shared__ unsigned char r_smem[];
    M* s_load = reinterpret_cast<M*>(r_smem);
    M* s_comp = s_load + R_WARP * R_ROW;
    unsigned int* so_load = r_align16<unsigned int>(s_comp + R_WARP * R_ROW);
    unsigned int* so_comp = so_load + R_WARP * R_ROW;
    const bool consumer = threadIdx.x < R_WARP;
    const r_size b = blockIdx.x;
    const r_size first = b * q + (b < r ? b : r);
    const r_size count = q + (b < r ? 1 : 0);
    M carry = m_identity();
    unsigned int carry_owner = R_NO_SEGMENT;
    if (count > 0) {
        if (!consumer) r_load_seg_block(in, owner, n, first, s_load, so_load, R_WARP, R_BLOCK - R_WARP);
        __syncthreads();
        for (r_size k = 0; k < count; ++k) {
            M* t = s_load; s_load = s_comp; s_comp = t;
            unsigned int* to = so_load; so_load = so_comp; so_comp = to;
            if (consumer) {
                M v;
                unsigned int o;
                r_matrix_seg_rows(s_comp, so_comp, out, segments, &v, &o);
                if (threadIdx.x == R_WARP - 1) r_carry_suffix(out, segments, k == 0, v, o, &carry, &carry_owner);
            } else if (k + 1 < count) {
                r_load_seg_block(in, owner, n, first + k + 1, s_load, so_load, R_WARP, R_BLOCK - R_WARP);
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == R_WARP - 1) r_finish_block(out, segments, next_vals, next_owner, carry, carry_owner);
}
