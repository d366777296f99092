//! Aggregate column metrics on v4 leaf entries (`manifest::v4::stats`): what a leaf's root
//! entry carries, and that planning skips a leaf they rule out without reading it.
//! A child of `v4_tests`, whose helpers it uses.

use std::sync::{Arc, Mutex};

use super::*;
use crate::io::FileIO;
use crate::manifest::v4::Metrics;
use crate::spec::PrimitiveType;

/// `data(name, cat, rows)` with bounds and counts on `id` (field 1, a long) too.
pub(super) fn data_ids(name: &str, cat: i32, rows: i64, lo: i64, hi: i64) -> DataFile {
    let mut f = data(name, cat, rows);
    let long = |v: i64| Literal::Long(v).to_bytes(&PrimitiveType::Long).unwrap();
    f.lower_bounds.as_mut().unwrap().insert(0, (1, long(lo)));
    f.upper_bounds.as_mut().unwrap().insert(0, (1, long(hi)));
    f.value_counts.as_mut().unwrap().insert(0, (1, rows));
    f.null_value_counts.as_mut().unwrap().insert(0, (1, 0));
    f
}

fn long(v: i64) -> Vec<u8> {
    Literal::Long(v).to_bytes(&PrimitiveType::Long).unwrap()
}

fn int(v: i32) -> Vec<u8> {
    Literal::Int(v).to_bytes(&PrimitiveType::Int).unwrap()
}

/// Flushes `files` into one new leaf (the root's limit lowered for one commit) and
/// returns the state after.
fn append_as_leaf(c: &Arc<MemoryCatalog>, files: Vec<DataFile>) -> TableState {
    set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "0");
    let t = append(c, files);
    set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    t
}

#[test]
fn a_leaf_entry_carries_the_aggregate_bounds_and_counts_of_its_files() {
    let c = MemoryCatalog::new();
    create(&c, 4);
    set_property(&c, super::super::snapshot::COMPACT_MIN_DV_LEAVES, "0");
    let t = append_as_leaf(
        &c,
        vec![
            data_ids("d1", 1, 10, 10, 20),
            data_ids("d2", 1, 5, 5, 15),
            data_ids("d3", 2, 7, 30, 40),
        ],
    );
    let r = root(&c, &t);
    assert_eq!(shape(&r), vec![s(Added, DataManifest, "leaf")]);
    let want = Metrics {
        column_sizes: None,
        value_counts: Some(vec![(1, 22), (2, 22)]),
        null_value_counts: Some(vec![(1, 0), (2, 0)]),
        nan_value_counts: None,
        lower_bounds: Some(vec![(1, long(5)), (2, int(1))]),
        upper_bounds: Some(vec![(1, long(40)), (2, int(2))]),
    };
    assert_eq!(r[0].metrics, want);

    // a file without bounds on `id` (nor counts telling it holds only nulls): the next
    // leaf gets no `id` bound, only `cat`'s
    let mut bare = data("d5", 3, 4);
    bare.value_counts = None;
    bare.null_value_counts = None;
    let t = append_as_leaf(&c, vec![data_ids("d4", 3, 2, 50, 60), bare]);
    let r = root(&c, &t);
    let new_leaf = r
        .iter()
        .find(|e| e.tracking.status == Added)
        .expect("the new leaf");
    assert_eq!(
        new_leaf.metrics,
        Metrics {
            column_sizes: None,
            value_counts: None,
            null_value_counts: None,
            nan_value_counts: None,
            lower_bounds: Some(vec![(2, int(3))]),
            upper_bounds: Some(vec![(2, int(3))]),
        }
    );

    // a manifest DV removing d3 (the one with the highest `id`) leaves the aggregate as
    // it was: wider than the live entries need, never narrower
    let t = delete(&c, &["d3"]);
    let r = root(&c, &t);
    let first = r
        .iter()
        .find(|e| e.tracking.status == Modified)
        .expect("the leaf with a manifest DV");
    assert_eq!(leaf_dv(first), [2]);
    assert_eq!(first.metrics, want);
}

/// A FileIO over another that records the locations it reads.
struct Recording {
    inner: Arc<dyn FileIO>,
    reads: Mutex<Vec<String>>,
}

