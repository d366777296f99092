//! A packed plan (Java's `TableScan.planTasks()`) built while the scan is planned, and its
//! task groups as self-contained payloads for readers.
//!
//! Each data manifest's tasks become one record batch on the planning thread that read the
//! manifest (as in [`super::plan::plan_to_batches`]), together with the byte ranges their
//! files split into and the packing weight of each range. The planned files are dropped as
//! soon as they are in Arrow, so a plan of a million files never exists as a million
//! `DataFile`s at once (that materialisation, with the kernel clearing its fresh pages,
//! was most of the cost of packing a large plan). The ranges are then packed in manifest
//! order with the packer of [`crate::scan::plan_tasks`], so the groups are the ones Java's
//! `planTasks` makes from the same files in the same order; a group's rows are a slice of
//! one manifest's batch when they are consecutive (the common case) and are gathered
//! otherwise.
//!
//! Rows have the columns of [`super::plan`], with `group` set and `start` and `length`
//! those of each range (consecutive ranges of one file in a group merged, as Java's
//! `mergeTasks` does).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::Schema as ArrowSchema;

use super::plan_batches::{
    arrow_err, remap_residuals, stream_schema, tasks_to_batches, ResidualMerger,
};
use crate::error::{Error, Result};
use crate::manifest::v4::tree::{LeafBlock, TreePosition};
use crate::scan::split::{
    adjust_split_size, delete_weight, fixed_size_ranges, merge_adjacent, new_packer, offset_ranges,
    split_kind, usable_split_offsets, weight_of, SplitKind,
};
use crate::scan::{ScanPlan, SplitOptions, TableScan};
use crate::spec::table_metadata::TableMetadata;

/// A byte range of one planned file: the file is row `row` of part `part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    part: u32,
    row: u32,
    start: i64,
    length: i64,
}

/// What one data manifest contributes: its whole-file tasks as one batch (none when it
/// kept no file), each range as `(row, start, length, deletes)` (a file cut into ranges of
/// the target size as one range of the whole file, `fixed`, cut once the target is known)
/// and the bytes of its tasks (lengths and delete sizes, Java's `sizeBytes`).
struct Part {
    schema: Arc<ArrowSchema>,
    batch: Option<RecordBatch>,
    ranges: Vec<PartRange>,
    size: i64,
    /// Each task's first split offset where its file's are usable, else 0 (for
    /// [`PackedPlan::estimated_rows`]).
    first_offsets: Vec<i64>,
}

struct PartRange {
    row: u32,
    start: i64,
    length: i64,
    deletes: (i64, i64),
    fixed: bool,
}

/// A packed plan: the plan's counts and metadata, its rows by manifest and its groups.
pub struct PackedPlan {
    /// The plan, without tasks (its counts, schemas and specs).
    pub plan: ScanPlan,
    schema: Arc<ArrowSchema>,
    parts: Vec<RecordBatch>,
    groups: Vec<Vec<Range>>,
    /// Column positions of `group`, `start` and `length`.
    columns: [usize; 3],
    /// `Part::first_offsets` of each part in `parts`.
    first_offsets: Vec<Vec<i64>>,
}

/// Plans `scan` and packs its files into task groups with `options` (Java's
/// `planTasks`: split, then bin-pack with the lookback, largest bin first).
pub fn plan_packed(scan: &TableScan, options: &SplitOptions) -> Result<PackedPlan> {
    plan_packed_for(scan, options, None)
}

