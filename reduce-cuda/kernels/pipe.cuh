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

// The producer warp: fills stage k % R_PIPE with tile `tile` of the n items at `in`, the
// block's k-th (the stage's tile before it, k - R_PIPE, must have been read: r_produce waits for
// that). The bytes of the tile that whole 16-byte blocks of global memory hold inside the
// caller's items go by one bulk copy; the few before the first and after the last such block
// (only at the items' own ends, or everywhere for an `in` that is not R_ITEM_SHIFT bytes past a
// boundary, which the runtime never passes) by the lanes, byte by byte, so that nothing outside
// the items is read.
__device__ __forceinline__ void r_produce_tile(const r_in* __restrict__ in, r_size n, r_size tile, unsigned int k,
                                               unsigned char* stages, unsigned long long* full) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned long long lo = (unsigned long long)in, hi = lo + n * sizeof(r_in);
    const bool aligned = (lo & 15u) == R_ITEM_SHIFT;
    const unsigned int stage = k % R_PIPE;
    const unsigned long long a = lo + tile * R_TILE * sizeof(r_in);
    const unsigned long long e = min(a + (unsigned long long)R_TILE * sizeof(r_in), hi);
    // dst holds byte a (R_ITEM_SHIFT bytes past the stage's 128-byte aligned start).
    unsigned char* dst = r_stage_items_at(stages, k);
    unsigned long long b0 = aligned ? (a + 15u) & ~15ull : e, b1 = aligned ? e & ~15ull : e;
    if (b1 < b0) b1 = b0;
    // The bytes outside [b0, b1): [a, b0) and [b1, e).
    const unsigned int head = (unsigned int)(b0 - a), tail = (unsigned int)(e - b1);
    for (unsigned int j = lane; j < head + tail; j += R_WARP) {
        const unsigned long long at = j < head ? a + j : b1 + (j - head);
        dst[at - a] = *reinterpret_cast<const unsigned char*>(at);
    }
    if (lane == 0) {
        // The threads' reads of the stage's last tile and their plain stores into it (the
        // scans write their outputs through the stage and swizzle runs in place), both
        // ordered before this by the `empty` barrier, and the lanes' bytes here come before
        // the bulk copy, in the async proxy, writes it.
        r_async_fence();
        r_mbar_arrive_expect(&full[stage], (unsigned int)(b1 - b0));
        if (b1 > b0)
            r_bulk_copy(dst + (b0 - a), reinterpret_cast<const void*>(b0), (unsigned int)(b1 - b0), &full[stage]);
    } else {
        r_mbar_arrive(&full[stage]);
    }
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

// The threads' side: this thread is done with the block's k-th tile's stage (each thread
// arrives after its own last read or store there: they are ordered before the refill by its
// own release).
__device__ __forceinline__ void r_stage_release(unsigned long long* empty, unsigned int k) {
    r_mbar_arrive(&empty[k % R_PIPE]);
}

#if R_VECS > 0
// The bank groups of shared memory: 8 of 16 bytes. Lanes whose runs (R_VECS vectors each) start
// a multiple of 8 vectors apart read the same group when they read their runs' vectors in the
// same order: with 4 vectors a run, a quarter warp's 8 lanes fall in 2 groups (4-way conflicts,
// measured as 3x the shared-load wavefronts of SegShuffle). Lane l therefore reads its vectors
// rotated by r_rot(l) (the lanes of one group get different rotations), and the rotation is
// undone in registers, by log2(R_ROTATIONS) stages of selects.
#define R_ROTATIONS (R_VECS % 8 == 0 ? 8 : R_VECS % 4 == 0 ? 4 : R_VECS % 2 == 0 ? 2 : 1)
__device__ __forceinline__ unsigned int r_rot(unsigned int lane) { return (lane / (8 / R_ROTATIONS)) % R_ROTATIONS; }

// The R_VECS vectors of an aligned run at p into out[], without bank conflicts (see r_rot).
__device__ __forceinline__ void r_stage_vectors(const uint4* p, uint4 (&out)[R_VECS]) {
    const unsigned int rot = r_rot(threadIdx.x & (R_WARP - 1));
#pragma unroll
    for (int k = 0; k < R_VECS; ++k) out[k] = p[(k + rot) % R_VECS];
    // out[k] holds vector (k + rot) % R_VECS: rotate back by rot, one bit of it per stage.
#pragma unroll
    for (int bit = 1; bit < R_ROTATIONS; bit *= 2) {
        const bool on = (rot & bit) != 0;  // differs between lanes: selects, no branch
        uint4 t[R_VECS];
#pragma unroll
        for (int k = 0; k < R_VECS; ++k) t[k] = out[(k + R_VECS - bit) % R_VECS];
#pragma unroll
        for (int k = 0; k < R_VECS; ++k) out[k] = on ? t[k] : out[k];
    }
}
#endif

#endif  // R_PIPE
