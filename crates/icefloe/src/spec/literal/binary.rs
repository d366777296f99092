//! The binary single-value form (Appendix D), used for bounds in manifests.

use super::datetime::{MICROS_PER_DAY, NANOS_PER_DAY};
use super::Literal;
use crate::error::{Error, Result};
use crate::spec::types::PrimitiveType;

impl Literal {
    /// The binary single-value form (Appendix D) of this value for `ty`, as used for the
    /// lower and upper bounds of manifests.
    pub fn to_bytes(&self, ty: &PrimitiveType) -> Result<Vec<u8>> {
        use PrimitiveType as P;
        Ok(match (ty, self) {
            (P::Boolean, Literal::Boolean(b)) => vec![u8::from(*b)],
            (P::Int, Literal::Int(v)) | (P::Date, Literal::Date(v)) => v.to_le_bytes().to_vec(),
            (P::Long, Literal::Long(v))
            | (P::Time, Literal::Time(v))
            | (P::Timestamp, Literal::Timestamp(v))
            | (P::Timestamptz, Literal::Timestamptz(v))
            | (P::TimestampNs, Literal::TimestampNs(v))
            | (P::TimestamptzNs, Literal::TimestamptzNs(v)) => v.to_le_bytes().to_vec(),
            (P::Float, Literal::Float(v)) => v.to_le_bytes().to_vec(),
            (P::Double, Literal::Double(v)) => v.to_le_bytes().to_vec(),
            (P::Decimal { .. }, Literal::Decimal(v)) => decimal_min_bytes(*v).to_vec(),
            (P::String, Literal::String(s)) => s.as_bytes().to_vec(),
            (P::Uuid, Literal::Uuid(u)) => u.to_be_bytes().to_vec(),
            (P::Fixed(_), Literal::Fixed(b)) | (P::Binary, Literal::Binary(b)) => b.clone(),
            (P::Unknown | P::Geometry { .. } | P::Geography { .. }, _) => {
                return Err(Error::unsupported(format!(
                    "binary single-value serialization of {ty} is not supported"
                )));
            }
            _ => {
                return Err(Error::invalid_argument(format!(
                    "value {self} is not a {ty} value"
                )))
            }
        })
    }

    /// Reads a binary single-value form (Appendix D) for the current type `ty`. Bounds
    /// written before a type promotion are recognised by their length ("Schema Evolution"):
    /// 4 bytes for a `long` are an int, for a `double` a float, and for a `timestamp` or
    /// `timestamp_ns` a date; they are converted to a value of `ty`.
    pub fn from_bytes(bytes: &[u8], ty: &PrimitiveType) -> Result<Literal> {
        use PrimitiveType as P;
        let bad_len = || {
            Error::invalid_argument(format!("cannot read {} bytes as a {ty} value", bytes.len()))
        };
        let le4 = |b: &[u8]| -> Option<[u8; 4]> { b.try_into().ok() };
        let le8 = |b: &[u8]| -> Option<[u8; 8]> { b.try_into().ok() };
        let promoted_date = |per_day: i64| -> Result<i64> {
            let days = i64::from(i32::from_le_bytes(le4(bytes).ok_or_else(bad_len)?));
            days.checked_mul(per_day).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "date bound of {days} days is outside the range of {ty}"
                ))
            })
        };
        Ok(match ty {
            P::Boolean => match bytes {
                [b] => Literal::Boolean(*b != 0),
                _ => return Err(bad_len()),
            },
            P::Int => Literal::Int(i32::from_le_bytes(le4(bytes).ok_or_else(bad_len)?)),
            P::Date => Literal::Date(i32::from_le_bytes(le4(bytes).ok_or_else(bad_len)?)),
            P::Long => match bytes.len() {
                4 => Literal::Long(i64::from(i32::from_le_bytes(
                    le4(bytes).ok_or_else(bad_len)?,
                ))),
                _ => Literal::Long(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?)),
            },
            P::Float => Literal::Float(f32::from_le_bytes(le4(bytes).ok_or_else(bad_len)?)),
            P::Double => match bytes.len() {
                4 => Literal::Double(f64::from(f32::from_le_bytes(
                    le4(bytes).ok_or_else(bad_len)?,
                ))),
                _ => Literal::Double(f64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?)),
            },
            P::Time => Literal::Time(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?)),
            P::Timestamp => match bytes.len() {
                4 => Literal::Timestamp(promoted_date(MICROS_PER_DAY)?),
                _ => Literal::Timestamp(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?)),
            },
            P::TimestampNs => match bytes.len() {
                4 => Literal::TimestampNs(promoted_date(NANOS_PER_DAY)?),
                _ => Literal::TimestampNs(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?)),
            },
            P::Timestamptz => {
                Literal::Timestamptz(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?))
            }
            P::TimestamptzNs => {
                Literal::TimestamptzNs(i64::from_le_bytes(le8(bytes).ok_or_else(bad_len)?))
            }
            P::Decimal { .. } => Literal::Decimal(decimal_from_be(bytes).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "cannot read {} bytes as a {ty} value: empty or too large for 128 bits",
                    bytes.len()
                ))
            })?),
            P::String => Literal::String(String::from_utf8(bytes.to_vec()).map_err(|e| {
                Error::invalid_argument(format!("string bound is not valid UTF-8: {e}"))
            })?),
            P::Uuid => Literal::Uuid(u128::from_be_bytes(
                bytes.try_into().map_err(|_| bad_len())?,
            )),
            // Any length is accepted, as in Java: writers may have truncated a bound.
            P::Fixed(_) => Literal::Fixed(bytes.to_vec()),
            P::Binary => Literal::Binary(bytes.to_vec()),
            P::Unknown | P::Geometry { .. } | P::Geography { .. } => {
                return Err(Error::unsupported(format!(
                    "binary single-value serialization of {ty} is not supported"
                )));
            }
        })
    }
}

