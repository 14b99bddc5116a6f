// The tile pipeline (R_PIPE stages, sm_90+): a producer warp beside the block's R_BLOCK threads
// moves each tile's items into a ring of shared-memory stages with bulk copies
// (`cp.async.bulk`), and the threads fold them from there. Every stage has two mbarriers:
// `full` completes when the stage's bytes have landed (the producer's 32 lanes arrive, lane 0
// announcing the bulk copy's bytes first), `empty` when every thread of the block has read it
// (each thread arrives after its own last read). The producer fills stage k % R_PIPE with the
// block's k-th tile once the stage's tile before has been read; the threads wait for `full`
// before reading. Included after the tile's own definitions (R_TILE: kernels/seg_tile.cuh for
// SegShuffle, kernels/scan.cu for the scans); without R_PIPE, only the two sizes below.
//
// ORDER. The pipeline moves bytes and never reorders them: a tile's items sit in its stage at
// their own positions, R_ITEM_SHIFT bytes past the stage's start, exactly as they lie in global
// memory past a 16-byte boundary. Which thread folds which items is the tile's business
// (kernels/seg_shuffle.cu).
//
// Off the GPU (the CPU emulator, tests/emu) the same operations are the emulator's: a bulk copy
// poisons its destination when issued and lands only when a thread waits on its barrier, so
// that a read before the wait reads the poison.

// A stage: the tile's bytes and the 16-byte boundary before them, rounded to 128 bytes.
#define R_PIPE_STAGE_BYTES (((R_TILE * sizeof(r_in) + R_ITEM_SHIFT) + 127) / 128 * 128)
// The threads a block is launched with: the producer warp after the R_BLOCK threads.
#define R_BLOCK_THREADS (R_BLOCK + (R_PIPE ? R_WARP : 0))

#if R_PIPE

// Where the block's k-th tile's item 0 lies in its stage (k counted from the block's first tile).
__device__ __forceinline__ unsigned char* r_stage_items_at(unsigned char* stages, unsigned int k) {
    return stages + (size_t)(k % R_PIPE) * R_PIPE_STAGE_BYTES + R_ITEM_SHIFT;
}

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ unsigned int r_smem(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void r_mbar_init(unsigned long long* bar, unsigned int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(r_smem(bar)), "r"(count) : "memory");
}
// After every barrier's init, before the block's barrier that publishes them: the inits made
// visible to the bulk copies (the async proxy).
__device__ __forceinline__ void r_mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void r_mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(r_smem(bar)) : "memory");
}
// Arrives and adds `bytes` to the transactions the current phase waits for.
__device__ __forceinline__ void r_mbar_arrive_expect(unsigned long long* bar, unsigned int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(r_smem(bar)), "r"(bytes) : "memory");
}
// Waits until the phase of parity `parity` has completed (acquire: its writes are visible).
__device__ __forceinline__ void r_mbar_wait(unsigned long long* bar, unsigned int parity) {
    unsigned int done;
    do {
        asm volatile(
            "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(r_smem(bar)), "r"(parity)
            : "memory");
    } while (!done);
}
// `bytes` (a multiple of 16) from global `src` to shared `dst` (both 16-byte aligned),
// completing on `bar`.
__device__ __forceinline__ void r_bulk_copy(void* dst, const void* src, unsigned int bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     r_smem(dst)),
                 "l"(src), "r"(bytes), "r"(r_smem(bar))
                 : "memory");
}
// Orders this thread's plain shared-memory writes before later bulk copies into the same bytes.
__device__ __forceinline__ void r_async_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
#else
__device__ __forceinline__ void r_mbar_init(unsigned long long* bar, unsigned int count) { emu::mbar_init(bar, count); }
__device__ __forceinline__ void r_mbar_init_fence() {}
__device__ __forceinline__ void r_mbar_arrive(unsigned long long* bar) { emu::mbar_arrive(bar, 0); }
__device__ __forceinline__ void r_mbar_arrive_expect(unsigned long long* bar, unsigned int bytes) {
    emu::mbar_arrive(bar, bytes);
}
__device__ __forceinline__ void r_mbar_wait(unsigned long long* bar, unsigned int parity) { emu::mbar_wait(bar, parity); }
__device__ __forceinline__ void r_bulk_copy(void* dst, const void* src, unsigned int bytes, unsigned long long* bar) {
    emu::bulk_copy(dst, src, bytes, bar);
}
__device__ __forceinline__ void r_async_fence() {}
#endif

