//! The one error type of the runtime. Nothing in the public API panics on bad input or on a
//! missing driver: every failure arrives here.

use reduce_core::LayoutError;
use thiserror::Error;

/// Everything that can go wrong between a host slice and a reduced value.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    #[error("the CUDA driver library (libcuda.so) was not found: no NVIDIA driver is installed or it is not on the loader path")]
    DriverMissing,
    /// `libnvrtc` could not be loaded, so kernels cannot be compiled.
    #[error("the NVRTC library (libnvrtc.so) was not found: install the CUDA toolkit or the `nvidia-cuda-nvrtc` wheel and put its lib folder on LD_LIBRARY_PATH")]
    NvrtcMissing,
    /// The driver or NVRTC library loaded but lacks entry points this library calls: it is
    /// older than the library supports (the driver of CUDA 11.7, NVRTC 11.1).
    #[error(
        "the {library} library is too old ({version}): it lacks {missing}; install a newer one"
    )]
    LibraryTooOld {
        /// `"CUDA driver"` or `"NVRTC"`.
        library: &'static str,
        /// The version it reports.
        version: String,
        /// The entry points it lacks.
        missing: String,
    },
    /// The driver loaded but reports no usable device with this ordinal.
    #[error("no CUDA device {ordinal}: {reason}")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// What the driver said.
        reason: String,
    },
    /// An allocation did not fit: in device memory (after the memory pool handed back what it
    /// kept), or under the pool's cap ([`crate::Gpu::set_pool_cap`]).
    #[error(
        "device out of memory: asked for {requested} bytes, {free} of {total} bytes free; the \
         memory pool holds {pool_held} bytes, {pool_in_use} in use{}",
        cap.map_or(String::new(), |c| format!(", under a cap of {c}"))
    )]
    OutOfMemory {
        /// Bytes requested.
        requested: usize,
        /// Free device memory at the time, in bytes.
        free: usize,
        /// Total device memory, in bytes.
        total: usize,
        /// Device memory the library's pool held at the time (in use or kept for reuse).
        pool_held: usize,
        /// Device memory in the library's live buffers at the time.
        pool_in_use: usize,
        /// The pool's cap, if one is set.
        cap: Option<usize>,
    },
    /// A host buffer of `requested` bytes (a download, the identities of
    /// [`crate::Gpu::identities`]) could not be allocated.
    #[error("host out of memory: could not allocate {requested} bytes for {what}")]
    HostOutOfMemory {
        /// Bytes requested.
        requested: usize,
        /// What the buffer was for.
        what: &'static str,
    },
    /// The device's context was lost to a fault inside a kernel (an illegal or misaligned
    /// address, an illegal instruction, a trap, a failed device `assert`) or a device that
    /// stopped answering: the driver fails every call in it from then on, and so does every
    /// call of a `Gpu` of it, at once. `launch` names the first of this library's launches that
    /// had not completed; `None` when none was pending (the fault was another user's of the
    /// context). Drop every `Gpu`, buffer and stream of the context; the next
    /// [`crate::Gpu::new`] then resets the device's primary context and tries a new one. A
    /// holder of the primary context outside this library (PyTorch, a cudarc context of yours)
    /// keeps the lost one alive, and `Gpu::new` returns this error until it lets go. The driver
    /// may keep the fault for the whole process (CUDA 13's 580 driver does: every new context
    /// fails with the fault's error, as CUDA documents for these errors); then `Gpu::new`
    /// returns this error for as long as the process lives, and only a new process can use the
    /// device.
    #[error("{}", lost_message(launch, source))]
    DeviceLost {
        /// The launch the fault is blamed on.
        launch: Option<LaunchInfo>,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver error in {during}: {source}")]
    Driver {
        /// What the runtime was doing.
        during: &'static str,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// NVRTC rejected the generated (or hand-written) kernel source.
    #[error("{0}")]
    Compile(Box<CompileFailure>),
    /// A segment layout (owners or offsets) is malformed.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An algorithm parameter is invalid (block size, matrix shape, shared memory, ...).
    #[error("invalid parameters for {algorithm}: {reason}")]
    InvalidConfig {
        /// The algorithm's name (the kernel family's, `seg_merge`, `scan`, ..., where a kernel's
        /// static shared memory is past what a block may declare).
        algorithm: &'static str,
        /// Which rule was broken.
        reason: String,
    },
    /// A size is past what the runtime can index.
    #[error("{what} = {value} is past the limit {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// The value given.
        value: u64,
        /// The largest value accepted.
        limit: u64,
    },
    /// Two buffers that must have the same length do not.
    #[error("length mismatch: {what} ({left} vs {right})")]
    LengthMismatch {
        /// What was compared.
        what: &'static str,
        /// First length.
        left: usize,
        /// Second length.
        right: usize,
    },
    /// A run-time array index in the monoid's device code was out of bounds (where Rust would
    /// have panicked). The device read or wrote element 0 instead, never memory out of bounds;
    /// the result is discarded. Reported for monoids with `CudaMonoid::CAN_FAULT`.
    #[error("index out of bounds in the device code of monoid `{monoid}`: the len is {len} but the index is {index} (Rust would panic here; the result was discarded)")]
    DeviceFault {
        /// The monoid's name.
        monoid: &'static str,
        /// The first index out of bounds.
        index: u64,
        /// The length of the array it indexed.
        len: u64,
    },
    /// An integer division or remainder in the monoid's device code by zero, or (`overflow`)
    /// `MIN / -1` or `MIN % -1` by the operators, where Rust would have panicked. The device
    /// went on with 0 (the wrapped value for `MIN / -1`); the result is discarded. Reported for
    /// monoids with `CudaMonoid::CAN_FAULT` (a division by a value that is not a literal other
    /// than 0 and -1 makes a monoid one); the CPU backend reports the same error.
    #[error("{} in the device code of monoid `{monoid}` (Rust would panic here; the result was discarded)", if *overflow { "integer division overflow (MIN / -1)" } else { "integer division by zero" })]
    DivisionFault {
        /// The monoid's name.
        monoid: &'static str,
        /// `MIN / -1` or `MIN % -1`, not a division by zero.
        overflow: bool,
    },
    /// Memory of another CUDA context or device was passed: a buffer of a `Gpu` on another
    /// device or context, a cudarc slice of another context, a raw address on another device.
    #[error("the memory lives in another CUDA context or device (device {buffer_ordinal}) than this Gpu's (device {gpu_ordinal})")]
    ForeignBuffer {
        /// The ordinal of the memory's device.
        buffer_ordinal: usize,
        /// The ordinal of this Gpu's device.
        gpu_ordinal: usize,
    },
    /// A check inside the runtime failed: a bug in reduce-cuda (please report it).
    #[error("internal error in reduce-cuda: {0}")]
    Internal(String),
    /// A device address is not a multiple of the alignment of the values it should hold.
    #[error("the device address {address:#x} is not a multiple of {align}, the alignment of the values it should hold")]
    Misaligned {
        /// The address.
        address: u64,
        /// The alignment required (`align_of` the value type).
        align: usize,
    },
    /// A raw device address does not name device memory the reduction may use.
    #[error("the device address {address:#x} cannot be used: {reason}")]
    InvalidPointer {
        /// The address.
        address: u64,
        /// What the driver said of it.
        reason: String,
    },
}

