//! Evaluating a row filter on a data file's column metrics: the Java reference's
//! `InclusiveMetricsEvaluator` (may any row of the file match?) and
//! `StrictMetricsEvaluator` (must every row of the file match?).
//!
//! Both are bound to the table schema: a predicate's term names a table column by field
//! id, and the file's `value_counts`, `null_value_counts`, `nan_value_counts`,
//! `lower_bounds` and `upper_bounds` are looked up by that id. A missing map or a missing
//! entry means "unknown", and unknown never lets the inclusive evaluator skip a file nor
//! the strict evaluator claim a match — with the exceptions Java has, reproduced here:
//! - strict: when `null_value_counts` is present but has no entry for the column, the
//!   column is taken to have no nulls (a required column's counts are often omitted);
//! - inclusive: a NaN lower bound (ORC writes NaN bounds when the first value is NaN) is
//!   not trusted by `<`, `<=`, `=` and `in`.
//!
//! One difference from Java, so that a query's answer does not depend on which file a row
//! is in: NaN is above every number (Spark's order, which the reader's residual applies
//! too), so a NaN row matches `>`, `>=`, `!=` and `not in` and no other comparison. Java's
//! inclusive evaluator prunes a file for `x > v` when its (NaN-free) upper bound is at
//! most `v`, NaN rows and all, while its row evaluator keeps NaN rows of files it reads.
//! Here a float or double column whose NaN count is not known to be 0 is never pruned
//! by `>` or `>=`, and, in the strict evaluator, never claims every row for `<`, `<=`,
//! `=` or `in` (Java takes a missing NaN count as 0 there); NaN rows do not keep a file
//! from matching `>` or `>=` entirely.
//!
//! Bounds are decoded only when a predicate needs them, only for its column, and without
//! allocating: numbers decode to a [`Literal`] on the stack, strings and binary compare
//! their raw bytes (UTF-8 byte order is code point order, which is Java's string order).
//! String upper bounds may be truncated and incremented by writers; every rule below
//! stays correct for such bounds (they are still upper bounds).

use std::cmp::Ordering;

use super::eval::{is_nan, java_compare, set_contains};
use super::{BoundExpression, BoundPredicate, BoundReference, Operation};
use crate::error::{Error, Result};
use crate::manifest::DataFile;
use crate::spec::{Literal, PrimitiveType};

/// Above this many values an `in` predicate is not checked against the bounds (Java's
/// `IN_PREDICATE_LIMIT` in the inclusive evaluators).
pub const IN_PREDICATE_LIMIT: usize = 200;

/// Decides whether a data file may contain rows that match a row filter (Java's
/// `InclusiveMetricsEvaluator`). `eval` returning `false` means no row can match, so the
/// file can be skipped.
#[derive(Debug, Clone)]
pub struct InclusiveMetricsEvaluator {
    expr: BoundExpression,
}

impl InclusiveMetricsEvaluator {
    /// `expr` is the row filter bound to the table schema.
    pub fn new(expr: BoundExpression) -> Self {
        InclusiveMetricsEvaluator { expr }
    }

    /// Whether `file` may contain rows that match: false when its metrics prove that no row
    /// does. A file with no rows never matches; a file with a negative record count (Java
    /// writes -1 when importing Avro files it could not count) always may.
    pub fn eval(&self, file: &DataFile) -> Result<bool> {
        if file.record_count == 0 {
            return Ok(false);
        }
        if file.record_count < 0 {
            return Ok(true);
        }
        let stats = FileStats::of(file);
        inclusive(&self.expr, &stats)
    }
}

/// Decides whether every row of a data file matches a row filter (Java's
/// `StrictMetricsEvaluator`), e.g. to delete whole files or to drop a residual. `eval`
/// returning `false` means some row might not match.
#[derive(Debug, Clone)]
pub struct StrictMetricsEvaluator {
    expr: BoundExpression,
}

impl StrictMetricsEvaluator {
    /// `expr` is the row filter bound to the table schema.
    pub fn new(expr: BoundExpression) -> Self {
        StrictMetricsEvaluator { expr }
    }

    /// Whether all rows of `file` must match. A file with no rows (or a negative record
    /// count) matches vacuously.
    pub fn eval(&self, file: &DataFile) -> Result<bool> {
        if file.record_count <= 0 {
            return Ok(true);
        }
        let stats = FileStats::of(file);
        strict(&self.expr, &stats)
    }
}

