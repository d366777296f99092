//! `rewrite_position_delete_files`: the planning rules of Java's
//! `RewritePositionDeleteFilesSparkAction` (`BinPackRewritePositionDeletePlanner` with
//! `SizeBasedFileRewritePlanner`), and the work of one read unit (Java's
//! `SparkRewritePositionDeleteRunner`), so that the same table and options give the groups,
//! the files and the commit Java's procedure makes.
//!
//! - The files are the live position delete files and DVs of the current snapshot whose
//!   partition may match the `where` filter (projected inclusively on each spec, as the
//!   `position_deletes` table's `baseTableFilter`); equality deletes are not touched.
//! - Unless `rewrite-all`, a file is a candidate when its size (a DV's blob size) is outside
//!   `[min-file-size-bytes, max-file-size-bytes]`; the target defaults to
//!   `write.delete.target-file-size-bytes` (64 MB).
//! - Candidates are grouped by spec and partition and packed in order into groups of at most
//!   `max-file-group-size-bytes`; unless `rewrite-all`, a group is kept with enough input
//!   files (more than one and at least `min-input-files`), more than one file and more bytes
//!   than the target, or more bytes than `max-file-size-bytes`.
//! - On a v3 table, nothing is planned unless some position delete file is not yet a DV
//!   (Java's `requiresRewriteToDVs`): the rewrite then turns the groups' deletes into DVs.
//! - A unit (the group's files packed at the group's split size, no open cost) is read, its
//!   deletes of data files that are no longer live in the partition dropped (dangling
//!   deletes go away, Java's semi-join with `data_files`), and written: v3 one Puffin file
//!   with a DV per data file; v2 one position delete file per data file (Spark's default
//!   `file` granularity) or, with `write.delete.granularity=partition`, one file for the unit.
//! - The caller commits a `replace` snapshot per batch of groups (Java's
//!   `RewritePositionDeletesCommitManager`): the group's delete files removed, the new ones
//!   added with the group's largest data sequence number, validated from the starting
//!   snapshot.
//!
//! Differences from Java: a delete file is never split inside a unit (Java splits Parquet
//! delete files larger than the split size at their row groups), deleted rows stored in a
//! position delete file's `row` column are not carried over (the column is optional), and
//! duplicate positions are written once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::RecordBatch;

use super::dangling_deletes::read_manifests_minimal;
use super::rewrite_data_files::{
    check, check_known_options, parse_bool, parse_int, table_size_property,
    RewriteDataFilesOptions, RewriteJobOrder, RewriteStrategy, SizeOptions,
    MAX_CONCURRENT_FILE_GROUP_REWRITES, MAX_FILE_GROUP_SIZE_BYTES, MAX_FILE_SIZE_BYTES,
    MIN_FILE_SIZE_BYTES, MIN_INPUT_FILES, PARTIAL_PROGRESS_ENABLED, PARTIAL_PROGRESS_MAX_COMMITS,
    REWRITE_ALL, REWRITE_JOB_ORDER, TARGET_FILE_SIZE_BYTES,
};
use crate::arrow::manifest::{batch_to_entries, entries_to_batch};
use crate::error::{Error, Result};
use crate::expr::{evaluate_tuple, inclusive_projection, Expression};
use crate::io::FileIO;
use crate::manifest::{
    DataContentType, DataFile, FileFormat, ManifestContent, ManifestEntry, ManifestFile,
};
use crate::puffin::dv::deletion_vector_blob;
use crate::puffin::{read_entry_deletion_vector, DeletionVector, DvEntry, PuffinWriter};
use crate::read::deletes::rows_of_position_delete_file;
use crate::scan::partition_key::PartitionKey;
use crate::scan::split::{content_size_in_bytes, pack, SplitOptions};
use crate::spec::table_metadata::TableMetadata;
use crate::write::delete_writer::position_delete_parquet;
use crate::write::location::LocationProvider;
use crate::write::position_deletes::set_position_delete_bounds;

