// SegShuffle: single-launch, order-keeping segmented reduction (ours), owner or offsets form.
//
// ORDER INVARIANT. Block b owns a contiguous run of tiles (R_BLOCK * R_ITEMS consecutive items),
// runs in increasing b; thread t of a tile owns the R_ITEMS consecutive items from t * R_ITEMS.
// A thread folds its items left to right, writing every segment that starts and ends inside its
// run; the part of its first segment before its first segment start ("head") and the open run at
// its end ("tail") are joined with the neighbours by an inclusive segmented scan over threads —
// warp shuffles at increasing offsets, then warps in order, then tiles in order, every combine
// (earlier, later). The segment open when a thread's run starts gets carry ⊕ head, written by that
// thread. Across blocks the same scan runs, in the last block to finish, over per-block records
// (entry segment's in-block part, exit segment's open value): so a segment split over blocks is
// still folded left to right.
//
// EXACTLY ONCE. Every segment is written by exactly one thread: interior segments by the thread
// that holds them, a segment closed at the start of a thread's run by that thread, a segment
// crossing a block start by the last block, the last segment by the last block, empty segments by
// the thread holding the first item after them (or the item n - 1 for trailing ones) in the owner
// form, and in the offsets form by the thread that reads their offset in the marking pass of the
// tile holding that item (trailing ones: of the grid's last tile).
//
// OUTPUT STAGING. The segments a tile closes form one contiguous range of ids, from the segment
// of the item before the tile up to (not including) the segment of its last item; they are
// staged in shared memory (R_STAGE slots) and copied out coalesced after the tile. Ids past the
// stage, trailing empty segments and the cross-block records are written directly.
//
// Items are r_in values lifted into M by m_lift (r_in = M and the identity lift unless the
// monoid lifts another type). Owner form: owner[i] for every item, non-decreasing, < segments; a bad owner is reported in
// *status (first bad index, atomicMin) and never written through; owners are read as 16-byte
// vectors when R_INDEX_VEC (16-byte aligned). Offsets form (R_OFFSETS = 1): before each tile
// the block reads, once and coalesced, the offsets of the segments that touch the tile and
// turns them into shared-memory marks (r_mark_tile): a head byte at every item that starts a
// non-empty segment, the segment id at every item that ends one (before the tile's last item),
// identities for the empty segments that lie in the tile, and the segment of the tile's last
// item. Threads then fold runs from the head bytes alone: no search, no per-item walk. A tile
// inside one segment (no segment starts or lies in it) takes a short path: an order-keeping fold
// of its items into the block's carry, no segmented scan and no writes. A validated call checks
// the offsets on the marks' own reads: every pair they read, and that the reads of all blocks
// together cover every entry (the host runs the exact check for the error if not).

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_BLOCK * R_ITEMS)

#if R_VECS > 0
union r_lane_items {
    uint4 v[R_VECS];
    r_in m[R_ITEMS];
};
#endif

// Items [a, a + count) into it[], each lifted (m_lift with its global index; the identity
// function unless the monoid lifts another item type r_in); the rest of it[] is the identity.
// Through the read-only cache: a lane's consecutive 16-byte loads share 32-byte sectors, which
// an L1-allocating load serves once (ncu on an H100: streaming loads fetched 50% excess sectors
// from L2 here).
__device__ __forceinline__ void r_load_items(const r_in* __restrict__ in, r_size a, int count, M (&it)[R_ITEMS]) {
#if R_VECS > 0
    if (count == R_ITEMS) {
        r_lane_items t;
        const uint4* p = reinterpret_cast<const uint4*>(in + a);
#pragma unroll
        for (int k = 0; k < R_VECS; ++k) t.v[k] = __ldg(p + k);
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) it[i] = m_lift(t.m[i], a + i);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) it[i] = i < count ? m_lift(in[a + i], a + i) : m_identity();
}

#if R_OFFSETS
// Asks L2 for the lines of items [a, a + count) (no registers held, nothing waited for).
__device__ __forceinline__ void r_prefetch_items(const r_in* __restrict__ in, r_size a, int count) {
    const char* p = reinterpret_cast<const char*>(in + a);
    for (int k = 0; k < count * (int)sizeof(r_in); k += 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p + k)));
}

