// LookAhead (ScanAlgorithm::LookAhead, sm_90+, plain and segmented scans): scan_tiles' tiles,
// grouping and bits, computed by warps of which none waits for another block's prefix.
//
// ORDER INVARIANT. As scan_tiles' (kernels/scan.cu): tiles of R_TILE consecutive items numbered
// in the order a counter hands them out (every tile before a block's own is held by a block that
// runs), groups of 32 tiles (tile t = 32 g + i); thread k of a tile folds its R_ITEMS items from
// k * R_ITEMS left to right; the lanes, then the warps, scan the threads' aggregates
// (r_scan_warp); a tile's prefix is p(t) = I(g - 1) ⊕ w(t) (group 0: w(t)), with
// w(t) = a(32 g) ⊕ … ⊕ a(t - 1) folded left to right, A(g) = w(32 g + 31) ⊕ a(32 g + 31),
// I(0) = A(0), I(g) = I(g - 1) ⊕ A(g); a thread's prefix is p(t) ⊕ (the warps before) ⊕ (the
// lanes before), and its outputs continue from it item by item. These are r_tile_prefix's values
// by the same combines in the same order, so the outputs equal scan_tiles' bit for bit for the
// same (R_BLOCK, R_ITEMS), and every combine is (earlier items) ⊕ (later items).
// Segmented (R_SEG), every value above is a pair (head, value) combined by r_scan_op, as in
// scan_tiles: a tile's entry carries whether a segment starts in it (R_ST_HEAD), and the
// look-back chains every group where scan_tiles stops at the nearest one holding a start —
// the same value, since a pair whose head is set combines to its own value. The heads are
// scan_tiles' too: by key from the keys; by CSR offsets from a bitmap of them (bit i: some offset
// equals i < n) that scan_marks writes first, a launch of its own over the offsets.
//
// THE BLOCK: R_BLOCK compute threads, a producer warp and R_AHEAD_LOOKERS look-back warps; R_PIPE
// stages.
//   - The producer takes the block's k-th tile from the counter, leaves its number in
//     s_tile[k % R_PIPE] (segmented, announced by `ticket`) and bulk-copies its items into stage
//     k % R_PIPE (pipe.cuh: `full`) once the stage's tile before is written (`empty`). Past the
//     last tile it hands out R_NO_TILE (on R_AHEAD_LOOKERS rounds, one for each look-back warp)
//     and stops.
//   - The compute threads, in round k, reduce tile k (its aggregate a(t) published at once; the
//     warps' inclusive values, each thread's lanes before it and its heads kept for later),
//     then write the outputs of tile k - R_LEAD, whose prefix a look-back warp hands over
//     (`ready`). Segmented, each warp marks its items' heads (a bitmap kept in shared memory
//     for the writes) from what its lanes loaded in the round before (the tile's number from
//     `ticket`, coalesced): its keys, or its words of scan_marks' bitmap; and leaves the next
//     tile's loading through this round: a tile's keys in shared memory would halve the stages
//     (docs/decisions/0071-scan-look-ahead-by-key.md).
//   - Look-back warp j takes the block's rounds k = j, j + R_AHEAD_LOOKERS, … and carries
//     I(gc - 1), the groups it has folded. For each of its tiles in turn it reads the entries of
//     tiles 32 gc … t - 1 (issued together, a row of 32 a group), folds each whole group in a
//     lane of its own and w(t) in another, chains the groups' A in lane 0, and hands p(t) over.
//     Every warp builds each I(g) by the same chain, I(g - 1) ⊕ A(g) from I(0), so p(t) does not
//     depend on which warp folds it. A warp spends most of a tile's look-back waiting for entries
//     (the tiles just before it land about when it does); L warps, each folding every L-th tile
//     from its own previous one, put L tiles in look-back at once (the host's count,
//     tuning::scan_ahead_look_backs: docs/decisions/0075-scan-two-look-back-warps.md,
//     0076-scan-three-look-back-warps.md).
// Only tiles' aggregates are waited for, and an aggregate waits for nothing but its own tile's
// items: unlike scan_tiles, no block waits for another's prefix or holds its SM slot doing so
// (docs/decisions/0068-cub-lookahead-scan.md, 0069-scan-persistent-carry.md; the measurements,
// and why a wait polls every missing entry at once: 0070-scan-look-ahead.md).
// PROGRESS. The compute threads reduce tile k after writing tile k - R_LEAD - 1 and once stage k
// is free (tile k - R_PIPE written, R_LEAD < R_PIPE); segmented, in round k they also wait for tile
// k + 1's number, taken once tile k + 1 - R_PIPE is written, in round k + 1 - R_PIPE + R_LEAD <
// k (R_PIPE >= R_LEAD + 2). Writing a tile needs its prefix, which needs the aggregates of the
// tiles taken before it: every wait is for an earlier tile, held by a block that runs. A look-back
// warp's round k waits for stage k's number, which comes once tile k - R_PIPE is written, and
// (with two or more warps) for round k - R_PIPE's prefix, an earlier tile's.
//
// Parameters (beside scan.cu's; R_WORD_PARTS > 0): R_PIPE stages, R_LEAD rounds between a tile's
// reduction and its outputs, R_AHEAD_LOOKERS look-back warps, R_VECS (a thread's items as whole
// 16-byte vectors; 0: item by item), R_ITEM_SHIFT = 0 (the host passes 16-byte aligned items),
// R_MARKS_RUN (the offsets a thread of scan_marks takes). The dynamic shared memory,
// R_AHEAD_SMEM: R_PIPE stages of items; then, for each of the R_AHEAD_HELD tiles between their
// reduction and their outputs (a slot each, round k's in slot k % R_AHEAD_HELD), R_BLOCK values
// (s_lanes: each thread's lanes before it) and segmented a bitmap of the tile's heads (s_marks:
// R_TILE / 32 words, a warp's R_ITEMS together).

