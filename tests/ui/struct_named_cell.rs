use reduce_core::{DeviceCopy, Monoid};

// A struct of the user's own named like a standard type that is not plain data: the
// translation cannot tell it from the standard one, so the message says to rename it.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Cell {
    v: u32,
}

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Grid { c: Cell { v: 0 } }, combine = |l, r| Grid { c: Cell { v: l.c.v + r.c.v } })]
struct Grid {
    c: Cell,
}

fn main() {}
