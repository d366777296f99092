//! One task read: its file's row groups in its byte range, decoded column by column into
//! the output schema, its deletes and residual applied.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::FieldRef;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::schema::reserved;

use super::columns::{deleted, lineage, metadata_constant, partition_constant, positions};
use super::conform::Conformer;
use super::context::{field_id, PlanContext};
use super::deletes::position_deletes;
use super::parquet_file::ParquetFile;
use super::task::{constants, ReadTask, EQUALITY_DELETES};

/// Where an output column comes from.
enum Source {
    /// A column of the decoded batches (its index there), the file's field and the
    /// output's.
    File {
        column: usize,
        source: FieldRef,
        target: FieldRef,
    },
    /// The same values in every row, made for a whole batch and sliced.
    Constant(ArrayRef),
    /// A metadata column computed per batch.
    Metadata(&'static str),
}

/// Reads `task` and hands each non-empty batch to `emit`, which returns false to stop
/// (the reader was dropped).
pub fn read_task(
    task: &ReadTask,
    ctx: &PlanContext,
    io: &Arc<dyn FileIO>,
    batch_size: usize,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let location = task.file_path.as_str();
    if !task.file_format.eq_ignore_ascii_case("parquet") {
        return Err(Error::unsupported(format!(
            "cannot read {location}: {} data files are not supported yet",
            task.file_format
        )));
    }
    if task.residual != Value::Bool(true) {
        return Err(Error::unsupported(format!(
            "cannot read {location}: residual filters are not applied by the Rust reader yet"
        )));
    }
    if task.deletes.iter().any(|d| d.content == EQUALITY_DELETES) {
        return Err(Error::unsupported(format!(
            "cannot read {location}: equality deletes are not applied by the Rust reader yet"
        )));
    }
    let batch_size = batch_size.max(1);
    let file = ParquetFile::open(
        Arc::clone(io),
        location,
        "data file",
        ctx.name_mapping.as_ref(),
    )?;
    let file_top: HashMap<i32, usize> = file
        .schema
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| field_id(f).map(|id| (id, i)))
        .collect();
    let conformer = Conformer {
        ctx,
        file: location,
    };
    let constants: HashMap<i32, ArrayRef> = constants(task, ctx).into_iter().collect();

    // the file's top-level columns to decode, and where each output column comes from
    let mut roots: Vec<usize> = Vec::new();
    let from_file = |root: usize, roots: &mut Vec<usize>| {
        if !roots.contains(&root) {
            roots.push(root);
        }
        root
    };
    let mut sources: Vec<Source> = Vec::new();
    for target in ctx.projected_arrow.fields() {
        let id = field_id(target);
        let source = match id {
            Some(id) if constants.contains_key(&id) => Source::Constant(partition_constant(
                &constants[&id],
                target,
                batch_size,
                location,
            )?),
            Some(id) if file_top.contains_key(&id) => Source::File {
                column: from_file(file_top[&id], &mut roots),
                source: Arc::clone(&file.schema.fields()[file_top[&id]]),
                target: Arc::clone(target),
            },
            _ => Source::Constant(conformer.missing(target, batch_size)?),
        };
        sources.push(source);
    }
    let row_id_col = ctx
        .wants("_row_id")
        .then(|| {
            file_top
                .get(&reserved::ROW_ID_ID)
                .map(|&r| from_file(r, &mut roots))
        })
        .flatten();
    let seq_col = ctx
        .wants("_last_updated_sequence_number")
        .then(|| {
            file_top
                .get(&reserved::LAST_UPDATED_SEQUENCE_NUMBER_ID)
                .map(|&r| from_file(r, &mut roots))
        })
        .flatten();
    for (name, _) in &ctx.metadata_columns {
        sources.push(match metadata_constant(name, task, ctx, batch_size)? {
            Some(c) => Source::Constant(c),
            None => Source::Metadata(name),
        });
    }
    // decoded batches hold the roots in the file's order
    roots.sort_unstable();
    let at = |root: usize| roots.binary_search(&root).unwrap_or(usize::MAX);

    let row_groups = file.row_groups();
    let selected = file.row_groups_in(task.start, task.length, task.file_size_in_bytes);
    let deletes = position_deletes(task, io)?.filter(|dv| !dv.is_empty());
    let wants_deleted = ctx.wants("_deleted");
    let bad = |e: arrow_schema::ArrowError| {
        Error::invalid_metadata("", format!("cannot read data file {location}: {e}"))
            .in_file(location)
    };

    for rg in selected {
        let Some(span) = row_groups.get(rg) else {
            continue;
        };
        let Some(reader) = file.read_row_group(rg, &roots, batch_size, "data file")? else {
            continue;
        };
        let mut pos = span.first_row;
        for raw in reader {
            let raw = raw.map_err(bad)?;
            let n = raw.num_rows();
            if n == 0 {
                continue;
            }
            let keep = deletes.as_ref().and_then(|dv| {
                let mask = dv.keep_mask_buffer(pos, n);
                (mask.count_set_bits() != n).then(|| BooleanArray::new(mask, None))
            });
            let mut columns = Vec::with_capacity(sources.len());
            for s in &sources {
                columns.push(match s {
                    Source::File {
                        column,
                        source,
                        target,
                    } => conformer.conform(raw.column(at(*column)), source, target)?,
                    Source::Constant(c) => c.slice(0, n),
                    Source::Metadata(name) => match *name {
                        "_pos" => Arc::new(positions(pos, n)),
                        "_row_id" => lineage(
                            row_id_col.map(|c| raw.column(at(c))),
                            task.first_row_id.map(|first| {
                                let p = positions(pos, n);
                                p.iter()
                                    .map(|v| v.map(|v| v.saturating_add(first)))
                                    .collect()
                            }),
                            n,
                            location,
                        )?,
                        "_last_updated_sequence_number" => lineage(
                            seq_col.map(|c| raw.column(at(c))),
                            task.first_row_id.map(|_| {
                                arrow_array::Int64Array::from_value(task.data_sequence_number, n)
                            }),
                            n,
                            location,
                        )?,
                        _ => deleted(keep.as_ref(), n),
                    },
                });
            }
            let options = RecordBatchOptions::new().with_row_count(Some(n));
            let batch =
                RecordBatch::try_new_with_options(Arc::clone(&ctx.out_schema), columns, &options)
                    .map_err(bad)?;
            let batch = match keep.as_ref().filter(|_| !wants_deleted) {
                Some(k) => arrow_select::filter::filter_record_batch(&batch, k).map_err(bad)?,
                None => batch,
            };
            pos += n as u64;
            if batch.num_rows() > 0 && !emit(batch) {
                return Ok(());
            }
        }
    }
    Ok(())
}
