//! The bench manifest shared by `manifest.rs` (criterion) and `manifest_best.rs` (best of
//! N): 10,000 entries with full column metrics (sizes, value, null and NaN counts, lower
//! and upper bounds) for 4 columns, partitioned by day(ts), written by our own writer.

use icefloe::manifest::{
    Codec, DataContentType, DataFile, FileFormat, ManifestContent, ManifestProjection,
    ManifestWriter,
};
use icefloe::spec::partition::{PartitionField, PartitionSpec};
use icefloe::spec::{Literal, NestedField, PrimitiveType, Schema, Transform, Type};

pub const ENTRIES: i64 = 10_000;

pub fn manifest(codec: Codec) -> Vec<u8> {
    let p = |id, name: &str, t| NestedField::optional(id, name, Type::Primitive(t));
    let schema = Schema::new(
        0,
        vec![
            p(1, "ts", PrimitiveType::Timestamptz),
            p(2, "id", PrimitiveType::Long),
            p(3, "data", PrimitiveType::String),
            p(4, "amount", PrimitiveType::Double),
        ],
        vec![],
    )
    .unwrap();
    let spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(1, 1000, "ts_day", Transform::Day)],
    );
    let mut w = ManifestWriter::new(2, ManifestContent::Data, &schema, &spec, 1, codec).unwrap();
    for i in 0..ENTRIES {
        let mut df = DataFile::new(
            DataContentType::Data,
            format!("s3://bucket/warehouse/db/table/data/ts_day=2024-01-{:02}/00000-{i}-3f9a1c2e-8d4b-4e0a-9a51-7c2d9b8e6f10-00001.parquet", i % 28 + 1),
            FileFormat::Parquet,
            vec![Some(Literal::Int(19_700 + (i % 28) as i32))],
            100_000 + i,
            64 * 1024 * 1024 + i,
        );
        let ids = [1, 2, 3, 4];
        df.column_sizes = Some(ids.iter().map(|c| (*c, 1_000_000 + i)).collect());
        df.value_counts = Some(ids.iter().map(|c| (*c, 100_000 + i)).collect());
        df.null_value_counts = Some(ids.iter().map(|c| (*c, i % 7)).collect());
        df.nan_value_counts = Some(vec![(4, 0)]);
        let ts = 1_700_000_000_000_000i64 + i * 1_000_000;
        df.lower_bounds = Some(vec![
            (1, ts.to_le_bytes().to_vec()),
            (2, i.to_le_bytes().to_vec()),
            (3, b"aaaaaaaaaaaaaaaa".to_vec()),
            (4, 0.5f64.to_le_bytes().to_vec()),
        ]);
        df.upper_bounds = Some(vec![
            (1, (ts + 86_400_000_000).to_le_bytes().to_vec()),
            (2, (i + 100_000).to_le_bytes().to_vec()),
            (3, b"zzzzzzzzzzzzzzzz".to_vec()),
            (4, 1e9f64.to_le_bytes().to_vec()),
        ]);
        df.split_offsets = Some(vec![4, 32 * 1024 * 1024]);
        df.sort_order_id = Some(0);
        w.add(df).unwrap();
    }
    w.finish_to_bytes("bench.avro").unwrap().0
}

/// The fields the manifests issue names for its scan target: path, format, partition,
/// record count, sizes and the filtered column's bounds (the planner's `scan` also keeps
/// that column's counts and the split offsets).
pub fn named_options() -> ManifestProjection {
    ManifestProjection {
        bounds_for: Some(vec![1]),
        ..ManifestProjection::minimal()
    }
}
