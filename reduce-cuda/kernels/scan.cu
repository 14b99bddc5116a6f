// Scans (prefix folds), plain and segmented: one launch, each item read once and written once,
// tiles chained by decoupled look-back with a fixed grouping.
//
// ORDER INVARIANT. The input is cut into tiles of R_TILE = R_BLOCK * R_ITEMS consecutive items,
// numbered in the order blocks take them (an atomic counter), so every tile before a block's
// own is held by a block that runs; the tiles are cut into groups of 32 (tile t = 32 g + i).
// Inside a tile, thread k owns the R_ITEMS consecutive items from k * R_ITEMS. Every combine is
// (earlier items) ⊕ (later items):
//   - a thread folds its items left to right into its aggregate;
//   - the lanes of a warp, then the warps of the block, scan their aggregates with a
//     Kogge-Stone scan (step o: lane L takes (lane L - o's value) ⊕ (its own)): the tile's
//     aggregate a(t), published at once;
//   - w(t) = a(32 g) ⊕ a(32 g + 1) ⊕ … ⊕ a(t - 1), folded left to right from the group's first
//     tile (none for i = 0), and the group's aggregate A(g) = w(32 g + 31) ⊕ a(32 g + 31),
//     published by the group's last tile;
//   - the groups chain: P(g) = I(g - 1), I(g) = P(g) ⊕ A(g), I(0) = A(0), where I(g), the
//     group's inclusive value, is published by its last tile;
//   - the tile's prefix p(t) = P(g) ⊕ w(t) (group 0: w(t));
//   - a thread's prefix is p(t) ⊕ (the warps before its warp) ⊕ (the lanes before its lane), and
//     its outputs continue from it item by item: y = prefix ⊕ x_j.
// THE FIXED GROUPING. A tile looking back finds the nearest group before its own that published
// I (or, segmented, whose aggregate holds a segment start: then its value does not depend on
// anything before it), and folds from that value the later groups' aggregates strictly left
// to right, one combine at a time. By induction that is I(g - 1) bit for bit, wherever the
// look-back stops, so every output depends only on N, the layout and (R_BLOCK, R_ITEMS) —
// never on timing or the grid — and float scans repeat exactly. (A tree over the look-back's
// window would not give the chained bits.) The groups keep the serial folds short: a tile
// folds at most 31 aggregates of its group and the groups' aggregates back to the nearest
// inclusive group, where a chain of single tiles would fold back over every tile in flight.
//
// THE ENTRIES. Tiles and groups publish through entries: a state (R_ST_*) and a value. For values
// up to 48 bytes an entry is one word (r_word: the state in each of up to four 16-byte parts,
// with 12 bytes of the value), published with relaxed stores and read with relaxed loads issued
// at once, no acquire, so a look-up costs one round trip to L2 instead of three (poll, acquire,
// value) — the look-back's latency is what bounds this kernel. A 16-byte part relies on 16-byte
// aligned vector accesses being single-copy atomic in the hardware, as CUB's single-word tile
// states do (PTX models a vector access as unordered scalar accesses). Larger values keep a
// state word per entry and the values apart.
//
// Segmented (R_SEG): an item is the pair (head, x), head = a segment starts at it, and pairs
// combine as seg_common.cuh's r_seg_op: (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 : v1 ⊕ v2);
// an output restarts at a head: y = (head ? identity : prefix) ⊕ x. Heads come from CSR
// offsets (R_SEG_OFFSETS: item i starts a segment where some offset equals i) or from keys
// (R_SEG_KEYS: i = 0, or key[i] != key[i - 1]).
//
// REDUCE-THEN-SCAN (ScanAlgorithm::ReduceThenScan, the multi-pass baseline): the same tiles in
// four launches, items read twice. scan_reduce: each tile t (block t) publishes a(t) and stops;
// scan_groups (a warp per group): w(t) for the group's tiles and A(g); scan_chain (one block):
// P(g) for every group, in order; scan_apply: each tile takes p(t) = P(g) ⊕ w(t) and writes its
// outputs as scan_tiles does. Every value is the one written above, by the same combines in the
// same order, so its outputs are scan_tiles' bit for bit, and no tile ever waits for another.
//
// Input items are r_in lifted by m_lift(x, i) (i the global index): the monoid's values
// themselves for a plain scan. Exclusive scans (`exclusive`) write, for each item, the prefix
// before it (the identity at 0 and at every head). `in` and `out` may be the same array (in
// place): a warp's staged items are read before any of them is written; an unstaged thread reads
// each of its items again before it writes that item's output; no thread reads another's items
// from `in` after loading, and no tile reads another's.
//
// Parameters: R_BLOCK threads, R_ITEMS items per thread, R_SEG (0 none, R_SEG_OFFSETS,
// R_SEG_KEYS), R_IDX64 (u64 offsets or keys), R_WORD_PARTS (an entry's 16-byte parts, 0 for
// states and values apart: THE ENTRIES), R_MIN_BLOCKS (scan_tiles' resident blocks per SM its
// registers are capped for; 0: no cap, catalogue/scan/mod.rs picks it), R_STAGE_BYTES (the warps'
// stages: R_BLOCK * R_ITEMS input items; 0: no stage) and R_STAGE_DYNAMIC (1: the stages are the
// launch's dynamic shared memory).

#define R_SEG_OFFSETS 1
#define R_SEG_KEYS 2
#if R_MIN_BLOCKS > 0
#define R_TILES_BOUNDS __launch_bounds__(R_BLOCK, R_MIN_BLOCKS)
#else
#define R_TILES_BOUNDS __launch_bounds__(R_BLOCK)  // a second bound of 1 would lift ptxas' own cap
#endif
#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_BLOCK * R_ITEMS)

// A tile's state word: 0 until it publishes; then its aggregate (R_ST_AGG) or its inclusive
// value (R_ST_INC), with R_ST_HEAD where a segment starts in the tile.
#define R_ST_AGG 1u
#define R_ST_INC 2u
#define R_ST_HEAD 4u

