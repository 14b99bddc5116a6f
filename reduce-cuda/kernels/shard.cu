// Sharding across devices (reduce-cuda's `cluster` module): per-shard layout helpers, the
// rank-order fold of the partials the ranks gathered, and the exchange between the ranks of one
// process over peer access (shard_exchange, below: bytes to rank-ordered places, folded like
// shard_fold where it is given `out`).
//
// ORDER INVARIANT. The layout kernels never combine monoid values; they rewrite indices element
// by element, so every item keeps its place and every segment its items, in order. The fold of
// the gathered partials is one thread's left-to-right loop over them, in rank order: exactly
// reduce_core::fold of the partials, the grouping the host fold uses, so a value folded on the
// device and one folded on the host are the same bits (floats included). The pieces of segments
// that cross shard boundaries are joined in rank order on the host
// (reduce_core::shard::SegmentPlan::join).

// out[i] = owner[i] - base (mod 2^32) for the n items of a shard whose first item lies in global
// segment `base`: global segment ids become ids local to the shard. An owner below `base` (an
// unsorted layout) wraps to a local id past the shard's segments, which the local validation
// reports as out of range.
extern "C" __global__ void shard_rebase_owner(const unsigned int* __restrict__ owner, r_size n, r_size base,
                                              unsigned int* __restrict__ out) {
    const unsigned int b = (unsigned int)base;
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n; i += (r_size)gridDim.x * blockDim.x)
        out[i] = owner[i] - b;
}

// *out = identity ⊕ partials[0] ⊕ partials[1] ⊕ ... ⊕ partials[count - 1], by thread 0 of block 0
// (count is the number of ranks: a handful of values).
extern "C" __global__ void shard_fold(const M* __restrict__ partials, r_size count, M* __restrict__ out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    M acc = m_identity();
    for (r_size i = 0; i < count; ++i) acc = m_combine(acc, partials[i]);
    *out = acc;
}

// The exchange between the ranks of one process over peer access (reduce-cuda's cluster/peer.rs):
// an all-gather (root = R_ALL: recv[t * bytes ..] = rank t's send bytes, for every rank t) or a
// broadcast (recv = rank root's send bytes). Bytes are copied to their rank-ordered places; with
// `out`, an all-gather of one value per rank is then folded in rank order into *out, left to
// right by one thread (shard_fold's grouping).
//
// Each rank owns a mailbox in its memory: two sets of `world` slots {address, seq}, slot t of a
// set written only by rank t. Exchange number `seq` (the same on every rank, one launch per rank)
// uses set seq % 2:
//   1. rank r writes {its send address, seq} into slot r of that set of every rank's mailbox
//      (every block writes the same values, so no block waits for another one to be scheduled);
//   2. each block waits until every slot of the set in its own mailbox says seq, then copies its
//      share of the sources' bytes from their memory into recv.
// Nobody overwrites what another rank still reads: rank r writes set seq % 2 again at exchange
// seq + 2, after its exchange seq + 1 saw every rank announce seq + 1 — which every rank does only
// after its exchange seq has ended (stream order). For the same reason a send buffer may be
// rewritten by the work queued after exchange seq + 1 (or once the host has waited for every
// rank), never earlier: the callers double-buffer what they rewrite.
// Every wait is bounded: past `timeout_ns` of %globaltimer after the wait began, or once the host
// stores non-zero at `abort`, the launch stores 1 (timed out) or 2 (aborted) at `status` and
// returns; the host reports the error and aborts the cluster.

#define R_ALL (~(r_size)0)

struct r_slot {
    unsigned long long address;
    unsigned long long seq;
};

__device__ __forceinline__ unsigned long long r_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Steps 1 and 2's wait for a block: announces `send` and reads every rank's send address into
// `sources`. Returns 0, or the status code of a wait that gave up (stored at `status` too).
__device__ unsigned int r_exchange_meet(r_size rank, r_size world, r_size seq, const void* send, r_slot* mailbox,
                                        r_slot* const* mailboxes, r_size timeout_ns, const unsigned int* abort,
                                        unsigned int* status, unsigned long long* sources) {
    __shared__ unsigned int failed;
    const r_size set = (seq & 1) * world;
    if (threadIdx.x == 0) failed = 0;
    if (threadIdx.x < world) {
        volatile r_slot* slot = mailboxes[threadIdx.x] + set + rank;
        slot->address = (unsigned long long)send;
        __threadfence_system();
        slot->seq = seq;
    }
    __syncthreads();
    if (threadIdx.x < world) {
        const volatile r_slot* slot = mailbox + set + threadIdx.x;
        const volatile unsigned int* stop = abort;
        const unsigned long long start = r_globaltimer();
        unsigned int code = 0, spins = 0;
        while (slot->seq < seq && code == 0) {
            if ((++spins & 31) == 0) code = *stop != 0 ? 2 : r_globaltimer() - start > timeout_ns ? 1 : 0;
        }
        __threadfence_system();
        if (code != 0) {
            atomicMax(&failed, code);
        } else {
            sources[threadIdx.x] = slot->address;
        }
    }
    __syncthreads();
    if (failed != 0 && threadIdx.x == 0) *(volatile unsigned int*)status = failed;
    return failed;
}

// Copies `bytes` from `src` to `dst` in units of the widest power of two (<= 16) dividing both
// addresses and the length; unit k is thread `first + k * stride`'s.
__device__ void r_copy_share(unsigned char* dst, const unsigned char* src, r_size bytes, r_size first, r_size stride) {
    const r_size align = (r_size)dst | (r_size)src | bytes;
    if ((align & 15) == 0) {
        for (r_size k = first; k < bytes / 16; k += stride) ((uint4*)dst)[k] = ((const uint4*)src)[k];
    } else if ((align & 7) == 0) {
        for (r_size k = first; k < bytes / 8; k += stride)
            ((unsigned long long*)dst)[k] = ((const unsigned long long*)src)[k];
    } else if ((align & 3) == 0) {
        for (r_size k = first; k < bytes / 4; k += stride) ((unsigned int*)dst)[k] = ((const unsigned int*)src)[k];
    } else {
        for (r_size k = first; k < bytes; k += stride) dst[k] = src[k];
    }
}

extern "C" __global__ void shard_exchange(r_size rank, r_size world, r_size root, r_size seq, const unsigned char* send,
                                          r_size bytes, unsigned char* recv, M* out, r_slot* mailbox,
                                          r_slot* const* mailboxes, r_size timeout_ns, const unsigned int* abort,
                                          unsigned int* status) {
    __shared__ unsigned long long sources[32];
    if (r_exchange_meet(rank, world, seq, send, mailbox, mailboxes, timeout_ns, abort, status, sources) != 0) return;
    const r_size stride = (r_size)gridDim.x * blockDim.x, first = blockIdx.x * (r_size)blockDim.x + threadIdx.x;
    if (root == R_ALL) {
        for (r_size t = 0; t < world; ++t)
            r_copy_share(recv + t * bytes, (const unsigned char*)sources[t], bytes, first, stride);
    } else if ((const unsigned char*)sources[root] != recv) {
        r_copy_share(recv, (const unsigned char*)sources[root], bytes, first, stride);
    }
    if (out == nullptr) return;
    // An all-gather of one M per rank, copied by this block alone (the host launches one block
    // with `out`): *out = identity ⊕ recv[0] ⊕ ... ⊕ recv[world - 1].
    __syncthreads();
    if (threadIdx.x != 0) return;
    M acc = m_identity();
    for (r_size t = 0; t < world; ++t) acc = m_combine(acc, ((const M*)recv)[t]);
    *out = acc;
}