// Only sm_90 and newer (and the emulator) have the entry: the runtime runs LookBack elsewhere.
#if R_PIPE && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)

#define R_AHEAD_THREADS (R_BLOCK + R_WARP + R_AHEAD_LOOKERS * R_WARP)
#define R_NO_TILE (~(r_size)0)
static_assert(R_FUSED, "LookAhead's entries are one word");
#define R_AHEAD_HEADS (R_SEG != 0)
// The tiles reduced and not yet written (round k writes tile k - R_LEAD after reducing tile k),
// and the dynamic shared memory.
#define R_AHEAD_HELD (R_LEAD + 1)
#define R_AHEAD_SMEM \
    (R_PIPE * R_PIPE_STAGE_BYTES + R_AHEAD_HELD * (R_BLOCK * sizeof(M) + (R_AHEAD_HEADS ? R_TILE / 8 : 0)))
static_assert(R_LEAD >= 1 && R_LEAD < R_PIPE, "a tile is written before its stage is refilled");
static_assert(!R_AHEAD_HEADS || R_PIPE >= R_LEAD + 2, "segmented, a tile's number is taken before the round before it");
static_assert(R_ITEM_SHIFT == 0, "LookAhead's items are 16-byte aligned");
static_assert(R_AHEAD_LOOKERS >= 1 && R_AHEAD_LOOKERS <= R_PIPE, "at most a look-back warp a stage: the end and the look-back warps' waits");

// The look-back's rows of 32 tile values (a group each), about 4 KiB of them; and the entries a
// lane loads before it looks at any (one round trip for all). The emulator's tests set them
// smaller, and R_AHEAD_MAX_TILES (the most tiles a block takes), so that blocks run one after
// another there still look back over many rows, in several chunks and batches, and over other
// blocks' entries (a block that takes every tile reads at most one row a tile).
#ifndef R_AHEAD_ROWS
#define R_AHEAD_ROWS (4096 / (R_WARP * (int)sizeof(M)) < 2 ? 2 : 4096 / (R_WARP * (int)sizeof(M)) > 32 ? 32 : 4096 / (R_WARP * (int)sizeof(M)))
#endif
#ifndef R_AHEAD_BATCH
#define R_AHEAD_BATCH (R_PARTS <= 2 ? 8 : 4)
#endif

// Waits (emulator: lets the block's other fibers run) between polls of an entry.
__device__ __forceinline__ void r_ahead_pause(unsigned int& pause) {
#if defined(__CUDA_ARCH__)
    r_back_off(pause);
#else
    (void)pause;
    emu::yield();
#endif
}

#if R_VECS > 0
// A whole run of R_VECS 16-byte vectors in the stage is read in round k (the reduction) and
// again in round k + R_LEAD (the outputs: read, then, where the warp writes through the stage,
// stored in place and copied out by the warp). The bulk copy lays vector k of every lane's run
// at k, so lanes whose runs start in the same bank group would all read vector k from one group;
// pipe.cuh's r_rot gives such lanes different rotation classes s. Round k's read therefore
// leaves the run swizzled in place, vector k at k ^ r_ahead_swz(lane), a different position for
// each class; from then on every read and store names its registers statically and only the
// addresses differ between lanes: no bank conflicts, and no selects to undo a rotation. (Odd
// runs, R_ROTATIONS = 1: the runs already start in distinct groups, and nothing moves.)
//
// The first read itself: a lane of class s reads step k from k ^ s and stores it at its swizzled
// place, k ^ s ^ h(s), with h(s) = r_ahead_swz(lane) = s times x in GF(2^m), m = log2
// R_ROTATIONS; s ^ h(s) is s times x + 1. Neither x nor x + 1 is zero, so both maps are one-to-one
// over the classes for every k: neither the reads nor the stores conflict. Then it reads the run
// back in order. With two classes (runs of 2 mod 4 vectors) no such pair exists (GF(2) has no
// x): the rotation and its one stage of selects, as pipe.cuh's r_stage_vectors, then h(s) = s.
__device__ __forceinline__ unsigned int r_ahead_swz(unsigned int lane) {
    const unsigned int s = r_rot(lane);
    if constexpr (R_ROTATIONS >= 4) return ((s << 1) & (R_ROTATIONS - 1)) ^ ((s & (R_ROTATIONS / 2)) ? 3u : 0u);
    return s;
}

