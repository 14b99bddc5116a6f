//! Runs the generated programs through a backend and compares with Rust:
//!
//! ```text
//! fuzz [--backend gpu|host] [--inputs N] [--batch N] [--threads N] [--out FILE]
//! ```
//!
//! `gpu` (default): NVRTC + GPU 0, batches compiled on `--threads` threads. `host`: the host
//! C++ compiler. Prints a summary line and the first mismatches; with `--out`, writes them to a
//! file too. Exits with 1 on a mismatch, 2 when the backend fails.

use fuzz_derive::{device, host, programs, run, Summary};
use std::time::Instant;

fn main() {
    let mut backend = "gpu".to_owned();
    let mut inputs = 1000usize;
    let mut batch = 100usize;
    let mut threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--backend" => backend = value(),
            "--inputs" => inputs = value().parse().expect("--inputs N"),
            "--batch" => batch = value().parse().expect("--batch N"),
            "--threads" => threads = value().parse().expect("--threads N"),
            "--out" => out = Some(value()),
            other => panic!("unknown argument {other}"),
        }
    }
    let all = programs::ALL;
    let start = Instant::now();
    let (summary, what) = match backend.as_str() {
        "gpu" => gpu(all, inputs, batch, threads),
        "host" => host_run(all, inputs, batch, threads),
        other => {
            eprintln!("unknown backend {other}");
            std::process::exit(2)
        }
    };
    let summary = summary.unwrap_or_else(|e| {
        eprintln!("fuzz: the {backend} backend failed: {e}");
        std::process::exit(2)
    });
    let line = format!(
        "fuzz: backend={what} seed={:#x} {} time={:.1}s",
        programs::SEED,
        summary.line(),
        start.elapsed().as_secs_f64()
    );
    let mut report = line.clone();
    for r in &summary.reports {
        report.push_str("\n\n");
        report.push_str(r);
    }
    if let Some(path) = out {
        std::fs::write(&path, report.clone() + "\n").expect("writing the report");
    }
    println!("{report}");
    if summary.mismatches > 0 {
        std::process::exit(1);
    }
}

fn gpu(
    all: &[fuzz_derive::Program],
    inputs: usize,
    batch: usize,
    threads: usize,
) -> (Result<Summary, String>, String) {
    let dev = match device::Device::new() {
        Ok(d) => d,
        Err(e) => return (Err(e), "gpu".into()),
    };
    let what = format!("gpu ({}, {})", dev.name, dev.arch);
    let batches: Vec<Vec<&fuzz_derive::Program>> =
        all.chunks(batch).map(|c| c.iter().collect()).collect();
    let t = Instant::now();
    let cubins = match device::compile_all(&batches, &dev.arch, threads) {
        Ok(c) => c,
        Err(e) => return (Err(e), what),
    };
    eprintln!(
        "fuzz: {} programs compiled by NVRTC in {} batches, {:.1}s",
        all.len(),
        batches.len(),
        t.elapsed().as_secs_f64()
    );
    let mut cubins = cubins.into_iter();
    let summary = run(all, inputs, batch, |progs, data| {
        dev.run(cubins.next().expect("one cubin per batch"), progs, data)
    });
    (summary, what)
}

fn host_run(
    all: &[fuzz_derive::Program],
    inputs: usize,
    batch: usize,
    threads: usize,
) -> (Result<Summary, String>, String) {
    let Some(cxx) = host::compiler() else {
        return (Err("no C++ compiler ($CXX or c++)".into()), "host".into());
    };
    let dir = std::env::temp_dir().join(format!("fuzz-derive-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let batches: Vec<Vec<&fuzz_derive::Program>> =
        all.chunks(batch).map(|c| c.iter().collect()).collect();
    let t = Instant::now();
    let mut libs = Vec::new();
    for group in batches.chunks(threads.max(1)) {
        let built: Vec<Result<host::Library, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|b| {
                    let (cxx, dir) = (&cxx, &dir);
                    let tag = b[0].name;
                    s.spawn(move || host::compile(cxx, b, dir, tag))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("compile thread"))
                .collect()
        });
        for lib in built {
            match lib {
                Ok(l) => libs.push(l),
                Err(e) => return (Err(e), format!("host ({cxx})")),
            }
        }
    }
    eprintln!(
        "fuzz: {} programs compiled by {cxx} in {} batches, {:.1}s",
        all.len(),
        batches.len(),
        t.elapsed().as_secs_f64()
    );
    let mut libs = libs.into_iter();
    let summary = run(all, inputs, batch, |progs, data| {
        libs.next().expect("one library per batch").run(progs, data)
    });
    let _ = std::fs::remove_dir_all(&dir);
    (summary, format!("host ({cxx})"))
}
