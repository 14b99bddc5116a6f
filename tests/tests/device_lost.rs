//! A fault inside a kernel loses the CUDA context: the error names the launch, every later call
//! fails at once with the same error, dropping what is left never panics, and `Gpu::new` then
//! either works again or (as CUDA 13's driver does: the fault stays with the process) returns
//! the same error, while `Backend::auto()` falls back to the CPU. Faults come through the
//! `cuda = "..."` escape hatch (translated code cannot fault: its indices are checked).
//!
//! A fault may end the process's use of the device: each fault runs in a child process of this
//! binary (`child_fault`, chosen by `REDUCE_FAULT`).

use reduce_cuda::{
    Algorithm, Backend, DeviceSlice, Error, Gpu, LaunchInfo, Monoid, SegAlgorithm, SegConfig,
};
use reduce_tests::gpu;
use std::time::{Duration, Instant};

/// Sums `x`; a combine of a value whose `kind` is not 0 (on either side) faults on the device,
/// in the way `kind` names (the Rust side only sums: the faults are the hand-written CUDA's).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Faulty { x: 0, kind: 0 },
    combine = |l, r| Faulty { x: l.x.wrapping_add(r.x), kind: l.kind | r.kind },
    cuda = "
        const unsigned int kind = l.kind | r.kind;
        if (kind == 1u) { *(volatile unsigned int*)0 = 1u; }
        unsigned int far = 0u;
        if (kind == 2u) { far = *(volatile unsigned int*)0x8000ull; }
        if (kind == 3u) { __trap(); }
        if (kind == 4u) { assert(l.kind == 12345u); }
        if (kind == 5u) {
            __shared__ unsigned long long words[2];
            far = *(volatile unsigned int*)((char*)words + 1);
        }
        return Faulty{l.x + r.x + far, kind};
    "
)]
pub struct Faulty {
    pub x: u32,
    pub kind: u32,
}

const KINDS: [(u32, &str); 5] = [
    (1, "a write through null"),
    (2, "a read out of bounds"),
    (3, "__trap()"),
    (4, "a failed assert"),
    (5, "a misaligned read"),
];

fn items(kind: u32) -> Vec<Faulty> {
    let mut items: Vec<Faulty> = (0..100_000).map(|i| Faulty { x: i, kind: 0 }).collect();
    items[54_321].kind = kind;
    items
}

/// How each call reaches the device (the segmented calls queue their kernels and return: the
/// fault shows at the download or synchronisation after them).
#[derive(Clone, Copy, Debug)]
enum Call {
    Plain,
    PlainQueued,
    Segmented,
    SegmentedTrusted,
    ByOwnerQueued,
    /// A raw address checked by `from_raw`, then freed before the reduction reads it.
    RawFreed,
}

const CALLS: [Call; 6] = [
    Call::Plain,
    Call::PlainQueued,
    Call::Segmented,
    Call::SegmentedTrusted,
    Call::ByOwnerQueued,
    Call::RawFreed,
];

/// Runs `call` over `items` on `gpu` (queued calls followed by a synchronisation): the
/// result's error, and the algorithm the call runs.
fn run(gpu: &Gpu, call: Call, items: &[Faulty]) -> (Result<(), Error>, &'static str) {
    let xs = match gpu.upload(items) {
        Ok(xs) => xs,
        Err(e) => return (Err(e), ""),
    };
    let offsets: Vec<u32> = (0..=100).map(|s| s * items.len() as u32 / 100).collect();
    let owner: Vec<u32> = (0..items.len() as u32).map(|i| i / 1000).collect();
    let result = (|| match call {
        Call::RawFreed => {
            use reduce_cuda::cudarc::driver::sys;
            let bytes = std::mem::size_of_val(items);
            let mut address = 0;
            gpu.context().bind_to_thread().unwrap();
            // SAFETY: a fresh allocation of `bytes`, filled from `items`, then freed (the case
            // under test: the reduction reads freed memory).
            unsafe {
                sys::cuMemAlloc_v2(&mut address, bytes).result().unwrap();
                sys::cuMemcpyHtoD_v2(address, items.as_ptr().cast(), bytes)
                    .result()
                    .unwrap();
                let slice = DeviceSlice::<Faulty>::from_raw(address, items.len(), gpu)?;
                sys::cuMemFree_v2(address).result().unwrap();
                gpu.reduce(&slice, Algorithm::Shuffle).map(drop)
            }
        }
        Call::Plain => gpu.reduce(&xs, Algorithm::Shuffle).map(drop),
        Call::PlainQueued => {
            let mut out = gpu.zeroed::<Faulty>(1)?;
            gpu.reduce_into(&xs, &mut out, Algorithm::Shuffle)?;
            gpu.synchronize()
        }
        Call::Segmented => {
            let out = gpu.reduce_segments(&xs, &gpu.upload(&offsets)?, SegAlgorithm::SegShuffle)?;
            gpu.download(&out).map(drop)
        }
        Call::SegmentedTrusted => {
            let config = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
            let _out = gpu.reduce_segments(&xs, &gpu.upload(&offsets)?, config)?;
            gpu.synchronize()
        }
        Call::ByOwnerQueued => {
            let mut out = gpu.zeroed::<Faulty>(items.len() / 1000)?;
            let owner = gpu.upload(&owner)?;
            let config = SegConfig::new(SegAlgorithm::SegShuffle);
            gpu.reduce_by_owner_into(&xs, &owner, items.len() / 1000, &mut out, config)?;
            gpu.synchronize()
        }
    })();
    let algorithm = match call {
        Call::Plain | Call::PlainQueued | Call::RawFreed => "Shuffle",
        _ => "SegShuffle",
    };
    (result, algorithm)
}

