//! The streamed packing against the reference path: the whole plan materialised
//! (`plan_files`), packed with `scan::plan_tasks` (which the conformance tests compare
//! with Java's `planTasks`) and converted to Arrow row by row.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use arrow_array::{Array, Int32Array, RecordBatch};

use super::*;
use crate::catalog::{Catalog, TableIdent, TableState};
use crate::commit::snapshot::SnapshotProducer;
use crate::commit::test_catalog::{create_id_cat_table, MemoryCatalog};
use crate::commit::transaction::Transaction;
use crate::expr::{Datum, Expression, Operation};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::scan::plan_batches::RESIDUALS_KEY;
use crate::scan::{plan_tasks, FileScanTask};
use crate::spec::Literal;

/// A v3 table partitioned by `cat`, written in four appends (four data manifests) of files
/// of many sizes, some with split offsets, one empty; then deletion vectors for some
/// files and an equality delete file in one partition.
fn table() -> (Arc<MemoryCatalog>, TableState) {
    table_scaled(1)
}

/// [`table`] with its data files' sizes (and split offsets) `scale` times as large.
fn table_scaled(scale: i64) -> (Arc<MemoryCatalog>, TableState) {
    let catalog = MemoryCatalog::new();
    let ident = TableIdent::parse("db.packed").unwrap();
    create_id_cat_table(&catalog, &ident, 3);
    let file = |content, name: String, format, cat: i32, size: i64| {
        DataFile::new(
            content,
            name,
            format,
            vec![Some(Literal::Int(cat))],
            10,
            size,
        )
    };
    let commit = |p: SnapshotProducer| {
        let mut tx = Transaction::load(catalog.clone(), ident.clone()).unwrap();
        tx.add_change(Box::new(p));
        tx.commit().unwrap()
    };
    for batch in 0..4i64 {
        let mut p = SnapshotProducer::fast_append();
        for i in 0..16i64 {
            let size = [0, 40, 90, 250, 700, 1300, 2600, 4100][(i + batch) as usize % 8] * scale;
            let path = format!("mem://data/f{batch}-{i}.parquet");
            let mut f = file(
                DataContentType::Data,
                path,
                FileFormat::Parquet,
                (i % 3) as i32,
                size,
            );
            if i % 5 == 1 && size > 100 * scale {
                f.split_offsets = Some(vec![4 * scale, size / 3, size / 2]);
            }
            p.add_file(f);
        }
        commit(p);
    }
    let mut p = SnapshotProducer::row_delta();
    for (i, target) in ["f0-3", "f1-7", "f2-9", "f3-3"].iter().enumerate() {
        let cat = target[3..].parse::<i32>().unwrap() % 3;
        let path = format!("mem://data/dv{i}.puffin");
        let mut dv = file(
            DataContentType::PositionDeletes,
            path,
            FileFormat::Puffin,
            cat,
            500,
        );
        dv.referenced_data_file = Some(format!("mem://data/{target}.parquet"));
        dv.content_offset = Some(4);
        dv.content_size_in_bytes = Some(60 + i as i64 * 100);
        p.add_delete_file(None, dv);
    }
    let path = "mem://data/eq.parquet".to_string();
    let mut eq = file(
        DataContentType::EqualityDeletes,
        path,
        FileFormat::Parquet,
        1,
        300,
    );
    eq.equality_ids = Some(vec![1]);
    p.add_delete_file(None, eq);
    let state = commit(p);
    (catalog, state)
}

/// The residual of each row, by value (the two paths number residuals differently).
fn residuals(batch: &RecordBatch) -> Vec<String> {
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&batch.schema().metadata()[RESIDUALS_KEY]).unwrap();
    let index = batch.column_by_name("residual").unwrap();
    let index = index.as_any().downcast_ref::<Int32Array>().unwrap();
    index
        .values()
        .iter()
        .map(|&i| list[i as usize].to_string())
        .collect()
}

fn assert_same_rows(expected: &RecordBatch, actual: &RecordBatch, what: &str) {
    assert_eq!(
        expected.schema().fields(),
        actual.schema().fields(),
        "{what}"
    );
    assert_eq!(expected.num_rows(), actual.num_rows(), "{what}");
    for (i, field) in expected.schema().fields().iter().enumerate() {
        if field.name() != "residual" {
            let (e, a) = (expected.column(i), actual.column(i));
            assert_eq!(e.as_ref(), a.as_ref(), "{what}: column {}", field.name());
        }
    }
    assert_eq!(residuals(expected), residuals(actual), "{what}: residuals");
}

