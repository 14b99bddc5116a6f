// SegMerge: merge-path segmented reduction (ours), owner or offsets form, one launch.
//
// THE PATH. The work is the merge of the N items with the S segment ends: end s (closing segment
// s) comes after the items of segments <= s. The path has N + S steps however the lengths are
// distributed. A coordinate (i items, s ends before it) is found from its diagonal d = i + s by a
// search over strictly increasing keys: ends[s] + s in the offsets form (ends[s] = offsets[s + 1];
// end s precedes item i iff ends[s] <= i), owner[i] + i in the owner form (item i precedes end s
// iff owner[i] <= s). Blocks own equal runs of whole tiles of R_TILE path steps, so every block
// and every tile holds at most R_TILE items and R_TILE segment ends.
//
// ORDER INVARIANT. Block b owns the path steps [D_b, D_b+1), blocks in order; its tiles run in
// order. Inside a tile [i0, i1) x [s0, s1), thread t folds the items [a_t, b_t) left to right
// (a_t increasing with t; the ranges tile [i0, i1)) and closes the segment ends at positions in
// (a_t, b_t] (thread 0: [i0, b_0]). A thread's pieces — its first segment's part before its
// first close (`head`) and the run open at its end — are joined with the neighbours by an
// exclusive segmented scan over the threads (warp shuffles at increasing offsets, then warps in
// order, continuing the previous tiles' carry; every m_combine is (earlier, later)): the segment
// open at a thread's start gets (prefix ⊕ head). Across blocks, the last block to finish scans
// the per-block records (entry segment's in-block part, exit segment's open value) in block
// order (r_join_records). So every segment is folded left to right, for any associative monoid.
//
// EXACTLY ONCE. Each tile's segment ids are [s0, s1); their values are staged in shared memory
// (kept at the identity between tiles, so empty segments need no work) and copied out coalesced
// once per tile. A non-empty segment is closed by exactly one thread: the owner of its end; the
// entry segment of block b > 0 is finished by the last block instead.
//
// PIPELINE. A block streams its items, and its keys (segment ends or owners), through rings of
// R_RING chunks of R_TILE elements in shared memory: cp.async copies (16-byte pieces mirroring
// the global alignment, swizzled against bank conflicts) that arrive on one mbarrier per chunk. A
// chunk is refilled R_RING chunks ahead once the block has consumed it, so R_RING - 2 chunks per
// stream stay in flight while a tile is reduced. Items are read in groups of R_GROUP items (whole
// 16-byte pieces). Item types whose size is not a multiple of 4 bytes, and items that are not
// 16-byte aligned (R_PLAIN_ITEMS), are copied with plain loads (at the same ring offsets).
//
// VALIDATION (validate != 0), fused: every key of every block's stream is compared with the one
// before it when its chunk is released (and owners with S); consecutive blocks must meet where
// their searches put them; block 0 checks offsets[0] = 0, the last block offsets[S] = N. Any
// failure sets *status to 0 (the host then finds the first bad index). A bad layout never makes
// the kernel read or write out of bounds: coordinates are clamped to the block's streams and
// every loop is bounded.
//
// Parameters: R_BLOCK threads (a power of two); R_STEPS path steps per thread and tile (a power
// of two); R_RING chunks per ring (>= 3); R_OFFSETS (1: offsets form, 0: owner form); R_IDX64
// (offsets/owners are u64); R_PLAIN_ITEMS. Requires sm_80 (cp.async, mbarrier).

#define R_TILE (R_BLOCK * R_STEPS)
#define R_NONE 0xffffffffu

__host__ __device__ constexpr unsigned int r_gcd(unsigned int a, unsigned int b) { return b == 0 ? a : r_gcd(b, a % b); }
// Items per group: the fewest whole items that fill whole 16-byte pieces.
#define R_GROUP (16u / r_gcd((unsigned int)sizeof(r_in), 16u))
#define R_GROUP_VECS (R_GROUP * sizeof(r_in) / 16)
#define R_ITEMS_ASYNC (sizeof(r_in) % 4 == 0 && !R_PLAIN_ITEMS)  // then `in` is 16-byte aligned

union r_group {
    uint4 v[R_GROUP_VECS];
    r_in m[R_GROUP];
};

// ---------------------------------------------------------------- thread level: async copies

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ unsigned int r_smem(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void r_bar_init(unsigned long long* bar, unsigned int count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(r_smem(bar)), "r"(count) : "memory");
}

// Arrives once this thread's earlier cp.async copies have landed (counts as its arrival).
__device__ __forceinline__ void r_bar_arrive_async(unsigned long long* bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(r_smem(bar)) : "memory");
}

