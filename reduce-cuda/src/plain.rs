//! Plain reductions: host-side dispatch (grid sizes, passes) for every algorithm family.

use crate::algorithm::{invalid, shuffle_items, Algorithm, Config, Plan, SHUFFLE_BLOCKS_PER_SM};
use crate::codegen::KernelSpec;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Scratch};
use crate::jit::JitReport;
use crate::view::{Access, DeviceInput, DeviceOutput};
use cudarc::driver::CudaFunction;
use reduce_core::{CudaMonoid, DeviceCopy, Lift};

/// Aligns scratch sub-regions.
const ALIGN: usize = 256;

fn align(bytes: usize) -> usize {
    bytes.div_ceil(ALIGN) * ALIGN
}

/// Picks a concrete plan: `Auto` becomes Shuffle, order-free when the monoid promises
/// commutativity (and only then).
pub(crate) fn plan_for<M: CudaMonoid>(config: Config) -> Result<Plan> {
    let size = std::mem::size_of::<M>();
    if config.algorithm != Algorithm::Auto {
        return config.plan(size);
    }
    let mut plan = Config {
        algorithm: Algorithm::Shuffle,
        ..config
    }
    .plan(size)?;
    if let Plan::Shuffle {
        order_free, group, ..
    } = &mut plan
    {
        if M::COMMUTATIVE && config.tile_group.is_none() {
            (*order_free, *group) = (true, 0);
        }
    }
    Ok(plan)
}

/// The plan of a lifted reduction: Shuffle (or Auto), its vectors sized for `in_size`-byte
/// input items. The other algorithms read monoid values only.
pub(crate) fn plan_lifted<M: CudaMonoid>(config: Config, in_size: usize) -> Result<Plan> {
    if !matches!(config.algorithm, Algorithm::Shuffle | Algorithm::Auto) {
        return Err(invalid(
            config.algorithm,
            "lifted inputs (reduce_lifted) are read by Shuffle only: use Algorithm::Shuffle or \
             Algorithm::Auto",
        ));
    }
    let mut plan = plan_for::<M>(config)?;
    if let Plan::Shuffle { items, vecs, .. } = &mut plan {
        (*items, *vecs) = shuffle_items(in_size, config.items_per_thread)?;
    }
    Ok(plan)
}

/// Every kernel a plan launches (persistent plans finish with a Matrix pass).
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

