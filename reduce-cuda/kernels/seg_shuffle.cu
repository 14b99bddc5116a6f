// SegShuffle: single-launch, order-keeping segmented reduction (ours), owner or offsets form.
//
// ORDER INVARIANT. Block b owns a contiguous run of tiles (R_BLOCK * R_ITEMS consecutive items),
// runs in increasing b; thread t of a tile owns the R_ITEMS consecutive items from t * R_ITEMS.
// A thread folds its items left to right, restarting at every segment start; the part of its
// first segment before its first segment start ("head") and the open run at its end ("tail")
// are joined with the neighbours by an inclusive segmented scan over threads — warp shuffles at
// increasing offsets, then warps in order, then tiles in order, every combine (earlier, later).
// The segment open when a thread's run starts gets carry ⊕ head, closed by that thread. Across
// blocks the same scan runs, in the last block to finish, over per-block records (entry
// segment's in-block part, exit segment's open value): so a segment split over blocks is still
// folded left to right.
//
// EXACTLY ONCE. Every segment's value is written by exactly one thread: a segment the tile
// closes by the thread that copies its stage slot out (below), a segment crossing a block start
// by the last block, the last segment by the last block. Owner form: the fold writes a segment's
// value into its stage slot when it closes it (interior segments by the thread that holds them,
// one closed at the start of a thread's run by that thread); empty segments' slots hold the
// identity; past the stage, the block fills the tile's ids with the identity, then a barrier,
// then the fold writes the non-empty ones over it; the grid's last tile fills the trailing
// ones. Offsets form: the fold stores its scan per item (s_vals) and the thread closing a
// segment at the start of its run stores carry ⊕ head at the item before that start, so that a
// segment's value is the value at its last item's slot; the stage holds where each segment ends
// (r_mark_tile), and the copy-out reads the value there (the identity for an empty one). Past
// the stage, as in the owner form: the block fills the ids with the identity after the marks,
// and the non-empty ones are written over it from their re-read offsets after the copy-out
// (r_put_past_stage), barriers later; the grid's last tile fills the trailing ones.
//
// OUTPUT STAGING. The segments a tile closes form one contiguous range of ids, from the segment
// of the item before the tile up to (not including) the segment of its last item; R_STAGE of
// them are staged in shared memory (owner form: values, the identity until written, reset to it
// when copied out; offsets form: end positions) and copied out coalesced after the tile, empty
// ones included. Ids past the stage, trailing empty segments and the cross-block records are
// written directly.
//
// Items are r_in values lifted into M by m_lift (r_in = M and the identity lift unless the
// monoid lifts another type). Owners and offsets are u32 or u64 (R_IDX64), narrowed to 32 bits
// as they are read (r_narrow: fewer than 2^32 - 1 items and segments here; an entry past that
// reads as a bad one). Owner form: owner[i] for every item, non-decreasing, < segments;
// a bad owner is reported in *status (first bad index, atomicMin) and never written through;
// owners are read as 16-byte vectors when R_INDEX_VEC (16-byte aligned). Offsets form
// (R_OFFSETS = 1): before each tile the block reads, once and coalesced, the offsets of the
// segments that touch the tile and turns them into shared-memory marks (r_mark_tile): a head
// byte at every item that starts a non-empty segment, the end position of every segment the
// tile closes, and the segment of the tile's last item. Threads then fold runs from the head
// bytes alone: no search, no per-item walk, no segment ids. A tile's items are loaded as soon as
// the tile before has folded its own, its offsets asked of L2 once its first segment is known
// and their first batch loaded into registers during that tile's scans (R_MARKS_AHEAD; copying
// them into shared memory instead measured slower:
// docs/decisions/0020-offsets-to-shared-memory.md). A tile inside one segment (no segment starts
// or lies in it) takes a short path: an order-keeping fold of its items into the block's carry,
// no segmented scan and no writes. A validated call checks the
// offsets on the marks' own reads: every pair they read, that the reads of all blocks together
// cover every entry, and the array's ends (the host runs the exact check for the error if not);
// with few offsets the grid's last block checks them all before its tiles instead (R_CHECK_EARLY).
// The tile's loads and marks are in kernels/seg_tile.cuh (included before this file).
//
// SegPipeline is this kernel with R_PIPE > 0: a producer warp after the R_BLOCK threads copies
// each tile's items into shared-memory stages (kernels/pipe.cuh) and the threads read them from
// there instead of global memory; everything above holds unchanged (the pipeline only moves
// bytes), and the threads synchronise among themselves only (r_sync: named barrier 1).

