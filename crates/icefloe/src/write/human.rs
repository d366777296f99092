//! Partition values as text, for data file paths: Java's `Transform.toHumanString` per
//! transform and type, and `PartitionSpec.partitionToPath` (`name=value` pairs joined by
//! `/`, both parts URL-encoded as `URLEncoder.encode(s, UTF_8)` does).

use std::fmt::Write;

use crate::spec::literal::{civil_from_days, decimal_to_string};
use crate::spec::literal::{iso_timestamp, MICROS_PER_DAY, NANOS_PER_DAY, NANOS_PER_MICRO};
use crate::spec::partition::PartitionSpec;
use crate::spec::{Literal, PrimitiveType, Transform};

/// The path of a partition tuple (one value per field of `spec`, typed by the partition
/// type whose field types are `types`), e.g. `ts_day=2024-01-01/id_bucket=3`.
pub fn partition_to_path(
    spec: &PartitionSpec,
    types: &[PrimitiveType],
    values: &[Option<Literal>],
) -> String {
    let mut out = String::new();
    for (i, field) in spec.fields.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        let value = values.get(i).and_then(Option::as_ref);
        let text = match types.get(i) {
            Some(ty) => human_string(&field.transform, ty, value),
            None => "null".to_string(),
        };
        url_encode(&field.name, &mut out);
        out.push('=');
        url_encode(&text, &mut out);
    }
    out
}

/// `transform.toHumanString(resultType, value)`.
pub fn human_string(transform: &Transform, ty: &PrimitiveType, value: Option<&Literal>) -> String {
    let Some(v) = value else {
        return "null".to_string();
    };
    match (transform, v) {
        (Transform::Year, Literal::Int(y)) => format!("{:04}", 1970 + i64::from(*y)),
        (Transform::Month, Literal::Int(m)) => {
            let m = i64::from(*m);
            format!("{:04}-{:02}", 1970 + m.div_euclid(12), 1 + m.rem_euclid(12))
        }
        (Transform::Day, Literal::Int(d)) => human_day(i64::from(*d)),
        (Transform::Hour, Literal::Int(h)) => {
            let h = i64::from(*h);
            format!("{}-{:02}", human_day(h.div_euclid(24)), h.rem_euclid(24))
        }
        _ => value_string(ty, v),
    }
}

/// `yyyy-MM-dd` as Java's `String.format("%04d-%02d-%02d")` of the date (no `+` above 9999).
fn human_day(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The text of a value of an identity or truncate partition: Java's `toHumanString` by type.
fn value_string(ty: &PrimitiveType, v: &Literal) -> String {
    use Literal as L;
    match v {
        L::Boolean(b) => b.to_string(),
        L::Int(x) => x.to_string(),
        L::Long(x) => x.to_string(),
        L::Float(x) => java_float(f64::from(*x), format!("{x:e}"), x.to_string()),
        L::Double(x) => java_float(*x, format!("{x:e}"), x.to_string()),
        L::Decimal(u) => match ty {
            PrimitiveType::Decimal { scale, .. } => big_decimal_string(*u, *scale),
            _ => u.to_string(),
        },
        L::Date(d) => human_day(i64::from(*d)),
        L::Time(t) => local_time(*t),
        L::Timestamp(t) => iso_timestamp(*t, MICROS_PER_DAY, NANOS_PER_MICRO, false),
        L::Timestamptz(t) => iso_timestamp(*t, MICROS_PER_DAY, NANOS_PER_MICRO, true),
        L::TimestampNs(t) => iso_timestamp(*t, NANOS_PER_DAY, 1, false),
        L::TimestamptzNs(t) => iso_timestamp(*t, NANOS_PER_DAY, 1, true),
        L::String(s) => s.clone(),
        L::Uuid(u) => uuid::Uuid::from_u128(*u).hyphenated().to_string(),
        L::Fixed(b) | L::Binary(b) => base64(b),
        other => other.to_string(),
    }
}

/// Java's `Float.toString` / `Double.toString` shape from Rust's shortest digits: plain
/// with at least one fraction digit for 1e-3 <= |x| < 1e7, else `d.dddE±n`. (Java 17's
/// algorithm is not always the shortest; Java 19+ is. Both agree on ordinary values.)
fn java_float(x: f64, sci: String, plain: String) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}