// Pairs combine as r_seg_op; plain scans never set a flag, so theirs is m_combine alone.
__device__ __forceinline__ r_seg r_scan_op(r_seg a, r_seg b) {
    if constexpr (R_SEG) return r_seg_op(a, b);
    r_seg out;
    out.flag = 0;
    out.v = m_combine(a.v, b.v);
    return out;
}

__device__ __forceinline__ r_seg r_seg_shfl_up(r_seg s, unsigned int delta) {
    s.v = r_shfl_up(s.v, delta);
    if constexpr (R_SEG) s.flag = __shfl_up_sync(R_FULL_MASK, s.flag, delta);
    return s;
}

__device__ __forceinline__ r_seg r_seg_shfl(r_seg s, int lane) {
    s.v = r_shfl(s.v, lane);
    if constexpr (R_SEG) s.flag = __shfl_sync(R_FULL_MASK, s.flag, lane);
    return s;
}

// Inclusive Kogge-Stone scan over the 32 lanes (see the invariant); every lane must call it.
__device__ __forceinline__ r_seg r_scan_warp(r_seg v) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const r_seg up = r_seg_shfl_up(v, o);
        if (lane >= o) v = r_scan_op(up, v);
    }
    return v;
}

// The state words' loads and stores (in the CPU emulator, one thread runs every block in turn:
// plain accesses).
__device__ __forceinline__ unsigned int r_load_acquire(const unsigned int* p) {
#if defined(__CUDA_ARCH__)
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(__cvta_generic_to_global(p)) : "memory");
    return v;
#else
    return *p;
#endif
}

__device__ __forceinline__ void r_store_release(unsigned int* p, unsigned int v) {
#if defined(__CUDA_ARCH__)
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
#else
    *p = v;
#endif
}

// Entry t's value `v` into `values[t]`, then its state word with release semantics: a reader
// that sees the word (an acquire load) sees the value.
__device__ __forceinline__ void r_publish(unsigned int* states, M* values, r_size t, M v, unsigned int state) {
    values[t] = v;
    r_store_release(states + t, state);
}

__device__ __forceinline__ unsigned int r_load_relaxed(const unsigned int* p) {
#if defined(__CUDA_ARCH__)
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(__cvta_generic_to_global(p)) : "memory");
    return v;
#else
    return *p;
#endif
}

// The waits' back-off between polls: sleeps `pause` ns, then doubles it up to 128 (start at 32).
// The cap bounds how late a wait sees its entry: a longer one costs more than the polls' traffic
// it saves (decision 0065).
__device__ __forceinline__ void r_back_off(unsigned int& pause) {
    __nanosleep(pause);
    pause = pause < 128 ? 2 * pause : pause;
}

// Waits for tile or group state word `p` to be published, and returns it. The wait polls with
// relaxed loads and backs off; one acquire load at the end orders the reads of the value after
// it (an acquire invalidates the SM's L1: one per poll would stall every block on the SM).
__device__ __forceinline__ unsigned int r_wait_state(const unsigned int* p) {
    unsigned int pause = 32;
    while (r_load_relaxed(p) == 0) r_back_off(pause);
    return r_load_acquire(p);
}

// An entry's state and value.
struct r_entry {
    unsigned int state;
    M v;
};

// An entry as one word (see THE ENTRIES): R_WORD_PARTS parts of 16 bytes, each holding the state
// and 12 bytes of the value (a value of at most 4 bytes shares 8 bytes with the state). The
// parts are stored and loaded one 16-byte access each, at once; a reader takes the entry only
// where every part shows the same state — a state is written once, so those parts hold one
// store's value. R_WORD_PARTS = 0: the states and values apart.
#define R_FUSED (R_WORD_PARTS > 0)
#define R_PARTS (R_WORD_PARTS > 0 ? R_WORD_PARTS : 1)
#define R_SMALL (sizeof(M) <= 4)
union alignas(16) r_word {
    unsigned int w[4 * R_PARTS];
    unsigned long long u[2 * R_PARTS];
};
union r_value_words {
    M v;
    unsigned int w[3 * R_PARTS];
};

// Entry *p as it is now (state 0 where it is not published, or its parts disagree).
__device__ __forceinline__ r_entry r_word_load(const r_word* p) {
    r_word w;
#if defined(__CUDA_ARCH__)
    if constexpr (R_SMALL) {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w.u[0]) : "l"(__cvta_generic_to_global(p)) : "memory");
    } else {
#pragma unroll
        for (int k = 0; k < R_PARTS; ++k)
            asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                         : "=l"(w.u[2 * k]), "=l"(w.u[2 * k + 1])
                         : "l"(__cvta_generic_to_global(p->u + 2 * k))
                         : "memory");
    }
#else
    w = *p;
#endif
    r_value_words value;
    r_entry e;
    e.state = w.w[0];
    if constexpr (R_SMALL) {
        value.w[0] = w.w[1];
    } else {
#pragma unroll
        for (int k = 0; k < R_PARTS; ++k) {
            if (w.w[4 * k] != e.state) e.state = 0;
            value.w[3 * k] = w.w[4 * k + 1];
            value.w[3 * k + 1] = w.w[4 * k + 2];
            value.w[3 * k + 2] = w.w[4 * k + 3];
        }
    }
    e.v = value.v;
    return e;
}

__device__ __forceinline__ void r_word_store(r_word* p, unsigned int state, M v) {
    r_value_words value;
#pragma unroll
    for (int i = 0; i < 3 * R_PARTS; ++i) value.w[i] = 0;
    value.v = v;
    r_word w;
#pragma unroll
    for (int k = 0; k < R_PARTS; ++k) {
        w.w[4 * k] = state;
        w.w[4 * k + 1] = value.w[3 * k];
        w.w[4 * k + 2] = value.w[3 * k + 1];
        w.w[4 * k + 3] = value.w[3 * k + 2];
    }
#if defined(__CUDA_ARCH__)
    if constexpr (R_SMALL) {
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "l"(w.u[0]) : "memory");
    } else {
#pragma unroll
        for (int k = 0; k < R_PARTS; ++k)
            asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(__cvta_generic_to_global(p->u + 2 * k)),
                         "l"(w.u[2 * k]), "l"(w.u[2 * k + 1])
                         : "memory");
    }
