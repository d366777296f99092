//! Compaction planning: which data files `rewrite_data_files` rewrites, in which groups,
//! into how many files — Java's `BinPackRewriteFilePlanner` (with `SizeBasedFileRewritePlanner`)
//! and the option rules of `RewriteDataFilesSparkAction`, so that the same table and options
//! give the groups Java's procedure rewrites.
//!
//! - The files are those of a scan of the starting snapshot with the `where` filter, whole
//!   files (residuals ignored: every row of a chosen file is rewritten), with their deletes.
//! - Unless `rewrite-all`, a file is a candidate when its size is outside
//!   `[min-file-size-bytes, max-file-size-bytes]`, it has at least `delete-file-threshold`
//!   deletes, or its file-scoped deletes cover at least `delete-ratio-threshold` of its rows.
//! - Candidates are grouped by partition (of the current spec; files of other specs together
//!   as unpartitioned) and packed in order into groups of at most `max-file-group-size-bytes`
//!   and `max-file-group-input-files` files (one open group at a time).
//! - Unless `rewrite-all`, a group is kept when it has enough input files (more than one
//!   and at least `min-input-files`), more than one file and more bytes than the target, more
//!   bytes than `max-file-size-bytes`, or a file with too many deletes.
//! - Each group gets Java's expected number of output files, the split size its files are
//!   read in ([`RewriteFileGroup::read_units`]; one output file per unit) and the size at
//!   which its writers roll (`target + (max - target) / 2`).
//!
//! Reading, writing and committing are the caller's (Python in-process or on Spark); the
//! commit replaces the group's data files and its DVs with the new files (Java's
//! `RewriteDataFilesCommitManager`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::expr::BoundExpression;
use crate::manifest::{DataContentType, FileFormat};
use crate::scan::partition_key::PartitionKey;
use crate::scan::plan_batches::tasks_to_batches;
use crate::scan::split::{plan_tasks, SplitOptions};
use crate::scan::{FileScanTask, ScanFile, ScanPlan, TableScan};
use crate::spec::schema::reserved;
use crate::spec::table_metadata::TableMetadata;

/// `write.target-file-size-bytes`, Java's default target of a rewrite.
const WRITE_TARGET_FILE_SIZE_BYTES: &str = "write.target-file-size-bytes";
const WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT: i64 = 512 * 1024 * 1024;
/// Java's `SizeBasedFileRewritePlanner.SPLIT_OVERHEAD`.
const SPLIT_OVERHEAD: i64 = 5 * 1024;

/// The planner's options (`SizeBasedFileRewritePlanner`, `BinPackRewriteFilePlanner`).
pub const TARGET_FILE_SIZE_BYTES: &str = "target-file-size-bytes";
pub const MIN_FILE_SIZE_BYTES: &str = "min-file-size-bytes";
pub const MAX_FILE_SIZE_BYTES: &str = "max-file-size-bytes";
pub const MIN_INPUT_FILES: &str = "min-input-files";
pub const REWRITE_ALL: &str = "rewrite-all";
pub const MAX_FILE_GROUP_SIZE_BYTES: &str = "max-file-group-size-bytes";
/// Not an option of Java 1.11's action (its procedure refuses it), so not one here either;
/// the planner keeps the limit at its default.
const MAX_FILE_GROUP_INPUT_FILES: &str = "max-file-group-input-files";
pub const DELETE_FILE_THRESHOLD: &str = "delete-file-threshold";
pub const DELETE_RATIO_THRESHOLD: &str = "delete-ratio-threshold";
pub const MAX_FILES_TO_REWRITE: &str = "max-files-to-rewrite";
pub const REWRITE_JOB_ORDER: &str = "rewrite-job-order";
pub const OUTPUT_SPEC_ID: &str = "output-spec-id";
/// The sort rewriter's (`SparkShufflingDataRewritePlanner`, `SparkShufflingFileRewriteRunner`).
pub const COMPRESSION_FACTOR: &str = "compression-factor";
pub const SHUFFLE_PARTITIONS_PER_FILE: &str = "shuffle-partitions-per-file";
/// The action's (`RewriteDataFiles`).
pub const PARTIAL_PROGRESS_ENABLED: &str = "partial-progress.enabled";
pub const PARTIAL_PROGRESS_MAX_COMMITS: &str = "partial-progress.max-commits";
pub const PARTIAL_PROGRESS_MAX_FAILED_COMMITS: &str = "partial-progress.max-failed-commits";
pub const MAX_CONCURRENT_FILE_GROUP_REWRITES: &str = "max-concurrent-file-group-rewrites";
pub const USE_STARTING_SEQUENCE_NUMBER: &str = "use-starting-sequence-number";
pub const REMOVE_DANGLING_DELETES: &str = "remove-dangling-deletes";