// This thread's whole run at p, swizzled (after round k's read), into out[] in order.
__device__ __forceinline__ void r_ahead_read(const uint4* p, uint4 (&out)[R_VECS]) {
    const unsigned int m = r_ahead_swz(threadIdx.x & (R_WARP - 1));
#pragma unroll
    for (int k = 0; k < R_VECS; ++k) out[k] = p[k ^ m];
}

// in[] (vector k of the run in in[k]) into this thread's run at p, swizzled.
__device__ __forceinline__ void r_ahead_store(uint4* p, const uint4 (&in)[R_VECS]) {
    const unsigned int m = r_ahead_swz(threadIdx.x & (R_WARP - 1));
#pragma unroll
    for (int k = 0; k < R_VECS; ++k) p[k ^ m] = in[k];
}

// Round k's read of this thread's whole run at p, as the bulk copy left it: into out[] in order,
// leaving it swizzled in place.
__device__ __forceinline__ void r_ahead_first_read(uint4* p, uint4 (&out)[R_VECS]) {
    if constexpr (R_ROTATIONS >= 4) {
        const unsigned int lane = threadIdx.x & (R_WARP - 1), s = r_rot(lane), m = r_ahead_swz(lane);
        uint4 t[R_VECS];
#pragma unroll
        for (int k = 0; k < R_VECS; ++k) t[k] = p[k ^ s];
#pragma unroll
        for (int k = 0; k < R_VECS; ++k) p[k ^ s ^ m] = t[k];
        r_ahead_read(p, out);
    } else {
        r_stage_vectors(p, out);
        if constexpr (R_ROTATIONS == 2) r_ahead_store(p, out);
    }
}

// Where vector g of a warp's 32 swizzled runs lies (vector g % R_VECS of lane g / R_VECS's run).
__device__ __forceinline__ unsigned int r_ahead_swz_at(unsigned int g) {
    const unsigned int run = g / R_VECS;
    return run * R_VECS + ((g % R_VECS) ^ r_ahead_swz(run));
}

union r_ahead_run {
    uint4 v[R_VECS];
    r_in x[R_ITEMS];
    M m[sizeof(M) == sizeof(r_in) ? R_ITEMS : 1];
};
#endif

// Calls f(j, item j lifted) for this thread's `count` items in order, from its run in `stage`
// (the tile's first item at `t0`). Round k's read (`First`) of a whole run leaves it swizzled,
// which every later read expects; a run cut short by the items' end stays as copied.
template <bool First, typename F>
__device__ __forceinline__ void r_ahead_items(unsigned char* stage, r_size t0, int count, F f) {
    const r_size first = t0 + (r_size)threadIdx.x * R_ITEMS;
    r_in* run = reinterpret_cast<r_in*>(stage) + threadIdx.x * R_ITEMS;
#if R_VECS > 0
    if (count == R_ITEMS) {
        r_ahead_run u;
        if constexpr (First) r_ahead_first_read(reinterpret_cast<uint4*>(run), u.v);
        else r_ahead_read(reinterpret_cast<const uint4*>(run), u.v);
#pragma unroll
        for (int j = 0; j < R_ITEMS; ++j) f(j, m_lift(u.x[j], first + j));
        return;
    }
#endif
#pragma unroll
    for (int j = 0; j < R_ITEMS; ++j)
        if (j < count) f(j, m_lift(run[j], first + j));
}

#if R_AHEAD_HEADS
// The warp's first item in tile t.
__device__ __forceinline__ r_size r_ahead_warp_first(r_size t) {
    return t * R_TILE + (r_size)(threadIdx.x / R_WARP) * R_WARP * R_ITEMS;
}
#endif

#if R_SEG == R_SEG_KEYS
// What `layout` points to: the n keys.
typedef r_idx r_ahead_layout;

