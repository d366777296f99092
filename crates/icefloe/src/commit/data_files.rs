//! Data files to commit, from Arrow: rows in the form of [`crate::arrow::manifest`]'s
//! manifest entries (what the Python data-file writer produces). The entry columns
//! (`status`, `snapshot_id`, sequence numbers) may be left out: a file to add has none yet.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};

use crate::arrow::manifest::batch_to_entries;
use crate::error::{Error, Result};
use crate::manifest::{DataFile, ManifestStatus};
use crate::spec::types::StructType;

/// The data files of `batch`, whose `partition` column has the partition type of the
/// spec the files were written for.
pub fn data_files_from_batch(
    batch: &RecordBatch,
    partition_type: &StructType,
) -> Result<Vec<DataFile>> {
    let entries = if batch.column_by_name("status").is_some() {
        batch_to_entries(batch, partition_type)?
    } else {
        let status: ArrayRef = Arc::new(Int32Array::from(vec![
            ManifestStatus::Added.id();
            batch.num_rows()
        ]));
        let mut fields: Vec<Arc<Field>> = batch.schema().fields().iter().cloned().collect();
        fields.push(Arc::new(Field::new("status", DataType::Int32, false)));
        let mut columns = batch.columns().to_vec();
        columns.push(status);
        let with_status = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)
            .map_err(|e| Error::invalid_argument(format!("cannot add a status column: {e}")))?;
        batch_to_entries(&with_status, partition_type)?
    };
    entries
        .into_iter()
        .map(|e| {
            if e.status == ManifestStatus::Added {
                Ok(e.data_file)
            } else {
                Err(Error::invalid_argument(format!(
                    "{} has status {:?}: only new files can be committed",
                    e.data_file.file_path, e.status
                )))
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::arrow::manifest::entries_to_batch;
    use crate::manifest::{DataContentType, FileFormat, ManifestEntry};
    use crate::spec::literal::Literal;
    use crate::spec::types::{NestedField, PrimitiveType, Type};

    #[test]
    fn data_files_round_trip_with_or_without_entry_columns() {
        let ptype = StructType::new(vec![NestedField::optional(
            1000,
            "cat",
            Type::Primitive(PrimitiveType::Int),
        )]);
        let mut f = DataFile::new(
            DataContentType::Data,
            "s3://b/x.parquet",
            FileFormat::Parquet,
            vec![Some(Literal::Int(3))],
            10,
            100,
        );
        f.value_counts = Some(vec![(1, 10)]);
        let batch = entries_to_batch(&[ManifestEntry::added(f.clone())], &ptype).unwrap();
        assert_eq!(
            data_files_from_batch(&batch, &ptype).unwrap(),
            vec![f.clone()]
        );
        let idx = batch.schema().index_of("status").unwrap();
        let mut without = batch.clone();
        without.remove_column(idx);
        assert_eq!(data_files_from_batch(&without, &ptype).unwrap(), vec![f]);
    }
}
