//! Aggregate column metrics of a leaf, written on the leaf's root entry so that the
//! planner can skip the leaf without reading it (`docs/v4.md`, "Aggregate stats on leaf
//! entries").
//!
//! The aggregate must never let the planner skip a leaf holding a file that the same
//! filter would keep: whenever v3's inclusive metrics evaluator says "no row can match"
//! for the aggregate, it must say so for every file the leaf holds. Hence:
//! - a lower bound is the least of the files' lower bounds (an upper bound, the greatest),
//!   compared with the evaluator's own order (bytes for strings and binary, Java's order
//!   otherwise); a file without the bound counts only when its counts say it holds nulls
//!   only; otherwise, or when a bound does not decode or is NaN, the column gets no
//!   aggregate bound;
//! - value, null and NaN counts are sums, kept only when every file has the count;
//! - column sizes are not aggregated (planning does not use them).
//!
//! The result is computed when the leaf is written. A manifest DV added later removes
//! entries but leaves the aggregate as it was: bounds may then be wider than the live
//! entries need and counts larger, never narrower or smaller, so pruning stays correct
//! (see `docs/v4.md`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{Metrics, TrackedFile};
use crate::expr::java_compare;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, PrimitiveType, Type};

/// The primitive type of field `id`, from the current schema or, for a dropped column,
/// the newest schema that has it.
fn field_type(md: &TableMetadata, id: i32) -> Option<PrimitiveType> {
    let current = md.current_schema().into_iter();
    let older = md.schemas.iter().rev();
    current.chain(older).find_map(|s| match s.field_by_id(id) {
        Some(f) => match &f.field_type {
            Type::Primitive(p) => Some(p.clone()),
            _ => None,
        },
        None => None,
    })
}

fn lookup<T>(map: Option<&[(i32, T)]>, id: i32) -> Option<&T> {
    map?.iter().find(|(k, _)| *k == id).map(|(_, v)| v)
}

/// Orders two Appendix D bounds of type `ty` as the inclusive evaluator orders values:
/// strings, binary and fixed by unsigned bytes, the rest decoded, with Java's order.
/// `None` when a bound does not decode or is NaN.
fn compare(ty: &PrimitiveType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    match ty {
        PrimitiveType::String | PrimitiveType::Binary | PrimitiveType::Fixed(_) => Some(a.cmp(b)),
        _ => {
            let x = Literal::from_bytes(a, ty).ok()?;
            let y = Literal::from_bytes(b, ty).ok()?;
            if is_nan(&x) || is_nan(&y) {
                return None;
            }
            java_compare(&x, &y).ok()
        }
    }
}

/// Whether one bound decodes as a non-NaN value of `ty` (so that a leaf of one file
/// gets no bound the evaluator could not read either).
fn usable(ty: &PrimitiveType, b: &[u8]) -> bool {
    compare(ty, b, b).is_some()
}

fn is_nan(v: &Literal) -> bool {
    match v {
        Literal::Float(f) => f.is_nan(),
        Literal::Double(f) => f.is_nan(),
        _ => false,
    }
}

/// Every value of column `id` in `e` is null, by its counts (the evaluator's
/// `nulls_only`): such a file needs no bound, since its nulls enter the aggregate's null
/// count, and every test that reads bounds first rules out a column that may hold nulls
/// or holds nulls only. A NaN-only file gets no such pass: when another file lacks a NaN
/// count, the aggregate has none, and the `!=` test (one unique value, no nulls, NaN count
/// not known to be positive) would rule out a leaf whose NaN rows match.
fn no_bound_needed(e: &TrackedFile, id: i32) -> bool {
    let m = &e.metrics;
    let values = lookup(m.value_counts.as_deref(), id);
    let nulls = lookup(m.null_value_counts.as_deref(), id);
    matches!((values, nulls), (Some(v), Some(n)) if v == n)
}

/// Sums of a count map over `files`, for the columns every file counts.
fn sum_counts(
    files: &[&TrackedFile],
    get: impl Fn(&Metrics) -> Option<&[(i32, i64)]>,
) -> Option<Vec<(i32, i64)>> {
    let (first, rest) = files.split_first()?;
    let mut out: BTreeMap<i32, i64> = get(&first.metrics)?.iter().copied().collect();
    for f in rest {
        let m = get(&f.metrics)?;
        out.retain(|id, total| match lookup(Some(m), *id) {
            Some(n) => {
                *total = total.saturating_add(*n);
                true
            }
            None => false,
        });
    }
    if out.is_empty() {
        return None;
    }
    Some(out.into_iter().collect())
}

/// One side (lower or upper) of the aggregate bounds.
fn aggregate_bounds(
    md: &TableMetadata,
    files: &[&TrackedFile],
    get: impl Fn(&Metrics) -> Option<&[(i32, Vec<u8>)]>,
    keep: Ordering,
) -> Option<Vec<(i32, Vec<u8>)>> {
    // the candidate columns: those any file has a bound for
    let mut ids: Vec<i32> = files
        .iter()
        .flat_map(|f| {
            get(&f.metrics)
                .unwrap_or_default()
                .iter()
                .map(|(id, _)| *id)
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::new();
    'columns: for id in ids {
        let Some(ty) = field_type(md, id) else {
            continue;
        };
        let mut best: Option<&[u8]> = None;
        for f in files {
            match lookup(get(&f.metrics), id) {
                Some(b) => {
                    best = match best {
                        None if usable(&ty, b) => Some(b),
                        None => continue 'columns,
                        Some(cur) => match compare(&ty, b, cur) {
                            Some(o) if o == keep => Some(b),
                            Some(_) => Some(cur),
                            None => continue 'columns,
                        },
                    };
                }
                None if no_bound_needed(f, id) => {}
                None => continue 'columns,
            }
        }
        if let Some(b) = best {
            out.push((id, b.to_vec()));
        }
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// The aggregate metrics of a leaf holding `files` (those not live are ignored), for
/// its root entry. Empty when the leaf has no live file, or one of unknown row count.
pub fn aggregate_metrics(md: &TableMetadata, files: &[TrackedFile]) -> Metrics {
    let live: Vec<&TrackedFile> = files
        .iter()
        .filter(|f| super::tree::is_live(&f.tracking))
        .collect();
    // a file of unknown row count (-1, Java's import of uncounted Avro files) is kept by
    // the evaluator whatever its metrics say, so the leaf must be too
    if live.is_empty() || live.iter().any(|f| f.record_count < 0) {
        return Metrics::default();
    }
    Metrics {
        column_sizes: None,
        value_counts: sum_counts(&live, |m| m.value_counts.as_deref()),
        null_value_counts: sum_counts(&live, |m| m.null_value_counts.as_deref()),
        nan_value_counts: sum_counts(&live, |m| m.nan_value_counts.as_deref()),
        lower_bounds: aggregate_bounds(md, &live, |m| m.lower_bounds.as_deref(), Ordering::Less),
        upper_bounds: aggregate_bounds(md, &live, |m| m.upper_bounds.as_deref(), Ordering::Greater),
    }
}
