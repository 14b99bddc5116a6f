//! Support for the project's own tests, CI and tools: the kernel texts and compilations of
//! every configuration without a device (CI compiles each with NVRTC; the CPU emulator runs
//! their text), and the NVRTC and disk-cache switches. Not part of the public API: hidden
//! from the documentation, and free to change.

pub use crate::jit::cache::CACHE_DIR_ENV;
pub use crate::jit::compile::{compile_cubin, nvrtc_available, nvrtc_version};
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

/// The NVRTC compilations `gpu`'s kernel cache has started (its cache hits, in memory and on
/// disk, start none).
pub fn compilations(gpu: &crate::Gpu) -> u64 {
    gpu.compilations()
}

/// Checks that `source` compiles for `arch` (e.g. `sm_90`) without a device, as CI does for
/// every generated kernel: the front end and options of [`compile_cubin`], with NVRTC's fastest
/// back end (`--Ofast-compile=max`, NVRTC 12.8 and later: it still assembles the SASS, so
/// limits the assembler enforces are checked too). A text that compiled is not compiled again in
/// this process (many configurations share one text).
pub fn check_compiles(source: &KernelSource, arch: &str) -> Result<()> {
    static COMPILED: LazyLock<Mutex<HashSet<(String, String)>>> = LazyLock::new(Mutex::default);
    let compiled = || {
        COMPILED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    let key = (source.text.clone(), arch.to_string());
    if compiled().contains(&key) {
        return Ok(());
    }
    let mut options = crate::jit::compile::options(arch);
    if nvrtc_version()? >= (12, 8) {
        options.push("--Ofast-compile=max".into());
    }
    crate::jit::compile::try_compile_with(source, options)?.map_err(|failure| {
        let e = crate::error::Error::Compile(Box::new(failure));
        // As a launch reports it (`Loader::module`).
        match (crate::jit::Family::ALL.iter()).find(|f| f.name() == source.family) {
            Some(family) => e.static_smem_refusal(family.name()),
            None => e,
        }
    })?;
    compiled().insert(key);
    Ok(())
}

use crate::catalogue::{plain_plan, seg_plan, Config, SegConfig, SegPlan, SegShape};
use crate::error::Result;
use crate::jit::codegen::assemble;
use crate::jit::{KernelSource, Lifted, Own, Program};
use reduce_core::{CudaMonoid, DeviceCopy, Lift, SegIndex};

/// The translation unit of `config` for `program` (its main kernel, 16-byte-aligned input).
fn plain_source(program: &dyn Program, config: Config) -> Result<KernelSource> {
    let plan = plain_plan(config, program.items(), 0)?;
    Ok(assemble(&plan.kernels()[0], program))
}

/// The translation unit for a full [`Config`], with its sections, or the reason it is invalid.
pub fn kernel_source_with<M: CudaMonoid>(config: Config) -> Result<KernelSource> {
    plain_source(&Own::<M>::new(), config)
}

/// [`kernel_source_with`] for items at device address `items_at` (Shuffle's and the portable
/// kernel are specialised for the items' offset from a 16-byte boundary).
pub fn kernel_source_at<M: CudaMonoid>(config: Config, items_at: u64) -> Result<KernelSource> {
    let program = Own::<M>::new();
    let plan = plain_plan(config, program.items(), items_at)?;
    Ok(assemble(&plan.kernels()[0], &program))
}

/// The dynamic shared memory of the main kernel of `config` for monoid `M` (the paper's trees'
/// and matrices' data blocks; 0 for the kernels whose shared memory is static).
pub fn dynamic_smem<M: CudaMonoid>(config: Config) -> Result<usize> {
    let program = Own::<M>::new();
    Ok(plain_plan(config, program.items(), 0)?.dynamic_smem(&program.items()))
}

/// Checks that the translation unit of `config` for monoid `M` compiles for `arch` (e.g.
/// `sm_90`), without a device ([`check_compiles`]). CI uses this to check every generated
/// kernel.
pub fn compile_kernel<M: CudaMonoid>(config: Config, arch: &str) -> Result<()> {
    check_compiles(&kernel_source_with::<M>(config)?, arch)
}

/// The translation unit [`crate::Gpu::reduce_lifted`] runs for monoid `M` reading items of
/// type `X`.
pub fn kernel_source_lifted<M: Lift<X>, X: DeviceCopy>(config: Config) -> Result<KernelSource> {
    plain_source(&Lifted::<M, X>::new(), config)
}

/// Checks that the lifted translation unit of `config` compiles for `arch`, without a device.
pub fn compile_kernel_lifted<M: Lift<X>, X: DeviceCopy>(config: Config, arch: &str) -> Result<()> {
    check_compiles(&kernel_source_lifted::<M, X>(config)?, arch)
}

/// The plan of a segmented configuration for `program` and `I` layouts, as a launch of
/// unknown size on aligned memory would fix it.
fn offline_seg_plan<I: SegIndex>(
    program: &dyn Program,
    config: SegConfig,
    offsets_form: bool,
) -> Result<Box<dyn SegPlan>> {
    offline_seg_plan_at::<I>(program, config, offsets_form, 0)
}

/// [`offline_seg_plan`] for items at device address `items_at` (aligned layouts).
fn offline_seg_plan_at<I: SegIndex>(
    program: &dyn Program,
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<Box<dyn SegPlan>> {
    let shape = SegShape::new(program.items(), offsets_form, I::WIDE, items_at, 0);
    seg_plan(config, shape, 0, 0)
}

/// Every kernel text a segmented configuration may run for items at `items_at`, the preferred
/// one first.
fn seg_sources<I: SegIndex>(
    program: &dyn Program,
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<Vec<KernelSource>> {
    let plan = offline_seg_plan_at::<I>(program, config, offsets_form, items_at)?;
    Ok(plan
        .variants()
        .iter()
        .map(|spec| assemble(spec, program))
        .collect())
}

/// The kernel text of a segmented algorithm (owner or offsets form, `u32` layouts) for monoid
/// `M`, as compiled for an sm_80+ device.
pub fn seg_kernel_source<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<KernelSource> {
    seg_kernel_source_for::<M, u32>(config, offsets_form)
}

/// The kernel text of a segmented algorithm for layouts of index type `I`.
pub fn seg_kernel_source_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<KernelSource> {
    Ok(seg_kernel_variants_for::<M, I>(config, offsets_form)?.remove(0))
}

/// Every kernel text the runtime may run for a segmented configuration and index type `I`,
/// the one it prefers first ([`seg_kernel_source_for`]'s). SegShuffle with `u32` offsets has a
/// second: without a tile's first offsets loaded ahead of its marks, which runs for monoids
/// whose preferred kernel uses local memory (spills under the kernel's register cap). SegBlocks
/// with values of up to 8 bytes and blocks of up to 640 threads has one too: the kernel left to
/// ptxas, which runs where its register budget's spills.
pub fn seg_kernel_variants_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<Vec<KernelSource>> {
    seg_sources::<I>(&Own::<M>::new(), config, offsets_form, 0)
}

/// [`seg_kernel_variants_for`] for items at device address `items_at` (SegShuffle's kernel is
/// specialised for the items' offset from a 16-byte boundary).
pub fn seg_kernel_variants_at<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<Vec<KernelSource>> {
    seg_sources::<I>(&Own::<M>::new(), config, offsets_form, items_at)
}

/// [`seg_kernel_variants_lifted`] for items at device address `items_at`.
pub fn seg_kernel_variants_lifted_at<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<Vec<KernelSource>> {
    seg_sources::<I>(&Lifted::<M, X>::new(), config, offsets_form, items_at)
}

/// The dynamic shared memory per block that a launch passes with the kernel text of
/// [`seg_kernel_source`] (for running that text elsewhere, as the CPU emulator does).
pub fn seg_dynamic_smem<M: CudaMonoid>(config: SegConfig, offsets_form: bool) -> Result<usize> {
    Ok(offline_seg_plan::<u32>(&Own::<M>::new(), config, offsets_form)?.dynamic_smem())
}

/// [`seg_dynamic_smem`] for layouts of index type `I` and items at device address `items_at`
/// (SegPipeline's stages hold the items at their offset from a 16-byte boundary).
pub fn seg_dynamic_smem_at<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<usize> {
    let plan = offline_seg_plan_at::<I>(&Own::<M>::new(), config, offsets_form, items_at)?;
    Ok(plan.dynamic_smem())
}

/// [`seg_dynamic_smem_lifted`] for items at device address `items_at`.
pub fn seg_dynamic_smem_lifted_at<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> Result<usize> {
    let plan = offline_seg_plan_at::<I>(&Lifted::<M, X>::new(), config, offsets_form, items_at)?;
    Ok(plan.dynamic_smem())
}

/// Checks that a segmented kernel (`u32` layouts) compiles for `arch` without a device (CI).
pub fn compile_seg_kernel<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<()> {
    compile_seg_kernel_for::<M, u32>(config, offsets_form, arch)
}

/// Checks that a segmented kernel for layouts of index type `I` compiles for `arch` without a
/// device (CI).
pub fn compile_seg_kernel_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<()> {
    check_compiles(&seg_kernel_source_for::<M, I>(config, offsets_form)?, arch)
}

/// The kernel text of a lifted segmented configuration for layouts of index type `I`, as
/// compiled for an sm_80+ device.
pub fn seg_kernel_source_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<KernelSource> {
    Ok(seg_kernel_variants_lifted::<M, X, I>(config, offsets_form)?.remove(0))
}

/// Every kernel text the runtime may run for a lifted segmented configuration, the one it
/// prefers first (see [`seg_kernel_variants_for`]).
pub fn seg_kernel_variants_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<Vec<KernelSource>> {
    seg_sources::<I>(&Lifted::<M, X>::new(), config, offsets_form, 0)
}

/// The dynamic shared memory per block that a launch passes with the kernel text of
/// [`seg_kernel_source_lifted`].
pub fn seg_dynamic_smem_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<usize> {
    Ok(offline_seg_plan::<I>(&Lifted::<M, X>::new(), config, offsets_form)?.dynamic_smem())
}

/// Checks that a lifted segmented kernel compiles for `arch` without a device (CI).
pub fn compile_seg_kernel_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<()> {
    check_compiles(
        &seg_kernel_source_lifted::<M, X, I>(config, offsets_form)?,
        arch,
    )
}

/// Checks that the kernels of the reductions along axes of `config` for monoid `M`'s own values
/// compile for `arch`, without a device.
pub fn compile_axes_kernel<M: CudaMonoid>(config: crate::AxisConfig, arch: &str) -> Result<()> {
    let program = Own::<M>::new();
    let plan = crate::catalogue::axis_plan(config, program.items())?;
    for spec in plan.kernels() {
        check_compiles(&assemble(&spec, &program), arch)?;
    }
    Ok(())
}

/// [`compile_axes_kernel`] for items of type `X` lifted into `M`.
pub fn compile_axes_kernel_lifted<M: Lift<X>, X: DeviceCopy>(
    config: crate::AxisConfig,
    arch: &str,
) -> Result<()> {
    let program = Lifted::<M, X>::new();
    let plan = crate::catalogue::axis_plan(config, program.items())?;
    for spec in plan.kernels() {
        check_compiles(&assemble(&spec, &program), arch)?;
    }
    Ok(())
}

/// The portable axes plan for `program` with `block` threads per block (a knob the library
/// picks from the monoid's size; the tests force it, as it must change no bit).
fn portable_axes(
    program: &dyn Program,
    block: u32,
) -> Result<crate::catalogue::axes_portable::PortableAxes> {
    use crate::catalogue::{axis_plan, AxisConfig, AxisPlan};
    match axis_plan(AxisConfig::default().portable(), program.items())? {
        AxisPlan::Portable(plan) => Ok(plan.with_block(block)),
        _ => unreachable!("the portable mode has its own plan"),
    }
}

/// The portable axes kernels (`AxisConfig::portable`) for monoid `M`'s own values, with `block`
/// threads per block (a power of two from 32 to 256).
pub fn axes_portable_source<M: CudaMonoid>(block: u32) -> Result<KernelSource> {
    let program = Own::<M>::new();
    Ok(assemble(
        &portable_axes(&program, block)?.kernels(),
        &program,
    ))
}

/// [`axes_portable_source`] for items of type `X` lifted into `M`.
pub fn axes_portable_source_lifted<M: Lift<X>, X: DeviceCopy>(block: u32) -> Result<KernelSource> {
    let program = Lifted::<M, X>::new();
    Ok(assemble(
        &portable_axes(&program, block)?.kernels(),
        &program,
    ))
}

/// The strips plan (`kernels/axes.cu`) `algorithm` gives `program`: `Strips` keeps the order,
/// `Auto` folds a commutative monoid's rows and few columns out of order.
fn strips_plan(
    program: &dyn Program,
    algorithm: crate::AxisAlgorithm,
) -> Result<crate::catalogue::axes::Strips> {
    use crate::catalogue::{axis_plan, AxisPlan};
    match axis_plan(algorithm.into(), program.items())? {
        AxisPlan::Strips(plan) | AxisPlan::Auto(plan, _) => Ok(plan),
        AxisPlan::Portable(_) => unreachable!("the default mode"),
    }
}

/// The strips kernels (`kernels/axes.cu`) of `algorithm` (`Strips` or `Auto`) for monoid
/// `M`'s own values, or for items of type `X` lifted into `M` ([`axes_strips_source_lifted`]).
pub fn axes_strips_source<M: CudaMonoid>(algorithm: crate::AxisAlgorithm) -> Result<KernelSource> {
    let program = Own::<M>::new();
    Ok(assemble(
        &strips_plan(&program, algorithm)?.kernels(),
        &program,
    ))
}

/// [`axes_strips_source`] for items of type `X` lifted into `M`.
pub fn axes_strips_source_lifted<M: Lift<X>, X: DeviceCopy>(
    algorithm: crate::AxisAlgorithm,
) -> Result<KernelSource> {
    let program = Lifted::<M, X>::new();
    Ok(assemble(
        &strips_plan(&program, algorithm)?.kernels(),
        &program,
    ))
}

/// The launches of [`axes_strips_source`]'s kernels over `shape` reduced along `axes` (at
/// least one result, no reduced extent of 0) on a device that keeps `threads` threads busy,
/// for items of `in_size` bytes lifted into `M` (`in_size` = `M`'s size for its own values):
/// per launch its entry point (0, 1: strips of the call's items, of values; 2, 3: rows; 4, 5:
/// few columns; 6, 7: short rows), the threads it runs (a grid-stride launch: blocks of 256),
/// the values it writes, then its arguments between `in` and `out`.
pub fn axes_strips_launches<M: CudaMonoid>(
    algorithm: crate::AxisAlgorithm,
    in_size: usize,
    shape: &[usize],
    axes: &[usize],
    threads: u64,
) -> Result<Vec<Vec<u64>>> {
    let a = reduce_core::axes::Axes::new(shape.iter().product(), shape, axes)?;
    let plan = strips_plan(&Own::<M>::new(), algorithm)?;
    let m_size = std::mem::size_of::<M>() as u64;
    Ok(plan.launch_records(&a, threads, in_size as u64, m_size))
}

/// The passes [`axes_portable_source`]'s kernels run over `shape` reduced along `axes` (at
/// least one result) for `M` values, in order: per pass, its entry point (0 the nodes of the
/// pass before, 1 the call's items by blocks, 2 by units of leaves, 3 by warps), then the
/// kernel's arguments from `n` to `rs3`.
pub fn axes_portable_passes<M: CudaMonoid>(
    block: u32,
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<Vec<u64>>> {
    use crate::device::KernelArgs;
    let a = reduce_core::axes::Axes::new(shape.iter().product(), shape, axes)?;
    let plan = portable_axes(&Own::<M>::new(), block)?;
    Ok(plan
        .pass_args(&a)
        .into_iter()
        .map(|(entry, args)| {
            let values = args.values();
            // without `in` (the first) and `out` (the last)
            std::iter::once(entry as u64)
                .chain(values[1..values.len() - 1].iter().copied())
                .collect()
        })
        .collect())
}

/// Checks that the scan kernels of `config` for `program` compile for `arch`: the plain scan,
/// and the segmented ones over u32 and u64 offsets and keys.
fn compile_scans(program: &dyn Program, config: crate::ScanConfig, arch: &str) -> Result<()> {
    use crate::catalogue::{scan_plan, Segments};
    for (segments, wide) in [
        (Segments::None, false),
        (Segments::Offsets, false),
        (Segments::Offsets, true),
        (Segments::Keys, false),
        (Segments::Keys, true),
    ] {
        let plan = scan_plan(config, program.items(), segments, wide)?;
        check_compiles(&assemble(&plan.kernels(), program), arch)?;
    }
    Ok(())
}

/// Checks that every scan kernel of `config` for monoid `M`'s own values compiles for `arch`,
/// without a device.
pub fn compile_scan_kernels<M: CudaMonoid>(config: crate::ScanConfig, arch: &str) -> Result<()> {
    compile_scans(&Own::<M>::new(), config, arch)
}

/// [`compile_scan_kernels`] for items of type `X` lifted into `M`.
pub fn compile_scan_kernels_lifted<M: Lift<X>, X: DeviceCopy>(
    config: crate::ScanConfig,
    arch: &str,
) -> Result<()> {
    compile_scans(&Lifted::<M, X>::new(), config, arch)
}

/// The scan kernel of `config` for monoid `M`'s own values over `I` layouts: plain (`None`), by
/// CSR offsets (`Some(true)`) or by keys (`Some(false)`), with its tile (threads, items per
/// thread), for the CPU emulator.
pub fn scan_kernel_source<M: CudaMonoid, I: SegIndex>(
    config: crate::ScanConfig,
    offsets: Option<bool>,
) -> Result<(KernelSource, (u32, u32))> {
    scan_kernel_source_capped::<M, I>(config, offsets, 0)
}

/// Whether the runtime may cap the registers of the scan kernel of `config` for `M`'s own values
/// over `I` layouts (`offsets` as for [`scan_kernel_source`]) for more blocks per SM.
pub fn scan_may_cap<M: CudaMonoid, I: SegIndex>(
    config: crate::ScanConfig,
    offsets: Option<bool>,
) -> Result<bool> {
    Ok(scan_plan_of::<M, I>(config, offsets)?.may_cap())
}

/// The dynamic shared memory of the scan kernels of `config` for `M` (the tile's items' stages
/// where they are too large to be static; `offsets` as for [`scan_kernel_source`]).
pub fn scan_dynamic_smem<M: CudaMonoid, I: SegIndex>(
    config: crate::ScanConfig,
    offsets: Option<bool>,
) -> Result<usize> {
    Ok(scan_plan_of::<M, I>(config, offsets)?.dynamic_smem())
}

fn scan_plan_of<M: CudaMonoid, I: SegIndex>(
    config: crate::ScanConfig,
    offsets: Option<bool>,
) -> Result<crate::catalogue::ScanPlan> {
    use crate::catalogue::{scan_plan, Segments};
    let segments = match offsets {
        None => Segments::None,
        Some(true) => Segments::Offsets,
        Some(false) => Segments::Keys,
    };
    scan_plan(config, Own::<M>::new().items(), segments, I::WIDE)
}

/// [`scan_kernel_source`] with `scan_tiles`' registers capped for `min_blocks` resident blocks
/// per SM (0: uncapped), as the runtime picks where it lets more blocks reside.
pub fn scan_kernel_source_capped<M: CudaMonoid, I: SegIndex>(
    config: crate::ScanConfig,
    offsets: Option<bool>,
    min_blocks: u32,
) -> Result<(KernelSource, (u32, u32))> {
    let plan = scan_plan_of::<M, I>(config, offsets)?;
    let program = Own::<M>::new();
    Ok((assemble(&plan.capped(min_blocks), &program), plan.shape()))
}

/// The cluster's portable join of the ranks' summaries (`kernels/shard_join.cu`) for monoid `M`.
#[cfg(feature = "nccl")]
pub fn shard_join_source<M: CudaMonoid>() -> KernelSource {
    use crate::jit::{Family, KernelSpec};
    assemble(&KernelSpec::new(Family::ShardJoin, &[]), &Own::<M>::new())
}

/// The nodes the cluster gives the portable join's scratch.
#[cfg(feature = "nccl")]
pub const SHARD_JOIN_NODES: usize = crate::cluster::JOIN_NODES;

/// The bytes the cluster allocates for a portable join's scratch of `nodes` nodes of `M`.
#[cfg(feature = "nccl")]
pub fn shard_join_scratch_bytes<M>(nodes: usize) -> usize {
    crate::cluster::join_scratch_bytes::<M>(nodes)
}
