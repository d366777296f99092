//! The reader's row filters over 1,000,000 rows in batches of 65,536 (the reader's default
//! batch size): residual masks for a string equality (`cat = 'c3'`, 10 distinct values), a
//! range on a long (`id >= 250000 and id < 750000`), a 100-value `in` on a long and a NaN-aware
//! range on a double; and the keep mask of equality deletes keyed by `id` (10,000 delete rows,
//! 1% of the data) and by (`id`, `cat`), with the time to build the delete set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::arrow::schema::schema_to_arrow;
use icefloe::expr::{Datum, Expression, Operation};
use icefloe::read::equality_deletes::EqualityDeletes;
use icefloe::read::filter::ResidualFilter;
use icefloe::spec::{NestedField, PrimitiveType, Schema, Type};

const ROWS: usize = 1_000_000;
const BATCH: usize = 65_536;
const DELETES: usize = 10_000;

fn schema() -> Schema {
    let f = |id, name: &str, t| NestedField::optional(id, name, Type::Primitive(t));
    Schema::new(
        0,
        vec![
            f(1, "id", PrimitiveType::Long),
            f(2, "cat", PrimitiveType::String),
            f(3, "amount", PrimitiveType::Double),
        ],
        vec![],
    )
    .unwrap()
}

/// `ROWS` rows in batches of `BATCH`: id = row number, cat = `c{id % 10}`, amount =
/// id / 1000 with a NaN every 1,000 rows and a null every 100.
fn batches() -> Vec<RecordBatch> {
    let arrow = Arc::new(schema_to_arrow(&schema()).unwrap());
    (0..ROWS)
        .step_by(BATCH)
        .map(|start| {
            let end = (start + BATCH).min(ROWS);
            let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(start as i64..end as i64));
            let cats: ArrayRef = Arc::new(StringArray::from_iter_values(
                (start..end).map(|i| format!("c{}", i % 10)),
            ));
            let amounts: ArrayRef =
                Arc::new(Float64Array::from_iter((start..end).map(|i| {
                    match (i % 1000, i % 100) {
                        (0, _) => Some(f64::NAN),
                        (_, 0) => None,
                        _ => Some(i as f64 / 1000.0),
                    }
                })));
            RecordBatch::try_new(arrow.clone(), vec![ids, cats, amounts]).unwrap()
        })
        .collect()
}

fn bench_residuals(c: &mut Criterion) {
    let data = batches();
    let s = schema();
    let mut group = c.benchmark_group("residual_mask");
    group.throughput(Throughput::Elements(ROWS as u64));
    let in_values: Vec<Datum> = (0..100).map(|v| Datum::Long(v * 997)).collect();
    let cases = [
        ("string_eq", Expression::compare(Operation::Eq, "cat", "c3")),
        (
            "long_range",
            Expression::and(
                Expression::compare(Operation::GtEq, "id", 250_000i64),
                Expression::compare(Operation::Lt, "id", 750_000i64),
            ),
        ),
        ("long_in_100", Expression::is_in("id", in_values)),
        (
            "double_gt",
            Expression::compare(Operation::Gt, "amount", 500.0f64),
        ),
    ];
    for (name, expr) in cases {
        let filter = ResidualFilter::new(&expr.bind(&s, true).unwrap()).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut kept = 0;
                for batch in &data {
                    kept += filter.mask(batch).unwrap().true_count();
                }
                black_box(kept)
            })
        });
    }
    group.finish();
}

/// Delete rows: every 100th id (10,000 of them), with its category.
fn delete_batch() -> RecordBatch {
    let arrow = Arc::new(schema_to_arrow(&schema()).unwrap());
    let ids: Vec<i64> = (0..DELETES).map(|i| (i * 100 + 7) as i64).collect();
    let cats: ArrayRef = Arc::new(StringArray::from_iter_values(
        ids.iter().map(|i| format!("c{}", i % 10)),
    ));
    let amounts: ArrayRef = Arc::new(Float64Array::new_null(DELETES));
    RecordBatch::try_new(arrow, vec![Arc::new(Int64Array::from(ids)), cats, amounts]).unwrap()
}

fn bench_equality_deletes(c: &mut Criterion) {
    let data = batches();
    let s = schema();
    let dels = delete_batch();
    let mut group = c.benchmark_group("equality_deletes");
    for (name, ids) in [("id", vec![1]), ("id_cat", vec![1, 2])] {
        let mut deletes = EqualityDeletes::new();
        deletes
            .insert_file(&ids, &s, [&dels], "bench.parquet")
            .unwrap();
        group.throughput(Throughput::Elements(ROWS as u64));
        group.bench_function(format!("keep_mask_{name}"), |b| {
            b.iter(|| {
                let mut kept = 0;
                for batch in &data {
                    kept += deletes.keep_mask(batch).unwrap().true_count();
                }
                black_box(kept)
            })
        });
        group.throughput(Throughput::Elements(DELETES as u64));
        group.bench_function(format!("build_{name}"), |b| {
            b.iter(|| {
                let mut d = EqualityDeletes::new();
                d.insert_file(&ids, &s, [&dels], "bench.parquet").unwrap();
                black_box(d)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_residuals, bench_equality_deletes);
criterion_main!(benches);