// A thread's keys of a tile (in flight from the round before the one that marks them): its
// warp's 32 * R_ITEMS keys a row of 32 at a time (key j of lane l: the warp's item 32 j + l, so
// that each load is coalesced), and lane 0's key before the warp's first.
struct r_ahead_heads {
    r_idx k[R_ITEMS];
    r_idx before;
};

// Starts the loads of this thread's keys of tile t (from `keys`, the n keys).
__device__ __forceinline__ void r_ahead_load(const r_idx* __restrict__ keys, r_size n, r_size t, r_ahead_heads& out) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size base = r_ahead_warp_first(t);
#pragma unroll
    for (int j = 0; j < R_ITEMS; ++j) {
        const r_size i = base + (r_size)j * R_WARP + lane;
        out.k[j] = i < n ? __ldcs(keys + i) : 0;
    }
    out.before = lane == 0 && base > 0 && base < n ? keys[base - 1] : 0;
}

// The heads of the warp's items (item i starts a segment where i = 0 or key[i] != key[i - 1])
// from its keys, into `words`: R_ITEMS words, word j's bit l for the warp's item 32 j + l (the
// warp's part of its slot's bitmap, s_marks). The whole warp calls it.
__device__ __forceinline__ void r_ahead_mark(const r_ahead_heads& keys, r_size n, r_size t, unsigned int* words) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size base = r_ahead_warp_first(t);
    r_idx last = __shfl_sync(R_FULL_MASK, keys.before, 0);  // the key before row j's first
#pragma unroll
    for (int j = 0; j < R_ITEMS; ++j) {
        const r_size i = base + (r_size)j * R_WARP + lane;
        r_idx prev = __shfl_up_sync(R_FULL_MASK, keys.k[j], 1);
        if (lane == 0) prev = last;
        const unsigned int heads = __ballot_sync(R_FULL_MASK, i < n && (i == 0 || keys.k[j] != prev));
        if (lane == 0) words[j] = heads;
        last = __shfl_sync(R_FULL_MASK, keys.k[j], R_WARP - 1);
    }
    __syncwarp();
}

#elif R_SEG == R_SEG_OFFSETS
// What `layout` points to: scan_marks' bitmap of heads, a bit an item (bit i % 32 of word i / 32).
typedef unsigned int r_ahead_layout;
static_assert(R_ITEMS <= R_WARP, "a lane loads at most one word of a warp's bitmap");

// A lane's word of the bitmap for a tile (in flight from the round before the one that marks
// it): lane j < R_ITEMS holds the warp's items 32 j … 32 j + 31, as s_marks lays them out.
struct r_ahead_heads {
    unsigned int word;
};

// Starts the load of this lane's word of tile t's heads (from `marks`, the bitmap of n items).
__device__ __forceinline__ void r_ahead_load(const unsigned int* __restrict__ marks, r_size n, r_size t,
                                             r_ahead_heads& out) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size w = r_ahead_warp_first(t) / 32 + lane;
    out.word = lane < R_ITEMS && w < (n + 31) / 32 ? __ldcs(marks + w) : 0u;
}

// The warp's words of its slot's bitmap (s_marks) from the words its lanes loaded. The whole
// warp calls it.
__device__ __forceinline__ void r_ahead_mark(const r_ahead_heads& heads, r_size n, r_size t, unsigned int* words) {
    (void)n;
    (void)t;
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    if (lane < R_ITEMS) words[lane] = heads.word;
    __syncwarp();
}
#endif

// The producer warp: tiles from the counter into the stages until they run out (segmented, each
// tile's number announced on `ticket` as soon as it is taken).
__device__ void r_ahead_produce(const r_in* in, r_size n, unsigned long long* counter, unsigned char* stages,
                                r_size* s_tile, unsigned long long* ticket, unsigned long long* full,
                                unsigned long long* empty) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    for (unsigned int k = 0;; ++k) {
        r_stage_free_wait(empty, k);
        r_size t = tiles;  // the end, unless the counter hands out a tile
#if defined(R_AHEAD_MAX_TILES)
        if (k < R_AHEAD_MAX_TILES)  // (tests) past it, the block takes no ticket and ends
#endif
        {
            if (lane == 0) t = atomicAdd(counter, 1ull);
            t = __shfl_sync(R_FULL_MASK, t, 0);
        }
        const bool more = t < tiles;
        if (lane == 0) {
            s_tile[k % R_PIPE] = more ? t : R_NO_TILE;  // before lane 0's arrivals, which release it
            if constexpr (R_AHEAD_HEADS) r_mbar_arrive(&ticket[k % R_PIPE]);
        }
        if (!more) {
            // The end: a stage without bytes whose number says so, on R_AHEAD_LOOKERS rounds in
            // turn (each look-back warp ends on a round of its own; the threads on the first).
            for (unsigned int e = k; e < k + R_AHEAD_LOOKERS; ++e) {
                if (e > k) {
                    r_stage_free_wait(empty, e);
                    if (lane == 0) {
                        s_tile[e % R_PIPE] = R_NO_TILE;
                        if constexpr (R_AHEAD_HEADS) r_mbar_arrive(&ticket[e % R_PIPE]);
                    }
                }
                if (lane == 0) r_mbar_arrive_expect(&full[e % R_PIPE], 0);
                else r_mbar_arrive(&full[e % R_PIPE]);
            }
            return;
        }
        r_produce_tile(in, n, t, k, stages, full);
    }
}

