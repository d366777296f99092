//! The executor-side reader: file scan tasks (rows of a scan plan, see
//! [`crate::scan::plan_batches`]) read from Parquet into Arrow record batches of the scan's
//! projected schema, with everything an Iceberg reader must do applied. The one reader:
//! Python's `read_tasks`/`to_arrow` and the JVM connector call it.
//!
//! - Parquet columns are matched to the schema by Iceberg field id (`PARQUET:field_id`),
//!   nested ones too; files without ids get them from the table's name mapping (the plan's
//!   schema metadata), or by position as Java's fallback when there is none
//!   ([`field_ids`]);
//! - columns are conformed to the Arrow types of the projected schema (promotions; missing
//!   fields as `initial-default` or null) ([`conform`]); identity partition values (and
//!   the metadata columns) are constants from the task, preferred over the file's column as
//!   in Java's `PartitionUtil.constantsMap` readers ([`columns`]);
//! - a split reads the row groups whose midpoint is in its byte range; positions stay
//!   file-global ([`parquet_file`]);
//! - deletion vectors and position delete files become one [`DeletionVector`] whose keep
//!   mask covers each batch ([`deletes`]);
//! - the residual filter ([`filter`]) and equality deletes ([`equality_deletes`]) give
//!   keep masks of each batch;
//! - the files of a task group are read in parallel on plain threads, batches in the
//!   plan's order ([`stream`]).
//!
//! Output conventions (Python's `read_tasks` documents them for users): the Arrow schema is
//! the projected Iceberg schema in the types of [`crate::arrow::schema_to_arrow`], every
//! field carrying its id; requested metadata columns follow in the order asked, with their
//! reserved ids. Batches hold at most `batch_size` rows and never mix tasks.
//!
//! [`DeletionVector`]: crate::puffin::DeletionVector

pub mod columns;
pub mod conform;
pub mod context;
pub mod deletes;
pub mod equality_deletes;
pub mod field_ids;
pub mod filter;
pub mod options;
pub mod parquet_file;
pub mod stream;
pub mod task;
pub mod task_reader;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{Error, Result};
use crate::io::FileIO;

pub use context::PlanContext;
pub use options::{ReadOptions, DEFAULT_BATCH_SIZE, METADATA_COLUMNS};
pub use stream::{reading_threads, PlanReader};

/// Reads the tasks of a plan: `batches` are rows of a scan plan (`plan_arrow`, a task
/// group) whose schema carries the plan's metadata; `io` reaches their data and delete
/// files. The returned reader implements arrow's `RecordBatchReader + Send` (for the Arrow
/// C stream interface); its batches have the schema of [`output_schema`].
pub fn read_plan(
    batches: Vec<RecordBatch>,
    io: Arc<dyn FileIO>,
    options: ReadOptions,
) -> Result<PlanReader> {
    let Some(first) = batches.first() else {
        return Err(Error::invalid_argument(
            "read_plan needs the plan's record batches (at least one, for its schema)",
        ));
    };
    let ctx = Arc::new(PlanContext::new(first.schema_ref(), &options)?);
    let tasks = batches
        .iter()
        .map(|b| task::tasks_of(b, &ctx))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(PlanReader::start(ctx, tasks, io, &options))
}

/// [`read_plan`] of a task group's payload (the LZ4-compressed Arrow IPC stream of
/// [`crate::scan::task_groups::PackedPlan::payloads`], or an uncompressed one).
pub fn read_task_group(
    payload: &[u8],
    io: Arc<dyn FileIO>,
    options: ReadOptions,
) -> Result<PlanReader> {
    let ipc = crate::scan::task_groups::task_group_from_payload(payload)?;
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc.as_ref()), None)
        .map_err(|e| {
            Error::invalid_argument(format!("a task group is not an Arrow IPC stream: {e}"))
        })?;
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            Error::invalid_argument(format!("a task group is not an Arrow IPC stream: {e}"))
        })?;
    read_plan(batches, io, options)
}

/// The schema of the batches [`read_plan`] yields for a plan of this schema.
pub fn output_schema(plan_schema: &SchemaRef, options: &ReadOptions) -> Result<SchemaRef> {
    Ok(Arc::clone(
        &PlanContext::new(plan_schema, options)?.out_schema,
    ))
}

#[cfg(test)]
mod tests;
