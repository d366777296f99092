//! The table scan: choose a snapshot, prune manifests with the partition filter of their
//! own spec, decode the surviving manifests in parallel, keep the entries whose partition
//! and metrics may match, attach the delete files that apply, and compute residuals.
//!
//! The steps follow Java's `DataTableScan`/`ManifestGroup`, whose results the conformance
//! tests compare with: a manifest (each path once) is read only when it has added or
//! existing files and its partition summaries may match; an entry is kept when it is live
//! and, unless the row filter is always true, its partition matches the inclusive
//! projection and its metrics may match; delete files go through the same filters before
//! the delete index is built. The filter is bound to the schema of the partition specs
//! for all of this (the current one, unless time travel to another snapshot).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::expr::{
    evaluate_tuple, inclusive_projection, may_have_live_files, BoundExpression, Expression,
    InclusiveMetricsEvaluator, ManifestEvaluator, ResidualEvaluator,
};
use crate::io::FileIO;
use crate::manifest::v4::leaf_block;
use crate::manifest::v4::tree::{self as v4_tree, read_snapshot_top, SnapshotTop, TreePosition};
use crate::manifest::v4::{ContentType as V4Content, TrackedFile, V4Layout};
use crate::manifest::{
    read_manifest, read_manifest_list, visit_manifest, DataContentType, DataFile, FileFormat,
    ManifestContent, ManifestEntry, ManifestFile, ManifestProjection, ManifestSource,
    ManifestStatus, ReadManifestOptions,
};
use crate::puffin::dv::DeletionVector;
use crate::scan::delete_index::DeleteFileIndex;
use crate::scan::{FileScanTask, ScanFile};
use crate::spec::name_mapping::DEFAULT_NAME_MAPPING_PROPERTY;
use crate::spec::partition::PartitionSpec;
use crate::spec::snapshot::{Operation as SnapshotOperation, Snapshot, MAIN_BRANCH};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::StructType;
use crate::spec::{Literal, PrimitiveType, Schema, Type};

/// Which snapshot a scan reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SnapshotSelection {
    /// The table's current snapshot (an empty plan when there is none).
    #[default]
    Current,
    SnapshotId(i64),
    /// The snapshot that was current at this time (milliseconds from the epoch), from
    /// the snapshot log.
    AsOfTimestamp(i64),
    /// A branch or tag by name.
    Ref(String),
}

/// A scan of a table, configured with builder methods and planned with
/// [`TableScan::plan_files`].
#[derive(Clone)]
pub struct TableScan {
    metadata: Arc<TableMetadata>,
    io: Arc<dyn FileIO>,
    filter: Expression,
    case_sensitive: bool,
    selected: Option<Vec<String>>,
    snapshot: SnapshotSelection,
    threads: usize,
    /// Manifests read at once (`None`: the FileIO's [`FileIO::fetch_concurrency`]).
    fetch_concurrency: Option<usize>,
    /// For an incremental append scan: the exclusive start snapshot.
    from_snapshot_exclusive: Option<i64>,
    incremental: bool,
    /// The metadata file, when the caller knows it (named by errors).
    metadata_location: Option<String>,
    /// Columns (field ids) whose stats the planned data files keep beyond those the filter
    /// needs (an aggregate push-down's MIN/MAX/COUNT read them, as Java's
    /// `includeColumnStats`).
    stats_for: Vec<i32>,
}

/// The result of planning: the files to read with their deletes and residuals, and what
/// readers need once per plan.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    /// The snapshot read; `None` for a table without snapshots.
    pub snapshot_id: Option<i64>,
    /// The schema the scan reads rows with (the snapshot's for time travel to a snapshot
    /// or tag, the table's current one otherwise), before column selection.
    pub schema: Arc<Schema>,
    /// The selected columns (the whole schema when no selection was made).
    pub projected_schema: Arc<Schema>,
    /// The row filter bound to `schema`.
    pub filter: Arc<BoundExpression>,
    /// Partition specs by id, for the tasks' `spec_id`.
    pub specs: HashMap<i32, Arc<PartitionSpec>>,
    /// The partition type of each spec (the type of the tasks' partition tuples).
    pub partition_types: HashMap<i32, StructType>,
    /// One task per data file (whole files; see `scan::split` to split and pack them).
    pub tasks: Vec<FileScanTask>,
    /// What planning did, for logs and tests.
    pub metrics: ScanMetrics,
    /// The table's `schema.name-mapping.default` property (name mapping JSON), which
    /// readers need for data files written without field ids.
    pub name_mapping: Option<String>,
    /// The table's format version (readers apply the version's defaults and promotions).
    pub format_version: i32,
}

impl ScanPlan {
    /// A plan with no tasks yet: the scan's schemas and filter, every spec of the table with
    /// its partition type (also for a table without snapshots, so that an empty plan has the
    /// partition struct of a full one) and the table's name mapping.
    pub(crate) fn without_tasks(
        md: &TableMetadata,
        snapshot_id: Option<i64>,
        schema: Arc<Schema>,
        projected_schema: Arc<Schema>,
        filter: Arc<BoundExpression>,
        spec_schema: &Schema,
    ) -> Result<Self> {
        let specs: HashMap<i32, Arc<PartitionSpec>> = md
            .partition_specs
            .iter()
            .map(|s| (s.spec_id, Arc::new(s.clone())))
            .collect();
        let partition_types = specs
            .iter()
            .map(|(id, spec)| Ok((*id, partition_type_for(md, spec_schema, spec)?)))
            .collect::<Result<_>>()?;
        Ok(ScanPlan {
            snapshot_id,
            schema,
            projected_schema,
            filter,
            specs,
            partition_types,
            tasks: Vec::new(),
            metrics: ScanMetrics::default(),
            name_mapping: md
                .properties
                .iter()
                .find(|(k, _)| k == DEFAULT_NAME_MAPPING_PROPERTY)
                .map(|(_, v)| v.clone()),
            format_version: md.format_version,
        })
    }

