// SegShuffle's tile (included before kernels/seg_shuffle.cu, which holds the order invariant):
// the tile's shape, the loads of a thread's items and owners and, in the offsets form
// (R_OFFSETS), the tile's marks: the offsets that touch the tile read once, coalesced, and turned
// into head bytes (where segments start) and end positions (where the segments the tile closes
// end) in shared memory (r_mark_tile), with the layout check riding on those reads.

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_BLOCK * R_ITEMS)

#if R_VECS > 0
union r_lane_items {
    uint4 v[R_VECS];
    r_in m[R_ITEMS];
};
#endif

// How many of the R_ITEMS items from a exist (n items in all).
__device__ __forceinline__ int r_run_count(r_size a, r_size n) {
    return a >= n ? 0 : (int)(n - a < R_ITEMS ? n - a : R_ITEMS);
}

// Items [a, a + count) into it[], each lifted (m_lift with its global index; the identity
// function unless the monoid lifts another item type r_in); the rest of it[] is the identity.
// Whole runs as 16-byte vectors (r_load_shifted; n items in all) at R_ITEM_SHIFT bytes past a
// 16-byte boundary: the kernel is specialised for its input's offset, so that a view at any
// offset costs one more vector per run and no instruction per word (an `in` elsewhere, which
// the runtime never passes, is read item by item).
// Through the read-only cache: a lane's consecutive 16-byte loads share 32-byte sectors, which
// an L1-allocating load serves once (ncu on an H100: streaming loads fetched 50% excess sectors
// from L2 here).
__device__ __forceinline__ void r_load_items(const r_in* __restrict__ in, r_size n, r_size a, int count,
                                             M (&it)[R_ITEMS]) {
#if R_VECS > 0
    r_lane_items t;
#if R_ITEM_SHIFT == 0
    const bool whole = count == R_ITEMS;
#else
    const bool whole = count == R_ITEMS && ((unsigned long long)in & 15u) == R_ITEM_SHIFT &&
                       r_vectors_inside<R_VECS>(in + a, R_ITEM_SHIFT, in, in + n);
#endif
    if (whole) {
        r_load_shifted(in + a, R_ITEM_SHIFT, t.v, [](const uint4* p) { return __ldg(p); });
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) it[i] = m_lift(t.m[i], a + i);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) it[i] = i < count ? m_lift(in[a + i], a + i) : m_identity();
}

#if !R_OFFSETS
// Owner form: the owners of items [a, a + count), narrowed (R_NO_SEGMENT past count); 16-byte
// vectors when the thread's owners fill whole ones and are aligned (R_INDEX_VEC).
__device__ __forceinline__ void r_load_owners(const r_idx* __restrict__ owner, r_size a, int count,
                                              unsigned int (&own)[R_ITEMS]) {
#if R_INDEX_VEC && R_IDX64 && R_ITEMS % 2 == 0
    if (count == R_ITEMS) {
        const ulonglong2* p = reinterpret_cast<const ulonglong2*>(owner + a);
#pragma unroll
        for (int k = 0; k < R_ITEMS / 2; ++k) {
            const ulonglong2 v = __ldg(p + k);
            own[2 * k] = r_narrow(v.x);
            own[2 * k + 1] = r_narrow(v.y);
        }
        return;
    }
#elif R_INDEX_VEC && !R_IDX64 && R_ITEMS % 4 == 0
    if (count == R_ITEMS) {
        const uint4* p = reinterpret_cast<const uint4*>(owner + a);
#pragma unroll
        for (int k = 0; k < R_ITEMS / 4; ++k) {
            const uint4 v = __ldg(p + k);
            own[4 * k] = v.x;
            own[4 * k + 1] = v.y;
            own[4 * k + 2] = v.z;
            own[4 * k + 3] = v.w;
        }
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) own[i] = i < count ? r_index(owner + a + i) : R_NO_SEGMENT;
}
#endif

#if R_OFFSETS
// The entries of one 128-byte line.
#define R_IDX_LINE (128 / (int)sizeof(r_idx))

