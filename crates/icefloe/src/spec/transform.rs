//! Partition transforms ("Partition Transforms", "Bucket Transform Details",
//! "Truncate Transform Details", Appendix B hashing).

use std::fmt;
use std::str::FromStr;

use super::literal::{
    civil_from_days, days_to_months, days_to_years, decimal_min_bytes, Literal, MICROS_PER_DAY,
    MICROS_PER_HOUR, MICROS_PER_SECOND, NANOS_PER_DAY, NANOS_PER_HOUR, NANOS_PER_MICRO,
    NANOS_PER_SECOND,
};
use super::types::{PrimitiveType, Type};
use crate::error::{Error, Result};

/// A transform, as written in partition specs and sort orders.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    Identity,
    Bucket(u32),
    Truncate(u32),
    Year,
    Month,
    Day,
    Hour,
    Void,
    /// A transform this library does not know; kept verbatim so metadata round-trips,
    /// and ignored when filtering (required of v3 readers).
    Unknown(String),
}

impl Transform {
    /// Whether this transform accepts a source column of type `source` (the table of
    /// "Partition Transforms"). Unknown transforms accept nothing: they cannot be applied.
    pub fn can_transform(&self, source: &Type) -> bool {
        match source {
            Type::Primitive(p) => self.accepts(p),
            // void accepts any type; nothing else takes nested or variant sources
            _ => matches!(self, Transform::Void),
        }
    }

    /// [`Transform::can_transform`] for a primitive source type.
    pub fn accepts(&self, p: &PrimitiveType) -> bool {
        use PrimitiveType as P;
        match self {
            Transform::Void => true,
            Transform::Identity => !matches!(p, P::Geometry { .. } | P::Geography { .. }),
            Transform::Bucket(_) => matches!(
                p,
                P::Int
                    | P::Long
                    | P::Decimal { .. }
                    | P::Date
                    | P::Time
                    | P::Timestamp
                    | P::Timestamptz
                    | P::TimestampNs
                    | P::TimestamptzNs
                    | P::String
                    | P::Uuid
                    | P::Fixed(_)
                    | P::Binary
            ),
            Transform::Truncate(_) => {
                matches!(
                    p,
                    P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary
                )
            }
            Transform::Year | Transform::Month | Transform::Day => matches!(
                p,
                P::Date | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
            Transform::Hour => matches!(
                p,
                P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
            ),
            Transform::Unknown(_) => false,
        }
    }

    /// The type of the values this transform produces from `source`.
    ///
    /// Unknown transforms produce `string`, as in the Java reference, so that a partition
    /// type can still be built for a spec that uses one.
    pub fn result_type(&self, source: &Type) -> Result<Type> {
        if let Transform::Unknown(_) = self {
            return Ok(PrimitiveType::String.into());
        }
        if !self.can_transform(source) {
            return Err(Error::invalid_argument(format!(
                "transform '{self}' cannot be applied to type {source}"
            )));
        }
        Ok(match self {
            Transform::Identity | Transform::Truncate(_) | Transform::Void => source.clone(),
            Transform::Bucket(_)
            | Transform::Year
            | Transform::Month
            | Transform::Day
            | Transform::Hour => PrimitiveType::Int.into(),
            Transform::Unknown(_) => PrimitiveType::String.into(),
        })
    }

    /// Whether the transform keeps the order of values (used for sort orders and projections).
    pub fn preserves_order(&self) -> bool {
        matches!(
            self,
            Transform::Identity
                | Transform::Truncate(_)
                | Transform::Year
                | Transform::Month
                | Transform::Day
                | Transform::Hour
        )
    }
}

impl Transform {
    /// Applies this transform to one value of the source type `source` (null gives null).
    ///
    /// Errors: `Unsupported` for an unknown transform, `InvalidArgument` when the
    /// transform does not take `source` or the value is not of type `source`.
    pub fn apply(
        &self,
        value: Option<&Literal>,
        source: &PrimitiveType,
    ) -> Result<Option<Literal>> {
        if let Transform::Unknown(name) = self {
            return Err(Error::unsupported(format!(
                "cannot apply unknown transform '{name}'"
            )));
        }
        if !self.accepts(source) {
            return Err(Error::invalid_argument(format!(
                "transform '{self}' cannot be applied to type {source}"
            )));
        }
        let Some(v) = value else { return Ok(None) };
        if !literal_is_of(v, source) {
            return Err(Error::invalid_argument(format!(
                "value {v} is not a {source} value"
            )));
        }
        use Literal as L;
        let int = |v: i32| Ok(Some(L::Int(v)));
        match self {
            Transform::Void => Ok(None),
            Transform::Identity => Ok(Some(v.clone())),
            Transform::Bucket(n) => int(bucket_hash(hash_literal(v)?, *n)),
            Transform::Truncate(w) => Ok(Some(match v {
                L::Int(x) => L::Int(truncate_i32(*x, *w)),
                L::Long(x) => L::Long(truncate_i64(*x, *w)),
                L::Decimal(x) => L::Decimal(truncate_i128(*x, *w)),
                L::String(s) => L::String(truncate_str(s, *w).to_string()),
                L::Binary(b) => L::Binary(truncate_bytes(b, *w).to_vec()),
                _ => return Err(Error::invalid_argument(format!("cannot truncate {v}"))),
            })),
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
                let unit = match self {
                    Transform::Year => TimeUnit::Year,
                    Transform::Month => TimeUnit::Month,
                    Transform::Day => TimeUnit::Day,
                    _ => TimeUnit::Hour,
                };
                match v {
                    L::Date(d) => match unit {
                        TimeUnit::Hour => {
                            Err(Error::invalid_argument("hour cannot be applied to a date"))
                        }
                        _ => int(date_to(unit, *d)),
                    },
                    L::Timestamp(x) | L::Timestamptz(x) => int(micros_to(unit, *x)),
                    L::TimestampNs(x) | L::TimestamptzNs(x) => int(nanos_to(unit, *x)),
                    _ => Err(Error::invalid_argument(format!(
                        "cannot apply '{self}' to {v}"
                    ))),
                }
            }
            Transform::Unknown(_) => Ok(None),
        }
    }
}

