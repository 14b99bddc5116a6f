// Shared helpers of the segmented reductions: the segmented-scan element and its warp scan,
// identity fill, layout validation, offsets -> owner conversion.
//
// ORDER INVARIANT. The whole-array kernels here (fill, checks, offsets to owners) never combine
// monoid values. A segmented-scan element (flag, v) stands for a run of the input: flag says
// whether a segment starts inside the run, v is the fold of the run's items after its last
// segment start (or of all of them). Combining runs in order, (f1, v1) . (f2, v2) = (f1 | f2,
// f2 ? v2 : v1 ⊕ v2), is associative and keeps v1 left of v2: an inclusive scan of elements
// gives, at each run, the value of the segment still open at its end. The warp and block scans
// and r_join_records combine (earlier, later) only.

#define R_NO_SEGMENT 0xffffffffu   // "before segment 0" / "no owner"
#define R_NO_INDEX 0xffffffffffffffffull
#define R_NO_SEG64 0xffffffffffffffffull  // no segment, in 64-bit segment ids (block records)

// The layout checks of a single-launch kernel's `check` argument (SegShuffle; SegMerge and
// SegBlocks take 0 or 1): none (trusted), fused into its reads, or, SegShuffle's offsets form
// with few offsets, the exact check ahead of the reduction (r_check_offsets_block).
#define R_CHECK_NONE 0
#define R_CHECK_FUSED 1
#define R_CHECK_EARLY 2

// The element type of offsets and owners: u32, or u64 with R_IDX64 = 1.
#ifndef R_IDX64
#define R_IDX64 0
#endif
#if R_IDX64
typedef unsigned long long r_idx;
#else
typedef unsigned int r_idx;
#endif

// The layout's entries (r_idx: u32, or u64 with R_IDX64) as 32-bit values. SegShuffle and
// SegPortable take at most 2^32 - 1 segments (SegShuffle also fewer than 2^32 - 1 items), so
// every id of a valid layout fits; a u64 entry past 2^32 - 1 reads as 0xffffffff, past every
// item and segment, so that the checks still see a bad one: an owner >= segments; an offset
// above the array's last entry n, which some pair up to that entry descends from (the ends are
// compared in 64 bits).
__device__ __forceinline__ unsigned int r_narrow(r_idx v) {
#if R_IDX64
    return v > 0xffffffffull ? 0xffffffffu : (unsigned int)v;
#else
    return v;
#endif
}

__device__ __forceinline__ unsigned int r_index(const r_idx* __restrict__ p) { return r_narrow(__ldg(p)); }

// A long identity fill of `count` ids (empty segments a tile or a warp writes past what it
// stages). A good layout's long fills cover ids no other one covers, `segments` in all; a bad
// layout's may each cover nearly every id, tile after tile. A unit (a tile, a warp) fills up to
// R_FREE_FILLS ids per item slot it holds freely: a bad layout's such fills cost at most
// R_FREE_FILLS writes per item slot in all, and a good layout's short fills (90% empty segments:
// two or three ids an item) never wait for the atomic below. A longer fill takes the launch's
// budget (*budget, zero on entry, reset by the last block), which admits it while the fills so
// far fit in `segments`, so that a bad layout's long fills cost O(segments) in all, never
// O(tiles x segments): a validated call then reports its error within a small multiple of a
// good one's time, a trusted one gets unspecified values as soon
// (docs/decisions/0087-bad-layouts-bounded-work.md).
#define R_FREE_FILLS 16
__device__ __forceinline__ bool r_take_fill_budget(unsigned long long* __restrict__ budget, r_size count,
                                                   r_size segments) {
    return atomicAdd(budget, (unsigned long long)count) + count <= segments;
}

// The warp's minimum, maximum, sum or OR of v, in every lane: redux.sync from sm_80, shuffles
// before.
enum r_redux { R_MIN, R_MAX, R_ADD, R_OR };
template <r_redux OP>
__device__ __forceinline__ unsigned int r_warp_redux(unsigned int v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const unsigned int w = __shfl_xor_sync(R_FULL_MASK, v, o);
        v = OP == R_MIN ? min(v, w) : OP == R_MAX ? max(v, w) : OP == R_ADD ? v + w : v | w;
    }
    return v;
