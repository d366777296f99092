//! The native side of `icefloe.commit`: transactions on a catalog table and table creation.
//! Conversions only; every commit releases the GIL (it writes files and may retry).

use std::sync::{Arc, Mutex};

use arrow::datatypes::Schema as ArrowSchema;
use arrow::pyarrow::FromPyArrow;
use arrow::record_batch::RecordBatch;
use icefloe::arrow::arrow_to_schema;
use icefloe::catalog::{Catalog, TableIdent, TableState};
use icefloe::commit::data_files::data_files_from_batch;
use icefloe::commit::snapshot::validate::{IsolationLevel, RowDeltaValidation};
use icefloe::commit::{ManifestLayout, NewTable, SnapshotProducer, Transaction};
use icefloe::spec::json::parse_text;
use icefloe::spec::partition::PartitionSpec;
use icefloe::spec::sort::SortOrder;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::schema_update::PyUpdateSchema;

use crate::catalog::PyCatalog;
use crate::error::IntoPyResult;
use crate::expr::PyExpression;
use crate::fileio::PyFileIO;
use crate::metadata::{PyPartitionSpec, PySortOrder, PyTableMetadata};
use crate::schema::PySchema;

type Ident = (Vec<String>, String);

fn table_state(state: TableState) -> (String, PyTableMetadata) {
    (
        state.metadata_location,
        PyTableMetadata {
            inner: state.metadata,
        },
    )
}

fn batches(objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<RecordBatch>> {
    objs.iter().map(RecordBatch::from_pyarrow_bound).collect()
}

/// Pending changes to one table, committed together.
#[pyclass(frozen, module = "icefloe._native", name = "Transaction")]
pub struct PyTransaction {
    /// The metadata the transaction started from: data files are read against its specs.
    base: Arc<TableMetadata>,
    inner: Mutex<Option<Transaction>>,
}

impl PyTransaction {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Transaction) -> icefloe::Result<T>,
    ) -> icefloe::Result<T> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| Error::unsupported("the transaction is poisoned"))?;
        let tx = guard
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("the transaction was already committed"))?;
        f(tx)
    }

    fn files(
        &self,
        batches: &[RecordBatch],
        spec_id: Option<i32>,
    ) -> icefloe::Result<(i32, Vec<icefloe::manifest::DataFile>)> {
        let spec_id = spec_id.unwrap_or(self.base.default_spec_id);
        let spec = self.base.spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
        })?;
        let schema = self.base.current_schema().ok_or_else(|| {
            Error::invalid_metadata("current-schema-id", "the table has no current schema")
        })?;
        let ptype = spec.partition_type(schema)?;
        let mut out = Vec::new();
        for b in batches {
            out.extend(data_files_from_batch(b, &ptype)?);
        }
        Ok((spec_id, out))
    }
}

/// How a snapshot is committed: the branch, the extra snapshot summary properties and
/// the conflict validations run on every attempt (`RowDeltaValidation`; Java's
/// `validateFromSnapshot`, `conflictDetectionFilter`, ...). Keyword-only. An
/// `isolation_level` (`serializable` or `snapshot`) adds the validations Spark's
/// row-level writes ask for at that level.
#[pyclass(frozen, module = "icefloe._native", name = "CommitOptions")]
#[derive(Clone, Default)]
pub struct PyCommitOptions {
    branch: Option<String>,
    snapshot_properties: Vec<(String, String)>,
    validation: RowDeltaValidation,
    isolation_level: Option<String>,
}

