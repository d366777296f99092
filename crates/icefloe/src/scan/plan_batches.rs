//! A scan plan as Arrow record batches: one row per task, so that a plan of a million
//! files is a handful of column buffers, not a million Python objects.
//!
//! What is the same for every task (the snapshot, the read schema, the partition specs,
//! the distinct residual filters) is stored once, as JSON in the schema metadata; rows
//! refer to residuals by index.
//!
//! Columns: `group` (the packed task group with `plan_tasks`, null otherwise),
//! `file_path`, `file_format`, `start`, `length`, `record_count`, `file_size_in_bytes`,
//! `spec_id`, `partition` (a struct over every partition field of the plan's specs, by
//! field id; fields a file's spec lacks are null), `data_sequence_number`,
//! `file_sequence_number`, `first_row_id`, `residual` (index into
//! `icefloe.residuals`), and `deletes` (a list of the delete files to apply: content,
//! path, format, record count, size, data sequence number, referenced data file, DV
//! offset and length, equality field ids), `v4_leaf` and `v4_ordinal` (where a plan of a
//! v4 snapshot found the data file: its leaf manifest and entry ordinal, both null for a
//! file held in the root or a table before v4; a row-level write passes them back to its
//! commit), `v4_block_offset` and `v4_block_length` (the Avro block of the leaf holding
//! the entry, with which the commit reads the leaf only up to that block's end).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use crate::arrow::{iceberg_to_arrow_type, literals_to_array, PARQUET_FIELD_ID};
use crate::error::{Error, Result};
use crate::expr::BoundExpression;
use crate::manifest::v4::tree::TreePosition;
use crate::scan::{FileScanTask, ScanFile, ScanMetrics, ScanPlan, TableScan};
use crate::spec::transform::Transform;
use crate::spec::{Literal, PrimitiveType, Type};

/// Schema metadata keys.
pub const SNAPSHOT_ID_KEY: &str = "icefloe.snapshot_id";
pub const SCHEMA_KEY: &str = "icefloe.schema";
pub const PROJECTED_SCHEMA_KEY: &str = "icefloe.projected_schema";
pub const SPECS_KEY: &str = "icefloe.partition_specs";
pub const RESIDUALS_KEY: &str = "icefloe.residuals";
pub const FILTER_KEY: &str = "icefloe.filter";
/// The table's default name mapping (JSON; absent when the table has none), for data
/// files written without field ids.
pub const NAME_MAPPING_KEY: &str = "icefloe.name_mapping";
pub const FORMAT_VERSION_KEY: &str = "icefloe.format_version";

/// One partition field of the plan's unified partition struct.
struct UnifiedField {
    field_id: i32,
    name: String,
    ty: PrimitiveType,
}

/// The union of the partition fields of every spec in the plan, by field id (a field
/// keeps the name of the newest spec that has it, and the type of its last non-void
/// transform), as Java's `Partitioning.partitionType`.
fn unified_partition(plan: &ScanPlan) -> Result<Vec<UnifiedField>> {
    let mut by_id: BTreeMap<i32, UnifiedField> = BTreeMap::new();
    let mut ids: Vec<&i32> = plan.partition_types.keys().collect();
    ids.sort();
    for spec_id in ids {
        let Some(t) = plan.partition_types.get(spec_id) else {
            continue;
        };
        for f in &t.fields {
            let ty = match &f.field_type {
                Type::Primitive(p) => p.clone(),
                other => {
                    return Err(Error::unsupported(format!(
                        "partition field '{}' has non-primitive type {other}",
                        f.name
                    )))
                }
            };
            // a field that a later spec turned into void (v1 tables drop partition fields
            // that way) keeps the type of its real transform, which its values have
            let is_void = plan.specs.get(spec_id).is_some_and(|s| {
                s.fields
                    .iter()
                    .any(|pf| pf.field_id == f.id && pf.transform == Transform::Void)
            });
            if is_void && by_id.contains_key(&f.id) {
                continue;
            }
            by_id.insert(
                f.id,
                UnifiedField {
                    field_id: f.id,
                    name: f.name.clone(),
                    ty,
                },
            );
        }
    }
    // names must be unique in a struct: a name reused by another field id gets its id
    let mut seen: HashMap<String, usize> = HashMap::new();
    for f in by_id.values() {
        *seen.entry(f.name.clone()).or_default() += 1;
    }
    Ok(by_id
        .into_values()
        .map(|mut f| {
            if seen.get(&f.name).copied().unwrap_or(0) > 1 {
                f.name = format!("{}_{}", f.name, f.field_id);
            }
            f
        })
        .collect())
}

