use super::*;

const F32: Items = Items {
    m_size: 4,
    in_size: 4,
    m_align: 4,
    lifted: false,
    commutative: false,
};

/// The monoid's own values of `bytes` bytes, ordered.
fn values(bytes: usize) -> Items {
    Items {
        m_size: bytes,
        in_size: bytes,
        ..F32
    }
}

#[test]
fn defaults_and_checks() {
    let plan = scan_plan(ScanConfig::default(), F32, Segments::None, false).unwrap();
    assert_eq!((plan.block, plan.items, plan.tile()), (256, 32, 8192));
    let bad = ScanConfig::default().items_per_thread(33);
    assert!(scan_plan(bad, F32, Segments::Keys, false).is_err());
    let bad = ScanConfig::default().block(48);
    assert!(scan_plan(bad, F32, Segments::None, false).is_err());
    // a 1-byte monoid: at most 32 items (the segment starts of a thread are one word)
    let byte = values(1);
    let plan = scan_plan(ScanConfig::default(), byte, Segments::None, false).unwrap();
    assert_eq!(plan.items, 32);
    // the grid: LookAhead's (and Auto's, in either mode), never 0, not for a block per tile
    for config in [
        ScanConfig::new(ScanAlgorithm::LookAhead),
        ScanConfig::default(),
        ScanConfig::default().portable(),
    ] {
        let plan = scan_plan(config.grid(7), F32, Segments::Keys, false).unwrap();
        assert_eq!(plan.grid, Some(7));
        assert!(scan_plan(config.grid(0), F32, Segments::None, false).is_err());
    }
    let lifted = Items { in_size: 2, ..F32 };
    let plan = scan_plan(ScanConfig::default().grid(7), lifted, Segments::None, false);
    assert_eq!(plan.unwrap().ahead, 0); // Auto runs LookBack there: the grid is not used
    for algorithm in [ScanAlgorithm::LookBack, ScanAlgorithm::ReduceThenScan] {
        let config = ScanConfig::new(algorithm).grid(7);
        assert!(scan_plan(config, F32, Segments::None, false).is_err());
    }
}

/// LookBack's default tiles' items are staged: 32 KiB of f32 statically; 48 KiB of 12-byte items
/// (256 threads of 16) in dynamic shared memory, lifted from 4-byte items: 16 KiB static. A
/// tile past `SCAN_STAGE_MAX` is not staged.
#[test]
fn stages() {
    let look_back = || ScanConfig::new(ScanAlgorithm::LookBack);
    let stage = |items: Items, config: ScanConfig| {
        let plan = scan_plan(config, items, Segments::None, false).unwrap();
        (plan.stage.0, plan.dynamic_smem(), plan.capped(0).defines)
    };
    let twelve = values(12);
    let lifted = Items {
        in_size: 4,
        ..twelve
    };
    let (bytes, dynamic, defines) = stage(F32, look_back());
    assert_eq!((bytes, dynamic), (32 * 1024, 0));
    assert!(defines.contains(&("R_STAGE_BYTES", 32 * 1024)));
    assert!(defines.contains(&("R_STAGE_DYNAMIC", 0)));
    let (bytes, dynamic, defines) = stage(twelve, look_back());
    assert_eq!((bytes, dynamic), (48 * 1024, 48 * 1024));
    assert!(defines.contains(&("R_STAGE_DYNAMIC", 1)));
    assert_eq!(stage(twelve, look_back().portable()).1, 48 * 1024);
    assert_eq!(stage(lifted, look_back()).0, 16 * 1024);
    let wide = look_back().block(512);
    assert_eq!(stage(F32, wide).0, 0);
    assert_eq!(stage(F32, wide).1, 0);
    // runs of 3 x 12 bytes are not whole vectors; 12-byte items lifted into 512-byte values
    // leave no room beside the look-back's 32 values
    assert_eq!(stage(twelve, look_back().items_per_thread(3)).0, 0);
    let large = Items {
        m_size: 512,
        ..twelve
    };
    let sixteen = look_back().items_per_thread(16);
    assert_eq!(stage(twelve, sixteen).0, 48 * 1024);
    assert_eq!(stage(large, sixteen).0, 0);
    // 16 KiB of 32-byte items beside 512-byte values: past 48 KiB with the kernel's own, so
    // dynamic
    let beside = Items {
        in_size: 32,
        m_size: 512,
        ..F32
    };
    let two = look_back().items_per_thread(2);
    assert_eq!(stage(beside, two).0, 16 * 1024);
    assert_eq!(stage(beside, two).1, 16 * 1024);
}

