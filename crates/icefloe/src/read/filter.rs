//! A scan task's residual filter evaluated on Arrow record batches: the vectorised
//! counterpart of the Python reader's `_residual_expression`/`_evaluate`
//! (`python/icefloe/executor/read.py`), with the same results.
//!
//! The batch's columns are found by Iceberg field id (the `PARQUET:field_id` metadata of
//! each Arrow field, nested struct fields too), and hold the values in the reader's Arrow
//! types (those of `schema_to_arrow`: timestamps in µs or ns, `timestamptz` with a zone,
//! uuid as `FixedSizeBinary(16)`, decimals as `Decimal128`), after type promotion. Large
//! and view string/binary columns and dictionary-encoded columns are accepted too.
//!
//! Semantics (SQL's, as Spark evaluates filters and as the Python reader does):
//! - a null never matches a comparison, `=`, `!=`, `in`, `not in`, `starts with` or
//!   `not starts with`; `is null` matches it, `is nan` does not and `is not nan` does. A
//!   field inside a struct is null where the struct (or any struct around it) is null.
//! - AND and OR are three-valued and a row whose result is unknown is dropped. Bound
//!   expressions hold no NOT (binding pushes it into the predicates), and AND and OR are
//!   monotone, so folding each predicate's unknown to false gives the same rows:
//!   `unknown AND x` and `false AND x` are never true, `unknown OR x` and `false OR x` are
//!   true exactly when `x` is. The masks here are therefore plain bitmaps.
//! - floats and doubles compare as IEEE numbers (`-0.0 = 0.0`), except that NaN (of either
//!   sign) is above every number: `NaN > x` and `NaN >= x` hold, `NaN < x`, `NaN <= x` and
//!   `NaN = x` do not, `NaN != x` does. `in`/`not in` compare floats by their bits, as
//!   Java's `Set.contains` and Arrow's `is_in` do, so `-0.0 in (0.0, 1.0)` is false (a
//!   one-value `in` binds as `=`, where `-0.0 = 0.0`).
//! - strings and binary compare byte-wise (code point order), uuids and fixed byte-wise
//!   unsigned (the order of their string forms, which is how Spark sees a uuid),
//!   decimals by value, timestamps by their instant.
//!
//! Where this differs from the tuple evaluator [`crate::expr::evaluate_tuple`] (Java's
//! `Evaluator`, used on partition tuples): Java orders nulls first, so there a null value
//! matches `<`, `<=`, `!=`, `not in` and `not starts with`; Java orders `-0.0` below `0.0`
//! (`Float.compare`); Java compares uuids as two signed 64-bit halves. This is why a task
//! whose partition tuple holds a null is read with the whole scan filter instead of its
//! residual ([`task_row_filter`]).

use std::collections::HashSet;

use ahash::RandomState;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, StructArray};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, FieldRef, Fields};

use crate::arrow::schema::PARQUET_FIELD_ID;
use crate::arrow::types::iceberg_to_arrow_type;
use crate::arrow::values::literals_to_array;
use crate::error::{Error, Result};
use crate::expr::{BoundExpression, BoundPredicate, Operation};
use crate::spec::{Literal, PrimitiveType};

/// Sets of at most this many values are tested with one `=` kernel per value; larger ones
/// through a hash set of row-encoded values.
const SMALL_SET: usize = 16;

/// The filter a task's rows must pass: its `residual`, unless the task's `partition`
/// tuple holds a null, in which case the whole `scan_filter` (both bound to the table
/// schema).
///
/// Planning evaluates predicates on null partition values with Java's comparators (nulls
/// first, so `null != 'a'` and `null < 5` hold and leave `true` behind), while on rows a
/// null never matches a comparison: the residual of such a partition is not exact. A
/// residual of `false` stays (nothing to read).
pub fn task_row_filter<'a>(
    residual: &'a BoundExpression,
    scan_filter: &'a BoundExpression,
    partition: &[Option<Literal>],
) -> &'a BoundExpression {
    if *residual != BoundExpression::False && partition.iter().any(Option::is_none) {
        scan_filter
    } else {
        residual
    }
}

