//! Device memory the reductions read and write in place, with no copy: this crate's
//! [`DeviceVec`], cudarc's [`CudaSlice`], [`CudaView`] and [`CudaViewMut`], and memory of other
//! libraries named by a raw address ([`DeviceSlice`], [`DeviceSliceMut`]). The rules are on
//! [`DeviceInput`]; a call enters memory through [`Device::input`] / [`Device::output`], which
//! check it and order it on the call's stream ([`Access`]).

use super::health::DriverContext;
use super::{Device, DeviceVec};
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUmemorytype, CUpointer_attribute};
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, SyncOnDrop,
};
use reduce_core::{DeviceCopy, Max, Min, Primitive, Product, SegIndex, Sum};
use std::marker::PhantomData;
use std::sync::Arc;

pub(crate) mod sealed {
    use cudarc::driver::{CudaStream, SyncOnDrop};
    use std::sync::Arc;

    /// The runtime's side of readable device memory.
    pub trait Input<T> {
        /// The number of values of `T`.
        fn count(&self) -> usize;
        /// The stream whose queued work the contents depend on.
        fn home(&self) -> &Arc<CudaStream>;
        /// The address, for reading on `stream`; with cudarc's event tracking `stream` first
        /// waits for the last recorded write. The guard records the read when dropped: keep it
        /// until the last launch that reads the memory is queued.
        fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }

    /// The built-in monoids over a primitive (see [`super::MonoidOf`]).
    pub trait MonoidOf<P> {}

    /// The runtime's side of writable device memory.
    pub trait Output<T>: Input<T> {
        /// The address, for writing on `stream` (which first waits for recorded reads and
        /// writes); the guard records the write when dropped.
        fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    }
}

/// Device memory a reduction may read: `len()` values of `T` in one CUDA context.
///
/// Implemented for [`DeviceVec<T>`], cudarc's `CudaSlice<T>`, `CudaView<'_, T>` and
/// `CudaViewMut<'_, T>`, and for raw memory through [`DeviceSlice`] and [`DeviceSliceMut`].
/// Outputs implement [`DeviceOutput<T>`]. Both traits are sealed: the safe reductions trust
/// what they report. A cudarc slice of a primitive `P` is also an input and an output of the
/// built-in monoids `Sum<P>`, `Product<P>`, `Min<P>` and `Max<P>` (they are
/// `#[repr(transparent)]` wrappers and every bit pattern of `P` is valid), so a
/// `CudaSlice<f32>` that your own kernel filled is reduced as it is:
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use reduce_cuda::cudarc::driver::CudaContext;
/// use reduce_cuda::{Algorithm, Gpu, Sum};
///
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// let gpu = Gpu::from_stream(stream.clone())?;          // reductions go to your stream
/// let xs = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;       // or filled by your own kernel
/// let total: Sum<f32> = gpu.reduce(&xs, Algorithm::Auto)?;
/// assert_eq!(total.0, 6.0);
/// # Ok(()) }
/// ```
///
/// # What every call checks (an error value, never undefined behaviour)
///
/// - **Context.** The memory must live in the `Gpu`'s CUDA context (the same `CUcontext`: the
///   primary context of a device is shared by every `CudaContext::new(ordinal)` and
///   `Gpu::new(ordinal)` of the process), else [`Error::ForeignBuffer`].
/// - **Alignment.** The address must be a multiple of `align_of::<T>()`, else
///   [`Error::Misaligned`]. The fast kernels read 16-byte vectors at any offset (a view at an
///   odd offset, a raw pointer): same grouping, same result bit for bit; the first call at a
///   new offset from a 16-byte boundary compiles its own kernel.
/// - **Length.** An output must hold what the call writes, else [`Error::LengthMismatch`].
/// - **Raw addresses** ([`DeviceSlice::from_raw`]): also what the driver knows of the address
///   (device memory of this device and context, the range inside one allocation), else
///   [`Error::InvalidPointer`] or [`Error::ForeignBuffer`].
///
/// # Ordering with your work
///
/// Every input and output has a *home stream*: the stream of the cudarc slice, of the `Gpu`
/// that made a [`DeviceVec`], or of the `Gpu` a raw slice was made for. When it is not the
/// `Gpu`'s own stream, the `Gpu`'s stream first waits for the work queued on the home stream
/// (your kernel that wrote the data), and the home stream then waits for the reduction (so
/// that later writes, or freeing the memory, come after it). When the home stream is the
/// `Gpu`'s stream ([`Gpu::from_stream`](crate::Gpu::from_stream) with your stream) the order is simply the stream's.
/// cudarc's own event tracking, where its context has it on, is honoured too: a read waits
/// for the slice's last recorded write and records itself, a write waits for both.
pub trait DeviceInput<T>: sealed::Input<T> {
    /// The number of values.
    fn len(&self) -> usize {
        self.count()
    }
    /// Whether it holds no value.
    fn is_empty(&self) -> bool {
        self.count() == 0
    }
}