#else
    *p = w;
#endif
}

// A chain of entries (the tiles, or the groups). Fused: `words`, and `aggregates` for the
// groups' aggregates only (the look-back past its ring reads them). Apart: a state word per entry
// in `states`, the aggregates in `aggregates`, the inclusive values in `inclusives`.
struct r_chain {
    unsigned int* states;
    r_word* words;
    M* aggregates;
    M* inclusives;
};

// Waits for entry j to publish, and returns its state and value (the aggregate or, once the
// state says R_ST_INC, the inclusive value).
__device__ __forceinline__ r_entry r_entry_wait(const r_chain& c, r_size j) {
    r_entry e;
    if constexpr (R_FUSED) {
        unsigned int pause = 32;
        while ((e = r_word_load(c.words + j)).state == 0) r_back_off(pause);
    } else {
        e.state = r_wait_state(c.states + j);
        e.v = r_load_cg((e.state & R_ST_INC) ? c.inclusives + j : c.aggregates + j);
    }
    return e;
}

// Entry j's aggregate, whatever it published since (the look-back past its ring).
__device__ __forceinline__ M r_entry_aggregate(const r_chain& c, r_size j) {
    if constexpr (R_FUSED) {
        (void)r_entry_wait(c, j);
        __threadfence();  // pairs with r_entry_publish's: the aggregate written before is seen
    } else {
        (void)r_wait_state(c.states + j);
    }
    return r_load_cg(c.aggregates + j);
}

// Publishes entry j's state and value (its aggregate, or its inclusive value with R_ST_INC).
// `kept`: the aggregate stays readable by r_entry_aggregate (the groups).
__device__ __forceinline__ void r_entry_publish(const r_chain& c, r_size j, unsigned int state, M v, bool kept) {
    if constexpr (R_FUSED) {
        if (kept) {
            if (!(state & R_ST_INC)) c.aggregates[j] = v;
            __threadfence();
        }
        r_word_store(c.words + j, state, v);
    } else {
        r_publish(c.states, (state & R_ST_INC) ? c.inclusives : c.aggregates, j, v, state);
    }
}

// The look-back's ring: the values of the nearest entries before a warp's own, by distance
// (slot d: entry t - 1 - d), up to about 4 KiB of them, whole windows of 32.
// (R_LB_WINDOWS and R_LB_INCLUSIVE_EVERY are set only by the emulator's tests, whose blocks run
// one after another so that every look-back would stop at the nearest group: a ring of one
// window, and a group's inclusive value published only where g % R_LB_INCLUSIVE_EVERY == 0,
// make look-backs walk past the ring as late groups make them on a GPU. The bits are the same
// wherever a look-back stops: THE FIXED GROUPING.)
// R_LB_SHARED 0 (the host's choice for values whose 32 do not fit the static shared memory
// beside the block's own, past about 1 KiB): no ring (R_LB_SLOTS 0, every entry read from global
// memory), and lane 0 reads its group's aggregates itself (r_tile_prefix). The same folds in the
// same order: the same bits.
#ifndef R_LB_SHARED
#define R_LB_SHARED 1
#endif
#ifndef R_LB_WINDOWS
#define R_LB_WINDOWS ((4096 / (R_WARP * (int)sizeof(M))) < 1 ? 1 : (4096 / (R_WARP * (int)sizeof(M))) > 16 ? 16 : (4096 / (R_WARP * (int)sizeof(M))))
#endif
#if R_LB_SHARED
#define R_LB_SLOTS (R_LB_WINDOWS * R_WARP)
#else
#define R_LB_SLOTS 0
#endif
#ifndef R_LB_INCLUSIVE_EVERY
#define R_LB_INCLUSIVE_EVERY 1
#endif

// The inclusive value of entry t - 1 of chain `c` (the groups), whose entries publish their
// aggregate, then their inclusive value: see THE FIXED GROUPING. By a whole warp; lane 0 returns
// it. The warp reads the entries before t a window of 32 at a time, nearest first, each lane
// waiting for its entry to publish, and keeps their values in `ring` until a window holds an
// entry that stops the look-back; then lane 0 folds from that entry's value the later entries'
// aggregates in order (those past the ring read again with r_entry_aggregate, a window at a time).
__device__ r_seg r_look_back(const r_chain& c, r_size t, M* ring) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    r_size dist = 0;  // entries t - 1 .. t - dist are read and none stops
    unsigned int stop_state = 0;
    int k = 0;
    for (;; dist += R_WARP) {
        const bool mine = t >= dist + lane + 1;
        const r_size j = mine ? t - 1 - dist - lane : 0;  // the entry this lane reads
        r_entry e;
        e.state = 0;
        if (mine) e = r_entry_wait(c, j);
        const unsigned int state = e.state;
        const bool stop = (state & R_ST_INC) || (R_SEG && (state & R_ST_HEAD));
        const unsigned int stops = __ballot_sync(R_FULL_MASK, stop);
        k = stops ? __ffs(stops) - 1 : R_WARP;  // the nearest entry that stops the look-back
        if (R_LB_SLOTS > 0 && dist + lane < R_LB_SLOTS && mine && (int)lane <= k) ring[dist + lane] = e.v;
        if (stops) {
            stop_state = __shfl_sync(R_FULL_MASK, state, k);
            break;
        }
    }
    __syncwarp();
    // The stop is entry t - 1 - (dist + k); fold forward from it.
    const r_size last = dist + k;
    r_seg p;
    p.flag = (stop_state & R_ST_HEAD) ? 1u : 0u;
    r_seg x;
    x.flag = 0;
    if (R_LB_SLOTS > 0 && last < R_LB_SLOTS) {
        if (lane == 0) {
            p.v = ring[last];
            for (int d = (int)last - 1; d >= 0; --d) {
                x.v = ring[d];
                p = r_scan_op(p, x);
            }
        }
        return p;
    }
    // Past the ring: the stop's value, then the aggregates up to the ring, 32 at a time.
    // (Every lane waits for the entries it reads itself: other lanes saw them.)
    const r_size stop = t - 1 - last;
    p.v = r_entry_wait(c, stop).v;  // a head's aggregate and inclusive value are one value
    for (r_size a = stop + 1; a < t - R_LB_SLOTS; a += R_WARP) {
        const r_size count = t - R_LB_SLOTS - a < R_WARP ? t - R_LB_SLOTS - a : R_WARP;
        r_seg mine;
        mine.flag = 0;
        mine.v = m_identity();
        if (lane < count) mine.v = r_entry_aggregate(c, a + lane);
        for (unsigned int l = 0; l < count; ++l) p = r_scan_op(p, r_seg_shfl(mine, l));
    }
    if (lane == 0) {
        for (int d = R_LB_SLOTS - 1; d >= 0; --d) {
            x.v = ring[d];
            p = r_scan_op(p, x);
        }
    }
    return p;
}

