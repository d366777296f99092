//! The JSON single-value form (Appendix D), as Java's `SingleValueParser` writes it.

use serde_json::{Map, Number, Value};

use super::datetime::*;
use super::text::*;
use super::Literal;
use crate::error::{Error, Result};
use crate::spec::json::kind as json_kind;
use crate::spec::types::{PrimitiveType, Type};

fn float_to_json(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
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
    pub(super) fn natural_json(&self) -> Value {
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
}

fn nested(e: Error, at: &str) -> Error {
    match e {
        Error::InvalidArgument { message } => Error::invalid_argument(format!("{at}: {message}")),
        other => other,
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
}
