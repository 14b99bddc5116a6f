//! The K largest values of a large input: a k-best list, generic over K (`TopK<const K:
//! usize>`: the CUDA text is produced for each K at run time), merged with loops and mutation,
//! and lifted from plain `f32` items so that the GPU never stores a list per item.
//!
//!     cargo run --release --example topk

use reduce_cuda::{fold, Algorithm, CudaMonoid, Error, Gpu, Lift, Monoid};

/// The K largest values, in decreasing order (`-inf` pads lists shorter than K).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = TopK { v: [f32::NEG_INFINITY; K] },
    combine = |l, r| {
        // merge two sorted lists, keep the first K
        let mut v = [f32::NEG_INFINITY; K];
        let mut i = 0usize;
        let mut j = 0usize;
        for k in 0..K {
            if l.v[i] >= r.v[j] {
                v[k] = l.v[i];
                i += 1;
            } else {
                v[k] = r.v[j];
                j += 1;
            }
        }
        TopK { v }
    },
    commutative,
    lift(f32) = |x, _i| {
        let mut v = [f32::NEG_INFINITY; K];
        v[0] = x;
        TopK { v }
    }
)]
struct TopK<const K: usize> {
    v: [f32; K],
}

fn main() -> Result<(), Error> {
    let xs: Vec<f32> = (0..20_000_000u64)
        .map(|i| ((i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as f32).sqrt())
        .collect();
    let mut sorted = xs.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));

    println!("{}", TopK::<4>::cuda_source());
    match Gpu::new(0) {
        Ok(gpu) => {
            println!("backend: GPU {}", gpu.info().name);
            let dev = gpu.upload(&xs)?;
            let top4: TopK<4> = gpu.reduce_lifted(&dev, Algorithm::Auto)?;
            let top16: TopK<16> = gpu.reduce_lifted(&dev, Algorithm::Auto)?;
            println!("top 4:  {:?}", top4.v);
            println!("top 16: {:?}", top16.v);
            assert_eq!(top4.v[..], sorted[..4]);
            assert_eq!(top16.v[..], sorted[..16]);
        }
        Err(reason) => {
            println!("backend: CPU — no GPU: {reason}");
            let lists: Vec<TopK<4>> = xs
                .iter()
                .enumerate()
                .map(|(i, &x)| TopK::lift(x, i as u64))
                .collect();
            let top4 = fold(&lists);
            println!("top 4: {:?}", top4.v);
            assert_eq!(top4.v[..], sorted[..4]);
        }
    }
    Ok(())
}