pub(crate) fn delete_fields() -> Fields {
    Fields::from(vec![
        Field::new("content", DataType::Int32, false),
        Field::new("file_path", DataType::Utf8, false),
        Field::new("file_format", DataType::Utf8, false),
        Field::new("record_count", DataType::Int64, false),
        Field::new("file_size_in_bytes", DataType::Int64, false),
        Field::new("data_sequence_number", DataType::Int64, false),
        Field::new("referenced_data_file", DataType::Utf8, true),
        Field::new("content_offset", DataType::Int64, true),
        Field::new("content_size_in_bytes", DataType::Int64, true),
        Field::new(
            "equality_ids",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        ),
    ])
}

fn plan_schema(
    plan: &ScanPlan,
    partition: &[UnifiedField],
    residuals: &[Arc<BoundExpression>],
) -> Result<ArrowSchema> {
    let partition_fields = partition
        .iter()
        .map(|f| {
            // the partition field id, so readers find a spec's fields in the unified struct
            Ok(
                Field::new(&f.name, iceberg_to_arrow_type(&f.ty)?, true).with_metadata(
                    HashMap::from([(PARQUET_FIELD_ID.to_string(), f.field_id.to_string())]),
                ),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let fields = vec![
        Field::new("group", DataType::Int32, true),
        Field::new("file_path", DataType::Utf8, false),
        Field::new("file_format", DataType::Utf8, false),
        Field::new("start", DataType::Int64, false),
        Field::new("length", DataType::Int64, false),
        Field::new("record_count", DataType::Int64, false),
        Field::new("file_size_in_bytes", DataType::Int64, false),
        Field::new("spec_id", DataType::Int32, false),
        Field::new(
            "partition",
            DataType::Struct(Fields::from(partition_fields)),
            false,
        ),
        Field::new("data_sequence_number", DataType::Int64, false),
        Field::new("file_sequence_number", DataType::Int64, true),
        Field::new("first_row_id", DataType::Int64, true),
        Field::new("residual", DataType::Int32, false),
        Field::new(
            "deletes",
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(delete_fields()),
                true,
            ))),
            false,
        ),
        // where a v4 plan found the data file: the leaf and the entry's ordinal in it;
        // both null for a file held in the root (and for tables before v4)
        Field::new("v4_leaf", DataType::Utf8, true),
        Field::new("v4_ordinal", DataType::Int64, true),
        // the Avro block holding the entry (byte offset and length in the leaf): the
        // commit then reads the leaf only up to that block's end
        Field::new("v4_block_offset", DataType::Int64, true),
        Field::new("v4_block_length", DataType::Int64, true),
    ];
    let mut specs: Vec<_> = plan.specs.values().collect();
    specs.sort_by_key(|s| s.spec_id);
    let metadata: HashMap<String, String> = [
        (
            SNAPSHOT_ID_KEY.to_string(),
            plan.snapshot_id
                .map_or_else(String::new, |id| id.to_string()),
        ),
        (SCHEMA_KEY.to_string(), plan.schema.to_json().to_string()),
        (
            PROJECTED_SCHEMA_KEY.to_string(),
            plan.projected_schema.to_json().to_string(),
        ),
        (
            SPECS_KEY.to_string(),
            serde_json::Value::Array(specs.iter().map(|s| s.to_json()).collect()).to_string(),
        ),
        (
            RESIDUALS_KEY.to_string(),
            serde_json::Value::Array(residuals.iter().map(|r| r.to_json()).collect()).to_string(),
        ),
        (FILTER_KEY.to_string(), plan.filter.to_json().to_string()),
        (
            FORMAT_VERSION_KEY.to_string(),
            plan.format_version.to_string(),
        ),
    ]
    .into_iter()
    .chain(
        plan.name_mapping
            .iter()
            .map(|m| (NAME_MAPPING_KEY.to_string(), m.clone())),
    )
    .collect();
    Ok(ArrowSchema::new_with_metadata(fields, metadata))
}

