//! icefloe: the Apache Iceberg table format, in Rust.
//!
//! Code runs on one of two sides of a cluster: the *driver* (catalogs, commits, scan
//! planning) and the *executors* (reading and writing data files for the tasks the driver
//! planned). The modules, and which side uses each:
//!
//! - [`spec`]: the table spec's data model (types, schemas, partition specs, transforms,
//!   sort orders, snapshots, table and view metadata, name mappings) and its JSON and
//!   single-value encodings. Both sides.
//! - [`io`]: how bytes are read and written ([`FileIO`]: local files, S3, Azure, GCS).
//!   Both sides.
//! - [`error`]: the one [`Error`] type, naming the file and field at fault. Both sides.
//! - [`limits`]: the bound on decompressed bytes against decompression bombs. Both sides.
//! - [`expr`]: row filters, their binding, evaluation on partitions and file metrics, and
//!   projection. Driver (planning) and executors (residual filters).
//! - [`manifest`]: manifests and manifest lists: the model, [`manifest::read_manifest`]
//!   and [`manifest::visit_manifest`], and the writers; [`manifest::v4`], the format v4
//!   content entry of root and leaf manifests (not yet used by planning or commits). Driver.
//! - [`catalog`]: where a table's current metadata file is found and the atomic swap of
//!   that pointer ([`Catalog`]: file system, SQL). Driver.
//! - [`maintenance`]: jobs over a table's files that commit nothing (orphan files).
//!   Driver.
//! - [`commit`]: building the next table metadata (transactions, snapshot producers,
//!   expiry, schema changes) and committing it. Driver.
//! - [`scan`]: scan planning ([`TableScan`]): data files, splits, the delete files that
//!   apply, residuals, and the plan handed to executors. Driver plans; executors read
//!   the tasks.
//! - [`inspect`]: the metadata tables (`snapshots`, `files`, `partitions`, ...) with Java's
//!   schemas and values, as Arrow record batches. Driver.
//! - [`puffin`]: Puffin files and deletion vectors. Driver (writing, planning) and
//!   executors (applying deletes).
//! - [`arrow`]: Iceberg types and values as Arrow, transforms on arrays, manifests as
//!   record batches. Executors, and the driver for manifests as Arrow.
//! - [`write`]: writing data and delete files: locations, Parquet, partitioning rows.
//!   Executors.
//! - `parallel` (private): indexed work on plain threads, for planning and the metadata
//!   tables.
//!
//! The types most users need are re-exported here.

#![warn(unreachable_pub)]

pub mod arrow;
pub mod catalog;
pub mod commit;
pub mod error;
pub mod expr;
pub mod inspect;
pub mod io;
pub mod limits;
pub mod maintenance;
pub mod manifest;
mod parallel;
pub mod puffin;
pub mod read;
pub mod scan;
pub mod spec;
pub mod write;

pub use catalog::Catalog;
pub use commit::Transaction;
pub use error::{Error, Result};
pub use expr::Expression;
pub use io::{FileIO, FileIOProperties, LocalFileIO};
pub use scan::{ScanPlan, TableScan};
pub use spec::partition::PartitionSpec;
pub use spec::snapshot::Snapshot;
pub use spec::sort::SortOrder;
pub use spec::table_metadata::TableMetadata;
pub use spec::view_metadata::ViewMetadata;
pub use spec::{Schema, Type};

/// The highest table format version this library plans, commits and writes manifests for.
pub const MAX_FORMAT_VERSION: i32 = 3;

/// The highest `format-version` of table metadata this library parses and writes back.
/// Version 4 (the single-file-commits proposal, see `docs/v4.md`) is read and written as
/// metadata only: planning or committing a v4 table fails with [`Error::Unsupported`]
/// until its root manifests are implemented, so a v4 table is never treated as v3.
pub const MAX_TABLE_METADATA_FORMAT_VERSION: i32 = 4;

/// The first format version whose snapshots point to a root manifest, whose table
/// `location` is optional, and whose paths may be relative to that location.
pub const V4: i32 = 4;
