// SegPortable: the segmented reduction in the portable grouping (SegConfig::portable), owner or
// offsets form: every segment's bits depend on its items and its position only — never on the
// device, the grid, the block, the other segments or the layout's form.
//
// ORDER INVARIANT (the grouping reduce_core::portable defines; this kernel computes exactly it).
// The items are cut into runs of R_RUN items (64 bytes of M values, at least one) at fixed global
// positions. A segment's piece in a run is the left fold of its items there, from its first one;
// its pieces are combined by the fixed binary tree over global run indices, a node with one
// child present keeping it. Every aligned power-of-two group of runs is a node of that tree, and
// the kernel computes the tree in nodes for all segments at once: a node's summary (r_node)
// holds the node's part of the segment of its first item (l) and of its last item (r), which of
// them started before it, whether a segment starts after its first item, whether its last item
// ends its segment, and the segment of its last item. Joining siblings A, B (r_join), where
// B's first item does not start a segment, the segment crossing between them gets A.r ⊕ B.l —
// its node at their parent — and when it starts inside A and ends inside B, that is its root,
// written once to out[]. A segment inside one run is written by the lane (its one piece).
//   lane       one run (R_ITEMS = R_RUN items), folded left to right, restarting at each start;
//   warp       32 lanes, shuffles at increasing offsets (r_warp_join); where every lane's run
//              holds a start, one shuffle: each crossing segment has two pieces (r_warp_pairs);
//   tile       R_WARPS warps: their summaries joined by warp 0;
//   node       `group` tiles (a power of two): joined by warp 0 and written to nodes_out;
//              blocks own contiguous runs of nodes (any grid);
//   root       the launch's last block (r_last_block) joins the nodes level by level,
//              R_ROOT_K per thread, then its warps and the block.
// Every m_combine is (left subtree, right subtree): earlier items before later ones, so an
// exactly associative monoid gets reduce_core::fold_segments' values; floats get the tree's bits.
// R_BLOCK and `group` are powers of two (the host checks): tiles and nodes are nodes of the
// tree; block, group and grid move speed only.
//
// EXACTLY ONCE. A non-empty segment is written where its first and last runs meet: by the lane
// when they are one run, else by the r_join at their lowest common node (the only join at which
// the segment crosses between the children and both its ends lie inside them) or, where that
// join's level is r_warp_pairs', by the lane of its last piece; a lane's writes (and a warp's
// pairs over its lanes) go through its warp's stage (r_stage), which copies them out
// coalesced. Empty segments get the identity: offsets form, from the tile whose marks read
// offsets[s] (r_mark_tile_ids); owner form, from the warp whose owners skip them, which writes
// it over its whole range of ids before its lanes write anything (r_owner_heads), so that a
// non-empty segment there is written twice, its value last.
//
// LAYOUT. Offsets form (R_OFFSETS): each tile reads, once and coalesced, the offsets of the
// segments that start inside it and marks in s_id[] (dynamic shared memory) the segment id at
// every item that starts a non-empty segment (R_NO_HEAD elsewhere); the lanes read their marks
// and clear them. A tile none starts in reads one entry instead, and no marks. Owner
// form: a lane reads its items' owners and its neighbours' (a start where the owner changes);
// a validated call checks them on those reads (first bad index into *status, atomicMin). A
// validated offsets-form call (its kernel built with R_CHECK_OFFSETS) checks the offsets on the
// marks' own reads: every pair of entries
// a batch reads ascends, the batches of a block's tiles (one interval of entries: each tile's
// starts where the one before found its next) reach the first entry of the next block (the
// same search), and offsets[0] = 0, offsets[segments] = n; any miss sets *status to 0, and the
// host then runs the exact check for the error. Ids and writes stay below `segments` whatever
// the layout (a trusted bad layout gives unspecified values, never a write out of bounds).
//
// Items: r_in, folded as m_lift(x, i) (i the item's global index); runs follow the lifted values.
// Parameters: R_BLOCK threads (a power of two); R_RUN = R_ITEMS items per lane; R_VECS and
// R_ITEM_SHIFT as kernels/lanes.cuh says; R_OFFSETS; R_IDX64 (u64 offsets or owners);
// R_INDEX_VEC (the owners are 16-byte aligned: vector loads); R_MIN_BLOCKS, the resident blocks
// per SM the registers are capped for; R_NODE_BYTES, sizeof(r_node) as the host counts it;
// R_CHECK_OFFSETS (offsets form): the offsets' check compiled in (validated calls' kernels).

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_BLOCK * R_ITEMS)
#define R_NO_HEAD 0xffffffffu

static_assert(R_ITEMS == R_RUN, "a lane holds one run");
static_assert((R_BLOCK & (R_BLOCK - 1)) == 0 && R_BLOCK >= R_WARP, "a tile is an aligned node of runs");

// A node's summary; flags:
#define R_OPEN 1u    // its first item does not start a segment (l's segment began before it)
#define R_SPLIT 2u   // a segment starts after its first item (l and r are different segments)
#define R_CLOSED 4u  // its last item ends its segment (the next item starts one, or there is none)
struct r_node {
    M l;                // the node's part of the segment holding its first item
    M r;                // the node's part of the segment holding its last item
    unsigned int flags;
    unsigned int rid;   // the segment of its last item, when a segment starts inside the node
};

// The host carves R_NODE_BYTES a node for the nodes the blocks write (catalogue/portable.rs,
// node_bytes).
static_assert(sizeof(r_node) == R_NODE_BYTES, "the host's size of a node is the kernel's");

__device__ __forceinline__ bool r_has_start(const r_node& x) { return (x.flags & (R_SPLIT | R_OPEN)) != R_OPEN; }

