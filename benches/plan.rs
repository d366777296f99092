//! Scan planning: a table of 200,000 data files (20 manifests of 10,000, deflate, full
//! metrics for 4 columns, day(ts) partitions over a year) written in memory by the bench,
//! planned with no filter, a point lookup on `id` (pruned by metrics to one file) and a
//! 5-day range on `ts` (pruned by partition), into tasks and into Arrow batches.
//!
//! When `.cache/bench/pyi10k` exists (the 10,000-file table that PyIceberg wrote for
//! `benches/plan_compare.py --files 10000`: one manifest, one entry per Avro block) the
//! same scans are planned from it too; otherwise those benches are skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::expr::Expression;
use icefloe::io::{FileIO, LocalFileIO, MemoryFileIO};
use icefloe::manifest::{
    write_manifest_list, Codec, DataContentType, DataFile, FileFormat, ManifestContent,
    ManifestWriter,
};
use icefloe::scan::plan_batches::{plan_stream, plan_to_batches};
use icefloe::scan::TableScan;
use icefloe::spec::partition::{PartitionField, PartitionSpec};
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::{NestedField, PrimitiveType, Schema, Transform, Type};
use serde_json::json;

const MANIFESTS: i64 = 20;
const PER_MANIFEST: i64 = 10_000;
const FILES: i64 = MANIFESTS * PER_MANIFEST;
const DAY_US: i64 = 86_400_000_000;

const FILTERS: [(&str, &str); 3] = [
    ("none", ""),
    ("id_point", "id = 4000500"),
    (
        "ts_5_days",
        "ts >= '1970-01-05T00:00:00' and ts < '1970-01-10T00:00:00'",
    ),
];

fn schema() -> Schema {
    let f = |id, name: &str, t, required| {
        if required {
            NestedField::required(id, name, Type::Primitive(t))
        } else {
            NestedField::optional(id, name, Type::Primitive(t))
        }
    };
    Schema::new(
        0,
        vec![
            f(1, "id", PrimitiveType::Long, true),
            f(2, "ts", PrimitiveType::Timestamp, true),
            f(3, "category", PrimitiveType::String, false),
            f(4, "value", PrimitiveType::Double, false),
        ],
        vec![],
    )
    .unwrap()
}

/// The table of `shared/bench/make_pyiceberg_table.py`, written by icefloe in memory.
fn memory_table() -> (Arc<TableMetadata>, Arc<dyn FileIO>) {
    let io = Arc::new(MemoryFileIO::default());
    let schema = schema();
    let spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(2, 1000, "ts_day", Transform::Day)],
    );
    let mut manifests = Vec::new();
    for m in 0..MANIFESTS {
        let mut w =
            ManifestWriter::new(2, ManifestContent::Data, &schema, &spec, 1, Codec::Deflate)
                .unwrap();
        for i in m * PER_MANIFEST..(m + 1) * PER_MANIFEST {
            let day = i * 365 / FILES;
            let lo_id = i * 1000;
            let mut df = DataFile::new(
                DataContentType::Data,
                format!("mem://t/data/ts_day={day}/f{i:08}.parquet"),
                FileFormat::Parquet,
                vec![Some(icefloe::spec::Literal::Int(day as i32))],
                1000,
                100_000 + i % 1000,
            );
            df.column_sizes = Some(vec![(1, 8000), (2, 8000), (3, 5000), (4, 8000)]);
            df.value_counts = Some(vec![(1, 1000), (2, 1000), (3, 1000), (4, 1000)]);
            df.null_value_counts = Some(vec![(1, 0), (2, 0), (3, 10), (4, 5)]);
            df.nan_value_counts = Some(vec![(4, 0)]);
            df.lower_bounds = Some(vec![
                (1, lo_id.to_le_bytes().to_vec()),
                (2, (day * DAY_US).to_le_bytes().to_vec()),
                (3, b"aaa".to_vec()),
                (4, 0f64.to_le_bytes().to_vec()),
            ]);
            df.upper_bounds = Some(vec![
                (1, (lo_id + 999).to_le_bytes().to_vec()),
                (2, (day * DAY_US + DAY_US - 1).to_le_bytes().to_vec()),
                (3, b"zzz".to_vec()),
                (4, 100f64.to_le_bytes().to_vec()),
            ]);
            df.split_offsets = Some(vec![4]);
            df.sort_order_id = Some(0);
            w.add(df).unwrap();
        }
        manifests.push(
            w.finish(io.as_ref(), &format!("mem://t/m{m}.avro"))
                .unwrap(),
        );
    }
    write_manifest_list(
        io.as_ref(),
        "mem://t/snap-1.avro",
        2,
        1,
        None,
        1,
        None,
        &manifests,
        Codec::Deflate,
    )
    .unwrap();
    let md = json!({
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "mem://t",
        "last-sequence-number": 1,
        "last-updated-ms": 1,
        "last-column-id": 4,
        "schemas": [schema.to_json()],
        "current-schema-id": 0,
        "partition-specs": [spec.to_json()],
        "default-spec-id": 0,
        "last-partition-id": 1000,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "current-snapshot-id": 1,
        "snapshots": [{
            "snapshot-id": 1,
            "sequence-number": 1,
            "timestamp-ms": 1000,
            "manifest-list": "mem://t/snap-1.avro",
            "summary": {"operation": "append"},
            "schema-id": 0,
        }],
    });
    let md = TableMetadata::from_json_value(&md).unwrap();
    (Arc::new(md), io)
}

/// The newest metadata file of the PyIceberg table in `.cache/bench/pyi10k`, if there.
fn pyiceberg_table() -> Option<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/bench/pyi10k/db/t10000/metadata");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    files.sort();
    files.pop()
}

fn scan(md: &Arc<TableMetadata>, io: &Arc<dyn FileIO>, filter: &str) -> TableScan {
    let s = TableScan::new(md.clone(), io.clone());
    if filter.is_empty() {
        s
    } else {
        s.filter(Expression::parse(filter).unwrap())
    }
}

fn bench_table(c: &mut Criterion, group: &str, md: Arc<TableMetadata>, io: Arc<dyn FileIO>) {
    let files = scan(&md, &io, "").plan_files().unwrap().tasks.len();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(files as u64));
    g.sample_size(10);
    for (name, filter) in FILTERS {
        let s = scan(&md, &io, filter);
        let tasks = s.plan_files().unwrap().tasks.len();
        assert!(tasks > 0, "{group} {name}: nothing planned");
        if name == "id_point" {
            assert_eq!(tasks, 1);
        }
        g.bench_function(format!("plan_files_{name}"), |b| {
            b.iter(|| black_box(s.plan_files().unwrap()))
        });
        g.bench_function(format!("plan_arrow_{name}"), |b| {
            b.iter(|| black_box(plan_to_batches(&s, 65536).unwrap()))
        });
    }
    let s = scan(&md, &io, "");
    g.bench_function("plan_stream_none", |b| {
        b.iter(|| {
            let rows: usize = plan_stream(s.clone(), 65536, 4)
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum();
            assert_eq!(rows, files);
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let (md, io) = memory_table();
    bench_table(c, "plan_200k", md, io);
    match pyiceberg_table() {
        Some(path) => {
            let md = TableMetadata::read(&LocalFileIO, path.to_str().unwrap()).unwrap();
            bench_table(c, "plan_pyi10k", Arc::new(md), Arc::new(LocalFileIO));
        }
        None => eprintln!(
            "plan_pyi10k skipped: no .cache/bench/pyi10k (make it with \
             `python benches/plan_compare.py --files 10000 --per-commit 10000`)"
        ),
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