pub(super) fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot build an Arrow array: {e}"))
}

/// The tasks of a plan as record batches of at most `batch_rows` rows each, with the
/// group number of each task (`None` for unpacked tasks).
pub fn tasks_to_batches(
    plan: &ScanPlan,
    tasks: &[(Option<i32>, &FileScanTask)],
    batch_rows: usize,
) -> Result<(Arc<ArrowSchema>, Vec<RecordBatch>)> {
    let batch_rows = batch_rows.max(1);
    let chunker = Chunker::new(plan, tasks)?;
    let batches = (0..tasks.len())
        .step_by(batch_rows)
        .map(|start| chunker.batch(start, batch_rows.min(tasks.len() - start)))
        .collect::<Result<Vec<_>>>()?;
    Ok((chunker.schema, batches))
}

/// What every chunk of a list of tasks shares: one schema (with the distinct residuals of
/// all the tasks), the unified partition struct and each task's residual index.
struct Chunker<'a> {
    schema: Arc<ArrowSchema>,
    partition: Vec<UnifiedField>,
    /// where each spec's partition fields go in the unified struct
    slots: HashMap<i32, Vec<Option<usize>>>,
    residual_index: Vec<i32>,
    tasks: &'a [(Option<i32>, &'a FileScanTask)],
}

impl<'a> Chunker<'a> {
    fn new(plan: &ScanPlan, tasks: &'a [(Option<i32>, &'a FileScanTask)]) -> Result<Self> {
        let partition = unified_partition(plan)?;
        // distinct residuals, by identity first (tasks share Arcs) and then by value
        let mut residuals: Vec<Arc<BoundExpression>> = Vec::new();
        let mut residual_index: Vec<i32> = Vec::with_capacity(tasks.len());
        for (_, t) in tasks {
            let i = match residuals
                .iter()
                .rposition(|r| Arc::ptr_eq(r, &t.residual) || **r == *t.residual)
            {
                Some(i) => i,
                None => {
                    residuals.push(t.residual.clone());
                    residuals.len() - 1
                }
            };
            residual_index.push(i32::try_from(i).unwrap_or(i32::MAX));
        }
        let schema = Arc::new(plan_schema(plan, &partition, &residuals)?);
        let slots = plan
            .partition_types
            .iter()
            .map(|(spec_id, t)| {
                let slots = partition
                    .iter()
                    .map(|u| t.fields.iter().position(|f| f.id == u.field_id))
                    .collect();
                (*spec_id, slots)
            })
            .collect();
        Ok(Chunker {
            schema,
            partition,
            slots,
            residual_index,
            tasks,
        })
    }

    /// The `len` tasks from `start` as one record batch.
    fn batch(&self, start: usize, len: usize) -> Result<RecordBatch> {
        let end = start + len;
        let (Some(chunk), Some(idx)) = (
            self.tasks.get(start..end),
            self.residual_index.get(start..end),
        ) else {
            return Err(Error::invalid_argument(format!(
                "a chunk of {len} tasks at {start} is past the {} tasks",
                self.tasks.len()
            )));
        };
        chunk_to_batch(&self.schema, &self.partition, &self.slots, chunk, idx)
    }
}

