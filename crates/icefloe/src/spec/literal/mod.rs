//! Values of Iceberg types and their single-value serializations (Appendix D):
//! binary (used for bounds in manifests) and JSON (used for defaults).
//!
//! The JSON form follows the output of the Java reference (`SingleValueParser`) value for
//! value, because that is what other implementations compare against:
//! - times and timestamps drop trailing zeros of the fraction (and the fraction itself when
//!   it is zero), like Java's ISO formatters: `22:31:08`, `22:31:08.1`, `22:31:08.123456`;
//! - fixed and binary are written as UPPERCASE hex (Java's `BaseEncoding.base16()`); both
//!   cases are read;
//! - NaN and infinite floats are written as the strings `"NaN"`, `"Infinity"` and
//!   `"-Infinity"` (what Jackson writes by default, since JSON numbers cannot hold them),
//!   and those strings are read back; Java itself cannot read them back.
//! - timestamptz values are read only with a zero offset (`+00:00`, `Z`, `-00:00`), as in Java.
//!
//! The module is split by job: `datetime` (calendar arithmetic and ISO-8601 text),
//! `text` (decimal and hex text), `json` (the JSON form), `binary` (the binary form).

mod binary;
mod datetime;
mod json;
mod text;

use std::cmp::Ordering;
use std::fmt;

pub use binary::{decimal_min_bytes, DecimalBytes};
pub use datetime::*;
use text::hex_upper;
pub use text::{decimal_to_string, parse_decimal};

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
    /// Compares two values of the same type; `None` for values of different kinds and for
    /// nested values. Floats use Java's total order
    /// (`-NaN < -Inf < ... < -0 < 0 < ... < Inf < NaN`), strings and binary compare bytes
    /// unsigned (for UTF-8 that is code point order), UUIDs compare as unsigned 128-bit
    /// big-endian values.
    pub fn compare(&self, other: &Literal) -> Option<Ordering> {
        use Literal as L;
        Some(match (self, other) {
            (L::Boolean(a), L::Boolean(b)) => a.cmp(b),
            (L::Int(a), L::Int(b)) | (L::Date(a), L::Date(b)) => a.cmp(b),
            (L::Long(a), L::Long(b))
            | (L::Time(a), L::Time(b))
            | (L::Timestamp(a), L::Timestamp(b))
            | (L::Timestamptz(a), L::Timestamptz(b))
            | (L::TimestampNs(a), L::TimestampNs(b))
            | (L::TimestamptzNs(a), L::TimestamptzNs(b)) => a.cmp(b),
            (L::Float(a), L::Float(b)) => a.total_cmp(b),
            (L::Double(a), L::Double(b)) => a.total_cmp(b),
            (L::Decimal(a), L::Decimal(b)) => a.cmp(b),
            (L::String(a), L::String(b)) => a.cmp(b),
            (L::Uuid(a), L::Uuid(b)) => a.cmp(b),
            (L::Fixed(a), L::Fixed(b)) | (L::Binary(a), L::Binary(b)) => a.cmp(b),
            _ => return None,
        })
    }
}

impl fmt::Display for Literal {
    /// A readable form close to the JSON single-value form. Decimals show their unscaled
    /// value (the scale is in the type); times and timestamps are ISO-8601.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Long(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::Double(v) => write!(f, "{v:?}"),
            Literal::Decimal(v) => write!(f, "{v} (unscaled)"),
            Literal::Date(d) => write!(f, "{}", iso_date(i64::from(*d))),
            Literal::Time(t) => write!(f, "{}", iso_time_from_micros(*t)),
            Literal::Timestamp(v) => write!(
                f,
                "{}",
                iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, false)
            ),
            Literal::Timestamptz(v) => write!(
                f,
                "{}",
                iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, true)
            ),
            Literal::TimestampNs(v) => write!(f, "{}", iso_timestamp(*v, NANOS_PER_DAY, 1, false)),
            Literal::TimestamptzNs(v) => write!(f, "{}", iso_timestamp(*v, NANOS_PER_DAY, 1, true)),
            Literal::String(s) => write!(f, "{s:?}"),
            Literal::Uuid(u) => write!(f, "{}", uuid::Uuid::from_u128(*u).hyphenated()),
            Literal::Fixed(b) | Literal::Binary(b) => write!(f, "0x{}", hex_upper(b)),
            Literal::Struct(_) | Literal::List(_) | Literal::Map(_) => {
                write!(f, "{}", self.natural_json())
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, unused_imports)]
mod tests {
    use super::*;
    use crate::spec::literal::*;
    use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
    use serde_json::json;