// Asks L2 for offsets[s .. s + count + R_IDX_LINE], a line per thread (up to R_BLOCK lines).
__device__ __forceinline__ void r_prefetch_offsets(const r_idx* __restrict__ offsets, r_size segments, r_size s,
                                                   r_size count) {
    const r_size at = s + R_IDX_LINE * (r_size)threadIdx.x;
    if (threadIdx.x <= count / R_IDX_LINE + 1 && at <= segments)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(offsets + at)));
}

// Entries p[rel .. rel + 4) below `left` (0 past it), narrowed; 16-byte loads (one, or two of
// u64) when they are all there and p + rel is 16-byte aligned (R_INDEX_VEC: the array is; rel
// and the caller's base are multiples of 4).
__device__ __forceinline__ uint4 r_load_quad(const r_idx* __restrict__ p, unsigned int rel, unsigned int left) {
#if R_INDEX_VEC
    if (rel + 4 <= left) {
#if R_IDX64
        const ulonglong2 lo = __ldg(reinterpret_cast<const ulonglong2*>(p + rel));
        const ulonglong2 hi = __ldg(reinterpret_cast<const ulonglong2*>(p + rel + 2));
        return make_uint4(r_narrow(lo.x), r_narrow(lo.y), r_narrow(hi.x), r_narrow(hi.y));
#else
        return __ldg(reinterpret_cast<const uint4*>(p + rel));
#endif
    }
#endif
    uint4 q;
    q.x = rel < left ? r_index(p + rel) : 0u;
    q.y = rel + 1 < left ? r_index(p + rel + 1) : 0u;
    q.z = rel + 2 < left ? r_index(p + rel + 2) : 0u;
    q.w = rel + 3 < left ? r_index(p + rel + 3) : 0u;
    return q;
}

// The marks' reads: a round gives each thread R_QUAD consecutive offsets (one 16-byte load when
// R_INDEX_VEC), a batch R_LOADS rounds at once (one: the tile's items are held in registers
// meanwhile, and two spill under the register cap).
#define R_QUAD 4
#define R_LOADS 1
#define R_ROUND (R_BLOCK * R_QUAD)

// The layout check's part in the marks for the quad holding the last entry: whether two of the
// entries q0..q3 that exist (`lim` of them, 1 <= lim <= 4; those past read as 0) descend. The
// array's ends (offsets[0] = 0, offsets[segments] = n) are checked once per launch, by the first
// and last blocks, not here: with few segments every tile reads that quad, and this call is a
// dependent chain ahead of the tile's barrier (1-2 us less per validated call on one segment and
// 1000 equal segments). Out of line: rare, and off the marks' registers (the check inline made
// the trusted marks 3-6% slower for 8-byte values: docs/decisions/0017-quad-check-out-of-line.md).
__device__ __noinline__ bool r_quad_descends(unsigned int q0, unsigned int q1, unsigned int q2, unsigned int q3,
                                             unsigned int lim) {
    return (lim > 1 && q0 > q1) | (lim > 2 && q1 > q2) | (lim > 3 && q2 > q3);
}

// The slot of item q of the tile in the items' scan values (s_vals): one value of padding after
// every R_ITEMS (even R_ITEMS), so that the 32 lanes of a warp, R_ITEMS items apart, store to
// distinct banks.
#if R_ITEMS % 2 == 0
#define R_VAL_SLOT(q) ((q) + (q) / R_ITEMS)
#define R_VAL_SLOTS (R_TILE + R_BLOCK)
#else
#define R_VAL_SLOT(q) (q)
#define R_VAL_SLOTS R_TILE
#endif

// End marks (s_endpos[s - stage_lo] for each segment s the tile may close): the tile position of
// its last item, or one of these; 16 bits wide where tile positions fit.
#if R_BLOCK * R_ITEMS < 0xfffe
typedef unsigned short r_endpos;
#define R_END_EMPTY 0xfffeu  // an empty segment: its value is the identity
#define R_END_SKIP 0xffffu   // a segment that ended before the tile (closed at its start)
#else
typedef unsigned int r_endpos;
#define R_END_EMPTY 0xfffffffeu
#define R_END_SKIP 0xffffffffu
#endif