/// `write.delete.target-file-size-bytes`, the default target of a delete rewrite.
const DELETE_TARGET_FILE_SIZE_BYTES: &str = "write.delete.target-file-size-bytes";
const DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT: i64 = 64 * 1024 * 1024;
/// `write.delete.granularity` (Spark's write default is `file`).
const DELETE_GRANULARITY: &str = "write.delete.granularity";
/// The options of one run, validated as Java's action validates them.
#[derive(Debug, Clone, PartialEq)]
pub struct RewritePositionDeletesOptions {
    pub target_file_size: i64,
    pub min_file_size: i64,
    pub max_file_size: i64,
    pub min_input_files: i64,
    pub rewrite_all: bool,
    pub max_group_size: i64,
    pub job_order: RewriteJobOrder,
    pub partial_progress_enabled: bool,
    pub max_commits: i64,
    pub max_concurrent_group_rewrites: i64,
}

impl RewritePositionDeletesOptions {
    /// The options from Java's names (the procedure's `options => map(...)`); unknown names
    /// are refused as Java refuses them.
    pub fn parse(
        metadata: &TableMetadata,
        options: &HashMap<String, String>,
    ) -> Result<RewritePositionDeletesOptions> {
        let valid = [
            TARGET_FILE_SIZE_BYTES,
            MIN_FILE_SIZE_BYTES,
            MAX_FILE_SIZE_BYTES,
            MIN_INPUT_FILES,
            REWRITE_ALL,
            MAX_FILE_GROUP_SIZE_BYTES,
            REWRITE_JOB_ORDER,
            MAX_CONCURRENT_FILE_GROUP_REWRITES,
            PARTIAL_PROGRESS_ENABLED,
            PARTIAL_PROGRESS_MAX_COMMITS,
        ];
        check_known_options(options, &valid, "BIN-PACK")?;
        let SizeOptions {
            target,
            min,
            max,
            min_input_files,
            max_group_size,
        } = SizeOptions::parse(
            options,
            table_size_property(
                metadata,
                DELETE_TARGET_FILE_SIZE_BYTES,
                DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT,
            )?,
        )?;
        let job_order = RewriteJobOrder::parse(
            options
                .get(REWRITE_JOB_ORDER)
                .map_or("none", String::as_str),
        )?;
        let max_concurrent_group_rewrites =
            parse_int(options, MAX_CONCURRENT_FILE_GROUP_REWRITES, 5)?;
        let max_commits = parse_int(options, PARTIAL_PROGRESS_MAX_COMMITS, 10)?;
        let partial_progress_enabled = parse_bool(options, PARTIAL_PROGRESS_ENABLED, false);
        check(max_concurrent_group_rewrites >= 1, || {
            format!("Cannot set {MAX_CONCURRENT_FILE_GROUP_REWRITES} to {max_concurrent_group_rewrites}, the value must be positive.")
        })?;
        check(!partial_progress_enabled || max_commits > 0, || {
            format!("Cannot set {PARTIAL_PROGRESS_MAX_COMMITS} to {max_commits}, the value must be positive when {PARTIAL_PROGRESS_ENABLED} is true")
        })?;
        Ok(RewritePositionDeletesOptions {
            target_file_size: target,
            min_file_size: min,
            max_file_size: max,
            min_input_files,
            rewrite_all: parse_bool(options, REWRITE_ALL, false),
            max_group_size,
            job_order,
            partial_progress_enabled,
            max_commits,
            max_concurrent_group_rewrites,
        })
    }

    /// The size rules shared with the data-file planner (`SizeBasedFileRewritePlanner`).
    fn sizes(&self, metadata: &TableMetadata) -> Result<RewriteDataFilesOptions> {
        let mut o = RewriteDataFilesOptions::parse(
            metadata,
            RewriteStrategy::BinPack,
            &HashMap::from([
                (
                    TARGET_FILE_SIZE_BYTES.to_string(),
                    self.target_file_size.to_string(),
                ),
                (
                    MIN_FILE_SIZE_BYTES.to_string(),
                    self.min_file_size.to_string(),
                ),
                (
                    MAX_FILE_SIZE_BYTES.to_string(),
                    self.max_file_size.to_string(),
                ),
            ]),
        )?;
        o.min_input_files = self.min_input_files;
        Ok(o)
    }

    fn keep_group(&self, group: &[PositionDeleteTask]) -> bool {
        let size = input_size(group);
        let n = group.len() as i64;
        (n > 1 && (n >= self.min_input_files || size > self.target_file_size))
            || size > self.max_file_size
    }
}

/// A live position delete file or DV (Java's `PositionDeletesScanTask`).
#[derive(Debug, Clone)]
pub struct PositionDeleteTask {
    pub spec_id: i32,
    pub data_sequence_number: i64,
    pub file: DataFile,
    /// Its size as a task: the file's, or a DV's blob size.
    pub length: i64,
}

