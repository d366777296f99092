//! Python views of partition specs, sort orders, snapshots and refs.

use std::collections::BTreeMap;
use std::sync::Arc;

use icefloe::catalog::filesystem::resolve_metadata_location;
use icefloe::spec::partition::{PartitionField, PartitionSpec};
use icefloe::spec::snapshot::{Snapshot, SnapshotRef};
use icefloe::spec::sort::{SortField, SortOrder};
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::Schema;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};
use crate::json_to_py;
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
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
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
        format!(
            "PartitionSpec(spec_id={}, [{}])",
            self.inner.spec_id,
            fields.join(", ")
        )
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
        format!(
            "SortOrder(order_id={}, [{}])",
            self.inner.order_id,
            fields.join(", ")
        )
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

    /// The summary map, including `operation`, in file order.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let Some(s) = &self.inner.summary {
            d.set_item("operation", s.operation.as_str())?;
            for (k, v) in &s.properties {
                d.set_item(k, v)?;
            }
        }
        Ok(d)
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

/// Table metadata (format versions 1 to 3).
#[pyclass(frozen, module = "icefloe._native", name = "TableMetadata")]
pub struct PyTableMetadata {
    pub inner: Arc<TableMetadata>,
}

fn schema_view(s: &Schema) -> PySchema {
    PySchema {
        inner: Arc::new(s.clone()),
    }
}

#[pymethods]
impl PyTableMetadata {
    /// Reads a metadata file (plain or gzip), or the current metadata of a table directory,
    /// through `io` (default: the FileIO for the path's scheme).
    #[staticmethod]
    #[pyo3(signature = (path, *, io = None))]
    fn from_path(py: Python<'_>, path: &str, io: Option<&PyFileIO>) -> PyResult<PyTableMetadata> {
        let md = py
            .detach(|| {
                let io = io_for(io, path)?;
                let location = resolve_metadata_location(io.as_ref(), path)?;
                TableMetadata::read(io.as_ref(), &location)
            })
            .py(py)?;
        Ok(PyTableMetadata {
            inner: Arc::new(md),
        })
    }