fn chunk_to_batch(
    schema: &Arc<ArrowSchema>,
    partition: &[UnifiedField],
    slots: &HashMap<i32, Vec<Option<usize>>>,
    tasks: &[(Option<i32>, &FileScanTask)],
    residuals: &[i32],
) -> Result<RecordBatch> {
    let files = || tasks.iter().map(|(_, t)| &t.file);
    let mut path = StringBuilder::with_capacity(tasks.len(), tasks.len() * 64);
    let mut format = StringBuilder::with_capacity(tasks.len(), tasks.len() * 7);
    let mut leaves = StringBuilder::with_capacity(tasks.len(), 0);
    for f in files() {
        path.append_value(&f.file.file_path);
        format.append_value(f.file.file_format.as_str());
        match &f.tree_position {
            Some(TreePosition::Leaf { manifest, .. }) => leaves.append_value(&**manifest),
            _ => leaves.append_null(),
        }
    }
    // the unified partition struct
    let mut children: Vec<ArrayRef> = Vec::with_capacity(partition.len());
    for (j, u) in partition.iter().enumerate() {
        // values of promoted columns are already in the new type: the planner promotes
        // partition tuples as it reads them (`promote_partition`)
        let values: Vec<Option<&Literal>> = files()
            .map(|f| {
                slots
                    .get(&f.spec_id)
                    .and_then(|s| s.get(j).copied().flatten())
                    .and_then(|i| f.file.partition.get(i))
                    .and_then(Option::as_ref)
            })
            .collect();
        children.push(literals_to_array(&values, &u.ty)?);
    }
    let partition_fields = match schema.field_with_name("partition").map(|f| f.data_type()) {
        Ok(DataType::Struct(fields)) => fields.clone(),
        _ => Fields::empty(),
    };
    let partition_array: ArrayRef = if partition_fields.is_empty() {
        Arc::new(StructArray::new_empty_fields(tasks.len(), None))
    } else {
        Arc::new(StructArray::try_new(partition_fields, children, None).map_err(arrow_err)?)
    };

    let mut deletes = ListBuilder::new(StructBuilder::from_fields(delete_fields(), 0)).with_field(
        Arc::new(Field::new("item", DataType::Struct(delete_fields()), true)),
    );
    for (_, t) in tasks {
        let sb = deletes.values();
        for d in &t.deletes {
            append_delete(sb, d)?;
        }
        deletes.append(true);
    }

    let columns: Vec<ArrayRef> = vec![
        Arc::new(tasks.iter().map(|(g, _)| *g).collect::<Int32Array>()),
        Arc::new(path.finish()),
        Arc::new(format.finish()),
        Arc::new(tasks.iter().map(|(_, t)| t.start).collect::<Int64Array>()),
        Arc::new(tasks.iter().map(|(_, t)| t.length).collect::<Int64Array>()),
        Arc::new(files().map(|f| f.file.record_count).collect::<Int64Array>()),
        Arc::new(
            files()
                .map(|f| f.file.file_size_in_bytes)
                .collect::<Int64Array>(),
        ),
        Arc::new(files().map(|f| f.spec_id).collect::<Int32Array>()),
        partition_array,
        Arc::new(
            files()
                .map(|f| f.data_sequence_number)
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files()
                .map(|f| f.file_sequence_number)
                .collect::<Int64Array>(),
        ),
        Arc::new(files().map(|f| f.file.first_row_id).collect::<Int64Array>()),
        Arc::new(Int32Array::from(residuals.to_vec())),
        Arc::new(deletes.finish()),
        Arc::new(leaves.finish()),
        Arc::new(
            files()
                .map(|f| match &f.tree_position {
                    Some(TreePosition::Leaf { ordinal, .. }) => Some(*ordinal),
                    _ => None,
                })
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files()
                .map(|f| block_of(f).map(|b| b.0))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files()
                .map(|f| block_of(f).map(|b| b.1))
                .collect::<Int64Array>(),
        ),
    ];
    RecordBatch::try_new(schema.clone(), columns).map_err(arrow_err)
}

