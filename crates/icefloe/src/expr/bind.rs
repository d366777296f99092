//! Binding: resolving names to fields and converting values, with the Java reference's
//! rules (`UnboundPredicate.bind`):
//! - `is null` on a required column (in required structs) is always false, `is not null`
//!   always true;
//! - `is null` and `is not null` take a struct, list or map column too; every other
//!   predicate takes a primitive column only;
//! - `is nan`/`is not nan` only on float and double columns;
//! - `starts with` only on string columns;
//! - a value above or below the range of the column makes the predicate always true or
//!   always false (`id < 2^40` on an int column is always true);
//! - `in` drops values out of range, and binds as `=` (`!=`) when one value is left and
//!   as false (true) when none is;
//! - NaN is not a value for comparisons (use `is nan`).

use super::datum::Converted;
use super::{
    BoundExpression, BoundPredicate, BoundReference, Datum, Expression, Operation, Predicate,
};
use crate::error::{Error, Result};
use crate::spec::types::StructType;
use crate::spec::{Literal, PrimitiveType, Schema, Type};

impl Expression {
    /// Binds this expression to `schema`: names are resolved (exactly, or ignoring case),
    /// values converted to the columns' types, and `NOT` pushed into the predicates.
    pub fn bind(&self, schema: &Schema, case_sensitive: bool) -> Result<BoundExpression> {
        bind_rewritten(&self.clone().rewrite_not(), schema, case_sensitive)
    }

    /// Binds this expression to a struct type, such as a partition type.
    pub fn bind_struct(
        &self,
        struct_type: &StructType,
        case_sensitive: bool,
    ) -> Result<BoundExpression> {
        let schema = Schema::new(0, struct_type.fields.clone(), Vec::new())?;
        self.bind(&schema, case_sensitive)
    }
}

fn bind_rewritten(
    e: &Expression,
    schema: &Schema,
    case_sensitive: bool,
) -> Result<BoundExpression> {
    Ok(match e {
        Expression::True => BoundExpression::True,
        Expression::False => BoundExpression::False,
        Expression::And(l, r) => BoundExpression::and(
            bind_rewritten(l, schema, case_sensitive)?,
            bind_rewritten(r, schema, case_sensitive)?,
        ),
        Expression::Or(l, r) => BoundExpression::or(
            bind_rewritten(l, schema, case_sensitive)?,
            bind_rewritten(r, schema, case_sensitive)?,
        ),
        // rewrite_not leaves no Not; bind its child negated all the same
        Expression::Not(c) => bind_rewritten(c, schema, case_sensitive)?.negate(),
        Expression::Predicate(p) => p.bind(schema, case_sensitive)?,
    })
}

impl Predicate {
    /// Binds this predicate to `schema` (see the module documentation for the rules).
    pub fn bind(&self, schema: &Schema, case_sensitive: bool) -> Result<BoundExpression> {
        let term = self.bind_term(schema, case_sensitive)?;
        let op = self.op;
        let fail = |msg: String| {
            Err(Error::invalid_argument(format!(
                "cannot bind '{self}': {msg}"
            )))
        };
        if op.is_unary() {
            if !self.values.is_empty() {
                return fail(format!("'{}' takes no value", op.symbol()));
            }
            return Ok(match op {
                Operation::IsNull if term.required => BoundExpression::False,
                Operation::NotNull if term.required => BoundExpression::True,
                Operation::IsNan | Operation::NotNan if !term.is_floating_point() => {
                    return fail(format!(
                        "'{}' needs a float or double column, not {}",
                        op.symbol(),
                        term.field_type
                    ))
                }
                _ => BoundExpression::Predicate(BoundPredicate::Unary { op, term }),
            });
        }
        // only null checks take a struct, list or map (as Java's Binder)
        let Some(ty) = term.field_type.as_primitive().cloned() else {
            return fail(format!(
                "its type {} is not a primitive type, which only 'is null' and 'is not null' take",
                term.field_type
            ));
        };
        if let Some(v) = self.values.iter().find(|v| v.is_nan()) {
            return fail(format!(
                "{v} is not a value to compare with; use 'is nan' or 'is not nan'"
            ));
        }
        if matches!(op, Operation::StartsWith | Operation::NotStartsWith)
            && ty != PrimitiveType::String
        {
            return fail(format!("'{}' needs a string column, not {ty}", op.symbol()));
        }
        if op.is_set() {
            return self.bind_set(term, ty);
        }
        let [value] = self.values.as_slice() else {
            return fail(format!("'{}' takes exactly one value", op.symbol()));
        };
        let converted = value.to_type(&ty).map_err(|e| {
            Error::invalid_argument(format!("cannot bind '{self}' to column of type {ty}: {e}"))
        })?;
        Ok(literal_predicate(op, term, converted))
    }