    /// The number of rows the plan reads, when the files' record counts alone give it
    /// (an aggregate push-down's `COUNT(*)`, as Java's `SparkScanBuilder` answers it from
    /// metadata): no row filter and no task with delete files. `None` otherwise: a
    /// filtered count depends on rows (a residual is exact only for partitions without
    /// nulls), and deletes remove rows the record counts still include.
    pub fn record_count_from_metadata(&self) -> Option<i64> {
        if !matches!(self.filter.as_ref(), BoundExpression::True) {
            return None;
        }
        let mut total: i64 = 0;
        for task in &self.tasks {
            if !task.deletes.is_empty() {
                return None;
            }
            total = total.checked_add(task.file.file.record_count)?;
        }
        Some(total)
    }
}

/// Counts of what planning read and skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanMetrics {
    pub total_data_manifests: usize,
    pub scanned_data_manifests: usize,
    pub skipped_data_manifests: usize,
    pub total_delete_manifests: usize,
    pub scanned_delete_manifests: usize,
    pub skipped_delete_manifests: usize,
    pub result_data_files: usize,
    pub skipped_data_files: usize,
    pub result_delete_files: usize,
    pub skipped_delete_files: usize,
}

impl TableScan {
    pub fn new(metadata: Arc<TableMetadata>, io: Arc<dyn FileIO>) -> TableScan {
        TableScan {
            metadata,
            io,
            filter: Expression::True,
            case_sensitive: true,
            selected: None,
            snapshot: SnapshotSelection::Current,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            fetch_concurrency: None,
            from_snapshot_exclusive: None,
            incremental: false,
            metadata_location: None,
            stats_for: Vec::new(),
        }
    }

    /// Keeps the stats (counts and bounds) of these columns in the planned data files.
    pub fn with_stats_for(mut self, field_ids: Vec<i32>) -> TableScan {
        self.stats_for = field_ids;
        self
    }

    /// The schema the scan reads rows with, before column selection (see
    /// [`ScanPlan::schema`]): the snapshot's for time travel to a snapshot id, a time or a
    /// tag, the current one otherwise. Reads no manifest.
    pub fn read_schema(&self) -> Result<Schema> {
        let snapshot = self.resolve_snapshot()?;
        Ok(self.scan_schema(snapshot)?.clone())
    }

    /// The metadata file `metadata` was read from, named by errors about the table as a
    /// whole (e.g. planning a format version that is read as metadata only).
    pub fn metadata_location(mut self, location: impl Into<String>) -> TableScan {
        self.metadata_location = Some(location.into());
        self
    }

    /// Adds a row filter (ANDed with any filter set before).
    pub fn filter(mut self, filter: Expression) -> TableScan {
        self.filter = Expression::and(self.filter, filter);
        self
    }

    pub fn case_sensitive(mut self, case_sensitive: bool) -> TableScan {
        self.case_sensitive = case_sensitive;
        self
    }

    /// Selects columns by full name (nested names with dots).
    pub fn select(mut self, columns: Vec<String>) -> TableScan {
        self.selected = Some(columns);
        self
    }

    pub fn snapshot(mut self, selection: SnapshotSelection) -> TableScan {
        self.snapshot = selection;
        self
    }

    /// How many threads decode manifests (at least one).
    pub fn threads(mut self, threads: usize) -> TableScan {
        self.threads = threads.max(1);
        self
    }

    /// How many manifests are read at once (at least one). By default the FileIO's
    /// [`FileIO::fetch_concurrency`] (`io.fetch-concurrency` for object stores), or
    /// `threads` where that is larger: on an object store a read is mostly waiting for
    /// the server, so more reads than cores are in flight, each thread decoding its
    /// manifest once it has arrived.
    pub fn fetch_concurrency(mut self, n: usize) -> TableScan {
        self.fetch_concurrency = Some(n.max(1));
        self
    }

    fn workers(&self) -> usize {
        self.fetch_concurrency
            .unwrap_or_else(|| self.io.fetch_concurrency())
            .max(self.threads)
    }

    /// Makes this an incremental append scan: the data files added by `append` snapshots
    /// after `from_exclusive` (or since the first snapshot when `None`) up to the selected
    /// snapshot, as Java's `IncrementalAppendScan`.
    pub fn appends_after(mut self, from_exclusive: Option<i64>) -> TableScan {
        self.incremental = true;
        self.from_snapshot_exclusive = from_exclusive;
        self
    }

    /// The snapshot this scan reads, or `None` for a table without snapshots. The `main`
    /// branch is the current snapshot (Java's `useRef("main")` keeps the scan as it is).
    pub fn resolve_snapshot(&self) -> Result<Option<&Snapshot>> {
        let md = &self.metadata;
        Ok(match &self.snapshot {
            SnapshotSelection::Current => md.current_snapshot(),
            SnapshotSelection::Ref(name) if name == MAIN_BRANCH => md.current_snapshot(),
            SnapshotSelection::SnapshotId(id) => {
                Some(md.snapshot_by_id(*id).ok_or_else(|| {
                    Error::not_found(format!("cannot find snapshot with id {id}"))
                })?)
            }
            SnapshotSelection::AsOfTimestamp(ts) => Some(md.snapshot_as_of(*ts)?),
            SnapshotSelection::Ref(name) => {
                let r = md
                    .snapshot_ref(name)
                    .ok_or_else(|| Error::not_found(format!("cannot find ref '{name}'")))?;
                Some(md.snapshot_by_id(r.snapshot_id).ok_or_else(|| {
                    Error::not_found(format!(
                        "ref '{name}' points to snapshot {}, which does not exist",
                        r.snapshot_id
                    ))
                })?)
            }
        })
    }

