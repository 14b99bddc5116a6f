//! What the segmented modes share: a layout on the device in both forms, and plain `Shuffle`
//! on the same items (the throughput segmented rows are compared with).

use crate::layouts;
use crate::timing::{median_ms, REPS};
use reduce_cuda::{
    Algorithm, Config, CudaMonoid, DeviceCopy, DeviceInput, DeviceOutput, DeviceVec, Gpu, Lift,
    SegAlgorithm, SegConfig,
};

/// The two forms of a layout, as the modes name them.
pub const FORMS: [&str; 2] = ["owner", "offsets"];

/// The forms `config`'s algorithm is measured in: SegHeads takes the offsets form only (asked
/// for owners it runs what `Auto` runs, which has its own rows).
pub fn forms_of(config: SegConfig) -> impl Iterator<Item = &'static str> {
    FORMS.into_iter().filter(move |&form| {
        !matches!(
            config.algorithm,
            SegAlgorithm::SegHeads | SegAlgorithm::SegBlocks
        ) || form == "offsets"
    })
}

/// Whether `gpu` runs `config`'s algorithm (`SegAlgorithm::runs_on`: SegPipeline needs sm_90).
/// The modes leave the rows of one it does not run out, saying so once.
pub fn runs_here(gpu: &Gpu, config: &SegConfig) -> bool {
    static SAID: std::sync::Once = std::sync::Once::new();
    let runs = config.algorithm.runs_on(gpu.info());
    if !runs {
        SAID.call_once(|| {
            eprintln!(
                "{} left out: this device ({}) does not run it",
                config.algorithm,
                gpu.info().arch()
            )
        });
    }
    runs
}

/// The form of u64 CSR offsets ([`DeviceLayout::with_u64`]), beside [`FORMS`].
pub const OFFSETS_U64: &str = "offsets u64";

/// A layout's entries in one form.
enum Form<'a> {
    Owner(&'a DeviceVec<u32>),
    Offsets(&'a DeviceVec<u32>),
    Offsets64(&'a DeviceVec<u64>),
}

/// A layout on the device in both forms (and, from [`DeviceLayout::with_u64`], as u64 offsets).
pub struct DeviceLayout {
    offsets: DeviceVec<u32>,
    owner: DeviceVec<u32>,
    offsets64: Option<DeviceVec<u64>>,
    /// The number of segments.
    pub segments: usize,
}

impl DeviceLayout {
    /// Uploads the CSR `offsets` and the owners they give.
    pub fn new(gpu: &Gpu, offsets: &[u64]) -> reduce_cuda::Result<Self> {
        Ok(DeviceLayout {
            offsets: gpu.upload(&layouts::to_u32(offsets))?,
            owner: gpu.upload(&layouts::owners(offsets))?,
            offsets64: None,
            segments: offsets.len() - 1,
        })
    }

    /// The u32 CSR offsets on the device.
    pub fn offsets(&self) -> &DeviceVec<u32> {
        &self.offsets
    }

    /// Each item's segment id on the device (the owner form; as keys, one run per segment).
    pub fn owner(&self) -> &DeviceVec<u32> {
        &self.owner
    }

    /// [`DeviceLayout::new`], and the offsets as u64 too (the form [`OFFSETS_U64`]).
    pub fn with_u64(gpu: &Gpu, offsets: &[u64]) -> reduce_cuda::Result<Self> {
        Ok(DeviceLayout {
            offsets64: Some(gpu.upload(offsets)?),
            ..DeviceLayout::new(gpu, offsets)?
        })
    }

    /// The layout's entries in `form` ("owner", "offsets" or [`OFFSETS_U64`]; a bench's own
    /// error, not a measurement, where it has none).
    fn layout(&self, form: &str) -> Form<'_> {
        match (form, &self.offsets64) {
            ("owner", _) => Form::Owner(&self.owner),
            ("offsets", _) => Form::Offsets(&self.offsets),
            (OFFSETS_U64, Some(wide)) => Form::Offsets64(wide),
            (other, _) => {
                panic!("no layout form {other} here (u64 offsets: DeviceLayout::with_u64)")
            }
        }
    }

    /// Bytes a segmented reduction must move: items, the layout, one result per segment.
    pub fn bytes<M>(&self, n: usize, form: &str) -> f64 {
        self.lifted_bytes::<M, M>(n, form)
    }

    /// Bytes a segmented reduction of `n` items of type `X` lifted into `M` must move: the
    /// items, the layout, one `M` result per segment.
    pub fn lifted_bytes<X, M>(&self, n: usize, form: &str) -> f64 {
        let size = std::mem::size_of::<M>();
        (n * std::mem::size_of::<X>() + self.index_bytes(n, form) + self.segments * size) as f64
    }

    /// The bytes of the layout in `form` over `n` items.
    pub fn index_bytes(&self, n: usize, form: &str) -> usize {
        match self.layout(form) {
            Form::Owner(_) => 4 * n,
            Form::Offsets(_) => 4 * (self.segments + 1),
            Form::Offsets64(_) => 8 * (self.segments + 1),
        }
    }

    /// One reduction into `out` (no allocation).
    pub fn run<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<M>,
        out: &mut impl DeviceOutput<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<()> {
        match self.layout(form) {
            Form::Owner(owner) => {
                gpu.reduce_by_owner_into(items, owner, self.segments, out, config)
            }
            Form::Offsets(offsets) => gpu.reduce_segments_into(items, offsets, out, config),
            Form::Offsets64(offsets) => gpu.reduce_segments_into(items, offsets, out, config),
        }
    }

    /// One reduction of `lift(x, i)` for the items `x` of `items` into `out`.
    pub fn run_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<X>,
        out: &mut impl DeviceOutput<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<()> {
        match self.layout(form) {
            Form::Owner(owner) => {
                gpu.reduce_by_owner_lifted_into(items, owner, self.segments, out, config)
            }
            Form::Offsets(offsets) => gpu.reduce_segments_lifted_into(items, offsets, out, config),
            Form::Offsets64(offsets) => {
                gpu.reduce_segments_lifted_into(items, offsets, out, config)
            }
        }
    }

    /// One reduction by the allocating form of the call (`reduce_segments`, `reduce_by_owner`):
    /// a new output, dropped at once.
    pub fn allocating<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<()> {
        match self.layout(form) {
            Form::Owner(owner) => gpu
                .reduce_by_owner(items, owner, self.segments, config)
                .map(drop),
            Form::Offsets(offsets) => gpu.reduce_segments(items, offsets, config).map(drop),
            Form::Offsets64(offsets) => gpu.reduce_segments(items, offsets, config).map(drop),
        }
    }

    /// The median time (ms) of [`DeviceLayout::run`].
    pub fn time<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<M>,
        out: &mut impl DeviceOutput<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<f32> {
        median_ms(gpu, REPS, || self.run(gpu, items, out, form, config))
    }

    /// The median time (ms) of [`DeviceLayout::run_lifted`].
    pub fn time_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<X>,
        out: &mut impl DeviceOutput<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<f32> {
        median_ms(gpu, REPS, || self.run_lifted(gpu, items, out, form, config))
    }
}

/// Median ms of plain Shuffle over `items` (the throughput segmented rows are compared with).
pub fn plain_shuffle_ms<M: CudaMonoid>(
    gpu: &Gpu,
    items: &impl DeviceInput<M>,
) -> reduce_cuda::Result<f32> {
    let mut out = gpu.identities::<M>(1)?;
    let config = Config::new(Algorithm::Shuffle);
    median_ms(gpu, REPS, || gpu.reduce_into(items, &mut out, config))
}
