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

/// Every SegAlgorithm `gpu` runs ([`runs_on`]) and Auto, validated and trusted.
pub fn every_seg_config(gpu: &Gpu) -> impl Iterator<Item = SegConfig> + '_ {
    SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| runs_on(gpu, a))
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
        .filter(|config| runs_on(gpu, config.algorithm))
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
/// - SegPipeline below sm_90 (its bulk copies and mbarriers): `Error::InvalidConfig` naming sm_90;
/// - where a block holds less shared memory than on an H100 (an A100 163 KiB, sm_86 and sm_89
///   99 KiB), the launch's refusal of a block's shared memory ("the device allows") for knobs
///   set by hand or a paper algorithm at its fixed tile.
///
/// Never for the library's own algorithms at their defaults, which fit every device from sm_80 on.
pub fn seg_declined(gpu: &Gpu, config: &SegConfig, e: &Error) -> bool {
    let info = gpu.info();
    if config.algorithm == SegAlgorithm::SegPipeline && info.compute_capability.0 < 9 {
        return matches!(e, Error::InvalidConfig { reason, .. } if reason.contains("sm_90"));
    }
    let by_hand = config.block.is_some()
        || config.items_per_thread.is_some()
        || config.stages.is_some()
        || config.matrix_width.is_some()
        || config.producers.is_some();
    (by_hand || config.algorithm.is_paper()) && smaller_card_declined(info, e)
}

/// [`seg_declined`] for plain reductions: knobs set by hand or a paper algorithm.
pub fn plain_declined(gpu: &Gpu, config: &Config, e: &Error) -> bool {
    let by_hand = config.block.is_some()
        || config.items_per_thread.is_some()
        || config.matrix_width.is_some()
        || config.producers.is_some()
        || config.tile_group.is_some();
    let paper = !matches!(config.algorithm, Algorithm::Shuffle | Algorithm::Auto);
    (by_hand || paper) && smaller_card_declined(gpu.info(), e)
}

/// Whether `gpu` runs `algorithm` at all: SegPipeline needs sm_90 (below it the call is the
/// typed refusal [`seg_declined`] accepts); every other algorithm runs from sm_80 on.
pub fn runs_on(gpu: &Gpu, algorithm: SegAlgorithm) -> bool {
    algorithm != SegAlgorithm::SegPipeline || gpu.info().compute_capability.0 >= 9
}

fn smaller_card_declined(info: &DeviceInfo, e: &Error) -> bool {
    info.max_shared_per_block < SIZED_ON_SMEM
        && matches!(e, Error::InvalidConfig { reason, .. } if reason.contains("the device allows"))
}
