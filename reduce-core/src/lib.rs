//! Core of the reduce framework (work in progress: see reduce-core/src/monoid.rs).
mod monoid;
pub use monoid::{CudaMonoid, DeviceCopy, Monoid};
pub use reduce_macros::Monoid;

/// CUDA C++ helpers that translated monoid code relies on; pasted first into every kernel.
pub const CUDA_PRELUDE: &str = include_str!("cuda/prelude.cuh");
