//! Tests of scan planning against the choices of Java's `DataTableScan`, `ManifestGroup`,
//! `ManifestReader`, `SnapshotScan` and `BaseIncrementalAppendScan` (1.11), on tables
//! written in memory.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::expr::Operation;
use crate::io::FileIO;
use crate::manifest::{
    write_manifest_list, Codec, DataContentType, DataFile, FileFormat, ManifestWriter,
};
use crate::spec::partition::PartitionField;
use crate::spec::{Literal, NestedField, PrimitiveType as P, Transform, Type};

use crate::io::MemoryFileIO as MemIO;

fn schema(id: i32, fields: Vec<NestedField>) -> Schema {
    Schema::new(id, fields, vec![]).unwrap()
}

fn id_int() -> NestedField {
    NestedField::optional(1, "id", Type::Primitive(P::Int))
}

fn unpartitioned() -> PartitionSpec {
    PartitionSpec::new(0, vec![])
}

fn data(path: &str, partition: Vec<Option<Literal>>, records: i64) -> DataFile {
    DataFile::new(
        DataContentType::Data,
        path,
        FileFormat::Parquet,
        partition,
        records,
        100,
    )
}

/// An entry to write: ADDED by the manifest's snapshot, or EXISTING / DELETED with the
/// snapshot that added the file and its sequence number.
enum E {
    Added(DataFile),
    Existing(DataFile, i64, i64),
    Deleted(DataFile, i64),
}

/// A table written in memory, one snapshot at a time.
struct TestTable {
    io: Arc<MemIO>,
    format: i32,
    schemas: Vec<Schema>,
    current_schema: i32,
    specs: Vec<PartitionSpec>,
    snapshots: Vec<Value>,
    current: Option<i64>,
    last_seq: i64,
}

impl TestTable {
    fn new(format: i32, schemas: Vec<Schema>, specs: Vec<PartitionSpec>) -> TestTable {
        let current_schema = schemas.last().unwrap().schema_id();
        TestTable {
            io: Arc::new(MemIO::default()),
            format,
            schemas,
            current_schema,
            specs,
            snapshots: Vec::new(),
            current: None,
            last_seq: 0,
        }
    }

    fn schema(&self, id: i32) -> &Schema {
        self.schemas.iter().find(|s| s.schema_id() == id).unwrap()
    }

    /// Writes a manifest of `content` with spec `spec` (by value: it need not be one of
    /// the table's) for snapshot `snapshot_id`.
    fn manifest(
        &self,
        path: &str,
        content: ManifestContent,
        spec: &PartitionSpec,
        snapshot_id: i64,
        entries: Vec<E>,
    ) -> ManifestFile {
        let schema = self.schema(self.current_schema);
        let mut w =
            ManifestWriter::new(self.format, content, schema, spec, snapshot_id, Codec::Null)
                .unwrap();
        for e in entries {
            match e {
                E::Added(f) => w.add(f).unwrap(),
                E::Existing(f, snapshot, seq) => w.existing(f, snapshot, seq, Some(seq)).unwrap(),
                E::Deleted(f, seq) => w.delete(f, seq, Some(seq)).unwrap(),
            }
        }
        w.finish(self.io.as_ref(), path).unwrap()
    }

    fn data_manifest(&self, path: &str, snapshot_id: i64, entries: Vec<E>) -> ManifestFile {
        let spec = self.specs[0].clone();
        self.manifest(path, ManifestContent::Data, &spec, snapshot_id, entries)
    }

    /// Commits a snapshot whose manifest list holds `manifests` (the new ones get its
    /// sequence number); returns the manifests as listed.
    fn commit(
        &mut self,
        snapshot_id: i64,
        parent: Option<i64>,
        operation: &str,
        manifests: &[ManifestFile],
    ) -> Vec<ManifestFile> {
        self.last_seq += 1;
        let seq = if self.format == 1 { 0 } else { self.last_seq };
        let list = format!("snap-{snapshot_id}.avro");
        let written = write_manifest_list(
            self.io.as_ref(),
            &list,
            self.format,
            snapshot_id,
            parent,
            seq,
            None,
            manifests,
            Codec::Null,
        )
        .unwrap();
        let mut s = json!({
            "snapshot-id": snapshot_id,
            "timestamp-ms": 1_000 * snapshot_id,
            "manifest-list": list,
            "summary": {"operation": operation},
            "schema-id": self.current_schema,
        });
        if self.format >= 2 {
            s["sequence-number"] = json!(seq);
        }
        if let Some(p) = parent {
            s["parent-snapshot-id"] = json!(p);
        }
        self.snapshots.push(s);
        self.current = Some(snapshot_id);
        written.manifests
    }

