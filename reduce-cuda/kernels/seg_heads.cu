// SegHeads: the CSR form by head bits (ours), three launches: marks, fold, join.
//
// ORDER INVARIANT. Tile T is the R_TILE = R_BLOCK * R_ITEMS consecutive items from T * R_TILE,
// folded by block T; thread t owns the R_ITEMS consecutive items from t * R_ITEMS of it. A
// thread folds its items left to right, restarting at every head (an item where a non-empty
// segment starts); the part before its first head and the run open at its end are joined with
// the other threads' by an inclusive segmented scan over threads in order (r_block_seg_exclusive:
// every combine is (earlier, later)). A tile's record holds the part of the segment open at
// its start that it folds (before its first head) and the value open at its end (from its last
// head, or the whole tile without a head); the join scans the records in tile order (a block
// per group of R_BLOCK tiles, a thread a tile, then the groups' records in order by the last
// block, r_join_records): so a segment that spans tiles is still folded left to right.
//
// THE MARKS (reduce_seg_heads_marks, a thread per segment): head bits (bit i % 32 of word
// i / 32 where item i starts a non-empty segment: runs of lanes that share a word OR their bits
// together and one atomicOr sets them), each tile's first segment (first_id[T]: the first
// segment whose offset is at or after the tile's first item, written by that segment's thread
// where its offset falls in the tile), and the empty segments: written with the identity here,
// and their tile flagged (flags[T]). These words are all zero between calls (r_heads_scratch):
// the fold clears its tile's bits, flag and first segment behind it, the join `last`, so that
// no call fills them first.
//
// EXACTLY ONCE. An empty segment is written by the marks. A non-empty segment that ends in the
// tile where it starts, before the tile's last head, is written by that tile (the fold stages
// it in shared memory by its head's rank in the tile and copies the tile's segments out
// coalesced: ids first_id[T] + rank in a tile without empty segments, which are consecutive
// there; a flagged tile reads its offsets and finds each segment's rank from the bits). The
// segment of a tile's last head, open at the tile's end, is written by the join: at the next
// tile with a head, whose entry segment it is, or after the last tile (the marks note which
// segment ends at item n - 1). A tile's entry segment is first_id[T] - 1, the segment
// before the first that starts at or after the tile's first item: the non-empty segment that
// holds the item before the tile (the empty segments that start where a segment does come
// before it in id order, so none lies between). It
// is open at the tile's start, or, where the tile's first item is a head, ended just before
// it; then the tile's part of it is the identity and the join closes it all the same.
//
// Items are r_in values lifted into M by m_lift (the identity unless the monoid lifts another
// type). Offsets are u32 or u64 (R_IDX64), narrowed as they are read (r_narrow: fewer than
// 2^32 - 1 items and segments). THE LAYOUT CHECK (check != 0) rides on the marks' reads: every
// pair of entries, offsets[0] = 0 and offsets[segments] = n; a bad layout sets *status to 0,
// and the caller runs the exact check for the error. A bad layout (trusted) writes only ids
// below `segments`, bits and flags of items below n and slots inside the tile.

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_BLOCK * R_ITEMS)
// Head-bit words per tile (R_BLOCK is a multiple of 32, so tiles start on whole words).
#define R_TILE_WORDS (R_BLOCK * R_ITEMS / 32)
static_assert(R_ITEMS <= 32, "a thread's head bits lie in two words at most");
static_assert(R_BLOCK % R_WARP == 0, "whole warps");

// The scratch words that are zero between calls (one allocation, `zeroed`), for n items:
// bits (R_TILE_WORDS a tile), flags and first_id (one a tile), and `last`: 1 + the segment
// that ends at item n - 1.
struct r_heads_scratch {
    unsigned int* bits;
    unsigned int* flags;
    unsigned int* first_id;
    unsigned int* last;
};

__device__ __forceinline__ r_heads_scratch r_heads_scratch_at(unsigned int* zeroed, r_size n) {
    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    r_heads_scratch z;
    z.bits = zeroed;
    z.flags = z.bits + tiles * R_TILE_WORDS;
    z.first_id = z.flags + tiles;
    z.last = z.first_id + tiles;
    return z;
}

