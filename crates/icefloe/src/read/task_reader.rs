//! One task read: its file's row groups in its byte range, decoded column by column into
//! the output schema, its deletes and residual applied.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, DataType, FieldRef, Schema as ArrowSchema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter, RowSelection};

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::schema::reserved;

use super::columns::{deleted, lineage, metadata_constant, partition_constant, positions};
use super::conform::Conformer;
use super::context::{field_id, PlanContext, TaskFilter};
use super::deletes::position_deletes;
use super::equality_deletes::EqualityDeletes;
use super::parquet_file::ParquetFile;
use super::task::{constants, DeleteFile, ReadTask, EQUALITY_DELETES};

/// Where a column comes from.
enum Source {
    /// A column of the decoded batches (its index among the decoded roots), the file's
    /// field and the wanted one.
    File {
        root: usize,
        source: FieldRef,
        target: FieldRef,
    },
    /// The same values in every row, made for a whole batch and sliced.
    Constant(ArrayRef),
    /// A metadata column computed per batch.
    Metadata(&'static str),
    /// (Work columns only) the output column at this index: the projection holds the
    /// field as the table has it.
    Output(usize),
}

/// Where a column the residual reads comes from when the residual is evaluated inside the
/// Parquet decoder (late materialisation): a root of the file or a constant.
enum Base {
    File {
        root: usize,
        source: FieldRef,
        target: FieldRef,
    },
    Constant(ArrayRef),
}

/// A task's residual as an arrow-rs row filter: the decoder reads the residual's columns
/// first, and decodes the other columns only for the rows (or pages) it keeps.
struct LateFilter {
    ctx: Arc<PlanContext>,
    location: String,
    /// The file's top-level columns the residual reads, in the file's order (the order of
    /// the predicate's batches).
    roots: Vec<usize>,
    /// The work columns (the residual's fields as the table has them).
    bases: Vec<Base>,
    work_schema: SchemaRef,
    residual: Arc<TaskFilter>,
}

fn external(e: Error) -> ArrowError {
    ArrowError::ExternalError(Box::new(e))
}

impl LateFilter {
    fn mask(&self, batch: &RecordBatch) -> std::result::Result<BooleanArray, ArrowError> {
        let n = batch.num_rows();
        let conformer = Conformer {
            ctx: &self.ctx,
            file: &self.location,
        };
        let mut columns = Vec::with_capacity(self.bases.len());
        for base in &self.bases {
            columns.push(match base {
                Base::File {
                    root,
                    source,
                    target,
                } => {
                    let Ok(i) = self.roots.binary_search(root) else {
                        return Err(external(Error::invalid_argument(format!(
                            "the residual's column {root} of {} was not decoded",
                            self.location
                        ))));
                    };
                    conformer
                        .conform(batch.column(i), source, target)
                        .map_err(external)?
                }
                Base::Constant(c) if c.len() >= n => c.slice(0, n),
                Base::Constant(c) => {
                    super::conform::repeat(c.slice(0, 1).as_ref(), n).map_err(external)?
                }
            });
        }
        let work = RecordBatch::try_new_with_options(
            Arc::clone(&self.work_schema),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )?;
        self.residual
            .filter
            .mask(&work)
            .map_err(|e| external(e.in_file(&self.location)))
    }

