//! The selected columns of a metadata table: its batch pruned to a selected schema (Java's
//! `Schema.select`), struct fields matched by field id at every level.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use crate::arrow::schema::PARQUET_FIELD_ID;
use crate::error::{Error, Result};

fn field_id(f: &Field) -> Option<&String> {
    f.metadata().get(PARQUET_FIELD_ID)
}

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot select metadata table columns: {e}"))
}

/// The column of `fields`/`columns` with the id of `target`, pruned to `target`'s type.
fn pick(fields: &Fields, columns: &[ArrayRef], target: &Field) -> Result<ArrayRef> {
    let Some(i) = fields
        .iter()
        .position(|f| field_id(f).is_some() && field_id(f) == field_id(target))
    else {
        return Err(Error::invalid_argument(format!(
            "the metadata table has no column {}",
            target.name()
        )));
    };
    prune(&columns[i], target)
}

fn prune(array: &ArrayRef, target: &Field) -> Result<ArrayRef> {
    match (array.data_type(), target.data_type()) {
        (DataType::Struct(fields), DataType::Struct(children)) if fields != children => {
            let s = array.as_struct();
            let columns = children
                .iter()
                .map(|c| pick(fields, s.columns(), c))
                .collect::<Result<Vec<_>>>()?;
            if children.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(
                    s.len(),
                    s.nulls().cloned(),
                )));
            }
            Ok(Arc::new(
                StructArray::try_new(children.clone(), columns, s.nulls().cloned())
                    .map_err(arrow_err)?,
            ))
        }
        _ => Ok(array.clone()),
    }
}

/// `batch` with the columns of `schema` (a selection of its own schema).
pub(crate) fn project_batch(batch: &RecordBatch, schema: &Arc<ArrowSchema>) -> Result<RecordBatch> {
    let fields = batch.schema().fields().clone();
    let columns = schema
        .fields()
        .iter()
        .map(|f| pick(&fields, batch.columns(), f))
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(arrow_err)
}