/// Device memory a reduction may write: implemented for [`DeviceVec<T>`], cudarc's
/// `CudaSlice<T>` and `CudaViewMut<'_, T>` (and their built-in-monoid forms, see
/// [`DeviceInput`]), and [`DeviceSliceMut`]. Sealed.
pub trait DeviceOutput<T>: DeviceInput<T> + sealed::Output<T> {}

impl<T: DeviceCopy> sealed::Input<T> for DeviceVec<T> {
    fn count(&self) -> usize {
        self.len()
    }
    fn home(&self) -> &Arc<CudaStream> {
        DeviceVec::home(self)
    }
    fn read<'a>(&'a self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.address(), SyncOnDrop::Record(None))
    }
}
impl<T: DeviceCopy> sealed::Output<T> for DeviceVec<T> {
    fn write<'a>(&'a mut self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.address(), SyncOnDrop::Record(None))
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceVec<T> {}
impl<T: DeviceCopy> DeviceOutput<T> for DeviceVec<T> {}

/// cudarc's slices and views: `$item` values in memory, read and written as `$value` (the same
/// type, or a `#[repr(transparent)]` built-in monoid over a primitive, whose every bit pattern
/// is a valid value).
macro_rules! cudarc_memory {
    ($([$($generics:tt)*] $item:ty => $value:ty;)*) => {$(
        impl<$($generics)*> sealed::Input<$value> for CudaSlice<$item> {
            fn count(&self) -> usize {
                self.len()
            }
            fn home(&self) -> &Arc<CudaStream> {
                self.stream()
            }
            fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr(stream)
            }
        }
        impl<$($generics)*> sealed::Output<$value> for CudaSlice<$item> {
            fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr_mut(stream)
            }
        }
        impl<$($generics)*> DeviceInput<$value> for CudaSlice<$item> {}
        impl<$($generics)*> DeviceOutput<$value> for CudaSlice<$item> {}

        impl<'v, $($generics)*> sealed::Input<$value> for CudaView<'v, $item> {
            fn count(&self) -> usize {
                self.len()
            }
            fn home(&self) -> &Arc<CudaStream> {
                cudarc::driver::DeviceSlice::stream(self)
            }
            fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr(stream)
            }
        }
        impl<'v, $($generics)*> DeviceInput<$value> for CudaView<'v, $item> {}

        impl<'v, $($generics)*> sealed::Input<$value> for CudaViewMut<'v, $item> {
            fn count(&self) -> usize {
                self.len()
            }
            fn home(&self) -> &Arc<CudaStream> {
                cudarc::driver::DeviceSlice::stream(self)
            }
            fn read<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr(stream)
            }
        }
        impl<'v, $($generics)*> sealed::Output<$value> for CudaViewMut<'v, $item> {
            fn write<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
                self.device_ptr_mut(stream)
            }
        }
        impl<'v, $($generics)*> DeviceInput<$value> for CudaViewMut<'v, $item> {}
        impl<'v, $($generics)*> DeviceOutput<$value> for CudaViewMut<'v, $item> {}
    )*};
}

