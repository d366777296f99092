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

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Number, Value};

use super::types::{PrimitiveType, Type};
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

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_HOUR: i64 = 3_600 * MICROS_PER_SECOND;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
pub const NANOS_PER_MICRO: i64 = 1_000;
pub const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub const NANOS_PER_HOUR: i64 = 3_600 * NANOS_PER_SECOND;
pub const NANOS_PER_DAY: i64 = 24 * NANOS_PER_HOUR;

// ---------------------------------------------------------------------------------------
// Calendar arithmetic (proleptic Gregorian, as java.time). Pure integer math on i64 so
// that any i32 day count or i64 micro/nano count works without overflow or panics.
// ---------------------------------------------------------------------------------------

/// Days from 1970-01-01 to the date `year-month-day` (month 1..=12, day 1..=31).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Count years from March so that the leap day is the last day of the counted year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (i64::from(month) + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719_468 days from 0000-03-01 to 1970-01-01
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` that is `days` days from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Years from 1970 of the date `days` days from 1970-01-01 (floor semantics before 1970).
pub fn days_to_years(days: i64) -> i64 {
    civil_from_days(days).0 - 1970
}

/// Months from 1970-01 of the date `days` days from 1970-01-01.
pub fn days_to_months(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    (y - 1970) * 12 + i64::from(m) - 1
}

// ---------------------------------------------------------------------------------------
// ISO-8601 text, in the shapes java.time's ISO_LOCAL_DATE / ISO_LOCAL_TIME write and read.
// ---------------------------------------------------------------------------------------

fn write_iso_date(out: &mut String, days: i64) {
    use std::fmt::Write;
    let (y, m, d) = civil_from_days(days);
    // Java pads the year to 4 digits and adds a '+' only above 9999.
    let _ = if y > 9999 {
        write!(out, "+{y}-{m:02}-{d:02}")
    } else if y < 0 {
        write!(out, "-{:04}-{m:02}-{d:02}", -y)
    } else {
        write!(out, "{y:04}-{m:02}-{d:02}")
    };
}

/// `HH:MM:SS` then the fraction of second without trailing zeros (none when zero).
fn write_iso_time(out: &mut String, nanos_of_day: i64) {
    use std::fmt::Write;
    let secs = nanos_of_day / NANOS_PER_SECOND;
    let frac = nanos_of_day % NANOS_PER_SECOND;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let digits = format!("{frac:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

fn iso_date(days: i64) -> String {
    let mut s = String::with_capacity(10);
    write_iso_date(&mut s, days);
    s
}

fn iso_time_from_micros(micros: i64) -> String {
    let mut s = String::with_capacity(15);
    // A time outside one day is not a valid value; wrap it rather than fail, so that
    // writing never panics (reading rejects such values).
    write_iso_time(&mut s, micros.rem_euclid(MICROS_PER_DAY) * NANOS_PER_MICRO);
    s
}

fn iso_timestamp(value: i64, units_per_day: i64, nanos_per_unit: i64, utc: bool) -> String {
    let mut s = String::with_capacity(32);
    write_iso_date(&mut s, value.div_euclid(units_per_day));
    s.push('T');
    write_iso_time(&mut s, value.rem_euclid(units_per_day) * nanos_per_unit);
    if utc {
        s.push_str("+00:00");
    }
    s
}

/// A small cursor over ASCII text for the ISO parsers.
struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    fn new(s: &'a str) -> Self {
        Scan {
            b: s.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Reads between `min` and `max` ASCII digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<(i64, usize)> {
        let start = self.pos;
        let mut v: i64 = 0;
        while self.pos - start < max {
            match self.peek() {
                Some(c @ b'0'..=b'9') => {
                    v = v * 10 + i64::from(c - b'0');
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let n = self.pos - start;
        (n >= min).then_some((v, n))
    }

    fn done(&self) -> bool {
        self.pos == self.b.len()
    }
}

fn parse_date_at(sc: &mut Scan<'_>) -> Option<i64> {
    // Java: 4 digits without sign; a sign allows up to 9 digits, and '+' only beyond 4.
    let (neg, signed) = match sc.peek() {
        Some(b'-') => (true, true),
        Some(b'+') => (false, true),
        _ => (false, false),
    };
    if signed {
        sc.pos += 1;
    }
    let (year, n) = if signed {
        sc.digits(4, 9)?
    } else {
        sc.digits(4, 4)?
    };
    if signed && !neg && n == 4 {
        return None;
    }
    let year = if neg { -year } else { year };
    if !sc.eat(b'-') {
        return None;
    }
    let (month, _) = sc.digits(2, 2)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (day, _) = sc.digits(2, 2)?;
    let month = u32::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
    let day = u32::try_from(day)
        .ok()
        .filter(|d| *d >= 1 && *d <= days_in_month(year, month))?;
    Some(days_from_civil(year, month, day))
}

/// `HH:MM[:SS[.fffffffff]]` as nanoseconds of the day.
fn parse_time_at(sc: &mut Scan<'_>) -> Option<i64> {
    let (h, _) = sc.digits(2, 2)?;
    if !sc.eat(b':') {
        return None;
    }
    let (m, _) = sc.digits(2, 2)?;
    let mut s = 0;
    let mut frac = 0;
    if sc.eat(b':') {
        s = sc.digits(2, 2)?.0;
        if sc.eat(b'.') {
            let (f, n) = sc.digits(1, 9)?;
            frac = f * 10_i64.pow(9 - n as u32);
        }
    }
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + frac)
}

/// Days from 1970-01-01 of an ISO local date (`2017-11-16`).
pub fn parse_iso_date(s: &str) -> Option<i64> {
    let mut sc = Scan::new(s);
    let d = parse_date_at(&mut sc)?;
    sc.done().then_some(d)
}

/// Microseconds from midnight of an ISO local time (`22:31:08.123456`); digits beyond
/// microseconds are dropped, as in Java.
pub fn parse_iso_time(s: &str) -> Option<i64> {
    let mut sc = Scan::new(s);
    let n = parse_time_at(&mut sc)?;
    sc.done().then_some(n / NANOS_PER_MICRO)
}

/// Parses an ISO timestamp into (days, nanos of day, offset seconds if present).
fn parse_iso_timestamp(s: &str) -> Option<(i64, i64, Option<i64>)> {
    let mut sc = Scan::new(s);
    let days = parse_date_at(&mut sc)?;
    if !(sc.eat(b'T') || sc.eat(b't')) {
        return None;
    }
    let nod = parse_time_at(&mut sc)?;
    let offset = match sc.peek() {
        None => None,
        Some(b'Z' | b'z') => {
            sc.pos += 1;
            Some(0)
        }
        Some(c @ (b'+' | b'-')) => {
            sc.pos += 1;
            let (h, _) = sc.digits(2, 2)?;
            if !sc.eat(b':') {
                return None;
            }
            let (m, _) = sc.digits(2, 2)?;
            let sec = if sc.eat(b':') { sc.digits(2, 2)?.0 } else { 0 };
            if h > 18 || m > 59 || sec > 59 {
                return None;
            }
            let total = h * 3600 + m * 60 + sec;
            Some(if c == b'-' { -total } else { total })
        }
        Some(_) => return None,
    };
    sc.done().then_some((days, nod, offset))
}

/// Epoch offset in `unit_nanos` units of a parsed timestamp, truncated toward zero as Java's
/// `ChronoUnit.between` does; `None` when out of the i64 range.
fn timestamp_units(days: i64, nanos_of_day: i64, offset_secs: i64, unit_nanos: i64) -> Option<i64> {
    let total = i128::from(days) * i128::from(NANOS_PER_DAY) + i128::from(nanos_of_day)
        - i128::from(offset_secs) * i128::from(NANOS_PER_SECOND);
    i64::try_from(total / i128::from(unit_nanos)).ok()
}

// ---------------------------------------------------------------------------------------
// Decimal text
// ---------------------------------------------------------------------------------------

/// Plain decimal text of `unscaled * 10^-scale` with exactly `scale` fraction digits.
pub fn decimal_to_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Parses decimal text (plain or scientific, as Java's `BigDecimal(String)`) into its
/// unscaled value and scale.
pub fn parse_decimal(s: &str) -> Option<(i128, i64)> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut unscaled: i128 = 0;
    let mut ndigits = 0usize;
    let mut frac_digits: i64 = 0;
    let mut seen_point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                unscaled = unscaled
                    .checked_mul(10)?
                    .checked_add(i128::from(c - b'0'))?;
                ndigits += 1;
                if seen_point {
                    frac_digits += 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if ndigits == 0 {
        return None;
    }
    let mut exponent: i64 = 0;
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let exp_neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while let Some(c @ b'0'..=b'9') = b.get(i) {
            exponent = exponent.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
            if exponent > i64::from(i32::MAX) {
                return None;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        if exp_neg {
            exponent = -exponent;
        }
    }
    if i != b.len() {
        return None;
    }
    Some((
        if neg { -unscaled } else { unscaled },
        frac_digits - exponent,
    ))
}

fn decimal_digits(unscaled: i128) -> u32 {
    let mut v = unscaled.unsigned_abs();
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

// ---------------------------------------------------------------------------------------
// Hex
// ---------------------------------------------------------------------------------------

fn hex_upper(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    s
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    b.chunks_exact(2)
        .map(|p| Some((nibble(p[0])? << 4) | nibble(p[1])?))
        .collect()
}

fn float_to_json(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn bad_json(ty: &Type, value: &Value, why: &str) -> Error {
    let mut shown = value.to_string();
    if shown.len() > 80 {
        let mut cut = 77;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push_str("...");
    }
    Error::invalid_argument(format!("cannot parse {shown} as a {ty} value: {why}"))
}

impl Literal {
    /// Reads a value from its JSON single-value form for `ty`.
    ///
    /// JSON `null` is not a value: it is an error here (use [`Literal::from_json_opt`] where
    /// null means "no value"). Nested nulls (list elements, map values, struct fields) are
    /// `None` entries.
    pub fn from_json(value: &Value, ty: &Type) -> Result<Literal> {
        match Self::from_json_opt(value, ty)? {
            Some(l) => Ok(l),
            None => Err(bad_json(
                ty,
                value,
                "null is not a value (a null default is written by omitting the default)",
            )),
        }
    }

    /// Like [`Literal::from_json`], but JSON `null` reads as `None`.
    pub fn from_json_opt(value: &Value, ty: &Type) -> Result<Option<Literal>> {
        if value.is_null() {
            return Ok(None);
        }
        let p = match ty {
            Type::Primitive(p) => p,
            Type::Variant => {
                return Err(bad_json(ty, value, "variant values must default to null"));
            }
            Type::Struct(st) => {
                let Value::Object(obj) = value else {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!(
                            "expected an object keyed by field id, got {}",
                            json_kind(value)
                        ),
                    ));
                };
                let mut fields = Vec::new();
                // Keys that are not field ids of the struct are ignored, as in Java.
                for f in &st.fields {
                    if let Some(v) = obj.get(&f.id.to_string()) {
                        let lit = Self::from_json_opt(v, &f.field_type)
                            .map_err(|e| nested(e, &format!("field {}", f.id)))?;
                        fields.push((f.id, lit));
                    }
                }
                return Ok(Some(Literal::Struct(fields)));
            }
            Type::List(lt) => {
                let Value::Array(items) = value else {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!("expected an array, got {}", json_kind(value)),
                    ));
                };
                let elem = &lt.element_field.field_type;
                let out = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        Self::from_json_opt(v, elem).map_err(|e| nested(e, &format!("element {i}")))
                    })
                    .collect::<Result<Vec<_>>>()?;
                return Ok(Some(Literal::List(out)));
            }
            Type::Map(mt) => {
                let (Some(Value::Array(keys)), Some(Value::Array(values))) =
                    (value.get("keys"), value.get("values"))
                else {
                    return Err(bad_json(
                        ty,
                        value,
                        "expected an object with arrays \"keys\" and \"values\"",
                    ));
                };
                if keys.len() != values.len() {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!("{} keys but {} values", keys.len(), values.len()),
                    ));
                }
                let kt = &mt.key_field.field_type;
                let vt = &mt.value_field.field_type;
                let mut out = Vec::with_capacity(keys.len());
                for (i, (k, v)) in keys.iter().zip(values).enumerate() {
                    let key = Self::from_json_opt(k, kt)
                        .map_err(|e| nested(e, &format!("key {i}")))?
                        .ok_or_else(|| {
                            Error::invalid_argument(format!("key {i}: map keys cannot be null"))
                        })?;
                    let val =
                        Self::from_json_opt(v, vt).map_err(|e| nested(e, &format!("value {i}")))?;
                    out.push((key, val));
                }
                return Ok(Some(Literal::Map(out)));
            }
        };
        let text = || -> Result<&str> {
            value.as_str().ok_or_else(|| {
                bad_json(
                    ty,
                    value,
                    &format!("expected a string, got {}", json_kind(value)),
                )
            })
        };
        use PrimitiveType as P;
        let lit = match p {
            P::Unknown | P::Geometry { .. } | P::Geography { .. } => {
                return Err(bad_json(
                    ty,
                    value,
                    &format!("{p} values must default to null"),
                ));
            }
            P::Boolean => match value {
                Value::Bool(b) => Literal::Boolean(*b),
                _ => {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!("expected a boolean, got {}", json_kind(value)),
                    ))
                }
            },
            P::Int => Literal::Int(
                value
                    .as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| bad_json(ty, value, "expected an integer in the int range"))?,
            ),
            P::Long => Literal::Long(
                value
                    .as_i64()
                    .ok_or_else(|| bad_json(ty, value, "expected an integer in the long range"))?,
            ),
            P::Float | P::Double => {
                let v = match value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => match s.as_str() {
                        "NaN" => Some(f64::NAN),
                        "Infinity" => Some(f64::INFINITY),
                        "-Infinity" => Some(f64::NEG_INFINITY),
                        _ => None,
                    },
                    _ => None,
                }
                .ok_or_else(|| {
                    bad_json(
                        ty,
                        value,
                        "expected a number (or \"NaN\", \"Infinity\", \"-Infinity\")",
                    )
                })?;
                if *p == P::Float {
                    Literal::Float(v as f32)
                } else {
                    Literal::Double(v)
                }
            }
            P::Decimal { precision, scale } => {
                let s = text()?;
                let (unscaled, got_scale) =
                    parse_decimal(s).ok_or_else(|| bad_json(ty, value, "not a decimal number"))?;
                if got_scale != i64::from(*scale) {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!("the scale is {got_scale}, the type's scale is {scale}"),
                    ));
                }
                if decimal_digits(unscaled) > *precision {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!("more than {precision} digits"),
                    ));
                }
                Literal::Decimal(unscaled)
            }
            P::Date => {
                let days = parse_iso_date(text()?)
                    .and_then(|d| i32::try_from(d).ok())
                    .ok_or_else(|| {
                        bad_json(ty, value, "expected an ISO date such as \"2017-11-16\"")
                    })?;
                Literal::Date(days)
            }
            P::Time => Literal::Time(parse_iso_time(text()?).ok_or_else(|| {
                bad_json(
                    ty,
                    value,
                    "expected an ISO time such as \"22:31:08.123456\"",
                )
            })?),
            P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs => {
                let utc = matches!(p, P::Timestamptz | P::TimestamptzNs);
                let nanos = matches!(p, P::TimestampNs | P::TimestamptzNs);
                let example = match (utc, nanos) {
                    (false, false) => "2017-11-16T22:31:08.123456",
                    (true, false) => "2017-11-16T22:31:08.123456+00:00",
                    (false, true) => "2017-11-16T22:31:08.123456789",
                    (true, true) => "2017-11-16T22:31:08.123456789+00:00",
                };
                let (days, nod, offset) = parse_iso_timestamp(text()?).ok_or_else(|| {
                    bad_json(
                        ty,
                        value,
                        &format!("expected an ISO timestamp such as \"{example}\""),
                    )
                })?;
                match (utc, offset) {
                    (false, Some(_)) => {
                        return Err(bad_json(
                            ty,
                            value,
                            "a timestamp without time zone must not include a zone offset",
                        ));
                    }
                    (true, None) => {
                        return Err(bad_json(
                            ty,
                            value,
                            "the zone offset is missing; it must be +00:00",
                        ))
                    }
                    (true, Some(o)) if o != 0 => {
                        return Err(bad_json(ty, value, "the zone offset must be +00:00"));
                    }
                    _ => {}
                }
                let unit = if nanos { 1 } else { NANOS_PER_MICRO };
                let v = timestamp_units(days, nod, 0, unit)
                    .ok_or_else(|| bad_json(ty, value, "out of the range of the type"))?;
                match p {
                    P::Timestamp => Literal::Timestamp(v),
                    P::Timestamptz => Literal::Timestamptz(v),
                    P::TimestampNs => Literal::TimestampNs(v),
                    _ => Literal::TimestamptzNs(v),
                }
            }
            P::String => Literal::String(text()?.to_string()),
            P::Uuid => {
                let s = text()?;
                let u = (s.len() == 36)
                    .then(|| uuid::Uuid::try_parse(s).ok())
                    .flatten()
                    .ok_or_else(|| {
                        bad_json(
                            ty,
                            value,
                            "expected a UUID such as \"f79c3e09-677c-4bbd-a479-3f349cb785e7\"",
                        )
                    })?;
                Literal::Uuid(u.as_u128())
            }
            P::Fixed(len) => {
                let s = text()?;
                if s.len() as u64 != len.saturating_mul(2) {
                    return Err(bad_json(
                        ty,
                        value,
                        &format!(
                            "expected {} hex digits, got {}",
                            len.saturating_mul(2),
                            s.len()
                        ),
                    ));
                }
                Literal::Fixed(parse_hex(s).ok_or_else(|| bad_json(ty, value, "not a hex string"))?)
            }
            P::Binary => Literal::Binary(
                parse_hex(text()?).ok_or_else(|| bad_json(ty, value, "not a hex string"))?,
            ),
        };
        Ok(Some(lit))
    }

    /// Writes the JSON single-value form of this value for `ty`.
    ///
    /// A value that does not fit `ty` (a caller bug) is written in the natural JSON form of
    /// its own kind instead of failing; use [`Literal::try_to_json`] to detect that.
    pub fn to_json(&self, ty: &Type) -> Value {
        self.try_to_json(ty).unwrap_or_else(|_| self.natural_json())
    }

    /// Writes the JSON single-value form of this value for `ty`, or an error when the value
    /// is not of that type.
    pub fn try_to_json(&self, ty: &Type) -> Result<Value> {
        let mismatch = || Error::invalid_argument(format!("value {self} is not a {ty} value"));
        let p = match ty {
            Type::Primitive(p) => p,
            Type::Variant => return Err(mismatch()),
            Type::Struct(st) => {
                let Literal::Struct(fields) = self else {
                    return Err(mismatch());
                };
                for (id, _) in fields {
                    if st.field_by_id(*id).is_none() {
                        return Err(Error::invalid_argument(format!(
                            "struct value has field id {id}, which is not in {ty}"
                        )));
                    }
                }
                let mut m = Map::new();
                // Java writes fields in the order of the struct type and skips null fields.
                for f in &st.fields {
                    if let Some((_, Some(v))) = fields.iter().find(|(id, _)| *id == f.id) {
                        m.insert(f.id.to_string(), v.try_to_json(&f.field_type)?);
                    }
                }
                return Ok(Value::Object(m));
            }
            Type::List(lt) => {
                let Literal::List(items) = self else {
                    return Err(mismatch());
                };
                let elem = &lt.element_field.field_type;
                return items
                    .iter()
                    .map(|i| i.as_ref().map_or(Ok(Value::Null), |v| v.try_to_json(elem)))
                    .collect::<Result<Vec<_>>>()
                    .map(Value::Array);
            }
            Type::Map(mt) => {
                let Literal::Map(entries) = self else {
                    return Err(mismatch());
                };
                let (kt, vt) = (&mt.key_field.field_type, &mt.value_field.field_type);
                let mut keys = Vec::with_capacity(entries.len());
                let mut values = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    keys.push(k.try_to_json(kt)?);
                    values.push(v.as_ref().map_or(Ok(Value::Null), |v| v.try_to_json(vt))?);
                }
                let mut m = Map::new();
                m.insert("keys".into(), Value::Array(keys));
                m.insert("values".into(), Value::Array(values));
                return Ok(Value::Object(m));
            }
        };
        use PrimitiveType as P;
        Ok(match (p, self) {
            (P::Boolean, Literal::Boolean(b)) => Value::Bool(*b),
            (P::Int, Literal::Int(v)) => Value::from(*v),
            (P::Long, Literal::Long(v)) => Value::from(*v),
            // Through the shortest decimal text of the f32, so 0.1f is written 0.1 as Java does.
            (P::Float, Literal::Float(v)) => {
                float_to_json(v.to_string().parse::<f64>().unwrap_or(f64::from(*v)))
            }
            (P::Double, Literal::Double(v)) => float_to_json(*v),
            (P::Decimal { precision, scale }, Literal::Decimal(v)) => {
                if decimal_digits(*v) > *precision {
                    return Err(Error::invalid_argument(format!(
                        "unscaled value {v} has more than {precision} digits"
                    )));
                }
                Value::String(decimal_to_string(*v, *scale))
            }
            (P::Date, Literal::Date(d)) => Value::String(iso_date(i64::from(*d))),
            (P::Time, Literal::Time(t)) => {
                if !(0..MICROS_PER_DAY).contains(t) {
                    return Err(Error::invalid_argument(format!(
                        "time {t} is outside 0..{MICROS_PER_DAY} microseconds"
                    )));
                }
                Value::String(iso_time_from_micros(*t))
            }
            (P::Timestamp, Literal::Timestamp(v)) => {
                Value::String(iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, false))
            }
            (P::Timestamptz, Literal::Timestamptz(v)) => {
                Value::String(iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, true))
            }
            (P::TimestampNs, Literal::TimestampNs(v)) => {
                Value::String(iso_timestamp(*v, NANOS_PER_DAY, 1, false))
            }
            (P::TimestamptzNs, Literal::TimestamptzNs(v)) => {
                Value::String(iso_timestamp(*v, NANOS_PER_DAY, 1, true))
            }
            (P::String, Literal::String(s)) => Value::String(s.clone()),
            (P::Uuid, Literal::Uuid(u)) => {
                Value::String(uuid::Uuid::from_u128(*u).hyphenated().to_string())
            }
            (P::Fixed(len), Literal::Fixed(b)) => {
                if b.len() as u64 != *len {
                    return Err(Error::invalid_argument(format!(
                        "{} bytes for a {p} value",
                        b.len()
                    )));
                }
                Value::String(hex_upper(b))
            }
            (P::Binary, Literal::Binary(b)) => Value::String(hex_upper(b)),
            _ => return Err(mismatch()),
        })
    }

    /// The JSON form of a value without a type: the best guess of [`Literal::to_json`] for
    /// values that do not match the requested type.
    fn natural_json(&self) -> Value {
        match self {
            Literal::Boolean(b) => Value::Bool(*b),
            Literal::Int(v) | Literal::Date(v) => Value::from(*v),
            Literal::Long(v)
            | Literal::Time(v)
            | Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => Value::from(*v),
            Literal::Float(v) => float_to_json(f64::from(*v)),
            Literal::Double(v) => float_to_json(*v),
            Literal::Decimal(v) => Value::String(v.to_string()),
            Literal::String(s) => Value::String(s.clone()),
            Literal::Uuid(u) => Value::String(uuid::Uuid::from_u128(*u).hyphenated().to_string()),
            Literal::Fixed(b) | Literal::Binary(b) => Value::String(hex_upper(b)),
            Literal::Struct(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(id, v)| {
                        (
                            id.to_string(),
                            v.as_ref().map_or(Value::Null, Literal::natural_json),
                        )
                    })
                    .collect(),
            ),
            Literal::List(items) => Value::Array(
                items
                    .iter()
                    .map(|v| v.as_ref().map_or(Value::Null, Literal::natural_json))
                    .collect(),
            ),
            Literal::Map(entries) => {
                let mut m = Map::new();
                m.insert(
                    "keys".into(),
                    Value::Array(entries.iter().map(|(k, _)| k.natural_json()).collect()),
                );
                m.insert(
                    "values".into(),
                    Value::Array(
                        entries
                            .iter()
                            .map(|(_, v)| v.as_ref().map_or(Value::Null, Literal::natural_json))
                            .collect(),
                    ),
                );
                Value::Object(m)
            }
        }
    }

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

fn nested(e: Error, at: &str) -> Error {
    match e {
        Error::InvalidArgument { message } => Error::invalid_argument(format!("{at}: {message}")),
        other => other,
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::types::{ListType, MapType, NestedField, StructType};
    use serde_json::json;

    fn p(t: PrimitiveType) -> Type {
        Type::Primitive(t)
    }

    fn dec(precision: u32, scale: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision, scale }
    }

    /// Reads `text` for `ty`, checks the value, and checks it is written back unchanged.
    fn round_trip(ty: Type, text: Value, expected: Literal) {
        let lit = Literal::from_json(&text, &ty).unwrap();
        assert_eq!(lit, expected, "{text}");
        assert_eq!(lit.try_to_json(&ty).unwrap(), text, "{text}");
    }

    #[test]
    fn appendix_d_json_examples() {
        use PrimitiveType as P;
        round_trip(p(P::Boolean), json!(true), Literal::Boolean(true));
        round_trip(p(P::Int), json!(34), Literal::Int(34));
        round_trip(p(P::Long), json!(34), Literal::Long(34));
        round_trip(p(P::Float), json!(1.0), Literal::Float(1.0));
        round_trip(p(P::Double), json!(1.0), Literal::Double(1.0));
        round_trip(p(dec(4, 2)), json!("14.20"), Literal::Decimal(1420));
        round_trip(p(P::Date), json!("2017-11-16"), Literal::Date(17486));
        let t = ((22 * 60 + 31) * 60 + 8) * 1_000_000 + 123_456;
        round_trip(p(P::Time), json!("22:31:08.123456"), Literal::Time(t));
        let ts = 17486 * MICROS_PER_DAY + t;
        round_trip(
            p(P::Timestamp),
            json!("2017-11-16T22:31:08.123456"),
            Literal::Timestamp(ts),
        );
        round_trip(
            p(P::Timestamptz),
            json!("2017-11-16T22:31:08.123456+00:00"),
            Literal::Timestamptz(ts),
        );
        let ns = ts * 1000 + 789;
        round_trip(
            p(P::TimestampNs),
            json!("2017-11-16T22:31:08.123456789"),
            Literal::TimestampNs(ns),
        );
        round_trip(
            p(P::TimestamptzNs),
            json!("2017-11-16T22:31:08.123456789+00:00"),
            Literal::TimestamptzNs(ns),
        );
        round_trip(
            p(P::String),
            json!("iceberg"),
            Literal::String("iceberg".into()),
        );
        round_trip(
            p(P::Uuid),
            json!("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
            Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7),
        );
        // Java writes hex in upper case; both cases are read.
        round_trip(
            p(P::Fixed(4)),
            json!("000102FF"),
            Literal::Fixed(vec![0, 1, 2, 0xff]),
        );
        round_trip(
            p(P::Binary),
            json!("000102FF"),
            Literal::Binary(vec![0, 1, 2, 0xff]),
        );
        assert_eq!(
            Literal::from_json(&json!("000102ff"), &p(P::Binary)).unwrap(),
            Literal::Binary(vec![0, 1, 2, 0xff])
        );
        assert_eq!(
            Literal::from_json(&json!("000102ff"), &p(P::Fixed(4))).unwrap(),
            Literal::Fixed(vec![0, 1, 2, 0xff])
        );

        let st: Type = StructType::new(vec![
            NestedField::required(1, "id", p(P::Int)),
            NestedField::optional(2, "data", p(P::String)),
        ])
        .into();
        round_trip(
            st.clone(),
            json!({"1": 1, "2": "bar"}),
            Literal::Struct(vec![
                (1, Some(Literal::Int(1))),
                (2, Some(Literal::String("bar".into()))),
            ]),
        );
        round_trip(st.clone(), json!({}), Literal::Struct(vec![]));
        let list: Type = ListType::new(3, false, p(P::Int)).into();
        round_trip(
            list.clone(),
            json!([1, 2, 3]),
            Literal::List(vec![
                Some(Literal::Int(1)),
                Some(Literal::Int(2)),
                Some(Literal::Int(3)),
            ]),
        );
        round_trip(
            list,
            json!([1, null]),
            Literal::List(vec![Some(Literal::Int(1)), None]),
        );
        let map: Type = MapType::new(4, p(P::String), 5, false, p(P::Int)).into();
        round_trip(
            map,
            json!({"keys": ["a", "b"], "values": [1, 2]}),
            Literal::Map(vec![
                (Literal::String("a".into()), Some(Literal::Int(1))),
                (Literal::String("b".into()), Some(Literal::Int(2))),
            ]),
        );
    }

    #[test]
    fn json_text_matches_java_formatting() {
        use PrimitiveType as P;
        // java.time drops a zero fraction and trailing zeros of the fraction
        round_trip(
            p(P::Time),
            json!("22:31:08"),
            Literal::Time(81068 * 1_000_000),
        );
        round_trip(
            p(P::Time),
            json!("22:31:08.1"),
            Literal::Time(81068 * 1_000_000 + 100_000),
        );
        round_trip(p(P::Time), json!("00:00:00"), Literal::Time(0));
        round_trip(
            p(P::Timestamp),
            json!("1970-01-01T00:00:00"),
            Literal::Timestamp(0),
        );
        round_trip(
            p(P::Timestamp),
            json!("1969-12-31T23:59:59.999999"),
            Literal::Timestamp(-1),
        );
        round_trip(
            p(P::TimestampNs),
            json!("1969-12-31T23:59:59.999999999"),
            Literal::TimestampNs(-1),
        );
        round_trip(
            p(P::Timestamptz),
            json!("2017-11-16T22:31:08.12+00:00"),
            Literal::Timestamptz(17486 * MICROS_PER_DAY + 81068 * 1_000_000 + 120_000),
        );
        // years outside 0000..9999 as java.time writes them
        round_trip(p(P::Date), json!("0000-01-01"), Literal::Date(-719528));
        round_trip(p(P::Date), json!("-0001-12-31"), Literal::Date(-719529));
        round_trip(p(P::Date), json!("+10000-01-01"), Literal::Date(2932897));
        round_trip(p(P::Date), json!("1600-02-29"), Literal::Date(-135081));
        // decimals keep exactly the type's scale
        round_trip(p(dec(9, 2)), json!("-0.05"), Literal::Decimal(-5));
        round_trip(p(dec(9, 2)), json!("0.00"), Literal::Decimal(0));
        round_trip(p(dec(9, 0)), json!("-123"), Literal::Decimal(-123));
        round_trip(
            p(dec(38, 10)),
            json!("-9999999999999999999999999999.9999999999"),
            Literal::Decimal(-99999999999999999999999999999999999999),
        );
        // BigDecimal accepts scientific notation with the right scale
        assert_eq!(
            Literal::from_json(&json!("1.420E+1"), &p(dec(4, 2))).unwrap(),
            Literal::Decimal(1420)
        );
        // floats: shortest text of the f32, not of its widened f64
        assert_eq!(
            Literal::Float(0.1)
                .try_to_json(&p(P::Float))
                .unwrap()
                .to_string(),
            "0.1"
        );
        assert_eq!(
            Literal::Double(0.1)
                .try_to_json(&p(P::Double))
                .unwrap()
                .to_string(),
            "0.1"
        );
        assert_eq!(
            Literal::Double(-0.0)
                .try_to_json(&p(P::Double))
                .unwrap()
                .to_string(),
            "-0.0"
        );
    }

    #[test]
    fn non_finite_floats_are_strings() {
        use PrimitiveType as P;
        for (v, s) in [
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            round_trip(p(P::Double), json!(s), Literal::Double(v));
            round_trip(p(P::Float), json!(s), Literal::Float(v as f32));
        }
        assert_eq!(
            Literal::Double(f64::NAN).to_json(&p(P::Double)),
            json!("NaN")
        );
        assert!(
            matches!(Literal::from_json(&json!("NaN"), &p(P::Float)).unwrap(), Literal::Float(f) if f.is_nan())
        );
        // ints are numbers for floats
        assert_eq!(
            Literal::from_json(&json!(3), &p(P::Float)).unwrap(),
            Literal::Float(3.0)
        );
    }

    #[test]
    fn bad_json_values_are_errors() {
        use PrimitiveType as P;
        let bad: Vec<(Type, Value)> = vec![
            (p(P::Boolean), json!(1)),
            (p(P::Int), json!(1.5)),
            (p(P::Int), json!(1.0)),
            (p(P::Int), json!(2147483648_i64)),
            (p(P::Int), json!("1")),
            (p(P::Long), json!(9223372036854775808_u64)),
            (p(P::Double), json!("1.0")),
            (p(dec(4, 2)), json!("14.2")),
            (p(dec(4, 2)), json!("114.20")),
            (p(dec(4, 2)), json!(14.20)),
            (p(dec(4, 2)), json!("1e")),
            (
                p(dec(38, 0)),
                json!("999999999999999999999999999999999999999999"),
            ),
            (p(P::Date), json!("2017-02-29")),
            (p(P::Date), json!("2017-13-01")),
            (p(P::Date), json!("17-11-16")),
            (p(P::Date), json!("+2017-11-16")),
            (p(P::Date), json!("2017-11-16T00:00:00")),
            (p(P::Time), json!("24:00:00")),
            (p(P::Time), json!("22:31:08.")),
            (p(P::Time), json!("22:31:08.1234567890")),
            (p(P::Timestamp), json!("2017-11-16T22:31:08+00:00")),
            (p(P::Timestamp), json!("2017-11-16 22:31:08")),
            (p(P::Timestamptz), json!("2017-11-16T22:31:08")),
            (p(P::Timestamptz), json!("2017-11-16T14:31:08-08:00")),
            (p(P::TimestampNs), json!("+999999999-01-01T00:00:00")),
            (p(P::Uuid), json!("f79c3e09677c4bbda4793f349cb785e7")),
            (p(P::Uuid), json!("{f79c3e09-677c-4bbd-a479-3f349cb785}")),
            (p(P::Fixed(4)), json!("000102")),
            (p(P::Binary), json!("0g")),
            (p(P::Binary), json!("012")),
            (p(P::Unknown), json!("x")),
            (p(P::Geometry { crs: None }), json!("POINT (30 10)")),
            (Type::Variant, json!({})),
            (ListType::new(1, true, p(P::Int)).into(), json!({"1": 2})),
            (
                MapType::new(1, p(P::Int), 2, true, p(P::Int)).into(),
                json!({"keys": [1], "values": []}),
            ),
            (
                MapType::new(1, p(P::Int), 2, true, p(P::Int)).into(),
                json!({"keys": [null], "values": [1]}),
            ),
            (
                MapType::new(1, p(P::Int), 2, true, p(P::Int)).into(),
                json!([1, 2]),
            ),
            (
                StructType::new(vec![NestedField::required(1, "a", p(P::Int))]).into(),
                json!({"1": "x"}),
            ),
            (p(P::Int), Value::Null),
        ];
        for (ty, v) in bad {
            let err = Literal::from_json(&v, &ty).unwrap_err();
            assert!(
                matches!(err, Error::InvalidArgument { .. }),
                "{ty} {v}: {err}"
            );
        }
        let err = Literal::from_json(
            &json!({"1": "x"}),
            &StructType::new(vec![NestedField::required(1, "a", p(P::Int))]).into(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("field 1: cannot parse \"x\" as a int value"),
            "{err}"
        );
        assert!(
            Literal::from_json(&json!("x"), &p(P::Geometry { crs: None }))
                .unwrap_err()
                .to_string()
                .contains("must default to null")
        );
        // a time with nanoseconds is read at microsecond precision, as in Java
        assert_eq!(
            Literal::from_json(&json!("00:00:00.000001999"), &p(P::Time)).unwrap(),
            Literal::Time(1)
        );
        // Java truncates extra digits toward zero for timestamps
        assert_eq!(
            Literal::from_json(&json!("1969-12-31T23:59:59.9999999"), &p(P::Timestamp)).unwrap(),
            Literal::Timestamp(0)
        );
        // zero offsets in other spellings are UTC
        for s in [
            "2017-11-16T22:31:08Z",
            "2017-11-16T22:31:08-00:00",
            "2017-11-16T22:31:08+00:00:00",
        ] {
            assert_eq!(
                Literal::from_json(&json!(s), &p(P::Timestamptz)).unwrap(),
                Literal::Timestamptz(17486 * MICROS_PER_DAY + 81068 * 1_000_000)
            );
        }
        assert_eq!(
            Literal::from_json_opt(&Value::Null, &p(P::Int)).unwrap(),
            None
        );
    }

    #[test]
    fn to_json_checks_the_type() {
        use PrimitiveType as P;
        assert!(Literal::Int(1).try_to_json(&p(P::Long)).is_err());
        assert!(Literal::Fixed(vec![1])
            .try_to_json(&p(P::Fixed(2)))
            .is_err());
        assert!(Literal::Decimal(12345).try_to_json(&p(dec(4, 2))).is_err());
        assert!(Literal::Time(-1).try_to_json(&p(P::Time)).is_err());
        // the infallible form falls back to the value's own JSON form
        assert_eq!(Literal::Int(1).to_json(&p(P::String)), json!(1));
        let st: Type = StructType::new(vec![NestedField::required(1, "a", p(P::Int))]).into();
        assert!(Literal::Struct(vec![(7, None)]).try_to_json(&st).is_err());
        // null struct fields are omitted, as Java does
        assert_eq!(
            Literal::Struct(vec![(1, None)]).try_to_json(&st).unwrap(),
            json!({})
        );
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
