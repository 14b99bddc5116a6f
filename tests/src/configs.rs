//! Configurations that several test files sweep.

use reduce_cuda::{Algorithm, Config, DeviceInfo, Error, Gpu, SegAlgorithm, SegConfig};

/// Every plain algorithm and Auto, at their defaults.
pub fn every_config() -> Vec<Config> {
    Algorithm::ALL
        .iter()
        .map(|&a| Config::new(a))
        .chain([Config::new(Algorithm::Auto)])
        .collect()
}

/// SegMerge at its defaults.
pub fn merge() -> SegConfig {
    SegConfig::new(SegAlgorithm::SegMerge)
}

/// Every SegAlgorithm `gpu` runs (`SegAlgorithm::runs_on`) and Auto, validated and trusted.
pub fn every_seg_config(gpu: &Gpu) -> impl Iterator<Item = SegConfig> + '_ {
    SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| a.runs_on(gpu.info()))
        .chain([SegAlgorithm::Auto])
        .flat_map(|a| [SegConfig::new(a), SegConfig::new(a).trusted()])
}

/// [`every_seg_config`] and three non-default configurations: SegShuffle with small tiles on a
/// fixed grid, SegPipeline with small tiles, one stage and a fixed grid, and SegMerge with small
/// tiles, 4 stages and a fixed grid, trusted; SegPipeline's only where `gpu` runs it.
pub fn seg_configs(gpu: &Gpu) -> Vec<SegConfig> {
    every_seg_config(gpu)
        .chain([
            SegConfig::new(SegAlgorithm::SegShuffle)
                .block(64)
                .items_per_thread(3)
                .grid(5),
            SegConfig::new(SegAlgorithm::SegPipeline)
                .block(64)
                .items_per_thread(3)
                .stages(1)
                .grid(6),
            merge()
                .block(64)
                .items_per_thread(2)
                .stages(4)
                .grid(7)
                .trusted(),
        ])
        .filter(|config| config.algorithm.runs_on(gpu.info()))
        .collect()
}

/// Whether a configuration takes u64 layouts (the paper's algorithms take u32 only).
pub fn takes_u64(config: &SegConfig) -> bool {
    !config.algorithm.is_paper()
}

/// The shared memory a block may take on the cards the tests' hand-set tiles were sized on (an
/// H100 or H200: 227 KiB).
const SIZED_ON_SMEM: usize = 227 * 1024;

/// Whether `e` is what a GPU older or smaller than an H100 rightly answers `config` with, so that
/// sweeps sized on an H100 pass on any device from sm_80 on:
/// - an algorithm the device does not run (`SegAlgorithm::runs_on`: SegPipeline below sm_90):
///   `Error::InvalidConfig` naming the compute capability it needs;
/// - where a block holds less shared memory than on an H100 (an A100 163 KiB, sm_86 and sm_89
///   99 KiB), the launch's refusal of a block's shared memory (`Device::kernel`: "the device
///   allows") for knobs set by hand, a paper algorithm at its fixed tile, or SegMerge at its
///   defaults for values of `value_bytes` past 420 (its static arrays alone leave no room in
///   99 KiB).
///
/// Never for the library's own algorithms at their defaults otherwise, which fit every device
/// from sm_80 on.
pub fn seg_declined(gpu: &Gpu, config: &SegConfig, value_bytes: usize, e: &Error) -> bool {
    seg_declined_on(gpu.info(), config, value_bytes, e)
}

/// [`seg_declined`] for plain reductions: knobs set by hand or a paper algorithm.
pub fn plain_declined(gpu: &Gpu, config: &Config, e: &Error) -> bool {
    plain_declined_on(gpu.info(), config, e)
}

/// SegMerge's defaults fit 99 KiB for values of up to this many bytes.
const MERGE_FITS_ANY_DEVICE: usize = 420;

fn seg_declined_on(info: &DeviceInfo, config: &SegConfig, value_bytes: usize, e: &Error) -> bool {
    if !config.algorithm.runs_on(info) {
        return matches!(e, Error::InvalidConfig { reason, .. } if reason.contains("or newer"));
    }
    let by_hand = config.block.is_some()
        || config.items_per_thread.is_some()
        || config.stages.is_some()
        || config.matrix_width.is_some()
        || config.producers.is_some();
    let large_merge =
        config.algorithm == SegAlgorithm::SegMerge && value_bytes > MERGE_FITS_ANY_DEVICE;
    (by_hand || config.algorithm.is_paper() || large_merge) && smaller_card_declined(info, e)
}

