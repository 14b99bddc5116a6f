//! Launches with typed arguments.
//!
//! Every kernel of this crate takes only device addresses and 64-bit sizes (`r_size`). Its
//! arguments are a struct declared with [`kernel_signature!`], whose fields are named and
//! ordered like the parameters of the `.cu` signature, and its entry points are typed by that
//! struct ([`Entry`]): a launch cannot pass another kernel's arguments, and a test
//! (`catalogue::tests::every_kernel_signature_matches_its_declaration`, over
//! `catalogue::signatures`) checks every declared signature against the kernel files, and that
//! every kernel is declared.

use super::health::DriverContext;
use super::module::EntryPoint;
use super::{Device, Module};
use crate::error::{Error, LaunchInfo, Result};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

/// The arguments of the kernels of one signature, in the order of their `.cu` parameters.
pub(crate) trait KernelArgs {
    /// The parameter names as the `.cu` signature spells them (a Rust keyword as `r#in`),
    /// for the test that holds them against the kernel files.
    #[cfg(test)]
    const PARAMS: &'static [&'static str];
    /// The values, in parameter order.
    fn values(&self) -> Vec<u64>;
}

/// An entry point that takes the arguments `A`.
pub(crate) struct Entry<A> {
    pub name: &'static str,
    args: PhantomData<fn(A)>,
}

impl<A> Entry<A> {
    pub const fn new(name: &'static str) -> Self {
        Entry {
            name,
            args: PhantomData,
        }
    }
}

impl<A> Clone for Entry<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Entry<A> {}

impl<A> std::fmt::Debug for Entry<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Declares the argument struct of a kernel signature, its fields named and ordered like the
/// `.cu` parameters:
///
/// ```text
/// kernel_signature! {
///     /// One pass: data block `b` of the `n` values at `in` becomes `out[b]`.
///     pub(crate) struct PassArgs { r#in, n, out }
/// }
/// const REDUCE_TB2: Entry<PassArgs> = Entry::new("reduce_tb2");
/// ```
macro_rules! kernel_signature {
    ($(#[$doc:meta])* $vis:vis struct $name:ident { $($field:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $(pub $field: u64,)*
        }

        impl $crate::device::KernelArgs for $name {
            #[cfg(test)]
            const PARAMS: &'static [&'static str] = &[$(stringify!($field)),*];
            fn values(&self) -> Vec<u64> {
                vec![$(self.$field),*]
            }
        }
    };
}
pub(crate) use kernel_signature;

/// `REDUCE_SMEM_CARVEOUT` (0..=100), if set: see [`Device::kernel`].
fn smem_carveout() -> Option<i32> {
    static CARVEOUT: OnceLock<Option<i32>> = OnceLock::new();
    *CARVEOUT.get_or_init(|| {
        std::env::var("REDUCE_SMEM_CARVEOUT")
            .ok()
            .and_then(|v| v.parse::<i32>().ok())
            .filter(|p| (0..=100).contains(p))
    })
}

/// An entry point ready to launch with arguments `A`: its module, its block size and its
/// dynamic shared memory, checked against the device and opted in to.
pub(crate) struct Kernel<A> {
    pub module: Arc<Module>,
    entry: Arc<EntryPoint>,
    name: &'static str,
    algorithm: &'static str,
    pub block: u32,
    pub smem: usize,
    args: PhantomData<fn(A)>,
}

