//! The fuzzer's fixed-seed batch in CI: every generated program translates (it compiled, with
//! the derive, into this crate) and compiles with NVRTC; Rust and the host C++ compiler agree
//! bit for bit on every input; with a GPU, Rust and the GPU agree too. `REDUCE_REQUIRE_NVRTC=1`
//! and `REDUCE_REQUIRE_GPU=1` make a missing NVRTC or GPU a failure.

use fuzz_derive::{device, gen, host, programs, run};

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn batches() -> Vec<Vec<&'static fuzz_derive::Program>> {
    programs::ALL
        .chunks(80)
        .map(|c| c.iter().collect())
        .collect()
}

#[test]
fn the_generator_is_deterministic() {
    let p = gen::program(programs::SEED, 7);
    let q = gen::program(programs::SEED, 7);
    assert_eq!(p.source, q.source);
    assert_eq!(p.leaves, q.leaves);
    assert!(p.source.contains("#[derive(Clone, Copy, Debug, Monoid)]"));
    assert_eq!(programs::ALL[7].size, p.size);
    assert_eq!(programs::ALL[7].source(), p.source);
}

#[test]
fn every_program_compiles_with_nvrtc() {
    if !reduce_cuda::testing::nvrtc_available() {
        assert!(
            !flag("REDUCE_REQUIRE_NVRTC"),
            "REDUCE_REQUIRE_NVRTC=1 but libnvrtc is missing"
        );
        eprintln!("NVRTC test skipped (set REDUCE_REQUIRE_NVRTC=1 to make this a failure)");
        return;
    }
    let batches = batches();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    if let Err(e) = device::compile_all(&batches, "sm_90", threads) {
        panic!("a generated program does not compile with NVRTC:\n{e}");
    }
}

#[test]
fn rust_and_host_cpp_agree() {
    let Some(cxx) = host::compiler() else {
        eprintln!("host C++ comparison skipped: no C++ compiler ($CXX or c++)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("fuzz-derive-ci-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let libs: Vec<host::Library> = batches()
        .iter()
        .map(|b| host::compile(&cxx, b, &dir, b[0].name).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let mut libs = libs.into_iter();
    let summary = run(programs::ALL, 300, 80, |progs, data| {
        libs.next().unwrap().run(progs, data)
    })
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("fuzz (host {cxx}): {}", summary.line());
    assert!(
        summary.compared > programs::ALL.len() * 200,
        "{}",
        summary.line()
    );
    assert_eq!(summary.mismatches, 0, "{}", summary.reports.join("\n\n"));
}

#[test]
fn rust_and_the_gpu_agree() {
    let dev = match device::Device::new() {
        Ok(d) => d,
        Err(e) => {
            assert!(!flag("REDUCE_REQUIRE_GPU"), "REDUCE_REQUIRE_GPU=1 but: {e}");
            eprintln!("GPU test skipped (set REDUCE_REQUIRE_GPU=1 to make this a failure): {e}");
            return;
        }
    };
    let batches = batches();
    let cubins = device::compile_all(&batches, &dev.arch, 4).unwrap();
    let mut cubins = cubins.into_iter();
    let summary = run(programs::ALL, 1000, 80, |progs, data| {
        dev.run(cubins.next().unwrap(), progs, data)
    })
    .unwrap();
    eprintln!("fuzz (gpu {}): {}", dev.name, summary.line());
    assert_eq!(summary.mismatches, 0, "{}", summary.reports.join("\n\n"));
}
