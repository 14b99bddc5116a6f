//! Support for the project's own tests, CI and tools: the kernel texts and compilations of
//! every configuration without a device (CI compiles each with NVRTC; the CPU emulator runs
//! their text), and the NVRTC and disk-cache switches. Not part of the public API: hidden
//! from the documentation, and free to change.

pub use crate::cache::CACHE_DIR_ENV;
pub use crate::compile::{compile_cubin, nvrtc_available, nvrtc_version};
pub use crate::segmented::{
    compile_seg_kernel, compile_seg_kernel_for, compile_seg_kernel_lifted, seg_dynamic_smem,
    seg_dynamic_smem_lifted, seg_kernel_source, seg_kernel_source_for, seg_kernel_source_lifted,
    seg_kernel_variants_for, seg_kernel_variants_lifted,
};

use crate::codegen::{self, KernelSource};
use crate::error::Result;
use crate::{compile, plain, Config};
use reduce_core::{CudaMonoid, DeviceCopy, Lift};

/// The translation unit for a full [`Config`], with its sections, or the reason it is invalid.
pub fn kernel_source_with<M: CudaMonoid>(config: Config) -> Result<KernelSource> {
    let plan = plain::plan_for::<M>(config)?;
    Ok(codegen::assemble::<M>(&plan.kernel()))
}

/// Compiles the translation unit of `config` for monoid `M` with NVRTC for `arch` (e.g.
/// `sm_90`), without a device. CI uses this to check every generated kernel.
pub fn compile_kernel<M: CudaMonoid>(config: Config, arch: &str) -> Result<Vec<u8>> {
    compile::compile_cubin(&kernel_source_with::<M>(config)?, arch)
}

/// The translation unit [`Gpu::reduce_lifted`] runs for monoid `M` reading items of type `X`.
pub fn kernel_source_lifted<M: Lift<X>, X: DeviceCopy>(config: Config) -> Result<KernelSource> {
    let plan = plain::plan_lifted::<M>(config, std::mem::size_of::<X>())?;
    Ok(codegen::assemble_lifted::<M, X>(
        &plan.kernel().lifted::<X>(),
    ))
}

/// Compiles the lifted translation unit of `config` with NVRTC for `arch`, without a device.
pub fn compile_kernel_lifted<M: Lift<X>, X: DeviceCopy>(
    config: Config,
    arch: &str,
) -> Result<Vec<u8>> {
    compile::compile_cubin(&kernel_source_lifted::<M, X>(config)?, arch)
}
