//! Rows of a metadata table as small value trees, and their conversion to Arrow columns by
//! the table's Iceberg schema. The metadata tables are small (snapshots, refs) or built one
//! manifest at a time in parallel (files, entries), so a row-shaped value that mirrors
//! Java's `StaticDataTask.Row` keeps every table's code a plain list of its fields.

use std::sync::Arc;

use arrow_array::{new_empty_array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Schema as ArrowSchema};

use crate::arrow::literals_to_array;
use crate::error::{Error, Result};
use crate::spec::{Literal, Schema, Type};

/// One value of a metadata table row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Lit(Literal),
    Struct(Vec<Value>),
    List(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    pub(crate) fn int(v: i32) -> Value {
        Value::Lit(Literal::Int(v))
    }

    pub(crate) fn long(v: i64) -> Value {
        Value::Lit(Literal::Long(v))
    }

    pub(crate) fn boolean(v: bool) -> Value {
        Value::Lit(Literal::Boolean(v))
    }

    pub(crate) fn string(v: impl Into<String>) -> Value {
        Value::Lit(Literal::String(v.into()))
    }

    /// A timestamp with zone in microseconds from milliseconds (Java's `millis * 1000`).
    pub(crate) fn timestamptz_ms(ms: i64) -> Value {
        Value::Lit(Literal::Timestamptz(ms.saturating_mul(1000)))
    }

    pub(crate) fn opt_int(v: Option<i32>) -> Value {
        v.map_or(Value::Null, Value::int)
    }

    pub(crate) fn opt_long(v: Option<i64>) -> Value {
        v.map_or(Value::Null, Value::long)
    }

    pub(crate) fn opt_string(v: Option<&str>) -> Value {
        v.map_or(Value::Null, Value::string)
    }

    pub(crate) fn opt_binary(v: Option<&[u8]>) -> Value {
        v.map_or(Value::Null, |b| Value::Lit(Literal::Binary(b.to_vec())))
    }

    pub(crate) fn opt_lit(v: Option<Literal>) -> Value {
        v.map_or(Value::Null, Value::Lit)
    }
}

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot build a metadata table column: {e}"))
}

/// The rows as one record batch of `arrow_schema` (the Arrow form of `schema`).
pub(crate) fn rows_to_batch(
    rows: &[Vec<Value>],
    schema: &Schema,
    arrow_schema: &Arc<ArrowSchema>,
) -> Result<RecordBatch> {
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (i, (field, arrow_field)) in schema
        .fields()
        .iter()
        .zip(arrow_schema.fields())
        .enumerate()
    {
        let values: Vec<&Value> = rows
            .iter()
            .map(|r| r.get(i).unwrap_or(&Value::Null))
            .collect();
        columns.push(column(&values, &field.field_type, arrow_field.data_type())?);
    }
    RecordBatch::try_new_with_options(
        arrow_schema.clone(),
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
    .map_err(arrow_err)
}

fn nulls(values: &[&Value]) -> Option<NullBuffer> {
    if values.iter().any(|v| matches!(v, Value::Null)) {
        Some(NullBuffer::from_iter(
            values.iter().map(|v| !matches!(v, Value::Null)),
        ))
    } else {
        None
    }
}

fn column(values: &[&Value], ty: &Type, arrow_type: &DataType) -> Result<ArrayRef> {
    match (ty, arrow_type) {
        (Type::Primitive(p), _) => {
            let lits = values
                .iter()
                .map(|v| match v {
                    Value::Null => Ok(None),
                    Value::Lit(l) => Ok(Some(l)),
                    other => Err(Error::invalid_argument(format!(
                        "a nested value {other:?} where a {p} was expected"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            literals_to_array(&lits, p)
        }
        (Type::Struct(s), DataType::Struct(fields)) => {
            let nulls = nulls(values);
            if fields.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(values.len(), nulls)));
            }
            let mut children = Vec::with_capacity(fields.len());
            for (i, (f, af)) in s.fields.iter().zip(fields.iter()).enumerate() {
                let child: Vec<&Value> = values
                    .iter()
                    .map(|v| match v {
                        Value::Struct(items) => items.get(i).unwrap_or(&Value::Null),
                        _ => &Value::Null,
                    })
                    .collect();
                children.push(column(&child, &f.field_type, af.data_type())?);
            }
            Ok(Arc::new(
                StructArray::try_new(fields.clone(), children, nulls).map_err(arrow_err)?,
            ))
        }
        (Type::List(l), DataType::List(item)) => {
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut flat: Vec<&Value> = Vec::new();
            for v in values {
                if let Value::List(items) = v {
                    flat.extend(items.iter());
                }
                offsets.push(i32::try_from(flat.len()).map_err(|_| too_long())?);
            }
            let child = column(&flat, &l.element_field.field_type, item.data_type())?;
            Ok(Arc::new(
                ListArray::try_new(
                    item.clone(),
                    OffsetBuffer::new(offsets.into()),
                    child,
                    nulls(values),
                )
                .map_err(arrow_err)?,
            ))
        }
        (Type::Map(m), DataType::Map(entries, sorted)) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid_argument("a map without key and value"));
            };
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let (mut keys, mut vals): (Vec<&Value>, Vec<&Value>) = (Vec::new(), Vec::new());
            for v in values {
                if let Value::Map(pairs) = v {
                    for (k, x) in pairs {
                        keys.push(k);
                        vals.push(x);
                    }
                }
                offsets.push(i32::try_from(keys.len()).map_err(|_| too_long())?);
            }
            let (Some(kf), Some(vf)) = (kv.first(), kv.get(1)) else {
                return Err(Error::invalid_argument("a map without key and value"));
            };
            let key_array = column(&keys, &m.key_field.field_type, kf.data_type())?;
            let value_array = column(&vals, &m.value_field.field_type, vf.data_type())?;
            let entries_array =
                StructArray::try_new(kv.clone(), vec![key_array, value_array], None)
                    .map_err(arrow_err)?;
            Ok(Arc::new(
                MapArray::try_new(
                    entries.clone(),
                    OffsetBuffer::new(offsets.into()),
                    entries_array,
                    nulls(values),
                    *sorted,
                )
                .map_err(arrow_err)?,
            ))
        }
        (_, other) if values.is_empty() => Ok(new_empty_array(other)),
        (t, other) => Err(Error::unsupported(format!(
            "metadata table values of type {t} as Arrow {other}"
        ))),
    }
}

fn too_long() -> Error {
    Error::invalid_argument("a metadata table column has more than 2^31 nested values")
}

/// The values as one Arrow array of `arrow_type` (the Arrow form of `ty`).
pub(crate) fn value_array(values: &[&Value], ty: &Type, arrow_type: &DataType) -> Result<ArrayRef> {
    column(values, ty, arrow_type)
}
