// Shared helpers for every reduction kernel, layered like CUB: thread -> warp -> block.
// Written against the abstract monoid: `M`, `M m_identity()`, `M m_combine(M left, M right)`.
// Every helper keeps the left-to-right order of the values it is given: lanes and warps own
// consecutive pieces of the input in increasing index order, and `m_combine` is only ever
// applied as (earlier piece, later piece).

typedef unsigned long long r_size;   // item indices: 64-bit, so N may exceed 2^32

#define R_FULL_MASK 0xffffffffu
#define R_WARP 32

// ---------------------------------------------------------------- the block's threads

// The tile pipeline (kernels/pipe.cuh: R_PIPE stages) runs a producer warp beside the block's
// R_BLOCK threads. The block-level helpers then count and synchronise those R_BLOCK threads only
// (named barrier 1), never the producer; without it, every thread of the block.
#ifndef R_PIPE
#define R_PIPE 0
#endif
#if R_PIPE
#define R_THREADS ((unsigned int)R_BLOCK)
#else
#define R_THREADS blockDim.x
#endif

__device__ __forceinline__ void r_sync() {
#if R_PIPE && defined(__CUDA_ARCH__)
    asm volatile("bar.sync 1, %0;" ::"n"(R_BLOCK) : "memory");
#elif R_PIPE
    emu::named_sync(1, R_BLOCK);
#else
    __syncthreads();
#endif
}

// Whether this block is the launch's last to get here. Every thread of every block calls it
// once, after the block wrote what the last block reads (a block's records, partials or nodes;
// by any of its threads): a barrier orders those writes before thread 0's fence, thread 0
// fences them and takes a ticket (*ticket counts the blocks; the last block resets it); the
// last block fences again, so that it then sees every block's writes.
__device__ __forceinline__ bool r_last_block(unsigned int* ticket) {
    __shared__ bool s_is_last;
    r_sync();
    if (threadIdx.x == 0) {
        __threadfence();
        s_is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    r_sync();
    const bool last = s_is_last;
    if (last) __threadfence();
    return last;
}

// r_sync that returns whether p holds in any thread.
__device__ __forceinline__ int r_sync_or(int p) {
#if R_PIPE && defined(__CUDA_ARCH__)
    unsigned int any;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tbar.red.or.pred q, 1, %2, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(any)
                 : "r"(p), "n"(R_BLOCK)
                 : "memory");
    return (int)any;
#elif R_PIPE
    return emu::named_sync_or(1, R_BLOCK, p);
#else
    return __syncthreads_or(p);
#endif
}

// ---------------------------------------------------------------- vector loads at any alignment

// Whether the 16-byte vectors that cover the 16 * V bytes from `p`, which lie `shift` bytes past
// a 16-byte boundary, are all inside the caller's bytes [lo, hi) (a view at any offset: all but
// the first and last few lanes' runs).
template <int V>
__device__ __forceinline__ bool r_vectors_inside(const void* p, unsigned int shift, const void* lo, const void* hi) {
    const unsigned long long first = (unsigned long long)p - shift;
    return first >= (unsigned long long)lo && first + 16ull * (V + (shift != 0)) <= (unsigned long long)hi;
}

// The 16 * V bytes from `p`, `shift` bytes past a 16-byte boundary (a compile-time constant where
// the kernel is specialised for its input's offset, else p's own), into out[], read as 16-byte
// vectors with `load` (the caller's cache hint) from aligned addresses: V of them where `shift`
// is 0, else the V + 1 that cover the bytes, shifted into place (the same shift in every lane of
// a launch: no divergence). Only where r_vectors_inside says so.
template <int V, typename Load>
__device__ __forceinline__ void r_load_shifted(const void* p, unsigned int shift, uint4 (&out)[V], Load load) {
    const uint4* a = reinterpret_cast<const uint4*>((unsigned long long)p - shift);
    if (shift == 0) {
#pragma unroll
        for (int k = 0; k < V; ++k) out[k] = load(a + k);
        return;
    }
    unsigned int w[4 * V + 4];
#pragma unroll
    for (int k = 0; k <= V; ++k) {
        const uint4 x = load(a + k);
        w[4 * k] = x.x;
        w[4 * k + 1] = x.y;
        w[4 * k + 2] = x.z;
        w[4 * k + 3] = x.w;
    }
    // Word j of the result is bytes [shift + 4j, shift + 4j + 4): the words from ws + j,
    // funnel-shifted by the bytes left over.
    const unsigned int ws = shift >> 2, bits = (shift & 3u) * 8u;
    unsigned int sel[4 * V + 1];
#pragma unroll
    for (int j = 0; j <= 4 * V; ++j) sel[j] = ws == 0 ? w[j] : ws == 1 ? w[j + 1] : ws == 2 ? w[j + 2] : w[j + 3];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        out[k] = make_uint4(__funnelshift_r(sel[4 * k], sel[4 * k + 1], bits),
                            __funnelshift_r(sel[4 * k + 1], sel[4 * k + 2], bits),
                            __funnelshift_r(sel[4 * k + 2], sel[4 * k + 3], bits),
                            __funnelshift_r(sel[4 * k + 3], sel[4 * k + 4], bits));
    }
}