    fn metadata(&self) -> TableMetadata {
        let mut m = json!({
            "format-version": self.format,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "mem://t",
            "last-sequence-number": self.last_seq,
            "last-updated-ms": 1,
            "last-column-id": 10,
            "schemas": self.schemas.iter().map(Schema::to_json).collect::<Vec<_>>(),
            "current-schema-id": self.current_schema,
            "partition-specs": self.specs.iter().map(PartitionSpec::to_json).collect::<Vec<_>>(),
            "default-spec-id": self.specs[0].spec_id,
            "last-partition-id": 1000,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
            "snapshots": self.snapshots,
        });
        if let Some(c) = self.current {
            m["current-snapshot-id"] = json!(c);
        }
        TableMetadata::from_json_value(&m).unwrap()
    }

    fn scan_of(&self, md: TableMetadata) -> TableScan {
        let io: Arc<dyn FileIO> = self.io.clone();
        TableScan::new(Arc::new(md), io).threads(2)
    }

    fn scan(&self) -> TableScan {
        self.scan_of(self.metadata())
    }
}

/// The paths of the planned data files, sorted.
fn paths(plan: &ScanPlan) -> Vec<String> {
    let mut v: Vec<String> = plan
        .tasks
        .iter()
        .map(|t| t.file.file.file_path.clone())
        .collect();
    v.sort();
    v
}

fn is_not_null(column: &str) -> Expression {
    Expression::unary(Operation::NotNull, column)
}

/// ManifestReader.entries filters entries only when there is a row or partition filter:
/// with none, files without rows are planned (the metrics evaluator would drop them), and
/// so are delete files without rows.
#[test]
fn files_without_rows_are_kept_without_a_filter() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m = t.data_manifest(
        "m1.avro",
        1,
        vec![
            E::Added(data("empty", vec![], 0)),
            E::Added(data("rows", vec![], 5)),
        ],
    );
    let mut pos = data("pos-empty", vec![], 0);
    pos.content = DataContentType::PositionDeletes;
    let d = t.manifest(
        "d1.avro",
        ManifestContent::Deletes,
        &unpartitioned(),
        1,
        vec![E::Added(pos)],
    );
    t.commit(1, None, "overwrite", &[m, d]);

    let plan = t.scan().plan_files().unwrap();
    assert_eq!(paths(&plan), ["empty", "rows"]);
    for task in &plan.tasks {
        assert_eq!(task.deletes.len(), 1, "{}", task.file.file.file_path);
    }
    // a filter that Java's expression builders fold to `true` is no filter
    let folded_true = Expression::And(Box::new(Expression::True), Box::new(Expression::True));
    let plan = t.scan().filter(folded_true).plan_files().unwrap();
    assert_eq!(paths(&plan), ["empty", "rows"]);
    assert_eq!(plan.tasks[0].deletes.len(), 1);
    let not_false = Expression::Not(Box::new(Expression::False));
    assert_eq!(
        paths(&t.scan().filter(not_false).plan_files().unwrap()),
        ["empty", "rows"]
    );

    // any other filter evaluates metrics, and files without rows cannot match
    let plan = t.scan().filter(is_not_null("id")).plan_files().unwrap();
    assert_eq!(paths(&plan), ["rows"]);
    assert!(plan.tasks[0].deletes.is_empty());
    assert_eq!(plan.metrics.skipped_data_files, 1);
    assert_eq!(plan.metrics.skipped_delete_files, 1);
}

