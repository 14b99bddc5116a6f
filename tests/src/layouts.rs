//! Segment layouts, as segment lengths, and the layouts (CSR offsets, owners) they make. Every
//! generator is seeded: a failing layout is the same on every run.

use crate::TestRng;
use reduce_core::SegIndex;

/// CSR offsets (segments + 1 entries, from 0) of segments with these lengths.
pub fn offsets_of<I: SegIndex>(lengths: &[I]) -> Vec<I> {
    std::iter::once(I::from_u64(0))
        .chain(lengths.iter().scan(0u64, |end, &l| {
            *end += l.to_u64();
            Some(I::from_u64(*end))
        }))
        .collect()
}

/// Segment lengths drawn in turn by `draw` until they cover `n` items (the last one cut to fit).
pub fn lengths_covering(n: u32, mut draw: impl FnMut() -> u64) -> Vec<u32> {
    let (mut lengths, mut total) = (Vec::new(), 0u32);
    while total < n {
        let l = draw().min((n - total) as u64) as u32;
        lengths.push(l);
        total += l;
    }
    lengths
}

/// The CSR offsets of u32 `lengths`, as u64 entries (what the emulated kernels' cases hold).
pub fn offsets_u64(lengths: &[u32]) -> Vec<u64> {
    offsets_of(&lengths.iter().map(|&l| l as u64).collect::<Vec<_>>())
}

/// The owner of every item (sorted segment ids) of segments with these lengths.
pub fn owners_of<I: SegIndex>(lengths: &[I]) -> Vec<I> {
    let runs = lengths.iter().enumerate();
    runs.flat_map(|(s, &l)| std::iter::repeat_n(I::from_u64(s as u64), l.to_u64() as usize))
        .collect()
}

/// The values as index type `I` (each must fit).
pub fn convert<I: SegIndex>(values: &[u64]) -> Vec<I> {
    values.iter().map(|&v| I::from_u64(v)).collect()
}

/// A length drawn from a geometric distribution with mean `mean` (0 included).
pub fn geometric(rng: &mut TestRng, mean: u64) -> u64 {
    let mut l = 0;
    while rng.range(0, mean) != 0 {
        l += 1;
    }
    l
}

/// Segment lengths around tile sizes: SegShuffle's tiles are 256 threads x 1..64 items,
/// SegMerge's 128 x 1..16 path steps, the paper algorithms' data blocks 512..8192.
pub const TILE_LENGTHS: [u64; 27] = [
    127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072,
    3073, 4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385,
];

/// A random mixture, about `n` items: runs of empty segments, runs of size 1, long segments,
/// tile lengths, geometric and uniform short lengths.
pub fn mixture(rng: &mut TestRng, n: u64) -> Vec<u64> {
    let mut lengths = Vec::new();
    let mut total = 0;
    while total < n {
        match rng.range(0, 6) {
            0 => lengths.extend(std::iter::repeat_n(0, rng.range(1, 3000) as usize)),
            1 => lengths.extend(std::iter::repeat_n(1, rng.range(1, 3000) as usize)),
            2 => lengths.push(rng.range(1000, 50_000)),
            3 => lengths.push(TILE_LENGTHS[rng.range(0, 26) as usize]),
            4 => lengths.extend((0..rng.range(1, 500)).map(|_| geometric(rng, 8))),
            _ => lengths.extend((0..rng.range(1, 500)).map(|_| rng.range(0, 50))),
        }
        total = lengths.iter().sum();
    }
    lengths
}

