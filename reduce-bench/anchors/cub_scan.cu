// CUB's DeviceScan on the monoids and sizes of `bench scan`, built and run in the same device
// command so that the ratios come from one run:
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce-bench/anchors/cub_scan.cu -o cub_scan && ./cub_scan
// f32 sums (the scans with cuda::std::plus, which CUB recognises as a sum and may give its
// specialised kernels), the 8-byte affine monoid and 2x2 matrices over u32
// (InclusiveScan / ExclusiveScan with the operator, not commutative), and the f32 recurrence
// h -> a h + b. The exact monoids' outputs are checked against the sequential scan on the host
// at 2^20 and 2^24 (a wrong output is reported, not timed as a win; 2^28 repeats the verdict of
// 2^24). Prints "<case>_<inclusive|exclusive> n=<N> ms <median ms> correct <yes|NO|unchecked>".
// With `segmented DIR`: CUB's segmented scan, DeviceScan::InclusiveScanByKey (a segment is a run
// of equal keys: each item's segment id, from the u32 CSR offsets `bench seglayouts` wrote in
// DIR, so the segments are bench scan's) of f32 sums and the affine monoid (checked against the
// sequential segmented scan) over every layout of 2^26 items: "cub_segscan_<f32|affine>_<layout>
// n=<N> ms <median ms> correct <yes|NO|unchecked>".
// With `newer DIR` (built with CCCL 3.3 or later: the toolkit's may be older, so the device
// script builds this mode with the newer headers it stages): the plain scans again, named
// "newer_<case>", and CUB's segmented scan by CSR offsets, DeviceSegmentedScan::
// InclusiveSegmentedScan, on the same items and layouts as `segmented`, checked the same way:
// "cub_segscan_csr_<f32|affine>_<layout> n=<N> ms <median ms> correct <yes|NO|unchecked>".
#include <cub/cub.cuh>
#if CCCL_VERSION >= 3003000
#include <cub/device/device_segmented_scan.cuh>
#define CUB_SCAN_CSR 1
#endif
#include "layouts.cuh"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

struct Affine { uint32_t a, b; };
struct Mat2 { uint32_t m[4]; };
struct AffineF32 { float a, b; };

struct AffineOp {
  __host__ __device__ Affine operator()(const Affine& l, const Affine& r) const {
    return Affine{l.a * r.a, l.b * r.a + r.b};
  }
};
struct Mat2Op {
  __host__ __device__ Mat2 operator()(const Mat2& l, const Mat2& r) const {
    return Mat2{{l.m[0] * r.m[0] + l.m[1] * r.m[2], l.m[0] * r.m[1] + l.m[1] * r.m[3],
                 l.m[2] * r.m[0] + l.m[3] * r.m[2], l.m[2] * r.m[1] + l.m[3] * r.m[3]}};
  }
};
struct AffineF32Op {
  __host__ __device__ AffineF32 operator()(const AffineF32& l, const AffineF32& r) const {
    return AffineF32{l.a * r.a, l.b * r.a + r.b};
  }
};
bool same(const Affine& x, const Affine& y) { return x.a == y.a && x.b == y.b; }
bool same(const Mat2& x, const Mat2& y) { return std::equal(x.m, x.m + 4, y.m); }
// (float monoids are not checked)
bool same(float, float) { return true; }
bool same(const AffineF32&, const AffineF32&) { return true; }

__device__ uint32_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((x ^ (x >> 31)) >> 16);
}

// Random words; word k of every item OR-ed with orm[k] and AND-ed with andm[k] (as bench's fill).
__global__ void fill(uint32_t* p, uint64_t words, uint32_t item_words, uint4 orm, uint4 andm) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < words; i += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t k = i % item_words;
    const uint32_t o = k == 0 ? orm.x : k == 1 ? orm.y : k == 2 ? orm.z : orm.w;
    const uint32_t a = k == 0 ? andm.x : k == 1 ? andm.y : k == 2 ? andm.z : andm.w;
    p[i] = (mix(i * 0x100000001b3ull + 77) | o) & a;
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

std::map<std::string, std::string> verdicts;

