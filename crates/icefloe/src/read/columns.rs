//! Columns that do not come from a file's column of the same field: constants of a task
//! (identity partition values, missing fields, `_file`, `_spec_id`, `_partition`), made
//! once per task at the batch size and sliced for each batch, and the metadata columns
//! computed per batch (`_pos`, `_row_id`, `_last_updated_sequence_number`, `_deleted`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, Int32Array, Int64Array, StringArray,
};
use arrow_schema::{DataType, Field};

use crate::error::{Error, Result};

use super::conform::repeat;
use super::context::PlanContext;
use super::task::ReadTask;

/// A partition value (a one-row array of the plan's partition struct's child) as `n`
/// values of the target field's type.
pub fn partition_constant(
    one: &ArrayRef,
    target: &Field,
    n: usize,
    file: &str,
) -> Result<ArrayRef> {
    let value = if one.data_type() == target.data_type() {
        Arc::clone(one)
    } else {
        arrow_cast::cast(one.as_ref(), target.data_type()).map_err(|e| {
            Error::invalid_metadata(
                target.name(),
                format!(
                    "partition value of field '{}' does not fit {}: {e}",
                    target.name(),
                    target.data_type()
                ),
            )
            .in_file(file)
        })?
    };
    repeat(value.as_ref(), n)
}

/// The task-constant metadata columns, made for `n` rows: `_file`, `_spec_id`,
/// `_partition` (the others vary by row: `None`).
pub fn metadata_constant(
    name: &str,
    task: &ReadTask,
    ctx: &PlanContext,
    n: usize,
) -> Result<Option<ArrayRef>> {
    Ok(Some(match name {
        "_file" => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            task.file_path.as_str(),
            n,
        ))),
        "_spec_id" => Arc::new(Int32Array::from_value(task.spec_id, n)),
        "_partition" => {
            // an unpartitioned table's _partition is null, as Spark reads it from Java
            if ctx.partition_fields.is_empty() {
                new_null_array(&ctx.meta_partition_type, n)
            } else {
                let one: ArrayRef = Arc::new(task.partition.clone());
                let one =
                    arrow_cast::cast(one.as_ref(), &ctx.meta_partition_type).map_err(|e| {
                        Error::invalid_argument(format!(
                            "cannot make the _partition of {}: {e}",
                            task.file_path
                        ))
                    })?;
                repeat(one.as_ref(), n)?
            }
        }
        _ => return Ok(None),
    }))
}

/// Positions `pos..pos + n`.
pub fn positions(pos: u64, n: usize) -> Int64Array {
    let start = i64::try_from(pos).unwrap_or(i64::MAX);
    Int64Array::from_iter_values((0..n as i64).map(|i| start.saturating_add(i)))
}

/// A row lineage column: the file's values (`in_file`) where present, else the inherited
/// ones (`first_row_id + _pos`, or the data sequence number), else null.
pub fn lineage(
    in_file: Option<&ArrayRef>,
    inherited: Option<Int64Array>,
    n: usize,
    file: &str,
) -> Result<ArrayRef> {
    let Some(column) = in_file else {
        return Ok(match inherited {
            Some(a) => Arc::new(a),
            None => new_null_array(&DataType::Int64, n),
        });
    };
    let column = arrow_cast::cast(column.as_ref(), &DataType::Int64).map_err(|e| {
        Error::invalid_metadata("", format!("row lineage column of {file}: {e}")).in_file(file)
    })?;
    let Some(inherited) = inherited else {
        return Ok(column);
    };
    if column.null_count() == 0 {
        return Ok(column);
    }
    let c = column.as_primitive::<Int64Type>();
    Ok(Arc::new(
        c.iter()
            .zip(inherited.iter())
            .map(|(a, b)| a.or(b))
            .collect::<Int64Array>(),
    ))
}

/// `_deleted`: the rows the deletes (and equality deletes) remove.
pub fn deleted(keep: Option<&BooleanArray>, n: usize) -> ArrayRef {
    match keep {
        Some(k) => Arc::new(BooleanArray::new(!k.values(), None)),
        None => Arc::new(BooleanArray::from(vec![false; n])),
    }
}
