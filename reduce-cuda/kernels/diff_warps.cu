// DiffWarps: persistent Matrix with producer/consumer warps (paper Alg. 4), P producers,
// one consumer warp, B = 32 * (P + 1), two shared buffers swapped every iteration.
//
// ORDER INVARIANT. As PersistentMatrix: block b owns a contiguous run of q or q+1 data blocks
// of D = 32 * R_W items, runs in increasing b. While the producers (warps 1..P) load data block
// k + 1 into one buffer, the consumer (warp 0) folds data block k from the other: lane t folds
// row t left to right, the rows combine by the increasing-offset warp tree, and lane 0
// accumulates (earlier blocks) ⊕ (this block). A __syncthreads per iteration separates the
// two roles' use of the buffers. Items past n are the identity.

#define R_H 32
#define R_D ((r_size)R_H * R_W)
#define R_ROW (R_W + 1)
#define R_PRODUCER_THREADS (R_BLOCK - R_WARP)

__device__ __forceinline__ void r_produce(const M* __restrict__ in, r_size n, r_size blk, M* s) {
    const r_size base = blk * R_D;
    for (unsigned int i = threadIdx.x - R_WARP; i < R_D; i += R_PRODUCER_THREADS) {
        const r_size j = base + i;
        s[(i / R_W) * R_ROW + (i % R_W)] = j < n ? in[j] : m_identity();
    }
}

__device__ __forceinline__ M r_consume(const M* s) {
    const M* row = s + threadIdx.x * R_ROW;
    M v = row[0];
    for (int k = 1; k < R_W; ++k) v = m_combine(v, row[k]);
    return r_warp_reduce(v);
}

extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_diff_warps(const M* __restrict__ in, r_size n, r_size q, r_size r, M* __restrict__ out) {
    extern __shared__ unsigned char r_smem[];
    M* s_load = reinterpret_cast<M*>(r_smem);
    M* s_comp = s_load + R_H * R_ROW;
    const bool consumer = threadIdx.x < R_WARP;
    const r_size b = blockIdx.x;
    r_size blk = b * q + (b < r ? b : r);
    const r_size count = q + (b < r ? 1 : 0);
    M acc = m_identity();  // meaningful in thread 0
    if (count > 0) {
        if (!consumer) r_produce(in, n, blk, s_load);
        __syncthreads();
        for (r_size k = 1; k < count; ++k) {
            M* tmp = s_load; s_load = s_comp; s_comp = tmp;
            if (consumer) {
                const M v = r_consume(s_comp);
                if (threadIdx.x == 0) acc = m_combine(acc, v);
            } else {
                r_produce(in, n, blk + k, s_load);
            }
            __syncthreads();
        }
        if (consumer) {
            const M v = r_consume(s_load);
            if (threadIdx.x == 0) acc = m_combine(acc, v);
        }
    }
    if (threadIdx.x == 0) out[b] = acc;
}