#[pymethods]
impl PyCommitOptions {
    #[new]
    #[pyo3(signature = (*, branch = None, snapshot_properties = vec![], from_snapshot = None, conflict_filter = None, referenced_data_files = vec![], validate_deleted_files = false, no_conflicting_data_files = false, no_conflicting_delete_files = false, isolation_level = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        branch: Option<String>,
        snapshot_properties: Vec<(String, String)>,
        from_snapshot: Option<i64>,
        conflict_filter: Option<PyRef<'_, PyExpression>>,
        referenced_data_files: Vec<String>,
        validate_deleted_files: bool,
        no_conflicting_data_files: bool,
        no_conflicting_delete_files: bool,
        isolation_level: Option<String>,
    ) -> Self {
        PyCommitOptions {
            branch,
            snapshot_properties,
            validation: RowDeltaValidation {
                from_snapshot,
                conflict_filter: conflict_filter.map(|f| f.inner.clone()),
                referenced_data_files,
                validate_deleted_files,
                no_conflicting_data_files,
                no_conflicting_delete_files,
            },
            isolation_level,
        }
    }
}

impl PyCommitOptions {
    /// The producer committing to the branch, with the summary properties and validations.
    fn apply(self, mut p: SnapshotProducer) -> icefloe::Result<SnapshotProducer> {
        if let Some(b) = self.branch {
            p = p.to_branch(b);
        }
        for (k, v) in self.snapshot_properties {
            p.set_summary(k, v);
        }
        let v = p.validation_mut();
        *v = self.validation;
        if let Some(level) = self.isolation_level {
            IsolationLevel::parse(&level)?.apply(v);
        }
        Ok(p)
    }
}

fn commit_options(options: Option<PyRef<'_, PyCommitOptions>>) -> PyCommitOptions {
    options.map(|o| (*o).clone()).unwrap_or_default()
}

impl PyTransaction {
    fn add(&self, p: SnapshotProducer) -> icefloe::Result<()> {
        self.with(|tx| {
            tx.add_change(Box::new(p));
            Ok(())
        })
    }
}

