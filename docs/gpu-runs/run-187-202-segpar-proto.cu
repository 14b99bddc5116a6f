// Prototype (not part of the library, not built by CI): CSR segmented sum, segment-parallel tiles, as
// measured in runs 187-202 (docs/gpu-results.md, Session 19; run 202 with the s_warp race fixed).
// Each block owns a contiguous run of 4096-item tiles. Per tile: the items (loaded one tile
// ahead into registers) are stored to shared memory; thread j takes R consecutive segments
// (w + R j .. + R) of the segments touching the tile (in batches of 256 R) and folds their
// pieces left to right from shared memory; one barrier per tile. A tile no segment starts in
// folds its items into the block's carry. Cross-block records joined by the last block.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 segpar.cu -o segpar && ./segpar DIR
#include <cub/cub.cuh>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <string>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

constexpr int BLK = 256, ITEMS = 16, TILE = BLK * ITEMS, WARPS = BLK / 32;

template <class T> struct Rec { T entry_val, exit_val; unsigned entry_seg, exit_seg, has_entry, pad; };

template <class T, int R, int UNROLL>
__global__ void __launch_bounds__(BLK, 4)
segpar(const T* __restrict__ in, unsigned n, const unsigned* __restrict__ off, unsigned segs,
       T* __restrict__ out, Rec<T>* __restrict__ rec, unsigned* __restrict__ ticket, unsigned tiles) {
  __shared__ __align__(16) T s_items[2][TILE];
  __shared__ unsigned s_L[2], s_W[3];
  __shared__ T s_carry[2];
  __shared__ unsigned s_flag[2];
  __shared__ T s_warp[2][WARPS];
  __shared__ T s_entry;
  __shared__ unsigned s_has_entry, s_is_last;
  const unsigned b = blockIdx.x, G = gridDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const unsigned tb = (unsigned)((unsigned long long)tiles * b / G), te = (unsigned)((unsigned long long)tiles * (b + 1) / G);
  T it[ITEMS];
  auto load = [&](unsigned tile) {
    const unsigned a = tile * TILE + tid * ITEMS;
    if (a + ITEMS <= n) {
      const uint4* p = reinterpret_cast<const uint4*>(in + a);
#pragma unroll
      for (int k = 0; k < ITEMS / 4; ++k) { uint4 v = __ldg(p + k); memcpy(&it[4 * k], &v, 16); }
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) it[i] = a + i < n ? in[a + i] : T(0);
    }
  };
  // A tile's entries: thread j's w + R j .. + R (n past the array), and off[w + 1] (every
  // thread: whether a segment starts in the tile, without a barrier).
  struct Ents { unsigned e[R + 1]; unsigned fn; };
  auto load_offsets = [&](unsigned w) {
    Ents x;
    const unsigned base = w + R * tid;
#pragma unroll
    for (int k = 0; k <= R; ++k) x.e[k] = base + k <= segs ? __ldg(off + base + k) : n;
    x.fn = w + 1 <= segs ? __ldg(off + w + 1) : n;
    return x;
  };
  // The segment of item `last` of a tile starting at segment w, from its entries E (batches past
  // the first read here): written to *slot by the thread that holds it.
  auto find_last = [&](unsigned w, const Ents& E, unsigned last, unsigned* slot) {
    unsigned q = 0;
    unsigned f[R + 1];
#pragma unroll
    for (int k = 0; k <= R; ++k) f[k] = E.e[k];
    for (;;) {
      const unsigned bs = w + q * R * BLK + R * tid;
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (bs + k < segs && f[k] <= last && last < f[k + 1]) *slot = bs + k;
      const unsigned nb = w + (q + 1) * R * BLK;
      if (!(nb < segs && __ldg(off + nb) <= last)) break;
      ++q;
#pragma unroll
      for (int k = 0; k <= R; ++k) f[k] = bs + R * BLK + k <= segs ? __ldg(off + bs + R * BLK + k) : n;
    }
    return q;  // batches past the first
  };
  if (tb < te) load(tb);
  if (warp == 0) {
    // The segment of item tb * TILE - 1: last s < segs with off[s] <= pos, by a 33-ary search
    // of the whole warp (a handful of dependent loads where a binary search takes ~20).
    unsigned w0 = 0;
    if (tb > 0) {
      const unsigned pos = tb * TILE - 1;
      unsigned lo = 0, hi = segs;  // off[lo] <= pos < off[hi] (off[segs] = n)
      while (hi - lo > 1) {
        const unsigned span = hi - lo;
        const unsigned probe = span <= 33 ? lo + 1 + lane : lo + (unsigned)((unsigned long long)span * (lane + 1) / 33);
        const bool valid = probe < hi;
        const bool le = valid && __ldg(off + probe) <= pos;
        const unsigned below = __ballot_sync(0xffffffffu, le), inside = __ballot_sync(0xffffffffu, valid);
        const int last_le = below ? 31 - __clz(below) : -1;
        const unsigned new_lo = last_le >= 0 ? __shfl_sync(0xffffffffu, probe, last_le) : lo;
        const int first_gt = last_le + 1;
        const bool has_gt = first_gt < 32 && ((inside >> first_gt) & 1u);
        const unsigned new_hi = __shfl_sync(0xffffffffu, probe, has_gt ? first_gt : 0);
        lo = new_lo;
        hi = has_gt ? new_hi : hi;
      }
      w0 = lo;
    }
  if (tid == 0) {
    s_L[1] = w0;
    s_carry[0] = T(0);
    s_flag[0] = tb == 0;
    s_has_entry = 0;
    s_entry = T(0);
  }
  }
  __syncthreads();
  // s_W[k % 3]: the first segment of the block's k-th tile (the segment of the item before it).
  const unsigned entry_seg = s_L[1];
  if (tid == 0) s_W[0] = entry_seg;
  Ents E0 = load_offsets(entry_seg), E1 = E0;
  unsigned qcur = tb < te ? find_last(entry_seg, E0, min(tb * TILE + TILE, n) - 1, &s_W[1]) : 0u;
  __syncthreads();
  if (tb + 1 < te) E1 = load_offsets(s_W[1]);
  for (unsigned tile = tb; tile < te; ++tile) {
    const unsigned k3 = (tile - tb) % 3, par = (tile - tb) & 1;
    const unsigned t0 = tile * TILE;
    const unsigned last = min(t0 + TILE, n) - 1;
    const unsigned w = s_W[k3];
    const unsigned k3n = k3 == 2 ? 0 : k3 + 1, k3nn = k3n == 2 ? 0 : k3n + 1;
    // The next tile's last segment (its entries came a tile ago): the tile after next's first.
    const unsigned q = qcur;
    if (tile + 1 < te) qcur = find_last(s_W[k3n], E1, min(t0 + 2 * TILE, n) - 1, &s_W[k3nn]);
    if (E0.fn > last) {
      // No segment starts in the tile (w is the segment of its last item): fold into the carry.
      T v = T(0);
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) if (t0 + tid * ITEMS + i <= last) v = v + it[i];
      if (tile + 1 < te) load(tile + 1);
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) { T y = __shfl_down_sync(0xffffffffu, v, o); if (lane + o < 32) v = v + y; }
      if (lane == 0) s_warp[par][warp] = v;
      __syncthreads();
      if (tile + 2 < te) E0 = load_offsets(s_W[k3nn]); else E0 = E1;
      { Ents t = E0; E0 = E1; E1 = t; }
      if (tid == 0) {
        T c = s_carry[par];
#pragma unroll
        for (int k = 0; k < WARPS; ++k) c = c + s_warp[par][k];
        s_carry[par ^ 1] = c;
        s_flag[par ^ 1] = s_flag[par];
      }
      continue;
    }
    // Items to shared memory, 16-byte chunk c at c ^ ((c >> 3) & 3) (conflict-free stores);
    // the next tile's loads.
    {
      uint4* d = reinterpret_cast<uint4*>(&s_items[par][0]);
#pragma unroll
      for (int k = 0; k < ITEMS / 4; ++k) {
        const unsigned c = tid * (ITEMS / 4) + k;
        uint4 v; memcpy(&v, &it[4 * k], 16); d[c ^ ((c >> 3) & 3)] = v;
      }
    }
    if (tile + 1 < te) load(tile + 1);
    __syncthreads();
    const Ents ecur = E0;
    E0 = E1;
    if (tile + 2 < te) {
      const unsigned wn = s_W[k3nn];
      E1 = load_offsets(wn);
      // The offsets of the tiles after those, asked of L2.
      const unsigned sk = wn - w + 1, from = (wn + sk / 2) & ~31u, lines = min((2 * sk + 31) / 32 + 1, 64u);
      if (tid < lines && from + 32 * tid <= segs)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(off + from + 32 * tid));
    }
    const char* sb = reinterpret_cast<const char*>(&s_items[par][0]);
    for (unsigned qq = 0; qq <= q; ++qq) {
      const unsigned bs = w + qq * R * BLK + R * tid;
      unsigned e[R + 1];
#pragma unroll
      for (int k = 0; k <= R; ++k) e[k] = qq == 0 ? ecur.e[k] : (bs + k <= segs ? __ldg(off + bs + k) : n);
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const unsigned sg = bs + k;
        if (sg >= segs) break;
        const unsigned o = e[k], o1 = e[k + 1];
        if (sg != w && o > last) break;  // past the tile
        const unsigned a = max(o, t0) - t0, z = min(o1, last + 1) - t0;
        T v = T(0);
        if (a < z) {
          // 16-byte chunks c of the piece: chunk c at c ^ ((c >> 3) & 3); the first and last
          // masked (the identity past the piece), the ones between folded whole.
          auto chunk = [&](unsigned c, T (&x)[4]) {
            const uint4 u = *reinterpret_cast<const uint4*>(sb + 16u * (c ^ ((c >> 3) & 3u)));
            memcpy(x, &u, 16);
          };
          const unsigned c0 = a >> 2, cl = (z - 1) >> 2;
          T x[4];
          chunk(c0, x);
#pragma unroll
          for (int i = 0; i < 4; ++i) v = v + ((4 * c0 + i >= a && 4 * c0 + i < z) ? x[i] : T(0));
#pragma unroll 2
          for (unsigned c = c0 + 1; c < cl; ++c) {
            chunk(c, x);
#pragma unroll
            for (int i = 0; i < 4; ++i) v = v + x[i];
          }
          if (cl > c0) {
            chunk(cl, x);
#pragma unroll
            for (int i = 0; i < 4; ++i) v = v + (4 * cl + i < z ? x[i] : T(0));
          }
        }
        const bool closed = o1 <= last;  // the last item's segment is carried
        if (sg == w) {
          const T c = s_carry[par] + v;  // w closes here (a segment starts in the tile)
          if (s_flag[par]) out[sg] = c;
          else { s_entry = c; s_has_entry = 1; }
        } else if (closed) {
          out[sg] = v;
        } else {  // sg == L
          s_carry[par ^ 1] = v; s_flag[par ^ 1] = 1;
        }
      }
    }
    if (last + 1 == n) {  // trailing empty segments
      const unsigned L = s_W[k3n];
      for (unsigned sg = L + 1 + tid; sg < segs; sg += BLK) out[sg] = T(0);
    }
  }
  __syncthreads();
  if (tid == 0) {
    const unsigned par = (te - tb) & 1;
    Rec<T> r;
    r.entry_val = s_entry; r.has_entry = s_has_entry; r.entry_seg = entry_seg;
    r.exit_val = s_carry[par]; r.exit_seg = s_W[(te - tb) % 3]; r.pad = 0;
    if (tb == 0) r.has_entry = 2;  // block 0: no entry
    rec[b] = r;
    __threadfence();
    s_is_last = atomicAdd(ticket, 1u) == G - 1;
  }
  __syncthreads();
  if (!s_is_last) return;
  __threadfence();
  // The join: an inclusive segmented scan over the blocks' exit values (a block with a segment
  // start restarts it), then each block's entry segment gets (scan before it) + its entry part.
  struct P { T v; unsigned f; };
  struct Op { __device__ P operator()(const P& a, const P& b) const { return b.f ? b : P{a.v + b.v, a.f}; } };
  typedef cub::BlockScan<P, BLK> Scan;
  __shared__ typename Scan::TempStorage s_scan;
  constexpr int RPT = 4;  // records per thread (grid <= 1024)
  P x[RPT];
