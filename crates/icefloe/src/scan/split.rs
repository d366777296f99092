//! Split planning: cutting file scan tasks into byte ranges and bin-packing the ranges into
//! combined tasks, with the results of Java's `TableScanUtil.splitFiles` followed by
//! `TableScanUtil.planTasks` (Java Iceberg 1.11, what `TableScan.planTasks()` returns).
//!
//! **Splitting** ([`split_file`]) follows Java's `BaseContentScanTask.split`:
//! - Only Avro, ORC and Parquet files are splittable (Java's `FileFormat.isSplittable`);
//!   a Puffin file, or a format Java does not know, stays one task.
//! - The file's `split_offsets` are used when they are well defined (not empty and the last
//!   offset below `file_size_in_bytes`, as Java's `BaseFile` checks) and strictly ascending:
//!   then there is one range per offset, from that offset to the next one (the last to the
//!   end of the file), whatever the target size. The bytes before the first offset belong to
//!   no range, as in Java.
//! - Otherwise the file is cut into ranges of the target size from offset 0, the last range
//!   shorter. A file of 0 bytes (or a negative size) gives no range at all, as in Java.
//!
//! **Packing** ([`pack_tasks`]) follows `BinPacking.PackingIterable` with largest-bin-first,
//! driven with the weight of `planTasks`: `max(length + size of the deletes, (1 + number of
//! deletes) * open_file_cost)`, where a deletion vector counts its `content_size_in_bytes`
//! (Java's `ScanTaskUtil.contentSizeInBytes`). Each range goes into the first open bin it
//! fits (weight plus range `<=` target); when none fits it opens a new bin, and when that
//! makes more open bins than the lookback, the heaviest open bin (the earliest of equals)
//! is emitted. At the end the open bins are emitted oldest first.
//!
//! **Merging**: as Java's `BaseCombinedScanTask` (`TableScanUtil.mergeTasks`), consecutive
//! ranges of one file in a combined task that follow each other (one ends where the next
//! starts) become one range, so a file whose row groups all land in one task is read as one
//! range.
//!
//! Arithmetic on sizes and weights wraps as Java's `long` does, so that even absurd sizes
//! from bad metadata group as in Java instead of panicking.
//!
//! Cost: splitting is linear in the number of ranges; packing is linear in the number of
//! ranges times the number of open bins, which is at most the lookback plus one.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::table_metadata::TableMetadata;

use super::task::{CombinedScanTask, FileScanTask, ScanFile};

/// Table property (and scan option) for the target size of a combined task, in bytes.
pub const SPLIT_SIZE: &str = "read.split.target-size";
/// Java's `SPLIT_SIZE_DEFAULT`: 128 MiB.
pub const SPLIT_SIZE_DEFAULT: i64 = 128 * 1024 * 1024;
/// Table property for the target size when scanning a metadata table (e.g. `files`).
pub const METADATA_SPLIT_SIZE: &str = "read.split.metadata-target-size";
/// Java's `METADATA_SPLIT_SIZE_DEFAULT`: 32 MiB.
pub const METADATA_SPLIT_SIZE_DEFAULT: i64 = 32 * 1024 * 1024;
/// Table property (and scan option) for the number of open bins while packing.
pub const SPLIT_LOOKBACK: &str = "read.split.planning-lookback";
/// Java's `SPLIT_LOOKBACK_DEFAULT`.
pub const SPLIT_LOOKBACK_DEFAULT: i32 = 10;
/// Table property (and scan option) for the least weight of a file in a task, in bytes.
pub const SPLIT_OPEN_FILE_COST: &str = "read.split.open-file-cost";
/// Java's `SPLIT_OPEN_FILE_COST_DEFAULT`: 4 MiB.
pub const SPLIT_OPEN_FILE_COST_DEFAULT: i64 = 4 * 1024 * 1024;

