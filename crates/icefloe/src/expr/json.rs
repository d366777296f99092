//! The JSON form of expressions, as the REST catalog spec and Java's `ExpressionParser`
//! write it: `true`/`false` as JSON booleans, `{"type": "and", "left": …, "right": …}`,
//! `{"type": "not", "child": …}`, `{"type": "lt", "term": "id", "value": 5}`,
//! `{"type": "in", "term": "id", "values": [1, 2]}`, `{"type": "is-null", "term": "id"}`.
//! A term is a column name, or `{"type": "reference", "term": "id"}`.
//!
//! Values of unbound expressions are written as the user typed them (numbers, strings,
//! booleans; decimals, dates, times, timestamps and UUIDs as strings; binary as hex).
//! Bound expressions write their values in the column's single-value JSON form
//! (Appendix D), as Java does. Reading with a schema converts values by the column's type;
//! reading without one keeps JSON numbers as long or double and strings as strings.

use serde_json::{json, Map, Value};

use super::{BoundExpression, BoundPredicate, Datum, Expression, Operation};
use crate::error::{Error, Result};
use crate::spec::literal::{
    iso_time_from_micros, iso_timestamp, MICROS_PER_DAY, NANOS_PER_DAY, NANOS_PER_MICRO,
};
use crate::spec::{Literal, Schema, Type};

impl Operation {
    /// The name in the JSON form (`lt-eq`, `not-starts-with`, `is-null`).
    pub fn json_name(self) -> &'static str {
        use Operation as O;
        match self {
            O::IsNull => "is-null",
            O::NotNull => "not-null",
            O::IsNan => "is-nan",
            O::NotNan => "not-nan",
            O::Lt => "lt",
            O::LtEq => "lt-eq",
            O::Gt => "gt",
            O::GtEq => "gt-eq",
            O::Eq => "eq",
            O::NotEq => "not-eq",
            O::StartsWith => "starts-with",
            O::NotStartsWith => "not-starts-with",
            O::In => "in",
            O::NotIn => "not-in",
        }
    }

    pub fn from_json_name(name: &str) -> Option<Operation> {
        use Operation as O;
        Some(match name.to_ascii_lowercase().as_str() {
            "is-null" => O::IsNull,
            "not-null" => O::NotNull,
            "is-nan" => O::IsNan,
            "not-nan" => O::NotNan,
            "lt" => O::Lt,
            "lt-eq" => O::LtEq,
            "gt" => O::Gt,
            "gt-eq" => O::GtEq,
            "eq" => O::Eq,
            "not-eq" => O::NotEq,
            "starts-with" => O::StartsWith,
            "not-starts-with" => O::NotStartsWith,
            "in" => O::In,
            "not-in" => O::NotIn,
            _ => return None,
        })
    }
}

fn predicate_json(op: Operation, term: &str, values: Vec<Value>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String(op.json_name().into()));
    m.insert("term".into(), Value::String(term.into()));
    if op.is_set() {
        m.insert("values".into(), Value::Array(values));
    } else if !op.is_unary() {
        m.insert(
            "value".into(),
            values.into_iter().next().unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

impl Datum {
    /// The value as written in an unbound expression's JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Datum::Boolean(v) => json!(v),
            Datum::Int(v) => json!(v),
            Datum::Long(v) => json!(v),
            Datum::Float(v) => json!(v),
            Datum::Double(v) => json!(v),
            Datum::Decimal { unscaled, scale } => {
                Value::String(crate::spec::literal::decimal_to_string(*unscaled, *scale))
            }
            Datum::String(s) => Value::String(s.clone()),
            Datum::Date(d) => Value::String(Literal::Date(*d).to_string()),
            Datum::Time(t) => Value::String(iso_time_from_micros(*t)),
            Datum::Timestamp(v) => {
                Value::String(iso_timestamp(*v, MICROS_PER_DAY, NANOS_PER_MICRO, false))
            }
            Datum::TimestampNs(v) => Value::String(iso_timestamp(*v, NANOS_PER_DAY, 1, false)),
            Datum::Uuid(u) => Value::String(uuid::Uuid::from_u128(*u).hyphenated().to_string()),
            Datum::Fixed(b) | Datum::Binary(b) => {
                Value::String(b.iter().map(|x| format!("{x:02X}")).collect())
            }
        }
    }

    /// A JSON value without a type to read it by: integers are longs, other numbers
    /// doubles, strings strings.
    fn from_untyped_json(v: &Value, at: &str) -> Result<Datum> {
        match v {
            Value::Bool(b) => Ok(Datum::Boolean(*b)),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Datum::Long(i))
                } else if let Some(f) = n.as_f64() {
                    Ok(Datum::Double(f))
                } else {
                    Err(Error::invalid_metadata(
                        at,
                        format!("number {n} is out of range"),
                    ))
                }
            }
            Value::String(s) => Ok(Datum::String(s.clone())),
            other => Err(Error::invalid_metadata(
                at,
                format!("expected a number, string or boolean value, not {other}"),
            )),
        }
    }
}

