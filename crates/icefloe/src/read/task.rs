//! One row of a plan as a task to read: the file, its byte range, its partition tuple and
//! sequence numbers, its residual filter and its delete files.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::spec::transform::Transform;

use super::context::{PlanContext, TaskFilter};

/// `content` of a delete file (the manifest's `content` field).
pub const POSITION_DELETES: i32 = 1;
pub const EQUALITY_DELETES: i32 = 2;

#[derive(Debug, Clone)]
pub struct DeleteFile {
    pub content: i32,
    pub file_path: String,
    pub file_format: String,
    pub record_count: i64,
    pub file_size_in_bytes: i64,
    pub referenced_data_file: Option<String>,
    pub content_offset: Option<i64>,
    pub content_size_in_bytes: Option<i64>,
    pub equality_ids: Vec<i32>,
}

#[derive(Debug, Clone)]
pub struct ReadTask {
    pub file_path: String,
    pub file_format: String,
    pub start: i64,
    pub length: i64,
    pub file_size_in_bytes: i64,
    pub spec_id: i32,
    /// The task's partition tuple: a one-row slice of the plan's partition struct.
    pub partition: StructArray,
    pub data_sequence_number: i64,
    pub first_row_id: Option<i64>,
    /// The residual filter to apply to the task's rows.
    pub residual: Arc<TaskFilter>,
    pub deletes: Vec<DeleteFile>,
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    batch
        .column_by_name(name)
        .ok_or_else(|| Error::invalid_argument(format!("the plan has no '{name}' column")))
}

fn typed<'a, T: 'static>(array: &'a dyn Array, name: &str) -> Result<&'a T> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| {
        Error::invalid_argument(format!(
            "the plan's '{name}' column is {}, not the plan's type",
            array.data_type()
        ))
    })
}

fn strings<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray> {
    typed(column(batch, name)?.as_ref(), name)
}

fn longs<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array> {
    typed(column(batch, name)?.as_ref(), name)
}

fn ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int32Array> {
    typed(column(batch, name)?.as_ref(), name)
}

fn opt_long(a: &Int64Array, i: usize) -> Option<i64> {
    a.is_valid(i).then(|| a.value(i))
}

fn opt_str(a: &StringArray, i: usize) -> Option<String> {
    a.is_valid(i).then(|| a.value(i).to_string())
}

/// The tasks of a plan batch, in row order.
pub fn tasks_of(batch: &RecordBatch, ctx: &PlanContext) -> Result<Vec<ReadTask>> {
    let paths = strings(batch, "file_path")?;
    let formats = strings(batch, "file_format")?;
    let starts = longs(batch, "start")?;
    let lengths = longs(batch, "length")?;
    let sizes = longs(batch, "file_size_in_bytes")?;
    let spec_ids = ints(batch, "spec_id")?;
    let partitions: &StructArray = typed(column(batch, "partition")?.as_ref(), "partition")?;
    let data_seqs = longs(batch, "data_sequence_number")?;
    let first_row_ids = longs(batch, "first_row_id")?;
    let residual_ix = ints(batch, "residual")?;
    let deletes: &ListArray = typed(column(batch, "deletes")?.as_ref(), "deletes")?;
    (0..batch.num_rows())
        .map(|i| {
            let residual_index = residual_ix.value(i);
            let residual = usize::try_from(residual_index)
                .ok()
                .and_then(|r| ctx.residuals.get(r))
                .cloned()
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "task {i} refers to residual {residual_index}; the plan has {}",
                        ctx.residuals.len()
                    ))
                })?;
            let mut task = ReadTask {
                file_path: paths.value(i).to_string(),
                file_format: formats.value(i).to_string(),
                start: starts.value(i),
                length: lengths.value(i),
                file_size_in_bytes: sizes.value(i),
                spec_id: spec_ids.value(i),
                partition: partitions.slice(i, 1),
                data_sequence_number: data_seqs.value(i),
                first_row_id: opt_long(first_row_ids, i),
                residual,
                deletes: if deletes.is_valid(i) {
                    delete_files(deletes.value(i).as_ref())?
                } else {
                    Vec::new()
                },
            };
            // The residual is exact only for partitions without nulls: planning evaluates
            // predicates on null partition values with Java's comparators (nulls first, so
            // `null != 'a'` and `null < 5` hold and leave `true`), while on rows a null
            // never matches a comparison. A task with a null in its partition tuple gets
            // the whole scan filter instead.
            if !task.residual.is_false() && partition_has_null(&task, ctx) {
                task.residual = Arc::clone(&ctx.filter);
            }
            Ok(task)
        })
        .collect()
}

