//! The table scan: choose a snapshot, prune manifests with the partition filter of their
//! own spec, decode the surviving manifests in parallel, keep the entries whose partition
//! and metrics may match, attach the delete files that apply, and compute residuals.
//!
//! The steps follow Java's `DataTableScan`/`ManifestGroup`, whose results the conformance
//! tests compare with: a manifest is read only when it has added or existing files and
//! its partition summaries may match; an entry is kept when it is live, its partition
//! matches the inclusive projection and its metrics may match; delete files go through
//! the same filters before the delete index is built.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::expr::{
    evaluate_tuple, inclusive_projection, may_have_live_files, BoundExpression, Expression,
    InclusiveMetricsEvaluator, ManifestEvaluator, ResidualEvaluator,
};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest_bytes, read_manifest_list, DataContentType, ManifestContent, ManifestFile,
    ManifestReadOptions, ManifestStatus,
};
use crate::scan::delete_index::DeleteFileIndex;
use crate::scan::{FileScanTask, ScanFile};
use crate::spec::partition::PartitionSpec;
use crate::spec::snapshot::{Operation as SnapshotOperation, Snapshot};
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
    /// For an incremental append scan: the exclusive start snapshot.
    from_snapshot_exclusive: Option<i64>,
    incremental: bool,
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
            from_snapshot_exclusive: None,
            incremental: false,
        }
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

    /// Makes this an incremental append scan: the data files added by `append` snapshots
    /// after `from_exclusive` (or since the first snapshot when `None`) up to the selected
    /// snapshot, as Java's `IncrementalAppendScan`.
    pub fn appends_after(mut self, from_exclusive: Option<i64>) -> TableScan {
        self.incremental = true;
        self.from_snapshot_exclusive = from_exclusive;
        self
    }

    /// The snapshot this scan reads, or `None` for a table without snapshots.
    pub fn resolve_snapshot(&self) -> Result<Option<&Snapshot>> {
        let md = &self.metadata;
        Ok(match &self.snapshot {
            SnapshotSelection::Current => md.current_snapshot(),
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
    /// (as Java's `SnapshotUtil.schemaFor`).
    fn scan_schema(&self, snapshot: Option<&Snapshot>) -> Result<&Schema> {
        let md = &self.metadata;
        let current = md.current_schema().ok_or_else(|| {
            Error::invalid_metadata("current-schema-id", "the table has no current schema")
        })?;
        // incremental scans read with the table's schema, as Java's
        let use_snapshot_schema = !self.incremental
            && match &self.snapshot {
                SnapshotSelection::Current => false,
                SnapshotSelection::SnapshotId(_) | SnapshotSelection::AsOfTimestamp(_) => true,
                SnapshotSelection::Ref(name) => {
                    md.snapshot_ref(name).is_some_and(|r| !r.is_branch())
                }
            };
        if use_snapshot_schema {
            if let Some(schema) = snapshot
                .and_then(|s| s.schema_id)
                .and_then(|id| md.schema_by_id(id))
            {
                return Ok(schema);
            }
        }
        Ok(current)
    }

    /// Plans the scan: one task per data file that may hold matching rows.
    pub fn plan_files(&self) -> Result<ScanPlan> {
        let md = &self.metadata;
        let snapshot = self.resolve_snapshot()?;
        let schema = Arc::new(self.scan_schema(snapshot)?.clone());
        let projected_schema = Arc::new(match &self.selected {
            Some(cols) => schema.select(cols, self.case_sensitive)?,
            None => (*schema).clone(),
        });
        let filter = Arc::new(self.filter.bind(&schema, self.case_sensitive)?);
        let specs: HashMap<i32, Arc<PartitionSpec>> = md
            .partition_specs
            .iter()
            .map(|s| (s.spec_id, Arc::new(s.clone())))
            .collect();
        let mut plan = ScanPlan {
            snapshot_id: snapshot.map(|s| s.snapshot_id),
            schema: schema.clone(),
            projected_schema,
            filter: filter.clone(),
            specs: specs.clone(),
            // every spec's, also for a table without snapshots, so that an empty plan has
            // the partition struct of a full one
            partition_types: specs
                .iter()
                .map(|(id, spec)| Ok((*id, partition_type_for(md, &schema, spec)?)))
                .collect::<Result<_>>()?,
            tasks: Vec::new(),
            metrics: ScanMetrics::default(),
        };
        let Some(snapshot) = snapshot else {
            if self.incremental && self.from_snapshot_exclusive.is_some() {
                return Err(Error::invalid_argument(
                    "end snapshot is not set and the table has no current snapshot",
                ));
            }
            return Ok(plan);
        };
        let mut incremental_ids = None;
        let manifests = if self.incremental {
            // as Java's `BaseIncrementalAppendScan`: the data manifests that the append
            // snapshots added, read from each append's own manifest list, so that files a
            // later snapshot removed are still planned
            let appends = self.append_snapshots(snapshot)?;
            let ids: HashSet<i64> = appends.iter().map(|s| s.snapshot_id).collect();
            let mut seen = HashSet::new();
            let mut manifests = Vec::new();
            for s in appends {
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

        let ctx = PlanContext::new(md, &schema, &filter, &specs, self.case_sensitive)?;
        let mut selected: Vec<(usize, &ManifestFile)> = Vec::new();
        for m in &manifests {
            let is_data = m.content == ManifestContent::Data;
            if is_data {
                plan.metrics.total_data_manifests += 1;
            } else {
                plan.metrics.total_delete_manifests += 1;
            }
            let keep = may_have_live_files(m)
                && ctx.spec(m.partition_spec_id)?.manifest_evaluator.eval(m)?;
            match (keep, is_data) {
                (true, true) => plan.metrics.scanned_data_manifests += 1,
                (true, false) => plan.metrics.scanned_delete_manifests += 1,
                (false, true) => plan.metrics.skipped_data_manifests += 1,
                (false, false) => plan.metrics.skipped_delete_manifests += 1,
            }
            if keep {
                selected.push((selected.len(), m));
            }
        }
        // delete manifests first, so the index can be built while data manifests decode
        selected.sort_by_key(|(i, m)| (m.content == ManifestContent::Data, *i));

        let options = ReadOptions {
            data: ManifestReadOptions::scan(filter.field_ids()),
            // the delete index needs the bounds of equality columns and of `file_path` (a
            // position delete file for one data file has equal bounds); delete manifests are
            // few, so they are read with every count and bound
            deletes: ManifestReadOptions {
                stats: false,
                counts_for: Vec::new(),
                split_offsets: false,
                bounds_for: None,
            },
        };
        let results = self.decode_all(&selected, &ctx, &options, incremental_ids.as_ref())?;

        let mut data = Vec::new();
        let mut deletes = Vec::new();
        for r in results {
            plan.metrics.skipped_data_files += r.skipped_data;
            plan.metrics.skipped_delete_files += r.skipped_deletes;
            data.extend(r.data);
            deletes.extend(r.deletes);
        }
        plan.metrics.result_data_files = data.len();
        plan.metrics.result_delete_files = deletes.len();
        let index = DeleteFileIndex::new(deletes, &specs, &schema)?;
        let mut residuals = ResidualCache::default();
        plan.tasks.reserve(data.len());
        for file in data {
            let file = Arc::new(file);
            let file_deletes = if index.is_empty() {
                Vec::new()
            } else {
                index.for_data_file(&file)?
            };
            let residual = residuals.get(ctx.spec(file.spec_id)?, &file)?;
            plan.tasks
                .push(FileScanTask::whole_file(file, file_deletes, residual));
        }
        Ok(plan)
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
        // v1 snapshots without a list: the spec id comes from each manifest itself
        let mut out = Vec::with_capacity(paths.len());
        for path in paths {
            let bytes = self.io.read(path)?;
            let m = read_manifest_bytes(&bytes, &ManifestReadOptions::minimal())
                .map_err(|e| e.in_file(path))?;
            out.push(ManifestFile {
                manifest_path: path.clone(),
                manifest_length: bytes.len() as i64,
                partition_spec_id: m.metadata.partition_spec.spec_id,
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
        Ok(ancestors
            .into_iter()
            .filter(|s| s.operation() == Some(SnapshotOperation::Append))
            .collect())
    }

    /// Decodes the manifests on `threads` threads; results keep the input order.
    fn decode_all(
        &self,
        manifests: &[(usize, &ManifestFile)],
        ctx: &PlanContext,
        options: &ReadOptions,
        only_snapshots: Option<&HashSet<i64>>,
    ) -> Result<Vec<ManifestResult>> {
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<ManifestResult>>>> =
            manifests.iter().map(|_| Mutex::new(None)).collect();
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((_, m)) = manifests.get(i) else {
                break;
            };
            let r = self.decode_one(m, ctx, options, only_snapshots);
            let failed = r.is_err();
            if let Ok(mut slot) = slots[i].lock() {
                *slot = Some(r);
            }
            if failed {
                // stop handing out work; the first error is reported below
                next.store(manifests.len(), Ordering::Relaxed);
            }
        };
        let threads = self.threads.min(manifests.len()).max(1);
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(work);
            }
            work();
        });
        let mut out = Vec::with_capacity(manifests.len());
        for slot in slots {
            let r = slot
                .into_inner()
                .map_err(|_| Error::unsupported("a planning thread panicked"))?;
            match r {
                Some(r) => out.push(r?),
                // not decoded because another manifest failed; that error comes first
                None => continue,
            }
        }
        if out.len() < manifests.len() {
            return Err(Error::unsupported(
                "planning stopped before every manifest was read",
            ));
        }
        Ok(out)
    }

    fn decode_one(
        &self,
        m: &ManifestFile,
        ctx: &PlanContext,
        options: &ReadOptions,
        only_snapshots: Option<&HashSet<i64>>,
    ) -> Result<ManifestResult> {
        let spec = ctx.spec(m.partition_spec_id)?;
        let bytes = self.io.read(&m.manifest_path)?;
        let options = match m.content {
            ManifestContent::Data => &options.data,
            ManifestContent::Deletes => &options.deletes,
        };
        let mut manifest =
            read_manifest_bytes(&bytes, options).map_err(|e| e.in_file(&m.manifest_path))?;
        drop(bytes);
        manifest.inherit(m);
        let mut out = ManifestResult::default();
        let is_data_manifest = m.content == ManifestContent::Data;
        for mut e in manifest.entries {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            promote_partition(&mut e.data_file.partition, &spec.partition_type);
            if let Some(ids) = only_snapshots {
                // incremental scans read only the files those snapshots added
                if e.status != ManifestStatus::Added
                    || !e.snapshot_id.is_some_and(|id| ids.contains(&id))
                {
                    continue;
                }
            }
            let keep = evaluate_tuple(&spec.partition_filter, &e.data_file.partition)
                .map_err(|err| err.in_file(&m.manifest_path))?
                && ctx
                    .metrics
                    .eval(&e.data_file)
                    .map_err(|err| err.in_file(&m.manifest_path))?;
            let is_data = is_data_manifest && e.data_file.content == DataContentType::Data;
            if !keep {
                if is_data {
                    out.skipped_data += 1;
                } else {
                    out.skipped_deletes += 1;
                }
                continue;
            }
            let file = ScanFile {
                spec_id: m.partition_spec_id,
                data_sequence_number: e.sequence_number.unwrap_or(0),
                file_sequence_number: e.file_sequence_number,
                file: e.data_file,
            };
            if is_data {
                out.data.push(file);
            } else {
                out.deletes.push(Arc::new(file));
            }
        }
        Ok(out)
    }
}

/// What to decode of data manifests and of delete manifests.
struct ReadOptions {
    data: ManifestReadOptions,
    deletes: ManifestReadOptions,
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
}

impl PlanContext {
    fn new(
        md: &TableMetadata,
        schema: &Schema,
        filter: &BoundExpression,
        specs: &HashMap<i32, Arc<PartitionSpec>>,
        case_sensitive: bool,
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
