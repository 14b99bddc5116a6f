// The host side of an emulated SegBlocks call (kernels/seg_blocks.cu, tests/tests/
// emulated_seg_blocks.rs): included after cuda_emu.hpp and the generated kernel text. argv[3]
// orders the fibers as in seg_shuffle_main.cpp. Reads cases from argv[1] in SegHeads' format
// (tests/src/emu/heads.rs), each
//   u64 n, segments, grid, validate; n r_in items; segments + 1 r_idx offsets (u32, or u64
//   with R_IDX64),
// runs the launch's `grid` blocks in a scrambled order (no block waits for another: a
// segment's pieces are joined by whichever block brings the last), and appends to argv[2] per
// case
//   u64 status (as seg_hand_status, run behind the launch when validated, hands it out, else
//   0x5a5a...), u64 ok (1, or 0 after a deadlock, or when the call did not leave the status word
//   reset); segments M values.
// The chunks' counts are zero at each call's start, as the fill the runtime queues behind every
// launch leaves them; the chunks' pieces are poisoned. Every buffer is exactly its size:
// AddressSanitizer reports any access past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[4];
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], segments = h[1], grid = h[2], validate = h[3];
        std::vector<unsigned char> storage;
        r_in* items;
        std::vector<r_idx> offsets(segments + 1);
        if (!emu::read_items(in, n, R_ITEM_SHIFT, storage, items)) return 3;
        if (std::fread(offsets.data(), sizeof(r_idx), segments + 1, in) != segments + 1) return 3;
        std::vector<M> out(segments);
        emu::poison(out);  // every segment is written
        const unsigned long long chunks = (n + R_CHUNK - 1) / R_CHUNK;
        std::vector<unsigned int> counts(chunks, 0u);
        std::vector<M> first_part(chunks), cross_part(chunks);
        emu::poison(first_part);
        emu::poison(cross_part);
        unsigned long long status = R_NO_INDEX;
        unsigned long long status_out = 0x5a5a5a5a5a5a5a5aull;
        unsigned long long ok = 1;
        // Blocks in a scrambled order: odd ones first, then even ones from the last down.
        std::vector<unsigned int> order;
        for (unsigned int b = 1; b < grid; b += 2) order.push_back(b);
        for (unsigned long long b = (grid - 1) / 2 * 2 + 2; b >= 2; b -= 2) order.push_back((unsigned int)b - 2);
        for (unsigned int b : order) {
            if (!ok) break;
            ok = emu::run_block(b, (unsigned int)grid, R_BLOCK, [&] {
                reduce_seg_blocks(items, n, offsets.data(), segments, out.data(), first_part.data(),
                                  cross_part.data(), counts.data(), chunks, &status, validate);
            });
        }
        if (ok && validate) {
            ok = emu::run_block(0, 1, R_WARP, [&] { seg_hand_status(&status, &status_out); });
        }
        ok = ok && status == R_NO_INDEX;
        emu::write_segmented_result(res, status_out, ok, out);
    }
    std::fclose(res);
    return 0;
}
