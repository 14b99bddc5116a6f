//! Monoids of shapes no standard test monoid has (`reduce_tests::monoids::{small, wide}`: odd
//! sizes, padding, over-alignment, tuple and nested structs, helpers, floats): their sizes and
//! laws, the CPU backend on every layout shape, and, for those of 1 to 40 bytes, every kernel
//! through NVRTC and every plain algorithm on the GPU (`reduce` and `reduce_into`, at N = 0, 1,
//! 2^k +- 1 and a few large N), bit for bit against the sequential fold. Their segmented calls
//! on the GPU are `segmented_shapes.rs`; items of 128 bytes and more, `large_items.rs`.
//!
//! Without a GPU the first tests still run (`REDUCE_REQUIRE_NVRTC=1` makes a missing NVRTC a
//! failure); GPU tests use [`reduce_tests::gpu`]: they skip without a device, and fail under
//! `REDUCE_REQUIRE_GPU=1`.

use reduce_core::{fold, fold_segments, Cpu};
use reduce_cuda::{CudaMonoid, Monoid};
use reduce_tests::layouts::{convert, every_shape, offsets_of, owners_of};
use reduce_tests::monoids::small::*;
use reduce_tests::monoids::wide::*;
use reduce_tests::sweep::{check_plain, every_kernel_compiles, same};
use reduce_tests::{assert_monoid_laws, gpu, require_nvrtc, Random, TestRng};
use std::fmt::Debug;

/// Sizes and alignments: the shapes these monoids are for.
#[test]
fn shapes_are_the_intended_ones() {
    use std::mem::{align_of, size_of};
    assert_eq!((size_of::<Nib8>(), align_of::<Nib8>()), (1, 1));
    assert_eq!((size_of::<Packed16>(), align_of::<Packed16>()), (2, 2));
    assert_eq!((size_of::<Tri8>(), align_of::<Tri8>()), (3, 1));
    assert_eq!((size_of::<RotXor>(), align_of::<RotXor>()), (4, 2));
    assert_eq!((size_of::<Aff16n>(), align_of::<Aff16n>()), (6, 2));
    assert_eq!((size_of::<Auto7>(), align_of::<Auto7>()), (7, 1));
    assert_eq!((size_of::<AffCount>(), align_of::<AffCount>()), (12, 4));
    assert_eq!((size_of::<Grid16>(), align_of::<Grid16>()), (12, 2));
    assert_eq!((size_of::<SignedAff>(), align_of::<SignedAff>()), (16, 8));
    assert_eq!((size_of::<ArgMaxF64>(), align_of::<ArgMaxF64>()), (16, 8));
    assert_eq!((size_of::<MinF32>(), align_of::<MinF32>()), (4, 4));
    assert_eq!((size_of::<UtAff20>(), align_of::<UtAff20>()), (20, 4));
    assert_eq!((size_of::<Hash24>(), align_of::<Hash24>()), (24, 8));
    assert_eq!((size_of::<Aff2>(), align_of::<Aff2>()), (24, 4));
    assert_eq!((size_of::<Big40>(), align_of::<Big40>()), (40, 8));
    assert_eq!((size_of::<Aligned16>(), align_of::<Aligned16>()), (16, 16));
    assert_eq!((size_of::<Aligned64>(), align_of::<Aligned64>()), (64, 64));
    assert_eq!((size_of::<Record128>(), align_of::<Record128>()), (128, 8));
    assert_eq!((size_of::<Record256>(), align_of::<Record256>()), (256, 8));
    assert_eq!((size_of::<Record512>(), align_of::<Record512>()), (512, 8));
    const { assert!(Auto7::CAN_FAULT && !Tri8::CAN_FAULT && !Big40::CAN_FAULT) };
    const { assert!(MinF32::COMMUTATIVE && !ArgMaxF64::COMMUTATIVE) };
}

