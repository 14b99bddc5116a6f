//! What the sections of `bench portable` share: running one alone (`bench portable-plain`,
//! `portable-seg`, `portable-axes`, `portable-scan`), and a row comparing the portable mode with
//! the default.

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::output::report;
use reduce_cuda::{Gpu, Result};

/// One section of `bench portable` alone, as `bench <name>`: `run` writes its lines and returns
/// its CSV (`<name>.csv`; the lines in `<name>.txt`).
pub(super) fn section(
    args: &Args,
    name: &str,
    run: impl FnOnce(&Gpu, &BenchKernels, &mut Vec<String>) -> Result<String>,
) -> Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let mut lines = vec![format!("device {}", gpu.info().name)];
    let csv = run(&gpu, &kernels, &mut lines)?;
    std::fs::write(args.out.join(format!("{name}.csv")), csv).expect("writing the section's CSV");
    report(&args.out, &format!("{name}.txt"), &lines);
    Ok(())
}

/// "yes" or "NO".
pub(super) fn verdict(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "NO"
    }
}

/// A case timed in the default and the portable mode (ms), with `of(ms)` its throughput as a
/// fraction of a reference named `ratio` (`×roof`, `×plain`), whether the portable output has
/// the CPU's bits (`cpu_bits`: yes, NO or unchecked) and its own over a second run (`repeats`),
/// and its hash (`bits`): the CSV cells (default_ms, portable_ms, portable_cost, the two
/// ratios, cpu_bits, repeat_bits, bits) and the line's text.
pub(super) fn compared(
    (default_ms, portable_ms): (f32, f32),
    (ratio, of): (&str, impl Fn(f32) -> f64),
    cpu_bits: &str,
    repeats: bool,
    bits: &str,
) -> (String, String) {
    let cells = [
        format!("{default_ms:.6}"),
        format!("{portable_ms:.6}"),
        format!("{:.3}", portable_ms / default_ms),
        format!("{:.3}", of(default_ms)),
        format!("{:.3}", of(portable_ms)),
        cpu_bits.to_string(),
        verdict(repeats).to_string(),
        bits.to_string(),
    ];
    let line = format!(
        "{} / {} ms  cost {}  {ratio} {} / {}  cpu bits {} repeat {} bits {}",
        cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7]
    );
    (cells.join(","), line)
}
