//! Bad input to the CPU side of reduce-core is a typed error, never a panic: sizes at the edges
//! of the index types. Runs everywhere.

use reduce_core::layout::check_owner;
use reduce_core::{fold_axes, fold_by_owner, portable, Cpu, CpuError, LayoutError, Sum};

/// A segment count whose `num_segments + 1` CSR offsets no allocation holds is `TooLarge`, for
/// u64 owners too (u32 owners stop at `u32::MAX` already), in every form of the reduction by
/// owner.
#[test]
fn a_segment_count_past_any_allocation_is_too_large() {
    let items = [Sum(1u32), Sum(2), Sum(3)];
    let owner = [0u64, 0, 1];
    let cpu = Cpu::new();
    for num_segments in [usize::MAX, usize::MAX - 1, 1 << 62] {
        let too_large = |e: &LayoutError| {
            matches!(e, LayoutError::TooLarge { what: "segment count", value, .. }
                if *value == num_segments)
        };
        let e = check_owner(&owner, items.len(), num_segments).unwrap_err();
        assert!(too_large(&e), "{e:?}");
        assert!(!e.to_string().is_empty());
        for result in [
            fold_by_owner(&items, &owner, num_segments),
            portable::fold_by_owner(&items, &owner, num_segments),
            cpu.reduce_by_owner(&items, &owner, num_segments),
            cpu.reduce_by_owner_portable(&items, &owner, num_segments),
            fold_by_owner::<Sum<u32>, u64>(&[], &[], num_segments),
        ] {
            assert!(too_large(result.as_ref().unwrap_err()), "{result:?}");
        }
        for result in [
            cpu.try_reduce_by_owner(&items, &owner, num_segments),
            cpu.try_reduce_by_owner_portable(&items, &owner, num_segments),
        ] {
            match result {
                Err(CpuError::Layout(e)) => assert!(too_large(&e), "{e:?}"),
                other => panic!("{other:?}"),
            }
        }
    }
    // Up to the limit a count is taken.
    assert_eq!(
        fold_by_owner(&items, &owner, 3).unwrap(),
        [Sum(3), Sum(3), Sum(0)]
    );
}

/// An empty array with a reduced extent of 0 has one identity per position of its kept axes:
/// more results than one allocation of them holds is `TooLarge`, in every form of the reduction
/// along axes; a count whose product overflows `usize` stays `ShapeOverflow`.
#[test]
fn more_results_than_any_allocation_holds_are_too_large() {
    let cpu = Cpu::new();
    let limit = isize::MAX as usize / std::mem::size_of::<Sum<u64>>();
    for (shape, results) in [
        (vec![1usize << 62, 0], 1usize << 62),
        (vec![limit + 1, 0], limit + 1),
        (vec![usize::MAX, 0, 1], usize::MAX),
    ] {
        let too_large = |e: &LayoutError| {
            matches!(e, LayoutError::TooLarge { what: "result count", value, .. }
                if *value == results)
        };
        let xs: [Sum<u64>; 0] = [];
        for result in [
            fold_axes(&xs, &shape, &[1]),
            portable::fold_axes(&xs, &shape, &[1]),
            cpu.reduce_axes(&xs, &shape, &[1]),
            cpu.reduce_axes_portable(&xs, &shape, &[1]),
        ] {
            let e = result.unwrap_err();
            assert!(too_large(&e), "{shape:?}: {e:?}");
            assert!(!e.to_string().is_empty());
        }
        for result in [
            cpu.try_reduce_axes(&xs, &shape, &[1]),
            cpu.try_reduce_axes_portable(&xs, &shape, &[1]),
        ] {
            match result {
                Err(CpuError::Layout(e)) => assert!(too_large(&e), "{e:?}"),
                other => panic!("{other:?}"),
            }
        }
    }
    let xs: [Sum<u64>; 0] = [];
    assert_eq!(
        fold_axes(&xs, &[usize::MAX, 2, 0], &[2]),
        Err(LayoutError::ShapeOverflow)
    );
    // A count that fits is taken.
    assert_eq!(fold_axes(&xs, &[3, 0], &[1]).unwrap(), [Sum(0); 3]);
}