/// Every layout shape, as (name, segment lengths): no segments, every segment empty, N = 1, one
/// long segment, all items in the last (or first) segment beside thousands of empty ones,
/// alternating empty and long segments, geometric lengths (growing, shrinking, drawn), lengths
/// at and around tile sizes, at multiples of 16 x block (aligned and shifted), one huge segment
/// then many of size 1 (and the reverse), segment counts 2^k - 1, 2^k and 2^k + 1 (on both
/// sides of SegShuffle's early-check limit of 4096 offsets), mostly empty, and random
/// mixtures of all of these.
pub fn every_shape() -> Vec<(String, Vec<u64>)> {
    let mut rng = TestRng::new(0x6e6e);
    let mut out: Vec<(String, Vec<u64>)> = vec![
        ("S = 0, N = 0".into(), vec![]),
        ("S = 1, N = 0".into(), vec![0]),
        ("S = 5000, every segment empty".into(), vec![0; 5000]),
        ("N = 1, S = 1".into(), vec![1]),
        ("N = 1 among empties".into(), vec![0, 0, 0, 1, 0, 0]),
        ("S = 1, N = 200_003".into(), vec![200_003]),
        ("S = 1, N = 2^16 + 1".into(), vec![65_537]),
        (
            "all items in the last segment after 5000 empty ones".into(),
            [vec![0; 5000], vec![100_001]].concat(),
        ),
        (
            "all items in the first segment, then 6000 empty ones".into(),
            [vec![100_001], vec![0; 6000]].concat(),
        ),
        (
            "alternating empty / 3001".into(),
            (0..60).flat_map(|_| [0, 3001]).collect(),
        ),
        (
            "geometric 1, 2, 4 .. 2^17".into(),
            (0..18).map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric 2^17 .. 4, 2, 1".into(),
            (0..18).rev().map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric lengths drawn, mean 8".into(),
            (0..40_001).map(|_| geometric(&mut rng, 8)).collect(),
        ),
        (
            "tile lengths, three of each, then a size 1".into(),
            TILE_LENGTHS.iter().flat_map(|&l| [l, l, l, 1]).collect(),
        ),
        (
            "huge segment, then 100_000 of size 1".into(),
            [vec![1_000_003], vec![1; 100_000]].concat(),
        ),
        (
            "100_000 of size 1, then a huge segment".into(),
            [vec![1; 100_000], vec![1_000_003]].concat(),
        ),
        ("S = 2^16 + 1 of size 1".into(), vec![1; 65_537]),
        (
            // past the free identity fills of a tile of 4096 items (16 ids an item)
            "1 item, 300_000 empty segments, then 5000 items".into(),
            [vec![1], vec![0; 300_000], vec![5000]].concat(),
        ),
        ("mostly empty (S = 200_000, 0.1% long)".into(), {
            (0..200_000)
                .map(|_| {
                    if rng.range(0, 999) == 0 {
                        rng.range(1, 5000)
                    } else {
                        0
                    }
                })
                .collect()
        }),
    ];
    // Multiples of 16 x block (SegShuffle's 16 items per thread at 64..1024 threads), from an
    // aligned start and shifted by 1 and 15 items.
    let multiples: Vec<u64> = [
        1024u64, 2048, 3072, 4096, 8192, 12_288, 16_384, 24_576, 32_768,
    ]
    .iter()
    .flat_map(|&l| [l, l])
    .collect();
    for shift in [0u64, 1, 15] {
        let mut lengths = if shift == 0 { vec![] } else { vec![shift] };
        lengths.extend(&multiples);
        out.push((
            format!("multiples of 16 x block, shifted by {shift}"),
            lengths,
        ));
    }
    // Segment counts 2^k - 1, 2^k, 2^k + 1 (4095 segments are 4096 offsets: SegShuffle's early
    // check at 256 threads; one more takes the fused check).
    for segments in [4095usize, 4096, 4097, 65_535, 65_537] {
        out.push((
            format!("S = {segments}, lengths 0..6"),
            (0..segments).map(|_| rng.range(0, 6)).collect(),
        ));
    }
    for k in 0..2 {
        out.push((format!("random mixture {k}"), mixture(&mut rng, 600_000)));
    }
    out
}