    /// The schema rows are read with: time travel to a snapshot id, a time or a tag uses
    /// the snapshot's schema; the current snapshot and branches use the current schema
    /// (as Java's `SnapshotUtil.schemaFor`, which fails when the snapshot's schema id is
    /// not a schema of the table), and so do incremental scans.
    fn scan_schema(&self, snapshot: Option<&Snapshot>) -> Result<&Schema> {
        let md = &self.metadata;
        let current = self.current_schema()?;
        let use_snapshot_schema = !self.incremental
            && match &self.snapshot {
                SnapshotSelection::Current => false,
                SnapshotSelection::SnapshotId(_) | SnapshotSelection::AsOfTimestamp(_) => true,
                SnapshotSelection::Ref(name) => {
                    md.snapshot_ref(name).is_some_and(|r| !r.is_branch())
                }
            };
        if use_snapshot_schema {
            if let Some(id) = snapshot.and_then(|s| s.schema_id) {
                return md.schema_by_id(id).ok_or_else(|| {
                    Error::invalid_metadata(
                        "schema-id",
                        format!("snapshot schema id {id} is not a schema of the table"),
                    )
                });
            }
        }
        Ok(current)
    }

    fn current_schema(&self) -> Result<&Schema> {
        self.metadata.current_schema().ok_or_else(|| {
            Error::invalid_metadata("current-schema-id", "the table has no current schema")
        })
    }

