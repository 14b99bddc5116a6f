//! `bench large [--quick] [--out DIR]`: values of 128 to 2048 bytes (`monoids::Record`, a
//! keep-last record: a branch and a count a combine, so the bytes moved decide) in 1 GiB of items
//! (256 MiB with `--quick`) through plain `Auto` and the portable mode, segmented `Auto` by CSR
//! offsets and by owners (trusted, 64 items a segment) and the inclusive scan (`Auto`), against
//! the roofs of the same bytes in the same command: the read roof for the reductions (on the
//! items, layout and outputs they move), the copy roof for the scans (each item read and
//! written). Beside them, earlier defaults: plain `Shuffle` with a group of one block tile for
//! 512-byte values (before their blocks' shared values were sized by the block's warps), and
//! for 1 KiB values Shuffle at 256 threads and SegHeads at 64, the blocks before
//! docs/decisions/0092-large-value-blocks.md. And the candidates for values past 256 bytes: the
//! shared-memory trees `Tb2` (plain) and `Tb2Seg` (by offsets and by owners) at the blocks whose
//! data block fits, and `Shuffle` with more items a lane (its warp tree amortised over more items).
//! Every result is checked against the sequential references (`large.csv`, `large.txt`; each row
//! is also printed to stderr as it is measured, so that a run cut short keeps what it measured).
//! `LARGE_ONLY=1024,2048`: those value sizes only.

use crate::cli::Args;
use crate::kernels::{BenchKernels, FillMasks};
use crate::monoids::Record;
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::{fold, fold_segments, scan};
use reduce_cuda::{
    Algorithm, Config, DeviceVec, Gpu, Result, Scan, ScanConfig, SegAlgorithm, SegConfig,
};
use std::fmt::Write as _;

/// Items of a segment in the segmented rows.
const SEGMENT: usize = 64;

/// Every size, each in a fresh buffer of the same bytes.
pub fn large(args: &Args) -> Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let bytes = if args.quick { 1 << 28 } else { 1 << 30 };
    let mut table = Table {
        lines: vec![format!(
            "device {}: values of 128 to 2048 bytes, {} MiB of items",
            gpu.info().name,
            bytes >> 20
        )],
        csv: String::from("value_bytes,n,case,median_ms,ratio_to_roof,correct\n"),
    };
    // The roofs of these bytes (any words: the roof kernels only move them).
    let words = kernels.fill_random::<f32>(bytes / 4, 7, &FillMasks::default())?;
    let roofs = Roofs {
        read: kernels.read_roof_ms(&words, REPS)?,
        copy: kernels.copy_roof_ms(&words, REPS)?,
        bytes: bytes as f64,
    };
    drop(words);
    table.lines.push(format!(
        "read roof {:.4} ms, copy roof {:.4} ms",
        roofs.read, roofs.copy
    ));
    one_size::<15>(&gpu, &roofs, &mut table, Earlier::default())?;
    one_size::<31>(&gpu, &roofs, &mut table, Earlier::default())?;
    let group_of_one = Config::new(Algorithm::Shuffle).tile_group(1);
    let plain = [("Shuffle, group 1", group_of_one)];
    one_size::<63>(
        &gpu,
        &roofs,
        &mut table,
        Earlier {
            plain: &plain,
            ..Default::default()
        },
    )?;
    let wider = Config::new(Algorithm::Shuffle).block(256);
    let heads = SegConfig::new(SegAlgorithm::SegHeads).block(64).trusted();
    let earlier = Earlier {
        plain: &[("Shuffle, 256 threads", wider)],
        offsets: &[("offsets SegHeads, 64 threads, trusted", heads)],
    };
    one_size::<127>(&gpu, &roofs, &mut table, earlier)?;
    one_size::<255>(&gpu, &roofs, &mut table, Earlier::default())?;
    std::fs::write(args.out.join("large.csv"), &table.csv).expect("writing large.csv");
    report(&args.out, "large.txt", &table.lines);
    Ok(())
}

/// The roofs' times (ms) over `bytes`.
struct Roofs {
    read: f32,
    copy: f32,
    bytes: f64,
}

