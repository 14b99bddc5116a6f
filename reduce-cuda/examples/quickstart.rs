//! Quickstart: derive a non-commutative monoid, reduce ten million of them on the GPU (or on
//! the CPU when there is none), and compare with the sequential fold.
//!
//!     cargo run --release --example quickstart

use reduce_cuda::{fold, kernel_source, Algorithm, Backend, Monoid, SegAlgorithm};
use std::time::Instant;

/// The affine map x -> a*x + b (mod 2^32). Composing maps is associative but NOT commutative:
/// CUB's DeviceReduce gets it wrong; every algorithm here keeps the order.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
                                   b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Affine {
    a: u32,
    b: u32,
}

fn main() -> Result<(), reduce_cuda::Error> {
    let n = 10_000_000u32;
    let items: Vec<Affine> = (0..n)
        .map(|i| Affine {
            a: i.wrapping_mul(2_654_435_761) | 1,
            b: i ^ 0x5bd1_e995,
        })
        .collect();

    let backend = Backend::auto();
    println!("backend: {}", backend.describe());

    let start = Instant::now();
    let total = backend.reduce(&items, Algorithm::Auto)?;
    let note = match backend {
        Backend::Gpu(_) => " (upload and first use of the kernel included)",
        Backend::Cpu { .. } => "",
    };
    println!("reduced {n} affine maps in {:.2?}{note}", start.elapsed());

    let reference = fold(&items);
    println!("result    {total:?}\nreference {reference:?}");
    assert_eq!(
        total, reference,
        "the reduction must equal the sequential fold"
    );
    println!("equal to the sequential fold: yes");

    // Segmented: one value per segment, given as CSR offsets (lengths 0, 1, 2, 3, ...).
    let mut offsets = vec![0u32];
    while (*offsets.last().unwrap() as usize) < items.len() {
        let next = (offsets.last().unwrap() + offsets.len() as u32 - 1).min(n);
        offsets.push(next);
    }
    let per_segment = backend.reduce_segments(&items, &offsets, SegAlgorithm::Auto)?;
    let expected =
        reduce_cuda::reduce_core::fold_segments(&items, &offsets).expect("valid offsets");
    assert_eq!(per_segment, expected);
    println!(
        "{} segments (the first one empty) reduced; equal to the CPU reference: yes",
        per_segment.len()
    );

    let source = kernel_source::<Affine>(Algorithm::Auto);
    let monoid: Vec<&str> = source
        .lines()
        .skip_while(|l| !l.contains("======== monoid"))
        .take(14)
        .collect();
    println!(
        "\nthe CUDA C++ the derive wrote (from kernel_source):\n{}",
        monoid.join("\n")
    );
    Ok(())
}
