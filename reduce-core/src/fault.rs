//! Index faults in translated code, on the CPU as on the device.
//!
//! The derive's CUDA translation checks every run-time array index (`r_ix` in the prelude): an
//! index out of bounds records a fault and uses element 0 instead, and the GPU call returns an
//! error. The Rust side the derive emits checks the same indices through [`ix`]: by default an
//! index out of bounds panics with Rust's own message (so [`Monoid::combine`](crate::Monoid) and
//! [`fold`](crate::fold) behave as any Rust code would), but inside the fallible
//! calls of [`Cpu`](crate::Cpu) (`try_reduce`, ...) and `reduce_cuda::Backend` it records the
//! fault and goes on with element 0, as the device does, and the call returns an error.

use crate::layout::LayoutError;
use std::cell::Cell;
use thiserror::Error;

/// A run-time array index out of bounds in a monoid's (or lift's) translated code, found by a
/// fallible CPU call ([`Cpu::try_reduce`](crate::Cpu::try_reduce), ...): where Rust would have
/// panicked. The result was discarded.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[error("index out of bounds in the code of monoid `{monoid}`: the len is {len} but the index is {index} (Rust would panic here; the result was discarded)")]
pub struct IndexFault {
    /// The monoid's type name.
    pub monoid: &'static str,
    /// One index out of bounds.
    pub index: u64,
    /// The length of the array it indexed.
    pub len: u64,
}

/// Why a fallible CPU call of a segmented reduction failed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuError {
    /// The segment layout is malformed.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An index out of bounds in the monoid's code.
    #[error(transparent)]
    Fault(#[from] IndexFault),
}

thread_local! {
    /// Whether this thread records faults (inside [`recorded`]) instead of panicking.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    /// The first fault recorded on this thread: (index, len).
    static FIRST: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// `index` if it is below `len`; otherwise Rust's panic, or inside [`recorded`] the fault is
/// recorded and 0 is returned (element 0, as the device uses). The derive wraps every run-time
/// index of the Rust code it emits in this call.
#[doc(hidden)]
#[inline(always)]
#[track_caller]
pub fn ix(index: usize, len: usize) -> usize {
    if index < len {
        index
    } else {
        out_of_bounds(index, len)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(index: usize, len: usize) -> usize {
    if len > 0 && RECORDING.with(Cell::get) {
        FIRST.with(|first| {
            if first.get().is_none() {
                first.set(Some((index as u64, len as u64)));
            }
        });
        return 0;
    }
    panic!("index out of bounds: the len is {len} but the index is {index}")
}

/// Runs `task` with this thread's index faults recorded instead of panicking: its value and the
/// first fault, `(index, len)`. Nests; the thread's earlier state comes back even if `task`
/// panics.
pub(crate) fn recorded<R>(task: impl FnOnce() -> R) -> (R, Option<(u64, u64)>) {
    struct Restore(bool, Option<(u64, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RECORDING.with(|r| r.set(self.0));
            FIRST.with(|f| f.set(self.1));
        }
    }
    let _restore = Restore(
        RECORDING.with(|r| r.replace(true)),
        FIRST.with(|f| f.replace(None)),
    );
    let value = task();
    (value, FIRST.with(Cell::get))
}

/// `task`'s value, with index faults in translated code recorded instead of panicking: the
/// first one is the error, as in the fallible calls of [`Cpu`](crate::Cpu). For other host code
/// that runs a monoid's `combine`, such as a multi-GPU call's join of its ranks' partials.
/// The recording is the calling thread's: `task` must run its combines on this thread (work it
/// hands to rayon or other threads panics on a fault there, as without `checked`; the `Cpu`
/// calls' `try_` forms record on every worker they use).
///
/// ```
/// use reduce_core::fault::{checked, ix};
/// let table = [1u32, 2, 3];
/// assert_eq!(checked::<u32, _>(|| table[ix(1, 3)]), Ok(2));
/// assert_eq!(checked::<u32, _>(|| table[ix(5, 3)]).unwrap_err().index, 5);
/// ```
pub fn checked<M, R>(task: impl FnOnce() -> R) -> Result<R, IndexFault> {
    guarded::<M, R>(true, task)
}

/// `task`'s value; with `checked`, faults are recorded and the first one is the error (without,
/// a fault panics inside `task`, as Rust does).
pub(crate) fn guarded<M, R>(checked: bool, task: impl FnOnce() -> R) -> Result<R, IndexFault> {
    if !checked {
        return Ok(task());
    }
    match recorded(task) {
        (value, None) => Ok(value),
        (_, Some((index, len))) => Err(IndexFault {
            monoid: std::any::type_name::<M>(),
            index,
            len,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_bounds_is_the_index() {
        assert_eq!(ix(3, 4), 3);
        assert_eq!(recorded(|| ix(3, 4)), (3, None));
    }

    #[test]
    #[should_panic(expected = "index out of bounds: the len is 4 but the index is 200")]
    fn out_of_bounds_panics_as_rust_does() {
        ix(200, 4);
    }

    #[test]
    fn recorded_faults_use_element_zero_and_keep_the_first() {
        let (value, fault) = recorded(|| ix(200, 4) + ix(7, 5));
        assert_eq!((value, fault), (0, Some((200, 4))));
        // the thread panics again afterwards
        assert!(std::panic::catch_unwind(|| ix(200, 4)).is_err());
    }

    #[test]
    fn nested_recording_restores_the_outer_fault() {
        let (_, outer) = recorded(|| {
            ix(9, 2);
            let (_, inner) = recorded(|| ix(5, 1));
            assert_eq!(inner, Some((5, 1)));
        });
        assert_eq!(outer, Some((9, 2)));
    }

    #[test]
    fn an_empty_array_still_panics() {
        assert!(std::panic::catch_unwind(|| recorded(|| ix(0, 0))).is_err());
        assert!(!RECORDING.with(Cell::get));
    }
}