/// A count from metadata is the sum of the files' record counts only without a filter and
/// without deletes (files without rows count as zero).
#[test]
fn record_count_from_metadata_needs_no_filter_and_no_deletes() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m = t.data_manifest(
        "m1.avro",
        1,
        vec![
            E::Added(data("empty", vec![], 0)),
            E::Added(data("rows", vec![], 5)),
            E::Added(data("more", vec![], 7)),
        ],
    );
    let m = t.commit(1, None, "append", &[m]);
    let plan = t.scan().plan_files().unwrap();
    assert_eq!(plan.record_count_from_metadata(), Some(12));
    let filtered = t.scan().filter(is_not_null("id")).plan_files().unwrap();
    assert_eq!(filtered.record_count_from_metadata(), None);

    let mut pos = data("pos", vec![], 1);
    pos.content = DataContentType::PositionDeletes;
    let d = t.manifest(
        "d2.avro",
        ManifestContent::Deletes,
        &unpartitioned(),
        2,
        vec![E::Added(pos)],
    );
    t.commit(2, Some(1), "overwrite", &[m[0].clone(), d]);
    let plan = t.scan().plan_files().unwrap();
    assert_eq!(plan.record_count_from_metadata(), None);
}

/// ManifestGroup keeps manifests in sets (GenericManifestFile is equal by path): a
/// manifest listed twice is read once.
#[test]
fn a_manifest_listed_twice_is_read_once() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m = t.data_manifest("m1.avro", 1, vec![E::Added(data("f1", vec![], 5))]);
    t.commit(1, None, "append", &[m.clone(), m]);
    let plan = t.scan().plan_files().unwrap();
    assert_eq!(paths(&plan), ["f1"]);
    assert_eq!(plan.metrics.total_data_manifests, 2);
    assert_eq!(plan.metrics.scanned_data_manifests, 1);
}

/// The table of the incremental tests: appends S1 (fast), S2 (fast, keeps S1's
/// manifest), S3 (merges every manifest into one of its own), then S4 deletes f1.
fn appended_table() -> TestTable {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m1 = t.data_manifest("m1.avro", 1, vec![E::Added(data("f1", vec![], 5))]);
    let m1 = t.commit(1, None, "append", &[m1]);
    let m2 = t.data_manifest("m2.avro", 2, vec![E::Added(data("f2", vec![], 5))]);
    t.commit(2, Some(1), "append", &[m2, m1[0].clone()]);
    let m3 = t.data_manifest(
        "m3.avro",
        3,
        vec![
            E::Added(data("f3", vec![], 5)),
            E::Existing(data("f1", vec![], 5), 1, 1),
            E::Existing(data("f2", vec![], 5), 2, 2),
        ],
    );
    t.commit(3, Some(2), "append", &[m3]);
    let m4 = t.data_manifest(
        "m4.avro",
        4,
        vec![
            E::Deleted(data("f1", vec![], 5), 1),
            E::Existing(data("f2", vec![], 5), 2, 2),
            E::Existing(data("f3", vec![], 5), 3, 3),
        ],
    );
    t.commit(4, Some(3), "delete", &[m4]);
    t
}

/// BaseIncrementalAppendScan reads the data manifests that each append snapshot added,
/// from that snapshot's own manifest list: files merged or deleted since are found.
#[test]
fn incremental_scans_read_the_manifests_of_each_append() {
    let t = appended_table();
    let inc = |from: Option<i64>| paths(&t.scan().appends_after(from).plan_files().unwrap());
    assert_eq!(inc(None), ["f1", "f2", "f3"]);
    assert_eq!(inc(Some(1)), ["f2", "f3"]);
    assert_eq!(inc(Some(2)), ["f3"]);
    assert!(inc(Some(3)).is_empty());
    let to = |to: i64, from: Option<i64>| {
        paths(
            &t.scan()
                .snapshot(SnapshotSelection::SnapshotId(to))
                .appends_after(from)
                .plan_files()
                .unwrap(),
        )
    };
    assert_eq!(to(3, None), ["f1", "f2", "f3"]);
    assert_eq!(to(2, Some(1)), ["f2"]);
}