#[pymethods]
impl PyTransaction {
    #[new]
    fn new(catalog: &PyCatalog, table: Ident, base: (String, PyRef<'_, PyTableMetadata>)) -> Self {
        let (metadata_location, md) = base;
        let state = TableState {
            metadata_location,
            metadata: Arc::clone(&md.inner),
        };
        let tx = Transaction::new(
            Arc::clone(&catalog.inner),
            TableIdent::new(table.0, table.1),
            state,
        );
        PyTransaction {
            base: Arc::clone(&md.inner),
            inner: Mutex::new(Some(tx)),
        }
    }

    fn set_properties(&self, py: Python<'_>, updates: Vec<(String, String)>) -> PyResult<()> {
        self.with(|tx| {
            tx.set_properties(updates)?;
            Ok(())
        })
        .py(py)
    }

    fn remove_properties(&self, py: Python<'_>, removals: Vec<String>) -> PyResult<()> {
        self.with(|tx| {
            tx.remove_properties(removals);
            Ok(())
        })
        .py(py)
    }

    /// Evolves the schema with the changes of `update` (made against the table's current
    /// schema; refused if the schema changed before the commit).
    fn update_schema(&self, py: Python<'_>, update: &PyUpdateSchema) -> PyResult<()> {
        let pending = update.pending(py)?;
        self.with(|tx| tx.update_schema(&pending).map(|_| ()))
            .py(py)
    }

    /// Makes `spec` the default spec, if the default spec and last partition id are still
    /// the given ones.
    fn update_spec(
        &self,
        py: Python<'_>,
        spec: &PyPartitionSpec,
        base_default_spec_id: i32,
        base_last_partition_id: i32,
    ) -> PyResult<()> {
        let spec = spec.inner.clone();
        self.with(|tx| {
            tx.update_spec(spec, base_default_spec_id, base_last_partition_id);
            Ok(())
        })
        .py(py)
    }

    /// Makes `order` the default sort order, if the default is still `base_order_id`.
    fn replace_sort_order(
        &self,
        py: Python<'_>,
        order: &PySortOrder,
        base_order_id: i32,
    ) -> PyResult<()> {
        let order = order.inner.clone();
        self.with(|tx| {
            tx.replace_sort_order(order, base_order_id);
            Ok(())
        })
        .py(py)
    }

    /// Appends data files: `files` are record batches of data-file rows (the columns of
    /// `manifest_entries_schema`, entry columns optional). `merge` selects a merge append.
    #[pyo3(signature = (files, options = None, *, spec_id = None, merge = false))]
    fn append_files(
        &self,
        py: Python<'_>,
        files: Vec<Bound<'_, PyAny>>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        spec_id: Option<i32>,
        merge: bool,
    ) -> PyResult<()> {
        let batches = batches(&files)?;
        let options = commit_options(options);
        py.detach(|| {
            let (spec_id, files) = self.files(&batches, spec_id)?;
            let mut p = if merge {
                SnapshotProducer::merge_append()
            } else {
                SnapshotProducer::fast_append()
            };
            for f in files {
                p.add_file_with_spec(spec_id, f);
            }
            self.add(options.apply(p)?)
        })
        .py(py)
    }

    /// Removes the data files at `paths` and adds `files` (either may be empty): a delete
    /// when nothing is added, an overwrite otherwise. Every removed file must be live.
    #[pyo3(signature = (paths, files = vec![], options = None, *, spec_id = None))]
    fn replace_files(
        &self,
        py: Python<'_>,
        paths: Vec<String>,
        files: Vec<Bound<'_, PyAny>>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        spec_id: Option<i32>,
    ) -> PyResult<()> {
        let batches = batches(&files)?;
        let options = commit_options(options);
        py.detach(|| {
            let (spec_id, files) = self.files(&batches, spec_id)?;
            let mut p = if files.is_empty() {
                SnapshotProducer::delete_files()
            } else {
                SnapshotProducer::overwrite_files()
            };
            for path in paths {
                p.delete_path(path);
            }
            for f in files {
                p.add_file_with_spec(spec_id, f);
            }
            self.add(options.apply(p)?)
        })
        .py(py)
    }

    /// Removes the files all of whose rows match `filter` and adds `files` (an overwrite
    /// by filter; a delete when there are none). A data file only some of whose rows may
    /// match fails the commit (`ValidationFailed`). With `validate_added_files_match`, every
    /// added file must match `filter` too.
    #[pyo3(signature = (filter, files = vec![], options = None, *, spec_id = None, validate_added_files_match = false))]
    fn replace_where(
        &self,
        py: Python<'_>,
        filter: PyRef<'_, PyExpression>,
        files: Vec<Bound<'_, PyAny>>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        spec_id: Option<i32>,
        validate_added_files_match: bool,
    ) -> PyResult<()> {
        let batches = batches(&files)?;
        let filter = filter.inner.clone();
        let options = commit_options(options);
        py.detach(|| {
            let (spec_id, files) = self.files(&batches, spec_id)?;
            let mut p = if files.is_empty() {
                SnapshotProducer::delete_files()
            } else {
                SnapshotProducer::overwrite_files()
            };
            p.delete_by_row_filter(filter);
            for f in files {
                p.add_file_with_spec(spec_id, f);
            }
            if validate_added_files_match {
                p.validate_added_files_match_filter();
            }
            self.add(options.apply(p)?)
        })
        .py(py)
    }

    /// A rewrite (Java's `RewriteFiles`): data files at `delete_paths` and the delete files
    /// `remove_delete_files` (rows) replaced by `files` and `delete_files`; new data files
    /// keep `data_sequence_number` when given, new delete files `delete_sequence_numbers`
    /// (one per row of `delete_files`, a rewrite of delete files).
    #[pyo3(signature = (delete_paths, files = vec![], remove_delete_files = vec![], delete_files = vec![], options = None, *, spec_id = None, data_sequence_number = None, delete_sequence_numbers = None))]
    #[allow(clippy::too_many_arguments)]
    fn rewrite_files(
        &self,
        py: Python<'_>,
        delete_paths: Vec<String>,
        files: Vec<Bound<'_, PyAny>>,
        remove_delete_files: Vec<Bound<'_, PyAny>>,
        delete_files: Vec<Bound<'_, PyAny>>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        spec_id: Option<i32>,
        data_sequence_number: Option<i64>,
        delete_sequence_numbers: Option<Vec<Option<i64>>>,
    ) -> PyResult<()> {
        let data = batches(&files)?;
        let deletes = batches(&delete_files)?;
        let removed = batches(&remove_delete_files)?;
        let options = commit_options(options);
        py.detach(|| {
            let (spec_id, data) = self.files(&data, spec_id)?;
            let (_, deletes) = self.files(&deletes, Some(spec_id))?;
            let mut p = SnapshotProducer::rewrite_files();
            for path in delete_paths {
                p.delete_path(path);
            }
            for b in &removed {
                for (path, offset) in delete_file_keys(b)? {
                    p.remove_delete_file(path, offset);
                }
            }
            for f in data {
                p.add_file_with_spec(spec_id, f);
            }
            let seqs = delete_sequence_numbers.unwrap_or_default();
            if !seqs.is_empty() && seqs.len() != deletes.len() {
                return Err(Error::invalid_argument(format!(
                    "delete_sequence_numbers: {} values for {} delete files",
                    seqs.len(),
                    deletes.len()
                )));
            }
            for (i, f) in deletes.into_iter().enumerate() {
                match seqs.get(i).copied().flatten() {
                    Some(seq) => p.add_delete_file_with_sequence_number(Some(spec_id), f, seq),
                    None => p.add_delete_file(Some(spec_id), f),
                };
            }
            if let Some(seq) = data_sequence_number {
                p.data_sequence_number(seq);
            }
            self.add(options.apply(p)?)
        })
        .py(py)
    }

    /// Rewrites manifests: by default as Java's Spark action `rewrite_manifests` (the
    /// manifests of `spec_id`, default the table's spec, sorted by partition or by the
    /// `sort_by` partition fields into target-sized manifests); with
    /// `cluster_by_partition`, one manifest per spec and partition (Java's
    /// `RewriteManifests.clusterBy`). See `icefloe::commit::ManifestLayout`.
    #[pyo3(signature = (options = None, *, spec_id = None, sort_by = None, cluster_by_partition = false))]
    fn rewrite_manifests(
        &self,
        py: Python<'_>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        spec_id: Option<i32>,
        sort_by: Option<Vec<String>>,
        cluster_by_partition: bool,
    ) -> PyResult<()> {
        let mut p = SnapshotProducer::rewrite_manifests();
        if cluster_by_partition {
            if spec_id.is_some() || sort_by.is_some() {
                return Err(PyValueError::new_err(
                    "spec_id and sort_by do not apply when clustering by partition",
                ));
            }
            p.manifest_layout(ManifestLayout::ByPartition);
        } else {
            p.manifest_layout(ManifestLayout::Compact { spec_id, sort_by });
        }
        let options = commit_options(options);
        options.apply(p).and_then(|p| self.add(p)).py(py)
    }

    /// A row delta (Java's `RowDelta`): data files and delete files (rows of the same form,
    /// `content` 1 or 2) added; delete files (rows, matched by path and DV offset) and data
    /// files (paths) removed; the validations of `options` run on every attempt.
    /// `data_file_positions`: (data file path, leaf manifest, ordinal) where the writer's
    /// plan of a v4 table found the files it changes (`v4_leaf`, `v4_ordinal` of the plan),
    /// so that the commit reads those entries instead of searching the leaves.
    /// `data_file_blocks`: (data file path, block offset, block length), the Avro block of
    /// the leaf holding a positioned file's entry (`v4_block_offset`, `v4_block_length`),
    /// so that the commit reads the leaf only up to that block's end.
    /// `plan`: batches of the plan the change was made from; the positions it holds
    /// (`scan::task_groups::tree_positions_of`) of the data files the change removes or
    /// adds deletes for are given to the commit as `data_file_positions` would be.
    #[pyo3(signature = (options = None, *, add_data_files = vec![], add_delete_files = vec![], remove_delete_files = vec![], remove_data_files = vec![], spec_id = None, data_file_positions = vec![], data_file_blocks = vec![], plan = vec![]))]
    // the files are keyword-only arguments, the commit settings one object
    #[allow(clippy::too_many_arguments)]
    fn row_delta(
        &self,
        py: Python<'_>,
        options: Option<PyRef<'_, PyCommitOptions>>,
        add_data_files: Vec<Bound<'_, PyAny>>,
        add_delete_files: Vec<Bound<'_, PyAny>>,
        remove_delete_files: Vec<Bound<'_, PyAny>>,
        remove_data_files: Vec<String>,
        spec_id: Option<i32>,
        data_file_positions: Vec<(String, String, i64)>,
        data_file_blocks: Vec<(String, u64, u64)>,
        plan: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let data = batches(&add_data_files)?;
        let deletes = batches(&add_delete_files)?;
        let removed = batches(&remove_delete_files)?;
        let plan = batches(&plan)?;
        let options = commit_options(options);
        py.detach(|| {
            let (spec_id, data) = self.files(&data, spec_id)?;
            let (_, deletes) = self.files(&deletes, Some(spec_id))?;
            let mut p = SnapshotProducer::row_delta();
            let blocks: std::collections::HashMap<String, (u64, u64)> = data_file_blocks
                .into_iter()
                .map(|(path, offset, length)| (path, (offset, length)))
                .collect();
            for (path, leaf, ordinal) in data_file_positions {
                let block = blocks.get(&path).map(|&(offset, length)| {
                    icefloe::manifest::v4::tree::LeafBlock { offset, length }
                });
                p.data_file_position(
                    path,
                    icefloe::manifest::v4::tree::TreePosition::Leaf {
                        manifest: std::sync::Arc::from(leaf),
                        ordinal,
                        block,
                    },
                );
            }
            // the plan's positions of the files this change touches (the others would be
            // ignored by the commit, but held)
            let touched: std::collections::HashSet<&str> = remove_data_files
                .iter()
                .map(String::as_str)
                .chain(
                    deletes
                        .iter()
                        .filter_map(|f| f.referenced_data_file.as_deref()),
                )
                .collect();
            for b in &plan {
                let positions = icefloe::scan::task_groups::tree_positions_of(
                    &b.schema(),
                    std::slice::from_ref(b),
                )?;
                for (path, pos) in positions {
                    if touched.contains(path.as_str()) {
                        p.data_file_position(path, pos);
                    }
                }
            }
            for f in data {
                p.add_file_with_spec(spec_id, f);
            }
            for f in deletes {
                p.add_delete_file(Some(spec_id), f);
            }
            for b in &removed {
                for (path, offset) in delete_file_keys(b)? {
                    p.remove_delete_file(path, offset);
                }
            }
            for path in remove_data_files {
                p.delete_path(path);
            }
            self.add(options.apply(p)?)
        })
        .py(py)
    }

    /// Hands over files written for this transaction: deleted if the commit fails (or the
    /// transaction is aborted), kept if its outcome is unknown (`Transaction::own_files`).
    fn own_files(&self, py: Python<'_>, paths: Vec<String>) -> PyResult<()> {
        self.with(|tx| {
            tx.own_files(paths);
            Ok(())
        })
        .py(py)
    }

    /// Gives the transaction up: the files handed over with `own_files` are deleted. A
    /// transaction already committed (or aborted) is left alone.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let tx = self
            .inner
            .lock()
            .map_err(|_| Error::unsupported("the transaction is poisoned"))
            .map(|mut g| g.take())
            .py(py)?;
        if let Some(tx) = tx {
            py.detach(|| tx.abort());
        }
        Ok(())
    }