/// The uncapped spec leaves `R_MIN_BLOCKS` at 0; the keys form is never capped where a
/// thread's keys pass 64 bytes (f32 values: 32 u32 keys; 8-byte values with u64 keys), nor
/// is ReduceThenScan.
#[test]
fn register_caps() {
    let plan = scan_plan(
        ScanConfig::new(ScanAlgorithm::LookBack),
        F32,
        Segments::Offsets,
        false,
    )
    .unwrap();
    let min_blocks = |spec: KernelSpec| {
        spec.defines
            .iter()
            .find(|(name, _)| *name == "R_MIN_BLOCKS")
            .map(|d| d.1)
    };
    assert_eq!(min_blocks(plan.kernels()), Some(0));
    assert_eq!(min_blocks(plan.capped(6)), Some(6));
    let eight = values(8);
    let may_cap = |items: Items, segments: Segments, wide: bool| {
        scan_plan(
            ScanConfig::new(ScanAlgorithm::LookBack),
            items,
            segments,
            wide,
        )
        .unwrap()
        .may_cap()
    };
    assert!(!may_cap(F32, Segments::Keys, false));
    assert!(may_cap(eight, Segments::Keys, false));
    assert!(!may_cap(eight, Segments::Keys, true));
    assert!(may_cap(F32, Segments::Offsets, true));
    assert!(may_cap(F32, Segments::None, false));
    let passes = ScanConfig::new(ScanAlgorithm::ReduceThenScan);
    let plan = scan_plan(passes, F32, Segments::None, false).unwrap();
    assert!(!plan.may_cap());
}

