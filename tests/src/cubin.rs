//! What a CUBIN says about one kernel, read from its ELF without a GPU: the stack frame that
//! ptxas gives the kernel (`EIATTR_FRAME_SIZE` in the `.nv.info` section), which is where spilled
//! registers go and what the driver reports as `CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`, and its
//! registers per thread (`EIATTR_REGCOUNT`, the driver's `CU_FUNC_ATTRIBUTE_NUM_REGS`), which
//! cap the blocks an SM holds. The runtime picks SegShuffle's kernel by the frame on the GPU; the
//! NVRTC tests read both here, so that a spill or a lost block per SM shows in CI.

/// `.nv.info` attribute: a kernel's stack frame in bytes (payload: symbol index, bytes).
const EIATTR_FRAME_SIZE: u8 = 0x11;
/// `.nv.info` attribute: a kernel's registers per thread (payload: symbol index, count).
const EIATTR_REGCOUNT: u8 = 0x2f;
/// `.nv.info` entry format with a 16-bit payload length (the others carry at most 2 bytes).
const EIFMT_SVAL: u8 = 0x04;

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// One ELF64 section header: name offset, link, file offset and size.
struct Section {
    name: u32,
    link: u32,
    offset: usize,
    size: usize,
}

fn sections(d: &[u8]) -> Option<Vec<Section>> {
    if d.get(..5)? != b"\x7fELF\x02" {
        return None; // not a 64-bit ELF
    }
    let (table, entry, count) = (u64_at(d, 0x28)?, u16_at(d, 0x3a)?, u16_at(d, 0x3c)?);
    (0..count as usize)
        .map(|i| {
            let at = table + i * entry as usize;
            Some(Section {
                name: u32_at(d, at)?,
                link: u32_at(d, at + 40)?,
                offset: u64_at(d, at + 24)?,
                size: u64_at(d, at + 32)?,
            })
        })
        .collect()
}

fn name_at<'a>(d: &'a [u8], strings: &Section, at: u32) -> Option<&'a str> {
    let start = strings.offset + at as usize;
    let len = d
        .get(start..strings.offset + strings.size)?
        .iter()
        .position(|&b| b == 0)?;
    std::str::from_utf8(&d[start..start + len]).ok()
}

/// The stack frame of `kernel` in `cubin`, in bytes (0: no local memory); `None` when the CUBIN
/// cannot be read or does not say.
pub fn frame_size(cubin: &[u8], kernel: &str) -> Option<u32> {
    attribute(cubin, kernel, EIATTR_FRAME_SIZE)
}

/// The registers per thread of `kernel` in `cubin`; `None` when the CUBIN cannot be read or does
/// not say.
pub fn registers(cubin: &[u8], kernel: &str) -> Option<u32> {
    attribute(cubin, kernel, EIATTR_REGCOUNT)
}

/// The static shared memory of `kernel` in `cubin`, in bytes (the size of its `.nv.shared.`
/// section; 0 without one); `None` when the CUBIN cannot be read.
pub fn shared_bytes(cubin: &[u8], kernel: &str) -> Option<usize> {
    let sections = sections(cubin)?;
    let names = sections.get(u16_at(cubin, 0x3e)? as usize)?;
    let wanted = format!(".nv.shared.{kernel}");
    Some(
        sections
            .iter()
            .find(|s| name_at(cubin, names, s.name) == Some(wanted.as_str()))
            .map_or(0, |s| s.size),
    )
}

/// The 32-bit value of a per-kernel `.nv.info` attribute (payload: symbol index, value).
fn attribute(cubin: &[u8], kernel: &str, wanted: u8) -> Option<u32> {
    let sections = sections(cubin)?;
    let shstrndx = u16_at(cubin, 0x3e)? as usize;
    let names = sections.get(shstrndx)?;
    let named = |want: &str| {
        sections
            .iter()
            .find(|s| name_at(cubin, names, s.name) == Some(want))
    };
    // The kernel's index in the symbol table (24-byte entries, names in the linked table).
    let symtab = named(".symtab")?;
    let strtab = sections.get(symtab.link as usize)?;
    let symbol = (0..symtab.size / 24).find(|&i| {
        u32_at(cubin, symtab.offset + 24 * i)
            .and_then(|at| name_at(cubin, strtab, at))
            .is_some_and(|name| name == kernel)
    })? as u32;
    // The attributes of every kernel: (format, attribute, payload).
    let info = named(".nv.info")?;
    let mut at = info.offset;
    while at + 4 <= info.offset + info.size {
        let (format, attribute) = (cubin[at], cubin[at + 1]);
        if format != EIFMT_SVAL {
            return None; // not seen in the global section; its length would be a guess
        }
        let len = u16_at(cubin, at + 2)? as usize;
        if attribute == wanted && len == 8 && u32_at(cubin, at + 4)? == symbol {
            return u32_at(cubin, at + 8);
        }
        at += 4 + len;
    }
    None
}
