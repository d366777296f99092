//! Row-level SQL (`DELETE FROM`, `UPDATE`, `MERGE INTO`) for the Spark connector:
//! whole-file deletes from metadata (Spark's `SupportsDeleteV2`), and merge-on-read
//! row deltas (`SupportsDelta`): executors write delete files for the row positions Spark
//! hands them, the driver commits one validated row delta.
//!
//! What a task wrote crosses to the driver as opaque bytes: records of
//! `kind (u8) | spec id (i32 LE) | length (u64 LE) | Arrow IPC stream`, the IPC stream
//! holding manifest-entry rows (`icefloe::arrow::manifest`) of the spec's partition type.
//! Records concatenate, so the Java side joins the tasks' bytes without reading them.

use std::collections::HashMap;
use std::sync::Arc;

use icefloe::arrow::manifest::batch_to_entries;
use icefloe::catalog::TableIdent;
use icefloe::commit::snapshot::validate::IsolationLevel;
use icefloe::commit::snapshot::{deletes_whole_files, SnapshotProducer};
use icefloe::expr::Expression;
use icefloe::manifest::v4::tree::{LeafBlock, TreePosition};
use icefloe::manifest::DataFile;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::StructType;
use icefloe::write::data_files_to_batch;
use icefloe::write::data_writer::data_files_from_ipc;
use icefloe::write::delete_writer::write_position_deletes;
use icefloe::{Error, Transaction};
use jni::objects::{JByteArray, JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;
use serde_json::{json, Value};

use crate::catalog::{handle_ref, parse_json, string, CatalogHandle, LoadedTable};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::read::executor_io;

/// A delete file to add.
const ADDED_DELETE: u8 = 0;
/// A delete file a new deletion vector replaces.
const REMOVED_DELETE: u8 = 1;
/// Data files to add (the rows an `UPDATE` or `MERGE` writes): the record's body is the
/// data writer's result as it is, the spec id field unused.
const ADDED_DATA: u8 = 2;

fn arrow_failure(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot encode or decode written files: {e}"))
}

fn partition_type(md: &TableMetadata, spec_id: i32) -> Outcome<StructType> {
    let spec = md.spec_by_id(spec_id).ok_or_else(|| {
        Error::invalid_argument(format!("{}: no partition spec {spec_id}", md.location))
    })?;
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_argument(format!("{}: the current schema is missing", md.location))
    })?;
    Ok(spec.partition_type(schema)?)
}

/// Appends the records of `files` (grouped by spec) of one kind to `out`.
fn encode(
    md: &TableMetadata,
    kind: u8,
    files: Vec<(i32, DataFile)>,
    out: &mut Vec<u8>,
) -> Outcome<()> {
    let mut by_spec: HashMap<i32, Vec<DataFile>> = HashMap::new();
    for (spec_id, f) in files {
        by_spec.entry(spec_id).or_default().push(f);
    }
    for (spec_id, files) in by_spec {
        let batch = data_files_to_batch(files, &partition_type(md, spec_id)?)?;
        let mut ipc = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &batch.schema())
            .map_err(arrow_failure)?;
        w.write(&batch).map_err(arrow_failure)?;
        w.finish().map_err(arrow_failure)?;
        drop(w);
        out.push(kind);
        out.extend_from_slice(&spec_id.to_le_bytes());
        out.extend_from_slice(&(ipc.len() as u64).to_le_bytes());
        out.extend_from_slice(&ipc);
    }
    Ok(())
}

/// The files of the records in `bytes`: (kind, spec id, file).
fn decode(md: &TableMetadata, bytes: &[u8]) -> Outcome<Vec<(u8, i32, DataFile)>> {
    let truncated = || Error::invalid_argument("the written-files record is truncated");
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.len() < 13 {
            return Err(truncated().into());
        }
        let kind = rest[0];
        let spec_id = i32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&rest[5..13]);
        let len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| truncated())?;
        let body = rest.get(13..13 + len).ok_or_else(truncated)?;
        rest = &rest[13 + len..];
        if kind == ADDED_DATA {
            // a data writer's own result (`write::data_writer::data_files_to_ipc`, the spec
            // id in its schema metadata)
            let schema = md.current_schema().ok_or_else(|| {
                Error::invalid_argument(format!("{}: the current schema is missing", md.location))
            })?;
            let (spec, files) = data_files_from_ipc(body, |id| {
                md.spec_by_id(id)
                    .ok_or_else(|| Error::invalid_argument(format!("the table has no spec {id}")))?
                    .partition_type(schema)
            })?;
            out.extend(files.into_iter().map(|f| (kind, spec, f)));
            continue;
        }
        let ptype = partition_type(md, spec_id)?;
        let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None)
            .map_err(arrow_failure)?;
        for batch in reader {
            let batch = batch.map_err(arrow_failure)?;
            for e in batch_to_entries(&batch, &ptype)? {
                out.push((kind, spec_id, e.data_file));
            }
        }
    }
    Ok(out)
}