// The parent of siblings a (left) and b (right), both present. The segment crossing between
// them (b's first item starts none) gets a.r ⊕ b.l, written when it starts in a and ends in b.
__device__ __forceinline__ r_node r_join(const r_node& a, const r_node& b, M* __restrict__ out, unsigned int ids) {
    r_node p;
    p.l = a.l;
    p.r = b.r;
    const bool cross = (b.flags & R_OPEN) != 0;
    if (cross) {
        const M v = m_combine(a.r, b.l);
        if (r_has_start(a) && (b.flags & (R_SPLIT | R_CLOSED)) != 0 && a.rid < ids) out[a.rid] = v;
        if (!(a.flags & R_SPLIT)) p.l = v;
        if (!(b.flags & R_SPLIT)) p.r = v;
    }
    p.flags = (a.flags & R_OPEN) | (b.flags & R_CLOSED) |
              (((a.flags | b.flags) & R_SPLIT) != 0 || !cross ? R_SPLIT : 0u);
    p.rid = r_has_start(b) ? b.rid : a.rid;
    return p;
}

__device__ __forceinline__ r_node r_shfl_node_down(const r_node& x, unsigned int o) {
    r_node y;
    y.l = r_shfl_down(x.l, o);
    y.r = r_shfl_down(x.r, o);
    y.flags = __shfl_down_sync(R_FULL_MASK, x.flags, o);
    y.rid = __shfl_down_sync(R_FULL_MASK, x.rid, o);
    return y;
}

// The tree over the nodes of lanes 0 .. present - 1 where every one of them holds a segment
// start (the caller knows; 1 <= present <= 32): the tree has nothing left to group. A segment
// crossing from node i into node i + 1 ends in node i + 1, which holds a start, and began in
// node i: it is x_i.r ⊕ x_{i+1}.l — the one combine r_join gives it at their lowest common
// node, with the same operands — and complete; lane i + 1 computes it and put(p, id, value)s it.
// Lane 0 returns the root r_warp_join would: l from node 0, r and rid from the last node.
// (Where node 0's one segment starts at its first item and crosses on, the tree's l would be
// joined with node 1's part; but a node whose first item starts a segment is never crossed
// into, so its l is never read.) All 32 lanes call it.
template <typename Put>
__device__ __forceinline__ r_node r_warp_pairs(const r_node& x, unsigned int present, unsigned int ids, Put put) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const M left_r = r_shfl_up(x.r, 1);
    const unsigned int left_rid = __shfl_up_sync(R_FULL_MASK, x.rid, 1);
    const bool cross = lane > 0 && lane < present && (x.flags & R_OPEN) != 0;
    const M v = cross ? m_combine(left_r, x.l) : x.l;
    put(cross && left_rid < ids, left_rid, v);
    const unsigned int last = present - 1;
    r_node root;
    root.r = r_shfl(x.r, last);
    root.rid = __shfl_sync(R_FULL_MASK, x.rid, last);
    const unsigned int last_flags = __shfl_sync(R_FULL_MASK, x.flags, last);
    root.l = x.l;
    root.flags = (x.flags & R_OPEN) | (last_flags & R_CLOSED) | (present > 1 || (x.flags & R_SPLIT) ? R_SPLIT : 0u);
    return root;
}

// The tree over the nodes of lanes 0 .. present - 1 (present <= 32; the others are absent and
// never read), shuffles at increasing offsets; lane 0 returns the root. All 32 lanes call it.
// Where no present node holds a segment start, every join is l ⊕ r of one segment with no
// write: r_warp_tree over the values gives the same bits; where every one does, r_warp_pairs.
__device__ __forceinline__ r_node r_warp_join(r_node x, unsigned int present, M* __restrict__ out, unsigned int ids) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const bool starts = lane < present && r_has_start(x);
    if (!__any_sync(R_FULL_MASK, starts)) {
        const unsigned int closed = __shfl_sync(R_FULL_MASK, x.flags, present - 1) & R_CLOSED;
        x.l = r_warp_tree(x.l, present);
        x.r = x.l;
        x.flags = R_OPEN | closed;
        return x;
    }
    if (__all_sync(R_FULL_MASK, lane >= present || starts))
        return r_warp_pairs(x, present, ids, [&](bool p, unsigned int s, const M& v) {
            if (p) out[s] = v;
        });
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const r_node y = r_shfl_node_down(x, o);
        if ((lane & (2 * o - 1)) == 0 && lane + o < present) x = r_join(x, y, out, ids);
    }
    return x;
}

// The lane's items it[i] = m_lift(in[a + i], a + i), i < count (count <= R_ITEMS; the rest
// are left as they are).
__device__ __forceinline__ void r_load_run(const r_in* __restrict__ in, r_size n, r_size a, int count,
                                           M (&it)[R_ITEMS]) {
    if (count == R_ITEMS) {
        r_lane_items(in, a, n, [&](int i, const r_in& x) { it[i] = m_lift(x, a + i); });
    } else {
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i)
            if (i < count) it[i] = m_lift(in[a + i], a + i);
    }
}

// This thread's run of tile `tile` into it[] (nothing past n).
__device__ __forceinline__ void r_load_tile(const r_in* __restrict__ in, r_size n, r_size tile, M (&it)[R_ITEMS]) {
    const r_size a = tile * R_TILE + (r_size)threadIdx.x * R_ITEMS;
    if (a < n) r_load_run(in, n, a, (int)min((r_size)R_ITEMS, n - a), it);
}

// A run's segment starts as bits: bit i where item i starts one (R_ITEMS <= 64), in a 32-bit
// word where they fit (the fold tests a bit an item: one instruction rather than four).
#if R_ITEMS <= 32
typedef unsigned int r_heads;
#else
typedef unsigned long long r_heads;
#endif
// The first and the last item that starts a segment (heads != 0).
__device__ __forceinline__ int r_first_head(r_heads heads) { return __ffsll((unsigned long long)heads) - 1; }
__device__ __forceinline__ int r_last_head(r_heads heads) { return 63 - __clzll((unsigned long long)heads); }

