//! Values of Iceberg types and their single-value serializations (Appendix D):
//! binary (used for bounds in manifests) and JSON (used for defaults).

use serde_json::Value;

use super::types::Type;
use crate::error::{Error, Result};

/// A value of an Iceberg type. The type itself is not stored: decimals keep only the
/// unscaled value (the scale is in the type) and timestamps only their epoch offset.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    /// Unscaled value; the scale comes from the `decimal(P, S)` type.
    Decimal(i128),
    /// Days from 1970-01-01.
    Date(i32),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from 1970-01-01 00:00:00.
    Timestamp(i64),
    /// Microseconds from 1970-01-01 00:00:00 UTC.
    Timestamptz(i64),
    /// Nanoseconds from 1970-01-01 00:00:00.
    TimestampNs(i64),
    /// Nanoseconds from 1970-01-01 00:00:00 UTC.
    TimestamptzNs(i64),
    String(String),
    Uuid(u128),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
    /// Struct values by field id; a field absent from the list has no value set
    /// (a struct default `{}` is an empty list).
    Struct(Vec<(i32, Option<Literal>)>),
    List(Vec<Option<Literal>>),
    Map(Vec<(Literal, Option<Literal>)>),
}

impl Literal {
    /// Reads a value from its JSON single-value form for `ty`.
    pub fn from_json(value: &Value, ty: &Type) -> Result<Literal> {
        let _ = (value, ty);
        Err(Error::unsupported("JSON single-value deserialization is not implemented yet"))
    }

    /// Writes the JSON single-value form of this value for `ty`.
    pub fn to_json(&self, ty: &Type) -> Value {
        let _ = ty;
        Value::Null
    }
}
