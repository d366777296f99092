//! Evaluating a partition filter on a manifest's partition summaries (the
//! `field_summary` list of a manifest list entry): the Java reference's
//! `ManifestEvaluator`.
//!
//! The filter is already projected (inclusively) and bound to the partition type of the
//! manifest's spec, so a term's `position[0]` is the index of its partition field, which
//! is also the index of its summary. `eval` returning `false` means no data file of the
//! manifest can hold a matching row, so the manifest need not be read.
//!
//! A summary's bounds exclude nulls and NaNs; a missing lower bound means every value is
//! null (or NaN). `contains_nan` is optional (written since format v2 by Java); when it is
//! unknown a float field of nulls only may still hold NaNs.
//!
//! # File counts
//!
//! Java also skips manifests by their entry counts, but not here: `ManifestGroup` (scan
//! planning) drops, *after* this evaluator, a manifest with neither added nor existing
//! files when the scan ignores deleted entries (every data scan), and a manifest with
//! neither added nor deleted files when it ignores existing entries (incremental append
//! scans). A missing count counts as "may have some". Those rules belong to scan planning,
//! which knows which entries it reads; [`may_have_live_files`] and
//! [`may_have_changed_files`] are the two tests.

use super::eval::flat_position;
use super::metrics::{truncated_cmp, Bound, IN_PREDICATE_LIMIT};
use super::{BoundExpression, BoundPredicate, BoundReference, Operation};
use crate::error::{Error, Result};
use crate::manifest::{FieldSummary, ManifestFile};
use crate::spec::Literal;

/// Decides whether a manifest may contain data files that match a partition filter.
#[derive(Debug, Clone)]
pub struct ManifestEvaluator {
    expr: BoundExpression,
}

impl ManifestEvaluator {
    /// `partition_filter` is bound to the partition type of the manifest's spec (project a
    /// row filter inclusively first).
    pub fn new(partition_filter: BoundExpression) -> Self {
        ManifestEvaluator {
            expr: partition_filter,
        }
    }

    /// Whether `manifest` may contain matching files. A manifest without partition
    /// summaries always may.
    pub fn eval(&self, manifest: &ManifestFile) -> Result<bool> {
        match manifest.partitions.as_deref() {
            None => Ok(true),
            Some(summaries) => eval(&self.expr, summaries),
        }
    }
}

/// Whether a data scan (which ignores deleted entries) must read the manifest: it may hold
/// ADDED or EXISTING entries (Java's `ManifestGroup.ignoreDeleted`). Unknown counts count
/// as yes.
pub fn may_have_live_files(manifest: &ManifestFile) -> bool {
    manifest.has_added_files() || manifest.has_existing_files()
}

/// Whether a scan that ignores existing entries (incremental scans) must read the
/// manifest: it may hold ADDED or DELETED entries (Java's `ManifestGroup.ignoreExisting`).
pub fn may_have_changed_files(manifest: &ManifestFile) -> bool {
    manifest.has_added_files() || manifest.has_deleted_files()
}

fn eval(expr: &BoundExpression, summaries: &[FieldSummary]) -> Result<bool> {
    Ok(match expr {
        BoundExpression::True => true,
        BoundExpression::False => false,
        BoundExpression::And(l, r) => eval(l, summaries)? && eval(r, summaries)?,
        BoundExpression::Or(l, r) => eval(l, summaries)? || eval(r, summaries)?,
        BoundExpression::Predicate(p) => eval_predicate(p, summaries)?,
    })
}

fn summary<'a>(term: &BoundReference, summaries: &'a [FieldSummary]) -> Result<&'a FieldSummary> {
    let pos = flat_position(term)?;
    summaries.get(pos).ok_or_else(|| {
        Error::invalid_argument(format!(
            "cannot evaluate '{}' on a manifest: partition field {pos} has no summary \
             (the manifest has {})",
            term.name,
            summaries.len()
        ))
    })
}

fn decode<'a>(bytes: &'a [u8], term: &BoundReference) -> Result<Bound<'a>> {
    Bound::decode(bytes, term)
}

/// Java's `allValuesAreNull`: nulls and no lower bound; for floating-point fields also
/// known to hold no NaN (a NaN is not in the bounds either).
fn all_values_null(s: &FieldSummary, term: &BoundReference) -> bool {
    let all_null = s.contains_null && s.lower_bound.is_none();
    if all_null && term.is_floating_point() {
        return s.contains_nan == Some(false);
    }
    all_null
}

/// Java's `uniqueValue`: the one value of a partition field whose summary has no null,
/// no NaN (known to have none, for floating-point fields) and equal bounds.
fn unique_value<'a>(s: &'a FieldSummary, term: &BoundReference) -> Result<Option<Bound<'a>>> {
    if s.contains_null {
        return Ok(None);
    }
    if term.is_floating_point() && s.contains_nan != Some(false) {
        return Ok(None);
    }
    let (Some(lower), Some(upper)) = (s.lower_bound.as_deref(), s.upper_bound.as_deref()) else {
        return Ok(None);
    };
    let lower = decode(lower, term)?;
    let upper = decode(upper, term)?;
    if !lower.same_as(&upper)? {
        return Ok(None);
    }
    Ok(Some(lower))
}

