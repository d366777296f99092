//! Values in unbound expressions and their conversion to a column's type.
//!
//! A [`Datum`] is typed by how it was written (a Python `int` is a long, a string is a
//! string, `Decimal("1.50")` is a decimal of scale 2). Binding converts it to the column's
//! type with the rules of the Java reference (`Literals.to`): a long converts to int, date,
//! time and timestamps; a string converts to date, time, timestamps, uuid and decimal; a
//! value outside the range of the target (a long above `i32::MAX` for an int column, a
//! double beyond the float range) becomes [`Converted::AboveMax`] or
//! [`Converted::BelowMin`], which binding turns into always-true or always-false.

use std::fmt;

use crate::error::{Error, Result};
use crate::spec::literal::{
    decimal_to_string, iso_time_from_micros, iso_timestamp, parse_decimal, parse_iso_date,
    parse_iso_time, MICROS_PER_DAY, NANOS_PER_DAY, NANOS_PER_MICRO,
};
use crate::spec::{Literal, PrimitiveType};

/// A value in an unbound expression, typed by how it was written.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Decimal {
        unscaled: i128,
        scale: u32,
    },
    String(String),
    /// Days from 1970-01-01.
    Date(i32),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from the epoch (with or without zone: both convert to either).
    Timestamp(i64),
    /// Nanoseconds from the epoch.
    TimestampNs(i64),
    Uuid(u128),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
}

/// The result of converting a [`Datum`] to a column type.
#[derive(Debug, Clone, PartialEq)]
pub enum Converted {
    Value(Literal),
    /// Greater than every value of the type.
    AboveMax,
    /// Less than every value of the type.
    BelowMin,
    /// A decimal with more fraction digits than the column's scale: it lies strictly
    /// between two values of the type, `floor` and `ceil` (the binder adjusts the
    /// comparison so that it keeps its meaning).
    Between {
        floor: Literal,
        ceil: Literal,
    },
}

impl From<bool> for Datum {
    fn from(v: bool) -> Self {
        Datum::Boolean(v)
    }
}
impl From<i32> for Datum {
    fn from(v: i32) -> Self {
        Datum::Int(v)
    }
}
impl From<i64> for Datum {
    fn from(v: i64) -> Self {
        Datum::Long(v)
    }
}
impl From<f32> for Datum {
    fn from(v: f32) -> Self {
        Datum::Float(v)
    }
}
impl From<f64> for Datum {
    fn from(v: f64) -> Self {
        Datum::Double(v)
    }
}
impl From<&str> for Datum {
    fn from(v: &str) -> Self {
        Datum::String(v.to_string())
    }
}
impl From<String> for Datum {
    fn from(v: String) -> Self {
        Datum::String(v)
    }
}

impl Datum {
    /// A decimal from its text (`"12.50"` has scale 2), as Java's `new BigDecimal(String)`.
    pub fn decimal(text: &str) -> Result<Datum> {
        let (unscaled, scale) = parse_decimal(text)
            .ok_or_else(|| Error::invalid_argument(format!("invalid decimal value '{text}'")))?;
        decimal_datum(unscaled, scale)
            .ok_or_else(|| Error::invalid_argument(format!("decimal '{text}' is out of range")))
    }

    /// The datum for a value of a column of type `ty` (used to unbind a bound predicate;
    /// the result converts back to the same literal).
    pub fn from_literal(literal: &Literal, ty: &PrimitiveType) -> Datum {
        match literal {
            Literal::Boolean(v) => Datum::Boolean(*v),
            Literal::Int(v) => Datum::Int(*v),
            Literal::Long(v) => Datum::Long(*v),
            Literal::Float(v) => Datum::Float(*v),
            Literal::Double(v) => Datum::Double(*v),
            Literal::Decimal(v) => Datum::Decimal {
                unscaled: *v,
                scale: match ty {
                    PrimitiveType::Decimal { scale, .. } => *scale,
                    _ => 0,
                },
            },
            Literal::Date(v) => Datum::Date(*v),
            Literal::Time(v) => Datum::Time(*v),
            Literal::Timestamp(v) | Literal::Timestamptz(v) => Datum::Timestamp(*v),
            Literal::TimestampNs(v) | Literal::TimestamptzNs(v) => Datum::TimestampNs(*v),
            Literal::String(v) => Datum::String(v.clone()),
            Literal::Uuid(v) => Datum::Uuid(*v),
            Literal::Fixed(v) => Datum::Fixed(v.clone()),
            Literal::Binary(v) => Datum::Binary(v.clone()),
            // nested values never appear in predicates; keep their text
            Literal::Struct(_) | Literal::List(_) | Literal::Map(_) => {
                Datum::String(literal.to_string())
            }
        }
    }

