// Shuffle: the order-keeping, single-launch fast path (ours).
//
// ORDER INVARIANT. The input is cut into tiles of R_WARP * R_ITEMS consecutive items. Global
// warp g = blockIdx.x * R_WARPS + warp owns a contiguous run of whole tiles, and runs follow
// each other in increasing g (the paper's q/q+1 split, per warp). Inside a tile, lane i owns the
// R_ITEMS consecutive items from i * R_ITEMS and folds them left to right; the lanes combine
// with shuffles at increasing offsets (left-storing tree); a warp's running value is
// (its earlier tiles) ⊕ (this tile); the warps of a block combine in warp order; the last block
// to finish (atomic ticket after a __threadfence) folds the block partials in block order.
// Every m_combine is therefore (earlier items, later items): exact for any associative monoid.
//
// With R_GROUP = k > 0 the block, not the warp, owns a contiguous run of block tiles (R_WARPS
// consecutive warp tiles; warp w takes the w-th): every block then streams one contiguous
// region. The warp values of k consecutive block tiles go to a shared ring in item order
// (tile-major, warp-minor) and warp 0 folds the ring into the block's running value after a
// barrier, so the order is still (earlier) ⊕ (later). Two rings alternate: one barrier per k tiles.
//
// R_ORDER_FREE = 1 (chosen by Auto only for monoids that declare `commutative`) drops the order:
// thread t folds lane chunks t, t + T, t + 2T, ... (grid stride over the whole input, like CUB),
// which is NOT the sequential order and is only correct for commutative monoids.
//
// Input items. The kernel reads items of type r_in and folds m_lift(x, i), i the item's global
// index (see the "input items" section): the monoid values themselves for a plain reduction,
// or any item type a monoid lifts (transform-reduce, no M values in memory).
//
// Parameters: R_BLOCK threads; R_ITEMS items per lane per tile, R_VECS and R_ITEM_SHIFT as
// kernels/lanes.cuh says; R_GROUP.

#define R_WARPS (R_BLOCK / R_WARP)
#define R_TILE ((r_size)R_WARP * R_ITEMS)

// One launch: grid of persistent blocks; `ticket` is 0 on entry and is left 0.
// `partials` holds gridDim.x values. `out[0]` receives the fold of in[0 .. n).
extern "C" __global__ void __launch_bounds__(R_BLOCK)
reduce_shuffle(const r_in* __restrict__ in, r_size n, M* __restrict__ partials,
               unsigned int* __restrict__ ticket, M* __restrict__ out) {
    __shared__ M s_warps[R_WARPS];  // one a warp of the block (large values must fit 48 KiB)
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int warp = threadIdx.x / R_WARP;

    const r_size tiles = (n + R_TILE - 1) / R_TILE;
    const r_size full_tiles = n / R_TILE;
#if R_ORDER_FREE
    // Grid-stride over lane chunks of R_ITEMS items: order-free, commutative monoids only.
    const r_size chunks = n / R_ITEMS;
    const r_size stride = (r_size)gridDim.x * R_BLOCK;
    M acc = m_identity();
    for (r_size c = (r_size)blockIdx.x * R_BLOCK + threadIdx.x; c < chunks; c += stride) {
        acc = m_combine(acc, r_fold_lane_full(in, c * R_ITEMS, n));
    }
    // The last n % R_ITEMS items (up to R_ITEMS - 1, which may be more than the grid's threads).
    for (r_size i = chunks * R_ITEMS + (r_size)blockIdx.x * R_BLOCK + threadIdx.x; i < n; i += stride) {
        acc = m_combine(acc, m_lift(in[i], i));
    }
    (void)tiles;
    (void)full_tiles;
    const M block_value = r_block_combine_warps(r_warp_reduce(acc), s_warps);
#elif R_GROUP == 0
    // This warp's contiguous run of tiles.
    const r_size warps_total = (r_size)gridDim.x * R_WARPS;
    const r_size g = (r_size)blockIdx.x * R_WARPS + warp;
    const r_size q = tiles / warps_total, r = tiles % warps_total;
    r_size tile = g * q + (g < r ? g : r);
    const r_size tile_end = tile + q + (g < r ? 1 : 0);

    M acc = m_identity();  // meaningful in lane 0
    for (; tile < tile_end; ++tile) {
        const r_size first = tile * R_TILE + (r_size)lane * R_ITEMS;
        M v = tile < full_tiles ? r_fold_lane_full(in, first, n) : r_fold_lane_within(in, first, 0, n);
        v = r_warp_reduce(v);
        if (lane == 0) acc = m_combine(acc, v);
    }
    const M block_value = r_block_combine_warps(acc, s_warps);
#else
    // This block's contiguous run of block tiles.
    __shared__ M s_ring[2][R_GROUP * R_WARPS];
    const r_size block_tiles = (tiles + R_WARPS - 1) / R_WARPS;
    const r_size b = blockIdx.x;
    const r_size q = block_tiles / gridDim.x, r = block_tiles % gridDim.x;
    r_size bt = b * q + (b < r ? b : r);
    const r_size bt_end = bt + q + (b < r ? 1 : 0);

    M acc = m_identity();  // meaningful in thread 0
    unsigned int slot = 0, phase = 0;
    for (; bt < bt_end; ++bt) {
        const r_size tile = bt * R_WARPS + warp;
        const r_size first = tile * R_TILE + (r_size)lane * R_ITEMS;
        M v = tile < full_tiles ? r_fold_lane_full(in, first, n) : r_fold_lane_within(in, first, 0, n);
        v = r_warp_reduce(v);
        if (lane == 0) s_ring[phase][slot * R_WARPS + warp] = v;
        if (++slot == R_GROUP || bt + 1 == bt_end) {
            __syncthreads();
            if (warp == 0) {
                const M group = r_warp_fold_run(s_ring[phase], slot * R_WARPS);
                if (lane == 0) acc = m_combine(acc, group);
            }
            slot = 0;
            phase ^= 1;
        }
    }
    const M block_value = acc;
#endif

    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block_value;
    }
    if (!r_last_block(ticket)) return;

    // The last block: thread t folds a contiguous run of partials; then warps, then the block.
    const M total = r_block_fold_run_cg(partials, gridDim.x, s_warps);
    if (threadIdx.x == 0) {
        out[0] = total;
        *ticket = 0;
    }
}
