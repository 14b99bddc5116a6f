// The host side of an emulated scan launch (tests/tests/emulated_kernels.rs): included after
// cuda_emu.hpp and the generated kernel text (kernels/scan.cu). argv[3] orders the fibers as in
// seg_shuffle_main.cpp. Reads cases from argv[1], each
//   u64 n, exclusive, index_len, mode, in_place; n r_in items; index_len r_idx (offsets or keys,
//   as the kernel's R_SEG reads them);
// runs scan_tiles (mode 0), one block per tile in index order (so each tile finds the tiles
// before it finished), or (mode 1, ReduceThenScan) scan_reduce over the tiles, scan_groups over
// a warp per group, scan_chain on one block and scan_apply over the tiles, or (mode 2,
// LookAhead, where its plan has stages) by offsets scan_marks over them into a bitmap of heads
// (poisoned past n's words), then scan_ahead on a grid of three blocks in order (the first
// takes every tile from the counter: its look-back warps wait for its own threads' aggregates;
// with R_AHEAD_MAX_TILES, as many blocks as the tiles need, each looking back over the blocks
// before it); in place, the kernels read the items from the outputs' buffer (r_in is M). Appends
// to argv[2]
// per case
//   u64 ok (1, or 0 when the tile counter does not end at the tile count or scan_marks wrote
//   past the bitmap); n M outputs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

// Each tile's dynamic shared memory (its stages), refilled with 0xA5 before every block.
constexpr unsigned long long kStageBytes = R_STAGE_BYTES > 0 ? R_STAGE_BYTES : 16;
#if R_PIPE
// LookAhead's (kernels/scan_ahead.cu).
constexpr unsigned long long kAheadBytes = R_AHEAD_SMEM;
#endif

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[5];
    while (std::fread(h, 8, 5, in) == 5) {
        const unsigned long long n = h[0], exclusive = h[1], index_len = h[2], mode = h[3], in_place = h[4];
        std::vector<r_in> items(n);
        std::vector<r_idx> index(index_len + 1);  // never empty: a plain scan passes none
        if (std::fread(items.data(), sizeof(r_in), n, in) != n) return 3;
        if (std::fread(index.data(), sizeof(r_idx), index_len, in) != index_len) return 3;
        const unsigned long long tiles = (n + R_TILE - 1) / R_TILE, groups = (tiles + 31) / 32;
        struct alignas(16) Entry {
            unsigned long long lo, hi;
        };
        // the counter, then the entries (16-byte parts, or 4-byte states)
        std::vector<Entry> words(1 + (tiles + groups) * (R_FUSED ? sizeof(r_word) / 16 : 1), Entry{0, 0});
        std::vector<M> aggregates(tiles + groups), inclusives(groups), out(n);
        emu::poison(out);
        // Scratch the runtime carves without clearing (the entries above are zeroed): poisoned.
        emu::poison(aggregates);
        emu::poison(inclusives);
        const r_in* src = items.data();
        if (in_place) {
            if (R_LIFTED || sizeof(r_in) != sizeof(M)) return 4;  // in place: the items are values
            std::memcpy(static_cast<void*>(out.data()), items.data(), n * sizeof(M));
            src = reinterpret_cast<const r_in*>(out.data());
        }
        const unsigned long long segments = index_len > 0 ? index_len - 1 : 0;  // offsets' count
        unsigned long long ok = 1;
#if R_PIPE
        const bool ahead = mode == 2;
#else
        const bool ahead = false;  // a LookAhead plan without stages: LookBack's kernel
#endif
        if (ahead) {
#if R_PIPE
#if defined(R_AHEAD_MAX_TILES)
            // each block takes at most R_AHEAD_MAX_TILES tiles: enough blocks for all, and one
            const unsigned int grid = (unsigned int)(tiles / R_AHEAD_MAX_TILES + 2);
#else
            const unsigned int grid = 3;
#endif
            const void* layout = index.data();
#if R_SEG == R_SEG_OFFSETS
            const unsigned long long mark_words = (n + 31) / 32;
            std::vector<unsigned int> marks(mark_words + 4, 0xA5A5A5A5u);
            std::fill(marks.begin(), marks.begin() + mark_words, 0u);
            const unsigned long long per_block = (unsigned long long)R_BLOCK * R_MARKS_RUN;
            const unsigned int mark_blocks = (unsigned int)((segments + per_block) / per_block);
            for (unsigned int b = 0; b < mark_blocks && ok; ++b)
                ok = emu::run_block(b, mark_blocks, R_BLOCK,
                                    [&] { scan_marks(index.data(), segments, n, marks.data()); });
            for (unsigned long long w = mark_words; w < marks.size(); ++w) ok = ok && marks[w] == 0xA5A5A5A5u;
            layout = marks.data();
#endif
            for (unsigned int b = 0; b < grid && ok; ++b) {
                emu_dynamic_smem(kAheadBytes);
                ok = emu::run_block(b, grid, R_AHEAD_THREADS, [&] {
                    scan_ahead(src, n, out.data(), exclusive, layout, segments,
                               reinterpret_cast<unsigned int*>(words.data()), aggregates.data(), inclusives.data());
                });
            }
            // every tile taken, and one ticket past the end per block that found none (all but the
            // first without R_AHEAD_MAX_TILES)
            ok = ok && words[0].lo >= tiles + 1 && words[0].lo <= tiles + grid;
#endif
        } else if (mode == 1) {
            // a flag and a value per tile and per group, poisoned: each is written before it is read
            std::vector<unsigned int> flags(tiles + groups, 0xA5A5A5A5u);
            for (unsigned int b = 0; b < tiles && ok; ++b) {
                emu_dynamic_smem(kStageBytes);
                ok = emu::run_block(b, (unsigned int)tiles, R_BLOCK, [&] {
                    scan_reduce(src, n, index.data(), segments, flags.data(), aggregates.data());
                });
            }
            const unsigned int group_blocks = (unsigned int)((groups + R_WARPS - 1) / R_WARPS);
            for (unsigned int b = 0; b < group_blocks && ok; ++b)
                ok = emu::run_block(b, group_blocks, R_BLOCK, [&] { scan_groups(n, flags.data(), aggregates.data()); });
            ok = ok && emu::run_block(0, 1, R_BLOCK, [&] { scan_chain(n, flags.data(), aggregates.data()); });
            for (unsigned int b = 0; b < tiles && ok; ++b) {
                emu_dynamic_smem(kStageBytes);
                ok = emu::run_block(b, (unsigned int)tiles, R_BLOCK, [&] {
                    scan_apply(src, n, out.data(), exclusive, index.data(), segments, flags.data(),
                               aggregates.data());
                });
            }
        } else {
            for (unsigned int b = 0; b < tiles && ok; ++b) {
                emu_dynamic_smem(kStageBytes);
                ok = emu::run_block(b, (unsigned int)tiles, R_BLOCK, [&] {
                    scan_tiles(src, n, out.data(), exclusive, index.data(), segments,
                               reinterpret_cast<unsigned int*>(words.data()), aggregates.data(), inclusives.data());
                });
            }
            ok = ok && (n == 0 || words[0].lo == tiles);
        }
        std::fwrite(&ok, 8, 1, res);
        std::fwrite(out.data(), sizeof(M), n, res);
    }
    std::fclose(res);
    return 0;
}