// Tile j's aggregate a(j) with its head flag, once it has published.
__device__ __forceinline__ r_seg r_tile_aggregate(const r_chain& c, r_size j) {
    const r_entry e = r_entry_wait(c, j);
    r_seg a;
    a.flag = (e.state & R_ST_HEAD) ? 1u : 0u;
    a.v = e.v;
    return a;
}

// Warp 0 of tile t (of n items) with the tile's aggregate `tile`: publishes a(t), folds w(t),
// publishes A(g) and I(g) where t is its group's last tile, looks back over the groups, and
// returns p(t) in lane 0 (see the ORDER INVARIANT; the identity without the flag for t = 0).
// `states`: 16 bytes of which the first 8 count the tiles handed out, then the entries (all zero
// before the launch): a word (r_word) per tile, then per group; apart, a state word per tile,
// then per group. `aggregates`: a(t) per tile, then A(g) per group; `inclusives`: I(g).
// `group` and `ring` may share their memory.
__device__ r_seg r_tile_prefix(r_seg tile, r_size t, r_size n, unsigned int* states, M* aggregates, M* inclusives,
                               r_seg* group, M* ring) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    r_word* words = reinterpret_cast<r_word*>(states + 4);
    const r_chain tile_chain = {states + 4, words, aggregates, inclusives};
    const r_chain group_chain = {states + 4 + tiles, words + tiles, aggregates + tiles, inclusives};
    const r_size g = t / R_WARP;
    const unsigned int i = (unsigned int)(t % R_WARP);
    const unsigned int head = tile.flag ? R_ST_HEAD : 0u;
    if (lane == 0) r_entry_publish(tile_chain, t, R_ST_AGG | head, tile.v, false);
    // The group's tiles before this one: a lane each into `group` (R_LB_SHARED), else lane 0
    // reads them itself, in order.
#if R_LB_SHARED
    if (lane < i) group[lane] = r_tile_aggregate(tile_chain, g * R_WARP + lane);
    __syncwarp();
#endif
    r_seg w, whole;  // w(t) and, where i = 31, A(g): lane 0's
    w.flag = 0;
    w.v = m_identity();
    whole = tile;
    const bool last = i == R_WARP - 1;
    if (lane == 0) {
        if (i > 0) {
#if R_LB_SHARED
            w = group[0];
            for (unsigned int l = 1; l < i; ++l) w = r_scan_op(w, group[l]);
#else
            w = r_tile_aggregate(tile_chain, g * R_WARP);
            for (unsigned int l = 1; l < i; ++l) w = r_scan_op(w, r_tile_aggregate(tile_chain, g * R_WARP + l));
#endif
            whole = r_scan_op(w, tile);
        }
        const unsigned int state = whole.flag ? R_ST_HEAD : 0u;
        if (last) r_entry_publish(group_chain, g, (g == 0 ? R_ST_INC : R_ST_AGG) | state, whole.v, true);
    }
    if (g == 0) return w;
    __syncwarp();  // lane 0 has read `group`: the ring may take its place
    const r_seg p = r_look_back(group_chain, g, ring);  // P(g), lane 0's
    if (lane == 0 && last && g % R_LB_INCLUSIVE_EVERY == 0) {
        const unsigned int state = whole.flag ? R_ST_HEAD : 0u;
        r_entry_publish(group_chain, g, R_ST_INC | state, r_scan_op(p, whole).v, true);
    }
    return i > 0 ? r_scan_op(p, w) : p;
}

// A thread's R_ITEMS head bits (bit j: its item j) from a bitmap of marks (bit i: item i), its
// first at bit q: from the one or two words they span.
__device__ __forceinline__ unsigned int r_mark_bits(const unsigned int* marks, unsigned int q) {
    const unsigned long long lo = marks[q / 32];
    const unsigned long long hi = q % 32 + R_ITEMS > 32 ? marks[q / 32 + 1] : 0u;
    const unsigned int bits = (unsigned int)((hi << 32 | lo) >> (q % 32));
    return R_ITEMS >= 32 ? bits : bits & ((1u << (R_ITEMS % 32)) - 1u);
}

// The head marks of tile [t0, t0 + R_TILE) from CSR offsets, one bit per item in marks[]:
// the offsets from the last one at or before t0 on, read a round of R_MARK_ROUND at a time
// (R_MARK_PER per thread, coalesced) until a round's last one passes the tile. A bad (trusted)
// layout only marks inside the tile and reads inside the array.
#define R_MARK_PER 4
#define R_MARK_ROUND ((r_size)R_MARK_PER * R_BLOCK)

