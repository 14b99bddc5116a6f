//! A linear recurrence h_t = a_t h_{t-1} + b_t over 10^8 steps, solved by one scan of affine
//! maps (the state of every step at once) on the GPU, or on the CPU when there is none, and
//! checked against the sequential loop:
//! - over u32 (mod 2^32): bit for bit — composing maps is exactly associative;
//! - over f32 (|a_t| < 1): within a stated tolerance of the loop run in f64 — the scan groups
//!   the float operations its own way (the same way on every run), so it rounds differently
//!   from the loop.
//!
//!     cargo run --release --example recurrence [steps]

use reduce_cuda::{Backend, Monoid, Scan, ScanAlgorithm};
use std::time::Instant;

/// The step x -> a x + b over u32 (wrapping). Composed left to right, the inclusive scan's
/// output t is the map from h_{-1} to h_t.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Step { a: 1, b: 0 },
         combine = |l, r| Step { a: l.a.wrapping_mul(r.a),
                                 b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Step {
    a: u32,
    b: u32,
}

/// The step x -> a x + b over f32.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = StepF32 { a: 1.0, b: 0.0 },
         combine = |l, r| StepF32 { a: l.a * r.a, b: l.b * r.a + r.b })]
struct StepF32 {
    a: f32,
    b: f32,
}

/// The largest error allowed against the f64 loop, relative to max(1, |h_t|): each output of
/// the scan is a few dozen roundings of contracting maps (|a| <= 0.99) away from the exact value.
const TOLERANCE: f64 = 1e-4;

fn main() -> Result<(), reduce_cuda::Error> {
    let steps: usize = std::env::args()
        .nth(1)
        .map_or(100_000_000, |s| s.parse().expect("steps: a number"));
    let backend = Backend::auto();
    println!("backend: {}", backend.describe());
    let mix = |i: u64| {
        let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i >> 17);
        (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
    };

    // Exact: u32 (odd multipliers, so the state never collapses to a constant).
    let h0 = 12_345u32;
    let maps: Vec<Step> = (0..steps as u64)
        .map(|i| Step {
            a: (mix(i) as u32) | 1,
            b: (mix(i) >> 32) as u32,
        })
        .collect();
    let start = Instant::now();
    let prefixes = backend.scan(&maps, Scan::Inclusive, ScanAlgorithm::Auto)?;
    println!(
        "u32: {steps} steps scanned in {:.2?} (transfers included)",
        start.elapsed()
    );
    let mut h = h0;
    for (t, (step, prefix)) in maps.iter().zip(&prefixes).enumerate() {
        h = step.a.wrapping_mul(h).wrapping_add(step.b);
        let from_scan = prefix.a.wrapping_mul(h0).wrapping_add(prefix.b);
        assert_eq!(
            from_scan, h,
            "step {t}: the scan's state differs from the loop's"
        );
    }
    println!("u32: every state equal to the sequential loop's, bit for bit (h_last = {h})");

    // Floats: a in [0.5, 0.99], b in [-1, 1].
    let h0 = 1.0f32;
    let maps: Vec<StepF32> = (0..steps as u64)
        .map(|i| StepF32 {
            a: 0.5 + 0.49 * ((mix(i) >> 40) as f32 / (1u64 << 24) as f32),
            b: ((mix(i) & 0xff_ffff) as f32 / (1u64 << 23) as f32) - 1.0,
        })
        .collect();
    let start = Instant::now();
    let prefixes = backend.scan(&maps, Scan::Inclusive, ScanAlgorithm::Auto)?;
    println!(
        "f32: {steps} steps scanned in {:.2?} (transfers included)",
        start.elapsed()
    );
    let again = backend.scan(&maps, Scan::Inclusive, ScanAlgorithm::Auto)?;
    let same_bits = again
        .iter()
        .zip(&prefixes)
        .all(|(x, y)| x.a.to_bits() == y.a.to_bits() && x.b.to_bits() == y.b.to_bits());
    assert!(same_bits, "a float scan repeats bit for bit");
    let (mut h, mut worst) = (h0 as f64, 0.0f64);
    for (step, prefix) in maps.iter().zip(&prefixes) {
        h = step.a as f64 * h + step.b as f64;
        let from_scan = (prefix.a * h0 + prefix.b) as f64;
        worst = worst.max((from_scan - h).abs() / h.abs().max(1.0));
    }
    println!("f32: largest error against the f64 loop {worst:.2e} (tolerance {TOLERANCE:.0e}); the same bits on a second run: yes");
    assert!(worst <= TOLERANCE, "the f32 scan is within the tolerance");
    Ok(())
}