    /// The schema the partition specs are bound to, which planning binds the filter to:
    /// the table's specs are bound to the current schema, and only time travel to
    /// another snapshot than the current one rebinds them to the scan schema (Java's
    /// `SnapshotScan.specs`).
    fn spec_schema<'s>(
        &'s self,
        snapshot: Option<&Snapshot>,
        scan: &'s Schema,
    ) -> Result<&'s Schema> {
        let time_travel = !self.incremental
            && match &self.snapshot {
                SnapshotSelection::Current => false,
                SnapshotSelection::Ref(name) => name != MAIN_BRANCH,
                SnapshotSelection::SnapshotId(_) | SnapshotSelection::AsOfTimestamp(_) => true,
            };
        let current_id = self.metadata.current_snapshot().map(|s| s.snapshot_id);
        let other_snapshot =
            current_id.is_some() && snapshot.is_some_and(|s| Some(s.snapshot_id) != current_id);
        if time_travel && other_snapshot {
            Ok(scan)
        } else {
            self.current_schema()
        }
    }

    /// Plans the scan: one task per data file that may hold matching rows.
    pub fn plan_files(&self) -> Result<ScanPlan> {
        let (mut plan, parts) = self.plan_with(|_, tasks| Ok(tasks))?;
        plan.tasks = parts.into_iter().flatten().collect();
        Ok(plan)
    }

    /// Plans the scan and hands the tasks of each data manifest to `per_manifest` on the
    /// planning threads, as soon as they are known (with their deletes and residuals), so
    /// that a caller can turn them into something compact (e.g. Arrow) without holding
    /// every task of a large plan at once. Returns the plan (without tasks) and the
    /// results in manifest-list order.
    pub fn plan_with<T: Send>(
        &self,
        per_manifest: impl Fn(&ScanPlan, Vec<FileScanTask>) -> Result<T> + Sync,
    ) -> Result<(ScanPlan, Vec<T>)> {
        self.plan_streaming(|_| Ok(()), per_manifest)
    }

    /// As [`TableScan::plan_with`], and first calls `on_start` once with the plan (its
    /// schemas, specs and partition types; no tasks or counts yet) before any manifest
    /// is read, so that a consumer of the per-manifest results knows their form even
    /// when no manifest is read at all.
    pub fn plan_streaming<T: Send>(
        &self,
        on_start: impl FnOnce(&ScanPlan) -> Result<()>,
        per_manifest: impl Fn(&ScanPlan, Vec<FileScanTask>) -> Result<T> + Sync,
    ) -> Result<(ScanPlan, Vec<T>)> {
        let md = &self.metadata;
        md.check_supported("plan a scan of", self.metadata_location.as_deref())?;
        let snapshot = self.resolve_snapshot()?;
        let schema = Arc::new(self.scan_schema(snapshot)?.clone());
        let projected_schema = Arc::new(match &self.selected {
            Some(cols) => schema.select(cols, self.case_sensitive)?,
            None => (*schema).clone(),
        });
        let filter = Arc::new(self.filter.bind(&schema, self.case_sensitive)?);
        // planning binds the filter to the specs' schema (Java binds it per spec)
        let spec_schema = self.spec_schema(snapshot, &schema)?;
        let plan_filter = if spec_schema == &*schema {
            filter.clone()
        } else {
            Arc::new(self.filter.bind(spec_schema, self.case_sensitive)?)
        };
        let mut plan = ScanPlan::without_tasks(
            md,
            snapshot.map(|s| s.snapshot_id),
            schema.clone(),
            projected_schema,
            filter.clone(),
            spec_schema,
        )?;
        let specs = plan.specs.clone();
        on_start(&plan)?;
        let Some(snapshot) = snapshot else {
            if self.incremental && self.from_snapshot_exclusive.is_some() {
                return Err(Error::invalid_argument(
                    "end snapshot is not set and the table has no current snapshot",
                ));
            }
            return Ok((plan, Vec::new()));
        };
        let mut incremental_ids = None;
        // the data files v4 appends added, for an incremental scan: (spec id, entry)
        let mut v4_appended: Vec<(i32, ManifestEntry)> = Vec::new();
        // a v4 snapshot points to a root manifest (an upgraded table's older snapshots
        // still to manifest lists; the file's own metadata tells)
        let mut listed = None;
        if md.format_version >= 4 && !self.incremental {
            let partitioning = V4Layout::for_table(md)?;
            match read_snapshot_top(self.io.as_ref(), &partitioning, snapshot)? {
                SnapshotTop::Root(root) => {
                    return self.plan_v4(
                        plan,
                        root,
                        &partitioning,
                        spec_schema,
                        &plan_filter,
                        &specs,
                        per_manifest,
                    );
                }
                SnapshotTop::List(list) => listed = Some(list),
            }
        }
        let manifests = if let Some(list) = listed {
            list
        } else if self.incremental {
            // as Java's `BaseIncrementalAppendScan`: the data manifests that the append
            // snapshots added, read from each append's own manifest list, so that files a
            // later snapshot removed are still planned
            let appends = self.append_snapshots(snapshot)?;
            let ids: HashSet<i64> = appends.iter().map(|s| s.snapshot_id).collect();
            let mut seen = HashSet::new();
            let mut manifests = Vec::new();
            let partitioning = match md.format_version >= 4 {
                true => Some(V4Layout::for_table(md)?),
                false => None,
            };
            for s in appends {
                // a v4 append's own root says which files it added (in the root, or in
                // leaves it wrote); an upgraded table's older appends have manifest lists
                if let Some(partitioning) = &partitioning {
                    if let SnapshotTop::Root(root) =
                        read_snapshot_top(self.io.as_ref(), partitioning, s)?
                    {
                        for (_, spec, e) in
                            v4_tree::root_changes(self.io.as_ref(), partitioning, s, &root)?
                        {
                            if e.status == ManifestStatus::Added
                                && e.data_file.content == DataContentType::Data
                                && seen.insert(e.data_file.file_path.clone())
                            {
                                v4_appended.push((spec, e));
                            }
                        }
                        continue;
                    }
                }
                for m in self.manifests_of(s)? {
                    if m.content == ManifestContent::Data
                        && ids.contains(&m.added_snapshot_id)
                        && seen.insert(m.manifest_path.clone())
                    {
                        manifests.push(m);
                    }
                }
            }
            incremental_ids = Some(ids);
            manifests
        } else {
            self.manifests_of(snapshot)?
        };

        // without a row filter Java reads every live entry: no partition or metrics test
        // (which would drop files without rows)
        let filter_entries = folded(&self.filter) != Expression::True;
        let ctx = PlanContext::new(
            md,
            spec_schema,
            &plan_filter,
            &specs,
            self.case_sensitive,
            filter_entries,
        )?;
        // an incremental scan of v4 appends: their files, tested as v3 tests entries, with
        // no deletes (v3's incremental scan reads data manifests only, as Java's)
        let mut appended_files = Vec::new();
        for (spec, e) in v4_appended {
            let mut ignored = Vec::new();
            self.keep_v4_file(
                &ctx,
                spec,
                e,
                true,
                None,
                &mut appended_files,
                &mut ignored,
                &mut plan.metrics,
            )?;
        }
        let mut data_manifests: Vec<&ManifestFile> = Vec::new();
        let mut delete_manifests: Vec<&ManifestFile> = Vec::new();
        // a manifest listed twice is read once (Java keeps manifests in sets, by path)
        let mut seen: HashSet<(bool, &str)> = HashSet::with_capacity(manifests.len());
        for m in &manifests {
            let is_data = m.content == ManifestContent::Data;
            if is_data {
                plan.metrics.total_data_manifests += 1;
            } else {
                plan.metrics.total_delete_manifests += 1;
            }
            if !seen.insert((is_data, m.manifest_path.as_str())) {
                continue;
            }
            let keep = may_have_live_files(m)
                && ctx.spec(m.partition_spec_id)?.manifest_evaluator.eval(m)?;
            let counts = &mut plan.metrics;
            match (keep, is_data) {
                (true, true) => counts.scanned_data_manifests += 1,
                (true, false) => counts.scanned_delete_manifests += 1,
                (false, true) => counts.skipped_data_manifests += 1,
                (false, false) => counts.skipped_delete_manifests += 1,
            }
            match (keep, is_data) {
                (true, true) => data_manifests.push(m),
                (true, false) => delete_manifests.push(m),
                _ => {}
            }
        }

        // the delete index first, from whole delete manifests: it needs the `file_path`
        // bounds of position deletes and the stats of the equality columns (Java reads
        // delete manifests with every column and keeps those stats)
        let delete_options = ManifestProjection::all();
        let delete_results = self.parallel(delete_manifests.len(), |i| {
            self.decode_one(delete_manifests[i], &ctx, &delete_options, None, None, None)
        })?;
        let mut deletes = Vec::new();
        for r in delete_results {
            plan.metrics.skipped_delete_files += r.skipped_deletes;
            deletes.extend(r.deletes);
        }
        plan.metrics.result_delete_files = deletes.len();
        let index = DeleteFileIndex::new(deletes, &specs, &md.schemas)?;

        // data manifests with the stats of the filtered columns and, when equality deletes
        // are to be pruned, of their columns (Java then reads data files with stats)
        let mut stats_ids = plan_filter.field_ids();
        stats_ids.extend(index.equality_field_ids());
        stats_ids.extend(self.stats_for.iter().copied());
        stats_ids.sort_unstable();
        stats_ids.dedup();
        let data_options = ManifestProjection::scan(stats_ids);
        let mut out = Vec::with_capacity(data_manifests.len() + 1);
        if !appended_files.is_empty() {
            let mut residuals = ResidualCache::default();
            let mut tasks = Vec::with_capacity(appended_files.len());
            for file in appended_files {
                let residual = residuals.get(ctx.spec(file.spec_id)?, &file)?;
                tasks.push(FileScanTask::whole_file(
                    Arc::new(file),
                    Vec::new(),
                    residual,
                ));
            }
            plan.metrics.result_data_files += tasks.len();
            out.push(per_manifest(&plan, tasks)?);
        }
        let plan_ref = &plan;
        let parts = self.parallel(data_manifests.len(), |i| {
            let r = self.decode_one(
                data_manifests[i],
                &ctx,
                &data_options,
                incremental_ids.as_ref(),
                None,
                None,
            )?;
            let mut residuals = ResidualCache::default();
            let mut tasks = Vec::with_capacity(r.data.len());
            for file in r.data {
                let file = Arc::new(file);
                let file_deletes = if index.is_empty() {
                    Vec::new()
                } else {
                    index.for_data_file(&file)?
                };
                let residual = residuals.get(ctx.spec(file.spec_id)?, &file)?;
                tasks.push(FileScanTask::whole_file(file, file_deletes, residual));
            }
            let n = tasks.len();
            Ok((
                per_manifest(plan_ref, tasks)?,
                n,
                r.skipped_data,
                r.skipped_deletes,
            ))
        })?;
        for (t, kept, skipped_data, skipped_deletes) in parts {
            plan.metrics.result_data_files += kept;
            plan.metrics.skipped_data_files += skipped_data;
            plan.metrics.skipped_delete_files += skipped_deletes;
            out.push(t);
        }
        Ok((plan, out))
    }

    /// Plans a v4 snapshot from its root manifest: root-level files, and the leaves that
    /// may hold matching files (pruned by their partition summaries and counts), read in
    /// parallel with their manifest DVs applied. A data entry's DV joins the delete index
    /// as the DV delete file it is in v3, so delete matching, residuals and tasks are
    /// v3's. `per_manifest` gets the root's own data files first, then each leaf's.
    #[allow(clippy::too_many_arguments)]
    fn plan_v4<T: Send>(
        &self,
        mut plan: ScanPlan,
        root: Vec<TrackedFile>,
        partitioning: &V4Layout,
        spec_schema: &Schema,
        plan_filter: &BoundExpression,
        specs: &HashMap<i32, Arc<PartitionSpec>>,
        per_manifest: impl Fn(&ScanPlan, Vec<FileScanTask>) -> Result<T> + Sync,
    ) -> Result<(ScanPlan, Vec<T>)> {
        let md = &self.metadata;
        let filter_entries = folded(&self.filter) != Expression::True;
        let ctx = PlanContext::new(
            md,
            spec_schema,
            plan_filter,
            specs,
            self.case_sensitive,
            filter_entries,
        )?;
        let mut root_data: Vec<ScanFile> = Vec::new();
        let mut deletes: Vec<Arc<ScanFile>> = Vec::new();
        let mut data_leaves: Vec<&TrackedFile> = Vec::new();
        let mut delete_leaves: Vec<&TrackedFile> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for e in root.iter().filter(|e| v4_tree::is_live(&e.tracking)) {
            let spec_id = e.spec_id.unwrap_or(0);
            if e.content_type.is_manifest() {
                let is_data = e.content_type == V4Content::DataManifest;
                if is_data {
                    plan.metrics.total_data_manifests += 1;
                } else {
                    plan.metrics.total_delete_manifests += 1;
                }
                if !seen.insert(e.location.as_str()) {
                    continue;
                }
                let metrics = ctx.filter_entries.then_some(&ctx.metrics);
                let keep = may_have_live_files(&v4_tree::as_manifest_file(e))
                    && v4_tree::leaf_may_match(&ctx.spec(spec_id)?.manifest_evaluator, metrics, e)?;
                let counts = &mut plan.metrics;
                match (keep, is_data) {
                    (true, true) => {
                        counts.scanned_data_manifests += 1;
                        data_leaves.push(e);
                    }
                    (true, false) => {
                        counts.scanned_delete_manifests += 1;
                        delete_leaves.push(e);
                    }
                    (false, true) => counts.skipped_data_manifests += 1,
                    (false, false) => counts.skipped_delete_manifests += 1,
                }
                continue;
            }
            let entry = v4_tree::v3_entry(e);
            let is_data = e.content_type == V4Content::Data;
            self.keep_v4_file(
                &ctx,
                spec_id,
                entry,
                is_data,
                Some(TreePosition::Root),
                &mut root_data,
                &mut deletes,
                &mut plan.metrics,
            )?;
            if let Some(dv) = &e.deletion_vector {
                let d = v4_tree::v3_dv_entry(e, dv);
                self.keep_v4_file(
                    &ctx,
                    spec_id,
                    d,
                    false,
                    None,
                    &mut root_data,
                    &mut deletes,
                    &mut plan.metrics,
                )?;
            }
        }
        let io = self.io.as_ref();
        let read = |leaf: &TrackedFile,
                    options: &ManifestProjection|
         -> Result<(Vec<ScanFile>, Vec<Arc<ScanFile>>, ScanMetrics)> {
            let mut m = ScanMetrics::default();
            if leaf.format_version < 4 {
                // a v3 manifest carried into the root (an upgraded table): decoded as v3
                // planning decodes it, projected to the stats the plan needs, with the
                // leaf's manifest DV dropping the entries removed since
                let removed = v4_tree::leaf_manifest_dv(leaf)?;
                let mf = v4_tree::as_manifest_file(leaf);
                let leaf_location: Arc<str> = Arc::from(leaf.location.as_str());
                let r = self.decode_one(
                    &mf,
                    &ctx,
                    options,
                    None,
                    removed.as_ref(),
                    Some(&leaf_location),
                )?;
                m.skipped_data_files = r.skipped_data;
                m.skipped_delete_files = r.skipped_deletes;
                return Ok((r.data, r.deletes, m));
            }
            let mut data = Vec::new();
            let mut dels = Vec::new();
            let spec_id = leaf.spec_id.unwrap_or(0);
            let leaf_location: Arc<str> = Arc::from(leaf.location.as_str());
            // entries are decoded into one slot and tested there, as v3's manifests are
            // (`decode_one`): a kept file's parts are moved out, a dropped one's put back
            let bytes = io.read(&leaf.location)?;
            v4_tree::visit_leaf_bytes(&bytes, partitioning, leaf, Some(options), |ordinal, t| {
                let spec = t.spec_id.unwrap_or(spec_id);
                if let Some(dv) = &t.deletion_vector {
                    let d = v4_tree::v3_dv_entry(t, dv);
                    self.keep_v4_file(&ctx, spec, d, false, None, &mut data, &mut dels, &mut m)?;
                }
                let is_data = t.content_type == V4Content::Data
                    && leaf.content_type == V4Content::DataManifest;
                // where the file sits, for a row-level write's commit to read back
                let position = is_data.then(|| TreePosition::Leaf {
                    manifest: leaf_location.clone(),
                    ordinal: ordinal as i64,
                    block: None,
                });
                let entry = v4_tree::take_v3_entry(t);
                if let Some(dropped) = self.keep_v4_file(
                    &ctx, spec, entry, is_data, position, &mut data, &mut dels, &mut m,
                )? {
                    v4_tree::restore_v3_entry(t, dropped);
                }
                Ok(())
            })?;
            add_leaf_blocks(&mut data, &bytes);
            Ok((data, dels, m))
        };
        // delete leaves first, whole (as v3 reads delete manifests); their equality
        // deletes decide which column stats data leaves are decoded with, as in v3
        let delete_options = ManifestProjection::all();
        let delete_results = self.parallel(delete_leaves.len(), |i| {
            read(delete_leaves[i], &delete_options)
        })?;
        let mut groups = vec![root_data];
        for (data, dels, m) in delete_results {
            plan.metrics.skipped_data_files += m.skipped_data_files;
            plan.metrics.skipped_delete_files += m.skipped_delete_files;
            deletes.extend(dels);
            groups.push(data);
        }
        let mut stats_ids = plan_filter.field_ids();
        stats_ids.extend(
            deletes
                .iter()
                .flat_map(|d| d.file.equality_ids.iter().flatten().copied()),
        );
        stats_ids.extend(self.stats_for.iter().copied());
        stats_ids.sort_unstable();
        stats_ids.dedup();
        let data_options = ManifestProjection::scan(stats_ids);
        let data_results =
            self.parallel(data_leaves.len(), |i| read(data_leaves[i], &data_options))?;
        for (data, dels, m) in data_results {
            plan.metrics.skipped_data_files += m.skipped_data_files;
            plan.metrics.skipped_delete_files += m.skipped_delete_files;
            deletes.extend(dels);
            groups.push(data);
        }
        plan.metrics.result_delete_files = deletes.len();
        let index = DeleteFileIndex::new(deletes, specs, &md.schemas)?;
        // each group's files are moved into its tasks, once, by the thread that plans it
        let groups: Vec<std::sync::Mutex<Vec<ScanFile>>> =
            groups.into_iter().map(std::sync::Mutex::new).collect();
        let plan_ref = &plan;
        let parts = self.parallel(groups.len(), |i| {
            let files = std::mem::take(
                &mut *groups[i]
                    .lock()
                    .map_err(|_| Error::unsupported("a planning thread panicked"))?,
            );
            let mut residuals = ResidualCache::default();
            let mut tasks = Vec::with_capacity(files.len());
            for file in files {
                let file = Arc::new(file);
                let file_deletes = if index.is_empty() {
                    Vec::new()
                } else {
                    index.for_data_file(&file)?
                };
                let residual = residuals.get(ctx.spec(file.spec_id)?, &file)?;
                tasks.push(FileScanTask::whole_file(file, file_deletes, residual));
            }
            let n = tasks.len();
            Ok((per_manifest(plan_ref, tasks)?, n))
        })?;
        let mut out = Vec::with_capacity(parts.len());
        for (t, n) in parts {
            plan.metrics.result_data_files += n;
            out.push(t);
        }
        Ok((plan, out))
    }

    /// v3's entry test for a file of a v4 tree: kept when there is no filter, or its
    /// partition and metrics may match. A dropped entry is handed back, so that the
    /// caller can reuse its parts.
    #[allow(clippy::too_many_arguments)]
    fn keep_v4_file(
        &self,
        ctx: &PlanContext,
        spec_id: i32,
        mut e: ManifestEntry,
        is_data: bool,
        position: Option<TreePosition>,
        data: &mut Vec<ScanFile>,
        deletes: &mut Vec<Arc<ScanFile>>,
        metrics: &mut ScanMetrics,
    ) -> Result<Option<ManifestEntry>> {
        let spec = ctx.spec(spec_id)?;
        promote_partition(&mut e.data_file.partition, &spec.partition_type);
        let keep = !ctx.filter_entries
            || (evaluate_tuple(&spec.partition_filter, &e.data_file.partition)?
                && ctx.metrics.eval(&e.data_file)?);
        if !keep {
            if is_data {
                metrics.skipped_data_files += 1;
            } else {
                metrics.skipped_delete_files += 1;
            }
            return Ok(Some(e));
        }
        let file = ScanFile {
            spec_id,
            data_sequence_number: e.sequence_number.unwrap_or(0),
            file_sequence_number: e.file_sequence_number,
            file: e.data_file,
            tree_position: if is_data { position } else { None },
        };
        if is_data {
            data.push(file);
        } else {
            deletes.push(Arc::new(file));
        }
        Ok(None)
    }

    /// The manifests of a snapshot: from its manifest list, or for old v1 snapshots from
    /// the manifest locations embedded in the snapshot.
    fn manifests_of(&self, snapshot: &Snapshot) -> Result<Vec<ManifestFile>> {
        if let Some(list) = &snapshot.manifest_list {
            return read_manifest_list(self.io.as_ref(), list);
        }
        let Some(paths) = &snapshot.manifests else {
            return Ok(Vec::new());
        };
        // v1 snapshots without a list: Java reads these manifests with spec 0 whatever
        // they say (`BaseSnapshot` makes them `GenericManifestFile(file, 0, snapshotId)`)
        let mut out = Vec::with_capacity(paths.len());
        for path in paths {
            let bytes = self.io.read(path)?;
            read_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default().projection(&ManifestProjection::minimal()),
            )
            .map_err(|e| e.in_file(path))?;
            out.push(ManifestFile {
                manifest_path: path.clone(),
                manifest_length: bytes.len() as i64,
                partition_spec_id: 0,
                content: ManifestContent::Data,
                sequence_number: 0,
                min_sequence_number: 0,
                added_snapshot_id: snapshot.snapshot_id,
                added_files_count: None,
                existing_files_count: None,
                deleted_files_count: None,
                added_rows_count: None,
                existing_rows_count: None,
                deleted_rows_count: None,
                partitions: None,
                key_metadata: None,
                first_row_id: None,
            });
        }
        Ok(out)
    }

    /// The `append` snapshots after `from_snapshot_exclusive` up to `to`, newest first, as
    /// Java's `BaseIncrementalScan`: the start must be the parent of `to` or of one of its
    /// ancestors (it may have expired since); without a start, every ancestor of `to`.
    fn append_snapshots<'a>(&'a self, to: &'a Snapshot) -> Result<Vec<&'a Snapshot>> {
        Ok(self
            .ancestors_after(to)?
            .into_iter()
            .filter(|s| s.operation() == Some(SnapshotOperation::Append))
            .collect())
    }

    /// The snapshots after `from_snapshot_exclusive` up to `to`, newest first (Java's
    /// `SnapshotUtil.ancestorsBetween` after `BaseIncrementalScan`'s check of the start).
    fn ancestors_after<'a>(&'a self, to: &'a Snapshot) -> Result<Vec<&'a Snapshot>> {
        let ancestors = self.metadata.ancestors_of(to.snapshot_id);
        let ancestors = match self.from_snapshot_exclusive {
            None => ancestors,
            Some(from) => {
                let Some(pos) = ancestors
                    .iter()
                    .position(|s| s.parent_snapshot_id == Some(from))
                else {
                    return Err(Error::invalid_argument(format!(
                        "starting snapshot (exclusive) {from} is not a parent ancestor of end \
                         snapshot {}",
                        to.snapshot_id
                    )));
                };
                ancestors[..=pos].to_vec()
            }
        };
        Ok(ancestors)
    }

    /// Runs `f(0..n)` on [`TableScan::workers`] threads; results keep the index order. The first
    /// error stops the handing out of further work and is returned.
    fn parallel<T: Send>(&self, n: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
        crate::parallel::map_indexed(
            self.workers(),
            n,
            "a planning thread panicked",
            "planning stopped before every manifest was read",
            f,
        )
    }

    fn decode_one(
        &self,
        m: &ManifestFile,
        ctx: &PlanContext,
        options: &ManifestProjection,
        only_snapshots: Option<&HashSet<i64>>,
        removed: Option<&DeletionVector>,
        // a v3 manifest that is a leaf of a v4 root: its data files get their position
        v4_leaf: Option<&Arc<str>>,
    ) -> Result<ManifestResult> {
        let spec = ctx.spec(m.partition_spec_id)?;
        let bytes = self.io.read(&m.manifest_path)?;
        let mut out = ManifestResult::default();
        let is_data_manifest = m.content == ManifestContent::Data;
        let mut next_ordinal: i64 = 0;
        // entries are decoded into one slot and tested there: only kept files are taken
        // out of it, so dropped entries cost no allocation
        visit_manifest(
            ManifestSource::Bytes(&bytes),
            &ReadManifestOptions::default()
                .projection(options)
                .inherit_from(m),
            |e| {
                // the entry's position in the manifest, which a v4 manifest DV addresses
                let ordinal = next_ordinal;
                next_ordinal += 1;
                if e.status == ManifestStatus::Deleted
                    || removed.is_some_and(|dv| dv.contains(ordinal))
                {
                    return Ok(());
                }
                if let Some(ids) = only_snapshots {
                    // incremental scans read only the files those snapshots added
                    if e.status != ManifestStatus::Added
                        || !e.snapshot_id.is_some_and(|id| ids.contains(&id))
                    {
                        return Ok(());
                    }
                }
                promote_partition(&mut e.data_file.partition, &spec.partition_type);
                let keep = !ctx.filter_entries
                    || (evaluate_tuple(&spec.partition_filter, &e.data_file.partition)?
                        && ctx.metrics.eval(&e.data_file)?);
                let is_data = is_data_manifest && e.data_file.content == DataContentType::Data;
                if !keep {
                    if is_data {
                        out.skipped_data += 1;
                    } else {
                        out.skipped_deletes += 1;
                    }
                    return Ok(());
                }
                let file = ScanFile {
                    spec_id: m.partition_spec_id,
                    data_sequence_number: e.sequence_number.unwrap_or(0),
                    file_sequence_number: e.file_sequence_number,
                    file: std::mem::replace(&mut e.data_file, empty_data_file()),
                    tree_position: match v4_leaf {
                        Some(leaf) if is_data => Some(TreePosition::Leaf {
                            manifest: leaf.clone(),
                            ordinal,
                            block: None,
                        }),
                        _ => None,
                    },
                };
                if is_data {
                    out.data.push(file);
                } else {
                    out.deletes.push(Arc::new(file));
                }
                Ok(())
            },
        )
        .map_err(|e| e.in_file(&m.manifest_path))?;
        if v4_leaf.is_some() {
            add_leaf_blocks(&mut out.data, &bytes);
        }
        Ok(out)
    }
}

