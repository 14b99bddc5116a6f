//! `Backend`: the GPU when one can be used, else the order-keeping CPU backend — the same calls
//! and the same errors on both (an index out of bounds in translated code included: the CPU
//! runs the fallible calls, `Cpu::try_reduce`, ...).

mod scan;
mod segmented;

use crate::catalogue::{axis_plan, plain_plan, AxisConfig, Config};
use crate::device::host_vec;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{Lifted, Own, Program};
use reduce_core::axes::Axes;
use reduce_core::{Cpu, CpuError, CudaMonoid, DeviceCopy, IndexFault, Lift};

/// Where reductions of host slices run: a GPU, or the CPU (rayon threads, order kept too).
/// Both give the same values (the sequential fold, bit for bit, for exactly associative
/// monoids) and the same errors, checked in the same order (the layout on the host, then the
/// configuration): a configuration the GPU would refuse is refused on the CPU, but for what
/// only a device or the compiler can tell (a launch's shared memory past the device's, a
/// kernel's static shared memory past what NVRTC allows — values of about 700 bytes and more in
/// the scans, SegShuffle and SegMerge —, an architecture an algorithm needs). The CPU checks
/// every layout, a trusted one too: where the GPU's result of a trusted bad layout is
/// unspecified, the CPU's is the layout's error.
#[derive(Debug)]
pub enum Backend {
    /// A CUDA device.
    Gpu(Gpu),
    /// The rayon CPU backend, with the reason no GPU is used (`None`: chosen with
    /// [`Backend::cpu`]).
    Cpu {
        /// Why the GPU backend was not available.
        reason: Option<Error>,
    },
}

impl Backend {
    /// Device 0 if it can be opened (driver, NVRTC and a device present), else the CPU. A
    /// device whose context an earlier fault lost is opened again as [`Gpu::new`] does once
    /// nothing holds the lost context; while something does, the CPU, and
    /// [`Backend::describe`] says why.
    pub fn auto() -> Backend {
        match Gpu::new(0) {
            Ok(gpu) => Backend::Gpu(gpu),
            Err(reason) => Backend::Cpu {
                reason: Some(reason),
            },
        }
    }

    /// The CPU, whatever the machine has.
    pub fn cpu() -> Backend {
        Backend::Cpu { reason: None }
    }

    /// A one-line description: the device's name, or "CPU" and why.
    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(gpu) => format!("GPU {} ({})", gpu.info().ordinal, gpu.info().name),
            Backend::Cpu { reason: None } => {
                format!("CPU ({} rayon threads)", Cpu::new().threads())
            }
            Backend::Cpu {
                reason: Some(reason),
            } => {
                format!(
                    "CPU ({} rayon threads) — no GPU: {reason}",
                    Cpu::new().threads()
                )
            }
        }
    }

    /// The left-to-right fold of `items` (uploads them when on the GPU). With
    /// [`Config::portable`] both backends give the portable grouping's bits
    /// (`reduce_core::portable::fold`), floats included.
    pub fn reduce<M: CudaMonoid>(&self, items: &[M], config: impl Into<Config>) -> Result<M> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => gpu.reduce(&gpu.upload(items)?, config),
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_plain(&Own::<M>::new(), config)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_portable(items)
                } else {
                    cpu.try_reduce(items)
                }
                .map_err(fault::<M>)
            }),
        }
    }

    /// The left-to-right fold of `lift(x, i)` over the items `x` (`i` the item's index): see
    /// [`Gpu::reduce_lifted`].
    pub fn reduce_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
        config: impl Into<Config>,
    ) -> Result<M> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => gpu.reduce_lifted(&gpu.upload(items)?, config),
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_plain(&Lifted::<M, X>::new(), config)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_lifted_portable(items)
                } else {
                    cpu.try_reduce_lifted(items)
                }
                .map_err(fault::<M>)
            }),
        }
    }
}

impl Backend {
    /// `items`, a row-major array of `shape`, reduced along `axes` (see [`Gpu::reduce_axes`] /
    /// `reduce_core::fold_axes`). With [`AxisConfig::portable`] both backends give
    /// `reduce_core::portable::fold_axes`' bits.
    pub fn reduce_axes<M: CudaMonoid>(
        &self,
        items: &[M],
        shape: &[usize],
        axes: &[usize],
        config: impl Into<AxisConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let out = gpu.reduce_axes(&gpu.upload(items)?, shape, axes, config)?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                let results = Axes::sized::<M>(items.len(), shape, axes)?.results;
                axis_plan(config, Own::<M>::new().items())?;
                room_for::<M>(results)?;
                cpu_axes(items, shape, axes, config)
            }),
        }
    }

    /// [`Backend::reduce_axes`] of `lift(x, i)` over the items `x` (`i` the item's index):
    /// see [`Gpu::reduce_axes_lifted`].
    pub fn reduce_axes_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
        shape: &[usize],
        axes: &[usize],
        config: impl Into<AxisConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let out = gpu.reduce_axes_lifted(&gpu.upload(items)?, shape, axes, config)?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                let results = Axes::sized::<M>(items.len(), shape, axes)?.results;
                axis_plan(config, Lifted::<M, X>::new().items())?;
                room_for::<M>(results)?;
                cpu_axes(&lifted_on_cpu::<M, X>(items)?, shape, axes, config)
            }),
        }
    }
}

