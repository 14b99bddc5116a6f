//! The public reductions along the axes of arrays: a row-major array of `shape` reduced along
//! `axes`, one result per position of the kept axes (`reduce_core::fold_axes` is the
//! reference), of the monoid's own values or of lifted items. Every one goes through
//! [`Gpu::along`]: the shape and axes checked on the host, memory entry, the plan
//! (`catalogue::axis_plan`), the launches, the end of the call.

use crate::catalogue::{axis_plan, AxisConfig};
use crate::device::{DeviceInput, DeviceOutput, DeviceVec};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{Lifted, Own, Program};
use reduce_core::axes::Axes;
use reduce_core::{CudaMonoid, DeviceCopy, Lift};

impl Gpu {
    /// `xs`, a row-major array of `shape` (at most 8 dimensions), reduced along `axes` (any
    /// order, none repeated): one value per position of the kept axes, row-major, each the
    /// fold in order over the reduced coordinates taken row-major (the last reduced axis
    /// fastest): for an exactly associative monoid `reduce_core::fold_axes`' bits (floats are
    /// grouped as the schedule splits the rows; `commutative` monoids may be folded out of order
    /// by `AxisAlgorithm::Auto`). A reduced extent of 0 gives the identity; no axes copies the
    /// items. With [`AxisConfig::portable`] every result has the bits of
    /// `reduce_core::portable::fold_axes` instead (floats too, on any device). A shape that does
    /// not hold `xs.len()` items, an axis out of range or repeated, or more results than one
    /// allocation holds are [`Error::Layout`]. Queued: the result is ready for the next call on
    /// this `Gpu`'s stream.
    pub fn reduce_axes<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        shape: &[usize],
        axes: &[usize],
        config: impl Into<AxisConfig>,
    ) -> Result<DeviceVec<M>> {
        self.along_new(&Own::<M>::new(), xs, shape, axes, config.into())
    }

    /// [`Gpu::reduce_axes`] into `out`, which holds at least one value per result (a longer
    /// one gets them in its first values).
    pub fn reduce_axes_into<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        shape: &[usize],
        axes: &[usize],
        out: &mut impl DeviceOutput<M>,
        config: impl Into<AxisConfig>,
    ) -> Result<()> {
        let a = Axes::sized::<M>(xs.len(), shape, axes)?;
        self.along(&Own::<M>::new(), xs, &a, out, config.into())
    }

    /// [`Gpu::reduce_axes`] of `lift(x, i)` for the items `x` of `xs` (`i` the item's flat
    /// index in the array), without storing the lifted values.
    pub fn reduce_axes_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        shape: &[usize],
        axes: &[usize],
        config: impl Into<AxisConfig>,
    ) -> Result<DeviceVec<M>> {
        self.along_new(&Lifted::<M, X>::new(), xs, shape, axes, config.into())
    }

    /// [`Gpu::reduce_axes_lifted`] into `out`.
    pub fn reduce_axes_lifted_into<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        shape: &[usize],
        axes: &[usize],
        out: &mut impl DeviceOutput<M>,
        config: impl Into<AxisConfig>,
    ) -> Result<()> {
        let a = Axes::sized::<M>(xs.len(), shape, axes)?;
        self.along(&Lifted::<M, X>::new(), xs, &a, out, config.into())
    }

    /// The allocating calls: the shape, the axes and the configuration checked before the
    /// results are allocated (a call they refuse allocates nothing, and fails with its own
    /// error, not `OutOfMemory`), then [`Gpu::along`] into them.
    fn along_new<M: DeviceCopy, X: DeviceCopy>(
        &self,
        program: &dyn Program,
        xs: &impl DeviceInput<X>,
        shape: &[usize],
        axes: &[usize],
        config: AxisConfig,
    ) -> Result<DeviceVec<M>> {
        let a = Axes::sized::<M>(xs.len(), shape, axes)?;
        axis_plan(config, program.items())?;
        let mut out = DeviceVec::alloc(self.device(), a.results)?;
        self.along(program, xs, &a, &mut out, config)?;
        Ok(out)
    }

    /// The driver every call along axes goes through: plans, enters the memory, launches and
    /// releases it; for device code that can fault, reads the kernels' fault records.
    fn along<M: DeviceCopy, X: DeviceCopy>(
        &self,
        program: &dyn Program,
        xs: &impl DeviceInput<X>,
        axes: &Axes,
        out: &mut impl DeviceOutput<M>,
        config: AxisConfig,
    ) -> Result<()> {
        if out.len() < axes.results {
            return Err(Error::LengthMismatch {
                what: "the output must hold one value per result",
                left: out.len(),
                right: axes.results,
            });
        }
        let plan = axis_plan(config, program.items())?;
        // The memory is entered (its context and alignment checked) even where there is nothing
        // to compute, as in the other families.
        let device = self.device();
        let input = device.input(xs)?;
        let output = device.output(out)?;
        if axes.results == 0 {
            return output.release().and(input.release());
        }
        let mut d = self.dispatch(program)?;
        let launched = plan.launch(&mut d, input.address, axes, output.address);
        let released = output.release().and(input.release());
        d.finish(launched.and(released))
    }
}
