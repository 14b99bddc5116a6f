// Axes, portable: a row-major array reduced along some of its axes, each result with the bits
// of reduce_core::portable::fold over its own reduced sequence (the items of its reduced
// coordinates, row-major) — whatever the shape around it, the device, the grid or the block.
//
// ORDER INVARIANT (the grouping reduce_core::portable defines, per result). A result's reduced
// sequence is cut into leaves of `leaf` consecutive positions (the first pass: R_RUN items, 64
// bytes of M values; later passes: 1 node) from its first position; a leaf's value is the left
// fold of its items from its first one (no identity in front). The leaves are combined by the
// fixed binary tree over their indices: node j of a level from nodes 2j (left) and 2j + 1
// (right) of the level below, a node whose right child is absent keeping its left one. A pass
// computes, for every result o and node j of the level Y * 2^q_log leaves up (powers of two),
// that node's value into out[o * nodes + j]; the next pass takes those nodes as its leaves,
// until one node per result is left. Within a node:
//   thread   a unit of 2^q_log consecutive leaves (each leaf's items in order, then a tree of
//            them in registers: r_tree_regs);
//   warp     the lanes holding the same result's neighbouring units: shuffles at increasing
//            distances, combining (left, right) only where the right node holds leaves;
//   block    the warps' nodes through shared memory, a tree of up to R_WARPS (r_tree_regs).
// Every m_combine is (earlier positions) ⊕ (later positions), so an exactly associative monoid
// gets reduce_core::fold_axes's value; floats get the tree's bits.
//
// A tile's threads are (x, y): X results side by side, Y units of one node each; a tile is a
// warp for long rows (nodes of up to 32 leaves: each warp takes tiles on its own, without a
// barrier), else the block (where a node spans warps, their nodes joined through shared
// memory).
// `yfast` (the innermost axis is reduced: rows) puts y in the low bits of the thread index, so
// a warp reads neighbouring leaves of a row; otherwise x is in the low bits and a warp reads
// neighbouring results (columns), each thread its unit's items down the reduced axis.
//
// Addresses: result o's first item at flat(o) over the kept dims, its position r at
// flat(o) + flat(r) over the reduced dims (each list (extent, stride) innermost first, `nk` and
// `nr` of them used, the outermost one without a bound). Lifted items (the first pass) are
// m_lift(x, i) with i the item's flat index.
//
// Parameters: R_BLOCK threads (a power of two, 32 to 256); R_RUN items per leaf of the first
// pass; R_VECS 16-byte vectors that hold a first-pass leaf of r_in items (0: item by item);
// R_UNIT the most leaves in a thread's unit (a power of two).

#define R_WARPS (R_BLOCK / R_WARP)

static_assert((R_BLOCK & (R_BLOCK - 1)) == 0 && R_BLOCK >= R_WARP && R_BLOCK <= 256,
              "a block is a power of two of warps, at most 8");
static_assert((R_UNIT & (R_UNIT - 1)) == 0, "a unit is a power of two of leaves");

struct r_axes_dims {
    r_size e[4], s[4];  // (extent, stride), innermost first
    unsigned int used;  // how many
};

// The offset of position i over `d`: row-major, the innermost dim fastest.
__device__ __forceinline__ r_size r_axes_flat(const r_axes_dims& d, r_size i) {
    r_size off = 0;
#pragma unroll
    for (unsigned int k = 0; k < 4; ++k) {
        if (k + 1 < d.used) {
            off += (i % d.e[k]) * d.s[k];
            i /= d.e[k];
        } else if (k + 1 == d.used) {
            off += i * d.s[k];
        }
    }
    return off;
}

// Item p of `in` as a value.
template <typename T, bool LIFT>
__device__ __forceinline__ M r_axes_at(const T* __restrict__ in, r_size p) {
    return r_item_value<T, LIFT>(in[p], p);
}

// The fold of positions [k0, k1) (not empty) of the result whose first item is at `base`.
template <typename T, bool LIFT, int LEAF, int VECS>
__device__ __forceinline__ M r_axes_leaf(const T* __restrict__ in, r_size n, r_size base,
                                         r_size k0, r_size k1, const r_axes_dims& red) {
    if (red.used == 1) {
        // One reduced dim: the items are `stride` apart.
        const r_size stride = red.s[0];
        r_size p = base + k0 * stride;
        if constexpr (VECS > 0) {
            const void* at = in + p;
            const unsigned int shift = (unsigned int)((unsigned long long)at & 15u);
            if (stride == 1 && k1 - k0 == LEAF && r_vectors_inside<VECS>(at, shift, in, in + n)) {
                union {
                    uint4 v[VECS];
                    T m[LEAF];
                } t;
                r_load_shifted(at, shift, t.v, [](const uint4* q) { return __ldcs(q); });
                M v = r_item_value<T, LIFT>(t.m[0], p);
#pragma unroll
                for (int i = 1; i < LEAF; ++i)
                    v = m_combine(v, r_item_value<T, LIFT>(t.m[i], p + i));
                return v;
            }
        }
        // Every load issued before the first combine.
        const r_size len = k1 - k0;
        T x[LEAF];
#pragma unroll
        for (int i = 0; i < LEAF; ++i) {
            if (i < len) x[i] = in[p + i * stride];
        }
        M v = r_item_value<T, LIFT>(x[0], p);
#pragma unroll
        for (int i = 1; i < LEAF; ++i) {
            if (i < len) v = m_combine(v, r_item_value<T, LIFT>(x[i], p + i * stride));
        }
        return v;
    }
    // Several reduced dims: step along the innermost one, recompute past its end.
    const r_size e0 = red.e[0], s0 = red.s[0];
    r_size p = base + r_axes_flat(red, k0), d0 = k0 % e0;
    M v = r_axes_at<T, LIFT>(in, p);
    for (r_size k = k0 + 1; k < k1; ++k) {
        if (++d0 == e0) {
            d0 = 0;
            p = base + r_axes_flat(red, k);
        } else {
            p += s0;
        }
        v = m_combine(v, r_axes_at<T, LIFT>(in, p));
    }
    return v;
}

