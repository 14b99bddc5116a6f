// Axes: an array seen as (B, K, C), row-major, reduced along its middle axis K in strips of S
// (the host's passes: catalogue/axes.rs). Three schedules: a thread per (b, strip, c) for C > 1;
// short rows (C = 1, one strip of at most 16 items and 64 bytes) a thread per row, several rows
// at a time; a group of lanes per (row, strip) for longer rows (C = 1) and for few columns (C of
// 2, 4 or 8, side by side), each lane reading 64-byte runs as vectors.
//
// ORDER INVARIANT. Thread t owns one (b, strip s, c) with t = (b * strips + s) * C + c: it
// folds the items (b, k, c) for k in [s * S, min((s + 1) * S, K)) in increasing k, from the
// first of them on, and writes the fold to out[t] (a short row: the whole row, into out[b]).
// The host folds the strips of each (b, c) again in order (a pass with K = strips) until one
// is left, so each result is the fold over k in order. Several reduced axes are one such
// reduction per run of adjacent reduced axes, innermost first: folding the inner coordinates
// first and the outer ones after is the row-major fold, by associativity. Neighbouring threads
// own neighbouring c: for C of a warp or more the loads are coalesced. (The rows schedule's
// own grouping is described at r_axes_rows.)

// Item i of `in` as a value (lifted with its flat index when LIFT).
template <typename T, bool LIFT>
__device__ __forceinline__ M r_axes_item(const T* __restrict__ in, r_size i) {
    return r_item_value<T, LIFT>(in[i], i);
}

// Every (b, s, c) of a pass over the items at `in`.
template <typename T, bool LIFT>
__device__ __forceinline__ void r_axes_strips(const T* __restrict__ in, r_size batches,
                                              r_size k, r_size c, r_size strip, r_size strips,
                                              M* __restrict__ out) {
    const r_size total = batches * strips * c;
    for (r_size t = (r_size)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (r_size)gridDim.x * blockDim.x) {
        const r_size col = t % c, rest = t / c;
        const r_size s = rest % strips, b = rest / strips;
        const r_size k0 = s * strip;
        const r_size k1 = k0 + strip < k ? k0 + strip : k;
        r_size i = (b * k + k0) * c + col;
        M acc = r_axes_item<T, LIFT>(in, i);
        for (r_size kk = k0 + 1; kk < k1; ++kk) {
            i += c;
            acc = m_combine(acc, r_axes_item<T, LIFT>(in, i));
        }
        out[t] = acc;
    }
}

// Short rows (C = 1, one strip, K <= KMAX items of T): a thread per row, folding its items in
// order; each thread takes U rows at a time, a block's rows apart (so that a warp's loads of
// item j of its rows are neighbours), every load of the U rows issued before the first fold.
#define R_AXES_SHORT_BYTES 64
template <typename T, bool LIFT, int KMAX>
__device__ __forceinline__ void r_axes_short_rows(const T* __restrict__ in, r_size rows, r_size k,
                                                  M* __restrict__ out) {
    constexpr int U = R_AXES_SHORT_BYTES / (KMAX * (int)sizeof(T)) > 1
                          ? R_AXES_SHORT_BYTES / (KMAX * (int)sizeof(T)) : 1;
    const r_size span = (r_size)blockDim.x * U;
    for (r_size base = (r_size)blockIdx.x * span + threadIdx.x; base < rows;
         base += (r_size)gridDim.x * span) {
        T x[U][KMAX];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const r_size row = base + (r_size)u * blockDim.x;
#pragma unroll
            for (int j = 0; j < KMAX; ++j) {
                if (row < rows && j < k) x[u][j] = in[row * k + j];
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const r_size row = base + (r_size)u * blockDim.x;
            if (row < rows) {
                M acc = r_item_value<T, LIFT>(x[u][0], row * k);
#pragma unroll
                for (int j = 1; j < KMAX; ++j) {
                    if (j < k) acc = m_combine(acc, r_item_value<T, LIFT>(x[u][j], row * k + j));
                }
                out[row] = acc;
            }
        }
    }
}