#pragma unroll
  for (int k = 0; k < RPT; ++k) {
    const unsigned r = tid * RPT + k;
    x[k] = r < G ? P{__ldcg(&rec[r].exit_val), __ldcg(&rec[r].has_entry) != 0u} : P{T(0), 0u};
  }
  Scan(s_scan).InclusiveScan(x, x, Op());
  P* incl = reinterpret_cast<P*>(&s_items[0][0]);
#pragma unroll
  for (int k = 0; k < RPT; ++k) incl[tid * RPT + k] = x[k];
  __syncthreads();
  for (unsigned r = tid + 1; r < G; r += BLK)
    if (__ldcg(&rec[r].has_entry) == 1u) out[__ldcg(&rec[r].entry_seg)] = incl[r - 1].v + __ldcg(&rec[r].entry_val);
  if (tid == 0) { out[__ldcg(&rec[G - 1].exit_seg)] = incl[G - 1].v; *ticket = 0; }
}

template <class F> float median_ms(F f, int reps = 20) {
  cudaEvent_t s, e; CK(cudaEventCreate(&s)); CK(cudaEventCreate(&e));
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(s)); f(); CK(cudaEventRecord(e)); CK(cudaEventSynchronize(e));
    float ms; CK(cudaEventElapsedTime(&ms, s, e)); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T, int R, int U>