// One pass (see the invariant): `results` results of `k` positions each, leaves of LEAF, a
// thread's unit of 2^q_log leaves (at most UNIT), nodes of 2^y_log units, `nodes` of them per
// result; tiles of a warp (BY_WARP) or of the block.
template <typename T, bool LIFT, int LEAF, int VECS, int UNIT, bool BY_WARP>
__device__ __forceinline__ void r_axes_portable(const T* __restrict__ in, r_size n, r_size results,
                                                r_size k, unsigned int y_log, unsigned int q_log,
                                                bool yfast, r_size nodes, const r_axes_dims& kept,
                                                const r_axes_dims& red, M* __restrict__ out) {
    __shared__ M s_part[R_WARPS > 1 ? R_BLOCK : 1];
    const unsigned int Y = 1u << y_log, Q = 1u << q_log;
    // BY_WARP (the host picks it where a node fits a warp: rows of Y <= 32 units): each warp
    // takes tiles of its own, never waiting for the others; else the block takes them.
    const bool by_warp = BY_WARP;
    const unsigned int span = by_warp ? R_WARP : R_BLOCK;  // threads per tile
    const unsigned int X = span >> y_log;                  // results per tile
    const unsigned int t = by_warp ? threadIdx.x & (R_WARP - 1) : threadIdx.x;
    const unsigned int y = yfast ? t & (Y - 1) : t >> (31 - __clz(X));
    const unsigned int x = yfast ? t >> y_log : t & (X - 1);
    // Lanes between neighbouring units of one result, and such units in a warp.
    const unsigned int ys = yfast ? 1 : X;
    const unsigned int wy = ys >= R_WARP ? 1 : (Y < R_WARP / ys ? Y : R_WARP / ys);
    const unsigned int groups = Y / wy;  // warp nodes per node (at most R_WARPS; 1 by warp)
    const r_size leaves = (k + LEAF - 1) / LEAF;
    const r_size units = (leaves + Q - 1) >> q_log;
    const r_size otiles = (results + X - 1) / X;
    const r_size tiles = otiles * nodes;
    const r_size tile0 = by_warp ? (r_size)blockIdx.x * R_WARPS + threadIdx.x / R_WARP : blockIdx.x;
    const r_size stride = by_warp ? (r_size)gridDim.x * R_WARPS : gridDim.x;
    for (r_size tile = tile0; tile < tiles; tile += stride) {
        // Rows: a row's nodes in neighbouring blocks; columns: neighbouring results.
        // (64-bit divisions only where both counts exceed one)
        const r_size ot = nodes == 1    ? tile
                          : otiles == 1 ? 0
                          : yfast       ? tile / nodes
                                        : tile % otiles;
        const r_size j = nodes == 1 ? 0 : otiles == 1 ? tile : yfast ? tile % nodes : tile / otiles;
        const r_size o = ot * X + x;
        const r_size unit = j * Y + y;
        const bool has = o < results && unit < units;
        M v = m_identity();
        if (has) {
            // The unit's leaves, then their tree.
            const r_size base = r_axes_flat(kept, o);
            const r_size first = unit << q_log;
            const r_size held = leaves - first < Q ? leaves - first : Q;
            M u[UNIT];
#pragma unroll
            for (unsigned int l = 0; l < UNIT; ++l) {
                if (l < held) {
                    const r_size k0 = (first + l) * LEAF;
                    const r_size k1 = k0 + LEAF < k ? k0 + LEAF : k;
                    u[l] = r_axes_leaf<T, LIFT, LEAF, VECS>(in, n, base, k0, k1, red);
                }
            }
            v = r_tree_regs(u, (int)held);
        }
        for (unsigned int w = 1; w < wy; w <<= 1) {
            const M right = r_shfl_down(v, w * ys);
            const bool right_has = __shfl_down_sync(R_FULL_MASK, has, w * ys);
            if ((y & (2 * w - 1)) == 0 && right_has) v = m_combine(v, right);
        }
        // A result of no positions: the identity.
        const bool empty = k == 0 && o < results;
        if (groups == 1) {
            if (y == 0 && (has || empty)) out[o * nodes + j] = v;
            continue;
        }
        if (y % wy == 0 && has) s_part[(y / wy) * X + x] = v;
        __syncthreads();
        if (t < X) {
            const r_size oo = ot * X + t;
            const r_size held = units - j * Y < Y ? units - j * Y : Y;
            const int present = (int)((held + wy - 1) / wy);
            if (oo < results) {
                M g[R_WARPS];
#pragma unroll
                for (int i = 0; i < R_WARPS; ++i) {
                    if (i < present) g[i] = s_part[i * X + t];
                }
                out[oo * nodes + j] = present > 0 ? r_tree_regs(g, present) : m_identity();
            }
        }
        __syncthreads();
    }
}

