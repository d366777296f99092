//! Writes: the executor-side data-file writer (`icefloe::write::data_writer`) fed with
//! Arrow batches Java exports through the Arrow C Data Interface, and the driver-side
//! commit of the data files the executors wrote (`icefloe::commit`).
//!
//! The writer API (stable; the row-level commands build on it):
//! - `dataWriterOpen(metadataJson, ioPropertiesJson, optionsJson) -> handle`: a writer of
//!   data files for the table metadata (the JSON of `tableMetadataJson`), through the FileIO
//!   of the table location made from the driver catalog's FileIO properties. Options:
//!   `partition-id`, `task-id`, `operation-id` (Java's file names), `properties` (overrides of
//!   the table's `write.*`), `data-location`, `spec-id` (default: the default spec),
//!   `sort-order-id`, `row-lineage` (the rows carry `_row_id` and
//!   `_last_updated_sequence_number` after the table's columns, written into the files).
//! - `dataWriterWrite(handle, arrayAddress, schemaAddress)`: one batch as an exported
//!   `ArrowArray` (a struct array, the table's top-level columns in order) and its
//!   `ArrowSchema`; both are moved into Rust (released here).
//! - `dataWriterFinish(handle) -> byte[]`: closes the open files and returns their
//!   `data_file` rows as Arrow IPC (`write::data_writer::data_files_to_ipc`: rows of
//!   `arrow::manifest::entries_schema`, the spec id in the schema metadata).
//! - `dataWriterAbort(handle) -> String`: deletes every file the writer stored; the answer
//!   is a JSON list of the files it could not delete.
//! - `dataWriterClose(handle)`: frees the writer.

use std::sync::Arc;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use icefloe::catalog::{TableIdent, TableState};
use icefloe::commit::snapshot::validate::IsolationLevel;
use icefloe::commit::snapshot::SnapshotProducer;
use icefloe::expr::Expression;
use icefloe::manifest::DataFile;
use icefloe::write::data_writer::{
    data_files_from_ipc, data_files_to_ipc, DataFileWriter, DataWriterOptions,
};
use icefloe::{Error, TableMetadata, TableScan, Transaction};
use jni::objects::{JByteArray, JClass, JObjectArray, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};
use serde_json::{json, Value};

use crate::catalog::{
    close_handle, handle_ref, into_handle, parse_json, string, CatalogHandle, LoadedTable,
};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::read::executor_io;

/// The table metadata JSON a writer is opened with (executors have no catalog).
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableMetadataJson<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(handle)? };
        Ok(JString::from_str(
            env,
            table.metadata.to_json_string(false),
        )?)
    })
    .resolve::<ThrowIcefloe>()
}