#else
    return OP == R_MIN   ? __reduce_min_sync(R_FULL_MASK, v)
           : OP == R_MAX ? __reduce_max_sync(R_FULL_MASK, v)
           : OP == R_ADD ? __reduce_add_sync(R_FULL_MASK, v)
                         : __reduce_or_sync(R_FULL_MASK, v);
#endif
}

// Last s in [0, segments) with offsets[s] <= pos, by a 33-ary search of the whole warp.
// offsets[0] = 0 <= pos < n = offsets[segments] for valid input. All 32 lanes must call it.
__device__ r_size r_warp_find_segment(const r_idx* __restrict__ offsets, r_size segments, r_size pos) {
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

// The first 16-byte boundary at or after p, as a T* (owners after M values in shared memory;
// the host adds 16 bytes of slack to the dynamic shared memory). By an offset from p, not a
// rounded integer: the compiler keeps p's address space, so that accesses through the result
// are shared-memory instructions rather than generic ones.
template <class T>
__device__ __forceinline__ T* r_align16(void* p) {
    const unsigned int pad = (0u - (unsigned int)reinterpret_cast<unsigned long long>(p)) & 15u;
    return reinterpret_cast<T*>(static_cast<unsigned char*>(p) + pad);
}

struct r_seg {
    unsigned int flag;
    M v;
};

__device__ __forceinline__ r_seg r_seg_op(r_seg a, r_seg b) {
    r_seg out;
    out.flag = a.flag | b.flag;
    out.v = b.flag ? b.v : m_combine(a.v, b.v);
    return out;
}

__device__ __forceinline__ r_seg r_seg_identity() {
    r_seg e;
    e.flag = 0;
    e.v = m_identity();
    return e;
}

// Inclusive segmented scan over the 32 lanes (lane order = run order), Kogge-Stone with
// increasing offsets: every m_combine is (earlier lanes, later lanes). Lane L's value is the fold
// of the v of lanes [s, L], s the last lane at or before L whose flag is set (0 when none): the
// flags come from one ballot, and a step at offset o combines only when lane L - o is at or
// after s (before it, L already holds all of [s, L]): no flag is shuffled or combined per step.
__device__ __forceinline__ r_seg r_warp_seg_scan(r_seg x) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int flags = __ballot_sync(R_FULL_MASK, x.flag != 0) & (0xffffffffu >> (R_WARP - 1 - lane));
    const int s = flags != 0 ? 31 - __clz(flags) : 0;
#pragma unroll
    for (unsigned int o = 1; o < R_WARP; o <<= 1) {
        const M y = r_shfl_up(x.v, o);
        if ((int)lane - (int)o >= s) x.v = m_combine(y, x.v);
    }
    x.flag = flags != 0 ? 1u : 0u;
    return x;
}

// The element of the lane before (lane 0 gets the identity element).
__device__ __forceinline__ r_seg r_warp_seg_exclusive(r_seg inclusive) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    r_seg y;
    y.flag = __shfl_up_sync(R_FULL_MASK, inclusive.flag, 1);
    y.v = r_shfl_up(inclusive.v, 1);
    return lane == 0 ? r_seg_identity() : y;
}

// Block-wide exclusive segmented scan of one element per thread (thread order = run order),
// continuing from the carry that carry_in() returns (called by warp 0 between the two barriers,
// so the carry may live in shared memory: written before the call, and left as it is until the
// second barrier). Returns the thread's exclusive prefix (carry . elements before it); *total
// receives carry . all elements. `s_agg` holds a slot a warp of the block and one more, its
// last, for the total (kSlots, a constant: the kernel's block may be smaller than 32 warps, so
// that large values fit). Every thread must call it.
// Two barriers; a caller that scans again must alternate between two `s_agg` buffers (the
// second call's first barrier then protects the first buffer's readers).
template <unsigned int kSlots, class CarryIn>
__device__ __forceinline__ r_seg r_block_seg_exclusive(r_seg x, CarryIn carry_in, r_seg (&s_agg)[kSlots],
                                                       r_seg* total) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    const unsigned int warps = (R_THREADS + R_WARP - 1) / R_WARP;
    const r_seg inclusive = r_warp_seg_scan(x);
    const r_seg lane_prefix = r_warp_seg_exclusive(inclusive);
    if (lane == R_WARP - 1) s_agg[warp] = inclusive;
    r_sync();
    if (warp == 0) {
        // Warp 0 scans the warp aggregates after the carry; s_agg[w] becomes warp w's prefix.
        r_seg a = lane < warps ? s_agg[lane] : r_seg_identity();
        const r_seg inc = r_warp_seg_scan(a);
        r_seg before = r_warp_seg_exclusive(inc);
        before = r_seg_op(carry_in(), before);
        if (lane < warps) s_agg[lane] = before;
        if (lane == warps - 1) s_agg[kSlots - 1] = r_seg_op(before, a);
    }
    r_sync();
    const r_seg prefix = r_seg_op(s_agg[warp], lane_prefix);
    *total = s_agg[kSlots - 1];
    return prefix;
}

