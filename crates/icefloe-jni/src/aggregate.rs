//! A pushed-down aggregate (`COUNT(*)`, `COUNT(col)`, `MIN(col)`, `MAX(col)` without
//! grouping) answered from the plan's file metadata by the core
//! (`ScanPlan::aggregates_from_metadata`, Java's rules), or refused so that Spark reads rows.

use icefloe::scan::aggregate::aggregate_field_id;
use icefloe::scan::{AggregateValue, MetadataAggregate};
use icefloe::spec::{Literal, Type};
use icefloe::Error;
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use serde_json::{json, Value};

use crate::catalog::{handle_ref, parse_json, string, LoadedTable};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::plan::scan_of;

/// A bound value as the connector hands it to Spark's `InternalRow`: numbers for
/// booleans' siblings (int, long, date days, timestamp micros), floats and doubles as
/// their IEEE bits (JSON has no infinities), decimals as the unscaled digits.
fn spark_value(value: &Literal) -> Value {
    match value {
        Literal::Boolean(b) => json!(b),
        Literal::Int(v) | Literal::Date(v) => json!(v),
        Literal::Long(v) | Literal::Timestamp(v) | Literal::Timestamptz(v) => json!(v),
        Literal::Float(v) => json!(v.to_bits()),
        Literal::Double(v) => json!(v.to_bits()),
        Literal::Decimal(v) => json!(v.to_string()),
        // not produced: aggregates_from_metadata takes bounds of the types above only
        _ => Value::Null,
    }
}

/// The aggregates of a request (`aggregates`: objects with `op` one of `count-star`,
/// `count`, `min`, `max`, and `column`, a full column name, for the last three) over the
/// scan the rest of the request describes. Answers `null` when the metadata does not give
/// them, else `{"values": [...], "types": [...]}` (Iceberg types; `long` for counts).
fn aggregate(table: &LoadedTable, request: &Value) -> Outcome<Value> {
    let case_sensitive = request
        .get("case-sensitive")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let scan = scan_of(table, request)?;
    let schema = scan.read_schema()?;
    let mut aggregates = Vec::new();
    let mut types = Vec::new();
    for a in request
        .get("aggregates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let op = a.get("op").and_then(Value::as_str).unwrap_or("");
        let column = a.get("column").and_then(Value::as_str);
        let id = match column {
            Some(name) => Some(aggregate_field_id(&schema, name, case_sensitive)?),
            None => None,
        };
        let (aggregate, ty) = match (op, id) {
            ("count-star", _) => (MetadataAggregate::CountStar, json!("long")),
            ("count", Some(id)) => (MetadataAggregate::Count(id), json!("long")),
            ("min" | "max", Some(id)) => {
                let ty = match schema.field_by_id(id).map(|f| &f.field_type) {
                    Some(t @ Type::Primitive(_)) => t.to_json(),
                    _ => return Ok(Value::Null),
                };
                let agg = if op == "min" {
                    MetadataAggregate::Min(id)
                } else {
                    MetadataAggregate::Max(id)
                };
                (agg, ty)
            }
            _ => {
                return Err(Error::invalid_argument(format!(
                    "aggregate {a} is not count-star, or count, min or max with a column"
                ))
                .into())
            }
        };
        aggregates.push(aggregate);
        types.push(ty);
    }
    let ids: Vec<i32> = aggregates
        .iter()
        .filter_map(|a| match a {
            MetadataAggregate::CountStar => None,
            MetadataAggregate::Count(id)
            | MetadataAggregate::Min(id)
            | MetadataAggregate::Max(id) => Some(*id),
        })
        .collect();
    let plan = scan.with_stats_for(ids).plan_files()?;
    let Some(values) = plan.aggregates_from_metadata(&aggregates, &table.metadata)? else {
        return Ok(Value::Null);
    };
    let values: Vec<Value> = values
        .iter()
        .map(|v| match v {
            AggregateValue::Count(n) => json!(n),
            AggregateValue::Value(None) => Value::Null,
            AggregateValue::Value(Some(l)) => spark_value(l),
        })
        .collect();
    Ok(json!({"values": values, "types": types}))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_planAggregate<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the aggregate request")?;
        Ok(JString::from_str(
            env,
            aggregate(table, &request)?.to_string(),
        )?)
    })
    .resolve::<ThrowIcefloe>()
}