// THE FOLD of a thread's run (both forms): items left to right; at each segment start a new
// run begins (the part before the first start is the run's `head`). Branch-free per item: the
// lanes of a warp meet segment starts at different items, and a branch per item would make
// every lane pay for every lane's starts. Two versions: NEAR (all R_ITEMS items there) and the
// grid's last tile (`count` items).
//   Offsets form: the fold is a segmented scan stored per item (r_scan_run); the segments the
//     tile closes are read afterwards at their last items' slots, in segment order (r_mark_tile
//     leaves where each one ends), so the fold carries no segment ids and writes no results.
//     A warp none of whose items starts a segment skips it for a plain loop of the same combines.
//   Owner form: at each start the open value is closed and written to the stage (r_close).
struct r_fold_state {
    M run;          // the value open at the current item
    M head;         // the run's part before its first segment start
    bool boundary;  // a segment starts in the run
};

#if R_PIPE
// Items [a, a + count) of the tile whose item 0 is at `base` (a pipeline stage, pipe.cuh) into
// it[], lifted with their global indices from `first` (the tile's first item); the rest the
// identity. Whole runs as 16-byte vectors (aligned: r_stage_vectors; else shifted into place by
// r_load_shifted), item by item otherwise.
__device__ __forceinline__ void r_stage_items(const unsigned char* base, unsigned int a, r_size first, int count,
                                              M (&it)[R_ITEMS]) {
    const r_in* src = reinterpret_cast<const r_in*>(base) + a;
#if R_VECS > 0
    if (count == R_ITEMS) {
        r_lane_items t;
        if (R_ITEM_SHIFT == 0) r_stage_vectors(reinterpret_cast<const uint4*>(src), t.v);
        else r_load_shifted(src, R_ITEM_SHIFT, t.v, [](const uint4* p) { return *p; });
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) it[i] = m_lift(t.m[i], first + a + i);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) it[i] = i < count ? m_lift(src[i], first + a + i) : m_identity();
}
#endif

// out[lo, hi) = the identity, by the whole block, coalesced.
__device__ __forceinline__ void r_fill_identity(M* __restrict__ out, r_size lo, r_size hi) {
    for (r_size e = lo + threadIdx.x; e < hi; e += R_BLOCK) out[e] = m_identity();
}

// The empty segments a tile's stage does not hold (both forms), with the identity, by the whole
// block: ids [stage_lo + R_STAGE, tile_last), where the non-empty ones are written over it later
// (the caller puts a barrier between), and on the grid's last tile the ids after tile_last, the
// segment of its last item. Ids below `segments` only. Returns whether it filled past the stage
// (uniform). The owner form's fills past the stage of more than R_FREE_FILLS ids per item of the
// tile take the launch's budget (r_take_fill_budget): a bad layout's tiles, each reading its own
// owners, may each ask for nearly every id. The offsets form's tiles take their ids from the
// marks, which chain each tile's first segment to the one before's last: no budget (its
// registers have no room for one: the load ahead of the marks would spill).
__device__ __forceinline__ bool r_fill_unstaged(M* __restrict__ out, r_size stage_lo, r_size tile_last,
                                                r_size segments, bool grid_last,
                                                unsigned long long* __restrict__ budget) {
    const bool past = tile_last > stage_lo + R_STAGE;
#if R_OFFSETS
    (void)budget;
    if (past) r_fill_identity(out, stage_lo + R_STAGE, min(tile_last, segments));
#else
    __shared__ bool s_fill;
    if (past) {
        const r_size lo = stage_lo + R_STAGE, hi = min(tile_last, segments);
        const r_size count = hi > lo ? hi - lo : 0;
        bool fill = count <= (r_size)R_FREE_FILLS * R_TILE;
        if (!fill) {
            if (threadIdx.x == 0) s_fill = r_take_fill_budget(budget, count, segments);
            r_sync();
            fill = s_fill;
        }
        if (fill) r_fill_identity(out, lo, hi);
    }
#endif
    if (grid_last) r_fill_identity(out, tile_last + 1, segments);
    return past;
}

#if R_OFFSETS
// The thread's `count` items combined left to right (the fold of a run without a segment start).
__device__ __forceinline__ M r_fold_items(const M (&it)[R_ITEMS], int count) {
    M v = m_identity();
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i)
        if (i < count) v = m_combine(v, it[i]);
    return v;
}

// Offsets form: the run's segmented scan, stored. vals[i] (the thread's padded slots) = the fold
// of items since the last segment start at or before item i, or since the run's first item;
// starts from the head bits hm[] (r_take_heads). Returns the value open at the run's end. No
// segment ids and no writes of results here: a segment's value is read at its last item's slot
// afterwards.
template <bool NEAR>
__device__ __forceinline__ M r_scan_run(const M (&it)[R_ITEMS], const unsigned int (&hm)[R_HEAD_WORDS], int count,
                                        M* vals) {
    M run = m_identity();
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) {
        if (NEAR || i < count) {
            run = (hm[i / 32] >> (i % 32)) & 1u ? it[i] : m_combine(run, it[i]);
            vals[i] = run;
        }
    }
    return run;
}

