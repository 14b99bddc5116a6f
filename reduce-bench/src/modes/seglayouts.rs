//! `bench seglayouts [--layouts DIR]`: writes every layout of `segmented` and `segsweep` as a
//! u32 offsets file `<layout>@<n>.u32`, which the CUB (`anchors/cub_sweep.cu`,
//! `anchors/segargmax_anchor.cu`) and PyTorch (`anchors/torch_seg.py`) anchors read, so that
//! every peer reduces the same layouts in the same device command.

use crate::cli::Args;
use crate::layouts::{
    self, distribution, key, mean_length, sweep_name, DISTRIBUTIONS, SIZES, SWEEP_LOG2_MAX, SWEEP_N,
};

/// Writes every layout of `segmented` and `segsweep` into `args.layouts` for the anchors.
pub fn seglayouts(args: &Args) -> reduce_cuda::Result<()> {
    std::fs::create_dir_all(&args.layouts).expect("creating the layouts folder");
    let mut written = 0;
    let mut write = |name: String, offsets: Vec<u64>| {
        let path = args.layouts.join(format!("{name}.u32"));
        layouts::write_offsets(&path, &offsets).expect("writing a layout");
        written += 1;
    };
    for n in SIZES {
        for dist in DISTRIBUTIONS {
            write(key(dist, n), distribution(dist, n, 7).unwrap());
        }
    }
    for k in 0..=SWEEP_LOG2_MAX {
        let mean = 1u64 << k;
        write(
            key(&sweep_name(mean), SWEEP_N),
            mean_length(mean, SWEEP_N, 7),
        );
    }
    println!("{written} layouts in {}", args.layouts.display());
    Ok(())
}
