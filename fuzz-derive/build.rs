//! Writes `$OUT_DIR/programs.rs`: `FUZZ_PROGRAMS` random programs (default 160) from index
//! `FUZZ_FIRST` (default 0) of the run seeded with `FUZZ_SEED` (default fixed), each a module,
//! and the table `ALL` of them. rustc's time grows faster than linearly with the number of
//! programs in one crate: large runs are built in shards of about 1000 (`FUZZ_FIRST`).
//! `FUZZ_LIST` (comma-separated indices) builds just those programs instead.

#[path = "src/gen/mod.rs"]
#[allow(dead_code)]
mod gen;

use std::fmt::Write as _;

fn main() {
    println!("cargo:rerun-if-changed=src/gen");
    println!("cargo:rerun-if-env-changed=FUZZ_PROGRAMS");
    println!("cargo:rerun-if-env-changed=FUZZ_SEED");
    println!("cargo:rerun-if-env-changed=FUZZ_FIRST");
    println!("cargo:rerun-if-env-changed=FUZZ_LIST");
    let first: usize = std::env::var("FUZZ_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let count: usize = std::env::var("FUZZ_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(160);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_f00d);
    let mut src = String::new();
    let mut table = String::new();
    let _ = writeln!(src, "/// The seed the programs were generated from.");
    let _ = writeln!(src, "pub const SEED: u64 = {seed};");
    // `FUZZ_LIST=221,1145`: just those programs (to reproduce a run's mismatches).
    let list: Option<Vec<usize>> = std::env::var("FUZZ_LIST").ok().map(|v| {
        v.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("FUZZ_LIST: comma-separated indices")
            })
            .collect()
    });
    let indices: Vec<usize> = list.unwrap_or_else(|| (first..first + count).collect());
    for i in indices {
        let p = gen::program(seed, i);
        src.push_str(&p.source);
        let name = format!("p{i:05}");
        let leaves: Vec<String> = p
            .leaves
            .iter()
            .map(|(off, s)| format!("({off}, {})", s.code()))
            .collect();
        let _ = writeln!(
            table,
            "    crate::Program {{ index: {i}, name: \"{name}\", size: {}, leaves: &[{}], \
             combine: crate::combine_bytes::<{name}::S>, identity: crate::identity_bytes::<{name}::S>, \
             cuda: <{name}::S as reduce_core::CudaMonoid>::cuda_source }},",
            p.size,
            leaves.join(", ")
        );
        // The generator's layout is the compiler's.
        let _ = writeln!(
            src,
            "const _: () = assert!(core::mem::size_of::<{name}::S>() == {});",
            p.size
        );
    }
    let _ = writeln!(
        src,
        "/// Every generated program.\npub static ALL: &[crate::Program] = &[\n{table}];"
    );
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("programs.rs");
    std::fs::write(out, src).unwrap();
}
