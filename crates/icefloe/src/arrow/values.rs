//! Iceberg values and Arrow arrays: literals to an array and an array's value back to a
//! literal.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Int32Array,
    Int64Array, LargeBinaryArray, LargeStringArray, StringArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_schema::DataType;

use super::downcast;
use super::types::{arrow_type_matches, iceberg_to_arrow_type};
use crate::error::{Error, Result};
use crate::spec::literal::Literal;
use crate::spec::PrimitiveType;

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