fn input_size(tasks: &[PositionDeleteTask]) -> i64 {
    tasks.iter().map(|t| t.length).fold(0i64, i64::wrapping_add)
}

/// One group of delete files rewritten together (Java's `RewritePositionDeletesGroup`).
#[derive(Debug, Clone)]
pub struct RewritePositionDeletesGroup {
    /// 1-based, in planning order.
    pub global_index: usize,
    /// 1-based within its partition.
    pub partition_index: usize,
    pub spec_id: i32,
    pub partition: PartitionKey,
    pub tasks: Vec<PositionDeleteTask>,
    pub input_split_size: i64,
    pub expected_output_files: i64,
    /// The size new files roll at.
    pub max_output_file_size: i64,
    /// The data sequence number the new delete files get (the largest of the group's).
    pub max_rewritten_data_sequence_number: i64,
    /// The live data files of the group's partition: deletes of other files dangle.
    pub live_data_files: Arc<Vec<String>>,
}

impl RewritePositionDeletesGroup {
    /// The bytes of the group's delete files (a DV counts its blob).
    pub fn input_size(&self) -> i64 {
        input_size(&self.tasks)
    }

    /// The units the group is read and written in (Spark's read of the staged tasks at the
    /// group's split size with no open cost; one writer per unit).
    pub fn read_units(&self, metadata: &TableMetadata) -> Result<Vec<Vec<&PositionDeleteTask>>> {
        let lookback = usize::try_from(SplitOptions::from_table(metadata)?.lookback).unwrap_or(1);
        pack(
            self.tasks.iter(),
            self.input_split_size,
            lookback.max(1),
            true,
            |t| t.length,
        )
    }
}

/// What the planner chose.
#[derive(Debug)]
pub struct RewritePositionDeletesPlan {
    /// The snapshot planned from, which the commits validate from.
    pub starting_snapshot_id: Option<i64>,
    pub groups: Vec<RewritePositionDeletesGroup>,
    pub total_group_count: usize,
}

