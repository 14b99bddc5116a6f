// CUB's DeviceReduce::ArgMax on the sizes of `bench argmax`, built and run in the same device
// command so that the ratios come from one run:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/argmax_anchor.cu -o argmax_anchor && ./argmax_anchor
// Data: f32 in [1, 2) (random mantissas, many ties: the first index wins, as in ours), rotated
// over buffers that together exceed 4x the L2. Prints "cub_argmax_f32 n=<N> ms <median ms>
// index <i> value <v>" (the CCCL 2.8+ overload with separate value and index outputs).
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

__device__ uint32_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((x ^ (x >> 31)) >> 16);
}

__global__ void fill(uint32_t* p, uint64_t n, uint64_t seed) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = (mix(seed * 0x100000001b3ull + i) | 0x3f800000u) & 0x3fffffffu;
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

int main() {
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  for (int lg : {20, 24, 28}) {
    const uint64_t n = 1ull << lg;
    const size_t bytes = n * sizeof(float);
    const int rotation = std::max(1, std::min(16, (int)((4ull * l2 + bytes - 1) / bytes)));
    std::vector<float*> bufs(rotation);
    for (int r = 0; r < rotation; ++r) {
      CK(cudaMalloc(&bufs[r], bytes));
      fill<<<1024, 256>>>((uint32_t*)bufs[r], n, 1 + r * 7919 + n);
    }
    float* d_max; int64_t* d_index;
    CK(cudaMalloc(&d_max, sizeof(float)));
    CK(cudaMalloc(&d_index, sizeof(int64_t)));
    size_t temp_bytes = 0;
    CK(cub::DeviceReduce::ArgMax(nullptr, temp_bytes, bufs[0], d_max, d_index, (int64_t)n));
    void* temp; CK(cudaMalloc(&temp, temp_bytes));
    float ms = median_ms([&](int i) {
      CK(cub::DeviceReduce::ArgMax(temp, temp_bytes, bufs[i % rotation], d_max, d_index, (int64_t)n));
    });
    CK(cub::DeviceReduce::ArgMax(temp, temp_bytes, bufs[0], d_max, d_index, (int64_t)n));
    float v; int64_t index;
    CK(cudaMemcpy(&v, d_max, sizeof v, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&index, d_index, sizeof index, cudaMemcpyDeviceToHost));
    printf("cub_argmax_f32 n=%llu ms %.5f GBs %.1f index %lld value %.9g\n", (unsigned long long)n, ms,
           bytes / (ms * 1e6), (long long)index, v);
    for (float* b : bufs) CK(cudaFree(b));
    CK(cudaFree(temp)); CK(cudaFree(d_max)); CK(cudaFree(d_index));
  }
  return 0;
}