/// How the groups' rows are laid out in the new files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteStrategy {
    /// Rows in the order they are read (Java's `binpack`).
    BinPack,
    /// Rows sorted within each group (Java's `sort`).
    Sort,
}

/// The order the groups run in (Java's `RewriteJobOrder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteJobOrder {
    None,
    BytesAsc,
    BytesDesc,
    FilesAsc,
    FilesDesc,
}

impl RewriteJobOrder {
    /// Sorts `groups` in this order by their input bytes or file count; the sort is
    /// stable, so ties keep planning order, as Java's sorted stream.
    pub(crate) fn sort<G>(
        self,
        groups: &mut [G],
        bytes: impl Fn(&G) -> i64,
        files: impl Fn(&G) -> usize,
    ) {
        match self {
            RewriteJobOrder::None => {}
            RewriteJobOrder::BytesAsc => groups.sort_by_key(bytes),
            RewriteJobOrder::BytesDesc => groups.sort_by_key(|g| std::cmp::Reverse(bytes(g))),
            RewriteJobOrder::FilesAsc => groups.sort_by_key(files),
            RewriteJobOrder::FilesDesc => groups.sort_by_key(|g| std::cmp::Reverse(files(g))),
        }
    }

    /// Java's `RewriteJobOrder.fromName`.
    pub fn parse(name: &str) -> Result<RewriteJobOrder> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "none" => RewriteJobOrder::None,
            "bytes-asc" => RewriteJobOrder::BytesAsc,
            "bytes-desc" => RewriteJobOrder::BytesDesc,
            "files-asc" => RewriteJobOrder::FilesAsc,
            "files-desc" => RewriteJobOrder::FilesDesc,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "Invalid rewrite job order name: {name}"
                )))
            }
        })
    }
}

/// The options of one `rewrite_data_files` run, validated as Java validates them.
#[derive(Debug, Clone, PartialEq)]
pub struct RewriteDataFilesOptions {
    pub strategy: RewriteStrategy,
    pub target_file_size: i64,
    pub min_file_size: i64,
    pub max_file_size: i64,
    pub min_input_files: i64,
    pub rewrite_all: bool,
    pub max_group_size: i64,
    pub max_group_count: i64,
    pub delete_file_threshold: i64,
    pub delete_ratio_threshold: f64,
    pub max_files_to_rewrite: Option<i64>,
    pub job_order: RewriteJobOrder,
    pub output_spec_id: i32,
    pub compression_factor: f64,
    pub partial_progress_enabled: bool,
    pub max_commits: i64,
    pub max_failed_commits: i64,
    pub max_concurrent_group_rewrites: i64,
    pub use_starting_sequence_number: bool,
    pub remove_dangling_deletes: bool,
}

/// The options of Java's size-based rewrite planners (`SizeBasedFileRewritePlanner`), which
/// the data-file and the position-delete rewrites share: target, min and max file sizes,
/// min input files and max group size, with Java's defaults and checks.
pub(crate) struct SizeOptions {
    pub target: i64,
    pub min: i64,
    pub max: i64,
    pub min_input_files: i64,
    pub max_group_size: i64,
}