/// Plans a rewrite of the position delete files of the current snapshot whose partitions
/// may match `filter` (a row filter of the table; `None`: all).
pub fn plan_rewrite_position_deletes(
    io: &dyn FileIO,
    metadata: &TableMetadata,
    filter: Option<&Expression>,
    case_sensitive: bool,
    options: &RewritePositionDeletesOptions,
) -> Result<RewritePositionDeletesPlan> {
    let empty = |s: Option<i64>| RewritePositionDeletesPlan {
        starting_snapshot_id: s,
        groups: Vec::new(),
        total_group_count: 0,
    };
    if metadata.format_version >= 4 {
        return Err(Error::unsupported(
            "rewrite_position_delete_files: format version 4 tables are not supported",
        ));
    }
    let Some(snapshot) = metadata.current_snapshot() else {
        return Ok(empty(None));
    };
    let sizes = options.sizes(metadata)?;
    let Some(list) = snapshot.manifest_list.as_deref() else {
        return Ok(empty(Some(snapshot.snapshot_id)));
    };
    let schema = metadata.current_schema().ok_or_else(|| {
        Error::invalid_metadata("current-schema-id", "the table has no current schema")
    })?;
    // the filter projected on each spec's partition tuple
    let mut partition_filters = HashMap::new();
    if let Some(f) = filter {
        let bound = f.bind(schema, case_sensitive)?;
        for spec in &metadata.partition_specs {
            let ptype = spec.partition_type(schema)?;
            let projected = inclusive_projection(&bound, spec)?.bind_struct(&ptype, true)?;
            partition_filters.insert(spec.spec_id, projected);
        }
    }
    let read = read_manifests_minimal(io, list)?;

    let mut live_data: HashMap<PartitionKey, Vec<String>> = HashMap::new();
    let mut order: Vec<PartitionKey> = Vec::new();
    let mut by_partition: HashMap<PartitionKey, Vec<PositionDeleteTask>> = HashMap::new();
    for (
        ManifestFile {
            content,
            partition_spec_id: spec_id,
            ..
        },
        entries,
    ) in read
    {
        for e in entries.into_iter().filter(ManifestEntry::is_live) {
            let key = PartitionKey::new(spec_id, e.data_file.partition.clone())?;
            if content == ManifestContent::Data {
                live_data
                    .entry(key)
                    .or_default()
                    .push(e.data_file.file_path);
                continue;
            }
            if e.data_file.content != DataContentType::PositionDeletes {
                continue;
            }
            if let Some(p) = partition_filters.get(&spec_id) {
                if !evaluate_tuple(p, &e.data_file.partition)? {
                    continue;
                }
            }
            let seq = e.sequence_number.ok_or_else(|| {
                Error::invalid_metadata(
                    "sequence_number",
                    format!(
                        "the live entry of {} has no data sequence number",
                        e.data_file.file_path
                    ),
                )
            })?;
            let length = content_size_in_bytes(&e.data_file)?;
            by_partition
                .entry(key.clone())
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(PositionDeleteTask {
                    spec_id,
                    data_sequence_number: seq,
                    file: e.data_file,
                    length,
                });
        }
    }
    if metadata.format_version >= 3
        && !by_partition
            .values()
            .flatten()
            .any(|t| t.file.file_format != FileFormat::Puffin)
    {
        // every position delete is a DV already: Java's action has nothing to do
        return Ok(empty(Some(snapshot.snapshot_id)));
    }

    let mut groups = Vec::new();
    let mut total_group_count = 0;
    let mut global_index = 0;
    for key in order {
        let Some(tasks) = by_partition.remove(&key) else {
            continue;
        };
        let candidates: Vec<PositionDeleteTask> = if options.rewrite_all {
            tasks
        } else {
            tasks
                .into_iter()
                .filter(|t| t.length < options.min_file_size || t.length > options.max_file_size)
                .collect()
        };
        let packed = pack_groups(candidates, options.max_group_size);
        let kept: Vec<Vec<PositionDeleteTask>> = if options.rewrite_all {
            packed
        } else {
            packed
                .into_iter()
                .filter(|g| options.keep_group(g))
                .collect()
        };
        total_group_count += kept.len();
        let live = Arc::new(live_data.get(&key).cloned().unwrap_or_default());
        for (i, group) in kept.into_iter().enumerate() {
            global_index += 1;
            let size = input_size(&group);
            let max_seq = group
                .iter()
                .map(|t| t.data_sequence_number)
                .max()
                .unwrap_or(0);
            groups.push(RewritePositionDeletesGroup {
                global_index,
                partition_index: i + 1,
                spec_id: key.spec_id(),
                partition: key.clone(),
                input_split_size: sizes.input_split_size(size),
                expected_output_files: sizes.expected_output_files(size),
                max_output_file_size: sizes.write_max_file_size(),
                max_rewritten_data_sequence_number: max_seq,
                live_data_files: Arc::clone(&live),
                tasks: group,
            });
        }
    }
    options
        .job_order
        .sort(&mut groups, |g| g.input_size(), |g| g.tasks.len());
    Ok(RewritePositionDeletesPlan {
        starting_snapshot_id: Some(snapshot.snapshot_id),
        groups,
        total_group_count,
    })
}

/// Java's `BinPacking.ListPacker(maxGroupSize, 1, false)`: one open group at a time.
fn pack_groups(tasks: Vec<PositionDeleteTask>, max_size: i64) -> Vec<Vec<PositionDeleteTask>> {
    let mut out = Vec::new();
    let mut current: Vec<PositionDeleteTask> = Vec::new();
    let mut weight = 0i64;
    for task in tasks {
        if !current.is_empty() && weight.wrapping_add(task.length) > max_size {
            out.push(std::mem::take(&mut current));
            weight = 0;
        }
        weight = weight.wrapping_add(task.length);
        current.push(task);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The partition type of spec `spec_id`.
fn partition_type(md: &TableMetadata, spec_id: i32) -> Result<crate::spec::types::StructType> {
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_metadata("current-schema-id", "the table has no current schema")
    })?;
    let spec = md.spec_by_id(spec_id).ok_or_else(|| {
        Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
    })?;
    spec.partition_type(schema)
}

/// Delete files as data-file rows (the form of `entries_to_batch`) of spec `spec_id`.
pub fn delete_file_rows(
    md: &TableMetadata,
    spec_id: i32,
    files: &[DataFile],
) -> Result<RecordBatch> {
    let ptype = partition_type(md, spec_id)?;
    let entries: Vec<ManifestEntry> = files.iter().cloned().map(ManifestEntry::added).collect();
    entries_to_batch(&entries, &ptype)
}

