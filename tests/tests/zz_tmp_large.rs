use reduce_tests::monoids::wide::Record;
#[test]
fn tmp_large() {
    use reduce_cuda::testing::*;
    use reduce_cuda::*;
    let arch = reduce_tests::CI_ARCH;
    macro_rules! t {
        ($k:expr) => {
            type R = Record<$k>;
            let s = |r: Result<()>| match r {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("ERR({})", &e.to_string()[..80.min(e.to_string().len())]),
            };
            println!("bytes {}", std::mem::size_of::<R>());
            println!(
                "  plain {}",
                s(compile_kernel::<R>(Config::default(), arch))
            );
            println!(
                "  plain portable {}",
                s(compile_kernel::<R>(Config::default().portable(), arch))
            );
            println!(
                "  seg offsets {}",
                s(compile_seg_kernel::<R>(SegConfig::default(), true, arch))
            );
            println!(
                "  seg owner {}",
                s(compile_seg_kernel::<R>(SegConfig::default(), false, arch))
            );
            println!(
                "  seg portable offsets {}",
                s(compile_seg_kernel::<R>(
                    SegConfig::default().portable(),
                    true,
                    arch
                ))
            );
            println!(
                "  axes {}",
                s(compile_axes_kernel::<R>(AxisConfig::default(), arch))
            );
            println!(
                "  axes portable {}",
                s(compile_axes_kernel::<R>(
                    AxisConfig::default().portable(),
                    arch
                ))
            );
            println!(
                "  scan {}",
                s(compile_scan_kernels::<R>(ScanConfig::default(), arch))
            );
        };
    }
    {
        t!(255);
    }
    {
        t!(511);
    }
}
