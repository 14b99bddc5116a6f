// The host side of an emulated SegHeads call (kernels/seg_heads.cu, tests/tests/
// emulated_seg_heads.rs): included after cuda_emu.hpp and the generated kernel text. argv[3]
// orders the fibers as in seg_shuffle_main.cpp. Reads cases from argv[1], each
//   u64 n, segments, grid (the marks' blocks), flags (1: validate, 2: owners); n r_in items;
//   segments + 1 r_idx offsets (u32, or u64 with R_IDX64), or with flag 2 n r_idx owners,
// as the runtime takes owners: seg_validate_owner into the status word (when validated) and
// seg_owner_to_offsets, each on `grid` blocks of 256 threads, and the marks' own check off; then
// runs the marks block by block on `grid` blocks, then the fold's blocks (a block per tile) in
// a scrambled order (they depend on none of each other), then the join's blocks (0, then
// the last group down to 1), and appends to argv[2] per case
//   u64 status (as the join hands it out), u64 ok (1, or 0 after a deadlock, or when the call
//   did not leave its zeroed words zero, the ticket 0 and the status word reset); segments M
//   values.
// The zeroed words persist from case to case, as a Gpu's scratch does between calls. The items
// lie R_ITEM_SHIFT bytes past a 16-byte boundary, at the end of their allocation, and every
// buffer is exactly its size: AddressSanitizer reports any access past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[4];
    std::vector<unsigned int> zeroed;
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], segments = h[1], grid = h[2], validate = h[3] & 1, owners = h[3] >> 1;
        std::vector<unsigned char> storage;
        r_in* items;
        std::vector<r_idx> offsets(segments + 1), owner(owners ? n : 0);
        emu::poison(offsets);  // with owners: every entry written by seg_owner_to_offsets
        if (!emu::read_items(in, n, R_ITEM_SHIFT, storage, items)) return 3;
        std::vector<r_idx>& layout = owners ? owner : offsets;
        if (std::fread(layout.data(), sizeof(r_idx), layout.size(), in) != layout.size()) return 3;
        std::vector<M> out(segments);
        emu::poison(out);  // never read
        const unsigned long long tiles = (n + R_TILE - 1) / R_TILE;
        const unsigned long long words = tiles * R_TILE_WORDS + 2 * tiles + 1;
        if (zeroed.size() < words) zeroed.assign(words, 0u);  // grown zero-filled, as the scratch
        const unsigned long long groups = (tiles + R_BLOCK - 1) / R_BLOCK;
        std::vector<M> tile_vals(2 * tiles), rec_vals(2 * groups);
        std::vector<r_size> tile_meta(tiles), rec_meta(3 * groups);
        emu::poison(tile_vals);
        emu::poison(rec_vals);
        // Scratch the runtime carves without clearing: poisoned, as the values.
        emu::poison(tile_meta);
        emu::poison(rec_meta);
        unsigned int ticket = 0;
        unsigned long long status = R_NO_INDEX;
        unsigned long long status_out = 0x5a5a5a5a5a5a5a5aull;
        unsigned long long ok = 1;
        for (unsigned int b = 0; b < grid && ok && owners; ++b) {
            if (validate)
                ok = emu::run_block(b, (unsigned int)grid, 256, [&] {
                    seg_validate_owner(owner.data(), n, segments, &status);
                });
            ok = ok && emu::run_block(b, (unsigned int)grid, 256, [&] {
                seg_owner_to_offsets(owner.data(), n, offsets.data(), segments);
            });
        }
        for (unsigned int b = 0; b < grid && ok; ++b) {
            ok = emu::run_block(b, (unsigned int)grid, R_BLOCK, [&] {
                reduce_seg_heads_marks(offsets.data(), segments, n, out.data(), zeroed.data(), &status,
                                       validate && !owners);
            });
        }
        // Tiles in a scrambled order: odd ones first, then even ones from the last down.
        std::vector<unsigned int> order;
        for (unsigned int t = 1; t < tiles; t += 2) order.push_back(t);
        for (unsigned long long t = (tiles - 1) / 2 * 2 + 2; t >= 2; t -= 2) order.push_back((unsigned int)t - 2);
        for (unsigned int b : order) {
            if (!ok) break;
            emu_dynamic_smem(R_TILE * sizeof(M));  // the tile's staged segments
            ok = emu::run_block(b, (unsigned int)tiles, R_BLOCK, [&] {
                reduce_seg_heads_fold(items, n, offsets.data(), segments, out.data(), zeroed.data(), tile_vals.data(),
                                      tile_meta.data());
            });
        }
        // The join's blocks: 0, then the last group down to 1 (the last block to finish is neither
        // the first nor the last group).
        for (unsigned long long g = groups; g-- > 0 && ok;) {
            const unsigned int b = (unsigned int)((g + 1) % groups);
            ok = emu::run_block(b, (unsigned int)groups, R_BLOCK, [&] {
                reduce_seg_heads_join(tile_vals.data(), tile_meta.data(), n, segments, out.data(), zeroed.data(),
                                      rec_vals.data(), rec_meta.data(), &ticket, &status,
                                      validate ? &status_out : nullptr);
            });
        }
        for (unsigned int w : zeroed) ok = ok && w == 0u;
        ok = ok && ticket == 0 && status == R_NO_INDEX;
        emu::write_segmented_result(res, status_out, ok, out);
    }
    std::fclose(res);
    return 0;
}