    /// A row filter for one row group's decoder (each decoder takes its own).
    fn row_filter(self: &Arc<Self>, file: &ParquetFile) -> RowFilter {
        let me = Arc::clone(self);
        let predicate =
            ArrowPredicateFn::new(file.projection(&self.roots), move |batch| me.mask(&batch));
        RowFilter::new(vec![Box::new(predicate)])
    }
}

/// The file's top-level columns a task decodes (indexes of the file's schema).
#[derive(Default)]
struct Roots(Vec<usize>);

impl Roots {
    fn add(&mut self, root: usize) -> usize {
        if !self.0.contains(&root) {
            self.0.push(root);
        }
        root
    }
}

/// Reads `task` and hands each non-empty batch to `emit`, which returns false to stop
/// (the reader was dropped).
pub fn read_task(
    task: &ReadTask,
    ctx: &Arc<PlanContext>,
    io: &Arc<dyn FileIO>,
    batch_size: usize,
    emit: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let location = task.file_path.as_str();
    if !task.file_format.eq_ignore_ascii_case("parquet") {
        return Err(Error::unsupported(format!(
            "cannot read {location}: {} data files are not supported yet",
            task.file_format
        )));
    }
    let residual = &task.residual;
    if residual.is_false() {
        return Ok(());
    }
    let batch_size = batch_size.max(1);
    let file = ParquetFile::open(
        Arc::clone(io),
        location,
        "data file",
        ctx.name_mapping.as_ref(),
    )?;
    let file_fields = file.schema.fields();
    let file_top: HashMap<i32, usize> = file_fields
        .iter()
        .enumerate()
        .filter_map(|(i, f)| field_id(f).map(|id| (id, i)))
        .collect();
    let conformer = Conformer {
        ctx: ctx.as_ref(),
        file: location,
    };
    let constants: HashMap<i32, ArrayRef> = constants(task, ctx).into_iter().collect();
    let mut roots = Roots::default();

    // what makes the column of field `target`: a partition constant, the file's column,
    // or its default
    let source_of = |target: &FieldRef, roots: &mut Roots| -> Result<Source> {
        let id = field_id(target);
        Ok(match id {
            Some(id) if constants.contains_key(&id) => Source::Constant(partition_constant(
                &constants[&id],
                target,
                batch_size,
                location,
            )?),
            Some(id) if file_top.contains_key(&id) => Source::File {
                root: roots.add(file_top[&id]),
                source: Arc::clone(&file_fields[file_top[&id]]),
                target: Arc::clone(target),
            },
            _ => Source::Constant(conformer.missing(target, batch_size)?),
        })
    };

    let mut sources: Vec<Source> = Vec::new();
    for target in ctx.projected_arrow.fields() {
        sources.push(source_of(target, &mut roots)?);
    }
    let lineage_root = |id: i32, name: &str, roots: &mut Roots| {
        if ctx.wants(name) {
            file_top.get(&id).map(|&r| roots.add(r))
        } else {
            None
        }
    };
    let row_id_root = lineage_root(reserved::ROW_ID_ID, "_row_id", &mut roots);
    let seq_root = lineage_root(
        reserved::LAST_UPDATED_SEQUENCE_NUMBER_ID,
        "_last_updated_sequence_number",
        &mut roots,
    );
    for (name, _) in &ctx.metadata_columns {
        sources.push(match metadata_constant(name, task, ctx, batch_size)? {
            Some(c) => Source::Constant(c),
            None => Source::Metadata(name),
        });
    }

    // the fields the residual and the equality deletes need, as the table has them: the
    // projection's column where it is the same, else read (or made) for them alone
    let eq_files: Vec<&DeleteFile> = task
        .deletes
        .iter()
        .filter(|d| d.content == EQUALITY_DELETES)
        .collect();
    let mut extra_ids: Vec<i32> = Vec::new();
    if !residual.is_true() {
        extra_ids.extend(&residual.top_level_ids);
    }
    for id in eq_files.iter().flat_map(|d| d.equality_ids.iter()) {
        if !extra_ids.contains(id) {
            extra_ids.push(*id);
        }
    }
    let mut work: Vec<Source> = Vec::new();
    let mut work_fields: Vec<FieldRef> = Vec::new();
    for &id in &extra_ids {
        let table = ctx.table_arrow.get(&id);
        let projected = ctx
            .projected_arrow
            .fields()
            .iter()
            .position(|f| field_id(f) == Some(id));
        if let Some(ix) = projected {
            let pf = &ctx.projected_arrow.fields()[ix];
            if table.is_none_or(|t| t.data_type() == pf.data_type()) {
                work.push(Source::Output(ix));
                work_fields.push(Arc::new(pf.as_ref().clone().with_nullable(true)));
                continue;
            }
        }
        let target: FieldRef = match (table, file_top.get(&id)) {
            (Some(t), _) => Arc::clone(t),
            // an equality column that is gone from the read schema: as the file has it
            (None, Some(&root)) => Arc::clone(&file_fields[root]),
            (None, None) if ctx.field(id).is_some() => {
                return Err(Error::unsupported(format!(
                    "equality deletes on nested field {id} are not supported ({location})"
                )))
            }
            // dropped and not in this file: the work batches lack it (read as null)
            (None, None) => continue,
        };
        work.push(source_of(&target, &mut roots)?);
        work_fields.push(Arc::new(target.as_ref().clone().with_nullable(true)));
    }
    let work_schema: SchemaRef = Arc::new(ArrowSchema::new(work_fields));
    let eq_deletes = equality_deletes(&eq_files, &work_schema, ctx, io)?;

    // Late materialisation: the residual evaluated inside the decoder on its own columns,
    // the deletion vector as the decoder's row selection, so that the rows they drop are
    // never assembled into output batches (and whole pages of them are skipped). Only when
    // no output column depends on a row's position in the file (the decoder's batches no
    // longer say which rows they hold) and there are no equality deletes (their keys are
    // probed on the work columns after decoding).
    let positional = [
        "_pos",
        "_row_id",
        "_last_updated_sequence_number",
        "_deleted",
    ]
    .iter()
    .any(|c| ctx.wants(c));
    let late: Option<Arc<LateFilter>> = if residual.is_true() || eq_deletes.is_some() || positional
    {
        None
    } else {
        let mut bases = Vec::with_capacity(work.len());
        for w in &work {
            let source = match w {
                Source::Output(ix) => sources.get(*ix),
                other => Some(other),
            };
            bases.push(match source {
                Some(Source::File {
                    root,
                    source,
                    target,
                }) => Base::File {
                    root: *root,
                    source: Arc::clone(source),
                    target: Arc::clone(target),
                },
                Some(Source::Constant(c)) => Base::Constant(Arc::clone(c)),
                _ => {
                    bases.clear();
                    break;
                }
            });
        }
        let mut filter_roots: Vec<usize> = bases
            .iter()
            .filter_map(|b| match b {
                Base::File { root, .. } => Some(*root),
                Base::Constant(_) => None,
            })
            .collect();
        filter_roots.sort_unstable();
        filter_roots.dedup();
        (bases.len() == work.len() && !filter_roots.is_empty()).then(|| {
            Arc::new(LateFilter {
                ctx: Arc::clone(ctx),
                location: location.to_string(),
                roots: filter_roots,
                bases,
                work_schema: Arc::clone(&work_schema),
                residual: Arc::clone(residual),
            })
        })
    };

    // decoded batches hold the roots in the file's order
    let mut roots = roots.0;
    roots.sort_unstable();
    let at = |root: usize| roots.binary_search(&root).unwrap_or(usize::MAX);

    let row_groups = file.row_groups();
    let selected = file.row_groups_in(task.start, task.length, task.file_size_in_bytes);
    let deletes = position_deletes(task, io)?.filter(|dv| !dv.is_empty());
    let wants_deleted = ctx.wants("_deleted");
    let bad = |e: arrow_schema::ArrowError| {
        Error::invalid_metadata("", format!("cannot read data file {location}: {e}"))
            .in_file(location)
    };
    let rows = |n: usize| RecordBatchOptions::new().with_row_count(Some(n));

    for rg in selected {
        let Some(span) = row_groups.get(rg) else {
            continue;
        };
        let (selection, filter) = match &late {
            Some(late) => (
                deletes.as_ref().map(|dv| {
                    let rows = usize::try_from(span.num_rows).unwrap_or(usize::MAX);
                    let keep = dv.keep_mask_buffer(span.first_row, rows);
                    RowSelection::from_filters(&[BooleanArray::new(keep, None)])
                }),
                Some(late.row_filter(&file)),
            ),
            None => (None, None),
        };
        let Some(reader) =
            file.read_row_group_filtered(rg, &roots, batch_size, "data file", selection, filter)?
        else {
            continue;
        };
        let mut pos = span.first_row;
        for raw in reader {
            let raw = raw.map_err(bad)?;
            let n = raw.num_rows();
            if n == 0 {
                continue;
            }
            // the column of a source for this batch (`None` for the per-batch metadata)
            let value = |s: &Source, out: &[ArrayRef]| -> Result<ArrayRef> {
                Ok(match s {
                    Source::File {
                        root,
                        source,
                        target,
                    } => conformer.conform(raw.column(at(*root)), source, target)?,
                    Source::Constant(c) => c.slice(0, n),
                    Source::Output(ix) => out
                        .get(*ix)
                        .cloned()
                        .unwrap_or_else(|| new_null_array(&DataType::Null, n)),
                    Source::Metadata(_) => new_null_array(&DataType::Null, n),
                })
            };
            let projected = ctx.projected_arrow.fields().len();
            let mut columns = Vec::with_capacity(sources.len());
            for s in &sources[..projected] {
                columns.push(value(s, &[])?);
            }

            // (late: the decoder applied the deletes and the residual already)
            let mut keep = deletes.as_ref().filter(|_| late.is_none()).and_then(|dv| {
                let mask = dv.keep_mask_buffer(pos, n);
                (mask.count_set_bits() != n).then(|| BooleanArray::new(mask, None))
            });
            let mut residual_mask = None;
            if !work.is_empty() && late.is_none() {
                let work_columns = work
                    .iter()
                    .map(|w| value(w, &columns))
                    .collect::<Result<Vec<_>>>()?;
                let work_batch = RecordBatch::try_new_with_options(
                    Arc::clone(&work_schema),
                    work_columns,
                    &rows(n),
                )
                .map_err(bad)?;
                for set in eq_deletes.iter().flat_map(EqualityDeletes::sets) {
                    let mask = set
                        .keep_mask(&work_batch)
                        .map_err(|e| e.in_file(location))?;
                    keep = Some(match keep {
                        Some(k) => arrow_arith::boolean::and(&k, &mask).map_err(bad)?,
                        None => mask,
                    });
                }
                if !residual.is_true() {
                    residual_mask = Some(
                        residual
                            .filter
                            .mask(&work_batch)
                            .map_err(|e| e.in_file(location))?,
                    );
                }
            }

            for s in &sources[projected..] {
                columns.push(match s {
                    Source::Metadata("_pos") => Arc::new(positions(pos, n)),
                    Source::Metadata("_row_id") => lineage(
                        row_id_root.map(|c| raw.column(at(c))),
                        task.first_row_id.map(|first| {
                            positions(pos, n)
                                .iter()
                                .map(|v| v.map(|v| v.saturating_add(first)))
                                .collect()
                        }),
                        n,
                        location,
                    )?,
                    Source::Metadata("_last_updated_sequence_number") => lineage(
                        seq_root.map(|c| raw.column(at(c))),
                        task.first_row_id.map(|_| {
                            arrow_array::Int64Array::from_value(task.data_sequence_number, n)
                        }),
                        n,
                        location,
                    )?,
                    Source::Metadata(_) => deleted(keep.as_ref(), n),
                    other => value(other, &[])?,
                });
            }
            let batch =
                RecordBatch::try_new_with_options(Arc::clone(&ctx.out_schema), columns, &rows(n))
                    .map_err(bad)?;
            // with `_deleted` asked for, deleted rows stay (marked); the residual applies
            let mask = match (keep.filter(|_| !wants_deleted), residual_mask) {
                (Some(k), Some(r)) => Some(arrow_arith::boolean::and(&k, &r).map_err(bad)?),
                (k, r) => k.or(r),
            };
            let batch = match mask {
                Some(m) if m.true_count() < n => {
                    arrow_select::filter::filter_record_batch(&batch, &m).map_err(bad)?
                }
                _ => batch,
            };
            pos += n as u64;
            if batch.num_rows() > 0 && !emit(batch) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The equality delete files of a task as sets of keys, keyed in the types of the work
/// columns (`work`: the table's types) the data rows are probed with.
fn equality_deletes(
    files: &[&DeleteFile],
    work: &ArrowSchema,
    ctx: &PlanContext,
    io: &Arc<dyn FileIO>,
) -> Result<Option<EqualityDeletes>> {
    if files.is_empty() {
        return Ok(None);
    }
    let mut out = EqualityDeletes::new();
    for d in files {
        let location = d.file_path.as_str();
        if !d.file_format.eq_ignore_ascii_case("parquet") {
            return Err(Error::unsupported(format!(
                "cannot read {location}: {} delete files are not supported yet",
                d.file_format
            )));
        }
        if d.equality_ids.is_empty() {
            return Err(Error::invalid_metadata(
                "equality_ids",
                format!("equality delete file {location} has no equality field ids"),
            )
            .in_file(location));
        }
        let file = ParquetFile::open(
            Arc::clone(io),
            location,
            "delete file",
            ctx.name_mapping.as_ref(),
        )?;
        let fields = file.schema.fields();
        let top: HashMap<i32, usize> = fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| field_id(f).map(|id| (id, i)))
            .collect();
        let mut keys = Vec::new();
        let mut missing = Vec::new();
        let mut roots = Vec::new();
        for &id in &d.equality_ids {
            let Some(&root) = top.get(&id) else {
                missing.push(id);
                continue;
            };
            let ty = work
                .fields()
                .iter()
                .find(|f| field_id(f) == Some(id))
                .map_or_else(
                    || fields[root].data_type().clone(),
                    |f| f.data_type().clone(),
                );
            keys.push((id, ty));
            roots.push(root);
        }
        if !missing.is_empty() {
            return Err(Error::invalid_metadata(
                "equality_ids",
                format!("equality delete file {location} lacks the equality columns {missing:?}"),
            )
            .in_file(location));
        }
        let set = out.set_for(keys)?;
        roots.sort_unstable();
        roots.dedup();
        // the decoded batches with the file's fields (their ids, assigned ones too)
        let schema: SchemaRef = Arc::new(ArrowSchema::new(
            roots
                .iter()
                .map(|&r| Arc::clone(&fields[r]))
                .collect::<Vec<_>>(),
        ));
        let bad = |e: arrow_schema::ArrowError| {
            Error::invalid_metadata("", format!("cannot read delete file {location}: {e}"))
                .in_file(location)
        };
        for rg in 0..file.row_groups().len() {
            let Some(reader) = file.read_row_group(rg, &roots, 65536, "delete file")? else {
                continue;
            };
            for batch in reader {
                let batch = batch.map_err(bad)?;
                let batch = RecordBatch::try_new(Arc::clone(&schema), batch.columns().to_vec())
                    .map_err(bad)?;
                set.insert_batch(&batch, location)?;
            }
        }
    }
    Ok(Some(out))
}