impl FileIO for Recording {
    fn read(&self, location: &str) -> crate::error::Result<Vec<u8>> {
        self.reads.lock().unwrap().push(location.to_string());
        self.inner.read(location)
    }
    fn read_range(&self, location: &str, offset: u64, len: u64) -> crate::error::Result<Vec<u8>> {
        self.reads.lock().unwrap().push(location.to_string());
        self.inner.read_range(location, offset, len)
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
}

#[test]
fn planning_skips_a_leaf_its_aggregate_bounds_rule_out_without_reading_it() {
    let c = MemoryCatalog::new();
    create(&c, 4);
    set_property(&c, super::super::snapshot::COMPACT_MIN_DV_LEAVES, "0");
    // two leaves in the same partitions (so partition summaries cannot tell them apart),
    // with disjoint `id` ranges
    append_as_leaf(
        &c,
        vec![data_ids("a1", 1, 10, 0, 49), data_ids("a2", 2, 10, 50, 99)],
    );
    let t = append_as_leaf(
        &c,
        vec![
            data_ids("b1", 1, 10, 100, 149),
            data_ids("b2", 2, 10, 150, 199),
        ],
    );
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Existing, DataManifest, "leaf"),
            s(Added, DataManifest, "leaf")
        ]
    );
    let (leaf_a, leaf_b) = (r[0].location.clone(), r[1].location.clone());

    let io = Arc::new(Recording {
        inner: c.io(),
        reads: Mutex::new(Vec::new()),
    });
    let plan_ids = |op: ExprOp, v: i64| {
        io.reads.lock().unwrap().clear();
        let scan = TableScan::new(t.metadata.clone(), io.clone()).filter(Expression::compare(
            op,
            "id",
            Datum::Long(v),
        ));
        let plan = scan.plan_files().unwrap();
        let mut files: Vec<String> = plan
            .tasks
            .iter()
            .map(|t| t.file.file.file_path.clone())
            .collect();
        files.sort();
        let reads = io.reads.lock().unwrap().clone();
        (files, plan.metrics.skipped_data_manifests, reads)
    };

    let (files, skipped, reads) = plan_ids(ExprOp::GtEq, 150);
    assert_eq!(files, [path("b2")]);
    assert_eq!(skipped, 1);
    assert!(!reads.contains(&leaf_a), "leaf A was read: {reads:?}");
    assert!(reads.contains(&leaf_b));

    let (files, skipped, reads) = plan_ids(ExprOp::Lt, 50);
    assert_eq!(files, [path("a1")]);
    assert_eq!(skipped, 1);
    assert!(!reads.contains(&leaf_b), "leaf B was read: {reads:?}");

    // a value between the leaves' ranges: neither is read
    let (files, skipped, reads) = plan_ids(ExprOp::Eq, 99);
    assert_eq!(files, [path("a2")]);
    assert_eq!(skipped, 1);
    assert!(!reads.contains(&leaf_b));
    let (files, skipped, reads) = plan_ids(ExprOp::Eq, 500);
    assert!(files.is_empty());
    assert_eq!(skipped, 2);
    assert!(!reads.contains(&leaf_a) && !reads.contains(&leaf_b));

    // the same plans as the v3 twin's
    let v3 = MemoryCatalog::new();
    create(&v3, 3);
    append(
        &v3,
        vec![data_ids("a1", 1, 10, 0, 49), data_ids("a2", 2, 10, 50, 99)],
    );
    let t3 = append(
        &v3,
        vec![
            data_ids("b1", 1, 10, 100, 149),
            data_ids("b2", 2, 10, 150, 199),
        ],
    );
    for (op, v) in [
        (ExprOp::GtEq, 150),
        (ExprOp::Lt, 50),
        (ExprOp::Eq, 99),
        (ExprOp::Eq, 500),
        (ExprOp::NotEq, 500),
    ] {
        let f = Expression::compare(op, "id", Datum::Long(v));
        assert_eq!(planned_with(&v3, &t3, f.clone()), planned_with(&c, &t, f));
    }
}

#[test]
fn aggregate_rules_for_null_only_files_unknown_counts_and_dead_entries() {
    use crate::manifest::v4::stats::aggregate_metrics;
    use crate::manifest::v4::tree::from_data_file;
    use crate::manifest::v4::Tracking;
    let c = MemoryCatalog::new();
    let t = create(&c, 4);
    let entry = |f: &DataFile, status| from_data_file(f, 0, Tracking::new(status)).unwrap();
    let a = data_ids("a", 1, 10, 10, 20);
    // no `id` bounds, but its counts say every value is null: it needs none
    let mut nulls = data("n", 1, 4);
    nulls.value_counts = Some(vec![(1, 4), (2, 4)]);
    nulls.null_value_counts = Some(vec![(1, 4), (2, 0)]);
    // a removed entry with a wider range does not count
    let dead = data_ids("x", 1, 10, -100, 100);
    let m = aggregate_metrics(
        &t.metadata,
        &[
            entry(&a, Existing),
            entry(&nulls, Added),
            entry(&dead, Deleted),
        ],
    );
    assert_eq!(m.lower_bounds, Some(vec![(1, long(10)), (2, int(1))]));
    assert_eq!(m.upper_bounds, Some(vec![(1, long(20)), (2, int(1))]));
    assert_eq!(m.value_counts, Some(vec![(1, 14), (2, 14)]));
    assert_eq!(m.null_value_counts, Some(vec![(1, 4), (2, 0)]));
    // a file of unknown row count: no aggregate at all (the evaluator keeps such a file)
    let mut unknown = data_ids("u", 1, 10, 10, 20);
    unknown.record_count = -1;
    let m = aggregate_metrics(
        &t.metadata,
        &[entry(&a, Existing), entry(&unknown, Existing)],
    );
    assert!(m.is_empty());
    // a bound that does not decode as the column's type drops that column's bound
    let mut bad = data_ids("b", 1, 10, 10, 20);
    bad.lower_bounds.as_mut().unwrap()[0].1 = vec![1, 2, 3];
    let m = aggregate_metrics(&t.metadata, &[entry(&a, Existing), entry(&bad, Existing)]);
    assert_eq!(m.lower_bounds, Some(vec![(2, int(1))]));
    assert_eq!(m.upper_bounds, Some(vec![(1, long(20)), (2, int(1))]));
    // a file whose counts say only NaNs (and so no bounds) drops the column's bound: with
    // another file's NaN count missing, `!=` on one unique value would drop its NaN rows
    let mut nans = data_ids("nan", 1, 4, 10, 20);
    nans.lower_bounds = Some(vec![(1, long(10))]);
    nans.upper_bounds = Some(vec![(1, long(20))]);
    nans.value_counts = Some(vec![(1, 4), (2, 4)]);
    nans.null_value_counts = Some(vec![(1, 0), (2, 0)]);
    nans.nan_value_counts = Some(vec![(2, 4)]);
    let m = aggregate_metrics(&t.metadata, &[entry(&a, Existing), entry(&nans, Existing)]);
    assert_eq!(m.lower_bounds, Some(vec![(1, long(10))]));
    assert_eq!(m.nan_value_counts, None);
}