// Joins the per-block records of a single-launch segmented kernel, in block order; called by
// every thread of the last block to finish (after its __threadfence). Record k: rec_vals[2k] is
// the block's part of its entry segment (the segment open at its start, closed inside it),
// rec_vals[2k + 1] the value open at its end; rec_meta[3k] the entry segment (R_NO_SEG64: none),
// rec_meta[3k + 1] the exit segment (open at the block's end; R_NO_SEG64 or >= segments: none),
// rec_meta[3k + 2] = 1 when no segment closes inside the block ("single"). Thread t scans the
// t-th contiguous run of records: every m_combine is (earlier blocks, later blocks). Writes
// each entry segment closed in its block, and the segment still open after the last block.
// `s_agg`: as r_block_seg_exclusive's.
template <unsigned int kSlots>
__device__ void r_join_records(const M* rec_vals, const r_size* rec_meta, unsigned int blocks, r_size segments,
                               M* __restrict__ out, r_seg (&s_agg)[kSlots]) {
    const unsigned int per_thread = (blocks + R_THREADS - 1) / R_THREADS;
    const unsigned int lo = threadIdx.x * per_thread;
    const unsigned int hi = min(lo + per_thread, blocks);
    r_seg mine = r_seg_identity();
    for (unsigned int k = lo; k < hi; ++k) {
        r_seg e;
        e.flag = __ldcg(rec_meta + 3 * k + 2) ? 0u : 1u;
        e.v = r_load_cg(rec_vals + 2 * k + 1);
        mine = r_seg_op(mine, e);
    }
    r_seg all;
    r_seg p = r_block_seg_exclusive(mine, [] { return r_seg_identity(); }, s_agg, &all);
    for (unsigned int k = lo; k < hi; ++k) {
        const r_size single = __ldcg(rec_meta + 3 * k + 2);
        const r_size entry = __ldcg(rec_meta + 3 * k);
        if (!single && entry < segments) out[entry] = m_combine(p.v, r_load_cg(rec_vals + 2 * k));
        r_seg e;
        e.flag = single ? 0u : 1u;
        e.v = r_load_cg(rec_vals + 2 * k + 1);
        p = r_seg_op(p, e);
    }
    if (threadIdx.x == 0) {
        const r_size exit_last = __ldcg(rec_meta + 3 * (blocks - 1) + 1);
        if (exit_last < segments) out[exit_last] = all.v;
    }
}

// ---------------------------------------------------------------- whole-array kernels

// out[0 .. count) = identity (the result of every segment when there are no items).
extern "C" __global__ void seg_fill_identity(M* __restrict__ out, r_size count) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < count; i += (r_size)gridDim.x * blockDim.x)
        out[i] = m_identity();
}

// First index i with owner[i] < owner[i - 1] or owner[i] >= segments, into *first_bad
// (atomicMin; R_NO_INDEX when none).
extern "C" __global__ void seg_validate_owner(const r_idx* __restrict__ owner, r_size n, r_size segments,
                                              unsigned long long* __restrict__ first_bad) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n; i += (r_size)gridDim.x * blockDim.x) {
        const r_idx o = owner[i];
        if (o >= segments || (i > 0 && o < owner[i - 1])) atomicMin(first_bad, (unsigned long long)i);
    }
}

