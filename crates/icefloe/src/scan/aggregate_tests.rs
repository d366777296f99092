//! Aggregates from file metadata (`ScanPlan::aggregates_from_metadata`) on hand-made plans:
//! Java's rules for deletes, metrics modes, missing metrics, NaN, files of nulls only,
//! truncatable types and filters that select whole files. The Spark oracle tests
//! (tests/test_spark_connector.py) compare the same with Java on real tables.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::aggregate::{AggregateValue, MetadataAggregate as A};
use crate::expr::{BoundExpression, Datum, Expression, Operation};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::scan::{FileScanTask, ScanFile, ScanMetrics, ScanPlan};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, Schema};

fn schema() -> Schema {
    Schema::from_json(
        &json!({"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": false, "type": "long"},
            {"id": 2, "name": "name", "required": false, "type": "string"},
            {"id": 3, "name": "score", "required": false, "type": "double"},
        ]}),
        "schema",
    )
    .unwrap()
}

fn table(properties: serde_json::Value) -> TableMetadata {
    TableMetadata::from_json_value(&json!({
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "mem://t",
        "last-sequence-number": 0,
        "last-updated-ms": 1,
        "last-column-id": 3,
        "schemas": [schema().to_json()],
        "current-schema-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "default-spec-id": 0,
        "last-partition-id": 999,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "properties": properties,
    }))
    .unwrap()
}

/// A file of `rows` rows with id bounds `lo..=hi`, `nulls` null ids and a bound for name.
fn file(rows: i64, lo: i64, hi: i64, nulls: i64) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::Data,
        format!("mem://t/{lo}.parquet"),
        FileFormat::Parquet,
        vec![],
        rows,
        100,
    );
    f.value_counts = Some(vec![(1, rows), (2, rows), (3, rows)]);
    f.null_value_counts = Some(vec![(1, nulls), (2, 0), (3, 0)]);
    f.nan_value_counts = Some(vec![(3, 0)]);
    f.lower_bounds = Some(vec![
        (1, lo.to_le_bytes().to_vec()),
        (2, b"a".to_vec()),
        (3, 1.5f64.to_le_bytes().to_vec()),
    ]);
    f.upper_bounds = Some(vec![
        (1, hi.to_le_bytes().to_vec()),
        (2, b"z".to_vec()),
        (3, 9.5f64.to_le_bytes().to_vec()),
    ]);
    f
}

fn plan(files: Vec<DataFile>, filter: BoundExpression, residual: BoundExpression) -> ScanPlan {
    let schema = Arc::new(schema());
    let tasks = files
        .into_iter()
        .map(|f| {
            let file = Arc::new(ScanFile {
                tree_position: None,
                spec_id: 0,
                data_sequence_number: 1,
                file_sequence_number: Some(1),
                file: f,
            });
            FileScanTask::whole_file(file, vec![], Arc::new(residual.clone()))
        })
        .collect();
    ScanPlan {
        snapshot_id: Some(1),
        schema: schema.clone(),
        projected_schema: schema,
        filter: Arc::new(filter),
        specs: HashMap::new(),
        partition_types: HashMap::new(),
        tasks,
        metrics: ScanMetrics::default(),
        name_mapping: None,
        format_version: 2,
    }
}

fn whole(files: Vec<DataFile>) -> ScanPlan {
    plan(files, BoundExpression::True, BoundExpression::True)
}

#[test]
fn counts_min_and_max_from_bounds() {
    let p = whole(vec![file(10, 5, 50, 2), file(20, -3, 7, 0)]);
    let got = p
        .aggregates_from_metadata(
            &[A::CountStar, A::Count(1), A::Min(1), A::Max(1), A::Max(3)],
            &table(json!({})),
        )
        .unwrap();
    assert_eq!(
        got,
        Some(vec![
            AggregateValue::Count(30),
            AggregateValue::Count(28),
            AggregateValue::Value(Some(Literal::Long(-3))),
            AggregateValue::Value(Some(Literal::Long(50))),
            AggregateValue::Value(Some(Literal::Double(9.5))),
        ])
    );
}

