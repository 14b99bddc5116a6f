// Tb4Warp: intra-warp left-storing trees (paper Alg. 2, Sengupta et al.), R = 4, D = 4 * R_BLOCK.
//
// ORDER INVARIANT. A data block is D consecutive items in s[0 .. D), cut into D / 32 data warps
// of 32 consecutive items. Warp w reduces data warps w, w + W, w + 2W, w + 3W (W = warps per
// block) with the left-storing tree of r_warp_reduce_smem (__syncwarp between steps) and stores
// data warp k's value in s_result[k], so s_result is in item order. Warp 0 then reduces
// s_result[0 .. D/32) the same way (D / 32 = 32 for the paper's B = 256). Items past n are the
// identity. Block b writes out[b]; the host reduces again (multi-pass), in order.

#define R_D (4 * R_BLOCK)
#define R_DATA_WARPS (R_D / R_WARP)
static_assert(R_DATA_WARPS <= R_WARP, "Tb4Warp needs D / 32 <= 32 partial values (R_BLOCK <= 256)");

extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_tb4_warp(const M* __restrict__ in, r_size n, M* __restrict__ out) {
    extern __shared__ unsigned char r_smem[];
    M* s = reinterpret_cast<M*>(r_smem);  // D items, then 32 results
    M* s_result = s + R_D;
    const unsigned int t = threadIdx.x;
    const unsigned int lane = t & (R_WARP - 1);
    const unsigned int warp = t / R_WARP;
    const r_size base = (r_size)blockIdx.x * R_D;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const r_size j = base + t + k * R_BLOCK;
        s[t + k * R_BLOCK] = j < n ? in[j] : m_identity();
    }
    if (t < R_WARP) s_result[t] = m_identity();
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const unsigned int data_warp = warp + k * (R_BLOCK / R_WARP);
        const M v = r_warp_reduce_smem(s, data_warp * R_WARP);
        if (lane == 0) s_result[data_warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        const M v = r_warp_reduce_smem(s_result, 0);
        if (lane == 0) out[blockIdx.x] = v;
    }
}