/// The report's lines and CSV.
struct Table {
    lines: Vec<String>,
    csv: String,
}

impl Table {
    /// A measured case: its median time and ratio to the roof, and whether its result was right.
    fn row(&mut self, size: usize, n: usize, case: &str, ms: f32, ratio: f64, correct: bool) {
        let ok = if correct { "yes" } else { "NO" };
        let line = format!("{size:>5} B  {case:<40} {ms:>9.4} ms  x roof {ratio:.3}  correct {ok}");
        eprintln!("{line}");
        self.lines.push(line);
        let _ = writeln!(self.csv, "{size},{n},{case},{ms},{ratio},{ok}");
    }

    /// A case the library refused (its error, first line).
    fn refused(&mut self, size: usize, n: usize, case: &str, e: &reduce_cuda::Error) {
        let why = e.to_string();
        let why = why.lines().next().unwrap_or_default();
        self.lines
            .push(format!("{size:>5} B  {case:<40} refused: {why}"));
        let _ = writeln!(self.csv, "{size},{n},{case},,,refused");
    }
}

/// Records of `K` words: keep-last values, one in four unset (the identity's payload).
fn records<const K: usize>(n: usize) -> Vec<Record<K>> {
    (0..n)
        .map(|i| {
            let set = i % 4 != 0;
            let word = |j: usize| ((i * K + j) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            Record {
                v: std::array::from_fn(|j| if set { word(j) } else { 0 }),
                n: 1,
                set,
            }
        })
        .collect()
}

/// Whether values of `size` bytes are measured: every size, or with `LARGE_ONLY` (value sizes
/// in bytes, separated by commas: the `largencu` phase's profiles) those only.
fn measured(size: usize) -> bool {
    match std::env::var("LARGE_ONLY") {
        Ok(only) => only.split(',').any(|s| s.trim().parse() == Ok(size)),
        Err(_) => true,
    }
}

/// The blocks of the shared-memory trees (`Tb2`, `Tb2Seg`) measured beside `Auto`: those whose
/// data block of `size`-byte values (2 per thread) fits 200 KiB of shared memory, at most 256.
fn tree_blocks(size: usize) -> Vec<u32> {
    [32, 64, 128, 256]
        .into_iter()
        .filter(|&b| 2 * b as usize * size <= 200 << 10)
        .collect()
}

/// The items a lane folds before `Shuffle`'s warp tree, measured beside `Auto` for values past
/// 256 bytes (whose default is one): the tree's shuffles amortised over more items.
fn lane_items(size: usize) -> Vec<u32> {
    match size {
        0..=256 => vec![],
        257..=1024 => vec![4, 16],
        _ => vec![4],
    }
}

/// The configurations measured beside `Auto`: plain, and segmented by offsets.
#[derive(Default)]
struct Earlier<'a> {
    plain: &'a [(&'a str, Config)],
    offsets: &'a [(&'a str, SegConfig)],
}