/// A launch of this library: what [`Error::DeviceLost`] blames a fault on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaunchInfo {
    /// The monoid's name ([`reduce_core::CudaMonoid::CUDA_NAME`]).
    pub monoid: &'static str,
    /// The kernel family: the kernel file (`shuffle`, `seg_shuffle`, ...).
    pub family: &'static str,
    /// The kernel's entry point.
    pub kernel: &'static str,
    /// The algorithm (`Shuffle`, `SegShuffle`, ...), or `helper` for a helper kernel of the
    /// segmented calls (identity fill, layout checks).
    pub algorithm: &'static str,
}

impl std::fmt::Display for LaunchInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kernel `{}` of {}.cu (algorithm {}) for monoid `{}`",
            self.kernel, self.family, self.algorithm, self.monoid
        )
    }
}

fn lost_message(launch: &Option<LaunchInfo>, source: &cudarc::driver::DriverError) -> String {
    let blame = match launch {
        Some(launch) => format!("in the {launch}"),
        None => "while none of this library's launches was pending (another user of the \
                 context faulted)"
            .into(),
    };
    format!(
        "the CUDA context was lost to a device fault ({source}) {blame}: every call on it \
         fails. Drop every Gpu, buffer and stream of it; the next Gpu::new then tries a new \
         primary context (a holder of the primary context outside this library, such as \
         PyTorch or a cudarc context of yours, keeps the lost one alive). If the driver keeps \
         the fault for the whole process, as CUDA 13's does, only a new process can use the \
         device; Backend::auto() falls back to the CPU"
    )
}

