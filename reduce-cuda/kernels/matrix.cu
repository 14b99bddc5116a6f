// Matrix and PersistentMatrix: Dotsenko et al.'s sequential reduction (paper Alg. 3, III.B.1).
//
// ORDER INVARIANT. A data block is D = R_H * R_W consecutive items, stored in shared memory as
// an R_H x R_W matrix in row-major order (item i at row i / R_W, column i % R_W; one pad item
// per row against bank conflicts). Thread t < R_H folds row t left to right; the R_H = 32 row
// values are combined by the increasing-offset warp tree, row 0 first. Missing items past n are
// the identity. Matrix: block b writes data block b's value to out[b] (multi-pass: the host
// reduces the ceil(n / D) values again, in order). PersistentMatrix: block b folds a contiguous
// run of q or q+1 data blocks, runs in increasing b, accumulating (earlier) ⊕ (later).

#define R_D ((r_size)R_H * R_W)
#define R_ROW (R_W + 1)

// Loads data block `blk` into s (padded rows) and returns, in thread 0, its fold.
// Ends with the block synchronized (s may be overwritten afterwards).
__device__ __forceinline__ M r_matrix_block(const M* __restrict__ in, r_size n, r_size blk, M* s) {
    const r_size base = blk * R_D;
    for (unsigned int i = threadIdx.x; i < R_D; i += blockDim.x) {
        const r_size j = base + i;
        s[(i / R_W) * R_ROW + (i % R_W)] = j < n ? in[j] : m_identity();
    }
    __syncthreads();
    M v = m_identity();
    if (threadIdx.x < R_WARP) {
        const M* row = s + threadIdx.x * R_ROW;
        v = row[0];
        for (int k = 1; k < R_W; ++k) v = m_combine(v, row[k]);
        v = r_warp_reduce(v);
    }
    __syncthreads();
    return v;
}

// One pass: block b reduces data block b into out[b].
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_matrix(const M* __restrict__ in, r_size n, M* __restrict__ out) {
    extern __shared__ unsigned char r_smem[];
    M* s = reinterpret_cast<M*>(r_smem);
    const M v = r_matrix_block(in, n, blockIdx.x, s);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// Persistent blocks: block b folds data blocks [b*q + min(b, r), ... + q + (b < r)) in order.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_matrix_persistent(const M* __restrict__ in, r_size n, r_size q, r_size r, M* __restrict__ out) {
    extern __shared__ unsigned char r_smem[];
    M* s = reinterpret_cast<M*>(r_smem);
    const r_size b = blockIdx.x;
    r_size blk = b * q + (b < r ? b : r);
    const r_size end = blk + q + (b < r ? 1 : 0);
    M acc = m_identity();  // meaningful in thread 0
    for (; blk < end; ++blk) {
        const M v = r_matrix_block(in, n, blk, s);
        if (threadIdx.x == 0) acc = m_combine(acc, v);
    }
    if (threadIdx.x == 0) out[b] = acc;
}