/// Named layouts of about a million items: one segment, random lengths, all of one size, no
/// items, many empty segments mixed in, one segment per data block of the paper's algorithms
/// (and one item more or less, and straddling every block boundary), and Zipf-like lengths.
pub fn basic() -> Vec<(&'static str, Vec<u32>)> {
    let mut rng = TestRng::new(2024);
    let n = 1_000_003u32;
    let mut out = vec![
        ("one segment", vec![n]),
        (
            "random 10..50",
            (0..40_000).map(|_| rng.range(10, 50) as u32).collect(),
        ),
        ("all size 3", vec![3; 333_334]),
        ("all size 1", vec![1; 200_001]),
        ("no items", vec![0; 17]),
        ("nothing", vec![]),
        (
            "many empty mixed in",
            (0..60_000)
                .map(|_| {
                    if rng.range(0, 2) == 0 {
                        0
                    } else {
                        rng.range(1, 40) as u32
                    }
                })
                .collect(),
        ),
        (
            "leading and trailing empties",
            [vec![0; 1000], vec![7; 1000], vec![0; 5000]].concat(),
        ),
    ];
    // One segment per data block, and one item more or less, for the data-block sizes in use.
    for d in [512u32, 1024, 2048, 4096, 8192] {
        out.push(("one per data block", vec![d; 97]));
        out.push(("one per data block - 1", vec![d - 1; 97]));
        out.push(("one per data block + 1", vec![d + 1; 97]));
        // Segments straddling every block boundary: cut in the middle of each block.
        out.push((
            "straddling every boundary",
            std::iter::once(d / 2)
                .chain(std::iter::repeat_n(d, 96))
                .collect(),
        ));
    }
    // Zipf-like: a few huge segments among very many tiny ones.
    let zipf: Vec<u32> = (1..=30_000u32)
        .map(|rank| {
            let len = (400_000.0 / (rank as f64).powf(1.2)) as u32;
            if rng.range(0, 9) == 0 {
                0
            } else {
                len.max(1)
            }
        })
        .collect();
    out.push(("zipf-like", zipf));
    out
}

/// The shapes of [`every_shape`] scaled to a tile of `t` items (the emulator runs a few
/// thousand items per launch at most).
pub fn every_shape_in_tiles(t: u64, seed: u64) -> Vec<(String, Vec<u64>)> {
    let mut rng = TestRng::new(seed);
    vec![
        ("N = 1, S = 1".into(), vec![1]),
        ("N = 1 among empties".into(), vec![0, 0, 0, 1, 0, 0]),
        ("S = 1, N = 3t + 5".into(), vec![3 * t + 5]),
        (
            "all items in the last segment after 2t + 3 empty ones".into(),
            [vec![0; 2 * t as usize + 3], vec![3 * t + 5]].concat(),
        ),
        (
            "all items in the first segment, then 2t + 3 empty ones".into(),
            [vec![3 * t + 5], vec![0; 2 * t as usize + 3]].concat(),
        ),
        (
            "alternating empty / t + 7".into(),
            (0..5).flat_map(|_| [0, t + 7]).collect(),
        ),
        (
            "geometric 1, 2, 4 .. 4t".into(),
            (0..=(4 * t).ilog2()).map(|k| 1u64 << k).collect(),
        ),
        (
            "geometric lengths drawn, mean 4".into(),
            (0..700).map(|_| geometric(&mut rng, 4)).collect(),
        ),
        (
            "tile lengths t - 1, t, t + 1, 2t - 1, 2t, 2t + 1".into(),
            [t - 1, t, t + 1, 1, 2 * t - 1, 2 * t, 2 * t + 1, 0, t]
                .into_iter()
                .collect(),
        ),
        (
            // a fill past a tile's free allowance of empty segments (16 ids an item)
            "1 item, 17t + 3 empty segments, then t + 5 items".into(),
            [vec![1], vec![0; 17 * t as usize + 3], vec![t + 5]].concat(),
        ),
        (
            "huge segment, then 2t of size 1".into(),
            [vec![4 * t + 1], vec![1; 2 * t as usize]].concat(),
        ),
        (
            "S = 2^7 - 1, lengths 0..6".into(),
            (0..127).map(|_| rng.range(0, 6)).collect(),
        ),
        (
            "S = 2^7 + 1, lengths 0..6".into(),
            (0..129).map(|_| rng.range(0, 6)).collect(),
        ),
        ("random mixture".into(), {
            let mut lengths = Vec::new();
            while lengths.iter().sum::<u64>() < 5 * t {
                match rng.range(0, 3) {
                    0 => lengths.extend(std::iter::repeat_n(0, rng.range(1, t + 40) as usize)),
                    1 => lengths.extend(std::iter::repeat_n(1, rng.range(1, 60) as usize)),
                    2 => lengths.push(rng.range(t / 2, 2 * t + 3)),
                    _ => lengths.extend((0..rng.range(1, 60)).map(|_| rng.range(0, 9))),
                }
            }
            lengths
        }),
    ]
}

