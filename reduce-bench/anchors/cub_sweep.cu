// CUB on the sizes and monoids of `bench plain`, built and run in the same device command so
// that every ratio to CUB comes from one run:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/cub_sweep.cu -o cub_sweep && ./cub_sweep [max_log2]
//   ./cub_sweep 0 segmented DIR     (the layouts `bench seglayouts --layouts DIR` wrote)
// Data: random, non-zero, rotated over buffers that together exceed 4x the L2 (as `bench`).
// Prints "<case> n=<N> ms <median ms> [correct yes|NO]"; correctness is checked against a host
// fold for N <= 2^22 (DeviceReduce::Reduce on a non-commutative monoid is expected to be WRONG).
#include <cub/cub.cuh>
#include "layouts.cuh"
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <string>
#include <cstring>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

struct Affine { uint32_t a, b; };
struct ComposeAffine {
  __host__ __device__ Affine operator()(const Affine& l, const Affine& r) const { return Affine{l.a * r.a, l.b * r.a + r.b}; }
};
struct Mat2 { uint32_t m[4]; };
struct MulMat2 {
  __host__ __device__ Mat2 operator()(const Mat2& l, const Mat2& r) const {
    return Mat2{{l.m[0] * r.m[0] + l.m[1] * r.m[2], l.m[0] * r.m[1] + l.m[1] * r.m[3],
                 l.m[2] * r.m[0] + l.m[3] * r.m[2], l.m[2] * r.m[1] + l.m[3] * r.m[3]}};
  }
};

__device__ uint32_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((x ^ (x >> 31)) >> 16);
}
// Same masks as bench: f32 in [1, 2); affine a odd; mat2 a, d odd, b even.
__global__ void fill(uint32_t* p, uint64_t words, uint64_t seed, int kind) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < words; i += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t v = mix(seed * 0x100000001b3ull + i);
    if (kind == 0) v = (v | 0x3f800000u) & 0x3fffffffu;
    if (kind == 1 && i % 2 == 0) v |= 1u;
    if (kind == 2) { int k = i % 4; if (k == 0 || k == 3) v |= 1u; if (k == 1) v &= ~1u; }
    p[i] = v;
  }
}

template <class F> float median_ms(F f, int reps = 20) {
  cudaEvent_t s, e; CK(cudaEventCreate(&s)); CK(cudaEventCreate(&e));
  for (int i = 0; i < 3; ++i) f(i);
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(s)); f(i); CK(cudaEventRecord(e)); CK(cudaEventSynchronize(e));
    float ms; CK(cudaEventElapsedTime(&ms, s, e)); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(s)); CK(cudaEventDestroy(e));
  return t[t.size() / 2];
}

static int l2_bytes;

template <class T, class Op>
void sweep(const char* name, int kind, int max_log2, Op op, T init, bool is_sum) {
  for (int lg = 10; lg <= max_log2; ++lg) {
    size_t n = size_t(1) << lg, bytes = n * sizeof(T);
    size_t free_b, total_b; CK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > free_b / 3) break;
    int rot = (int)std::min<size_t>(16, std::max<size_t>(1, (4 * (size_t)l2_bytes + bytes - 1) / bytes));
    std::vector<T*> bufs(rot);
    for (int i = 0; i < rot; ++i) {
      CK(cudaMalloc(&bufs[i], bytes));
      fill<<<1024, 256>>>((uint32_t*)bufs[i], bytes / 4, 1 + i * 7919 + n, kind);
    }
    CK(cudaDeviceSynchronize());
    T* d_out; CK(cudaMalloc(&d_out, sizeof(T)));
    size_t tb = 0; void* tmp = nullptr;
    if (is_sum) cub::DeviceReduce::Sum(tmp, tb, (float*)bufs[0], (float*)d_out, (int64_t)n);
    else cub::DeviceReduce::Reduce(tmp, tb, bufs[0], d_out, (int64_t)n, op, init);
    CK(cudaMalloc(&tmp, tb));
    auto run = [&](int i) {
      T* in = bufs[(i + 1) % rot];
      if (is_sum) cub::DeviceReduce::Sum(tmp, tb, (float*)in, (float*)d_out, (int64_t)n);
      else cub::DeviceReduce::Reduce(tmp, tb, in, d_out, (int64_t)n, op, init);
    };
    float ms = median_ms(run);
    printf("%s n=%zu ms %.5f GBs %.1f", name, n, ms, bytes / ms / 1e6);
    if (!is_sum && lg <= 22) {
      run(-1);  // bufs[0]
      std::vector<T> h(n); CK(cudaMemcpy(h.data(), bufs[0], bytes, cudaMemcpyDeviceToHost));
      T ref = init; for (auto& x : h) ref = op(ref, x);
      T got; CK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
      printf(" correct %s", memcmp(&got, &ref, sizeof(T)) == 0 ? "yes" : "NO");
    }
    printf("\n");
    fflush(stdout);
    CK(cudaFree(tmp)); CK(cudaFree(d_out));
    for (auto b : bufs) CK(cudaFree(b));
  }
}