/// Input wrong in two ways — a layout that does not match the items and a configuration the
/// plan refuses — is the layout's error on `Backend`'s CPU, as on the GPU, whose calls check
/// the layout on the host before planning: the same variant whichever backend runs.
#[test]
fn the_layout_is_checked_before_the_configuration() {
    use reduce_cuda::{
        AxisConfig, Backend, Error, Scan, ScanAlgorithm, ScanConfig, SegAlgorithm, SegConfig,
    };
    let cpu = Backend::cpu();
    let items = [Sum(1u32); 3];
    let layout = |e: Error| match e {
        Error::Layout(e) => e,
        other => panic!("expected a layout error, got {other:?}"),
    };
    // Tb2Seg refuses 96 threads (not a power of two).
    let bad_seg = SegConfig::new(SegAlgorithm::Tb2Seg).block(96);
    let e = cpu
        .reduce_by_owner(&items, &[0u32, 0], 1, bad_seg)
        .unwrap_err();
    assert!(matches!(layout(e), LayoutError::OwnerLengthMismatch { .. }));
    let e = cpu
        .reduce_segments(&items, &[] as &[u32], bad_seg)
        .unwrap_err();
    assert!(matches!(layout(e), LayoutError::OffsetsEmpty));
    let bad_scan = ScanConfig::new(ScanAlgorithm::LookBack).grid(4);
    let e = cpu
        .scan_by_key(&items, &[1u32, 1], Scan::Inclusive, bad_scan)
        .unwrap_err();
    assert!(matches!(layout(e), LayoutError::KeysLengthMismatch { .. }));
    let e = cpu
        .scan_segments(&items, &[] as &[u64], Scan::Exclusive, bad_scan)
        .unwrap_err();
    assert!(matches!(layout(e), LayoutError::OffsetsEmpty));
    let bad_axes = AxisConfig::default().portable().min_strip(4);
    let e = cpu
        .reduce_axes(&[Sum(1u32); 6], &[2, 2], &[0], bad_axes)
        .unwrap_err();
    assert!(matches!(layout(e), LayoutError::ShapeMismatch { .. }));
    // And each configuration alone is refused.
    let refused = |e: Error| assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
    refused(
        cpu.reduce_by_owner(&items, &[0u32; 3], 1, bad_seg)
            .unwrap_err(),
    );
    refused(
        cpu.reduce_segments(&items, &[0u32, 3], bad_seg)
            .unwrap_err(),
    );
    refused(
        cpu.scan_by_key(&items, &[1u32; 3], Scan::Inclusive, bad_scan)
            .unwrap_err(),
    );
    refused(
        cpu.reduce_axes(&[Sum(1u32); 4], &[2, 2], &[0], bad_axes)
            .unwrap_err(),
    );
}

/// More results than the host can hold are `HostOutOfMemory` on `Backend`'s CPU (the GPU's
/// call fails its allocation too), not an abort of the process: owners of 2^59 segments, and
/// an array whose kept axis has 2^59 positions (and no items: the reduced axis is empty).
#[test]
fn results_past_the_host_are_an_error_not_an_abort() {
    use reduce_cuda::{AxisAlgorithm, Backend, Error, SegAlgorithm};
    let cpu = Backend::cpu();
    let host = |e: Error| assert!(matches!(e, Error::HostOutOfMemory { .. }), "{e:?}");
    let none: [Sum<u64>; 0] = [];
    host(
        cpu.reduce_by_owner(&none, &[] as &[u64], 1 << 59, SegAlgorithm::Auto)
            .unwrap_err(),
    );
    host(
        cpu.reduce_axes(&none, &[0, 1 << 59], &[0], AxisAlgorithm::Auto)
            .unwrap_err(),
    );
}

