//! Commits ("Commit Conflict Resolution and Retry"): how the next table metadata is made
//! from the current one, and how it replaces it.
//!
//! - `update`: the REST spec's `TableUpdate`s and `TableRequirement`s;
//! - `builder`: applies updates with Java's `TableMetadata.Builder` rules (new tables,
//!   create-or-replace, logs, sequence numbers, row lineage);
//! - `fresh_ids`: the column and partition field ids a new table gets;
//! - `properties`: the `commit.*` properties and the retry policy;
//! - `transaction`: groups changes into one commit, retries, cleans up;
//! - `snapshot`: snapshot producers (fast/merge append, delete, overwrite) and summaries;
//! - `manage_snapshots`: branches, tags, rollback and cherry-pick;
//! - `expire`: snapshot expiry and deletion of the files only expired snapshots reached;
//! - `view`: creating and replacing views (Java's view builder rules).
//!
//! The catalog (`crate::catalog::Catalog`) writes the metadata file and swaps the pointer;
//! nothing here touches a pointer directly.

pub mod builder;
pub mod data_files;
pub mod expire;
pub mod fresh_ids;
pub mod manage_snapshots;
pub mod properties;
pub mod schema_change;
pub mod snapshot;
pub mod transaction;
pub mod update;
pub mod view;

pub use builder::MetadataBuilder;
pub use expire::{ExpireResult, ExpireSnapshots};
pub use manage_snapshots::{ManageSnapshots, SnapshotOp};
pub use snapshot::{manifests_to_rewrite, ManifestLayout, SnapshotKind, SnapshotProducer};
pub use transaction::{
    commit_transactions, create_or_replace_table, create_table, MetadataChange, NewTable,
    PendingChange, Transaction,
};
pub use update::{TableRequirement, TableUpdate};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod builder_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
pub(crate) mod test_catalog;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod commit_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod snapshot_mgmt_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod row_delta_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod v4_tests;
