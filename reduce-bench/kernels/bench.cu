// Benchmark helpers (not reductions): a read-bandwidth roof and a random fill.
// They take no monoid; the roof is the ceiling every reduction's GB/s is compared with.

typedef unsigned long long r_size;

// Streams n4 16-byte vectors once (grid-stride, like the CUB anchor's roof) and keeps the
// loads alive with a never-true store.
extern "C" __global__ void read_roof(const uint4* __restrict__ in, r_size n4, unsigned int* out) {
    unsigned int acc = 0;
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n4; i += (r_size)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(in + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u && threadIdx.x == 1023) *out = acc;
}

// Copies n4 16-byte vectors (grid-stride, streaming loads and stores): with cuMemcpyDtoD, the
// copy roof the scans are compared with.
extern "C" __global__ void copy_roof(const uint4* __restrict__ in, uint4* __restrict__ out, r_size n4) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < n4; i += (r_size)gridDim.x * blockDim.x)
        __stcs(out + i, __ldcs(in + i));
}

__device__ __forceinline__ unsigned int r_mix(r_size x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (unsigned int)((x ^ (x >> 31)) >> 16);
}

// Fills `words` 32-bit words with random bits; word k of every item (item_words words) is
// then OR-ed with or_mask[k] and AND-ed with and_mask[k] (e.g. odd multipliers).
struct r_masks { unsigned int or_mask[32]; unsigned int and_mask[32]; };
extern "C" __global__ void fill_random(unsigned int* __restrict__ p, r_size words, r_size seed,
                                       r_size item_words, const r_masks* __restrict__ masks) {
    for (r_size i = blockIdx.x * (r_size)blockDim.x + threadIdx.x; i < words; i += (r_size)gridDim.x * blockDim.x) {
        const unsigned int k = (unsigned int)(i % item_words) & 31;
        p[i] = (r_mix(seed * 0x100000001b3ull + i) | masks->or_mask[k]) & masks->and_mask[k];
    }
}
