// SegMerge: merge-path segmented reduction (ours), owner or offsets form, one launch.
//
// THE PATH. The work is the merge of the N items with the S segment ends: end s (closing segment
// s) comes after the items of segments <= s. Each path step either folds one item into the open
// segment or closes it, so the path has N + S steps however the lengths are distributed, and a
// coordinate (i items, s ends before it) is found from its diagonal d = i + s by a binary search
// over strictly increasing keys: ends[s] + s in the offsets form (ends[s] = offsets[s + 1]; end s
// precedes item i iff ends[s] <= i), owner[i] + i in the owner form (item i precedes end s iff
// owner[i] <= s). Many empty segments cost path steps, i.e. only their output writes.
//
// ORDER INVARIANT. Block b owns the path steps [D_b, D_b+1) (whole tiles of R_TILE steps; blocks
// in order), its tiles run in order, and thread t of a tile walks the R_STEPS steps from
// t * R_STEPS left to right, folding items into `run` (m_combine(run, item)) and closing segments.
// A thread's pieces — its first segment's part before the thread's first close (`head`), and the
// run open at its end — are joined with the neighbours by an exclusive segmented scan over the
// threads (warp shuffles at increasing offsets, then warps in order, continuing the previous
// tiles' carry; every m_combine is (earlier, later)): the segment open at a thread's start gets
// (prefix ⊕ head). Across blocks, the last block to finish scans the per-block records (entry
// segment's in-block part, exit segment's open value) in block order (r_join_records). So every
// segment is folded left to right, for any associative monoid.
//
// EXACTLY ONCE. Every segment is closed by exactly one path step. A close inside a thread's walk
// after its first close is staged by that thread; its first close by the same thread after the
// scan; the entry segment of block b > 0 (open at its start) by the last block. A tile's closes are
// the contiguous ids [s_k, s_k+1): staged in shared memory and copied out coalesced.
//
// PIPELINE. A block streams its items (and, in the owner form, owners) and, in the offsets form,
// its segment ends through rings of R_RING chunks of R_TILE elements in shared memory: cp.async
// copies (16-byte pieces; shared addresses mirror the global ones modulo 16) that arrive on one
// mbarrier per chunk. A chunk is refilled R_RING chunks ahead once the block has consumed it, so
// while a tile is processed up to R_RING - 2 chunks per stream are in flight. Types whose size is
// not a multiple of 4 bytes are copied with plain loads, which arrive when they are stored.
//
// VALIDATION (validate != 0), fused: each walk checks that the keys it reads are monotone (and
// owners below S) from the key just before its first step; consecutive walks, tiles and blocks
// must meet exactly where the searches put them; block 0 checks offsets[0] = 0 and the last block
// offsets[S] = N. Any failure sets *status to 1 (the host then finds the first bad index). Every
// pair of consecutive keys is checked exactly once when the walks meet. A bad layout never makes
// the kernel read or write out of bounds: coordinates stay inside the block's streams, and every
// loop is bounded by the path length.
//
// Parameters: R_BLOCK threads; R_STEPS path steps per thread and tile; R_RING chunks per ring
// (>= 3); R_OFFSETS (1: offsets form, 0: owner form); R_IDX64 (offsets/owners are u64);
// R_PLAIN_ITEMS (1: the items are not 4-byte aligned: plain loads).
// Requires sm_80 (cp.async, mbarrier).

#define R_TILE (R_BLOCK * R_STEPS)
#define R_RING_LEN (R_RING * R_TILE)

// ---------------------------------------------------------------- thread level: async copies

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
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(r_smem(bar)) : "memory");
    (void)state;
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

__device__ __forceinline__ void r_cp_async16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(r_smem(dst)), "l"(__cvta_generic_to_global(src)) : "memory");
}

__device__ __forceinline__ void r_cp_async4(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(r_smem(dst)), "l"(__cvta_generic_to_global(src)) : "memory");
}

// ---------------------------------------------------------------- block level: rings

// A stream of T values of global memory through a shared-memory ring: element j lives at
// data[(j - origin) % R_RING_LEN]. origin is a multiple of 16 elements at or below the block's
// first element, so chunk boundaries keep global and shared addresses congruent modulo 16
// (the ring's base is offset by the source's address modulo 16).
template <class T>
struct r_ring {
    T* data;
    const T* src;
    r_size origin, begin, end;  // the block's elements are [begin, end)
    unsigned int chunks;        // chunks of R_TILE elements from origin that hold them
    unsigned int next_fill;     // the next chunk to fill
};

