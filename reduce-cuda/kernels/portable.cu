// Portable: the plain reduction whose grouping, and so whose bits, depend on N and the size of
// the monoid's type only — never on the device, the grid, the block, the tuning or timing.
//
// ORDER INVARIANT (the grouping reduce_core::portable defines; this kernel computes exactly it).
// The items are cut into runs of R_RUN items (64 bytes of M values, at least one) at fixed global
// positions; a run's value is the left fold of its items from its first one (no identity in
// front). The runs are combined by a fixed binary tree over their global indices: node j of a
// level from nodes 2j (left) and 2j + 1 (right) of the level below, a node whose right child is
// absent (past the last run) keeping its left one. Every aligned power-of-two group of runs is
// a node of that tree, so the kernel may compute the tree in nodes of any such size without
// changing a bit:
//   lane       R_LANE_RUNS runs (r_tree_regs over their folds);
//   warp tile  32 lanes (r_warp_tree: shuffles at increasing offsets);
//   node       R_GROUP block tiles of R_WARPS warp tiles each: warp tiles into a shared ring of
//              R_FLUSH nodes, warp 0's tree over each node's slots at every flush, written to
//              partials[]; blocks own contiguous runs of nodes (any grid);
//   root       the launch's last block (atomic ticket after a __threadfence) takes the tree over
//              partials[] (r_block_tree_cg).
// Every m_combine is (left subtree, right subtree): earlier items before later ones, so an
// exactly associative monoid gets reduce_core::fold's value; floats get the tree's bits.
// R_BLOCK and R_GROUP are powers of two (the host checks): block and node sizes move speed only.
//
// Input items: r_in, folded as m_lift(x, i) (i the item's global index); the runs follow the
// lifted values (R_RUN from sizeof(M), not from the input type).
//
// Parameters: R_BLOCK threads; R_RUN items per run; R_LANE_RUNS runs per lane (a power of two);
// R_ITEMS = R_RUN * R_LANE_RUNS; R_VECS and R_ITEM_SHIFT as kernels/lanes.cuh says; R_GROUP;
// R_FLUSH nodes per barrier (the block's warps run that far ahead of warp 0's trees).

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_WARP * R_ITEMS)
#define R_NODE_TILES (R_GROUP * R_WARPS)
// Warp 0's share of a flush: ring slots per lane, and lanes per node.
#define R_RING_PER_LANE (R_FLUSH * R_NODE_TILES > R_WARP ? R_FLUSH * R_NODE_TILES / R_WARP : 1)
#define R_NODE_LANES (R_NODE_TILES / R_RING_PER_LANE < R_WARP ? R_NODE_TILES / R_RING_PER_LANE : R_WARP)
// Nodes per lane in a step of r_block_tree_cg: a power of two, at most R_RUN and 16.
#define R_LANE_NODES (R_RUN >= 16 ? 16 : R_RUN >= 8 ? 8 : R_RUN >= 4 ? 4 : R_RUN >= 2 ? 2 : 1)

static_assert(R_ITEMS == R_RUN * R_LANE_RUNS, "a lane holds whole runs");
static_assert((R_BLOCK & (R_BLOCK - 1)) == 0 && (R_GROUP & (R_GROUP - 1)) == 0 &&
                  (R_FLUSH & (R_FLUSH - 1)) == 0 && R_FLUSH <= R_WARP,
              "block tiles, nodes and flushes are aligned powers of two of warp tiles");

// The node of the lane's R_LANE_RUNS runs from `first`, all of whose items are below n.
__device__ __forceinline__ M r_lane_node_full(const r_in* __restrict__ in, r_size first, r_size n) {
    M runs[R_LANE_RUNS];
    r_lane_items(in, first, n, [&](int i, const r_in& x) {
        const M v = m_lift(x, first + i);
        runs[i / R_RUN] = i % R_RUN == 0 ? v : m_combine(runs[i / R_RUN], v);
    });
    return r_tree_regs(runs, R_LANE_RUNS);
}