// The summary of a lane's run of `count` items it[] (count >= 1), `heads` where they start
// segments, id(p, i) the segment that item i starts (read only where p), next_starts whether the
// item after the run starts one (or there is none): its items left to right, a new piece at
// each segment start. A piece that starts and ends in the run is its segment's only one, and
// is put(p, id, value) here (where p). DENSE (the warp's runs hold many starts): branch-free per
// item, as SegShuffle's fold (the combine computed at a start too, and dropped), since a
// branch per item makes every lane pay for every lane's starts; else a branch at each start.
// FULL: count is R_ITEMS (every run but the input's last), no test an item.
template <bool DENSE, bool FULL, typename Id, typename Put>
__device__ __forceinline__ r_node r_fold_run(const M (&it)[R_ITEMS], r_heads heads, int count, bool next_starts,
                                             unsigned int ids, Id id, Put put) {
    r_node x;
    M cur = it[0];
    if (heads == 0) {
        // Inside one segment: a plain left fold.
#pragma unroll
        for (int i = 1; i < R_ITEMS; ++i)
            if (FULL || i < count) cur = m_combine(cur, it[i]);
        x.l = cur;
        x.r = cur;
        x.flags = R_OPEN | (next_starts ? R_CLOSED : 0u);
        x.rid = R_NO_HEAD;
        return x;
    }
    const bool open = (heads & 1) == 0;
    unsigned int cur_id = id(!open, 0);
    bool split = false;
    x.l = cur;
#pragma unroll
    for (int i = 1; i < R_ITEMS; ++i) {
        if (FULL || i < count) {
            const bool start = (heads >> i & 1) != 0;
            if (DENSE) {
                if (start && !split) x.l = cur;
                put(start && (split || !open) && cur_id < ids, cur_id, cur);
                split = split || start;
                const M joined = m_combine(cur, it[i]);
                cur = start ? it[i] : joined;
                const unsigned int next_id = id(start, i);
                cur_id = start ? next_id : cur_id;
            } else if (start) {
                if (!split) x.l = cur;
                put((split || !open) && cur_id < ids, cur_id, cur);
                split = true;
                cur = it[i];
                cur_id = id(true, i);
            } else {
                cur = m_combine(cur, it[i]);
            }
        }
    }
    if (!split) x.l = cur;
    x.r = cur;
    x.rid = cur_id;
    x.flags = (open ? R_OPEN : 0u) | (split ? R_SPLIT : 0u) | (next_starts ? R_CLOSED : 0u);
    put(next_starts && r_has_start(x) && cur_id < ids, cur_id, cur);
    return x;
}

// Asks L2 for the first `bytes` bytes from p, 128-byte lines round robin over the threads: the
// next tile's owners, so that its reads of them wait on L2 rather than on memory (3% on most
// layouts; the offsets form's next batch of entries asked for the same way measured 0-3%
// slower: docs/decisions/0060-portable-segmented-tile-paths.md).
__device__ __forceinline__ void r_prefetch_l2(const void* p, r_size bytes) {
    for (r_size at = (r_size)threadIdx.x * 128; at < bytes; at += (r_size)R_BLOCK * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(static_cast<const char*>(p) + at)));
}

#if R_OFFSETS
// The rounds of R_BLOCK entries in a batch of marks (r_mark_tile_ids).
#define R_MARK_ROUNDS 4

// One batch of r_mark_tile_ids: ROUNDS rounds of R_BLOCK entries from `base`, all loads first
// (one latency), each entry read once (an entry's next entry came from the next lane; lanes 31
// and 0 read the entries after and before theirs). Entries past the array read as all ones:
// past every item (u32 offsets end at n < 2^32 - 1, where they are taken). Returns (uniform)
// R_BATCH_DONE where the batch reached past the tile (on the grid's last tile: past the last
// entry), else R_BATCH_MORE; in a validated call (`check`), R_BATCH_BAD where an entry it read
// exceeds the one after it (and *bad is set). Every thread calls it; its barrier publishes the
// batch's marks.
#define R_BATCH_MORE 0
#define R_BATCH_DONE 1
#define R_BATCH_BAD 2
template <int ROUNDS>
__device__ __forceinline__ int r_mark_batch(const r_idx* __restrict__ offsets, r_size segments, r_size n,
                                            r_size base, r_size tile, r_size t0, r_size t1, M* __restrict__ out,
                                            unsigned int* s_id, r_size* s_edge, r_size* s_next, bool check,
                                            bool* bad) {
    const bool grid_last = t1 == n;
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    r_idx o[ROUNDS], o1[ROUNDS], o0[ROUNDS];
#pragma unroll
    for (int u = 0; u < ROUNDS; ++u) {
        const r_size s = base + u * R_BLOCK + threadIdx.x;
        o[u] = s <= segments ? offsets[s] : ~(r_idx)0;
        o1[u] = lane == R_WARP - 1 && s < segments ? offsets[s + 1] : ~(r_idx)0;
        o0[u] = lane == 0 && s > base && s - 1 <= segments ? offsets[s - 1] : ~(r_idx)0;
    }
    bool inside = false, descends = false;
#pragma unroll
    for (int u = 0; u < ROUNDS; ++u) {
        const r_size s = base + u * R_BLOCK + threadIdx.x;
        const r_idx down = __shfl_down_sync(R_FULL_MASK, o[u], 1);
        const r_idx up = __shfl_up_sync(R_FULL_MASK, o[u], 1);
        const r_idx next = lane == R_WARP - 1 ? o1[u] : down;
        // (Entry `segments` is never above the one after it, all ones.)
        descends = descends || o[u] > next;
        // The first entry at or after t1: the one before it is inside, or it opens the batch.
        const bool before = s > base && (lane == 0 ? o0[u] : up) < t1;
        inside = s <= segments && o[u] < t1;
        if (!inside && (s == base || before)) {
            // A segment starts at t1 (one writer: the first entry there).
#if R_CHECK_OFFSETS
            // (A bad layout may cross t1 more than once in a batch: the validated kernel's writes
            // are atomic, as its marks below.)
            atomicExch(s_next, s);
            if (s <= segments && o[u] == t1 && !grid_last) atomicExch(&s_edge[R_WARPS], tile);
#else
            *s_next = s;
            if (s <= segments && o[u] == t1 && !grid_last) s_edge[R_WARPS] = tile;
#endif
        }
        if (s < segments && o[u] >= t0 && (inside || grid_last)) {
            if (next == o[u]) {
                out[s] = m_identity();
            } else if (inside) {
                const r_size p = o[u] - t0;
#if R_CHECK_OFFSETS
                // A bad layout may start two segments at one item: the validated kernel's marks
                // are atomic, so that its shared writes before the check's verdict never race (the
                // call then returns the layout's error).
                atomicExch(&s_id[p], (unsigned int)s);
                if (p % (R_WARP * R_ITEMS) == 0) atomicExch(&s_edge[p / (R_WARP * R_ITEMS)], tile);
#else
                s_id[p] = (unsigned int)s;
                if (p % (R_WARP * R_ITEMS) == 0) s_edge[p / (R_WARP * R_ITEMS)] = tile;
#endif
            }
        }
    }
    // Offsets ascend: a batch whose last entry lies inside the tile may be followed by more;
    // the grid's last tile reads every entry (the trailing empty segments). A validated call
    // takes a second barrier only where the first says more or bad, to tell them apart.
    const bool more = __syncthreads_or((threadIdx.x == R_BLOCK - 1 && inside) || (check && descends));
    if (check && more && __syncthreads_or(descends)) {
        if (threadIdx.x == 0) *bad = true;
        return R_BATCH_BAD;
    }
    return (grid_last ? base + (r_size)ROUNDS * R_BLOCK > segments : !more) ? R_BATCH_DONE : R_BATCH_MORE;
}

