//! Metadata tables ("inspect"): the tables Java Iceberg 1.11 exposes as `db.t.<name>`
//! (`snapshots`, `files`, `partitions`, ...), with Java's schemas (field names, ids,
//! nullability, types) and values, as Arrow record batches. Driver side.
//!
//! The tables of the metadata alone ([`history`]) are built from [`TableMetadata`]; the
//! others read the manifest lists and manifests through the FileIO, the manifests in
//! parallel as planning does ([`files`], [`manifests`], [`partitions`]);
//! `position_deletes` also reads the delete files and DVs ([`position_deletes`]). The
//! files and entries tables append each decoded entry straight to Arrow column buffers
//! ([`files_builder`]), a batch per manifest ([`Inspect::batches`]); the small tables' rows are value trees ([`value`]) turned into
//! Arrow columns by the table's Iceberg schema, which [`crate::arrow::schema_to_arrow`]
//! turns into the Arrow schema (field ids in `PARQUET:field_id`).
//!
//! Time travel (a snapshot id, a ref or a time) applies where Java allows it: `manifests`,
//! `files`, `data_files`, `delete_files`, `entries`, `partitions` and `position_deletes`.
//! The `all_` tables
//! refuse it (as Java's `BaseAllMetadataTableScan`); `snapshots`, `history`,
//! `metadata_log_entries` and `refs` always show the whole table (Java ignores it there).

mod files;
mod files_builder;
mod history;
mod manifests;
mod partitions;
mod position_deletes;
mod select;
mod value;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema as ArrowSchema;

use crate::arrow::schema_to_arrow;
use crate::error::{Error, Result};
use crate::expr::Expression;
use crate::io::FileIO;
use crate::manifest::{
    read_manifest_list, visit_manifest, ManifestContent, ManifestFile, ManifestProjection,
    ManifestSource, ManifestStatus, ReadManifestOptions,
};
use crate::scan::{SnapshotSelection, TableScan};
use crate::spec::snapshot::Snapshot;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::StructType;
use crate::spec::Schema;
use files::{MetricColumn, PartitionProjection, RowContext};
use files_builder::FilesBuilder;
use value::{rows_to_batch, Value};

/// A metadata table, by Java's `MetadataTableType` names (lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataTableType {
    Snapshots,
    History,
    MetadataLogEntries,
    Refs,
    Manifests,
    AllManifests,
    Files,
    DataFiles,
    DeleteFiles,
    Entries,
    Partitions,
    AllFiles,
    AllDataFiles,
    AllDeleteFiles,
    AllEntries,
    PositionDeletes,
}

impl MetadataTableType {
    pub const ALL: [MetadataTableType; 16] = [
        MetadataTableType::Snapshots,
        MetadataTableType::History,
        MetadataTableType::MetadataLogEntries,
        MetadataTableType::Refs,
        MetadataTableType::Manifests,
        MetadataTableType::AllManifests,
        MetadataTableType::Files,
        MetadataTableType::DataFiles,
        MetadataTableType::DeleteFiles,
        MetadataTableType::Entries,
        MetadataTableType::Partitions,
        MetadataTableType::AllFiles,
        MetadataTableType::AllDataFiles,
        MetadataTableType::AllDeleteFiles,
        MetadataTableType::AllEntries,
        MetadataTableType::PositionDeletes,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MetadataTableType::Snapshots => "snapshots",
            MetadataTableType::History => "history",
            MetadataTableType::MetadataLogEntries => "metadata_log_entries",
            MetadataTableType::Refs => "refs",
            MetadataTableType::Manifests => "manifests",
            MetadataTableType::AllManifests => "all_manifests",
            MetadataTableType::Files => "files",
            MetadataTableType::DataFiles => "data_files",
            MetadataTableType::DeleteFiles => "delete_files",
            MetadataTableType::Entries => "entries",
            MetadataTableType::Partitions => "partitions",
            MetadataTableType::AllFiles => "all_files",
            MetadataTableType::AllDataFiles => "all_data_files",
            MetadataTableType::AllDeleteFiles => "all_delete_files",
            MetadataTableType::AllEntries => "all_entries",
            MetadataTableType::PositionDeletes => "position_deletes",
        }
    }

    /// The table of a name, case-insensitively (as Java's `MetadataTableType.from`).
    pub fn parse(name: &str) -> Option<MetadataTableType> {
        MetadataTableType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    fn is_all(self) -> bool {
        matches!(
            self,
            MetadataTableType::AllManifests
                | MetadataTableType::AllFiles
                | MetadataTableType::AllDataFiles
                | MetadataTableType::AllDeleteFiles
                | MetadataTableType::AllEntries
        )
    }
}

