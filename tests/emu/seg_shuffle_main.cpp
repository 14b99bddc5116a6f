// The host side of an emulated SegShuffle launch (tests/tests/emulated_kernels.rs; SegPipeline's,
// the same kernel fed by a producer warp, tests/tests/emulated_seg_pipeline.rs) or SegMerge
// launch (its kernel defines R_STEPS; tests/tests/emulated_seg_merge.rs): the two share the
// blocks' records, the ticket and the status word. Included after cuda_emu.hpp and the generated
// kernel text. argv[3] = "reverse" runs the fibers in decreasing thread order, "eager" the first
// runnable one after every switch (see cuda_emu.hpp). Reads cases from argv[1], each
//   u64 n, segments, index_len, grid, seg_estimate (SegShuffle's), dynamic_smem, validate;
//   n r_in items; index_len r_idx (offsets or owners: u32, or u64 with R_IDX64),
// runs the launch block by block, and appends to argv[2] per case
//   u64 status (as the last block hands it out), u64 ok (1, or 0 after a deadlock, SegMerge's
//   cp.async copies that no barrier covered, or when the last block did not leave the status
//   word, the ticket and SegShuffle's fill budget reset); segments M values.
// The items lie R_ITEM_SHIFT bytes past a 16-byte boundary (where SegShuffle's kernel was
// specialised for; SegMerge's kernel is not, and its test defines the offset before the kernel's
// text: the kernels of R_PLAIN_ITEMS read items at any offset, the others aligned ones), at the
// end of their allocation: AddressSanitizer reports any read past them.
#include <cstdint>
#include <cstdio>
#include <vector>

#if defined(R_STEPS)
#ifndef R_ITEM_SHIFT
#define R_ITEM_SHIFT 0
#endif
#define R_BLOCK_THREADS R_BLOCK
#endif

int main(int argc, char** argv) {
    std::FILE *in, *res;
    if (!emu::open_files(argc, argv, &in, &res)) return 2;
    emu::SegCase<r_in, r_idx, M> c;
    while (const int got = c.read(in, R_ITEM_SHIFT)) {
        if (got < 0) return 3;
        const unsigned long long n = c.n, segments = c.segments, grid = c.grid;
        // The blocks' records: scratch the runtime does not clear (poisoned).
        std::vector<M> rec_vals(2 * grid);
        std::vector<r_size> rec_meta(3 * grid);
        emu::poison(rec_vals);
        emu::poison(rec_meta);
        unsigned int ticket = 0;
        unsigned long long status = R_NO_INDEX;
        unsigned long long fill_budget = 0;
        unsigned long long status_out = 0x5a5a5a5a5a5a5a5aull;  // the launch's copy of status
        unsigned long long ok = 1;
        for (unsigned int k = 0; k < grid && ok; ++k) {
            const unsigned int b = emu::block_at(k, (unsigned int)grid);
            emu_dynamic_smem(c.smem);
            ok = emu::run_block(b, (unsigned int)grid, R_BLOCK_THREADS, [&] {
#if defined(R_STEPS)
                reduce_seg_merge(c.items, n, c.index.data(), segments, c.out.data(), rec_vals.data(),
                                 rec_meta.data(), &ticket, &status, c.check, &status_out);
#else
                reduce_seg_shuffle(c.items, n, c.index.data(), segments, c.out.data(), rec_vals.data(),
                                   rec_meta.data(), &ticket, &status, &fill_budget, c.own, c.check, &status_out);
#endif
            });
            ok = emu::async_copies_settled() && ok;
        }
        // The last block copies the status word out and leaves it, as the ticket, reset.
        ok = ok && ticket == 0 && status == R_NO_INDEX && fill_budget == 0;
        emu::write_segmented_result(res, status_out, ok, c.out);
    }
    std::fclose(res);
    return 0;
}
