use reduce_core::Monoid;

// `while` has no trip count known when the kernel is generated.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Log { x: 1 },
    combine = |l, r| {
        let mut x = l.x;
        while x < r.x {
            x = x.wrapping_mul(2);
        }
        Log { x }
    }
)]
struct Log {
    x: u32,
}

fn main() {}