// One round of the marks' reads at entry rel of ob (`left` entries there): this thread's quad
// (0 past the array), and in *after, for lane 31, the entry after it (the next warp's first).
__device__ __forceinline__ uint4 r_load_round(const r_idx* __restrict__ ob, unsigned int rel, unsigned int left,
                                              unsigned int* after) {
    const uint4 quad = r_load_quad(ob, rel, left);
    const bool lane_last = (threadIdx.x & (R_WARP - 1)) == R_WARP - 1;
    *after = lane_last && rel + R_QUAD < left ? r_index(ob + rel + R_QUAD) : 0u;
    return quad;
}

// A tile's first batch of the marks' reads (R_LOADS = 1: one round), loaded ahead when
// R_MARKS_AHEAD: issued while the tile before is still being scanned and copied out, so that the
// marks find them in registers instead of waiting on L2 (the first use of these loads held 26-32%
// of all stall samples on random 10..50 and size 3 in the offsets form:
// docs/decisions/0007-marks-ahead.md).
// The reads r_mark_tile's first batch makes for segment w (the segment of the item before the
// tile) and a tile ending at last_item. The host picks the variant (SegPlan::fallback_kernel):
// with it for u32 offsets unless this kernel then uses local memory (the six registers held
// across the block scan spill larger monoids, or more items, under the register cap), without
// it for u64 entries, which are narrowed as they are read (r_load_quad): that waits for the load
// where it is issued, so loading them ahead only moves the wait (up to 11% slower:
// docs/decisions/0014-u64-layouts.md).
struct r_marks_ahead {
    uint4 quad;          // entries base + R_QUAD t .. + R_QUAD (0 past the array)
    unsigned int after;  // lane 31: the entry after its quad
    unsigned int next;   // the entry after the batch (0 past the array; unused on the grid's last tile)
};

__device__ __forceinline__ r_marks_ahead r_load_marks_ahead(const r_idx* __restrict__ offsets, r_size segments,
                                                            r_size n, r_size w, r_size last_item) {
    static_assert(R_LOADS == 1, "the first batch is one round");
    r_marks_ahead a = {};
    if (!R_MARKS_AHEAD) return a;  // r_mark_tile loads its first batch itself
    const unsigned int mine = threadIdx.x * R_QUAD;
    const r_size base = w & ~(r_size)(R_QUAD - 1);
    const r_size span = segments + 1 - base;
    const unsigned int left = span < 0xffffffffull ? (unsigned int)span : 0xffffffffu;
    const r_idx* __restrict__ ob = offsets + base;
    a.quad = r_load_round(ob, mine, left, &a.after);
    a.next = R_ROUND < left && last_item + 1 != n ? r_index(ob + R_ROUND) : 0u;
    return a;
}