// Short rows of up to KMAX items (the smallest power of two from 1 that holds k, as long as
// R_AXES_SHORT_BYTES hold KMAX items; the host launches them only then).
template <typename T, bool LIFT, int KMAX = 1>
__device__ __forceinline__ void r_axes_short(const T* __restrict__ in, r_size rows, r_size k,
                                             M* __restrict__ out) {
    if constexpr (KMAX <= 16 && KMAX * sizeof(T) <= R_AXES_SHORT_BYTES) {
        if (k > KMAX) r_axes_short<T, LIFT, KMAX * 2>(in, rows, k, out);
        else r_axes_short_rows<T, LIFT, KMAX>(in, rows, k, out);
    }
}

// Rows (C = 1), and few columns (C = CC of 2 to 8: each row of K then holds CC neighbouring
// items, one per column, folded side by side): a group of G lanes (G a power of two up to 32,
// 32 / G groups per warp) owns work item w = b * strips + s and folds the rows
// [s * S, min((s + 1) * S, K)) of batch b in tiles of G * L rows: lane l of the group folds
// the L rows from l * L of the tile in order, each column by itself (neighbouring lanes read
// neighbouring runs of L * CC items), the group's values are combined column by column by a
// left-storing shuffle tree (lane i takes lane i + o's value, o = 1, 2, 4, .. < G: lanes
// [i, i + 2o) in order; the lanes with items are a prefix of the group, and a lane without
// takes nothing), and the group's lane 0 folds the tiles in order and writes
// out[w * CC + c]. With R_ORDER_FREE (commutative monoids) each lane folds its runs of every
// tile itself and the tree runs once, at the end of the strip: the order of the items is then
// not kept. Every lane of a warp runs the same loops (the shuffles need the whole warp): a
// group with fewer tiles, or past the last item, runs them without items.

// The left-storing shuffle tree over the lanes of a group of `group` with a value (`has`;
// they are a prefix of the group): its lane 0 ends with their fold, lane 0 first.
__device__ __forceinline__ void r_axes_lanes(M& v, bool has, unsigned int lane, unsigned int group) {
    for (unsigned int o = 1; o < group; o <<= 1) {
        const M right = r_shfl_down(v, o);
        const bool right_has = __shfl_down_sync(R_FULL_MASK, has, o);
        if ((lane & (2 * o - 1)) == 0 && right_has) v = m_combine(v, right);
    }
}

// A lane's run of R_AXES_RUN_ROWS(T, CC) whole rows fills 64 bytes (one row at least), which it
// reads as 16-byte vectors at any offset (inside the n items at `in`; else the caller reads item
// by item). With the order kept and several columns, at least R_AXES_KEPT_ROWS rows (each tile
// runs a shuffle tree per column, which the rows of a run pay for): up to 128 bytes.
#define R_AXES_BASE_ROWS(T, CC) (64 / (int)(sizeof(T) * (CC)) > 1 ? 64 / (int)(sizeof(T) * (CC)) : 1)
#define R_AXES_RUN_ROWS(T, CC)                                                        \
    (!R_ORDER_FREE && (CC) > 1 && R_AXES_BASE_ROWS(T, CC) < R_AXES_KEPT_ROWS ? R_AXES_KEPT_ROWS \
                                                                          : R_AXES_BASE_ROWS(T, CC))
#define R_AXES_RUN_BYTES(T, CC) (R_AXES_RUN_ROWS(T, CC) * (CC) * (int)sizeof(T))
// Whether the host sends rows of CC columns of T to the few-columns kernels (runs of up to 128
// bytes) whose lane run and column values take up to R_AXES_COLS_SHORT_BYTES (LONG false:
// reduce_axes_cols) or more (LONG: reduce_axes_cols_long).
#define R_AXES_COLS_FIT(T, CC, LONG)           \
    (R_AXES_RUN_BYTES(T, CC) <= 128 &&         \
     (R_AXES_RUN_BYTES(T, CC) + (CC) * (int)sizeof(M) > R_AXES_COLS_SHORT_BYTES) == (LONG))

