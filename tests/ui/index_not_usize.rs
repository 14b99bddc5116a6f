use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Pick { i: 0, v: [0; 4] },
    combine = |l, r| Pick { i: r.i, v: [l.v[r.i], r.v[1], r.v[2], r.v[3]] }
)]
struct Pick {
    i: u32,
    v: [u32; 4],
}

fn main() {}
