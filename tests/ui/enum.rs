use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Flag::Off, combine = |l, r| r)]
enum Flag {
    Off,
    On,
}

fn main() {}