/// Gives the data files planned from a leaf the span of the Avro block holding their
/// entry, taken from the leaf's `bytes` by hopping over block headers (nothing is
/// decompressed), so that a row-level write's commit reads the leaf only up to that block.
/// A leaf whose blocks cannot be listed (it decoded, so it will not happen) gives none.
fn add_leaf_blocks(files: &mut [ScanFile], bytes: &[u8]) {
    if files.is_empty() {
        return;
    }
    let Ok(blocks) = leaf_block::leaf_blocks(bytes) else {
        return;
    };
    for f in files {
        if let Some(TreePosition::Leaf { ordinal, block, .. }) = &mut f.tree_position {
            *block = leaf_block::block_of(&blocks, *ordinal);
        }
    }
}

/// A data file that holds nothing allocated, to take a kept file out of the decoding slot.
fn empty_data_file() -> DataFile {
    DataFile::new(
        DataContentType::Data,
        String::new(),
        FileFormat::Parquet,
        Vec::new(),
        0,
        0,
    )
}

/// Partition values of files written before a source column was promoted (int to long,
/// float to double) hold the old type; they are compared as values of the new one.
fn promote_partition(values: &mut [Option<Literal>], partition_type: &StructType) {
    for (v, f) in values.iter_mut().zip(&partition_type.fields) {
        let promoted = match (v.as_ref(), &f.field_type) {
            (Some(Literal::Int(i)), Type::Primitive(PrimitiveType::Long)) => {
                Literal::Long(i64::from(*i))
            }
            (Some(Literal::Float(x)), Type::Primitive(PrimitiveType::Double)) => {
                Literal::Double(f64::from(*x))
            }
            _ => continue,
        };
        *v = Some(promoted);
    }
}

