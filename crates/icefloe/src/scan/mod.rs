//! Scan planning ("Scan Planning" in the spec): which data files a scan reads, which
//! byte ranges, which delete files apply to each, and the residual filter per file.

pub mod aggregate;
pub mod delete_index;
pub mod partition_key;
pub mod plan_batches;
pub mod planner;
pub mod split;
pub mod task;
pub mod task_groups;

#[cfg(test)]
mod delete_index_tests;

pub use aggregate::{AggregateValue, MetadataAggregate};
pub use delete_index::DeleteFileIndex;
pub use partition_key::PartitionKey;
pub use planner::changelog::{ChangelogOperation, ChangelogScanTask};
pub use planner::{ScanMetrics, ScanPlan, SnapshotSelection, TableScan};
pub use split::{pack_tasks, plan_tasks, split_file, SplitOptions};
pub use task::{CombinedScanTask, FileScanTask, ScanFile};
#[cfg(test)]
mod aggregate_tests;