// Sets the head bit of item `at` where it lies in the tile (the whole warp calls it). Where the
// warp's positions in the tile all fall in lane 0's mark word (segments of one item, runs of
// empty segments), their bits are ORed across the warp and set by one atomic: 32 atomics on one
// shared word serialise. Elsewhere each lane sets its own. (Taking the first lane in the tile
// instead of lane 0 would catch a tile's first round too, but costs f32 scans by offsets the
// 40 registers of 6 blocks per SM.)
__device__ __forceinline__ void r_mark(unsigned int* marks, r_size at, r_size t0) {
    const bool in = at >= t0 && at - t0 < R_TILE;
    const unsigned int pos = in ? (unsigned int)(at - t0) : 0u, word = pos / 32;
    const unsigned int bit = in ? 1u << (pos % 32) : 0u;
    const unsigned int first = __shfl_sync(R_FULL_MASK, word, 0);
    if (__all_sync(R_FULL_MASK, !in || word == first)) {
        const unsigned int bits = r_warp_redux<R_OR>(bit);
        if ((threadIdx.x & (R_WARP - 1)) == 0 && bits != 0) atomicOr(&marks[first], bits);
    } else if (in) {
        atomicOr(&marks[word], bit);
    }
}

__device__ void r_mark_heads(const r_idx* offsets, r_size segments, r_size t0, unsigned int* marks,
                             r_size* s_first) {
    for (unsigned int w = threadIdx.x; w < R_TILE / 32; w += R_BLOCK) marks[w] = 0;
    if (threadIdx.x < R_WARP) {
        const r_size s = r_warp_find_segment(offsets, segments, t0);
        if (threadIdx.x == 0) *s_first = s;
    }
    __syncthreads();
    for (r_size s = *s_first;; s += R_MARK_ROUND) {
        r_size at[R_MARK_PER];
#pragma unroll
        for (int k = 0; k < R_MARK_PER; ++k) {
            const r_size e = s + (r_size)k * R_BLOCK + threadIdx.x;
            at[k] = e <= segments ? (r_size)offsets[e] : ~(r_size)0;  // past the array: past the tile
        }
#pragma unroll
        for (int k = 0; k < R_MARK_PER; ++k) r_mark(marks, at[k], t0);
        // the round's last offset past the tile, or (a bad layout) before it: the walk ends
        const r_size last = at[R_MARK_PER - 1];
        const bool more = threadIdx.x == R_BLOCK - 1 && last >= t0 && last - t0 < R_TILE;
        if (!__syncthreads_or(more)) break;
    }
}

// A thread's items are read twice, to fold them and, after the look-back, to write their outputs,
// and held nowhere in between: items kept in registers through the wait would cap the blocks an
// SM holds, and tiles in flight are what hides the wait. Where a thread's run of items is whole
// 16-byte vectors (the default tiles where items and values are of one size: scan_items rounds
// the run so), a warp whose items are all there loads them as vectors, coalesced, into its stage
// in shared memory, kInVecs per lane; each lane then reads its own run from the stage a chunk at
// a time: the fewest whole vectors that hold whole items (kChunkVecs: one vector of 16 / size
// items for 1, 2, 4, 8 and 16 bytes; three of four 12-byte items, five of four 20-byte ones...).
// Vector x of a stage lies at r_stage_at(x): where a run is an even number of vectors, x with its
// low three bits XORed by those of its lane's number (x / kInVecs: the swizzle of 8-vector runs,
// x ^ (x >> 3)); where it is odd, x itself. Either way the eight lanes of a phase touch eight
// distinct 16-byte bank groups both when the warp moves consecutive vectors and when each lane
// moves its own run (runs of 1 to 38 vectors counted: one wavefront a phase). Outputs as large as
// the items go back into the lane's run in the stage, in place, and out coalesced; other outputs
// each thread stores itself (kOutPer to a 16-byte vector where they fill it). The host stages a
// tile's items where they fit its bound (R_STAGE_BYTES, catalogue/tuning.rs's SCAN_STAGE_MAX);
// beyond it, or where a run is not whole vectors or the items are aligned past 16 bytes, nothing
// is staged and each thread reads its items from `in`, both times: uncoalesced, several times
// slower (docs/decisions/0066-scan-stages-for-any-size.md).
constexpr int kSizeTwos = (int)(sizeof(r_in) & (~sizeof(r_in) + 1));  // the size's largest power of two
constexpr int kChunkBytes = (int)sizeof(r_in) / (kSizeTwos < 16 ? kSizeTwos : 16) * 16;  // lcm(size, 16)
constexpr int kChunkVecs = kChunkBytes / 16;
constexpr int kChunkItems = kChunkBytes / (int)sizeof(r_in);
static_assert(R_STAGE_BYTES == 0 || R_STAGE_BYTES == (size_t)R_BLOCK * R_ITEMS * sizeof(r_in),
              "a stage holds its warp's items");
constexpr bool kStaged = R_STAGE_BYTES > 0 && alignof(r_in) <= 16 && R_ITEMS % kChunkItems == 0;
constexpr int kInVecs = kStaged ? (int)(R_ITEMS * sizeof(r_in) / 16) : 0;  // a lane's run
constexpr int kStageVecs = kStaged ? R_WARP * kInVecs : 1;                  // a warp's stage
constexpr bool kOutStaged = kStaged && sizeof(M) == sizeof(r_in) && alignof(M) <= 16;
constexpr int kOutPer = 16 % sizeof(M) == 0 && alignof(M) <= 16 && R_ITEMS % (16 / sizeof(M)) == 0 ? (int)(16 / sizeof(M)) : 0;

__device__ __forceinline__ unsigned int r_stage_at(unsigned int x) {
    return kInVecs % 2 == 0 ? x ^ ((x / (unsigned int)kInVecs) & 7u) : x;
}

// Where in its warp's stage lies vector k of chunk c of the run of lane `lane`.
__device__ __forceinline__ unsigned int r_run_at(unsigned int lane, int c, int k) {
    return r_stage_at(lane * kInVecs + c * kChunkVecs + k);
}