fn ident_of(request: &Value) -> Outcome<TableIdent> {
    let namespace = request
        .get("namespace")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::invalid_argument("the request needs a namespace"))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::invalid_argument("namespace levels must be strings"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let name = request
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_argument("the request needs a table name"))?;
    Ok(TableIdent::new(namespace, name))
}

fn summary_of(request: &Value) -> Vec<(String, String)> {
    request
        .get("summary")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn filter_of(md: &TableMetadata, filter: Option<&Value>) -> Outcome<Option<Expression>> {
    match filter {
        None | Some(Value::Null) => Ok(None),
        Some(f) => Ok(Some(Expression::from_json(f, md.current_schema())?)),
    }
}

fn answer(state: &icefloe::catalog::TableState) -> Value {
    json!({
        "snapshot-id": state.metadata.current_snapshot_id,
        "metadata-location": state.metadata_location,
    })
}

/// Whether `DELETE FROM` with this filter removes whole data files only, so that it can
/// be committed from metadata (`SupportsDeleteV2.canDeleteWhere`). A table without a
/// snapshot has nothing to delete.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_deletesWholeFiles<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    filter: JString<'local>,
) -> jboolean {
    env.with_env(|env| -> Outcome<jboolean> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let md = &table.metadata;
        let filter = parse_json(&string(env, &filter)?, "the delete filter")?;
        let Some(filter) = filter_of(md, Some(&filter))? else {
            return Ok(true);
        };
        let Some(snapshot) = md.current_snapshot() else {
            return Ok(true);
        };
        Ok(deletes_whole_files(
            Arc::clone(&table.io),
            Arc::clone(md),
            snapshot.snapshot_id,
            &filter,
        )?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Removes the data files all of whose rows match the filter (Java's `DeleteFiles` with a
/// row filter); a file only some of whose rows match fails (`ValidationFailed`). Request:
/// `namespace`, `name`, `filter`, `summary`.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_deleteWhere<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    catalog: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(catalog)? };
        let request = parse_json(&string(env, &request)?, "the delete request")?;
        let ident = ident_of(&request)?;
        let base = catalog.0.load_table(&ident)?;
        let md = Arc::clone(&base.metadata);
        let mut tx = Transaction::new(Arc::clone(&catalog.0), ident, base);
        let filter = filter_of(&md, request.get("filter"))?.unwrap_or(Expression::True);
        let mut p = SnapshotProducer::delete_files();
        p.delete_by_row_filter(filter);
        for (k, v) in summary_of(&request) {
            p.set_summary(k, v);
        }
        tx.add_change(Box::new(p));
        let state = tx.commit()?;
        Ok(JString::from_str(env, answer(&state).to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Executor side of a merge-on-read write: the delete files for the positions of one
/// task. Request: `metadata` (the table metadata JSON text), `snapshot-id` (the scanned
/// snapshot, whose live deletes new DVs merge), `io-properties`, `prefix` (the new files'
/// name prefix), `files` (`[path, count]` in the order of `positions`). `scanned`: the
/// scan's planned files and their deletes (`planScannedDeletes`), with which no manifest
/// is read; null when the driver had none (a plan too large to hand on), and then the
/// snapshot's manifests are read. Returns the written-files records.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_writeDeletes<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    request: JString<'local>,
    positions: JLongArray<'local>,
    scanned: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Outcome<JByteArray<'local>> {
        let request = parse_json(&string(env, &request)?, "the delete write request")?;
        let md_text = request
            .get("metadata")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid_argument("the delete write needs the table metadata"))?;
        let md = TableMetadata::from_json_str(md_text)?;
        let snapshot_id = request
            .get("snapshot-id")
            .and_then(Value::as_i64)
            .ok_or_else(|| Error::invalid_argument("the delete write needs a snapshot id"))?;
        let prefix = request
            .get("prefix")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid_argument("the delete write needs a file prefix"))?;
        let n = positions.len(env)?;
        let mut flat = vec![0i64; n];
        positions.get_region(env, 0, &mut flat)?;
        let mut per_file = Vec::new();
        let mut at = 0usize;
        for entry in request
            .get("files")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let (Some(path), Some(count)) = (
                entry.get(0).and_then(Value::as_str),
                entry.get(1).and_then(Value::as_u64),
            ) else {
                return Err(Error::invalid_argument("files must be [path, count] pairs").into());
            };
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            let slice = flat
                .get(at..at.saturating_add(count))
                .ok_or_else(|| Error::invalid_argument("fewer positions than the files' counts"))?;
            per_file.push((path.to_string(), slice.to_vec()));
            at += count;
        }
        let io = executor_io(&md.location, request.get("io-properties"))?;
        let scanned = if scanned.is_null() {
            None
        } else {
            Some(env.convert_byte_array(&scanned)?)
        };
        let written =
            write_position_deletes(&io, &md, snapshot_id, &per_file, prefix, scanned.as_deref())?;
        let mut out = Vec::new();
        encode(&md, ADDED_DELETE, written.added, &mut out)?;
        encode(&md, REMOVED_DELETE, written.removed, &mut out)?;
        Ok(env.byte_array_from_slice(&out)?)
    })
    .resolve::<ThrowIcefloe>()
}

