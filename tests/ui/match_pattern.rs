use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Tag { t: 0 },
    combine = |l, r| match r.t {
        0 => l,
        Some(_) => r,
    }
)]
struct Tag {
    t: u8,
}

fn main() {}
