// Tb2: interleaved, left-storing shared-memory tree (paper Alg. 1), R = 2, D = 2 * R_BLOCK.
//
// ORDER INVARIANT. A data block is D consecutive items in s[0 .. D) (one pad slot every 32,
// slots R_SLOT_PITCH bytes apart: kernels/common.cuh). At the step with stride st, thread t
// combines s[2*st*t] (left) with s[2*st*t + st] (right) into the left slot, so slot i
// (i % 2st == 0) holds items [i, i + 2st) folded in order. Items past n are the identity.
// Block b writes data block b's value to out[b]; the host reduces the ceil(n / D) values again
// (multi-pass), in order.

#define R_D (2 * R_BLOCK)

extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_tb2(const M* __restrict__ in, r_size n, M* __restrict__ out) {
    extern __shared__ unsigned char r_smem[];
    const r_slots s{r_smem};
    const unsigned int t = threadIdx.x;
    const r_size base = (r_size)blockIdx.x * R_D;
    const r_size j0 = base + t, j1 = base + t + R_BLOCK;
    s[R_PAD(t)] = j0 < n ? in[j0] : m_identity();
    s[R_PAD(t + R_BLOCK)] = j1 < n ? in[j1] : m_identity();
    unsigned int stride = 1;
    for (unsigned int d = R_BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            const unsigned int ai = 2 * stride * t;
            const unsigned int bi = ai + stride;
            s[R_PAD(ai)] = m_combine(s[R_PAD(ai)], s[R_PAD(bi)]);
        }
        stride <<= 1;
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