fn laws<M: Random + Debug>(extra: &[M], seed: u64) {
    let mut xs = M::random_vec(10, seed);
    xs.push(M::identity());
    xs.extend_from_slice(extra);
    assert_monoid_laws(&xs);
    // Not commutative (but MinF32): some pair differs.
    let commutes = xs
        .iter()
        .all(|&a| xs.iter().all(|&b| M::combine(a, b) == M::combine(b, a)));
    assert_eq!(commutes, M::COMMUTATIVE, "commutativity of {xs:?}");
}

/// Identity, associativity (bit for bit) and non-commutativity of every monoid of these shapes.
#[test]
fn the_new_monoids_are_lawful() {
    laws::<Nib8>(&[Nib8 { p: -1 }, Nib8 { p: i8::MIN }], 1);
    laws::<Packed16>(&[Packed16 { p: u16::MAX }], 2);
    laws::<Tri8>(&[Tri8 { m: [255, 255, 255] }], 3);
    laws::<RotXor>(&[RotXor { x: u16::MAX, r: 15 }], 4);
    laws::<Aff16n>(&[Aff16n(u16::MAX, u16::MAX, u16::MAX)], 5);
    laws::<Auto7>(&[Auto7 { t: [6; 7] }], 6);
    laws::<AffCount>(
        &[AffCount {
            a: u32::MAX,
            b: i32::MIN,
            n: u32::MAX,
        }],
        7,
    );
    laws::<Grid16>(&[], 8);
    laws::<SignedAff>(
        &[SignedAff {
            v: i64::MIN,
            k: i16::MIN,
            neg: true,
        }],
        9,
    );
    laws::<ArgMaxF64>(
        &[
            ArgMaxF64 { v: -0.0, i: 1 },
            ArgMaxF64 { v: 0.0, i: 2 },
            ArgMaxF64 {
                v: f64::INFINITY,
                i: 3,
            },
        ],
        10,
    );
    laws::<MinF32>(&[MinF32 { v: 0.0 }, MinF32 { v: f32::MIN }], 11);
    laws::<UtAff20>(&[], 12);
    laws::<Hash24>(&[], 13);
    laws::<Aff2>(&[], 14);
    laws::<Big40>(&[], 15);
    laws::<Aligned16>(&[], 16);
    laws::<Aligned64>(&[], 16);
    fn set<const K: usize>(k: u64) -> Record<K> {
        Record {
            v: [k; K],
            n: 1,
            set: true,
        }
    }
    laws::<Record128>(&[set(1), set(2)], 17);
    laws::<Record256>(&[set(1), set(2)], 18);
    laws::<Record512>(&[set(1), set(2)], 19);
    // The helpers mean what they say.
    let (l, r) = (
        Aff2::random(&mut TestRng::new(1)),
        Aff2::random(&mut TestRng::new(2)),
    );
    let apply = |f: Aff2, x: [u32; 2]| {
        [
            f.m[0]
                .wrapping_mul(x[0])
                .wrapping_add(f.m[1].wrapping_mul(x[1]))
                .wrapping_add(f.m[4]),
            f.m[2]
                .wrapping_mul(x[0])
                .wrapping_add(f.m[3].wrapping_mul(x[1]))
                .wrapping_add(f.m[5]),
        ]
    };
    let x = [12_345, 678_910];
    assert_eq!(apply(Aff2::combine(l, r), x), apply(r, apply(l, x)));
}

/// The CPU backend (parallel chunks) equals the sequential fold on every layout shape,
/// both forms, u32 and u64.
fn cpu_backend_on_every_layout<M: Random>(seed: u64) {
    let cpu = Cpu::new();
    for (k, (name, lengths)) in every_shape().iter().enumerate() {
        let offsets = offsets_of(lengths);
        let owner = owners_of(lengths);
        let items = M::random_vec(owner.len(), seed + k as u64);
        let expected = fold_segments(&items, &offsets).unwrap();
        let ctx = format!("Cpu / {name}");
        same(
            &ctx,
            &cpu.reduce_segments(&items, &offsets).unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_segments(&items, &convert::<u32>(&offsets))
                .unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_by_owner(&items, &owner, lengths.len()).unwrap(),
            &expected,
        );
        same(
            &ctx,
            &cpu.reduce_by_owner(&items, &convert::<u32>(&owner), lengths.len())
                .unwrap(),
            &expected,
        );
        assert_eq!(cpu.reduce(&items), fold(&items), "{ctx}");
    }
}