/// The same on reduce-core's own calls: a segment count or a kept extent that passes the
/// allocation-size limits but no host memory holds is `HostMemory`, not an abort of the process
/// in the allocator — by owner (2^59 segments, u64 owners) and along axes (an empty array whose
/// kept axis has 2^59 positions), every form.
#[test]
fn core_results_past_the_host_are_too_large_not_an_abort() {
    let cpu = Cpu::new();
    let none: [Sum<u64>; 0] = [];
    let host =
        |e: &LayoutError| matches!(e, LayoutError::HostMemory { value, .. } if *value == 1 << 59);
    let segments = 1usize << 59;
    for result in [
        fold_by_owner(&none, &[] as &[u64], segments),
        portable::fold_by_owner(&none, &[] as &[u64], segments),
        cpu.reduce_by_owner(&none, &[] as &[u64], segments),
        cpu.reduce_by_owner_portable(&none, &[] as &[u64], segments),
        fold_axes(&none, &[1 << 59, 0], &[1]),
        portable::fold_axes(&none, &[1 << 59, 0], &[1]),
        cpu.reduce_axes(&none, &[1 << 59, 0], &[1]),
        cpu.reduce_axes_portable(&none, &[1 << 59, 0], &[1]),
    ] {
        assert!(host(result.as_ref().unwrap_err()), "{result:?}");
    }
    match cpu.try_reduce_by_owner(&none, &[] as &[u64], segments) {
        Err(CpuError::Layout(e)) => assert!(host(&e), "{e:?}"),
        other => panic!("{other:?}"),
    }
    // CSR offsets: 2^20 empty segments of a 256 MiB monoid ask the host for 256 TiB of
    // results, past any process's address space.
    #[derive(Clone, Copy)]
    struct Huge([u8; 1 << 28]);
    impl reduce_core::Monoid for Huge {
        fn identity() -> Self {
            Huge([0; 1 << 28])
        }
        fn combine(left: Self, right: Self) -> Self {
            if left.0[0] == 0 {
                right
            } else {
                left
            }
        }
    }
    let empty = vec![0u32; (1 << 20) + 1];
    let huge =
        |e: &LayoutError| matches!(e, LayoutError::HostMemory { value, .. } if *value == 1 << 20);
    for result in [
        reduce_core::fold_segments::<Huge, u32>(&[], &empty),
        portable::fold_segments::<Huge, u32>(&[], &empty),
        cpu.reduce_segments::<Huge, u32>(&[], &empty),
        cpu.reduce_segments_portable::<Huge, u32>(&[], &empty),
    ] {
        assert!(huge(result.as_ref().err().unwrap()));
    }
    match cpu.try_reduce_segments::<Huge, u32>(&[], &empty) {
        Err(CpuError::Layout(e)) => assert!(huge(&e), "{e:?}"),
        _ => panic!("no error"),
    }
    // Past the host's memory and swap, within the address space: refused too (where the system
    // overcommits memory the allocation would be granted, and the process killed writing it).
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = |key: &str| {
        meminfo.lines().find_map(|line| {
            let rest = line.strip_prefix(key)?.trim().strip_suffix("kB")?;
            rest.trim().parse::<u64>().ok()
        })
    };
    if let Some(mem) = kib("MemTotal:") {
        let total = (mem + kib("SwapTotal:").unwrap_or(0)) * 1024;
        let segments = (total / std::mem::size_of::<Huge>() as u64) as usize + 1;
        let empty = vec![0u32; segments + 1];
        for result in [
            reduce_core::fold_segments::<Huge, u32>(&[], &empty),
            cpu.reduce_segments::<Huge, u32>(&[], &empty),
        ] {
            let e = result.err().unwrap();
            let past = matches!(e, LayoutError::HostMemory { value, .. } if value == segments);
            assert!(past, "{e:?}");
        }
    }
    // an error built by hand with index 0 still prints
    let e = LayoutError::OffsetsDecreasing {
        index: 0,
        value: 1,
        previous: 2,
    };
    assert!(!e.to_string().is_empty());
    let e = reduce_core::shard::ShardError::OffsetsDecreasing {
        index: 0,
        value: 1,
        previous: 2,
    };
    assert!(!e.to_string().is_empty());
}
