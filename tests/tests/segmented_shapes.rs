//! Segmented reductions of the monoids of unusual shapes (`reduce_tests::monoids::{small,
//! wide}`) on every layout shape (`reduce_tests::layouts::every_shape`: no segments, every
//! segment empty, all items beside thousands of empty segments, geometric lengths, lengths at and
//! around tile sizes, segment counts around SegShuffle's early-check limit, random mixtures),
//! bit for bit against the sequential fold: every `SegAlgorithm` and `Auto`, validated and
//! trusted (plus two non-default configurations), both forms (CSR offsets, owners), `u32`
//! layouts for all and `u64` for those that take them (the others must refuse with
//! `InvalidConfig`), the allocating calls and the `_into` calls into a longer, poisoned buffer;
//! and inputs and layouts at addresses that are not 16-byte aligned, plain and segmented.
//!
//! Needs a GPU: the tests skip without one, and fail under `REDUCE_REQUIRE_GPU=1`.

use reduce_core::{fold, fold_segments};
use reduce_cuda::{
    Algorithm, CudaMonoid, DeviceCopy, DeviceSlice, DeviceSliceMut, Error, Gpu, SegAlgorithm,
    SegConfig,
};
use reduce_tests::configs::{seg_configs, takes_u64};
use reduce_tests::layouts::{convert, mixture, offsets_of, owners_of};
use reduce_tests::monoids::small::*;
use reduce_tests::monoids::wide::*;
use reduce_tests::sweep::{check_layouts, check_layouts_with, same};
use reduce_tests::{gpu, Random, TestRng};

macro_rules! every_layout_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_layouts::<$m>(&gpu, None, 1000);
            }
        }
    )*};
}

every_layout_tests! {
    segmented_nib8_1_byte: Nib8,
    segmented_packed16_2_bytes: Packed16,
    segmented_tri8_3_bytes: Tri8,
    segmented_rot_xor_4_bytes_padded: RotXor,
    segmented_aff16n_6_bytes_tuple: Aff16n,
    segmented_grid16_12_bytes_align_2: Grid16,
    segmented_signed_aff_i64_i16_bool: SignedAff,
    segmented_argmax_f64: ArgMaxF64,
    segmented_ut_aff20_20_bytes: UtAff20,
    segmented_hash24_24_bytes_padded: Hash24,
    segmented_big40_40_bytes: Big40,
    segmented_aligned16_over_aligned: Aligned16,
    segmented_aligned64_over_aligned: Aligned64,
}

/// The portable grouping (whose nodes the host carves at the kernel's size, padding to the
/// value's alignment included) over every layout, for values aligned to 16 and to 64 bytes.
#[test]
fn segmented_portable_over_aligned() {
    if let Some(gpu) = gpu() {
        let configs = [
            SegConfig::default().portable(),
            SegConfig::default().portable().trusted(),
        ];
        check_layouts_with::<Aligned16>(&gpu, None, 1001, &configs);
        check_layouts_with::<Aligned64>(&gpu, None, 1002, &configs);
    }
}

/// The layouts the remaining monoids run on (their shapes are covered by the tests above).
const SOME_LAYOUTS: [&str; 8] = [
    "S = 0, N = 0",
    "S = 5000, every segment empty",
    "N = 1 among empties",
    "all items in the last segment after 5000 empty ones",
    "tile lengths, three of each, then a size 1",
    "S = 4095, lengths 0..6",
    "S = 4097, lengths 0..6",
    "random mixture 0",
];

macro_rules! some_layout_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_layouts::<$m>(&gpu, Some(&SOME_LAYOUTS), 2000);
            }
        }
    )*};
}

some_layout_tests! {
    segmented_aff_count_12_bytes: AffCount,
    segmented_aff2_device_fn_24_bytes: Aff2,
    segmented_min_f32_commutative: MinF32,
    segmented_auto7_7_bytes_can_fault: Auto7,
}

/// The paper's algorithms take u32 layouts only: u64 offsets or owners are `InvalidConfig`,
/// in both forms, for a monoid of an unusual shape.
#[test]
fn u64_layouts_with_the_paper_algorithms_are_invalid_config() {
    let Some(gpu) = gpu() else { return };
    let lengths = [3u64, 0, 5];
    let xs = gpu.upload(&Tri8::random_vec(8, 1)).unwrap();
    let offsets = gpu.upload(&offsets_of(&lengths)).unwrap();
    let owner = gpu.upload(&owners_of(&lengths)).unwrap();
    for algorithm in SegAlgorithm::ALL {
        if takes_u64(&SegConfig::new(algorithm)) {
            continue;
        }
        let got = gpu.reduce_segments(&xs, &offsets, algorithm);
        assert!(
            matches!(got, Err(Error::InvalidConfig { .. })),
            "{algorithm} u64 offsets: {got:?}"
        );
        let got = gpu.reduce_by_owner(&xs, &owner, 3, algorithm);
        assert!(
            matches!(got, Err(Error::InvalidConfig { .. })),
            "{algorithm} u64 owners: {got:?}"
        );
    }
}

