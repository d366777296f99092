//! Scan planning ("Scan Planning" in the spec): which data files a scan reads, which
//! byte ranges, which delete files apply to each, and the residual filter per file.

pub mod task;

pub use task::{CombinedScanTask, FileScanTask, ScanFile};