// The producer warp's copy of bytes [a, e) of an array that ends at `hi` into shared memory at
// `dst` (which holds byte a): the bytes that whole 16-byte blocks of global memory hold inside
// the array, [b0, b1), go by one bulk copy; the few before and after them (only at the array's
// own ends, or everywhere where `aligned` is false: an array whose bytes do not sit where the
// stage expects them past a 16-byte boundary, which the runtime never passes) by the lanes,
// byte by byte, so that nothing outside the array is read.
struct r_tile_copy {
    unsigned char* dst;
    unsigned long long a, e, b0, b1;
};
__device__ __forceinline__ r_tile_copy r_tile_copy_of(unsigned long long a, unsigned long long bytes,
                                                      unsigned long long hi, bool aligned, unsigned char* dst) {
    r_tile_copy c;
    c.dst = dst;
    c.a = a;
    c.e = min(a + bytes, hi);
    c.b0 = aligned ? (a + 15u) & ~15ull : c.e;
    c.b1 = aligned ? c.e & ~15ull : c.e;
    if (c.b1 < c.b0) c.b1 = c.b0;
    return c;
}
// The bulk copy's bytes.
__device__ __forceinline__ unsigned int r_tile_copy_bulk_bytes(const r_tile_copy& c) {
    return (unsigned int)(c.b1 - c.b0);
}
// Every lane: the bytes outside [b0, b1): [a, b0) and [b1, e).
__device__ __forceinline__ void r_tile_copy_lanes(const r_tile_copy& c) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int head = (unsigned int)(c.b0 - c.a), tail = (unsigned int)(c.e - c.b1);
    for (unsigned int j = lane; j < head + tail; j += R_WARP) {
        const unsigned long long at = j < head ? c.a + j : c.b1 + (j - head);
        c.dst[at - c.a] = *reinterpret_cast<const unsigned char*>(at);
    }
}
// Lane 0, after announcing the bytes on `bar` (r_mbar_arrive_expect): the bulk copy.
__device__ __forceinline__ void r_tile_copy_bulk(const r_tile_copy& c, unsigned long long* bar) {
    if (c.b1 > c.b0)
        r_bulk_copy(c.dst + (c.b0 - c.a), reinterpret_cast<const void*>(c.b0), (unsigned int)(c.b1 - c.b0), bar);
}

// The producer warp: the copy of tile `tile` of the n items at `in` into the block's k-th stage
// (the items R_ITEM_SHIFT bytes past a 16-byte boundary, as the stage holds them).
__device__ __forceinline__ r_tile_copy r_items_copy(const r_in* __restrict__ in, r_size n, r_size tile,
                                                    unsigned int k, unsigned char* stages) {
    const unsigned long long lo = (unsigned long long)in;
    return r_tile_copy_of(lo + tile * R_TILE * sizeof(r_in), (unsigned long long)R_TILE * sizeof(r_in),
                          lo + n * sizeof(r_in), (lo & 15u) == R_ITEM_SHIFT, r_stage_items_at(stages, k));
}

// The producer warp: fills the block's k-th stage by the copies `c` (the stage's tile before it,
// k - R_PIPE, must have been read: r_stage_free_wait). A lane's plain stores into the stage's
// shared memory before this call are seen by the threads that wait for `full`.
template <int C>
__device__ __forceinline__ void r_produce_copies(const r_tile_copy (&c)[C], unsigned int k, unsigned long long* full) {
    unsigned int bulk = 0;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        r_tile_copy_lanes(c[j]);
        bulk += r_tile_copy_bulk_bytes(c[j]);
    }
    if ((threadIdx.x & (R_WARP - 1)) == 0) {
        // The threads' reads of the stage's last tile (ordered before this by the `empty`
        // barrier) and any plain stores into it (the lanes' bytes) come before the bulk
        // copies, in the async proxy, write it.
        r_async_fence();
        r_mbar_arrive_expect(&full[k % R_PIPE], bulk);
#pragma unroll
        for (int j = 0; j < C; ++j) r_tile_copy_bulk(c[j], &full[k % R_PIPE]);
    } else {
        r_mbar_arrive(&full[k % R_PIPE]);
    }
}

