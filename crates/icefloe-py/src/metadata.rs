//! Python views of partition specs, sort orders, snapshots and refs.

use icefloe::spec::partition::{PartitionField, PartitionSpec};
use icefloe::spec::snapshot::{Snapshot, SnapshotRef};
use icefloe::spec::sort::{SortField, SortOrder};
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::schema::{PyNestedField, PySchema};

#[pyclass(frozen, module = "icefloe._native", name = "PartitionField")]
pub struct PyPartitionField {
    pub inner: PartitionField,
}

#[pymethods]
impl PyPartitionField {
    /// The source column id (the first one, for a multi-argument transform).
    #[getter]
    fn source_id(&self) -> i32 {
        self.inner.source_id()
    }

    #[getter]
    fn source_ids(&self) -> Vec<i32> {
        self.inner.source_ids.clone()
    }

    #[getter]
    fn field_id(&self) -> i32 {
        self.inner.field_id
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn transform(&self) -> String {
        self.inner.transform.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "PartitionField({}={}({}), field_id={})",
            self.inner.name,
            self.inner.transform,
            join_ids(&self.inner.source_ids),
            self.inner.field_id
        )
    }
}

fn join_ids(ids: &[i32]) -> String {
    ids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
}

#[pyclass(frozen, module = "icefloe._native", name = "PartitionSpec")]
pub struct PyPartitionSpec {
    pub inner: PartitionSpec,
}

#[pymethods]
impl PyPartitionSpec {
    #[getter]
    fn spec_id(&self) -> i32 {
        self.inner.spec_id
    }

    #[getter]
    fn fields(&self) -> Vec<PyPartitionField> {
        self.inner
            .fields
            .iter()
            .map(|f| PyPartitionField { inner: f.clone() })
            .collect()
    }

    fn is_unpartitioned(&self) -> bool {
        self.inner.is_unpartitioned()
    }

    /// The fields of the partition tuple for `schema` (partition field ids, result types).
    fn partition_type(&self, py: Python<'_>, schema: &PySchema) -> PyResult<Vec<PyNestedField>> {
        let st = self.inner.partition_type(&schema.inner).py(py)?;
        Ok(st
            .fields
            .into_iter()
            .map(|inner| PyNestedField { inner })
            .collect())
    }

    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self
            .fields()
            .iter()
            .map(PyPartitionField::__repr__)
            .collect();
        format!("PartitionSpec(spec_id={}, [{}])", self.inner.spec_id, fields.join(", "))
    }
}

#[pyclass(frozen, module = "icefloe._native", name = "SortField")]
pub struct PySortField {
    pub inner: SortField,
}

#[pymethods]
impl PySortField {
    #[getter]
    fn source_id(&self) -> i32 {
        self.inner.source_id()
    }

    #[getter]
    fn source_ids(&self) -> Vec<i32> {
        self.inner.source_ids.clone()
    }

    #[getter]
    fn transform(&self) -> String {
        self.inner.transform.to_string()
    }

    #[getter]
    fn direction(&self) -> &'static str {
        self.inner.direction.as_str()
    }

    #[getter]
    fn null_order(&self) -> &'static str {
        self.inner.null_order.as_str()
    }

    fn __repr__(&self) -> String {
        format!(
            "SortField({}({}) {} {})",
            self.inner.transform,
            join_ids(&self.inner.source_ids),
            self.inner.direction.as_str(),
            self.inner.null_order.as_str()
        )
    }
}

#[pyclass(frozen, module = "icefloe._native", name = "SortOrder")]
pub struct PySortOrder {
    pub inner: SortOrder,
}

#[pymethods]
impl PySortOrder {
    #[getter]
    fn order_id(&self) -> i32 {
        self.inner.order_id
    }

    #[getter]
    fn fields(&self) -> Vec<PySortField> {
        self.inner
            .fields
            .iter()
            .map(|f| PySortField { inner: f.clone() })
            .collect()
    }

    fn is_unsorted(&self) -> bool {
        self.inner.is_unsorted()
    }

    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self.fields().iter().map(PySortField::__repr__).collect();
        format!("SortOrder(order_id={}, [{}])", self.inner.order_id, fields.join(", "))
    }
}