/// The CPU's reduction of `items` along `axes`, in the mode `config` asks for (checked).
fn cpu_axes<M: CudaMonoid>(
    items: &[M],
    shape: &[usize],
    axes: &[usize],
    config: AxisConfig,
) -> Result<Vec<M>> {
    let cpu = Cpu::new();
    match config.portable {
        true => cpu.try_reduce_axes_portable(items, shape, axes),
        false => cpu.try_reduce_axes(items, shape, axes),
    }
    .map_err(cpu_error::<M>)
}

/// The items lifted on the CPU, in parallel (a fault in the lift's code is the GPU's error):
/// the values the CPU's lifted calls then reduce or scan.
fn lifted_on_cpu<M: Lift<X>, X: DeviceCopy>(items: &[X]) -> Result<Vec<M>> {
    // the lifted values first need room of their own: an error, not an abort, where they cannot
    room_for::<M>(items.len())?;
    Cpu::new().try_lift(items).map_err(fault::<M>)
}

/// An error where the host cannot hold `results` values of `M` (a count the GPU's call would
/// fail to allocate too): the CPU's calls would abort the process allocating them.
pub(super) fn room_for<M>(results: usize) -> Result<()> {
    host_vec::<M>(results, "the results").map(drop)
}

/// `task` on the CPU. The monoid's Rust code panics on an integer division by zero (or the
/// operators' MIN / -1), as Rust does: that panic becomes the GPU's [`Error::DivisionFault`]
/// (the default panic hook has printed its message); any other panic goes on.
pub(super) fn on_cpu<M: CudaMonoid, R>(task: impl FnOnce() -> Result<R>) -> Result<R> {
    let panic = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)) {
        Ok(result) => return result,
        Err(panic) => panic,
    };
    let message = (panic.downcast_ref::<&str>().copied())
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    let overflow = match message {
        Some("attempt to divide by zero")
        | Some("attempt to calculate the remainder with a divisor of zero") => false,
        Some("attempt to divide with overflow")
        | Some("attempt to calculate the remainder with overflow") => true,
        _ => std::panic::resume_unwind(panic),
    };
    Err(Error::DivisionFault {
        monoid: M::CUDA_NAME,
        overflow,
    })
}

/// `task`, host code that runs `M`'s Rust `combine` (a multi-GPU call's fold or join of its
/// ranks' partials): a fault in the monoid's code there (an index out of bounds, an integer
/// division by zero) is the error the GPU gives for it, not a panic.
#[cfg(any(feature = "nccl", test))]
pub(crate) fn on_host<M: CudaMonoid, R>(task: impl FnOnce() -> R) -> Result<R> {
    on_cpu::<M, R>(|| reduce_core::fault::checked::<M, R>(task).map_err(fault::<M>))
}

/// The GPU's error for an index fault the CPU found in `M`'s code.
fn fault<M: CudaMonoid>(fault: IndexFault) -> Error {
    Error::DeviceFault {
        monoid: M::CUDA_NAME,
        index: fault.index,
        len: fault.len,
    }
}

fn cpu_error<M: CudaMonoid>(error: CpuError) -> Error {
    match error {
        CpuError::Fault(f) => fault::<M>(f),
        CpuError::Layout(e) => Error::Layout(e),
        other => Error::Internal(format!("an unknown CPU error: {other}")),
    }
}

/// The checks a GPU applies to a plain configuration, without a device.
fn check_plain(program: &dyn Program, config: Config) -> Result<()> {
    plain_plan(config, program.items(), 0).map(drop)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use reduce_core::Monoid;

    /// A combine (not associative: only its faults matter here) that divides by `b` and picks
    /// one of two by the quotient: `b = 0` is a division fault, a quotient past 1 an index one.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
    #[repr(C)]
    #[monoid(
        identity = Picky { v: 1 },
        combine = |a, b| Picky { v: [a.v, b.v][(a.v / b.v) as usize] }
    )]
    pub(crate) struct Picky {
        pub(crate) v: u32,
    }

    #[test]
    fn faults_in_host_combines_are_the_gpus_errors() {
        let combine = |a, b| on_host::<Picky, _>(|| Picky::combine(Picky { v: a }, Picky { v: b }));
        assert_eq!(combine(3, 2).unwrap(), Picky { v: 2 });
        let division = combine(3, 0);
        assert!(
            matches!(
                division,
                Err(Error::DivisionFault {
                    overflow: false,
                    ..
                })
            ),
            "{division:?}"
        );
        let index = combine(6, 2);
        assert!(
            matches!(
                index,
                Err(Error::DeviceFault {
                    index: 3,
                    len: 2,
                    ..
                })
            ),
            "{index:?}"
        );
        // the recording ends with the call: the same fault outside it is Rust's panic
        let outside = std::panic::catch_unwind(|| Picky::combine(Picky { v: 6 }, Picky { v: 2 }));
        assert!(outside.is_err());
    }
}