cudarc_memory! {
    [T: DeviceCopy] T => T;
    [P: Primitive] P => Sum<P>;
    [P: Primitive] P => Product<P>;
    [P: Primitive] P => Min<P>;
    [P: Primitive] P => Max<P>;
}

/// A segment layout on the device — CSR offsets or owners, `u32` or `u64` — as any
/// [`DeviceInput`] of a [`SegIndex`] type. The index type is named once here, so a call that
/// takes a layout infers it (a cudarc `CudaSlice<u32>` is also an input of `Sum<u32>` and
/// the other built-ins).
pub trait SegLayout: DeviceInput<Self::Index> {
    /// `u32` or `u64`.
    type Index: SegIndex;
}

impl<I: SegIndex> SegLayout for DeviceVec<I> {
    type Index = I;
}
impl<I: SegIndex> SegLayout for CudaSlice<I> {
    type Index = I;
}
impl<I: SegIndex> SegLayout for CudaView<'_, I> {
    type Index = I;
}
impl<I: SegIndex> SegLayout for CudaViewMut<'_, I> {
    type Index = I;
}
impl<I: SegIndex> SegLayout for DeviceSlice<I> {
    type Index = I;
}
impl<I: SegIndex> SegLayout for DeviceSliceMut<I> {
    type Index = I;
}

/// A raw device range with the stream its contents are ordered on.
#[derive(Clone, Debug)]
struct Raw {
    address: u64,
    len: usize,
    stream: Arc<CudaStream>,
}

/// `len` values of `T` at a raw device address, borrowed for reading from another library
/// (PyTorch's `tensor.data_ptr()`, CuPy's `array.data.ptr`, a C++ allocator, ...). Made with
/// the `unsafe` [`DeviceSlice::from_raw`], which checks what the driver can tell.
#[derive(Clone, Debug)]
pub struct DeviceSlice<T> {
    raw: Raw,
    marker: PhantomData<fn() -> T>,
}

/// `len` values of `T` at a raw device address, borrowed for reading and writing (a result
/// buffer of another library). Made with the `unsafe` [`DeviceSliceMut::from_raw`].
#[derive(Debug)]
pub struct DeviceSliceMut<T> {
    raw: Raw,
    marker: PhantomData<fn(T) -> T>,
}

impl<T: DeviceCopy> DeviceSlice<T> {
    /// The checks of the public `from_raw` (calls/memory.rs), for `device`.
    pub(crate) fn checked(address: u64, len: usize, device: &Device) -> Result<Self> {
        Ok(DeviceSlice {
            raw: Raw::checked::<T>(address, len, device)?,
            marker: PhantomData,
        })
    }
}

impl<T: DeviceCopy> DeviceSliceMut<T> {
    /// The checks of the public `from_raw` (calls/memory.rs), for `device`.
    pub(crate) fn checked(address: u64, len: usize, device: &Device) -> Result<Self> {
        Ok(DeviceSliceMut {
            raw: Raw::checked::<T>(address, len, device)?,
            marker: PhantomData,
        })
    }
}

impl<T> DeviceSlice<T> {
    /// The device address.
    pub fn address(&self) -> u64 {
        self.raw.address
    }
    /// The number of values.
    pub fn len(&self) -> usize {
        self.raw.len
    }
    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }
}

impl<T> DeviceSliceMut<T> {
    /// The device address.
    pub fn address(&self) -> u64 {
        self.raw.address
    }
    /// The number of values.
    pub fn len(&self) -> usize {
        self.raw.len
    }
    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }
}

impl<T: DeviceCopy> sealed::Input<T> for DeviceSlice<T> {
    fn count(&self) -> usize {
        self.raw.len
    }
    fn home(&self) -> &Arc<CudaStream> {
        &self.raw.stream
    }
    fn read<'a>(&'a self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.raw.address, SyncOnDrop::Record(None))
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceSlice<T> {}

