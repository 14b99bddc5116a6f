//! Running a finite automaton over a long input in parallel: the input's symbols are lifted to
//! transition tables (`t[s]` = the state after the symbol from state `s`), and tables compose
//! by a table lookup, `t[s] = r.t[l.t[s]]` — a classic non-commutative monoid, written with a
//! `for` loop, mutation and indices computed at run time.
//!
//! The automaton reads a binary number, most significant bit first, and tracks its remainder
//! modulo 5 (state s, bit b -> 2s + b mod 5). The GPU reduces the bits straight into tables
//! (`reduce_lifted`: no table is ever stored), and the answer is the final table's `t[0]`.
//!
//!     cargo run --release --example automaton

use reduce_cuda::{fold, Algorithm, CudaMonoid, Error, Gpu, Lift, Monoid};

/// A transition table over up to 8 states; `combine(l, r)` runs `l`, then `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Table { t: [0, 1, 2, 3, 4, 5, 6, 7] },
    combine = |l, r| {
        let mut t = [0u8; 8];
        for s in 0..8 {
            t[s] = r.t[l.t[s] as usize];
        }
        Table { t }
    },
    lift(u8) = |bit, _i| {
        // the remainder automaton modulo 5; states 5..8 are unused
        let mut t = [0u8, 1, 2, 3, 4, 5, 6, 7];
        for s in 0..5 {
            t[s] = (2 * s as u8 + bit) % 5;
        }
        Table { t }
    }
)]
struct Table {
    t: [u8; 8],
}

fn main() -> Result<(), Error> {
    let bits: Vec<u8> = (0..10_000_000u64)
        .map(|i| ((i * 2_654_435_761) >> 7 & 1) as u8)
        .collect();
    // The reference: run the automaton step by step.
    let remainder = bits.iter().fold(0u8, |s, &b| (2 * s + b) % 5);

    println!("{}", Table::cuda_source());
    match Gpu::new(0) {
        Ok(gpu) => {
            println!("backend: GPU {}", gpu.info().name);
            let xs = gpu.upload(&bits)?;
            let table: Table = gpu.reduce_lifted(&xs, Algorithm::Auto)?;
            println!("the binary number is {} mod 5 (GPU)", table.t[0]);
            assert_eq!(table.t[0], remainder);

            // A symbol outside the automaton's alphabet reads past a table on the device: the
            // reduction returns an error, as Rust would panic.
            let mut bad = bits.clone();
            bad[1234] = 7;
            let e = gpu.reduce_lifted::<Table, u8>(&gpu.upload(&bad)?, Algorithm::Auto);
            println!("with a bad symbol: {}", e.unwrap_err());
        }
        Err(reason) => {
            println!("backend: CPU — no GPU: {reason}");
            let tables: Vec<Table> = bits
                .iter()
                .enumerate()
                .map(|(i, &b)| Table::lift(b, i as u64))
                .collect();
            let table = fold(&tables);
            println!("the binary number is {} mod 5 (CPU)", table.t[0]);
            assert_eq!(table.t[0], remainder);
        }
    }
    Ok(())
}
