//! # reduce-cuda
//!
//! GPU reductions over any associative operator. Derive a monoid once; the runtime wraps its
//! CUDA text in one of several reduction algorithms, compiles it with NVRTC for the device's
//! own architecture, caches the CUBIN in memory and on disk, and launches it. Every algorithm
//! keeps the left-to-right order, so non-commutative monoids get the exact sequential fold.
//!
//! ```no_run
//! use reduce_cuda::{Algorithm, Gpu, Monoid};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
//! #[repr(C)]
//! #[monoid(identity = Affine { a: 1, b: 0 },
//!          combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
//!                                    b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
//! struct Affine { a: u32, b: u32 }
//!
//! # fn main() -> Result<(), reduce_cuda::Error> {
//! let items: Vec<Affine> = (0..1000u32).map(|i| Affine { a: 2 * i + 1, b: i }).collect();
//! let gpu = Gpu::new(0)?;
//! let xs = gpu.upload(&items)?;
//! assert_eq!(gpu.reduce(&xs, Algorithm::Auto)?, reduce_cuda::reduce_core::fold(&items));
//! # Ok(()) }
//! ```
//!
//! # Data already on the GPU
//!
//! Reductions read any device memory of the `Gpu`'s CUDA context in place: a [`DeviceVec`],
//! a cudarc `CudaSlice` / `CudaView` / `CudaViewMut` (a slice of `f32` is an input of
//! `Sum<f32>`, `Min<f32>`, ... as it is), or another library's pointer through the `unsafe`
//! [`DeviceSlice::from_raw`]; results go to any [`DeviceOutput`]. [`Gpu::from_stream`] runs
//! on your cudarc stream, so reductions are ordered with your own kernels without a
//! synchronisation. The rules (context, alignment, lengths, stream order) are on [`DeviceInput`]; the
//! example `interop` shows it end to end.
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `proptest` | off | [`laws`]: proptest checks of your monoid's laws (reduce-core's feature of the same name) |
//! | `nccl` | off | [`cluster`]: reductions over several GPUs through NCCL (`libnccl` loaded at run time) |
//!
//! The runtime needs, at run time only, the NVIDIA driver (`libcuda`) and NVRTC (`libnvrtc`,
//! CUDA 13.0 line): both are loaded dynamically, and a missing one is an error value
//! ([`Error::DriverMissing`], [`Error::NvrtcMissing`]), so the crate builds and its CPU paths
//! run anywhere. [`cudarc`] is re-exported: use it (or the same `=0.19.10`) for the types
//! [`Gpu::from_stream`] and the borrowed inputs take.
// Without their features, `laws` and `cluster` are not built: their links go to docs.rs, which
// builds every feature.
#![cfg_attr(
    not(feature = "proptest"),
    doc = "",
    doc = "[`laws`]: https://docs.rs/reduce-cuda/latest/reduce_cuda/laws/"
)]
#![cfg_attr(
    not(feature = "nccl"),
    doc = "",
    doc = "[`cluster`]: https://docs.rs/reduce-cuda/latest/reduce_cuda/cluster/"
)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers, from the public calls down (ARCHITECTURE.md has the map):
// - `gpu.rs` (the `Gpu` type) and `calls/` (its public methods, one file per family:
//   memory, plain, segmented, axes, scan), `backend.rs` (GPU or CPU), `cluster/` (several GPUs);
// - `catalogue/`: algorithms, configurations, plans, defaults and `Auto` rules;
// - `dispatch/`: what every family's launches share (scratch, grids, passes, status, faults);
// - `jit/`: kernel text, NVRTC, the caches;
// - `device/`: the only code that calls the CUDA driver.
mod backend;
mod calls;
mod catalogue;
#[cfg(feature = "nccl")]
#[cfg_attr(docsrs, doc(cfg(feature = "nccl")))]
pub mod cluster;
mod device;
mod dispatch;
mod error;
mod gpu;
mod jit;
#[doc(hidden)]
pub mod testing;

pub use backend::Backend;
pub use catalogue::{
    Algorithm, AxisAlgorithm, AxisConfig, Config, ScanAlgorithm, ScanConfig, SegAlgorithm,
    SegConfig,
};
pub use device::{
    driver_available, DeviceInfo, DeviceInput, DeviceOutput, DeviceSlice, DeviceSliceMut,
    DeviceVec, MonoidOf, MonoidView, MonoidViewMut, PoolUsage, SegLayout,
};
pub use error::{CompileFailure, Error, LaunchInfo, Result};
pub use gpu::Gpu;
pub use jit::{JitReport, KernelOrigin, KernelSource};
pub use reduce_core;
#[cfg(feature = "proptest")]
#[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
pub use reduce_core::laws;
pub use reduce_core::monoid::{DeviceCopy, Monoid};
pub use reduce_core::SegIndex;
pub use reduce_core::{
    fold, fold_axes, fold_by_owner, fold_segments, scan, scan_by_key, scan_segments, CudaMonoid,
    CudaStruct, LayoutError, Lift, Max, Min, Product, Scan, Sum,
};
#[doc(inline)]
pub use reduce_macros::device_fn_via_cuda as device_fn;
#[doc(inline)]
pub use reduce_macros::DeviceCopyViaCuda as DeviceCopy;
#[doc(inline)]
pub use reduce_macros::MonoidViaCuda as Monoid;

/// The cudarc this crate is built on and whose types it takes ([`Gpu::from_stream`], cudarc
/// slices as inputs and outputs): use it, or the same `=0.19.10` version, so that the types
/// match.
pub use cudarc;

/// The complete CUDA C++ translation unit `algorithm` runs for monoid `M`, with default
/// parameters (`Auto` shows what it picks for large inputs). Readable: print it.
pub fn kernel_source<M: CudaMonoid>(algorithm: Algorithm) -> String {
    testing::kernel_source_with::<M>(algorithm.into())
        .map(|s| s.text)
        .unwrap_or_else(|e| format!("// {e}"))
}