// Arrives now (release: this thread's earlier shared-memory stores are visible to the waiters).
__device__ __forceinline__ void r_bar_arrive(unsigned long long* bar) {
    asm volatile("{ .reg .b64 state; mbarrier.arrive.shared.b64 state, [%0]; }" ::"r"(r_smem(bar)) : "memory");
}

// Waits for the completion of the barrier's phase with this parity.
__device__ __forceinline__ void r_bar_wait(unsigned long long* bar, unsigned int parity) {
    unsigned int done = 0;
    do {
#if __CUDA_ARCH__ >= 900
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(r_smem(bar)), "r"(parity) : "memory");
#else
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(r_smem(bar)), "r"(parity) : "memory");
#endif
    } while (!done);
}

__device__ __forceinline__ void r_cp_async16(unsigned int dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(__cvta_generic_to_global(src)) : "memory");
}

__device__ __forceinline__ void r_cp_async4(unsigned int dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(__cvta_generic_to_global(src)) : "memory");
}

// Waits until every cp.async this thread issued has landed.
__device__ __forceinline__ void r_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
#else
// The CPU emulator (tests/emu/cuda_emu.hpp): shared addresses are offsets into the block's dynamic
// shared memory (the rings'); a cp.async poisons its destination and lands when the barrier its
// thread's arrival goes to completes.
__device__ __forceinline__ unsigned int r_smem(const void* p) { return emu::smem_offset(p); }
__device__ __forceinline__ void r_bar_init(unsigned long long* bar, unsigned int count) { emu::mbar_init(bar, count); }
__device__ __forceinline__ void r_bar_arrive_async(unsigned long long* bar) { emu::cp_async_arrive(bar); }
__device__ __forceinline__ void r_bar_arrive(unsigned long long* bar) { emu::mbar_arrive(bar, 0); }
__device__ __forceinline__ void r_bar_wait(unsigned long long* bar, unsigned int parity) { emu::mbar_wait(bar, parity); }
__device__ __forceinline__ void r_cp_async16(unsigned int dst, const void* src) { emu::cp_async(dst, src, 16); }
__device__ __forceinline__ void r_cp_async4(unsigned int dst, const void* src) { emu::cp_async(dst, src, 4); }
__device__ __forceinline__ void r_cp_async_wait_all() { emu::cp_async_wait_all(); }
#endif

// ---------------------------------------------------------------- block level: rings

// A stream of T values through a shared-memory ring. Element j (j >= origin) lies in chunk
// c = (j - origin) / R_TILE, slot c % R_RING, at byte `mis + slot * R_TILE * sizeof(T) +
// ((j - origin) % R_TILE) * sizeof(T)` of the ring, where `mis` is the source's address modulo
// 16 (0 for plain copies): global and shared addresses then agree modulo 16, so 16-byte pieces
// are aligned on both sides. Bits 4-6 of an offset are XOR-ed with bits 7-9 (a 16-byte piece
// moves inside its 128-byte line) when elements never straddle pieces, so that threads reading
// pieces 64 bytes apart hit different banks.
template <class T>
struct r_ring {
    unsigned char* base;
    const T* src;
    r_size origin, begin, end;  // origin: a multiple of 16 elements at or below begin
    unsigned int mis;
    unsigned int chunks;     // chunks from origin holding [begin, end)
    unsigned int next_fill;  // the next chunk to fill
};

template <class T>
__host__ __device__ constexpr bool r_swizzles() {
    return 16 % sizeof(T) == 0 && (R_TILE * sizeof(T)) % 128 == 0;
}

template <class T>
__device__ __forceinline__ unsigned int r_swizzle(unsigned int byte) {
    if constexpr (r_swizzles<T>()) return byte ^ (((byte >> 7) & 7u) << 4);
    else return byte;
}

// Byte offset (before the swizzle) of element j.
template <class T>
__device__ __forceinline__ unsigned int r_ring_byte(const r_ring<T>& r, r_size j) {
    const unsigned int rel = (unsigned int)(j - r.origin);
    return r.mis + ((rel / R_TILE) % R_RING) * (unsigned int)(R_TILE * sizeof(T)) + (rel % R_TILE) * (unsigned int)sizeof(T);
}

template <class T>
__device__ __forceinline__ T r_at(const r_ring<T>& r, r_size j) {
    return *reinterpret_cast<const T*>(r.base + r_swizzle<T>(r_ring_byte(r, j)));
}