    fn bind_term(&self, schema: &Schema, case_sensitive: bool) -> Result<BoundReference> {
        let id = schema
            .id_by_name(&self.term, case_sensitive)
            .ok_or_else(|| {
                Error::not_found(format!(
                    "cannot find column '{}' in the schema{}",
                    self.term,
                    if case_sensitive {
                        ""
                    } else {
                        " (ignoring case)"
                    }
                ))
            })?;
        let field = schema
            .field_by_id(id)
            .ok_or_else(|| Error::not_found(format!("cannot find field id {id}")))?;
        let position = schema.struct_path(id).ok_or_else(|| {
            Error::invalid_argument(format!(
                "cannot filter on '{}': it is inside a list or map",
                self.term
            ))
        })?;
        // a struct, list or map binds for null checks only (`bind` refuses it for any
        // other predicate), as in Java's Binder
        let field_type = field.field_type.clone();
        Ok(BoundReference {
            field_id: id,
            name: self.term.clone(),
            field_type,
            required: never_null(schema, position),
            position: position.to_vec(),
        })
    }

    fn bind_set(&self, term: BoundReference, ty: PrimitiveType) -> Result<BoundExpression> {
        let mut literals: Vec<Literal> = Vec::with_capacity(self.values.len());
        for v in &self.values {
            match v.to_type(&ty).map_err(|e| {
                Error::invalid_argument(format!("cannot bind '{self}' to column of type {ty}: {e}"))
            })? {
                Converted::Value(l) => literals.push(l),
                // values out of range or between two values of the type match no row
                Converted::AboveMax | Converted::BelowMin | Converted::Between { .. } => {}
            }
        }
        literals.sort_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal));
        // by the total order, so that 0.0 and -0.0 stay two values (as in Java's sets)
        literals.dedup_by(|a, b| a.compare(b) == Some(std::cmp::Ordering::Equal));
        let op = self.op;
        Ok(match (literals.len(), op) {
            (0, Operation::In) => BoundExpression::False,
            (0, _) => BoundExpression::True,
            (1, _) => {
                let single = if op == Operation::In {
                    Operation::Eq
                } else {
                    Operation::NotEq
                };
                let literal = literals.remove(0);
                BoundExpression::Predicate(BoundPredicate::Literal {
                    op: single,
                    term,
                    literal,
                })
            }
            _ => BoundExpression::Predicate(BoundPredicate::Set { op, term, literals }),
        })
    }
}

/// Whether the field at `position` is never null: it and every struct around it are
/// required (a required field of an optional struct is null where the struct is, as
/// Java's `BoundReference.producesNull`).
fn never_null(schema: &Schema, position: &[u32]) -> bool {
    let mut fields = schema.fields();
    for &pos in position {
        let Some(field) = fields.get(pos as usize) else {
            return false;
        };
        if !field.required {
            return false;
        }
        if let Type::Struct(s) = &field.field_type {
            fields = &s.fields;
        }
    }
    true
}

/// A comparison with a converted value: out-of-range values decide the predicate, decimals
/// between two values of the column's scale compare with the nearer one on the right side.
fn literal_predicate(op: Operation, term: BoundReference, converted: Converted) -> BoundExpression {
    use Operation as O;
    let pred =
        |op, literal| BoundExpression::Predicate(BoundPredicate::Literal { op, term, literal });
    match converted {
        Converted::Value(literal) => pred(op, literal),
        Converted::AboveMax => match op {
            O::Lt | O::LtEq | O::NotEq => BoundExpression::True,
            _ => BoundExpression::False,
        },
        Converted::BelowMin => match op {
            O::Gt | O::GtEq | O::NotEq => BoundExpression::True,
            _ => BoundExpression::False,
        },
        // floor < v < ceil: x < v ⇔ x < ceil, x <= v ⇔ x <= floor, x > v ⇔ x > floor,
        // x >= v ⇔ x >= ceil; no value equals v
        Converted::Between { floor, ceil } => match op {
            O::Lt | O::GtEq => pred(op, ceil),
            O::LtEq | O::Gt => pred(op, floor),
            O::Eq => BoundExpression::False,
            _ => BoundExpression::True,
        },
    }
}

impl Datum {
    /// Converts for a predicate, for callers outside binding (kept with the conversion).
    pub fn to_literal(&self, ty: &PrimitiveType) -> Result<Literal> {
        match self.to_type(ty)? {
            Converted::Value(l) => Ok(l),
            _ => Err(Error::invalid_argument(format!(
                "{self} is out of the range of type {ty}"
            ))),
        }
    }
}