/// BaseIncrementalScan.fromSnapshotIdExclusive: the start must be the parent of an
/// ancestor of the end (isParentAncestorOf), so an expired start is fine and the end
/// itself is not.
#[test]
fn incremental_scan_start_is_a_parent_of_an_ancestor() {
    let t = appended_table();
    let mut md = t.metadata();
    // S1's parent (id 100) has expired
    md.snapshots
        .iter_mut()
        .find(|s| s.snapshot_id == 1)
        .unwrap()
        .parent_snapshot_id = Some(100);
    let plan = t.scan_of(md).appends_after(Some(100)).plan_files().unwrap();
    assert_eq!(paths(&plan), ["f1", "f2", "f3"]);

    let e = t.scan().appends_after(Some(4)).plan_files().unwrap_err();
    assert!(e.to_string().contains("parent ancestor"), "{e}");
    let e = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(2))
        .appends_after(Some(3))
        .plan_files()
        .unwrap_err();
    assert!(e.to_string().contains("parent ancestor"), "{e}");
    assert!(t.scan().appends_after(Some(77)).plan_files().is_err());
}

/// Incremental scans read with the table's schema (newIncrementalAppendScan), also when
/// the end snapshot was written with an older one.
#[test]
fn incremental_scans_use_the_current_schema() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m1 = t.data_manifest("m1.avro", 1, vec![E::Added(data("f1", vec![], 5))]);
    t.commit(1, None, "append", &[m1]);
    t.schemas.push(schema(
        1,
        vec![
            id_int(),
            NestedField::optional(2, "extra", Type::Primitive(P::String)),
        ],
    ));
    t.current_schema = 1;
    let plan = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(1))
        .appends_after(None)
        .filter(Expression::unary(Operation::IsNull, "extra"))
        .plan_files()
        .unwrap();
    assert_eq!(plan.schema.schema_id(), 1);
    assert_eq!(paths(&plan), ["f1"]);
    // a data scan of that snapshot reads with its own schema
    let plan = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(1))
        .plan_files()
        .unwrap();
    assert_eq!(plan.schema.schema_id(), 0);
}

/// SnapshotUtil.schemaFor fails when the snapshot's schema id is not a schema of the
/// table.
#[test]
fn time_travel_needs_the_snapshot_schema() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m1 = t.data_manifest("m1.avro", 1, vec![E::Added(data("f1", vec![], 5))]);
    t.commit(1, None, "append", &[m1]);
    let mut md = t.metadata();
    md.snapshots[0].schema_id = Some(7);
    let e = t
        .scan_of(md.clone())
        .snapshot(SnapshotSelection::SnapshotId(1))
        .plan_files()
        .unwrap_err();
    assert!(e.to_string().contains("schema id 7"), "{e}");
    // the current snapshot is read with the current schema
    assert_eq!(paths(&t.scan_of(md).plan_files().unwrap()), ["f1"]);
}

/// SnapshotScan.useRef("main") keeps the scan of the current snapshot: a table without
/// snapshots (and so without a main branch) plans nothing.
#[test]
fn main_is_the_current_snapshot() {
    let t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let plan = t
        .scan()
        .snapshot(SnapshotSelection::Ref("main".into()))
        .plan_files()
        .unwrap();
    assert!(plan.tasks.is_empty() && plan.snapshot_id.is_none());
    assert!(t
        .scan()
        .snapshot(SnapshotSelection::Ref("other".into()))
        .plan_files()
        .is_err());
    let t = appended_table();
    let plan = t
        .scan()
        .snapshot(SnapshotSelection::Ref("main".into()))
        .plan_files()
        .unwrap();
    assert_eq!(plan.snapshot_id, Some(4));
    assert_eq!(paths(&plan), ["f2", "f3"]);
}