/// The metrics of one file, borrowed.
struct FileStats<'a> {
    value_counts: Option<&'a [(i32, i64)]>,
    null_counts: Option<&'a [(i32, i64)]>,
    nan_counts: Option<&'a [(i32, i64)]>,
    lower: Option<&'a [(i32, Vec<u8>)]>,
    upper: Option<&'a [(i32, Vec<u8>)]>,
}

fn count(map: Option<&[(i32, i64)]>, id: i32) -> Option<i64> {
    map?.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

fn raw_bound(map: Option<&[(i32, Vec<u8>)]>, id: i32) -> Option<&[u8]> {
    map?.iter()
        .find(|(k, _)| *k == id)
        .map(|(_, v)| v.as_slice())
}

impl<'a> FileStats<'a> {
    fn of(file: &'a DataFile) -> Self {
        FileStats {
            value_counts: file.value_counts.as_deref(),
            null_counts: file.null_value_counts.as_deref(),
            nan_counts: file.nan_value_counts.as_deref(),
            lower: file.lower_bounds.as_deref(),
            upper: file.upper_bounds.as_deref(),
        }
    }

    /// Every value of the column is null (value count equals null count, both known).
    fn nulls_only(&self, id: i32) -> bool {
        matches!(
            (count(self.value_counts, id), count(self.null_counts, id)),
            (Some(values), Some(nulls)) if values - nulls == 0
        )
    }

    /// Every value of the column is NaN (NaN count equals value count, both known).
    fn nans_only(&self, id: i32) -> bool {
        matches!(
            (count(self.nan_counts, id), count(self.value_counts, id)),
            (Some(nans), Some(values)) if nans == values
        )
    }

    /// Inclusive: nulls are possible unless the null count is known to be 0.
    fn may_contain_null(&self, id: i32) -> bool {
        count(self.null_counts, id) != Some(0)
    }

    /// Strict: nulls are possible when there are no null counts at all, or the column's
    /// count is positive (a column missing from present null counts has none, as in Java).
    fn can_contain_nulls(&self, id: i32) -> bool {
        match self.null_counts {
            None => true,
            Some(_) => count(self.null_counts, id).is_some_and(|n| n > 0),
        }
    }

    /// Inclusive: a float or double column may hold NaN unless its NaN count is known to
    /// be 0 (or it holds nulls only).
    fn may_contain_nan(&self, term: &BoundReference) -> bool {
        term.is_floating_point()
            && count(self.nan_counts, term.field_id) != Some(0)
            && !self.nulls_only(term.field_id)
    }

    /// Strict: a float or double column may hold NaN unless its NaN count is known to be
    /// 0. Java takes a missing count as 0 (v1 writers kept none), which would let `<`,
    /// `<=`, `=` and `in` claim every row of a file whose NaN rows do not match, and a
    /// whole-file delete drop them.
    fn can_contain_nans(&self, term: &BoundReference) -> bool {
        term.is_floating_point() && count(self.nan_counts, term.field_id) != Some(0)
    }

    /// The one value of a column whose bounds are equal and that has no nulls and no NaNs
    /// (Java's `uniqueValue`).
    /// The checks run in Java's order: nulls, then both bounds are decoded (a malformed
    /// bound is an error even when the NaN count rules the column out), then NaNs.
    fn unique_value(&self, term: &BoundReference) -> Result<Option<Bound<'a>>> {
        let id = term.field_id;
        if self.may_contain_null(id) {
            return Ok(None);
        }
        let lower = self.lower(term)?;
        let upper = self.upper(term)?;
        let (Some(lower), Some(upper)) = (lower, upper) else {
            return Ok(None);
        };
        if lower.is_nan() || upper.is_nan() {
            return Ok(None);
        }
        if count(self.nan_counts, id).is_some_and(|n| n != 0) {
            return Ok(None);
        }
        if !lower.same_as(&upper)? {
            return Ok(None);
        }
        Ok(Some(lower))
    }

    fn lower(&self, term: &BoundReference) -> Result<Option<Bound<'a>>> {
        raw_bound(self.lower, term.field_id)
            .map(|b| Bound::decode(b, term))
            .transpose()
    }

    fn upper(&self, term: &BoundReference) -> Result<Option<Bound<'a>>> {
        raw_bound(self.upper, term.field_id)
            .map(|b| Bound::decode(b, term))
            .transpose()
    }
}

