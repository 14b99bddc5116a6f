// The host side of an emulated portable reduction along axes
// (tests/tests/emulated_axes_portable.rs): included after cuda_emu.hpp and the generated kernel
// text (kernels/axes_portable.cu). argv[3] orders the fibers as in seg_shuffle_main.cpp. Reads
// cases from argv[1], each
//   u64 n, shift, grid, passes; per pass u64 entry (0: reduce_axes_portable_nodes over the
//   pass before's nodes; 1, 2, 3: reduce_axes_portable, _units, _warps over the items) and the
//   kernel's arguments from n to rs3 (25); n r_in items;
// runs the passes in order, each on min(grid, its tiles) blocks, block by block, and appends to
// argv[2] per case
//   u64 ok (1, or 0 after a deadlock); the last pass's results * nodes M values
// (emu::chains_main).
int main(int argc, char** argv) {
    constexpr int RECORD = 26;  // entry, 25 arguments
    auto shape = [](const unsigned long long* q) {
        const unsigned long long results = q[2], y_log = q[4], nodes = q[7];
        const unsigned long long x = R_BLOCK >> y_log;
        return emu::ChainLaunch{results * nodes, (results + x - 1) / x * nodes, R_BLOCK};
    };
    auto launch = [](const unsigned long long* q, const r_in* items, const M* nodes_in, M* out) {
        auto pass = [&](auto kernel, auto input) {
            kernel(input, q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12],
                   q[13], q[14], q[15], q[16], q[17], q[18], q[19], q[20], q[21], q[22], q[23], q[24],
                   q[25], out);
        };
        switch (q[0]) {
            case 1: pass(reduce_axes_portable, items); break;
            case 2: pass(reduce_axes_portable_units, items); break;
            case 3: pass(reduce_axes_portable_warps, items); break;
            default: pass(reduce_axes_portable_nodes, nodes_in);
        }
    };
    return emu::chains_main<r_in, M, RECORD>(argc, argv, shape, launch);
}