#[derive(Default)]
struct ManifestResult {
    data: Vec<ScanFile>,
    deletes: Vec<Arc<ScanFile>>,
    skipped_data: usize,
    skipped_deletes: usize,
}

/// What planning needs per partition spec, computed once.
struct SpecContext {
    spec: Arc<PartitionSpec>,
    partition_type: StructType,
    /// The inclusive projection of the row filter, bound to the partition type.
    partition_filter: BoundExpression,
    manifest_evaluator: ManifestEvaluator,
    residuals: ResidualEvaluator,
}

struct PlanContext {
    specs: HashMap<i32, SpecContext>,
    metrics: InclusiveMetricsEvaluator,
    /// Whether entries go through the partition and metrics tests (there is a filter).
    filter_entries: bool,
}

impl PlanContext {
    fn new(
        md: &TableMetadata,
        schema: &Schema,
        filter: &BoundExpression,
        specs: &HashMap<i32, Arc<PartitionSpec>>,
        case_sensitive: bool,
        filter_entries: bool,
    ) -> Result<PlanContext> {
        let mut out = HashMap::with_capacity(specs.len());
        for (id, spec) in specs {
            let partition_type = partition_type_for(md, schema, spec)?;
            let projected = inclusive_projection(filter, spec)?;
            let partition_filter = projected.bind_struct(&partition_type, case_sensitive)?;
            out.insert(
                *id,
                SpecContext {
                    spec: spec.clone(),
                    partition_type: partition_type.clone(),
                    manifest_evaluator: ManifestEvaluator::new(partition_filter.clone()),
                    partition_filter,
                    residuals: ResidualEvaluator::new(spec, schema, filter, case_sensitive)?,
                },
            );
        }
        Ok(PlanContext {
            specs: out,
            metrics: InclusiveMetricsEvaluator::new(filter.clone()),
            filter_entries,
        })
    }

