//! icefloe: the Apache Iceberg table format, in Rust.
//!
//! `spec` holds the data model of the table spec (types, schemas, partition specs,
//! transforms, sort orders, snapshots, table and view metadata, name mappings) with its
//! JSON and single-value encodings; `io` is how the library reads bytes.

pub mod arrow;
pub mod catalog;
pub mod commit;
pub mod error;
pub mod expr;
pub mod io;
pub mod limits;
pub mod manifest;
pub mod puffin;
pub mod scan;
pub mod spec;
pub mod write;

pub use error::{Error, Result};

/// The highest table format version this library reads and writes.
pub const MAX_FORMAT_VERSION: i32 = 3;