// The node of the lane's runs from `first` (< n) where the items end inside them.
__device__ __forceinline__ M r_lane_node_partial(const r_in* __restrict__ in, r_size first,
                                                 r_size n) {
    M runs[R_LANE_RUNS];
#pragma unroll
    for (int r = 0; r < R_LANE_RUNS; ++r) {
        const r_size a = first + (r_size)r * R_RUN;
        if (a < n) {
            runs[r] = m_lift(in[a], a);
            for (int i = 1; i < R_RUN && a + i < n; ++i) runs[r] = m_combine(runs[r], m_lift(in[a + i], a + i));
        }
    }
    return r_tree_regs(runs, (int)((n - first + R_RUN - 1) / R_RUN));
}

// The R_LANE_NODES values from p (written by other blocks of this launch) into v, through L2:
// as 16-byte vectors where they fill whole ones (p then lies at a multiple of their size from
// the 16-byte-aligned start of the nodes), else value by value.
__device__ __forceinline__ void r_load_nodes_cg(const M* p, M (&v)[R_LANE_NODES]) {
    constexpr int bytes = (int)sizeof(M) * R_LANE_NODES;
    if constexpr (bytes % 16 == 0 && alignof(M) <= 16) {
        union {
            uint4 w[bytes / 16];
            M m[R_LANE_NODES];
        } t;
        const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
        for (int k = 0; k < bytes / 16; ++k) t.w[k] = __ldcg(q + k);
#pragma unroll
        for (int j = 0; j < R_LANE_NODES; ++j) v[j] = t.m[j];
    } else {
#pragma unroll
        for (int j = 0; j < R_LANE_NODES; ++j) v[j] = r_load_cg(p + j);
    }
}

// The root of the tree over p[0 .. count), one level's nodes written by other blocks of this
// launch (read through L2), by the whole block; thread 0 returns it (the identity for count 0).
// Warp w takes the w-th aligned chunk of C nodes (C a power of two, at least 32 * R_LANE_NODES,
// with the warps' chunks covering count). It reads its chunk in steps of 32 * R_LANE_NODES nodes
// — lane l the R_LANE_NODES from l * R_LANE_NODES: a lane tree, then a warp tree, make each step
// one node — and adds the
// steps' nodes, in order, to a binary counter: lane k holds the pending left sibling of step
// level k, and a new node combines with the pending ones below it as their right sibling. The
// chunk's root is then the pending nodes combined from the lowest level up (each a left sibling
// of everything after it), and the warps' chunk roots combine in a warp tree.
__device__ M r_block_tree_cg(const M* p, r_size count, M* s_warps) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;
    const r_size step = (r_size)R_WARP * R_LANE_NODES;
    r_size chunk = step;
    while (chunk * R_WARPS < count) chunk *= 2;
    const r_size lo = warp * chunk;
    const r_size hi = min(lo + chunk, count);
    M pending;                // lane k: the pending node of step level k
    unsigned int filled = 0;  // the levels holding one (the same in every lane; fewer than 32)
    for (r_size s = lo; s < hi; s += step) {
        const r_size first = s + (r_size)lane * R_LANE_NODES;
        M v[R_LANE_NODES];
        if (first + R_LANE_NODES <= hi) {
            r_load_nodes_cg(p + first, v);
        } else {
#pragma unroll
            for (int j = 0; j < R_LANE_NODES; ++j) {
                if (first + j < hi) v[j] = r_load_cg(p + first + j);
            }
        }
        M node = v[0];
        if (first < hi) node = r_tree_regs(v, (int)min((r_size)R_LANE_NODES, hi - first));
        const r_size lanes = (hi - s + R_LANE_NODES - 1) / R_LANE_NODES;
        node = r_shfl(r_warp_tree(node, (unsigned int)min(lanes, (r_size)R_WARP)), 0);
        unsigned int k = 0;
        for (; filled >> k & 1; ++k) node = m_combine(r_shfl(pending, k), node);
        filled = (filled >> k | 1) << k;  // levels 0 .. k - 1 emptied, k filled
        if (lane == k) pending = node;
    }
    M root = m_identity();
    if (filled != 0) {
        unsigned int k = __ffs(filled) - 1;
        root = r_shfl(pending, k);
        for (++k; k < R_WARP; ++k) {
            if (filled >> k & 1) root = m_combine(r_shfl(pending, k), root);
        }
    }
    if (lane == 0) s_warps[warp] = root;
    __syncthreads();
    M total = m_identity();
    if (warp == 0) {
        const r_size present = (count + chunk - 1) / chunk;  // warps whose chunk holds nodes
        if (lane < present) total = s_warps[lane];
        if (present > 0) total = r_warp_tree(total, (unsigned int)present);
    }
    return total;
}