    /// The kind of value, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Datum::Boolean(_) => "boolean",
            Datum::Int(_) => "int",
            Datum::Long(_) => "long",
            Datum::Float(_) => "float",
            Datum::Double(_) => "double",
            Datum::Decimal { .. } => "decimal",
            Datum::String(_) => "string",
            Datum::Date(_) => "date",
            Datum::Time(_) => "time",
            Datum::Timestamp(_) => "timestamp",
            Datum::TimestampNs(_) => "timestamp_ns",
            Datum::Uuid(_) => "uuid",
            Datum::Fixed(_) => "fixed",
            Datum::Binary(_) => "binary",
        }
    }

    /// Whether this is a floating-point NaN (which comparisons must not use; Java requires
    /// `is_nan` instead).
    pub fn is_nan(&self) -> bool {
        match self {
            Datum::Float(v) => v.is_nan(),
            Datum::Double(v) => v.is_nan(),
            _ => false,
        }
    }

    /// Converts this value to the type `ty` with the Java reference's rules. Errors when the
    /// value has no meaning in that type (a string for an int column, a malformed date).
    pub fn to_type(&self, ty: &PrimitiveType) -> Result<Converted> {
        use Converted::{AboveMax, BelowMin, Value};
        use PrimitiveType as P;
        let out = match (self, ty) {
            (Datum::Boolean(v), P::Boolean) => Value(Literal::Boolean(*v)),

            (Datum::Int(v), P::Int) => Value(Literal::Int(*v)),
            (Datum::Int(v), P::Long) => Value(Literal::Long(i64::from(*v))),
            (Datum::Int(v), P::Float) => Value(Literal::Float(*v as f32)),
            (Datum::Int(v), P::Double) => Value(Literal::Double(f64::from(*v))),
            (Datum::Int(v), P::Date) => Value(Literal::Date(*v)),
            (Datum::Int(v), P::Decimal { scale, .. }) => rescale(i128::from(*v), 0, *scale)?,

            (Datum::Long(v), P::Int) => match i32::try_from(*v) {
                Ok(i) => Value(Literal::Int(i)),
                Err(_) if *v > 0 => AboveMax,
                Err(_) => BelowMin,
            },
            (Datum::Long(v), P::Long) => Value(Literal::Long(*v)),
            (Datum::Long(v), P::Float) => Value(Literal::Float(*v as f32)),
            (Datum::Long(v), P::Double) => Value(Literal::Double(*v as f64)),
            (Datum::Long(v), P::Time) => Value(Literal::Time(*v)),
            (Datum::Long(v), P::Timestamp) => Value(Literal::Timestamp(*v)),
            (Datum::Long(v), P::Timestamptz) => Value(Literal::Timestamptz(*v)),
            // a long is taken as microseconds, as for timestamp columns (Java does the same)
            (Datum::Long(v), P::TimestampNs | P::TimestamptzNs) => {
                return Datum::Timestamp(*v).to_type(ty)
            }
            (Datum::Long(v), P::Date) => match i32::try_from(*v) {
                Ok(i) => Value(Literal::Date(i)),
                Err(_) if *v > 0 => AboveMax,
                Err(_) => BelowMin,
            },
            (Datum::Long(v), P::Decimal { scale, .. }) => rescale(i128::from(*v), 0, *scale)?,

            (Datum::Float(v), P::Float) => Value(Literal::Float(*v)),
            (Datum::Float(v), P::Double) => Value(Literal::Double(f64::from(*v))),
            (Datum::Float(v), P::Decimal { scale, .. }) => float_to_decimal(f64::from(*v), *scale)?,

            (Datum::Double(v), P::Float) => {
                if *v > f64::from(f32::MAX) {
                    AboveMax
                } else if *v < -f64::from(f32::MAX) {
                    BelowMin
                } else {
                    Value(Literal::Float(*v as f32))
                }
            }
            (Datum::Double(v), P::Double) => Value(Literal::Double(*v)),
            (Datum::Double(v), P::Decimal { scale, .. }) => float_to_decimal(*v, *scale)?,

            (Datum::Decimal { unscaled, scale }, P::Decimal { scale: to, .. }) => {
                rescale(*unscaled, *scale, *to)?
            }
            // Beyond Java (whose DecimalLiteral converts only to decimal): a decimal as
            // written in a filter (`price > 9.99`) compares with a float or double column
            // as the nearest double, then by the double's rules (as PyIceberg does).
            (Datum::Decimal { unscaled, scale }, P::Float | P::Double) => {
                let text = decimal_to_string(*unscaled, *scale);
                let v = text.parse::<f64>().map_err(|_| {
                    Error::invalid_argument(format!("cannot convert decimal {text} to {ty}"))
                })?;
                return Datum::Double(v).to_type(ty);
            }

            (Datum::Date(v), P::Date) => Value(Literal::Date(*v)),
            (Datum::Time(v), P::Time) => Value(Literal::Time(*v)),

            (Datum::Timestamp(v), P::Timestamp) => Value(Literal::Timestamp(*v)),
            (Datum::Timestamp(v), P::Timestamptz) => Value(Literal::Timestamptz(*v)),
            (Datum::Timestamp(v), P::Date) => Value(day_of(*v, MICROS_PER_DAY)),
            (Datum::Timestamp(v), P::TimestampNs | P::TimestamptzNs) => {
                match v.checked_mul(NANOS_PER_MICRO) {
                    Some(n) => Value(nanos_literal(n, ty)),
                    None if *v > 0 => AboveMax,
                    None => BelowMin,
                }
            }
            (Datum::TimestampNs(v), P::TimestampNs | P::TimestamptzNs) => {
                Value(nanos_literal(*v, ty))
            }
            (Datum::TimestampNs(v), P::Date) => Value(day_of(*v, NANOS_PER_DAY)),
            (Datum::TimestampNs(v), P::Timestamp) => {
                Value(Literal::Timestamp(v.div_euclid(NANOS_PER_MICRO)))
            }
            (Datum::TimestampNs(v), P::Timestamptz) => {
                Value(Literal::Timestamptz(v.div_euclid(NANOS_PER_MICRO)))
            }

            (Datum::String(s), P::String) => Value(Literal::String(s.clone())),
            (Datum::String(s), P::Date) => {
                let days = parse_iso_date(s)
                    .and_then(|d| i32::try_from(d).ok())
                    .ok_or_else(|| bad_text(s, ty, "an ISO date such as 2024-01-31"))?;
                Value(Literal::Date(days))
            }
            (Datum::String(s), P::Time) => {
                Value(Literal::Time(parse_iso_time(s).ok_or_else(|| {
                    bad_text(s, ty, "an ISO time such as 22:31:08")
                })?))
            }
            (
                Datum::String(s),
                P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs,
            ) => Value(parse_timestamp(s, ty)?),
            (Datum::String(s), P::Uuid) => {
                let u = uuid::Uuid::try_parse(s).map_err(|_| {
                    bad_text(s, ty, "a UUID such as f79c3e09-677c-4bbd-a479-3f349cb785e7")
                })?;
                Value(Literal::Uuid(u.as_u128()))
            }
            (Datum::String(s), P::Decimal { .. }) => Datum::decimal(s)
                .map_err(|_| bad_text(s, ty, "a decimal number such as 12.50"))?
                .to_type(ty)?,

            (Datum::Uuid(v), P::Uuid) => Value(Literal::Uuid(*v)),
            (Datum::Fixed(b) | Datum::Binary(b), P::Fixed(len)) if b.len() as u64 == *len => {
                Value(Literal::Fixed(b.clone()))
            }
            (Datum::Fixed(b) | Datum::Binary(b), P::Binary) => Value(Literal::Binary(b.clone())),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "cannot convert {} value {self} to type {ty}",
                    self.kind()
                )))
            }
        };
        Ok(out)
    }
}