/// Which files of a manifest a files or entries table shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Any,
    Data,
    Deletes,
}

/// The metadata tables of one table: configured with builder methods, then
/// [`Inspect::table`] builds one.
#[derive(Clone)]
pub struct Inspect {
    metadata: Arc<TableMetadata>,
    io: Arc<dyn FileIO>,
    metadata_location: Option<String>,
    snapshot: SnapshotSelection,
    threads: usize,
    filter: Expression,
    case_sensitive: bool,
    selected: Option<Vec<String>>,
}

impl Inspect {
    pub fn new(metadata: Arc<TableMetadata>, io: Arc<dyn FileIO>) -> Inspect {
        Inspect {
            metadata,
            io,
            metadata_location: None,
            snapshot: SnapshotSelection::Current,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            filter: Expression::True,
            case_sensitive: true,
            selected: None,
        }
    }

    /// Keeps the rows the filter (on the metadata table's columns, nested ones by their
    /// full name: `partition.cat`, `readable_metrics.id.lower_bound`) matches, with SQL's
    /// semantics (as Spark filters the rows of Java's metadata tables; a null never matches
    /// a comparison).
    pub fn filter(mut self, filter: Expression) -> Inspect {
        self.filter = filter;
        self
    }

    /// Whether the filter's and the selection's column names match case.
    pub fn case_sensitive(mut self, case_sensitive: bool) -> Inspect {
        self.case_sensitive = case_sensitive;
        self
    }

    /// Only these columns (full names, as Java's `Schema.select`: a struct whole, or some
    /// of its fields); all of them when never called.
    pub fn select(mut self, columns: Vec<String>) -> Inspect {
        self.selected = Some(columns);
        self
    }

    /// The current metadata file (the last row of `metadata_log_entries`).
    pub fn metadata_location(mut self, location: impl Into<String>) -> Inspect {
        self.metadata_location = Some(location.into());
        self
    }

    /// Time travel (see the module documentation for the tables that take it).
    pub fn snapshot(mut self, selection: SnapshotSelection) -> Inspect {
        self.snapshot = selection;
        self
    }

    /// How many threads read manifests (at least one).
    pub fn threads(mut self, threads: usize) -> Inspect {
        self.threads = threads.max(1);
        self
    }

    fn current_schema(&self) -> Result<&Schema> {
        self.metadata.current_schema().ok_or_else(|| {
            Error::invalid_metadata("current-schema-id", "the table has no current schema")
        })
    }