float run_seg(const T* d_in, unsigned n, const unsigned* d_off, unsigned segs, T* d_out, int grid, Rec<T>* rec, unsigned* ticket) {
  const unsigned tiles = (n + TILE - 1) / TILE;
  const int g = std::min<unsigned>(grid, tiles);
  return median_ms([&] { segpar<T, R, U><<<g, BLK>>>(d_in, n, d_off, segs, d_out, rec, ticket, tiles); });
}

template <int R, int U>
bool check_u32(const std::vector<unsigned>& offs, int grid, Rec<unsigned>* rec, unsigned* ticket) {
  const unsigned segs = offs.size() - 1, n = offs.back();
  std::vector<unsigned> h(n);
  for (unsigned i = 0; i < n; ++i) h[i] = i * 2654435761u + (i >> 7);
  unsigned *d_in, *d_off, *d_out;
  CK(cudaMalloc(&d_in, n * 4ull)); CK(cudaMalloc(&d_off, offs.size() * 4ull)); CK(cudaMalloc(&d_out, segs * 4ull + 4));
  CK(cudaMemcpy(d_in, h.data(), n * 4ull, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4ull, cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0xab, segs * 4ull));
  const unsigned tiles = (n + TILE - 1) / TILE;
  segpar<unsigned, R, U><<<std::min<unsigned>(grid, tiles), BLK>>>(d_in, n, d_off, segs, d_out, rec, ticket, tiles);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> got(segs);
  CK(cudaMemcpy(got.data(), d_out, segs * 4ull, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (unsigned s = 0; s < segs; ++s) {
    unsigned v = 0;
    for (unsigned i = offs[s]; i < offs[s + 1]; ++i) v += h[i];
    if (v != got[s]) { if (!bad) first = s; ++bad; }
  }
  if (bad) printf("  MISMATCH R=%d: %zu bad, first %zu\n", R, bad, first);
  CK(cudaFree(d_in)); CK(cudaFree(d_off)); CK(cudaFree(d_out));
  return bad == 0;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp/reduce-layouts";
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, segpar<float, 1, 4>, BLK, 0));
  const int grid = per_sm * prop.multiProcessorCount;
  printf("device %s sms %d blocks/SM %d\n", prop.name, prop.multiProcessorCount, per_sm);
  std::vector<std::string> files;
  if (FILE* p = popen((std::string("ls ") + dir).c_str(), "r")) {
    char line[512];
    while (fgets(line, sizeof line, p)) {
      std::string f(line);
      while (!f.empty() && (f.back() == '\n')) f.pop_back();
      const bool sweep = argc > 2 && std::string(argv[2]) == "sweep";
      if (f.size() > 4 && f.substr(f.size() - 4) == ".u32" && (f.rfind("sweep", 0) == 0) == sweep) files.push_back(f);
    }
    pclose(p);
  }
  Rec<float>* rec; CK(cudaMalloc(&rec, grid * sizeof(Rec<float>)));
  Rec<unsigned>* recu; CK(cudaMalloc(&recu, grid * sizeof(Rec<unsigned>)));
  unsigned* ticket; CK(cudaMalloc(&ticket, 4)); CK(cudaMemset(ticket, 0, 4));
  for (auto& f : files) {
    FILE* fi = fopen((std::string(dir) + "/" + f).c_str(), "rb");
    std::vector<unsigned> offs; unsigned v;
    while (fread(&v, 4, 1, fi) == 1) offs.push_back(v);
    fclose(fi);
    const unsigned segs = offs.size() - 1, n = offs.back();
    const bool sweep = argc > 2 && std::string(argv[2]) == "sweep";
    if (n != 30u * (1u << 20) && !sweep) continue;
    if (argc > 2 && !sweep) {  // profile mode: one launch of R = 1 on the named layout
      if (f.find(argv[2]) == std::string::npos) continue;
      float *d_in, *d_out; unsigned* d_off;
      CK(cudaMalloc(&d_in, n * 4ull)); CK(cudaMalloc(&d_off, offs.size() * 4ull)); CK(cudaMalloc(&d_out, segs * 4ull + 4));
      CK(cudaMemset(d_in, 0, n * 4ull));
      CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4ull, cudaMemcpyHostToDevice));
      const unsigned tiles = (n + TILE - 1) / TILE;
      segpar<float, 1, 8><<<std::min<unsigned>(grid, tiles), BLK>>>(d_in, n, d_off, segs, d_out, rec, ticket, tiles);
      CK(cudaDeviceSynchronize());
      printf("profiled %s\n", f.c_str());
      continue;
    }
    bool ok = sweep ? check_u32<1, 4>(offs, grid, recu, ticket)
                    : check_u32<1, 4>(offs, grid, recu, ticket) & check_u32<2, 4>(offs, grid, recu, ticket) &
                          check_u32<4, 4>(offs, grid, recu, ticket);
    float *d_in, *d_out; unsigned* d_off;
    CK(cudaMalloc(&d_in, n * 4ull)); CK(cudaMalloc(&d_off, offs.size() * 4ull)); CK(cudaMalloc(&d_out, segs * 4ull + 4));
    std::vector<float> hf(n);
    for (unsigned i = 0; i < n; ++i) hf[i] = 1.0f + (float)((i * 2654435761u) >> 9) / (1 << 23);
    CK(cudaMemcpy(d_in, hf.data(), n * 4ull, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4ull, cudaMemcpyHostToDevice));
    float* d_sum; CK(cudaMalloc(&d_sum, 4));
    size_t tb = 0; void* tmp = nullptr;
    cub::DeviceReduce::Sum(tmp, tb, d_in, d_sum, (int64_t)n); CK(cudaMalloc(&tmp, tb));
    const float plain = median_ms([&] { cub::DeviceReduce::Sum(tmp, tb, d_in, d_sum, (int64_t)n); });
    const double plain_gbs = n * 4.0 / plain / 1e6;
    const double moved = n * 4.0 + (segs + 1) * 4.0 + segs * 4.0;
    const float r1 = run_seg<float, 1, 4>(d_in, n, d_off, segs, d_out, grid, rec, ticket);
    const float r1u8 = run_seg<float, 1, 8>(d_in, n, d_off, segs, d_out, grid, rec, ticket);
    const float r2 = run_seg<float, 2, 4>(d_in, n, d_off, segs, d_out, grid, rec, ticket);
    const float r4 = run_seg<float, 4, 4>(d_in, n, d_off, segs, d_out, grid, rec, ticket);
    auto x = [&](float ms) { return moved / ms / 1e6 / plain_gbs; };
    printf("%-28s segs %9u cub_plain %.4f ms (%.0f GB/s) | xplain R1u4 %.3f R1u8 %.3f R2 %.3f R4 %.3f | ms %.4f %.4f %.4f %.4f | %s\n",
           f.c_str(), segs, plain, plain_gbs, x(r1), x(r1u8), x(r2), x(r4), r1, r1u8, r2, r4, ok ? "exact" : "WRONG");
    fflush(stdout);
    CK(cudaFree(tmp)); CK(cudaFree(d_sum)); CK(cudaFree(d_in)); CK(cudaFree(d_out)); CK(cudaFree(d_off));
  }
  printf("done\n");
  return 0;
}