// Times the inclusive and exclusive scans of n items of T under op (identity `id`); checks
// exact monoids against the host's sequential scan where `check`.
template <class T, class Op>
void run(const char* name, uint64_t n, uint4 orm, uint4 andm, T id, Op op, bool exact) {
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  fill<<<1024, 256>>>((uint32_t*)in, n * sizeof(T) / 4, sizeof(T) / 4, orm, andm);
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    size_t temp_bytes = 0;
    void* temp = nullptr;
    auto call = [&]() {
      if (exclusive) CK(cub::DeviceScan::ExclusiveScan(temp, temp_bytes, in, out, op, id, (int64_t)n));
      else CK(cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, op, (int64_t)n));
    };
    call();
    CK(cudaMalloc(&temp, temp_bytes));
    const float ms = median_ms(call);
    const std::string key = std::string(name) + (exclusive ? "_exclusive" : "_inclusive");
    if (exact && n <= (1ull << 24)) {
      std::vector<T> h_in(n), h_out(n);
      CK(cudaMemcpy(h_in.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(h_out.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
      T acc = id;
      bool ok = true;
      for (uint64_t i = 0; i < n && ok; ++i) {
        const T next = op(acc, h_in[i]);
        ok = same(h_out[i], exclusive ? acc : next);
        acc = next;
      }
      verdicts[key] = ok ? "yes" : "NO";
    }
    const std::string verdict = exact ? (verdicts.count(key) ? verdicts[key] : "unchecked") : "unchecked";
    printf("%s n=%llu ms %.4f correct %s\n", key.c_str(), (unsigned long long)n, ms, verdict.c_str());
    fflush(stdout);
    CK(cudaFree(temp));
  }
  CK(cudaFree(in));
  CK(cudaFree(out));
}

// Each item's segment id from CSR offsets (a block per segment).
__global__ void keys_of(const uint32_t* off, uint64_t segs, uint32_t* keys) {
  for (uint64_t s = blockIdx.x; s < segs; s += gridDim.x)
    for (uint64_t i = off[s] + threadIdx.x; i < off[s + 1]; i += blockDim.x) keys[i] = (uint32_t)s;
}

// Times `scan(temp, temp_bytes, out)`, an inclusive segmented scan of the n items `in` under op
// into out (`kind`: "" by key, "csr_" by offsets); checks exact monoids against the host's
// sequential scan restarting wherever the segment id in `keys` changes.
template <class T, class Op, class Scan>
void run_segmented(const char* kind, const char* name, const std::string& layout, const T* in, const uint32_t* keys,
                   uint64_t n, T id, Op op, bool exact, Scan scan) {
  T* out;
  CK(cudaMalloc(&out, n * sizeof(T)));
  size_t temp_bytes = 0;
  void* temp = nullptr;
  auto call = [&]() { CK(scan(temp, temp_bytes, out)); };
  call();
  CK(cudaMalloc(&temp, temp_bytes));
  const float ms = median_ms(call);
  const char* verdict = "unchecked";
  if (exact) {
    std::vector<T> h_in(n), h_out(n);
    std::vector<uint32_t> h_keys(n);
    CK(cudaMemcpy(h_in.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h_out.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h_keys.data(), keys, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    T acc = id;
    bool ok = true;
    for (uint64_t i = 0; i < n && ok; ++i) {
      acc = op(i > 0 && h_keys[i] == h_keys[i - 1] ? acc : id, h_in[i]);
      ok = same(h_out[i], acc);
    }
    verdict = ok ? "yes" : "NO";
  }
  printf("cub_segscan_%s%s_%s n=%llu ms %.4f correct %s\n", kind, name, layout.c_str(), (unsigned long long)n, ms,
         verdict);
  fflush(stdout);
  CK(cudaFree(temp));
  CK(cudaFree(out));
}

// The scans by key of the n items `in` under op (keys: each item's segment id from the u32 CSR
// offsets `off`, `segs` segments), or with `csr` by the offsets themselves.
template <class T, class Op>
void run_layout(bool csr, const char* name, const std::string& layout, const T* in, const uint32_t* keys,
                const uint32_t* off, uint64_t segs, uint64_t n, T id, Op op, bool exact) {
  if (!csr) {
    run_segmented("", name, layout, in, keys, n, id, op, exact, [&](void* temp, size_t& bytes, T* out) {
      return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, in, out, op, (int64_t)n);
    });
    return;
  }
#ifdef CUB_SCAN_CSR
  run_segmented("csr_", name, layout, in, keys, n, id, op, exact, [&](void* temp, size_t& bytes, T* out) {
    return cub::DeviceSegmentedScan::InclusiveSegmentedScan(temp, bytes, in, out, off, off + 1, (int64_t)segs, op);
  });
#endif
}

// Every layout of 2^26 items in `dir` (files `<layout>@67108864.u32` of u32 offsets), by key or
// (`csr`) by CSR offsets.
void segmented(const char* dir, bool csr) {
  const uint64_t n = 1ull << 26;
  const std::string suffix = "@" + std::to_string(n) + ".u32";
  const std::vector<std::string> files = layout_files(dir, suffix, false);
  float* f32;
  Affine* affine;
  uint32_t *keys, *d_off;
  CK(cudaMalloc(&f32, n * sizeof(float)));
  CK(cudaMalloc(&affine, n * sizeof(Affine)));
  CK(cudaMalloc(&keys, n * sizeof(uint32_t)));
  const uint4 all = make_uint4(~0u, ~0u, ~0u, ~0u);
  fill<<<1024, 256>>>((uint32_t*)f32, n, 1, make_uint4(0x3f800000u, 0, 0, 0), make_uint4(0x3fffffffu, ~0u, ~0u, ~0u));
  fill<<<1024, 256>>>((uint32_t*)affine, 2 * n, 2, make_uint4(1, 0, 0, 0), all);
  for (const std::string& file : files) {
    const std::vector<uint32_t> offs = read_offsets<uint32_t>(std::string(dir) + "/" + file);
    if (offs.size() < 2 || offs.back() != n) continue;
    const uint64_t segs = offs.size() - 1;
    CK(cudaMalloc(&d_off, offs.size() * 4));
    CK(cudaMemcpy(d_off, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice));
    keys_of<<<4096, 256>>>(d_off, segs, keys);
    CK(cudaGetLastError());
    const std::string layout = file.substr(0, file.size() - suffix.size());
    run_layout(csr, "f32", layout, f32, keys, d_off, segs, n, 0.0f, ::cuda::std::plus<float>(), false);
    run_layout(csr, "affine", layout, affine, keys, d_off, segs, n, Affine{1, 0}, AffineOp(), true);
    CK(cudaFree(d_off));
  }
  CK(cudaFree(f32));
  CK(cudaFree(affine));
  CK(cudaFree(keys));
}

// The plain scans of every monoid at 2^20, 2^24 and 2^28 items, each case named `prefix` + its name.
void plain(const std::string& prefix) {
  const uint4 all = make_uint4(~0u, ~0u, ~0u, ~0u);
  for (int lg : {20, 24, 28}) {
    const uint64_t n = 1ull << lg;
    // f32 sums: the same [1, 2) data as bench's
    run<float>((prefix + "cub_sum_f32").c_str(), n, make_uint4(0x3f800000u, 0, 0, 0),
               make_uint4(0x3fffffffu, ~0u, ~0u, ~0u), 0.0f, ::cuda::std::plus<float>(), false);
    run<Affine>((prefix + "cub_affine").c_str(), n, make_uint4(1, 0, 0, 0), all, Affine{1, 0}, AffineOp(), true);
    run<Mat2>((prefix + "cub_mat2").c_str(), n, make_uint4(1, 0, 0, 1), make_uint4(~0u, ~1u, ~0u, ~0u),
              Mat2{{1, 0, 0, 1}}, Mat2Op(), true);
    run<AffineF32>((prefix + "cub_affine_f32").c_str(), n, make_uint4(0x3f000000u, 0x3f800000u, 0, 0),
                   make_uint4(0x3f7fffffu, 0x3fffffffu, ~0u, ~0u), AffineF32{1.0f, 0.0f}, AffineF32Op(), false);
  }
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  if (argc > 2 && std::string(argv[1]) == "segmented") {
    segmented(argv[2], false);
    return 0;
  }
  if (argc > 2 && std::string(argv[1]) == "newer") {
#ifdef CUB_SCAN_CSR
    plain("newer_");
    segmented(argv[2], true);
    return 0;
#else
#ifdef CCCL_VERSION
    printf("newer: CUB's DeviceSegmentedScan needs CCCL 3.3 or later (these headers: %d)\n", CCCL_VERSION);
#else
    printf("newer: CUB's DeviceSegmentedScan needs CCCL 3.3 or later\n");
#endif
    return 1;
#endif
  }
  plain("");
  return 0;
}