// A chunk of a lane's run: kChunkVecs vectors, kChunkItems input items; and (kOutStaged) as many
// outputs in their place.
union r_chunk {
    uint4 q[kChunkVecs];
    r_in x[kChunkItems];
};
union r_out_chunk {
    uint4 q[kChunkVecs];
    r_in x[kChunkItems];
    M m[kOutStaged ? kChunkItems : 1];
};

// Calls f(j, item j lifted) for the thread's items in order: from the lane's run in its warp's
// stage, a chunk at a time (`staged`), else the `count` items from `in` at `first`.
template <typename F>
__device__ __forceinline__ void r_thread_items(bool staged, const uint4* stage, unsigned int lane, const r_in* in,
                                               r_size first, int count, F f) {
    if (staged) {
#pragma unroll
        for (int c = 0; c < kInVecs / kChunkVecs; ++c) {
            r_chunk u;
#pragma unroll
            for (int k = 0; k < kChunkVecs; ++k) u.q[k] = stage[r_run_at(lane, c, k)];
#pragma unroll
            for (int e = 0; e < kChunkItems; ++e) {
                const int j = c * kChunkItems + e;
                f(j, m_lift(u.x[e], first + j));
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < R_ITEMS; ++j)
            if (j < count) f(j, m_lift(in[first + j], first + j));
    }
}

// How a tile comes by its prefix p(t): by looking back in one launch (scan_tiles), or from the
// launches before it (REDUCE-THEN-SCAN: scan_reduce publishes a(t) and stops; scan_apply folds
// p(t) from w(t) and P(g), which scan_groups and scan_chain left in the flags and values).
#define R_TILE_LOOK_BACK 0
#define R_TILE_REDUCE 1
#define R_TILE_APPLY 2

// A slot of REDUCE-THEN-SCAN's flags and values (a tile's, or after the tiles a group's).
__device__ __forceinline__ r_seg r_slot_load(const unsigned int* flags, const M* values, r_size i) {
    r_seg s;
    s.flag = flags[i];
    s.v = values[i];
    return s;
}
__device__ __forceinline__ void r_slot_store(unsigned int* flags, M* values, r_size i, r_seg s) {
    flags[i] = s.flag;
    values[i] = s.v;
}

// Tile t of the scan (kernels' arguments as scan_tiles'; REDUCE and APPLY: `states` holds the
// flags and `aggregates` the values of the tiles, then of the groups, see scan_groups).
template <int MODE>
__device__ __forceinline__ void r_scan_tile(const r_in* in, r_size n, M* out, r_size exclusive,
                                            const r_idx* __restrict__ layout, r_size segments,
                                            unsigned int* states, M* aggregates, M* inclusives) {
    __shared__ r_seg s_warps[R_WARPS];  // one a warp of the block (large values must fit 48 KiB)
    __shared__ r_seg s_prefix;
    __shared__ r_size s_tile;
    // Warp 0's look-back: the group's aggregates first, then the ring (r_tile_prefix).
#if R_LB_SHARED
    __shared__ union {
        r_seg group[R_WARP];
        M ring[R_LB_SLOTS];
    } s_lb;
    r_seg* const lb_group = s_lb.group;
    M* const lb_ring = s_lb.ring;
#else
    r_seg* const lb_group = nullptr;
    M* const lb_ring = nullptr;
#endif
    // The warps' stages, kStageVecs vectors each: static where the host keeps them so (up to
    // 32 KiB, catalogue/tuning.rs's SCAN_STATIC_STAGE_MAX: the address folds into the
    // instructions), else the launch's dynamic shared memory (R_STAGE_DYNAMIC).
#if R_STAGE_DYNAMIC
    extern __shared__ uint4 s_stages[];
    uint4(*const s_stage)[kStageVecs] = reinterpret_cast<uint4(*)[kStageVecs]>(s_stages);
#else
    __shared__ uint4 s_stage[R_WARPS][kStageVecs];
#endif
#if R_SEG == R_SEG_OFFSETS
    __shared__ unsigned int s_marks[R_TILE / 32];
    __shared__ r_size s_first;
#endif
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    // states[0..2) hold the 64-bit counter that hands out the tiles (see r_tile_prefix); the
    // passes of REDUCE-THEN-SCAN take tile b in block b.
    if (threadIdx.x == 0)
        s_tile = MODE == R_TILE_LOOK_BACK ? atomicAdd(reinterpret_cast<unsigned long long*>(states), 1ull)
                                          : (r_size)blockIdx.x;
    __syncthreads();
    const r_size t = s_tile;
    const r_size t0 = t * R_TILE;
    const r_size first = t0 + (r_size)threadIdx.x * R_ITEMS;
    const int count = first >= n ? 0 : (int)(n - first < R_ITEMS ? n - first : R_ITEMS);

    // The thread's items: a warp whose items are all there stages them (see the stages above).
    const bool warp_whole = t0 + (r_size)(warp + 1) * R_WARP * R_ITEMS <= n;
    const bool staged = kStaged && warp_whole && ((unsigned long long)in & 15u) == 0;
    if (staged) {
        const uint4* src = reinterpret_cast<const uint4*>(in + (first - (r_size)lane * R_ITEMS));
        uint4 loaded[kInVecs > 0 ? kInVecs : 1];
#pragma unroll
        for (int v = 0; v < kInVecs; ++v) loaded[v] = __ldcs(src + v * R_WARP + lane);
#pragma unroll
        for (int v = 0; v < kInVecs; ++v) s_stage[warp][r_stage_at(v * R_WARP + lane)] = loaded[v];
        __syncwarp();
    }

    // Where segments start.
    unsigned int heads = 0;  // bit j: item j of this thread
#if R_SEG == R_SEG_OFFSETS
    r_mark_heads(layout, segments, t0, s_marks, &s_first);
    {
        heads = r_mark_bits(s_marks, threadIdx.x * R_ITEMS);
        const int mine = count < R_ITEMS ? count : R_ITEMS;  // the bits of items before n
        heads &= mine >= 32 ? ~0u : (1u << mine) - 1u;
    }
#elif R_SEG == R_SEG_KEYS
    if (count > 0) {
        r_idx before = first == 0 ? 0 : layout[first - 1];
        const auto mark = [&](int j, r_idx key) {
            if (first + j == 0 || key != before) heads |= 1u << j;
            before = key;
        };
        // A whole run of keys at a 16-byte boundary as 16-byte vectors (a warp's load then
        // touches 32 lines for 16 bytes each, not 4), else key by key.
        constexpr int kKeysPerVec = (int)(16 / sizeof(r_idx));
        if (R_ITEMS % kKeysPerVec == 0 && count == R_ITEMS && ((unsigned long long)(layout + first) & 15u) == 0) {
#pragma unroll
            for (int v = 0; v < R_ITEMS / kKeysPerVec; ++v) {
                union {
                    uint4 q;
                    r_idx k[kKeysPerVec];
                } u;
                u.q = __ldcs(reinterpret_cast<const uint4*>(layout + first) + v);
#pragma unroll
                for (int e = 0; e < kKeysPerVec; ++e) mark(v * kKeysPerVec + e, u.k[e]);
            }
        } else {
#pragma unroll
            for (int j = 0; j < R_ITEMS; ++j)
                if (j < count) mark(j, layout[first + j]);
        }
    }
#else
    (void)layout;
    (void)segments;
#endif

    // The thread's aggregate, then the warp's and the block's scans of the aggregates.
    r_seg agg;
    agg.flag = heads & 1u;
    agg.v = m_identity();
    r_thread_items(staged, s_stage[warp], lane, in, first, count, [&](int j, const M& x) {
        r_seg item;
        item.flag = (heads >> j) & 1u;
        item.v = x;
        if (j == 0) agg.v = x;
        else agg = r_scan_op(agg, item);
    });
    const r_seg inc = r_scan_warp(agg);
    if (lane == R_WARP - 1) s_warps[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        r_seg w = s_warps[lane < R_WARPS ? lane : 0];
        __syncwarp();  // every lane has read before any writes
        w = r_scan_warp(w);  // lanes past R_WARPS hold garbage no lane before them reads
        if (lane < R_WARPS) s_warps[lane] = w;  // the inclusive values of the warps
        const r_seg tile = r_seg_shfl(w, R_WARPS - 1);
        if constexpr (MODE == R_TILE_LOOK_BACK) {
            const r_seg prefix = r_tile_prefix(tile, t, n, states, aggregates, inclusives, lb_group, lb_ring);
            if (lane == 0) s_prefix = prefix;
        } else if constexpr (MODE == R_TILE_REDUCE) {
            if (lane == 0) r_slot_store(states, aggregates, t, tile);
        } else if (lane == 0) {
            // p(t) = P(g) ⊕ w(t) (i > 0), P(g) (i = 0); group 0: w(t) (r_tile_prefix's return)
            const r_size tiles = (n + R_TILE - 1) / R_TILE, g = t / R_WARP;
            const r_seg w = r_slot_load(states, aggregates, t);
            if (g == 0) {
                s_prefix = w;
            } else {
                const r_seg p = r_slot_load(states, aggregates, tiles + g);
                s_prefix = t % R_WARP > 0 ? r_scan_op(p, w) : p;
            }
        }
    }
    if constexpr (MODE == R_TILE_REDUCE) return;  // every thread: no barrier follows
    __syncthreads();

    // The thread's prefix: p(t) ⊕ the warps before ⊕ the lanes before (none for the very first).
    const r_seg lanes_before = r_seg_shfl_up(inc, 1);
    bool has = t > 0;
    r_seg pre = s_prefix;
    if (warp > 0) {
        pre = has ? r_scan_op(pre, s_warps[warp - 1]) : s_warps[warp - 1];
        has = true;
    }
    if (lane > 0) {
        pre = has ? r_scan_op(pre, lanes_before) : lanes_before;
        has = true;
    }
    M acc = has ? pre.v : m_identity();
    // Item j's output: (head ? identity : prefix) ⊕ x, or (exclusive) the prefix before it.
    auto step = [&](int j, const M& x) {
        const M before = (heads >> j) & 1u ? m_identity() : acc;
        acc = m_combine(before, x);
        return exclusive ? before : acc;
    };
    if (kOutStaged && staged && ((unsigned long long)out & 15u) == 0) {
        // Into the run's place in the stage, a chunk at a time, then out coalesced.
#pragma unroll
        for (int c = 0; c < kInVecs / kChunkVecs; ++c) {
            r_out_chunk u;
#pragma unroll
            for (int k = 0; k < kChunkVecs; ++k) u.q[k] = s_stage[warp][r_run_at(lane, c, k)];
#pragma unroll
            for (int e = 0; e < kChunkItems; ++e) {
                const int j = c * kChunkItems + e;
                u.m[e] = step(j, m_lift(u.x[e], first + j));
            }
#pragma unroll
            for (int k = 0; k < kChunkVecs; ++k) s_stage[warp][r_run_at(lane, c, k)] = u.q[k];
        }
        __syncwarp();
        uint4* dst = reinterpret_cast<uint4*>(out + (first - (r_size)lane * R_ITEMS));
#pragma unroll
        for (int v = 0; v < kInVecs; ++v) __stcs(dst + v * R_WARP + lane, s_stage[warp][r_stage_at(v * R_WARP + lane)]);
    } else if (kOutPer > 0 && count == R_ITEMS && ((unsigned long long)(out + first) & 15u) == 0) {
        // The thread's run as 16-byte vectors of kOutPer outputs.
        union {
            uint4 q;
            M m[kOutPer > 0 ? kOutPer : 1];
        } o;
        r_thread_items(staged, s_stage[warp], lane, in, first, count, [&](int j, const M& x) {
            o.m[j % (kOutPer > 0 ? kOutPer : 1)] = step(j, x);
            if (j % (kOutPer > 0 ? kOutPer : 1) == kOutPer - 1)
                __stcs(reinterpret_cast<uint4*>(out + first + j + 1 - kOutPer), o.q);
        });
    } else {
        r_thread_items(staged, s_stage[warp], lane, in, first, count, [&](int j, const M& x) { out[first + j] = step(j, x); });
    }
}

extern "C" __global__ void R_TILES_BOUNDS
scan_tiles(const r_in* in, r_size n, M* out, r_size exclusive, const r_idx* __restrict__ layout,
           r_size segments, unsigned int* states, M* aggregates, M* inclusives) {
    r_scan_tile<R_TILE_LOOK_BACK>(in, n, out, exclusive, layout, segments, states, aggregates, inclusives);
}

// REDUCE-THEN-SCAN, first pass: a(t) of tile t (block t) into flags[t], values[t].
extern "C" __global__ void __launch_bounds__(R_BLOCK)
scan_reduce(const r_in* in, r_size n, const r_idx* __restrict__ layout, r_size segments, unsigned int* flags,
            M* values) {
    r_scan_tile<R_TILE_REDUCE>(in, n, nullptr, 0, layout, segments, flags, values, nullptr);
}

// REDUCE-THEN-SCAN, last pass: the outputs of tile t (block t) from p(t) = P(g) ⊕ w(t) (w(t) in
// flags[t], values[t]; P(g) in the group's slot after the tiles').
extern "C" __global__ void __launch_bounds__(R_BLOCK)
scan_apply(const r_in* in, r_size n, M* out, r_size exclusive, const r_idx* __restrict__ layout,
           r_size segments, unsigned int* flags, M* values) {
    r_scan_tile<R_TILE_APPLY>(in, n, out, exclusive, layout, segments, flags, values, nullptr);
}

// REDUCE-THEN-SCAN, second pass (a warp per group of 32 tiles): from a(t) in flags[t], values[t]
// (the tiles of n items; after them a slot per group), w(t) in their place, folded left to right
// from the group's first tile as r_tile_prefix folds it (none for the first: the identity
// without the flag), and A(g) = w(last) ⊕ a(last) in the group's slot.
extern "C" __global__ void __launch_bounds__(R_BLOCK) scan_groups(r_size n, unsigned int* flags, M* values) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size tiles = (n + R_TILE - 1) / R_TILE, groups = (tiles + R_WARP - 1) / R_WARP;
    const r_size g = ((r_size)blockIdx.x * blockDim.x + threadIdx.x) / R_WARP;
    if (g >= groups) return;  // the whole warp
    const r_size t = g * R_WARP + lane;
    const unsigned int count = tiles - g * R_WARP < R_WARP ? (unsigned int)(tiles - g * R_WARP) : R_WARP;
    r_seg none;  // w(32 g): the identity without the flag
    none.flag = 0;
    none.v = m_identity();
    const r_seg mine = lane < count ? r_slot_load(flags, values, t) : none;
    __syncwarp();  // every lane has read its a(t) before lane 0 writes over it
    // Every lane folds (the shuffles need the whole warp); lane 0 writes w(t), then A(g).
    r_seg w = r_seg_shfl(mine, 0);  // w(32 g + 1)
    if (lane == 0) r_slot_store(flags, values, g * R_WARP, none);
    for (unsigned int l = 1; l < count; ++l) {
        if (lane == 0) r_slot_store(flags, values, g * R_WARP + l, w);
        w = r_scan_op(w, r_seg_shfl(mine, (int)l));
    }
    if (lane == 0) r_slot_store(flags, values, tiles + g, w);
}

