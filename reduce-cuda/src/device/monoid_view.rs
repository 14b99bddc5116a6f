//! Views of a [`DeviceVec`] of a primitive as values of a built-in monoid over it
//! (`Sum<f32>` over `f32`, ...), so that the library's own buffers are inputs and outputs of
//! those monoids' reductions as cudarc's slices of primitives are.

use super::view::sealed;
use super::{DeviceInput, DeviceOutput, DeviceVec};
use cudarc::driver::{CudaStream, SyncOnDrop};
use reduce_core::{Max, Min, Primitive, Product, Sum};
use std::marker::PhantomData;
use std::sync::Arc;

/// A built-in monoid over the primitive `P` — `Sum<P>`, `Product<P>`, `Min<P>`, `Max<P>` — whose
/// values are `P`s in memory (`#[repr(transparent)]`, every bit pattern valid), so that a buffer
/// of `P` is read as its values ([`DeviceVec::as_monoid`]). Sealed.
pub trait MonoidOf<P>: sealed::MonoidOf<P> {}

macro_rules! monoids_of_primitives {
    ($($monoid:ident),*) => {$(
        impl<P: Primitive> sealed::MonoidOf<P> for $monoid<P> {}
        impl<P: Primitive> MonoidOf<P> for $monoid<P> {}
    )*};
}
monoids_of_primitives!(Sum, Product, Min, Max);

/// A [`DeviceVec`] of a primitive read as values of a built-in monoid over it: an input of that
/// monoid's reductions. Made by [`DeviceVec::as_monoid`].
#[derive(Debug)]
pub struct MonoidView<'a, P, M> {
    vec: &'a DeviceVec<P>,
    marker: PhantomData<fn() -> M>,
}

/// A [`DeviceVec`] of a primitive written as values of a built-in monoid over it: an output of
/// that monoid's reductions. Made by [`DeviceVec::as_monoid_mut`].
#[derive(Debug)]
pub struct MonoidViewMut<'a, P, M> {
    vec: &'a mut DeviceVec<P>,
    marker: PhantomData<fn(M) -> M>,
}

impl<P: Primitive> DeviceVec<P> {
    /// The buffer's values as values of `M`, a built-in monoid over `P`, for its reductions:
    /// `gpu.reduce(&xs.as_monoid::<Sum<f32>>(), Algorithm::Auto)` for a `DeviceVec<f32>`, as a
    /// cudarc `CudaSlice<f32>` is reduced as it is. No copy.
    pub fn as_monoid<M: MonoidOf<P>>(&self) -> MonoidView<'_, P, M> {
        MonoidView {
            vec: self,
            marker: PhantomData,
        }
    }

    /// The buffer as an output of `M`'s reductions (see [`DeviceVec::as_monoid`]).
    pub fn as_monoid_mut<M: MonoidOf<P>>(&mut self) -> MonoidViewMut<'_, P, M> {
        MonoidViewMut {
            vec: self,
            marker: PhantomData,
        }
    }
}

/// Both views are their buffer's memory: as inputs they are what the buffer is as an input of
/// `P` values, read as `M` values.
macro_rules! reads_its_buffer {
    ($($view:ident),*) => {$(
        impl<P: Primitive, M: MonoidOf<P>> sealed::Input<M> for $view<'_, P, M> {
            fn count(&self) -> usize {
                sealed::Input::<P>::count(&*self.vec)
            }
            fn home(&self) -> &Arc<CudaStream> {
                sealed::Input::<P>::home(&*self.vec)
            }
            fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                sealed::Input::<P>::read(&*self.vec, stream)
            }
        }
        impl<P: Primitive, M: MonoidOf<P>> DeviceInput<M> for $view<'_, P, M> {}
    )*};
}
reads_its_buffer!(MonoidView, MonoidViewMut);

impl<P: Primitive, M: MonoidOf<P>> sealed::Output<M> for MonoidViewMut<'_, P, M> {
    fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        sealed::Output::<P>::write(&mut *self.vec, stream)
    }
}
impl<P: Primitive, M: MonoidOf<P>> DeviceOutput<M> for MonoidViewMut<'_, P, M> {}
