//! The data files a row-level scan planned, with the deletes the plan applies to each,
//! handed to the writers of that row-level write (the Spark connector's executors) so
//! that they find a touched data file's spec, partition, deletion vector and position
//! delete files without reading a manifest. Java's Spark writers are handed the scan's
//! "rewritable deletes" the same way; without them each writer task would read every
//! live manifest of the snapshot ([`super::position_deletes::deletes_for`], still the
//! path of writers called without a scan).
//!
//! Form: an LZ4 frame of an Arrow IPC stream, one row per planned data file, with these
//! columns of the plan ([`crate::scan::plan_batches`]): `file_path`, `file_format`,
//! `record_count`, `file_size_in_bytes`, `spec_id`, `partition` (the plan's struct of
//! every spec's partition fields, each by its partition field id), `data_sequence_number`
//! and `deletes` (the delete files the plan applies to the file: a data file with a DV
//! has no position delete file applied, as Java's delete index); the scanned snapshot's
//! id in the schema metadata. A plan's own rows (any columns besides these, uncompressed)
//! are read the same way: Python's row-level writes hand on their group's plan rows.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{
    Array, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{Schema as ArrowSchema, SchemaRef};

use super::position_deletes::{attach_delete, missing_paths, DataFileDeletes};
use crate::arrow::values::array_value;
use crate::arrow::PARQUET_FIELD_ID;
use crate::error::{Error, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat, ManifestEntry, ManifestStatus};
use crate::read::task::{delete_files, POSITION_DELETES};
use crate::scan::plan_batches::SNAPSHOT_ID_KEY;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, Type};

/// The plan columns the scanned files carry.
pub const COLUMNS: [&str; 8] = [
    "file_path",
    "file_format",
    "record_count",
    "file_size_in_bytes",
    "spec_id",
    "partition",
    "data_sequence_number",
    "deletes",
];

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("scanned deletes: {e}"))
}

/// Encodes the rows of `batches` (plan batches of `plan_schema`) as scanned files of
/// snapshot `snapshot_id`.
pub(crate) fn encode(
    plan_schema: &ArrowSchema,
    batches: &[RecordBatch],
    snapshot_id: i64,
) -> Result<Vec<u8>> {
    let indices = COLUMNS
        .iter()
        .map(|c| plan_schema.index_of(c).map_err(arrow_err))
        .collect::<Result<Vec<_>>>()?;
    let schema: SchemaRef = Arc::new(
        plan_schema
            .project(&indices)
            .map_err(arrow_err)?
            .with_metadata(HashMap::from([(
                SNAPSHOT_ID_KEY.to_string(),
                snapshot_id.to_string(),
            )])),
    );
    let mut ipc = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &schema).map_err(arrow_err)?;
    for b in batches {
        let b = b.project(&indices).map_err(arrow_err)?;
        let b =
            RecordBatch::try_new(Arc::clone(&schema), b.columns().to_vec()).map_err(arrow_err)?;
        w.write(&b).map_err(arrow_err)?;
    }
    w.finish().map_err(arrow_err)?;
    drop(w);
    crate::scan::task_groups::lz4_frame(&ipc)
}

fn bad(field: &str, what: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("scanned deletes: {field} {what}"))
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T> {
    let c = batch
        .column_by_name(name)
        .ok_or_else(|| bad(name, "is missing"))?;
    c.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| bad(name, format!("has type {}", c.data_type())))
}

