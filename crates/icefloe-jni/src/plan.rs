//! Driver-side planning for the connector's `Scan`: the core's planner and packer
//! (`scan::task_groups`), each task group shipped to an executor as its payload bytes.

use icefloe::expr::Expression;
use icefloe::scan::split::{SplitOptions, ADAPTIVE_SPLIT_SIZE_ENABLED};
use icefloe::scan::task_groups::plan_packed_for;
use icefloe::scan::SnapshotSelection;
use icefloe::spec::Transform;
use icefloe::{Error, TableScan};
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use serde_json::{json, Value};

use crate::catalog::{close_handle, handle_ref, into_handle, parse_json, string, LoadedTable};
use crate::errors::{Outcome, ThrowIcefloe};

/// A packed plan: each group's payload and number of tasks, and what Spark needs once.
struct PlanHandle {
    payloads: Vec<(Vec<u8>, usize)>,
    info: Value,
    /// A row-level write's scan: its planned files and their deletes, for the write's
    /// executors (`icefloe::write::scanned_deletes`).
    scanned: Option<Vec<u8>>,
}

/// The scan a request describes (`filter`: the expression's JSON form, literals read by
/// the schema's types; `selected`: full column names; at most one of `snapshot-id`, `ref`
/// and `as-of-timestamp`; `case-sensitive`).
pub(crate) fn scan_of(table: &LoadedTable, request: &Value) -> Outcome<TableScan> {
    let md = &table.metadata;
    let selection = match (
        request.get("snapshot-id").and_then(Value::as_i64),
        request.get("ref").and_then(Value::as_str),
        request.get("as-of-timestamp").and_then(Value::as_i64),
    ) {
        (None, None, None) => SnapshotSelection::Current,
        (Some(id), None, None) => SnapshotSelection::SnapshotId(id),
        (None, Some(name), None) => SnapshotSelection::Ref(name.to_string()),
        (None, None, Some(ts)) => SnapshotSelection::AsOfTimestamp(ts),
        _ => {
            return Err(Error::invalid_argument(
                "give at most one of snapshot-id, ref and as-of-timestamp",
            )
            .into())
        }
    };
    let case_sensitive = request
        .get("case-sensitive")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut scan = TableScan::new(md.clone(), table.io.clone())
        .metadata_location(table.metadata_location.clone())
        .case_sensitive(case_sensitive)
        .snapshot(selection);
    // the filter's literals are read with the types of the schema the scan reads with:
    // the snapshot's for time travel (as Java's scans of an older snapshot)
    if let Some(f) = request.get("filter").filter(|f| !f.is_null()) {
        let schema = scan.read_schema()?;
        scan = scan.filter(Expression::from_json(f, Some(&schema))?);
    }
    if let Some(Value::Array(columns)) = request.get("selected") {
        let columns = columns
            .iter()
            .map(|c| {
                c.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::invalid_argument("selected columns must be strings"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        scan = scan.select(columns);
    }
    Ok(scan)
}

fn plan(table: &LoadedTable, request: &Value) -> Outcome<PlanHandle> {
    let scan = scan_of(table, request)?;
    let mut split = SplitOptions::from_table(&table.metadata)?;
    let given = request.get("target-split-size").and_then(Value::as_i64);
    if let Some(size) = given {
        split.target_size = size;
    }
    // Java's adaptive split size: unless a split size is given or it is turned off (by the
    // session's `adaptive-split-size`, which the driver sends when set, else by the table),
    // the target shrinks so that Spark's slots (`parallelism`, which the driver sends) each
    // get a group; a small table as one group is read by one core
    let adaptive = match request.get("adaptive-split-size").and_then(Value::as_bool) {
        Some(session) => session,
        None => table
            .metadata
            .property(ADAPTIVE_SPLIT_SIZE_ENABLED)
            .is_none_or(|v| v.eq_ignore_ascii_case("true")),
    };
    let parallelism = request
        .get("parallelism")
        .and_then(Value::as_i64)
        .and_then(|p| i32::try_from(p).ok())
        .filter(|_| given.is_none() && adaptive);
    // the executors' reader applies each task's residual (read::filter), so the plan's
    // pruning stands as it is
    let packed = plan_packed_for(&scan, &split, parallelism)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let payloads = packed.payloads(threads)?;
    // the columns a runtime filter (dynamic partition pruning) can prune by
    let mut partition_sources: Vec<i32> = packed
        .plan
        .specs
        .values()
        .flat_map(|spec| spec.fields.iter())
        .filter(|f| f.transform != Transform::Void)
        .flat_map(|f| f.source_ids.iter().copied())
        .collect();
    partition_sources.sort_unstable();
    partition_sources.dedup();
    let filtered = request.get("filter").is_some_and(|f| !f.is_null());
    let mut info = json!({
        "snapshot-id": packed.plan.snapshot_id,
        "estimated-rows": packed.statistics_rows(&table.metadata, filtered)?,
        "partition-source-ids": partition_sources,
        "schema": packed.plan.projected_schema.to_json(),
        "groups": payloads.len(),
        "tasks": payloads.iter().map(|(_, n)| n).sum::<usize>(),
    });
    // a row-level write's scan: where each data file sits in a v4 tree, for its commit
    // (crate::rowlevel::tree_positions reads them back). They travel as JSON through the
    // driver, so a scan of more files than MAX_TREE_POSITIONS passes none and its commit
    // searches the leaves, as without positions: bounded driver memory over speed
    let mut scanned = None;
    if request.get("positions").and_then(Value::as_bool) == Some(true) {
        let positions = packed.tree_positions()?;
        if positions.len() <= MAX_TREE_POSITIONS {
            info["positions"] = crate::rowlevel::tree_positions_json(&positions);
        }
        // and each planned file's deletes, for the write's executors: they travel with the
        // writer factory to every task, so a scan of more files than MAX_SCANNED_FILES
        // passes none and the executors read the manifests, as without them
        scanned = packed.scanned_deletes(MAX_SCANNED_FILES)?;
    }
    Ok(PlanHandle {
        payloads,
        info,
        scanned,
    })
}

/// The most tree positions a scan hands its row-level commit (about 200 bytes of JSON
/// each).
const MAX_TREE_POSITIONS: usize = 100_000;

/// The most planned files whose deletes a row-level scan hands its writers (an LZ4 frame
/// of Arrow rows, tens of bytes per file once compressed).
const MAX_SCANNED_FILES: usize = 100_000;

/// Plans a scan of a loaded table (see [`scan_of`] for the request; `target-split-size`
/// overrides the table's `read.split.target-size`); the handle is a packed plan.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planOpen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        Ok(into_handle(plan(table, &request)?))
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planInfo<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a plan handle from NativePlan
        let plan = unsafe { handle_ref::<PlanHandle>(handle)? };
        Ok(JString::from_str(env, plan.info.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// The payload of task group `group`: an LZ4 frame of its Arrow IPC stream
/// (`PackedPlan::payloads`), self-contained so that an executor needs nothing else of
/// the plan.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planPayload<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    group: jint,
) -> JByteArray<'local> {
    env.with_env(|env| -> Outcome<JByteArray<'local>> {
        // SAFETY: a plan handle from NativePlan
        let plan = unsafe { handle_ref::<PlanHandle>(handle)? };
        let payload = usize::try_from(group)
            .ok()
            .and_then(|g| plan.payloads.get(g))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "task group {group} of a plan of {} groups",
                    plan.payloads.len()
                ))
            })?;
        Ok(env.byte_array_from_slice(&payload.0)?)
    })
    .resolve::<ThrowIcefloe>()
}