fn fold(items: &[Faulty]) -> Faulty {
    items
        .iter()
        .fold(Faulty::identity(), |a, &b| Faulty::combine(a, b))
}

fn is_lost(e: &Error) -> Option<Option<LaunchInfo>> {
    match e {
        Error::DeviceLost { launch, .. } => Some(*launch),
        _ => None,
    }
}

fn rss_and_threads() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:") * 1024, field("Threads:"))
}

/// The faulting monoid's hand-written CUDA compiles (`assert` and `__trap` included): runs
/// wherever NVRTC is, CI too.
#[test]
fn the_faulting_monoid_compiles() {
    if !reduce_tests::require_nvrtc() {
        return;
    }
    let config = reduce_cuda::Config::new(Algorithm::Shuffle);
    reduce_cuda::testing::compile_kernel::<Faulty>(config, reduce_tests::CI_ARCH).unwrap();
}

/// Every fault kind through every call form, each in a child process (`child_fault`).
/// Runs the ignored test `name` of this binary in a child process with `var` set to `value`:
/// whether it succeeded and wrote `done` to its stderr, and that stderr.
fn child(name: &str, var: &str, value: &str, done: &str) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--nocapture"])
        .env(var, value)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success() && log.contains(done), log)
}

/// Prints the lines of a child's stderr that start with `tag` (what it reports of itself).
fn echo_tagged(log: &str, tag: &str) {
    for line in log.lines().filter(|l| l.starts_with(tag)) {
        eprintln!("{line}");
    }
}

#[test]
fn every_fault_is_named_in_a_child_process() {
    let Some(gpu) = gpu() else { return };
    drop(gpu);
    let cases = KINDS
        .iter()
        .flat_map(|&(kind, what)| (0..5).map(move |c| (kind, what, c)))
        .chain([(0, "a read of freed memory", 5)]);
    for (kind, what, c) in cases {
        let call = CALLS[c];
        let spec = format!("{kind},{c}");
        let (ok, log) = child("child_fault", "REDUCE_FAULT", &spec, "child_fault: done");
        assert!(ok, "{what} through {call:?}:\n{log}");
        if kind == 1 && c == 0 {
            echo_tagged(&log, "child_fault");
        }
    }
}

/// A fault in one context, reported while another, healthy context is current, loses the
/// faulting context only (in a child process: `child_fault_beside_another_context`).
#[test]
fn a_fault_is_blamed_on_its_own_context_in_a_child_process() {
    let Some(gpu) = gpu() else { return };
    drop(gpu);
    let name = "child_fault_beside_another_context";
    let (ok, log) = child(name, "REDUCE_FAULT_BESIDE", "1", "child_fault_beside: done");
    assert!(ok, "{log}");
    // Which case held: the other context went on, or the driver lost it too.
    echo_tagged(&log, "child_fault_beside");
}

/// A `Gpu` of a context of its own beside the faulting one: a cudarc buffer of the faulting
/// context, dropped after the fault, stores the fault's error in that context, which cudarc
/// reports on the next call of it before making it current — while the healthy one is. The
/// error loses the faulting context; the healthy one goes on.
#[test]
#[ignore = "run by a_fault_is_blamed_on_its_own_context_in_a_child_process: one fault per process"]
fn child_fault_beside_another_context() {
    if std::env::var("REDUCE_FAULT_BESIDE").is_err() {
        return;
    }
    use reduce_cuda::cudarc::driver::CudaContext;
    let good = items(0);
    let own = CudaContext::new_non_primary(0, 0).unwrap();
    let healthy = Gpu::from_stream(own.new_stream().unwrap()).unwrap();
    let kept = healthy.upload(&good).unwrap();
    assert_eq!(healthy.reduce(&kept, Algorithm::Auto).unwrap(), fold(&good));

    let gpu = Gpu::new(0).unwrap();
    let theirs = gpu.stream().alloc_zeros::<u32>(16).unwrap();
    let bad = gpu.upload(&items(1)).unwrap();
    let mut out = gpu.zeroed::<Faulty>(1).unwrap();
    gpu.reduce_into(&bad, &mut out, Algorithm::Shuffle).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    drop(theirs);

    // the healthy context current (a driver that lost it too fails this call: checked below)
    let _ = healthy.reduce(&kept, Algorithm::Auto);
    let e = gpu.synchronize().unwrap_err();
    assert!(is_lost(&e).is_some(), "{e:?}");
    match healthy.reduce(&kept, Algorithm::Auto) {
        Ok(v) => {
            assert_eq!(v, fold(&good));
            eprintln!("child_fault_beside: the other context goes on");
        }
        // only where the driver lost the other context too, which its own answer says
        Err(e) => {
            let answer = own.synchronize();
            assert!(answer.is_err(), "the healthy context was blamed: {e}");
            eprintln!("child_fault_beside: the driver lost the other context too: {answer:?}");
        }
    }
    eprintln!("child_fault_beside: done");
}