/// BaseSnapshot reads the manifests of a v1 snapshot without a manifest list as
/// manifests of spec 0.
#[test]
fn v1_manifests_without_a_list_are_read_with_spec_0() {
    let mut t = TestTable::new(1, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    // written by a writer that called its (unpartitioned) spec 3
    let m = t.manifest(
        "m1.avro",
        ManifestContent::Data,
        &PartitionSpec::new(3, vec![]),
        1,
        vec![E::Added(data("f1", vec![], 5))],
    );
    t.commit(1, None, "append", &[]);
    let mut md = t.metadata();
    md.snapshots[0].manifest_list = None;
    md.snapshots[0].manifests = Some(vec![m.manifest_path.clone()]);
    let plan = t.scan_of(md).plan_files().unwrap();
    assert_eq!(paths(&plan), ["f1"]);
    assert_eq!(plan.tasks[0].file.spec_id, 0);
}

/// SnapshotScan.specs: the table's specs are bound to the current schema; only time
/// travel to another snapshot than the current one binds them to the snapshot's schema.
#[test]
fn specs_are_bound_to_the_current_schema_unless_time_travelling() {
    let by_id = PartitionSpec::new(
        0,
        vec![PartitionField::new(1, 1000, "id", Transform::Identity)],
    );
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![by_id]);
    let m1 = t.data_manifest(
        "m1.avro",
        1,
        vec![E::Added(data("f1", vec![Some(Literal::Int(1))], 5))],
    );
    let m1 = t.commit(1, None, "append", &[m1]);
    // `id` promoted to long after the last commit
    t.schemas.push(schema(
        1,
        vec![NestedField::optional(1, "id", Type::Primitive(P::Long))],
    ));
    t.current_schema = 1;
    let partition_type = |plan: &ScanPlan| plan.partition_types[&0].fields[0].field_type.clone();

    let plan = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(1))
        .plan_files()
        .unwrap();
    assert_eq!(
        plan.schema.schema_id(),
        0,
        "rows are read with the snapshot's schema"
    );
    assert_eq!(partition_type(&plan), Type::Primitive(P::Long));
    assert_eq!(paths(&plan), ["f1"]);

    // once another snapshot is current, time travel to S1 uses its schema
    let m2 = t.data_manifest(
        "m2.avro",
        2,
        vec![E::Added(data("f2", vec![Some(Literal::Long(2))], 5))],
    );
    t.commit(2, Some(1), "append", &[m2, m1[0].clone()]);
    let plan = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(1))
        .plan_files()
        .unwrap();
    assert_eq!(partition_type(&plan), Type::Primitive(P::Int));
    let plan = t.scan().plan_files().unwrap();
    assert_eq!(partition_type(&plan), Type::Primitive(P::Long));
    assert_eq!(paths(&plan), ["f1", "f2"]);
}

/// DeleteFileIndex.Builder reads delete manifests with every column: position delete
/// files are tied to one data file by their `file_path` bounds, also without a filter.
#[test]
fn position_deletes_are_tied_to_a_data_file_by_their_path_bounds() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let m = t.data_manifest(
        "m1.avro",
        1,
        vec![
            E::Added(data("d1", vec![], 5)),
            E::Added(data("d2", vec![], 5)),
        ],
    );
    let m = t.commit(1, None, "append", &[m]);
    let pos_for = |path: &str, target: &str| {
        let mut f = data(path, vec![], 1);
        f.content = DataContentType::PositionDeletes;
        let id = crate::spec::schema::reserved::DELETE_FILE_PATH_ID;
        f.lower_bounds = Some(vec![(id, target.as_bytes().to_vec())]);
        f.upper_bounds = Some(vec![(id, target.as_bytes().to_vec())]);
        f
    };
    let d = t.manifest(
        "d2.avro",
        ManifestContent::Deletes,
        &unpartitioned(),
        2,
        vec![
            E::Added(pos_for("pos-d1", "d1")),
            E::Added(pos_for("pos-d2", "d2")),
        ],
    );
    t.commit(2, Some(1), "overwrite", &[m[0].clone(), d]);

    for filter in [Expression::True, is_not_null("id")] {
        let plan = t.scan().filter(filter).plan_files().unwrap();
        let mut deletes: Vec<(String, Vec<String>)> = plan
            .tasks
            .iter()
            .map(|t| {
                (
                    t.file.file.file_path.clone(),
                    t.deletes.iter().map(|d| d.file.file_path.clone()).collect(),
                )
            })
            .collect();
        deletes.sort();
        assert_eq!(
            deletes,
            [
                ("d1".to_string(), vec!["pos-d1".to_string()]),
                ("d2".to_string(), vec!["pos-d2".to_string()])
            ]
        );
    }
}