impl<T: DeviceCopy> sealed::Input<T> for DeviceSliceMut<T> {
    fn count(&self) -> usize {
        self.raw.len
    }
    fn home(&self) -> &Arc<CudaStream> {
        &self.raw.stream
    }
    fn read<'a>(&'a self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.raw.address, SyncOnDrop::Record(None))
    }
}
impl<T: DeviceCopy> sealed::Output<T> for DeviceSliceMut<T> {
    fn write<'a>(&'a mut self, _: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.raw.address, SyncOnDrop::Record(None))
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceSliceMut<T> {}
impl<T: DeviceCopy> DeviceOutput<T> for DeviceSliceMut<T> {}

/// `address` is a multiple of `align`, else [`Error::Misaligned`].
fn check_alignment(address: u64, align: usize) -> Result<()> {
    if !address.is_multiple_of(align as u64) {
        return Err(Error::Misaligned { address, align });
    }
    Ok(())
}

/// What `cuPointerGetAttributes` says of an address.
#[derive(Debug, Default)]
struct PointerFacts {
    memory_type: u32,
    ordinal: i32,
    context: usize,
    managed: u32,
    range_start: u64,
    range_size: usize,
}

impl PointerFacts {
    fn query(device: &Device, address: u64) -> Result<PointerFacts> {
        device.bind()?;
        let mut facts = PointerFacts::default();
        let mut attributes = [
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        let mut data: [*mut std::ffi::c_void; 6] = [
            (&mut facts.memory_type as *mut u32).cast(),
            (&mut facts.ordinal as *mut i32).cast(),
            (&mut facts.context as *mut usize).cast(),
            (&mut facts.managed as *mut u32).cast(),
            (&mut facts.range_start as *mut u64).cast(),
            (&mut facts.range_size as *mut usize).cast(),
        ];
        // SAFETY: each pointer is valid for its attribute's type (an unsigned int, an int, a
        // CUcontext, a bool written into zeroed 4 bytes, a CUdeviceptr, a size_t). An address
        // CUDA does not know is not an error: its attributes stay zero.
        unsafe {
            sys::cuPointerGetAttributes(
                attributes.len() as u32,
                attributes.as_mut_ptr(),
                data.as_mut_ptr(),
                address,
            )
        }
        .result()
        .during("querying a device address")?;
        Ok(facts)
    }
}

impl Raw {
    /// The checks of [`DeviceSlice::from_raw`].
    fn checked<T>(address: u64, len: usize, device: &Device) -> Result<Raw> {
        let size = std::mem::size_of::<T>().max(1) as u64;
        let bytes = (len as u64)
            .checked_mul(size)
            .filter(|b| address.checked_add(*b).is_some())
            .ok_or(Error::TooLarge {
                what: "values from the raw device address",
                value: len as u64,
                limit: (u64::MAX - address) / size,
            })?;
        check_alignment(address, std::mem::align_of::<T>())?;
        if len > 0 {
            let facts = PointerFacts::query(device, address)?;
            let invalid = |reason: String| Error::InvalidPointer { address, reason };
            let managed = facts.managed != 0;
            match facts.memory_type {
                0 => return Err(invalid("CUDA knows no allocation at this address (a host pointer, freed memory or an address CUDA never gave out)".into())),
                t if t == CUmemorytype::CU_MEMORYTYPE_HOST as u32 && !managed => {
                    return Err(invalid("it is host memory, not device memory".into()))
                }
                t if t == CUmemorytype::CU_MEMORYTYPE_ARRAY as u32 => {
                    return Err(invalid("it is a CUDA array, not linear memory".into()))
                }
                _ => {}
            }
            let gpu_ordinal = device.info.ordinal;
            let foreign = Error::ForeignBuffer {
                buffer_ordinal: facts.ordinal.max(0) as usize,
                gpu_ordinal,
            };
            if !managed && facts.ordinal != gpu_ordinal as i32 {
                return Err(foreign);
            }
            let own_context = device.ctx.cu_ctx() as usize;
            if facts.context != 0 && facts.context != own_context {
                return Err(foreign);
            }
            let end = facts.range_start.saturating_add(facts.range_size as u64);
            if facts.range_size > 0 && address + bytes > end {
                return Err(invalid(format!(
                    "its {bytes} bytes run past the end of the allocation it points into ({:#x}, {} bytes)",
                    facts.range_start, facts.range_size
                )));
            }
        }
        Ok(Raw {
            address,
            len,
            stream: device.stream.clone(),
        })
    }
}

/// Device memory checked against a `Gpu` and ordered on its stream, for the launches of one
/// call. Release it with [`Access::release`] after the last launch that uses it (dropping it
/// does the same, without reporting a driver error).
pub(crate) struct Access<'a> {
    /// The device address.
    pub address: u64,
    /// The number of values.
    pub len: usize,
    /// cudarc's read or write record, made when dropped.
    guard: Option<SyncOnDrop<'a>>,
    /// The memory's home stream, when it is not the Gpu's, and the Gpu's stream.
    rejoin: Option<(Arc<CudaStream>, &'a CudaStream)>,
}

impl Access<'_> {
    /// Ends the access after the last launch that uses the memory: records cudarc's event and
    /// makes the home stream wait for the work queued so far on the `Gpu`'s stream.
    pub(crate) fn release(mut self) -> Result<()> {
        self.guard = None;
        if let Some((home, stream)) = self.rejoin.take() {
            home.join(stream)
                .during("ordering the memory's stream after the reduction")?;
        }
        Ok(())
    }
}