#[test]
fn a_file_of_nulls_only_has_no_bound_and_counts_nothing() {
    let mut nulls = file(4, 0, 0, 4);
    nulls.lower_bounds = Some(vec![]);
    nulls.upper_bounds = Some(vec![]);
    let p = whole(vec![nulls.clone(), file(3, 1, 2, 0)]);
    let got = p
        .aggregates_from_metadata(&[A::Min(1), A::Count(1)], &table(json!({})))
        .unwrap();
    assert_eq!(
        got,
        Some(vec![
            AggregateValue::Value(Some(Literal::Long(1))),
            AggregateValue::Count(3)
        ])
    );
    // only nulls: no value at all
    let got = whole(vec![nulls])
        .aggregates_from_metadata(&[A::Max(1)], &table(json!({})))
        .unwrap();
    assert_eq!(got, Some(vec![AggregateValue::Value(None)]));
}

#[test]
fn refused_where_java_refuses() {
    let t = table(json!({}));
    // strings: bounds may be truncated
    assert_eq!(
        whole(vec![file(1, 1, 1, 0)])
            .aggregates_from_metadata(&[A::Max(2)], &t)
            .unwrap(),
        None
    );
    // but their counts are fine
    assert!(whole(vec![file(1, 1, 1, 0)])
        .aggregates_from_metadata(&[A::Count(2)], &t)
        .unwrap()
        .is_some());
    // NaN in a file
    let mut nan = file(2, 1, 2, 0);
    nan.nan_value_counts = Some(vec![(3, 1)]);
    assert_eq!(
        whole(vec![nan])
            .aggregates_from_metadata(&[A::Min(3)], &t)
            .unwrap(),
        None
    );
    // a missing bound or count
    let mut missing = file(2, 1, 2, 0);
    missing.upper_bounds = None;
    assert_eq!(
        whole(vec![missing.clone()])
            .aggregates_from_metadata(&[A::Max(1)], &t)
            .unwrap(),
        None
    );
    missing.value_counts = None;
    assert_eq!(
        whole(vec![missing])
            .aggregates_from_metadata(&[A::Count(1)], &t)
            .unwrap(),
        None
    );
    // deletes
    let mut p = whole(vec![file(2, 1, 2, 0)]);
    let delete = p.tasks[0].file.clone();
    p.tasks[0].deletes.push(delete);
    assert_eq!(
        p.aggregates_from_metadata(&[A::CountStar], &t).unwrap(),
        None
    );
}

#[test]
fn metrics_modes_as_javas() {
    let p = whole(vec![file(3, 1, 2, 1)]);
    let counts = table(json!({"write.metadata.metrics.default": "counts"}));
    assert!(p
        .aggregates_from_metadata(&[A::Count(1)], &counts)
        .unwrap()
        .is_some());
    assert_eq!(
        p.aggregates_from_metadata(&[A::Max(1)], &counts).unwrap(),
        None
    );
    let none = table(json!({"write.metadata.metrics.column.id": "none"}));
    assert_eq!(
        p.aggregates_from_metadata(&[A::Count(1)], &none).unwrap(),
        None
    );
    // COUNT(*) needs no column metrics
    assert!(p
        .aggregates_from_metadata(&[A::CountStar, A::Max(3)], &none)
        .unwrap()
        .is_some());
}

#[test]
fn a_filter_only_when_it_selects_whole_files() {
    let s = schema();
    let filter = Expression::compare(Operation::Eq, "id", Datum::Long(1))
        .bind(&s, true)
        .unwrap();
    let t = table(json!({}));
    let exact = plan(
        vec![file(3, 1, 2, 0)],
        filter.clone(),
        BoundExpression::True,
    );
    assert!(exact.filter_selects_whole_files());
    assert!(exact
        .aggregates_from_metadata(&[A::CountStar], &t)
        .unwrap()
        .is_some());
    let residual = plan(vec![file(3, 1, 2, 0)], filter.clone(), filter.clone());
    assert!(!residual.filter_selects_whole_files());
    assert_eq!(
        residual
            .aggregates_from_metadata(&[A::CountStar], &t)
            .unwrap(),
        None
    );
    // a null partition value: its residual is not exact
    let mut null_partition = file(3, 1, 2, 0);
    null_partition.partition = vec![None];
    let p = plan(vec![null_partition], filter, BoundExpression::True);
    assert!(!p.filter_selects_whole_files());
}