pub(crate) fn delete_files(list: &dyn Array) -> Result<Vec<DeleteFile>> {
    let s: &StructArray = typed(list, "deletes")?;
    let get = |name: &str| -> Result<&ArrayRef> {
        s.column_by_name(name)
            .ok_or_else(|| Error::invalid_argument(format!("the plan's deletes have no '{name}'")))
    };
    let content = get("content")?.as_primitive_opt::<Int32Type>();
    let path: &StringArray = typed(get("file_path")?.as_ref(), "deletes.file_path")?;
    let format: &StringArray = typed(get("file_format")?.as_ref(), "deletes.file_format")?;
    let records = get("record_count")?.as_primitive_opt::<Int64Type>();
    let sizes = get("file_size_in_bytes")?.as_primitive_opt::<Int64Type>();
    let referenced: &StringArray = typed(
        get("referenced_data_file")?.as_ref(),
        "deletes.referenced_data_file",
    )?;
    let offsets: &Int64Array = typed(get("content_offset")?.as_ref(), "deletes.content_offset")?;
    let blob_sizes: &Int64Array = typed(
        get("content_size_in_bytes")?.as_ref(),
        "deletes.content_size_in_bytes",
    )?;
    let eq_ids: &ListArray = typed(get("equality_ids")?.as_ref(), "deletes.equality_ids")?;
    let (Some(content), Some(records), Some(sizes)) = (content, records, sizes) else {
        return Err(Error::invalid_argument(
            "the plan's deletes are not of the plan's types",
        ));
    };
    (0..s.len())
        .map(|i| {
            let equality_ids = if eq_ids.is_valid(i) {
                let v = eq_ids.value(i);
                let ids: &Int32Array = typed(v.as_ref(), "deletes.equality_ids")?;
                ids.iter().flatten().collect()
            } else {
                Vec::new()
            };
            Ok(DeleteFile {
                content: content.value(i),
                file_path: path.value(i).to_string(),
                file_format: format.value(i).to_string(),
                record_count: records.value(i),
                file_size_in_bytes: sizes.value(i),
                referenced_data_file: opt_str(referenced, i),
                content_offset: opt_long(offsets, i),
                content_size_in_bytes: opt_long(blob_sizes, i),
                equality_ids,
            })
        })
        .collect()
}

/// Whether a partition field of the task's spec is null (or missing) in its tuple.
fn partition_has_null(task: &ReadTask, ctx: &PlanContext) -> bool {
    let Some(spec) = ctx.specs.get(&task.spec_id) else {
        return false;
    };
    spec.fields
        .iter()
        .any(|pf| match ctx.partition_slot.get(&pf.field_id) {
            Some(&slot) => task.partition.column(slot).is_null(0),
            None => true,
        })
}

/// Identity partition values by source field id (Java's `PartitionUtil.constantsMap`):
/// one-row arrays of the plan's partition struct.
pub fn constants(task: &ReadTask, ctx: &PlanContext) -> Vec<(i32, ArrayRef)> {
    let Some(spec) = ctx.specs.get(&task.spec_id) else {
        return Vec::new();
    };
    spec.fields
        .iter()
        .filter(|pf| pf.transform == Transform::Identity)
        .filter_map(|pf| {
            let slot = *ctx.partition_slot.get(&pf.field_id)?;
            let source = *pf.source_ids.first()?;
            Some((source, task.partition.column(slot).clone()))
        })
        .collect()
}
