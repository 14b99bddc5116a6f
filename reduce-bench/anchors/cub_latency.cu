// CUB's best case for a reduction to the host, for `bench api` (same device command, same host
// clock): temporary storage allocated once, DeviceReduce on one stream, the value copied into
// pinned host memory, the stream synchronised; the host clock around all three, median of 50
// calls after 3. f32 sum (DeviceReduce::Sum) and affine maps (DeviceReduce::Reduce, whose value
// is wrong for this non-commutative monoid: only its time is compared).
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/cub_latency.cu -o cub_latency && ./cub_latency
// Prints "api cub_api reduce <monoid> plain@<n> us <median us>".
#include <cub/cub.cuh>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

struct Affine { uint32_t a, b; };
struct ComposeAffine {
  __host__ __device__ Affine operator()(const Affine& l, const Affine& r) const { return Affine{l.a * r.a, l.b * r.a + r.b}; }
};

__global__ void fill(uint32_t* p, uint64_t words) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < words; i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = 0x3f800000u | (uint32_t)((i * 2654435761ull) & 0x7fffffu) | 1u;
}

template <class Call> double host_median_us(Call call, cudaStream_t stream) {
  for (int i = 0; i < 3; ++i) call();
  CK(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int i = 0; i < 50; ++i) {
    auto start = std::chrono::steady_clock::now();
    call();
    CK(cudaStreamSynchronize(stream));
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  const int logs[] = {10, 16, 20, 24, 28};
  const size_t most = (size_t)1 << 28;
  uint32_t* data;
  CK(cudaMalloc(&data, most * sizeof(Affine)));
  fill<<<1024, 256, 0, stream>>>(data, 2 * most);
  float* d_sum; Affine* d_affine;
  CK(cudaMalloc(&d_sum, sizeof(float)));
  CK(cudaMalloc(&d_affine, sizeof(Affine)));
  float* h_sum; Affine* h_affine;
  CK(cudaMallocHost(&h_sum, sizeof(float)));
  CK(cudaMallocHost(&h_affine, sizeof(Affine)));
  // Temporary storage for the largest call, allocated once.
  size_t sum_bytes = 0, affine_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, sum_bytes, (float*)data, d_sum, (int)most, stream));
  CK(cub::DeviceReduce::Reduce(nullptr, affine_bytes, (Affine*)data, d_affine, (int)most, ComposeAffine{}, Affine{1, 0}, stream));
  void* temp;
  size_t temp_bytes = std::max(sum_bytes, affine_bytes);
  CK(cudaMalloc(&temp, temp_bytes));
  for (int log : logs) {
    const int n = 1 << log;
    double us = host_median_us([&] {
      size_t bytes = temp_bytes;
      CK(cub::DeviceReduce::Sum(temp, bytes, (float*)data, d_sum, n, stream));
      CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost, stream));
    }, stream);
    printf("api cub_api reduce f32_sum plain@%d us %.2f\n", n, us);
    us = host_median_us([&] {
      size_t bytes = temp_bytes;
      CK(cub::DeviceReduce::Reduce(temp, bytes, (Affine*)data, d_affine, n, ComposeAffine{}, Affine{1, 0}, stream));
      CK(cudaMemcpyAsync(h_affine, d_affine, sizeof(Affine), cudaMemcpyDeviceToHost, stream));
    }, stream);
    printf("api cub_api reduce affine plain@%d us %.2f\n", n, us);
    fflush(stdout);
  }
  return 0;
}
