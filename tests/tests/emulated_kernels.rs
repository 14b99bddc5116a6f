//! SegShuffle's kernel logic without a GPU: the generated CUDA text runs on the CPU under
//! `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, barriers and warp collectives as real
//! rendezvous, poisoned dynamic shared memory, AddressSanitizer on every access), block by
//! block, and must equal the sequential fold bit for bit on every layout — segments inside one
//! thread, across threads, tiles and blocks, empty segments before, between and after the
//! items, tiles inside one segment. Bad layouts (a trusted call's garbage) must finish without
//! touching memory out of bounds. Timing and the memory model stay the GPU tests' to check.
//!
//! Needs a host C++ compiler (`$CXX`, else `c++`); without one the tests say so and skip, and
//! fail under `REDUCE_REQUIRE_NVRTC=1` (CI), which has one.

use reduce_core::{fold_by_owner, fold_segments};
use reduce_cuda::{seg_kernel_source, SegAlgorithm, SegConfig};
use reduce_tests::{offsets_of, owners_of, Affine, Random, TestRng};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The host C++ compiler, or `None` (after saying why) where the tests may skip.
fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let works = Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(cxx);
    }
    if std::env::var("REDUCE_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
        panic!("REDUCE_REQUIRE_NVRTC=1 but no host C++ compiler ({cxx}) for the emulated kernels");
    }
    eprintln!("emulated kernel test skipped: no host C++ compiler ({cxx})");
    None
}

/// A SegShuffle launch compiled for the emulator.
struct Emulated {
    exe: PathBuf,
    dir: PathBuf,
    threads: u64,
    tile: u64,
    offsets_form: bool,
}

/// One launch's inputs: items, the layout (offsets or owners), segments and grid.
struct Case {
    items: Vec<Affine>,
    index: Vec<u32>,
    segments: u64,
    grid: u64,
}

impl Emulated {
    fn build(cxx: &str, threads: u32, items: u32, offsets_form: bool) -> Emulated {
        let config = SegConfig::new(SegAlgorithm::SegShuffle)
            .block(threads)
            .items_per_thread(items);
        let source = seg_kernel_source::<Affine>(config, offsets_form).unwrap();
        // `extern __shared__ T name[];` -> the emulator's dynamic shared memory.
        let text: String = source
            .text
            .lines()
            .map(
                |line| match line.trim().strip_prefix("extern __shared__ ") {
                    Some(decl) => {
                        let decl = decl.trim_end_matches("[];");
                        let (ty, name) = decl.rsplit_once(' ').unwrap();
                        format!("{ty}* {name} = reinterpret_cast<{ty}*>(emu_dynamic_smem());\n")
                    }
                    None => format!("{line}\n"),
                },
            )
            .collect();
        let emu = Path::new(env!("CARGO_MANIFEST_DIR")).join("emu");
        let tag = format!(
            "seg_shuffle_b{threads}_k{items}_{}",
            if offsets_form { "offsets" } else { "owner" }
        );
        let dir = std::env::temp_dir().join(format!("reduce-emu-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cpp = dir.join("kernel.cpp");
        std::fs::write(
            &cpp,
            format!(
                "#include \"{}\"\n{text}\n#include \"{}\"\n",
                emu.join("cuda_emu.hpp").display(),
                emu.join("seg_shuffle_main.cpp").display()
            ),
        )
        .unwrap();
        let exe = dir.join("kernel");
        let out = Command::new(cxx)
            .args(["-std=c++17", "-O1", "-g", "-w", "-fsanitize=address"])
            .args(["-fwrapv", "-fno-strict-aliasing", "-ffp-contract=off"])
            .arg(&cpp)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cxx} failed on {}:\n{}",
            cpp.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Emulated {
            exe,
            dir,
            threads: threads as u64,
            tile: threads as u64 * items as u64,
            offsets_form,
        }
    }

    /// Runs the cases in one process, the fibers of each block in increasing (or, `reverse`,
    /// decreasing) thread order; per case (status, per-segment values).
    fn run(&self, cases: &[Case], reverse: bool) -> Vec<(u64, Vec<Affine>)> {
        let mut input = Vec::new();
        for c in cases {
            let n = c.items.len() as u64;
            let estimate = (c.segments * self.tile).div_ceil(n.max(1));
            let smem = if self.offsets_form { 5 * self.tile } else { 0 };
            for h in [n, c.segments, c.index.len() as u64, c.grid, estimate, smem] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            for x in &c.items {
                input.extend_from_slice(&x.a.to_le_bytes());
                input.extend_from_slice(&x.b.to_le_bytes());
            }
            for i in &c.index {
                input.extend_from_slice(&i.to_le_bytes());
            }
        }
        let (cases_path, results_path) = (self.dir.join("cases"), self.dir.join("results"));
        std::fs::write(&cases_path, input).unwrap();
        let out = Command::new(&self.exe)
            .arg(&cases_path)
            .arg(&results_path)
            .arg(if reverse { "reverse" } else { "forward" })
            .env(
                "ASAN_OPTIONS",
                "detect_leaks=0:detect_stack_use_after_return=0",
            )
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the emulated kernel failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&results_path).unwrap();
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let mut at = 0;
        cases
            .iter()
            .map(|c| {
                let (status, ok) = (word(at), word(at + 8));
                assert_eq!(ok, 1, "deadlock, or the ticket was not reset");
                at += 16;
                let values = (0..c.segments)
                    .map(|_| {
                        let v = Affine {
                            a: u32_at(at),
                            b: u32_at(at + 4),
                        };
                        at += 8;
                        v
                    })
                    .collect();
                (status, values)
            })
            .collect()
    }
}