impl SizeOptions {
    /// Parses and checks them; `default_target` is the table's target size property.
    pub(crate) fn parse(options: &HashMap<String, String>, default_target: i64) -> Result<Self> {
        let target = parse_long(options, TARGET_FILE_SIZE_BYTES, default_target)?;
        let min = parse_long(options, MIN_FILE_SIZE_BYTES, (target as f64 * 0.75) as i64)?;
        let max = parse_long(options, MAX_FILE_SIZE_BYTES, (target as f64 * 1.80) as i64)?;
        check(target > 0, || {
            format!("'{TARGET_FILE_SIZE_BYTES}' is set to {target} but must be > 0")
        })?;
        check(min >= 0, || {
            format!("'{MIN_FILE_SIZE_BYTES}' is set to {min} but must be >= 0")
        })?;
        check(target > min, || {
            format!("'{TARGET_FILE_SIZE_BYTES}' ({target}) must be > '{MIN_FILE_SIZE_BYTES}' ({min}), all new files will be smaller than the min threshold")
        })?;
        check(target < max, || {
            format!("'{TARGET_FILE_SIZE_BYTES}' ({target}) must be < '{MAX_FILE_SIZE_BYTES}' ({max}), all new files will be larger than the max threshold")
        })?;
        let min_input_files = parse_int(options, MIN_INPUT_FILES, 5)?;
        check(min_input_files > 0, || {
            format!("'{MIN_INPUT_FILES}' is set to {min_input_files} but must be > 0")
        })?;
        let max_group_size = parse_long(options, MAX_FILE_GROUP_SIZE_BYTES, 100 << 30)?;
        check(max_group_size > 0, || {
            format!("'{MAX_FILE_GROUP_SIZE_BYTES}' is set to {max_group_size} but must be > 0")
        })?;
        Ok(SizeOptions {
            target,
            min,
            max,
            min_input_files,
            max_group_size,
        })
    }
}

/// A table's size property (a target file size), or `default` when unset; a value that is
/// not a number is an error naming the property (Java's `PropertyUtil.propertyAsLong`).
pub(crate) fn table_size_property(
    metadata: &TableMetadata,
    key: &str,
    default: i64,
) -> Result<i64> {
    match metadata.property(key) {
        Some(v) => v.trim().parse::<i64>().map_err(|_| {
            Error::invalid_metadata(format!("properties.{key}"), format!("not a number: '{v}'"))
        }),
        None => Ok(default),
    }
}

pub(crate) fn parse_long(
    options: &HashMap<String, String>,
    key: &str,
    default: i64,
) -> Result<i64> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map_err(|_| Error::invalid_argument(format!("option '{key}' is not a number: '{v}'"))),
    }
}

pub(crate) fn parse_int(options: &HashMap<String, String>, key: &str, default: i64) -> Result<i64> {
    let v = parse_long(options, key, default)?;
    i32::try_from(v)
        .map(i64::from)
        .map_err(|_| Error::invalid_argument(format!("option '{key}' is out of range: {v}")))
}

fn parse_double(options: &HashMap<String, String>, key: &str, default: f64) -> Result<f64> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<f64>()
            .map_err(|_| Error::invalid_argument(format!("option '{key}' is not a number: '{v}'"))),
    }
}

pub(crate) fn parse_bool(options: &HashMap<String, String>, key: &str, default: bool) -> bool {
    // Java's Boolean.parseBoolean: "true" in any case, anything else false
    options
        .get(key)
        .map_or(default, |v| v.trim().eq_ignore_ascii_case("true"))
}

/// Refuses options outside `valid` with Java's message (`validateAndInitOptions`), naming
/// them sorted.
pub(crate) fn check_known_options(
    options: &HashMap<String, String>,
    valid: &[&str],
    rewriter: &str,
) -> Result<()> {
    let mut invalid: Vec<&str> = options
        .keys()
        .map(String::as_str)
        .filter(|k| !valid.contains(k))
        .collect();
    invalid.sort_unstable();
    check(invalid.is_empty(), || {
        format!(
            "Cannot use options [{}], they are not supported by the action or the rewriter {rewriter}",
            invalid.join(", ")
        )
    })
}

pub(crate) fn check(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_argument(message()))
    }
}