fn writer_options(options: &Value) -> Outcome<DataWriterOptions> {
    let int = |key: &str| options.get(key).and_then(Value::as_i64);
    let properties = match options.get("properties") {
        Some(Value::Object(o)) => o
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
            .collect(),
        _ => Vec::new(),
    };
    Ok(DataWriterOptions {
        partition_id: int("partition-id").unwrap_or(0) as i32,
        task_id: int("task-id").unwrap_or(0),
        operation_id: options
            .get("operation-id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        properties,
        data_location: options
            .get("data-location")
            .and_then(Value::as_str)
            .map(str::to_string),
        spec_id: int("spec-id").map(|v| v as i32),
        sort_order_id: int("sort-order-id").map(|v| v as i32),
        row_lineage: options
            .get("row-lineage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn optional_json(env: &Env<'_>, s: &JString<'_>, what: &str) -> Outcome<Option<Value>> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(parse_json(&string(env, s)?, what)?))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataWriterOpen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    metadata: JString<'local>,
    io_properties: JString<'local>,
    options: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        let metadata = TableMetadata::from_json_str(&string(env, &metadata)?)?;
        let io_properties = optional_json(env, &io_properties, "the FileIO properties")?;
        let options = optional_json(env, &options, "the writer options")?.unwrap_or(json!({}));
        let io = executor_io(&metadata.location, io_properties.as_ref())?;
        let writer = DataFileWriter::new(&metadata, io, writer_options(&options)?)?;
        Ok(into_handle(writer))
    })
    .resolve::<ThrowIcefloe>()
}

/// # Safety
/// The addresses are of an exported `ArrowArray` and `ArrowSchema` (Java's
/// `Data.exportVectorSchemaRoot`); both are moved out (left released).
unsafe fn import_batch(array: jlong, schema: jlong) -> Outcome<RecordBatch> {
    if array == 0 || schema == 0 {
        return Err(Error::invalid_argument("a null ArrowArray or ArrowSchema address").into());
    }
    // SAFETY: see the function's contract; from_raw moves the structs, marking them released
    let array = unsafe { FFI_ArrowArray::from_raw(array as *mut FFI_ArrowArray) };
    // SAFETY: as above
    let schema = unsafe { FFI_ArrowSchema::from_raw(schema as *mut FFI_ArrowSchema) };
    // SAFETY: the array and schema came from one export
    let data = unsafe { from_ffi(array, &schema) }
        .map_err(|e| Error::invalid_argument(format!("importing the rows: {e}")))?;
    let rows = StructArray::from(data);
    if rows.null_count() > 0 {
        return Err(Error::invalid_argument("the rows' struct has nulls").into());
    }
    Ok(RecordBatch::from(rows))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataWriterWrite<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    array: jlong,
    schema: jlong,
) {
    env.with_env(|_| -> Outcome<()> {
        // SAFETY: Java exported the batch at these addresses for this call
        let batch = unsafe { import_batch(array, schema)? };
        // SAFETY: a writer handle from NativeDataWriter, used by one thread at a time
        let writer = unsafe { handle_mut::<DataFileWriter>(handle)? };
        writer.write(&batch)?;
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

/// # Safety
/// As `handle_ref`, and no other reference to the value is alive.
unsafe fn handle_mut<'a, T>(handle: jlong) -> Outcome<&'a mut T> {
    if handle == 0 {
        return Err(Error::invalid_argument("a closed or null icefloe handle").into());
    }
    // SAFETY: see the function's contract
    Ok(unsafe { &mut *(handle as *mut T) })
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataWriterFinish<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Outcome<JByteArray<'local>> {
        // SAFETY: a writer handle from NativeDataWriter, used by one thread at a time
        let writer = unsafe { handle_mut::<DataFileWriter>(handle)? };
        let files = writer.finish()?;
        let bytes = data_files_to_ipc(files, writer.partition_type(), writer.spec_id())?;
        Ok(env.byte_array_from_slice(&bytes)?)
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataWriterAbort<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a writer handle from NativeDataWriter, used by one thread at a time
        let writer = unsafe { handle_mut::<DataFileWriter>(handle)? };
        let kept = writer.abort();
        Ok(JString::from_str(env, json!(kept).to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataWriterClose<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Outcome<()> {
        // SAFETY: Java's NativeDataWriter closes its handle once
        unsafe { close_handle::<DataFileWriter>(handle) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

// --- the driver: commits -------------------------------------------------------------------

pub(crate) fn payloads(env: &mut Env<'_>, array: &JObjectArray<'_>) -> Outcome<Vec<Vec<u8>>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let n = array.len(env)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let item = array.get_element(env, i)?;
        if item.is_null() {
            continue;
        }
        let bytes = JByteArray::cast_local(env, item)?;
        out.push(env.convert_byte_array(&bytes)?);
    }
    Ok(out)
}

/// The data files of the executors' payloads, with the spec they were written for.
pub(crate) fn decode_files(
    md: &TableMetadata,
    payloads: &[Vec<u8>],
) -> Outcome<Vec<(i32, DataFile)>> {
    let schema = md
        .current_schema()
        .ok_or_else(|| Error::invalid_argument("the table has no current schema"))?;
    let mut out = Vec::new();
    for p in payloads {
        let (spec_id, files) = data_files_from_ipc(p, |id| {
            md.spec_by_id(id)
                .ok_or_else(|| Error::invalid_argument(format!("the table has no spec {id}")))?
                .partition_type(schema)
        })?;
        out.extend(files.into_iter().map(|f| (spec_id, f)));
    }
    Ok(out)
}

fn ident_of(request: &Value) -> Outcome<TableIdent> {
    let namespace = request
        .get("namespace")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let name = request
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_argument("the commit request needs a table name"))?;
    Ok(TableIdent::new(namespace, name))
}

/// The files of the live partitions that a dynamic overwrite replaces: every data file of
/// `base` whose spec and partition tuple are those of an added file.
fn files_in_partitions(
    base: &TableState,
    io: Arc<dyn icefloe::FileIO>,
    added: &[(i32, DataFile)],
) -> Outcome<Vec<String>> {
    if base.metadata.current_snapshot_id.is_none() {
        return Ok(Vec::new());
    }
    let plan = TableScan::new(Arc::clone(&base.metadata), io)
        .metadata_location(base.metadata_location.clone())
        .plan_files()?;
    let mut out = Vec::new();
    for task in &plan.tasks {
        let f = &task.file;
        let replaced = added
            .iter()
            .any(|(spec, a)| *spec == f.spec_id && a.partition == f.file.partition);
        if replaced && !out.contains(&f.file.file_path) {
            out.push(f.file.file_path.clone());
        }
    }
    Ok(out)
}

/// The snapshot of a write's `operation` (`append`; `overwrite`: the files matching
/// `filter`, the expression JSON form, are removed; `replace-partitions`: Spark's dynamic
/// overwrite of the partitions `files` fall in) on `base`, before the files are added.
pub(crate) fn write_producer(
    request: &Value,
    base: &TableState,
    io: Arc<dyn icefloe::FileIO>,
    files: &[(i32, DataFile)],
) -> Outcome<SnapshotProducer> {
    let operation = request
        .get("operation")
        .and_then(Value::as_str)
        .unwrap_or("append");
    let schema = base
        .metadata
        .current_schema()
        .ok_or_else(|| Error::invalid_argument("the table has no current schema"))?
        .clone();
    Ok(match operation {
        "append" => SnapshotProducer::fast_append(),
        "overwrite" => {
            let filter = match request.get("filter") {
                None | Some(Value::Null) => Expression::True,
                Some(f) => Expression::from_json(f, Some(&schema))?,
            };
            let mut p = SnapshotProducer::overwrite_files();
            p.delete_by_row_filter(filter);
            p
        }
        "replace-partitions" => {
            let mut p = SnapshotProducer::overwrite_files();
            for path in files_in_partitions(base, io, files)? {
                p.delete_path(path);
            }
            p.set_summary("replace-partitions", "true");
            p
        }
        other => {
            return Err(
                Error::invalid_argument(format!("unknown write operation '{other}'")).into(),
            )
        }
    })
}

/// Commits the data files executors wrote, as one snapshot. Request: `namespace`, `name`,
/// `operation` (`append`; `overwrite`: the files matching `filter`, the expression JSON form,
/// are removed; `replace-partitions`: Spark's dynamic overwrite), `snapshot-properties`,
/// `isolation-level` and `base-snapshot-id` (validations from that snapshot, as Java's
/// Spark writes do when an isolation level is set). The files are handed to the transaction,
/// which deletes them when the commit fails. The answer: the new metadata location and
/// snapshot id.
fn commit(catalog: &CatalogHandle, request: &Value, payloads: &[Vec<u8>]) -> Outcome<Value> {
    let ident = ident_of(request)?;
    let base = catalog.0.load_table(&ident)?;
    let files = decode_files(&base.metadata, payloads)?;
    let paths: Vec<String> = files.iter().map(|(_, f)| f.file_path.clone()).collect();
    let mut producer = write_producer(request, &base, catalog.0.io(), &files)?;
    for (spec_id, f) in files {
        producer.add_file_with_spec(spec_id, f);
    }
    if let Some(Value::Object(props)) = request.get("snapshot-properties") {
        for (k, v) in props {
            if let Some(v) = v.as_str() {
                producer.set_summary(k.clone(), v.to_string());
            }
        }
    }
    if let Some(level) = request.get("isolation-level").and_then(Value::as_str) {
        let v = producer.validation_mut();
        v.from_snapshot = request.get("base-snapshot-id").and_then(Value::as_i64);
        IsolationLevel::parse(level)?.apply(v);
    }
    let mut tx = Transaction::new(Arc::clone(&catalog.0), ident, base);
    tx.own_files(paths);
    tx.add_change(Box::new(producer));
    let state = tx.commit()?;
    Ok(json!({
        "metadata-location": state.metadata_location,
        "snapshot-id": state.metadata.current_snapshot_id,
    }))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableCommit<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
    files: JObjectArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the commit request")?;
        let payloads = payloads(env, &files)?;
        let answer = commit(catalog, &request, &payloads)?;
        Ok(JString::from_str(env, answer.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Deletes the data files named in executors' payloads (a write Spark aborted before its
/// commit); the answer is a JSON list of the files that could not be deleted.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_dataFilesDelete<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    table: jlong,
    files: JObjectArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let payloads = payloads(env, &files)?;
        let files = decode_files(&table.metadata, &payloads)?;
        let io = catalog.0.io();
        let kept: Vec<String> = files
            .iter()
            .filter(|(_, f)| io.delete(&f.file_path).is_err())
            .map(|(_, f)| f.file_path.clone())
            .collect();
        Ok(JString::from_str(env, json!(kept).to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}
