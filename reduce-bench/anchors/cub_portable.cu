// CUB's DeviceReduce::Sum on the f32 and f64 data of `bench portable`, built and run in the same
// device command so that the ratios come from one run:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/cub_portable.cu -o cub_portable && ./cub_portable
// At CUB's default determinism (run_to_run: the same bits from run to run on one GPU) through
// the classic two-phase API, and, where the toolkit's CCCL has it (3.1 and later), with
// `gpu_to_gpu` determinism through the environment API (which allocates its temporary storage
// on the stream: timed as a user calls it). Prints
//   "cub_sum_<f32|f64>_<run_to_run|gpu_to_gpu> n=<N> ms <median ms> bits <hex>"
// and "gpu_to_gpu unavailable: CCCL <version>" where it is not there.
#include <cub/cub.cuh>
#include <cuda/std/version>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#if CCCL_VERSION >= 3001000
#include <cuda/std/execution>
#define HAVE_GPU_TO_GPU 1
#else
#define HAVE_GPU_TO_GPU 0
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

__device__ uint32_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((x ^ (x >> 31)) >> 16);
}

// Values in [1, 2) with random mantissas (as bench's masks_f32 / masks_f64).
__global__ void fill_f32(float* p, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = __uint_as_float(0x3f800000u | (mix(i) & 0x007fffffu));
}
__global__ void fill_f64(double* p, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = __longlong_as_double((long long)(0x3ff0000000000000ull | (((uint64_t)mix(i) << 20) ^ mix(i + n))));
}

template <typename T>
float median_ms(cudaStream_t s, T&& call) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) call();
  CK(cudaStreamSynchronize(s));
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(a, s));
    call();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename T>
unsigned long long bits_of(const T* d) {
  T h;
  CK(cudaMemcpy(&h, d, sizeof(T), cudaMemcpyDeviceToHost));
  unsigned long long b = 0;
  std::memcpy(&b, &h, sizeof(T));
  return b;
}

template <typename T>
void run(const char* name, uint64_t n, void (*fill)(T*, uint64_t)) {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, sizeof(T)));
  fill<<<1024, 256, 0, s>>>(in, n);
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, (int64_t)n, s));
  void* temp;
  CK(cudaMalloc(&temp, temp_bytes));
  float ms = median_ms(s, [&] { CK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, (int64_t)n, s)); });
  CK(cudaStreamSynchronize(s));
  printf("cub_sum_%s_run_to_run n=%llu ms %.4f bits %llx\n", name, (unsigned long long)n, ms, bits_of(out));
  fflush(stdout);
#if HAVE_GPU_TO_GPU
  auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                       cuda::stream_ref{s}};
  ms = median_ms(s, [&] { CK(cub::DeviceReduce::Sum(in, out, (int64_t)n, env)); });
  CK(cudaStreamSynchronize(s));
  printf("cub_sum_%s_gpu_to_gpu n=%llu ms %.4f bits %llx\n", name, (unsigned long long)n, ms, bits_of(out));
  fflush(stdout);
#endif
  CK(cudaFree(temp));
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaStreamDestroy(s));
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
#if !HAVE_GPU_TO_GPU
  printf("gpu_to_gpu unavailable: CCCL %d\n", (int)CCCL_VERSION);
#endif
  for (int lg : {20, 22, 24, 26, 28, 30}) {
    const uint64_t n = 1ull << lg;
    run<float>("f32", n, fill_f32);
    run<double>("f64", n, fill_f64);
  }
  return 0;
}