/// `Auto`'s scans are LookAhead's: six stages of the default tile, and a value per thread
/// (segmented, and a bit of heads per item) for each of the lead's tiles and one more, no
/// register cap; where fewer than the lead and two more fit, for lifted items (`Auto`),
/// where the block and its warps pass 1024 threads and for values of more than 48 bytes,
/// no stages (LookBack's kernel).
#[test]
fn look_ahead_stages() {
    let ahead = |items: Items, config: ScanConfig, segments: Segments, wide: bool| {
        let plan = scan_plan(config, items, segments, wide).unwrap();
        (plan.ahead, plan.dynamic_smem(), plan.may_cap())
    };
    let plain = |items: Items, config: ScanConfig| ahead(items, config, Segments::None, false);
    let auto = ScanConfig::default();
    assert_eq!(plain(F32, auto), (6, 6 * 32 * 1024 + 4 * 256 * 4, false));
    let held = 4 * (256 * 4 + 1024); // values and heads of the lead's tiles and one more
    for wide in [false, true] {
        // 200 KiB: the most that fits
        let by_offsets = (6, 6 * 32 * 1024 + held, false);
        assert_eq!(ahead(F32, auto, Segments::Offsets, wide), by_offsets);
        // by key, tiles of 28 f32 a thread (seven vectors): five stages and 28 KiB of u32
        // keys fit; 56 KiB of u64 keys leave four, too few: five all the same
        let held = 4 * (256 * 4 + 256 * 28 / 8);
        let by_key = (5, 5 * 28 * 1024 + held, false);
        assert_eq!(ahead(F32, auto, Segments::Keys, wide), by_key);
    }
    let eight = values(8);
    // 8-byte values: six stages plain, five segmented (a tile's heads and values past 200 KiB)
    assert_eq!(plain(eight, auto).0, 6);
    assert_eq!(ahead(eight, auto, Segments::Offsets, false).0, 5);
    // Auto by offsets runs LookBack's kernel for fewer offsets than tiles where the values
    // are larger than 8 bytes; LookAhead asked for by name never does
    let sparse = |config: ScanConfig, items: Items, segments: Segments| {
        scan_plan(config, items, segments, false)
            .unwrap()
            .sparse_look_back
    };
    let sixteen = values(16);
    let twelve = values(12);
    assert!(sparse(auto, sixteen, Segments::Offsets));
    assert!(sparse(auto, twelve, Segments::Offsets));
    assert!(!sparse(auto, F32, Segments::Offsets));
    assert!(!sparse(auto, eight, Segments::Offsets));
    assert!(!sparse(auto, sixteen, Segments::Keys));
    assert!(!sparse(
        ScanConfig::new(ScanAlgorithm::LookAhead),
        sixteen,
        Segments::Offsets
    ));
    // fewer segments than whole tiles; under one tile, never
    assert!(scan_offsets_look_back(1, 2 * 8192, 8192));
    assert!(!scan_offsets_look_back(2, 2 * 8192, 8192));
    assert!(!scan_offsets_look_back(0, 8191, 8192));
    let explicit = ScanConfig::new(ScanAlgorithm::LookAhead);
    let two = explicit.items_per_thread(2);
    assert_eq!(plain(F32, two.block(1024)).0, 0);
    assert_eq!(plain(F32, two.block(960)).0, 6);
    // 960 threads of 32 f32: 120 KiB a tile, one stage fits
    assert_eq!(plain(F32, explicit.block(960)).0, 0);
    let large = values(72);
    assert_eq!(plain(large, auto).0, 0);
    // 48 KiB tiles of 16 12-byte items a thread: three stages fit, too few; runs of 12
    // (nine vectors) take five
    let twelve = values(12);
    assert_eq!(plain(twelve, explicit.items_per_thread(16)).0, 0);
    let plan = scan_plan(auto, twelve, Segments::None, false).unwrap();
    assert_eq!((plan.items, plan.ahead), (12, 5));
    // 32 KiB tiles of 16-byte values: five fit
    let sixteen = values(16);
    assert_eq!(plain(sixteen, auto).0, 5);
    // lifted items: Auto runs LookBack
    let lifted = Items { in_size: 8, ..F32 };
    assert_eq!(plain(lifted, auto).0, 0);
    assert_eq!(plain(lifted, explicit).0, 6);
    let spec = scan_plan(auto, F32, Segments::None, false)
        .unwrap()
        .kernels();
    for define in [("R_PIPE", 6), ("R_LEAD", SCAN_AHEAD_LEAD), ("R_VECS", 8)] {
        assert!(spec.defines.contains(&define), "{define:?}");
    }
}

/// LookAhead's look-back warps: one for 4-byte values plain and by key, two for 8- and 12-byte
/// values and by offsets, three for 16 bytes and more; the block's threads count them, and
/// past 1024 the plan runs LookBack.
#[test]
fn look_ahead_look_backs() {
    let plan = |m_size: usize, config: ScanConfig, segments: Segments| {
        let values = Items {
            m_size,
            in_size: m_size,
            ..F32
        };
        let plan = scan_plan(config, values, segments, false).unwrap();
        let spec = plan.kernels();
        let lookers = spec
            .defines
            .iter()
            .find(|(name, _)| *name == "R_AHEAD_LOOKERS")
            .map(|&(_, v)| v);
        (plan.ahead > 0, lookers)
    };
    let auto = ScanConfig::default();
    assert_eq!(plan(4, auto, Segments::None), (true, Some(1)));
    assert_eq!(plan(4, auto, Segments::Keys), (true, Some(1)));
    assert_eq!(plan(4, auto, Segments::Offsets), (true, Some(2)));
    for (m_size, lookers) in [(8, 2), (12, 2), (16, 3)] {
        for segments in [Segments::None, Segments::Keys, Segments::Offsets] {
            let want = (true, Some(lookers));
            assert_eq!(plan(m_size, auto, segments), want, "{m_size}");
        }
    }
    assert_eq!(ahead_threads(256, 4, Segments::None), 320);
    assert_eq!(ahead_threads(256, 8, Segments::None), 352);
    assert_eq!(ahead_threads(256, 4, Segments::Offsets), 352);
    assert_eq!(ahead_threads(256, 16, Segments::Keys), 384);
    // 960 threads of one 8-byte value: one stage of 7.5 KiB would fit, but 960 + 96 threads
    // do not; f32 with its one look-back warp does (1024)
    let one = ScanConfig::new(ScanAlgorithm::LookAhead).items_per_thread(1);
    assert!(!plan(8, one.block(960), Segments::None).0);
    assert!(plan(4, one.block(960), Segments::None).0);
    assert!(plan(8, one.block(928), Segments::None).0);
    // 16-byte values: three look-back warps, 896 + 128 threads
    assert!(plan(16, one.block(896), Segments::None).0);
    assert!(!plan(16, one.block(928), Segments::None).0);
}