// Look-back warp `looker`: for its rounds of the block's tiles in turn, p(t) into s_prefix and
// `ready` (see THE BLOCK). `rows`: its R_AHEAD_ROWS rows of 32 values, and segmented `row_heads`,
// a word of their heads (bit j: entry j's R_ST_HEAD) a row.
__device__ void r_ahead_look_back(const r_chain& c, const r_size* s_tile, unsigned long long* full,
                                  unsigned long long* ready, M* s_prefix, M (*rows)[R_WARP], unsigned int* row_heads,
                                  unsigned int looker) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    r_size gc = 0;  // the groups folded into inc
    r_seg inc;  // lane 0: I(gc - 1), once gc > 0
    inc.flag = 0;
    inc.v = m_identity();
    for (unsigned int k = looker;; k += R_AHEAD_LOOKERS) {
        // The tile's number has landed. A parity wait tells a phase only from the one before it,
        // and the stage's round k - R_PIPE may be another look-back warp's (R_PIPE not a multiple
        // of R_AHEAD_LOOKERS): this warp first waits for that round's prefix, whose `full` came
        // before it. That wait is exact: `ready`'s phase of round k needs this warp, and round
        // k - 2 R_PIPE's tile was written before this warp's round k - R_AHEAD_LOOKERS could
        // fill its stage (R_AHEAD_LOOKERS <= R_PIPE).
        if (R_AHEAD_LOOKERS > 1 && k >= R_PIPE) r_mbar_wait(&ready[k % R_PIPE], ((k - R_PIPE) / R_PIPE) & 1u);
        r_mbar_wait(&full[k % R_PIPE], (k / R_PIPE) & 1u);
        const r_size t = s_tile[k % R_PIPE];
        if (t == R_NO_TILE) return;
        const r_size g = t / R_WARP;
        const unsigned int i = (unsigned int)(t % R_WARP);
        r_seg w;  // lane 0: w(t), where i > 0
        w.flag = 0;
        w.v = m_identity();
        // Groups gc … g, R_AHEAD_ROWS at a time: the whole ones before g and the part of g
        // before t.
        for (r_size h0 = gc; h0 <= g; h0 += R_AHEAD_ROWS) {
            const unsigned int count = g + 1 - h0 < R_AHEAD_ROWS ? (unsigned int)(g + 1 - h0) : R_AHEAD_ROWS;
            // Row r, lane j: tile 32 (h0 + r) + j's aggregate (tiles before t only). The loads of
            // a batch are issued together, and so are the polls of those not yet published: a
            // wait costs one round trip to L2 however many entries it is for (polled one at a
            // time, the entries just published by other blocks cost a round trip each, and a
            // look-back that falls behind the tiles' pace never catches up).
            for (unsigned int r0 = 0; r0 < count; r0 += R_AHEAD_BATCH) {
                r_entry e[R_AHEAD_BATCH];
                unsigned int wanted = 0;
#pragma unroll
                for (int b = 0; b < R_AHEAD_BATCH; ++b) {
                    const r_size j = (h0 + r0 + b) * R_WARP + lane;
                    if (r0 + b < count && j < t) wanted |= 1u << b;
                }
                unsigned int pause = 32;
                for (unsigned int pending = wanted, first = 1; pending != 0; first = 0) {
                    if (!first) r_ahead_pause(pause);
#pragma unroll
                    for (int b = 0; b < R_AHEAD_BATCH; ++b)
                        if ((pending >> b) & 1u) e[b] = r_word_load(c.words + (h0 + r0 + b) * R_WARP + lane);
#pragma unroll
                    for (int b = 0; b < R_AHEAD_BATCH; ++b) {
                        if (((pending >> b) & 1u) && e[b].state != 0) {
                            rows[r0 + b][lane] = e[b].v;
                            pending &= ~(1u << b);
                        }
                    }
                }
                if constexpr (R_AHEAD_HEADS) {
#pragma unroll
                    for (int b = 0; b < R_AHEAD_BATCH; ++b) {
                        const bool head = ((wanted >> b) & 1u) && (e[b].state & R_ST_HEAD);
                        const unsigned int heads = __ballot_sync(R_FULL_MASK, head);
                        if (lane == 0 && r0 + b < count) row_heads[r0 + b] = heads;
                    }
                }
            }
            __syncwarp();
            // Lane r folds row r: a whole group's A, or (group g) w(t) from its i values.
            r_seg a;
            a.flag = 0;
            a.v = m_identity();
            const unsigned int len = h0 + lane < g ? R_WARP : i;
            if (lane < count && len > 0) {
                const unsigned int heads = R_AHEAD_HEADS ? row_heads[lane] : 0u;
                a.flag = heads & 1u;
                a.v = rows[lane][0];
                for (unsigned int j = 1; j < len; ++j) {
                    r_seg x;
                    x.flag = (heads >> j) & 1u;
                    x.v = rows[lane][j];
                    a = r_scan_op(a, x);
                }
            }
            // Lane 0 chains the whole groups: I(h) = I(h - 1) ⊕ A(h), I(0) = A(0).
            for (unsigned int r = 0; r < count; ++r) {
                const r_seg ar = r_seg_shfl(a, (int)r);
                if (h0 + r < g) inc = h0 + r == 0 ? ar : r_scan_op(inc, ar);
                else w = ar;  // group g: w(t) (the identity, unused, where i = 0)
            }
            __syncwarp();  // the rows are read before the next batch writes them
        }
        gc = g;
        if (lane == 0) {
            // p(t) = I(g - 1) ⊕ w(t); I(g - 1) where i = 0; group 0: w(t). (t = 0: unused.) Its
            // head flag is never read: a pair's value does not depend on the flag before it.
            s_prefix[k % R_PIPE] = (g == 0 ? w : i > 0 ? r_scan_op(inc, w) : inc).v;
            r_mbar_arrive(&ready[k % R_PIPE]);
        }
    }
}