fn plain_declined_on(info: &DeviceInfo, config: &Config, e: &Error) -> bool {
    let by_hand = config.block.is_some()
        || config.items_per_thread.is_some()
        || config.matrix_width.is_some()
        || config.producers.is_some()
        || config.tile_group.is_some();
    let paper = !matches!(config.algorithm, Algorithm::Shuffle | Algorithm::Auto);
    (by_hand || paper) && smaller_card_declined(info, e)
}

fn smaller_card_declined(info: &DeviceInfo, e: &Error) -> bool {
    info.max_shared_per_block < SIZED_ON_SMEM
        && matches!(e, Error::InvalidConfig { reason, .. } if reason.contains("the device allows"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(major: i32, minor: i32, smem_kib: usize) -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: format!("sm_{major}{minor}"),
            compute_capability: (major, minor),
            multiprocessors: 108,
            l2_bytes: 40 << 20,
            max_shared_per_block: smem_kib * 1024,
            shared_per_sm: (smem_kib + 1) * 1024,
            reserved_shared_per_block: 1024,
            threads_per_sm: 2048,
            blocks_per_sm: 32,
            total_memory: 40 << 30,
            nvrtc_version: (13, 0),
        }
    }

    fn refusal(reason: &str) -> Error {
        Error::InvalidConfig {
            algorithm: "SegMerge",
            reason: reason.into(),
        }
    }

    /// What a smaller or older card may decline, and what it may not: `Device::kernel`'s
    /// message for a block past the device's shared memory, SegPipeline's below sm_90.
    #[test]
    fn what_a_smaller_device_may_decline() {
        let (h100, a100, sm86) = (card(9, 0, 227), card(8, 0, 163), card(8, 6, 99));
        let launch = refusal(
            "needs 131072 bytes of shared memory per block (129000 for the data, 2072 static); \
             the device allows 101376: a smaller block, matrix width, items per thread or fewer \
             stages need less",
        );
        let planner = refusal("1024 threads need 133672 bytes of shared memory; the limits are");
        let merge = SegConfig::new(SegAlgorithm::SegMerge);
        let by_hand = merge.block(512).stages(6);
        // Knobs set by hand: declined where a block holds less than an H100's, never on it.
        assert!(seg_declined_on(&sm86, &by_hand, 8, &launch));
        assert!(seg_declined_on(&a100, &by_hand, 8, &launch));
        assert!(!seg_declined_on(&h100, &by_hand, 8, &launch));
        // Defaults never (but SegMerge's past 420-byte values); a planner's own refusal never.
        assert!(!seg_declined_on(&sm86, &merge, 8, &launch));
        assert!(!seg_declined_on(&sm86, &merge, 256, &launch));
        assert!(seg_declined_on(&sm86, &merge, 512, &launch));
        assert!(!seg_declined_on(&h100, &merge, 512, &launch));
        assert!(!seg_declined_on(&sm86, &by_hand, 8, &planner));
        // Paper algorithms at their fixed tiles: declined by a smaller card.
        let paper = SegConfig::new(SegAlgorithm::MatrixSeg);
        assert!(seg_declined_on(&sm86, &paper, 8, &launch));
        let diff_warps = Config::new(Algorithm::DiffWarps);
        assert!(plain_declined_on(&sm86, &diff_warps, &launch));
        assert!(!plain_declined_on(&h100, &diff_warps, &launch));
        assert!(!plain_declined_on(
            &sm86,
            &Config::new(Algorithm::Auto),
            &launch
        ));
        assert!(plain_declined_on(
            &sm86,
            &Config::new(Algorithm::Shuffle).block(1024),
            &launch
        ));
        // Which card runs which: SegPipeline from sm_90 on, the rest from sm_80 on.
        assert!(
            !SegAlgorithm::SegPipeline.runs_on(&a100) && !SegAlgorithm::SegPipeline.runs_on(&sm86)
        );
        assert!(SegAlgorithm::SegPipeline.runs_on(&h100));
        assert!(SegAlgorithm::ALL
            .iter()
            .all(|a| *a == SegAlgorithm::SegPipeline || a.runs_on(&a100)));
        // SegPipeline below sm_90: its own refusal, at any knobs; nothing else.
        let pipeline = SegConfig::new(SegAlgorithm::SegPipeline);
        let below =
            refusal("needs sm_90 or newer (bulk copies and mbarriers); this device is sm_80");
        assert!(seg_declined_on(&a100, &pipeline, 8, &below));
        assert!(!seg_declined_on(&a100, &pipeline, 8, &launch));
        assert!(!seg_declined_on(&h100, &pipeline, 8, &below));
    }
}
