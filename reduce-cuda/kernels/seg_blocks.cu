// SegBlocks: the CSR form a block per segment, as CUB's DeviceSegmentedReduce, with every
// block's work capped at a chunk of items (ours), in one launch.
//
// ORDER INVARIANT. The items are cut at multiples of R_CHUNK into chunks; a segment's pieces are
// its parts in the chunks it meets, in chunk order. Unit k < chunks (k > 0) folds the piece of
// the segment that holds item k * R_CHUNK strictly inside it (found by a warp's search of the
// offsets), from that item to the segment's end or the chunk's; unit chunks + k (k + 1 <
// chunks) the first piece of the segment that holds item (k + 1) * R_CHUNK strictly inside it
// and starts in chunk k, from its start to that item; unit 2 * chunks + s folds segment s where
// it lies in one chunk. So every piece of a segment that crosses a chunk boundary is a chunk's
// unit, and the grid takes those first: no long piece waits behind the short segments' units,
// whose order is the layout's. A piece is folded
// in whole lane runs of R_ITEMS items at global positions (multiples of R_ITEMS; a run the
// piece cuts is read item by item, only its items): warp w takes the w-th of R_WARPS
// contiguous shares of the runs, a warp tile of 32 runs at a time, lane i the i-th run left to
// right; the lanes combine by r_warp_reduce (shuffles at increasing offsets), a warp's value is
// (its earlier tiles) ⊕ (this tile), the block combines its warps in order
// (r_block_combine_warps). A segment of one piece is written by its unit. A segment of several
// pieces k0 .. k1 is joined, first piece ⊕ the others in chunk order (each thread a contiguous
// run of them, then warps, then the block), by the unit that brings its last piece: its first
// piece waits in first_part[k0], the others in cross_part[k], and counts[k0] counts them.
// Every m_combine is (earlier items, later items): exact for any associative monoid.
//
// EXACTLY ONCE. Every segment is written by one unit: an empty one (the identity) and a
// one-piece one by its own unit, a longer one by the unit whose atomicAdd on counts[k0] sees
// the others' pieces arrived. counts lies in words that are zero between calls; the host
// queues a fill of zeros behind the launch, as a bad layout's pieces may never all arrive.
//
// LAYOUT. Offsets are u32 or u64 (R_IDX64), narrowed as they are read (r_narrow: fewer than
// 2^32 - 1 items and segments). A bad layout gives unspecified values, and reads and writes
// only items below n, ids below `segments` and chunks below `chunks`. With `check` (a validated
// call) unit 2 * chunks + s checks the entries it reads, offsets[s] <= offsets[s + 1],
// offsets[0] = 0 and offsets[segments] = n (narrowed: a chain of them that holds has every
// entry <= n, so none was past the u32 range), and a broken rule sets *status to 0 (the host
// queues seg_hand_status behind the launch, and on a bad layout the exact check for the first
// error). No block counts the others' reports in: a ticket a block, for a last block to hand
// the status out, took up to 30% of the speed where segments are short. A unit about to fold
// more than an eighth of a chunk first reads *status and folds one item instead once a bad
// entry was seen (r_blocks_fold_end): a bad layout's overlapping segments then cost at most an
// eighth of a chunk per segment past the blocks already folding (the host runs the exact check
// first where segments are short).
//
// Items are r_in values lifted into M by m_lift (i, the item's global index). Parameters:
// R_BLOCK threads (a multiple of 32); R_MIN_BLOCKS resident blocks per SM the registers are
// budgeted for (0: ptxas' choice, which for small values took fewer registers and held fewer of
// a lane's loads in flight: catalogue/tuning.rs, seg_blocks_min_blocks); R_ITEMS items a lane's
// run, R_VECS and R_ITEM_SHIFT as kernels/lanes.cuh says; R_CHUNK_RUNS runs a chunk; R_IDX64.