/// Device memory of `len` values of `M` written from `host` at `skip` values into a larger
/// buffer (so `skip = 1` is not 16-byte aligned for items of fewer than 16 bytes, or of 24 or 40);
/// the returned buffer must outlive the slice.
fn placed<M: DeviceCopy>(
    gpu: &Gpu,
    host: &[M],
    skip: usize,
) -> (reduce_cuda::cudarc::driver::CudaSlice<u8>, DeviceSlice<M>) {
    use reduce_cuda::cudarc::driver::DevicePtr;
    let size = std::mem::size_of::<M>();
    let stream = gpu.stream();
    let bytes = stream
        .alloc_zeros::<u8>((host.len() + skip + 1) * size)
        .unwrap();
    let base = bytes.device_ptr(stream).0;
    let address = base + (skip * size) as u64;
    // SAFETY: live device memory of this context, large enough for host.len() values past
    // `skip`; nothing else reads or writes it while the slices are used.
    let mut dst = unsafe { DeviceSliceMut::<M>::from_raw(address, host.len(), gpu) }.unwrap();
    gpu.upload_into(&mut dst, host).unwrap();
    // SAFETY: as above.
    let src = unsafe { DeviceSlice::<M>::from_raw(address, host.len(), gpu) }.unwrap();
    (bytes, src)
}

/// Items and layouts that are not 16-byte aligned (the item-by-item paths): every plain
/// algorithm, and every segmented one in both forms, against the fold.
fn check_unaligned<M: CudaMonoid + Random>(gpu: &Gpu, seed: u64) {
    let mut rng = TestRng::new(seed);
    let lengths = mixture(&mut rng, 200_000);
    let offsets = offsets_of(&lengths);
    let owner = owners_of(&lengths);
    let items = M::random_vec(owner.len(), seed);
    let expected = fold_segments(&items, &offsets).unwrap();
    let want = fold(&items);
    for skip in [1usize, 3] {
        let (_keep, xs) = placed(gpu, &items, skip);
        for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            let got = gpu.reduce(&xs, algorithm).unwrap();
            assert_eq!(got, want, "{} skip {skip} {algorithm}", M::CUDA_NAME);
        }
        let (_k32, off32) = placed(gpu, &convert::<u32>(&offsets), skip);
        let (_k64, off64) = placed(gpu, &offsets, skip);
        let (_o32, own32) = placed(gpu, &convert::<u32>(&owner), skip);
        let (_o64, own64) = placed(gpu, &owner, skip);
        for config in seg_configs(gpu) {
            let ctx = format!("{} skip {skip} {config:?}", M::CUDA_NAME);
            let got = gpu.reduce_segments(&xs, &off32, config).unwrap();
            same(
                &format!("{ctx} u32 offsets"),
                &gpu.download(&got).unwrap(),
                &expected,
            );
            let got = gpu
                .reduce_by_owner(&xs, &own32, lengths.len(), config)
                .unwrap();
            same(
                &format!("{ctx} u32 owner"),
                &gpu.download(&got).unwrap(),
                &expected,
            );
            if takes_u64(&config) {
                let got = gpu.reduce_segments(&xs, &off64, config).unwrap();
                same(
                    &format!("{ctx} u64 offsets"),
                    &gpu.download(&got).unwrap(),
                    &expected,
                );
                let got = gpu
                    .reduce_by_owner(&xs, &own64, lengths.len(), config)
                    .unwrap();
                same(
                    &format!("{ctx} u64 owner"),
                    &gpu.download(&got).unwrap(),
                    &expected,
                );
            }
        }
    }
}

macro_rules! unaligned_tests {
    ($($name:ident: $m:ty, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_unaligned::<$m>(&gpu, $seed);
            }
        }
    )*};
}

unaligned_tests! {
    unaligned_tri8: Tri8, 1;
    unaligned_packed16: Packed16, 2;
    unaligned_grid16: Grid16, 3;
    unaligned_hash24: Hash24, 4;
    unaligned_big40: Big40, 5;
}