/// The input of one unit, as shipped to an executor.
#[derive(Debug, Clone)]
pub struct PositionDeleteUnit {
    pub spec_id: i32,
    pub delete_files: Vec<DataFile>,
    pub live_data_files: Arc<Vec<String>>,
    pub max_output_file_size: i64,
}

impl PositionDeleteUnit {
    /// A unit of `group` (one of [`RewritePositionDeletesGroup::read_units`]).
    pub fn of(group: &RewritePositionDeletesGroup, tasks: &[&PositionDeleteTask]) -> Self {
        PositionDeleteUnit {
            spec_id: group.spec_id,
            delete_files: tasks.iter().map(|t| t.file.clone()).collect(),
            live_data_files: Arc::clone(&group.live_data_files),
            max_output_file_size: group.max_output_file_size,
        }
    }

    /// The unit as Arrow IPC stream bytes: its delete files as data-file rows, the spec id,
    /// the output size and the live data files in the schema metadata.
    pub fn to_ipc(&self, md: &TableMetadata) -> Result<Vec<u8>> {
        let batch = delete_file_rows(md, self.spec_id, &self.delete_files)?;
        let live = serde_json::to_string(self.live_data_files.as_ref())
            .map_err(|e| Error::invalid_argument(format!("cannot encode a unit: {e}")))?;
        let metadata: HashMap<String, String> = HashMap::from([
            ("icefloe.spec-id".to_string(), self.spec_id.to_string()),
            (
                "icefloe.max-output-file-size".to_string(),
                self.max_output_file_size.to_string(),
            ),
            ("icefloe.live-data-files".to_string(), live),
        ]);
        let schema = Arc::new(batch.schema().as_ref().clone().with_metadata(metadata));
        let batch = batch.with_schema(Arc::clone(&schema)).map_err(ipc_err)?;
        let mut out = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).map_err(ipc_err)?;
        w.write(&batch).map_err(ipc_err)?;
        w.finish().map_err(ipc_err)?;
        drop(w);
        Ok(out)
    }

    /// The unit [`Self::to_ipc`] encoded.
    pub fn from_ipc(md: &TableMetadata, bytes: &[u8]) -> Result<Self> {
        let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
            .map_err(ipc_err)?;
        let schema = reader.schema();
        let meta = |k: &str| {
            schema.metadata().get(k).cloned().ok_or_else(|| {
                Error::invalid_argument(format!("a position delete rewrite unit has no {k}"))
            })
        };
        let spec_id: i32 = meta("icefloe.spec-id")?
            .parse()
            .map_err(|_| Error::invalid_argument("a unit's spec id is not a number"))?;
        let max_output_file_size: i64 = meta("icefloe.max-output-file-size")?
            .parse()
            .map_err(|_| Error::invalid_argument("a unit's output size is not a number"))?;
        let live: Vec<String> = serde_json::from_str(&meta("icefloe.live-data-files")?)
            .map_err(|e| Error::invalid_argument(format!("a unit's live data files: {e}")))?;
        let ptype = partition_type(md, spec_id)?;
        let mut delete_files = Vec::new();
        for b in reader {
            let b = b.map_err(ipc_err)?;
            delete_files.extend(
                batch_to_entries(&b, &ptype)?
                    .into_iter()
                    .map(|e| e.data_file),
            );
        }
        Ok(PositionDeleteUnit {
            spec_id,
            delete_files,
            live_data_files: Arc::new(live),
            max_output_file_size,
        })
    }
}

fn ipc_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot encode a position delete rewrite unit: {e}"))
}