/// The (offset, length) of the Avro block a leaf-held file's entry sits in.
fn block_of(f: &ScanFile) -> Option<(i64, i64)> {
    match &f.tree_position {
        Some(TreePosition::Leaf { block: Some(b), .. }) => {
            Some((i64::try_from(b.offset).ok()?, i64::try_from(b.length).ok()?))
        }
        _ => None,
    }
}

fn append_delete(sb: &mut StructBuilder, d: &ScanFile) -> Result<()> {
    let missing = || Error::unsupported("delete struct builder has an unexpected shape");
    let f = &d.file;
    sb.field_builder::<Int32Builder>(0)
        .ok_or_else(missing)?
        .append_value(f.content.id());
    sb.field_builder::<StringBuilder>(1)
        .ok_or_else(missing)?
        .append_value(&f.file_path);
    sb.field_builder::<StringBuilder>(2)
        .ok_or_else(missing)?
        .append_value(f.file_format.as_str());
    sb.field_builder::<Int64Builder>(3)
        .ok_or_else(missing)?
        .append_value(f.record_count);
    sb.field_builder::<Int64Builder>(4)
        .ok_or_else(missing)?
        .append_value(f.file_size_in_bytes);
    sb.field_builder::<Int64Builder>(5)
        .ok_or_else(missing)?
        .append_value(d.data_sequence_number);
    sb.field_builder::<StringBuilder>(6)
        .ok_or_else(missing)?
        .append_option(f.referenced_data_file.as_deref());
    sb.field_builder::<Int64Builder>(7)
        .ok_or_else(missing)?
        .append_option(f.content_offset);
    sb.field_builder::<Int64Builder>(8)
        .ok_or_else(missing)?
        .append_option(f.content_size_in_bytes);
    let eq = sb
        .field_builder::<ListBuilder<Box<dyn arrow_array::builder::ArrayBuilder>>>(9)
        .ok_or_else(missing)?;
    match &f.equality_ids {
        Some(ids) => {
            let values = eq
                .values()
                .as_any_mut()
                .downcast_mut::<Int32Builder>()
                .ok_or_else(missing)?;
            for id in ids {
                values.append_value(*id);
            }
            eq.append(true);
        }
        None => eq.append(false),
    }
    sb.append(true);
    Ok(())
}

/// Plans `scan` straight into record batches: each data manifest's tasks become batches on
/// the planning thread that read it, so a plan of a million files never exists as a
/// million task objects. Returns the plan (without tasks: its counts and metadata), the
/// schema and the batches (see the module documentation for the columns).
pub fn plan_to_batches(
    scan: &TableScan,
    batch_rows: usize,
) -> Result<(ScanPlan, Arc<ArrowSchema>, Vec<RecordBatch>)> {
    let (plan, parts) = scan.plan_with(|plan, tasks| {
        let rows: Vec<_> = tasks.iter().map(|t| (None, t)).collect();
        tasks_to_batches(plan, &rows, batch_rows)
    })?;
    let (schema, batches) = merge_parts(&plan, parts)?;
    Ok((plan, schema, batches))
}

/// Joins the batches of several `tasks_to_batches` calls: one residual list for all of them
/// (in the schema metadata) and each batch's `residual` column renumbered into it.
fn merge_parts(
    plan: &ScanPlan,
    parts: Vec<(Arc<ArrowSchema>, Vec<RecordBatch>)>,
) -> Result<(Arc<ArrowSchema>, Vec<RecordBatch>)> {
    let mut merger = ResidualMerger::default();
    let mut remapped_parts = Vec::with_capacity(parts.len());
    for (schema, part) in parts {
        remapped_parts.push((merger.mapping(&schema)?, part));
    }
    let schema = stream_schema(plan, Some(&merger.residuals))?;
    let mut batches = Vec::new();
    for (mapping, part) in remapped_parts {
        for b in part {
            batches.push(remap_residuals(&schema, &mapping, &b)?);
        }
    }
    Ok((schema, batches))
}