impl RewriteDataFilesOptions {
    /// The options of a run on `metadata` with `strategy`, from Java's option names (as the
    /// procedure's `options => map(...)`); unknown names are refused, as Java does.
    pub fn parse(
        metadata: &TableMetadata,
        strategy: RewriteStrategy,
        options: &HashMap<String, String>,
    ) -> Result<RewriteDataFilesOptions> {
        let mut valid = vec![
            TARGET_FILE_SIZE_BYTES,
            MIN_FILE_SIZE_BYTES,
            MAX_FILE_SIZE_BYTES,
            MIN_INPUT_FILES,
            REWRITE_ALL,
            MAX_FILE_GROUP_SIZE_BYTES,
            DELETE_FILE_THRESHOLD,
            DELETE_RATIO_THRESHOLD,
            MAX_FILES_TO_REWRITE,
            REWRITE_JOB_ORDER,
            OUTPUT_SPEC_ID,
            PARTIAL_PROGRESS_ENABLED,
            PARTIAL_PROGRESS_MAX_COMMITS,
            PARTIAL_PROGRESS_MAX_FAILED_COMMITS,
            MAX_CONCURRENT_FILE_GROUP_REWRITES,
            USE_STARTING_SEQUENCE_NUMBER,
            REMOVE_DANGLING_DELETES,
        ];
        if strategy == RewriteStrategy::Sort {
            valid.extend([COMPRESSION_FACTOR, SHUFFLE_PARTITIONS_PER_FILE]);
        }
        check_known_options(
            options,
            &valid,
            match strategy {
                RewriteStrategy::BinPack => "BIN-PACK",
                RewriteStrategy::Sort => "SORT",
            },
        )?;

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
                WRITE_TARGET_FILE_SIZE_BYTES,
                WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT,
            )?,
        )?;
        let max_group_count = parse_long(options, MAX_FILE_GROUP_INPUT_FILES, i64::MAX)?;
        check(max_group_count > 0, || {
            format!("'{MAX_FILE_GROUP_INPUT_FILES}' is set to {max_group_count} but must be > 0")
        })?;
        let delete_file_threshold = parse_int(options, DELETE_FILE_THRESHOLD, i64::from(i32::MAX))?;
        check(delete_file_threshold >= 0, || {
            format!("'{DELETE_FILE_THRESHOLD}' is set to {delete_file_threshold} but must be >= 0")
        })?;
        let delete_ratio_threshold = parse_double(options, DELETE_RATIO_THRESHOLD, 0.3)?;
        check(delete_ratio_threshold > 0.0, || {
            format!("'{DELETE_RATIO_THRESHOLD}' is set to {delete_ratio_threshold} but must be > 0")
        })?;
        check(delete_ratio_threshold <= 1.0, || {
            format!(
                "'{DELETE_RATIO_THRESHOLD}' is set to {delete_ratio_threshold} but must be <= 1"
            )
        })?;
        let max_files_to_rewrite = match options.get(MAX_FILES_TO_REWRITE) {
            None => None,
            Some(_) => {
                let v = parse_int(options, MAX_FILES_TO_REWRITE, 0)?;
                check(v > 0, || {
                    format!("Cannot set {MAX_FILES_TO_REWRITE} to {v}, the value must be positive integer.")
                })?;
                Some(v)
            }
        };
        let job_order = RewriteJobOrder::parse(
            options
                .get(REWRITE_JOB_ORDER)
                .map_or("none", String::as_str),
        )?;
        let default_spec = metadata.default_spec_id;
        let output_spec_id = parse_int(options, OUTPUT_SPEC_ID, i64::from(default_spec))?;
        let output_spec_id = i32::try_from(output_spec_id).unwrap_or(default_spec);
        check(metadata.spec_by_id(output_spec_id).is_some(), || {
            format!("Cannot use the output spec id {output_spec_id} because the table does not contain a reference to this spec-id.")
        })?;
        let compression_factor = parse_double(options, COMPRESSION_FACTOR, 1.0)?;
        check(compression_factor > 0.0, || {
            format!("'{COMPRESSION_FACTOR}' is set to {compression_factor} but must be > 0")
        })?;
        let shuffle_partitions = parse_int(options, SHUFFLE_PARTITIONS_PER_FILE, 1)?;
        check(shuffle_partitions > 0, || {
            format!(
                "'{SHUFFLE_PARTITIONS_PER_FILE}' is set to {shuffle_partitions} but must be > 0"
            )
        })?;
        let max_concurrent_group_rewrites =
            parse_int(options, MAX_CONCURRENT_FILE_GROUP_REWRITES, 5)?;
        let max_commits = parse_int(options, PARTIAL_PROGRESS_MAX_COMMITS, 10)?;
        let max_failed_commits =
            parse_int(options, PARTIAL_PROGRESS_MAX_FAILED_COMMITS, max_commits)?;
        let partial_progress_enabled = parse_bool(options, PARTIAL_PROGRESS_ENABLED, false);
        check(max_concurrent_group_rewrites >= 1, || {
            format!("Cannot set {MAX_CONCURRENT_FILE_GROUP_REWRITES} to {max_concurrent_group_rewrites}, the value must be positive.")
        })?;
        check(!partial_progress_enabled || max_commits > 0, || {
            format!("Cannot set {PARTIAL_PROGRESS_MAX_COMMITS} to {max_commits}, the value must be positive when {PARTIAL_PROGRESS_ENABLED} is true")
        })?;
        Ok(RewriteDataFilesOptions {
            strategy,
            target_file_size: target,
            min_file_size: min,
            max_file_size: max,
            min_input_files,
            rewrite_all: parse_bool(options, REWRITE_ALL, false),
            max_group_size,
            max_group_count,
            delete_file_threshold,
            delete_ratio_threshold,
            max_files_to_rewrite,
            job_order,
            output_spec_id,
            compression_factor,
            partial_progress_enabled,
            max_commits,
            max_failed_commits,
            max_concurrent_group_rewrites,
            use_starting_sequence_number: parse_bool(options, USE_STARTING_SEQUENCE_NUMBER, true),
            remove_dangling_deletes: parse_bool(options, REMOVE_DANGLING_DELETES, false),
        })
    }

    /// The size at which a group's writers roll to a new file: halfway between the target
    /// and the maximum (`writeMaxFileSize`).
    pub fn write_max_file_size(&self) -> i64 {
        (self.target_file_size as f64
            + (self.max_file_size.wrapping_sub(self.target_file_size)) as f64 * 0.5) as i64
    }

    /// Java's `expectedOutputFiles`: whole target-sized files, with the remainder a file of
    /// its own when it is big enough or when spreading it would make the others more than
    /// 10 % too big. The sort rewriter scales the input by `compression-factor` first.
    pub fn expected_output_files(&self, input_size: i64) -> i64 {
        let input_size = match self.strategy {
            RewriteStrategy::BinPack => input_size,
            RewriteStrategy::Sort => (input_size as f64 * self.compression_factor) as i64,
        };
        let files = self.size_based_output_files(input_size);
        match self.strategy {
            RewriteStrategy::BinPack => files,
            RewriteStrategy::Sort => files.max(1),
        }
    }

    fn size_based_output_files(&self, input_size: i64) -> i64 {
        let target = self.target_file_size;
        if input_size < target {
            return 1;
        }
        let with_remainder = input_size / target + i64::from(input_size % target != 0);
        let without_remainder = input_size / target;
        let avg_without_remainder = input_size / without_remainder;
        if input_size % target > self.min_file_size {
            with_remainder
        } else if (avg_without_remainder as f64)
            < (1.1 * target as f64).min(self.write_max_file_size() as f64)
        {
            without_remainder
        } else {
            with_remainder
        }
    }

    /// Java's `inputSplitSize`: the byte size a group's files are read in, one output file
    /// per split.
    pub fn input_split_size(&self, input_size: i64) -> i64 {
        let files = self.expected_output_files(input_size).max(1);
        let estimated = input_size / files + SPLIT_OVERHEAD;
        if estimated < self.target_file_size {
            self.target_file_size
        } else {
            estimated.min(self.write_max_file_size())
        }
    }

    fn outside_desired_size_range(&self, task: &FileScanTask) -> bool {
        task.length < self.min_file_size || task.length > self.max_file_size
    }

    fn too_many_deletes(&self, task: &FileScanTask) -> bool {
        task.deletes.len() as i64 >= self.delete_file_threshold
    }

    fn too_high_delete_ratio(&self, task: &FileScanTask) -> bool {
        if task.deletes.is_empty() {
            return false;
        }
        let known: i64 = task
            .deletes
            .iter()
            .filter(|d| is_file_scoped(d))
            .map(|d| d.file.record_count)
            .fold(0i64, |a, b| a.wrapping_add(b));
        let records = task.file.file.record_count;
        let deleted = known.min(records) as f64;
        deleted / records as f64 >= self.delete_ratio_threshold
    }

    fn keep_group(&self, group: &[FileScanTask]) -> bool {
        let size = input_size(group);
        let n = group.len() as i64;
        // Java's enoughInputFiles and enoughContent, both for more than one file
        (n > 1 && (n >= self.min_input_files || size > self.target_file_size))
            || size > self.max_file_size
            || group.iter().any(|t| self.too_many_deletes(t))
            || group.iter().any(|t| self.too_high_delete_ratio(t))
    }
}