impl Device {
    /// Entry point `entry` of `module`, for blocks of `block` threads with `smem` bytes of
    /// dynamic shared memory each: checks that they fit and opts the function in to more than
    /// 48 KiB. With `REDUCE_SMEM_CARVEOUT=P` (a benchmark knob, read once), kernels that use
    /// shared memory also prefer a carveout of P% of the unified L1/shared memory for it.
    /// `algorithm` names the algorithm in the error. The driver is asked each fact once per
    /// entry point.
    pub fn kernel<A>(
        &self,
        module: &Arc<Module>,
        entry: Entry<A>,
        block: u32,
        smem: usize,
        algorithm: &'static str,
    ) -> Result<Kernel<A>> {
        let point = module.entry(entry.name)?;
        let max = self.info.max_shared_per_block;
        let static_smem = point.static_smem;
        if smem + static_smem > max {
            // "the device allows" marks this refusal as the device's (not a planner's): the GPU
            // tests, sized on an H100, accept it from smaller devices for hand-set tiles
            // (`reduce_tests::configs::seg_declined`).
            return Err(Error::InvalidConfig {
                algorithm,
                reason: format!(
                    "needs {} bytes of shared memory per block ({smem} for the data, {static_smem} static); the device allows {max}: a smaller block, matrix width, items per thread or fewer stages need less",
                    smem + static_smem
                ),
            });
        }
        let mut set = point.set.lock().unwrap_or_else(|e| e.into_inner());
        if smem + static_smem > 48 * 1024 && set.0 < smem {
            point
                .function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem as i32,
                )
                .during("opting a kernel in to more shared memory")?;
            set.0 = smem;
        }
        if let (Some(percent), true, false) = (smem_carveout(), smem + static_smem > 0, set.1) {
            point
                .function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    percent,
                )
                .during("setting a kernel's shared memory carveout")?;
            set.1 = true;
        }
        drop(set);
        Ok(Kernel {
            module: module.clone(),
            entry: point,
            name: entry.name,
            algorithm,
            block,
            smem,
            args: PhantomData,
        })
    }

    /// Entry point `entry` of `module` as a grid-stride helper kernel: 256 threads, no shared
    /// memory (no check against the device needed).
    pub fn helper_kernel<A>(&self, module: &Arc<Module>, entry: Entry<A>) -> Result<Kernel<A>> {
        Ok(Kernel {
            module: module.clone(),
            entry: module.entry(entry.name)?,
            name: entry.name,
            algorithm: "helper",
            block: 256,
            smem: 0,
            args: PhantomData,
        })
    }

    /// The most blocks of `kernel` resident on the whole device at once (blocks per SM from
    /// the occupancy API, at least one, times the SMs): the grid of a persistent kernel.
    pub fn resident_blocks<A>(&self, kernel: &Kernel<A>) -> Result<u64> {
        let key = (kernel.block, kernel.smem);
        let mut cached = kernel
            .entry
            .occupancy
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let per_sm = match cached.get(&key) {
            Some(&per_sm) => per_sm,
            None => {
                let per_sm = kernel
                    .entry
                    .function
                    .occupancy_max_active_blocks_per_multiprocessor(kernel.block, kernel.smem, None)
                    .during("querying occupancy")?;
                cached.insert(key, per_sm);
                per_sm
            }
        };
        Ok(per_sm.max(1) as u64 * self.info.multiprocessors as u64)
    }

    /// Queues `kernel` on `grid` blocks with `args`.
    pub fn launch<A: KernelArgs>(&self, kernel: &Kernel<A>, grid: u64, args: A) -> Result<()> {
        if grid > i32::MAX as u64 {
            return Err(Error::TooLarge {
                what: "grid size in blocks",
                value: grid,
                limit: i32::MAX as u64,
            });
        }
        let config = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (kernel.block, 1, 1),
            shared_mem_bytes: kernel.smem as u32,
        };
        let values = args.values();
        let mut builder = self.stream.launch_builder(&kernel.entry.function);
        for value in &values {
            builder.arg(value);
        }
        // SAFETY: `A` is the signature of the kernel's entry point (its fields are checked
        // against the `.cu` parameters, all 64-bit), and the callers pass addresses of live
        // device memory of the sizes the kernel indexes.
        unsafe { builder.launch(config) }.during("launching a kernel")?;
        self.log.launched(
            &self.stream,
            LaunchInfo {
                monoid: kernel.module.monoid,
                family: kernel.module.family,
                kernel: kernel.name,
                algorithm: kernel.algorithm,
            },
        )
    }
}