/// Whether `v` is a value of the primitive type `ty`.
fn literal_is_of(v: &Literal, ty: &PrimitiveType) -> bool {
    use Literal as L;
    use PrimitiveType as P;
    match (ty, v) {
        (P::Fixed(len), L::Fixed(b)) => b.len() as u64 == *len,
        _ => matches!(
            (ty, v),
            (P::Boolean, L::Boolean(_))
                | (P::Int, L::Int(_))
                | (P::Long, L::Long(_))
                | (P::Float, L::Float(_))
                | (P::Double, L::Double(_))
                | (P::Decimal { .. }, L::Decimal(_))
                | (P::Date, L::Date(_))
                | (P::Time, L::Time(_))
                | (P::Timestamp, L::Timestamp(_))
                | (P::Timestamptz, L::Timestamptz(_))
                | (P::TimestampNs, L::TimestampNs(_))
                | (P::TimestamptzNs, L::TimestamptzNs(_))
                | (P::String, L::String(_))
                | (P::Uuid, L::Uuid(_))
                | (P::Binary, L::Binary(_))
        ),
    }
}

// ---------------------------------------------------------------------------------------
// Murmur3 x86 32-bit, seed 0 (Appendix B). Written out here rather than through the
// `murmur3` crate's `Read`-based API because the hot cases (8-byte longs, short strings)
// are several times faster without the reader indirection; tests check both agree.
// ---------------------------------------------------------------------------------------

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn mix_h(h: u32, k: u32) -> u32 {
    (h ^ mix_k(k))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix(mut h: u32, len: u32) -> i32 {
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

/// Murmur3 x86 32-bit hash (seed 0) of `bytes`, as a Java int.
#[inline]
pub fn murmur3_32(bytes: &[u8]) -> i32 {
    let mut h = 0u32;
    let mut blocks = bytes.chunks_exact(4);
    for b in &mut blocks {
        h = mix_h(h, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k |= u32::from(*b) << (8 * i);
        }
        h ^= mix_k(k);
    }
    fmix(h, bytes.len() as u32)
}

/// `hashLong`: the hash of the 8 little-endian bytes of `v`.
#[inline(always)]
pub fn hash_long(v: i64) -> i32 {
    let h = mix_h(0, v as u32);
    let h = mix_h(h, (v >> 32) as u32);
    fmix(h, 8)
}

/// The hash of an int (and of a date): the hash of the int widened to a long, so that
/// promoting int to long keeps bucket values (Appendix B note 1; Java's `BucketUtil`
/// does the same for dates).
#[inline(always)]
pub fn hash_int(v: i32) -> i32 {
    hash_long(i64::from(v))
}

/// Hash of a double for Appendix B: NaNs canonicalised, -0.0 hashed as 0.0.
pub fn hash_double(v: f64) -> i32 {
    let bits = if v.is_nan() {
        0x7ff8_0000_0000_0000_i64
    } else if v == 0.0 {
        0
    } else {
        v.to_bits() as i64
    };
    hash_long(bits)
}

/// The hash of a decimal's unscaled value: its minimum-length two's complement bytes.
#[inline]
pub fn hash_decimal(unscaled: i128) -> i32 {
    murmur3_32(decimal_min_bytes(unscaled).as_slice())
}

/// The 32-bit hash of Appendix B of a value, including the types that are not valid for
/// bucketing (boolean, float, double). Nanosecond timestamps hash as their microseconds
/// (floor), so that a timestamp hashes the same at either precision.
pub fn hash_literal(v: &Literal) -> Result<i32> {
    use Literal as L;
    Ok(match v {
        L::Boolean(b) => hash_int(i32::from(*b)),
        L::Int(x) | L::Date(x) => hash_int(*x),
        L::Long(x) | L::Time(x) | L::Timestamp(x) | L::Timestamptz(x) => hash_long(*x),
        L::TimestampNs(x) | L::TimestamptzNs(x) => hash_long(x.div_euclid(NANOS_PER_MICRO)),
        L::Float(x) => hash_double(f64::from(*x)),
        L::Double(x) => hash_double(*x),
        L::Decimal(x) => hash_decimal(*x),
        L::String(s) => murmur3_32(s.as_bytes()),
        L::Uuid(u) => murmur3_32(&u.to_be_bytes()),
        L::Fixed(b) | L::Binary(b) => murmur3_32(b),
        L::Struct(_) | L::List(_) | L::Map(_) => {
            return Err(Error::invalid_argument("nested values have no 32-bit hash"))
        }
    })
}

/// `(hash & Integer.MAX_VALUE) % n`.
#[inline(always)]
pub fn bucket_hash(hash: i32, n: u32) -> i32 {
    // n is at most i32::MAX (checked when parsing); max(1) keeps a hand-built Bucket(0) from
    // dividing by zero.
    ((hash & i32::MAX) as u32 % n.max(1)) as i32
}

/// bucket[n] of a long (also int, time and microsecond timestamps).
#[inline(always)]
pub fn bucket_i64(v: i64, n: u32) -> i32 {
    bucket_hash(hash_long(v), n)
}

/// bucket[n] of bytes (string UTF-8, binary, fixed, uuid big-endian bytes).
#[inline]
pub fn bucket_bytes(v: &[u8], n: u32) -> i32 {
    bucket_hash(murmur3_32(v), n)
}

/// bucket[n] of a decimal's unscaled value.
#[inline]
pub fn bucket_decimal(unscaled: i128, n: u32) -> i32 {
    bucket_hash(hash_decimal(unscaled), n)
}

// ---------------------------------------------------------------------------------------
// truncate[W]
// ---------------------------------------------------------------------------------------

/// `v - (v mod W)` with a non-negative remainder. The remainder is exact; only the final
/// subtraction wraps (near `i32::MIN`), which is what Java's int arithmetic gives.
#[inline(always)]
pub fn truncate_i32(v: i32, w: u32) -> i32 {
    let rem = i64::from(v).rem_euclid(i64::from(w.max(1)));
    v.wrapping_sub(rem as i32)
}

/// Like [`truncate_i32`] for longs.
#[inline(always)]
pub fn truncate_i64(v: i64, w: u32) -> i64 {
    v.wrapping_sub(v.rem_euclid(i64::from(w.max(1))))
}

/// truncate[W] of a decimal's unscaled value: W applies in units of the scale
/// (W=50, scale 2: 10.65 -> 10.50).
#[inline(always)]
pub fn truncate_i128(v: i128, w: u32) -> i128 {
    v.wrapping_sub(v.rem_euclid(i128::from(w.max(1))))
}

/// The first `w` Unicode code points of `s` (Java counts surrogate pairs as one code
/// point too, so this matches it for every valid string).
#[inline]
pub fn truncate_str(s: &str, w: u32) -> &str {
    let w = w as usize;
    // Fast path: a string of at most w bytes has at most w code points.
    if s.len() <= w {
        return s;
    }
    match s.char_indices().nth(w) {
        Some((end, _)) => s.get(..end).unwrap_or(s),
        None => s,
    }
}

/// The first `w` bytes of `b`.
#[inline(always)]
pub fn truncate_bytes(b: &[u8], w: u32) -> &[u8] {
    b.get(..w as usize).unwrap_or(b)
}

// ---------------------------------------------------------------------------------------
// year / month / day / hour. All use floor semantics before 1970: 1969-12-31T23:59:59.999999
// is day -1, month -1, year -1. Results that do not fit an int wrap like Java's `(int)`
// cast (only for timestamps hundreds of thousands of years from 1970).
// ---------------------------------------------------------------------------------------

/// The unit of a time transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Year,
    Month,
    Day,
    Hour,
}

/// year/month/day of a date (days from 1970-01-01); `Hour` returns the hours of the day's start.
#[inline]
pub fn date_to(unit: TimeUnit, days: i32) -> i32 {
    let d = i64::from(days);
    match unit {
        TimeUnit::Year => days_to_years(d) as i32,
        TimeUnit::Month => days_to_months(d) as i32,
        TimeUnit::Day => days,
        TimeUnit::Hour => (d * 24) as i32,
    }
}

/// The unit (hour, day, month or year from the epoch) of a timestamp `v` counted in units
/// of `1 / per_second` seconds.
///
/// This is the floor the spec describes, except in one case where the Java reference
/// (`DateTimeUtil.convertMicros`/`convertNanos`, Iceberg 1.11) gives one less, and users'
/// partition values were written by Java: a timestamp before the epoch whose fraction is
/// one tick short of a whole second (`x.999999`), where the whole second `x` is the start
/// of a unit. Java adds one tick to a negative value, keeps the floored second but takes
/// the fraction of the incremented value, so it lands a full second early, exactly on the
/// unit boundary, and its final "minus one" then counts that unit twice. E.g. hour of
/// 1969-12-31T22:00:00.999999 is -3 in Java, not -2. The oracle tests pin this.
#[inline(always)]
fn epoch_to(unit: TimeUnit, v: i64, per_second: i64, per_hour: i64, per_day: i64) -> i32 {
    let floor = |v: i64| match unit {
        TimeUnit::Hour => v.div_euclid(per_hour),
        TimeUnit::Day => v.div_euclid(per_day),
        TimeUnit::Month => days_to_months(v.div_euclid(per_day)),
        TimeUnit::Year => days_to_years(v.div_euclid(per_day)),
    };
    let mut result = floor(v);
    if v < 0 && v.rem_euclid(per_second) == per_second - 1 {
        // where Java lands: one second before v + 1
        let landed = v - (per_second - 1);
        if is_unit_start(unit, landed, per_hour, per_day) {
            result -= 1;
        }
    }
    result as i32
}

/// Whether `v` is the first instant of an hour, day, month or year.
#[inline(always)]
fn is_unit_start(unit: TimeUnit, v: i64, per_hour: i64, per_day: i64) -> bool {
    match unit {
        TimeUnit::Hour => v.rem_euclid(per_hour) == 0,
        TimeUnit::Day => v.rem_euclid(per_day) == 0,
        TimeUnit::Month | TimeUnit::Year => {
            if v.rem_euclid(per_day) != 0 {
                return false;
            }
            let (_, month, day) = civil_from_days(v.div_euclid(per_day));
            day == 1 && (unit == TimeUnit::Month || month == 1)
        }
    }
}

/// year/month/day/hour of a microsecond timestamp, as Java computes it.
#[inline(always)]
pub fn micros_to(unit: TimeUnit, micros: i64) -> i32 {
    epoch_to(
        unit,
        micros,
        MICROS_PER_SECOND,
        MICROS_PER_HOUR,
        MICROS_PER_DAY,
    )
}

/// year/month/day/hour of a nanosecond timestamp, as Java computes it.
#[inline(always)]
pub fn nanos_to(unit: TimeUnit, nanos: i64) -> i32 {
    epoch_to(unit, nanos, NANOS_PER_SECOND, NANOS_PER_HOUR, NANOS_PER_DAY)
}

impl FromStr for Transform {
    type Err = Error;

    /// Parses a transform string. Unknown names become [`Transform::Unknown`]; a known
    /// name with a bad parameter (`bucket[0]`, `truncate[x]`) is an error.
    fn from_str(s: &str) -> Result<Transform> {
        let t = match s {
            "identity" => Transform::Identity,
            "year" => Transform::Year,
            "month" => Transform::Month,
            "day" => Transform::Day,
            "hour" => Transform::Hour,
            "void" => Transform::Void,
            _ => {
                let param = |prefix: &str| -> Option<Result<u32>> {
                    let inner = s.strip_prefix(prefix)?.strip_suffix(']')?;
                    Some(match inner.trim().parse::<u32>() {
                        Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(n),
                        _ => Err(Error::invalid_argument(format!(
                            "invalid transform '{s}': the parameter must be a positive int"
                        ))),
                    })
                };
                if let Some(n) = param("bucket[") {
                    Transform::Bucket(n?)
                } else if let Some(w) = param("truncate[") {
                    Transform::Truncate(w?)
                } else {
                    Transform::Unknown(s.to_string())
                }
            }
        };
        Ok(t)
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => write!(f, "identity"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Year => write!(f, "year"),
            Transform::Month => write!(f, "month"),
            Transform::Day => write!(f, "day"),
            Transform::Hour => write!(f, "hour"),
            Transform::Void => write!(f, "void"),
            Transform::Unknown(s) => write!(f, "{s}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn transform_strings_round_trip() {
        for s in [
            "identity",
            "bucket[16]",
            "truncate[20]",
            "year",
            "month",
            "day",
            "hour",
            "void",
            "zorder",
        ] {
            let t: Transform = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        assert_eq!(
            "zorder".parse::<Transform>().unwrap(),
            Transform::Unknown("zorder".into())
        );
        assert!("bucket[0]".parse::<Transform>().is_err());
        assert!("truncate[-1]".parse::<Transform>().is_err());
    }

    #[test]
    fn result_types() {
        use PrimitiveType as P;
        let ts: Type = P::TimestampNs.into();
        assert_eq!(Transform::Day.result_type(&ts).unwrap(), P::Int.into());
        assert!(Transform::Hour.result_type(&P::Date.into()).is_err());
        let dec: Type = P::Decimal {
            precision: 9,
            scale: 2,
        }
        .into();
        assert_eq!(Transform::Truncate(10).result_type(&dec).unwrap(), dec);
        assert_eq!(
            Transform::Bucket(4).result_type(&dec).unwrap(),
            P::Int.into()
        );
        assert!(Transform::Bucket(4).result_type(&P::Float.into()).is_err());
        assert!(Transform::Identity
            .result_type(&P::Geometry { crs: None }.into())
            .is_err());
        assert_eq!(
            Transform::Void.result_type(&P::Float.into()).unwrap(),
            P::Float.into()
        );
        assert_eq!(
            Transform::Unknown("zorder".into())
                .result_type(&P::Int.into())
                .unwrap(),
            P::String.into()
        );
    }
    fn lit_hash(v: Literal) -> i32 {
        hash_literal(&v).unwrap()
    }

    fn ts(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
        (crate::spec::literal::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s)
            * 1_000_000
    }

    #[test]
    fn appendix_b_hash_values() {
        assert_eq!(lit_hash(Literal::Int(34)), 2017239379);
        assert_eq!(lit_hash(Literal::Long(34)), 2017239379);
        // 14.20 as decimal(4, 2): unscaled 1420
        assert_eq!(lit_hash(Literal::Decimal(1420)), -500754589);
        let date = crate::spec::literal::days_from_civil(2017, 11, 16) as i32;
        assert_eq!(lit_hash(Literal::Date(date)), -653330422);
        let time = (22 * 3600 + 31 * 60 + 8) * 1_000_000;
        assert_eq!(lit_hash(Literal::Time(time)), -662762989);
        let t = ts(2017, 11, 16, 22, 31, 8);
        assert_eq!(lit_hash(Literal::Timestamp(t)), -2047944441);
        assert_eq!(lit_hash(Literal::Timestamp(t + 1)), -1207196810);
        // 2017-11-16T14:31:08-08:00 is the same instant
        assert_eq!(
            lit_hash(Literal::Timestamptz(
                ts(2017, 11, 16, 14, 31, 8) + 8 * 3_600_000_000
            )),
            -2047944441
        );
        assert_eq!(lit_hash(Literal::Timestamptz(t + 1)), -1207196810);
        assert_eq!(lit_hash(Literal::TimestampNs(t * 1000)), -2047944441);
        assert_eq!(lit_hash(Literal::TimestampNs(t * 1000 + 1001)), -1207196810);
        assert_eq!(lit_hash(Literal::TimestamptzNs(t * 1000)), -2047944441);
        assert_eq!(
            lit_hash(Literal::TimestamptzNs(t * 1000 + 1001)),
            -1207196810
        );
        assert_eq!(lit_hash(Literal::String("iceberg".into())), 1210000089);
        assert_eq!(
            lit_hash(Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7)),
            1488055340
        );
        assert_eq!(lit_hash(Literal::Fixed(vec![0, 1, 2, 3])), -188683207);
        assert_eq!(lit_hash(Literal::Binary(vec![0, 1, 2, 3])), -188683207);
        // not bucketable, but hashable
        assert_eq!(lit_hash(Literal::Boolean(true)), 1392991556);
        assert_eq!(lit_hash(Literal::Float(1.0)), -142385009);
        assert_eq!(lit_hash(Literal::Double(1.0)), -142385009);
        assert_eq!(lit_hash(Literal::Float(0.0)), 1669671676);
        assert_eq!(lit_hash(Literal::Float(-0.0)), 1669671676);
        assert_eq!(lit_hash(Literal::Double(-0.0)), 1669671676);
        assert_eq!(
            lit_hash(Literal::Double(f64::from_bits(0x7ff0_0000_0000_0001))),
            lit_hash(Literal::Double(f64::NAN))
        );
        // "34" as a string differs from 34 (Schema Evolution example)
        assert_eq!(lit_hash(Literal::String("34".into())), -427558391);
    }

    #[test]
    fn own_murmur3_matches_the_murmur3_crate() {
        let mut state = 0x1234_5678_9abc_def0_u64;
        for len in 0..200usize {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 33) as u8
                })
                .collect();
            let expected =
                murmur3::murmur3_32(&mut std::io::Cursor::new(&bytes), 0).unwrap() as i32;
            assert_eq!(murmur3_32(&bytes), expected, "len {len}");
            let v = state as i64;
            let expected =
                murmur3::murmur3_32(&mut std::io::Cursor::new(v.to_le_bytes()), 0).unwrap() as i32;
            assert_eq!(hash_long(v), expected);
        }
    }

    #[test]
    fn bucket_values() {
        let p = PrimitiveType::Int;
        let b = Transform::Bucket(16);
        // (2017239379 & MAX) % 16 = 3
        assert_eq!(
            b.apply(Some(&Literal::Int(34)), &p).unwrap(),
            Some(Literal::Int(3))
        );
        assert_eq!(b.apply(None, &p).unwrap(), None);
        // the sign bit is dropped before the modulo: -500754589 & MAX = 1646729059
        let d = PrimitiveType::Decimal {
            precision: 4,
            scale: 2,
        };
        assert_eq!(
            Transform::Bucket(100)
                .apply(Some(&Literal::Decimal(1420)), &d)
                .unwrap(),
            Some(Literal::Int(1646729059 % 100))
        );
        assert_eq!(bucket_i64(34, 1), 0);
        assert!(b.apply(Some(&Literal::Long(1)), &p).is_err());
        assert!(b
            .apply(Some(&Literal::Float(1.0)), &PrimitiveType::Float)
            .is_err());
        assert!(Transform::Unknown("zorder".into()).apply(None, &p).is_err());
        assert!(matches!(
            Transform::Unknown("zorder".into()).apply(None, &p),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn decimal_min_bytes_match_java_big_integer() {
        let cases: &[(i128, &[u8])] = &[
            (0, &[0]),
            (1, &[1]),
            (-1, &[0xff]),
            (127, &[0x7f]),
            (128, &[0x00, 0x80]),
            (-128, &[0x80]),
            (-129, &[0xff, 0x7f]),
            (1420, &[0x05, 0x8c]),
            (
                i128::MAX,
                &[
                    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                    0xff, 0xff, 0xff,
                ],
            ),
            (
                i128::MIN,
                &[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
        ];
        for (v, bytes) in cases {
            assert_eq!(decimal_min_bytes(*v).as_slice(), *bytes, "{v}");
        }
    }

    #[test]
    fn truncate_spec_examples() {
        let t = Transform::Truncate(10);
        assert_eq!(
            t.apply(Some(&Literal::Int(1)), &PrimitiveType::Int)
                .unwrap(),
            Some(Literal::Int(0))
        );
        assert_eq!(
            t.apply(Some(&Literal::Int(-1)), &PrimitiveType::Int)
                .unwrap(),
            Some(Literal::Int(-10))
        );
        assert_eq!(
            t.apply(Some(&Literal::Long(-1)), &PrimitiveType::Long)
                .unwrap(),
            Some(Literal::Long(-10))
        );
        assert_eq!(
            t.apply(Some(&Literal::Long(10)), &PrimitiveType::Long)
                .unwrap(),
            Some(Literal::Long(10))
        );
        assert_eq!(
            t.apply(Some(&Literal::Long(-10)), &PrimitiveType::Long)
                .unwrap(),
            Some(Literal::Long(-10))
        );
        assert_eq!(
            t.apply(Some(&Literal::Long(-11)), &PrimitiveType::Long)
                .unwrap(),
            Some(Literal::Long(-20))
        );
        let d = PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        };
        assert_eq!(
            Transform::Truncate(50)
                .apply(Some(&Literal::Decimal(1065)), &d)
                .unwrap(),
            Some(Literal::Decimal(1050))
        );
        assert_eq!(truncate_i128(-1065, 50), -1100);
        let s = Transform::Truncate(3);
        assert_eq!(
            s.apply(
                Some(&Literal::String("iceberg".into())),
                &PrimitiveType::String
            )
            .unwrap(),
            Some(Literal::String("ice".into()))
        );
        assert_eq!(
            s.apply(
                Some(&Literal::Binary(vec![1, 2, 3, 4, 5])),
                &PrimitiveType::Binary
            )
            .unwrap(),
            Some(Literal::Binary(vec![1, 2, 3]))
        );
        // no panic and Java-like wrapping at the edges of the int range
        assert_eq!(truncate_i32(i32::MIN, 10), i32::MIN.wrapping_sub(2));
        assert_eq!(truncate_i32(i32::MAX, u32::MAX >> 1), i32::MAX);
        assert_eq!(
            truncate_i64(i64::MIN, 3),
            i64::MIN.wrapping_sub(i64::MIN.rem_euclid(3))
        );
    }

    #[test]
    fn truncate_strings_by_code_points() {
        // emoji are 4 bytes in UTF-8 and a surrogate pair in UTF-16, but one code point
        assert_eq!(truncate_str("😀😁😂🤣", 2), "😀😁");
        assert_eq!(truncate_str("冰山表格", 3), "冰山表");
        assert_eq!(truncate_str("aé😀b", 3), "aé😀");
        assert_eq!(truncate_str("ab", 5), "ab");
        assert_eq!(truncate_str("", 5), "");
        // combining marks are separate code points
        assert_eq!(truncate_str("e\u{301}x", 1), "e");
        assert_eq!(truncate_bytes(&[1, 2], 5), &[1, 2]);
    }

    #[test]
    fn time_transforms_around_the_epoch() {
        use TimeUnit::*;
        let us = |s: &str| match Literal::from_json(
            &serde_json::json!(s),
            &PrimitiveType::Timestamp.into(),
        )
        .unwrap()
        {
            Literal::Timestamp(v) => v,
            _ => unreachable!(),
        };
        let cases = [
            ("1970-01-01T00:00:00", 0, 0, 0, 0),
            ("1969-12-31T23:59:59.999999", -1, -1, -1, -1),
            ("1969-12-31T23:00:00", -1, -1, -1, -1),
            ("1969-12-31T22:59:59.999999", -1, -1, -1, -2),
            // a tick short of a second past a unit start, before the epoch: Java's
            // convertMicros gives one less than the floor for that unit (see epoch_to)
            ("1969-12-31T23:00:00.999999", -1, -1, -1, -2),
            ("1969-12-31T22:00:00.999999", -1, -1, -1, -3),
            ("1969-12-31T00:00:00.999999", -1, -1, -2, -25),
            ("1969-12-01T00:00:00.999999", -1, -2, -32, -31 * 24 - 1),
            ("1969-01-01T00:00:00.999999", -2, -13, -366, -365 * 24 - 1),
            ("1969-12-31T23:30:00.999999", -1, -1, -1, -1),
            ("1970-01-01T00:00:00.999999", 0, 0, 0, 0),
            ("1969-12-31T00:00:00", -1, -1, -1, -24),
            ("1969-12-30T23:59:59.999999", -1, -1, -2, -25),
            ("1969-01-01T00:00:00", -1, -12, -365, -365 * 24),
            ("1968-12-31T23:59:59.999999", -2, -13, -366, -365 * 24 - 1),
            ("2017-11-16T22:31:08", 47, 574, 17486, 17486 * 24 + 22),
            ("1900-03-01T00:00:00", -70, -838, -25508, -25508 * 24),
            (
                "0001-01-01T00:00:00",
                -1969,
                -1969 * 12,
                -719162,
                -719162 * 24,
            ),
            (
                "1600-02-29T12:00:00",
                -370,
                -370 * 12 + 1,
                -135081,
                -135081 * 24 + 12,
            ),
        ];
        for (s, y, m, d, h) in cases {
            let v = us(s);
            assert_eq!(
                [
                    micros_to(Year, v),
                    micros_to(Month, v),
                    micros_to(Day, v),
                    micros_to(Hour, v)
                ],
                [y, m, d, h],
                "{s}"
            );
            // The same instant plus 999 ns gives the same units: a µs value a tick short of
            // a second becomes a ns value a tick short of a second, where Java's quirk is
            // the same. Nanosecond timestamps cover only 1677..2262.
            let Some(n) = v.checked_mul(1000).and_then(|n| n.checked_add(999)) else {
                continue;
            };
            assert_eq!(
                [
                    nanos_to(Year, n),
                    nanos_to(Month, n),
                    nanos_to(Day, n),
                    nanos_to(Hour, n)
                ],
                [y, m, d, h],
                "{s} ns"
            );
            // one nanosecond earlier than an exact boundary moves down a unit
            if v % MICROS_PER_HOUR == 0 {
                assert_eq!(nanos_to(Hour, v * 1000 - 1), h - 1, "{s} - 1ns");
            }
            if v % MICROS_PER_DAY == 0 {
                assert_eq!(date_to(Year, d), y);
                assert_eq!(date_to(Month, d), m);
                assert_eq!(date_to(Day, d), d);
                assert_eq!(date_to(Day, d - 1), d - 1);
            }
        }
        assert_eq!(date_to(Year, -1), -1);
        assert_eq!(date_to(Month, -1), -1);
        assert_eq!(date_to(Month, -31), -1);
        assert_eq!(date_to(Month, -32), -2);
        // extreme inputs do not panic
        for v in [i64::MIN, i64::MAX, i64::MIN + 1] {
            for u in [Year, Month, Day, Hour] {
                let _ = micros_to(u, v);
                let _ = nanos_to(u, v);
            }
        }
        for d in [i32::MIN, i32::MAX] {
            for u in [Year, Month, Day] {
                let _ = date_to(u, d);
            }
        }
        assert_eq!(nanos_to(Year, i64::MIN), 1677 - 1970);
        assert_eq!(nanos_to(Year, i64::MAX), 2262 - 1970);
    }

    #[test]
    fn time_transforms_through_apply() {
        let ts = PrimitiveType::TimestamptzNs;
        let v = Literal::TimestamptzNs(-1);
        for (t, want) in [
            (Transform::Year, -1),
            (Transform::Month, -1),
            (Transform::Day, -1),
            (Transform::Hour, -1),
        ] {
            assert_eq!(t.apply(Some(&v), &ts).unwrap(), Some(Literal::Int(want)));
        }
        assert_eq!(
            Transform::Day
                .apply(Some(&Literal::Date(-5)), &PrimitiveType::Date)
                .unwrap(),
            Some(Literal::Int(-5))
        );
        assert!(Transform::Hour
            .apply(Some(&Literal::Date(-5)), &PrimitiveType::Date)
            .is_err());
        assert_eq!(
            Transform::Void
                .apply(Some(&Literal::Date(-5)), &PrimitiveType::Date)
                .unwrap(),
            None
        );
        assert_eq!(
            Transform::Identity
                .apply(Some(&Literal::Date(-5)), &PrimitiveType::Date)
                .unwrap(),
            Some(Literal::Date(-5))
        );
    }
}