// Whether a lane's runs can be read as vectors: its run from item i (`left` rows to the end of
// its strip, `per_lane` rows a run) and the ones after it, `step` items apart (whole runs of
// whole vectors: the same offset from a 16-byte boundary), are, up to the run from item `last`,
// runs of R_AXES_RUN_ROWS whole rows whose vectors lie inside the n items at `in`. False where
// not even the first one is (or the items' offset does not allow vectors).
template <typename T, int CC>
__device__ __forceinline__ bool r_axes_vector_runs(const T* __restrict__ in, r_size n, r_size i,
                                                   r_size left, r_size per_lane, r_size& last) {
    constexpr int ROWS = R_AXES_RUN_ROWS(T, CC);
    constexpr int VECS = ROWS * CC * (int)sizeof(T) / 16;
    const unsigned int shift = (unsigned int)((unsigned long long)(in + i) & 15u);
    // Bytes read from the first vector's start (one more vector where shifted), and the items'
    // bytes, both from `in`: the run from item j reads from j * sizeof(T) - shift.
    const r_size reads = 16ull * (VECS + (shift != 0)), bytes = n * sizeof(T);
    if (per_lane != ROWS || left < per_lane || shift % alignof(T) != 0 || i * sizeof(T) < shift ||
        bytes + shift < reads)
        return false;
    const r_size whole = i + (left - per_lane) * CC;            // the last run of ROWS rows
    const r_size inside = (bytes + shift - reads) / sizeof(T);  // the last inside the items
    last = whole < inside ? whole : inside;
    return i <= last;
}

// v[c] = the fold, in order, of column c of the run of R_AXES_RUN_ROWS rows from item i, read as
// 16-byte vectors (where r_axes_vector_runs allows).
template <typename T, bool LIFT, int CC>
__device__ __forceinline__ void r_axes_run_fold(const T* __restrict__ in, r_size i, M (&v)[CC]) {
    constexpr int ROWS = R_AXES_RUN_ROWS(T, CC);
    constexpr int VECS = ROWS * CC * (int)sizeof(T) / 16;
    const void* at = in + i;
    union {
        uint4 q[VECS];
        T m[ROWS * CC];
    } t;
    r_load_shifted(at, (unsigned int)((unsigned long long)at & 15u), t.q,
                   [](const uint4* q) { return __ldcs(q); });
#pragma unroll
    for (int c = 0; c < CC; ++c) v[c] = r_item_value<T, LIFT>(t.m[c], i + c);
#pragma unroll
    for (int r = 1; r < ROWS; ++r) {
#pragma unroll
        for (int c = 0; c < CC; ++c)
            v[c] = m_combine(v[c], r_item_value<T, LIFT>(t.m[r * CC + c], i + r * CC + c));
    }
}

// Whether a run of R_AXES_RUN_ROWS rows fills whole 16-byte vectors.
template <typename T, int CC>
__device__ constexpr bool r_axes_runs_fill_vectors() {
    return R_AXES_RUN_ROWS(T, CC) * CC * (int)sizeof(T) % 16 == 0;
}

