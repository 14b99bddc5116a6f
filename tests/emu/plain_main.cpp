// The host side of an emulated plain launch, Shuffle's (kernels/shuffle.cu,
// tests/tests/emulated_plain.rs), the portable one's (kernels/portable.cu, which defines
// R_NODE_TILES; tests/tests/emulated_portable.rs) or Tb2's (kernels/tb2.cu, which defines R_D;
// tests/tests/emulated_trees.rs): included after cuda_emu.hpp and the generated kernel text.
// argv[3] orders the fibers as in seg_shuffle_main.cpp. Reads cases from argv[1], each
//   u64 n, grid, dynamic_smem; n r_in items;
// runs the launch block by block (the last one folds the blocks' partials, or takes the tree
// over the nodes; Tb2: the runtime's passes, a data block per block, until one value is left,
// `grid` unused), and appends to argv[2] per case
//   u64 ok (1, or 0 after a deadlock or when the ticket was not left at 0); one M (the root).
// The items lie R_ITEM_SHIFT bytes past a 16-byte boundary (where the kernel was specialised
// for), at the end of their allocation: AddressSanitizer reports any read past them.
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[3];
    while (std::fread(h, 8, 3, in) == 3) {
        const unsigned long long n = h[0], grid = h[1], smem = h[2];
#ifdef R_ITEM_SHIFT
        const size_t shift = R_ITEM_SHIFT;
#else
        const size_t shift = 0;  // Tb2: the runtime's aligned values
#endif
        std::vector<unsigned char> storage;
        r_in* items;
        if (!emu::read_items(in, n, shift, storage, items)) return 3;
#if defined(R_D)
        // Tb2 (catalogue/tree.rs, dispatch/passes.rs): pass k reduces `len` values into
        // ceil(len / R_D) (at least one), the passes alternating between two scratch arrays.
        (void)grid;
        unsigned long long ok = 1, len = n;
        const unsigned long long first = n == 0 ? 1 : (n + R_D - 1) / R_D;
        std::vector<M> passes[2] = {std::vector<M>(first), std::vector<M>((first + R_D - 1) / R_D)};
        std::vector<M> out(1);
        emu::poison(passes[0]);
        emu::poison(passes[1]);
        emu::poison(out);
        const M* src = items;
        for (int k = 0; ok; ++k) {
            const unsigned long long blocks = len == 0 ? 1 : (len + R_D - 1) / R_D;
            M* dst = blocks == 1 ? out.data() : passes[k % 2].data();
            for (unsigned int j = 0; j < blocks && ok; ++j) {
                const unsigned int b = emu::block_at(j, (unsigned int)blocks);
                emu_dynamic_smem(smem);
                ok = emu::run_block(b, (unsigned int)blocks, R_BLOCK, [&] { reduce_tb2(src, len, dst); });
            }
            if (blocks == 1) break;
            src = dst;
            len = blocks;
        }
#else
        (void)smem;
#ifdef R_NODE_TILES
        const unsigned long long tiles = (n + R_TILE - 1) / R_TILE;
        const unsigned long long scratch = (tiles + R_NODE_TILES - 1) / R_NODE_TILES;
#else
        const unsigned long long scratch = grid;  // the blocks' partials
#endif
        std::vector<M> nodes(scratch > 0 ? scratch : 1), out(1);
        emu::poison(nodes);
        emu::poison(out);
        unsigned int ticket = 0;
        unsigned long long ok = 1;
        for (unsigned int k = 0; k < grid && ok; ++k) {
            const unsigned int b = emu::block_at(k, (unsigned int)grid);
            ok = emu::run_block(b, (unsigned int)grid, R_BLOCK, [&] {
#ifdef R_NODE_TILES
                reduce_portable(items, n, nodes.data(), &ticket, out.data());
#else
                reduce_shuffle(items, n, nodes.data(), &ticket, out.data());
#endif
            });
        }
        ok = ok && ticket == 0;
#endif
        std::fwrite(&ok, 8, 1, res);
        std::fwrite(out.data(), sizeof(M), 1, res);
    }
    std::fclose(res);
    return 0;
}
