// The host side of an emulated Tb2Seg or Tb4WarpSeg call (the paper's left-storing segmented
// trees, kernels/seg_tree.cu; tests/tests/emulated_trees.rs), the runtime's passes step for
// step (catalogue/paper.rs): the output filled with the identity, a pass over the items and
// their owners a data block per CUDA block, then passes over the blocks' (value, owner) pairs
// until one block is left, which appends its piece itself; a pass's blocks never wait for each
// other, so they run in index order or, under the reverse order, from the last down. Included
// after cuda_emu.hpp and the generated kernel text. argv[3] orders the fibers (see
// cuda_emu.hpp). Reads cases from argv[1], each
//   u64 n, segments, dynamic_smem, kind (0: Tb2Seg, 1: Tb4WarpSeg); n M items; n u32 owners,
// and appends to argv[2] per case
//   u64 status (all ones: none), u64 ok (1, or 0 after a deadlock); segments M values.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[4];
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], segments = h[1], smem = h[2], kind = h[3];
        // D, the values of one data block (catalogue/tree.rs, `tile`).
        const unsigned long long tile = (kind == 0 ? 2ull : 4ull) * R_BLOCK;
        std::vector<unsigned char> storage;
        M* items;
        std::vector<unsigned int> owner(n);
        if (!emu::read_items(in, n, 0, storage, items)) return 3;
        if (std::fread(owner.data(), 4, n, in) != n) return 3;
        std::vector<M> out(segments, m_identity());
        // The passes' (value, owner) pairs, alternating, sized as the runtime sizes them (the first
        // pass's blocks, and the second's); scratch the runtime does not clear.
        const unsigned long long blocks = n == 0 ? 1 : (n + tile - 1) / tile;
        const unsigned long long second = (blocks + tile - 1) / tile;
        std::vector<M> vals[2] = {std::vector<M>(blocks), std::vector<M>(second)};
        std::vector<unsigned int> owners[2] = {std::vector<unsigned int>(blocks), std::vector<unsigned int>(second)};
        for (int k = 0; k < 2; ++k) {
            emu::poison(vals[k]);
            emu::poison(owners[k]);
        }
        unsigned long long ok = 1;
        // One pass over `len` values and owners into pairs `to`; the blocks it ran.
        auto pass = [&](const M* src, const unsigned int* src_owner, unsigned long long len, int to) {
            const unsigned long long grid = len == 0 ? 1 : (len + tile - 1) / tile;
            for (unsigned int k = 0; k < grid && ok; ++k) {
                const unsigned int b = emu::block_at(k, (unsigned int)grid);
                emu_dynamic_smem(smem);
                ok = emu::run_block(b, (unsigned int)grid, R_BLOCK, [&] {
                    if (kind == 0)
                        reduce_tb2_seg(src, src_owner, len, segments, out.data(), vals[to].data(), owners[to].data());
                    else
                        reduce_tb4_warp_seg(src, src_owner, len, segments, out.data(), vals[to].data(),
                                            owners[to].data());
                });
            }
            return grid;
        };
        unsigned long long len = pass(items, owner.data(), n, 0);
        for (int k = 0; len > 1 && ok; ++k) len = pass(vals[k % 2].data(), owners[k % 2].data(), len, (k + 1) % 2);
        emu::write_segmented_result(res, ~0ull, ok, out);
    }
    std::fclose(res);
    return 0;
}