template <typename T, bool LIFT, int CC>
__device__ __forceinline__ void r_axes_rows(const T* __restrict__ in, r_size rows, r_size k,
                                            r_size strip, r_size strips, r_size per_lane,
                                            r_size group, M* __restrict__ out) {
    const unsigned int lane = threadIdx.x & (R_WARP - 1);
    const unsigned int g = (unsigned int)group;
    const unsigned int gl = lane & (g - 1);
    const r_size per_warp = R_WARP / g, total = rows * strips, tile = group * per_lane;
    const r_size warps = ((r_size)gridDim.x * blockDim.x) / R_WARP;
    const r_size n = rows * k * CC;
    const r_size step = tile * CC;  // items from a lane's run to its run of the next tile
    for (r_size ww = ((r_size)blockIdx.x * blockDim.x + threadIdx.x) / R_WARP; ww * per_warp < total;
         ww += warps) {
        const r_size w = ww * per_warp + lane / g;
        const bool valid = w < total;
        r_size b = w, s = 0;
        if (strips > 1) {
            b = w / strips;
            s = w % strips;
        }
        const r_size k0 = s * strip;
        const r_size k1 = !valid ? k0 : k0 + strip < k ? k0 + strip : k;
        // The warp's end of the loop: its groups' strips may differ (the last one of a row is
        // shorter), so with several groups the loop runs to the furthest tile of any.
        r_size end = k1 - k0;
        if (g < R_WARP) {
#pragma unroll
            for (unsigned int o = 1; o < R_WARP; o <<= 1) {
                const r_size other = __shfl_xor_sync(R_FULL_MASK, end, o);
                end = other > end ? other : end;
            }
        }
        M acc[CC];
#pragma unroll
        for (int c = 0; c < CC; ++c) acc[c] = m_identity();
        bool lane_has = false;  // R_ORDER_FREE: whether this lane's acc holds items
        // This lane's run of each tile: the rows from `first` (k0 + gl * per_lane in the first
        // tile), `left0` of them up to k1 from the first tile's (0: no run), its first item at i.
        const r_size first = k0 + gl * per_lane;
        const r_size left0 = first < k1 ? k1 - first : 0;
        r_size i = (b * k + first) * CC;
        // Takes a tile's run (v, where `has`) into acc.
        auto take = [&](M(&v)[CC], bool has, r_size at) {
#pragma unroll
            for (int c = 0; c < CC; ++c) {
                if (!has) v[c] = m_identity();
                if constexpr (R_ORDER_FREE) {
                    if (has) acc[c] = lane_has ? m_combine(acc[c], v[c]) : v[c];
                } else {
                    r_axes_lanes(v[c], has, lane, g);
                    if (gl == 0 && has) acc[c] = at == 0 ? v[c] : m_combine(acc[c], v[c]);
                }
            }
            lane_has = lane_has || has;
        };
        r_size at = 0;
        if constexpr (r_axes_runs_fill_vectors<T, CC>()) {
            // The bulk of the rows: tiles in which every lane of the warp has a run of vectors,
            // with one comparison a tile.
            r_size last = 0;
            const bool vectors = r_axes_vector_runs<T, CC>(in, n, i, left0, per_lane, last);
            while (at < end && __ballot_sync(R_FULL_MASK, vectors && i <= last) == R_FULL_MASK) {
                M v[CC];
                r_axes_run_fold<T, LIFT, CC>(in, i, v);
                take(v, true, at);
                at += tile;
                i += step;
            }
        }
        // The rest: runs cut by the strip's end, runs at the ends of the items, lanes without.
        for (r_size left = left0 > at ? left0 - at : 0; at < end;
             at += tile, i += step, left = left > tile ? left - tile : 0) {
            const bool has = left != 0;
            M v[CC];
            bool read = false;
            if constexpr (r_axes_runs_fill_vectors<T, CC>()) {
                r_size last = 0;
                read = has && r_axes_vector_runs<T, CC>(in, n, i, left, per_lane, last);
                if (read) r_axes_run_fold<T, LIFT, CC>(in, i, v);
            }
            if (has && !read) {
                const r_size len = left < per_lane ? left : per_lane;
#pragma unroll
                for (int c = 0; c < CC; ++c) v[c] = r_axes_item<T, LIFT>(in, i + c);
                for (r_size j = 1; j < len; ++j) {
#pragma unroll
                    for (int c = 0; c < CC; ++c)
                        v[c] = m_combine(v[c], r_axes_item<T, LIFT>(in, i + j * CC + c));
                }
            }
            take(v, has, at);
        }
#pragma unroll
        for (int c = 0; c < CC; ++c) {
            if constexpr (R_ORDER_FREE) r_axes_lanes(acc[c], lane_has, lane, g);
            if (gl == 0 && valid) out[w * CC + c] = acc[c];
        }
    }
}

// A few columns: r_axes_rows for CC = cols (2, 4 or 8, where R_AXES_COLS_FIT; the host
// launches no other).
template <typename T, bool LIFT, bool LONG>
__device__ __forceinline__ void r_axes_cols(const T* __restrict__ in, r_size rows, r_size k,
                                            r_size strip, r_size strips, r_size per_lane,
                                            r_size group, r_size cols, M* __restrict__ out) {
    if constexpr (R_AXES_COLS_FIT(T, 2, LONG))
        if (cols == 2) r_axes_rows<T, LIFT, 2>(in, rows, k, strip, strips, per_lane, group, out);
    if constexpr (R_AXES_COLS_FIT(T, 4, LONG))
        if (cols == 4) r_axes_rows<T, LIFT, 4>(in, rows, k, strip, strips, per_lane, group, out);
    if constexpr (R_AXES_COLS_FIT(T, 8, LONG))
        if (cols == 8) r_axes_rows<T, LIFT, 8>(in, rows, k, strip, strips, per_lane, group, out);
}

// The first pass: the call's items (lifted items read as r_in).
extern "C" __global__ void __launch_bounds__(256)
reduce_axes(const r_in* __restrict__ in, r_size batches, r_size k, r_size c, r_size strip,
            r_size strips, M* __restrict__ out) {
    r_axes_strips<r_in, true>(in, batches, k, c, strip, strips, out);
}