    /// The Iceberg schema of a metadata table, and what its rows need.
    fn layout(&self, table: MetadataTableType) -> Result<Layout> {
        use MetadataTableType as T;
        let md = &self.metadata;
        let mut partition = StructType::new(Vec::new());
        let mut metrics = Vec::new();
        let schema = match table {
            T::Snapshots => history::snapshots_schema()?,
            T::History => history::history_schema()?,
            T::MetadataLogEntries => history::metadata_log_entries_schema()?,
            T::Refs => history::refs_schema()?,
            T::Manifests => manifests::manifests_schema(false)?,
            T::AllManifests => manifests::manifests_schema(true)?,
            T::Partitions => {
                partition = files::unified_partition_type(md, self.current_schema()?)?;
                partitions::partitions_schema(&partition)?
            }
            T::Files
            | T::DataFiles
            | T::DeleteFiles
            | T::AllFiles
            | T::AllDataFiles
            | T::AllDeleteFiles => {
                let current = self.current_schema()?;
                partition = files::unified_partition_type(md, current)?;
                let mut fields = files::data_file_fields(&partition);
                let (readable, columns) = files::readable_metrics(current, &fields)?;
                metrics = columns;
                fields.push(readable);
                Schema::new(0, fields, Vec::new())?
            }
            T::PositionDeletes => {
                let current = self.current_schema()?;
                partition = files::unified_partition_type(md, current)?;
                position_deletes::position_deletes_schema(md, current, &partition)?
            }
            T::Entries | T::AllEntries => {
                let current = self.current_schema()?;
                partition = files::unified_partition_type(md, current)?;
                let mut fields = files::entry_fields(files::data_file_fields(&partition));
                let (readable, columns) = files::readable_metrics(current, &fields)?;
                metrics = columns;
                fields.push(readable);
                Schema::new(0, fields, Vec::new())?
            }
        };
        let arrow = Arc::new(schema_to_arrow(&schema)?);
        Ok(Layout {
            schema,
            arrow,
            partition,
            metrics,
        })
    }

    /// The Iceberg schema of a metadata table (as Java's `Table.schema()` of it), of the
    /// selected columns when [`Inspect::select`] chose some.
    pub fn iceberg_schema(&self, table: MetadataTableType) -> Result<Schema> {
        let schema = self.layout(table)?.schema;
        match &self.selected {
            Some(columns) => schema.select(columns, self.case_sensitive),
            None => Ok(schema),
        }
    }

    /// The Arrow schema of a metadata table (field ids in `PARQUET:field_id`), of the
    /// selected columns when [`Inspect::select`] chose some.
    pub fn schema(&self, table: MetadataTableType) -> Result<Arc<ArrowSchema>> {
        Ok(Arc::new(schema_to_arrow(&self.iceberg_schema(table)?)?))
    }

    /// A metadata table as one record batch: its rows the filter keeps, its selected
    /// columns.
    pub fn table(&self, table: MetadataTableType) -> Result<RecordBatch> {
        let (schema, batches) = self.batches(table)?;
        join(&schema, &batches)
    }

    /// A metadata table as record batches, with their schema: its rows the filter keeps,
    /// its selected columns. The files and entries tables give a batch per manifest (in
    /// manifest-list order), as planning does, so that a million files are not copied once
    /// more into one batch; the other tables give one batch.
    pub fn batches(
        &self,
        table: MetadataTableType,
    ) -> Result<(Arc<ArrowSchema>, Vec<RecordBatch>)> {
        let batches = self.whole_table(table)?;
        let unfiltered = matches!(self.filter, Expression::True);
        if unfiltered && self.selected.is_none() {
            return Ok((self.layout(table)?.arrow, batches));
        }
        let batches = if unfiltered {
            batches
        } else {
            let full = self.layout(table)?.schema;
            let bound = self.filter.bind(&full, self.case_sensitive).map_err(|e| {
                Error::invalid_argument(format!(
                    "cannot filter the metadata table {}: {e}",
                    table.name()
                ))
            })?;
            let mut kept = Vec::with_capacity(batches.len());
            for batch in &batches {
                let mask = crate::read::filter::residual_mask(&bound, batch)?;
                let batch =
                    arrow_select::filter::filter_record_batch(batch, &mask).map_err(|e| {
                        Error::invalid_argument(format!("cannot filter a metadata table: {e}"))
                    })?;
                if batch.num_rows() > 0 {
                    kept.push(batch);
                }
            }
            kept
        };
        match &self.selected {
            None => Ok((self.layout(table)?.arrow, batches)),
            Some(_) => {
                let arrow = self.schema(table)?;
                let batches = batches
                    .iter()
                    .map(|b| select::project_batch(b, &arrow))
                    .collect::<Result<Vec<_>>>()?;
                Ok((arrow, batches))
            }
        }
    }

