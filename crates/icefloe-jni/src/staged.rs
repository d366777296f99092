//! Staged creates and replacements for Spark's `StagingTableCatalog` (Java's
//! `SparkCatalog.stageCreate/stageReplace/stageCreateOrReplace` over a create or replace
//! transaction): `CREATE TABLE ... AS SELECT`, `REPLACE TABLE [AS SELECT]` and `CREATE OR
//! REPLACE TABLE [AS SELECT]` become one commit, so that a failed job leaves the catalog as
//! it was, and a replaced table keeps its history.
//!
//! - `tableStage(catalog, request) -> table handle`: checks the table's existence as the
//!   mode needs (`create`: `AlreadyExists` if it exists; `replace`: `NoSuchTable` if not)
//!   and answers the metadata the transaction starts from, a [`LoadedTable`] that nothing
//!   commits: what executors write the query's data files against.
//! - `tableCommitStaged(catalog, request, files) -> String`: the transaction again (the
//!   request of [`crate::ddl::create_transaction`]), with the data files executors wrote
//!   added in it when the request has `"write": true` (a staged table written by a query:
//!   `operation` and `filter` as a write's commit, `crate::write::write_producer`; an empty
//!   write still makes a snapshot, as Java's), committed as one new metadata file. The files are deleted when the commit fails (not when its outcome is
//!   unknown).

use std::sync::Arc;

use icefloe::catalog::TableState;
use icefloe::Error;
use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use serde_json::{json, Value};

use crate::catalog::{handle_ref, into_handle, parse_json, string, CatalogHandle, LoadedTable};
use crate::ddl::{create_transaction, ident_of};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::write::{decode_files, payloads, write_producer};

/// The metadata a staged create or replace starts from (see the module's doc).
fn stage(catalog: &CatalogHandle, request: &Value) -> Outcome<LoadedTable> {
    let mode = request
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("create");
    if mode == "create" {
        let ident = ident_of(request)?;
        // Java's createTransaction fails at once, before the query runs
        if catalog.0.table_exists(&ident)? {
            return Err(Error::already_exists(format!("Table already exists: {ident}")).into());
        }
    }
    let mut tx = create_transaction(catalog, request)?;
    let metadata = tx.start_metadata()?;
    Ok(LoadedTable {
        // not a file: the staged metadata is only written by the commit
        metadata_location: format!("(staged {mode} of {})", tx.ident()),
        metadata: Arc::new(metadata),
        io: catalog.0.io(),
    })
}

/// Commits a staged create or replace (see the module's doc).
fn commit_staged(catalog: &CatalogHandle, request: &Value, payloads: &[Vec<u8>]) -> Outcome<Value> {
    let mut tx = create_transaction(catalog, request)?;
    if request.get("write").and_then(Value::as_bool) == Some(true) {
        // decoded against the metadata the commit starts from: the staged one, unless the
        // table changed meanwhile in a way that renumbers the new spec (then the spec's
        // partition type no longer reads the files' partitions, and decoding fails)
        let start = TableState {
            metadata_location: format!("(staged replacement of {})", tx.ident()),
            metadata: Arc::new(tx.start_metadata()?),
        };
        let files = decode_files(&start.metadata, payloads)?;
        // Spark 4.1 writes an `... AS SELECT` of a replacement as an overwrite of the whole
        // staged table (nothing to delete: the replacement has no current snapshot), as Java's
        // OverwriteByFilter in the replace transaction
        let mut producer = write_producer(request, &start, catalog.0.io(), &files)?;
        let paths: Vec<String> = files.iter().map(|(_, f)| f.file_path.clone()).collect();
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
        tx.own_files(paths);
        tx.add_change(Box::new(producer));
    }
    let state = tx.commit()?;
    Ok(json!({
        "metadata-location": state.metadata_location,
        "snapshot-id": state.metadata.current_snapshot_id,
    }))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableStage<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the stage request")?;
        Ok(into_handle(stage(catalog, &request)?))
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableCommitStaged<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
    files: JObjectArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the staged commit request")?;
        let payloads = payloads(env, &files)?;
        let answer = commit_staged(catalog, &request, &payloads)?;
        Ok(JString::from_str(env, answer.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}