// A tile's record in tile_meta: its entry segment, or one of these.
#define R_HEADS_NONE R_NO_SEG64             // no head in the tile
#define R_HEADS_NO_ENTRY (R_NO_SEG64 - 1)  // a head at item 0: no segment open before it

// ---------------------------------------------------------------- the marks

// Bits, flags, first segments and `last` from the offsets; the empty segments' values; the
// layout check when `check`. A warp takes 32 consecutive segments at a time; launched with a
// thread per segment (a grid-stride loop of a few blocks an SM waited on each round's loads in
// turn: 0.7 TB/s at a segment per item on an H200).
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_seg_heads_marks(const r_idx* __restrict__ offsets, r_size segments, r_size n, M* __restrict__ out,
                       unsigned int* __restrict__ zeroed, unsigned long long* __restrict__ status, r_size check) {
    const r_heads_scratch z = r_heads_scratch_at(zeroed, n);
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const r_size stride = (r_size)gridDim.x * R_BLOCK;
    bool bad = false;
    // Warp-uniform loop: every lane takes part in the shuffles.
    for (r_size base = (r_size)blockIdx.x * R_BLOCK + (threadIdx.x - lane); base < segments; base += stride) {
        const r_size s = base + lane;
        const bool here = s < segments;
        // Entry s (segments + 1 of them), its successor from the next lane, its predecessor from
        // the one before.
        const unsigned int o = s <= segments ? r_index(offsets + s) : 0xffffffffu;
        unsigned int o1 = __shfl_down_sync(R_FULL_MASK, o, 1);
        if (lane == R_WARP - 1 && here) o1 = r_index(offsets + s + 1);
        unsigned int prev = __shfl_up_sync(R_FULL_MASK, o, 1);
        if (lane == 0 && s > 0 && here) prev = r_index(offsets + s - 1);
        if (here) {
            if (check) {
                bad |= o > o1;
                if (s == 0) bad |= o != 0;  // r_narrow keeps 0 and only 0 at 0
                if (s + 1 == segments) bad |= (r_size)__ldg(offsets + segments) != n;
            }
            if (o == o1) out[s] = m_identity();
            if (o < n) {
                const r_size tile = o / R_TILE;
                if (o == o1) z.flags[tile] = 1u;
                if (s == 0 || prev < tile * R_TILE) z.first_id[tile] = (unsigned int)s;
                if (o < o1 && o1 == n) *z.last = (unsigned int)s + 1;
            }
        }
        // Heads: lanes of one word OR their bits (offsets ascend, so they are consecutive
        // lanes; after the step at distance d a lane holds the bits of its word's lanes among
        // the next 2d), and the first lane of each run sets them. A bad layout's scattered
        // lanes of one word make more atomics, never fewer bits.
        const bool head = here && o < o1 && o < n;
        const unsigned int word = head ? o >> 5 : 0xffffffffu;
        unsigned int v = head ? 1u << (o & 31) : 0u;
#pragma unroll
        for (unsigned int d = 1; d < R_WARP; d <<= 1) {
            const unsigned int y = __shfl_down_sync(R_FULL_MASK, v, d);
            const unsigned int wy = __shfl_down_sync(R_FULL_MASK, word, d);
            if (lane + d < R_WARP && wy == word) v |= y;
        }
        const unsigned int word_before = __shfl_up_sync(R_FULL_MASK, word, 1);
        if (head && (lane == 0 || word_before != word)) atomicOr(z.bits + word, v);
    }
    if (check && __ballot_sync(R_FULL_MASK, bad) != 0 && lane == 0) atomicMin(status, 0ull);
}

// ---------------------------------------------------------------- the fold

// Item a's R_ITEMS head bits (a run of a thread: never past its tile's last word). Through the
// read-only path although the fold clears the words later: each word is cleared only after its
// readers have read it (a barrier between), and read by no other block, so no copy of a line
// in that cache holds a word that changed since the call began but the block's own, which it
// has read. A plain load here, behind the items' read-only loads, made the fold 3x slower on
// an H200 (every warp waited at the first barrier for it).
__device__ __forceinline__ unsigned int r_heads_of(const unsigned int* bits, r_size a) {
    const unsigned int lo = __ldg(bits + a / 32);
    const unsigned int hi = a % 32 + R_ITEMS > 32 ? __ldg(bits + a / 32 + 1) : 0u;
    const unsigned int w = __funnelshift_r(lo, hi, (unsigned int)(a % 32));
    return R_ITEMS == 32 ? w : w & ((1u << (R_ITEMS % 32)) - 1u);
}