// The scan of the n items at `in` into `out` (which may be `in`): a persistent grid of blocks
// of R_AHEAD_THREADS threads (THE BLOCK). `layout`: by key, the n keys; by offsets, scan_marks'
// bitmap of heads (r_ahead_layout). `states`, `aggregates`,
// `inclusives` as scan_tiles' (only the counter and the tiles' entries are used).
extern "C" __global__ void __launch_bounds__(R_AHEAD_THREADS, 1)
scan_ahead(const r_in* in, r_size n, M* out, r_size exclusive, const void* __restrict__ layout, r_size segments,
           unsigned int* states, M* aggregates, M* inclusives) {
    (void)segments;
    extern __shared__ uint4 s_dynamic[];
    __shared__ unsigned long long s_full[R_PIPE], s_empty[R_PIPE], s_ready[R_PIPE], s_ticket[R_PIPE];
    __shared__ r_size s_tile[R_PIPE];
    __shared__ M s_prefix[R_PIPE];
    __shared__ r_seg s_warps[R_PIPE][R_WARPS];
    __shared__ M s_rows[R_AHEAD_LOOKERS][R_AHEAD_ROWS][R_WARP];
    // Segmented: the look-back's rows' heads, and each stage's warps' lanes-before heads (bit l:
    // lane l's).
    __shared__ unsigned int s_row_heads[R_AHEAD_LOOKERS][R_AHEAD_ROWS];
    __shared__ unsigned int s_lane_heads[R_PIPE][R_WARPS];
    unsigned char* stages = reinterpret_cast<unsigned char*>(s_dynamic);
    // [R_AHEAD_HELD][R_BLOCK] each, after the stages
    M* s_lanes = reinterpret_cast<M*>(stages + R_PIPE * R_PIPE_STAGE_BYTES);
    unsigned int* s_marks = reinterpret_cast<unsigned int*>(s_lanes + R_AHEAD_HELD * R_BLOCK);  // segmented
    (void)s_marks;
    const r_chain chain = {states + 4, reinterpret_cast<r_word*>(states + 4), aggregates, inclusives};
    if (threadIdx.x == 0) {
        for (int k = 0; k < R_PIPE; ++k) {
            r_mbar_init(&s_full[k], R_WARP);
            r_mbar_init(&s_empty[k], R_BLOCK);
            r_mbar_init(&s_ready[k], 1);
            r_mbar_init(&s_ticket[k], 1);
        }
        r_mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x >= R_BLOCK + R_WARP) {
        const unsigned int looker = (threadIdx.x - R_BLOCK - R_WARP) / R_WARP;
        r_ahead_look_back(chain, s_tile, s_full, s_ready, s_prefix, s_rows[looker], s_row_heads[looker], looker);
        return;
    }
    if (threadIdx.x >= R_BLOCK) {
        r_ahead_produce(in, n, reinterpret_cast<unsigned long long*>(states), stages, s_tile, s_ticket, s_full,
                        s_empty);
        return;
    }

    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    const bool out_staged = R_VECS > 0 && sizeof(M) == sizeof(r_in) && ((unsigned long long)out & 15u) == 0;
    unsigned int end = ~0u;  // the round whose stage said R_NO_TILE
#if R_AHEAD_HEADS
    // This warp's part of slot h's bitmap of heads.
    const auto warp_marks = [&](unsigned int h) { return s_marks + h * (R_TILE / 32) + warp * R_ITEMS; };
    // The keys or bitmap words of the round's tile, loaded in the round before (round 0's here).
    const r_ahead_layout* heads_at = static_cast<const r_ahead_layout*>(layout);
    r_ahead_heads loaded;
    r_mbar_wait(&s_ticket[0], 0);
    if (s_tile[0] != R_NO_TILE) r_ahead_load(heads_at, n, s_tile[0], loaded);
#else
    (void)layout;
#endif
    for (unsigned int k = 0;; ++k) {
        // Round k: reduce tile k.
        if (k < end) {
            const unsigned int s = k % R_PIPE;
            r_mbar_wait(&s_full[s], (k / R_PIPE) & 1u);
            const r_size t = s_tile[s];
            if (t == R_NO_TILE) {
                end = k;
            } else {
                const r_size t0 = t * R_TILE, first = t0 + (r_size)threadIdx.x * R_ITEMS;
                const int count = first >= n ? 0 : (int)(n - first < R_ITEMS ? n - first : R_ITEMS);
                unsigned int heads = 0;  // bit j: a segment starts at item j
#if R_AHEAD_HEADS
                // The slot's words were last read in the write round just before this one
                // (tile k - R_AHEAD_HELD's): every lane of the warp has read them.
                __syncwarp();
                r_ahead_mark(loaded, n, t, warp_marks(k % R_AHEAD_HELD));
                heads = r_mark_bits(warp_marks(k % R_AHEAD_HELD), lane * R_ITEMS);
                // The next tile's keys or words, in flight through this round (its number is taken
                // before its stage fills: the producer runs R_PIPE - R_LEAD - 1 tiles ahead).
                const unsigned int kn = k + 1;
                r_mbar_wait(&s_ticket[kn % R_PIPE], (kn / R_PIPE) & 1u);
                const r_size tn = s_tile[kn % R_PIPE];
                if (tn != R_NO_TILE) r_ahead_load(heads_at, n, tn, loaded);
#endif
                r_seg agg;
                agg.flag = heads & 1u;
                agg.v = m_identity();
                r_ahead_items<true>(r_stage_items_at(stages, k), t0, count, [&](int j, const M& x) {
                    r_seg item;
                    item.flag = (heads >> j) & 1u;
                    item.v = x;
                    if (j == 0) agg.v = x;
                    else agg = r_scan_op(agg, item);
                });
                const r_seg inc = r_scan_warp(agg);
                const r_seg lanes_before = r_seg_shfl_up(inc, 1);
                s_lanes[(k % R_AHEAD_HELD) * R_BLOCK + threadIdx.x] = lanes_before.v;
#if R_AHEAD_HEADS
                const unsigned int lane_heads = __ballot_sync(R_FULL_MASK, lanes_before.flag);
                if (lane == 0) s_lane_heads[s][warp] = lane_heads;
#endif
                if (lane == R_WARP - 1) s_warps[s][warp] = inc;
                r_sync();
                if (warp == 0) {
                    r_seg wv = s_warps[s][lane < R_WARPS ? lane : 0];
                    __syncwarp();  // every lane has read before any writes
                    wv = r_scan_warp(wv);  // lanes past R_WARPS hold garbage no lane before them reads
                    if (lane < R_WARPS) s_warps[s][lane] = wv;
                    const r_seg tile = r_seg_shfl(wv, R_WARPS - 1);
                    if (lane == 0) r_entry_publish(chain, t, R_ST_AGG | (tile.flag ? R_ST_HEAD : 0u), tile.v, false);
                }
                r_sync();  // the warps' inclusive values are in place for the round that writes
            }
        }
        // Round k: write tile k - R_LEAD.
        if (k >= R_LEAD && k - R_LEAD < end) {
            const unsigned int kw = k - R_LEAD, s = kw % R_PIPE;
            const r_size t = s_tile[s];
            r_mbar_wait(&s_ready[s], (kw / R_PIPE) & 1u);
            const r_size t0 = t * R_TILE, first = t0 + (r_size)threadIdx.x * R_ITEMS;
            const int count = first >= n ? 0 : (int)(n - first < R_ITEMS ? n - first : R_ITEMS);
            // The thread's prefix: p(t) ⊕ the warps before ⊕ the lanes before (none for the very
            // first). Segmented, each of those pairs carries whether a segment starts in it.
            bool has = t > 0;
            r_seg pre;
            pre.flag = 0;
            pre.v = s_prefix[s];
            if (warp > 0) {
                const r_seg wb = s_warps[s][warp - 1];
                pre = has ? r_scan_op(pre, wb) : wb;
                has = true;
            }
            if (lane > 0) {
                r_seg lb;
                lb.flag = R_AHEAD_HEADS ? (s_lane_heads[s][warp] >> lane) & 1u : 0u;
                lb.v = s_lanes[(kw % R_AHEAD_HELD) * R_BLOCK + threadIdx.x];
                pre = has ? r_scan_op(pre, lb) : lb;
                has = true;
            }
#if R_AHEAD_HEADS
            const unsigned int heads = r_mark_bits(warp_marks(kw % R_AHEAD_HELD), lane * R_ITEMS);
#else
            const unsigned int heads = 0;
#endif
            M acc = has ? pre.v : m_identity();
            // Item j's output: (head ? identity : prefix) ⊕ x, or (exclusive) the prefix before it.
            auto step = [&](int j, const M& x) {
                const M before = (heads >> j) & 1u ? m_identity() : acc;
                acc = m_combine(before, x);
                return exclusive ? before : acc;
            };
            unsigned char* stage = r_stage_items_at(stages, kw);
            const bool warp_whole = t0 + (r_size)(warp + 1) * R_WARP * R_ITEMS <= n;
#if R_VECS > 0
            if (out_staged && warp_whole) {
                // Into the run's place in the stage, then out coalesced, a vector a lane at a time.
                r_ahead_run u;
                uint4* run = reinterpret_cast<uint4*>(stage) + threadIdx.x * R_VECS;
                r_ahead_read(run, u.v);
#pragma unroll
                for (int j = 0; j < R_ITEMS; ++j) u.m[j] = step(j, m_lift(u.x[j], first + j));
                r_ahead_store(run, u.v);
                __syncwarp();
                const uint4* src = reinterpret_cast<const uint4*>(stage) + warp * R_WARP * R_VECS;
                uint4* dst = reinterpret_cast<uint4*>(out + t0) + warp * R_WARP * R_VECS;
#pragma unroll
                for (int v = 0; v < R_VECS; ++v)
                    __stcs(dst + v * R_WARP + lane, src[r_ahead_swz_at(v * R_WARP + lane)]);
            } else
#endif
            {
                (void)out_staged;
                (void)warp_whole;
                r_ahead_items<false>(stage, t0, count, [&](int j, const M& x) { out[first + j] = step(j, x); });
            }
            r_stage_release(s_empty, kw);
        }
        if (end != ~0u && k + 1 >= end + R_LEAD) break;
    }
}

