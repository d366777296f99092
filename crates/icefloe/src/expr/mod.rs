//! Expressions over table rows: the row filters of scans and deletes.
//!
//! An [`Expression`] is *unbound*: it names columns and carries [`Datum`]s typed by how
//! the user wrote them. Binding it to a schema ([`Expression::bind`]) resolves each name to
//! a field id and converts each value to the field's type with the Java reference's rules
//! (`Literals.to`), giving a [`BoundExpression`]. Values out of the range of the field's type
//! turn the predicate into always-true or always-false, as in Java.
//!
//! Bound expressions are what the evaluators work on (partition tuples, manifest
//! summaries, file metrics, residuals) and what projections turn into partition filters.

mod bind;
mod datum;
mod eval;
mod json;
mod manifest_eval;
mod metrics;
mod parser;
mod project;
mod residual;

#[cfg(test)]
mod tests;

use std::fmt;

pub use datum::{Converted, Datum};
pub use eval::{evaluate_tuple, java_compare};
pub use manifest_eval::{may_have_changed_files, may_have_live_files, ManifestEvaluator};
pub use metrics::{InclusiveMetricsEvaluator, StrictMetricsEvaluator, IN_PREDICATE_LIMIT};
pub use project::{
    inclusive_projection, project, project_field, project_predicate, strict_projection,
    ProjectionKind,
};
pub use residual::ResidualEvaluator;

use crate::error::{Error, Result};
use crate::spec::{Literal, PrimitiveType, Type};

/// The operation of a predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    IsNull,
    NotNull,
    IsNan,
    NotNan,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    NotEq,
    StartsWith,
    NotStartsWith,
    In,
    NotIn,
}

impl Operation {
    /// The operation that matches exactly the rows this one does not (`NOT op`).
    pub fn negate(self) -> Operation {
        use Operation as O;
        match self {
            O::IsNull => O::NotNull,
            O::NotNull => O::IsNull,
            O::IsNan => O::NotNan,
            O::NotNan => O::IsNan,
            O::Lt => O::GtEq,
            O::LtEq => O::Gt,
            O::Gt => O::LtEq,
            O::GtEq => O::Lt,
            O::Eq => O::NotEq,
            O::NotEq => O::Eq,
            O::StartsWith => O::NotStartsWith,
            O::NotStartsWith => O::StartsWith,
            O::In => O::NotIn,
            O::NotIn => O::In,
        }
    }

    /// The operation with its operands swapped (`a < b` is `b > a`).
    pub fn flip(self) -> Operation {
        use Operation as O;
        match self {
            O::Lt => O::Gt,
            O::LtEq => O::GtEq,
            O::Gt => O::Lt,
            O::GtEq => O::LtEq,
            other => other,
        }
    }

    pub fn is_unary(self) -> bool {
        matches!(
            self,
            Operation::IsNull | Operation::NotNull | Operation::IsNan | Operation::NotNan
        )
    }

    pub fn is_set(self) -> bool {
        matches!(self, Operation::In | Operation::NotIn)
    }

    /// The operator as written in the filter language (`<`, `in`, `is null`, ...).
    pub fn symbol(self) -> &'static str {
        use Operation as O;
        match self {
            O::IsNull => "is null",
            O::NotNull => "is not null",
            O::IsNan => "is nan",
            O::NotNan => "is not nan",
            O::Lt => "<",
            O::LtEq => "<=",
            O::Gt => ">",
            O::GtEq => ">=",
            O::Eq => "=",
            O::NotEq => "!=",
            O::StartsWith => "starts with",
            O::NotStartsWith => "not starts with",
            O::In => "in",
            O::NotIn => "not in",
        }
    }
}

/// An unbound predicate: a column name, an operation and its values (none for the unary
/// operations, one for comparisons and `starts with`, any number for `in`/`not in`).
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    pub op: Operation,
    /// The column's full dotted name (`location.lat`).
    pub term: String,
    pub values: Vec<Datum>,
}

/// An unbound boolean expression over the rows of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    True,
    False,
    And(Box<Expression>, Box<Expression>),
    Or(Box<Expression>, Box<Expression>),
    Not(Box<Expression>),
    Predicate(Predicate),
}

impl Expression {
    /// `left AND right`, simplified when either side is a constant (as Java's
    /// `Expressions.and`).
    pub fn and(left: Expression, right: Expression) -> Expression {
        match (left, right) {
            (Expression::False, _) | (_, Expression::False) => Expression::False,
            (Expression::True, e) | (e, Expression::True) => e,
            (l, r) => Expression::And(Box::new(l), Box::new(r)),
        }
    }

    /// `left OR right`, simplified when either side is a constant.
    pub fn or(left: Expression, right: Expression) -> Expression {
        match (left, right) {
            (Expression::True, _) | (_, Expression::True) => Expression::True,
            (Expression::False, e) | (e, Expression::False) => e,
            (l, r) => Expression::Or(Box::new(l), Box::new(r)),
        }
    }