template <class T>
__device__ __forceinline__ r_ring<T> r_ring_make(unsigned char* base, const T* src, r_size begin, r_size end, bool async) {
    r_ring<T> r;
    r.base = base;
    r.src = src;
    r.begin = begin;
    r.end = end;
    r.origin = begin & ~15ull;
    r.mis = async ? (unsigned int)((unsigned long long)src & 15ull) : 0u;
    r.chunks = end > begin ? (unsigned int)((end - r.origin + R_TILE - 1) / R_TILE) : 0u;
    r.next_fill = 0;
    return r;
}

// This thread's share of copying chunk q (the part in [begin, end), widened to whole 16-byte
// pieces inside the source's [begin, end) bytes).
template <bool ASYNC, class T>
__device__ void r_ring_copy(const r_ring<T>& r, unsigned int q) {
    const r_size lo = r.origin + (r_size)q * R_TILE;
    const r_size a = lo > r.begin ? lo : r.begin;
    const r_size b = lo + R_TILE < r.end ? lo + R_TILE : r.end;
    if (a >= b) return;
    if constexpr (ASYNC) {
        // Bytes [u0, u1): 4-byte pieces up to the first 16-byte boundary, 16-byte pieces, 4-byte tail.
        const char* g = reinterpret_cast<const char*>(r.src);
        const unsigned long long u0 = (unsigned long long)(g + a * sizeof(T)), u1 = (unsigned long long)(g + b * sizeof(T));
        const unsigned long long a16 = (u0 + 15ull) & ~15ull, b16 = u1 & ~15ull;
        const unsigned long long head_end = a16 < u1 ? a16 : u1;
        const unsigned int heads = (unsigned int)((head_end - u0) / 4);
        const unsigned int bodies = b16 > a16 ? (unsigned int)((b16 - a16) / 16) : 0u;
        const unsigned long long tail_begin = b16 > a16 ? b16 : head_end;
        const unsigned int tails = (unsigned int)((u1 - tail_begin) / 4);
        const unsigned int s0 = r_smem(r.base);
        const unsigned int b0 = r_ring_byte(r, a);  // ring byte of u0
        const char* gp = reinterpret_cast<const char*>(u0);
        for (unsigned int off = 4 * threadIdx.x; off < 4 * heads; off += 4 * R_BLOCK)
            r_cp_async4(s0 + r_swizzle<T>(b0 + off), gp + off);
        const unsigned int body = (unsigned int)(a16 - u0);
        for (unsigned int off = body + 16 * threadIdx.x; off < body + 16 * bodies; off += 16 * R_BLOCK)
            r_cp_async16(s0 + r_swizzle<T>(b0 + off), gp + off);
        const unsigned int tail = (unsigned int)(tail_begin - u0);
        for (unsigned int off = tail + 4 * threadIdx.x; off < tail + 4 * tails; off += 4 * R_BLOCK)
            r_cp_async4(s0 + r_swizzle<T>(b0 + off), gp + off);
    } else {
        for (r_size j = a + threadIdx.x; j < b; j += R_BLOCK)
            *reinterpret_cast<T*>(r.base + r_swizzle<T>(r_ring_byte(r, j))) = r.src[j];
    }
}

// Waits for the chunks of the ring that hold [from, to).
template <class T>
__device__ __forceinline__ void r_ring_wait(const r_ring<T>& r, unsigned long long* bars, r_size from, r_size to) {
    if (from >= to) return;
    const unsigned int q0 = (unsigned int)((from - r.origin) / R_TILE);
    const unsigned int q1 = (unsigned int)((to - 1 - r.origin) / R_TILE);
    for (unsigned int q = q0; q <= q1; ++q) r_bar_wait(&bars[q % R_RING], (q / R_RING) & 1u);
}

// Chunks below `consumed` are free: fill the chunks R_RING ahead of them. Every thread of the
// block calls it with the same arguments (one arrival per thread per chunk). `second` is copied
// with the same chunk numbers and barriers (the owner form's owners), or is null.
template <bool ASYNC, class T, class U>
__device__ void r_ring_refill(r_ring<T>& r, r_ring<U>* second, unsigned long long* bars, r_size consumed) {
    const unsigned int freed = consumed > r.origin ? (unsigned int)((consumed - r.origin) / R_TILE) : 0u;
    while (r.next_fill < r.chunks && r.next_fill < freed + R_RING) {
        const unsigned int q = r.next_fill++;
        r_ring_copy<ASYNC>(r, q);
        if (second) {
            r_ring_copy<ASYNC>(*second, q);
            second->next_fill = r.next_fill;
        }
        if constexpr (ASYNC) r_bar_arrive_async(&bars[q % R_RING]);
        else r_bar_arrive(&bars[q % R_RING]);
    }
}

// ---------------------------------------------------------------- merge-path searches

