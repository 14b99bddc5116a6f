//! The command line of `bench`: `bench MODE [--quick] [--out DIR] [--cub FILE] [--torch FILE]
//! [--layouts DIR]`.

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
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => parsed.quick = true,
            "--out" => parsed.out = PathBuf::from(args.next().expect("--out DIR")),
            "--cub" => parsed.cub = Some(PathBuf::from(args.next().expect("--cub FILE"))),
            "--torch" => parsed.torch = Some(PathBuf::from(args.next().expect("--torch FILE"))),
            "--layouts" => parsed.layouts = PathBuf::from(args.next().expect("--layouts DIR")),
            other => {
                eprintln!("unknown argument {other}\nusage: bench MODE [--quick] [--out DIR] [--cub FILE] [--torch FILE] [--layouts DIR]");
                std::process::exit(2);
            }
        }
    }
    parsed
}