// The marks of tile [t0, t1) from the offsets entries from `entry` (the first s with
// offsets[s] >= t0), in batches of R_BLOCK-entry rounds while they start inside the tile (on the
// grid's last tile, t1 = n: to the last entry): s_id[o - t0] = s where non-empty segment s starts
// at o; out[s] = the identity where segment s is empty; s_edge[k] = tile where a segment starts
// at the first item of the tile's warp k, or, k = R_WARPS, at t1 (a stamp: the array is never
// cleared). Batches of R_MARK_ROUNDS rounds; with `small` (uniform: the tile marked before took
// at most R_BLOCK entries), a first batch of one round, so that a tile of a few hundred entries
// does not read a thousand (docs/decisions/0067-portable-segmented-pairs.md). Returns the first
// entry >= t1 (the next tile's `entry`; uniform). A validated call (`check`) checks every
// entry read (r_mark_batch, into *bad) and sets *reach to the end of its last batch (thread 0).
// Every batch starts inside the entries read before (at an s_next its batches found) or at the
// block's first entry, so all a block's batches read one interval from that entry, which
// reaches at least the last batch's end. Where a batch found a bad entry it stops and returns
// `segments` + 1, past every entry: the block's later tiles read none. So a validated call's
// reads stay bounded on any layout: while they ascend, a tile reads again at most the batch
// that found its `entry` (a trusted bad layout may make each tile read nearly every entry).
// Every thread calls it; its last barrier publishes the marks.
__device__ __forceinline__ r_size r_mark_tile_ids(const r_idx* __restrict__ offsets, r_size segments, r_size n,
                                                  r_size entry, r_size tile, r_size t0, r_size t1,
                                                  M* __restrict__ out, unsigned int* s_id, r_size* s_edge,
                                                  r_size* s_next, bool small, bool check, bool* bad,
                                                  r_size* reach) {
    r_size base = entry;
    if (small) {
        if (check && threadIdx.x == 0) *reach = base + R_BLOCK;
        const int got =
            r_mark_batch<1>(offsets, segments, n, base, tile, t0, t1, out, s_id, s_edge, s_next, check, bad);
        if (got != R_BATCH_MORE) return got == R_BATCH_BAD ? segments + 1 : *s_next;
        base += R_BLOCK;
    }
    for (;; base += (r_size)R_MARK_ROUNDS * R_BLOCK) {
        if (check && threadIdx.x == 0) *reach = base + (r_size)R_MARK_ROUNDS * R_BLOCK;
        const int got = r_mark_batch<R_MARK_ROUNDS>(offsets, segments, n, base, tile, t0, t1, out, s_id, s_edge,
                                                    s_next, check, bad);
        if (got != R_BATCH_MORE) return got == R_BATCH_BAD ? segments + 1 : *s_next;
    }
}
#endif

#if R_OFFSETS
// A lane's run of marks is R_ITEMS words, R_ITEMS words from its neighbours': it is read and
// cleared as 16-byte vectors where they fit, each lane taking its vectors in a rotated order so
// that the 8 lanes of a quarter warp hit 8 different 16-byte bank groups at each step (in
// order, lanes two groups apart collided: 4-way conflicts for f32): f(k) for each vector k.
template <typename F>
__device__ __forceinline__ void r_mark_vectors(F f) {
#if R_ITEMS % 4 == 0
    // Rotated where the vectors a run are a power of two (monoids of 1, 2, 4, 8 or 16 bytes).
    constexpr unsigned int vecs = R_ITEMS / 4;
    constexpr bool rotate = (vecs & (vecs - 1)) == 0;
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    constexpr unsigned int lanes_a_turn = vecs >= 8 ? 1u : 8u / vecs;  // lanes sharing a rotation
    const unsigned int rot = rotate ? (lane / lanes_a_turn) & (vecs - 1) : 0u;
#pragma unroll
    for (unsigned int k = 0; k < vecs; ++k) f(rotate ? (k + rot) & (vecs - 1) : k);
#endif
}

