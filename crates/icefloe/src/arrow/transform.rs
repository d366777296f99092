//! Partition transforms applied to whole Arrow arrays.
//!
//! The vectorized transforms call the same scalar functions as
//! [`Transform::apply`](crate::spec::Transform::apply) (`bucket_i64`, `truncate_str`, ...),
//! so both paths give the same results by construction; tests compare them anyway.

use std::sync::Arc;

use arrow_array::types::ByteArrayType;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BinaryArray, Decimal128Array,
    FixedSizeBinaryArray, GenericBinaryArray, GenericByteArray, GenericStringArray, Int32Array,
    Int64Array, LargeBinaryArray, LargeStringArray, OffsetSizeTrait, PrimitiveArray, StringArray,
};
use arrow_buffer::{ArrowNativeType, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit as ArrowTimeUnit};

use super::types::arrow_type_matches;
use super::{downcast, unsupported_arrow};
use crate::error::{Error, Result};
use crate::spec::literal::NANOS_PER_MICRO;
use crate::spec::transform::{
    bucket_bytes, bucket_decimal, bucket_i64, date_to, micros_to, nanos_to, truncate_bytes,
    truncate_i128, truncate_i32, truncate_i64, truncate_str, TimeUnit,
};
use crate::spec::{PrimitiveType, Transform};

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