/// The rows of `batch` that `expr` keeps (true) and drops (false); never null. A
/// shorthand for [`ResidualFilter::new`] and [`ResidualFilter::mask`].
pub fn residual_mask(expr: &BoundExpression, batch: &RecordBatch) -> Result<BooleanArray> {
    ResidualFilter::new(expr)?.mask(batch)
}

/// A bound expression prepared for evaluation on many batches (its literals converted to
/// Arrow once).
#[derive(Debug, Clone)]
pub struct ResidualFilter {
    node: Node,
}

#[derive(Debug, Clone)]
enum Node {
    True,
    False,
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Predicate(Box<Prepared>),
}

#[derive(Debug, Clone)]
struct Prepared {
    op: Operation,
    field_id: i32,
    name: String,
    /// `None` for the term of a null check on a struct, list or map.
    primitive: Option<PrimitiveType>,
    /// The comparison, `starts with` value or the set (sorted, distinct), as an Arrow
    /// array of the type of [`iceberg_to_arrow_type`].
    values: Option<ArrayRef>,
    /// For float and double columns, the literal as an f64 and the set as f64 bits.
    float: Option<f64>,
    float_set: Vec<u64>,
}

impl ResidualFilter {
    /// Prepares `expr` (bound to the table schema). Errors when a literal does not fit its
    /// column's type.
    pub fn new(expr: &BoundExpression) -> Result<ResidualFilter> {
        Ok(ResidualFilter {
            node: prepare(expr)?,
        })
    }

    /// Whether the filter keeps every row without looking at them (`true`).
    pub fn is_always_true(&self) -> bool {
        matches!(self.node, Node::True)
    }

    /// The keep mask of `batch` (see the module documentation for the semantics). Errors
    /// (naming the column and field id) when a column the expression refers to is not in
    /// the batch or holds another type than the column's.
    pub fn mask(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        Ok(BooleanArray::new(
            eval(&self.node, batch, batch.num_rows())?,
            None,
        ))
    }
}

fn prepare(expr: &BoundExpression) -> Result<Node> {
    Ok(match expr {
        BoundExpression::True => Node::True,
        BoundExpression::False => Node::False,
        BoundExpression::And(l, r) => Node::And(Box::new(prepare(l)?), Box::new(prepare(r)?)),
        BoundExpression::Or(l, r) => Node::Or(Box::new(prepare(l)?), Box::new(prepare(r)?)),
        BoundExpression::Predicate(p) => Node::Predicate(Box::new(prepare_predicate(p)?)),
    })
}

fn prepare_predicate(p: &BoundPredicate) -> Result<Prepared> {
    let term = p.term();
    let primitive = term.field_type.as_primitive().cloned();
    let mut out = Prepared {
        op: p.op(),
        field_id: term.field_id,
        name: term.name.clone(),
        primitive: primitive.clone(),
        values: None,
        float: None,
        float_set: Vec::new(),
    };
    let literals: Vec<&Literal> = match p {
        BoundPredicate::Unary { .. } => return Ok(out),
        BoundPredicate::Literal { literal, .. } => vec![literal],
        BoundPredicate::Set { literals, .. } => literals.iter().collect(),
    };
    let Some(ty) = primitive else {
        return Err(Error::invalid_argument(format!(
            "cannot filter on '{}' (field id {}): '{}' needs a primitive column, not {}",
            term.name,
            term.field_id,
            p.op().symbol(),
            term.field_type
        )));
    };
    let wrap = |e: Error| {
        Error::invalid_argument(format!(
            "cannot filter on '{}' (field id {}): {e}",
            term.name, term.field_id
        ))
    };
    if matches!(ty, PrimitiveType::Float | PrimitiveType::Double) {
        let floats = literals
            .iter()
            .map(|l| match l {
                Literal::Float(f) => Ok(f64::from(*f)),
                Literal::Double(d) => Ok(*d),
                other => Err(wrap(Error::invalid_argument(format!(
                    "{other} is not a {ty} value"
                )))),
            })
            .collect::<Result<Vec<f64>>>()?;
        out.float = floats.first().copied();
        let mut bits: Vec<u64> = floats.iter().map(|f| f.to_bits()).collect();
        bits.sort_unstable();
        bits.dedup();
        out.float_set = bits;
    }
    let values: Vec<Option<&Literal>> = literals.into_iter().map(Some).collect();
    out.values = Some(literals_to_array(&values, &ty).map_err(wrap)?);
    Ok(out)
}

