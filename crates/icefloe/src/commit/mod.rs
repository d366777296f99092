//! Commits ("Commit Conflict Resolution and Retry"): how the next table metadata is made
//! from the current one, and how it replaces it.
//!
//! - `update`: the REST spec's `TableUpdate`s and `TableRequirement`s;
//! - `builder`: applies updates with Java's `TableMetadata.Builder` rules (new tables,
//!   create-or-replace, logs, sequence numbers, row lineage);
//! - `fresh_ids`: the column and partition field ids a new table gets;
//! - `properties`: the `commit.*` properties and the retry policy;
//!
//! The catalog (`crate::catalog::Catalog`) writes the metadata file and swaps the pointer;
//! nothing here touches a pointer directly.

pub mod builder;
pub mod fresh_ids;
pub mod properties;
pub mod update;

pub use builder::MetadataBuilder;
pub use update::{TableRequirement, TableUpdate};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod builder_tests;