// Offsets form: the non-empty segments (lo, hi) past the stage (a tile closing more than R_STAGE
// ids: many empty segments), from their offsets (the marks read them: cached) and the tile's
// scan values; the empty ones there are the marks'. Bad layouts: only slots inside the tile.
__device__ void r_put_past_stage(const r_idx* __restrict__ offsets, r_size lo, r_size hi, unsigned int first,
                                 unsigned int last, const M* vals, M* __restrict__ out) {
    for (r_size s = lo + threadIdx.x; s < hi; s += R_BLOCK) {
        const unsigned int o = r_index(offsets + s), o1 = r_index(offsets + s + 1);
        const unsigned int e = o1 - 1 - first;
        if (o < o1 && e < last - first) out[s] = vals[R_VAL_SLOT(e)];
    }
}
#else
// Writes segment `id`'s value: into the stage when it falls in it, else to global memory.
// Small enough to be predicated (no branch) inside the unrolled folds.
__device__ __forceinline__ void r_put(M* __restrict__ out, M* stage, unsigned int stage_lo, unsigned int id,
                                      r_size segments, M v) {
    if (id - stage_lo < (unsigned int)R_STAGE) stage[id - stage_lo] = v;
    else if (id < segments) out[id] = v;
}

// stage[slot] = v when p, as predicated st.shared of the words of v at a 32-bit shared address
// (no branch, and no generic address rebuilt per store under the register cap); plain C++
// where M is not whole words, and off the GPU (the emulator).
__device__ __forceinline__ void r_stage_if(bool p, M* stage, unsigned int slot, M v) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(M) % 4 == 0 && alignof(M) >= 4) {
        const unsigned int addr = (unsigned int)__cvta_generic_to_shared(stage) + slot * (unsigned int)sizeof(M);
        r_bits b;
        b.m = v;
#pragma unroll
        for (int k = 0; k < R_WORDS; ++k)
            asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t@q st.shared.b32 [%1], %2;\n\t}" ::"r"(
                             (unsigned int)p),
                         "r"(addr + 4 * k), "r"(b.w[k])
                         : "memory");
        return;
    }
#endif
    if (p) stage[slot] = v;
}

// Closes segment `id` with value v when p. NEAR (every id the run can close lies in the stage):
// one predicated shared store, the slot clamped to the dump slot R_STAGE so that a bad layout
// stays in bounds; otherwise r_put. Empty segments are never written here: their stage slots
// hold the identity, and the block writes those past the stage (r_fill_identity).
template <bool NEAR>
__device__ __forceinline__ void r_close(bool p, M* __restrict__ out, M* stage, unsigned int stage_lo, unsigned int id,
                                        r_size segments, M v) {
    if (NEAR) r_stage_if(p, stage, min(id - stage_lo, (unsigned int)R_STAGE), v);
    else if (p) r_put(out, stage, stage_lo, id, segments, v);
}

// Owner form: a start wherever the owner changes (`last`: the owner of the item before the run,
// R_NO_SEGMENT before item 0). Bit i of *bad_mask is set when item i's owner is bad (past the
// segments, or below the one before).
template <bool NEAR>
__device__ __forceinline__ void r_fold_owners(const M (&it)[R_ITEMS], const unsigned int (&own)[R_ITEMS], int count,
                                              unsigned int last, M* __restrict__ out, M* stage, unsigned int stage_lo,
                                              r_size segments, r_fold_state& st, unsigned int* bad_mask) {
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) {
        const bool here = NEAR || i < count;
        const unsigned int o = own[i];
        const bool start = here && o != last;
        if (here && (o >= segments || (last != R_NO_SEGMENT && o < last))) *bad_mask |= 1u << i;
        r_close<NEAR>(start && st.boundary, out, stage, stage_lo, last, segments, st.run);
        if (start && !st.boundary) st.head = st.run;
        st.boundary = st.boundary || start;
        if (here) st.run = start ? it[i] : m_combine(st.run, it[i]);
        last = start ? o : last;
    }
}
#endif

// Tile numbers. The offsets form takes them in 32 bits (SegShuffle takes fewer than 2^32 items):
// with the block's carry in shared memory (s_carry), that frees the registers that the load of a
// tile's first offsets ahead of its marks needs under the cap (R_MARKS_AHEAD): Affine spilled 44
// bytes and fell back to the kernel without it, and now takes it, 3-9% faster on short segments.
// The owner form, which has no load ahead, measured 2-6% slower with 32-bit tile numbers and
// keeps 64-bit ones (docs/decisions/0008-carry-in-shared-memory.md).
#if R_OFFSETS
typedef unsigned int r_tile;
#else
typedef r_size r_tile;
#endif

