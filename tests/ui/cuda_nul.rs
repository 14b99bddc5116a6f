use reduce_core::Monoid;

// `'\0'` in a Rust string is a NUL byte, which NVRTC cannot take; C++'s zero is `'\\0'`.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Max { x: 0 },
    combine = |l, r| Max { x: l.x.max(r.x) },
    cuda = "char z = '\0'; M m; m.x = l.x > r.x ? l.x : r.x; return m;"
)]
struct Max {
    x: u32,
}

fn main() {}