/// [`plan_packed`], with the target size adapted to `parallelism` slots when given (Java's
/// Spark scans: [`adjust_split_size`] of the planned files' total size), so that a table
/// smaller than a split per slot still gives every slot a group.
pub fn plan_packed_for(
    scan: &TableScan,
    options: &SplitOptions,
    parallelism: Option<i32>,
) -> Result<PackedPlan> {
    options.validate()?;
    let (plan, parts) = scan.plan_with(|plan, tasks| {
        let mut ranges = Vec::with_capacity(tasks.len());
        let mut size = 0i64;
        let mut first_offsets = Vec::with_capacity(tasks.len());
        for (row, task) in tasks.iter().enumerate() {
            first_offsets.push(
                usable_split_offsets(&task.file.file)
                    .and_then(|o| o.first().copied())
                    .unwrap_or(0),
            );
            let row = u32::try_from(row)
                .map_err(|_| Error::unsupported("a manifest with more than 2^32 planned files"))?;
            // the deletes of a file are the same for all its ranges: weigh them once
            let deletes = delete_weight(&task.deletes)?;
            size = size.wrapping_add(task.length).wrapping_add(deletes.0);
            let range = |start, length, fixed| PartRange {
                row,
                start,
                length,
                deletes,
                fixed,
            };
            match split_kind(task)? {
                SplitKind::Whole => ranges.push(range(task.start, task.length, false)),
                SplitKind::Fixed(file_size) => ranges.push(range(0, file_size, true)),
                SplitKind::Offsets(offsets) => {
                    let mut cut = Vec::with_capacity(offsets.len());
                    offset_ranges(offsets, task.length, &mut cut);
                    ranges.extend(cut.into_iter().map(|(s, l)| range(s, l, false)));
                }
            }
        }
        let rows: Vec<_> = tasks.iter().map(|t| (None, t)).collect();
        let (schema, mut batches) = tasks_to_batches(plan, &rows, tasks.len().max(1))?;
        Ok(Part {
            schema,
            batch: batches.pop(),
            ranges,
            size,
            first_offsets,
        })
    })?;
    let mut options = *options;
    if let Some(parallelism) = parallelism {
        let size = parts.iter().fold(0i64, |a, p| a.wrapping_add(p.size));
        options.target_size = adjust_split_size(size, parallelism, options.target_size)?;
    }

    // one residual list for the whole plan, in manifest order
    let mut merger = ResidualMerger::default();
    let mappings = parts
        .iter()
        .map(|p| merger.mapping(&p.schema))
        .collect::<Result<Vec<_>>>()?;
    let schema = stream_schema(&plan, Some(&merger.residuals))?;

    let mut packer = new_packer(&options)?;
    let mut groups = Vec::new();
    let mut cut = Vec::new();
    let mut batches = Vec::with_capacity(parts.len());
    let mut first_offsets = Vec::with_capacity(parts.len());
    for (part, mapping) in parts.into_iter().zip(mappings) {
        let Some(batch) = part.batch else { continue };
        let index = u32::try_from(batches.len())
            .map_err(|_| Error::unsupported("a plan with more than 2^32 manifests"))?;
        batches.push(remap_residuals(&schema, &mapping, &batch)?);
        first_offsets.push(part.first_offsets);
        for r in part.ranges {
            cut.clear();
            if r.fixed {
                fixed_size_ranges(r.length, options.target_size, &mut cut);
            } else {
                cut.push((r.start, r.length));
            }
            for &(start, length) in &cut {
                let range = Range {
                    part: index,
                    row: r.row,
                    start,
                    length,
                };
                let weight = weight_of(length, r.deletes, options.open_file_cost);
                if let Some(bin) = packer.push(range, weight) {
                    groups.push(merged(bin));
                }
            }
        }
    }
    groups.extend(packer.finish().map(merged));
    let column = |name: &str| schema.index_of(name).map_err(arrow_err);
    let columns = [column("group")?, column("start")?, column("length")?];
    Ok(PackedPlan {
        plan,
        schema,
        parts: batches,
        groups,
        columns,
        first_offsets,
    })
}

/// Column `name` of a part's batch (of the plan's `schema`), as its array type `A`.
fn part_column<A: Array + Clone + 'static>(
    schema: &ArrowSchema,
    batch: &RecordBatch,
    name: &str,
) -> Result<A> {
    let i = schema.index_of(name).map_err(arrow_err)?;
    batch
        .column(i)
        .as_any()
        .downcast_ref::<A>()
        .cloned()
        .ok_or_else(|| Error::unsupported(format!("plan column {name} has another type")))
}