/// The schema of a plan's batches, with the given residual list in its metadata (the
/// empty list when `None`).
pub(super) fn stream_schema(
    plan: &ScanPlan,
    residuals: Option<&[serde_json::Value]>,
) -> Result<Arc<ArrowSchema>> {
    let mut schema = plan_schema(plan, &unified_partition(plan)?, &[])?;
    let mut metadata = schema.metadata().clone();
    metadata.insert(
        RESIDUALS_KEY.to_string(),
        serde_json::Value::Array(residuals.map(<[_]>::to_vec).unwrap_or_default()).to_string(),
    );
    schema = schema.with_metadata(metadata);
    Ok(Arc::new(schema))
}

/// One list of the distinct residuals of several parts of a plan.
#[derive(Default)]
pub(super) struct ResidualMerger {
    pub(super) residuals: Vec<serde_json::Value>,
    index: HashMap<String, i32>,
}

impl ResidualMerger {
    /// Adds the residuals of a part (from its schema metadata) and returns where each of
    /// its residual indexes goes in the merged list.
    pub(super) fn mapping(&mut self, part_schema: &ArrowSchema) -> Result<Vec<i32>> {
        let local: Vec<serde_json::Value> = part_schema
            .metadata()
            .get(RESIDUALS_KEY)
            .map(|text| serde_json::from_str(text))
            .transpose()
            .map_err(|e| Error::invalid_argument(format!("bad residuals metadata: {e}")))?
            .unwrap_or_default();
        Ok(local
            .into_iter()
            .map(|r| {
                let key = r.to_string();
                let residuals = &mut self.residuals;
                *self.index.entry(key).or_insert_with(|| {
                    residuals.push(r);
                    i32::try_from(residuals.len() - 1).unwrap_or(i32::MAX)
                })
            })
            .collect())
    }
}

/// The batch `b` with the merged `schema` and its `residual` column renumbered by
/// `mapping`.
pub(super) fn remap_residuals(
    schema: &Arc<ArrowSchema>,
    mapping: &[i32],
    b: &RecordBatch,
) -> Result<RecordBatch> {
    let residual_pos = schema
        .index_of("residual")
        .map_err(|e| Error::invalid_argument(e.to_string()))?;
    let mut columns = b.columns().to_vec();
    let old = columns
        .get(residual_pos)
        .and_then(|c| c.as_any().downcast_ref::<Int32Array>())
        .ok_or_else(|| Error::unsupported("residual column is not int32"))?;
    let new: Int32Array = old
        .values()
        .iter()
        .map(|i| {
            usize::try_from(*i)
                .ok()
                .and_then(|i| mapping.get(i).copied())
                .unwrap_or(i32::MAX)
        })
        .collect();
    columns[residual_pos] = Arc::new(new);
    RecordBatch::try_new(schema.clone(), columns).map_err(arrow_err)
}

/// What the planning thread of a [`PlanStream`] sends.
enum StreamMsg {
    Start(Arc<ArrowSchema>),
    Part(Arc<ArrowSchema>, Vec<RecordBatch>),
    Done(ScanMetrics),
    Failed(Error),
}

