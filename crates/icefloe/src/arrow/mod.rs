//! Arrow conversions: partition transforms applied to whole Arrow arrays.
//!
//! The vectorized transforms call the same scalar functions as
//! [`Transform::apply`](crate::spec::Transform::apply) (`bucket_i64`, `truncate_str`, ...),
//! so both paths give the same results by construction; tests compare them anyway.

pub mod manifest;
pub mod packed;
pub mod plan;
pub mod schema_from_arrow;

use std::sync::Arc;

use arrow_array::types::ByteArrayType;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BinaryArray, Date32Array, Decimal128Array,
    FixedSizeBinaryArray, GenericBinaryArray, GenericByteArray, GenericStringArray, Int32Array,
    Int64Array, LargeBinaryArray, LargeStringArray, OffsetSizeTrait, PrimitiveArray, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_buffer::{ArrowNativeType, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit as ArrowTimeUnit};

use crate::error::{Error, Result};
use crate::spec::literal::{Literal, NANOS_PER_MICRO};
use crate::spec::transform::{
    bucket_bytes, bucket_decimal, bucket_i64, date_to, micros_to, nanos_to, truncate_bytes,
    truncate_i128, truncate_i32, truncate_i64, truncate_str, TimeUnit,
};
use crate::spec::{PrimitiveType, Transform};

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

/// An Arrow array of Iceberg `ty` values (in the type of [`iceberg_to_arrow_type`]) from
/// literals; `None` is null. The inverse of [`array_value`]. A literal of another kind
/// than `ty` is an error.
pub fn literals_to_array(values: &[Option<&Literal>], ty: &PrimitiveType) -> Result<ArrayRef> {
    use arrow_array::builder::{BinaryBuilder, FixedSizeBinaryBuilder};
    use arrow_array::{BooleanArray, Float32Array, Float64Array, NullArray};
    use PrimitiveType as P;
    let mismatch = |v: &Literal| Error::invalid_argument(format!("value {v} is not of type {ty}"));
    macro_rules! prim {
        ($arr:ty, $pat:path) => {{
            let out = values
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some($pat(x)) => Ok(Some(x.clone())),
                    Some(other) => Err(mismatch(other)),
                })
                .collect::<Result<$arr>>()?;
            out
        }};
    }
    let arrow_type = iceberg_to_arrow_type(ty)?;
    let array: ArrayRef = match ty {
        P::Boolean => Arc::new(prim!(BooleanArray, Literal::Boolean)),
        P::Int => Arc::new(prim!(Int32Array, Literal::Int)),
        P::Long => Arc::new(prim!(Int64Array, Literal::Long)),
        P::Float => Arc::new(prim!(Float32Array, Literal::Float)),
        P::Double => Arc::new(prim!(Float64Array, Literal::Double)),
        P::Date => Arc::new(prim!(Date32Array, Literal::Date)),
        P::Time => Arc::new(prim!(Time64MicrosecondArray, Literal::Time)),
        P::Timestamp => Arc::new(prim!(TimestampMicrosecondArray, Literal::Timestamp)),
        P::Timestamptz => {
            Arc::new(prim!(TimestampMicrosecondArray, Literal::Timestamptz).with_timezone("UTC"))
        }
        P::TimestampNs => Arc::new(prim!(TimestampNanosecondArray, Literal::TimestampNs)),
        P::TimestamptzNs => {
            Arc::new(prim!(TimestampNanosecondArray, Literal::TimestamptzNs).with_timezone("UTC"))
        }
        P::Decimal { .. } => {
            let DataType::Decimal128(p, s) = arrow_type else {
                return Err(Error::invalid_argument(format!(
                    "{ty} has no Arrow decimal type"
                )));
            };
            Arc::new(
                prim!(Decimal128Array, Literal::Decimal)
                    .with_precision_and_scale(p, s)
                    .map_err(|e| Error::invalid_argument(format!("{ty}: {e}")))?,
            )
        }
        P::String => Arc::new(prim!(StringArray, Literal::String)),
        P::Binary | P::Geometry { .. } | P::Geography { .. } => {
            let mut b = BinaryBuilder::new();
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Literal::Binary(x)) => b.append_value(x),
                    Some(other) => return Err(mismatch(other)),
                }
            }
            Arc::new(b.finish())
        }
        P::Uuid | P::Fixed(_) => {
            let DataType::FixedSizeBinary(width) = arrow_type else {
                return Err(Error::invalid_argument(format!(
                    "{ty} has no fixed-size Arrow type"
                )));
            };
            let mut b = FixedSizeBinaryBuilder::new(width);
            for v in values {
                let bytes = match v {
                    None => {
                        b.append_null();
                        continue;
                    }
                    Some(Literal::Uuid(u)) => u.to_be_bytes().to_vec(),
                    Some(Literal::Fixed(x)) => x.clone(),
                    Some(other) => return Err(mismatch(other)),
                };
                b.append_value(&bytes)
                    .map_err(|e| Error::invalid_argument(format!("{ty}: {e}")))?;
            }
            Arc::new(b.finish())
        }
        P::Unknown => Arc::new(NullArray::new(values.len())),
    };
    Ok(array)
}