/// Why NVRTC rejected a kernel: the log, and the generated line it points at.
#[derive(Clone, Debug)]
pub struct CompileFailure {
    /// The program name NVRTC saw (e.g. `reduce_matrix.cu`).
    pub program: String,
    /// The NVRTC log, unchanged.
    pub log: String,
    /// The first line the log names as an error, 1-based, in the generated source.
    pub line: Option<usize>,
    /// That line's text.
    pub source_line: Option<String>,
    /// Which part of the generated source holds that line ("prelude", "monoid Affine", ...).
    pub section: Option<String>,
    /// The options passed to NVRTC.
    pub options: Vec<String>,
}

impl std::fmt::Display for CompileFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NVRTC could not compile {}", self.program)?;
        if let (Some(line), Some(text)) = (self.line, &self.source_line) {
            write!(f, "\n  at line {line}")?;
            if let Some(section) = &self.section {
                write!(f, " (in the {section})")?;
            }
            write!(f, ":\n    {}", text.trim())?;
        }
        write!(f, "\nNVRTC log:\n{}", self.log.trim_end())?;
        write!(f, "\noptions: {}", self.options.join(" "))
    }
}

impl CompileFailure {
    /// (bytes declared, bytes allowed) where ptxas refused the kernel for its static shared
    /// memory ("uses too much shared data (0x… bytes, 0x… max)").
    pub fn static_smem_overflow(&self) -> Option<(u64, u64)> {
        let rest = self.log.split("uses too much shared data (0x").nth(1)?;
        let (need, rest) = rest.split_once(" bytes, 0x")?;
        let (max, _) = rest.split_once(" max)")?;
        Some((
            u64::from_str_radix(need, 16).ok()?,
            u64::from_str_radix(max, 16).ok()?,
        ))
    }
}

impl Error {
    /// A kernel refused for its static shared memory (see
    /// [`CompileFailure::static_smem_overflow`]) as the [`Error::InvalidConfig`] of `algorithm`
    /// that says so: values too large for an algorithm's static arrays are a choice the caller
    /// can change, not a fault of the generated text. Any other error as it is.
    pub(crate) fn static_smem_refusal(self, algorithm: &'static str) -> Error {
        let Error::Compile(failure) = &self else {
            return self;
        };
        let Some((need, max)) = failure.static_smem_overflow() else {
            return self;
        };
        Error::InvalidConfig {
            algorithm,
            reason: format!(
                "its kernel ({}) would declare {need} bytes of static shared memory, past the \
                 {max} a block may: the monoid's values are too large for it (another \
                 algorithm, or a smaller block, may fit)",
                failure.program
            ),
        }
    }
}

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(log: &str) -> Error {
        Error::Compile(Box::new(CompileFailure {
            program: "reduce_seg_merge.cu".into(),
            log: log.into(),
            line: None,
            source_line: None,
            section: None,
            options: Vec::new(),
        }))
    }

    #[test]
    fn static_shared_memory_past_the_limit_is_an_invalid_config() {
        let log =
            "reduce_seg_merge.cu(432): warning #186-D: pointless comparison\nptxas error   : \
                   Entry function 'reduce_seg_merge' uses too much shared data (0x11670 bytes, \
                   0xc000 max)\n";
        match failure(log).static_smem_refusal("seg_merge") {
            Error::InvalidConfig { algorithm, reason } => {
                assert_eq!(algorithm, "seg_merge");
                assert!(
                    reason.contains("71280 bytes of static shared memory"),
                    "{reason}"
                );
                assert!(reason.contains("past the 49152 a block may"), "{reason}");
            }
            other => panic!("{other}"),
        }
        let other = failure("error: identifier \"x\" is undefined");
        assert!(matches!(
            other.static_smem_refusal("seg_merge"),
            Error::Compile(_)
        ));
    }
}