// One launch of at most as many blocks as tiles (every block owns at least one: a block without
// one would read the owner before its empty range and leave the fused check's cover short).
// rec_vals: 2 * gridDim.x M (entry part, exit value); rec_meta: 3 * gridDim.x
// r_size (entry segment, exit segment, single; see r_join_records). *ticket and *fill_budget
// (r_fill_unstaged) are 0 on entry and left 0; *status (R_NO_INDEX on entry, and left so by the
// last block) receives the first bad owner index (owner form, always) or, offsets form with check = R_CHECK_FUSED, 0 if the offsets are
// bad or the marks' reads missed some (see r_mark_tile and s_cover: the caller then runs the
// exact check). *status_out (when not null: a word of host memory mapped for the device)
// receives the final *status from the last block, so that the caller reads it without a copy;
// or, offsets form with check = R_CHECK_EARLY (few offsets: at most R_EARLY_PER_THREAD per
// thread), the exact check's first error key (r_offsets_key), which the grid's last block
// computes before its tiles (it has a tile fewer than the first blocks unless every block has
// as many): the caller reads it while the launch still runs, and need not wait for its end
// (the marks then check nothing). check is R_CHECK_NONE for trusted calls. seg_estimate:
// segments per tile on average (offsets form: sizes the first tile's L2 prefetch of offsets).
// Dynamic shared memory (offsets form): R_VAL_SLOTS M (the items' scan values), R_STAGE end
// positions (r_endpos), R_TILE head bytes.
// At least R_MIN_BLOCKS resident blocks per SM: caps registers so that enough tiles are in flight
// (profiled on an H100: the offsets form otherwise took 76 registers, 35% occupancy).
extern "C" __global__ void __launch_bounds__(R_BLOCK_THREADS, R_MIN_BLOCKS)
reduce_seg_shuffle(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ seg_index, r_size segments,
                   M* __restrict__ out, M* __restrict__ rec_vals, r_size* __restrict__ rec_meta,
                   unsigned int* __restrict__ ticket, unsigned long long* __restrict__ status,
                   unsigned long long* __restrict__ fill_budget, r_size seg_estimate, r_size check,
                   unsigned long long* __restrict__ status_out) {
    // The layout check fused into the marks.
    const bool validate = check == R_CHECK_FUSED;
    __shared__ r_seg s_agg[2][R_WARP + 1];  // alternating per tile (see r_block_seg_exclusive)
    // The block's carry (the scan element of its items so far) entering each tile, alternating:
    // in shared memory rather than registers (thread 0 writes the next), see r_tile.
    __shared__ r_seg s_carry[2];
    __shared__ M s_entry_val;
    __shared__ unsigned int s_entry, s_exit;
#if R_OFFSETS || R_PIPE
    extern __shared__ uint4 s_dynamic[];
#endif
#if R_OFFSETS
    __shared__ M s_single[2][R_WARPS];  // warp folds of a tile inside one segment, alternating
    __shared__ r_size s_tile_last[2];   // the segment of each tile's last item, alternating
    __shared__ r_size s_cover[2];  // the layout check: offsets read so far, and up to where
    __shared__ bool s_bad;         // the layout check: a bad entry read, or a bad tile marked
    M* s_vals = reinterpret_cast<M*>(s_dynamic + R_PIPE * R_PIPE_STAGE_BYTES / 16);
    r_endpos* s_endpos = reinterpret_cast<r_endpos*>(s_vals + R_VAL_SLOTS);
    unsigned char* s_head = reinterpret_cast<unsigned char*>(s_endpos + R_STAGE);
    const r_idx* offsets = seg_index;
#else
    // The output stage (slot R_STAGE: the dump): two, alternating per tile, as the next tile's
    // fold may begin before this tile's copy is done.
    __shared__ M s_stage_buffers[2][R_STAGE + 1];
    const r_idx* owner = seg_index;
#endif
    const r_tile tiles = (r_tile)((n + R_TILE - 1) / R_TILE);
    const r_tile b = blockIdx.x;
    const r_tile q = tiles / gridDim.x, r = tiles % gridDim.x;
    const r_tile tile_begin = b * q + (b < r ? b : r);
    const r_tile tile_end = tile_begin + q + (b < r ? 1 : 0);
    const r_size block_first = (r_size)tile_begin * R_TILE;
#if R_PIPE
    // The tile pipeline: the stages lead the dynamic shared memory; the producer warp (the
    // block's last) fills them and leaves, the R_BLOCK threads below fold them.
    __shared__ unsigned long long s_full[R_PIPE], s_empty[R_PIPE];
    unsigned char* s_stages = reinterpret_cast<unsigned char*>(s_dynamic);
    if (threadIdx.x == 0) {
        for (int k = 0; k < R_PIPE; ++k) {
            r_mbar_init(&s_full[k], R_WARP);
            r_mbar_init(&s_empty[k], R_BLOCK);
        }
        r_mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x >= R_BLOCK) {
        r_produce(in, n, tile_begin, tile_end, s_stages, s_full, s_empty);
        return;
    }
#endif

    // The segment of the item before the block: its in-block part is exported, not written.
#if R_OFFSETS
    const unsigned int warp = threadIdx.x / R_WARP;
    if (warp == 0) {
        const r_size lo = block_first == 0 ? 0 : r_warp_find_segment(offsets, segments, block_first - 1);
        if (threadIdx.x == 0) {
            s_entry = block_first == 0 ? R_NO_SEGMENT : (unsigned int)lo;
            s_tile_last[1] = lo;  // the "previous tile" of the first tile (parity 0)
            s_tile_last[0] = lo;
            s_cover[0] = lo;
            // The layout check's ends: offsets[0] = 0 (first block), offsets[segments] = n (last).
            s_bad = validate && ((b == 0 && __ldg(offsets) != 0) ||
                                 (b + 1 == gridDim.x && __ldg(offsets + segments) != (r_idx)n));
        }
    }
    // The layout check (validate): this block's checked entries must reach the next block's
    // first segment (the same search, by the next warp: both searches' loads at once), the
    // last block's past entry `segments`.
    if (warp == (R_WARPS > 1 ? 1u : 0u)) {
        const r_size block_end = (r_size)tile_end * R_TILE;
        const r_size upto = !validate ? 0
                            : block_end >= n ? segments + 1
                                             : r_warp_find_segment(offsets, segments, block_end - 1);
        if ((threadIdx.x & (R_WARP - 1)) == 0) s_cover[1] = upto;
    }
    // Head bytes start cleared; each thread clears its own, after reading them, per tile.
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) s_head[threadIdx.x * R_ITEMS + i] = 0;
    r_size seg_per_tile = seg_estimate;