// The marks of one tile [t0, last_item] from the offsets of segments w, w + 1, ... (w: the
// segment of item t0 - 1; 0 for the first tile), read once, coalesced, in batches of R_LOADS
// rounds, while they start at or before last_item (to the end on the grid's last tile):
//   head[p - t0] = 1   where item p starts a non-empty segment;
//   endpos[s - stage_lo] (s - stage_lo < R_STAGE) = p - t0 where non-empty segment s ends at
//                      item p < last_item, R_END_EMPTY where s is empty, R_END_SKIP where it
//                      ended before the tile;
//   *tile_last = s     for the segment s holding last_item.
// Empty segments past the stage, and those at n on the grid's last tile, are not marked: the
// caller fills them with the identity, block-wide (they lie in [stage_lo + R_STAGE, *tile_last)
// and (*tile_last, segments)), so that no entry pays for them here.
// `ahead`: the first batch when R_MARKS_AHEAD (r_load_marks_ahead). Returns whether a segment
// starts or lies inside the tile (at t0 or later). Every thread must call it;
// the caller's barrier publishes the marks. A bad layout (trusted calls) only ever marks inside
// the tile, writes ids < segments and end positions < last_item - t0.
// THE LAYOUT CHECK (bad != nullptr) rides on the same reads: the entries s in [w, *read_end)
// are checked (*read_end uniform), and *bad is set when a pair offsets[s] > offsets[s + 1]
// (s < segments) is among them. The caller checks that the checks of all tiles cover every
// entry, [0, segments] (s_cover), and the array's ends.
__device__ __forceinline__ bool r_mark_tile(const r_idx* __restrict__ offsets, r_size segments, r_size n,
                                            r_size w, r_size t0, r_size last_item,
                                            const r_marks_ahead& ahead, unsigned char* head, r_endpos* endpos,
                                            r_size* tile_last, unsigned int stage_lo, r_size* read_end,
                                            bool* bad) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    // Positions in 32 bits: SegShuffle takes at most 2^32 - 1 items (u32 layouts). Segment ids
    // as base (64 bits, uniform) + rel (32 bits).
    const unsigned int first = (unsigned int)t0, last = (unsigned int)last_item;
    const bool grid_last = last_item + 1 == n;
    const unsigned int mine = threadIdx.x * R_QUAD;
    bool starts = false;
    // From a multiple of R_QUAD (aligned loads): the segments before w end before the tile and
    // mark nothing.
    const r_size base0 = w & ~(r_size)(R_QUAD - 1);
    r_size base = base0;
    unsigned int done = 0;
    // The entry of the segment holding last_item, relative to base0 (a tile's entries are fewer
    // than 2^32: segments < 2^32), stored once after the loop: no 64-bit store per entry.
    unsigned int last_rel = 0xffffffffu;
    for (;;) {
        // The batch's loads first, and the next batch's first offset with them (whether another
        // batch is needed): one memory latency per batch. Thread t takes the entries base + rel,
        // rel = u * R_ROUND + R_QUAD t + j; lane 31 also reads the entry after its quad (the
        // next warp's first), the others get it from the next lane.
        const r_size span = segments + 1 - base;  // entries left; rel + 1 < left: s < segments
        const unsigned int left = span < 0xffffffffull ? (unsigned int)span : 0xffffffffu;
        const r_idx* __restrict__ ob = offsets + base;
        // With R_MARKS_AHEAD the first batch was loaded ahead (r_load_marks_ahead: the same reads).
        uint4 ov[R_LOADS];
        unsigned int after[R_LOADS];
        const unsigned int next = R_LOADS * R_ROUND;
        unsigned int next_offset;
        if (R_MARKS_AHEAD && done == 0) {
            ov[0] = ahead.quad;
            after[0] = ahead.after;
            next_offset = ahead.next;
        } else {
#pragma unroll
            for (unsigned int u = 0; u < R_LOADS; ++u) {
                ov[u] = r_load_round(ob, u * R_ROUND + mine, left, &after[u]);
            }
            next_offset = next < left && !grid_last ? r_index(ob + next) : 0u;
        }
#pragma unroll
        for (unsigned int u = 0; u < R_LOADS; ++u) {
            const unsigned int rel = u * R_ROUND + mine;
            const unsigned int down = __shfl_down_sync(R_FULL_MASK, ov[u].x, 1);
            const unsigned int q[R_QUAD + 1] = {ov[u].x, ov[u].y, ov[u].z, ov[u].w,
                                                lane == R_WARP - 1 ? after[u] : down};
            // Validated calls (uniform) check every pair of entries they read; quads past the
            // last entry hold none (on long segments, most threads' quads).
            if (bad != nullptr && rel < left) {
                const bool wrong = rel + R_QUAD < left  // all four pairs
                                       ? q[0] > q[1] || q[1] > q[2] || q[2] > q[3] || q[3] > q[4]
                                       : r_quad_descends(q[0], q[1], q[2], q[3], left - rel);
                if (wrong) *bad = true;
            }
            // A quad past the last segment, or that starts past the tile (all four segments
            // start past it: offsets ascend; a bad layout only marks less) except on the
            // grid's last tile (trailing empty segments), marks nothing.
            if (rel + 1 >= left || (!grid_last && q[0] > last)) continue;
#pragma unroll
            for (unsigned int j = 0; j < R_QUAD; ++j) {
                const unsigned int srel = rel + j, sid = (unsigned int)base + srel;
                const unsigned int o = q[j], o1 = q[j + 1];
                // Segment s = base + srel: items [o, o1). One starting past the tile marks
                // nothing (every test below fails), one before it only its end.
                // An empty one inside the tile marks a start too: a non-empty segment
                // starts at the same item (offsets ascend; o <= last < n).
                const bool ok = srel + 1 < left;
                const bool start = ok && o - first <= last - first;  // first <= o <= last
                const unsigned int e = o1 - 1;
                if (start) head[o - first] = 1;
                if (ok && sid - stage_lo < (unsigned int)R_STAGE)
                    endpos[sid - stage_lo] = (r_endpos)(o == o1                    ? R_END_EMPTY
                                                        : e - first < last - first ? e - first
                                                                                   : R_END_SKIP);
                last_rel = ok && o <= last && o1 > last ? done * R_ROUND + srel : last_rel;
                starts |= start;
            }
        }
        base += next;
        done += R_LOADS;
        // Uniform: does the next segment still start at or before the tile's last item?
        if (next >= left || (!grid_last && next_offset > last)) break;
    }
    if (last_rel != 0xffffffffu) *tile_last = base0 + last_rel;
    *read_end = base;
    return starts;
}