/// The rows of the reference path, and its number of groups.
fn reference(scan: &TableScan, options: &SplitOptions) -> (RecordBatch, usize) {
    let plan = scan.plan_files().unwrap();
    let groups = plan_tasks(plan.tasks.clone(), options).unwrap();
    let rows: Vec<(Option<i32>, &FileScanTask)> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, c)| c.tasks.iter().map(move |t| (Some(g as i32), t)))
        .collect();
    let (schema, batches) = tasks_to_batches(&plan, &rows, 7).unwrap();
    let all = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
    (all, groups.len())
}

#[test]
fn streamed_packing_equals_packing_the_materialised_plan() {
    let (catalog, state) = table();
    let cat_or_id = Expression::or(
        Expression::compare(Operation::Eq, "cat", Datum::Int(1)),
        Expression::compare(Operation::Gt, "id", Datum::Long(5)),
    );
    let mut gathered = 0;
    for filter in [Expression::True, cat_or_id] {
        let scan = TableScan::new(state.metadata.clone(), catalog.io())
            .filter(filter.clone())
            .threads(2);
        for (target, lookback, cost) in [(1000, 3, 100), (300, 1, 0), (128 << 20, 10, 4 << 20)] {
            let what = format!("{filter:?}, target {target}, lookback {lookback}, cost {cost}");
            let options = SplitOptions::new(target, lookback, cost).unwrap();
            let (expected, n_groups) = reference(&scan, &options);
            let packed = plan_packed(&scan, &options).unwrap();
            assert_eq!(packed.len(), n_groups, "{what}");
            assert!(expected.num_rows() > 40, "{what}: a plan worth packing");
            let batches = packed.to_batches(5).unwrap();
            assert!(batches.iter().all(|b| b.num_rows() <= 5));
            let all = arrow_select::concat::concat_batches(packed.schema(), &batches).unwrap();
            assert_same_rows(&expected, &all, &what);

            // each payload holds its group's rows with the whole plan's metadata
            let payloads = packed.payloads(3).unwrap();
            assert_eq!(payloads.len(), n_groups, "{what}");
            for (g, (bytes, n)) in payloads.iter().enumerate() {
                let ipc = task_group_from_payload(bytes).unwrap();
                let mut reader = arrow_ipc::reader::StreamReader::try_new(&ipc[..], None).unwrap();
                let batch = reader.next().unwrap().unwrap();
                assert!(reader.next().is_none());
                assert_eq!(*n, batch.num_rows());
                assert_eq!(packed.group_len(g), *n);
                assert_eq!(batch.schema().metadata(), packed.schema().metadata());
                assert_eq!(batch, packed.group_batch(g).unwrap(), "{what}: group {g}");
            }
            gathered += packed
                .groups
                .iter()
                .filter(|g| {
                    g.windows(2)
                        .any(|w| (w[1].part, w[1].row) != (w[0].part, w[0].row + 1))
                })
                .count();
        }
    }
    assert!(
        gathered > 0,
        "some groups are not one run of a manifest's rows"
    );
}

#[test]
fn an_empty_plan_has_no_groups_and_bad_options_fail() {
    let (catalog, state) = table();
    let scan = TableScan::new(state.metadata.clone(), catalog.io()).filter(Expression::compare(
        Operation::Eq,
        "cat",
        Datum::Int(7),
    ));
    let packed = plan_packed(&scan, &SplitOptions::default()).unwrap();
    assert!(packed.is_empty());
    assert!(packed.to_batches(10).unwrap().is_empty());
    assert!(packed.payloads(2).unwrap().is_empty());
    assert!(packed.group_batch(0).is_err());
    let bad = SplitOptions {
        target_size: 0,
        ..SplitOptions::default()
    };
    assert!(plan_packed(&scan, &bad).is_err());
}

#[test]
fn a_damaged_payload_is_an_error() {
    let (catalog, state) = table();
    let scan = TableScan::new(state.metadata.clone(), catalog.io());
    let packed = plan_packed(&scan, &SplitOptions::default()).unwrap();
    let (mut bytes, _) = packed.payloads(1).unwrap().remove(0);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    assert!(task_group_from_payload(&bytes).is_err());
}

