//! Scan planning ("Scan Planning" in the spec): which data files a scan reads, which
//! byte ranges, which delete files apply to each, and the residual filter per file.

pub mod split;
pub mod task;

pub use split::{pack_tasks, plan_tasks, split_file, SplitOptions};
pub use task::{CombinedScanTask, FileScanTask, ScanFile};
