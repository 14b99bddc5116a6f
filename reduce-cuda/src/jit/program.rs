//! What the kernels of a call are generated for: a monoid, and the items it reads — its own
//! values ([`Own`]) or values of another type it lifts ([`Lifted`]). A [`Program`] is all the
//! layers above need of the monoid's type: its CUDA text, its sizes, its name, whether its code
//! can fault. The catalogue and dispatch layers see no type parameter, so they are compiled
//! once, not once per monoid.

use reduce_core::{CudaMonoid, DeviceCopy, Lift};
use std::any::TypeId;
use std::marker::PhantomData;

/// The items of a reduction as planning sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Items {
    /// Bytes of one input item (`r_in`).
    pub in_size: usize,
    /// Bytes of one monoid value.
    pub m_size: usize,
    /// Alignment of a monoid value, in bytes (`#[repr(align(N))]` may make it past 16).
    pub m_align: usize,
    /// The items are lifted into monoid values (`m_lift`).
    pub lifted: bool,
    /// The monoid promises commutativity (order-free kernels allowed).
    pub commutative: bool,
}

impl Items {
    /// Items lifted into wider values (ArgMax's (value, index) from f32): the families size a
    /// thread's run by the item, so its values take more registers and staging than the
    /// monoid's own run.
    pub fn lifted_narrower(&self) -> bool {
        self.lifted && self.in_size < self.m_size
    }

    /// A bound on the bytes of a kernel struct of a 4-byte flag and a monoid value (`r_seg`):
    /// the value, and the flag padded to the value's alignment.
    pub fn flagged_value_bytes(&self) -> usize {
        self.m_size.max(1) + self.m_align.max(16)
    }
}

/// A monoid and the items its kernels read.
pub(crate) trait Program: Sync {
    /// The in-process cache key: the monoid's type and, for lifted items, the item type.
    fn key(&self) -> (TypeId, Option<TypeId>);
    /// The monoid's name (diagnostics, kernel headers).
    fn monoid_name(&self) -> &'static str;
    /// The monoid's CUDA text (and the lift's, for lifted items).
    fn monoid_text(&self) -> String;
    /// The "input items" section: `r_in` and `m_lift`, or where the monoid defined them.
    fn input_items(&self) -> &'static str;
    /// Sizes and properties.
    fn items(&self) -> Items;
    /// Whether the device code (combine, or lift) can record an index fault.
    fn can_fault(&self) -> bool;
}

/// The items are the monoid's values.
pub(crate) struct Own<M>(PhantomData<fn() -> M>);

/// The items are `X`s that the monoid `M` lifts.
pub(crate) struct Lifted<M, X>(PhantomData<fn() -> (M, X)>);

impl<M> Own<M> {
    pub fn new() -> Self {
        Own(PhantomData)
    }
}

impl<M, X> Lifted<M, X> {
    pub fn new() -> Self {
        Lifted(PhantomData)
    }
}

/// A plain monoid's items are its values (R_LIFTED 0: loading an item is loading its value,
/// nothing waits on the load until the value is used).
const INPUT_ITEMS: &str = "typedef M r_in;
__device__ __forceinline__ M m_lift(r_in x, r_size i) { (void)i; return x; }
#define R_LIFTED 0
";

/// The input-items section of a lifted kernel: `r_in` and `m_lift` come with the monoid.
const LIFTED_INPUT_ITEMS: &str =
    "// r_in and m_lift are defined with the monoid (#[monoid(lift(...) = ...)])\n#define R_LIFTED 1\n";

impl<M: CudaMonoid> Program for Own<M> {
    fn key(&self) -> (TypeId, Option<TypeId>) {
        (TypeId::of::<M>(), None)
    }
    fn monoid_name(&self) -> &'static str {
        M::CUDA_NAME
    }
    fn monoid_text(&self) -> String {
        M::cuda_source()
    }
    fn input_items(&self) -> &'static str {
        INPUT_ITEMS
    }
    fn items(&self) -> Items {
        Items {
            in_size: std::mem::size_of::<M>(),
            m_size: std::mem::size_of::<M>(),
            m_align: std::mem::align_of::<M>(),
            lifted: false,
            commutative: M::COMMUTATIVE,
        }
    }
    fn can_fault(&self) -> bool {
        M::CAN_FAULT
    }
}

impl<M: Lift<X>, X: DeviceCopy> Program for Lifted<M, X> {
    fn key(&self) -> (TypeId, Option<TypeId>) {
        (TypeId::of::<M>(), Some(TypeId::of::<X>()))
    }
    fn monoid_name(&self) -> &'static str {
        M::CUDA_NAME
    }
    fn monoid_text(&self) -> String {
        M::cuda_source_lifted()
    }
    fn input_items(&self) -> &'static str {
        LIFTED_INPUT_ITEMS
    }
    fn items(&self) -> Items {
        Items {
            in_size: std::mem::size_of::<X>(),
            m_size: std::mem::size_of::<M>(),
            m_align: std::mem::align_of::<M>(),
            lifted: true,
            commutative: M::COMMUTATIVE,
        }
    }
    fn can_fault(&self) -> bool {
        M::CAN_FAULT || M::LIFT_CAN_FAULT
    }
}