// Async copies need whole, aligned 4-byte words: item types of other sizes, or items the host
// found not 4-byte aligned (R_PLAIN_ITEMS), are copied with plain loads. Offsets and owners are.
#define R_ITEMS_ASYNC (sizeof(r_in) % 4 == 0 && !R_PLAIN_ITEMS)

template <class T>
__device__ __forceinline__ r_ring<T> r_ring_make(unsigned char* base, const T* src, r_size begin, r_size end) {
    r_ring<T> r;
    r.data = reinterpret_cast<T*>(base + ((unsigned long long)src & 15ull));
    r.src = src;
    r.begin = begin;
    r.end = end;
    r.origin = begin & ~15ull;
    r.chunks = end > begin ? (unsigned int)((end - r.origin + R_TILE - 1) / R_TILE) : 0u;
    r.next_fill = 0;
    return r;
}

template <class T>
__device__ __forceinline__ T& r_at(const r_ring<T>& r, r_size j) {
    return r.data[(unsigned int)(j - r.origin) % (unsigned int)R_RING_LEN];
}

// This thread's share of copying chunk q of the ring (the part inside [begin, end)).
template <bool ASYNC, class T>
__device__ void r_ring_copy(const r_ring<T>& r, unsigned int q) {
    const r_size lo = r.origin + (r_size)q * R_TILE;
    const r_size a = lo > r.begin ? lo : r.begin;
    const r_size b = lo + R_TILE < r.end ? lo + R_TILE : r.end;
    if (a >= b) return;
    if constexpr (ASYNC) {
        // Bytes [g0, g1): 4-byte pieces up to the first 16-byte boundary, 16-byte pieces, 4-byte tail.
        const char* g0 = reinterpret_cast<const char*>(r.src + a);
        const char* g1 = reinterpret_cast<const char*>(r.src + b);
        char* s0 = reinterpret_cast<char*>(&r_at(r, a));
        const unsigned long long u0 = (unsigned long long)g0, u1 = (unsigned long long)g1;
        const unsigned long long a16 = (u0 + 15ull) & ~15ull, b16 = u1 & ~15ull;
        const unsigned long long head_end = a16 < u1 ? a16 : u1;
        const unsigned int heads = (unsigned int)((head_end - u0) / 4);
        const unsigned int bodies = b16 > a16 ? (unsigned int)((b16 - a16) / 16) : 0u;
        const unsigned long long tail_begin = b16 > a16 ? b16 : head_end;
        const unsigned int tails = (unsigned int)((u1 - tail_begin) / 4);
        for (unsigned int p = threadIdx.x; p < heads + bodies + tails; p += R_BLOCK) {
            if (p < heads) {
                r_cp_async4(s0 + 4 * p, g0 + 4 * p);
            } else if (p < heads + bodies) {
                const unsigned long long off = (a16 - u0) + 16ull * (p - heads);
                r_cp_async16(s0 + off, g0 + off);
            } else {
                const unsigned long long off = (tail_begin - u0) + 4ull * (p - heads - bodies);
                r_cp_async4(s0 + off, g0 + off);
            }
        }
    } else {
        for (r_size j = a + threadIdx.x; j < b; j += R_BLOCK) r_at(r, j) = r.src[j];
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

// Chunks whose elements are all below `consumed` are free: fill the chunks R_RING ahead of them.
// Every thread of the block calls it with the same arguments (one arrival per thread per chunk).
#if R_OFFSETS
template <bool ASYNC, class T>
__device__ void r_ring_refill(r_ring<T>& r, unsigned long long* bars, r_size consumed) {
    const unsigned int freed = consumed > r.origin ? (unsigned int)((consumed - r.origin) / R_TILE) : 0u;
    while (r.next_fill < r.chunks && r.next_fill < freed + R_RING) {
        const unsigned int q = r.next_fill++;
        r_ring_copy<ASYNC>(r, q);
        if constexpr (ASYNC) r_bar_arrive_async(&bars[q % R_RING]);
        else r_bar_arrive(&bars[q % R_RING]);
    }
}
#else
// Owner form: items and owners are item-indexed, and share chunks and barriers.
__device__ void r_ring_refill2(r_ring<r_in>& items, r_ring<r_idx>& owners, unsigned long long* bars, r_size consumed) {
    constexpr bool async = R_ITEMS_ASYNC;
    const unsigned int freed = consumed > items.origin ? (unsigned int)((consumed - items.origin) / R_TILE) : 0u;
    while (items.next_fill < items.chunks && items.next_fill < freed + R_RING) {
        const unsigned int q = items.next_fill++;
        r_ring_copy<async>(items, q);
        r_ring_copy<async>(owners, q);
        if constexpr (async) r_bar_arrive_async(&bars[q % R_RING]);
        else r_bar_arrive(&bars[q % R_RING]);
    }
}
#endif

// ---------------------------------------------------------------- merge-path searches

// The key of position j: ends[j] + j (offsets form; ends = offsets + 1) or owner[j] + j.
// Returns how many keys in [lo, hi) are below d, assuming they increase (any value in [lo, hi]
// otherwise): the first j with key(j) >= d. Warp-cooperative 33-ary search in global memory;
// all 32 lanes call it and get the result.
__device__ r_size r_warp_merge_search(const r_idx* __restrict__ keys, r_size lo, r_size hi, r_size d) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    while (lo < hi) {
        const r_size span = hi - lo;
        const r_size probe = span <= 32 ? lo + lane : lo + span * (lane + 1) / 33;
        const bool valid = probe < hi;
        const bool ge = valid && (r_size)keys[probe] + probe >= d;
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

// ---------------------------------------------------------------- the kernel

// One launch. rec_vals: 2 * gridDim.x M; rec_meta: 3 * gridDim.x r_size (see r_join_records);
// *ticket is 0 on entry and left 0; *status is 0 on entry and set to 1 by a failed check.
// Dynamic shared memory: the item ring, the key ring (ends or owners), two output stages.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_seg_merge(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ index, r_size segments,
                 M* __restrict__ out, M* __restrict__ rec_vals, r_size* __restrict__ rec_meta,
                 unsigned int* __restrict__ ticket, unsigned long long* __restrict__ status, r_size validate) {
    extern __shared__ __align__(16) unsigned char r_dyn[];
    __shared__ unsigned long long s_bars[2][R_RING];  // [0]: items (and owners), [1]: ends
    __shared__ r_seg s_agg[2][R_WARP + 1];            // alternating per tile
    __shared__ r_size s_coord[2][2];                  // the block's (items, ends) at its start and end
    __shared__ r_size s_next[2][2];                   // a tile's end coordinate, alternating per tile
    __shared__ r_idx s_next_key[2];                   // the key just before it (validation)
    __shared__ unsigned int s_walk_end[R_BLOCK];      // each walk's end, in ends after the tile start
    __shared__ M s_entry_val;
    __shared__ bool s_is_last;

    constexpr unsigned int item_ring_bytes = ((R_RING_LEN * sizeof(r_in) + 16 + 15) / 16) * 16;
    constexpr unsigned int key_ring_bytes = ((R_RING_LEN * sizeof(r_idx) + 16 + 15) / 16) * 16;
    M* s_stage = reinterpret_cast<M*>(r_dyn + item_ring_bytes + key_ring_bytes);  // 2 * R_TILE

#if R_OFFSETS
    const r_idx* keys = index + 1;  // ends[s] = offsets[s + 1]
    const r_size key_count = segments;
#else
    const r_idx* keys = index;  // owner[i]
    const r_size key_count = n;
#endif
    const r_size path = n + segments;
    const r_size tiles = (path + R_TILE - 1) / R_TILE;
    const r_size b = blockIdx.x;
    const r_size q = tiles / gridDim.x, rem = tiles % gridDim.x;
    const r_size tile_begin = b * q + (b < rem ? b : rem);
    const r_size tile_end = tile_begin + q + (b < rem ? 1 : 0);
    const r_size d_begin = tile_begin * R_TILE;
    const r_size d_end = tile_end * R_TILE < path ? tile_end * R_TILE : path;

    // The block's coordinates: warp 0 searches its first diagonal, warp 1 its end.
    if (threadIdx.x == 0) {
        for (int k = 0; k < R_RING; ++k) {
            r_bar_init(&s_bars[0][k], R_BLOCK);
            r_bar_init(&s_bars[1][k], R_BLOCK);
        }
        s_entry_val = m_identity();
    }
    for (unsigned int w = threadIdx.x / R_WARP; w < 2; w += R_BLOCK / R_WARP) {
        const r_size d = w ? d_end : d_begin;
#if R_OFFSETS
        const r_size other = n;  // keys count ends; the items are the other side of the merge
#else
        const r_size other = segments;
#endif
        const r_size lo = d > other ? d - other : 0;
        const r_size hi = d < key_count ? d : key_count;
        const r_size x = d == 0 ? 0 : d == path ? key_count : r_warp_merge_search(keys, lo, hi, d);
        if ((threadIdx.x & (R_WARP - 1)) == 0) {
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
    const r_size end_i = s_coord[1][0], end_s = s_coord[1][1];
    bool bad = false;
    if (validate) {
        if (end_i < block_i || end_s < block_s) bad = true;
#if R_OFFSETS
        if (b == 0 && index[0] != 0) bad = true;
        if (d_end == path && (r_size)index[segments] != n) bad = true;
#endif
    }
    // Streams (clamped: a bad layout may have put the end before the start).
    const r_size stream_i_end = end_i > block_i ? end_i : block_i;
    const r_size stream_s_end = end_s > block_s ? end_s : block_s;
    r_ring<r_in> items = r_ring_make(r_dyn, in, block_i, stream_i_end);
#if R_OFFSETS
    r_ring<r_idx> ring_keys = r_ring_make(r_dyn + item_ring_bytes, keys, block_s, stream_s_end);
    r_ring_refill<R_ITEMS_ASYNC>(items, s_bars[0], block_i);
    r_ring_refill<true>(ring_keys, s_bars[1], block_s);
    // The key before the first walk: offsets[block_s] (ends[block_s - 1], or offsets[0]).
    r_idx prev_key = validate ? index[block_s] : 0;
#else
    r_ring<r_idx> ring_keys = r_ring_make(r_dyn + item_ring_bytes, keys, block_i, stream_i_end);
    r_ring_refill2(items, ring_keys, s_bars[0], block_i);
    r_idx prev_key = validate && block_i > 0 ? index[block_i - 1] : 0;
#endif
    const bool has_entry = d_begin > 0;  // the segment open at the start began in an earlier block

    r_size ti = block_i, ts = block_s;  // the tile's start coordinate
    r_seg carry = r_seg_identity();
    for (r_size tile = tile_begin; tile < tile_end; ++tile) {
        const unsigned int parity = (unsigned int)((tile - tile_begin) & 1);
        M* stage = s_stage + parity * R_TILE;
        const r_size d0 = tile * R_TILE;
        const unsigned int len = (unsigned int)(d_end - d0 < R_TILE ? d_end - d0 : R_TILE);
        const r_size avail_i = stream_i_end - ti, avail_s = stream_s_end - ts;
        r_ring_wait(items, s_bars[0], ti, ti + (avail_i < len ? avail_i : len));
#if R_OFFSETS
        r_ring_wait(ring_keys, s_bars[1], ts, ts + (avail_s < len ? avail_s : len));
#endif

        // This walk's start: the merge-path search in the ring, from the tile's start.
        const unsigned int rr = threadIdx.x * R_STEPS;
        const bool active = rr < len;
        r_size i = ti, s = ts;
        if (active) {
#if R_OFFSETS
            r_size lo = rr > avail_i ? rr - avail_i : 0, hi = rr < avail_s ? rr : avail_s;
            while (lo < hi) {
                const r_size mid = (lo + hi) / 2;
                if ((r_size)r_at(ring_keys, ts + mid) + ts + mid < d0 + rr) lo = mid + 1;
                else hi = mid;
            }
            s = ts + lo;
            i = ti + (rr - lo);
#else
            r_size lo = rr > avail_s ? rr - avail_s : 0, hi = rr < avail_i ? rr : avail_i;
            while (lo < hi) {
                const r_size mid = (lo + hi) / 2;
                if ((r_size)r_at(ring_keys, ti + mid) + ti + mid < d0 + rr) lo = mid + 1;
                else hi = mid;
            }
            i = ti + lo;
            s = ts + (rr - lo);
#endif
        }
        const r_size walk_s = s;

        // The walk: fold items, close segments; the first close waits for the scan.
        M run = m_identity();
        M head = m_identity();
        bool closed = false;
        r_size first_s = 0;
        if (active) {
            const unsigned int steps = len - rr < R_STEPS ? len - rr : R_STEPS;
#if R_OFFSETS
            // Keys are read when a step needs them (never past the tile's last step).
            r_idx e = s > ts ? r_at(ring_keys, s - 1) : prev_key;
            bool e_current = false;  // e holds ends[s] (else the key before it)
#pragma unroll
            for (int k = 0; k < R_STEPS; ++k) {
                if ((unsigned int)k < steps) {
                    bool close = false;
                    if (s < stream_s_end) {
                        if (!e_current) {
                            const r_idx e2 = r_at(ring_keys, s);
                            if (validate && e2 < e) bad = true;
                            e = e2;
                            e_current = true;
                        }
                        close = i >= stream_i_end || e <= i;
                    }
                    if (close) {
                        if (!closed) {
                            head = run;
                            first_s = s;
                            closed = true;
                        } else {
                            stage[(unsigned int)(s - ts)] = run;
                        }
                        run = m_identity();
                        ++s;
                        e_current = false;
                    } else if (i < stream_i_end) {
                        run = m_combine(run, m_lift(r_at(items, i), i));
                        ++i;
                    } else {
                        bad = true;  // both streams ran out: the searches disagree with the walk
                    }
                }
            }
#else
            r_idx o_before = i > ti ? r_at(ring_keys, i - 1) : prev_key;
#pragma unroll
            for (int k = 0; k < R_STEPS; ++k) {
                if ((unsigned int)k < steps) {
                    const bool has_item = i < stream_i_end;
                    const r_idx o = has_item ? r_at(ring_keys, i) : 0;
                    if (s < stream_s_end && (!has_item || o > s)) {
                        if (!closed) {
                            head = run;
                            first_s = s;
                            closed = true;
                        } else {
                            stage[(unsigned int)(s - ts)] = run;
                        }
                        run = m_identity();
                        ++s;
                    } else if (has_item) {
                        if (validate && (o < o_before || (r_size)o >= segments)) bad = true;
                        o_before = o;
                        run = m_combine(run, m_lift(r_at(items, i), i));
                        ++i;
                    } else {
                        bad = true;
                    }
                }
            }
#endif
            if (rr + R_STEPS >= len) {
                // The last walk of the tile: its end is the next tile's start.
                s_next[parity][0] = i;
                s_next[parity][1] = s;
#if R_OFFSETS
                s_next_key[parity] = s > ts ? r_at(ring_keys, s - 1) : prev_key;
#else
                s_next_key[parity] = i > ti ? r_at(ring_keys, i - 1) : prev_key;
#endif
            }
            s_walk_end[threadIdx.x] = (unsigned int)(s - ts);
        }

        // Join the walks: block-wide segmented scan continuing the previous tiles' carry.
        r_seg element;
        element.flag = closed ? 1u : 0u;
        element.v = run;
        r_seg total;
        const r_seg before = r_block_seg_exclusive(element, carry, s_agg[parity], &total);
        carry = total;
        if (validate && active && threadIdx.x > 0 && s_walk_end[threadIdx.x - 1] != (unsigned int)(walk_s - ts)) bad = true;

        // The segment open at this walk's start closes at its first close.
        if (closed) {
            const M value = m_combine(before.v, head);
            if (!before.flag && has_entry) s_entry_val = value;  // the block's entry: finished by the last block
            else stage[(unsigned int)(first_s - ts)] = value;
        }
        const r_size next_i = s_next[parity][0], next_s = s_next[parity][1];
        prev_key = s_next_key[parity];
        __syncthreads();

        // Copy the tile's closed segments [ts, next_s) out, coalesced (not the block's entry).
        const unsigned int closes = (unsigned int)(next_s - ts);
        for (unsigned int k = threadIdx.x; k < closes; k += R_BLOCK) {
            if (!(has_entry && ts + k == block_s)) out[ts + k] = stage[k];
        }
        // Refill the chunks this tile consumed (every read of them is before the barrier above).
#if R_OFFSETS
        r_ring_refill<R_ITEMS_ASYNC>(items, s_bars[0], next_i);
        r_ring_refill<true>(ring_keys, s_bars[1], next_s);
#else
        r_ring_refill2(items, ring_keys, s_bars[0], next_i);
#endif
        ti = next_i;
        ts = next_s;
    }
    if (validate && (ti != end_i || ts != end_s)) bad = true;
    if (validate && bad) atomicOr(reinterpret_cast<unsigned int*>(status), 1u);
    // Copies a bad layout left unread must land before the block's shared memory is released.
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();

    // Export this block's record; the last block to finish joins the records in block order.
    if (threadIdx.x == 0) {
        rec_vals[2 * b] = s_entry_val;
        rec_vals[2 * b + 1] = carry.v;
        rec_meta[3 * b] = has_entry ? block_s : R_NO_SEG64;
        rec_meta[3 * b + 1] = ts < segments ? ts : R_NO_SEG64;
        rec_meta[3 * b + 2] = carry.flag ? 0u : 1u;
        __threadfence();
        s_is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_is_last) return;
    __threadfence();
    r_join_records(rec_vals, rec_meta, gridDim.x, segments, out, s_agg[0]);
    if (threadIdx.x == 0) *ticket = 0;
}