fn decimal_datum(unscaled: i128, scale: i64) -> Option<Datum> {
    if scale >= 0 {
        Some(Datum::Decimal {
            unscaled,
            scale: u32::try_from(scale).ok()?,
        })
    } else {
        // 1E+3 has a negative scale; write it with scale 0
        let factor = 10_i128.checked_pow(u32::try_from(-scale).ok()?)?;
        Some(Datum::Decimal {
            unscaled: unscaled.checked_mul(factor)?,
            scale: 0,
        })
    }
}

/// A decimal of scale `from` as an unscaled value of scale `to`. Raising the scale is exact;
/// lowering it is exact only when the dropped digits are zero, otherwise the value lies
/// between two values of the type.
fn rescale(unscaled: i128, from: u32, to: u32) -> Result<Converted> {
    let out_of_range = || Error::invalid_argument("decimal scale out of range");
    if to >= from {
        let factor = 10_i128.checked_pow(to - from).ok_or_else(out_of_range)?;
        return Ok(match unscaled.checked_mul(factor) {
            Some(v) => Converted::Value(Literal::Decimal(v)),
            None if unscaled > 0 => Converted::AboveMax,
            None => Converted::BelowMin,
        });
    }
    let factor = 10_i128.checked_pow(from - to).ok_or_else(out_of_range)?;
    let floor = unscaled.div_euclid(factor);
    Ok(if unscaled.rem_euclid(factor) == 0 {
        Converted::Value(Literal::Decimal(floor))
    } else {
        Converted::Between {
            floor: Literal::Decimal(floor),
            ceil: Literal::Decimal(floor + 1),
        }
    })
}