    /// `NOT child`, simplified for constants and double negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(child: Expression) -> Expression {
        match child {
            Expression::True => Expression::False,
            Expression::False => Expression::True,
            Expression::Not(inner) => *inner,
            e => Expression::Not(Box::new(e)),
        }
    }

    /// The conjunction of all `parts` (`TRUE` when empty).
    pub fn all(parts: impl IntoIterator<Item = Expression>) -> Expression {
        parts.into_iter().fold(Expression::True, Expression::and)
    }

    pub fn predicate(op: Operation, term: impl Into<String>, values: Vec<Datum>) -> Expression {
        Expression::Predicate(Predicate {
            op,
            term: term.into(),
            values,
        })
    }

    pub fn unary(op: Operation, term: impl Into<String>) -> Expression {
        Expression::predicate(op, term, Vec::new())
    }

    pub fn compare(op: Operation, term: impl Into<String>, value: impl Into<Datum>) -> Expression {
        Expression::predicate(op, term, vec![value.into()])
    }

    pub fn is_in(term: impl Into<String>, values: Vec<Datum>) -> Expression {
        Expression::predicate(Operation::In, term, values)
    }

    pub fn not_in(term: impl Into<String>, values: Vec<Datum>) -> Expression {
        Expression::predicate(Operation::NotIn, term, values)
    }

    /// The same expression with every `NOT` pushed down into the predicates (Java's
    /// `Expressions.rewriteNot`): evaluators and projections only see AND, OR and
    /// predicates.
    pub fn rewrite_not(self) -> Expression {
        self.push_not(false)
    }

    fn push_not(self, negate: bool) -> Expression {
        match (self, negate) {
            (Expression::True, false) | (Expression::False, true) => Expression::True,
            (Expression::True, true) | (Expression::False, false) => Expression::False,
            (Expression::Not(child), n) => child.push_not(!n),
            (Expression::And(l, r), false) => Expression::and(l.push_not(false), r.push_not(false)),
            (Expression::And(l, r), true) => Expression::or(l.push_not(true), r.push_not(true)),
            (Expression::Or(l, r), false) => Expression::or(l.push_not(false), r.push_not(false)),
            (Expression::Or(l, r), true) => Expression::and(l.push_not(true), r.push_not(true)),
            (Expression::Predicate(p), false) => Expression::Predicate(p),
            (Expression::Predicate(p), true) => Expression::Predicate(Predicate {
                op: p.op.negate(),
                ..p
            }),
        }
    }

    /// The column names this expression refers to, in order of first use.
    pub fn references(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_references(&mut out);
        out
    }

    fn collect_references<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expression::True | Expression::False => {}
            Expression::And(l, r) | Expression::Or(l, r) => {
                l.collect_references(out);
                r.collect_references(out);
            }
            Expression::Not(c) => c.collect_references(out),
            Expression::Predicate(p) => {
                if !out.contains(&p.term.as_str()) {
                    out.push(&p.term);
                }
            }
        }
    }
}

/// A column resolved against a schema (or a partition type).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundReference {
    pub field_id: i32,
    /// The name the expression used, kept for messages and projections.
    pub name: String,
    /// A primitive type, except for the term of a null check on a struct, list or map
    /// column (Java's `Binder` binds `st is null`; no other predicate takes one).
    pub field_type: Type,
    pub required: bool,
    /// Positions of the field in each struct from the row's root down (how to reach the
    /// value in a row or partition tuple).
    pub position: Vec<u32>,
}

impl BoundReference {
    /// The column's primitive type: that of every term but a nested column's null check.
    pub fn primitive_type(&self) -> Result<&PrimitiveType> {
        self.field_type.as_primitive().ok_or_else(|| {
            Error::invalid_argument(format!(
                "'{}' is a {}, which only 'is null' and 'is not null' take",
                self.name, self.field_type
            ))
        })
    }

    /// Whether the column is a float or a double (NaN is one of its values).
    pub fn is_floating_point(&self) -> bool {
        matches!(
            self.field_type,
            Type::Primitive(PrimitiveType::Float | PrimitiveType::Double)
        )
    }
}

/// A predicate whose column is resolved and whose values are of the column's type.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundPredicate {
    /// `is null`, `is not null`, `is nan`, `is not nan`.
    Unary { op: Operation, term: BoundReference },
    /// Comparisons and `starts with` / `not starts with`.
    Literal {
        op: Operation,
        term: BoundReference,
        literal: Literal,
    },
    /// `in` / `not in` with at least two distinct values (one value binds as `=`/`!=`),
    /// sorted and without duplicates.
    Set {
        op: Operation,
        term: BoundReference,
        literals: Vec<Literal>,
    },
}

impl BoundPredicate {
    pub fn op(&self) -> Operation {
        match self {
            BoundPredicate::Unary { op, .. }
            | BoundPredicate::Literal { op, .. }
            | BoundPredicate::Set { op, .. } => *op,
        }
    }

    pub fn term(&self) -> &BoundReference {
        match self {
            BoundPredicate::Unary { term, .. }
            | BoundPredicate::Literal { term, .. }
            | BoundPredicate::Set { term, .. } => term,
        }
    }