    /// A metadata table, every row and column.
    fn whole_table(&self, table: MetadataTableType) -> Result<Vec<RecordBatch>> {
        use MetadataTableType as T;
        if table.is_all() && self.snapshot != SnapshotSelection::Current {
            return Err(Error::invalid_argument(format!(
                "cannot select a snapshot in the metadata table {}",
                table.name()
            )));
        }
        let layout = self.layout(table)?;
        let md = &self.metadata;
        let rows = match table {
            T::Snapshots => history::snapshots_rows(md),
            T::History => history::history_rows(md),
            T::MetadataLogEntries => {
                history::metadata_log_entries_rows(md, self.metadata_location.as_deref())?
            }
            T::Refs => history::refs_rows(md),
            T::Manifests => {
                let specs = self.spec_types()?;
                let mut rows = Vec::new();
                if let Some(s) = self.selected_snapshot()? {
                    for m in self.manifests_of(s)? {
                        rows.push(manifests::manifest_row(&m, &specs, None)?);
                    }
                }
                rows
            }
            T::AllManifests => {
                let specs = self.spec_types()?;
                let mut rows = Vec::new();
                for s in &md.snapshots {
                    for m in self.manifests_of(s)? {
                        rows.push(manifests::manifest_row(&m, &specs, Some(s.snapshot_id))?);
                    }
                }
                rows
            }
            T::Partitions => self.partitions_rows(&layout)?,
            T::Files => {
                return self.files(&layout, self.snapshot_manifests()?, FileKind::Any, false)
            }
            T::DataFiles => {
                return self.files(&layout, self.snapshot_manifests()?, FileKind::Data, false)
            }
            T::DeleteFiles => {
                return self.files(
                    &layout,
                    self.snapshot_manifests()?,
                    FileKind::Deletes,
                    false,
                )
            }
            T::Entries => {
                return self.files(&layout, self.snapshot_manifests()?, FileKind::Any, true)
            }
            T::AllFiles => {
                return self.files(&layout, self.reachable_manifests()?, FileKind::Any, false)
            }
            T::AllDataFiles => {
                return self.files(&layout, self.reachable_manifests()?, FileKind::Data, false)
            }
            T::AllDeleteFiles => {
                return self.files(
                    &layout,
                    self.reachable_manifests()?,
                    FileKind::Deletes,
                    false,
                )
            }
            T::AllEntries => {
                return self.files(&layout, self.reachable_manifests()?, FileKind::Any, true)
            }
            T::PositionDeletes => return self.position_deletes(&layout),
        };
        Ok(vec![rows_to_batch(&rows, &layout.schema, &layout.arrow)?])
    }

    fn selected_snapshot(&self) -> Result<Option<&Snapshot>> {
        let scan =
            TableScan::new(self.metadata.clone(), self.io.clone()).snapshot(self.snapshot.clone());
        let id = scan.resolve_snapshot()?.map(|s| s.snapshot_id);
        Ok(id.and_then(|id| self.metadata.snapshot_by_id(id)))
    }

    /// Each spec with its partition type (bound to the current schema, or the newest that
    /// has its source columns).
    fn spec_types(&self) -> Result<manifests::SpecTypes> {
        let md = &self.metadata;
        let current = self.current_schema()?;
        let mut specs = HashMap::new();
        for spec in &md.partition_specs {
            let t = files::spec_partition_type(md, current, spec)?;
            specs.insert(spec.spec_id, (spec.clone(), t));
        }
        Ok(manifests::SpecTypes::new(specs))
    }

    fn manifests_of(&self, snapshot: &Snapshot) -> Result<Vec<ManifestFile>> {
        match (&snapshot.manifest_list, &snapshot.manifests) {
            (Some(list), _) => read_manifest_list(self.io.as_ref(), list),
            (None, None) => Ok(Vec::new()),
            (None, Some(_)) => Err(Error::unsupported(format!(
                "snapshot {} lists its manifests in the table metadata (format v1 without a \
                 manifest list); metadata tables need a manifest list",
                snapshot.snapshot_id
            ))),
        }
    }