// The run's marks as bits (where they are not R_NO_HEAD: the ids are read from `mine` where
// needed, and cleared after the fold by r_clear_marks for the next tile's marks, which come
// after a barrier).
__device__ __forceinline__ r_heads r_take_heads(const unsigned int* mine) {
    r_heads heads = 0;
#if R_ITEMS % 4 == 0
    r_mark_vectors([&](unsigned int k) {
        const uint4 v = reinterpret_cast<const uint4*>(mine)[k];
        heads |= (r_heads)((v.x != R_NO_HEAD) | (v.y != R_NO_HEAD) << 1 | (v.z != R_NO_HEAD) << 2 |
                           (v.w != R_NO_HEAD) << 3)
                 << (4 * k);
    });
#else
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) heads |= (r_heads)(mine[i] != R_NO_HEAD) << i;
#endif
    return heads;
}

// The run's marks back to R_NO_HEAD (where it had any): whole vectors, rather than each mark
// where the fold reads it (a store an item, in conflict with the lanes whose runs share its banks).
__device__ __forceinline__ void r_clear_marks(unsigned int* mine) {
#if R_ITEMS % 4 == 0
    r_mark_vectors([&](unsigned int k) {
        reinterpret_cast<uint4*>(mine)[k] = make_uint4(R_NO_HEAD, R_NO_HEAD, R_NO_HEAD, R_NO_HEAD);
    });
#else
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) mine[i] = R_NO_HEAD;
#endif
}
#else
// Owner form: the run's owners (narrowed; 16-byte vectors where the array is aligned,
// R_INDEX_VEC, and the lane's owners fill whole ones), the owner before the run from the lane
// before (lane 0 reads it) and the one after from the lane after (lane 31 reads it). Returns
// the bits of the items that start a segment (a new owner, or item 0; the ids are re-read where
// needed); *next_starts |= whether the item after the run starts one. With `check`, reports
// the first bad owner (>= segments, or below the one before) into *status. Every lane of the
// warp calls it.
//
// Empty segments: where the warp's owners skip ids (a start whose owner is not the one before
// plus one, owners that begin past 0, or end before the last segment), the warp writes the
// identity over its whole range of ids, coalesced — from the one after the owner before its
// first item to the owner of its last item, or to the last segment where it holds the input's
// last item — before any of its lanes writes a value: the non-empty segments of the range are
// written over it later (by these lanes' stage, after the __syncwarp here, or by the joins
// above, after barriers), as they all start in this warp. A range of more than R_FREE_FILLS ids
// per item of the warp is filled within the launch's budget (r_take_fill_budget: a bad layout's
// warps may each ask for nearly every id).
__device__ __forceinline__ r_heads r_owner_heads(const r_idx* __restrict__ owner, r_size n, r_size segments,
                                                 r_size a, int count, r_size check, M* __restrict__ out,
                                                 unsigned long long* __restrict__ status,
                                                 unsigned long long* __restrict__ fill_budget, bool* next_starts) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    unsigned int own[R_ITEMS];
    constexpr int vecs = (int)((R_ITEMS * sizeof(r_idx) + 15) / 16);
    if (R_INDEX_VEC && (R_ITEMS * sizeof(r_idx)) % 16 == 0 && count == R_ITEMS) {
        union {
            uint4 v[vecs];
            r_idx k[R_ITEMS];
        } u;
        const uint4* p = reinterpret_cast<const uint4*>(owner + a);
#pragma unroll
        for (int k = 0; k < vecs; ++k) u.v[k] = __ldg(p + k);
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) own[i] = r_narrow(u.k[i]);
    } else {
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) own[i] = i < count ? r_index(owner + a + i) : R_NO_HEAD;
    }
    // Lanes before the last one with items are full: their last owner is at R_ITEMS - 1.
    const unsigned int up = __shfl_up_sync(R_FULL_MASK, own[R_ITEMS - 1], 1);
    const unsigned int down = __shfl_down_sync(R_FULL_MASK, own[0], 1);
    r_heads heads = 0;
    bool skips = false;               // a start skips ids (empty segments before it)
    unsigned int before = R_NO_HEAD;  // the owner before the run (none before item 0)
    unsigned int prev = R_NO_HEAD;
    if (count > 0) {
        before = prev = a == 0 ? R_NO_HEAD : lane == 0 ? r_index(owner + a - 1) : up;
        if (!*next_starts)
            *next_starts = (lane == R_WARP - 1 ? r_index(owner + a + R_ITEMS) : down) != own[R_ITEMS - 1];
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) {
            if (i >= count) break;
            const unsigned int o = own[i];
            const r_size at = a + i;
            if (at == 0 || o != prev) {
                heads |= (r_heads)1 << i;
                if (check && (o >= segments || (at > 0 && o < prev))) atomicMin(status, at);
                skips = skips || o != (at == 0 ? 0u : prev + 1);
            }
            prev = o;
        }
    }
    const unsigned int have = __ballot_sync(R_FULL_MASK, count > 0);
    if (have == 0) return heads;
    const unsigned int last_lane = 31 - __clz(have);
    const unsigned int first_before = __shfl_sync(R_FULL_MASK, before, 0);
    const unsigned int last_owner = __shfl_sync(R_FULL_MASK, prev, last_lane);
    const bool holds_end = __shfl_sync(R_FULL_MASK, a + count == n ? 1u : 0u, last_lane) != 0;
    const r_size lo = first_before == R_NO_HEAD ? 0 : (r_size)first_before + 1;
    const r_size hi = min(holds_end ? segments : (r_size)last_owner + 1, segments);
    if (__any_sync(R_FULL_MASK, skips) || (holds_end && (r_size)last_owner + 1 < segments)) {
        const r_size ids = hi > lo ? hi - lo : 0;
        bool fill = ids <= (r_size)R_FREE_FILLS * R_WARP * R_ITEMS;
        if (!fill) fill = __shfl_sync(R_FULL_MASK, lane == 0 && r_take_fill_budget(fill_budget, ids, segments), 0);
        if (fill)
            for (r_size s = lo + lane; s < hi; s += R_WARP) out[s] = m_identity();
        __syncwarp();
    }
    return heads;
}
#endif

