//! `partitions` (Java's `PartitionsTable`): the live data and delete files of a snapshot
//! summed per partition of the unified partition struct.

use std::collections::HashMap;

use super::value::Value;
use crate::error::Result;
use crate::manifest::{DataContentType, ManifestEntry};
use crate::scan::PartitionKey;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::{NestedField, PrimitiveType as P, StructType};
use crate::spec::{Literal, Schema};

pub(crate) fn partitions_schema(partition: &StructType) -> Result<Schema> {
    let mut fields = Vec::new();
    if !partition.fields.is_empty() {
        fields.push(NestedField::required(
            1,
            "partition",
            partition.clone().into(),
        ));
        fields.push(NestedField::required(4, "spec_id", P::Int.into()));
    }
    fields.extend([
        NestedField::required(2, "record_count", P::Long.into())
            .with_doc("Count of records in data files"),
        NestedField::required(3, "file_count", P::Int.into()).with_doc("Count of data files"),
        NestedField::required(11, "total_data_file_size_in_bytes", P::Long.into())
            .with_doc("Total size in bytes of data files"),
        NestedField::required(5, "position_delete_record_count", P::Long.into())
            .with_doc("Count of records in position delete files"),
        NestedField::required(6, "position_delete_file_count", P::Int.into())
            .with_doc("Count of position delete files"),
        NestedField::required(7, "equality_delete_record_count", P::Long.into())
            .with_doc("Count of records in equality delete files"),
        NestedField::required(8, "equality_delete_file_count", P::Int.into())
            .with_doc("Count of equality delete files"),
        NestedField::optional(9, "last_updated_at", P::Timestamptz.into())
            .with_doc("Commit time of snapshot that last updated this partition"),
        NestedField::optional(10, "last_updated_snapshot_id", P::Long.into())
            .with_doc("Id of snapshot that last updated this partition"),
    ]);
    Schema::new(0, fields, Vec::new())
}

/// The sums of one partition (Java's `PartitionsTable.Partition`).
#[derive(Default)]
struct Partition {
    values: Vec<Option<Literal>>,
    spec_id: i32,
    data_records: i64,
    data_files: i32,
    data_bytes: i64,
    pos_records: i64,
    pos_files: i32,
    eq_records: i64,
    eq_files: i32,
    /// Microseconds, as the column.
    last_updated_at: Option<i64>,
    last_updated_snapshot_id: Option<i64>,
}

/// Sums live entries into partitions. A partition is its unified tuple together with how
/// many of the unified fields its spec has (Java compares `StructProjection`s by that count
/// first), so the same values under specs of different widths stay apart.
pub(crate) struct PartitionSums<'a> {
    md: &'a TableMetadata,
    index: HashMap<PartitionKey, usize>,
    partitions: Vec<Partition>,
}

impl<'a> PartitionSums<'a> {
    pub(crate) fn new(md: &'a TableMetadata) -> PartitionSums<'a> {
        PartitionSums {
            md,
            index: HashMap::new(),
            partitions: Vec::new(),
        }
    }

    /// Adds a live entry of a manifest of `spec_id`, with its tuple in the unified struct.
    pub(crate) fn add(
        &mut self,
        e: &ManifestEntry,
        spec_id: i32,
        projected_fields: usize,
        values: Vec<Option<Literal>>,
    ) -> Result<()> {
        let width = i32::try_from(projected_fields).unwrap_or(i32::MAX);
        let key = PartitionKey::new(width, values.clone())?;
        let n = self.partitions.len();
        let i = *self.index.entry(key).or_insert(n);
        if i == n {
            self.partitions.push(Partition {
                values,
                ..Partition::default()
            });
        }
        let Some(p) = self.partitions.get_mut(i) else {
            return Ok(());
        };
        if let Some(s) = e.snapshot_id.and_then(|id| self.md.snapshot_by_id(id)) {
            let at = s.timestamp_ms.saturating_mul(1000);
            if p.last_updated_at.is_none_or(|last| at > last) {
                p.spec_id = spec_id;
                p.last_updated_at = Some(at);
                p.last_updated_snapshot_id = Some(s.snapshot_id);
            }
        }
        let f = &e.data_file;
        match f.content {
            DataContentType::Data => {
                p.data_records += f.record_count;
                p.data_files += 1;
                p.data_bytes += f.file_size_in_bytes;
            }
            DataContentType::PositionDeletes => {
                p.pos_records += f.record_count;
                p.pos_files += 1;
            }
            DataContentType::EqualityDeletes => {
                p.eq_records += f.record_count;
                p.eq_files += 1;
            }
        }
        Ok(())
    }

    pub(crate) fn rows(self, partitioned: bool) -> Vec<Vec<Value>> {
        self.partitions
            .into_iter()
            .map(|p| {
                let mut row = Vec::with_capacity(11);
                if partitioned {
                    row.push(Value::Struct(
                        p.values.into_iter().map(Value::opt_lit).collect(),
                    ));
                    row.push(Value::int(p.spec_id));
                }
                row.extend([
                    Value::long(p.data_records),
                    Value::int(p.data_files),
                    Value::long(p.data_bytes),
                    Value::long(p.pos_records),
                    Value::int(p.pos_files),
                    Value::long(p.eq_records),
                    Value::int(p.eq_files),
                    p.last_updated_at
                        .map_or(Value::Null, |t| Value::Lit(Literal::Timestamptz(t))),
                    Value::opt_long(p.last_updated_snapshot_id),
                ]);
                row
            })
            .collect()
    }
}
