//! The public methods of [`crate::Gpu`], one file per family: `memory.rs` (uploads, downloads,
//! copies, borrowed memory), `plain.rs` (`reduce` and its forms), `segmented.rs`
//! (`reduce_segments`, `reduce_by_owner` and their forms), `axes.rs` (`reduce_axes` and its
//! forms), `scan.rs` (`scan`, `scan_segments`, `scan_by_key` and their forms).

mod axes;
mod memory;
mod plain;
mod scan;
mod segmented;

pub(crate) use scan::check_scan_layout;
pub(crate) use segmented::{check_csr_layout, check_owner_layout, check_seg_config};
