use reduce_core::Monoid;

// A block with a value may not assign to variables declared outside it: expressions stay free
// of side effects, so the translation may evaluate them in any order.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Acc { x: 0, y: 0 },
    combine = |l, r| {
        let mut n = l.x;
        let y = {
            n += 1;
            n
        };
        Acc { x: n.wrapping_add(r.x), y }
    }
)]
struct Acc {
    x: u32,
    y: u32,
}

fn main() {}