// Nodes written by this launch's blocks, read through L2 by its last block (after its fence).
__device__ __forceinline__ void r_store_node(r_node* p, r_size i, const r_node& x) { p[i] = x; }

__device__ __forceinline__ r_node r_load_node(const r_node* p, r_size i) {
    r_node x;
    x.l = r_load_cg(&p[i].l);
    x.r = r_load_cg(&p[i].r);
    x.flags = __ldcg(&p[i].flags);
    x.rid = __ldcg(&p[i].rid);
    return x;
}

// Nodes a thread of the last block joins at once; the most tiles in a node.
#define R_ROOT_K 4
#define R_MAX_GROUP 8

// THE WARP'S STAGE. The segments a warp's lanes complete in their runs, and those its
// r_warp_pairs completes across them, are written to the warp's slots of shared memory, at
// id - base (base: the warp's lowest segment start), and copied out by the warp in id order,
// coalesced: a lane's own stores would lie R_ITEMS items apart from its neighbours', a sector
// per lane and store. Ids past the slots are written directly, as are the segments the joins
// complete (one per join at most). The copy takes every
// slot from base to the warp's highest start, and leaves the identity behind (the slots hold it
// between tiles): a slot no lane wrote is an empty segment (the identity is its value) or one
// that a join completes, which writes it later (after the copy's __syncwarp, or after barriers).
#define R_STAGE_SLOTS (R_WARP * R_ITEMS)
// A warp's runs with a segment start every R_DENSE items or more often fold branch-free.
#define R_DENSE 8
struct r_stage {
    M* val;             // R_STAGE_SLOTS values (the identity between tiles)
    unsigned int base;  // the warp's lowest segment start (R_NO_HEAD: none in the warp)
    unsigned int span;  // slots from base to its highest one, at most R_STAGE_SLOTS and below segments

    // Where p (predicated stores: no branch inside the fold's unrolled items).
    __device__ __forceinline__ void put(bool p, M* __restrict__ out, unsigned int id, const M& v) const {
        const unsigned int j = id - base;
        const bool staged = j < span;
        if (p && staged) val[j] = v;
        if (p && !staged) out[id] = v;
    }

    // The slots to out[], in id order, the identity left behind. Every lane of the warp calls it.
    __device__ __forceinline__ void flush(M* __restrict__ out) const {
        __syncwarp();
        const unsigned int lane = threadIdx.x & (R_WARP - 1);
        for (unsigned int j = lane; j < span; j += R_WARP) {
            out[base + j] = val[j];
            val[j] = m_identity();
        }
        __syncwarp();
    }
};

// The stage of this warp for segment starts lo .. hi in its lanes (R_NO_HEAD / 0 in a lane
// without any): base and span from the warp's lowest and highest (ids below `segments` only,
// whatever the layout). Every lane calls it.
__device__ __forceinline__ r_stage r_warp_stage(M* vals, unsigned int lo, unsigned int hi, r_size segments) {
    lo = r_warp_redux<R_MIN>(lo);
    hi = r_warp_redux<R_MAX>(hi);
    const unsigned int warp = threadIdx.x / R_WARP;
    r_stage st;
    st.val = vals + warp * R_STAGE_SLOTS;
    st.base = lo;
    st.span = lo == R_NO_HEAD || lo >= segments || hi < lo
                  ? 0u
                  : (unsigned int)min(min((r_size)hi + 1, segments) - lo, (r_size)R_STAGE_SLOTS);
    return st;
}