/// How a scan splits and packs its files: Java's `targetSplitSize()`, `splitLookback()` and
/// `splitOpenFileCost()` of a table scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Target weight of a combined task, and the size of fixed-size ranges (> 0).
    pub target_size: i64,
    /// How many bins stay open while packing (> 0). Java's type is `int`.
    pub lookback: i32,
    /// The weight a file (data or delete) counts at least (>= 0).
    pub open_file_cost: i64,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            target_size: SPLIT_SIZE_DEFAULT,
            lookback: SPLIT_LOOKBACK_DEFAULT,
            open_file_cost: SPLIT_OPEN_FILE_COST_DEFAULT,
        }
    }
}

/// Where a property value came from, for the error that names it.
#[derive(Clone, Copy)]
enum Source {
    /// A table property: a bad value is bad metadata.
    Table,
    /// A property map or scan option handed in by the caller.
    Caller,
}

impl Source {
    fn error(self, key: &str, message: String) -> Error {
        match self {
            Source::Table => Error::invalid_metadata(format!("properties.{key}"), message),
            Source::Caller => Error::invalid_argument(format!("property '{key}': {message}")),
        }
    }
}

/// A value that was read, with where it came from.
#[derive(Clone, Copy)]
struct Setting<T> {
    value: T,
    key: &'static str,
    source: Option<Source>,
}

impl<T: Copy + std::fmt::Display> Setting<T> {
    fn check(self, ok: impl Fn(T) -> bool, rule: &str) -> Result<T> {
        if ok(self.value) {
            return Ok(self.value);
        }
        let message = format!("{rule}: {}", self.value);
        Err(match self.source {
            Some(source) => source.error(self.key, message),
            None => Error::invalid_argument(message),
        })
    }
}

/// Java's `Long.parseLong`: an optional sign and decimal digits. (Java also takes non-ASCII
/// decimal digits; those are not accepted here.)
fn parse_long(source: Source, key: &str, text: &str) -> Result<i64> {
    text.parse::<i64>()
        .map_err(|_| source.error(key, format!("'{text}' is not a valid long")))
}