    fn spec(&self, id: i32) -> Result<&SpecContext> {
        self.specs.get(&id).ok_or_else(|| {
            Error::invalid_metadata(
                "partition_spec_id",
                format!("a manifest uses partition spec {id}, which is not in the table metadata"),
            )
        })
    }
}

/// The partition type of a spec: with the scan schema, or, when a source column was
/// dropped since, with the newest schema that still has it.
fn partition_type_for(
    md: &TableMetadata,
    schema: &Schema,
    spec: &PartitionSpec,
) -> Result<StructType> {
    match spec.partition_type(schema) {
        Ok(t) => Ok(t),
        Err(first) => md
            .schemas
            .iter()
            .rev()
            .find_map(|s| spec.partition_type(s).ok())
            .ok_or(first),
    }
}

/// The expression as Java builds it (`Expressions.and`, `or` and `not` fold constants as
/// they go), to tell a filter that is always true from one that is not.
fn folded(e: &Expression) -> Expression {
    match e {
        Expression::And(l, r) => Expression::and(folded(l), folded(r)),
        Expression::Or(l, r) => Expression::or(folded(l), folded(r)),
        Expression::Not(c) => Expression::not(folded(c)),
        other => other.clone(),
    }
}

/// Residuals are shared between consecutive files of one partition: plans hold one
/// expression per distinct residual run, not one per file.
#[derive(Default)]
struct ResidualCache {
    last: HashMap<i32, Arc<BoundExpression>>,
}

impl ResidualCache {
    fn get(&mut self, spec: &SpecContext, file: &ScanFile) -> Result<Arc<BoundExpression>> {
        let r = spec.residuals.residual_for(&file.file.partition)?;
        if let Some(last) = self.last.get(&spec.spec.spec_id) {
            if **last == r {
                return Ok(last.clone());
            }
        }
        let r = Arc::new(r);
        self.last.insert(spec.spec.spec_id, r.clone());
        Ok(r)
    }
}

#[path = "changelog.rs"]
pub mod changelog;

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;