/// The tree positions plan rows `batches` (of `schema`, as planning gives them: the
/// `v4_leaf`, `v4_ordinal`, `v4_block_offset` and `v4_block_length` columns) hold for
/// their data files: the leaf, ordinal and Avro block of each file a v4 plan found in a
/// leaf. None for files held in the root, and none at all for a plan without `v4_leaf`
/// (a table before v4). A v4 column of another type is an error.
pub fn tree_positions_of(
    schema: &ArrowSchema,
    batches: &[RecordBatch],
) -> Result<Vec<(String, TreePosition)>> {
    let mut out = Vec::new();
    if schema.index_of("v4_leaf").is_err() {
        return Ok(out);
    }
    for b in batches {
        let leaves = part_column::<StringArray>(schema, b, "v4_leaf")?;
        if leaves.null_count() == leaves.len() {
            continue;
        }
        let paths = part_column::<StringArray>(schema, b, "file_path")?;
        let ordinals = part_column::<Int64Array>(schema, b, "v4_ordinal")?;
        let offsets = part_column::<Int64Array>(schema, b, "v4_block_offset")?;
        let lengths = part_column::<Int64Array>(schema, b, "v4_block_length")?;
        let mut manifest: Option<Arc<str>> = None;
        for i in 0..b.num_rows() {
            if leaves.is_null(i) || ordinals.is_null(i) {
                continue;
            }
            // one shared string per leaf, as the plan holds them
            let name = leaves.value(i);
            let m = match &manifest {
                Some(m) if &**m == name => Arc::clone(m),
                _ => Arc::from(name),
            };
            manifest = Some(Arc::clone(&m));
            let block = (offsets.is_valid(i) && lengths.is_valid(i))
                .then(|| {
                    Some(LeafBlock {
                        offset: u64::try_from(offsets.value(i)).ok()?,
                        length: u64::try_from(lengths.value(i)).ok()?,
                    })
                })
                .flatten();
            out.push((
                paths.value(i).to_string(),
                TreePosition::Leaf {
                    manifest: m,
                    ordinal: ordinals.value(i),
                    block,
                },
            ));
        }
    }
    Ok(out)
}

/// The ranges of a bin with consecutive ranges of one file merged (Java's
/// `TableScanUtil.mergeTasks`; see `crate::scan::split`): same file, both not empty, and
/// the second starts where the first ends.
fn merged(bin: Vec<Range>) -> Vec<Range> {
    merge_adjacent(
        bin,
        |a, b| (a.part, a.row) == (b.part, b.row),
        |r| (r.start, r.length),
        |r, more| r.length = r.length.wrapping_add(more),
    )
}

impl PackedPlan {
    /// The schema of every group's rows (the plan's residuals in its metadata).
    pub fn schema(&self) -> &Arc<ArrowSchema> {
        &self.schema
    }

    /// The number of task groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The number of tasks of group `g`.
    pub fn group_len(&self, g: usize) -> usize {
        self.groups.get(g).map_or(0, Vec::len)
    }

    /// The rows of group `g`: one per task, in the group's order.
    pub fn group_batch(&self, g: usize) -> Result<RecordBatch> {
        let ranges = self
            .groups
            .get(g)
            .ok_or_else(|| Error::invalid_argument(format!("no task group {g}")))?;
        let Some(first) = ranges.first() else {
            return Ok(RecordBatch::new_empty(self.schema.clone()));
        };
        let part = |p: u32| {
            self.parts
                .get(p as usize)
                .ok_or_else(|| Error::unsupported(format!("a task group refers to part {p}")))
        };
        let consecutive = ranges
            .iter()
            .zip(0u32..)
            .all(|(r, i)| r.part == first.part && Some(r.row) == first.row.checked_add(i));
        let base = if consecutive {
            part(first.part)?.slice(first.row as usize, ranges.len())
        } else {
            // rows of several manifests, or not in order: gather them from the parts used
            let mut used: Vec<u32> = ranges.iter().map(|r| r.part).collect();
            used.sort_unstable();
            used.dedup();
            let sources = used.iter().map(|&p| part(p)).collect::<Result<Vec<_>>>()?;
            let indices: Vec<(usize, usize)> = ranges
                .iter()
                .map(|r| (used.binary_search(&r.part).unwrap_or(0), r.row as usize))
                .collect();
            let columns = (0..self.schema.fields().len())
                .map(|c| {
                    let arrays: Vec<&dyn Array> =
                        sources.iter().map(|b| b.column(c).as_ref()).collect();
                    arrow_select::interleave::interleave(&arrays, &indices).map_err(arrow_err)
                })
                .collect::<Result<Vec<_>>>()?;
            RecordBatch::try_new(self.schema.clone(), columns).map_err(arrow_err)?
        };
        let group = i32::try_from(g).unwrap_or(i32::MAX);
        let mut columns: Vec<ArrayRef> = base.columns().to_vec();
        let [group_col, start_col, length_col] = self.columns;
        columns[group_col] = Arc::new(Int32Array::from_value(group, ranges.len()));
        columns[start_col] = Arc::new(Int64Array::from_iter_values(ranges.iter().map(|r| r.start)));
        columns[length_col] = Arc::new(Int64Array::from_iter_values(
            ranges.iter().map(|r| r.length),
        ));
        RecordBatch::try_new(self.schema.clone(), columns).map_err(arrow_err)
    }