// Block T folds tile T: complete segments into out, its record into tile_vals (2 per tile:
// the part of its entry segment before its first head (the identity without a head), the
// value open at its end) and tile_meta (its entry segment, or R_HEADS_NONE or
// R_HEADS_NO_ENTRY); it clears the tile's words of `zeroed`. Dynamic shared memory: R_TILE M
// (the tile's segments by their heads' ranks). No fence, ticket or other wait on memory after
// the tile's loads: a thread that waits holds every warp of its block at the next barrier.
// Its loads in flight are the resident blocks' tiles: with R_MIN_BLOCKS > 0 (the host's
// register cap, catalogue/caps.rs) at least that many blocks per SM.
#if R_MIN_BLOCKS > 0
#define R_HEADS_FOLD_BOUNDS __launch_bounds__(R_BLOCK, R_MIN_BLOCKS)
#else
#define R_HEADS_FOLD_BOUNDS __launch_bounds__(R_BLOCK)
#endif
extern "C" __global__ void R_HEADS_FOLD_BOUNDS
reduce_seg_heads_fold(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ offsets, r_size segments,
                      M* __restrict__ out, unsigned int* __restrict__ zeroed, M* __restrict__ tile_vals,
                      r_size* __restrict__ tile_meta) {
    extern __shared__ uint4 s_dynamic[];
    M* s_out = reinterpret_cast<M*>(s_dynamic);
    __shared__ unsigned int s_warp_heads[R_WARPS];
    __shared__ unsigned int s_rank[R_BLOCK];  // each thread's first head's rank (flagged tiles)
    __shared__ unsigned int s_hb[R_BLOCK];    // each thread's head bits (flagged tiles)
    __shared__ r_seg s_agg[R_WARPS + 1];
    __shared__ unsigned int s_flag, s_first;
    __shared__ unsigned int s_jump;  // flagged tiles: where a round's last segment is empty
    __shared__ r_size s_next;        // flagged tiles: the next round's first segment
    const r_heads_scratch z = r_heads_scratch_at(zeroed, n);
    const r_size tile = blockIdx.x, t0 = tile * R_TILE;
    const unsigned int lane = threadIdx.x & (R_WARP - 1), warp = threadIdx.x / R_WARP;

    // The items, the thread's head bits, the tile's flag and first segment at once.
    const r_size a = t0 + (r_size)threadIdx.x * R_ITEMS;
    M it[R_ITEMS];
    if (a + R_ITEMS <= n) {
        // Streaming loads (lanes.cuh): 7% faster than read-only ones here on an H200.
        r_lane_items(in, a, n, [&](int i, const r_in& x) { it[i] = m_lift(x, a + i); });
    } else {
#pragma unroll
        for (int i = 0; i < R_ITEMS; ++i) it[i] = a + i < n ? m_lift(in[a + i], a + i) : m_identity();
    }
    const unsigned int hb = r_heads_of(z.bits, a);
    if (threadIdx.x == R_BLOCK - 1) {
        s_flag = __ldg(z.flags + tile);
        s_first = __ldg(z.first_id + tile);
    }

    // This thread's heads, and their rank in the tile: g heads before its first.
    const unsigned int h = __popc(hb);
    unsigned int inc = h;
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const unsigned int y = __shfl_up_sync(R_FULL_MASK, inc, o);
        if (lane >= o) inc += y;
    }
    if (lane == R_WARP - 1) s_warp_heads[warp] = inc;
    __syncthreads();
    // Every reader of the tile's words has read them: clear them (and the flag and first).
    for (unsigned int k = threadIdx.x; k < R_TILE_WORDS; k += R_BLOCK) z.bits[tile * R_TILE_WORDS + k] = 0u;
    if (threadIdx.x == R_BLOCK - 1) {
        z.flags[tile] = 0u;
        z.first_id[tile] = 0u;
    }
    unsigned int g = inc - h, heads = 0;