/// Minimum-length two's complement big-endian bytes of `v` (at least one byte), as Java's
/// `BigInteger.toByteArray`. Returns a slice of a stack buffer to avoid allocating.
pub fn decimal_min_bytes(v: i128) -> DecimalBytes {
    let all = v.to_be_bytes();
    let mut start = 0;
    // Drop a leading byte while it is only sign extension of the next one.
    while start < 15 {
        let (b, next) = (all[start], all[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    DecimalBytes { buf: all, start }
}

/// The bytes of [`decimal_min_bytes`].
#[derive(Debug, Clone, Copy)]
pub struct DecimalBytes {
    buf: [u8; 16],
    start: usize,
}

impl DecimalBytes {
    pub fn as_slice(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or(&[])
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.as_slice().to_vec()
    }
}

/// Reads two's complement big-endian bytes of any length whose value fits in 128 bits.
fn decimal_from_be(bytes: &[u8]) -> Option<i128> {
    let first = *bytes.first()?;
    let fill = if first & 0x80 != 0 { 0xff } else { 0x00 };
    let (extra, rest) = bytes.split_at(bytes.len().saturating_sub(16));
    // Longer input is fine if the extra leading bytes are sign extension.
    if extra.iter().any(|b| *b != fill)
        || (!extra.is_empty() && (rest[0] & 0x80 != 0) != (fill == 0xff))
    {
        return None;
    }
    let mut buf = [fill; 16];
    buf[16 - rest.len()..].copy_from_slice(rest);
    Some(i128::from_be_bytes(buf))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, unused_imports)]
mod tests {
    use super::*;
    use crate::spec::literal::*;
    use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
    use serde_json::json;

    fn dec(precision: u32, scale: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision, scale }
    }
    #[test]
    fn binary_round_trips() {
        use PrimitiveType as P;
        let cases: Vec<(PrimitiveType, Literal, Vec<u8>)> = vec![
            (P::Boolean, Literal::Boolean(true), vec![1]),
            (P::Boolean, Literal::Boolean(false), vec![0]),
            (P::Int, Literal::Int(-2), vec![0xfe, 0xff, 0xff, 0xff]),
            (P::Long, Literal::Long(34), vec![34, 0, 0, 0, 0, 0, 0, 0]),
            (P::Float, Literal::Float(1.0), vec![0, 0, 0x80, 0x3f]),
            (
                P::Double,
                Literal::Double(-2.5),
                (-2.5f64).to_le_bytes().to_vec(),
            ),
            (dec(4, 2), Literal::Decimal(1420), vec![0x05, 0x8c]),
            (dec(4, 2), Literal::Decimal(-1420), vec![0xfa, 0x74]),
            (dec(38, 0), Literal::Decimal(0), vec![0]),
            (
                P::Date,
                Literal::Date(17486),
                17486i32.to_le_bytes().to_vec(),
            ),
            (
                P::Time,
                Literal::Time(81068000000),
                81068000000i64.to_le_bytes().to_vec(),
            ),
            (P::Timestamp, Literal::Timestamp(-1), vec![0xff; 8]),
            (
                P::Timestamptz,
                Literal::Timestamptz(1),
                vec![1, 0, 0, 0, 0, 0, 0, 0],
            ),
            (
                P::TimestampNs,
                Literal::TimestampNs(i64::MIN),
                i64::MIN.to_le_bytes().to_vec(),
            ),
            (
                P::TimestamptzNs,
                Literal::TimestamptzNs(7),
                7i64.to_le_bytes().to_vec(),
            ),
            (
                P::String,
                Literal::String("iceberg ❄".into()),
                "iceberg ❄".as_bytes().to_vec(),
            ),
            (
                P::Uuid,
                Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7),
                vec![
                    0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C,
                    0xB7, 0x85, 0xE7,
                ],
            ),
            (P::Fixed(3), Literal::Fixed(vec![1, 2, 3]), vec![1, 2, 3]),
            (P::Binary, Literal::Binary(vec![]), vec![]),
        ];
        for (ty, lit, bytes) in cases {
            assert_eq!(lit.to_bytes(&ty).unwrap(), bytes, "{ty} {lit}");
            assert_eq!(Literal::from_bytes(&bytes, &ty).unwrap(), lit, "{ty}");
        }
        // any non-zero byte is true
        assert_eq!(
            Literal::from_bytes(&[7], &P::Boolean).unwrap(),
            Literal::Boolean(true)
        );
        // sign-extended decimals longer than needed still read
        assert_eq!(
            Literal::from_bytes(&[0xff, 0xff, 0xfa, 0x74], &dec(9, 2)).unwrap(),
            Literal::Decimal(-1420)
        );
        let mut long = vec![0u8; 4];
        long.extend_from_slice(&i128::MAX.to_be_bytes());
        assert_eq!(
            Literal::from_bytes(&long, &dec(38, 0)).unwrap(),
            Literal::Decimal(i128::MAX)
        );
        long[0] = 1;
        assert!(Literal::from_bytes(&long, &dec(38, 0)).is_err());
        let mut long = vec![0u8; 1];
        long.extend_from_slice(&u128::MAX.to_be_bytes());
        assert!(
            Literal::from_bytes(&long, &dec(38, 0)).is_err(),
            "2^128-1 does not fit"
        );
        assert!(Literal::Int(1).to_bytes(&P::Long).is_err());
        assert!(matches!(
            Literal::Int(1).to_bytes(&P::Unknown),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn promoted_bounds_are_read_as_the_current_type() {
        use PrimitiveType as P;
        assert_eq!(
            Literal::from_bytes(&(-34i32).to_le_bytes(), &P::Long).unwrap(),
            Literal::Long(-34)
        );
        assert_eq!(
            Literal::from_bytes(&1.5f32.to_le_bytes(), &P::Double).unwrap(),
            Literal::Double(1.5)
        );
        assert_eq!(
            Literal::from_bytes(&17486i32.to_le_bytes(), &P::Timestamp).unwrap(),
            Literal::Timestamp(17486 * MICROS_PER_DAY)
        );
        assert_eq!(
            Literal::from_bytes(&(-1i32).to_le_bytes(), &P::TimestampNs).unwrap(),
            Literal::TimestampNs(-NANOS_PER_DAY)
        );
        // a date outside the nanosecond range is an error, not a wrapped value
        assert!(Literal::from_bytes(&i32::MAX.to_le_bytes(), &P::TimestampNs).is_err());
        // dates are never promoted to timestamptz
        assert!(Literal::from_bytes(&17486i32.to_le_bytes(), &P::Timestamptz).is_err());
        assert!(Literal::from_bytes(&[0; 4], &P::TimestamptzNs).is_err());
        assert!(Literal::from_bytes(&[0; 4], &P::Time).is_err());
        // decimals widened in precision read the same unscaled value
        assert_eq!(
            Literal::from_bytes(&[0x05, 0x8c], &dec(38, 2)).unwrap(),
            Literal::Decimal(1420)
        );
    }
}
