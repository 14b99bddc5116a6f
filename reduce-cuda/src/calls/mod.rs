//! The public methods of [`crate::Gpu`], one file per family: `memory.rs` (uploads, downloads,
//! copies, borrowed memory), `plain.rs` (`reduce` and its forms), `segmented.rs`
//! (`reduce_segments`, `reduce_by_owner` and their forms), `axes.rs` (`reduce_axes` and its
//! forms). The next families (scans) add theirs here.

mod axes;
mod memory;
mod plain;
mod segmented;