// Last s in [0, segments) with offsets[s] <= pos, by a 33-ary search of the whole warp.
// offsets[0] = 0 <= pos < n = offsets[segments] for valid input. All 32 lanes must call it.
__device__ r_size r_warp_find_segment(const unsigned int* __restrict__ offsets, r_size segments, r_size pos) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    r_size lo = 0, hi = segments;
    while (hi - lo > 1) {
        const r_size span = hi - lo;
        const r_size probe = span <= 33 ? lo + 1 + lane : lo + span * (lane + 1) / 33;
        const bool valid = probe < hi;
        const bool le = valid && offsets[probe] <= pos;
        const unsigned int below = __ballot_sync(R_FULL_MASK, le);
        const unsigned int inside = __ballot_sync(R_FULL_MASK, valid);
        const int last_le = below ? 31 - __clz(below) : -1;
        const r_size new_lo = last_le >= 0 ? __shfl_sync(R_FULL_MASK, probe, last_le) : lo;
        const int first_gt = last_le + 1;
        const bool has_gt = first_gt < 32 && ((inside >> first_gt) & 1u);
        const r_size new_hi = __shfl_sync(R_FULL_MASK, probe, has_gt ? first_gt : 0);
        lo = new_lo;
        hi = has_gt ? new_hi : hi;
    }
    return lo;
}

#endif

// Writes segment `id`'s value: into the stage when it falls in it, else to global memory.
__device__ __forceinline__ void r_put(M* __restrict__ out, M* stage, unsigned int stage_lo, unsigned int id, r_size segments, M v) {
    if (id - stage_lo < (unsigned int)R_STAGE) stage[id - stage_lo] = v;
    else if (id < segments) out[id] = v;
}

#if R_OFFSETS
// Rounds of offsets read at once per thread in r_mark_tile, and the segments of one round.
#define R_LOADS 4
#define R_ROUND (R_WARPS * (R_WARP - 1))

// The slot of item q of the tile in the segment-id marks: one word of padding after every
// R_ITEMS (even R_ITEMS), so that the 32 lanes of a warp, R_ITEMS items apart, read 32 banks.
#if R_ITEMS % 2 == 0
#define R_END_SLOT(q) ((q) + (q) / R_ITEMS)
#define R_END_SLOTS (R_TILE + R_BLOCK)
#else
#define R_END_SLOT(q) (q)
#define R_END_SLOTS R_TILE
#endif