/// `BigDecimal.toString()`: plain unless the adjusted exponent is below -6.
fn big_decimal_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if adjusted >= -6 {
        return decimal_to_string(unscaled, scale);
    }
    let sign = if unscaled < 0 { "-" } else { "" };
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    format!("{sign}{first}{rest}E{adjusted}")
}

/// `LocalTime.toString()`: `HH:mm`, then `:ss` unless seconds and fraction are zero, then
/// the fraction in groups of 3 digits.
fn local_time(micros: i64) -> String {
    let nanos = micros.rem_euclid(MICROS_PER_DAY) * NANOS_PER_MICRO;
    let secs = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    let mut s = format!("{:02}:{:02}", secs / 3600, (secs / 60) % 60);
    if secs % 60 > 0 || frac > 0 {
        let _ = write!(s, ":{:02}", secs % 60);
        if frac > 0 {
            if frac % 1_000_000 == 0 {
                let _ = write!(s, ".{:03}", frac / 1_000_000);
            } else if frac % 1_000 == 0 {
                let _ = write!(s, ".{:06}", frac / 1_000);
            } else {
                let _ = write!(s, ".{frac:09}");
            }
        }
    }
    s
}

/// Standard base64 with padding (`java.util.Base64.getEncoder()`).
fn base64(b: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, x)| acc | (u32::from(*x) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `URLEncoder.encode(s, UTF_8)`: letters, digits and `.-*_` stay, space becomes `+`,
/// every other byte `%XX`.
fn url_encode(s: &str, out: &mut String) {
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_text_forms() {
        assert_eq!(
            java_float(1.0, format!("{:e}", 1.0), 1.0f64.to_string()),
            "1.0"
        );
        let f = |x: f64| java_float(x, format!("{x:e}"), x.to_string());
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(1e7), "1.0E7");
        assert_eq!(f(1.5e-4), "1.5E-4");
        assert_eq!(f(0.001), "0.001");
        assert_eq!(f(123.25), "123.25");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(big_decimal_string(1420, 2), "14.20");
        assert_eq!(big_decimal_string(-5, 0), "-5");
        assert_eq!(big_decimal_string(1, 7), "1E-7");
        assert_eq!(big_decimal_string(0, 10), "0E-10");
        assert_eq!(big_decimal_string(-123, 9), "-1.23E-7");
        assert_eq!(local_time(0), "00:00");
        assert_eq!(local_time(1_000_000), "00:00:01");
        assert_eq!(local_time(81_068_123_000), "22:31:08.123");
        assert_eq!(local_time(81_068_000_001), "22:31:08.000001");
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(&[0xff, 0xfe, 0xfd, 0]), "//79AA==");
        let mut s = String::new();
        url_encode("a b/c=é*~", &mut s);
        assert_eq!(s, "a+b%2Fc%3D%C3%A9*%7E");
    }

    #[test]
    fn human_strings() {
        let int = |v| Some(Literal::Int(v));
        let h =
            |t: Transform, v: Option<Literal>| human_string(&t, &PrimitiveType::Int, v.as_ref());
        assert_eq!(h(Transform::Year, int(54)), "2024");
        assert_eq!(h(Transform::Year, int(-1975)), "-005");
        assert_eq!(h(Transform::Month, int(-1)), "1969-12");
        assert_eq!(h(Transform::Day, int(-1)), "1969-12-31");
        assert_eq!(h(Transform::Hour, int(-1)), "1969-12-31-23");
        assert_eq!(h(Transform::Bucket(4), int(3)), "3");
        assert_eq!(h(Transform::Void, None), "null");
        assert_eq!(
            human_string(
                &Transform::Identity,
                &PrimitiveType::Timestamptz,
                Some(&Literal::Timestamptz(1_510_871_468_123_456))
            ),
            "2017-11-16T22:31:08.123456+00:00"
        );
        assert_eq!(
            human_string(
                &Transform::Identity,
                &PrimitiveType::Uuid,
                Some(&Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7))
            ),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7"
        );
    }
}