// Segmented: the layouts `bench seglayouts` wrote (u32 offsets files <layout>@<n>.u32 in DIR),
// f32 sum and the affine monoid: CUB's DeviceSegmentedReduce (offsets form) and
// DeviceReduce::ReduceByKey (owner form, keys = segment ids).
// Prints "cubseg <routine>_<monoid> <layout>@<n> segs <S> ms <median>".
template <class T, class Op>
void seg_case(const char* name, const std::string& layout, T* d_in, size_t n, int* d_off, int* d_keys, int segs, Op op, T init) {
  T* d_out; CK(cudaMalloc(&d_out, (size_t)std::max(segs, 1) * sizeof(T)));
  int *d_uk, *d_nr; CK(cudaMalloc(&d_uk, (size_t)std::max(segs, 1) * 4)); CK(cudaMalloc(&d_nr, 4));
  size_t tb = 0; void* tmp = nullptr;
  cub::DeviceSegmentedReduce::Reduce(tmp, tb, d_in, d_out, segs, d_off, d_off + 1, op, init); CK(cudaMalloc(&tmp, tb));
  float ms = median_ms([&](int) { cub::DeviceSegmentedReduce::Reduce(tmp, tb, d_in, d_out, segs, d_off, d_off + 1, op, init); }, 10);
  printf("cubseg segmented_reduce_%s %s segs %d ms %.5f\n", name, layout.c_str(), segs, ms);
  CK(cudaFree(tmp)); tmp = nullptr; tb = 0;
  cub::DeviceReduce::ReduceByKey(tmp, tb, d_keys, d_uk, d_in, d_out, d_nr, op, (int64_t)n); CK(cudaMalloc(&tmp, tb));
  ms = median_ms([&](int) { cub::DeviceReduce::ReduceByKey(tmp, tb, d_keys, d_uk, d_in, d_out, d_nr, op, (int64_t)n); }, 10);
  printf("cubseg reduce_by_key_%s %s segs %d ms %.5f\n", name, layout.c_str(), segs, ms);
  fflush(stdout);
  CK(cudaFree(tmp)); CK(cudaFree(d_out)); CK(cudaFree(d_uk)); CK(cudaFree(d_nr));
}
__global__ void keys_of(const int* off, int segs, int* keys) {
  for (int s = blockIdx.x; s < segs; s += gridDim.x)
    for (int i = off[s] + threadIdx.x; i < off[s + 1]; i += blockDim.x) keys[i] = s;
}
void segmented(const char* dir) {
  const std::vector<std::string> files = layout_files(dir, ".u32", true);
  size_t max_n = 0;
  std::vector<std::vector<int>> all;  // the offsets of each layout read, and its name
  std::vector<std::string> names;
  for (auto& f : files) {
    std::vector<int> offs = read_offsets<int>(std::string(dir) + "/" + f);
    if (offs.empty()) continue;
    max_n = std::max(max_n, (size_t)offs.back());
    all.push_back(std::move(offs));
    names.push_back(f.substr(0, f.size() - 4));
  }
  float* f; CK(cudaMalloc(&f, max_n * 4)); fill<<<1024, 256>>>((uint32_t*)f, max_n, 5, 0);
  Affine* af; CK(cudaMalloc(&af, max_n * 8)); fill<<<1024, 256>>>((uint32_t*)af, max_n * 2, 6, 1);
  int* d_keys; CK(cudaMalloc(&d_keys, max_n * 4));
  for (size_t k = 0; k < all.size(); ++k) {
    const std::vector<int>& offs = all[k];
    const std::string& layout = names[k];
    int segs = (int)offs.size() - 1;
    size_t n = (size_t)offs.back();
    int* d_off; CK(cudaMalloc(&d_off, offs.size() * 4));
    CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice));
    keys_of<<<4096, 256>>>(d_off, segs, d_keys);
    CK(cudaDeviceSynchronize());
    seg_case("f32_sum", layout, f, n, d_off, d_keys, segs, cuda::std::plus<float>{}, 0.f);
    if (layout.rfind("sweep", 0) != 0)
      seg_case("affine", layout, af, n, d_off, d_keys, segs, ComposeAffine{}, Affine{1, 0});
    CK(cudaFree(d_off));
  }
  CK(cudaFree(f)); CK(cudaFree(af)); CK(cudaFree(d_keys));
}
int main(int argc, char** argv) {
  int max_log2 = argc > 1 ? atoi(argv[1]) : 30;
  if (argc > 3 && std::string(argv[2]) == "segmented") {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    printf("device %s sms %d l2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    segmented(argv[3]);
    printf("done\n");
    return 0;
  }
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  l2_bytes = p.l2CacheSize;
  printf("device %s sms %d l2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  sweep<float>("cub_sum_f32", 0, max_log2, cuda::std::plus<float>{}, 0.f, true);
  sweep<Affine>("cub_reduce_affine", 1, max_log2, ComposeAffine{}, Affine{1, 0}, false);
  sweep<Mat2>("cub_reduce_mat2", 2, max_log2, MulMat2{}, Mat2{{1, 0, 0, 1}}, false);
  // CUB's order-keeping route for a non-commutative monoid: an inclusive scan, then its last item.
  for (int lg : {20, 24, 28}) {
    if (lg > max_log2) break;
    size_t n = size_t(1) << lg;
    Affine *in, *scan; CK(cudaMalloc(&in, n * 8)); CK(cudaMalloc(&scan, n * 8));
    fill<<<1024, 256>>>((uint32_t*)in, n * 2, 99 + n, 1);
    size_t sb = 0; void* st = nullptr;
    cub::DeviceScan::InclusiveScan(st, sb, in, scan, ComposeAffine{}, (int64_t)n); CK(cudaMalloc(&st, sb));
    float ms = median_ms([&](int) { cub::DeviceScan::InclusiveScan(st, sb, in, scan, ComposeAffine{}, (int64_t)n); });
    printf("cub_scan_affine n=%zu ms %.5f GBs(read) %.1f\n", n, ms, n * 8 / ms / 1e6);
    CK(cudaFree(st)); CK(cudaFree(in)); CK(cudaFree(scan));
  }
  printf("done\n");
  return 0;
}