#else
    (void)validate;  // the owner form always checks, fused into its reads (check is ignored)
    if (threadIdx.x == 0) s_entry = block_first == 0 ? R_NO_SEGMENT : r_index(owner + block_first - 1);
    for (unsigned int k = threadIdx.x; k < R_STAGE; k += R_BLOCK) {
        s_stage_buffers[0][k] = m_identity();
        s_stage_buffers[1][k] = m_identity();
    }
#endif
    if (threadIdx.x == 0) {
        s_entry_val = m_identity();
        s_carry[0] = r_seg_identity();
    }
    r_sync();
    const unsigned int entry = s_entry;
#if R_OFFSETS
    if (check == R_CHECK_EARLY && b + 1 == gridDim.x) {
        const unsigned long long key = r_check_offsets_block(offsets, segments + 1, n);
        if (threadIdx.x == 0) *status_out = key;
    }
    // The first tile's (its marks write s_tile_last[0] meanwhile, and read [1]).
    r_prefetch_offsets(offsets, segments, s_tile_last[1], seg_per_tile);
    // A tile's first batch of offsets (segment w on: the segment of the item before the tile),
    // loaded ahead of its marks when R_MARKS_AHEAD (see r_load_marks_ahead): the first tile's now,
    // the next one's once the tile before has done its block scan (issued during the scans it
    // spilled even one-word sums); after a tile inside one segment, the tile keeps the batch it
    // has (the next tile's is the same). The load ahead makes short segments in the offsets form
    // 2-7% faster where the kernel stays free of local memory
    // (docs/decisions/0007-marks-ahead.md); keeping the batch makes long segments 3-9% faster,
    // trusted and validated (docs/decisions/0009-marks-batch-kept-inside-segment.md).
    auto marks_ahead = [&](r_size tile, r_size w) {
        const r_size end = (tile + 1) * R_TILE;
        return r_load_marks_ahead(offsets, segments, n, w, (end < n ? end : n) - 1);
    };
    r_marks_ahead ahead = marks_ahead(tile_begin, s_tile_last[1]);