fn eval_predicate(p: &BoundPredicate, summaries: &[FieldSummary]) -> Result<bool> {
    use Operation as O;
    const MIGHT: bool = true;
    const CANNOT: bool = false;
    let term = p.term();
    let s = summary(term, summaries)?;
    match p {
        BoundPredicate::Unary { op, .. } => Ok(match op {
            O::IsNull => s.contains_null,
            O::NotNull => !all_values_null(s, term),
            O::IsNan => !(s.contains_nan == Some(false) || all_values_null(s, term)),
            // NaN, no null, and no lower bound: every value is NaN
            O::NotNan => {
                !(s.contains_nan == Some(true) && !s.contains_null && s.lower_bound.is_none())
            }
            _ => MIGHT,
        }),
        BoundPredicate::Literal { op, literal, .. } => match op {
            // bounds need not be values, except when they are equal and the field has no
            // nulls or NaNs: then every partition holds that one value (Java 1.11)
            O::NotEq => match unique_value(s, term)? {
                Some(v) if v.cmp(literal)?.is_eq() => Ok(CANNOT),
                _ => Ok(MIGHT),
            },
            O::Lt | O::LtEq => {
                // no lower bound: all values are null
                let Some(lower) = s.lower_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                let cmp = decode(lower, term)?.cmp(literal)?;
                Ok(if *op == O::Lt {
                    cmp.is_lt()
                } else {
                    cmp.is_le()
                })
            }
            O::Gt | O::GtEq => {
                // a NaN partition value matches `>` and `>=` (NaN is above every number,
                // as in the metrics evaluator); the bounds leave NaN out
                if term.is_floating_point() && s.contains_nan != Some(false) {
                    return Ok(MIGHT);
                }
                let Some(upper) = s.upper_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                let cmp = decode(upper, term)?.cmp(literal)?;
                Ok(if *op == O::Gt {
                    cmp.is_gt()
                } else {
                    cmp.is_ge()
                })
            }
            O::Eq => {
                let Some(lower) = s.lower_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                if decode(lower, term)?.cmp(literal)?.is_gt() {
                    return Ok(CANNOT);
                }
                // Java reads a missing upper bound as null, which its nulls-first comparator
                // puts below every value
                match s.upper_bound.as_deref() {
                    Some(upper) => Ok(!decode(upper, term)?.cmp(literal)?.is_lt()),
                    None => Ok(CANNOT),
                }
            }
            O::StartsWith => {
                let Some(lower) = s.lower_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                let prefix = prefix_bytes(literal, term)?;
                if truncated_cmp(lower, prefix).is_gt() {
                    return Ok(CANNOT);
                }
                let upper = s.upper_bound.as_deref().ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "the partition summary of '{}' has a lower bound but no upper bound",
                        term.name
                    ))
                })?;
                Ok(!truncated_cmp(upper, prefix).is_lt())
            }
            O::NotStartsWith => {
                if s.contains_null {
                    return Ok(MIGHT);
                }
                let prefix = prefix_bytes(literal, term)?;
                match (s.lower_bound.as_deref(), s.upper_bound.as_deref()) {
                    // no row matches only when both bounds start with the prefix
                    (Some(lower), Some(upper)) => {
                        Ok(!(lower.starts_with(prefix) && upper.starts_with(prefix)))
                    }
                    _ => Ok(MIGHT),
                }
            }
            other => Err(unexpected(*other)),
        },
        BoundPredicate::Set { op, literals, .. } => match op {
            O::NotIn => match unique_value(s, term)? {
                Some(v) if v.is_in(literals)? => Ok(CANNOT),
                _ => Ok(MIGHT),
            },
            O::In => {
                let Some(lower) = s.lower_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                if literals.len() > IN_PREDICATE_LIMIT {
                    return Ok(MIGHT);
                }
                let lower = decode(lower, term)?;
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
                // a missing upper bound is Java's null, below every value
                let Some(upper) = s.upper_bound.as_deref() else {
                    return Ok(CANNOT);
                };
                let upper = decode(upper, term)?;
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

fn prefix_bytes<'l>(literal: &'l Literal, term: &BoundReference) -> Result<&'l [u8]> {
    match literal {
        Literal::String(s) => Ok(s.as_bytes()),
        other => Err(Error::invalid_argument(format!(
            "'starts with' on '{}' needs a string, not {other}",
            term.name
        ))),
    }
}

fn unexpected(op: Operation) -> Error {
    Error::invalid_argument(format!(
        "unexpected operation '{}' in a bound predicate",
        op.symbol()
    ))
}

#[cfg(test)]
#[path = "manifest_eval_tests.rs"]
mod tests;