#define R_WARPS (R_BLOCK / R_WARP)
#define R_CHUNK ((r_size)R_CHUNK_RUNS * R_ITEMS)
#if R_MIN_BLOCKS > 0
#define R_BLOCKS_BOUNDS __launch_bounds__(R_BLOCK, R_MIN_BLOCKS)
#else
#define R_BLOCKS_BOUNDS __launch_bounds__(R_BLOCK)
#endif
static_assert(R_BLOCK % R_WARP == 0, "whole warps");

// The fold of the items lo .. hi - 1 (lo < hi <= n), in order; thread 0 returns it. Every
// thread of the block calls it; it ends with the block synchronized.
__device__ __forceinline__ M r_blocks_fold(const r_in* __restrict__ in, r_size n, r_size lo, r_size hi,
                                          M* s_warps) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    const r_size r0 = lo / R_ITEMS, runs = (hi - 1) / R_ITEMS + 1 - r0;
    // Each warp's share in whole warp tiles (the last warps may get none).
    const r_size per = ((runs + R_WARPS - 1) / R_WARPS + R_WARP - 1) / R_WARP * R_WARP;
    const r_size w0 = r0 + min(runs, warp * per), w1 = r0 + min(runs, (warp + 1) * per);
    M acc = m_identity();  // meaningful in lane 0
    for (r_size t = w0; t < w1; t += R_WARP) {
        const r_size r = t + lane;
        const r_size first = r * R_ITEMS;
        M v = m_identity();
        if (r < w1 && first >= lo && first + R_ITEMS <= hi) {
            v = r_fold_lane_full(in, first, n);
        } else if (r < w1) {
            v = r_fold_lane_within(in, first, lo, hi);
        }
        v = r_warp_reduce(v);
        if (lane == 0) acc = m_combine(acc, v);
    }
    return r_block_combine_warps(acc, s_warps);
}

// Segment s's items a .. b - 1, its offsets clamped so that a bad layout's stay in bounds
// (b <= n, a <= b); whether its two entries break a rule of the layout (see LAYOUT).
__device__ __forceinline__ bool r_blocks_bounds(const r_idx* __restrict__ offsets, r_size s, r_size segments,
                                                r_size n, r_size& a, r_size& b) {
    const r_size lo = r_index(offsets + s), hi = r_index(offsets + s + 1);
    b = min(hi, n);
    a = min(lo, b);
    return lo > hi || (s == 0 && lo != 0) || (s + 1 == segments && hi != n);
}

// Whether a validated launch has seen a bad entry already (*status = 0), for the whole block
// (thread 0 reads it; every thread of the block must call it).
__device__ __forceinline__ bool r_blocks_stopped(const unsigned long long* status, unsigned int* s_stop) {
    if (threadIdx.x == 0) *s_stop = __ldcg(status) == 0ull;
    __syncthreads();
    return *s_stop != 0u;
}

// Where a unit's fold of the items lo .. hi - 1 (lo < hi) ends: hi, or lo + 1 when a validated
// launch (`check`) has seen a bad entry and the fold is longer than an eighth of a chunk
// (uniform in the block); the unit then drops the one item's value. The fold runs either way:
// a branch around it costs the fold's loads their schedule (ptxas holds fewer in flight).
__device__ __forceinline__ r_size r_blocks_fold_end(r_size lo, r_size hi, r_size check,
                                                    const unsigned long long* status, unsigned int* s_stop) {
    return check && hi - lo > R_CHUNK / 8 && r_blocks_stopped(status, s_stop) ? lo + 1 : hi;
}