/// Whether a delete file applies to one data file only (Java's `ContentFileUtil.isFileScoped`):
/// a DV or position delete file with a referenced data file, or whose `file_path` bounds are
/// one path.
pub fn is_file_scoped(delete: &ScanFile) -> bool {
    let f = &delete.file;
    if f.content != DataContentType::PositionDeletes {
        return false;
    }
    if f.referenced_data_file.is_some() {
        return true;
    }
    let bound = |b: &Option<Vec<(i32, Vec<u8>)>>| {
        b.as_ref().and_then(|v| {
            v.iter()
                .find(|(id, _)| *id == reserved::DELETE_FILE_PATH_ID)
                .map(|(_, bytes)| bytes.clone())
        })
    };
    match (bound(&f.lower_bounds), bound(&f.upper_bounds)) {
        (Some(lo), Some(hi)) => lo == hi,
        _ => false,
    }
}

/// Whether a delete file is a deletion vector (a Puffin position delete).
pub fn is_dv(delete: &ScanFile) -> bool {
    delete.file.content == DataContentType::PositionDeletes
        && delete.file.file_format == FileFormat::Puffin
}

fn input_size(group: &[FileScanTask]) -> i64 {
    group
        .iter()
        .map(|t| t.length)
        .fold(0i64, |a, b| a.wrapping_add(b))
}

