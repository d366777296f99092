//! Iceberg primitive types and Arrow data types: the default mapping both ways, and
//! which Arrow types hold the values of an Iceberg type.

use std::sync::Arc;

use arrow_schema::{DataType, TimeUnit as ArrowTimeUnit};

use crate::error::{Error, Result};
use crate::spec::PrimitiveType;

/// The Iceberg type of an Arrow type in the default mapping:
/// Boolean → boolean, Float32 → float, Float64 → double, Int32 → int, Int64 → long, Decimal128(P, S) → decimal(P, S), Date32 → date,
/// Time64(µs) → time, Timestamp(µs | ns, no zone | zone) → timestamp(tz)(_ns),
/// Utf8/LargeUtf8 → string, Binary/LargeBinary → binary, FixedSizeBinary(L) → fixed[L]
/// (a 16-byte fixed is not assumed to be a uuid).
pub fn arrow_type_to_iceberg(data_type: &DataType) -> Result<PrimitiveType> {
    use PrimitiveType as P;
    Ok(match data_type {
        DataType::Boolean => P::Boolean,
        DataType::Float32 => P::Float,
        DataType::Float64 => P::Double,
        DataType::Int32 => P::Int,
        DataType::Int64 => P::Long,
        DataType::Decimal128(p, s) => {
            let scale = u32::try_from(*s).map_err(|_| {
                Error::invalid_argument(format!("Arrow type {data_type} has a negative scale, which Iceberg decimals do not allow"))
            })?;
            let precision = u32::from(*p);
            if precision == 0 || precision > 38 || scale > precision {
                return Err(Error::invalid_argument(format!(
                    "Arrow type {data_type} is not a valid Iceberg decimal"
                )));
            }
            P::Decimal { precision, scale }
        }
        DataType::Date32 => P::Date,
        DataType::Time64(ArrowTimeUnit::Microsecond) => P::Time,
        DataType::Timestamp(ArrowTimeUnit::Microsecond, None) => P::Timestamp,
        DataType::Timestamp(ArrowTimeUnit::Microsecond, Some(_)) => P::Timestamptz,
        DataType::Timestamp(ArrowTimeUnit::Nanosecond, None) => P::TimestampNs,
        DataType::Timestamp(ArrowTimeUnit::Nanosecond, Some(_)) => P::TimestamptzNs,
        DataType::Utf8 | DataType::LargeUtf8 => P::String,
        DataType::Binary | DataType::LargeBinary => P::Binary,
        DataType::FixedSizeBinary(n) => P::Fixed(u64::try_from(*n).map_err(|_| {
            Error::invalid_argument(format!("Arrow type {data_type} has a negative length"))
        })?),
        other => {
            return Err(Error::invalid_argument(format!(
                "Arrow type {other} has no Iceberg transform source type"
            )))
        }
    })
}

/// The Arrow type icefloe uses for values of an Iceberg primitive type: the inverse of
/// [`arrow_type_to_iceberg`], with `uuid` as FixedSizeBinary(16) and zoned timestamps in UTC.
pub fn iceberg_to_arrow_type(source: &PrimitiveType) -> Result<DataType> {
    use PrimitiveType as P;
    let utc = || Some(Arc::from("UTC"));
    Ok(match source {
        P::Boolean => DataType::Boolean,
        P::Int => DataType::Int32,
        P::Long => DataType::Int64,
        P::Float => DataType::Float32,
        P::Double => DataType::Float64,
        P::Decimal { precision, scale } => {
            let p = u8::try_from(*precision)
                .map_err(|_| Error::invalid_argument(format!("{source} has too many digits")))?;
            let s = i8::try_from(*scale)
                .map_err(|_| Error::invalid_argument(format!("{source} has too large a scale")))?;
            DataType::Decimal128(p, s)
        }
        P::Date => DataType::Date32,
        P::Time => DataType::Time64(ArrowTimeUnit::Microsecond),
        P::Timestamp => DataType::Timestamp(ArrowTimeUnit::Microsecond, None),
        P::Timestamptz => DataType::Timestamp(ArrowTimeUnit::Microsecond, utc()),
        P::TimestampNs => DataType::Timestamp(ArrowTimeUnit::Nanosecond, None),
        P::TimestamptzNs => DataType::Timestamp(ArrowTimeUnit::Nanosecond, utc()),
        P::String => DataType::Utf8,
        P::Uuid => DataType::FixedSizeBinary(16),
        P::Fixed(len) => DataType::FixedSizeBinary(
            i32::try_from(*len)
                .map_err(|_| Error::invalid_argument(format!("{source} is too long for Arrow")))?,
        ),
        P::Binary => DataType::Binary,
        P::Unknown => DataType::Null,
        P::Geometry { .. } | P::Geography { .. } => DataType::Binary,
    })
}

/// Whether an Arrow array of `data_type` holds values of the Iceberg type `source`.
pub(crate) fn arrow_type_matches(source: &PrimitiveType, data_type: &DataType) -> bool {
    use PrimitiveType as P;
    match (source, data_type) {
        (P::Uuid, DataType::FixedSizeBinary(16)) => true,
        (P::Decimal { precision, scale }, DataType::Decimal128(p, s)) => {
            u32::from(*p) == *precision && i64::from(*s) == i64::from(*scale)
        }
        _ => arrow_type_to_iceberg(data_type).is_ok_and(|t| &t == source),
    }
}