// The marks of one tile [t0, last_item] from the offsets of segments w, w + 1, ... (w: the
// segment of item t0 - 1; 0 for the first tile), read once, coalesced, R_ROUND * R_LOADS at
// a time, while they start at or before last_item (to the end on the grid's last tile):
//   head[p - t0] = 1   where item p starts a non-empty segment;
//   end_id[R_END_SLOT(p - t0)] = s where item p < last_item ends non-empty segment s;
//   *tile_last = s     for the segment s holding last_item;
//   identity           for every empty segment at an item of the tile (staged), and for the
//                      empty segments at n on the grid's last tile (written directly).
// `rounds` (1..R_LOADS) sizes the first round from the previous tile's segment count. Returns
// whether a segment starts or lies inside the tile (at t0 or later). Every thread must call it;
// the caller's barrier publishes the marks. A bad layout (trusted calls) only ever marks inside
// the tile and writes ids < segments.
// THE LAYOUT CHECK (bad != nullptr) rides on the same reads: offsets[w .. *read_end] are read
// (*read_end uniform), and *bad is set when a pair offsets[s] > offsets[s + 1] (s < segments),
// offsets[0] != 0 or offsets[segments] != n is among them. The caller checks that the reads of
// its tiles cover [0, segments] (s_cover).
__device__ __forceinline__ bool r_mark_tile(const unsigned int* __restrict__ offsets, r_size segments, r_size n,
                                            r_size w, r_size t0, r_size last_item, unsigned int rounds,
                                            unsigned char* head, unsigned int* end_id, r_size* tile_last,
                                            M* __restrict__ out, M* stage, unsigned int stage_lo,
                                            r_size* read_end, bool* bad) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1), warp = threadIdx.x / R_WARP;
    // Positions in 32 bits: SegShuffle takes at most 2^32 - 1 items (u32 layouts).
    const unsigned int first = (unsigned int)t0, last = (unsigned int)last_item;
    const bool grid_last = last_item + 1 == n;
    bool starts = false;
    r_size base = w;
    for (;;) {
        // The round's loads first, and the next round's first offset with them (whether
        // another round is needed): one memory latency per round. Lane l < 31 of warp k takes
        // segment s = base + u * R_ROUND + 31 k + l; lane 31 reads offsets[s] for lane 30 only.
        unsigned int ov[R_LOADS];
#pragma unroll
        for (unsigned int u = 0; u < R_LOADS; ++u) {
            const r_size s = base + (r_size)u * R_ROUND + warp * (R_WARP - 1) + lane;
            ov[u] = u < rounds && s <= segments ? __ldg(offsets + s) : 0u;
        }
        const r_size next = base + (r_size)rounds * R_ROUND;
        const unsigned int next_offset = next < segments && !grid_last ? __ldg(offsets + next) : 0u;
#pragma unroll
        for (unsigned int u = 0; u < R_LOADS; ++u) {
            if (u < rounds) {  // uniform
                const r_size s = base + (r_size)u * R_ROUND + warp * (R_WARP - 1) + lane;
                const unsigned int o = ov[u];
                const unsigned int o1 = __shfl_down_sync(R_FULL_MASK, o, 1);
                if (bad != nullptr && s <= segments) {  // uniform: validated calls only
                    const bool wrong = (lane < R_WARP - 1 && s < segments && o > o1) || (s == 0 && o != 0) ||
                                       (s == segments && o != (unsigned int)n);
                    if (wrong) *bad = true;
                }
                if (lane < R_WARP - 1 && s < segments && (o <= last || grid_last)) {
                    const bool inside = o >= first && o <= last;
                    if (o < o1) {  // non-empty: items [o, o1)
                        if (inside) head[o - first] = 1;
                        const unsigned int e = o1 - 1;
                        if (e >= first && e < last) end_id[R_END_SLOT(e - first)] = (unsigned int)s;
                        if (o <= last && e >= last) *tile_last = s;
                    } else if (inside) {
                        r_put(out, stage, stage_lo, (unsigned int)s, segments, m_identity());
                    } else if (grid_last && o >= n) {
                        out[s] = m_identity();  // trailing empty segments
                    }
                    starts |= inside;
                }
            }
        }
        base = next;
        // Uniform: does the next segment still start at or before the tile's last item?
        if (base >= segments || (!grid_last && next_offset > last)) break;
        rounds = R_LOADS;
    }
    *read_end = base;
    return starts;
}

// This thread's head bytes (items a .. a + R_ITEMS of the tile, from byte `first`), cleared
// behind it for the next tile.
__device__ __forceinline__ void r_take_heads(unsigned char* head, unsigned int first, unsigned char (&hd)[R_ITEMS]) {
#if R_ITEMS % 16 == 0
    uint4* p = reinterpret_cast<uint4*>(head + first);
#pragma unroll
    for (int k = 0; k < R_ITEMS / 16; ++k) {
        const uint4 v = p[k];
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 16; ++j) hd[16 * k + j] = (unsigned char)(words[j / 4] >> (8 * (j % 4)));
        p[k] = make_uint4(0u, 0u, 0u, 0u);
    }
#elif R_ITEMS % 4 == 0
    unsigned int* p = reinterpret_cast<unsigned int*>(head + first);
#pragma unroll
    for (int k = 0; k < R_ITEMS / 4; ++k) {
        const unsigned int v = p[k];
#pragma unroll
        for (int j = 0; j < 4; ++j) hd[4 * k + j] = (unsigned char)(v >> (8 * j));
        p[k] = 0u;
    }
#else
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) {
        hd[i] = head[first + i];
        head[first + i] = 0;
    }
#endif
}
#endif

