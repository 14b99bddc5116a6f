// The portable grouping's join over several GPUs, on the device (reduce-cuda's
// Cluster::reduce_into with Config::portable): every rank's record of its shard's summary —
// the items before its first run boundary and after its last, read as they are, and the aligned
// blocks of whole runs between, each a node of the tree (reduce_core::portable::parts::plan) —
// gathered in rank order, joined into the value of the whole sequence by one thread.
//
// ORDER INVARIANT: this is reduce_core::portable::parts::combine, step for step, so the value
// has reduce_core::portable::fold's bits — one GPU's and the CPU's — for any shards. Raw items
// are folded left to right into the run they lie in (its piece: x_a ⊕ x_a+1 ⊕ ...); a run or
// block, once complete, enters the tree as node (level, index) and merges with the node before
// it where that is its left sibling (left ⊕ right), or rises alone where its left sibling lies
// wholly before the first run; the nodes left at the end lie on the tree's right edge and are
// combined right to left, each the left operand. Every m_combine is (earlier items) ⊕ (later).
//
// Records (reduce_core::portable::record, whose layout this follows): eight little-endian u64
// words (status, lo, head length, tail_at, tail length, block count, two spare), `run` head
// values, `run` tail values, `max_blocks` keys {level, index}, `max_blocks` block values; values
// unaligned. Lengths are clamped to their slots, so a bad record gives a wrong value, never a
// read out of bounds. Every rank's status (0 = good) is copied to statuses[rank] first; where
// any is not 0 nothing is joined and the value is not written (the host reports the failure).
// Then the records must agree: the same monoid (its fingerprint in spare word 6, the same in
// every record) and shards that follow each other (a record's `lo` is the end, tail_at + tail
// length, of the one before); the first rank whose record does not gets R_JOIN_MISMATCH, and
// nothing is joined (ranks of one process per GPU given another monoid of the same size, or
// another `Sharded`, would otherwise join into a value of no sequence).
// The nodes waiting for their right sibling (at most two per level) live in `scratch`, global
// memory of `capacity` of them (values, then indices, then levels), not in the thread's local
// memory, which the driver would reserve for every thread the device can hold.

__device__ __forceinline__ unsigned long long r_join_word(const unsigned char* p, unsigned int k) {
    unsigned long long w;
    memcpy(&w, p + 8 * k, 8);
    return w;
}

__device__ __forceinline__ M r_join_value(const unsigned char* p) {
    M v;
    memcpy(&v, p, sizeof(M));
    return v;
}

// The tree's nodes as they complete (parts.rs, Nodes), in scratch memory.
struct r_join_nodes {
    M* value;
    unsigned long long* index;
    unsigned int* level;
    r_size capacity;
    r_size depth;
    unsigned long long first;  // the first run
};

__device__ void r_join_push(r_join_nodes& t, unsigned int level, unsigned long long index, M value) {
    while (index % 2 == 1 && level < 64) {
        if (t.depth > 0 && t.level[t.depth - 1] == level && t.index[t.depth - 1] + 1 == index) {
            --t.depth;
            value = m_combine(t.value[t.depth], value);
        } else if ((index << level) > t.first) {
            // Its left sibling holds the first run but is not one node: the nodes it is made
            // of stay on the right edge's fold.
            break;
        }
        ++level;
        index /= 2;
    }
    if (t.depth < t.capacity) {
        t.value[t.depth] = value;
        t.level[t.depth] = level;
        t.index[t.depth] = index;
        ++t.depth;
    }
}

#define R_JOIN_MISMATCH 2ull

extern "C" __global__ void shard_portable_join(const unsigned char* __restrict__ records, r_size world,
                                               r_size record_bytes, r_size run, r_size max_blocks,
                                               unsigned char* __restrict__ scratch, r_size capacity,
                                               M* __restrict__ out, unsigned long long* __restrict__ statuses) {
    if (blockIdx.x != 0 || threadIdx.x != 0 || world == 0 || run == 0) return;
    bool failed = false;
    for (r_size r = 0; r < world; ++r) {
        statuses[r] = r_join_word(records + r * record_bytes, 0);
        failed = failed || statuses[r] != 0;
    }
    if (failed) return;
    const unsigned long long monoid = r_join_word(records, 6);
    unsigned long long next_lo = r_join_word(records, 1);
    for (r_size r = 0; r < world; ++r) {
        const unsigned char* rec = records + r * record_bytes;
        if (r_join_word(rec, 6) != monoid || r_join_word(rec, 1) != next_lo) {
            statuses[r] = R_JOIN_MISMATCH;
            return;
        }
        next_lo = r_join_word(rec, 3) + r_join_word(rec, 4);
    }
    const r_size size = sizeof(M);
    const r_size head_at = 64, tail_at = head_at + run * size, keys_at = tail_at + run * size;
    const r_size values_at = keys_at + max_blocks * 16;
    // Scratch: capacity values, then (16-byte aligned) capacity indices, then capacity levels.
    const r_size indices_at = (capacity * size + 15) / 16 * 16;
    r_join_nodes t;
    t.value = reinterpret_cast<M*>(scratch);
    t.index = reinterpret_cast<unsigned long long*>(scratch + indices_at);
    t.level = reinterpret_cast<unsigned int*>(scratch + indices_at + 8 * capacity);
    t.capacity = capacity;
    t.depth = 0;
    t.first = r_join_word(records, 1) / run;
    // The run being folded from raw items.
    bool pending = false;
    unsigned long long pending_run = 0;
    M acc = m_identity();
    for (r_size r = 0; r < world; ++r) {
        const unsigned char* rec = records + r * record_bytes;
        const unsigned long long lo = r_join_word(rec, 1), tail_first = r_join_word(rec, 3);
        const unsigned long long head = min(r_join_word(rec, 2), (unsigned long long)run);
        const unsigned long long tail = min(r_join_word(rec, 4), (unsigned long long)run);
        const unsigned long long blocks = min(r_join_word(rec, 5), (unsigned long long)max_blocks);
        // The raw items `n` at `from` (values at `p`), folded into their runs.
        auto feed = [&](unsigned long long from, const unsigned char* p, unsigned long long n) {
            for (unsigned long long k = 0; k < n; ++k) {
                const unsigned long long run_of = (from + k) / run;
                const M x = r_join_value(p + k * size);
                if (pending && pending_run == run_of) {
                    acc = m_combine(acc, x);
                } else {
                    if (pending) r_join_push(t, 0, pending_run, acc);
                    pending = true;
                    pending_run = run_of;
                    acc = x;
                }
            }
        };
        feed(lo, rec + head_at, head);
        if ((blocks > 0 || tail > 0) && pending) {
            // The head ended its run (the part holds a boundary).
            r_join_push(t, 0, pending_run, acc);
            pending = false;
        }
        for (unsigned long long b = 0; b < blocks; ++b) {
            const unsigned char* key = rec + keys_at + 16 * b;
            r_join_push(t, (unsigned int)r_join_word(key, 0), r_join_word(key, 1),
                        r_join_value(rec + values_at + b * size));
        }
        feed(tail_first, rec + tail_at, tail);
    }
    if (pending) r_join_push(t, 0, pending_run, acc);
    M root = m_identity();
    if (t.depth > 0) {
        root = t.value[--t.depth];
        while (t.depth > 0) {
            --t.depth;
            root = m_combine(t.value[t.depth], root);
        }
    }
    *out = root;
}
