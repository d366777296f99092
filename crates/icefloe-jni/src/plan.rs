//! Driver-side planning for the connector's `Scan`: the core's planner and packer
//! (`scan::task_groups`), each task group shipped to an executor as its payload bytes.

use arrow_array::{Array, StructArray};
use icefloe::expr::Expression;
use icefloe::scan::plan_batches::RESIDUALS_KEY;
use icefloe::scan::split::SplitOptions;
use icefloe::scan::task_groups::{plan_packed, PackedPlan};
use icefloe::scan::SnapshotSelection;
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
}

/// The scan a request describes (`filter`: the expression's JSON form, literals read by
/// the schema's types; `selected`: full column names; at most one of `snapshot-id`, `ref`
/// and `as-of-timestamp`; `case-sensitive`).
fn scan_of(table: &LoadedTable, request: &Value) -> Outcome<TableScan> {
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
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: the current schema is missing",
            table.metadata_location
        ))
    })?;
    let filter = match request.get("filter") {
        None | Some(Value::Null) => Expression::True,
        Some(f) => Expression::from_json(f, Some(schema))?,
    };
    let case_sensitive = request
        .get("case-sensitive")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut scan = TableScan::new(md.clone(), table.io.clone())
        .metadata_location(table.metadata_location.clone())
        .filter(filter)
        .case_sensitive(case_sensitive)
        .snapshot(selection);
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

/// Whether every residual of a packed plan is `true` (the plan's residuals are in its
/// schema metadata, see `scan::plan_batches`).
fn residuals_all_true(packed: &PackedPlan) -> bool {
    packed
        .schema()
        .metadata()
        .get(RESIDUALS_KEY)
        .and_then(|text| serde_json::from_str::<Vec<Value>>(text).ok())
        .is_some_and(|residuals| residuals.iter().all(|r| r == &Value::Bool(true)))
}

/// Whether a task of the plan has a null partition value (conservatively: any null in the
/// plan's `partition` column, whose fields are the union of the specs').
fn partitions_have_nulls(packed: &PackedPlan) -> Outcome<bool> {
    for batch in packed.to_batches(65536)? {
        let nulls = batch
            .column_by_name("partition")
            .and_then(|c| c.as_any().downcast_ref::<StructArray>())
            .is_some_and(|s| s.columns().iter().any(|c| c.null_count() > 0));
        if nulls {
            return Ok(true);
        }
    }
    Ok(false)
}

fn plan(table: &LoadedTable, request: &Value) -> Outcome<PlanHandle> {
    let scan = scan_of(table, request)?;
    let mut split = SplitOptions::from_table(&table.metadata)?;
    if let Some(size) = request.get("target-split-size").and_then(Value::as_i64) {
        split.target_size = size;
    }
    let mut packed = plan_packed(&scan, &split)?;
    let filtered = request.get("filter").is_some_and(|f| !f.is_null());
    if filtered && (!residuals_all_true(&packed) || partitions_have_nulls(&packed)?) {
        // The Rust reader does not apply residual filters yet (it refuses them; a task of a
        // partition with nulls gets the whole filter as its residual, as in Java's readers),
        // and Spark evaluates every predicate after the scan anyway: plan again without the
        // filter, so that the scan reads, unpruned. Pruning by a filter whose residuals are
        // all `true` (identity partition columns without nulls) is kept.
        let mut unfiltered = request.clone();
        if let Some(o) = unfiltered.as_object_mut() {
            o.remove("filter");
        }
        packed = plan_packed(&scan_of(table, &unfiltered)?, &split)?;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let payloads = packed.payloads(threads)?;
    let info = json!({
        "snapshot-id": packed.plan.snapshot_id,
        "schema": packed.plan.projected_schema.to_json(),
        "groups": payloads.len(),
        "tasks": payloads.iter().map(|(_, n)| n).sum::<usize>(),
    });
    Ok(PlanHandle { payloads, info })
}

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
