//! Sweeps on the GPU that report every failing kind of call at once: a monoid over many layouts
//! or sizes, with every configuration, both forms (CSR offsets, owners), u32 and u64 layouts,
//! allocating and `_into` calls (into a poisoned buffer longer than the output, whose tail must
//! stay as it was), bit for bit against the sequential CPU fold; and every kernel of a monoid
//! through NVRTC. The paper's algorithms may refuse large items with an `InvalidConfig` that
//! names shared memory ([`refused`]).

use crate::configs::{plain_declined, seg_configs, seg_declined, takes_u64};
use crate::layouts::{convert, every_shape, offsets_of, owners_of};
use crate::{Random, CI_ARCH};
use reduce_core::{fold, fold_segments, SegIndex};
use reduce_cuda::testing::{
    compile_kernel, compile_seg_kernel, compile_seg_kernel_for, seg_kernel_variants_for,
};
use reduce_cuda::{Algorithm, Config, CudaMonoid, DeviceVec, Error, Gpu, SegAlgorithm, SegConfig};
use std::fmt::Debug;

/// The monoid's CUDA name and size, for messages (a const-generic monoid has one name).
pub fn name<M: CudaMonoid>() -> String {
    format!("{} ({} B)", M::CUDA_NAME, std::mem::size_of::<M>())
}

/// The first segment where `got` differs from `want` (or a length mismatch), as a message.
pub fn diff<M: PartialEq + Debug>(got: &[M], want: &[M]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    match (0..want.len()).find(|&i| got[i] != want[i]) {
        Some(i) => Err(format!(
            "segment {i} of {}: got {:?}, expected {:?}",
            want.len(),
            got[i],
            want[i]
        )),
        None => Ok(()),
    }
}

/// Panics at the first segment where `got` differs from `want` (or on a length mismatch).
pub fn same<M: PartialEq + Debug>(ctx: &str, got: &[M], want: &[M]) {
    if let Err(e) = diff(got, want) {
        panic!("{ctx}: {e}");
    }
}

/// Failed calls, one entry per kind of call (algorithm, form, index type, ...): the first
/// failure's message and how many cases failed. A test collects them all and then panics with
/// the whole list, so that one run shows every configuration a monoid or layout breaks.
#[derive(Default)]
pub struct Failures(std::collections::BTreeMap<String, (usize, String)>);

impl Failures {
    pub fn note(&mut self, key: String, outcome: Result<(), String>) {
        if let Err(message) = outcome {
            let entry = self.0.entry(key).or_insert((0, message));
            entry.0 += 1;
        }
    }

    /// Whether calls of this kind already failed (then they are not made again: a kernel that
    /// does not compile is compiled anew, slowly, by every call).
    pub fn failed(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub fn finish(self, what: &str) {
        if self.0.is_empty() {
            return;
        }
        let list: Vec<String> = self
            .0
            .iter()
            .map(|(key, (_, first))| format!("- {key}: {first}"))
            .collect();
        panic!(
            "{what}: {} kinds of call failed:\n{}",
            list.len(),
            list.join("\n")
        );
    }
}

/// An error a call may return for large items: the paper's algorithms (research baselines at the
/// paper's parameters) keep their tiles in shared memory and refuse items too large for it (only
/// [`large`] ones) with `InvalidConfig` naming shared memory. `Auto`, `Shuffle`, `SegShuffle` and
/// `SegMerge` must not refuse up to 512 bytes; past it, the caller passes `paper` as true where a
/// refusal naming shared memory is allowed.
pub fn refused(e: Error, paper: bool) -> Result<(), String> {
    match e {
        Error::InvalidConfig { ref reason, .. } if paper && reason.contains("shared memory") => {
            Ok(())
        }
        e => Err(format!("{e}")),
    }
}

/// Items of 128 bytes and more, the only ones a paper algorithm may refuse.
pub fn large<M>() -> bool {
    std::mem::size_of::<M>() >= 128
}

/// What one layout's reductions share.
struct SegCase<'a, M: CudaMonoid> {
    name: &'a str,
    xs: &'a DeviceVec<M>,
    offsets: &'a [u64],
    owner: &'a [u64],
    expected: &'a [M],
    /// The initial contents of the `_into` calls' output: one value per segment and 3 more.
    poison: &'a [M],
}