/// A decoded bound: a number (on the stack) or the raw bytes of a string or binary value.
pub(crate) enum Bound<'a> {
    Value(Literal),
    Bytes(&'a [u8]),
}

impl<'a> Bound<'a> {
    pub(crate) fn decode(bytes: &'a [u8], term: &BoundReference) -> Result<Bound<'a>> {
        match term.primitive_type()? {
            PrimitiveType::String => {
                // Java decodes string bounds and fails on invalid UTF-8; so do we
                std::str::from_utf8(bytes).map_err(|e| {
                    Error::invalid_argument(format!(
                        "bound of column '{}' is not valid UTF-8: {e}",
                        term.name
                    ))
                })?;
                Ok(Bound::Bytes(bytes))
            }
            PrimitiveType::Binary | PrimitiveType::Fixed(_) => Ok(Bound::Bytes(bytes)),
            ty => Literal::from_bytes(bytes, ty)
                .map(Bound::Value)
                .map_err(|e| {
                    Error::invalid_argument(format!(
                        "cannot read the bound of column '{}': {e}",
                        term.name
                    ))
                }),
        }
    }

    fn is_nan(&self) -> bool {
        match self {
            Bound::Value(v) => is_nan(v),
            Bound::Bytes(_) => false,
        }
    }

    /// The bound compared with a literal of the column's type, with Java's comparator.
    pub(crate) fn cmp(&self, lit: &Literal) -> Result<Ordering> {
        match (self, lit) {
            (Bound::Value(v), _) => java_compare(v, lit),
            (Bound::Bytes(b), Literal::String(s)) => Ok((*b).cmp(s.as_bytes())),
            (Bound::Bytes(b), Literal::Binary(l) | Literal::Fixed(l)) => Ok((*b).cmp(l.as_slice())),
            (Bound::Bytes(_), _) => Err(Error::invalid_argument(format!(
                "cannot compare a string or binary bound with {lit}"
            ))),
        }
    }

    /// Whether the bound is one of `literals` (a bound set), with Java's equality.
    pub(crate) fn is_in(&self, literals: &[Literal]) -> Result<bool> {
        match self {
            Bound::Value(v) => set_contains(literals, v),
            Bound::Bytes(_) => {
                for l in literals {
                    if self.cmp(l)?.is_eq() {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    pub(crate) fn same_as(&self, other: &Bound<'_>) -> Result<bool> {
        Ok(match (self, other) {
            (Bound::Value(a), Bound::Value(b)) => java_compare(a, b)?.is_eq(),
            (Bound::Bytes(a), Bound::Bytes(b)) => a == b,
            _ => false,
        })
    }
}

/// `bound` truncated to the length of `prefix` compared with `prefix`, bytewise. For
/// valid UTF-8 this decides exactly what Java's comparison of the decoded strings
/// truncated to the prefix's length in UTF-16 units decides (see the test `starts_with_bytes_agree_with_java_chars`).
pub(crate) fn truncated_cmp(bound: &[u8], prefix: &[u8]) -> Ordering {
    let n = prefix.len().min(bound.len());
    bound.get(..n).unwrap_or(bound).cmp(prefix)
}

fn string_prefix<'l>(lit: &'l Literal, term: &BoundReference) -> Result<&'l [u8]> {
    match lit {
        Literal::String(s) => Ok(s.as_bytes()),
        _ => Err(Error::invalid_argument(format!(
            "'starts with' on column '{}' needs a string, not {lit}",
            term.name
        ))),
    }
}

fn bytes_of<'b>(b: &Bound<'b>) -> &'b [u8] {
    match b {
        Bound::Bytes(bytes) => bytes,
        Bound::Value(_) => &[],
    }
}

// ---------------------------------------------------------------------------------------
// Inclusive: true = rows might match, false = rows cannot match.

fn inclusive(expr: &BoundExpression, s: &FileStats<'_>) -> Result<bool> {
    Ok(match expr {
        BoundExpression::True => true,
        BoundExpression::False => false,
        BoundExpression::And(l, r) => inclusive(l, s)? && inclusive(r, s)?,
        BoundExpression::Or(l, r) => inclusive(l, s)? || inclusive(r, s)?,
        BoundExpression::Predicate(p) => inclusive_predicate(p, s)?,
    })
}

fn inclusive_predicate(p: &BoundPredicate, s: &FileStats<'_>) -> Result<bool> {
    use Operation as O;
    const MIGHT: bool = true;
    const CANNOT: bool = false;
    let term = p.term();
    let id = term.field_id;
    match p {
        BoundPredicate::Unary { op, .. } => Ok(match op {
            O::IsNull => s.may_contain_null(id),
            O::NotNull => !s.nulls_only(id),
            // a column of nulls only has no NaN, even without NaN counts
            O::IsNan => !(s.nulls_only(id) || count(s.nan_counts, id) == Some(0)),
            O::NotNan => !s.nans_only(id),
            _ => MIGHT,
        }),
        BoundPredicate::Literal { op, literal, .. } => match op {
            // bounds need not be values of the column, except when they are equal and the
            // column has no nulls or NaNs: then every value is that one (Java 1.11)
            O::NotEq => match s.unique_value(term)? {
                Some(v) if v.cmp(literal)?.is_eq() => Ok(CANNOT),
                _ => Ok(MIGHT),
            },
            O::StartsWith => {
                if s.nulls_only(id) {
                    return Ok(CANNOT);
                }
                let prefix = string_prefix(literal, term)?;
                let Some(lower) = s.lower(term)? else {
                    return Ok(MIGHT);
                };
                if truncated_cmp(bytes_of(&lower), prefix).is_gt() {
                    return Ok(CANNOT);
                }
                let Some(upper) = s.upper(term)? else {
                    return Ok(MIGHT);
                };
                Ok(!truncated_cmp(bytes_of(&upper), prefix).is_lt())
            }
            O::NotStartsWith => {
                if s.may_contain_null(id) {
                    return Ok(MIGHT);
                }
                let prefix = string_prefix(literal, term)?;
                let (Some(lower), Some(upper)) = (s.lower(term)?, s.upper(term)?) else {
                    return Ok(MIGHT);
                };
                // no row matches only when both bounds start with the prefix
                Ok(!(bytes_of(&lower).starts_with(prefix) && bytes_of(&upper).starts_with(prefix)))
            }
            O::Lt | O::LtEq => {
                if s.nulls_only(id) || s.nans_only(id) {
                    return Ok(CANNOT);
                }
                match s.lower(term)? {
                    // a NaN lower bound is unreliable (ORC): it decides nothing
                    Some(lower) if !lower.is_nan() => {
                        let cmp = lower.cmp(literal)?;
                        Ok(if *op == O::Lt {
                            cmp.is_lt()
                        } else {
                            cmp.is_le()
                        })
                    }
                    _ => Ok(MIGHT),
                }
            }
            O::Gt | O::GtEq => {
                if s.nulls_only(id) {
                    return Ok(CANNOT);
                }
                // NaN is above every number (Spark's order, and the residual's), so a NaN
                // row matches `>` and `>=`; bounds leave NaN out, so they decide only for
                // a file known to hold none (Java prunes here and loses the NaN rows)
                if s.may_contain_nan(term) {
                    return Ok(MIGHT);
                }
                // a NaN upper bound is above every value (Java's order): it decides nothing
                match s.upper(term)? {
                    Some(upper) => {
                        let cmp = upper.cmp(literal)?;
                        Ok(if *op == O::Gt {
                            cmp.is_gt()
                        } else {
                            cmp.is_ge()
                        })
                    }
                    None => Ok(MIGHT),
                }
            }
            O::Eq => {
                if s.nulls_only(id) || s.nans_only(id) {
                    return Ok(CANNOT);
                }
                if let Some(lower) = s.lower(term)? {
                    if !lower.is_nan() && lower.cmp(literal)?.is_gt() {
                        return Ok(CANNOT);
                    }
                }
                match s.upper(term)? {
                    Some(upper) => Ok(!upper.cmp(literal)?.is_lt()),
                    None => Ok(MIGHT),
                }
            }
            other => Err(unexpected(*other)),
        },
        BoundPredicate::Set { op, literals, .. } => match op {
            O::NotIn => match s.unique_value(term)? {
                Some(v) if v.is_in(literals)? => Ok(CANNOT),
                _ => Ok(MIGHT),
            },
            O::In => {
                if s.nulls_only(id) || s.nans_only(id) {
                    return Ok(CANNOT);
                }
                if literals.len() > IN_PREDICATE_LIMIT {
                    return Ok(MIGHT);
                }
                let lower = match s.lower(term)? {
                    Some(lower) if !lower.is_nan() => lower,
                    _ => return Ok(MIGHT),
                };
                let mut any_above_lower = false;
                for v in literals {
                    if lower.cmp(v)?.is_le() {
                        any_above_lower = true;
                        break;
                    }
                }
                if !any_above_lower {
                    return Ok(CANNOT);
                }
                let Some(upper) = s.upper(term)? else {
                    return Ok(MIGHT);
                };
                for v in literals {
                    if lower.cmp(v)?.is_le() && upper.cmp(v)?.is_ge() {
                        return Ok(MIGHT);
                    }
                }
                Ok(CANNOT)
            }
            other => Err(unexpected(*other)),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Strict: true = all rows must match, false = some rows might not match.

fn strict(expr: &BoundExpression, s: &FileStats<'_>) -> Result<bool> {
    Ok(match expr {
        BoundExpression::True => true,
        BoundExpression::False => false,
        BoundExpression::And(l, r) => strict(l, s)? && strict(r, s)?,
        BoundExpression::Or(l, r) => strict(l, s)? || strict(r, s)?,
        BoundExpression::Predicate(p) => strict_predicate(p, s)?,
    })
}

fn strict_predicate(p: &BoundPredicate, s: &FileStats<'_>) -> Result<bool> {
    use Operation as O;
    const MUST: bool = true;
    const MIGHT_NOT: bool = false;
    let term = p.term();
    let id = term.field_id;
    // Java looks the column up among the schema's top-level fields only: metrics of nested
    // columns are never used to claim a match (except by `is nan` / `is not nan`)
    let nested = term.position.len() > 1;
    match p {
        BoundPredicate::Unary { op, .. } => Ok(match op {
            O::IsNull => !nested && s.nulls_only(id),
            O::NotNull => !nested && count(s.null_counts, id) == Some(0),
            O::IsNan => s.nans_only(id),
            O::NotNan => count(s.nan_counts, id) == Some(0) || s.nulls_only(id),
            _ => MIGHT_NOT,
        }),
        BoundPredicate::Literal { op, literal, .. } => {
            if nested {
                return Ok(MIGHT_NOT);
            }
            match op {
                O::StartsWith => {
                    if s.can_contain_nulls(id) {
                        return Ok(MIGHT_NOT);
                    }
                    if raw_bound(s.lower, id).is_none() || raw_bound(s.upper, id).is_none() {
                        return Ok(MIGHT_NOT);
                    }
                    let prefix = string_prefix(literal, term)?;
                    let (Some(lower), Some(upper)) = (s.lower(term)?, s.upper(term)?) else {
                        return Ok(MIGHT_NOT);
                    };
                    // every value starts with the prefix when both bounds do
                    Ok(
                        bytes_of(&lower).starts_with(prefix)
                            && bytes_of(&upper).starts_with(prefix),
                    )
                }
                O::NotStartsWith => {
                    if s.nulls_only(id) {
                        return Ok(MUST);
                    }
                    let prefix = string_prefix(literal, term)?;
                    // no value starts with the prefix when the bounds, cut to its length, are
                    // both above it or both below it
                    if let Some(lower) = s.lower(term)? {
                        if truncated_cmp(bytes_of(&lower), prefix).is_gt() {
                            return Ok(MUST);
                        }
                    }
                    if let Some(upper) = s.upper(term)? {
                        if truncated_cmp(bytes_of(&upper), prefix).is_lt() {
                            return Ok(MUST);
                        }
                    }
                    Ok(MIGHT_NOT)
                }
                O::Lt | O::LtEq => {
                    if s.can_contain_nulls(id) || s.can_contain_nans(term) {
                        return Ok(MIGHT_NOT);
                    }
                    let Some(upper) = s.upper(term)? else {
                        return Ok(MIGHT_NOT);
                    };
                    let cmp = upper.cmp(literal)?;
                    Ok(if *op == O::Lt {
                        cmp.is_lt()
                    } else {
                        cmp.is_le()
                    })
                }
                O::Gt | O::GtEq => {
                    // NaN rows match `>` and `>=` (NaN is above every number), so only
                    // nulls keep a file whose lower bound is above the value from matching
                    if s.can_contain_nulls(id) {
                        return Ok(MIGHT_NOT);
                    }
                    let Some(lower) = s.lower(term)? else {
                        return Ok(MIGHT_NOT);
                    };
                    if lower.is_nan() {
                        return Ok(MIGHT_NOT);
                    }
                    let cmp = lower.cmp(literal)?;
                    Ok(if *op == O::Gt {
                        cmp.is_gt()
                    } else {
                        cmp.is_ge()
                    })
                }
                O::Eq => {
                    if s.can_contain_nulls(id) || s.can_contain_nans(term) {
                        return Ok(MIGHT_NOT);
                    }
                    if raw_bound(s.lower, id).is_none() || raw_bound(s.upper, id).is_none() {
                        return Ok(MIGHT_NOT);
                    }
                    // all rows equal the value only when lower = value = upper
                    if let Some(lower) = s.lower(term)? {
                        if !lower.cmp(literal)?.is_eq() {
                            return Ok(MIGHT_NOT);
                        }
                    }
                    match s.upper(term)? {
                        Some(upper) => Ok(upper.cmp(literal)?.is_eq()),
                        None => Ok(MIGHT_NOT),
                    }
                }
                O::NotEq => {
                    if s.nulls_only(id) || s.nans_only(id) {
                        return Ok(MUST);
                    }
                    if let Some(lower) = s.lower(term)? {
                        if lower.is_nan() {
                            return Ok(MIGHT_NOT);
                        }
                        if lower.cmp(literal)?.is_gt() {
                            return Ok(MUST);
                        }
                    }
                    if let Some(upper) = s.upper(term)? {
                        if upper.cmp(literal)?.is_lt() {
                            return Ok(MUST);
                        }
                    }
                    Ok(MIGHT_NOT)
                }
                other => Err(unexpected(*other)),
            }
        }
        BoundPredicate::Set { op, literals, .. } => {
            if nested {
                return Ok(MIGHT_NOT);
            }
            match op {
                O::In => {
                    if s.can_contain_nulls(id) || s.can_contain_nans(term) {
                        return Ok(MIGHT_NOT);
                    }
                    if raw_bound(s.lower, id).is_none() || raw_bound(s.upper, id).is_none() {
                        return Ok(MIGHT_NOT);
                    }
                    let (Some(lower), Some(upper)) = (s.lower(term)?, s.upper(term)?) else {
                        return Ok(MIGHT_NOT);
                    };
                    // every value is in the set only when lower = upper and it is in the set
                    Ok(
                        lower.is_in(literals)?
                            && upper.is_in(literals)?
                            && lower.same_as(&upper)?,
                    )
                }
                O::NotIn => {
                    if s.nulls_only(id) || s.nans_only(id) {
                        return Ok(MUST);
                    }
                    let lower = s.lower(term)?;
                    if let Some(lower) = &lower {
                        if lower.is_nan() {
                            return Ok(MIGHT_NOT);
                        }
                        let mut any = false;
                        for v in literals {
                            if lower.cmp(v)?.is_le() {
                                any = true;
                                break;
                            }
                        }
                        if !any {
                            return Ok(MUST);
                        }
                    }
                    if let Some(upper) = s.upper(term)? {
                        for v in literals {
                            let above_lower = match &lower {
                                Some(lower) => lower.cmp(v)?.is_le(),
                                None => true,
                            };
                            if above_lower && upper.cmp(v)?.is_ge() {
                                return Ok(MIGHT_NOT);
                            }
                        }
                        return Ok(MUST);
                    }
                    Ok(MIGHT_NOT)
                }
                other => Err(unexpected(*other)),
            }
        }
    }
}

fn unexpected(op: Operation) -> Error {
    Error::invalid_argument(format!(
        "unexpected operation '{}' in a bound predicate",
        op.symbol()
    ))
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