    fn snapshot_manifests(&self) -> Result<Vec<ManifestFile>> {
        match self.selected_snapshot()? {
            Some(s) => self.manifests_of(s),
            None => Ok(Vec::new()),
        }
    }

    /// The manifests of every snapshot, each path once (Java keeps them in a set, by path).
    fn reachable_manifests(&self) -> Result<Vec<ManifestFile>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for s in &self.metadata.snapshots {
            for m in self.manifests_of(s)? {
                if seen.insert(m.manifest_path.clone()) {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    /// A files or entries table: each manifest read and turned into a batch on the
    /// reading threads, the batches then joined in manifest-list order.
    fn files(
        &self,
        layout: &Layout,
        manifests: Vec<ManifestFile>,
        kind: FileKind,
        entries: bool,
    ) -> Result<Vec<RecordBatch>> {
        let manifests: Vec<ManifestFile> = manifests
            .into_iter()
            .filter(|m| match kind {
                FileKind::Any => true,
                FileKind::Data => m.content == ManifestContent::Data,
                FileKind::Deletes => m.content == ManifestContent::Deletes,
            })
            .collect();
        let projections = self.projections(&layout.partition);
        let partitioned = !layout.partition.fields.is_empty();
        let batches = self.parallel(manifests.len(), |i| {
            let Some(m) = manifests.get(i) else {
                return Ok(None);
            };
            let Some(projection) = projections.get(&m.partition_spec_id) else {
                return Err(unknown_spec(m));
            };
            let ctx = RowContext {
                spec_id: m.partition_spec_id,
                partition: projection,
                partitioned,
                metrics: &layout.metrics,
            };
            let bytes = self.io.read(&m.manifest_path)?;
            let mut builder = FilesBuilder::new(ctx, &layout.partition, entries);
            builder.reserve(rows_hint(m, entries));
            let all = ManifestProjection::all();
            visit_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default()
                    .projection(&all)
                    .inherit_from(m),
                |e| {
                    if entries {
                        builder.append_entry(e)?;
                    } else if e.status != ManifestStatus::Deleted {
                        builder.append_file(&e.data_file)?;
                    }
                    Ok(())
                },
            )
            .map_err(|e| e.in_file(&m.manifest_path))?;
            Ok(Some(builder.finish(&layout.arrow)?))
        })?;
        Ok(batches
            .into_iter()
            .flatten()
            .filter(|b| b.num_rows() > 0)
            .collect())
    }

    /// The `position_deletes` table: the live delete files of the snapshot's delete
    /// manifests (read in parallel), then each position delete file or DV read on the
    /// threads, the batches joined in manifest order.
    fn position_deletes(&self, layout: &Layout) -> Result<Vec<RecordBatch>> {
        let manifests: Vec<ManifestFile> = self
            .snapshot_manifests()?
            .into_iter()
            .filter(|m| m.content == ManifestContent::Deletes)
            .collect();
        let per_manifest = self.parallel(manifests.len(), |i| {
            let Some(m) = manifests.get(i) else {
                return Ok(Vec::new());
            };
            let bytes = self.io.read(&m.manifest_path)?;
            let mut out = Vec::new();
            let minimal = ManifestProjection::minimal();
            visit_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default()
                    .projection(&minimal)
                    .inherit_from(m),
                |e| {
                    if e.status != ManifestStatus::Deleted
                        && e.data_file.content == crate::manifest::DataContentType::PositionDeletes
                    {
                        out.push((m.partition_spec_id, e.data_file.clone()));
                    }
                    Ok(())
                },
            )
            .map_err(|e| e.in_file(&m.manifest_path))?;
            Ok(out)
        })?;
        let files: Vec<(i32, crate::manifest::DataFile)> =
            per_manifest.into_iter().flatten().collect();
        let projections = self.projections(&layout.partition);
        let partitioned = !layout.partition.fields.is_empty();
        let batches = self.parallel(files.len(), |i| {
            let Some((spec_id, f)) = files.get(i) else {
                return Ok(None);
            };
            let Some(partition) = projections.get(spec_id) else {
                return Err(Error::invalid_metadata(
                    "partition_spec_id",
                    format!(
                        "delete file {} uses partition spec {spec_id}, which is not in the \
                         table metadata",
                        f.file_path
                    ),
                ));
            };
            position_deletes::delete_file_rows(
                &self.io,
                f,
                &position_deletes::FileConstants {
                    schema: &layout.arrow,
                    table_schema: &layout.schema,
                    partition,
                    partitioned,
                    spec_id: *spec_id,
                },
            )
        })?;
        Ok(batches
            .into_iter()
            .flatten()
            .filter(|b| b.num_rows() > 0)
            .collect())
    }

    /// Each spec's place in the unified partition struct.
    fn projections(&self, unified: &StructType) -> HashMap<i32, PartitionProjection> {
        self.metadata
            .partition_specs
            .iter()
            .map(|s| (s.spec_id, PartitionProjection::new(unified, Some(s))))
            .collect()
    }

    fn partitions_rows(&self, layout: &Layout) -> Result<Vec<Vec<Value>>> {
        let manifests = self.snapshot_manifests()?;
        let projections = self.projections(&layout.partition);
        // the entries of each manifest without stats, read in parallel, summed in order
        let per_manifest = self.parallel(manifests.len(), |i| {
            let Some(m) = manifests.get(i) else {
                return Ok(Vec::new());
            };
            let bytes = self.io.read(&m.manifest_path)?;
            let mut out = Vec::new();
            let minimal = ManifestProjection::minimal();
            visit_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default()
                    .projection(&minimal)
                    .inherit_from(m),
                |e| {
                    if e.status != ManifestStatus::Deleted {
                        out.push(e.clone());
                    }
                    Ok(())
                },
            )
            .map_err(|e| e.in_file(&m.manifest_path))?;
            Ok(out)
        })?;
        let mut sums = partitions::PartitionSums::new(&self.metadata);
        for (m, entries) in manifests.iter().zip(per_manifest) {
            let Some(projection) = projections.get(&m.partition_spec_id) else {
                return Err(unknown_spec(m));
            };
            for e in entries {
                let values = projection.project(&e.data_file.partition);
                sums.add(
                    &e,
                    m.partition_spec_id,
                    projection.projected_fields(),
                    values,
                )?;
            }
        }
        Ok(sums.rows(!layout.partition.fields.is_empty()))
    }