/// The Arrow type of the array [`transform_array`] returns for an input of `input` type.
pub fn transform_result_arrow_type(transform: &Transform, input: &DataType) -> DataType {
    match transform {
        Transform::Bucket(_)
        | Transform::Year
        | Transform::Month
        | Transform::Day
        | Transform::Hour => DataType::Int32,
        _ => input.clone(),
    }
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

/// Applies `transform` to every value of `array`, whose values are of Iceberg type `source`.
///
/// bucket, year, month, day and hour give an Int32 array; identity and truncate give an
/// array of the input's Arrow type; void gives an all-null array of the input's type.
/// Nulls stay null.
pub fn transform_array(
    transform: &Transform,
    source: &PrimitiveType,
    array: &dyn Array,
) -> Result<ArrayRef> {
    if let Transform::Unknown(name) = transform {
        return Err(Error::unsupported(format!(
            "cannot apply unknown transform '{name}'"
        )));
    }
    if !transform.accepts(source) {
        return Err(Error::invalid_argument(format!(
            "transform '{transform}' cannot be applied to type {source}"
        )));
    }
    let dt = array.data_type();
    if !arrow_type_matches(source, dt) {
        return Err(Error::invalid_argument(format!(
            "an Arrow array of type {dt} does not hold Iceberg {source} values"
        )));
    }
    match transform {
        Transform::Void => Ok(new_null_array(dt, array.len())),
        Transform::Identity => Ok(make_array(array.to_data())),
        Transform::Bucket(n) => bucket_array(array, *n).map(|a| Arc::new(a) as ArrayRef),
        Transform::Truncate(w) => truncate_array(array, *w),
        Transform::Year => time_array(array, TimeUnit::Year).map(|a| Arc::new(a) as ArrayRef),
        Transform::Month => time_array(array, TimeUnit::Month).map(|a| Arc::new(a) as ArrayRef),
        Transform::Day => time_array(array, TimeUnit::Day).map(|a| Arc::new(a) as ArrayRef),
        Transform::Hour => time_array(array, TimeUnit::Hour).map(|a| Arc::new(a) as ArrayRef),
        Transform::Unknown(_) => Err(Error::unsupported("cannot apply an unknown transform")),
    }
}

fn downcast<T: 'static>(array: &dyn Array) -> Result<&T> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| {
        Error::invalid_argument(format!(
            "unexpected Arrow array for type {}",
            array.data_type()
        ))
    })
}

fn unsupported_arrow(array: &dyn Array, what: &str) -> Error {
    Error::invalid_argument(format!(
        "cannot apply {what} to an Arrow array of type {}",
        array.data_type()
    ))
}

/// `op` over every value of a primitive array into an Int32 array, keeping the nulls.
fn map_to_i32<T: ArrowPrimitiveType>(
    array: &dyn Array,
    op: impl Fn(T::Native) -> i32,
) -> Result<Int32Array> {
    Ok(downcast::<PrimitiveArray<T>>(array)?.unary::<_, Int32Type>(op))
}

/// The byte slices of a string or binary array (also under null slots, whose bytes are
/// whatever the array holds; their results are masked by the copied null buffer).
fn byte_values<T: ByteArrayType>(a: &GenericByteArray<T>) -> impl Iterator<Item = &[u8]> + '_ {
    let data = a.value_data();
    a.value_offsets()
        .windows(2)
        .map(move |w| data.get(w[0].as_usize()..w[1].as_usize()).unwrap_or(&[]))
}