/// Segment lengths of every shape SegShuffle's kernel must handle, exactly `n` items in all,
/// for tiles of `tile` items.
pub fn filling(n: u64, tile: u64, rng: &mut TestRng) -> Vec<(&'static str, Vec<u32>)> {
    let fill = |rng: &mut TestRng, f: &dyn Fn(&mut TestRng) -> u64| {
        let mut lengths = Vec::new();
        let mut left = n;
        while left > 0 {
            let l = f(rng).min(left);
            lengths.push(l as u32);
            left -= l;
        }
        lengths
    };
    let mut out = vec![
        ("one segment", vec![n as u32]),
        ("size 1", vec![1; n as usize]),
        ("size 3", fill(rng, &|_| 3)),
        ("random 0..8", fill(rng, &|r| r.range(0, 8))),
        ("random 10..50", fill(rng, &|r| r.range(10, 50))),
        (
            "mostly short, some past a tile",
            fill(rng, &|r| {
                if r.range(0, 30) == 0 {
                    r.range(tile / 2, 3 * tile)
                } else {
                    r.range(0, 3)
                }
            }),
        ),
        (
            "90% empty",
            fill(rng, &|r| if r.range(0, 9) == 0 { r.range(1, 6) } else { 0 }),
        ),
        ("tile-sized", fill(rng, &|_| tile)),
        ("tile +- 1", fill(rng, &|r| tile - 1 + 2 * r.range(0, 1))),
        ("long", fill(rng, &|r| r.range(tile, 5 * tile))),
        // Few segments a tile, some of them short: a thread's run may hold two starts or
        // more, or an empty segment, in a tile that few segments touch.
        (
            "long with short bursts",
            fill(rng, &|r| {
                if r.range(0, 3) == 0 {
                    r.range(0, 3)
                } else {
                    r.range(tile / 4, tile)
                }
            }),
        ),
    ];
    // Empty segments before and after the items, and runs of them in between.
    let mut padded = vec![0, 0, 0];
    padded.extend(fill(rng, &|r| {
        if r.range(0, 4) == 0 {
            0
        } else {
            r.range(1, 20)
        }
    }));
    padded.extend([0; 40]);
    out.push(("empties at both ends", padded));
    // Runs of empty segments longer than a tile (past any stage) between and after the items,
    // the middle one past a tile's free identity fills (16 ids an item: the kernels' budget;
    // for n up to about a tile it joins the leading run).
    let mut runs = vec![0; tile as usize + 5];
    runs.extend(fill(rng, &|r| r.range(1, 4)));
    let middle = runs.len() / 2 + 1;
    runs.splice(
        middle..middle,
        std::iter::repeat_n(0, 17 * tile as usize + 3),
    );
    runs.extend(std::iter::repeat_n(0, 3 * tile as usize + 1));
    out.push(("runs of empties past a tile", runs));
    out
}

/// Valid CSR `offsets` over `n` items broken each way a layout check must catch: the first
/// offset not 0, the last not n, offsets that decrease (or, with a single segment, the last
/// short of n); with `wide` (u64 entries) the last past the u32 range and an entry in the
/// middle past it (read as 0xffffffff by a kernel that narrows).
pub fn broken_offsets(offsets: &[u64], n: u64, wide: bool) -> Vec<Vec<u64>> {
    let last = offsets.len() - 1;
    let mut broken = vec![offsets.to_vec(); 3];
    broken[0][0] = 1;
    broken[1][last] = if wide { n + (1 << 32) } else { n + 1 };
    if last >= 2 {
        broken[2][1] = offsets[2] + 1;
        broken[2][2] = offsets[2];
        if last > 2 && offsets[2] + 1 > offsets[last] {
            broken[2][last] = offsets[2] + 1;
        }
        if wide {
            let mut past = offsets.to_vec();
            past[1] = 1 << 40;
            broken.push(past);
        }
    } else {
        broken[2][last] = n - 1;
    }
    broken
}

/// A garbage CSR layout over `n` items (what a trusted call may be handed): 1 to 2n segments
/// whose offsets are random within a quarter of the items, the items, the u32 range or (when
/// `wide`) the u64 range, sorted or not.
pub fn garbage_offsets(rng: &mut TestRng, n: u64, wide: bool) -> Vec<u64> {
    let segments = rng.range(1, 2 * n);
    let spread =
        [n / 4 + 1, n + 1, u32::MAX as u64, u64::MAX - 1][rng.range(0, 2 + wide as u64) as usize];
    let mut offsets: Vec<u64> = (0..=segments).map(|_| rng.range(0, spread)).collect();
    if rng.range(0, 1) == 0 {
        offsets.sort_unstable();
    }
    offsets
}