    /// A transaction that creates the table (a staged create where the catalog has one:
    /// REST's `stage-create`); the table exists once it commits. `spec_json` and
    /// `sort_order_json` refer to the columns of `schema` by its ids.
    #[staticmethod]
    #[pyo3(signature = (catalog, table, schema, spec_json, sort_order_json, location, properties, *, format_version = None))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        py: Python<'_>,
        catalog: &PyCatalog,
        table: Ident,
        schema: &PySchema,
        spec_json: &str,
        sort_order_json: &str,
        location: Option<String>,
        properties: Vec<(String, String)>,
        format_version: Option<i32>,
    ) -> PyResult<Self> {
        let catalog: Arc<dyn Catalog> = Arc::clone(&catalog.inner);
        let schema = (*schema.inner).clone();
        py.detach(|| {
            let new = new_table(
                schema,
                spec_json,
                sort_order_json,
                location,
                properties,
                format_version,
            )?;
            let mut tx = Transaction::create(catalog, TableIdent::new(table.0, table.1), new);
            let base = tx.new_table_metadata()?;
            Ok(PyTransaction {
                base: Arc::new(base),
                inner: Mutex::new(Some(tx)),
            })
        })
        .py(py)
    }

    /// The metadata the transaction's data files are written against: the table's as it
    /// started, or for a table to be created, its staged metadata.
    #[getter]
    fn base_metadata(&self) -> PyTableMetadata {
        PyTableMetadata {
            inner: Arc::clone(&self.base),
        }
    }

    /// Commits every pending change as one new metadata file, retrying on conflicts.
    fn commit(&self, py: Python<'_>) -> PyResult<(String, PyTableMetadata)> {
        let tx = self
            .inner
            .lock()
            .map_err(|_| Error::unsupported("the transaction is poisoned"))
            .and_then(|mut g| {
                g.take()
                    .ok_or_else(|| Error::invalid_argument("the transaction was already committed"))
            })
            .py(py)?;
        py.detach(|| tx.commit()).py(py).map(table_state)
    }
}