// One launch. rec_vals: 2 * gridDim.x M (entry part, exit value); rec_meta: 3 * gridDim.x
// r_size (entry segment, exit segment, single; see r_join_records). *ticket is 0 on entry and left
// 0; *status (R_NO_INDEX on entry) receives the first bad owner index (owner form, always) or,
// when `validate`, 0 if the offsets are bad or the marks' reads missed some (offsets form; see
// r_mark_tile and s_cover: the caller then runs the exact check). seg_estimate:
// segments per tile on average (offsets form: sizes the first round of offsets read per tile).
// Dynamic shared memory (offsets form): R_END_SLOTS segment-id slots, then R_TILE head bytes.
// At least R_MIN_BLOCKS resident blocks per SM: caps registers so that enough tiles are in flight
// (profiled on an H100: the offsets form otherwise took 76 registers, 35% occupancy).
extern "C" __global__ void __launch_bounds__(R_BLOCK, R_MIN_BLOCKS)
reduce_seg_shuffle(const r_in* __restrict__ in, r_size n, const unsigned int* __restrict__ seg_index, r_size segments,
                   M* __restrict__ out, M* __restrict__ rec_vals, r_size* __restrict__ rec_meta,
                   unsigned int* __restrict__ ticket, unsigned long long* __restrict__ status, r_size seg_estimate,
                   r_size validate) {
    __shared__ r_seg s_agg[2][R_WARP + 1];  // alternating per tile (see r_block_seg_exclusive)
    __shared__ M s_entry_val;
    __shared__ unsigned int s_entry, s_exit;
    __shared__ bool s_is_last;
    __shared__ M s_stage_buffers[2][R_STAGE];  // alternating per tile
#if R_OFFSETS
    __shared__ M s_single[2][R_WARPS];  // warp folds of a tile inside one segment, alternating
    __shared__ r_size s_tile_last[2];   // the segment of each tile's last item, alternating
    __shared__ r_size s_cover[2];  // the layout check: offsets read so far, and up to where
    __shared__ bool s_bad;         // the layout check: a bad entry read
    extern __shared__ unsigned int s_marks[];
    unsigned int* s_end_id = s_marks;
    unsigned char* s_head = reinterpret_cast<unsigned char*>(s_marks + R_END_SLOTS);
    const unsigned int* offsets = seg_index;
#else
    __shared__ unsigned int s_stage_hi[2];
    const unsigned int* owner = seg_index;
#endif
    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    const r_size b = blockIdx.x;
    const r_size q = tiles / gridDim.x, r = tiles % gridDim.x;
    const r_size tile_begin = b * q + (b < r ? b : r);
    const r_size tile_end = tile_begin + q + (b < r ? 1 : 0);
    const r_size block_first = tile_begin * R_TILE;

    // The segment of the item before the block: its in-block part is exported, not written.
#if R_OFFSETS
    if (threadIdx.x < R_WARP) {
        const r_size lo = block_first == 0 ? 0 : r_warp_find_segment(offsets, segments, block_first - 1);
        // The layout check (validate): this block's reads must reach the next block's first
        // segment (the same search), the last block's the end.
        const r_size block_end = tile_end * R_TILE;
        const r_size upto = !validate ? 0
                            : block_end >= n ? segments
                                             : r_warp_find_segment(offsets, segments, block_end - 1);
        if (threadIdx.x == 0) {
            s_entry = block_first == 0 ? R_NO_SEGMENT : (unsigned int)lo;
            s_tile_last[1] = lo;  // the "previous tile" of the first tile (parity 0)
            s_tile_last[0] = lo;
            s_cover[0] = lo;
            s_cover[1] = upto;
            s_bad = false;
        }
    }
    // Head bytes start cleared; each thread clears its own, after reading them, per tile.
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) s_head[threadIdx.x * R_ITEMS + i] = 0;
    r_size seg_per_tile = seg_estimate;
#else
    (void)validate;  // the owner form always checks, fused into its reads
    if (threadIdx.x == 0) s_entry = block_first == 0 ? R_NO_SEGMENT : owner[block_first - 1];
