//! The modes of `bench`, one module each, by the name on the command line.

use crate::cli::Args;

mod api;
mod argmax;
mod axes;
mod fig4;
mod fig5;
mod interop;
mod jit;
mod large;
mod lse;
mod ncu;
mod overhead;
mod plain;
mod portable;
mod portable_axes;
mod portable_scans;
mod sanitize;
mod scan;
mod section;
mod segargmax;
mod seglayouts;
mod segmented;
mod segncu;
mod segsweep;
mod segvariants;
mod segwide;
mod variants;
mod views;

/// Runs `args.mode`; exits with 2 on an unknown mode.
pub fn run(args: &Args) -> reduce_cuda::Result<()> {
    match args.mode.as_str() {
        "plain" => plain::plain(args),
        "api" => api::api(args),
        "fig4" => fig4::fig4(args),
        "jit" => jit::jit(args),
        "variants" => variants::variants(args),
        "ncu" => ncu::ncu(),
        "overhead" => overhead::overhead(args),
        "seglayouts" => seglayouts::seglayouts(args),
        "segmented" => segmented::segmented(args),
        "segsweep" => segsweep::segsweep(args),
        "segwide" => segwide::segwide(args),
        "fig5" => fig5::fig5(args),
        "segvariants" => segvariants::segvariants(args),
        "segncu" => segncu::segncu(),
        "sanitize" => sanitize::sanitize(args),
        "interop" => interop::interop(args),
        "views" => views::views(args),
        "argmax" => argmax::argmax(args),
        "segargmax" => segargmax::segargmax(args),
        "lse" => lse::lse(args),
        "large" => large::large(args),
        "axes" => axes::axes(args),
        "scan" => scan::scan(args),
        "portable" => portable::portable(args),
        "portable-axes" => portable_axes::portable_axes(args),
        "portable-plain" => portable::portable_plain(args),
        "portable-scan" => portable_scans::portable_scan(args),
        "portable-seg" => portable::portable_seg(args),
        other => {
            eprintln!("unknown mode {other}: plain, api, fig4, jit, variants, ncu, overhead, seglayouts, segmented, segsweep, segwide, fig5, segvariants, segncu, sanitize, interop, views, argmax, segargmax, lse, large, axes, scan, portable, portable-axes, portable-plain, portable-scan or portable-seg");
            std::process::exit(2);
        }
    }
}