    fn p(t: PrimitiveType) -> Type {
        Type::Primitive(t)
    }

    fn dec(precision: u32, scale: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision, scale }
    }

    #[allow(unused_imports)]
    use serde_json::Value;
    #[test]
    fn garbage_never_panics() {
        use PrimitiveType as P;
        let types = [
            P::Unknown,
            P::Boolean,
            P::Int,
            P::Long,
            P::Float,
            P::Double,
            dec(9, 2),
            dec(38, 38),
            P::Date,
            P::Time,
            P::Timestamp,
            P::Timestamptz,
            P::TimestampNs,
            P::TimestamptzNs,
            P::String,
            P::Uuid,
            P::Fixed(3),
            P::Binary,
            P::Geometry { crs: None },
        ];
        let alphabet: Vec<char> = "0123456789-+:.TtZzeE ,abcdefABCDEF{}[]\"é😀\u{0}"
            .chars()
            .collect();
        let mut state = 42u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        for round in 0..20_000 {
            let len = next() % 40;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let text: String = (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect();
            let ty = &types[round % types.len()];
            if let Ok(l) = Literal::from_bytes(&bytes, ty) {
                // whatever reads must also write
                let _ = l.to_bytes(ty);
                let _ = l.to_json(&p(ty.clone()));
                let _ = l.to_string();
            }
            for v in [
                Value::String(text.clone()),
                serde_json::from_str(&text).unwrap_or(Value::Null),
            ] {
                if let Ok(l) = Literal::from_json(&v, &p(ty.clone())) {
                    let back = l.try_to_json(&p(ty.clone()));
                    assert!(back.is_ok(), "{ty} {v}");
                }
            }
        }
        // values near the edges of the ranges
        for v in [i64::MIN, i64::MAX, 0, -1] {
            for ty in [
                P::Timestamp,
                P::Timestamptz,
                P::TimestampNs,
                P::TimestamptzNs,
            ] {
                let l = Literal::from_bytes(&v.to_le_bytes(), &ty).unwrap();
                let j = l.try_to_json(&p(ty.clone())).unwrap();
                assert_eq!(Literal::from_json(&j, &p(ty.clone())).unwrap(), l, "{j}");
            }
        }
        for d in [i32::MIN, i32::MAX] {
            let j = Literal::Date(d).try_to_json(&p(P::Date)).unwrap();
            assert_eq!(
                Literal::from_json(&j, &p(P::Date)).unwrap(),
                Literal::Date(d),
                "{j}"
            );
        }
    }

    #[test]
    fn comparison_uses_java_orders() {
        let order = [
            f64::NAN.copysign(-1.0),
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in order.windows(2) {
            assert_eq!(
                Literal::Double(w[0]).compare(&Literal::Double(w[1])),
                Some(Ordering::Less),
                "{w:?}"
            );
            assert_eq!(
                Literal::Float(w[0] as f32).compare(&Literal::Float(w[1] as f32)),
                Some(Ordering::Less),
                "{w:?}"
            );
        }
        assert_eq!(
            Literal::String("a".into()).compare(&Literal::String("😀".into())),
            Some(Ordering::Less)
        );
        // U+FFFF sorts before U+10000 by code point (in UTF-16 units it would not)
        assert_eq!(
            Literal::String("\u{ffff}".into()).compare(&Literal::String("😀".into())),
            Some(Ordering::Less)
        );
        assert_eq!(
            Literal::Binary(vec![0x7f]).compare(&Literal::Binary(vec![0x80])),
            Some(Ordering::Less)
        );
        assert_eq!(
            Literal::Binary(vec![1]).compare(&Literal::Binary(vec![1, 0])),
            Some(Ordering::Less)
        );
        assert_eq!(
            Literal::Decimal(-5).compare(&Literal::Decimal(3)),
            Some(Ordering::Less)
        );
        assert_eq!(Literal::Int(1).compare(&Literal::Long(1)), None);
        assert_eq!(Literal::Date(17486).to_string(), "2017-11-16");
        assert_eq!(
            Literal::Timestamptz(0).to_string(),
            "1970-01-01T00:00:00+00:00"
        );
    }
}
