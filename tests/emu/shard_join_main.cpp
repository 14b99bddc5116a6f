// The host side of an emulated portable join (kernels/shard_join.cu,
// tests/tests/emulated_shard_join.rs): included after cuda_emu.hpp and the generated kernel
// text. Reads cases from argv[1], each
//   u64 world, record_bytes, run, max_blocks, capacity, scratch_bytes; world records of
//   record_bytes bytes;
// runs shard_portable_join on one thread (its scratch of `capacity` nodes in scratch_bytes bytes,
// as the cluster allocates it, poisoned), and appends to argv[2] per case
//   world u64 statuses; u64 written (1 when the kernel wrote the value); one M.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[6];
    while (std::fread(h, 8, 6, in) == 6) {
        const unsigned long long world = h[0], record_bytes = h[1], run = h[2], max_blocks = h[3];
        const unsigned long long capacity = h[4], scratch_bytes = h[5];
        // The records at the end of their allocation: AddressSanitizer reports a read past them.
        std::vector<unsigned char> records(world * record_bytes);
        if (std::fread(records.data(), 1, records.size(), in) != records.size()) return 3;
        std::vector<unsigned long long> statuses(world, 0xA5A5A5A5A5A5A5A5ull);
        std::vector<M> out(1);
        emu::poison(out);
        const M before = out[0];
        std::vector<unsigned char> scratch(scratch_bytes, 0xA5);
        const bool ok = emu::run_block(0, 1, 1, [&] {
            shard_portable_join(records.data(), world, record_bytes, run, max_blocks, scratch.data(), capacity,
                                out.data(), statuses.data());
        });
        if (!ok) return 4;
        const unsigned long long written = std::memcmp(&before, out.data(), sizeof(M)) != 0;
        std::fwrite(statuses.data(), 8, world, res);
        std::fwrite(&written, 8, 1, res);
        std::fwrite(out.data(), sizeof(M), 1, res);
    }
    std::fclose(res);
    return 0;
}