/// Reads a unit's deletes, drops those of data files that are not live, and writes them
/// anew: a v3 table gets one Puffin file `<prefix>-deletes.puffin` with a DV per data file,
/// a v2 table one Parquet position delete file per data file (`<prefix>-<n>-deletes.parquet`),
/// or one per unit with `write.delete.granularity=partition`. Returns the new delete files.
pub fn rewrite_position_delete_unit(
    io: &Arc<dyn FileIO>,
    md: &TableMetadata,
    unit: &PositionDeleteUnit,
    file_prefix: &str,
) -> Result<Vec<DataFile>> {
    let live: HashSet<&str> = unit.live_data_files.iter().map(String::as_str).collect();
    // data file -> its deleted positions, in path order (Java sorts by file_path, pos)
    let mut positions: BTreeMap<String, DeletionVector> = BTreeMap::new();
    for f in &unit.delete_files {
        if f.file_format == FileFormat::Puffin {
            let Some(target) = f.referenced_data_file.as_deref() else {
                return Err(Error::invalid_metadata(
                    "referenced_data_file",
                    "a deletion vector names no data file",
                )
                .in_file(&f.file_path));
            };
            if !live.contains(target) {
                continue;
            }
            let dv = read_entry_deletion_vector(io.as_ref(), &DvEntry::of(f)?)?;
            positions.entry(target.to_string()).or_default().merge(&dv);
        } else {
            let mut failed = None;
            rows_of_position_delete_file(io, &f.file_path, |path, pos| {
                if failed.is_some() || !live.contains(path) {
                    return;
                }
                let dv = positions.entry(path.to_string()).or_default();
                if let Err(e) = dv.insert(pos) {
                    failed = Some(e.in_file(&f.file_path));
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
    }
    if positions.is_empty() {
        return Ok(Vec::new());
    }
    let partition = unit
        .delete_files
        .first()
        .map(|f| f.partition.clone())
        .unwrap_or_default();
    let locations = LocationProvider::new(&md.location, &md.properties, None)?;
    if md.format_version >= 3 {
        let location = locations.new_data_location("", &format!("{file_prefix}-deletes.puffin"));
        let mut writer = PuffinWriter::new();
        let mut pending = Vec::new();
        for (path, dv) in &positions {
            let (blob, bytes) = deletion_vector_blob(path, dv)?;
            let meta = writer.add_blob(blob, &bytes)?;
            pending.push((path, meta.offset, meta.length, dv.cardinality()));
        }
        let written = writer.write(io.as_ref(), &location)?;
        let size = i64::try_from(written.file_size).unwrap_or(i64::MAX);
        return Ok(pending
            .into_iter()
            .map(|(path, offset, length, cardinality)| {
                let mut f = DataFile::new(
                    DataContentType::PositionDeletes,
                    location.clone(),
                    FileFormat::Puffin,
                    partition.clone(),
                    i64::try_from(cardinality).unwrap_or(i64::MAX),
                    size,
                );
                f.referenced_data_file = Some(path.clone());
                f.content_offset = i64::try_from(offset).ok();
                f.content_size_in_bytes = i64::try_from(length).ok();
                f
            })
            .collect());
    }
    let per_partition = md
        .properties
        .iter()
        .any(|(k, v)| k == DELETE_GRANULARITY && v.trim().eq_ignore_ascii_case("partition"));
    let mut out = Vec::new();
    if per_partition {
        let rows: Vec<(&str, i64)> = positions
            .iter()
            .flat_map(|(p, dv)| dv.iter().map(move |pos| (p.as_str(), pos)))
            .collect();
        let location = locations.new_data_location("", &format!("{file_prefix}-0-deletes.parquet"));
        let bytes = crate::write::delete_writer::position_delete_rows_parquet(&rows)?;
        io.write_new(&location, &bytes)?;
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            location,
            FileFormat::Parquet,
            partition,
            i64::try_from(rows.len()).unwrap_or(i64::MAX),
            i64::try_from(bytes.len()).unwrap_or(i64::MAX),
        );
        let paths = rows.iter().map(|r| r.0);
        let positions = rows.iter().map(|r| r.1);
        if let (Some(min_path), Some(max_path), Some(min_pos), Some(max_pos)) = (
            paths.clone().min(),
            paths.max(),
            positions.clone().min(),
            positions.max(),
        ) {
            set_position_delete_bounds(&mut f, (min_path, max_path), (min_pos, max_pos));
        }
        out.push(f);
        return Ok(out);
    }
    for (n, (path, dv)) in positions.iter().enumerate() {
        let sorted: Vec<i64> = dv.iter().collect();
        let location =
            locations.new_data_location("", &format!("{file_prefix}-{n}-deletes.parquet"));
        let bytes = position_delete_parquet(path, &sorted)?;
        io.write_new(&location, &bytes)?;
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            location,
            FileFormat::Parquet,
            partition.clone(),
            i64::try_from(sorted.len()).unwrap_or(i64::MAX),
            i64::try_from(bytes.len()).unwrap_or(i64::MAX),
        );
        if let (Some(first), Some(last)) = (sorted.first(), sorted.last()) {
            set_position_delete_bounds(&mut f, (path, path), (*first, *last));
        }
        f.referenced_data_file = Some(path.clone());
        out.push(f);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
#[path = "rewrite_position_deletes_tests.rs"]
mod tests;