/// Commits the transactions (each on its own table of one catalog) atomically
/// (`icefloe::commit::commit_transactions`: no automatic retry). Returns each table's new
/// `(metadata_location, metadata)`, in order. Every transaction is used up, committed or not.
#[pyfunction]
fn commit_transactions(
    py: Python<'_>,
    transactions: Vec<PyRef<'_, PyTransaction>>,
) -> PyResult<Vec<(String, PyTableMetadata)>> {
    let mut taken = Vec::with_capacity(transactions.len());
    for t in &transactions {
        let tx = t
            .inner
            .lock()
            .map_err(|_| Error::unsupported("the transaction is poisoned"))
            .and_then(|mut g| {
                g.take()
                    .ok_or_else(|| Error::invalid_argument("the transaction was already committed"))
            });
        match tx {
            Ok(tx) => taken.push(tx),
            Err(e) => {
                // the ones taken so far go back: nothing was committed
                for (t, tx) in transactions.iter().zip(taken) {
                    if let Ok(mut g) = t.inner.lock() {
                        *g = Some(tx);
                    }
                }
                return Err(e).py(py);
            }
        }
    }
    let states = py
        .detach(|| icefloe::commit::commit_transactions(taken))
        .py(py)?;
    Ok(states.into_iter().map(table_state).collect())
}