fn int32_with_nulls(values: Vec<i32>, array: &dyn Array) -> Result<Int32Array> {
    Int32Array::try_new(ScalarBuffer::from(values), array.nulls().cloned())
        .map_err(|e| Error::invalid_argument(format!("cannot build the result array: {e}")))
}

fn bucket_byte_array<T: ByteArrayType>(a: &GenericByteArray<T>, n: u32) -> Result<Int32Array> {
    int32_with_nulls(byte_values(a).map(|b| bucket_bytes(b, n)).collect(), a)
}

fn bucket_array(array: &dyn Array, n: u32) -> Result<Int32Array> {
    match array.data_type() {
        DataType::Int32 => map_to_i32::<Int32Type>(array, |v| bucket_i64(i64::from(v), n)),
        DataType::Date32 => map_to_i32::<Date32Type>(array, |v| bucket_i64(i64::from(v), n)),
        DataType::Int64 => map_to_i32::<Int64Type>(array, |v| bucket_i64(v, n)),
        DataType::Time64(ArrowTimeUnit::Microsecond) => {
            map_to_i32::<Time64MicrosecondType>(array, |v| bucket_i64(v, n))
        }
        DataType::Timestamp(ArrowTimeUnit::Microsecond, _) => {
            map_to_i32::<TimestampMicrosecondType>(array, |v| bucket_i64(v, n))
        }
        // nanoseconds hash as microseconds so both precisions bucket alike
        DataType::Timestamp(ArrowTimeUnit::Nanosecond, _) => {
            map_to_i32::<TimestampNanosecondType>(array, |v| {
                bucket_i64(v.div_euclid(NANOS_PER_MICRO), n)
            })
        }
        DataType::Decimal128(_, _) => map_to_i32::<Decimal128Type>(array, |v| bucket_decimal(v, n)),
        DataType::Utf8 => bucket_byte_array(downcast::<StringArray>(array)?, n),
        DataType::LargeUtf8 => bucket_byte_array(downcast::<LargeStringArray>(array)?, n),
        DataType::Binary => bucket_byte_array(downcast::<BinaryArray>(array)?, n),
        DataType::LargeBinary => bucket_byte_array(downcast::<LargeBinaryArray>(array)?, n),
        DataType::FixedSizeBinary(_) => {
            let a = downcast::<FixedSizeBinaryArray>(array)?;
            let values = (0..a.len()).map(|i| bucket_bytes(a.value(i), n)).collect();
            int32_with_nulls(values, a)
        }
        _ => Err(unsupported_arrow(array, "bucket")),
    }
}

fn truncate_strings<O: OffsetSizeTrait>(array: &dyn Array, w: u32) -> Result<ArrayRef> {
    let a = downcast::<GenericStringArray<O>>(array)?;
    let out: GenericStringArray<O> = a.iter().map(|v| v.map(|s| truncate_str(s, w))).collect();
    Ok(Arc::new(out))
}

fn truncate_binaries<O: OffsetSizeTrait>(array: &dyn Array, w: u32) -> Result<ArrayRef> {
    let a = downcast::<GenericBinaryArray<O>>(array)?;
    let out: GenericBinaryArray<O> = a.iter().map(|v| v.map(|b| truncate_bytes(b, w))).collect();
    Ok(Arc::new(out))
}

fn truncate_array(array: &dyn Array, w: u32) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Int32 => {
            Arc::new(downcast::<Int32Array>(array)?.unary::<_, Int32Type>(|v| truncate_i32(v, w)))
        }
        DataType::Int64 => {
            Arc::new(downcast::<Int64Array>(array)?.unary::<_, Int64Type>(|v| truncate_i64(v, w)))
        }
        DataType::Decimal128(p, s) => Arc::new(
            downcast::<Decimal128Array>(array)?
                .unary::<_, Decimal128Type>(|v| truncate_i128(v, w))
                .with_precision_and_scale(*p, *s)
                .map_err(|e| {
                    Error::invalid_argument(format!("cannot build the result array: {e}"))
                })?,
        ),
        DataType::Utf8 => truncate_strings::<i32>(array, w)?,
        DataType::LargeUtf8 => truncate_strings::<i64>(array, w)?,
        DataType::Binary => truncate_binaries::<i32>(array, w)?,
        DataType::LargeBinary => truncate_binaries::<i64>(array, w)?,
        _ => return Err(unsupported_arrow(array, "truncate")),
    })
}