#[test]
fn cpu_backend_on_every_layout_small_items() {
    cpu_backend_on_every_layout::<Nib8>(1);
    cpu_backend_on_every_layout::<Tri8>(2);
    cpu_backend_on_every_layout::<RotXor>(3);
}

#[test]
fn cpu_backend_on_every_layout_large_items() {
    cpu_backend_on_every_layout::<SignedAff>(4);
    cpu_backend_on_every_layout::<ArgMaxF64>(5);
    cpu_backend_on_every_layout::<Big40>(6);
}

macro_rules! nvrtc_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if require_nvrtc() {
                every_kernel_compiles::<$m>();
            }
        }
    )*};
}

nvrtc_tests! {
    nvrtc_nib8: Nib8,
    nvrtc_packed16: Packed16,
    nvrtc_tri8: Tri8,
    nvrtc_rot_xor: RotXor,
    nvrtc_aff16n: Aff16n,
    nvrtc_auto7: Auto7,
    nvrtc_aff_count: AffCount,
    nvrtc_grid16: Grid16,
    nvrtc_signed_aff: SignedAff,
    nvrtc_argmax_f64: ArgMaxF64,
    nvrtc_min_f32: MinF32,
    nvrtc_ut_aff20: UtAff20,
    nvrtc_hash24: Hash24,
    nvrtc_aff2: Aff2,
    nvrtc_big40: Big40,
    nvrtc_aligned16: Aligned16,
    nvrtc_aligned64: Aligned64,
}

/// Plain sizes: 0, 1, tiny, 2^k +- 1 around warps, blocks and tiles, and one large odd N.
const PLAIN_SIZES: [usize; 20] = [
    0, 1, 2, 3, 5, 15, 16, 17, 31, 33, 255, 256, 257, 4095, 4096, 4097, 65_535, 65_537, 1_048_577,
    3_000_001,
];

macro_rules! plain_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if let Some(gpu) = gpu() {
                check_plain::<$m>(&gpu, &PLAIN_SIZES, 77);
            }
        }
    )*};
}

plain_tests! {
    plain_nib8_1_byte: Nib8,
    plain_packed16_2_bytes: Packed16,
    plain_tri8_3_bytes: Tri8,
    plain_rot_xor_4_bytes_padded: RotXor,
    plain_aff16n_6_bytes_tuple: Aff16n,
    plain_auto7_7_bytes: Auto7,
    plain_aff_count_12_bytes: AffCount,
    plain_grid16_12_bytes_align_2: Grid16,
    plain_signed_aff_i64_i16_bool: SignedAff,
    plain_argmax_f64: ArgMaxF64,
    plain_min_f32_commutative: MinF32,
    plain_ut_aff20_20_bytes: UtAff20,
    plain_hash24_24_bytes_padded: Hash24,
    plain_aff2_device_fn_24_bytes: Aff2,
    plain_big40_40_bytes: Big40,
    plain_aligned16_over_aligned: Aligned16,
    plain_aligned64_over_aligned: Aligned64,
}

/// A few large N for the smallest items (most items per tile) and an odd size.
#[test]
fn plain_large_inputs() {
    let Some(gpu) = gpu() else { return };
    check_plain::<Nib8>(&gpu, &[(1 << 24) + 1], 5);
    check_plain::<Tri8>(&gpu, &[(1 << 24) - 1], 6);
    check_plain::<Aff16n>(&gpu, &[(3 << 20) + 5], 7);
}