/// A new table from the arguments of the Python create calls (the spec and sort order as
/// JSON, referring to `schema`'s ids).
fn new_table(
    schema: icefloe::spec::schema::Schema,
    spec_json: &str,
    sort_order_json: &str,
    location: Option<String>,
    properties: Vec<(String, String)>,
    format_version: Option<i32>,
) -> icefloe::Result<NewTable> {
    let v = format_version.unwrap_or(icefloe::MAX_FORMAT_VERSION);
    Ok(NewTable {
        schema,
        spec: PartitionSpec::from_json(&parse_text(spec_json)?, "partition_spec", v.max(2))?,
        sort_order: SortOrder::from_json(&parse_text(sort_order_json)?, "sort_order")?,
        location,
        properties,
        format_version,
    })
}

/// Creates a table (or, with `replace`, creates or replaces it keeping its history).
/// `spec_json` and `sort_order_json` refer to the columns of `schema` by its ids.
#[pyfunction]
#[pyo3(signature = (catalog, table, schema, spec_json, sort_order_json, location, properties, *, format_version = None, replace = false))]
#[allow(clippy::too_many_arguments)]
fn create_table(
    py: Python<'_>,
    catalog: &PyCatalog,
    table: Ident,
    schema: &PySchema,
    spec_json: &str,
    sort_order_json: &str,
    location: Option<String>,
    properties: Vec<(String, String)>,
    format_version: Option<i32>,
    replace: bool,
) -> PyResult<(String, PyTableMetadata)> {
    let catalog: Arc<dyn Catalog> = Arc::clone(&catalog.inner);
    let schema = (*schema.inner).clone();
    py.detach(|| {
        let ident = TableIdent::new(table.0, table.1);
        let new = new_table(
            schema,
            spec_json,
            sort_order_json,
            location,
            properties,
            format_version,
        )?;
        let tx = if replace {
            Transaction::create_or_replace(catalog, ident, new)?
        } else {
            Transaction::create(catalog, ident, new)
        };
        tx.commit()
    })
    .py(py)
    .map(table_state)
}