#[pyclass(frozen, module = "icefloe._native", name = "Snapshot")]
pub struct PySnapshot {
    pub inner: Snapshot,
}

#[pymethods]
impl PySnapshot {
    #[getter]
    fn snapshot_id(&self) -> i64 {
        self.inner.snapshot_id
    }

    #[getter]
    fn parent_snapshot_id(&self) -> Option<i64> {
        self.inner.parent_snapshot_id
    }

    #[getter]
    fn sequence_number(&self) -> i64 {
        self.inner.sequence_number
    }

    #[getter]
    fn timestamp_ms(&self) -> i64 {
        self.inner.timestamp_ms
    }

    #[getter]
    fn manifest_list(&self) -> Option<&str> {
        self.inner.manifest_list.as_deref()
    }

    /// v1 only: manifest locations listed in the snapshot itself.
    #[getter]
    fn manifests(&self) -> Option<Vec<String>> {
        self.inner.manifests.clone()
    }

    /// `append`, `replace`, `overwrite` or `delete` (None if the snapshot has no summary).
    #[getter]
    fn operation(&self) -> Option<&'static str> {
        self.inner.operation().map(|o| o.as_str())
    }

    /// The summary map, including `operation`.
    #[getter]
    fn summary(&self) -> Vec<(String, String)> {
        match &self.inner.summary {
            Some(s) => {
                let mut v = vec![("operation".to_string(), s.operation.as_str().to_string())];
                v.extend(s.properties.iter().cloned());
                v
            }
            None => Vec::new(),
        }
    }

    #[getter]
    fn schema_id(&self) -> Option<i32> {
        self.inner.schema_id
    }

    #[getter]
    fn first_row_id(&self) -> Option<i64> {
        self.inner.first_row_id
    }

    #[getter]
    fn added_rows(&self) -> Option<i64> {
        self.inner.added_rows
    }

    #[getter]
    fn key_id(&self) -> Option<&str> {
        self.inner.key_id.as_deref()
    }

    fn __repr__(&self) -> String {
        format!(
            "Snapshot(snapshot_id={}, parent={}, sequence_number={}, timestamp_ms={}, operation={})",
            self.inner.snapshot_id,
            self.inner
                .parent_snapshot_id
                .map_or("None".to_string(), |p| p.to_string()),
            self.inner.sequence_number,
            self.inner.timestamp_ms,
            self.inner.operation().map_or("None", |o| o.as_str()),
        )
    }
}

#[pyclass(frozen, module = "icefloe._native", name = "SnapshotRef")]
pub struct PySnapshotRef {
    pub inner: SnapshotRef,
}

#[pymethods]
impl PySnapshotRef {
    #[getter]
    fn snapshot_id(&self) -> i64 {
        self.inner.snapshot_id
    }

    /// `branch` or `tag`.
    #[getter]
    fn r#type(&self) -> &'static str {
        self.inner.kind.as_str()
    }

    fn is_branch(&self) -> bool {
        self.inner.is_branch()
    }

    #[getter]
    fn min_snapshots_to_keep(&self) -> Option<i32> {
        self.inner.min_snapshots_to_keep
    }

    #[getter]
    fn max_snapshot_age_ms(&self) -> Option<i64> {
        self.inner.max_snapshot_age_ms
    }

    #[getter]
    fn max_ref_age_ms(&self) -> Option<i64> {
        self.inner.max_ref_age_ms
    }

    fn __repr__(&self) -> String {
        let mut s = format!(
            "SnapshotRef({}, snapshot_id={}",
            self.inner.kind.as_str(),
            self.inner.snapshot_id
        );
        if let Some(v) = self.inner.min_snapshots_to_keep {
            s.push_str(&format!(", min_snapshots_to_keep={v}"));
        }
        if let Some(v) = self.inner.max_snapshot_age_ms {
            s.push_str(&format!(", max_snapshot_age_ms={v}"));
        }
        if let Some(v) = self.inner.max_ref_age_ms {
            s.push_str(&format!(", max_ref_age_ms={v}"));
        }
        s.push(')');
        s
    }
}