/// Both forms with index type `I`, every configuration that takes it: the allocating calls
/// (u32 only) and the `_into` calls into a poisoned buffer longer than the segments.
fn run_index<M: CudaMonoid + Random, I: SegIndex>(
    gpu: &Gpu,
    case: &SegCase<'_, M>,
    configs: &[SegConfig],
    failures: &mut Failures,
) {
    let segments = case.offsets.len() - 1;
    let d_offsets = gpu.upload(&convert::<I>(case.offsets)).unwrap();
    let d_owner = gpu.upload(&convert::<I>(case.owner)).unwrap();
    let mut out = gpu.upload(case.poison).unwrap();
    for config in configs {
        if I::WIDE && !takes_u64(config) {
            continue;
        }
        let width = if I::WIDE { "u64" } else { "u32" };
        let paper = config.algorithm.is_paper();
        for offsets_form in [true, false] {
            let form = if offsets_form { "offsets" } else { "owner" };
            let key = format!("{} {config:?} {width} {form}", name::<M>());
            let into = format!("{key} into");
            if failures.failed(&key) || failures.failed(&into) {
                continue;
            }
            if !I::WIDE {
                let got = if offsets_form {
                    gpu.reduce_segments(case.xs, &d_offsets, *config)
                } else {
                    gpu.reduce_by_owner(case.xs, &d_owner, segments, *config)
                };
                let outcome = match got {
                    Ok(got) => diff(&gpu.download(&got).unwrap(), case.expected),
                    Err(e) if seg_declined(gpu, config, size_of::<M>(), &e) => Ok(()),
                    Err(e) => refused(e, paper && large::<M>()),
                };
                failures.note(
                    key.clone(),
                    outcome.map_err(|e| format!("layout `{}`: {e}", case.name)),
                );
            }
            gpu.upload_into(&mut out, case.poison).unwrap();
            let done = if offsets_form {
                gpu.reduce_segments_into(case.xs, &d_offsets, &mut out, *config)
            } else {
                gpu.reduce_by_owner_into(case.xs, &d_owner, segments, &mut out, *config)
            };
            let check_output = || {
                let got = gpu.download(&out).unwrap();
                diff(&got[..segments], case.expected)?;
                if got[segments..] != case.poison[segments..] {
                    return Err(format!(
                        "values past the segments were written: {:?}",
                        &got[segments..]
                    ));
                }
                Ok(())
            };
            let outcome = match done {
                Ok(()) => check_output(),
                Err(e) if seg_declined(gpu, config, size_of::<M>(), &e) => Ok(()),
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(
                into,
                outcome.map_err(|e| format!("layout `{}`: {e}", case.name)),
            );
        }
    }
}

/// Reduces random items over one layout with every configuration, both forms, u32 and u64,
/// allocating and into, against the sequential fold.
fn check_layout<M: CudaMonoid + Random>(
    gpu: &Gpu,
    name: &str,
    lengths: &[u64],
    configs: &[SegConfig],
    seed: u64,
    failures: &mut Failures,
) {
    let offsets = offsets_of(lengths);
    let owner = owners_of(lengths);
    let items = M::random_vec(owner.len(), seed);
    let expected = fold_segments(&items, &offsets).unwrap();
    let xs = gpu.upload(&items).unwrap();
    let poison = M::random_vec(lengths.len() + 3, !seed);
    let case = SegCase {
        name,
        xs: &xs,
        offsets: &offsets,
        owner: &owner,
        expected: &expected,
        poison: &poison,
    };
    run_index::<M, u32>(gpu, &case, configs, failures);
    run_index::<M, u64>(gpu, &case, configs, failures);
}

/// Every layout of [`every_shape`] named in `only` (all when `None`).
pub fn check_layouts<M: CudaMonoid + Random>(gpu: &Gpu, only: Option<&[&str]>, seed: u64) {
    check_layouts_with::<M>(gpu, only, seed, &seg_configs(gpu));
}

/// [`check_layouts`] with these configurations.
pub fn check_layouts_with<M: CudaMonoid + Random>(
    gpu: &Gpu,
    only: Option<&[&str]>,
    seed: u64,
    configs: &[SegConfig],
) {
    let start = std::time::Instant::now();
    let mut failures = Failures::default();
    for (k, (layout, lengths)) in every_shape().iter().enumerate() {
        if only.is_none_or(|names| names.contains(&layout.as_str())) {
            check_layout::<M>(
                gpu,
                layout,
                lengths,
                configs,
                seed + k as u64,
                &mut failures,
            );
        }
    }
    eprintln!("segmented {}: {:.1?}", name::<M>(), start.elapsed());
    failures.finish(&name::<M>());
}

/// Every plain algorithm and Auto at `sizes`, `reduce` and `reduce_into` (into a poisoned
/// buffer of 3 values: the 2 after the first must stay as they were); panics with every
/// failing call.
pub fn check_plain<M: CudaMonoid + Random>(gpu: &Gpu, sizes: &[usize], seed: u64) {
    let start = std::time::Instant::now();
    let mut failures = Failures::default();
    for &n in sizes {
        let items = M::random_vec(n, seed ^ n as u64);
        let want = fold(&items);
        let xs = gpu.upload(&items).unwrap();
        let poison = M::random_vec(3, seed);
        let mut out = gpu.upload(&poison).unwrap();
        for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            let paper = !matches!(algorithm, Algorithm::Shuffle | Algorithm::Auto);
            let key = format!("{} {algorithm}", name::<M>());
            if failures.failed(&key) || failures.failed(&format!("{key} into")) {
                continue;
            }
            let outcome = match gpu.reduce(&xs, algorithm) {
                Ok(got) if got == want => Ok(()),
                Ok(got) => Err(format!("got {got:?}, expected {want:?}")),
                Err(e) if plain_declined(gpu, &algorithm.into(), &e) => Ok(()),
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(key.clone(), outcome.map_err(|e| format!("n = {n}: {e}")));
            gpu.upload_into(&mut out, &poison).unwrap();
            let outcome = match gpu.reduce_into(&xs, &mut out, algorithm) {
                Ok(()) => {
                    let got = gpu.download(&out).unwrap();
                    if got[0] != want {
                        Err(format!("got {:?}, expected {want:?}", got[0]))
                    } else if got[1..] != poison[1..] {
                        Err("wrote past the first value".to_string())
                    } else {
                        Ok(())
                    }
                }
                Err(e) if plain_declined(gpu, &algorithm.into(), &e) => Ok(()),
                Err(e) => refused(e, paper && large::<M>()),
            };
            failures.note(
                format!("{key} into"),
                outcome.map_err(|e| format!("n = {n}: {e}")),
            );
        }
    }
    eprintln!("plain {}: {:.1?}", name::<M>(), start.elapsed());
    failures.finish(&name::<M>());
}

/// Every plain kernel (and Auto's, order-free for a commutative monoid), every segmented one
/// in both forms with u32 layouts, the second u32-offsets variants of SegShuffle and SegBlocks
/// (its kernel left to ptxas), and SegShuffle and SegMerge with u64 layouts compile with NVRTC.
pub fn every_kernel_compiles<M: CudaMonoid>() {
    let mut failures = Failures::default();
    let first_lines = |e: reduce_cuda::Error| {
        let text = e.to_string();
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("error")).collect();
        if lines.is_empty() {
            text
        } else {
            lines.join(" | ")
        }
    };
    for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        let got = compile_kernel::<M>(Config::new(algorithm), CI_ARCH);
        failures.note(
            format!("plain {algorithm}"),
            got.map(drop).map_err(first_lines),
        );
    }
    for algorithm in SegAlgorithm::ALL {
        for offsets_form in [false, true] {
            let got = compile_seg_kernel::<M>(SegConfig::new(algorithm), offsets_form, CI_ARCH);
            failures.note(
                format!("{algorithm} u32 (offsets form: {offsets_form})"),
                got.map(drop).map_err(first_lines),
            );
        }
    }
    for algorithm in [SegAlgorithm::SegShuffle, SegAlgorithm::SegBlocks] {
        let variants = seg_kernel_variants_for::<M, u32>(SegConfig::new(algorithm), true).unwrap();
        for source in variants.iter().skip(1) {
            let got = reduce_cuda::testing::check_compiles(source, CI_ARCH);
            failures.note(
                format!("{algorithm}'s second u32 offsets variant"),
                got.map(drop).map_err(first_lines),
            );
        }
    }
    for algorithm in SegAlgorithm::ALL.into_iter().filter(|a| !a.is_paper()) {
        for offsets_form in [false, true] {
            let got =
                compile_seg_kernel_for::<M, u64>(SegConfig::new(algorithm), offsets_form, CI_ARCH);
            failures.note(
                format!("{algorithm} u64 (offsets form: {offsets_form})"),
                got.map(drop).map_err(first_lines),
            );
        }
    }
    failures.finish(&format!("NVRTC, {}", name::<M>()));
}