/// The Iceberg schema of a pyarrow schema (`PARQUET:field_id` kept where present).
#[pyfunction]
fn schema_from_arrow(py: Python<'_>, schema: &Bound<'_, PyAny>) -> PyResult<PySchema> {
    let arrow = ArrowSchema::from_pyarrow_bound(schema)?;
    let s = arrow_to_schema(&arrow).py(py)?;
    Ok(PySchema { inner: Arc::new(s) })
}

/// (file_path, content_offset) of each row of a batch of delete-file rows.
fn delete_file_keys(batch: &RecordBatch) -> icefloe::Result<Vec<(String, Option<i64>)>> {
    use arrow::array::{Array, Int64Array, StringArray};
    let paths = batch
        .column_by_name("file_path")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| {
            Error::invalid_argument("delete files to remove need a string column file_path")
        })?;
    let offsets = match batch.column_by_name("content_offset") {
        None => None,
        Some(c) => Some(c.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
            Error::invalid_argument("content_offset of the delete files to remove must be int64")
        })?),
    };
    Ok((0..batch.num_rows())
        .map(|i| {
            let offset = offsets.and_then(|o| (!o.is_null(i)).then(|| o.value(i)));
            (paths.value(i).to_string(), offset)
        })
        .collect())
}

/// How many of the table's current manifests `rewrite_manifests` (the default layout)
/// would rewrite with these settings; 0 when there is nothing to do.
#[pyfunction]
#[pyo3(signature = (io, metadata, *, spec_id = None, sort_by = None))]
fn manifests_to_rewrite(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: &PyTableMetadata,
    spec_id: Option<i32>,
    sort_by: Option<Vec<String>>,
) -> PyResult<usize> {
    let md = metadata.inner.clone();
    py.detach(|| {
        icefloe::commit::manifests_to_rewrite(io.inner.as_ref(), &md, spec_id, sort_by.as_deref())
    })
    .py(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTransaction>()?;
    m.add_class::<PyCommitOptions>()?;
    m.add_function(wrap_pyfunction!(manifests_to_rewrite, m)?)?;
    m.add_function(wrap_pyfunction!(create_table, m)?)?;
    m.add_function(wrap_pyfunction!(commit_transactions, m)?)?;
    m.add_function(wrap_pyfunction!(schema_from_arrow, m)?)?;
    Ok(())
}
