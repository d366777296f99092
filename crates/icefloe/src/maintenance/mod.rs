//! Table maintenance that is not a commit: jobs that look at a table's files and clean up
//! what no metadata reaches ([`orphan_files`], Java's `DeleteOrphanFiles` action).

pub mod orphan_files;

pub use orphan_files::{DeleteOrphanFiles, OrphanFilesResult, PrefixMismatchMode};