    /// The predicate that matches exactly the rows this one does not.
    pub fn negate(&self) -> BoundPredicate {
        let mut p = self.clone();
        match &mut p {
            BoundPredicate::Unary { op, .. }
            | BoundPredicate::Literal { op, .. }
            | BoundPredicate::Set { op, .. } => *op = op.negate(),
        }
        p
    }

    /// The predicate as an unbound one on the same column name (for re-binding, e.g. a
    /// residual shipped to an executor).
    pub fn unbind(&self) -> Predicate {
        let term = self.term().name.clone();
        // literals only come with primitive columns; Unknown is never used for them
        let ty = self
            .term()
            .field_type
            .as_primitive()
            .unwrap_or(&PrimitiveType::Unknown);
        let values = match self {
            BoundPredicate::Unary { .. } => Vec::new(),
            BoundPredicate::Literal { literal, .. } => vec![Datum::from_literal(literal, ty)],
            BoundPredicate::Set { literals, .. } => literals
                .iter()
                .map(|l| Datum::from_literal(l, ty))
                .collect(),
        };
        Predicate {
            op: self.op(),
            term,
            values,
        }
    }
}

/// A bound expression. Binding pushes `NOT` down into the predicates, so bound
/// expressions contain no `Not`.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundExpression {
    True,
    False,
    And(Box<BoundExpression>, Box<BoundExpression>),
    Or(Box<BoundExpression>, Box<BoundExpression>),
    Predicate(BoundPredicate),
}

impl BoundExpression {
    /// `left AND right`, simplified when either side is a constant.
    pub fn and(left: BoundExpression, right: BoundExpression) -> BoundExpression {
        match (left, right) {
            (BoundExpression::False, _) | (_, BoundExpression::False) => BoundExpression::False,
            (BoundExpression::True, e) | (e, BoundExpression::True) => e,
            (l, r) => BoundExpression::And(Box::new(l), Box::new(r)),
        }
    }

    /// `left OR right`, simplified when either side is a constant.
    pub fn or(left: BoundExpression, right: BoundExpression) -> BoundExpression {
        match (left, right) {
            (BoundExpression::True, _) | (_, BoundExpression::True) => BoundExpression::True,
            (BoundExpression::False, e) | (e, BoundExpression::False) => e,
            (l, r) => BoundExpression::Or(Box::new(l), Box::new(r)),
        }
    }

    /// The expression that matches exactly the rows this one does not (NOT pushed into
    /// the predicates).
    pub fn negate(&self) -> BoundExpression {
        match self {
            BoundExpression::True => BoundExpression::False,
            BoundExpression::False => BoundExpression::True,
            BoundExpression::And(l, r) => BoundExpression::or(l.negate(), r.negate()),
            BoundExpression::Or(l, r) => BoundExpression::and(l.negate(), r.negate()),
            BoundExpression::Predicate(p) => BoundExpression::Predicate(p.negate()),
        }
    }

    /// The expression unbound again, on the names it was bound with.
    pub fn unbind(&self) -> Expression {
        match self {
            BoundExpression::True => Expression::True,
            BoundExpression::False => Expression::False,
            BoundExpression::And(l, r) => Expression::and(l.unbind(), r.unbind()),
            BoundExpression::Or(l, r) => Expression::or(l.unbind(), r.unbind()),
            BoundExpression::Predicate(p) => Expression::Predicate(p.unbind()),
        }
    }

    /// The field ids this expression refers to, sorted and without duplicates.
    pub fn field_ids(&self) -> Vec<i32> {
        let mut out = Vec::new();
        self.collect_ids(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_ids(&self, out: &mut Vec<i32>) {
        match self {
            BoundExpression::True | BoundExpression::False => {}
            BoundExpression::And(l, r) | BoundExpression::Or(l, r) => {
                l.collect_ids(out);
                r.collect_ids(out);
            }
            BoundExpression::Predicate(p) => out.push(p.term().field_id),
        }
    }
}

fn fmt_values(f: &mut fmt::Formatter<'_>, values: &[String]) -> fmt::Result {
    write!(f, "({})", values.join(", "))
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", quote_name(&self.term), self.op.symbol())?;
        let values: Vec<String> = self.values.iter().map(|d| d.to_string()).collect();
        if self.op.is_set() {
            write!(f, " ")?;
            fmt_values(f, &values)
        } else if let Some(v) = values.first() {
            write!(f, " {v}")
        } else {
            Ok(())
        }
    }
}

/// Column names are written bare when they are plain identifiers (with dots for nesting),
/// and in double quotes otherwise, so that the filter parser reads them back.
fn quote_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::True => write!(f, "true"),
            Expression::False => write!(f, "false"),
            Expression::And(l, r) => write!(f, "({l} and {r})"),
            Expression::Or(l, r) => write!(f, "({l} or {r})"),
            Expression::Not(c) => write!(f, "not ({c})"),
            Expression::Predicate(p) => write!(f, "{p}"),
        }
    }
}

impl fmt::Display for BoundExpression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.unbind())
    }
}