    /// Runs `f(0..n)` on up to `threads` threads (more when the FileIO reads more files at
    /// once, as planning does); results keep the index order, the first error wins.
    fn parallel<T: Send>(&self, n: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
        crate::parallel::map_indexed(
            self.threads.max(self.io.fetch_concurrency()),
            n,
            "a metadata table thread panicked",
            "reading stopped before every manifest was read",
            f,
        )
    }
}

/// How many rows a manifest's files or entries table batch will likely have, from the
/// manifest list's counts (a hint: capped, so that a wrong count costs little).
fn rows_hint(m: &ManifestFile, entries: bool) -> usize {
    let count = |n: Option<i32>| n.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    let mut rows = count(m.added_files_count) + count(m.existing_files_count);
    if entries {
        rows += count(m.deleted_files_count);
    }
    rows.min(1 << 16)
}

/// The batches as one.
fn join(schema: &Arc<ArrowSchema>, batches: &[RecordBatch]) -> Result<RecordBatch> {
    arrow_select::concat::concat_batches(schema, batches)
        .map_err(|e| Error::invalid_argument(format!("cannot join metadata table batches: {e}")))
}

fn unknown_spec(m: &ManifestFile) -> Error {
    Error::invalid_metadata(
        "partition_spec_id",
        format!(
            "manifest {} uses partition spec {}, which is not in the table metadata",
            m.manifest_path, m.partition_spec_id
        ),
    )
}

struct Layout {
    schema: Schema,
    arrow: Arc<ArrowSchema>,
    partition: StructType,
    metrics: Vec<MetricColumn>,
}

#[cfg(test)]
mod tests;
