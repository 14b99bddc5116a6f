// The host side of an emulated reduction along axes in the default mode
// (tests/tests/emulated_axes.rs): included after cuda_emu.hpp and the generated kernel text
// (kernels/axes.cu). argv[3] orders the fibers as in seg_shuffle_main.cpp. Reads cases from
// argv[1], each
//   u64 n, shift, grid, launches; per launch u64 entry (0, 1: reduce_axes, _values; 2, 3:
//   reduce_axes_rows, _values; 4, 5: reduce_axes_cols, _values; 6, 7: reduce_axes_short,
//   _values; 8, 9: reduce_axes_cols_long, _values), threads, outputs and the kernel's arguments
//   between `in` and `out`, padded to 7;
//   n r_in items;
// runs the launches in order (each the library's grid-stride launch of `threads` threads in
// blocks of 256, on at most `grid` blocks), each reading the one before's values, and appends to
// argv[2] per case
//   u64 ok (1, or 0 after a deadlock); the last launch's outputs M values
// (emu::chains_main).
int main(int argc, char** argv) {
    constexpr int RECORD = 10;  // entry, threads, outputs, 7 arguments
    auto shape = [](const unsigned long long* r) {
        return emu::ChainLaunch{r[2], (r[1] + 255) / 256, 256};
    };
    auto launch = [](const unsigned long long* r, const r_in* items, const M* values, M* out) {
        const unsigned long long* q = r + 3;
        switch (r[0]) {
            case 0: reduce_axes(items, q[0], q[1], q[2], q[3], q[4], out); break;
            case 1: reduce_axes_values(values, q[0], q[1], q[2], q[3], q[4], out); break;
            case 2: reduce_axes_rows(items, q[0], q[1], q[2], q[3], q[4], q[5], out); break;
            case 3: reduce_axes_rows_values(values, q[0], q[1], q[2], q[3], q[4], q[5], out); break;
            case 4: reduce_axes_cols(items, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out); break;
            case 5: reduce_axes_cols_values(values, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out); break;
            case 6: reduce_axes_short(items, q[0], q[1], out); break;
            case 7: reduce_axes_short_values(values, q[0], q[1], out); break;
            case 8: reduce_axes_cols_long(items, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out); break;
            default: reduce_axes_cols_long_values(values, q[0], q[1], q[2], q[3], q[4], q[5], q[6], out);
        }
    };
    return emu::chains_main<r_in, M, RECORD>(argc, argv, shape, launch);
}
