//! Parsing and writing a v2 table metadata JSON with 1,000 snapshots.
//!
//! The metadata is generated here: 3 schemas, 2 partition specs, 2 sort orders,
//! 1,000 snapshots with realistic summaries, a snapshot log, 20 metadata log
//! entries, a main branch plus 10 tags and 2 branches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::spec::table_metadata::TableMetadata;
use serde_json::{json, Value};

const SNAPSHOTS: i64 = 1000;
const BASE_ID: i64 = 4_611_686_018_427_387_904;
const BASE_TS: i64 = 1_700_000_000_000;

fn schema(id: i32, extra: usize) -> Value {
    let mut fields = vec![
        json!({"id": 1, "name": "event_id", "required": true, "type": "long"}),
        json!({"id": 2, "name": "user", "required": false, "type": "string"}),
        json!({"id": 3, "name": "ts", "required": true, "type": "timestamptz"}),
        json!({"id": 4, "name": "amount", "required": false, "type": "decimal(18, 2)"}),
        json!({"id": 5, "name": "location", "required": false, "type": {"type": "struct", "fields": [
            {"id": 6, "name": "lat", "required": false, "type": "double"},
            {"id": 7, "name": "lon", "required": false, "type": "double"}]}}),
        json!({"id": 8, "name": "tags", "required": false, "type": {"type": "list",
            "element-id": 9, "element-required": false, "element": "string"}}),
    ];
    for i in 0..extra {
        fields.push(
            json!({"id": 10 + i, "name": format!("c{i}"), "required": false, "type": "string"}),
        );
    }
    json!({"type": "struct", "schema-id": id, "identifier-field-ids": [1], "fields": fields})
}

fn metadata() -> String {
    let mut snapshots = Vec::new();
    let mut log = Vec::new();
    let mut total_records: i64 = 0;
    let mut total_files: i64 = 0;
    for i in 0..SNAPSHOTS {
        let id = BASE_ID + i;
        let ts = BASE_TS + i * 60_000;
        let op = match i % 10 {
            9 => "overwrite",
            7 => "delete",
            5 => "replace",
            _ => "append",
        };
        let added = 1000 + (i * 37) % 5000;
        total_records += added;
        total_files += 4;
        let mut s = json!({
            "sequence-number": i + 1,
            "snapshot-id": id,
            "timestamp-ms": ts,
            "summary": {
                "operation": op,
                "spark.app.id": format!("local-{}", 1700000000 + i),
                "added-data-files": "4",
                "added-records": added.to_string(),
                "added-files-size": (added * 120).to_string(),
                "changed-partition-count": "2",
                "total-records": total_records.to_string(),
                "total-files-size": (total_records * 120).to_string(),
                "total-data-files": total_files.to_string(),
                "total-delete-files": "0",
                "total-position-deletes": "0",
                "total-equality-deletes": "0",
                "engine-name": "spark",
                "engine-version": "3.5.4"
            },
            "manifest-list": format!("s3://bucket/warehouse/db.db/events/metadata/snap-{id}-1-6b9e1d5c-{i:04}.avro"),
            "schema-id": if i < 300 { 0 } else if i < 700 { 1 } else { 2 }
        });
        if i > 0 {
            s["parent-snapshot-id"] = json!(id - 1);
        }
        snapshots.push(s);
        log.push(json!({"timestamp-ms": ts, "snapshot-id": id}));
    }
    let last = BASE_ID + SNAPSHOTS - 1;
    let mut refs = serde_json::Map::new();
    refs.insert(
        "main".into(),
        json!({"snapshot-id": last, "type": "branch"}),
    );
    for t in 0..10 {
        refs.insert(format!("release-{t}"), json!({"snapshot-id": BASE_ID + t * 100, "type": "tag", "max-ref-age-ms": 31536000000i64}));
    }
    refs.insert("audit".into(), json!({"snapshot-id": last - 3, "type": "branch", "min-snapshots-to-keep": 5, "max-snapshot-age-ms": 86400000}));
    refs.insert(
        "staging".into(),
        json!({"snapshot-id": last - 10, "type": "branch"}),
    );
    let metadata_log: Vec<Value> = (0..20)
        .map(|i| json!({"timestamp-ms": BASE_TS + i * 1000, "metadata-file": format!("s3://bucket/warehouse/db.db/events/metadata/{i:05}-0f3c.metadata.json")}))
        .collect();
    json!({
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://bucket/warehouse/db.db/events",
        "last-sequence-number": SNAPSHOTS,
        "last-updated-ms": BASE_TS + SNAPSHOTS * 60_000,
        "last-column-id": 12,
        "current-schema-id": 2,
        "schemas": [schema(0, 0), schema(1, 1), schema(2, 3)],
        "default-spec-id": 1,
        "partition-specs": [
            {"spec-id": 0, "fields": [{"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1000}]},
            {"spec-id": 1, "fields": [
                {"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1000},
                {"name": "user_bucket", "transform": "bucket[16]", "source-id": 2, "field-id": 1001}]}
        ],
        "last-partition-id": 1001,
        "default-sort-order-id": 1,
        "sort-orders": [
            {"order-id": 0, "fields": []},
            {"order-id": 1, "fields": [{"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}]}
        ],
        "properties": {"owner": "analytics", "write.format.default": "parquet", "commit.retry.num-retries": "4"},
        "current-snapshot-id": last,
        "refs": refs,
        "snapshots": snapshots,
        "snapshot-log": log,
        "metadata-log": metadata_log
    })
    .to_string()
}

fn bench(c: &mut Criterion) {
    let text = metadata();
    let parsed = TableMetadata::from_json_str(&text).expect("generated metadata parses");
    assert_eq!(parsed.snapshots.len(), SNAPSHOTS as usize);

    let mut g = c.benchmark_group("metadata_v2_1000_snapshots");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| TableMetadata::from_json_str(black_box(&text)).unwrap())
    });
    g.bench_function("write_compact", |b| {
        b.iter(|| black_box(&parsed).to_json_string(false))
    });
    g.bench_function("write_pretty", |b| {
        b.iter(|| black_box(&parsed).to_json_string(true))
    });
    g.finish();
    c.bench_function("metadata_v2_1000_snapshots/ancestors_of_current", |b| {
        b.iter(|| {
            black_box(&parsed)
                .ancestors_of(BASE_ID + SNAPSHOTS - 1)
                .len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