/// One group of data files rewritten together (Java's `RewriteFileGroup`).
#[derive(Debug, Clone)]
pub struct RewriteFileGroup {
    /// 1-based, in planning order (Java's `globalIndex`).
    pub global_index: usize,
    /// 1-based within its partition.
    pub partition_index: usize,
    /// The partition the group's files share (empty for files of another spec).
    pub partition: PartitionKey,
    /// The files, whole, with the deletes that apply to them.
    pub tasks: Vec<FileScanTask>,
    pub input_split_size: i64,
    pub expected_output_files: i64,
    /// The size new files roll at.
    pub max_output_file_size: i64,
    pub output_spec_id: i32,
}

impl RewriteFileGroup {
    /// The bytes of the group's data files.
    pub fn input_size(&self) -> i64 {
        input_size(&self.tasks)
    }

    /// The data files the group replaces.
    pub fn rewritten_files(&self) -> impl Iterator<Item = &Arc<ScanFile>> {
        self.tasks.iter().map(|t| &t.file)
    }

    /// The DVs of the group's files, which the commit removes with them (Java's
    /// `danglingDVs`): each DV names one data file, so it dangles once that file goes. Each
    /// DV once.
    pub fn dangling_dvs(&self) -> Vec<Arc<ScanFile>> {
        let mut out: Vec<Arc<ScanFile>> = Vec::new();
        for d in self.tasks.iter().flat_map(|t| t.deletes.iter()) {
            if is_dv(d)
                && !out.iter().any(|o| {
                    o.file.file_path == d.file.file_path
                        && o.file.content_offset == d.file.content_offset
                })
            {
                out.push(d.clone());
            }
        }
        out
    }

    /// The units the group is read and written in, each a list of file ranges: one unit per
    /// expected output file for bin-pack (the files split at `input_split_size` and packed
    /// with no open cost, as Java's runner reads a group), the whole group for sort (its rows
    /// are sorted together).
    pub fn read_units(
        &self,
        metadata: &TableMetadata,
        strategy: RewriteStrategy,
    ) -> Result<Vec<Vec<FileScanTask>>> {
        match strategy {
            RewriteStrategy::Sort => Ok(vec![self.tasks.clone()]),
            RewriteStrategy::BinPack => {
                let mut split = SplitOptions::from_table(metadata)?;
                split.target_size = self.input_split_size;
                split.open_file_cost = 0;
                Ok(plan_tasks(self.tasks.clone(), &split)?
                    .into_iter()
                    .map(|c| c.tasks)
                    .collect())
            }
        }
    }
}

/// What the planner chose, and the plan whose metadata the readers need.
#[derive(Debug)]
pub struct RewriteDataFilesPlan {
    /// The scan (its `tasks` moved into the groups); residuals and filter are `true`.
    pub scan: ScanPlan,
    /// The snapshot planned from, which the commits validate from.
    pub starting_snapshot_id: Option<i64>,
    pub groups: Vec<RewriteFileGroup>,
    /// All groups the planner made (Java counts every group, also those past
    /// `max-files-to-rewrite`, for the commits' batch size).
    pub total_group_count: usize,
}