#pragma unroll
    for (unsigned int k = 0; k < R_WARPS; ++k) {
        g += k < warp ? s_warp_heads[k] : 0u;
        heads += s_warp_heads[k];
    }
    s_rank[threadIdx.x] = g;
    s_hb[threadIdx.x] = hb;

    // The thread's fold: a segment that starts and ends in the run goes to its head's slot;
    // `before` is the part ahead of the first head, `run` the value open at the end.
    M run = m_identity(), before = m_identity();
    unsigned int j = 0;
#pragma unroll
    for (int i = 0; i < R_ITEMS; ++i) {
        if ((hb >> i) & 1u) {
            if (j == 0) before = run;
            else s_out[g + j - 1] = run;
            run = it[i];
            ++j;
        } else {
            run = m_combine(run, it[i]);
        }
    }
    if (h == 0) before = run;

    // Join the threads' runs: the segment open at this thread's start closes at its first head.
    r_seg element;
    element.flag = h > 0 ? 1u : 0u;
    element.v = run;
    r_seg total;
    const r_seg ahead = r_block_seg_exclusive(element, [] { return r_seg_identity(); }, s_agg, &total);
    if (h > 0) {
        const M closed = m_combine(ahead.v, before);
        if (g > 0) s_out[g - 1] = closed;
        else tile_vals[2 * tile] = closed;  // the tile's part of its entry segment
    }
    if (threadIdx.x == 0 && heads == 0) tile_vals[2 * tile] = m_identity();
    __syncthreads();

    // The segments of heads 0 .. heads - 2 are complete: out, coalesced.
    const unsigned int first = s_first;
    if (!s_flag) {
        for (unsigned int k = threadIdx.x; k + 1 < heads; k += R_BLOCK) {
            const r_size id = (r_size)first + k;
            if (id < segments) out[id] = s_out[k];
        }
    } else {
        // Empty segments start in the tile: ids are not consecutive by rank. Read the offsets of
        // the segments from the tile's first on, R_BLOCK a round (each one's successor from the
        // next lane: one load a round), while they start in the tile, and give each non-empty
        // one the value of its head's rank (the empty ones the marks wrote). A round whose last
        // segment is an empty one inside the tile, in a run of empty segments that covers the
        // next round up to its last segment (the probe, the offset R_BLOCK past the round's
        // last, loaded with the round, equals it), jumps past that run (a warp's search for the
        // last segment that starts there: the non-empty one, if any), so that a run of many
        // empty segments costs one search, not a round per R_BLOCK of them, and short runs
        // none. More segments a thread a round would cover dense runs of short and empty
        // segments in fewer rounds, but spill under the fold's register cap
        // (docs/decisions/0083-seg-heads-flagged-rounds.md).
        const r_size end = t0 + R_TILE < n ? t0 + R_TILE : n;
        for (r_size base = first;;) {
            const r_size s = base + threadIdx.x;
            const unsigned int o = s < segments ? r_index(offsets + s) : 0xffffffffu;
            const r_size probe_at = base + 2 * R_BLOCK - 1;
            const unsigned int probe =
                threadIdx.x == R_BLOCK - 1 && probe_at <= segments ? r_index(offsets + probe_at) : 0xffffffffu;
            // The successor's offset: the next lane's, the warp's last lane's own. Where s + 1 is
            // `segments` the next lane holds 0xffffffff, not n (no entry read, so that s =
            // segments is never inside): o1 > o all the same, and that segment, the array's last
            // head's, is the join's.
            const unsigned int after = lane == R_WARP - 1 && s < segments ? r_index(offsets + s + 1) : 0u;
            const unsigned int next_o = __shfl_down_sync(R_FULL_MASK, o, 1);
            const unsigned int o1 = lane == R_WARP - 1 ? after : next_o;
            const bool inside = o >= t0 && o < end;
            if (inside && o1 > o) {
                const unsigned int q = (unsigned int)(o - t0), owner = q / R_ITEMS;
                const unsigned int below = s_hb[owner] & ((1u << (q % R_ITEMS)) - 1u);
                const unsigned int rank = s_rank[owner] + __popc(below);
                if (rank + 1 < heads) out[s] = s_out[rank];
            }
            if (threadIdx.x == R_BLOCK - 1) s_jump = inside && o1 == o && probe == o ? o : 0xffffffffu;
            if (!__syncthreads_or(inside)) break;
            r_size next = base + R_BLOCK;
            const unsigned int at = s_jump;  // uniform
            if (at != 0xffffffffu) {
                if (warp == 0) {
                    const r_size last = r_warp_find_segment(offsets, segments, at);
                    if (lane == 0) s_next = last > next ? last : next;  // always forward
                }
                __syncthreads();
                next = s_next;
            }
            __syncthreads();  // s_jump and s_next are rewritten next round
            base = next;
        }
    }

    // The tile's record.
    if (threadIdx.x == 0) {
        tile_vals[2 * tile + 1] = total.v;
        tile_meta[tile] = heads == 0 ? R_HEADS_NONE : tile > 0 && first > 0 ? (r_size)first - 1 : R_HEADS_NO_ENTRY;
    }
}

