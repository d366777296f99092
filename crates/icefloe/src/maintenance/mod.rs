//! Table maintenance: jobs that look at a table's files and clean up what no metadata
//! reaches ([`orphan_files`], Java's `DeleteOrphanFiles` action), and the planning rules of
//! compaction ([`rewrite_data_files`], Java's `BinPackRewriteFilePlanner`), whose groups
//! the caller reads, writes and commits.

pub mod dangling_deletes;
pub mod orphan_files;
pub mod rewrite_data_files;

pub use dangling_deletes::{find_dangling_deletes, DanglingDelete};
pub use orphan_files::{DeleteOrphanFiles, OrphanFilesResult, PrefixMismatchMode};
pub use rewrite_data_files::{
    plan_rewrite_data_files, RewriteDataFilesOptions, RewriteDataFilesPlan, RewriteFileGroup,
    RewriteStrategy,
};