#endif

    // A tile's items: thread t's are [tile * R_TILE + t * R_ITEMS, + count).
    M it[R_ITEMS];
    auto load_tile = [&](r_size tile) {
        const r_size a = tile * R_TILE + (r_size)threadIdx.x * R_ITEMS;
#if R_PIPE
        // From the tile's stage, which the warp then hands back to the producer.
        const unsigned int k = (unsigned int)(tile - tile_begin);
        const unsigned char* base = r_stage_wait(s_stages, s_full, k);
        r_stage_items(base, threadIdx.x * R_ITEMS, tile * R_TILE, r_run_count(a, n), it);
        r_stage_release(s_empty, k);
#else
        r_load_items(in, n, a, r_run_count(a, n), it);
#endif
    };
    // Offsets form: a tile's items are asked for as soon as the tile before has folded its own,
    // and stay in flight through that tile's scan and writes and their own marks (up to 1.07x on
    // short segments against loading them at the tile's start). Not for lifted items: the lift
    // waits for the loads where they are issued (docs/decisions/0010-items-a-tile-ahead.md).
    // With the tile pipeline the items wait in their stage instead: the offsets form reads them
    // after its marks (`late`: no registers held through the marks), the owner form at the
    // tile's start.
    constexpr bool pipe = R_OFFSETS && !R_LIFTED && !R_PIPE;
    constexpr bool late = R_OFFSETS && R_PIPE;
    if (pipe && tile_begin < tile_end) load_tile(tile_begin);
    r_size bad = R_NO_INDEX;
    for (r_tile tile = tile_begin; tile < tile_end; ++tile) {
        const unsigned int parity = (unsigned int)((tile - tile_begin) & 1);
        const r_size t0 = (r_size)tile * R_TILE;
        const r_size a = t0 + (r_size)threadIdx.x * R_ITEMS;
        const int count = r_run_count(a, n);
        const r_size last_item = (t0 + R_TILE < n ? t0 + R_TILE : n) - 1;
        // The items' loads first, in flight while the marks (offsets form) or the owners' loads
        // wait on memory: one memory latency per tile (offsets form 2-12% faster than reading
        // them after the marks: docs/decisions/0010-items-a-tile-ahead.md).
        if (!pipe && !late) load_tile(tile);
        r_fold_state st;
        st.run = m_identity();
        st.head = m_identity();
        st.boundary = false;
#if R_OFFSETS
        // The segment of the item before the tile (written by the previous tile's marks).
        const r_size w = s_tile_last[parity ^ 1];
        const unsigned int stage_lo = t0 == 0 ? 0u : (unsigned int)w;
        r_size read_end;
        const bool starts = r_mark_tile(offsets, segments, n, w, t0, last_item, ahead, s_head, s_endpos,
                                        &s_tile_last[parity], stage_lo, &read_end, validate ? &s_bad : nullptr);
        // The reads of the block's tiles so far: [block's entry segment, s_cover[0]], without a
        // gap (w, the segment of the tile's last item, is one that a tile before read).
        if (threadIdx.x == 0 && validate) s_cover[0] = max(s_cover[0], read_end);
        const bool any_start = r_sync_or(starts) != 0;
        if (late) load_tile(tile);
        const r_size tile_last_seg = s_tile_last[parity];
        seg_per_tile = tile_last_seg - w + 1;
        // The empty segments the marks leave (uniform, rare): the copy-out (pass 3, after the
        // block scan's barriers) writes the non-empty ones past the stage over the identity.
        r_fill_unstaged(out, stage_lo, tile_last_seg, segments, last_item + 1 == n, fill_budget);
        // The segment open at the block's end (exported, finished by the last block).
        if (tile + 1 == tile_end && threadIdx.x == 0) s_exit = (unsigned int)tile_last_seg;
        // The next tile's offsets, asked of L2 now that its first segment is known: its marks
        // then wait on L2, not on memory.
        if (tile + 1 < tile_end) r_prefetch_offsets(offsets, segments, tile_last_seg, seg_per_tile);
        // A tile inside one segment (not the first tile): fold the items, then the warps in
        // order, into the carry. No segmented scan, no writes.
        if (t0 > 0 && !any_start) {
            const M v = r_warp_reduce(r_fold_items(it, count));
            // The next tile starts in this tile's segment (tile_last_seg = w in a valid layout),
            // so its first batch of marks is this one's, the same reads (what r_mark_tile does
            // with the entry after it on the grid's last tile does not depend on it), still in
            // registers. Reloaded here, its first use held 37% of the stall samples on two-level
            // lengths, mostly tiles inside long segments, whose short path left the loads too
            // little time (docs/decisions/0009-marks-batch-kept-inside-segment.md). A bad layout
            // may mark a tile without a start and end it in another segment, and then the batch
            // belongs to another one: the marks stay in the tile all the same (r_mark_tile), and
            // a validated call reports it (the exact check then finds the error), so that its
            // layout check reads what it checks.
            // Without the load ahead each tile reads its own batch, so that kernel has nothing to
            // report (with the report, Affine with 12 items per thread, which runs it, spilled 8
            // bytes, which the NVRTC frame test catches).
            if (R_MARKS_AHEAD && threadIdx.x == 0 && validate && tile_last_seg != w) s_bad = true;
            if (pipe && tile + 1 < tile_end) load_tile(tile + 1);
            if ((threadIdx.x & (R_WARP - 1)) == 0) s_single[parity][threadIdx.x / R_WARP] = v;
            r_sync();
            if (threadIdx.x == 0) {
                M tile_total = m_identity();
#pragma unroll
                for (int w8 = 0; w8 < R_WARPS; ++w8) tile_total = m_combine(tile_total, s_single[parity][w8]);
                r_seg carry = s_carry[parity];
                carry.v = m_combine(carry.v, tile_total);
                s_carry[parity ^ 1] = carry;
            }
            continue;
        }
        // Pass 1: the runs' segmented scans, into s_vals. Item a + i is item mine + i of the
        // tile; `first_start` is the tile position of the run's first segment start.
        const unsigned int mine = threadIdx.x * R_ITEMS;
        unsigned int first_start;
        {
            unsigned int hm[R_HEAD_WORDS];
            const unsigned int at = r_take_heads(s_head, mine, hm);
            first_start = mine + at;
            st.boundary = at < R_ITEMS;
            M* my_vals = s_vals + R_VAL_SLOT(mine);
            // A warp none of whose items starts a segment (medium and long segments) folds them
            // as a plain reduction: the same combines in the same order, and no slot of it is
            // read but its last, which the next warp's first start fills (pass 2).
            if (__ballot_sync(R_FULL_MASK, st.boundary) == 0) {
                st.run = r_fold_items(it, count);
            } else {
                st.run = count == R_ITEMS ? r_scan_run<true>(it, hm, count, my_vals)
                                          : r_scan_run<false>(it, hm, count, my_vals);
                if (st.boundary && at > 0) st.head = my_vals[at - 1];
            }
        }
        if (pipe && tile + 1 < tile_end) load_tile(tile + 1);
#else
        // The segment of every item, and of the item before the run (R_NO_SEGMENT for item 0).
        M* s_stage = s_stage_buffers[parity];
        unsigned int own[R_ITEMS];
        const unsigned int prev = (a > 0 && count > 0) ? r_index(owner + a - 1) : R_NO_SEGMENT;
        r_load_owners(owner, a, count, own);

        // The first id this tile may close (the segment of the item before it; 0 for item 0),
        // and the segment of its last item, open at its end: the same for every thread.
        const unsigned int stage_lo = t0 == 0 ? 0u : r_index(owner + t0 - 1);
        const unsigned int tile_hi = r_index(owner + last_item);
        // The empty segments the stage cannot hold, with the identity, before the fold, which
        // may write a value over one of those past the stage: a barrier.
        if (r_fill_unstaged(out, stage_lo, tile_hi, segments, last_item + 1 == n, fill_budget)) r_sync();
        // NEAR: every id the run closes, up to its last owner (the largest in a good layout;
        // a bad one is reported anyway), lies in the stage.
        unsigned int bad_mask = 0;
        const bool near = count == R_ITEMS && (r_size)own[R_ITEMS - 1] <= (r_size)stage_lo + R_STAGE;
        if (near) r_fold_owners<true>(it, own, count, prev, out, s_stage, stage_lo, segments, st, &bad_mask);
        else r_fold_owners<false>(it, own, count, prev, out, s_stage, stage_lo, segments, st, &bad_mask);
        if (bad_mask != 0) bad = min(bad, a + (__ffs(bad_mask) - 1));
        // Open at the block's end: the last block finishes it.
        if (tile + 1 == tile_end && threadIdx.x == 0) s_exit = tile_hi;
#endif

        // Join heads and tails: block-wide segmented scan continuing the block's carry.
        r_seg element;
        element.flag = st.boundary ? 1u : 0u;
        element.v = st.run;
        r_seg total;
        const r_seg before = r_block_seg_exclusive(element, [&] { return s_carry[parity]; }, s_agg[parity], &total);
        if (threadIdx.x == 0) s_carry[parity ^ 1] = total;

#if R_OFFSETS
        if (tile + 1 < tile_end) ahead = marks_ahead(tile + 1, tile_last_seg);
        // Pass 2: the segment open when this run started ends just before its first start; its
        // slot there gets its value (carry . head). At the tile's first item: segment w, ended
        // on the tile before, written here (the block's entry segment: exported).
        if (st.boundary && t0 + first_start > 0) {
            const M closed = m_combine(before.v, st.head);
            if (first_start > 0) s_vals[R_VAL_SLOT(first_start - 1)] = closed;
            else if (w == entry) s_entry_val = closed;
            else if (w < segments) out[w] = closed;
        }
        r_sync();
        // Pass 3: the segments [stage_lo, segment of the tile's last item) the tile closes, in
        // order, coalesced: each from its last item's slot, the identity for the empty ones.
        // Ids below `segments` only (a bad layout's tile may claim more). Only slot 0 (segment
        // w) can have ended before the tile (R_END_SKIP: pass 2 wrote it) or be the block's entry
        // segment (the block's tiles start at or after it: its part goes to the block's
        // record), so thread 0 takes it apart and the loop copies slots 1.. with no test.
        {
            // 32-bit ids: SegShuffle's segments are fewer than 2^32 (u32 layouts).
            const unsigned int hi = (unsigned int)tile_last_seg, segs = (unsigned int)segments;
            const unsigned int room = segs > stage_lo ? min((unsigned int)R_STAGE, segs - stage_lo) : 0u;
            const unsigned int staged = hi > stage_lo ? min(hi - stage_lo, room) : 0u;
            M* __restrict__ dst = out + stage_lo;
            if (threadIdx.x == 0 && staged > 0) {
                const unsigned int e = s_endpos[0];
                const M v = e < (unsigned int)R_TILE ? s_vals[R_VAL_SLOT(e)] : m_identity();
                if (e != R_END_SKIP) {
                    if (stage_lo == entry) s_entry_val = v;
                    else dst[0] = v;
                }
            }
#pragma unroll 4
            for (unsigned int k = threadIdx.x == 0 ? R_BLOCK : threadIdx.x; k < staged; k += R_BLOCK) {
                const unsigned int e = s_endpos[k];
                dst[k] = e < (unsigned int)R_TILE ? s_vals[R_VAL_SLOT(e)] : m_identity();
            }
            if ((r_size)hi > (r_size)stage_lo + R_STAGE)  // uniform, rare: many empty segments
                r_put_past_stage(offsets, (r_size)stage_lo + R_STAGE, min((r_size)hi, segments), (unsigned int)t0,
                                 (unsigned int)last_item, s_vals, out);
        }
        // The next tile's marks rewrite s_endpos (two alternating s_endpos instead of this
        // barrier take 16 KiB more shared memory and measured slower on long segments:
        // docs/decisions/0023-no-barrier-after-copy-out.md).
        r_sync();
#else
        // Pass 2: the segment open when this run started is closed by this run's first start.
        if (st.boundary && prev != R_NO_SEGMENT) {
            const M closed = m_combine(before.v, st.head);
            if (prev == entry) {
                s_entry_val = closed;  // crosses the block start: the last block finishes it
            } else if (prev < segments) {
                r_put(out, s_stage, stage_lo, prev, segments, closed);
            }
        }
        // Copy the staged segments [stage_lo, segment of the tile's last item) out, coalesced,
        // empty ones included (their slots hold the identity), and leave the identity behind.
        r_sync();
        {
            const unsigned int hi = tile_hi;
            // Ids below `segments` only (a bad layout's tile may claim more); the entry segment
            // (slot 0 at most: the block's tiles start at or after it) is the last block's.
            const r_size room = min((r_size)R_STAGE, segments > stage_lo ? segments - stage_lo : 0);
            const unsigned int staged = hi > stage_lo ? (unsigned int)min((r_size)(hi - stage_lo), room) : 0u;
            const unsigned int skip = stage_lo == entry ? 1u : 0u;
            M* __restrict__ dst = out + stage_lo;
#pragma unroll 4
            for (unsigned int k = threadIdx.x; k < staged; k += R_BLOCK) {
                if (k >= skip) dst[k] = s_stage[k];
                s_stage[k] = m_identity();
            }
        }
        // No barrier here: the next tile writes the other scan buffer and the other stage, and
        // its scan's first barrier orders this copy before the tile after next reuses these.
#endif
    }