#endif
    if (threadIdx.x == 0) s_entry_val = m_identity();
    __syncthreads();
    const unsigned int entry = s_entry;

    r_seg carry = r_seg_identity();
    r_size bad = R_NO_INDEX;
    for (r_size tile = tile_begin; tile < tile_end; ++tile) {
        const unsigned int parity = (unsigned int)((tile - tile_begin) & 1);
        M* s_stage = s_stage_buffers[parity];
        const r_size t0 = tile * R_TILE;
        const r_size a = t0 + (r_size)threadIdx.x * R_ITEMS;
        const int count = a >= n ? 0 : (int)(n - a < R_ITEMS ? n - a : R_ITEMS);
        const r_size last_item = (t0 + R_TILE < n ? t0 + R_TILE : n) - 1;
        M it[R_ITEMS];
#if R_OFFSETS
        // The items are read after the marks (registers: the marks read offsets in batches),
        // asked of L2 now so that the read finds them there.
        r_prefetch_items(in, a, count);
#else
        r_load_items(in, a, count, it);
#endif

        // Pass 1: fold runs; write the segments that start and end inside this thread's items.
        // `prev`: the segment closed by this run's first segment start (R_NO_SEGMENT: none, or
        // item 0); `last`: the segment of the run's last item (owner form).
        unsigned int prev = R_NO_SEGMENT;
        bool boundary = false;
        M run = m_identity();
        M head = m_identity();
#if R_OFFSETS
        // The segment of the item before the tile (written by the previous tile's marks).
        const r_size w = s_tile_last[parity ^ 1];
        const unsigned int stage_lo = t0 == 0 ? 0u : (unsigned int)w;
        const r_size want = seg_per_tile / R_ROUND + 1;
        const unsigned int rounds = want < R_LOADS ? (unsigned int)want : R_LOADS;
        r_size read_end;
        const bool starts = r_mark_tile(offsets, segments, n, w, t0, last_item, rounds, s_head, s_end_id,
                                        &s_tile_last[parity], out, s_stage, stage_lo, &read_end,
                                        validate ? &s_bad : nullptr);
        // The reads of the block's tiles so far: [block's entry segment, s_cover[0]], without a
        // gap (w, the segment of the tile's last item, is one that a tile before read).
        if (threadIdx.x == 0 && validate) s_cover[0] = max(s_cover[0], read_end);
        const bool any_start = __syncthreads_or(starts) != 0;
        r_load_items(in, a, count, it);
        const r_size tile_last_seg = s_tile_last[parity];
        seg_per_tile = tile_last_seg - w + 1;
        // The segment open at the block's end (exported, finished by the last block).
        if (tile + 1 == tile_end && threadIdx.x == 0) s_exit = (unsigned int)tile_last_seg;
        // A tile inside one segment (not the first tile): fold the items, then the warps in
        // order, into the carry. No segmented scan, no writes.
        if (t0 > 0 && !any_start) {
            M v = m_identity();
#pragma unroll
            for (int i = 0; i < R_ITEMS; ++i)
                if (i < count) v = m_combine(v, it[i]);
            v = r_warp_reduce(v);
            if ((threadIdx.x & (R_WARP - 1)) == 0) s_single[parity][threadIdx.x / R_WARP] = v;
            __syncthreads();
            M tile_total = m_identity();
#pragma unroll
            for (int w8 = 0; w8 < R_WARPS; ++w8) tile_total = m_combine(tile_total, s_single[parity][w8]);
            carry.v = m_combine(carry.v, tile_total);
            continue;
        }
        {
            // Item a + i is item mine + i of the tile.
            const unsigned int mine = threadIdx.x * R_ITEMS;
            unsigned char hd[R_ITEMS];
            r_take_heads(s_head, mine, hd);
            unsigned int first_start = 0;  // the first segment start in the run, in the tile
#pragma unroll
            for (int i = 0; i < R_ITEMS; ++i) {
                if (i < count) {
                    if (hd[i]) {
                        if (!boundary) {
                            head = run;
                            boundary = true;
                            first_start = mine + i;
                        } else {
                            r_put(out, s_stage, stage_lo, s_end_id[R_END_SLOT(mine + i - 1)], segments, run);
                        }
                        run = it[i];
                    } else {
                        run = m_combine(run, it[i]);
                    }
                }
            }
            // Read before the scan: the next tile's marks overwrite s_end_id after this tile's
            // copy barrier, which every thread passes only once done with this tile's reads.
            if (boundary && t0 + first_start > 0)
                prev = first_start == 0 ? (unsigned int)w : s_end_id[R_END_SLOT(first_start - 1)];
        }
#else
        // The segment of every item, and of the item before the run (R_NO_SEGMENT for item 0).
        unsigned int own[R_ITEMS];
        prev = (a > 0 && count > 0) ? owner[a - 1] : R_NO_SEGMENT;
#if R_ITEMS % 4 == 0 && R_INDEX_VEC
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
        } else
