//! Configurations that several test files sweep.

use reduce_cuda::{Algorithm, Config, SegAlgorithm, SegConfig};

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

/// Every SegAlgorithm and Auto, validated and trusted.
pub fn every_seg_config() -> impl Iterator<Item = SegConfig> {
    SegAlgorithm::ALL
        .into_iter()
        .chain([SegAlgorithm::Auto])
        .flat_map(|a| [SegConfig::new(a), SegConfig::new(a).trusted()])
}

/// [`every_seg_config`] and three non-default configurations: SegShuffle with small tiles on a
/// fixed grid, SegPipeline with small tiles, one stage and a fixed grid, and SegMerge with small
/// tiles, 4 stages and a fixed grid, trusted.
pub fn seg_configs() -> Vec<SegConfig> {
    every_seg_config()
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
        .collect()
}

/// Whether a configuration takes u64 layouts (the paper's algorithms take u32 only).
pub fn takes_u64(config: &SegConfig) -> bool {
    !config.algorithm.is_paper()
}