fn plan_specs(plan: &Plan) -> Vec<KernelSpec> {
    let mut specs = vec![plan.kernel()];
    if let Plan::PersistentMatrix { width, .. } | Plan::DiffWarps { width, .. } = *plan {
        specs.push(Plan::Matrix { block: 256, width }.kernel());
    }
    specs
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
        let input = self.input(xs)?;
        let mut scratch = self.lock_scratch();
        let config = config.into();
        let out = self.run::<M>(&input, config, &mut scratch, None)?;
        let mut value = [M::identity()];
        // SAFETY: `out` holds one M written by the final kernel; the copy is synchronous
        // with respect to the stream once synchronized below.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                &mut value[..],
                out,
                self.inner.stream.cu_stream(),
            )
        }
        .map_err(|source| Error::Driver {
            during: "copying the result to the host",
            source,
        })?;
        let address = input.address;
        input.release()?;
        self.synchronize()?;
        if M::CAN_FAULT {
            self.check_plan_fault::<M>(config, address)?;
        }
        Ok(value[0])
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
        let input = self.input(xs)?;
        let output = self.output(out)?;
        holds_one(output.len)?;
        let mut scratch = self.lock_scratch();
        let config = config.into();
        let address = input.address;
        self.run::<M>(&input, config, &mut scratch, Some(output.address))?;
        output.release()?;
        input.release()?;
        if M::CAN_FAULT {
            self.check_plan_fault::<M>(config, address)?;
        }
        Ok(())
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
        let input = self.input(xs)?;
        let mut scratch = self.lock_scratch();
        let (out, spec) = self.run_lifted::<M, X>(&input, config.into(), &mut scratch, None)?;
        let value = self.read_value::<M>(out)?;
        input.release()?;
        if M::CAN_FAULT || M::LIFT_CAN_FAULT {
            self.check_device_fault::<M>(&[&spec])?;
        }
        Ok(value)
    }

    /// Queues [`Gpu::reduce_lifted`] into `out[0]` without waiting (except, as
    /// [`Gpu::reduce_into`], for a monoid or lift that can fault).
    pub fn reduce_lifted_into<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<Config>,
    ) -> Result<()> {
        let input = self.input(xs)?;
        let output = self.output(out)?;
        holds_one(output.len)?;
        let mut scratch = self.lock_scratch();
        let (_, spec) =
            self.run_lifted::<M, X>(&input, config.into(), &mut scratch, Some(output.address))?;
        output.release()?;
        input.release()?;
        if M::CAN_FAULT || M::LIFT_CAN_FAULT {
            self.check_device_fault::<M>(&[&spec])?;
        }
        Ok(())
    }

    /// Compiles (or loads) the kernel `reduce_lifted::<M, X>` needs for `config` (for an input
    /// whose address is 16-byte aligned).
    pub fn prepare_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        config: impl Into<Config>,
    ) -> Result<JitReport> {
        let plan = plan_lifted::<M>(config.into(), std::mem::size_of::<X>())?;
        Ok(self.kernel_lifted::<M, X>(&plan.kernel().lifted::<X>())?.1)
    }

    /// Launches the lifted Shuffle kernel; returns the result's address and the kernel's spec.
    fn run_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &Access<'_>,
        config: Config,
        scratch: &mut Scratch,
        target: Option<u64>,
    ) -> Result<(u64, KernelSpec)> {
        let plan = plan_lifted::<M>(config, std::mem::size_of::<X>())?.for_input(xs.address);
        let spec = plan.kernel().lifted::<X>();
        let (kernel, _) = self.kernel_lifted::<M, X>(&spec)?;
        let f = kernel.function(plan.entry())?;
        let out = self.shuffle::<M>(plan, &f, xs.address, xs.len as u64, scratch, target)?;
        Ok((out, spec))
    }

    /// The fault records of every kernel the plan of `config` launched on the input at
    /// `address` (see `fault.rs`).
    fn check_plan_fault<M: CudaMonoid>(&self, config: Config, address: u64) -> Result<()> {
        let specs = plan_specs(&plan_for::<M>(config)?.for_input(address));
        self.check_device_fault::<M>(&specs.iter().collect::<Vec<_>>())
    }

    /// Copies the one value at `out` to the host (waits for the queued work).
    fn read_value<M: CudaMonoid>(&self, out: u64) -> Result<M> {
        let mut value = [M::identity()];
        // SAFETY: `out` holds one M written by the final kernel; the copy is synchronous
        // with respect to the stream once synchronized below.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                &mut value[..],
                out,
                self.inner.stream.cu_stream(),
            )
        }
        .map_err(|source| Error::Driver {
            during: "copying the result to the host",
            source,
        })?;
        self.synchronize()?;
        Ok(value[0])
    }

    /// Compiles (or loads from the caches) the kernel `config` needs for monoid `M`, and says
    /// where it came from and how long that took. Reductions do this on first use anyway.
    pub fn prepare<M: CudaMonoid>(&self, config: impl Into<Config>) -> Result<JitReport> {
        let plan = plan_for::<M>(config.into())?;
        Ok(self.kernel::<M>(&plan.kernel())?.1)
    }

    /// Runs the plan on `xs`; writes the result to `target` or to scratch; returns its address.
    fn run<M: CudaMonoid>(
        &self,
        xs: &Access<'_>,
        config: Config,
        scratch: &mut Scratch,
        target: Option<u64>,
    ) -> Result<u64> {
        let (input, n) = (xs.address, xs.len);
        let plan = plan_for::<M>(config)?.for_input(input);
        match plan {
            Plan::Tb2 { .. } | Plan::Tb4Warp { .. } | Plan::Matrix { .. } => {
                self.multi_pass::<M>(plan, input, n as u64, scratch, target)
            }
            Plan::PersistentMatrix { .. } | Plan::DiffWarps { .. } => {
                self.persistent::<M>(plan, input, n as u64, scratch, target)
            }
            Plan::Shuffle { .. } => {
                let (f, _) = self.entry_point::<M>(&plan)?;
                self.shuffle::<M>(plan, &f, input, n as u64, scratch, target)
            }
        }
    }

    /// The plan's kernel entry point, loaded, with its dynamic shared memory checked and set.
    fn entry_point<M: CudaMonoid>(
        &self,
        plan: &Plan,
    ) -> Result<(cudarc::driver::CudaFunction, usize)> {
        let (kernel, _) = self.kernel::<M>(&plan.kernel())?;
        let f = kernel.function(plan.entry())?;
        let smem = plan.dynamic_smem(std::mem::size_of::<M>());
        self.prepare_smem(&f, plan.algorithm().name(), smem)?;
        Ok((f, smem))
    }

    /// Tb2, Tb4Warp, Matrix: each pass reduces data blocks of D values into ceil(len / D)
    /// values, in order, until one is left.
    fn multi_pass<M: CudaMonoid>(
        &self,
        plan: Plan,
        input: u64,
        n: u64,
        scratch: &mut Scratch,
        target: Option<u64>,
    ) -> Result<u64> {
        let size = std::mem::size_of::<M>();
        let (a, b) = pass_regions(n, plan.data_block(), size);
        let base = scratch.region(self, a + b + align(size))?;
        let out = target.unwrap_or(base + (a + b) as u64);
        self.passes::<M>(plan, input, n, [base, base + a as u64], out)?;
        Ok(out)
    }

    /// Repeats the one-block-per-data-block kernel of `plan` until one value is left, writing it
    /// to `out`. Passes alternate between the two scratch regions (sized by [`pass_regions`]).
    fn passes<M: CudaMonoid>(
        &self,
        plan: Plan,
        input: u64,
        n: u64,
        regions: [u64; 2],
        out: u64,
    ) -> Result<()> {
        let (f, smem) = self.entry_point::<M>(&plan)?;
        let d = plan.data_block();
        let (mut src, mut len, mut pass) = (input, n, 0usize);
        loop {
            let blocks = len.div_ceil(d).max(1);
            let dst = if blocks == 1 { out } else { regions[pass % 2] };
            self.launch(&f, blocks, plan.block(), smem, &[src, len, dst])?;
            if blocks == 1 {
                return Ok(());
            }
            (src, len, pass) = (dst, blocks, pass + 1);
        }
    }

    /// PersistentMatrix, DiffWarps: G persistent blocks fold q or q+1 data blocks each into G
    /// values, in block order (pass 1); Matrix reduces those G values (pass 2).
    fn persistent<M: CudaMonoid>(
        &self,
        plan: Plan,
        input: u64,
        n: u64,
        scratch: &mut Scratch,
        target: Option<u64>,
    ) -> Result<u64> {
        let size = std::mem::size_of::<M>();
        let (f, smem) = self.entry_point::<M>(&plan)?;
        let data_blocks = n.div_ceil(plan.data_block()).max(1);
        let grid = match plan.fixed_grid() {
            Some(g) => g as u64,
            None => self.full_grid(&f, plan.block(), smem)? as u64,
        }
        .min(data_blocks);
        let (q, r) = (data_blocks / grid, data_blocks % grid);
        let width = match plan {
            Plan::PersistentMatrix { width, .. } | Plan::DiffWarps { width, .. } => width,
            _ => unreachable!("persistent plans only"),
        };
        let second = Plan::Matrix { block: 256, width };
        let partials = align(grid as usize * size);
        let (a, b) = pass_regions(grid, second.data_block(), size);
        let base = scratch.region(self, partials + a + b + align(size))?;
        let out = target.unwrap_or(base + (partials + a + b) as u64);
        if grid == 1 {
            self.launch(&f, 1, plan.block(), smem, &[input, n, q, r, out])?;
            return Ok(out);
        }
        self.launch(&f, grid, plan.block(), smem, &[input, n, q, r, base])?;
        let regions = [base + partials as u64, base + (partials + a) as u64];
        self.passes::<M>(second, base, grid, regions, out)?;
        Ok(out)
    }

    /// Shuffle: one launch of `f` (its kernel, plain or lifted); the last block folds the
    /// block partials.
    fn shuffle<M: CudaMonoid>(
        &self,
        plan: Plan,
        f: &CudaFunction,
        input: u64,
        n: u64,
        scratch: &mut Scratch,
        target: Option<u64>,
    ) -> Result<u64> {
        let size = std::mem::size_of::<M>();
        let Plan::Shuffle { block, items, .. } = plan else {
            unreachable!()
        };
        let tiles = n.div_ceil(32 * items as u64).max(1);
        let warps_per_block = (block / 32) as u64;
        let grid = match plan.fixed_grid() {
            Some(g) => g as u64,
            None => {
                let resident = self.full_grid(f, block, 0)?;
                let preferred = SHUFFLE_BLOCKS_PER_SM * self.info().multiprocessors;
                (resident.min(preferred) as u64).min(tiles.div_ceil(warps_per_block))
            }
        };
        let partials_bytes = align(grid as usize * size);
        let base = scratch.region(self, partials_bytes + align(size))?;
        let out = target.unwrap_or(base + partials_bytes as u64);
        let ticket = scratch.ticket.device_ptr(&self.inner.stream);
        self.launch(f, grid, block, 0, &[input, n, base, ticket, out])?;
        Ok(out)
    }
}

/// Bytes of the two ping-pong regions that multi-pass reduction of `len` values needs.
fn pass_regions(len: u64, data_block: u64, size: usize) -> (usize, usize) {
    let first = len.div_ceil(data_block).max(1);
    let second = first.div_ceil(data_block).max(1);
    (align(first as usize * size), align(second as usize * size))
}