/// One fault (`REDUCE_FAULT=kind,call`): the error names the launch; later calls of the lost
/// `Gpu`, a second `Gpu` of the context and a new `Gpu` fail at once with the same error;
/// dropping everything never panics; then `Gpu::new` works and reduces correctly, or returns
/// the same error, and `Backend::auto()` reduces on the CPU saying why; 100 more calls leave the
/// host's memory and threads flat.
#[test]
#[ignore = "run by every_fault_is_named_in_a_child_process: one fault per process"]
fn child_fault() {
    let Ok(spec) = std::env::var("REDUCE_FAULT") else {
        return;
    };
    let (kind, call) = spec.split_once(',').unwrap();
    let (kind, call): (u32, usize) = (kind.parse().unwrap(), call.parse().unwrap());
    let call = CALLS[call];
    let good = items(0);

    let gpu = Gpu::new(0).unwrap();
    let other = Gpu::from_stream(gpu.context().new_stream().unwrap()).unwrap();
    let kept = gpu.upload(&good).unwrap();
    assert_eq!(gpu.reduce(&kept, Algorithm::Auto).unwrap(), fold(&good));
    let start = Instant::now();
    let (result, algorithm) = run(&gpu, call, &items(kind));
    let fault_time = start.elapsed();
    let error = result.expect_err("the fault is an error");
    let launch = is_lost(&error).unwrap_or_else(|| panic!("{error:?}"));
    let launch = launch.unwrap_or_else(|| panic!("no launch named: {error}"));
    assert_eq!(launch.monoid, "Faulty");
    assert_eq!(launch.algorithm, algorithm, "{launch}");
    let message = error.to_string();
    assert!(
        message.contains("`Faulty`") && message.contains("Gpu::new"),
        "{message}"
    );
    eprintln!("child_fault: {fault_time:?} to the error: {message}");

    let start = Instant::now();
    for e in [
        gpu.reduce(&kept, Algorithm::Auto).map(drop).unwrap_err(),
        gpu.upload(&[1u32]).map(drop).unwrap_err(),
        gpu.synchronize().unwrap_err(),
        other.reduce(&kept, Algorithm::Auto).map(drop).unwrap_err(),
        Gpu::new(0).map(drop).unwrap_err(),
    ] {
        assert_eq!(is_lost(&e), Some(Some(launch)), "{e:?}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    drop((kept, other, gpu));

    match Gpu::new(0) {
        Ok(gpu) => {
            let xs = gpu.upload(&good).unwrap();
            assert_eq!(gpu.reduce(&xs, Algorithm::Auto).unwrap(), fold(&good));
            eprintln!("child_fault: a new Gpu works after the loss");
        }
        Err(e) => {
            assert_eq!(is_lost(&e), Some(Some(launch)), "{e:?}");
            eprintln!("child_fault: the driver keeps the fault for the process: {e}");
        }
    }
    let backend = Backend::auto();
    assert_eq!(backend.reduce(&good, Algorithm::Auto).unwrap(), fold(&good));
    if let Backend::Cpu { .. } = backend {
        assert!(
            backend.describe().contains("lost"),
            "{}",
            backend.describe()
        );
    }

    // Calls after the loss leak nothing.
    let (rss0, threads0) = rss_and_threads();
    for _ in 0..100 {
        if let Ok(gpu) = Gpu::new(0) {
            drop(gpu.upload(&good));
        }
    }
    let (rss, threads) = rss_and_threads();
    assert!(
        rss < rss0 + (16 << 20),
        "RSS {rss0} -> {rss} bytes over 100 calls"
    );
    assert!(threads <= threads0, "threads {threads0} -> {threads}");
    eprintln!("child_fault: 100 calls after the loss: RSS {rss0} -> {rss} bytes, threads {threads0} -> {threads}");
    eprintln!("child_fault: done");
}