fn eval(node: &Node, batch: &RecordBatch, n: usize) -> Result<BooleanBuffer> {
    Ok(match node {
        Node::True => BooleanBuffer::new_set(n),
        Node::False => BooleanBuffer::new_unset(n),
        Node::And(l, r) => {
            let left = eval(l, batch, n)?;
            // nothing left to narrow: skip the other side
            if left.count_set_bits() == 0 {
                return Ok(left);
            }
            &left & &eval(r, batch, n)?
        }
        Node::Or(l, r) => {
            let left = eval(l, batch, n)?;
            if left.count_set_bits() == n {
                return Ok(left);
            }
            &left | &eval(r, batch, n)?
        }
        Node::Predicate(p) => eval_predicate(p, batch, n)?,
    })
}

/// A column of a batch found by field id, with the nulls of the structs around it.
#[derive(Debug, Clone)]
pub struct FieldColumn {
    /// The Arrow field (name, type, metadata).
    pub field: FieldRef,
    /// The column's values; nested ones carry only their own nulls.
    pub array: ArrayRef,
    /// The union of the nulls of the structs around the column (`None`: none is null).
    pub ancestor_nulls: Option<NullBuffer>,
}

impl FieldColumn {
    /// The rows where the column is null: its own nulls (logical, so a dictionary's null
    /// values count) or a struct around it is.
    pub fn nulls(&self) -> Option<NullBuffer> {
        NullBuffer::union(
            self.array.logical_nulls().as_ref(),
            self.ancestor_nulls.as_ref(),
        )
    }
}

/// The field id in an Arrow field's `PARQUET:field_id` metadata.
pub fn arrow_field_id(field: &arrow_schema::Field) -> Result<Option<i32>> {
    match field.metadata().get(PARQUET_FIELD_ID) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i32>().map(Some).map_err(|_| {
            Error::invalid_argument(format!(
                "field '{}' has {PARQUET_FIELD_ID}={v}, which is not an integer",
                field.name()
            ))
        }),
    }
}

/// The column of `batch` with Iceberg field id `field_id`: a top-level column or a field of
/// a struct column (at any depth; not inside lists or maps). `None` when there is none.
pub fn column_by_field_id(batch: &RecordBatch, field_id: i32) -> Result<Option<FieldColumn>> {
    find_in(batch.schema_ref().fields(), batch.columns(), None, field_id)
}

