// The host side of an emulated reduction along axes in the default mode
// (tests/tests/emulated_axes.rs): included after cuda_emu.hpp and the generated kernel text
// (kernels/axes.cu). argv[3] orders the fibers as in seg_shuffle_main.cpp. Reads cases from
// argv[1], each
//   u64 n, shift, grid, launches; per launch u64 entry (0, 1: reduce_axes, _values; 2, 3:
//   reduce_axes_rows, _values; 4, 5: reduce_axes_cols, _values; 6, 7: reduce_axes_short,
//   _values), threads, outputs and the kernel's arguments between `in` and `out`, padded to 7;
//   n r_in items;
// runs the launches in order (each the library's grid-stride launch of `threads` threads in
// blocks of 256, on at most `grid` blocks), each reading the one before's values, and appends to
// argv[2] per case
//   u64 ok (1, or 0 after a deadlock); the last launch's outputs M values.
// The items lie `shift` bytes past a 16-byte boundary at the end of their allocation, and every
// launch writes a buffer of exactly its outputs: AddressSanitizer reports any access past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    constexpr int RECORD = 10;  // entry, threads, outputs, 7 arguments
    unsigned long long h[4];
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], shift = h[1], grid = h[2], launches = h[3];
        std::vector<unsigned long long> a(launches * RECORD);
        if (std::fread(a.data(), 8, a.size(), in) != a.size()) return 3;
        std::vector<unsigned char> storage;
        r_in* items;
        if (!emu::read_items(in, n, shift, storage, items)) return 3;
        std::vector<unsigned char> from, to;
        unsigned long long ok = 1;
        for (unsigned long long l = 0; l < launches && ok; ++l) {
            const unsigned long long* r = &a[l * RECORD];
            const unsigned long long entry = r[0], threads = r[1], outputs = r[2];
            const unsigned long long* q = r + 3;
            to.assign(outputs * sizeof(M), 0xA5);
            M* out = reinterpret_cast<M*>(to.data());
            const M* values = reinterpret_cast<const M*>(from.data());
            const unsigned long long blocks = (threads + 255) / 256;
            const unsigned int g = (unsigned int)(blocks < grid ? (blocks > 0 ? blocks : 1) : grid);
            for (unsigned int b = 0; b < g && ok; ++b) {
                ok = emu::run_block(b, g, 256, [&] {
                    switch (entry) {
                        case 0: reduce_axes(items, q[0], q[1], q[2], q[3], q[4], out); break;
                        case 1: reduce_axes_values(values, q[0], q[1], q[2], q[3], q[4], out); break;
                        case 2: reduce_axes_rows(items, q[0], q[1], q[2], q[3], q[4], q[5], out); break;
                        case 3: reduce_axes_rows_values(values, q[0], q[1], q[2], q[3], q[4], q[5], out); break;
                        case 4: reduce_axes_cols(items, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out); break;
                        case 5: reduce_axes_cols_values(values, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out); break;
                        case 6: reduce_axes_short(items, q[0], q[1], out); break;
                        default: reduce_axes_short_values(values, q[0], q[1], out);
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
