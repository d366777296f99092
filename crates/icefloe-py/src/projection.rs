//! Private bindings of expression projection and residuals, used by the Java-oracle tests.
//! Inputs and outputs are JSON text (expressions in the REST / `ExpressionParser` form,
//! partition values in the single-value form); a failure of one item is returned as
//! `"!error: <message>"` so that a batch keeps going.

use icefloe::expr::{project, BoundExpression, Expression, ProjectionKind, ResidualEvaluator};
use icefloe::spec::json::parse_text;
use icefloe::spec::partition::PartitionSpec;
use icefloe::spec::{Literal, Schema};
use icefloe::{Error, Result};
use pyo3::prelude::*;

use crate::error::IntoPyResult;

fn parse_schema_and_spec(schema_json: &str, spec_json: &str) -> Result<(Schema, PartitionSpec)> {
    let schema = Schema::from_json(&parse_text(schema_json)?, "schema")?;
    let spec = PartitionSpec::from_json(&parse_text(spec_json)?, "spec", 2)?;
    Ok((schema, spec))
}

fn bind(text: &str, schema: &Schema, case_sensitive: bool) -> Result<BoundExpression> {
    Expression::from_json(&parse_text(text)?, Some(schema))?.bind(schema, case_sensitive)
}

fn or_error(r: Result<String>) -> String {
    r.unwrap_or_else(|e| format!("!error: {e}"))
}

/// For each expression (JSON), per `kind`: `"bound"`, the expression bound to the schema;
/// `"inclusive"` or `"strict"`, its projection bound to the spec's partition type. Results
/// are bound-expression JSON.
#[pyfunction]
#[pyo3(name = "_project", signature = (exprs, schema_json, spec_json, kind, case_sensitive = true))]
pub fn project_py(
    py: Python<'_>,
    exprs: Vec<String>,
    schema_json: &str,
    spec_json: &str,
    kind: &str,
    case_sensitive: bool,
) -> PyResult<Vec<String>> {
    py.detach(|| -> Result<Vec<String>> {
        let (schema, spec) = parse_schema_and_spec(schema_json, spec_json)?;
        let kind = match kind {
            "bound" => None,
            "inclusive" => Some(ProjectionKind::Inclusive),
            "strict" => Some(ProjectionKind::Strict),
            other => {
                return Err(Error::invalid_argument(format!(
                    "kind must be 'bound', 'inclusive' or 'strict', not '{other}'"
                )))
            }
        };
        let partition_type = spec.partition_type(&schema)?;
        Ok(exprs
            .iter()
            .map(|text| {
                or_error((|| {
                    let bound = bind(text, &schema, case_sensitive)?;
                    let out = match kind {
                        None => bound,
                        Some(kind) => project(&bound, &spec, kind)?
                            .bind_struct(&partition_type, case_sensitive)?,
                    };
                    Ok(out.to_json().to_string())
                })())
            })
            .collect())
    })
    .py(py)
}

/// For each expression (JSON) and each partition (a JSON array of single-value JSON values,
/// one per partition field), the residual bound to the schema, as JSON.
#[pyfunction]
#[pyo3(name = "_residuals", signature = (exprs, schema_json, spec_json, partitions, case_sensitive = true))]
pub fn residuals_py(
    py: Python<'_>,
    exprs: Vec<String>,
    schema_json: &str,
    spec_json: &str,
    partitions: Vec<String>,
    case_sensitive: bool,
) -> PyResult<Vec<Vec<String>>> {
    py.detach(|| -> Result<Vec<Vec<String>>> {
        let (schema, spec) = parse_schema_and_spec(schema_json, spec_json)?;
        let partition_type = spec.partition_type(&schema)?;
        let tuples = partitions
            .iter()
            .map(|text| -> Result<Vec<Option<Literal>>> {
                let value = parse_text(text)?;
                let items = value.as_array().ok_or_else(|| {
                    Error::invalid_argument(format!("a partition must be a JSON array: {text}"))
                })?;
                if items.len() != partition_type.fields.len() {
                    return Err(Error::invalid_argument(format!(
                        "partition {text} has {} values for {} fields",
                        items.len(),
                        partition_type.fields.len()
                    )));
                }
                items
                    .iter()
                    .zip(&partition_type.fields)
                    .map(|(v, f)| Literal::from_json_opt(v, &f.field_type))
                    .collect()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(exprs
            .iter()
            .map(|text| {
                let evaluator = bind(text, &schema, case_sensitive).and_then(|bound| {
                    ResidualEvaluator::new(&spec, &schema, &bound, case_sensitive)
                });
                match evaluator {
                    Err(e) => vec![format!("!error: {e}"); tuples.len()],
                    Ok(ev) => tuples
                        .iter()
                        .map(|t| or_error(ev.residual_for(t).map(|r| r.to_json().to_string())))
                        .collect(),
                }
            })
            .collect())
    })
    .py(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(project_py, m)?)?;
    m.add_function(wrap_pyfunction!(residuals_py, m)?)?;
    Ok(())
}
