// The host side of an emulated portable reduction along axes
// (tests/tests/emulated_axes_portable.rs): included after cuda_emu.hpp and the generated kernel
// text (kernels/axes_portable.cu). argv[3] orders the fibers as in seg_shuffle_main.cpp. Reads
// cases from argv[1], each
//   u64 n, shift, grid, passes; per pass u64 entry (0: reduce_axes_portable_nodes over the
//   pass before's nodes; 1, 2, 3: reduce_axes_portable, _units, _warps over the items) and the
//   kernel's arguments from n to rs3 (25); n r_in items;
// runs the passes in order, each on min(grid, its tiles) blocks, block by block, and appends to
// argv[2] per case
//   u64 ok (1, or 0 after a deadlock); the last pass's results * nodes M values.
// The items lie `shift` bytes past a 16-byte boundary at the end of their allocation, and every
// pass writes a buffer of exactly its outputs: AddressSanitizer reports any access past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    constexpr int ARGS = 26;
    unsigned long long h[4];
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], shift = h[1], grid = h[2], passes = h[3];
        std::vector<unsigned long long> a(passes * ARGS);
        if (std::fread(a.data(), 8, a.size(), in) != a.size()) return 3;
        std::vector<unsigned char> storage;
        r_in* items;
        if (!emu::read_items(in, n, shift, storage, items)) return 3;
        std::vector<unsigned char> from, to;
        unsigned long long ok = 1;
        for (unsigned long long p = 0; p < passes && ok; ++p) {
            const unsigned long long* q = &a[p * ARGS];
            const unsigned long long results = q[2], y_log = q[4], nodes = q[7];
            to.assign(results * nodes * sizeof(M), 0xA5);
            M* out = reinterpret_cast<M*>(to.data());
            const unsigned long long x = R_BLOCK >> y_log;
            const unsigned long long tiles = (results + x - 1) / x * nodes;
            const unsigned int g = (unsigned int)(tiles < grid ? (tiles > 0 ? tiles : 1) : grid);
            for (unsigned int b = 0; b < g && ok; ++b) {
                ok = emu::run_block(b, g, R_BLOCK, [&] {
                    const M* nodes_in = reinterpret_cast<const M*>(from.data());
                    auto pass = [&](auto kernel, auto input) {
                        kernel(input, q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10],
                               q[11], q[12], q[13], q[14], q[15], q[16], q[17], q[18], q[19], q[20],
                               q[21], q[22], q[23], q[24], q[25], out);
                    };
                    switch (q[0]) {
                        case 1: pass(reduce_axes_portable, items); break;
                        case 2: pass(reduce_axes_portable_units, items); break;
                        case 3: pass(reduce_axes_portable_warps, items); break;
                        default: pass(reduce_axes_portable_nodes, nodes_in);
                    }
                });
            }
            from.swap(to);
        }
        std::fwrite(&ok, 8, 1, res);
        std::fwrite(from.data(), 1, from.size(), res);
    }
    std::fclose(res);
    return 0;
}