fn find_in(
    fields: &Fields,
    arrays: &[ArrayRef],
    ancestors: Option<&NullBuffer>,
    field_id: i32,
) -> Result<Option<FieldColumn>> {
    for (field, array) in fields.iter().zip(arrays) {
        if arrow_field_id(field)? == Some(field_id) {
            return Ok(Some(FieldColumn {
                field: field.clone(),
                array: array.clone(),
                ancestor_nulls: ancestors.cloned(),
            }));
        }
    }
    for (field, array) in fields.iter().zip(arrays) {
        if let DataType::Struct(children) = field.data_type() {
            let Some(s) = array.as_any().downcast_ref::<StructArray>() else {
                continue;
            };
            let nulls = NullBuffer::union(ancestors, s.nulls());
            if let Some(found) = find_in(children, s.columns(), nulls.as_ref(), field_id)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

fn eval_predicate(p: &Prepared, batch: &RecordBatch, n: usize) -> Result<BooleanBuffer> {
    let col = column_by_field_id(batch, p.field_id)?.ok_or_else(|| {
        Error::invalid_argument(format!(
            "cannot filter on '{}': the batch has no column with field id {}",
            p.name, p.field_id
        ))
    })?;
    let fail = |msg: String| {
        Error::invalid_argument(format!(
            "cannot filter on '{}' (field id {}): {msg}",
            p.name, p.field_id
        ))
    };
    let valid = col.nulls();
    let valid_bits = |bits: BooleanBuffer| match &valid {
        None => bits,
        Some(v) => &bits & v.inner(),
    };
    match p.op {
        Operation::IsNull => {
            return Ok(match &valid {
                None => BooleanBuffer::new_unset(n),
                Some(v) => !v.inner(),
            })
        }
        Operation::NotNull => {
            return Ok(match &valid {
                None => BooleanBuffer::new_set(n),
                Some(v) => v.inner().clone(),
            })
        }
        _ => {}
    }
    let Some(ty) = &p.primitive else {
        return Err(fail(format!(
            "'{}' needs a primitive column",
            p.op.symbol()
        )));
    };
    let array = values_of(&col.array, ty).map_err(|e| fail(e.to_string()))?;
    if matches!(ty, PrimitiveType::Float | PrimitiveType::Double) {
        return float_predicate(p, &array, &valid).map_err(|e| fail(e.to_string()));
    }
    match p.op {
        Operation::IsNan => Ok(BooleanBuffer::new_unset(n)),
        Operation::NotNan => Ok(BooleanBuffer::new_set(n)),
        Operation::Lt
        | Operation::LtEq
        | Operation::Gt
        | Operation::GtEq
        | Operation::Eq
        | Operation::NotEq => {
            let lit = literal_scalar(p, array.data_type()).map_err(|e| fail(e.to_string()))?;
            let kernel = match p.op {
                Operation::Lt => arrow_ord::cmp::lt,
                Operation::LtEq => arrow_ord::cmp::lt_eq,
                Operation::Gt => arrow_ord::cmp::gt,
                Operation::GtEq => arrow_ord::cmp::gt_eq,
                Operation::Eq => arrow_ord::cmp::eq,
                _ => arrow_ord::cmp::neq,
            };
            let out = kernel(&array, &Scalar::new(lit)).map_err(|e| fail(e.to_string()))?;
            Ok(valid_bits(out.values().clone()))
        }
        Operation::StartsWith | Operation::NotStartsWith => {
            let lit = literal_scalar(p, array.data_type()).map_err(|e| fail(e.to_string()))?;
            let out = arrow_string::like::starts_with(&array, &Scalar::new(lit))
                .map_err(|e| fail(e.to_string()))?;
            let bits = out.values().clone();
            Ok(valid_bits(if p.op == Operation::StartsWith {
                bits
            } else {
                !&bits
            }))
        }
        Operation::In | Operation::NotIn => {
            let set = p
                .values
                .as_ref()
                .ok_or_else(|| fail("the set has no values".into()))?;
            let set = cast_to(set, array.data_type()).map_err(|e| fail(e.to_string()))?;
            let inside = in_set(&array, &set).map_err(|e| fail(e.to_string()))?;
            Ok(valid_bits(if p.op == Operation::In {
                inside
            } else {
                !&inside
            }))
        }
        Operation::IsNull | Operation::NotNull => Err(fail("unreachable null check".into())),
    }
}

/// The column's values as an array of a type that holds Iceberg `ty` values: dictionaries
/// are unpacked; other types than the column's are refused.
fn values_of(array: &ArrayRef, ty: &PrimitiveType) -> Result<ArrayRef> {
    let array = match array.data_type() {
        DataType::Dictionary(_, value) => cast_to(array, value)?,
        _ => array.clone(),
    };
    let expected = iceberg_to_arrow_type(ty)?;
    if holds(&expected, array.data_type()) {
        Ok(array)
    } else {
        Err(Error::invalid_argument(format!(
            "the batch holds it as Arrow {}, which does not hold {ty} values",
            array.data_type()
        )))
    }
}

/// Whether an array of `actual` type holds the values of the Arrow type `expected` (the
/// one icefloe uses): the same type, or another layout of the same values.
pub(crate) fn holds(expected: &DataType, actual: &DataType) -> bool {
    use DataType as D;
    match (expected, actual) {
        (D::Utf8, D::Utf8 | D::LargeUtf8 | D::Utf8View) => true,
        (D::Binary, D::Binary | D::LargeBinary | D::BinaryView) => true,
        // a zone is a label: the values are instants either way
        (D::Timestamp(u1, Some(_)), D::Timestamp(u2, Some(_))) => u1 == u2,
        (D::Decimal128(_, s1), D::Decimal128(_, s2)) => s1 == s2,
        _ => expected == actual,
    }
}

fn cast_to(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if array.data_type() == to {
        return Ok(array.clone());
    }
    arrow_cast::cast(array, to).map_err(|e| {
        Error::invalid_argument(format!(
            "cannot cast Arrow {} to {to}: {e}",
            array.data_type()
        ))
    })
}

fn literal_scalar(p: &Prepared, to: &DataType) -> Result<ArrayRef> {
    let values = p
        .values
        .as_ref()
        .ok_or_else(|| Error::invalid_argument("the predicate has no value"))?;
    cast_to(values, to)
}

/// Whether each value is in `set` (the same type): one `=` kernel per value for small
/// sets, a hash set of row-encoded values otherwise (arrow-rs has no `is_in` kernel).
fn in_set(array: &ArrayRef, set: &ArrayRef) -> Result<BooleanBuffer> {
    let arrow_err = |e: arrow_schema::ArrowError| Error::invalid_argument(e.to_string());
    if set.len() <= SMALL_SET {
        let mut out = BooleanBuffer::new_unset(array.len());
        for i in 0..set.len() {
            let hit =
                arrow_ord::cmp::eq(array, &Scalar::new(set.slice(i, 1))).map_err(arrow_err)?;
            out = &out | hit.values();
        }
        return Ok(out);
    }
    let converter =
        RowConverter::new(vec![SortField::new(array.data_type().clone())]).map_err(arrow_err)?;
    let wanted = converter
        .convert_columns(std::slice::from_ref(set))
        .map_err(arrow_err)?;
    // aHash (randomly seeded): several times faster than SipHash on short keys
    let keys: HashSet<&[u8], RandomState> = wanted.iter().map(|r| r.data()).collect();
    let rows = converter
        .convert_columns(std::slice::from_ref(array))
        .map_err(arrow_err)?;
    Ok(BooleanBuffer::collect_bool(array.len(), |i| {
        keys.contains(rows.row(i).data())
    }))
}

/// Predicates on float and double columns. arrow-rs's comparison kernels order floats by
/// IEEE 754 `totalOrder` (`-0.0 < 0.0`, negative NaNs below every number), which is not
/// SQL's order, so these compare the values directly (as the kernels do internally).
fn float_predicate(
    p: &Prepared,
    array: &ArrayRef,
    valid: &Option<NullBuffer>,
) -> Result<BooleanBuffer> {
    let values: Arc<[f64]>;
    // f32 to f64 is exact, and so are the comparisons on the widened values
    let f64s: &[f64] = match array.data_type() {
        DataType::Float64 => array.as_primitive::<Float64Type>().values(),
        DataType::Float32 => {
            values = array
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|v| f64::from(*v))
                .collect();
            &values
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "a float predicate on Arrow {other}"
            )))
        }
    };
    let n = f64s.len();
    let lit = p.float.unwrap_or(f64::NAN);
    let bits = match p.op {
        Operation::IsNan => BooleanBuffer::collect_bool(n, |i| f64s[i].is_nan()),
        Operation::NotNan => {
            let not_nan = BooleanBuffer::collect_bool(n, |i| !f64s[i].is_nan());
            // a null is not NaN
            return Ok(match valid {
                None => not_nan,
                Some(v) => &not_nan | &!v.inner(),
            });
        }
        Operation::Lt => BooleanBuffer::collect_bool(n, |i| f64s[i] < lit),
        Operation::LtEq => BooleanBuffer::collect_bool(n, |i| f64s[i] <= lit),
        // NaN is above every number
        Operation::Gt => BooleanBuffer::collect_bool(n, |i| f64s[i] > lit || f64s[i].is_nan()),
        Operation::GtEq => BooleanBuffer::collect_bool(n, |i| f64s[i] >= lit || f64s[i].is_nan()),
        Operation::Eq => BooleanBuffer::collect_bool(n, |i| f64s[i] == lit),
        Operation::NotEq => BooleanBuffer::collect_bool(n, |i| f64s[i] != lit),
        Operation::In | Operation::NotIn => {
            let set = &p.float_set;
            let inside =
                BooleanBuffer::collect_bool(n, |i| set.binary_search(&f64s[i].to_bits()).is_ok());
            if p.op == Operation::In {
                inside
            } else {
                !&inside
            }
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "'{}' does not apply to a float column",
                other.symbol()
            )))
        }
    };
    Ok(match valid {
        None => bits,
        Some(v) => &bits & v.inner(),
    })
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