/// The rows of `Record<K>`, with `earlier`'s beside `Auto`'s.
fn one_size<const K: usize>(
    gpu: &Gpu,
    roofs: &Roofs,
    table: &mut Table,
    earlier: Earlier,
) -> Result<()> {
    let size = std::mem::size_of::<Record<K>>();
    if !measured(size) {
        return Ok(());
    }
    let n = roofs.bytes as usize / size;
    let host = records::<K>(n);
    let xs = gpu.upload(&host)?;
    let ratio = |ms: f32, moved: f64, roof: f32, roof_bytes: f64| {
        (moved / roof_bytes) * roof as f64 / ms as f64
    };
    let read = |ms: f32, moved: f64| ratio(ms, moved, roofs.read, roofs.bytes);

    let want = fold(&host);
    let mut out = gpu.identities::<Record<K>>(1)?;
    let trees = tree_blocks(size);
    let plain_cases: Vec<(String, Config)> = [
        ("plain Auto".to_string(), Config::default()),
        ("plain portable".to_string(), Config::default().portable()),
    ]
    .into_iter()
    .chain(earlier.plain.iter().map(|&(c, k)| (c.to_string(), k)))
    .chain(trees.iter().map(|&b| {
        let config = Config::new(Algorithm::Tb2).block(b);
        (format!("plain Tb2, {b} threads"), config)
    }))
    .chain(lane_items(size).into_iter().map(|k| {
        let config = Config::new(Algorithm::Shuffle).items_per_thread(k);
        (format!("Shuffle, {k} items a lane"), config)
    }))
    .collect();
    for (case, config) in &plain_cases {
        match median_ms(gpu, REPS, || gpu.reduce_into(&xs, &mut out, *config)) {
            Ok(ms) => {
                let correct = gpu.download(&out)?[0] == want;
                table.row(size, n, case, ms, read(ms, roofs.bytes), correct);
            }
            Err(e) => table.refused(size, n, case, &e),
        }
    }

    let segments = n.div_ceil(SEGMENT);
    let offsets: Vec<u32> = (0..=segments)
        .map(|s| (s * SEGMENT).min(n) as u32)
        .collect();
    let want = fold_segments(&host, &offsets).expect("a valid layout");
    let d_offsets = gpu.upload(&offsets)?;
    let mut per_segment: DeviceVec<Record<K>> = gpu.identities(segments)?;
    let moved = roofs.bytes + (4 * (segments + 1) + size * segments) as f64;
    // Auto and the trees, by offsets (and the earlier defaults) and by owners.
    let seg_cases: Vec<(String, SegConfig)> =
        [("Auto trusted".to_string(), SegConfig::default().trusted())]
            .into_iter()
            .chain(trees.iter().map(|&b| {
                let config = SegConfig::new(SegAlgorithm::Tb2Seg).block(b).trusted();
                (format!("Tb2Seg, {b} threads, trusted"), config)
            }))
            .collect();
    let offsets_cases = seg_cases
        .iter()
        .map(|(c, k)| (format!("offsets {c}"), *k))
        .chain(earlier.offsets.iter().map(|&(c, k)| (c.to_string(), k)));
    for (case, config) in offsets_cases {
        let call = || gpu.reduce_segments_into(&xs, &d_offsets, &mut per_segment, config);
        match median_ms(gpu, REPS, call) {
            Ok(ms) => {
                let correct = gpu.download(&per_segment)? == want;
                table.row(size, n, &case, ms, read(ms, moved), correct);
            }
            Err(e) => table.refused(size, n, &case, &e),
        }
    }

    // The same segments by u32 owners, into an output of identities (not the rows' above).
    drop(d_offsets);
    let owner: Vec<u32> = (0..n).map(|i| (i / SEGMENT) as u32).collect();
    let d_owner = gpu.upload(&owner)?;
    let mut by_owner: DeviceVec<Record<K>> = gpu.identities(segments)?;
    let moved = roofs.bytes + (4 * n + size * segments) as f64;
    for (case, config) in &seg_cases {
        let case = format!("owners {case}");
        let call = || gpu.reduce_by_owner_into(&xs, &d_owner, segments, &mut by_owner, *config);
        match median_ms(gpu, REPS, call) {
            Ok(ms) => {
                let correct = gpu.download(&by_owner)? == want;
                table.row(size, n, &case, ms, read(ms, moved), correct);
            }
            Err(e) => table.refused(size, n, &case, &e),
        }
    }
    drop((d_owner, by_owner, per_segment));

    let want = scan(&host, Scan::Inclusive);
    let mut scanned: DeviceVec<Record<K>> = gpu.identities(n)?;
    let call = || gpu.scan_into(&xs, Scan::Inclusive, &mut scanned, ScanConfig::default());
    match median_ms(gpu, REPS, call) {
        Ok(ms) => {
            let correct = gpu.download(&scanned)? == want;
            let r = ratio(ms, 2.0 * roofs.bytes, roofs.copy, 2.0 * roofs.bytes);
            table.row(size, n, "scan Auto inclusive", ms, r, correct);
        }
        Err(e) => table.refused(size, n, "scan Auto inclusive", &e),
    }
    eprintln!("large: {size}-byte values done");
    Ok(())
}
