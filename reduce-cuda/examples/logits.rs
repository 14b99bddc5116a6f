//! Reductions along the axes of a (batch, vocabulary) matrix of logits: the argmax of every row
//! (lifted from f32 with the item's flat index, so the column is `i % vocabulary`) and the
//! log-sum-exp of every row, on the GPU against the CPU; and the columns of a matrix of affine
//! maps composed down each column, a non-commutative monoid whose order along the axis is part
//! of the result.
//!
//!     cargo run --release --example logits

use reduce_cuda::{fold_axes, AxisAlgorithm, Backend, Error, Gpu, Lift, Monoid};

/// The largest logit and its flat index (the first of equal ones).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = ArgMax { v: f32::NEG_INFINITY, i: u32::MAX },
    combine = |l, r| if r.v > l.v || (r.v == l.v && r.i < l.i) { r } else { l },
    lift(f32) = |x, i| ArgMax { v: x, i: i as u32 }
)]
struct ArgMax {
    v: f32,
    i: u32,
}

/// (the maximum so far, Σ e^(x - maximum)), one `exp` per combine (the `log_sum_exp` example
/// checks its laws).
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
    lift(f32) = |x, _i| LogSumExp { m: x, s: 1.0 }
)]
struct LogSumExp {
    m: f32,
    s: f32,
}

/// x -> a x + b modulo 2^32; composed "left first, then right".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Affine { a: 1, b: 0 },
    combine = |l, r| Affine { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) }
)]
struct Affine {
    a: u32,
    b: u32,
}

fn main() -> Result<(), Error> {
    let (batch, vocabulary) = (64usize, 32_000usize);
    let logits: Vec<f32> = (0..batch * vocabulary)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / (1 << 24) as f32 * 20.0)
        .collect();
    let argmax_items: Vec<ArgMax> = (logits.iter().enumerate())
        .map(|(i, &x)| ArgMax::lift(x, i as u64))
        .collect();
    let argmax_cpu = fold_axes(&argmax_items, &[batch, vocabulary], &[1])?;
    let lse_items: Vec<LogSumExp> = (logits.iter().enumerate())
        .map(|(i, &x)| LogSumExp::lift(x, i as u64))
        .collect();
    let lse_cpu = fold_axes(&lse_items, &[batch, vocabulary], &[1])?;

    let matrix: Vec<Affine> = (0..1000u32 * 48)
        .map(|i| Affine {
            a: i.wrapping_mul(2_654_435_761) | 1,
            b: i,
        })
        .collect();
    let columns_cpu = fold_axes(&matrix, &[1000, 48], &[0])?;

    match Gpu::new(0) {
        Ok(gpu) => {
            let xs = gpu.upload(&logits)?;
            let shape = [batch, vocabulary];
            let argmax =
                gpu.reduce_axes_lifted::<ArgMax, f32>(&xs, &shape, &[1], AxisAlgorithm::Auto)?;
            let argmax = gpu.download(&argmax)?;
            assert_eq!(argmax, argmax_cpu);
            let lse =
                gpu.reduce_axes_lifted::<LogSumExp, f32>(&xs, &shape, &[1], AxisAlgorithm::Auto)?;
            // The GPU groups each row otherwise than the sequential fold: equal within roundings.
            for (g, c) in gpu.download(&lse)?.iter().zip(&lse_cpu) {
                assert!(g.m == c.m && (g.s - c.s).abs() <= 1e-4 * c.s, "{g:?} {c:?}");
            }
            let columns = gpu.reduce_axes(
                &gpu.upload(&matrix)?,
                &[1000, 48],
                &[0],
                AxisAlgorithm::Auto,
            )?;
            assert_eq!(gpu.download(&columns)?, columns_cpu);
            println!("GPU {}: argmax and log-sum-exp of {batch} rows, 48 composed columns: equal to the CPU", gpu.info().name);
        }
        Err(e) => println!("no GPU ({e}): the CPU backend"),
    }
    // Backend: the same call on either.
    let columns = Backend::auto().reduce_axes(&matrix, &[1000, 48], &[0], AxisAlgorithm::Auto)?;
    assert_eq!(columns, columns_cpu);
    let row0 = argmax_cpu[0];
    println!(
        "row 0: argmax at column {} (logit {:.3}), log-sum-exp {:.4}",
        row0.i as usize % vocabulary,
        row0.v,
        lse_cpu[0].m + lse_cpu[0].s.ln()
    );
    Ok(())
}
