//! Timing plain reductions, shared by `plain`, `variants` and `fig4`: every configuration on
//! rotated buffers of random items, each result checked.

use crate::kernels::{AnyBits, BenchKernels, FillMasks, Filled};
use crate::monoids::{masks_affine, masks_f32, masks_mat2, Affine, Mat2};
use crate::timing::{median_ms, REPS};
use reduce_cuda::{fold, Config, CudaMonoid, Gpu, Sum};

/// One measured point.
pub struct Row {
    pub monoid: &'static str,
    pub item_bytes: usize,
    pub n: usize,
    pub algorithm: String,
    pub ms: f32,
    pub correct: Option<bool>,
}

impl Row {
    /// GB/s of items read.
    pub fn gbs(&self) -> f64 {
        (self.n * self.item_bytes) as f64 / (self.ms as f64 * 1e6)
    }
}

/// How a result is checked: exact monoids against the CPU fold (n <= 2^22) or against the
/// first configuration's (itself unchecked); float sums against an f64 sum with a relative
/// tolerance (their grouping differs).
#[derive(Clone, Copy)]
pub enum Check<M> {
    Exact,
    Approx(fn(&[M], &M) -> bool),
}

fn f32_sum_close(items: &[Sum<f32>], got: &Sum<f32>) -> bool {
    let exact: f64 = items.iter().map(|x| x.0 as f64).sum();
    ((got.0 as f64 - exact) / exact.abs().max(1.0)).abs() < 1e-4
}

/// Times every config on rotated buffers of n items and checks each result; returns the read
/// roof's time (ms) over the same rotation.
#[allow(clippy::too_many_arguments)]
pub fn measure<M: CudaMonoid + AnyBits + PartialEq + std::fmt::Debug>(
    check: Check<M>,
    gpu: &Gpu,
    kernels: &BenchKernels,
    name: &'static str,
    n: usize,
    masks: &FillMasks,
    configs: &[(String, Config)],
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<f32> {
    let size = std::mem::size_of::<M>();
    let bytes = n * size;
    let rotation = (4 * gpu.info().l2_bytes)
        .div_ceil(bytes.max(1))
        .clamp(1, 16);
    let buffers: Vec<Filled<M>> = (0..rotation)
        .map(|i| kernels.fill_random::<M>(n, 1 + i as u64 * 7919 + n as u64, masks))
        .collect::<Result<_, _>>()?;
    let roof = kernels.read_roof_rotated_ms(&buffers, REPS)?;
    let host = if n <= 1 << 22 {
        Some(gpu.download(buffers[0].items())?)
    } else {
        None
    };
    let mut out = gpu.identities::<M>(1)?;
    let mut first_result: Option<M> = None;
    for (label, config) in configs {
        let mut i = 0usize;
        let ms = median_ms(gpu, REPS, || {
            i += 1;
            gpu.reduce_into(buffers[i % rotation].items(), &mut out, *config)
        })?;
        let got = gpu.reduce(buffers[0].items(), *config)?;
        let correct = match (check, &host) {
            (Check::Exact, Some(items)) => Some(got == fold(items)),
            (Check::Approx(close), Some(items)) => Some(close(items, &got)),
            // Past the CPU check each result is held against the first configuration's, which
            // itself stays unchecked.
            (Check::Exact, None) => match first_result {
                Some(first) => Some(first == got),
                None => {
                    first_result = Some(got);
                    None
                }
            },
            (Check::Approx(_), None) => None,
        };
        rows.push(Row {
            monoid: name,
            item_bytes: size,
            n,
            algorithm: label.clone(),
            ms,
            correct,
        });
    }
    Ok(roof)
}

/// `measure` for the plain benchmark's three monoids by name: "f32_sum", "affine_u32", "mat2_u32".
pub fn measure_plain_monoid(
    gpu: &Gpu,
    kernels: &BenchKernels,
    name: &'static str,
    n: usize,
    configs: &[(String, Config)],
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<f32> {
    match name {
        "f32_sum" => measure::<Sum<f32>>(
            Check::Approx(f32_sum_close),
            gpu,
            kernels,
            name,
            n,
            &masks_f32(),
            configs,
            rows,
        ),
        "affine_u32" => measure::<Affine>(
            Check::Exact,
            gpu,
            kernels,
            name,
            n,
            &masks_affine(),
            configs,
            rows,
        ),
        _ => measure::<Mat2>(
            Check::Exact,
            gpu,
            kernels,
            name,
            n,
            &masks_mat2(),
            configs,
            rows,
        ),
    }
}