// A piece of the segment `s` whose pieces lie in chunks k0 .. k1 arrived (its value stored by
// thread 0 before): the unit that brings the last one joins them all into out[s].
__device__ __forceinline__ void r_blocks_arrive(M* __restrict__ out, const M* first_part, const M* cross_part,
                                                unsigned int* __restrict__ counts, r_size s, r_size k0, r_size k1,
                                                M* s_warps, unsigned int* s_last) {
    if (threadIdx.x == 0) {
        __threadfence();
        *s_last = atomicAdd(counts + k0, 1u) == (unsigned int)(k1 - k0);
    }
    __syncthreads();
    if (!*s_last) return;
    __threadfence();
    const r_size count = k1 - k0 + 1;
    const r_size per = (count + R_BLOCK - 1) / R_BLOCK;
    const r_size lo = threadIdx.x * per, hi = min(lo + per, count);
    M v = m_identity();
    for (r_size i = lo; i < hi; ++i) v = m_combine(v, r_load_cg(i == 0 ? first_part + k0 : cross_part + k0 + i));
    const M total = r_block_combine_warps(r_warp_reduce(v), s_warps);
    if (threadIdx.x == 0) out[s] = total;
}

// Units blockIdx.x, blockIdx.x + gridDim.x, ... of the 2 * chunks + segments (see above). counts:
// `chunks` words that are zero on entry; first_part and cross_part: `chunks` values each;
// status: written only with `check` (see LAYOUT).
extern "C" __global__ void R_BLOCKS_BOUNDS
reduce_seg_blocks(const r_in* __restrict__ in, r_size n, const r_idx* __restrict__ offsets, r_size segments,
                  M* __restrict__ out, M* first_part, M* cross_part, unsigned int* __restrict__ counts,
                  r_size chunks, unsigned long long* __restrict__ status, r_size check) {
    __shared__ M s_warps[R_WARPS];  // r_block_combine_warps reads R_WARPS of them
    __shared__ unsigned int s_found, s_last, s_stop;
    const r_size units = 2 * chunks + segments;
    for (r_size u = blockIdx.x; u < units; u += gridDim.x) {
        __syncthreads();  // the shared words of the unit before are read
        if (u < 2 * chunks) {
            // The segment that holds item c0 strictly inside it: its part in chunk u from c0,
            // or (first piece units, u >= chunks) its first piece up to c0 where it starts in
            // the chunk before.
            const bool first = u >= chunks;
            const r_size k = first ? u - chunks + 1 : u;
            const r_size c0 = k * R_CHUNK;
            if (k == 0 || k >= chunks || segments == 0) continue;
            if (threadIdx.x < R_WARP) {
                const r_size s = r_warp_find_segment(offsets, segments, c0);
                if (threadIdx.x == 0) s_found = (unsigned int)s;
            }
            __syncthreads();
            const r_size s = s_found;
            r_size a, b;
            r_blocks_bounds(offsets, s, segments, n, a, b);
            if (!(a < c0 && c0 < b)) continue;  // a segment starts at c0 (or a bad layout)
            const r_size k0 = a / R_CHUNK;
            if (first && k0 + 1 != k) continue;  // its first piece is in a chunk before
            const r_size lo = first ? a : c0, hi = first ? c0 : min(b, c0 + R_CHUNK);
            const r_size fold_end = r_blocks_fold_end(lo, hi, check, status, &s_stop);
            const M v = r_blocks_fold(in, n, lo, fold_end, s_warps);
            if (fold_end != hi) continue;
            if (threadIdx.x == 0) *(first ? first_part + k0 : cross_part + k) = v;
            r_blocks_arrive(out, first_part, cross_part, counts, s, k0, (b - 1) / R_CHUNK, s_warps, &s_last);
        } else {
            const r_size s = u - 2 * chunks;
            r_size a, b;
            const bool bad = r_blocks_bounds(offsets, s, segments, n, a, b);
            if (check && bad && threadIdx.x == 0) atomicMin(status, 0ull);
            if (a == b) {
                if (threadIdx.x == 0) out[s] = m_identity();
                continue;
            }
            // A segment past its first chunk is the chunk units' (its first piece too).
            if (b > (a / R_CHUNK + 1) * R_CHUNK) continue;
            const r_size fold_end = r_blocks_fold_end(a, b, check, status, &s_stop);
            const M v = r_blocks_fold(in, n, a, fold_end, s_warps);
            if (fold_end == b && threadIdx.x == 0) out[s] = v;
        }
    }
}