impl Drop for Emulated {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Segment lengths of every shape the kernel must handle, for `n` items and tiles of `tile`.
fn layouts(n: u64, tile: u64, rng: &mut TestRng) -> Vec<(&'static str, Vec<u32>)> {
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
    out
}

fn check_layouts(cxx: &str, threads: u32, items: u32, offsets_form: bool, seed: u64) {
    let kernel = Emulated::build(cxx, threads, items, offsets_form);
    let tile = kernel.tile;
    let mut rng = TestRng::new(seed);
    let mut cases = Vec::new();
    let mut expected = Vec::new();
    let mut names = Vec::new();
    for n in [
        1,
        2,
        31,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        9 * tile + 13,
    ] {
        for (name, lengths) in layouts(n, tile, &mut rng) {
            let items = Affine::random_vec(n as usize, rng.next_u64());
            let tiles = n.div_ceil(tile);
            for grid in [1, 2, 3, tiles] {
                if grid > tiles || (grid > 1 && rng.range(0, 1) == 0) {
                    continue;
                }
                let (index, want) = if offsets_form {
                    let offsets = offsets_of(&lengths);
                    let want = fold_segments(&items, &offsets).unwrap();
                    (offsets, want)
                } else {
                    let owners = owners_of(&lengths);
                    let want = fold_by_owner(&items, &owners, lengths.len()).unwrap();
                    (owners, want)
                };
                cases.push(Case {
                    items: items.clone(),
                    index,
                    segments: lengths.len() as u64,
                    grid,
                });
                expected.push(want);
                names.push(format!("{name}, n = {n}, grid = {grid}"));
            }
        }
    }
    for reverse in [false, true] {
        check_results(&kernel, &cases, &names, &expected, reverse);
    }
    eprintln!(
        "SegShuffle ({}, block {threads}, {items} items per thread): {} launches equal to the fold, \
         fibers in both orders",
        if offsets_form { "offsets" } else { "owners" },
        cases.len()
    );
}

fn check_results(
    kernel: &Emulated,
    cases: &[Case],
    names: &[String],
    expected: &[Vec<Affine>],
    reverse: bool,
) {
    let (threads, items) = (kernel.threads, kernel.tile / kernel.threads);
    let order = if reverse { "decreasing" } else { "increasing" };
    let results = kernel.run(cases, reverse);
    for ((name, want), (status, got)) in names.iter().zip(expected).zip(&results) {
        if let Some(s) = (0..want.len()).find(|&s| got[s] != want[s]) {
            panic!(
                "{name} (block {threads}, {items} items per thread, {order} thread order): \
                 segment {s} of {} is {:?}, the fold is {:?}",
                want.len(),
                got[s],
                want[s]
            );
        }
        if !kernel.offsets_form {
            assert_eq!(*status, u64::MAX, "{name}: a valid layout reported bad");
        }
    }
}

#[test]
fn seg_shuffle_offsets_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    // 16 items per thread: the head bytes move as 16-byte vectors; 4: as words; 3: byte by byte.
    check_layouts(&cxx, 64, 16, true, 1);
    check_layouts(&cxx, 32, 4, true, 2);
    check_layouts(&cxx, 96, 3, true, 3);
}

#[test]
fn seg_shuffle_default_block_offsets_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_layouts(&cxx, 256, 16, true, 4);
}

#[test]
fn seg_shuffle_owner_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_layouts(&cxx, 64, 16, false, 5);
}

/// A trusted call with a garbage layout: any result, but it finishes and stays in bounds
/// (AddressSanitizer aborts the process on an out-of-bounds access).
#[test]
fn seg_shuffle_garbage_offsets_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    let kernel = Emulated::build(&cxx, 64, 16, true);
    let mut rng = TestRng::new(6);
    let mut cases = Vec::new();
    for n in [1u64, 100, 1024, 5000] {
        for _ in 0..6 {
            let segments = rng.range(1, 2 * n);
            let spread = [n / 4 + 1, n + 1, u32::MAX as u64][rng.range(0, 2) as usize];
            let mut index: Vec<u32> = (0..=segments)
                .map(|_| rng.range(0, spread) as u32)
                .collect();
            if rng.range(0, 1) == 0 {
                index.sort_unstable(); // sorted but not from 0 to n
            }
            cases.push(Case {
                items: Affine::random_vec(n as usize, rng.next_u64()),
                index,
                segments,
                grid: rng.range(1, n.div_ceil(kernel.tile).min(4)),
            });
        }
    }
    for reverse in [false, true] {
        assert_eq!(kernel.run(&cases, reverse).len(), cases.len());
    }
}
