//! The scans' kernel (kernels/scan.cu) on the emulator.

use super::{emulated_text, index_bytes, Build, Order};
use reduce_core::{CudaMonoid, SegIndex};
use reduce_cuda::testing::scan_kernel_source;

/// The host side of a scan launch.
const SCAN_MAIN_CPP: &str = include_str!("../../emu/scan_main.cpp");

/// A scan kernel (kernels/scan.cu) compiled for the emulator: one block per tile, run in order
/// (ReduceThenScan: its four launches in turn; LookAhead: three persistent blocks in turn).
pub struct EmulatedScan {
    build: Build,
    /// Items per tile.
    pub tile: u64,
    /// u64 offsets or keys (else u32).
    pub wide: bool,
    /// scan_main.cpp's mode: 0 LookBack's one launch, 1 ReduceThenScan's four, 2 LookAhead's.
    mode: u64,
    m_size: usize,
}

/// One scan launch: the items' bytes, whether exclusive, the offsets or keys (none: plain), and
/// whether in place (the kernels read the items from the outputs' buffer; not for lifted items).
pub struct ScanCase {
    pub n: u64,
    pub exclusive: bool,
    pub items: Vec<u8>,
    pub index: Vec<u64>,
    pub in_place: bool,
}

/// The scan kernel of `config` for `M` over `I` layouts: plain (`None`), by offsets
/// (`Some(true)`) or by keys (`Some(false)`).
pub fn scan_kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: reduce_cuda::ScanConfig,
    offsets: Option<bool>,
) -> EmulatedScan {
    scan_kernel_with::<M, I>(cxx, config, offsets, &[])
}

/// [`scan_kernel`] with `defines` set before the kernel's text (the parameters a kernel lets
/// tests set, such as LookAhead's `R_AHEAD_ROWS`).
pub fn scan_kernel_with<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: reduce_cuda::ScanConfig,
    offsets: Option<bool>,
    defines: &[(&str, u32)],
) -> EmulatedScan {
    let set: String = defines.iter().map(|(n, v)| format!("_{n}{v}")).collect();
    scan_kernel_edited::<M, I>(cxx, config, offsets, &set, |text| {
        let defined: String = defines
            .iter()
            .map(|(name, value)| format!("#define {name} {value}\n"))
            .collect();
        text.insert_str(0, &defined);
    })
}

/// [`scan_kernel`] with its text changed by `edit` first (`set` names the change in the
/// kernel's directory).
pub fn scan_kernel_edited<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: reduce_cuda::ScanConfig,
    offsets: Option<bool>,
    set: &str,
    edit: impl FnOnce(&mut String),
) -> EmulatedScan {
    let (source, (threads, items)) = scan_kernel_source::<M, I>(config, offsets).unwrap();
    let mut text = emulated_text(&source);
    edit(&mut text);
    let form = match offsets {
        None => "plain",
        Some(true) => "offsets",
        Some(false) => "keys",
    };
    let tag = format!(
        "scan_{}_b{threads}_k{items}_{form}_{}{set}",
        M::CUDA_NAME,
        I::WIDE as u8
    );
    let build = Build::compile(cxx, &text, ("scan_main.cpp", SCAN_MAIN_CPP), &tag);
    EmulatedScan {
        build,
        tile: threads as u64 * items as u64,
        wide: I::WIDE,
        mode: match config.algorithm {
            reduce_cuda::ScanAlgorithm::ReduceThenScan => 1,
            reduce_cuda::ScanAlgorithm::LookAhead => 2,
            _ => 0,
        },
        m_size: std::mem::size_of::<M>(),
    }
}

impl EmulatedScan {
    /// Runs the cases in one process, the fibers of each block in `order`; per case the
    /// outputs' bytes. Panics if the kernel fails.
    pub fn run(&self, cases: &[ScanCase], order: Order) -> Vec<Vec<u8>> {
        self.try_run(cases, order).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`EmulatedScan::run`], or how the kernel failed (the emulator's or AddressSanitizer's
    /// report, a deadlock, or a tile count not reached).
    pub fn try_run(&self, cases: &[ScanCase], order: Order) -> Result<Vec<Vec<u8>>, String> {
        let mut input = Vec::new();
        for c in cases {
            let header = [
                c.n,
                c.exclusive as u64,
                c.index.len() as u64,
                self.mode,
                c.in_place as u64,
            ];
            for h in header {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = self.build.try_execute(input, order)?;
        let mut at = 0;
        cases
            .iter()
            .map(|c| {
                let ok = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                if ok != 1 {
                    return Err(
                        "a deadlock, or the tile counter did not reach the tile count".into(),
                    );
                }
                at += 8;
                let len = c.n as usize * self.m_size;
                at += len;
                Ok(bytes[at - len..at].to_vec())
            })
            .collect()
    }
}
