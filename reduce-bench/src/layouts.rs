//! Segment-length distributions of the segmented benchmarks (and of the integration tests), as
//! CSR offsets over N items, from a seeded generator (the same layouts in every run; the CUB
//! and PyTorch anchors read them from the files [`write_offsets`] makes, named by [`key`], so
//! every peer reduces the same layout).

/// The item counts of `bench segmented`.
pub const SIZES: [u64; 2] = [1 << 26, 30 << 20];
/// The item count of the mean-length sweep.
pub const SWEEP_N: u64 = 1 << 26;
/// Mean segment lengths of the sweep: 1, 2, 4, ..., 2^20.
pub const SWEEP_LOG2_MAX: u32 = 20;

/// The name of a layout of `n` items, as in the layout files and the anchors' outputs.
pub fn key(name: &str, n: u64) -> String {
    format!("{name}@{n}")
}

/// The name of the sweep's layout of mean length `mean`.
pub fn sweep_name(mean: u64) -> String {
    format!("sweep{mean}")
}

/// The distributions `bench segmented` reports, by name.
pub const DISTRIBUTIONS: [&str; 11] = [
    "one_segment",
    "size_1",
    "size_3",
    "uniform_1_8",
    "random_10_50",
    "power_1.5",
    "power_2",
    "power_3",
    "two_level",
    "equal_1000",
    "empty_90",
];

/// Heavy tails: power laws whose mean length is middling or short while 93-99% of the items lie
/// in segments of 2^16 or more (seed 7; mean lengths 21156, 3181, 2186, 1318 and 778 at 2^26
/// items; 62291, 9917, 1491, 1024 and 880 at 30 * 2^20): where `Auto` picks by the mean length,
/// a block-per-segment schedule meets both a few huge segments and many tiny ones.
pub const HEAVY_TAILS: [&str; 5] = [
    "power_1.58",
    "power_1.6",
    "power_1.65",
    "power_1.68",
    "power_1.7",
];

/// A few long segments of equal lengths (2^24, 2^22 and 2^20 items at 2^26): past and at the
/// longest mean length `bench segsweep` reaches, where a block-per-segment schedule cuts each
/// segment into chunks.
pub const FEW_SEGMENTS: [&str; 3] = ["equal_4", "equal_16", "equal_64"];

/// splitmix64: a small, fast, seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi].
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Offsets of segments drawn by `length` until `n` items are covered (the last one is cut).
fn offsets_from(n: u64, mut length: impl FnMut() -> u64) -> Vec<u64> {
    let mut offsets = vec![0u64];
    let mut at = 0u64;
    while at < n {
        at = (at + length()).min(n);
        offsets.push(at);
    }
    offsets
}

/// The distribution `name` over `n` items (see [`DISTRIBUTIONS`]), or `None` for an unknown
/// name. Power laws draw lengths from a Pareto law of that exponent (`P(L) ~ L^-a`, L >= 1,
/// cut at n) with 10% empty segments; `two_level` is mostly 1..4 items with one segment in
/// 2000 of 10^4..10^5; `equal_1000` is 1000 segments of n / 1000 items; `empty_90` has nine
/// empty segments in ten, the others of 1..8 items (about twice as many segments as items).
pub fn distribution(name: &str, n: u64, seed: u64) -> Option<Vec<u64>> {
    let mut rng = Rng(seed ^ 0x5eed_0000_0000_0000);
    let offsets = match name {
        "one_segment" => vec![0, n],
        "size_1" => (0..=n).collect(),
        "size_3" => offsets_from(n, || 3),
        "uniform_1_8" => offsets_from(n, || rng.range(1, 8)),
        "random_10_50" => offsets_from(n, || rng.range(10, 50)),
        "two_level" => offsets_from(n, || {
            if rng.range(0, 1999) == 0 {
                rng.range(10_000, 100_000)
            } else {
                rng.range(1, 4)
            }
        }),
        equal if equal.starts_with("equal_") => {
            let k: u64 = equal["equal_".len()..].parse().ok().filter(|&k| k > 0)?;
            (0..=k).map(|s| n * s / k).collect()
        }
        "empty_90" => offsets_from(n, || {
            if rng.range(0, 9) == 0 {
                rng.range(1, 8)
            } else {
                0
            }
        }),
        power if power.starts_with("power_") => {
            let a: f64 = power["power_".len()..].parse().ok()?;
            offsets_from(n, || {
                if rng.range(0, 9) == 0 {
                    0
                } else {
                    (rng.unit().powf(-1.0 / (a - 1.0)).floor() as u64).clamp(1, n)
                }
            })
        }
        _ => return None,
    };
    Some(offsets)
}

/// Segments of random lengths uniform in [1, 2L - 1] (mean L) over `n` items: the points of the
/// throughput-against-mean-length figure.
pub fn mean_length(mean: u64, n: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed ^ mean.wrapping_mul(0x100_0000_01b3));
    offsets_from(n, || rng.range(1, 2 * mean.max(1) - 1))
}

/// The offsets as u32 (every offset is at most n; `n` must fit u32).
pub fn to_u32(offsets: &[u64]) -> Vec<u32> {
    offsets.iter().map(|&o| o as u32).collect()
}

/// The owner of every item: segment ids, sorted.
pub fn owners(offsets: &[u64]) -> Vec<u32> {
    let mut owner = Vec::with_capacity(*offsets.last().unwrap_or(&0) as usize);
    for (s, w) in offsets.windows(2).enumerate() {
        owner.extend(std::iter::repeat_n(s as u32, (w[1] - w[0]) as usize));
    }
    owner
}

/// Writes the offsets as little-endian u32 to `path` (read by `anchors/cub_sweep.cu`,
/// `anchors/segargmax_anchor.cu` and `anchors/torch_seg.py`).
pub fn write_offsets(path: &std::path::Path, offsets: &[u64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = offsets
        .iter()
        .flat_map(|&o| (o as u32).to_le_bytes())
        .collect();
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distribution_covers_n_items_and_is_seeded() {
        for name in DISTRIBUTIONS {
            for n in [1u64, 1000, 100_003] {
                let o = distribution(name, n, 7).unwrap();
                assert_eq!((o[0], *o.last().unwrap()), (0, n), "{name}");
                assert!(o.windows(2).all(|w| w[0] <= w[1]), "{name}");
                assert_eq!(o, distribution(name, n, 7).unwrap(), "{name}");
            }
        }
        assert!(distribution("nope", 10, 1).is_none());
    }

    #[test]
    fn distributions_have_their_shape() {
        let n = 1 << 20;
        let segs = |name| distribution(name, n, 1).unwrap().len() as u64 - 1;
        assert_eq!(segs("size_1"), n);
        assert_eq!(segs("size_3"), n.div_ceil(3));
        assert_eq!(segs("equal_1000"), 1000);
        let p = distribution("power_2", n, 1).unwrap();
        let empty = p.windows(2).filter(|w| w[0] == w[1]).count() as f64;
        let share = empty / (p.len() - 1) as f64;
        assert!((0.07..0.13).contains(&share), "{share}");
        let m = mean_length(100, n, 3);
        let mean = n as f64 / (m.len() - 1) as f64;
        assert!((90.0..110.0).contains(&mean), "{mean}");
    }
}