/// The driver's commit of a row-level write: one row delta of the tasks' written files,
/// validated as Java's Spark merge-on-read writes (`SparkPositionDeltaWrite`): from the
/// scanned snapshot, limited to the conflict filter, the referenced data files must still
/// exist and none was removed, no conflicting delete files were added, and under
/// `serializable` isolation no conflicting data files either. A failed commit deletes the
/// new files. Request: `namespace`, `name`, `snapshot-id` (the scan's, or null),
/// `isolation-level`, `conflict-filter`, `summary`.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_rowDeltaCommit<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    catalog: jlong,
    request: JString<'local>,
    written: JByteArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(catalog)? };
        let request = parse_json(&string(env, &request)?, "the row delta request")?;
        let written = env.convert_byte_array(&written)?;
        let ident = ident_of(&request)?;
        let base = catalog.0.load_table(&ident)?;
        let md = Arc::clone(&base.metadata);
        let mut tx = Transaction::new(Arc::clone(&catalog.0), ident, base);
        let files = decode(&md, &written)?;
        if files.is_empty() {
            // nothing matched: no snapshot, as Java commits nothing for an empty write
            return Ok(JString::from_str(
                env,
                json!({"snapshot-id": null}).to_string(),
            )?);
        }
        let mut p = SnapshotProducer::row_delta();
        let mut new_files = Vec::new();
        let mut referenced = Vec::new();
        for (kind, spec_id, f) in files {
            match kind {
                ADDED_DELETE => {
                    new_files.push(f.file_path.clone());
                    if let Some(r) = &f.referenced_data_file {
                        referenced.push(r.clone());
                    }
                    p.add_delete_file(Some(spec_id), f);
                }
                REMOVED_DELETE => {
                    p.remove_delete_file(f.file_path.clone(), f.content_offset);
                }
                ADDED_DATA => {
                    new_files.push(f.file_path.clone());
                    p.add_file_with_spec(spec_id, f);
                }
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown written-file kind {other}"
                    ))
                    .into())
                }
            }
        }
        referenced.sort_unstable();
        referenced.dedup();
        new_files.sort_unstable();
        new_files.dedup();
        for (k, v) in summary_of(&request) {
            p.set_summary(k, v);
        }
        // where the scan found the data files in a v4 tree: the commit reads those leaf
        // entries instead of searching the leaves (checked, never trusted)
        if let Some(positions) = request.get("positions") {
            for (path, position) in tree_positions(positions)? {
                p.data_file_position(path, position);
            }
        }
        let v = p.validation_mut();
        v.from_snapshot = request.get("snapshot-id").and_then(Value::as_i64);
        v.conflict_filter = filter_of(&md, request.get("conflict-filter"))?;
        v.referenced_data_files = referenced;
        v.validate_deleted_files = true;
        let level = request
            .get("isolation-level")
            .and_then(Value::as_str)
            .unwrap_or("serializable");
        IsolationLevel::parse(level)?.apply(v);
        // the transaction owns the new files: a failed commit deletes them, one whose
        // outcome is unknown keeps them
        tx.own_files(new_files);
        tx.add_change(Box::new(p));
        let state = tx.commit()?;
        Ok(JString::from_str(env, answer(&state).to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Tree positions as a scan hands them to its row-level commit: `[path, leaf, ordinal,
/// block offset or null, block length or null]` each.
pub(crate) fn tree_positions_json(positions: &[(String, TreePosition)]) -> Value {
    Value::Array(
        positions
            .iter()
            .filter_map(|(path, p)| match p {
                TreePosition::Leaf {
                    manifest,
                    ordinal,
                    block,
                } => Some(json!([
                    path,
                    &**manifest,
                    ordinal,
                    block.map(|b| b.offset),
                    block.map(|b| b.length)
                ])),
                TreePosition::Root => None,
            })
            .collect(),
    )
}

/// The positions of [`tree_positions_json`] read back; anything else is an
/// `InvalidArgument` naming the entry.
pub(crate) fn tree_positions(value: &Value) -> Outcome<Vec<(String, TreePosition)>> {
    let bad = |i: usize| {
        Error::invalid_argument(format!("positions[{i}]: expected [path, leaf, ordinal, block offset or null, block length or null]"))
    };
    let Value::Array(items) = value else {
        return Err(Error::invalid_argument("positions: expected an array").into());
    };
    let mut leaves: HashMap<&str, Arc<str>> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some([path, leaf, ordinal, offset, length]) = item.as_array().map(Vec::as_slice) else {
            return Err(bad(i).into());
        };
        let (Some(path), Some(leaf), Some(ordinal)) =
            (path.as_str(), leaf.as_str(), ordinal.as_i64())
        else {
            return Err(bad(i).into());
        };
        let block = match (offset, length) {
            (Value::Null, Value::Null) => None,
            (o, l) => Some(LeafBlock {
                offset: o.as_u64().ok_or_else(|| bad(i))?,
                length: l.as_u64().ok_or_else(|| bad(i))?,
            }),
        };
        let manifest = Arc::clone(leaves.entry(leaf).or_insert_with(|| Arc::from(leaf)));
        out.push((
            path.to_string(),
            TreePosition::Leaf {
                manifest,
                ordinal,
                block,
            },
        ));
    }
    Ok(out)
}

/// Deletes the files a row-level write made when Spark aborts it (a failed task or job).
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_rowDeltaAbort<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    catalog: jlong,
    request: JString<'local>,
    written: JByteArray<'local>,
) {
    env.with_env(|env| -> Outcome<()> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(catalog)? };
        let request = parse_json(&string(env, &request)?, "the abort request")?;
        let written = env.convert_byte_array(&written)?;
        let ident = ident_of(&request)?;
        let base = catalog.0.load_table(&ident)?;
        let md = Arc::clone(&base.metadata);
        let mut tx = Transaction::new(Arc::clone(&catalog.0), ident, base);
        let files: Vec<String> = decode(&md, &written)?
            .into_iter()
            .filter(|(kind, _, _)| *kind != REMOVED_DELETE)
            .map(|(_, _, f)| f.file_path)
            .collect();
        tx.own_files(files);
        tx.abort();
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tree_positions_round_trip_and_bad_ones_are_refused() {
        let leaf: Arc<str> = Arc::from("s3://b/t/metadata/leaf-1.avro");
        let positions = vec![
            (
                "a.parquet".to_string(),
                TreePosition::Leaf {
                    manifest: Arc::clone(&leaf),
                    ordinal: 0,
                    block: Some(LeafBlock {
                        offset: 1_234,
                        length: 5_678,
                    }),
                },
            ),
            (
                "b.parquet".to_string(),
                TreePosition::Leaf {
                    manifest: leaf,
                    ordinal: 7,
                    block: None,
                },
            ),
            ("c.parquet".to_string(), TreePosition::Root),
        ];
        let json = tree_positions_json(&positions);
        assert_eq!(
            json.as_array().unwrap().len(),
            2,
            "a root position is not handed on"
        );
        let back = tree_positions(&json).map_err(|_| "refused").unwrap();
        assert_eq!(back, positions[..2].to_vec());

        for bad in [
            json!({"a": 1}),
            json!([["a.parquet", "leaf", 0, 1]]),
            json!([["a.parquet", 3, 0, null, null]]),
            json!([["a.parquet", "leaf", "0", null, null]]),
            json!([["a.parquet", "leaf", 0, -1, 10]]),
            json!([["a.parquet", "leaf", 0, 10, null]]),
        ] {
            assert!(tree_positions(&bad).is_err(), "{bad}");
        }
    }
}
