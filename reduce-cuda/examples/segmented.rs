//! Segmented reductions in both forms: per-user "last event" (keep-last, not commutative) over a
//! log sorted by user, with the owner form and the CSR offsets form, every algorithm.
//!
//!     cargo run --release --example segmented

use reduce_cuda::reduce_core::{fold_by_owner, LayoutError};
use reduce_cuda::{Backend, Error, Monoid, SegAlgorithm};

/// The last event that is set; unset events carry value 0 (the identity's), keeping the laws exact.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = LastEvent { set: false, value: 0 },
         combine = |l, r| if r.set { r } else { l })]
struct LastEvent {
    set: bool,
    value: u32,
}

fn main() -> Result<(), reduce_cuda::Error> {
    let users = 100_000usize;
    // Events sorted by user: user u has u % 13 events (some users have none).
    let mut owner = Vec::new();
    let mut events = Vec::new();
    for u in 0..users as u32 {
        for e in 0..u % 13 {
            owner.push(u);
            let set = (u + e) % 4 != 0;
            events.push(LastEvent {
                set,
                value: if set { u * 100 + e } else { 0 },
            });
        }
    }
    let offsets: Vec<u32> = {
        let mut o = vec![0u32; users + 1];
        for &u in &owner {
            o[u as usize + 1] += 1;
        }
        for i in 0..users {
            o[i + 1] += o[i];
        }
        o
    };
    let expected = fold_by_owner(&events, &owner, users).expect("valid layout");

    let backend = Backend::auto();
    println!("backend: {}", backend.describe());
    for algorithm in SegAlgorithm::ALL {
        assert_eq!(
            backend.reduce_by_owner(&events, &owner, users, algorithm)?,
            expected
        );
        assert_eq!(
            backend.reduce_segments(&events, &offsets, algorithm)?,
            expected
        );
        println!(
            "{algorithm:>20}: {} users, both forms equal to the CPU reference",
            users
        );
    }
    println!("user 27's last event: {:?}", expected[27]);

    // A bad layout is a typed error naming the first bad index, not a wrong answer.
    let mut unsorted = owner.clone();
    unsorted.swap(10, 500);
    match backend.reduce_by_owner(&events, &unsorted, users, SegAlgorithm::Auto) {
        Err(Error::Layout(e @ LayoutError::OwnerNotSorted { .. })) => {
            println!("unsorted owners: {e}")
        }
        other => panic!("expected an unsorted-owner error, got {other:?}"),
    }
    Ok(())
}
