//! A monoid CUB's documentation says its reductions cannot handle: an associative but
//! non-commutative operator. Here, 2x2 matrices over u64 with wrapping arithmetic — the product
//! of a long chain of matrices, e.g. to evaluate a linear recurrence (Fibonacci-like sequences
//! mod 2^64) in parallel.
//!
//!     cargo run --release --example custom_monoid

use reduce_cuda::{fold, Algorithm, Backend, Monoid};

/// Row-major 2x2 matrix; `combine(l, r) = l * r`, so the fold is the chain product in order.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2 { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
struct Mat2 {
    m: [u64; 4],
}

fn main() -> Result<(), reduce_cuda::Error> {
    // x_{k+1} = a_k * x_k + b_k * x_{k-1}, with coefficients that change at every step: the
    // state (x_k, x_{k-1}) is multiplied by [[a_k, b_k], [1, 0]], in order. Odd b_k keep every
    // matrix invertible mod 2^64, so the product never collapses to zero.
    let n = 5_000_000u64;
    let steps: Vec<Mat2> = (0..n)
        .map(|k| Mat2 {
            m: [1 + k % 7, 2 * (k % 3) + 1, 1, 0],
        })
        .collect();

    let backend = Backend::auto();
    println!("backend: {}", backend.describe());
    for algorithm in Algorithm::ALL {
        let product = backend.reduce(&steps, algorithm)?;
        assert_eq!(product, fold(&steps), "{algorithm} must keep the order");
        println!("{algorithm:>17}: product of {n} matrices = {:?}", product.m);
    }

    // Reordering breaks it: the product of the reversed chain is (almost always) different.
    let reversed: Vec<Mat2> = steps.iter().rev().copied().collect();
    println!(
        "reversed order gives {:?}: order matters",
        fold(&reversed).m
    );
    Ok(())
}