/// With a parallelism, the streamed packing is the reference packing at the split size
/// `adjust_split_size` gives for the planned files' total size (Java's Spark scans): files
/// without split offsets cut at the adjusted size, and more groups than without it.
#[test]
fn adaptive_packing_equals_packing_at_the_adjusted_size() {
    const MIB: i64 = 1024 * 1024;
    // 4.4 GiB of data files from 2.5 to 256 MiB, so that the 16 MiB floor leaves room
    let (catalog, state) = table_scaled(64 * 1024);
    let scan = TableScan::new(state.metadata.clone(), catalog.io()).threads(2);
    let plan = scan.plan_files().unwrap();
    let size = plan.tasks.iter().fold(0i64, |a, t| {
        let deletes: i64 = t
            .deletes
            .iter()
            .map(|d| crate::scan::split::content_size_in_bytes(&d.file).unwrap())
            .sum();
        a + t.length + deletes
    });
    for (target, parallelism) in [
        (128 * MIB, 100),
        (128 * MIB, 2),
        (512 * MIB, 40),
        (8 * MIB, 900),
    ] {
        let options = SplitOptions::new(target, 10, 4 * MIB).unwrap();
        let adjusted = crate::scan::split::adjust_split_size(size, parallelism, target).unwrap();
        let what = format!("target {target}, parallelism {parallelism}: {adjusted}");
        let adjusted_options = SplitOptions::new(adjusted, 10, 4 * MIB).unwrap();
        let (expected, n_groups) = reference(&scan, &adjusted_options);
        let packed = plan_packed_for(&scan, &options, Some(parallelism)).unwrap();
        assert_eq!(packed.len(), n_groups, "{what}");
        let all = arrow_select::concat::concat_batches(
            packed.schema(),
            &packed.to_batches(1000).unwrap(),
        )
        .unwrap();
        assert_same_rows(&expected, &all, &what);
        let unadjusted = plan_packed(&scan, &options).unwrap().len();
        if adjusted < target {
            assert!(
                n_groups > unadjusted,
                "{what}: {n_groups} groups, {unadjusted} without"
            );
        } else {
            assert_eq!(n_groups, unadjusted, "{what}");
        }
    }
    // the first and third cases adjust, the second and fourth do not
    assert!(crate::scan::split::adjust_split_size(size, 100, 128 * MIB).unwrap() < 128 * MIB);
    assert!(crate::scan::split::adjust_split_size(size, 40, 512 * MIB).unwrap() < 512 * MIB);
    assert!(plan_packed_for(&scan, &SplitOptions::default(), Some(0)).is_err());
}

/// The estimated rows (Spark's statistics) are the sum over the reference path's tasks of
/// Java's `ContentScanTask.estimatedRowsCount`, worked here from each task: the length over
/// the file's size less its first usable split offset, times its record count, truncated.
#[test]
fn estimated_rows_sum_javas_estimate_over_the_packed_tasks() {
    let (catalog, state) = table();
    let scan = TableScan::new(state.metadata.clone(), catalog.io()).threads(2);
    let mut split_estimates = 0;
    for (target, lookback, cost) in [(1000, 3, 100), (300, 1, 0), (128 << 20, 10, 4 << 20)] {
        let options = SplitOptions::new(target, lookback, cost).unwrap();
        let plan = scan.plan_files().unwrap();
        let groups = plan_tasks(plan.tasks.clone(), &options).unwrap();
        let mut expected = 0i64;
        for t in groups.iter().flat_map(|g| g.tasks.iter()) {
            let f = &t.file.file;
            let offset = crate::scan::split::usable_split_offsets(f).map_or(0, |o| o[0]);
            let fraction = t.length as f64 / (f.file_size_in_bytes - offset) as f64;
            expected += (fraction * f.record_count as f64) as i64;
            if t.length < f.file_size_in_bytes && f.record_count > 0 {
                split_estimates += 1;
            }
        }
        let packed = plan_packed(&scan, &options).unwrap();
        assert_eq!(
            packed.estimated_rows().unwrap(),
            expected,
            "target {target}"
        );
        assert!(expected > 0);
    }
    assert!(split_estimates > 0, "some tasks are part of a file");
    // an empty plan estimates nothing
    let none = TableScan::new(state.metadata.clone(), catalog.io()).filter(Expression::compare(
        Operation::Eq,
        "cat",
        Datum::Int(99),
    ));
    let packed = plan_packed(&none, &SplitOptions::default()).unwrap();
    assert_eq!(packed.estimated_rows().unwrap(), 0);
}