// ---------------------------------------------------------------- thread level

// Views an M as 32-bit words, to move it through registers word by word (any size, any
// field layout; the last word may hold padding).
#define R_WORDS ((int)((sizeof(M) + 3) / 4))
union r_bits {
    M m;
    unsigned int w[R_WORDS];
};

__device__ __forceinline__ M r_shfl_down(M v, unsigned int delta) {
    r_bits b;
    b.m = v;
#pragma unroll
    for (int i = 0; i < R_WORDS; ++i) b.w[i] = __shfl_down_sync(R_FULL_MASK, b.w[i], delta);
    return b.m;
}

__device__ __forceinline__ M r_shfl_up(M v, unsigned int delta) {
    r_bits b;
    b.m = v;
#pragma unroll
    for (int i = 0; i < R_WORDS; ++i) b.w[i] = __shfl_up_sync(R_FULL_MASK, b.w[i], delta);
    return b.m;
}

__device__ __forceinline__ M r_shfl(M v, unsigned int src_lane) {
    r_bits b;
    b.m = v;
#pragma unroll
    for (int i = 0; i < R_WORDS; ++i) b.w[i] = __shfl_sync(R_FULL_MASK, b.w[i], src_lane);
    return b.m;
}

// The fixed binary tree over the nodes v[0 .. present) of one level (K a power of two; the
// nodes from `present` on are absent, present >= 1): the step of width s combines v[j] (left)
// and v[j + s] (right) for j % 2s == 0, and a node whose right child is absent keeps its left
// one (no identity is combined in). Returns the root, v[0]. The portable grouping
// (reduce_core::portable) is this tree over global run indices.
template <int K>
__device__ __forceinline__ M r_tree_regs(M (&v)[K], int present) {
    static_assert((K & (K - 1)) == 0, "a tree level holds a power of two of nodes");
#pragma unroll
    for (int s = 1; s < K; s <<= 1) {
#pragma unroll
        for (int j = 0; j + s < K; j += 2 * s) {
            if (j + s < present) v[j] = m_combine(v[j], v[j + s]);
        }
    }
    return v[0];
}

// Reads an M written by another block of the same launch (after its __threadfence):
// through L2 (ld.global.cg), never from a possibly stale L1 line.
__device__ __forceinline__ M r_load_cg(const M* p) {
    if constexpr (sizeof(M) % 4 == 0 && alignof(M) >= 4) {
        r_bits b;
        const unsigned int* q = reinterpret_cast<const unsigned int*>(p);
#pragma unroll
        for (int i = 0; i < R_WORDS; ++i) b.w[i] = __ldcg(q + i);
        return b.m;
    } else {
        union { M m; unsigned char c[sizeof(M)]; } b;
        const unsigned char* q = reinterpret_cast<const unsigned char*>(p);
        for (int i = 0; i < (int)sizeof(M); ++i) b.c[i] = __ldcg(q + i);
        return b.m;
    }
}

// ---------------------------------------------------------------- warp level

// Order-keeping warp reduction with shuffles at INCREASING offsets 1, 2, 4, 8, 16
// (left-storing: after the step with offset o, lane i (i % 2o == 0) holds lanes [i, i + 2o)
// folded in order). Lane 0 returns the fold of all 32 lanes, lane 0 first. The other lanes
// return partial values. All 32 lanes must call it.
__device__ __forceinline__ M r_warp_reduce(M v) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const M right = r_shfl_down(v, o);
        if ((lane & (2 * o - 1)) == 0) v = m_combine(v, right);
    }
    return v;
}

// r_warp_reduce over the nodes of lanes 0 .. present - 1 only (the lanes from `present` on are
// absent, present >= 1; their values are never read): the same increasing-offset steps, but a
// node whose right child is absent keeps its left one, as in r_tree_regs. Lane 0 returns the
// root. With WIDTH < 32 the warp holds 32 / WIDTH such trees side by side, each over WIDTH
// lanes: a lane passes its own tree's `present`, counted from that tree's first lane, which
// returns the root. All 32 lanes must call it.
template <unsigned int WIDTH = R_WARP>
__device__ __forceinline__ M r_warp_tree(M v, unsigned int present) {
    static_assert(WIDTH >= 1 && WIDTH <= R_WARP && (WIDTH & (WIDTH - 1)) == 0, "a tree of lanes");
    const unsigned int lane = threadIdx.x & (WIDTH - 1);
#pragma unroll
    for (unsigned int o = 1; o < WIDTH; o <<= 1) {
        const M right = r_shfl_down(v, o);
        if ((lane & (2 * o - 1)) == 0 && lane + o < present) v = m_combine(v, right);
    }
    return v;
}

