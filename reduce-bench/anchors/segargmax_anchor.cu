// CUB's DeviceSegmentedReduce::ArgMax on the layouts of `bench segargmax`, built and run in the
// same device command so that the ratios come from one run:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/segargmax_anchor.cu -o segargmax_anchor
//   ./segargmax_anchor DIR N    (DIR: the u32 offsets files <layout>@<N>.u32 `bench seglayouts` wrote)
// Data: f32 in [1, 2) (random mantissas, as `bench`). Prints
// "cubseg segmented_argmax_f32 <layout>@<N> segs <S> ms <median ms>" (the format `bench` reads).
// CUB's index is relative to the segment's start; ours is the global one: timing only.
#include <cub/cub.cuh>
#include "layouts.cuh"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
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

int main(int argc, char** argv) {
  if (argc < 3) { printf("usage: segargmax_anchor DIR N\n"); return 2; }
  const std::string dir = argv[1], suffix = std::string("@") + argv[2] + ".u32";
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  const std::vector<std::string> files = layout_files(dir, suffix, false);
  const uint64_t n = strtoull(argv[2], nullptr, 10);
  float* d_in; CK(cudaMalloc(&d_in, n * 4));
  fill<<<1024, 256>>>((uint32_t*)d_in, n, 21);
  for (const std::string& f : files) {
    const std::vector<int> offs = read_offsets<int>(dir + "/" + f);
    if (offs.empty() || (uint64_t)offs.back() != n) continue;
    const int segs = (int)offs.size() - 1;
    int* d_off; CK(cudaMalloc(&d_off, offs.size() * 4));
    CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice));
    cub::KeyValuePair<int, float>* d_out; CK(cudaMalloc(&d_out, (size_t)std::max(segs, 1) * sizeof(*d_out)));
    size_t tb = 0; void* tmp = nullptr;
    CK(cub::DeviceSegmentedReduce::ArgMax(tmp, tb, d_in, d_out, segs, d_off, d_off + 1));
    CK(cudaMalloc(&tmp, std::max<size_t>(tb, 1)));
    float ms = median_ms([&] { CK(cub::DeviceSegmentedReduce::ArgMax(tmp, tb, d_in, d_out, segs, d_off, d_off + 1)); });
    printf("cubseg segmented_argmax_f32 %s segs %d ms %.5f\n", f.substr(0, f.size() - 4).c_str(), segs, ms);
    fflush(stdout);
    CK(cudaFree(tmp)); CK(cudaFree(d_out)); CK(cudaFree(d_off));
  }
  CK(cudaFree(d_in));
  printf("done\n");
  return 0;
}