/// ManifestGroup reads data files with their stats when there are equality deletes, and
/// the index prunes equality deletes by the columns' ranges, also without a filter.
#[test]
fn equality_deletes_are_pruned_by_data_file_stats() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let int = |v: i32| Literal::Int(v).to_bytes(&P::Int).unwrap();
    let mut low = data("low", vec![], 5);
    low.null_value_counts = Some(vec![(1, 0)]);
    low.value_counts = Some(vec![(1, 5)]);
    low.lower_bounds = Some(vec![(1, int(1))]);
    low.upper_bounds = Some(vec![(1, int(10))]);
    let mut high = low.clone();
    high.file_path = "high".into();
    high.lower_bounds = Some(vec![(1, int(50))]);
    high.upper_bounds = Some(vec![(1, int(55))]);
    let m = t.data_manifest("m1.avro", 1, vec![E::Added(low), E::Added(high)]);
    let m = t.commit(1, None, "append", &[m]);
    let mut eq = data("eq", vec![], 2);
    eq.content = DataContentType::EqualityDeletes;
    eq.equality_ids = Some(vec![1]);
    eq.null_value_counts = Some(vec![(1, 0)]);
    eq.lower_bounds = Some(vec![(1, int(50))]);
    eq.upper_bounds = Some(vec![(1, int(60))]);
    let d = t.manifest(
        "d2.avro",
        ManifestContent::Deletes,
        &unpartitioned(),
        2,
        vec![E::Added(eq)],
    );
    t.commit(2, Some(1), "overwrite", &[m[0].clone(), d]);
    let plan = t.scan().plan_files().unwrap();
    let mut got: Vec<(String, usize)> = plan
        .tasks
        .iter()
        .map(|t| (t.file.file.file_path.clone(), t.deletes.len()))
        .collect();
    got.sort();
    assert_eq!(got, [("high".to_string(), 1), ("low".to_string(), 0)]);
}

/// ManifestReader reads partition tuples as values of the spec's partition type: identity
/// values of a column promoted from int to long since are longs.
#[test]
fn partition_values_of_promoted_columns_are_promoted() {
    let by_id = PartitionSpec::new(
        0,
        vec![PartitionField::new(1, 1000, "id", Transform::Identity)],
    );
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![by_id]);
    let m1 = t.data_manifest(
        "m1.avro",
        1,
        vec![
            E::Added(data("f10", vec![Some(Literal::Int(10))], 5)),
            E::Added(data("f20", vec![Some(Literal::Int(20))], 5)),
        ],
    );
    t.commit(1, None, "append", &[m1]);
    t.schemas.push(schema(
        1,
        vec![NestedField::optional(1, "id", Type::Primitive(P::Long))],
    ));
    t.current_schema = 1;
    let plan = t
        .scan()
        .filter(Expression::compare(Operation::Eq, "id", 10_i64))
        .plan_files()
        .unwrap();
    assert_eq!(paths(&plan), ["f10"]);
    assert_eq!(plan.tasks[0].file.file.partition, [Some(Literal::Long(10))]);
}

/// A FileIO whose reads wait, as an object store's do, and which records how many were in
/// flight at once.
struct SlowIO {
    inner: Arc<MemIO>,
    in_flight: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
    fetch: usize,
}

impl FileIO for SlowIO {
    fn read(&self, location: &str) -> crate::error::Result<Vec<u8>> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.in_flight.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        self.in_flight.fetch_sub(1, SeqCst);
        self.inner.read(location)
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> crate::error::Result<()> {
        self.inner.write_new(location, bytes)
    }
    fn exists(&self, location: &str) -> crate::error::Result<bool> {
        self.inner.exists(location)
    }
    fn list(&self, location: &str) -> crate::error::Result<Vec<String>> {
        self.inner.list(location)
    }
    fn delete(&self, location: &str) -> crate::error::Result<()> {
        self.inner.delete(location)
    }
    fn fetch_concurrency(&self) -> usize {
        self.fetch
    }
}

