// The host side of an emulated portable segmented launch (tests/tests/emulated_seg_portable.rs):
// included after cuda_emu.hpp and the generated kernel text (kernels/seg_portable.cu). argv[3]
// orders the fibers as in seg_shuffle_main.cpp. Reads cases from argv[1], each
//   u64 n, segments, index_len, grid, group, dynamic_smem, check; n r_in items; index_len r_idx
//   (offsets or owners: u32, or u64 with R_IDX64);
// runs the launch block by block (the last one joins the nodes), and appends to argv[2] per case
//   u64 status (as the last block hands it out), u64 ok (1, or 0 after a deadlock or when the
//   ticket, the status word and the fill budget were not left reset); segments M values.
// The items lie R_ITEM_SHIFT bytes past a 16-byte boundary (where the kernel was specialised
// for), at the end of their allocation: AddressSanitizer reports any read past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    emu::SegCase<r_in, r_idx, M> c;
    while (const int got = c.read(in, R_ITEM_SHIFT)) {
        if (got < 0) return 3;
        const unsigned long long n = c.n, segments = c.segments, grid = c.grid, group = c.own;
        const unsigned long long tiles = (n + R_TILE - 1) / R_TILE;
        std::vector<r_node> nodes((tiles + group - 1) / group);
        emu::poison(nodes);
        unsigned int ticket = 0;
        unsigned long long status = R_NO_INDEX;
        unsigned long long fill_budget = 0;
        unsigned long long status_out = 0x5a5a5a5a5a5a5a5aull;  // the launch's copy of status
        unsigned long long ok = 1;
        for (unsigned int k = 0; k < grid && ok; ++k) {
            const unsigned int b = emu::block_at(k, (unsigned int)grid);
            emu_dynamic_smem(c.smem);
            ok = emu::run_block(b, (unsigned int)grid, R_BLOCK, [&] {
                reduce_seg_portable(c.items, n, c.index.data(), segments, c.out.data(), nodes.data(), group,
                                    &ticket, &status, &fill_budget, c.check, &status_out);
            });
        }
        ok = ok && ticket == 0 && status == R_NO_INDEX && fill_budget == 0;
        emu::write_segmented_result(res, status_out, ok, c.out);
    }
    std::fclose(res);
    return 0;
}
