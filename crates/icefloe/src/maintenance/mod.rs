//! Table maintenance: jobs that look at a table's files and clean up what no metadata
//! reaches ([`orphan_files`], Java's `DeleteOrphanFiles` action), and the planning rules of
//! compaction ([`rewrite_data_files`], Java's `BinPackRewriteFilePlanner`), whose groups
//! the caller reads, writes and commits, and of `rewrite_position_delete_files`
//! ([`rewrite_position_deletes`], Java's `RewritePositionDeleteFilesSparkAction`).

pub mod dangling_deletes;
pub mod orphan_files;
pub mod rewrite_data_files;
pub mod rewrite_position_deletes;

pub use dangling_deletes::{find_dangling_deletes, DanglingDelete};
pub use orphan_files::{DeleteOrphanFiles, OrphanFilesResult, PrefixMismatchMode};
pub use rewrite_data_files::{
    plan_rewrite_data_files, RewriteDataFilesOptions, RewriteDataFilesPlan, RewriteFileGroup,
    RewriteStrategy,
};
pub use rewrite_position_deletes::{
    plan_rewrite_position_deletes, rewrite_position_delete_unit, PositionDeleteUnit,
    RewritePositionDeletesGroup, RewritePositionDeletesOptions, RewritePositionDeletesPlan,
};
