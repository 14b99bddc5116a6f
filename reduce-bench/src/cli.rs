//! The command line of `bench`: `bench MODE [--quick] [--out DIR] [--cub FILE] [--torch FILE]
//! [--layouts DIR] [--log2 N] [--items N] [--validated]`.

use std::path::PathBuf;

/// The mode and the options every mode reads what it needs from.
pub struct Args {
    /// The mode (default `plain`).
    pub mode: String,
    /// Fewer sizes or variants (for A/B runs and short device commands).
    pub quick: bool,
    /// Where CSV, SVG and text reports go.
    pub out: PathBuf,
    /// The output of a CUB anchor from the same device command.
    pub cub: Option<PathBuf>,
    /// The output of a PyTorch anchor from the same device command.
    pub torch: Option<PathBuf>,
    /// Where `seglayouts` writes (and the anchors read) the segmented layouts.
    pub layouts: PathBuf,
    /// The items, as a power of two, of the modes that take one size (`axes`: default 26).
    pub log2: Option<u32>,
    /// The items, any count, of `segsweep` and `segmented` (the other modes do not read it),
    /// before `log2`.
    pub items: Option<u64>,
    /// `segsweep`: our rows check their layouts instead of trusting them.
    pub validated: bool,
}

/// Parses the process's arguments; exits with 2 on an unknown one.
pub fn parse_args() -> Args {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "plain".into());
    let mut parsed = Args {
        mode,
        quick: false,
        out: PathBuf::from("bench-out"),
        cub: None,
        torch: None,
        layouts: PathBuf::from("/tmp/reduce-layouts"),
        log2: None,
        items: None,
        validated: false,
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => parsed.quick = true,
            "--validated" => parsed.validated = true,
            "--out" => parsed.out = PathBuf::from(args.next().expect("--out DIR")),
            "--cub" => parsed.cub = Some(PathBuf::from(args.next().expect("--cub FILE"))),
            "--torch" => parsed.torch = Some(PathBuf::from(args.next().expect("--torch FILE"))),
            "--layouts" => parsed.layouts = PathBuf::from(args.next().expect("--layouts DIR")),
            "--log2" => {
                let n = args.next().and_then(|v| v.parse().ok());
                parsed.log2 = Some(
                    n.filter(|&n| (10..=31).contains(&n))
                        .expect("--log2 N, 10 to 31"),
                );
            }
            "--items" => {
                let n = args.next().and_then(|v| v.parse().ok());
                parsed.items = Some(
                    n.filter(|&n| (1024..=1u64 << 31).contains(&n))
                        .expect("--items N, 1024 to 2^31"),
                );
            }
            other => {
                eprintln!("unknown argument {other}\nusage: bench MODE [--quick] [--out DIR] [--cub FILE] [--torch FILE] [--layouts DIR] [--log2 N] [--items N] [--validated]");
                std::process::exit(2);
            }
        }
    }
    parsed
}