/// Java's `Integer.parseInt`.
fn parse_int(source: Source, key: &str, text: &str) -> Result<i32> {
    text.parse::<i32>()
        .map_err(|_| source.error(key, format!("'{text}' is not a valid int")))
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<&'a str>;

/// `PropertyUtil.propertyAsLong(options, key, propertyAsLong(table, table_key, default))`:
/// the table value is parsed (and can fail) even when an option overrides it.
fn resolve_long(
    table: (Source, Lookup<'_>),
    table_key: &'static str,
    options: Option<Lookup<'_>>,
    option_key: &'static str,
    default: i64,
) -> Result<Setting<i64>> {
    let mut setting = Setting {
        value: default,
        key: table_key,
        source: None,
    };
    if let Some(text) = (table.1)(table_key) {
        setting.value = parse_long(table.0, table_key, text)?;
        setting.source = Some(table.0);
    }
    if let Some(text) = options.and_then(|o| o(option_key)) {
        setting = Setting {
            value: parse_long(Source::Caller, option_key, text)?,
            key: option_key,
            source: Some(Source::Caller),
        };
    }
    Ok(setting)
}

fn resolve_int(
    table: (Source, Lookup<'_>),
    key: &'static str,
    options: Option<Lookup<'_>>,
    default: i32,
) -> Result<Setting<i32>> {
    let mut setting = Setting {
        value: default,
        key,
        source: None,
    };
    if let Some(text) = (table.1)(key) {
        setting.value = parse_int(table.0, key, text)?;
        setting.source = Some(table.0);
    }
    if let Some(text) = options.and_then(|o| o(key)) {
        setting = Setting {
            value: parse_int(Source::Caller, key, text)?,
            key,
            source: Some(Source::Caller),
        };
    }
    Ok(setting)
}

impl SplitOptions {
    /// Options from explicit values, checked as Java's `planTasks` checks them.
    pub fn new(target_size: i64, lookback: i32, open_file_cost: i64) -> Result<SplitOptions> {
        let options = SplitOptions {
            target_size,
            lookback,
            open_file_cost,
        };
        options.validate()?;
        Ok(options)
    }

    /// Java's checks in `TableScanUtil.planTasks`: target size > 0, lookback > 0, open-file
    /// cost >= 0.
    pub fn validate(&self) -> Result<()> {
        check_target_size(self.target_size)?;
        if self.lookback <= 0 {
            return Err(Error::invalid_argument(format!(
                "split planning lookback must be > 0: {}",
                self.lookback
            )));
        }
        if self.open_file_cost < 0 {
            return Err(Error::invalid_argument(format!(
                "file open cost must be >= 0: {}",
                self.open_file_cost
            )));
        }
        Ok(())
    }

    /// Options of a data-table scan from a map of table properties, Java's defaults for the
    /// ones not set. A value that is not a number, or out of range, is an
    /// [`Error::InvalidArgument`] naming the property.
    pub fn from_properties(properties: &HashMap<String, String>) -> Result<SplitOptions> {
        let lookup = |k: &str| properties.get(k).map(String::as_str);
        resolve((Source::Caller, &lookup), None, false)
    }

    /// Options of a scan of the table's data, from its properties (Java's
    /// `BaseScan.targetSplitSize()` and siblings). A bad value is an
    /// [`Error::InvalidMetadata`] at `properties.<name>`.
    pub fn from_table(metadata: &TableMetadata) -> Result<SplitOptions> {
        let lookup = |k: &str| metadata.property(k);
        resolve((Source::Table, &lookup), None, false)
    }

    /// As [`SplitOptions::from_table`], with scan options (`TableScan.option(key, value)`)
    /// that override the table properties under the same names. As in Java, a bad table
    /// value fails even when an option overrides it. A bad option is an
    /// [`Error::InvalidArgument`].
    pub fn from_table_with_options(
        metadata: &TableMetadata,
        options: &HashMap<String, String>,
    ) -> Result<SplitOptions> {
        let lookup = |k: &str| metadata.property(k);
        let opts = |k: &str| options.get(k).map(String::as_str);
        resolve((Source::Table, &lookup), Some(&opts), false)
    }

    /// Options of a scan of one of the table's metadata tables (`files`, `entries`, ...):
    /// the target size is `read.split.metadata-target-size` (32 MiB by default), which the
    /// scan option `read.split.target-size` overrides (Java's
    /// `BaseMetadataTableScan.targetSplitSize()`).
    pub fn for_metadata_table(
        metadata: &TableMetadata,
        options: &HashMap<String, String>,
    ) -> Result<SplitOptions> {
        let lookup = |k: &str| metadata.property(k);
        let opts = |k: &str| options.get(k).map(String::as_str);
        resolve((Source::Table, &lookup), Some(&opts), true)
    }
}

fn resolve(
    table: (Source, Lookup<'_>),
    options: Option<Lookup<'_>>,
    metadata_table: bool,
) -> Result<SplitOptions> {
    let target = if metadata_table {
        resolve_long(
            table,
            METADATA_SPLIT_SIZE,
            options,
            SPLIT_SIZE,
            METADATA_SPLIT_SIZE_DEFAULT,
        )?
    } else {
        resolve_long(table, SPLIT_SIZE, options, SPLIT_SIZE, SPLIT_SIZE_DEFAULT)?
    };
    let lookback = resolve_int(table, SPLIT_LOOKBACK, options, SPLIT_LOOKBACK_DEFAULT)?;
    let cost = resolve_long(
        table,
        SPLIT_OPEN_FILE_COST,
        options,
        SPLIT_OPEN_FILE_COST,
        SPLIT_OPEN_FILE_COST_DEFAULT,
    )?;
    Ok(SplitOptions {
        target_size: target.check(|v| v > 0, "split size must be > 0")?,
        lookback: lookback.check(|v| v > 0, "split planning lookback must be > 0")?,
        open_file_cost: cost.check(|v| v >= 0, "file open cost must be >= 0")?,
    })
}

fn check_target_size(target_size: i64) -> Result<()> {
    if target_size <= 0 {
        return Err(Error::invalid_argument(format!(
            "split size must be > 0: {target_size}"
        )));
    }
    Ok(())
}

/// Java's `FileFormat.isSplittable`: Avro, ORC and Parquet. Puffin is not; a format Java
/// does not know (Java cannot read such a manifest) is read whole.
pub fn is_splittable(format: &FileFormat) -> bool {
    matches!(
        format,
        FileFormat::Avro | FileFormat::Orc | FileFormat::Parquet
    )
}

/// The split offsets Java splits at: present, not empty, the last one below the file size
/// (`BaseFile.hasWellDefinedOffsets`), and strictly ascending (`ArrayUtil.isStrictlyOrdered`).
/// Any other offsets are ignored and the file is cut into fixed-size ranges.
pub fn usable_split_offsets(file: &DataFile) -> Option<&[i64]> {
    let offsets = file.split_offsets.as_deref()?;
    let last = *offsets.last()?;
    if last >= file.file_size_in_bytes {
        return None;
    }
    if offsets.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    Some(offsets)
}

/// Cuts a whole-file task into the byte ranges Java's `FileScanTask.split(target_size)`
/// gives (see the module documentation for the rules). Each range keeps the task's file,
/// deletes and residual. `target_size` must be positive; a task that is already a range of
/// its file cannot be split again (Java throws for both).
pub fn split_file(task: &FileScanTask, target_size: i64) -> Result<Vec<FileScanTask>> {
    check_target_size(target_size)?;
    let mut out = Vec::new();
    split_into(task.clone(), target_size, &mut |t| out.push(t))?;
    Ok(out)
}

/// Java's `TableScanUtil.splitFiles`: every task split, in order.
pub fn split_files(tasks: Vec<FileScanTask>, target_size: i64) -> Result<Vec<FileScanTask>> {
    check_target_size(target_size)?;
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        split_into(task, target_size, &mut |t| out.push(t))?;
    }
    Ok(out)
}

/// Splits `task` (target size already checked), handing each range to `emit`. The task
/// itself is moved into the last range, so a task that stays whole costs no copy.
fn split_into(
    task: FileScanTask,
    target_size: i64,
    emit: &mut dyn FnMut(FileScanTask),
) -> Result<()> {
    let mut ranges = Vec::new();
    split_ranges(&task, target_size, &mut ranges)?;
    let Some((&last, rest)) = ranges.split_last() else {
        return Ok(());
    };
    for &(start, length) in rest {
        emit(FileScanTask {
            start,
            length,
            ..task.clone()
        });
    }
    emit(FileScanTask {
        start: last.0,
        length: last.1,
        ..task
    });
    Ok(())
}

/// The `(start, length)` of each range [`split_file`] cuts a whole-file task into, in
/// `ranges` (cleared first; the target size must already be checked). A task that is
/// already a range of its file is an error, as in Java.
pub(crate) fn split_ranges(
    task: &FileScanTask,
    target_size: i64,
    ranges: &mut Vec<(i64, i64)>,
) -> Result<()> {
    ranges.clear();
    match split_kind(task)? {
        SplitKind::Whole => ranges.push((task.start, task.length)),
        SplitKind::Offsets(offsets) => offset_ranges(offsets, task.length, ranges),
        SplitKind::Fixed(file_size) => fixed_size_ranges(file_size, target_size, ranges),
    }
    Ok(())
}

/// How a whole-file task is cut (Java's `BaseContentScanTask.split`).
pub(crate) enum SplitKind<'a> {
    /// Not splittable: one range, the whole file.
    Whole,
    /// At the file's split offsets, whatever the target size.
    Offsets(&'a [i64]),
    /// Into ranges of the target size (a file of this many bytes).
    Fixed(i64),
}

/// How [`split_ranges`] cuts `task`; an error for a task that is already a range of its
/// file.
pub(crate) fn split_kind(task: &FileScanTask) -> Result<SplitKind<'_>> {
    let file = &task.file.file;
    let file_size = file.file_size_in_bytes;
    if task.start != 0 || task.length != file_size {
        return Err(Error::invalid_argument(format!(
            "cannot split a task which is already split: {} bytes {}..+{} of a file of {} bytes",
            file.file_path, task.start, task.length, file_size
        )));
    }
    if !is_splittable(&file.file_format) {
        return Ok(SplitKind::Whole);
    }
    Ok(match usable_split_offsets(file) {
        Some(offsets) => SplitKind::Offsets(offsets),
        None => SplitKind::Fixed(file_size),
    })
}

/// OffsetsAwareSplitScanTaskIterator: one range per offset, the last to the file's end.
pub(crate) fn offset_ranges(offsets: &[i64], file_size: i64, ranges: &mut Vec<(i64, i64)>) {
    ranges.reserve(offsets.len());
    for (i, &offset) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(file_size);
        ranges.push((offset, end.wrapping_sub(offset)));
    }
}

/// FixedSizeSplitScanTaskIterator: ranges of the target size (> 0) while bytes remain,
/// appended to `ranges`.
pub(crate) fn fixed_size_ranges(file_size: i64, target_size: i64, ranges: &mut Vec<(i64, i64)>) {
    let mut offset = 0i64;
    let mut remaining = file_size;
    while remaining > 0 {
        let length = target_size.min(remaining);
        ranges.push((offset, length));
        offset += length;
        remaining -= length;
    }
}

/// The least split size [`adjust_split_size`] lowers to: Java's `TableScanUtil`
/// `MIN_SPLIT_SIZE`, 16 MiB (or the configured size when that is smaller).
pub const ADAPTIVE_MIN_SPLIT_SIZE: i64 = 16 * 1024 * 1024;

/// Table property: whether a Spark scan adapts its split size to the cluster's parallelism
/// (Java's `read.split.adaptive-size.enabled`, default true).
pub const ADAPTIVE_SPLIT_SIZE_ENABLED: &str = "read.split.adaptive-size.enabled";

/// The split size of a scan of `scan_size` bytes (the sum of its whole-file tasks' lengths
/// and delete sizes) for `parallelism` slots, as Java's `TableScanUtil.adjustSplitSize`,
/// which Iceberg's Spark scans use unless a split size is given: the configured size when
/// it makes at least one split per slot, else the scan's size shared by the slots, but not
/// below [`ADAPTIVE_MIN_SPLIT_SIZE`] (never above the configured size). Without it a small
/// table is one task, read by one of Spark's cores while the others idle.
pub fn adjust_split_size(scan_size: i64, parallelism: i32, split_size: i64) -> Result<i64> {
    if parallelism <= 0 {
        return Err(Error::invalid_argument(format!(
            "parallelism must be > 0: {parallelism}"
        )));
    }
    check_target_size(split_size)?;
    let parallelism = i64::from(parallelism);
    // LongMath.divide(scan, split, CEILING), for the non-negative sizes a scan has
    let splits =
        scan_size.div_euclid(split_size) + i64::from(scan_size.rem_euclid(split_size) != 0);
    if splits >= parallelism {
        return Ok(split_size);
    }
    Ok((scan_size / parallelism).max(ADAPTIVE_MIN_SPLIT_SIZE.min(split_size)))
}

/// The size a file adds to a task's weight: Java's `ScanTaskUtil.contentSizeInBytes`, the
/// file size, except for a deletion vector (a Puffin delete file), whose blob's
/// `content_size_in_bytes` counts. A deletion vector without it is bad metadata (Java fails
/// on it too).
pub fn content_size_in_bytes(file: &DataFile) -> Result<i64> {
    if file.content == DataContentType::Data || file.file_format != FileFormat::Puffin {
        return Ok(file.file_size_in_bytes);
    }
    file.content_size_in_bytes.ok_or_else(|| {
        Error::invalid_metadata(
            "content_size_in_bytes",
            format!(
                "deletion vector {} has no content_size_in_bytes",
                file.file_path
            ),
        )
    })
}

/// What a task's deletes add to its weight: their total content size and their number.
pub(crate) fn delete_weight(deletes: &[Arc<ScanFile>]) -> Result<(i64, i64)> {
    let mut size = 0i64;
    for delete in deletes {
        size = size.wrapping_add(content_size_in_bytes(&delete.file)?);
    }
    Ok((size, deletes.len() as i64))
}

/// The packing weight of a range of `length` bytes with deletes of `delete_weight`.
pub(crate) fn weight_of(
    length: i64,
    (delete_size, delete_count): (i64, i64),
    open_file_cost: i64,
) -> i64 {
    let bytes = length.wrapping_add(delete_size);
    let files = delete_count.wrapping_add(1).wrapping_mul(open_file_cost);
    bytes.max(files)
}

/// The weight `planTasks` packs a task by: `max(length + content size of its deletes,
/// (1 + number of deletes) * open_file_cost)`.
pub fn task_weight(task: &FileScanTask, open_file_cost: i64) -> Result<i64> {
    Ok(weight_of(
        task.length,
        delete_weight(&task.deletes)?,
        open_file_cost,
    ))
}

/// Java's `TableScanUtil.planTasks` on tasks that are already split: packs them into
/// combined tasks by [`task_weight`], with the lookback and largest-bin-first order.
pub fn pack_tasks(
    tasks: Vec<FileScanTask>,
    options: &SplitOptions,
) -> Result<Vec<CombinedScanTask>> {
    options.validate()?;
    let mut packer = new_packer(options)?;
    let mut out = Vec::new();
    for task in tasks {
        let weight = task_weight(&task, options.open_file_cost)?;
        if let Some(bin) = packer.push(task, weight) {
            out.push(combined(bin));
        }
    }
    out.extend(packer.finish().map(combined));
    Ok(out)
}

/// Java's `TableScan.planTasks()`: splits every whole-file task ([`split_file`]) and packs
/// the ranges ([`pack_tasks`]) in one pass, so that the same tasks in the same order give
/// the combined tasks Java gives.
pub fn plan_tasks(
    tasks: Vec<FileScanTask>,
    options: &SplitOptions,
) -> Result<Vec<CombinedScanTask>> {
    options.validate()?;
    let mut packer = new_packer(options)?;
    let mut out = Vec::new();
    for task in tasks {
        // the deletes of a task are the same for all its ranges: weigh them once
        let deletes = delete_weight(&task.deletes)?;
        split_into(task, options.target_size, &mut |range| {
            let weight = weight_of(range.length, deletes, options.open_file_cost);
            if let Some(bin) = packer.push(range, weight) {
                out.push(combined(bin));
            }
        })?;
    }
    out.extend(packer.finish().map(combined));
    Ok(out)
}

/// A combined task of packed ranges, with consecutive ranges of one file merged: Java's
/// `TableScanUtil.mergeTasks`, where a split task merges the next one when it has the same
/// file and starts where it ends. Ranges of one file share its `Arc` (Java compares the
/// file objects); ranges are never empty, which keeps whole-file tasks of empty files
/// apart, as Java's whole-file tasks are not mergeable.
fn combined(tasks: Vec<FileScanTask>) -> CombinedScanTask {
    let tasks = merge_adjacent(
        tasks,
        |a, b| Arc::ptr_eq(&a.file, &b.file),
        |t| (t.start, t.length),
        |t, more| t.length = t.length.wrapping_add(more),
    );
    CombinedScanTask { tasks }
}

/// Java's `mergeTasks` on a bin of ranges: a range joins the one before it when both are
/// ranges of the same file (`same_file`), neither is empty, and it starts where that one
/// ends (`span` gives start and length; `grow` adds to a range's length).
pub(crate) fn merge_adjacent<T>(
    bin: Vec<T>,
    same_file: impl Fn(&T, &T) -> bool,
    span: impl Fn(&T) -> (i64, i64),
    grow: impl Fn(&mut T, i64),
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(bin.len());
    for item in bin {
        if let Some(last) = out.last_mut() {
            let ((start, length), (next_start, next_length)) = (span(last), span(&item));
            if same_file(last, &item)
                && length > 0
                && next_length > 0
                && start.wrapping_add(length) == next_start
            {
                grow(last, next_length);
                continue;
            }
        }
        out.push(item);
    }
    out
}

/// The packer `planTasks` uses: largest bin first, with the options' target and lookback.
pub(crate) fn new_packer<T>(options: &SplitOptions) -> Result<BinPacker<T>> {
    let lookback = usize::try_from(options.lookback).map_err(|_| {
        Error::invalid_argument(format!(
            "split planning lookback must be > 0: {}",
            options.lookback
        ))
    })?;
    BinPacker::new(options.target_size, lookback, true)
}

/// One open bin.
#[derive(Debug)]
struct Bin<T> {
    weight: i64,
    items: Vec<T>,
}

/// Java's `BinPacking.PackingIterator`, fed one item at a time: [`BinPacker::push`] returns
/// a bin when one closes, [`BinPacker::finish`] the bins still open.
#[derive(Debug)]
pub struct BinPacker<T> {
    target_weight: i64,
    lookback: usize,
    largest_bin_first: bool,
    /// Open bins, oldest first (Java's deque order).
    bins: Vec<Bin<T>>,
}

impl<T> BinPacker<T> {
    /// A packer into bins of `target_weight` keeping at most `lookback` (> 0) bins open.
    /// With `largest_bin_first`, a bin pushed out of the lookback is the heaviest open one
    /// (what `planTasks` uses); otherwise the oldest.
    pub fn new(target_weight: i64, lookback: usize, largest_bin_first: bool) -> Result<Self> {
        if lookback == 0 {
            return Err(Error::invalid_argument(
                "bin look-back size must be greater than 0: 0",
            ));
        }
        Ok(BinPacker {
            target_weight,
            lookback,
            largest_bin_first,
            bins: Vec::new(),
        })
    }

    /// Adds an item of the given weight: to the first open bin it fits in (bin weight plus
    /// item weight `<=` the target, in Java's wrapping `long` arithmetic), else to a new
    /// bin. When the new bin makes more open bins than the lookback, one bin closes and is
    /// returned.
    pub fn push(&mut self, item: T, weight: i64) -> Option<Vec<T>> {
        let target = self.target_weight;
        if let Some(bin) = self
            .bins
            .iter_mut()
            .find(|bin| bin.weight.wrapping_add(weight) <= target)
        {
            bin.weight = bin.weight.wrapping_add(weight);
            bin.items.push(item);
            return None;
        }
        self.bins.push(Bin {
            weight,
            items: vec![item],
        });
        if self.bins.len() <= self.lookback {
            return None;
        }
        let index = if self.largest_bin_first {
            // Collections.max: the first of the heaviest
            let mut best = 0;
            for (i, bin) in self.bins.iter().enumerate().skip(1) {
                if bin.weight > self.bins[best].weight {
                    best = i;
                }
            }
            best
        } else {
            0
        };
        Some(self.bins.remove(index).items)
    }

    /// The bins still open, oldest first.
    pub fn finish(self) -> impl Iterator<Item = Vec<T>> {
        self.bins.into_iter().map(|bin| bin.items)
    }
}

/// Java's `BinPacking.ListPacker.pack`: packs items in order into bins.
pub fn pack<T>(
    items: impl IntoIterator<Item = T>,
    target_weight: i64,
    lookback: usize,
    largest_bin_first: bool,
    mut weight: impl FnMut(&T) -> i64,
) -> Result<Vec<Vec<T>>> {
    let mut packer = BinPacker::new(target_weight, lookback, largest_bin_first)?;
    let mut out = Vec::new();
    for item in items {
        let w = weight(&item);
        if let Some(bin) = packer.push(item, w) {
            out.push(bin);
        }
    }
    out.extend(packer.finish());
    Ok(out)
}

/// Java's `BinPacking.ListPacker.packEnd`: packs from the last item backwards, so that the
/// bins that are not full come first; bins and the items in them are in input order.
pub fn pack_end<T>(
    mut items: Vec<T>,
    target_weight: i64,
    lookback: usize,
    largest_bin_first: bool,
    weight: impl FnMut(&T) -> i64,
) -> Result<Vec<Vec<T>>> {
    items.reverse();
    let mut bins = pack(items, target_weight, lookback, largest_bin_first, weight)?;
    bins.reverse();
    for bin in &mut bins {
        bin.reverse();
    }
    Ok(bins)
}

#[cfg(test)]
mod tests;
