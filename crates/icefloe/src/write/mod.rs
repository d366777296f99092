//! Writing data files (the executor side of a write): partitioning Arrow record batches
//! by a partition spec, collecting column metrics as Java's Parquet writer does, and
//! turning what a Parquet writer reports into `data_file` entries a commit can add.
//!
//! The Parquet encoding is done by [`data_writer`] (the JVM connector) or by the caller
//! (pyarrow in the Python package); this
//! module needs only the table's schema, spec, sort order and properties, so it runs where
//! no catalog is reachable.

pub mod data_writer;
pub mod delete_writer;
pub mod human;
pub mod location;
pub mod metrics;
pub mod metrics_config;
pub mod partition;
pub mod position_deletes;
pub mod scanned_deletes;
pub mod truncate;

#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat, ManifestEntry, ManifestStatus};
use crate::spec::{Literal, StructType};
use metrics::FileMetrics;

/// What a Parquet writer reports about a file it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenFile {
    pub path: String,
    pub file_size_in_bytes: i64,
    /// The partition tuple of the file's rows (empty when unpartitioned).
    pub partition: Vec<Option<Literal>>,
    /// Compressed bytes of each leaf column, in Parquet column order
    /// ([`metrics::leaves`]); summed over the row groups.
    pub column_sizes: Vec<i64>,
    /// The starting offset of each row group.
    pub split_offsets: Vec<i64>,
    pub sort_order_id: Option<i32>,
}

/// The `data_file` of a written Parquet file with its metrics. `leaf_ids` are the field
/// ids of the file's columns in order and `measured` those whose metrics mode is not
/// `none` (only those get a column size, as in Java).
pub fn data_file(
    written: WrittenFile,
    metrics: FileMetrics,
    leaf_ids: &[i32],
    measured: &[i32],
) -> Result<DataFile> {
    if written.column_sizes.len() != leaf_ids.len() {
        return Err(Error::invalid_argument(format!(
            "{}: {} column sizes for {} columns",
            written.path,
            written.column_sizes.len(),
            leaf_ids.len()
        )));
    }
    let column_sizes = leaf_ids
        .iter()
        .zip(&written.column_sizes)
        .filter(|(id, _)| measured.contains(id))
        .map(|(id, size)| (*id, *size))
        .collect();
    let mut split_offsets = written.split_offsets;
    split_offsets.sort_unstable();
    let mut f = DataFile::new(
        DataContentType::Data,
        written.path,
        FileFormat::Parquet,
        written.partition,
        metrics.record_count,
        written.file_size_in_bytes,
    );
    f.column_sizes = Some(column_sizes);
    f.value_counts = Some(metrics.value_counts);
    f.null_value_counts = Some(metrics.null_value_counts);
    f.nan_value_counts = Some(metrics.nan_value_counts);
    f.lower_bounds = Some(metrics.lower_bounds);
    f.upper_bounds = Some(metrics.upper_bounds);
    f.split_offsets = Some(split_offsets);
    f.sort_order_id = written.sort_order_id;
    Ok(f)
}

/// The partition tuple in row `row` of a partition struct column (one child per field of
/// the partition type, as `crate::arrow::manifest::entries_schema` has it).
pub fn partition_from_struct(
    partition: &arrow_array::StructArray,
    row: usize,
    partition_type: &StructType,
) -> Result<Vec<Option<Literal>>> {
    if partition.num_columns() != partition_type.fields.len() {
        return Err(Error::invalid_argument(format!(
            "the partition has {} fields, the partition spec {}",
            partition.num_columns(),
            partition_type.fields.len()
        )));
    }
    partition_type
        .fields
        .iter()
        .zip(partition.columns())
        .map(|(f, c)| {
            let ty = f.field_type.as_primitive().ok_or_else(|| {
                Error::unsupported(format!("partition field '{}' is not primitive", f.name))
            })?;
            crate::arrow::array_value(c.as_ref(), row, ty)
        })
        .collect()
}

/// Data files as record batch rows in the form of `crate::arrow::manifest::entries_schema`
/// (ADDED entries), which `crate::arrow::manifest::batch_to_entries` reads back.
pub fn data_files_to_batch(
    files: Vec<DataFile>,
    partition_type: &StructType,
) -> Result<arrow_array::RecordBatch> {
    let entries: Vec<ManifestEntry> = files.into_iter().map(added_entry).collect();
    crate::arrow::manifest::entries_to_batch(&entries, partition_type)
}

/// A new data file as the manifest entry a commit adds: status ADDED, snapshot id and
/// sequence numbers left to inherit from the commit.
pub fn added_entry(file: DataFile) -> ManifestEntry {
    ManifestEntry {
        status: ManifestStatus::Added,
        snapshot_id: None,
        sequence_number: None,
        file_sequence_number: None,
        data_file: file,
    }
}