// One launch: grid of persistent blocks; `ticket` is 0 on entry and left 0. A node is `group`
// tiles (a power of two, at most R_MAX_GROUP); nodes_out holds one r_node per node,
// ceil(ceil(n / R_TILE) / group) of them. *status (R_NO_INDEX on entry, and left so) receives
// a validated (`check` = 1) owner-form call's first bad owner index, or 0 where a validated
// offsets-form call's check fails; the last block copies it to *status_out when that is not
// null.
extern "C" __global__ void __launch_bounds__(R_BLOCK, R_MIN_BLOCKS)
reduce_seg_portable(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ seg_index, r_size segments,
                    M* __restrict__ out, r_node* __restrict__ nodes_out, r_size group,
                    unsigned int* __restrict__ ticket, unsigned long long* __restrict__ status,
                    unsigned long long* __restrict__ fill_budget, r_size check,
                    unsigned long long* __restrict__ status_out) {
    __shared__ r_node s_warps[2][R_WARPS];  // by tile parity: warp 0 reads one while the next fills
    __shared__ r_node s_tiles[R_MAX_GROUP];  // the tiles of the node being folded (warp 0's)
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;

    // Segment ids fit 32 bits below R_NO_HEAD (the host's limit): compared as such.
    const unsigned int ids = (unsigned int)segments;
#if R_OFFSETS
    // The offsets' check is compiled into the kernels of validated calls only (R_CHECK_OFFSETS):
    // the trusted kernel keeps its registers for the fold.
    const bool check_offsets = R_CHECK_OFFSETS && check != 0;
#endif
    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    const r_size nodes = (tiles + group - 1) / group;
    // This block's contiguous run of nodes, and so of tiles.
    const r_size b = blockIdx.x;
    const r_size q = nodes / gridDim.x, rem = nodes % gridDim.x;
    const r_size node = b * q + (b < rem ? b : rem);
    r_size tile = node * group;
    const r_size tile_end = min((node + q + (b < rem ? 1 : 0)) * group, tiles);

    // Dynamic shared memory (16-byte aligned): the warps' stages (R_TILE values) and, in the
    // offsets form, the tile's marks (R_TILE ids).
    extern __shared__ uint4 s_dynamic[];
    M* s_stage_vals = reinterpret_cast<M*>(s_dynamic);
    for (unsigned int i = threadIdx.x; i < R_TILE; i += R_BLOCK) s_stage_vals[i] = m_identity();
#if R_OFFSETS
    unsigned int* s_id = reinterpret_cast<unsigned int*>(r_align16<unsigned char>(s_stage_vals + R_TILE));
    __shared__ r_size s_edge[R_WARPS + 1];
    __shared__ r_size s_entry, s_next;
    // The layout check (validated calls; kept in shared memory, off the tile loop's registers):
    // whether a pair read descends or an end is wrong; the end of the entries this block's
    // batches read, and the first entry of the next block, which they must reach.
    __shared__ bool s_bad;
    __shared__ r_size s_reach, s_upto;
    for (unsigned int i = threadIdx.x; i < R_TILE; i += R_BLOCK) s_id[i] = R_NO_HEAD;
    if (threadIdx.x <= R_WARPS) s_edge[threadIdx.x] = ~0ull;
    if (threadIdx.x == 0) {
        // The array's ends: offsets[0] = 0 (the block of tile 0), offsets[segments] = n (the
        // block of the last tile).
        s_bad = check_offsets && tile < tile_end &&
                ((tile == 0 && seg_index[0] != 0) || (tile_end == tiles && (r_size)seg_index[segments] != n));
        s_reach = 0;
    }
    if (warp == 0 && tile < tile_end) {
        // The first entry at or after the block's first item.
        const r_size t0 = tile * R_TILE;
        const r_size e = t0 == 0 ? 0 : r_warp_find_segment(seg_index, segments, t0 - 1) + 1;
        if (lane == 0) {
            s_entry = e;
            s_reach = e;
        }
    }
    // The next block's first entry, by its own search (the next warp: both searches at once);
    // 0 (nothing to reach) for the last block and a block without tiles.
    if (check_offsets && warp == (R_WARPS > 1 ? 1u : 0u)) {
        const bool next = tile < tile_end && tile_end < tiles;
        const r_size e = next ? r_warp_find_segment(seg_index, segments, tile_end * R_TILE - 1) + 1 : 0;
        if (lane == 0) s_upto = e;
    }
    __syncthreads();
    r_size entry = s_entry;
    r_size last_entries = (r_size)R_MARK_ROUNDS * R_BLOCK;  // the entries of the tile marked before
#else
    __syncthreads();
#endif

    M it[R_ITEMS];
    if (tile < tile_end) r_load_tile(in, n, tile, it);
    for (; tile < tile_end; ++tile) {
        const r_size t0 = tile * R_TILE;
        const r_size t1 = min(t0 + R_TILE, n);
        const r_size a = t0 + (r_size)threadIdx.x * R_ITEMS;
        const int count = a >= n ? 0 : (int)min((r_size)R_ITEMS, n - a);
        bool next_starts = a + R_ITEMS >= n;
        r_node x;
#if R_OFFSETS
        // A tile no segment starts in (its first entry at or after t0 lies at or past t1; not
        // the grid's last tile, whose marks also fill the trailing empty segments) has no marks
        // to read: its runs are plain folds, and only its last one may end its segment (when
        // one starts at t1). The same reads for every thread (uniform), cached from the tile
        // before's.
        const r_idx first_start = entry <= segments ? seg_index[entry] : ~(r_idx)0;
        const bool unmarked = t1 < n && (r_size)first_start >= t1;
        unsigned int* mine = s_id + (a - t0);
        r_heads heads = 0;
        if (unmarked) {
            next_starts |= a + R_ITEMS == t1 && (r_size)first_start == t1;
        } else {
            const r_size first = entry;
            entry = r_mark_tile_ids(seg_index, segments, n, entry, tile, t0, t1, out, s_id, s_edge, &s_next,
                                    last_entries <= R_BLOCK, check_offsets, &s_bad, &s_reach);
            last_entries = entry - first;
            // Whether a segment starts after the run: at the next lane's first item, or the next
            // warp's (s_edge). No lane reads another's marks, which each clears after its fold.
            heads = r_take_heads(mine);
            const bool next_lane = __shfl_down_sync(R_FULL_MASK, (unsigned int)(heads & 1), 1);
            next_starts |= lane + 1 < R_WARP ? next_lane : s_edge[warp + 1] == tile;
        }
        auto id = [&](bool p, int i) { return p ? mine[i] : R_NO_HEAD; };
        const unsigned int lo = heads ? mine[r_first_head(heads)] : R_NO_HEAD;
        const unsigned int hi = heads ? mine[r_last_head(heads)] : 0u;
#else
        const r_heads heads =
            r_owner_heads(seg_index, n, segments, a, count, check, out, status, fill_budget, &next_starts);
        auto id = [&](bool p, int i) { return p ? r_index(seg_index + a + i) : R_NO_HEAD; };
        const unsigned int lo = heads ? id(true, r_first_head(heads)) : R_NO_HEAD;
        const unsigned int hi = heads ? id(true, r_last_head(heads)) : 0u;
#endif
        const r_stage stage = r_warp_stage(s_stage_vals, lo, hi, segments);
        auto put = [&](bool p, unsigned int s, const M& v) { stage.put(p, out, s, v); };
        // Dense: a segment start every R_DENSE items or more often over the warp's runs (uniform).
        const unsigned int starts = r_warp_redux<R_ADD>((unsigned int)__popcll((unsigned long long)heads));
        const bool dense = starts * R_DENSE >= R_WARP * R_ITEMS;
        if (count == R_ITEMS)
            x = dense ? r_fold_run<true, true>(it, heads, count, next_starts, ids, id, put)
                      : r_fold_run<false, true>(it, heads, count, next_starts, ids, id, put);
        else if (count > 0)
            x = r_fold_run<false, false>(it, heads, count, next_starts, ids, id, put);
#if R_OFFSETS
        if (heads) r_clear_marks(mine);
#endif
        const r_size warp_first = t0 + (r_size)warp * R_WARP * R_ITEMS;
        const unsigned int lanes =
            warp_first >= n ? 0u : (unsigned int)min((r_size)R_WARP, (n - warp_first + R_ITEMS - 1) / R_ITEMS);
        // Every run with items holds a start (uniform): the warp's join is r_warp_pairs, whose
        // segments go through the stage with the lanes' own.
        const bool pairs = __all_sync(R_FULL_MASK, count == 0 || heads != 0) && lanes > 0;
        if (pairs) x = r_warp_pairs(x, lanes, ids, put);
        if (stage.span > 0) stage.flush(out);
        // The next tile's items: in flight through the joins, the barrier and the next marks;
        // in the owner form its owners asked of L2 too (no registers held for them).
        if (tile + 1 < tile_end) {
            r_load_tile(in, n, tile + 1, it);
#if !R_OFFSETS
            const r_size next = (tile + 1) * R_TILE;
            r_prefetch_l2(seg_index + next, min((r_size)R_TILE, n - next) * sizeof(r_idx));
#endif
        }
        if (!pairs) x = r_warp_join(x, lanes, out, ids);
        if (lane == 0 && lanes > 0) s_warps[tile & 1][warp] = x;
        __syncthreads();
        if (warp == 0) {
            const r_size warp_items = (r_size)R_WARP * R_ITEMS;
            const unsigned int warps = (unsigned int)min((r_size)R_WARPS, (t1 - t0 + warp_items - 1) / warp_items);
            r_node y;
            if (lane < warps) y = s_warps[tile & 1][lane];
            y = r_warp_join(y, warps, out, ids);
            // The node's tiles (warp 0's own slots), joined at its last one.
            const unsigned int g = (unsigned int)(tile % group);
            if (lane == 0) s_tiles[g] = y;
            __syncwarp();
            if (g + 1 == group || tile + 1 == tiles) {
                if (lane <= g) y = s_tiles[lane];
                y = r_warp_join(y, g + 1, out, ids);
                if (lane == 0) r_store_node(nodes_out, tile / group, y);
            }
        }
        // This parity of s_warps is rewritten two tiles on, after the next tile's barrier.
    }

#if R_OFFSETS
    // The layout check's verdict (uniform): a descending pair, entries this block's batches did
    // not reach (a layout that does not ascend can hide entries from the searches and the
    // unmarked tiles), or a wrong end. The host runs the exact check for the error.
    // (s_bad is published by the batches' barriers; s_reach is thread 0's, s_upto the prologue's.)
    if (check_offsets && threadIdx.x == 0 && (s_bad || s_reach < s_upto)) atomicMin(status, 0ull);
#endif
    if (!r_last_block(ticket)) return;

    // The root: the nodes joined level by level, R_ROOT_K * R_BLOCK aligned nodes to their
    // parent — a thread's R_ROOT_K (their loads at once, a tree in registers), then the warp's
    // and the block's — written over node c of the level, which its chunk has read by then.
    const r_size chunk = (r_size)R_ROOT_K * R_BLOCK;
    for (r_size count = nodes; count > 1; count = (count + chunk - 1) / chunk) {
        for (r_size c = 0; c * chunk < count; ++c) {
            const r_size first = c * chunk + (r_size)threadIdx.x * R_ROOT_K;
            const int have = first >= count ? 0 : (int)min((r_size)R_ROOT_K, count - first);
            r_node v[R_ROOT_K];
#pragma unroll
            for (int k = 0; k < R_ROOT_K; ++k)
                if (k < have) v[k] = r_load_node(nodes_out, first + k);
#pragma unroll
            for (int w = 1; w < R_ROOT_K; w <<= 1) {
#pragma unroll
                for (int j = 0; j + w < R_ROOT_K; j += 2 * w)
                    if (j + w < have) v[j] = r_join(v[j], v[j + w], out, ids);
            }
            const r_size warp_first = c * chunk + (r_size)warp * R_WARP * R_ROOT_K;
            const unsigned int lanes =
                warp_first >= count ? 0u
                                    : (unsigned int)min((r_size)R_WARP, (count - warp_first + R_ROOT_K - 1) / R_ROOT_K);
            const r_node x = r_warp_join(v[0], lanes, out, ids);
            if (lane == 0 && lanes > 0) s_warps[0][warp] = x;
            __syncthreads();
            if (warp == 0) {
                const r_size here = min(chunk, count - c * chunk);
                const unsigned int warps = (unsigned int)((here + R_WARP * R_ROOT_K - 1) / (R_WARP * R_ROOT_K));
                r_node y;
                if (lane < warps) y = s_warps[0][lane];
                y = r_warp_join(y, warps, out, ids);
                if (lane == 0) r_store_node(nodes_out, c, y);
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {
        if (status_out != nullptr) *status_out = __ldcg(status);
        *status = R_NO_INDEX;
        *ticket = 0;
        *fill_budget = 0;
    }
}