#endif
        {
#pragma unroll
            for (int i = 0; i < R_ITEMS; ++i) own[i] = i < count ? owner[a + i] : R_NO_SEGMENT;
        }

        // The first id this tile may close: the segment of the item before it (0 for item 0).
        const unsigned int stage_lo = t0 == 0 ? 0u : owner[t0 - 1];
        unsigned int last = prev;
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) {
            if (i < count) {
                const unsigned int o = own[i];
                if (o >= segments || (last != R_NO_SEGMENT && o < last)) bad = min(bad, a + i);
                if (o != last) {
                    if (!boundary) {
                        head = run;
                        boundary = true;
                    } else if (last < segments) {
                        r_put(out, s_stage, stage_lo, last, segments, run);
                    }
                    // Empty segments between the previous item's and this one's.
                    for (unsigned int e = last == R_NO_SEGMENT ? 0u : last + 1; e < o && e < segments; ++e)
                        r_put(out, s_stage, stage_lo, e, segments, m_identity());
                    run = it[i];
                    last = o;
                } else {
                    run = m_combine(run, it[i]);
                }
            }
        }
        if (count > 0 && a + count == n && last < segments) {
            for (r_size e = (r_size)last + 1; e < segments; ++e) out[e] = m_identity();  // trailing empties
        }
        if (count > 0 && a + count == last_item + 1) {  // this thread holds the tile's last item
            s_stage_hi[parity] = last;
            if (tile + 1 == tile_end) s_exit = last;  // open at the block's end: the last block finishes it
        }
#endif

        // Join heads and tails: block-wide segmented scan continuing the block's carry.
        r_seg element;
        element.flag = boundary ? 1u : 0u;
        element.v = run;
        r_seg total;
        const r_seg before = r_block_seg_exclusive(element, carry, s_agg[parity], &total);
        carry = total;

        // Pass 2: the segment open when this run started is closed by this run's first start.
        if (boundary && prev != R_NO_SEGMENT) {
            const M closed = m_combine(before.v, head);
            if (prev == entry) {
                s_entry_val = closed;  // crosses the block start: the last block finishes it
            } else if (prev < segments) {
                r_put(out, s_stage, stage_lo, prev, segments, closed);
            }
        }
        // Copy the staged segments [stage_lo, segment of the tile's last item) out, coalesced.
        __syncthreads();
        {
#if R_OFFSETS
            const unsigned int hi = (unsigned int)tile_last_seg;
#else
            const unsigned int hi = s_stage_hi[parity];
#endif
            const unsigned int staged = hi > stage_lo ? min(hi - stage_lo, (unsigned int)R_STAGE) : 0u;
            for (unsigned int k = threadIdx.x; k < staged; k += R_BLOCK) {
                const unsigned int id = stage_lo + k;
                if (id != entry && id < segments) out[id] = s_stage[k];
            }
        }
        // No barrier here: the next tile writes the other stage and scan buffers, and its scan's
        // first barrier orders this copy before the tile after next reuses these.
    }
#if !R_OFFSETS
    if (bad != R_NO_INDEX) atomicMin(status, (unsigned long long)bad);
#endif
    __syncthreads();
#if R_OFFSETS
    // Any bad entry or gap: the caller runs the exact check (seg_validate_offsets) for the error.
    if (threadIdx.x == 0 && validate && (s_bad || s_cover[0] < s_cover[1])) atomicMin(status, 0ull);
#endif

    // Export this block's record; the last block to finish joins the records in block order.
    if (threadIdx.x == 0) {
        rec_vals[2 * b] = s_entry_val;
        rec_vals[2 * b + 1] = carry.v;
        rec_meta[3 * b] = entry == R_NO_SEGMENT ? R_NO_SEG64 : entry;
        rec_meta[3 * b + 1] = s_exit == R_NO_SEGMENT ? R_NO_SEG64 : s_exit;
        rec_meta[3 * b + 2] = carry.flag ? 0u : 1u;  // single: no segment starts in the block
        __threadfence();
        s_is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_is_last) return;
    __threadfence();
    r_join_records(rec_vals, rec_meta, gridDim.x, segments, out, s_agg[0]);
    if (threadIdx.x == 0) *ticket = 0;
}