// The groups' slots a chunk at a time in shared memory (scan_chain): about 4 KiB of them, at
// least 32 where the look-back's 32 values fit too (R_LB_SHARED), at least one past that.
#define R_CHAIN_FLOOR (R_LB_SHARED ? R_WARP : 1)
#define R_CHAIN_CHUNK (4096 / (int)sizeof(M) < R_CHAIN_FLOOR ? R_CHAIN_FLOOR : 4096 / (int)sizeof(M) > R_BLOCK ? R_BLOCK : 4096 / (int)sizeof(M))

// REDUCE-THEN-SCAN, third pass (one block): the groups' slots, A(g), become P(g) = I(g - 1) in
// order, I(0) = A(0), I(g) = P(g) ⊕ A(g) (group 0 keeps A(0), which no tile reads) — thread 0
// walking a chunk of them at a time in shared memory, where the block loads and stores them.
extern "C" __global__ void __launch_bounds__(R_BLOCK) scan_chain(r_size n, unsigned int* flags, M* values) {
    __shared__ r_seg s_chain[R_CHAIN_CHUNK];
    const r_size tiles = (n + R_TILE - 1) / R_TILE, groups = (tiles + R_WARP - 1) / R_WARP;
    r_seg inc;  // thread 0's I(g - 1)
    inc.flag = 0;
    inc.v = m_identity();
    for (r_size c0 = 0; c0 < groups; c0 += R_CHAIN_CHUNK) {
        const r_size len = groups - c0 < R_CHAIN_CHUNK ? groups - c0 : R_CHAIN_CHUNK;
        for (r_size k = threadIdx.x; k < len; k += R_BLOCK) s_chain[k] = r_slot_load(flags, values, tiles + c0 + k);
        __syncthreads();
        if (threadIdx.x == 0) {
            for (r_size k = 0; k < len; ++k) {
                const r_seg a = s_chain[k];
                if (c0 + k == 0) {
                    inc = a;  // I(0) = A(0)
                } else {
                    s_chain[k] = inc;  // P(g) = I(g - 1)
                    inc = r_scan_op(inc, a);
                }
            }
        }
        __syncthreads();
        for (r_size k = threadIdx.x; k < len; k += R_BLOCK) r_slot_store(flags, values, tiles + c0 + k, s_chain[k]);
        __syncthreads();
    }
}