#[test]
fn manifests_are_fetched_with_the_file_io_concurrency() {
    let mut t = TestTable::new(2, vec![schema(0, vec![id_int()])], vec![unpartitioned()]);
    let manifests: Vec<ManifestFile> = (0..12)
        .map(|i| {
            t.data_manifest(
                &format!("m{i}.avro"),
                1,
                vec![E::Added(data(&format!("f{i:02}"), vec![], 5))],
            )
        })
        .collect();
    t.commit(1, None, "append", &manifests);
    let md = Arc::new(t.metadata());
    let expected: Vec<String> = (0..12).map(|i| format!("f{i:02}")).collect();
    for (fetch, explicit, most) in [(0, None, 2), (8, None, 8), (8, Some(3), 3)] {
        let io = Arc::new(SlowIO {
            inner: t.io.clone(),
            in_flight: Default::default(),
            most: Default::default(),
            fetch,
        });
        let dyn_io: Arc<dyn FileIO> = io.clone();
        let mut scan = TableScan::new(Arc::clone(&md), dyn_io).threads(2);
        if let Some(n) = explicit {
            scan = scan.fetch_concurrency(n);
        }
        let plan = scan.plan_files().unwrap();
        assert_eq!(paths(&plan), expected);
        // local files: as many reads as threads; an object store: its fetch concurrency
        assert_eq!(
            io.most.load(std::sync::atomic::Ordering::SeqCst),
            most,
            "{fetch} {explicit:?}"
        );
    }
}

/// The changelog tasks as `(change type, ordinal, snapshot, path)`, sorted.
fn changes(t: &TestTable, from: Option<i64>) -> Vec<(&'static str, i32, i64, String)> {
    let (_, tasks) = t.scan().changes_after(from).plan_changelog().unwrap();
    let mut v: Vec<_> = tasks
        .iter()
        .map(|c| {
            (
                c.operation.as_str(),
                c.change_ordinal,
                c.commit_snapshot_id,
                c.task.file.file.file_path.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

/// BaseIncrementalChangelogScan: the files each snapshot of the range added (INSERT) or
/// removed (DELETE), from the manifests it added (existing entries of merged manifests are
/// not changes), ordinals oldest first; replace snapshots are skipped and take no ordinal.
#[test]
fn changelog_tasks_are_the_added_and_removed_files_of_each_snapshot() {
    let mut t = appended_table();
    let m5 = t.data_manifest(
        "m5.avro",
        5,
        vec![
            E::Deleted(data("f2", vec![], 5), 2),
            E::Added(data("f5", vec![], 5)),
        ],
    );
    t.commit(5, Some(4), "replace", &[m5]);
    let m6 = t.data_manifest("m6.avro", 6, vec![E::Added(data("f6", vec![], 5))]);
    t.commit(6, Some(5), "append", &[m6]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        changes(&t, None),
        [
            ("DELETE", 3, 4, s("f1")),
            ("INSERT", 0, 1, s("f1")),
            ("INSERT", 1, 2, s("f2")),
            ("INSERT", 2, 3, s("f3")),
            ("INSERT", 4, 6, s("f6")),
        ]
    );
    assert_eq!(
        changes(&t, Some(2)),
        [
            ("DELETE", 1, 4, s("f1")),
            ("INSERT", 0, 3, s("f3")),
            ("INSERT", 2, 6, s("f6")),
        ]
    );
    assert_eq!(changes(&t, Some(5)), [("INSERT", 0, 6, s("f6"))]);
    let e = t
        .scan()
        .changes_after(Some(77))
        .plan_changelog()
        .unwrap_err();
    assert!(e.to_string().contains("parent ancestor"), "{e}");
}

/// Java refuses a range with delete manifests (live ones included), whatever the snapshot
/// that added them.
#[test]
fn changelog_refuses_delete_files_as_java() {
    let mut t = appended_table();
    let mut pos = data("pos", vec![], 1);
    pos.content = DataContentType::PositionDeletes;
    let d = t.manifest(
        "d5.avro",
        ManifestContent::Deletes,
        &unpartitioned(),
        5,
        vec![E::Added(pos)],
    );
    // the manifest as listed (with its sequence number), carried into the next snapshot
    let d = t.commit(5, Some(4), "overwrite", &[d]);
    let m6 = t.data_manifest("m6.avro", 6, vec![E::Added(data("f6", vec![], 5))]);
    t.commit(6, Some(5), "append", &[m6, d[0].clone()]);
    let e = t
        .scan()
        .changes_after(Some(5))
        .plan_changelog()
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("Delete files are currently not supported in changelog scans"),
        "{e}"
    );
    // before the deletes, the range plans
    let (_, tasks) = t
        .scan()
        .snapshot(SnapshotSelection::SnapshotId(4))
        .changes_after(Some(3))
        .plan_changelog()
        .unwrap();
    assert_eq!(tasks.len(), 1);
}