// How many of the strictly increasing keys key(j) = base[j] + j, j in [lo, hi), are below d:
// the first j with key(j) >= d (hi if none; any value in [lo, hi] if the keys do not increase).
// Warp-cooperative 33-ary search; `load(j)` reads base[j]. All 32 lanes call it.
template <class Load>
__device__ __forceinline__ r_size r_warp_merge_search(Load load, r_size lo, r_size hi, r_size d) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    while (lo < hi) {
        const r_size span = hi - lo;
        const r_size probe = span <= 32 ? lo + lane : lo + span * (lane + 1) / 33;
        const bool ge = probe < hi && (r_size)load(probe) + probe >= d;
        const unsigned int at_or_past = __ballot_sync(R_FULL_MASK, ge);
        if (span <= 32) return at_or_past ? lo + __ffs(at_or_past) - 1 : hi;
        const int first = at_or_past ? __ffs(at_or_past) - 1 : 32;
        const r_size new_hi = first < 32 ? __shfl_sync(R_FULL_MASK, probe, first) : hi;
        const r_size new_lo = first > 0 ? __shfl_sync(R_FULL_MASK, probe, first > 0 ? first - 1 : 0) + 1 : lo;
        lo = new_lo;
        hi = new_hi;
    }
    return lo;
}

// ---------------------------------------------------------------- thread level: the walk

// A thread's walk state: the run open at its end, its first closed segment's head part.
struct r_walk {
    M run, head;
    unsigned int first;  // tile-relative id of the first segment it closed (R_NONE: none)
};

// Closes tile-relative segment `sr` with the thread's run.
__device__ __forceinline__ void r_close(r_walk& w, M* stage, unsigned int sr) {
    if (w.first == R_NONE) {
        w.head = w.run;
        w.first = sr;
    } else {
        stage[sr] = w.run;
    }
    w.run = m_identity();
}

// The owners of the R_GROUP items from `first`: vector loads when they fill whole aligned
// pieces, else one by one.
__device__ __forceinline__ void r_load_owner_group(const r_ring<r_idx>& owners, r_size first, r_idx (&o)[R_GROUP]) {
    constexpr unsigned int bytes = R_GROUP * sizeof(r_idx);
    if (owners.mis == 0 && bytes % 8 == 0) {
        const unsigned int byte = r_ring_byte(owners, first);
        if constexpr (bytes % 16 == 0) {
            union { uint4 v[(bytes + 15) / 16]; r_idx k[R_GROUP]; } u;
#pragma unroll
            for (int v = 0; v < (int)(bytes / 16); ++v)
                u.v[v] = *reinterpret_cast<const uint4*>(owners.base + r_swizzle<r_idx>(byte + 16 * v));
#pragma unroll
            for (int k = 0; k < (int)R_GROUP; ++k) o[k] = u.k[k];
        } else {
            union { uint2 v; r_idx k[R_GROUP]; } u;
            u.v = *reinterpret_cast<const uint2*>(owners.base + r_swizzle<r_idx>(byte));
#pragma unroll
            for (int k = 0; k < (int)R_GROUP; ++k) o[k] = u.k[k];
        }
    } else {
#pragma unroll
        for (int k = 0; k < (int)R_GROUP; ++k) o[k] = r_at(owners, first + k);
    }
}