/// LookAhead's runs of an odd number of vectors: by key, and where the default run leaves
/// too few stages; never for LookBack, the portable tile or items asked for.
#[test]
fn look_ahead_odd_vector_runs() {
    let odd: Vec<Option<u32>> = [4, 8, 12, 16, 24, 36, 1, 2, 3, 20, 32]
        .map(scan_ahead_items)
        .to_vec();
    assert_eq!(odd[..6], [28, 14, 12, 7, 6, 4].map(Some));
    assert_eq!(odd[6..], [None; 5]);
    let items = |config: ScanConfig, segments: Segments| {
        scan_plan(config, F32, segments, false).unwrap().items
    };
    let auto = ScanConfig::default();
    assert_eq!(items(auto, Segments::Keys), 28);
    assert_eq!(
        items(ScanConfig::new(ScanAlgorithm::LookAhead), Segments::Keys),
        28
    );
    assert_eq!(items(auto, Segments::None), 32);
    assert_eq!(items(auto, Segments::Offsets), 32);
    assert_eq!(
        items(ScanConfig::new(ScanAlgorithm::LookBack), Segments::Keys),
        32
    );
    assert_eq!(items(auto.items_per_thread(32), Segments::Keys), 32);
    assert_eq!(items(auto.portable(), Segments::Keys), 32);
    // where the odd run's stages do not fit either: the default (LookBack's kernel)
    assert_eq!(items(auto.block(960), Segments::Keys), 32);
    let spec = scan_plan(auto, F32, Segments::Keys, false)
        .unwrap()
        .kernels();
    assert!(spec.defines.contains(&("R_VECS", 7)));
    // 8- and 16-byte values by u32 key: 14 and 7 a thread, six stages of 28 KiB
    let plan = |m_size: usize, segments: Segments| {
        let values = Items {
            m_size,
            in_size: m_size,
            ..F32
        };
        let plan = scan_plan(auto, values, segments, false).unwrap();
        (plan.items, plan.ahead)
    };
    assert_eq!(plan(8, Segments::Keys), (14, 6));
    assert_eq!(plan(16, Segments::Keys), (7, 6));
    assert_eq!(plan(8, Segments::Offsets), (16, 5));
    // 1-byte values have no such run; lifted items keep the default (16 f32 lifted into
    // 8-byte values)
    assert_eq!(plan(1, Segments::Keys).0, 32);
    let lifted = Items {
        in_size: 4,
        m_size: 8,
        ..F32
    };
    let explicit = ScanConfig::new(ScanAlgorithm::LookAhead);
    assert_eq!(
        scan_plan(explicit, lifted, Segments::Keys, false)
            .unwrap()
            .items,
        16
    );
}

#[test]
fn entries_in_16_byte_parts() {
    let parts: Vec<u32> = [1, 4, 8, 12, 13, 16, 24, 36, 48, 49, 72]
        .map(word_parts)
        .to_vec();
    assert_eq!(parts, [1, 1, 1, 1, 2, 2, 2, 3, 4, 0, 0]);
}