/// The data files at `paths`, with their deletes, from `scanned` (what
/// [`crate::scan::task_groups::PackedPlan::scanned_deletes`] encoded for a scan of
/// snapshot `snapshot_id` of the table `md`, or a plan's rows as an uncompressed IPC
/// stream, other columns ignored, as `table.delete` hands them on). A path the scan did not plan, bytes of
/// another snapshot and malformed bytes are `InvalidArgument` errors naming the field.
pub fn scanned_deletes_for(
    md: &TableMetadata,
    snapshot_id: i64,
    scanned: &[u8],
    paths: &[String],
) -> Result<HashMap<String, DataFileDeletes>> {
    let ipc = crate::scan::task_groups::task_group_from_payload(scanned)
        .map_err(|e| bad("payload", e))?;
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&*ipc), None)
        .map_err(arrow_err)?;
    let planned = reader
        .schema()
        .metadata()
        .get(SNAPSHOT_ID_KEY)
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| bad(SNAPSHOT_ID_KEY, "is missing or not a long"))?;
    if planned != snapshot_id {
        return Err(bad(
            SNAPSHOT_ID_KEY,
            format!("is {planned}, but the write deletes rows of snapshot {snapshot_id}"),
        ));
    }
    let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
    let mut out = HashMap::with_capacity(wanted.len());
    for batch in reader {
        let batch = batch.map_err(arrow_err)?;
        let files: &StringArray = column(&batch, "file_path")?;
        let rows: Vec<usize> = (0..batch.num_rows())
            .filter(|&i| files.is_valid(i) && wanted.contains(files.value(i)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let formats: &StringArray = column(&batch, "file_format")?;
        let records: &Int64Array = column(&batch, "record_count")?;
        let sizes: &Int64Array = column(&batch, "file_size_in_bytes")?;
        let specs: &Int32Array = column(&batch, "spec_id")?;
        let partitions: &StructArray = column(&batch, "partition")?;
        let seqs: &Int64Array = column(&batch, "data_sequence_number")?;
        let deletes: &ListArray = column(&batch, "deletes")?;
        for i in rows {
            let path = files.value(i);
            let spec_id = specs.value(i);
            let partition = partition_of(md, spec_id, partitions, i)
                .map_err(|e| bad(&format!("partition of {path}"), e))?;
            let data = DataFile::new(
                DataContentType::Data,
                path,
                FileFormat::parse(formats.value(i)),
                partition,
                records.value(i),
                sizes.value(i),
            );
            let mut target = DataFileDeletes {
                spec_id,
                data: ManifestEntry {
                    status: ManifestStatus::Existing,
                    snapshot_id: None,
                    sequence_number: seqs.is_valid(i).then(|| seqs.value(i)),
                    file_sequence_number: None,
                    data_file: data,
                },
                dv: None,
                position_files: Vec::new(),
            };
            let applied = if deletes.is_valid(i) {
                delete_files(deletes.value(i).as_ref())?
            } else {
                Vec::new()
            };
            for d in applied
                .into_iter()
                .filter(|d| d.content == POSITION_DELETES)
            {
                // a delete file of the data file's spec and partition (the rule by which
                // the plan applied it), as a manifest row of it
                let mut f = DataFile::new(
                    DataContentType::PositionDeletes,
                    &d.file_path,
                    FileFormat::parse(&d.file_format),
                    target.data.data_file.partition.clone(),
                    d.record_count,
                    d.file_size_in_bytes,
                );
                f.referenced_data_file = d.referenced_data_file;
                f.content_offset = d.content_offset;
                f.content_size_in_bytes = d.content_size_in_bytes;
                attach_delete(&mut target, f)?;
            }
            out.insert(path.to_string(), target);
        }
    }
    if let Some(missing) = missing_paths(&wanted, &out) {
        return Err(Error::invalid_argument(format!(
            "not data files the scan of snapshot {snapshot_id} planned: {missing}"
        )));
    }
    Ok(out)
}

/// Row `i`'s partition tuple in spec `spec_id`'s field order, read from the plan's
/// struct by partition field id.
fn partition_of(
    md: &TableMetadata,
    spec_id: i32,
    partitions: &StructArray,
    i: usize,
) -> Result<Vec<Option<Literal>>> {
    let spec = md.spec_by_id(spec_id).ok_or_else(|| {
        Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
    })?;
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_metadata("current-schema-id", "the table has no current schema")
    })?;
    let ptype = spec.partition_type(schema)?;
    let fields = partitions.fields();
    ptype
        .fields
        .iter()
        .map(|pf| {
            let slot = fields
                .iter()
                .position(|f| {
                    f.metadata().get(PARQUET_FIELD_ID).map(String::as_str)
                        == Some(pf.id.to_string().as_str())
                })
                .ok_or_else(|| {
                    Error::invalid_argument(format!("no partition field with id {}", pf.id))
                })?;
            let col = partitions.column(slot);
            if col.is_null(i) {
                // a void field's values are null whatever its column's type
                return Ok(None);
            }
            let Type::Primitive(ty) = &pf.field_type else {
                return Err(Error::invalid_argument(format!(
                    "partition field {} is not primitive",
                    pf.id
                )));
            };
            array_value(col.as_ref(), i, ty)
        })
        .collect()
}