/// Java converts a float or double to a decimal through its shortest decimal text
/// (`BigDecimal.valueOf(double)`), rounding half up to the column's scale.
fn float_to_decimal(v: f64, scale: u32) -> Result<Converted> {
    if !v.is_finite() {
        return Err(Error::invalid_argument(format!(
            "cannot convert {v} to a decimal"
        )));
    }
    let text = format!("{v:?}");
    let (unscaled, from) = parse_decimal(&text)
        .ok_or_else(|| Error::invalid_argument(format!("cannot convert {v} to a decimal")))?;
    let (unscaled, from) = match decimal_datum(unscaled, from) {
        Some(Datum::Decimal { unscaled, scale }) => (unscaled, scale),
        _ => {
            return Ok(if v > 0.0 {
                Converted::AboveMax
            } else {
                Converted::BelowMin
            })
        }
    };
    if scale >= from {
        return rescale(unscaled, from, scale);
    }
    let factor = 10_i128.pow(from - scale);
    let q = unscaled / factor;
    let r = unscaled % factor;
    // half up: away from zero when the dropped part is at least one half
    let rounded = if r.abs() * 2 >= factor {
        q + unscaled.signum()
    } else {
        q
    };
    Ok(Converted::Value(Literal::Decimal(rounded)))
}

fn day_of(v: i64, per_day: i64) -> Literal {
    // the day containing the instant (floor), as Java's DateTimeUtil.microsToDays
    let days = v.div_euclid(per_day);
    Literal::Date(i32::try_from(days).unwrap_or(if days > 0 { i32::MAX } else { i32::MIN }))
}

fn nanos_literal(v: i64, ty: &PrimitiveType) -> Literal {
    match ty {
        PrimitiveType::TimestamptzNs => Literal::TimestamptzNs(v),
        _ => Literal::TimestampNs(v),
    }
}

