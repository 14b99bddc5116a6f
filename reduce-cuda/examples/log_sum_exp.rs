//! Log-sum-exp of logits, ln Σ e^x — the reduction behind softmax and cross-entropy — with `exp`
//! in the derive: each combine gives the same bits on the CPU and the GPU (`reduce_core::math`
//! on both sides). Float log-sum-exp is not exactly associative, so its laws are checked within
//! a stated tolerance (`laws::verify_with`), and the GPU's result, grouped otherwise than the
//! sequential fold, is compared within that tolerance too.
//!
//!     cargo run --release --example log_sum_exp --features proptest

use proptest::prelude::*;
use proptest::test_runner::Config;
use reduce_cuda::{fold, laws, Algorithm, Error, Gpu, Lift, Monoid};

/// (the maximum so far, Σ e^(x - maximum)): combining keeps the larger maximum and scales the
/// other sum, one `exp` per combine.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = LogSumExp { m: f32::NEG_INFINITY, s: 0.0 },
    combine = |a, b| {
        // One exp per combine, and no branch: the larger maximum's sum is kept, the other one
        // scaled by e^(smaller - larger). A NaN maximum is the larger one (it stays in m). Two
        // maxima infinite alike (two empty sums, both -inf; or both +inf) differ by NaN: the
        // sum is then the larger's.
        let first = a.m >= b.m || a.m.is_nan();
        let big = if first { a } else { b };
        let small = if first { b } else { a };
        let d = small.m - big.m;
        let e = d.exp();
        let s = if d.is_nan() { big.s } else { small.s.mul_add(e, big.s) };
        LogSumExp { m: big.m, s }
    },
    commutative,
    lift(f32) = |x, _i| LogSumExp { m: x, s: 1.0 }
)]
struct LogSumExp {
    m: f32,
    s: f32,
}

impl LogSumExp {
    fn value(self) -> f32 {
        self.m + self.s.ln()
    }
}

/// Equal within the tolerance of a few f32 roundings per combine: the maxima exactly, the sums
/// to a relative 2^-20.
fn close(a: &LogSumExp, b: &LogSumExp) -> bool {
    let rel = |x: f32, y: f32| (x - y).abs() <= 2f32.powi(-20) * x.abs().max(y.abs());
    a.m == b.m && rel(a.s, b.s)
}

fn main() -> Result<(), Error> {
    // The laws on partial results of logits in [-20, 20] with sums in [1, 1000).
    let values = (-20.0f32..20.0, 1.0f32..1000.0).prop_map(|(m, s)| LogSumExp { m, s });
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    match laws::verify_with(values, config, close) {
        Ok(()) => println!("laws: identity, associativity and commutativity hold within 2^-20"),
        Err(failure) => panic!("{failure}"),
    }

    let logits: Vec<f32> = (0..1_000_000u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) >> 8) % 2000) as f32 / 100.0 - 10.0)
        .collect();
    let lifted: Vec<LogSumExp> = logits
        .iter()
        .enumerate()
        .map(|(i, &x)| LogSumExp::lift(x, i as u64))
        .collect();
    let cpu = fold(&lifted);
    let exact: f64 = logits.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
    println!("CPU: ln Σ e^x = {} (f64: {exact})", cpu.value());
    match Gpu::new(0) {
        Ok(gpu) => {
            let xs = gpu.upload(&logits)?;
            let got = gpu.reduce_lifted::<LogSumExp, f32>(&xs, Algorithm::Auto)?;
            println!("GPU: ln Σ e^x = {}", got.value());
            assert!(((got.value() as f64) - exact).abs() < 1e-4 * exact.abs());
        }
        Err(e) => println!("no GPU ({e}): the CPU result stands alone"),
    }
    Ok(())
}