// The kernels' (extent, stride) arguments as dims.
#define R_AXES_DIMS                                                                            \
    const r_axes_dims kept = {{ke0, ke1, ke2, ke3}, {ks0, ks1, ks2, ks3}, (unsigned int)nk};   \
    const r_axes_dims red = {{re0, re1, re2, re3}, {rs0, rs1, rs2, rs3}, (unsigned int)nr}

// The first pass, a leaf per thread, tiles of the block (rows of up to 32 leaves, and any
// other shape with a leaf per thread): the call's items (lifted ones read as r_in). Four
// blocks of 256 per SM (64 registers, a few bytes spilled), as the warps' entry below.
extern "C" __global__ void __launch_bounds__(R_BLOCK, 1024 / R_BLOCK) reduce_axes_portable(
    const r_in* __restrict__ in, r_size n, r_size results, r_size k, r_size y_log, r_size q_log,
    r_size yfast, r_size nodes, r_size nk, r_size ke0, r_size ks0, r_size ke1, r_size ks1,
    r_size ke2, r_size ks2, r_size ke3, r_size ks3, r_size nr, r_size re0, r_size rs0, r_size re1,
    r_size rs1, r_size re2, r_size rs2, r_size re3, r_size rs3, M* __restrict__ out) {
    R_AXES_DIMS;
    r_axes_portable<r_in, true, R_RUN, R_VECS, 1, false>
        (in, n, results, k, (unsigned int)y_log, (unsigned int)q_log, yfast != 0, nodes, kept, red,
         out);
}

// The first pass for long rows: nodes of 32 leaves, tiles of a warp. Four blocks of 256 per
// SM (64 registers, a few bytes spilled): long rows are latency-bound, and the fourth block's
// loads are worth more than the spill (decision 0048).
extern "C" __global__ void __launch_bounds__(R_BLOCK, 1024 / R_BLOCK) reduce_axes_portable_warps(
    const r_in* __restrict__ in, r_size n, r_size results, r_size k, r_size y_log, r_size q_log,
    r_size yfast, r_size nodes, r_size nk, r_size ke0, r_size ks0, r_size ke1, r_size ks1,
    r_size ke2, r_size ks2, r_size ke3, r_size ks3, r_size nr, r_size re0, r_size rs0, r_size re1,
    r_size rs1, r_size re2, r_size rs2, r_size re3, r_size rs3, M* __restrict__ out) {
    R_AXES_DIMS;
    r_axes_portable<r_in, true, R_RUN, R_VECS, 1, true>
        (in, n, results, k, (unsigned int)y_log, (unsigned int)q_log, yfast != 0, nodes, kept, red,
         out);
}

// The first pass, units of up to R_UNIT leaves per thread (columns): more registers, more
// loads in flight.
extern "C" __global__ void __launch_bounds__(R_BLOCK) reduce_axes_portable_units(
    const r_in* __restrict__ in, r_size n, r_size results, r_size k, r_size y_log, r_size q_log,
    r_size yfast, r_size nodes, r_size nk, r_size ke0, r_size ks0, r_size ke1, r_size ks1,
    r_size ke2, r_size ks2, r_size ke3, r_size ks3, r_size nr, r_size re0, r_size rs0, r_size re1,
    r_size rs1, r_size re2, r_size rs2, r_size re3, r_size rs3, M* __restrict__ out) {
    R_AXES_DIMS;
    r_axes_portable<r_in, true, R_RUN, R_VECS, R_UNIT, false>
        (in, n, results, k, (unsigned int)y_log, (unsigned int)q_log, yfast != 0, nodes, kept, red,
         out);
}

// Later passes: the nodes of the pass before (leaves of one, a leaf per thread).
extern "C" __global__ void __launch_bounds__(R_BLOCK) reduce_axes_portable_nodes(
    const M* __restrict__ in, r_size n, r_size results, r_size k, r_size y_log, r_size q_log,
    r_size yfast, r_size nodes, r_size nk, r_size ke0, r_size ks0, r_size ke1, r_size ks1,
    r_size ke2, r_size ks2, r_size ke3, r_size ks3, r_size nr, r_size re0, r_size rs0, r_size re1,
    r_size rs1, r_size re2, r_size rs2, r_size re3, r_size rs3, M* __restrict__ out) {
    R_AXES_DIMS;
    r_axes_portable<M, false, 1, 0, 1, false>
        (in, n, results, k, (unsigned int)y_log, (unsigned int)q_log, yfast != 0, nodes, kept, red,
         out);
}