// Hands *status, the layout check of the launch queued before (SegBlocks'), to *status_out (a
// word of host memory mapped for the device) and leaves *status = R_NO_INDEX for the next call.
extern "C" __global__ void seg_hand_status(unsigned long long* __restrict__ status,
                                           unsigned long long* __restrict__ status_out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *status_out = *status;
        *status = R_NO_INDEX;
    }
}

// The error key of entry i of `count` offsets for n items (R_NO_INDEX: none): class 0 =
// offsets[0] != 0, class 1 = offsets[i] < offsets[i - 1], class 2 = the last offset != n; the
// key is class << 62 | index, so the smallest key over all entries is the error the CPU check
// reports first.
__device__ __forceinline__ unsigned long long r_offsets_key(const r_idx* __restrict__ offsets, r_size i, r_size count,
                                                            r_size n) {
    const r_idx v = offsets[i];
    if (i == 0 && v != 0) return 0ull;
    if (i > 0 && v < offsets[i - 1]) return (1ull << 62) | i;
    if (i + 1 == count && v != n) return (2ull << 62) | i;
    return R_NO_INDEX;
}

// Offsets validation in one pass, reported as one key (r_offsets_key, merged by atomicMin).
extern "C" __global__ void seg_validate_offsets(const r_idx* __restrict__ offsets, r_size count, r_size n,
                                                unsigned long long* __restrict__ first_bad) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < count; i += (r_size)gridDim.x * blockDim.x) {
        const unsigned long long key = r_offsets_key(offsets, i, count, n);
        if (key != R_NO_INDEX) atomicMin(first_bad, key);
    }
}

// The same check by one block, for few offsets (count <= R_EARLY_PER_THREAD * R_THREADS):
// their first error key (R_NO_INDEX: none), in every thread. SegShuffle's early check (see
// reduce_seg_shuffle). Every thread of the block must call it.
#define R_EARLY_PER_THREAD 16
__device__ __forceinline__ unsigned long long r_check_offsets_block(const r_idx* __restrict__ offsets, r_size count,
                                                                 r_size n) {
    __shared__ unsigned long long s_key;
    if (threadIdx.x == 0) s_key = R_NO_INDEX;
    r_sync();
    unsigned long long key = R_NO_INDEX;
#pragma unroll
    for (unsigned int k = 0; k < R_EARLY_PER_THREAD; ++k) {
        const r_size i = threadIdx.x + (r_size)k * R_THREADS;
        if (i < count) key = min(key, r_offsets_key(offsets, i, count, n));
    }
    if (key != R_NO_INDEX) atomicMin(&s_key, key);
    r_sync();
    return s_key;
}

// owner[i] = the segment holding item i: the last s with offsets[s] <= i (binary search;
// empty segments hold no item). For the paper's algorithms, which take owners.
extern "C" __global__ void seg_offsets_to_owner(const unsigned int* __restrict__ offsets, r_size segments,
                                                unsigned int* __restrict__ owner, r_size n) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n; i += (r_size)gridDim.x * blockDim.x) {
        r_size lo = 0, hi = segments;  // invariant: offsets[lo] <= i < offsets[hi]
        while (hi - lo > 1) {
            const r_size mid = (lo + hi) / 2;
            if (offsets[mid] <= i) lo = mid; else hi = mid;
        }
        owner[i] = (unsigned int)lo;
    }
}

// offsets[s] = the number of items whose owner is below s, for s in [0, segments]: the CSR
// offsets of sorted owners (a binary search over the owners per entry, so that long runs of
// empty segments cost no thread more than another). For the CSR-only kernels asked for the owner
// form (SegHeads, where no owner-form kernel fits the values). Any owners give entries in
// [0, n], so a trusted unsorted layout keeps the kernels behind in bounds.
extern "C" __global__ void seg_owner_to_offsets(const r_idx* __restrict__ owner, r_size n,
                                                r_idx* __restrict__ offsets, r_size segments) {
    for (r_size s = blockIdx.x * (r_size)blockDim.x + threadIdx.x; s <= segments; s += (r_size)gridDim.x * blockDim.x) {
        r_size lo = 0, hi = n;  // invariant: owner[i] < s before lo, owner[i] >= s from hi
        while (lo < hi) {
            const r_size mid = lo + (hi - lo) / 2;
            if ((r_size)owner[mid] < s) lo = mid + 1; else hi = mid;
        }
        offsets[s] = (r_idx)lo;
    }
}