/// A plan delivered as record batches while it is being planned: a thread plans the
/// scan and hands each data manifest's tasks over as batches as soon as they are built,
/// through a bounded queue, so that at most a few manifests' batches wait at any time
/// whatever the size of the plan.
///
/// Batches have the columns of [`plan_to_batches`]; their `residual` indexes refer to
/// [`PlanStream::residuals`], which holds every residual of the batches returned so far.
/// Batches come in the order manifests are finished: with one planning thread that is
/// the order of [`plan_to_batches`], with more it may differ between manifests (the rows
/// of one manifest stay together and in order). Dropping the stream stops planning at
/// the next manifest.
pub struct PlanStream {
    rx: Receiver<StreamMsg>,
    schema: Arc<ArrowSchema>,
    merger: ResidualMerger,
    pending: VecDeque<RecordBatch>,
    metrics: Option<ScanMetrics>,
    failed: bool,
}

/// Starts planning `scan` on a thread of its own (which runs the scan's own manifest
/// threads) and returns once the plan's schema is known, or with the first error.
/// `queue` is how many manifests' batches may wait for the consumer (at least one).
pub fn plan_stream(scan: TableScan, batch_rows: usize, queue: usize) -> Result<PlanStream> {
    let (tx, rx) = sync_channel::<StreamMsg>(queue.max(1));
    std::thread::Builder::new()
        .name("icefloe-plan".into())
        .spawn(move || {
            let result = scan.plan_streaming(
                |plan| {
                    let schema = stream_schema(plan, None)?;
                    tx.send(StreamMsg::Start(schema)).map_err(|_| stopped())
                },
                |plan, tasks| {
                    let rows: Vec<_> = tasks.iter().map(|t| (None, t)).collect();
                    let (schema, batches) = tasks_to_batches(plan, &rows, batch_rows)?;
                    tx.send(StreamMsg::Part(schema, batches))
                        .map_err(|_| stopped())
                },
            );
            // nobody may be listening any more; that is fine
            let _ = match result {
                Ok((plan, _)) => tx.send(StreamMsg::Done(plan.metrics)),
                Err(e) => tx.send(StreamMsg::Failed(e)),
            };
        })
        .map_err(|e| Error::unsupported(format!("cannot start a planning thread: {e}")))?;
    match rx.recv() {
        Ok(StreamMsg::Start(schema)) => Ok(PlanStream {
            rx,
            schema,
            merger: ResidualMerger::default(),
            pending: VecDeque::new(),
            metrics: None,
            failed: false,
        }),
        Ok(StreamMsg::Failed(e)) => Err(e),
        _ => Err(Error::unsupported("planning ended before it started")),
    }
}

fn stopped() -> Error {
    Error::unsupported("planning stopped: the plan's reader was closed")
}

impl PlanStream {
    /// The schema of every batch (its residual list is empty: see
    /// [`PlanStream::residuals`]).
    pub fn schema(&self) -> &Arc<ArrowSchema> {
        &self.schema
    }

    /// The distinct residual filters (JSON) of the batches returned so far, which their
    /// `residual` column indexes.
    pub fn residuals(&self) -> &[serde_json::Value] {
        &self.merger.residuals
    }

    /// What planning counted, once the last batch has been returned.
    pub fn metrics(&self) -> Option<&ScanMetrics> {
        self.metrics.as_ref()
    }

    /// The next batch, waiting for planning if needed; `None` at the end of the plan.
    /// A planning error is returned once, after the batches that came before it.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Ok(Some(b));
            }
            if self.metrics.is_some() || self.failed {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(StreamMsg::Part(part_schema, batches)) => {
                    let mapping = self.merger.mapping(&part_schema)?;
                    for b in &batches {
                        self.pending
                            .push_back(remap_residuals(&self.schema, &mapping, b)?);
                    }
                }
                Ok(StreamMsg::Done(metrics)) => self.metrics = Some(metrics),
                Ok(StreamMsg::Failed(e)) => {
                    self.failed = true;
                    return Err(e);
                }
                Ok(StreamMsg::Start(_)) => {}
                Err(_) => {
                    self.failed = true;
                    return Err(Error::unsupported(
                        "the planning thread ended without a result",
                    ));
                }
            }
        }
    }
}

impl Iterator for PlanStream {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        self.next_batch().transpose()
    }
}
