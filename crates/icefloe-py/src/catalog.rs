//! The native side of `icefloe.catalog`: a catalog behind `Arc<dyn Catalog>`. Names cross
//! as (namespace levels, name) pairs; the Python layer parses `"db.t"` and tuples. Every
//! call releases the GIL, as each one reads a database or files.

use std::sync::Arc;

use icefloe::catalog::load::load_catalog;
use icefloe::catalog::{Catalog, PurgeScope, TableIdent, TableState};
use icefloe::commit::view;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::fileio::PyFileIO;
use crate::metadata::PyTableMetadata;
use crate::schema::PySchema;
use crate::view::PyViewMetadata;

type Ident = (Vec<String>, String);

fn ident((namespace, name): Ident) -> TableIdent {
    TableIdent::new(namespace, name)
}

fn table_state(state: TableState) -> (String, PyTableMetadata) {
    (
        state.metadata_location,
        PyTableMetadata {
            inner: state.metadata,
        },
    )
}

/// A catalog of namespaces, tables and views.
#[pyclass(frozen, module = "icefloe._native", name = "Catalog")]
pub struct PyCatalog {
    pub(crate) inner: Arc<dyn Catalog>,
}

#[pymethods]
impl PyCatalog {
    /// Opens the catalog `name` from PyIceberg-style properties (`type`, `uri`, `warehouse`).
    #[staticmethod]
    fn load(py: Python<'_>, name: &str, properties: Vec<(String, String)>) -> PyResult<Self> {
        let inner = py.detach(|| load_catalog(name, &properties)).py(py)?;
        Ok(PyCatalog { inner })
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// The FileIO the catalog reads and writes its tables' files through.
    #[getter]
    fn io(&self) -> PyFileIO {
        PyFileIO::new(self.inner.io())
    }

    fn default_table_location(&self, py: Python<'_>, table: Ident) -> PyResult<String> {
        self.inner.default_table_location(&ident(table)).py(py)
    }

    #[pyo3(signature = (namespace, properties = Vec::new()))]
    fn create_namespace(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
        properties: Vec<(String, String)>,
    ) -> PyResult<()> {
        py.detach(|| self.inner.create_namespace(&namespace, &properties))
            .py(py)
    }

    #[pyo3(signature = (parent = Vec::new()))]
    fn list_namespaces(&self, py: Python<'_>, parent: Vec<String>) -> PyResult<Vec<Vec<String>>> {
        py.detach(|| self.inner.list_namespaces(&parent)).py(py)
    }

    fn namespace_exists(&self, py: Python<'_>, namespace: Vec<String>) -> PyResult<bool> {
        py.detach(|| self.inner.namespace_exists(&namespace)).py(py)
    }

    fn namespace_properties(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
    ) -> PyResult<Vec<(String, String)>> {
        py.detach(|| self.inner.namespace_properties(&namespace))
            .py(py)
    }

    fn update_namespace_properties(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
        removals: Vec<String>,
        updates: Vec<(String, String)>,
    ) -> PyResult<()> {
        py.detach(|| {
            self.inner
                .update_namespace_properties(&namespace, &removals, &updates)
        })
        .py(py)
    }

    fn drop_namespace(&self, py: Python<'_>, namespace: Vec<String>) -> PyResult<()> {
        py.detach(|| self.inner.drop_namespace(&namespace)).py(py)
    }

    fn list_tables(&self, py: Python<'_>, namespace: Vec<String>) -> PyResult<Vec<Ident>> {
        let tables = py.detach(|| self.inner.list_tables(&namespace)).py(py)?;
        Ok(tables.into_iter().map(|t| (t.namespace, t.name)).collect())
    }

    fn table_exists(&self, py: Python<'_>, table: Ident) -> PyResult<bool> {
        py.detach(|| self.inner.table_exists(&ident(table))).py(py)
    }

    /// `(metadata_location, metadata)` of the table.
    fn load_table(&self, py: Python<'_>, table: Ident) -> PyResult<(String, PyTableMetadata)> {
        py.detach(|| self.inner.load_table(&ident(table)))
            .py(py)
            .map(table_state)
    }

    fn register_table(
        &self,
        py: Python<'_>,
        table: Ident,
        metadata_location: &str,
    ) -> PyResult<(String, PyTableMetadata)> {
        py.detach(|| self.inner.register_table(&ident(table), metadata_location))
            .py(py)
            .map(table_state)
    }

    fn rename_table(&self, py: Python<'_>, from: Ident, to: Ident) -> PyResult<()> {
        py.detach(|| self.inner.rename_table(&ident(from), &ident(to)))
            .py(py)
    }

    fn drop_table(&self, py: Python<'_>, table: Ident) -> PyResult<()> {
        py.detach(|| self.inner.drop_table(&ident(table))).py(py)
    }

    /// Drops the table and deletes its files: only those inside its location unless
    /// `delete_outside_location`. Returns (files deleted, files kept outside the location,
    /// files that could not be read or deleted).
    #[pyo3(signature = (table, delete_outside_location = false))]
    fn purge_table(
        &self,
        py: Python<'_>,
        table: Ident,
        delete_outside_location: bool,
    ) -> PyResult<(usize, Vec<String>, Vec<String>)> {
        let scope = if delete_outside_location {
            PurgeScope::Everywhere
        } else {
            PurgeScope::TableLocation
        };
        let r = py
            .detach(|| self.inner.purge_table(&ident(table), scope))
            .py(py)?;
        Ok((r.deleted_files, r.kept_outside_location, r.failed))
    }

    /// Writes `metadata` as the table's next metadata file and swaps the pointer if the
    /// table still points at `base` (`(metadata_location, metadata)`; `None` creates).
    #[pyo3(signature = (table, base, metadata))]
    fn commit_table(
        &self,
        py: Python<'_>,
        table: Ident,
        base: Option<(String, PyRef<'_, PyTableMetadata>)>,
        metadata: PyRef<'_, PyTableMetadata>,
    ) -> PyResult<(String, PyTableMetadata)> {
        let base = base.map(|(metadata_location, md)| TableState {
            metadata_location,
            metadata: Arc::clone(&md.inner),
        });
        let new = (*metadata.inner).clone();
        py.detach(|| self.inner.commit_table(&ident(table), base.as_ref(), new))
            .py(py)
            .map(table_state)
    }

    fn list_views(&self, py: Python<'_>, namespace: Vec<String>) -> PyResult<Vec<Ident>> {
        let views = py.detach(|| self.inner.list_views(&namespace)).py(py)?;
        Ok(views.into_iter().map(|t| (t.namespace, t.name)).collect())
    }

    fn view_exists(&self, py: Python<'_>, view: Ident) -> PyResult<bool> {
        py.detach(|| self.inner.view_exists(&ident(view))).py(py)
    }

    /// `(metadata_location, metadata)` of the view.
    fn load_view(&self, py: Python<'_>, view: Ident) -> PyResult<(String, PyViewMetadata)> {
        let state = py.detach(|| self.inner.load_view(&ident(view))).py(py)?;
        Ok((
            state.metadata_location,
            PyViewMetadata {
                inner: state.metadata,
            },
        ))
    }

    fn rename_view(&self, py: Python<'_>, from: Ident, to: Ident) -> PyResult<()> {
        py.detach(|| self.inner.rename_view(&ident(from), &ident(to)))
            .py(py)
    }

    fn drop_view(&self, py: Python<'_>, view: Ident) -> PyResult<()> {
        py.detach(|| self.inner.drop_view(&ident(view))).py(py)
    }

    /// As `commit_table`, for views: `base` is `(metadata_location, metadata)` or `None`.
    #[pyo3(signature = (view, base, metadata))]
    fn commit_view(
        &self,
        py: Python<'_>,
        view: Ident,
        base: Option<(String, PyRef<'_, PyViewMetadata>)>,
        metadata: PyRef<'_, PyViewMetadata>,
    ) -> PyResult<(String, PyViewMetadata)> {
        let base = base.map(|(metadata_location, md)| icefloe::catalog::ViewState {
            metadata_location,
            metadata: Arc::clone(&md.inner),
        });
        let new = (*metadata.inner).clone();
        let state = py
            .detach(|| self.inner.commit_view(&ident(view), base.as_ref(), new))
            .py(py)?;
        Ok((
            state.metadata_location,
            PyViewMetadata {
                inner: state.metadata,
            },
        ))
    }

    /// Creates (`mode="create"`), replaces (`"replace"`) or creates-or-replaces
    /// (`"create_or_replace"`) a view with Java's view-builder rules; returns
    /// `(metadata_location, metadata)`. `summary` is added to icefloe's engine summary.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (view, schema, queries, *, mode, default_namespace, default_catalog = None,
                        summary = vec![], properties = vec![], location = None))]
    fn build_view(
        &self,
        py: Python<'_>,
        view: Ident,
        schema: PyRef<'_, PySchema>,
        queries: Vec<(String, String)>,
        mode: &str,
        default_namespace: Vec<String>,
        default_catalog: Option<String>,
        summary: Vec<(String, String)>,
        properties: Vec<(String, String)>,
        location: Option<String>,
    ) -> PyResult<(String, PyViewMetadata)> {
        let mut full_summary = view::engine_summary();
        full_summary.extend(summary);
        let def = view::ViewDefinition {
            schema: (*schema.inner).clone(),
            queries,
            default_namespace,
            default_catalog,
            summary: full_summary,
            properties: properties.into_iter().collect(),
            location,
        };
        let ident = ident(view);
        let catalog = &*self.inner;
        let state = py
            .detach(|| match mode {
                "create" => view::create_view(catalog, &ident, &def),
                "replace" => view::replace_view(catalog, &ident, &def),
                "create_or_replace" => view::create_or_replace_view(catalog, &ident, &def),
                other => Err(icefloe::Error::invalid_argument(format!(
                    "unknown view build mode '{other}'"
                ))),
            })
            .py(py)?;
        Ok((
            state.metadata_location,
            PyViewMetadata {
                inner: state.metadata,
            },
        ))
    }

    fn __repr__(&self) -> String {
        format!("Catalog({:?})", self.inner.name())
    }
}