    /// The rows the groups' tasks are estimated to read, as Java's Spark scans estimate
    /// them for Spark's statistics (`ContentScanTask.estimatedRowsCount` summed over the
    /// tasks: the task's length over its file's size less the first split offset, times the
    /// file's record count, truncated per task; deletes not subtracted).
    pub fn estimated_rows(&self) -> Result<i64> {
        let columns = self
            .parts
            .iter()
            .map(|b| {
                Ok((
                    part_column::<Int64Array>(&self.schema, b, "record_count")?,
                    part_column::<Int64Array>(&self.schema, b, "file_size_in_bytes")?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rows = 0i64;
        for r in self.groups.iter().flatten() {
            let (p, i) = (r.part as usize, r.row as usize);
            let missing = || Error::unsupported(format!("a task group refers to part {p}"));
            let (records, sizes) = columns.get(p).ok_or_else(missing)?;
            let offset = self
                .first_offsets
                .get(p)
                .and_then(|o| o.get(i))
                .ok_or_else(missing)?;
            let scanned = r.length as f64 / (sizes.value(i) - offset) as f64;
            // Java's (long) cast: NaN to 0, out of range to the nearest bound, as `as` does
            rows = rows.saturating_add((scanned * records.value(i) as f64) as i64);
        }
        Ok(rows)
    }

    /// The row count Java's Spark scans report in Spark's statistics
    /// (`SparkScan.estimateStatistics`): 0 without a snapshot; the snapshot summary's
    /// `total-records` (`i64::MAX` when it has none) for a table whose current spec is
    /// partitioned, read without a filter; else [`PackedPlan::estimated_rows`]. `md` is
    /// the table the scan planned.
    pub fn statistics_rows(&self, md: &TableMetadata, filtered: bool) -> Result<i64> {
        let Some(snapshot) = self.plan.snapshot_id.and_then(|id| md.snapshot_by_id(id)) else {
            return Ok(0);
        };
        let partitioned = md.default_spec().is_some_and(|s| !s.is_unpartitioned());
        if partitioned && !filtered {
            let total = snapshot
                .summary
                .as_ref()
                .and_then(|s| s.get("total-records"))
                .map_or(Ok(i64::MAX), str::parse::<i64>);
            return total.map_err(|e| {
                Error::invalid_metadata(
                    format!("snapshots[{}].summary.total-records", snapshot.snapshot_id),
                    format!("not a long: {e}"),
                )
            });
        }
        self.estimated_rows()
    }

    /// Where a plan of a v4 snapshot found each data file held in a leaf (its leaf, ordinal
    /// and Avro block), for a row-level write to hand back to its commit
    /// ([`crate::commit::SnapshotProducer::data_file_position`]); none for files held in the
    /// root and for tables before v4 ([`tree_positions_of`]).
    pub fn tree_positions(&self) -> Result<Vec<(String, TreePosition)>> {
        tree_positions_of(&self.schema, &self.parts)
    }

    /// The planned data files with the deletes the plan applies to each, for the writers
    /// of a row-level write ([`crate::write::scanned_deletes`]), or `None` for a plan of
    /// more than `max_files` files or without a snapshot (its writers then read the
    /// manifests).
    pub fn scanned_deletes(&self, max_files: usize) -> Result<Option<Vec<u8>>> {
        let Some(snapshot_id) = self.plan.snapshot_id else {
            return Ok(None);
        };
        let files: usize = self.parts.iter().map(RecordBatch::num_rows).sum();
        if files > max_files {
            return Ok(None);
        }
        crate::write::scanned_deletes::encode(&self.schema, &self.parts, snapshot_id).map(Some)
    }

    /// Every group's rows in group order, as record batches of at most `batch_rows` rows.
    pub fn to_batches(&self, batch_rows: usize) -> Result<Vec<RecordBatch>> {
        let batches = (0..self.groups.len())
            .map(|g| self.group_batch(g))
            .collect::<Result<Vec<_>>>()?;
        let all =
            arrow_select::concat::concat_batches(&self.schema, &batches).map_err(arrow_err)?;
        let batch_rows = batch_rows.max(1);
        Ok((0..all.num_rows())
            .step_by(batch_rows)
            .map(|start| all.slice(start, batch_rows.min(all.num_rows() - start)))
            .collect())
    }

    /// Each group as one self-contained payload: the Arrow IPC stream of its rows (the
    /// plan's schema and metadata included, so a reader needs nothing else), compressed
    /// as an LZ4 frame, with the group's number of tasks. This is how a Spark partition
    /// ships a group: file paths share long prefixes, and LZ4 takes a 1,000,000-file
    /// plan's payloads from about 290 MB to about 80 MB (see docs/benchmarks.md). Groups
    /// are encoded on up to `threads` threads (at least one), in contiguous runs.
    /// [`task_group_from_payload`] reads one back.
    pub fn payloads(&self, threads: usize) -> Result<Vec<(Vec<u8>, usize)>> {
        let encode = |groups: std::ops::Range<usize>| -> Result<Vec<(Vec<u8>, usize)>> {
            let mut ipc = Vec::new();
            groups
                .map(|g| {
                    let batch = self.group_batch(g)?;
                    ipc.clear();
                    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &self.schema)
                        .map_err(arrow_err)?;
                    w.write(&batch).map_err(arrow_err)?;
                    w.finish().map_err(arrow_err)?;
                    drop(w);
                    Ok((lz4_frame(&ipc)?, batch.num_rows()))
                })
                .collect()
        };
        let n = self.groups.len();
        let per_thread = n.div_ceil(threads.max(1)).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .step_by(per_thread)
                .map(|start| scope.spawn(move || encode(start..(start + per_thread).min(n))))
                .collect();
            let mut out = Vec::with_capacity(n);
            for h in handles {
                let part = h
                    .join()
                    .map_err(|_| Error::unsupported("a thread encoding task groups panicked"))??;
                out.extend(part);
            }
            Ok(out)
        })
    }
}

pub(crate) fn lz4_frame(bytes: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    // with a content checksum, so that a damaged payload is an error, not garbage rows
    let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
    let mut enc =
        lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::with_capacity(bytes.len() / 3));
    enc.write_all(bytes)
        .map_err(|e| Error::invalid_argument(format!("cannot compress a task group: {e}")))?;
    enc.finish()
        .map_err(|e| Error::invalid_argument(format!("cannot compress a task group: {e}")))
}

/// The Arrow IPC stream bytes of a payload of [`PackedPlan::payloads`]; bytes that are
/// not an LZ4 frame are returned as they are (an uncompressed IPC stream).
pub fn task_group_from_payload(payload: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>> {
    const LZ4_FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];
    if !payload.starts_with(&LZ4_FRAME_MAGIC) {
        return Ok(std::borrow::Cow::Borrowed(payload));
    }
    let ceiling = crate::limits::max_decompressed_usize()?;
    let out = crate::limits::read_at_most(lz4_flex::frame::FrameDecoder::new(payload), ceiling)
        .map_err(|e| {
            Error::invalid_argument(format!(
                "a task group payload is not a valid LZ4 frame: {e}"
            ))
        })?
        .ok_or_else(|| {
            Error::decompression_limit(
                "",
                format!(
                    "a task group payload decompresses to more than the limit: {}",
                    crate::limits::ceiling_note(ceiling as u64)
                ),
            )
        })?;
    Ok(std::borrow::Cow::Owned(out))
}

#[cfg(test)]
#[path = "task_groups_tests.rs"]
mod tests;