impl RewriteDataFilesPlan {
    /// A unit of [`RewriteFileGroup::read_units`] as Arrow IPC stream bytes of plan rows
    /// (the plan's schema metadata included), which `read_plan` / `read_tasks` read.
    pub fn unit_payload(&self, unit: &[FileScanTask]) -> Result<Vec<u8>> {
        let rows: Vec<(Option<i32>, &FileScanTask)> = unit.iter().map(|t| (Some(0), t)).collect();
        let (schema, batches) = tasks_to_batches(&self.scan, &rows, rows.len().max(1))?;
        let err = |e: arrow_schema::ArrowError| {
            Error::invalid_argument(format!("cannot encode a rewrite unit: {e}"))
        };
        let mut ipc = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &schema).map_err(err)?;
        for b in &batches {
            w.write(b).map_err(err)?;
        }
        w.finish().map_err(err)?;
        drop(w);
        Ok(ipc)
    }
}

/// Plans a rewrite over the files `scan` plans (the caller sets its filter, snapshot or
/// branch, and case sensitivity; it must select every column).
pub fn plan_rewrite_data_files(
    metadata: &TableMetadata,
    scan: &TableScan,
    options: &RewriteDataFilesOptions,
) -> Result<RewriteDataFilesPlan> {
    let mut plan = scan.plan_files()?;
    // every row of a chosen file is rewritten: Java plans with ignoreResiduals()
    let always = Arc::new(BoundExpression::True);
    plan.filter = always.clone();
    let tasks = std::mem::take(&mut plan.tasks);
    let current_spec = metadata.default_spec_id;

    // files by partition of the current spec, partitions in the order first seen
    let mut order: Vec<PartitionKey> = Vec::new();
    let mut by_partition: HashMap<PartitionKey, Vec<FileScanTask>> = HashMap::new();
    for mut task in tasks {
        task.residual = always.clone();
        let key = if task.file.spec_id == current_spec {
            PartitionKey::new(current_spec, task.file.file.partition.clone())?
        } else {
            PartitionKey::new(current_spec, Vec::new())?
        };
        by_partition
            .entry(key.clone())
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(task);
    }

    let mut groups = Vec::new();
    let mut total_group_count = 0;
    let mut files_left = options.max_files_to_rewrite;
    let mut global_index = 0;
    for key in order {
        let Some(tasks) = by_partition.remove(&key) else {
            continue;
        };
        let candidates: Vec<FileScanTask> = if options.rewrite_all {
            tasks
        } else {
            tasks
                .into_iter()
                .filter(|t| {
                    options.outside_desired_size_range(t)
                        || options.too_many_deletes(t)
                        || options.too_high_delete_ratio(t)
                })
                .collect()
        };
        let packed = pack_groups(candidates, options.max_group_size, options.max_group_count);
        let kept: Vec<Vec<FileScanTask>> = if options.rewrite_all {
            packed
        } else {
            packed
                .into_iter()
                .filter(|g| options.keep_group(g))
                .collect()
        };
        total_group_count += kept.len();
        let mut partition_index = 0;
        for mut group in kept {
            if let Some(left) = files_left.as_mut() {
                if *left <= 0 {
                    continue;
                }
                let take = (group.len() as i64).min(*left);
                group.truncate(usize::try_from(take).unwrap_or(group.len()));
                *left -= take;
            }
            global_index += 1;
            partition_index += 1;
            let size = input_size(&group);
            groups.push(RewriteFileGroup {
                global_index,
                partition_index,
                partition: key.clone(),
                input_split_size: options.input_split_size(size),
                expected_output_files: options.expected_output_files(size),
                max_output_file_size: options.write_max_file_size(),
                output_spec_id: options.output_spec_id,
                tasks: group,
            });
        }
    }
    options
        .job_order
        .sort(&mut groups, |g| g.input_size(), |g| g.tasks.len());
    Ok(RewriteDataFilesPlan {
        starting_snapshot_id: plan.snapshot_id,
        scan: plan,
        groups,
        total_group_count,
    })
}

/// Java's `BinPacking.ListPacker(maxGroupSize, 1, false, maxGroupCount)`: files in order into
/// one open group, which closes when the next file would make it heavier than the size or
/// fuller than the count.
fn pack_groups(tasks: Vec<FileScanTask>, max_size: i64, max_count: i64) -> Vec<Vec<FileScanTask>> {
    let mut out = Vec::new();
    let mut current: Vec<FileScanTask> = Vec::new();
    let mut weight = 0i64;
    for task in tasks {
        // an empty group takes any file (a new bin always takes its first item)
        let fits = !current.is_empty()
            && weight.wrapping_add(task.length) <= max_size
            && (current.len() as i64) < max_count;
        if !fits && !current.is_empty() {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
#[path = "rewrite_data_files_tests.rs"]
mod tests;
