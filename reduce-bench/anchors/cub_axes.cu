// CUB's DeviceSegmentedReduce on the rows of `bench axes`, built and run in the same device
// command as it:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/cub_axes.cu -o cub_axes && ./cub_axes [LOG2]
// The rows of (2^LOG2 / C, C) f32 summed (LOG2 default 26, as `bench axes --log2`) (CUB has no column reduction), through the fixed-size
// overload (segment_size) where the toolkit's CCCL has it (3.1 on; 3.0 has not), else the offsets overload
// with offsets computed by an iterator (no offsets array either way; -DCUB_AXES_OFFSETS forces
// it); per row of logits, ArgMax through the offsets overload. Prints "cub_<op>:<R>x<C>:1 n=<items> ms <median ms>
// correct yes|NO" (the format `bench axes` reads; sums checked against a float64 sum on the host).
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

__global__ void fill(float* p, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    uint64_t x = i + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    p[i] = (float)((x ^ (x >> 31)) >> 40) / (float)(1 << 24) - 0.5f;
  }
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
  CK(cudaEventDestroy(s)); CK(cudaEventDestroy(e));
  return t[t.size() / 2];
}

struct row_start {
  int64_t c;
  __host__ __device__ int64_t operator()(int64_t r) const { return r * c; }
};

int main(int argc, char** argv) {
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s CCCL %d\n", prop.name, (int)CCCL_VERSION);
  const int64_t n = 1ll << (argc > 1 ? std::atoi(argv[1]) : 26);
  float* x; float* out; CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&out, n * 4));
  fill<<<1024, 256>>>(x, n);
  CK(cudaDeviceSynchronize());
  std::vector<float> host(n);
  CK(cudaMemcpy(host.data(), x, n * 4, cudaMemcpyDeviceToHost));
  void* temp = nullptr; size_t temp_bytes = 0;
  auto reserve = [&](size_t bytes) {
    if (bytes > temp_bytes) { if (temp) CK(cudaFree(temp)); CK(cudaMalloc(&temp, bytes)); temp_bytes = bytes; }
  };
  const int64_t columns[] = {1, 2, 4, 8, 16, 64, 256, 4096, 1ll << 16, 1ll << 20, n};
  for (int64_t c : columns) {
    const int64_t rows = n / c;
#if CCCL_VERSION >= 3001000 && !defined(CUB_AXES_OFFSETS)
    const char* how = "fixed-size";
    auto run = [&](void* t, size_t& b) { return cub::DeviceSegmentedReduce::Sum(t, b, x, out, rows, (int)c); };
#else
    const char* how = "offsets";
    auto starts = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), row_start{c});
    auto run = [&](void* t, size_t& b) { return cub::DeviceSegmentedReduce::Sum(t, b, x, out, rows, starts, starts + 1); };
#endif
    size_t bytes = 0;
    CK(run(nullptr, bytes));
    reserve(bytes);
    const float ms = median_ms([&] { size_t b = temp_bytes; CK(run(temp, b)); });
    std::vector<float> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * 4, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int64_t r = 0; r < rows && ok; r += std::max<int64_t>(1, rows / 1000)) {
      double s = 0;
      for (int64_t i = 0; i < c; ++i) s += host[r * c + i];
      ok = std::fabs(s - got[r]) <= 1e-3 * std::max(1.0, std::sqrt((double)c));
    }
    printf("cub_sum:%lldx%lld:1 n=%lld ms %.5f correct %s (%s)\n", (long long)rows, (long long)c,
           (long long)n, ms, ok ? "yes" : "NO", how);
  }
  using pair = cub::KeyValuePair<int, float>;
  pair* best; CK(cudaMalloc(&best, (1 << 20) * sizeof(pair)));
  const std::pair<int64_t, int64_t> logits[] = {{std::min<int64_t>(n >> 15, 4096), 32000}, {32, 128000}, {1 << 20, 64}};
  for (auto [rows, vocab] : logits) {
    auto starts = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), row_start{vocab});
    auto run = [&](void* t, size_t& b) { return cub::DeviceSegmentedReduce::ArgMax(t, b, x, best, rows, starts, starts + 1); };
    size_t bytes = 0;
    CK(run(nullptr, bytes));
    reserve(bytes);
    const float ms = median_ms([&] { size_t b = temp_bytes; CK(run(temp, b)); });
    std::vector<pair> got(rows);
    CK(cudaMemcpy(got.data(), best, rows * sizeof(pair), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int64_t r = 0; r < rows && ok; r += std::max<int64_t>(1, rows / 1000))
      ok = host[r * vocab + got[r].key] == *std::max_element(&host[r * vocab], &host[(r + 1) * vocab]);
    printf("cub_argmax:%lldx%lld:1 n=%lld ms %.5f correct %s\n", (long long)rows, (long long)vocab,
           (long long)(rows * vocab), ms, ok ? "yes" : "NO");
  }
  return 0;
}