// The paper's intra-warp left-storing tree over 32 consecutive shared-memory slots starting
// at s[base] (Sengupta et al., paper Alg. 2), with __syncwarp() between the steps: since
// Volta's independent thread scheduling the implicit warp synchrony the paper relies on is a
// data race. Step o (1, 2, 4, 8) leaves in s[base + i], for i % 2o == 0, the fold of the
// 2o slots from i in order; the last step (16) is returned. Lane 0 returns the fold of
// s[base .. base + 32) in order. All 32 lanes must call it after a barrier that published s.
// It overwrites the slots.
__device__ __forceinline__ M r_warp_reduce_smem(M* s, unsigned int base) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
#pragma unroll
    for (unsigned int o = 1; o < R_WARP / 2; o <<= 1) {
        if ((lane & (2 * o - 1)) == 0) s[base + lane] = m_combine(s[base + lane], s[base + lane + o]);
        __syncwarp();
    }
    return m_combine(s[base], s[base + R_WARP / 2]);
}

// Warp-level fold of s[0 .. count) (shared memory) in order: lane i folds the i-th contiguous
// run of ceil(count / 32) values, then the lanes combine in order. Lane 0 returns the fold.
__device__ __forceinline__ M r_warp_fold_run(const M* s, unsigned int count) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int per_lane = (count + R_WARP - 1) / R_WARP;
    const unsigned int lo = lane * per_lane;
    const unsigned int hi = min(lo + per_lane, count);
    M v = m_identity();
    for (unsigned int i = lo; i < hi; ++i) v = m_combine(v, s[i]);
    return r_warp_reduce(v);
}

// ---------------------------------------------------------------- block level

// Order-keeping block reduction: warp w holds the fold of the w-th consecutive piece (in its
// lane 0). Thread 0 returns the fold over the warps in order. `scratch` holds an M per warp of
// the block.
// Must be called by every thread of the block; ends with the block synchronized.
__device__ __forceinline__ M r_block_combine_warps(M warp_value, M* scratch) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    const unsigned int warps = (R_THREADS + R_WARP - 1) / R_WARP;
    if (lane == 0) scratch[warp] = warp_value;
    r_sync();
    M v = m_identity();
    if (warp == 0) {
        v = lane < warps ? scratch[lane] : m_identity();
        v = r_warp_reduce(v);
    }
    r_sync();
    return v;
}

// Block-level fold, in order, of p[0 .. count) written by other blocks of this launch (read
// through L2): thread t folds the t-th contiguous run, then warps, then the block. Thread 0
// returns the fold. Must be called by every thread of the block.
__device__ __forceinline__ M r_block_fold_run_cg(const M* p, unsigned int count, M* scratch) {
    const unsigned int per_thread = (count + R_THREADS - 1) / R_THREADS;
    const unsigned int lo = threadIdx.x * per_thread;
    const unsigned int hi = min(lo + per_thread, count);
    M v = m_identity();
    for (unsigned int i = lo; i < hi; ++i) v = m_combine(v, r_load_cg(p + i));
    return r_block_combine_warps(r_warp_reduce(v), scratch);
}

// ---------------------------------------------------------------- shared-memory trees (Tb2, Tb2Seg)

// A tree's slot i lives at slot R_PAD(i): one pad slot every 32 keeps the strided steps of
// 4-byte values off a single bank.
#define R_PAD(i) ((i) + ((i) >> 5))

// The bytes from one slot to the next: sizeof(M), but one alignment unit more for values of 64
// bytes or more that are an even number of units long. Same-offset words of slots sizeof(M)
// apart (1 KiB, say) all fall in one bank, so every word a tree step moves would be a 32-way
// conflict; an odd number of units puts consecutive slots' words in different banks.
#define R_SLOT_PITCH \
    (sizeof(M) >= 64 && (sizeof(M) / alignof(M)) % 2 == 0 ? sizeof(M) + alignof(M) : sizeof(M))

// A tree's values in shared memory from `base`, R_SLOT_PITCH bytes apart.
struct r_slots {
    unsigned char* base;
    __device__ __forceinline__ M& operator[](unsigned int i) const {
        if constexpr (R_SLOT_PITCH == sizeof(M)) return reinterpret_cast<M*>(base)[i];
        else return *reinterpret_cast<M*>(base + (unsigned long long)i * R_SLOT_PITCH);
    }
};