// One launch: grid of persistent blocks; `ticket` is 0 on entry and is left 0. `partials` holds
// one value per node, ceil(ceil(n / R_TILE) / R_NODE_TILES) of them. `out[0]` receives the root
// over in[0 .. n).
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_portable(const r_in* __restrict__ in, r_size n, M* __restrict__ partials,
                unsigned int* __restrict__ ticket, M* __restrict__ out) {
    __shared__ M s_ring[2][R_FLUSH * R_NODE_TILES];
    __shared__ M s_warps[R_WARPS];  // one a warp of the block (large values must fit 48 KiB)
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;

    const r_size tiles = (n + R_TILE - 1) / R_TILE;  // warp tiles
    const r_size full_tiles = n / R_TILE;
    const r_size node_count = (tiles + R_NODE_TILES - 1) / R_NODE_TILES;
    // This block's contiguous run of nodes.
    const r_size b = blockIdx.x;
    const r_size q = node_count / gridDim.x, r = node_count % gridDim.x;
    r_size node = b * q + (b < r ? b : r);
    const r_size node_end = node + q + (b < r ? 1 : 0);

    unsigned int phase = 0, held = 0;  // held: nodes in the ring since the last flush
    for (; node < node_end; ++node) {
#pragma unroll 1
        for (unsigned int g = 0; g < R_GROUP; ++g) {
            const unsigned int slot = g * R_WARPS + warp;
            const r_size tile = node * R_NODE_TILES + slot;
            if (tile >= tiles) break;  // the last node's absent tiles
            const r_size first = tile * R_TILE + (r_size)lane * R_ITEMS;
            M v;
            if (tile < full_tiles) {
                v = r_warp_tree(r_lane_node_full(in, first, n), R_WARP);
            } else {
                if (first < n) v = r_lane_node_partial(in, first, n);
                v = r_warp_tree(v, (unsigned int)((n - tile * R_TILE + R_ITEMS - 1) / R_ITEMS));
            }
            if (lane == 0) s_ring[phase][held * R_NODE_TILES + slot] = v;
        }
        if (++held < R_FLUSH && node + 1 < node_end) continue;
        __syncthreads();
        if (warp == 0) {
            // The held nodes' trees side by side: lane l takes the R_RING_PER_LANE slots from
            // l * R_RING_PER_LANE (a lane tree), R_NODE_LANES lanes make a node (a warp tree of
            // that width), and each node's first lane writes it.
            const unsigned int h = lane / R_NODE_LANES;
            const r_size at = node + 1 - held + h;
            const unsigned int mine = (lane % R_NODE_LANES) * R_RING_PER_LANE;
            const unsigned int present =
                h < held ? (unsigned int)min(tiles - at * R_NODE_TILES, (r_size)R_NODE_TILES) : 0;
            const M* ring = s_ring[phase] + h * R_NODE_TILES;
            M v[R_RING_PER_LANE];
#pragma unroll
            for (int j = 0; j < R_RING_PER_LANE; ++j) {
                if (mine + j < present) v[j] = ring[mine + j];
            }
            M x = v[0];
            if (mine < present) x = r_tree_regs(v, (int)min((unsigned int)R_RING_PER_LANE, present - mine));
            x = r_warp_tree<R_NODE_LANES>(x, (present + R_RING_PER_LANE - 1) / R_RING_PER_LANE);
            if (lane % R_NODE_LANES == 0 && present > 0) partials[at] = x;
        }
        held = 0;
        phase ^= 1;
    }

    if (!r_last_block(ticket)) return;

    const M total = r_block_tree_cg(partials, node_count, s_warps);
    if (threadIdx.x == 0) {
        out[0] = total;
        *ticket = 0;
    }
}