// ---------------------------------------------------------------- the join

// Block G joins tiles [G * R_BLOCK, + R_BLOCK) in order, a thread each: a tile with a head
// closes its entry segment with the tails since the last tile with a head and its own part
// before its first head; a segment closed inside the group is written here. The group's record
// (r_join_records' format: the part of its entry segment, the value open at its end; entry and
// exit segments, 1 when no tile of it has a head) goes to rec_vals / rec_meta. The last block to
// finish joins the groups: the segment open after the last tile is the one that ends at item
// n - 1 (*last, which it clears). It hands the layout check's *status to *status_out (when not
// null) and leaves *ticket = 0 and *status = R_NO_INDEX for the next call.
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_seg_heads_join(const M* __restrict__ tile_vals, const r_size* __restrict__ tile_meta, r_size n,
                      r_size segments, M* __restrict__ out, unsigned int* __restrict__ zeroed, M* __restrict__ rec_vals,
                      r_size* __restrict__ rec_meta, unsigned int* __restrict__ ticket,
                      unsigned long long* __restrict__ status, unsigned long long* __restrict__ status_out) {
    __shared__ r_seg s_agg[R_WARPS + 1];
    __shared__ bool s_entered;  // the group has a tile with a head
    const r_heads_scratch z = r_heads_scratch_at(zeroed, n);
    const r_size tiles = (n + R_TILE - 1) / R_TILE, group = blockIdx.x, k = group * R_BLOCK + threadIdx.x;
    if (threadIdx.x == 0) s_entered = false;
    const r_size entry = k < tiles ? tile_meta[k] : R_HEADS_NONE;
    r_seg element;
    element.flag = entry != R_HEADS_NONE ? 1u : 0u;
    element.v = k < tiles ? tile_vals[2 * k + 1] : m_identity();
    r_seg total;
    const r_seg ahead = r_block_seg_exclusive(element, [] { return r_seg_identity(); }, s_agg, &total);
    if (element.flag) {
        const M closed = m_combine(ahead.v, tile_vals[2 * k]);
        if (ahead.flag) {
            if (entry < segments) out[entry] = closed;
        } else {
            // The group's first tile with a head: its entry segment crosses the group's start.
            rec_vals[2 * group] = closed;
            rec_meta[3 * group] = entry < segments ? entry : R_NO_SEG64;
            s_entered = true;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        rec_vals[2 * group + 1] = total.v;
        rec_meta[3 * group + 2] = total.flag ? 0u : 1u;
        if (!s_entered) {
            rec_vals[2 * group] = m_identity();
            rec_meta[3 * group] = R_NO_SEG64;
        }
        rec_meta[3 * group + 1] = R_NO_SEG64;  // r_join_records reads the last group's only
    }
    if (!r_last_block(ticket)) return;
    if (threadIdx.x == 0) {
        const unsigned int last = *z.last;
        *z.last = 0u;
        rec_meta[3 * (gridDim.x - 1) + 1] = last > 0 ? (r_size)last - 1 : R_NO_SEG64;
        if (status_out != nullptr) *status_out = __ldcg(status);
    }
    __syncthreads();
    r_join_records(rec_vals, rec_meta, gridDim.x, segments, out, s_agg);
    if (threadIdx.x == 0) {
        *ticket = 0;
        *status = R_NO_INDEX;
    }
}