#if !R_OFFSETS
    if (bad != R_NO_INDEX) atomicMin(status, (unsigned long long)bad);
#endif
    r_sync();
#if R_OFFSETS
    // Any bad entry or gap: the caller runs the exact check (seg_validate_offsets) for the error.
    if (threadIdx.x == 0 && validate && (s_bad || s_cover[0] < s_cover[1])) atomicMin(status, 0ull);
#endif

    // Export this block's record; the last block to finish joins the records in block order.
    if (threadIdx.x == 0) {
        const r_seg carry = s_carry[(unsigned int)((tile_end - tile_begin) & 1)];
        rec_vals[2 * b] = s_entry_val;
        rec_vals[2 * b + 1] = carry.v;
        rec_meta[3 * b] = entry == R_NO_SEGMENT ? R_NO_SEG64 : entry;
        rec_meta[3 * b + 1] = s_exit == R_NO_SEGMENT ? R_NO_SEG64 : s_exit;
        rec_meta[3 * b + 2] = carry.flag ? 0u : 1u;  // single: no segment starts in the block
    }
    if (!r_last_block(ticket)) return;
    // Every block's report reached *status before its ticket (the fence above): the caller
    // waits for this word only, so it goes out before the join (the join takes 2-6 us:
    // docs/decisions/0015-validated-status-word.md).
    if (threadIdx.x == 0 && status_out != nullptr && check != R_CHECK_EARLY) *status_out = __ldcg(status);
    r_join_records(rec_vals, rec_meta, gridDim.x, segments, out, s_agg[0]);
    if (threadIdx.x == 0) {
        // The ticket, the word and the budget left as the next launch expects them: 0,
        // R_NO_INDEX and 0.
        *ticket = 0;
        *status = R_NO_INDEX;
        *fill_budget = 0;
    }
}
