//! # reduce-core
//!
//! The host half of the reduce framework: the [`Monoid`] trait (and `#[derive(Monoid)]`, which
//! also writes the CUDA C++ text of [`CudaMonoid`]), the built-in monoids [`Sum`], [`Product`],
//! [`Min`], [`Max`], the sequential reference [`fold`] and its segmented forms
//! [`fold_segments`] / [`fold_by_owner`] and along the axes of arrays [`fold_axes`], the scans
//! (prefix folds) [`scan`], [`scan_segments`] and [`scan_by_key`], the [`portable`] grouping
//! (the bits of a float reduction that are the same everywhere), the
//! order-keeping parallel [`Cpu`] backend, and
//! law checking for users' monoids ([`laws`], feature `proptest`), and the host side of
//! reductions over shards on several devices ([`shard`]).
//!
//! The GPU runtime is the `reduce-cuda` crate.
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `proptest` | off | [`laws`]: proptest checks of a monoid's laws (identity, associativity, declared commutativity) |
// Without the feature, `laws` is not built: its links go to docs.rs, which builds every feature.
#![cfg_attr(
    not(feature = "proptest"),
    doc = "",
    doc = "[`laws`]: https://docs.rs/reduce-core/latest/reduce_core/laws/"
)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod axes;
mod builtin;
mod cpu;
pub mod fault;
mod fold;
#[cfg(feature = "proptest")]
#[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
pub mod laws;
pub mod layout;
pub mod math;
pub mod monoid;
pub mod portable;
mod scan;
pub mod shard;
#[cfg(test)]
mod test_monoids;

pub use axes::fold_axes;
pub use builtin::{Max, Min, Primitive, Product, Sum};
pub use cpu::Cpu;
pub use fault::{CpuError, IndexFault};
pub use fold::{fold, fold_by_owner, fold_segments};
pub use layout::{LayoutError, SegIndex};
#[doc(hidden)]
pub use monoid::{CudaDefs, DeviceFn};
pub use monoid::{CudaMonoid, CudaStruct, DeviceCopy, Lift, Monoid};
#[doc(hidden)]
pub use reduce_macros::__reduce_resolve;
pub use reduce_macros::{device_fn, DeviceCopy, Monoid};
pub use scan::{scan, scan_by_key, scan_segments, Scan};

/// CUDA C++ helpers that translated monoid code relies on; pasted first into every kernel.
pub const CUDA_PRELUDE: &str = concat!(
    include_str!("cuda/prelude/base.cuh"),
    include_str!("cuda/prelude/integers.cuh"),
    include_str!("cuda/prelude/floats.cuh"),
    include_str!("cuda/prelude/math.cuh"),
    include_str!("cuda/prelude/arrays.cuh"),
);