/// A timestamp string for a timestamp column: without zone for `timestamp`/`timestamp_ns`
/// (an offset is an error), with any offset for `timestamptz`/`timestamptz_ns` (converted to
/// UTC), as Java's `DateTimeUtil.isoTimestamp[tz]To{Micros,Nanos}`.
fn parse_timestamp(s: &str, ty: &PrimitiveType) -> Result<Literal> {
    use PrimitiveType as P;
    let utc = matches!(ty, P::Timestamptz | P::TimestamptzNs);
    let nanos = matches!(ty, P::TimestampNs | P::TimestamptzNs);
    let example = if utc {
        "an ISO timestamp with a zone offset such as 2024-01-31T10:00:00+00:00"
    } else {
        "an ISO timestamp without zone such as 2024-01-31T10:00:00"
    };
    let parsed = crate::spec::literal::parse_iso_timestamp(s);
    let (days, nod, offset) = match parsed {
        Some(p) => p,
        // Beyond Java, which rejects a date-only string for a timestamp column: a date
        // means its midnight (UTC for the zoned types), so `ts >= '2024-01-01'` works.
        None => match crate::spec::literal::parse_iso_date(s) {
            Some(days) => (days, 0, utc.then_some(0)),
            None => return Err(bad_text(s, ty, example)),
        },
    };
    let offset = match (utc, offset) {
        (true, Some(o)) => o,
        (false, None) => 0,
        _ => return Err(bad_text(s, ty, example)),
    };
    let unit = if nanos { 1 } else { NANOS_PER_MICRO };
    let v = crate::spec::literal::timestamp_units(days, nod, offset, unit)
        .ok_or_else(|| bad_text(s, ty, "a timestamp in the range of the type"))?;
    Ok(match ty {
        P::Timestamp => Literal::Timestamp(v),
        P::Timestamptz => Literal::Timestamptz(v),
        P::TimestampNs => Literal::TimestampNs(v),
        _ => Literal::TimestamptzNs(v),
    })
}

fn bad_text(s: &str, ty: &PrimitiveType, expected: &str) -> Error {
    Error::invalid_argument(format!(
        "cannot convert '{s}' to type {ty}: expected {expected}"
    ))
}

impl fmt::Display for Datum {
    /// The value as the filter parser reads it back: strings and dates quoted, numbers bare.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |f: &mut fmt::Formatter<'_>, s: &str| write!(f, "'{}'", s.replace('\'', "''"));
        match self {
            Datum::Boolean(v) => write!(f, "{v}"),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::Long(v) => write!(f, "{v}"),
            // with an exponent, as SQL's approximate numbers: `1.5` reads back as a
            // decimal, `1.5e0` as a double
            Datum::Float(v) => write_approximate(f, &format!("{v:?}")),
            Datum::Double(v) => write_approximate(f, &format!("{v:?}")),
            Datum::Decimal { unscaled, scale } => {
                write!(f, "{}", decimal_to_string(*unscaled, *scale))
            }
            Datum::String(s) => quoted(f, s),
            Datum::Date(d) => quoted(f, &Literal::Date(*d).to_string()),
            Datum::Time(t) => quoted(f, &iso_time_from_micros(*t)),
            Datum::Timestamp(v) => quoted(
                f,
                &iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, false),
            ),
            Datum::TimestampNs(v) => quoted(f, &iso_timestamp(*v, NANOS_PER_DAY, 1, false)),
            Datum::Uuid(u) => quoted(f, &uuid::Uuid::from_u128(*u).hyphenated().to_string()),
            Datum::Fixed(b) | Datum::Binary(b) => {
                write!(f, "X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                write!(f, "'")
            }
        }
    }
}

/// A float's shortest text with an exponent (`1.5e0`, `1e16`; `inf` and `NaN` as they are).
fn write_approximate(f: &mut fmt::Formatter<'_>, shortest: &str) -> fmt::Result {
    if shortest.contains(['e', 'n', 'N']) {
        write!(f, "{shortest}")
    } else {
        write!(f, "{shortest}e0")
    }
}
