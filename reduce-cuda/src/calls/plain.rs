//! The public plain (unsegmented) reductions: one value from all the items, returned to the
//! host or written into device memory; of the monoid's own values or of lifted items. Each
//! enters its memory, plans (`catalogue::plain_plan`), launches, and ends the call.

use crate::catalogue::{plain_plan, Config};
use crate::device::{Access, DeviceInput, DeviceOutput};
use crate::dispatch::Dispatch;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{JitReport, Lifted, Own, Program};
use reduce_core::{CudaMonoid, DeviceCopy, Lift};

/// An output for one value must hold at least one.
fn holds_one(len: usize) -> Result<()> {
    if len == 0 {
        return Err(Error::LengthMismatch {
            what: "the output must hold at least one value",
            left: 0,
            right: 1,
        });
    }
    Ok(())
}

/// The plan of `config` for the call's items read at `address`, and its launches: the
/// result's address.
fn run(d: &mut Dispatch, config: Config, input: &Access<'_>, out: Option<u64>) -> Result<u64> {
    let plan = plain_plan(config, d.items(), input.address)?;
    plan.launch(d, input.address, input.len as u64, out)
}

impl Gpu {
    /// The fold of every item of `xs`, left to right, computed on the device.
    ///
    /// `xs` is any device memory of this `Gpu`'s context: a [`crate::DeviceVec`], a cudarc
    /// `CudaSlice` / `CudaView` / `CudaViewMut`, or a raw [`crate::DeviceSlice`] (see
    /// [`DeviceInput`]); it is read in place. Equal to `reduce_core::fold(&host_items)` for any
    /// associative monoid, bit for bit (floats: the algorithm fixes the grouping, so a float
    /// sum is deterministic but groups differently from the sequential fold). For a monoid whose
    /// device code can fault (`CudaMonoid::CAN_FAULT`: run-time array indices), an index out of
    /// bounds is [`Error::DeviceFault`].
    pub fn reduce<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        config: impl Into<Config>,
    ) -> Result<M> {
        self.reduce_to_host(&Own::<M>::new(), xs, config.into())
    }

    /// Queues the reduction of `xs` into `out[0]` without waiting for it (for pipelines and
    /// benchmarks). `out` is any device memory of this `Gpu`'s context ([`DeviceOutput`]: a
    /// [`crate::DeviceVec`], a cudarc `CudaSlice` or `CudaViewMut`, a raw
    /// [`crate::DeviceSliceMut`]) holding at least one value. For a monoid that can fault
    /// (`CudaMonoid::CAN_FAULT`) it waits after all, to check the device's fault record.
    pub fn reduce_into<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<Config>,
    ) -> Result<()> {
        self.reduce_to_device(&Own::<M>::new(), xs, out, config.into())
    }

    /// The fold of `lift(x, i)` over the items `x` of `xs` (`i` the item's index), left to
    /// right, without materialising monoid values: transform-reduce. `M` declares the lift with
    /// `#[monoid(lift(X) = |x, i| ...)]`; `xs` is any device memory of this `Gpu`'s context, as
    /// for [`Gpu::reduce`]. Read by `Shuffle` (and `Auto`, which picks it); the other algorithms
    /// return [`Error::InvalidConfig`].
    ///
    /// Equal to `reduce_core::fold` of the lifted items, as [`Gpu::reduce`] is.
    pub fn reduce_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        config: impl Into<Config>,
    ) -> Result<M> {
        self.reduce_to_host(&Lifted::<M, X>::new(), xs, config.into())
    }

    /// Queues [`Gpu::reduce_lifted`] into `out[0]` without waiting (except, as
    /// [`Gpu::reduce_into`], for a monoid or lift that can fault).
    pub fn reduce_lifted_into<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<Config>,
    ) -> Result<()> {
        self.reduce_to_device(&Lifted::<M, X>::new(), xs, out, config.into())
    }

    /// Compiles (or loads from the caches) the kernel `config` needs for monoid `M`, and says
    /// where it came from and how long that took. Reductions do this on first use anyway.
    pub fn prepare<M: CudaMonoid>(&self, config: impl Into<Config>) -> Result<JitReport> {
        self.prepare_plain(&Own::<M>::new(), config.into())
    }

    /// Compiles (or loads) the kernel `reduce_lifted::<M, X>` needs for `config`.
    pub fn prepare_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        config: impl Into<Config>,
    ) -> Result<JitReport> {
        self.prepare_plain(&Lifted::<M, X>::new(), config.into())
    }

    /// The reduction of the `X` items of `xs` by `program` (reading `M` values), to the host.
    fn reduce_to_host<M: CudaMonoid, X: DeviceCopy>(
        &self,
        program: &dyn Program,
        xs: &impl DeviceInput<X>,
        config: Config,
    ) -> Result<M> {
        let input = self.device().input(xs)?;
        let mut d = self.dispatch(program)?;
        // The result is written straight into pinned host memory: no copy behind the kernel.
        let slot = d.result_slot::<M>()?;
        let result = run(&mut d, config, &input, Some(slot)).map(drop);
        let result = result.and(input.release()).and(self.synchronize());
        // SAFETY: the stream was synchronized after the launches that wrote the value.
        let result = result.and_then(|()| unsafe { d.read_result::<M>() });
        d.finish(result)
    }

    /// The reduction of the `X` items of `xs` by `program` into `out[0]`, queued.
    fn reduce_to_device<M: CudaMonoid, X: DeviceCopy>(
        &self,
        program: &dyn Program,
        xs: &impl DeviceInput<X>,
        out: &mut impl DeviceOutput<M>,
        config: Config,
    ) -> Result<()> {
        let input = self.device().input(xs)?;
        let output = self.device().output(out)?;
        holds_one(output.len)?;
        let mut d = self.dispatch(program)?;
        let result = run(&mut d, config, &input, Some(output.address)).map(|_| ());
        let result = result.and(output.release()).and(input.release());
        d.finish(result)
    }

    fn prepare_plain(&self, program: &dyn Program, config: Config) -> Result<JitReport> {
        let plan = plain_plan(config, program.items(), 0)?;
        Ok(self.loader(program).module(&plan.kernels()[0])?.1)
    }
}