// The producer warp: fills stage k % R_PIPE with tile `tile` of the n items at `in`, the
// block's k-th.
__device__ __forceinline__ void r_produce_tile(const r_in* __restrict__ in, r_size n, r_size tile, unsigned int k,
                                               unsigned char* stages, unsigned long long* full) {
    const r_tile_copy items[1] = {r_items_copy(in, n, tile, k, stages)};
    r_produce_copies(items, k, full);
}

// The producer warp: waits until stage k % R_PIPE is free for the block's k-th tile (every
// thread has read the stage's tile before, k - R_PIPE).
__device__ __forceinline__ void r_stage_free_wait(unsigned long long* empty, unsigned int k) {
    if (k >= R_PIPE) r_mbar_wait(&empty[k % R_PIPE], (k / R_PIPE - 1) & 1u);
}

// The producer warp: fills the stages with tiles [tile_begin, tile_end), in order.
template <typename Tile>
__device__ void r_produce(const r_in* __restrict__ in, r_size n, Tile tile_begin, Tile tile_end,
                          unsigned char* stages, unsigned long long* full, unsigned long long* empty) {
    for (Tile tile = tile_begin; tile < tile_end; ++tile) {
        const unsigned int k = (unsigned int)(tile - tile_begin);
        r_stage_free_wait(empty, k);
        r_produce_tile(in, n, (r_size)tile, k, stages, full);
    }
}

// The threads' side: waits for the block's k-th tile's stage (k counted from the block's first
// tile) and returns where the tile's item 0 lies in it.
__device__ __forceinline__ const unsigned char* r_stage_wait(unsigned char* stages, unsigned long long* full,
                                                             unsigned int k) {
    r_mbar_wait(&full[k % R_PIPE], (k / R_PIPE) & 1u);
    return r_stage_items_at(stages, k);
}

// The threads' side: this thread has read the block's k-th tile's stage (each thread arrives
// after its own last read: its reads are ordered before the refill by its own release).
__device__ __forceinline__ void r_stage_release(unsigned long long* empty, unsigned int k) {
    r_mbar_arrive(&empty[k % R_PIPE]);
}

// The bank groups of shared memory: 8 of 16 bytes. Lanes whose runs (N vectors each) start a
// multiple of 8 vectors apart read the same group when they read their runs' vectors in the same
// order: with 4 vectors a run, a quarter warp's 8 lanes fall in 2 groups (4-way conflicts,
// measured as 3x the shared-load wavefronts of SegShuffle). Lane l therefore reads its vectors
// rotated by r_rot<N>(l) (the lanes of one group get different rotations), and the rotation is
// undone in registers, by log2(r_rotations(N)) stages of selects.
__device__ constexpr int r_rotations(int n) { return n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1; }
template <int N>
__device__ __forceinline__ unsigned int r_rot(unsigned int lane) {
    return (lane / (8 / r_rotations(N))) % r_rotations(N);
}

// The N vectors of an aligned run at p into out[], without bank conflicts (see r_rot).
template <int N>
__device__ __forceinline__ void r_stage_vectors(const uint4* p, uint4 (&out)[N]) {
    const unsigned int rot = r_rot<N>(threadIdx.x & (R_WARP - 1));
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = p[(k + rot) % N];
    // out[k] holds vector (k + rot) % N: rotate back by rot, one bit of it per stage.
#pragma unroll
    for (int bit = 1; bit < r_rotations(N); bit *= 2) {
        const bool on = (rot & bit) != 0;  // differs between lanes: selects, no branch
        uint4 t[N];
#pragma unroll
        for (int k = 0; k < N; ++k) t[k] = out[(k + N - bit) % N];
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] = on ? t[k] : out[k];
    }
}

#endif  // R_PIPE