    /// Parses metadata JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PyTableMetadata> {
        let md = py.detach(|| TableMetadata::from_json_str(text)).py(py)?;
        Ok(PyTableMetadata {
            inner: Arc::new(md),
        })
    }

    /// The metadata as Appendix C JSON, as icefloe writes it.
    #[pyo3(signature = (pretty = false))]
    fn to_json(&self, pretty: bool) -> String {
        self.inner.to_json_string(pretty)
    }

    /// Writes the metadata to a new file (never overwrites); gzip when `compress`. Written
    /// through `io` (default: the FileIO for the path's scheme).
    #[pyo3(signature = (path, compress = false, *, io = None))]
    fn write(
        &self,
        py: Python<'_>,
        path: &str,
        compress: bool,
        io: Option<&PyFileIO>,
    ) -> PyResult<()> {
        py.detach(|| self.inner.write(io_for(io, path)?.as_ref(), path, compress))
            .py(py)
    }

    #[getter]
    fn format_version(&self) -> i32 {
        self.inner.format_version
    }

    #[getter]
    fn table_uuid(&self) -> Option<&str> {
        self.inner.table_uuid.as_deref()
    }

    #[getter]
    fn location(&self) -> &str {
        &self.inner.location
    }

    #[getter]
    fn last_sequence_number(&self) -> i64 {
        self.inner.last_sequence_number
    }

    #[getter]
    fn last_updated_ms(&self) -> i64 {
        self.inner.last_updated_ms
    }

    #[getter]
    fn last_column_id(&self) -> i32 {
        self.inner.last_column_id
    }

    #[getter]
    fn current_schema_id(&self) -> i32 {
        self.inner.current_schema_id
    }

    #[getter]
    fn default_spec_id(&self) -> i32 {
        self.inner.default_spec_id
    }

    #[getter]
    fn last_partition_id(&self) -> i32 {
        self.inner.last_partition_id
    }

    #[getter]
    fn default_sort_order_id(&self) -> i32 {
        self.inner.default_sort_order_id
    }

    #[getter]
    fn current_snapshot_id(&self) -> Option<i64> {
        self.inner.current_snapshot_id
    }

    /// v3 row lineage: the next row id to assign (0 for older versions).
    #[getter]
    fn next_row_id(&self) -> i64 {
        self.inner.next_row_id
    }

    #[getter]
    fn properties(&self) -> BTreeMap<String, String> {
        self.inner.properties.iter().cloned().collect()
    }

    #[getter]
    fn schemas(&self) -> Vec<PySchema> {
        self.inner.schemas.iter().map(schema_view).collect()
    }

    #[getter]
    fn specs(&self) -> Vec<PyPartitionSpec> {
        self.inner
            .partition_specs
            .iter()
            .map(|s| PyPartitionSpec { inner: s.clone() })
            .collect()
    }

    #[getter]
    fn sort_orders(&self) -> Vec<PySortOrder> {
        self.inner
            .sort_orders
            .iter()
            .map(|s| PySortOrder { inner: s.clone() })
            .collect()
    }

    #[getter]
    fn snapshots(&self) -> Vec<PySnapshot> {
        self.inner
            .snapshots
            .iter()
            .map(|s| PySnapshot { inner: s.clone() })
            .collect()
    }

    #[getter]
    fn refs(&self) -> BTreeMap<String, PySnapshotRef> {
        self.inner
            .refs
            .iter()
            .map(|(n, r)| (n.clone(), PySnapshotRef { inner: r.clone() }))
            .collect()
    }

    /// `(timestamp_ms, snapshot_id)` pairs: when each snapshot became current.
    #[getter]
    fn snapshot_log(&self) -> Vec<(i64, i64)> {
        self.inner
            .snapshot_log
            .iter()
            .map(|e| (e.timestamp_ms, e.snapshot_id))
            .collect()
    }

    /// `(timestamp_ms, metadata_file)` pairs of previous metadata files.
    #[getter]
    fn metadata_log(&self) -> Vec<(i64, String)> {
        self.inner
            .metadata_log
            .iter()
            .map(|e| (e.timestamp_ms, e.metadata_file.clone()))
            .collect()
    }

    /// Table statistics files, as their JSON objects.
    #[getter]
    fn statistics(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .statistics
            .iter()
            .map(|s| json_to_py(py, &s.to_json()))
            .collect()
    }

    /// Partition statistics files, as their JSON objects.
    #[getter]
    fn partition_statistics(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .partition_statistics
            .iter()
            .map(|s| json_to_py(py, &s.to_json()))
            .collect()
    }

    /// Encryption keys (v3), as their JSON objects.
    #[getter]
    fn encryption_keys(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .encryption_keys
            .iter()
            .map(|k| json_to_py(py, &k.to_json()))
            .collect()
    }

    /// The current schema.
    fn schema(&self, py: Python<'_>) -> PyResult<PySchema> {
        self.inner
            .current_schema()
            .map(schema_view)
            .ok_or_else(|| missing(py, "current schema"))
    }

    fn schema_by_id(&self, schema_id: i32) -> Option<PySchema> {
        self.inner.schema_by_id(schema_id).map(schema_view)
    }

    /// The default partition spec.
    fn spec(&self, py: Python<'_>) -> PyResult<PyPartitionSpec> {
        self.inner
            .default_spec()
            .map(|s| PyPartitionSpec { inner: s.clone() })
            .ok_or_else(|| missing(py, "default partition spec"))
    }

    fn spec_by_id(&self, spec_id: i32) -> Option<PyPartitionSpec> {
        self.inner
            .spec_by_id(spec_id)
            .map(|s| PyPartitionSpec { inner: s.clone() })
    }

    /// The default sort order.
    fn sort_order(&self, py: Python<'_>) -> PyResult<PySortOrder> {
        self.inner
            .default_sort_order()
            .map(|s| PySortOrder { inner: s.clone() })
            .ok_or_else(|| missing(py, "default sort order"))
    }

    fn current_snapshot(&self) -> Option<PySnapshot> {
        self.inner
            .current_snapshot()
            .map(|s| PySnapshot { inner: s.clone() })
    }

    fn snapshot_by_id(&self, snapshot_id: i64) -> Option<PySnapshot> {
        self.inner
            .snapshot_by_id(snapshot_id)
            .map(|s| PySnapshot { inner: s.clone() })
    }

    /// The snapshot a branch or tag points to, or None.
    fn snapshot_by_ref(&self, name: &str) -> Option<PySnapshot> {
        self.inner
            .snapshot_by_ref(name)
            .map(|s| PySnapshot { inner: s.clone() })
    }

    /// The snapshot that was current at `timestamp_ms` (from the snapshot log).
    fn snapshot_as_of(&self, py: Python<'_>, timestamp_ms: i64) -> PyResult<PySnapshot> {
        let s = self.inner.snapshot_as_of(timestamp_ms).py(py)?;
        Ok(PySnapshot { inner: s.clone() })
    }

    /// The snapshot and its ancestors, newest first.
    fn ancestors_of(&self, snapshot_id: i64) -> Vec<PySnapshot> {
        self.inner
            .ancestors_of(snapshot_id)
            .into_iter()
            .map(|s| PySnapshot { inner: s.clone() })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "TableMetadata(format_version={}, location={:?}, current_snapshot_id={}, {} snapshots)",
            self.inner.format_version,
            self.inner.location,
            self.inner
                .current_snapshot_id
                .map_or("None".into(), |s| s.to_string()),
            self.inner.snapshots.len()
        )
    }
}

fn missing(py: Python<'_>, what: &str) -> PyErr {
    crate::error::to_py(
        py,
        icefloe::Error::not_found(format!("the metadata has no {what}")),
    )
}