// A thread's head bytes as bits: bit i % 32 of word i / 32 is set where item i starts a segment.
#define R_HEAD_WORDS ((R_ITEMS + 31) / 32)

// The four head bytes of w (each 0 or 1) as bits 0..3: byte j (bit 8j) times 2^(28 - 7j) lands
// on bit 28 + j; every other product of the multiplication lands below bit 28 on bits of its own,
// or past bit 31.
__device__ __forceinline__ unsigned int r_head_nibble(unsigned int w) { return (w * 0x10204080u) >> 28; }

// This thread's head bytes (items first .. first + R_ITEMS of the tile) as bits into hm[],
// cleared behind it for the next tile. Returns the index of the first item that starts a segment
// (R_ITEMS: none). Bits rather than a byte per item in registers: a multiply per four items and
// one __ffs, where extracting the bytes and searching each word took 60 warp instructions per
// tile; with the warp scan's ballot (r_warp_seg_scan) 11% fewer instructions per launch on
// random 10..50 CSR segments and 6-11% faster there (docs/decisions/0011-head-bits-ballot-scan.md).
__device__ __forceinline__ unsigned int r_take_heads(unsigned char* head, unsigned int first,
                                                     unsigned int (&hm)[R_HEAD_WORDS]) {
#pragma unroll
    for (int k = 0; k < R_HEAD_WORDS; ++k) hm[k] = 0u;
#if R_ITEMS % 4 == 0
    unsigned int* p = reinterpret_cast<unsigned int*>(head + first);
#if R_ITEMS % 16 == 0
#pragma unroll
    for (int k = 0; k < R_ITEMS / 16; ++k) {
        const uint4 v = reinterpret_cast<uint4*>(p)[k];
        hm[k / 2] |= (r_head_nibble(v.x) | r_head_nibble(v.y) << 4 | r_head_nibble(v.z) << 8 |
                      r_head_nibble(v.w) << 12) << (16 * (k % 2));
        reinterpret_cast<uint4*>(p)[k] = make_uint4(0u, 0u, 0u, 0u);
    }
#else
#pragma unroll
    for (int k = 0; k < R_ITEMS / 4; ++k) {
        hm[k / 8] |= r_head_nibble(p[k]) << (4 * (k % 8));
        p[k] = 0u;
    }
#endif
#else
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) {
        hm[i / 32] |= (head[first + i] != 0 ? 1u : 0u) << (i % 32);
        head[first + i] = 0;
    }
#endif
    unsigned int at = R_ITEMS;
#pragma unroll
    for (int k = R_HEAD_WORDS - 1; k >= 0; --k)
        if (hm[k] != 0u) at = 32 * k + __ffs(hm[k]) - 1;
    return at;
}
#endif
