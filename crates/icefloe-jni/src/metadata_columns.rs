//! The metadata columns a table offers Spark (`SupportsMetadataColumns`), as Java's
//! `SparkTable.metadataColumns`: `_spec_id`, `_partition`, `_file`, `_pos`, `_deleted`,
//! and for format version 3 and later `_row_id` and `_last_updated_sequence_number`. Their
//! names, ids and order are those of the core reader's output (`read::output_schema`), so
//! the batches an executor reads carry exactly the declared columns; `_partition` is the
//! union of the partition fields of every spec, a day as a date (Java's
//! `Partitioning.partitionType`).

use std::collections::HashMap;

use icefloe::arrow::PARQUET_FIELD_ID;
use icefloe::expr::Expression;
use icefloe::read::{output_schema, ReadOptions};
use icefloe::scan::plan_batches::plan_to_batches;
use icefloe::spec::{NestedField, PrimitiveType, StructType, Transform, Type};
use icefloe::Error;
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use serde_json::Value;

use crate::catalog::{handle_ref, parse_json, string, LoadedTable};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::plan::scan_of;

/// Java's metadata columns in Java's order; the last two from format version 3.
const COLUMNS: [&str; 7] = [
    "_spec_id",
    "_partition",
    "_file",
    "_pos",
    "_deleted",
    "_row_id",
    "_last_updated_sequence_number",
];

/// The metadata columns Java's Spark integration declares not nullable.
const REQUIRED: [&str; 3] = ["_file", "_pos", "_deleted"];

fn field_id(f: &arrow_schema::Field) -> Option<i32> {
    f.metadata().get(PARQUET_FIELD_ID)?.parse().ok()
}

/// The Iceberg fields (JSON) of the metadata columns a scan of `request` (its snapshot
/// selection; its filter is ignored) can read.
fn metadata_fields(table: &LoadedTable, request: &Value) -> Outcome<Value> {
    let md = &table.metadata;
    let mut unfiltered = request.clone();
    if let Some(o) = unfiltered.as_object_mut() {
        o.remove("filter");
        o.remove("selected");
    }
    // planning nothing gives the plan's schema (its specs and their partition types) at
    // the cost of the manifest list
    let scan = scan_of(table, &unfiltered)?.filter(Expression::False);
    let schema = scan.read_schema()?;
    let (_, plan_schema, _) = plan_to_batches(&scan, 1)?;
    let names: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .filter(|n| {
            md.format_version >= 3 || !matches!(*n, "_row_id" | "_last_updated_sequence_number")
        })
        .collect();
    let options = ReadOptions {
        metadata_columns: names.iter().map(|n| n.to_string()).collect(),
        ..ReadOptions::default()
    };
    let out = output_schema(&plan_schema, &options)?;

    // the Iceberg type of each partition field by id, from every spec the read schema
    // can bind (a field later made void keeps its real transform's type)
    let mut partition_types: HashMap<i32, Type> = HashMap::new();
    for spec in &md.partition_specs {
        let Ok(ptype) = spec.partition_type(&schema) else {
            continue;
        };
        for (pf, f) in spec.fields.iter().zip(&ptype.fields) {
            if pf.transform == Transform::Void && partition_types.contains_key(&pf.field_id) {
                continue;
            }
            let ty = if pf.transform == Transform::Day {
                Type::Primitive(PrimitiveType::Date)
            } else {
                f.field_type.clone()
            };
            partition_types.insert(pf.field_id, ty);
        }
    }

    let mut fields = Vec::with_capacity(names.len());
    for name in names {
        let f = out.field_with_name(name).map_err(|_| {
            Error::invalid_argument(format!("the reader has no metadata column '{name}'"))
        })?;
        let id = field_id(f).ok_or_else(|| {
            Error::invalid_argument(format!("metadata column '{name}' has no field id"))
        })?;
        let ty = match name {
            "_file" => Type::Primitive(PrimitiveType::String),
            "_spec_id" => Type::Primitive(PrimitiveType::Int),
            "_deleted" => Type::Primitive(PrimitiveType::Boolean),
            "_partition" => {
                let arrow_schema::DataType::Struct(children) = f.data_type() else {
                    return Err(
                        Error::invalid_argument("the _partition column is not a struct").into(),
                    );
                };
                let mut nested = Vec::with_capacity(children.len());
                for c in children {
                    let cid = field_id(c).unwrap_or(-1);
                    let cty = match partition_types.get(&cid) {
                        Some(t) => t.clone(),
                        None => Type::Primitive(icefloe::arrow::types::arrow_type_to_iceberg(
                            c.data_type(),
                        )?),
                    };
                    nested.push(NestedField::optional(cid, c.name().clone(), cty));
                }
                Type::Struct(StructType::new(nested).into())
            }
            _ => Type::Primitive(PrimitiveType::Long),
        };
        fields.push(NestedField::new(id, name, ty, REQUIRED.contains(&name)).to_json());
    }
    Ok(Value::Array(fields))
}

/// The metadata columns of a scan of the request (see [`scan_of`]): a JSON list of
/// Iceberg fields.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_metadataColumns<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    table: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(table)? };
        let request = parse_json(&string(env, &request)?, "the scan request")?;
        let fields = metadata_fields(table, &request)?;
        Ok(JString::from_str(env, fields.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}