#if R_SEG == R_SEG_OFFSETS
// THE MARKS (by offsets, a launch before scan_ahead): for each of the segments + 1 offsets that
// is some i < n, bit i % 32 of marks[i / 32] (the bitmap zeroed before; an offset of n or more
// marks nothing, so a bad trusted layout writes inside the bitmap). Each thread takes
// R_MARKS_RUN consecutive offsets (the host's SCAN_MARKS_RUN) and sets the bits that fall in one
// word with one atomicOr: a run of short segments costs an atomic a word, not an offset.
static_assert(R_MARKS_RUN >= 1, "a thread takes at least one offset");
extern "C" __global__ void __launch_bounds__(R_BLOCK)
scan_marks(const r_idx* __restrict__ offsets, r_size segments, r_size n, unsigned int* marks) {
    const r_size e0 = ((r_size)blockIdx.x * R_BLOCK + threadIdx.x) * R_MARKS_RUN;
    r_size at[R_MARKS_RUN];
#pragma unroll
    for (int k = 0; k < R_MARKS_RUN; ++k) at[k] = e0 + k <= segments ? (r_size)offsets[e0 + k] : n;
    r_size word = 0;
    unsigned int bits = 0;
#pragma unroll
    for (int k = 0; k < R_MARKS_RUN; ++k) {
        if (at[k] >= n) continue;
        if (bits != 0 && at[k] / 32 != word) {
            atomicOr(&marks[word], bits);
            bits = 0;
        }
        word = at[k] / 32;
        bits |= 1u << (at[k] % 32);
    }
    if (bits != 0) atomicOr(&marks[word], bits);
}
#endif

#endif  // R_PIPE, sm_90