// Folds the items of groups [ga, gb) that fall in the thread's tile-relative range [a, b),
// calling `before(p, owner)` ahead of each item p (the walk's merge with the segment ends; the
// item's owner when `owners` is given, else 0).
template <class Before>
__device__ __forceinline__ void r_fold_groups(const r_ring<r_in>& items, const r_ring<r_idx>* owners, r_size i0,
                                              r_size gbase, unsigned int ga, unsigned int gb, unsigned int a,
                                              unsigned int b, r_walk& w, Before before) {
    for (unsigned int g = ga; g < gb; ++g) {
        r_group grp;
        const r_size first = gbase + (r_size)g * R_GROUP;  // absolute index of the group's first item
        const unsigned int byte = r_ring_byte(items, first);     // 16-byte aligned (items: mis = 0)
#pragma unroll
        for (int v = 0; v < (int)R_GROUP_VECS; ++v)
            grp.v[v] = *reinterpret_cast<const uint4*>(items.base + r_swizzle<r_in>(byte + 16 * v));
        r_idx o[R_GROUP];
        if (owners) r_load_owner_group(*owners, first, o);
        else {
#pragma unroll
            for (int k = 0; k < (int)R_GROUP; ++k) o[k] = 0;
        }
        const unsigned int p0 = (unsigned int)(first - i0);
        if (first >= i0 && p0 >= a && p0 + R_GROUP <= b) {
#pragma unroll
            for (int k = 0; k < (int)R_GROUP; ++k) {
                before(p0 + k, o[k]);
                w.run = m_combine(w.run, m_lift(grp.m[k], first + k));
            }
        } else {
#pragma unroll
            for (int k = 0; k < (int)R_GROUP; ++k) {
                const unsigned int p = p0 + k;
                if (first + k >= i0 && p >= a && p < b) {
                    before(p, o[k]);
                    w.run = m_combine(w.run, m_lift(grp.m[k], first + k));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the kernel

// One launch. rec_vals: 2 * gridDim.x M; rec_meta: 3 * gridDim.x r_size (see r_join_records);
// *ticket is 0 on entry and left 0; *status is R_NO_INDEX on entry, set to 0 by a failed check
// and reset by the last block (no memset per call); *status_out (when not null: a word of host
// memory mapped for the device) receives the final *status from the last block, so that the
// caller reads it after the launch without a copy.
// Dynamic shared memory: the item ring, the key ring (ends or owners), two output stages.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_seg_merge(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ index, r_size segments,
                 M* __restrict__ out, M* __restrict__ rec_vals, r_size* __restrict__ rec_meta,
                 unsigned int* __restrict__ ticket, unsigned long long* __restrict__ status, r_size validate,
                 unsigned long long* __restrict__ status_out) {
    extern __shared__ __align__(16) unsigned char r_dyn[];
    __shared__ unsigned long long s_bars[2][R_RING];  // [0]: items (and owners), [1]: ends
    __shared__ r_seg s_agg[2][R_WARP + 1];            // alternating per tile
    __shared__ M s_warps[2][R_BLOCK / R_WARP];        // alternating per tile
    __shared__ r_size s_coord[2][2];                  // the block's (items, ends) at its start and end
    __shared__ M s_entry_val;

    // Each ring has a line of slack: `mis` shifts it by up to 15 bytes, and the swizzle moves a
    // piece within its 128-byte line.
    constexpr unsigned int item_ring_bytes = ((R_RING * R_TILE * sizeof(r_in) + 128 + 15) / 16) * 16;
    constexpr unsigned int key_ring_bytes = ((R_RING * R_TILE * sizeof(r_idx) + 128 + 15) / 16) * 16;
    M* s_stage = reinterpret_cast<M*>(r_dyn + item_ring_bytes + key_ring_bytes);  // 2 * R_TILE

#if R_OFFSETS
    const r_idx* keys = index + 1;  // ends[s] = offsets[s + 1]
    const r_size key_count = segments, other_count = n;
#else
    const r_idx* keys = index;  // owner[i]
    const r_size key_count = n, other_count = segments;
#endif
    const r_size path = n + segments;
    const r_size tiles = (path + R_TILE - 1) / R_TILE;
    const r_size b = blockIdx.x;
    const r_size q = tiles / gridDim.x, rem = tiles % gridDim.x;
    const r_size tile_begin = b * q + (b < rem ? b : rem);
    const r_size tile_end = tile_begin + q + (b < rem ? 1 : 0);
    const r_size d_begin = tile_begin * R_TILE;
    const r_size d_end = tile_end * R_TILE < path ? tile_end * R_TILE : path;
    const unsigned int lane = threadIdx.x & (R_WARP - 1);

    if (threadIdx.x == 0) {
        for (int k = 0; k < R_RING; ++k) {
            r_bar_init(&s_bars[0][k], R_BLOCK);
            r_bar_init(&s_bars[1][k], R_BLOCK);
        }
        s_entry_val = m_identity();
    }
    for (unsigned int k = threadIdx.x; k < 2 * R_TILE; k += R_BLOCK) s_stage[k] = m_identity();
    // The block's coordinates: warp 0 searches its first diagonal, warp 1 its end.
    for (unsigned int w = threadIdx.x / R_WARP; w < 2; w += R_BLOCK / R_WARP) {
        const r_size d = w ? d_end : d_begin;
        const r_size lo = d > other_count ? d - other_count : 0;
        const r_size hi = d < key_count ? d : key_count;
        const r_size x = d == 0 ? 0 : d == path ? key_count : r_warp_merge_search([&](r_size j) { return keys[j]; }, lo, hi, d);
        if (lane == 0) {
#if R_OFFSETS
            s_coord[w][0] = d - x;
            s_coord[w][1] = x;
#else
            s_coord[w][0] = x;
            s_coord[w][1] = d - x;
#endif
        }
    }
    __syncthreads();
    const r_size block_i = s_coord[0][0], block_s = s_coord[0][1];
    const r_size end_i = s_coord[1][0] > block_i ? s_coord[1][0] : block_i;  // clamped: a bad layout
    const r_size end_s = s_coord[1][1] > block_s ? s_coord[1][1] : block_s;  // may invert them
    bool bad = false;
    if (validate) {
        bad = s_coord[1][0] < block_i || s_coord[1][1] < block_s;
#if R_OFFSETS
        if (b == 0 && index[0] != 0) bad = true;
        if (d_end == path && (r_size)index[segments] != n) bad = true;
#endif
    }
    r_ring<r_in> items = r_ring_make(r_dyn, in, block_i, end_i, R_ITEMS_ASYNC);
#if R_OFFSETS
    r_ring<r_idx> ring_keys = r_ring_make(r_dyn + item_ring_bytes, keys, block_s, end_s, true);
    r_ring_refill<R_ITEMS_ASYNC, r_in, r_in>(items, nullptr, s_bars[0], block_i);
    r_ring_refill<true, r_idx, r_idx>(ring_keys, nullptr, s_bars[1], block_s);
    unsigned long long* key_bars = s_bars[1];
    // The key before the block's first: offsets[block_s] (ends[block_s - 1], or offsets[0]).
    r_idx checked_last = validate ? index[block_s] : 0;
#else
    r_ring<r_idx> ring_keys = r_ring_make(r_dyn + item_ring_bytes, keys, block_i, end_i, R_ITEMS_ASYNC);
    r_ring_refill<R_ITEMS_ASYNC, r_in, r_idx>(items, &ring_keys, s_bars[0], block_i);
    unsigned long long* key_bars = s_bars[0];
    r_idx checked_last = validate && block_i > 0 ? index[block_i - 1] : 0;
#endif
    unsigned int checked = 0;  // key chunks checked so far (validation)
    const bool has_entry = d_begin > 0;  // the segment open at the start began in an earlier block

    r_size i0 = block_i, s0 = block_s;  // the tile's start coordinate
    r_seg carry = r_seg_identity();
    for (r_size tile = tile_begin; tile < tile_end; ++tile) {
        const unsigned int parity = (unsigned int)((tile - tile_begin) & 1);
        M* stage = s_stage + parity * R_TILE;
        const r_size d0 = tile * R_TILE;
        const unsigned int len = (unsigned int)(d_end - d0 < R_TILE ? d_end - d0 : R_TILE);
        const unsigned int avail_i = (unsigned int)(end_i - i0 < len ? end_i - i0 : len);
        const unsigned int avail_s = (unsigned int)(end_s - s0 < len ? end_s - s0 : len);
        r_ring_wait(items, s_bars[0], i0, i0 + avail_i);
#if R_OFFSETS
        r_ring_wait(ring_keys, key_bars, s0, s0 + avail_s);
#endif

        // The tile's end: every warp searches it in the rings (no barrier needed).
        r_size x, y;  // items and ends of the tile
        {
#if R_OFFSETS
            const r_size lo = len > avail_i ? len - avail_i : 0, hi = avail_s;
            y = r_warp_merge_search([&](r_size j) { return r_at(ring_keys, s0 + j) - (r_idx)i0; }, lo, hi, (r_size)len);
            x = len - y;
#else
            const r_size lo = len > avail_s ? len - avail_s : 0, hi = avail_i;
            x = r_warp_merge_search([&](r_size j) { return r_at(ring_keys, i0 + j) - (r_idx)s0; }, lo, hi, (r_size)len);
            y = len - x;
#endif
        }
        const unsigned int nx = (unsigned int)x, ny = (unsigned int)y;

        // This thread's items: whole groups (aligned from the ring's origin), split evenly.
        const r_size gbase = items.origin;
        const unsigned int g0 = (unsigned int)((i0 - gbase) / R_GROUP);
        const unsigned int g1 = (unsigned int)((i0 + nx - gbase + R_GROUP - 1) / R_GROUP);
        const unsigned int ga = g0 + (unsigned int)(((unsigned long long)threadIdx.x * (g1 - g0)) / R_BLOCK);
        const unsigned int gb = g0 + (unsigned int)(((unsigned long long)(threadIdx.x + 1) * (g1 - g0)) / R_BLOCK);
        const unsigned int ig = (unsigned int)(gbase + (r_size)ga * R_GROUP > i0 ? gbase + (r_size)ga * R_GROUP - i0 : 0);
        const unsigned int a = ig < nx ? ig : nx;  // tile-relative [a, bb)
        const unsigned int jg = (unsigned int)(gbase + (r_size)gb * R_GROUP > i0 ? gbase + (r_size)gb * R_GROUP - i0 : 0);
        const unsigned int bb = threadIdx.x == R_BLOCK - 1 ? nx : (jg < nx ? jg : nx);

        r_walk w;
        w.run = m_identity();
        w.head = m_identity();
        w.first = R_NONE;
        if (threadIdx.x == 0 || a < bb) {
#if R_OFFSETS
            // Tile-relative end positions; this thread closes the ends in (a, bb] (thread 0: [0, bb]).
            auto end_at = [&](unsigned int sr) { return (unsigned int)(r_at(ring_keys, s0 + sr) - (r_idx)i0); };
            unsigned int sr = 0;
            if (threadIdx.x > 0) {  // the ends at or before a belong to earlier threads
                unsigned int lo = 0, hi = ny;
                while (lo < hi) {
                    const unsigned int mid = (lo + hi) / 2;
                    if (end_at(mid) <= a) lo = mid + 1; else hi = mid;
                }
                sr = lo;
            }
            unsigned int next = sr < ny ? end_at(sr) : R_NONE;
            // After a close at position p: skip the empty segments also ending at p (galloping).
            auto skip_empties = [&](unsigned int p) {
                ++sr;
                if (sr < ny && end_at(sr) <= p) {
                    unsigned int step = 1;
                    while (sr + step < ny && end_at(sr + step) <= p) step *= 2;
                    unsigned int lo = sr + step / 2 + 1, hi = sr + step < ny ? sr + step : ny;
                    while (lo < hi) {
                        const unsigned int mid = (lo + hi) / 2;
                        if (end_at(mid) <= p) lo = mid + 1; else hi = mid;
                    }
                    sr = lo;
                }
                next = sr < ny ? end_at(sr) : R_NONE;
            };
            if (next > bb) {
                r_fold_groups(items, nullptr, i0, gbase, ga, gb, a, bb, w, [](unsigned int, r_idx) {});
            } else {
                r_fold_groups(items, nullptr, i0, gbase, ga, gb, a, bb, w, [&](unsigned int p, r_idx) {
                    if (next <= p) {
                        r_close(w, stage, sr);
                        skip_empties(p);
                    }
                });
                if (next <= bb && sr < ny) {
                    r_close(w, stage, sr);
                    skip_empties(bb);
                }
            }
#else
            // Owners: this thread's segments run from its first item's owner (thread 0: s0) to
            // the owner of the item after its range (the tile's end: s1), exclusive.
            auto owner_at = [&](unsigned int p) { return (unsigned int)(r_at(ring_keys, i0 + p) - (r_idx)s0); };
            unsigned int cur = threadIdx.x == 0 ? 0u : owner_at(a);
            const unsigned int after = bb < nx ? owner_at(bb) : ny;  // the segment open after my range
            if (a < bb && owner_at(bb - 1) == cur) {
                r_fold_groups(items, nullptr, i0, gbase, ga, gb, a, bb, w, [](unsigned int, r_idx) {});
            } else {
                r_fold_groups(items, &ring_keys, i0, gbase, ga, gb, a, bb, w, [&](unsigned int, r_idx owner) {
                    const unsigned int o = (unsigned int)(owner - (r_idx)s0);
                    if (o != cur) {
                        if (cur < ny) r_close(w, stage, cur);
                        cur = o;
                    }
                });
            }
            if (after != cur && cur < ny) r_close(w, stage, cur);
#endif
        }

        // Join the walks with the previous tiles' carry.
        if (ny == 0) {
            // No segment closes in this tile: fold the walks in thread order onto the carry
            // (warp trees with increasing offsets, then the warps in order).
            const M v = r_warp_reduce(w.run);
            if (lane == 0) s_warps[parity][threadIdx.x / R_WARP] = v;
            __syncthreads();
            M t = carry.v;
#pragma unroll
            for (unsigned int k = 0; k < R_BLOCK / R_WARP; ++k) t = m_combine(t, s_warps[parity][k]);
            carry.v = t;
        } else {
            // Block-wide segmented scan continuing the previous tiles' carry.
            r_seg element;
            element.flag = w.first != R_NONE ? 1u : 0u;
            element.v = w.run;
            r_seg total;
            const r_seg before = r_block_seg_exclusive(element, [&] { return carry; }, s_agg[parity], &total);
            carry = total;
            // The segment open at this walk's start closes at its first close.
            if (w.first != R_NONE) {
                const M value = m_combine(before.v, w.head);
                if (!before.flag && has_entry) s_entry_val = value;  // the block's entry: finished by the last block
                else stage[w.first] = value;
            }
        }

        // Validation: check the key chunks this tile releases (all walks are done).
        const r_size next_i = i0 + nx, next_s = s0 + ny;
        if (validate) {
#if R_OFFSETS
            const r_size consumed = next_s;
#else
            const r_size consumed = next_i;
#endif
            const unsigned int freed = consumed > ring_keys.origin ? (unsigned int)((consumed - ring_keys.origin) / R_TILE) : 0u;
            for (; checked < freed && checked < ring_keys.chunks; ++checked) {
                const r_size lo = ring_keys.origin + (r_size)checked * R_TILE;
                const r_size from = lo > ring_keys.begin ? lo : ring_keys.begin;
                const r_size to = lo + R_TILE < ring_keys.end ? lo + R_TILE : ring_keys.end;
                for (r_size j = from + threadIdx.x; j < to; j += R_BLOCK) {
                    const r_idx k = r_at(ring_keys, j);
                    const r_idx prev = j == from ? checked_last : r_at(ring_keys, j - 1);
                    if (k < prev) bad = true;
#if !R_OFFSETS
                    if ((r_size)k >= segments) bad = true;
#endif
                }
                if (to > from) checked_last = r_at(ring_keys, to - 1);
            }
        }
        if (ny != 0 || validate) __syncthreads();  // (without closes or checks: the fold's barrier)

        // Copy the tile's segments [s0, s0 + ny) out, coalesced (not the block's entry), and leave
        // the stage at the identity; then refill the chunks this tile consumed.
        for (unsigned int k = threadIdx.x; k < ny; k += R_BLOCK) {
            const M v = stage[k];
            stage[k] = m_identity();
            if (!(has_entry && s0 + k == block_s)) out[s0 + k] = v;
        }
#if R_OFFSETS
        r_ring_refill<R_ITEMS_ASYNC, r_in, r_in>(items, nullptr, s_bars[0], next_i);
        r_ring_refill<true, r_idx, r_idx>(ring_keys, nullptr, key_bars, next_s);
#else
        r_ring_refill<R_ITEMS_ASYNC, r_in, r_idx>(items, &ring_keys, s_bars[0], next_i);
#endif
        i0 = next_i;
        s0 = next_s;
    }
    if (validate) {
        // The chunks still held (a bad layout may have left some unread: wait for them).
        for (; checked < ring_keys.next_fill; ++checked) {
            const r_size lo = ring_keys.origin + (r_size)checked * R_TILE;
            const r_size from = lo > ring_keys.begin ? lo : ring_keys.begin;
            const r_size to = lo + R_TILE < ring_keys.end ? lo + R_TILE : ring_keys.end;
            r_ring_wait(ring_keys, key_bars, from, to);
            for (r_size j = from + threadIdx.x; j < to; j += R_BLOCK) {
                const r_idx k = r_at(ring_keys, j);
                const r_idx prev = j == from ? checked_last : r_at(ring_keys, j - 1);
                if (k < prev) bad = true;
#if !R_OFFSETS
                if ((r_size)k >= segments) bad = true;
#endif
            }
            if (to > from) checked_last = r_at(ring_keys, to - 1);
        }
        // A safety net: where the checks above pass, the tiles' searches end where the block's
        // did. Every tile moves i0 + s0 by its length, so they end at d_end = end_i + end_s
        // (unless clamped above, already bad): the segments' coordinate alone says if both met.
        if (s0 != end_s) bad = true;
        if (bad) atomicMin(status, 0ull);
    }
    // Copies a bad layout left unread must land before the block's shared memory is released.
    r_cp_async_wait_all();
    __syncthreads();

    // Export this block's record; the last block to finish joins the records in block order.
    if (threadIdx.x == 0) {
        rec_vals[2 * b] = s_entry_val;
        rec_vals[2 * b + 1] = carry.v;
        rec_meta[3 * b] = has_entry ? block_s : R_NO_SEG64;
        rec_meta[3 * b + 1] = s0 < segments ? s0 : R_NO_SEG64;
        rec_meta[3 * b + 2] = carry.flag ? 0u : 1u;
    }
    if (!r_last_block(ticket)) return;
    // Every block's report reached *status before its ticket (the fence above): the caller
    // waits for this word only, so it goes out before the join (as in SegShuffle:
    // docs/decisions/0015-validated-status-word.md).
    if (threadIdx.x == 0 && status_out != nullptr) *status_out = __ldcg(status);
    r_join_records(rec_vals, rec_meta, gridDim.x, segments, out, s_agg[0]);
    if (threadIdx.x == 0) {
        // The ticket and the word left as the next launch expects them: 0 and R_NO_INDEX.
        *ticket = 0;
        *status = R_NO_INDEX;
    }
}