impl Expression {
    /// The expression in the REST catalog / Java `ExpressionParser` JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Expression::True => Value::Bool(true),
            Expression::False => Value::Bool(false),
            Expression::And(l, r) => {
                json!({"type": "and", "left": l.to_json(), "right": r.to_json()})
            }
            Expression::Or(l, r) => {
                json!({"type": "or", "left": l.to_json(), "right": r.to_json()})
            }
            Expression::Not(c) => json!({"type": "not", "child": c.to_json()}),
            Expression::Predicate(p) => {
                predicate_json(p.op, &p.term, p.values.iter().map(Datum::to_json).collect())
            }
        }
    }

    /// Reads the JSON form. With a schema, values are read by the type of their column
    /// (its single-value JSON form first, then the usual conversions); without one, by
    /// their JSON kind. Errors name the JSON path of the bad part.
    pub fn from_json(value: &Value, schema: Option<&Schema>) -> Result<Expression> {
        parse(value, schema, "")
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn parse(v: &Value, schema: Option<&Schema>, at: &str) -> Result<Expression> {
    let obj = match v {
        Value::Bool(true) => return Ok(Expression::True),
        Value::Bool(false) => return Ok(Expression::False),
        Value::Object(o) => o,
        other => {
            return Err(Error::invalid_metadata(
                at,
                format!("expected an expression object or a boolean, not {other}"),
            ))
        }
    };
    let ty = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_metadata(join(at, "type"), "missing expression type"))?;
    let child = |key: &str| -> Result<Expression> {
        let path = join(at, key);
        let c = obj
            .get(key)
            .ok_or_else(|| Error::invalid_metadata(&path, format!("'{ty}' needs '{key}'")))?;
        parse(c, schema, &path)
    };
    match ty.to_ascii_lowercase().as_str() {
        "true" => return Ok(Expression::True),
        "false" => return Ok(Expression::False),
        "and" => {
            return Ok(Expression::And(
                Box::new(child("left")?),
                Box::new(child("right")?),
            ))
        }
        "or" => {
            return Ok(Expression::Or(
                Box::new(child("left")?),
                Box::new(child("right")?),
            ))
        }
        "not" => return Ok(Expression::Not(Box::new(child("child")?))),
        _ => {}
    }
    let op = Operation::from_json_name(ty).ok_or_else(|| {
        Error::invalid_metadata(join(at, "type"), format!("unknown expression type '{ty}'"))
    })?;
    let term = parse_term(obj.get("term"), &join(at, "term"))?;
    // Java's ExpressionParser finds the column ignoring case to read the values by its type
    let column_type = schema
        .and_then(|s| {
            s.field_by_name(&term, true)
                .or_else(|| s.field_by_name(&term, false))
        })
        .map(|f| f.field_type.clone());
    let read = |v: &Value, path: &str| read_value(v, column_type.as_ref(), path);
    let values = if op.is_unary() {
        Vec::new()
    } else if op.is_set() {
        let path = join(at, "values");
        let arr = obj.get("values").and_then(Value::as_array).ok_or_else(|| {
            Error::invalid_metadata(&path, format!("'{ty}' needs a 'values' array"))
        })?;
        arr.iter()
            .enumerate()
            .map(|(i, v)| read(v, &format!("{path}[{i}]")))
            .collect::<Result<Vec<_>>>()?
    } else {
        let path = join(at, "value");
        let v = obj
            .get("value")
            .ok_or_else(|| Error::invalid_metadata(&path, format!("'{ty}' needs a 'value'")))?;
        vec![read(v, &path)?]
    };
    Ok(Expression::predicate(op, term, values))
}

fn parse_term(v: Option<&Value>, at: &str) -> Result<String> {
    match v {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Object(o)) => match o.get("type").and_then(Value::as_str) {
            Some("reference") => match o.get("term") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(Error::invalid_metadata(
                    join(at, "term"),
                    "a reference needs a column name",
                )),
            },
            Some("transform") => Err(Error::unsupported(format!(
                "{at}: transform terms in expressions are not supported"
            ))),
            _ => Err(Error::invalid_metadata(at, "unknown term type")),
        },
        Some(other) => Err(Error::invalid_metadata(
            at,
            format!("expected a column name, not {other}"),
        )),
        None => Err(Error::invalid_metadata(at, "missing term")),
    }
}

fn read_value(v: &Value, column_type: Option<&Type>, at: &str) -> Result<Datum> {
    if let Some(Type::Primitive(p)) = column_type {
        if let Ok(l) = Literal::from_json(v, &Type::Primitive(p.clone())) {
            return Ok(Datum::from_literal(&l, p));
        }
    }
    Datum::from_untyped_json(v, at)
}

impl BoundExpression {
    /// The JSON form with values in their column's single-value JSON form, as Java writes
    /// bound expressions.
    pub fn to_json(&self) -> Value {
        match self {
            BoundExpression::True => Value::Bool(true),
            BoundExpression::False => Value::Bool(false),
            BoundExpression::And(l, r) => {
                json!({"type": "and", "left": l.to_json(), "right": r.to_json()})
            }
            BoundExpression::Or(l, r) => {
                json!({"type": "or", "left": l.to_json(), "right": r.to_json()})
            }
            BoundExpression::Predicate(p) => {
                let ty = p.term().field_type.clone();
                let values = match p {
                    BoundPredicate::Unary { .. } => Vec::new(),
                    BoundPredicate::Literal { literal, .. } => vec![value_json(literal, &ty)],
                    BoundPredicate::Set { literals, .. } => {
                        literals.iter().map(|l| value_json(l, &ty)).collect()
                    }
                };
                predicate_json(p.op(), &p.term().name, values)
            }
        }
    }
}

/// A predicate's value in its column's single-value form. A decimal may have more digits
/// than the column's precision (a projection of `x <= 9999999.99` through truncate[50] on a
/// decimal(9, 2) is `p <= 10000000.00`); Java writes it all the same, with the scale.
fn value_json(literal: &Literal, ty: &Type) -> Value {
    match (literal, ty) {
        (
            Literal::Decimal(v),
            Type::Primitive(crate::spec::PrimitiveType::Decimal { scale, .. }),
        ) => Value::String(crate::spec::literal::decimal_to_string(*v, *scale)),
        _ => literal.to_json(ty),
    }
}