// Later passes: monoid values (strips, or a pass's results).
extern "C" __global__ void __launch_bounds__(256)
reduce_axes_values(const M* __restrict__ in, r_size batches, r_size k, r_size c, r_size strip,
                   r_size strips, M* __restrict__ out) {
    r_axes_strips<M, false>(in, batches, k, c, strip, strips, out);
}

// Short rows (c = 1, one strip of k <= 16 items in R_AXES_SHORT_BYTES): the first pass, and
// later ones (kernels of their own: their loads in flight take registers the others need for
// a full SM).
extern "C" __global__ void __launch_bounds__(256)
reduce_axes_short(const r_in* __restrict__ in, r_size rows, r_size k, M* __restrict__ out) {
    r_axes_short<r_in, true>(in, rows, k, out);
}

extern "C" __global__ void __launch_bounds__(256)
reduce_axes_short_values(const M* __restrict__ in, r_size rows, r_size k, M* __restrict__ out) {
    r_axes_short<M, false>(in, rows, k, out);
}

// The rows schedule: the first pass, and later ones.
extern "C" __global__ void __launch_bounds__(256)
reduce_axes_rows(const r_in* __restrict__ in, r_size rows, r_size k, r_size strip,
                 r_size strips, r_size per_lane, r_size group, M* __restrict__ out) {
    r_axes_rows<r_in, true, 1>(in, rows, k, strip, strips, per_lane, group, out);
}

extern "C" __global__ void __launch_bounds__(256)
reduce_axes_rows_values(const M* __restrict__ in, r_size rows, r_size k, r_size strip,
                        r_size strips, r_size per_lane, r_size group, M* __restrict__ out) {
    r_axes_rows<M, false, 1>(in, rows, k, strip, strips, per_lane, group, out);
}

// A few columns (the rows schedule over rows of `cols` items, one per column): the first pass,
// and later ones; four blocks of 256 per SM (64 registers; the path of 8 columns spills a few
// words): decision 0050.
extern "C" __global__ void __launch_bounds__(256, 4)
reduce_axes_cols(const r_in* __restrict__ in, r_size rows, r_size k, r_size strip, r_size strips,
                 r_size per_lane, r_size group, r_size cols, M* __restrict__ out) {
    r_axes_cols<r_in, true, false>(in, rows, k, strip, strips, per_lane, group, cols, out);
}

extern "C" __global__ void __launch_bounds__(256, 4)
reduce_axes_cols_values(const M* __restrict__ in, r_size rows, r_size k, r_size strip,
                        r_size strips, r_size per_lane, r_size group, r_size cols,
                        M* __restrict__ out) {
    r_axes_cols<M, false, false>(in, rows, k, strip, strips, per_lane, group, cols, out);
}

// A few columns whose lane run and column values pass R_AXES_COLS_SHORT_BYTES (the order kept:
// R_AXES_KEPT_ROWS rows of 4 columns of 8-byte values, of 2 of 16; order-free: 8 columns of 8
// bytes): three blocks of 256 per SM (80 registers; under 64 they spill).
extern "C" __global__ void __launch_bounds__(256, 3)
reduce_axes_cols_long(const r_in* __restrict__ in, r_size rows, r_size k, r_size strip,
                      r_size strips, r_size per_lane, r_size group, r_size cols,
                      M* __restrict__ out) {
    r_axes_cols<r_in, true, true>(in, rows, k, strip, strips, per_lane, group, cols, out);
}

extern "C" __global__ void __launch_bounds__(256, 3)
reduce_axes_cols_long_values(const M* __restrict__ in, r_size rows, r_size k, r_size strip,
                             r_size strips, r_size per_lane, r_size group, r_size cols,
                             M* __restrict__ out) {
    r_axes_cols<M, false, true>(in, rows, k, strip, strips, per_lane, group, cols, out);
}

// out[0 .. count) = the identity (results of a reduced extent of 0).
extern "C" __global__ void __launch_bounds__(256)
axes_fill_identity(M* __restrict__ out, r_size count) {
    for (r_size t = (r_size)blockIdx.x * blockDim.x + threadIdx.x; t < count;
         t += (r_size)gridDim.x * blockDim.x)
        out[t] = m_identity();
}