fn time_array(array: &dyn Array, unit: TimeUnit) -> Result<Int32Array> {
    match array.data_type() {
        DataType::Date32 if unit != TimeUnit::Hour => {
            map_to_i32::<Date32Type>(array, |d| date_to(unit, d))
        }
        DataType::Timestamp(ArrowTimeUnit::Microsecond, _) => {
            map_to_i32::<TimestampMicrosecondType>(array, |v| micros_to(unit, v))
        }
        DataType::Timestamp(ArrowTimeUnit::Nanosecond, _) => {
            map_to_i32::<TimestampNanosecondType>(array, |v| nanos_to(unit, v))
        }
        _ => Err(unsupported_arrow(array, "a time transform")),
    }
}

/// The value at `index` of an Arrow array holding Iceberg `source` values, as a literal
/// (`None` for null). Useful to compare vectorized and scalar results and to read single
/// partition values.
pub fn array_value(
    array: &dyn Array,
    index: usize,
    source: &PrimitiveType,
) -> Result<Option<Literal>> {
    use PrimitiveType as P;
    if index >= array.len() {
        return Err(Error::invalid_argument(format!(
            "index {index} is out of bounds for an array of length {}",
            array.len()
        )));
    }
    if !arrow_type_matches(source, array.data_type()) {
        return Err(Error::invalid_argument(format!(
            "an Arrow array of type {} does not hold Iceberg {source} values",
            array.data_type()
        )));
    }
    if array.is_null(index) {
        return Ok(None);
    }
    let i = index;
    Ok(Some(match source {
        P::Boolean => Literal::Boolean(downcast::<arrow_array::BooleanArray>(array)?.value(i)),
        P::Float => Literal::Float(downcast::<arrow_array::Float32Array>(array)?.value(i)),
        P::Double => Literal::Double(downcast::<arrow_array::Float64Array>(array)?.value(i)),
        P::Int => Literal::Int(downcast::<Int32Array>(array)?.value(i)),
        P::Long => Literal::Long(downcast::<Int64Array>(array)?.value(i)),
        P::Decimal { .. } => Literal::Decimal(downcast::<Decimal128Array>(array)?.value(i)),
        P::Date => Literal::Date(downcast::<Date32Array>(array)?.value(i)),
        P::Time => Literal::Time(downcast::<Time64MicrosecondArray>(array)?.value(i)),
        P::Timestamp => Literal::Timestamp(downcast::<TimestampMicrosecondArray>(array)?.value(i)),
        P::Timestamptz => {
            Literal::Timestamptz(downcast::<TimestampMicrosecondArray>(array)?.value(i))
        }
        P::TimestampNs => {
            Literal::TimestampNs(downcast::<TimestampNanosecondArray>(array)?.value(i))
        }
        P::TimestamptzNs => {
            Literal::TimestamptzNs(downcast::<TimestampNanosecondArray>(array)?.value(i))
        }
        P::String => Literal::String(match array.data_type() {
            DataType::LargeUtf8 => downcast::<LargeStringArray>(array)?.value(i).to_string(),
            _ => downcast::<StringArray>(array)?.value(i).to_string(),
        }),
        P::Binary => Literal::Binary(match array.data_type() {
            DataType::LargeBinary => downcast::<LargeBinaryArray>(array)?.value(i).to_vec(),
            _ => downcast::<BinaryArray>(array)?.value(i).to_vec(),
        }),
        P::Fixed(_) => Literal::Fixed(downcast::<FixedSizeBinaryArray>(array)?.value(i).to_vec()),
        P::Uuid => {
            let b = downcast::<FixedSizeBinaryArray>(array)?.value(i);
            Literal::Uuid(u128::from_be_bytes(
                b.try_into()
                    .map_err(|_| Error::invalid_argument("a uuid must be 16 bytes"))?,
            ))
        }
        _ => {
            return Err(Error::unsupported(format!(
                "reading {source} values from Arrow is not supported"
            )))
        }
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_array::builder::FixedSizeBinaryBuilder;

    const TS: [i64; 8] = [
        0,
        -1,
        1_510_871_468_000_000,
        -3_599_000_001,
        -86_400_000_000,
        -86_400_000_001,
        i64::MAX,
        i64::MIN,
    ];

    fn fixed(width: i32, values: &[Option<&[u8]>]) -> ArrayRef {
        let mut b = FixedSizeBinaryBuilder::with_capacity(values.len(), width);
        for v in values {
            match v {
                Some(v) => b.append_value(v).unwrap(),
                None => b.append_null(),
            }
        }
        Arc::new(b.finish())
    }

    /// One array per source type, each with nulls and edge values.
    fn arrays() -> Vec<(PrimitiveType, ArrayRef)> {
        use PrimitiveType as P;
        let ts = || {
            TS.iter()
                .map(|v| Some(*v))
                .chain([None])
                .collect::<Vec<_>>()
        };
        let strings = vec![
            Some("iceberg"),
            None,
            Some(""),
            Some("😀😁😂🤣"),
            Some("冰山表格"),
            Some("ab"),
            Some("e\u{301}xyz"),
        ];
        let bins: Vec<Option<&[u8]>> = vec![
            Some(&[0, 1, 2, 3]),
            None,
            Some(&[]),
            Some(&[1, 2, 3, 4, 5]),
            Some(&[0xff]),
        ];
        vec![
            (
                P::Int,
                Arc::new(Int32Array::from(vec![
                    Some(34),
                    None,
                    Some(-1),
                    Some(0),
                    Some(i32::MIN),
                    Some(i32::MAX),
                    Some(-11),
                ])) as ArrayRef,
            ),
            (
                P::Long,
                Arc::new(Int64Array::from(vec![
                    Some(34),
                    None,
                    Some(-1),
                    Some(i64::MIN),
                    Some(i64::MAX),
                    Some(-11),
                ])),
            ),
            (
                P::Decimal {
                    precision: 9,
                    scale: 2,
                },
                Arc::new(
                    Decimal128Array::from(vec![
                        Some(1420),
                        None,
                        Some(-1065),
                        Some(0),
                        Some(999_999_999),
                        Some(-999_999_999),
                    ])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
                ),
            ),
            (
                P::Date,
                Arc::new(Date32Array::from(vec![
                    Some(17486),
                    None,
                    Some(-1),
                    Some(0),
                    Some(-365),
                    Some(-366),
                    Some(i32::MIN),
                    Some(i32::MAX),
                ])),
            ),
            (
                P::Time,
                Arc::new(Time64MicrosecondArray::from(vec![
                    Some(81_068_000_000),
                    None,
                    Some(0),
                    Some(86_399_999_999),
                ])),
            ),
            (
                P::Timestamp,
                Arc::new(TimestampMicrosecondArray::from(ts())),
            ),
            (
                P::Timestamptz,
                Arc::new(TimestampMicrosecondArray::from(ts()).with_timezone("UTC")),
            ),
            (
                P::TimestampNs,
                Arc::new(TimestampNanosecondArray::from(ts())),
            ),
            (
                P::TimestamptzNs,
                Arc::new(TimestampNanosecondArray::from(ts()).with_timezone("+00:00")),
            ),
            (P::String, Arc::new(StringArray::from(strings.clone()))),
            (P::String, Arc::new(LargeStringArray::from(strings))),
            (P::Binary, Arc::new(BinaryArray::from(bins.clone()))),
            (P::Binary, Arc::new(LargeBinaryArray::from(bins))),
            (
                P::Fixed(4),
                fixed(4, &[Some(&[0, 1, 2, 3]), None, Some(&[9, 9, 9, 9])]),
            ),
            (
                P::Uuid,
                fixed(
                    16,
                    &[
                        Some(&0xf79c3e09_677c_4bbd_a479_3f349cb785e7_u128.to_be_bytes()),
                        None,
                        Some(&[0; 16]),
                    ],
                ),
            ),
        ]
    }

    fn transforms() -> Vec<Transform> {
        [
            "identity",
            "bucket[16]",
            "bucket[7]",
            "bucket[2147483647]",
            "truncate[1]",
            "truncate[3]",
            "truncate[10]",
            "year",
            "month",
            "day",
            "hour",
            "void",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect()
    }

    #[test]
    fn literals_to_array_inverts_array_value() {
        use PrimitiveType as P;
        let cases: Vec<(P, Vec<Option<Literal>>)> = vec![
            (P::Boolean, vec![Some(Literal::Boolean(true)), None]),
            (
                P::Int,
                vec![Some(Literal::Int(-3)), None, Some(Literal::Int(7))],
            ),
            (P::Long, vec![Some(Literal::Long(i64::MIN))]),
            (P::Float, vec![Some(Literal::Float(1.5))]),
            (P::Double, vec![None, Some(Literal::Double(-0.25))]),
            (
                P::Decimal {
                    precision: 9,
                    scale: 2,
                },
                vec![Some(Literal::Decimal(-1065)), None],
            ),
            (P::Date, vec![Some(Literal::Date(-1))]),
            (P::Time, vec![Some(Literal::Time(1))]),
            (P::Timestamp, vec![Some(Literal::Timestamp(-1))]),
            (P::Timestamptz, vec![Some(Literal::Timestamptz(5))]),
            (P::TimestampNs, vec![Some(Literal::TimestampNs(-5))]),
            (P::TimestamptzNs, vec![Some(Literal::TimestamptzNs(9))]),
            (P::String, vec![Some(Literal::String("冰".into())), None]),
            (
                P::Uuid,
                vec![Some(Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7))],
            ),
            (P::Fixed(3), vec![Some(Literal::Fixed(vec![1, 2, 3])), None]),
            (
                P::Binary,
                vec![
                    Some(Literal::Binary(vec![])),
                    Some(Literal::Binary(vec![0xff])),
                ],
            ),
        ];
        for (ty, values) in cases {
            let refs: Vec<Option<&Literal>> = values.iter().map(Option::as_ref).collect();
            let array = literals_to_array(&refs, &ty).unwrap();
            assert_eq!(array.data_type(), &iceberg_to_arrow_type(&ty).unwrap());
            for (i, v) in values.iter().enumerate() {
                assert_eq!(
                    array_value(array.as_ref(), i, &ty).unwrap().as_ref(),
                    v.as_ref(),
                    "{ty}"
                );
            }
        }
        assert!(literals_to_array(&[Some(&Literal::Long(1))], &P::Int).is_err());
        assert!(literals_to_array(&[Some(&Literal::Fixed(vec![1]))], &P::Fixed(2)).is_err());
    }

    #[test]
    fn arrow_type_mapping_round_trips() {
        use PrimitiveType as P;
        for t in [
            P::Int,
            P::Long,
            P::Decimal {
                precision: 9,
                scale: 2,
            },
            P::Date,
            P::Time,
            P::Timestamp,
            P::Timestamptz,
            P::TimestampNs,
            P::TimestamptzNs,
            P::String,
            P::Fixed(7),
            P::Binary,
        ] {
            let dt = iceberg_to_arrow_type(&t).unwrap();
            assert_eq!(arrow_type_to_iceberg(&dt).unwrap(), t, "{dt}");
        }
        assert_eq!(
            iceberg_to_arrow_type(&P::Uuid).unwrap(),
            DataType::FixedSizeBinary(16)
        );
        assert_eq!(
            transform_result_arrow_type(&Transform::Day, &DataType::Date32),
            DataType::Int32
        );
        assert_eq!(
            transform_result_arrow_type(&Transform::Truncate(2), &DataType::Utf8),
            DataType::Utf8
        );
    }

    #[test]
    fn vectorized_equals_scalar() {
        let mut checked = 0;
        for (source, array) in arrays() {
            // also a slice, so that array offsets are exercised
            let sliced = array.slice(1, array.len() - 1);
            for array in [array, sliced] {
                for t in transforms() {
                    if !t.accepts(&source) {
                        assert!(
                            transform_array(&t, &source, array.as_ref()).is_err(),
                            "{t} {source}"
                        );
                        continue;
                    }
                    let out = transform_array(&t, &source, array.as_ref()).unwrap();
                    assert_eq!(out.len(), array.len());
                    let result_type = t.result_type(&source.clone().into()).unwrap();
                    let result_type = result_type.as_primitive().unwrap();
                    match t {
                        Transform::Identity | Transform::Truncate(_) | Transform::Void => {
                            assert_eq!(out.data_type(), array.data_type(), "{t} {source}")
                        }
                        _ => assert_eq!(out.data_type(), &DataType::Int32, "{t} {source}"),
                    }
                    for i in 0..array.len() {
                        let input = array_value(array.as_ref(), i, &source).unwrap();
                        let expected = t.apply(input.as_ref(), &source).unwrap();
                        let got = array_value(out.as_ref(), i, result_type).unwrap();
                        assert_eq!(got, expected, "{t} {source} row {i} input {input:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn vectorized_spot_values() {
        let a = Int32Array::from(vec![Some(34), None]);
        let out = transform_array(&Transform::Bucket(16), &PrimitiveType::Int, &a).unwrap();
        let out = out.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(out.value(0), 3);
        assert!(out.is_null(1));
        let s = StringArray::from(vec![Some("iceberg"), None, Some("😀😁😂🤣")]);
        let out = transform_array(&Transform::Truncate(3), &PrimitiveType::String, &s).unwrap();
        let out = out.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(out.value(0), "ice");
        assert!(out.is_null(1));
        assert_eq!(out.value(2), "😀😁😂");
        let ts = TimestampMicrosecondArray::from(vec![-1]).with_timezone("UTC");
        let out = transform_array(&Transform::Identity, &PrimitiveType::Timestamptz, &ts).unwrap();
        assert_eq!(out.data_type(), ts.data_type());
    }

    #[test]
    fn mismatched_types_are_errors() {
        let a = Int64Array::from(vec![1]);
        let err = transform_array(&Transform::Bucket(4), &PrimitiveType::Int, &a).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }));
        assert!(
            err.to_string().contains("Int64") && err.to_string().contains("int"),
            "{err}"
        );
        let ts = TimestampMicrosecondArray::from(vec![1]);
        assert!(transform_array(&Transform::Day, &PrimitiveType::Timestamptz, &ts).is_err());
        let d = Decimal128Array::from(vec![1])
            .with_precision_and_scale(9, 3)
            .unwrap();
        assert!(transform_array(
            &Transform::Identity,
            &PrimitiveType::Decimal {
                precision: 9,
                scale: 2
            },
            &d
        )
        .is_err());
        let f = arrow_array::Float64Array::from(vec![1.0]);
        assert!(transform_array(&Transform::Bucket(4), &PrimitiveType::Double, &f).is_err());
        assert!(matches!(
            transform_array(
                &Transform::Unknown("zorder".into()),
                &PrimitiveType::Long,
                &a
            ),
            Err(Error::Unsupported { .. })
        ));
        assert!(transform_array(
            &Transform::Hour,
            &PrimitiveType::Date,
            &Date32Array::from(vec![1])
        )
        .is_err());
    }

    #[test]
    fn default_arrow_mapping() {
        use PrimitiveType as P;
        for (_, a) in arrays() {
            let t = arrow_type_to_iceberg(a.data_type()).unwrap();
            assert!(arrow_type_matches(&t, a.data_type()));
        }
        assert_eq!(
            arrow_type_to_iceberg(&DataType::FixedSizeBinary(16)).unwrap(),
            P::Fixed(16)
        );
        assert_eq!(
            arrow_type_to_iceberg(&DataType::Timestamp(
                ArrowTimeUnit::Nanosecond,
                Some("UTC".into())
            ))
            .unwrap(),
            P::TimestamptzNs
        );
        assert_eq!(
            arrow_type_to_iceberg(&DataType::Decimal128(38, 10)).unwrap(),
            P::Decimal {
                precision: 38,
                scale: 10
            }
        );
        assert!(arrow_type_to_iceberg(&DataType::Decimal128(10, -2)).is_err());
        assert_eq!(arrow_type_to_iceberg(&DataType::Float32).unwrap(), P::Float);
        assert_eq!(
            arrow_type_to_iceberg(&DataType::Boolean).unwrap(),
            P::Boolean
        );
        assert!(arrow_type_to_iceberg(&DataType::UInt64).is_err());
        assert!(arrow_type_to_iceberg(&DataType::Int8).is_err());
        assert!(
            arrow_type_to_iceberg(&DataType::Timestamp(ArrowTimeUnit::Millisecond, None)).is_err()
        );
    }
}