impl Drop for Access<'_> {
    fn drop(&mut self) {
        self.guard = None;
        if let Some((home, stream)) = self.rejoin.take() {
            home.context().record_err(home.join(stream));
        }
    }
}

impl Device {
    /// Checks `memory` against this device and orders it for reading on its stream: the entry
    /// of every input into a call, which then launches on `access.address` and `access.len` and
    /// releases the access after its last launch.
    pub(crate) fn input<'a, T: DeviceCopy>(
        &'a self,
        memory: &'a impl DeviceInput<T>,
    ) -> Result<Access<'a>> {
        let rejoin = self.check_home(memory.home())?;
        let len = memory.count();
        let (address, guard) = memory.read(&self.stream);
        self.access::<T>(address, len, guard, rejoin)
    }

    /// As [`Device::input`], for writing.
    pub(crate) fn output<'a, T: DeviceCopy>(
        &'a self,
        memory: &'a mut impl DeviceOutput<T>,
    ) -> Result<Access<'a>> {
        let rejoin = self.check_home(memory.home())?;
        let len = memory.count();
        let (address, guard) = memory.write(&self.stream);
        self.access::<T>(address, len, guard, rejoin)
    }

    /// The home stream when it is another stream of this device's context; `ForeignBuffer`
    /// when it is of another context.
    fn check_home(&self, home: &Arc<CudaStream>) -> Result<Option<Arc<CudaStream>>> {
        if **home.context() != *self.ctx {
            return Err(Error::ForeignBuffer {
                buffer_ordinal: home.context().ordinal(),
                gpu_ordinal: self.info.ordinal,
            });
        }
        Ok((**home != *self.stream).then(|| home.clone()))
    }

    fn access<'a, T>(
        &'a self,
        address: u64,
        len: usize,
        guard: SyncOnDrop<'a>,
        rejoin: Option<Arc<CudaStream>>,
    ) -> Result<Access<'a>> {
        check_alignment(address, std::mem::align_of::<T>())?;
        let stream = &self.stream;
        self.bind()?;
        if let Some(home) = &rejoin {
            stream
                .join(home)
                .during("ordering the reduction after the memory's stream")?;
        }
        Ok(Access {
            address,
            len,
            guard: Some(guard),
            rejoin: rejoin.map(|home| (home, &**stream)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_is_checked_against_the_item_type() {
        assert!(check_alignment(0x1000, 16).is_ok());
        assert!(check_alignment(0x1004, 4).is_ok());
        assert!(matches!(
            check_alignment(0x1004, 8),
            Err(Error::Misaligned {
                address: 0x1004,
                align: 8
            })
        ));
        assert!(check_alignment(0x1001, 1).is_ok());
    }
}