/// A row-level write's scan: its planned files and their deletes for the write's
/// executors (`icefloe::write::scanned_deletes`); null for other scans and for plans of
/// more than `MAX_SCANNED_FILES` files.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planScannedDeletes<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Outcome<JByteArray<'local>> {
        // SAFETY: a plan handle from NativePlan
        let plan = unsafe { handle_ref::<PlanHandle>(handle)? };
        match &plan.scanned {
            Some(bytes) => Ok(env.byte_array_from_slice(bytes)?),
            None => Ok(JByteArray::null()),
        }
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planClose<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Outcome<()> {
        // SAFETY: Java's NativePlan closes its handle once
        unsafe { close_handle::<PlanHandle>(handle) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

/// The row count of a scan when the files' record counts give it (no filter, no deletes:
/// `ScanPlan::record_count_from_metadata`), else -1: the answer to a pushed-down
/// `COUNT(*)`.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planCount<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        let plan = scan_of(table, &request)?.plan_files()?;
        Ok(plan.record_count_from_metadata().unwrap_or(-1))
    })
    .resolve::<ThrowIcefloe>()
}

/// Whether a filter (its JSON form) reads and binds to the table's current schema: the
/// Spark layer pushes a translated predicate into planning only when it does, and leaves
/// it to Spark otherwise (as `icefloe.spark.filters.translate`).
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_filterBinds<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    filter: JString<'local>,
    case_sensitive: jboolean,
) -> jboolean {
    env.with_env(|env| -> Outcome<jboolean> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let filter = parse_json(&string(env, &filter)?, "the filter")?;
        let Some(schema) = table.metadata.current_schema() else {
            return Ok(false);
        };
        let binds = Expression::from_json(&filter, Some(schema))
            .and_then(|e| e.bind(schema, case_sensitive))
            .is_ok();
        Ok(binds)
    })
    .resolve::<ThrowIcefloe>()
}

/// The schema a scan of the request reads with (Iceberg JSON): the snapshot's for time
/// travel to a snapshot id, a time or a tag, else the current one. Reads no manifest.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_scanSchema<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        let schema = scan_of(table, &request)?.read_schema()?;
        Ok(JString::from_str(env, schema.to_json().to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Whether the request's filter reads and binds to the schema its scan reads with (the
/// snapshot's for time travel): the Spark layer pushes a translated predicate only then.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_scanFilterBinds<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> jboolean {
    env.with_env(|env| -> Outcome<jboolean> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        let mut unfiltered = request.clone();
        let filter = match unfiltered.as_object_mut().and_then(|o| o.remove("filter")) {
            Some(f) => f,
            None => return Ok(true),
        };
        let scan = scan_of(table, &unfiltered)?;
        let schema = scan.read_schema()?;
        let case_sensitive = request
            .get("case-sensitive")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(Expression::from_json(&filter, Some(&schema))
            .and_then(|e| e.bind(&schema, case_sensitive))
            .is_ok())
    })
    .resolve::<ThrowIcefloe>()
}

/// Whether the request's filter selects whole files: planned, every task's residual is
/// `true` and no partition has a null (`ScanPlan::filter_selects_whole_files`). The rows
/// read then all pass the filter, so Spark need not evaluate the predicates again.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_filterSelectsWholeFiles<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> jboolean {
    env.with_env(|env| -> Outcome<jboolean> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        let plan = scan_of(table, &request)?.plan_files()?;
        Ok(plan.filter_selects_whole_files())
    })
    .resolve::<ThrowIcefloe>()
}
