//! Tests of updates, requirements and the metadata builder.

use std::sync::Arc;

use serde_json::json;

use super::builder::MetadataBuilder;
use super::update::{check_requirements, TableRequirement, TableUpdate};
use crate::catalog::TableState;
use crate::error::Error;
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::schema::Schema;
use crate::spec::snapshot::{Operation, Snapshot, SnapshotRef, Summary};
use crate::spec::sort::{NullOrder, SortDirection, SortField, SortOrder};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::transform::Transform;
use crate::spec::types::{NestedField, PrimitiveType, Type};

fn schema() -> Schema {
    // ids deliberately not 1..n: a new table renumbers them
    Schema::new(
        0,
        vec![
            NestedField::required(10, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(20, "ts", Type::Primitive(PrimitiveType::Timestamp)),
            NestedField::optional(30, "cat", Type::Primitive(PrimitiveType::String)),
        ],
        vec![],
    )
    .unwrap()
}

fn spec() -> PartitionSpec {
    PartitionSpec::new(
        7,
        vec![
            PartitionField::new(20, 5000, "ts_day", Transform::Day),
            PartitionField::new(30, 5001, "cat_bucket", Transform::Bucket(4)),
        ],
    )
}

fn order() -> SortOrder {
    SortOrder::new(
        9,
        vec![SortField::new(
            10,
            Transform::Identity,
            SortDirection::Asc,
            NullOrder::NullsFirst,
        )],
    )
    .unwrap()
}

fn new_table(v: Option<i32>) -> TableMetadata {
    MetadataBuilder::new_table(
        &schema(),
        &spec(),
        &order(),
        "file:///w/t",
        &[
            ("k".into(), "v".into()),
            ("format-version".into(), "1".into()),
        ],
        v,
    )
    .unwrap()
    .build()
    .unwrap()
}

fn state(md: TableMetadata, loc: &str) -> TableState {
    TableState {
        metadata_location: loc.to_string(),
        metadata: Arc::new(md),
    }
}

fn snapshot(md: &TableMetadata, id: i64, rows: i64) -> Snapshot {
    Snapshot {
        snapshot_id: id,
        parent_snapshot_id: md.current_snapshot_id,
        sequence_number: if md.format_version >= 2 {
            md.last_sequence_number + 1
        } else {
            0
        },
        timestamp_ms: 1000 + id,
        manifest_list: Some(format!("file:///w/t/metadata/snap-{id}.avro")),
        summary: Some(Summary::new(Operation::Append)),
        schema_id: Some(md.current_schema_id),
        first_row_id: (md.format_version >= 3).then_some(md.next_row_id),
        added_rows: (md.format_version >= 3).then_some(rows),
        ..Snapshot::default()
    }
}

fn append(md: &TableMetadata, loc: &str, id: i64, rows: i64) -> TableMetadata {
    let mut b = MetadataBuilder::from_state(&state(md.clone(), loc));
    b.apply(TableUpdate::AddSnapshot {
        snapshot: snapshot(md, id, rows),
    })
    .unwrap();
    b.set_branch_snapshot(id, "main").unwrap();
    b.build().unwrap()
}

#[test]
fn new_table_assigns_fresh_ids_and_defaults() {
    let md = new_table(None);
    // the format-version property wins when no version is passed, and is not stored
    assert_eq!(md.format_version, 1);
    assert!(md.property("format-version").is_none());
    assert_eq!(md.property("k"), Some("v"));
    assert_eq!(md.property("write.parquet.compression-codec"), Some("zstd"));

    let md = MetadataBuilder::new_table(&schema(), &spec(), &order(), "file:///w/t", &[], None)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(md.format_version, 3);
    assert_eq!(md.last_column_id, 3);
    let s = md.current_schema().unwrap();
    assert_eq!(s.schema_id(), 0);
    assert_eq!(s.id_by_name("ts", true), Some(2));
    let spec = md.default_spec().unwrap();
    assert_eq!(spec.spec_id, 0);
    let ids: Vec<(i32, i32)> = spec
        .fields
        .iter()
        .map(|f| (f.source_id(), f.field_id))
        .collect();
    assert_eq!(ids, vec![(2, 1000), (3, 1001)]);
    assert_eq!(md.last_partition_id, 1001);
    assert_eq!(md.default_sort_order_id, 1);
    assert_eq!(md.default_sort_order().unwrap().fields[0].source_id(), 1);
    assert_eq!(md.current_snapshot_id, None);
    assert!(md.metadata_log.is_empty());
    assert!(md.table_uuid.is_some());
    assert_eq!(md.next_row_id, 0);
    // it is valid metadata: it round-trips through JSON
    assert_eq!(
        TableMetadata::from_json_value(&md.to_json_value()).unwrap(),
        md
    );
}

#[test]
fn unpartitioned_unsorted_new_table() {
    let md = MetadataBuilder::new_table(
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        "s3://b/t",
        &[],
        Some(2),
    )
    .unwrap()
    .build()
    .unwrap();
    assert_eq!(md.last_partition_id, 999);
    assert_eq!(md.default_sort_order_id, 0);
    assert_eq!(md.sort_orders.len(), 1);
}

#[test]
fn snapshots_advance_sequence_numbers_row_ids_and_logs() {
    let md = new_table(Some(3));
    let md1 = append(&md, "m/v1.json", 11, 5);
    assert_eq!(md1.last_sequence_number, 1);
    assert_eq!(md1.next_row_id, 5);
    assert_eq!(md1.current_snapshot_id, Some(11));
    assert_eq!(md1.snapshot_log.len(), 1);
    assert_eq!(md1.snapshot_log[0].timestamp_ms, 1011);
    assert_eq!(md1.metadata_log.len(), 1);
    assert_eq!(md1.metadata_log[0].metadata_file, "m/v1.json");
    assert_eq!(md1.metadata_log[0].timestamp_ms, md.last_updated_ms);
    let md2 = append(&md1, "m/v2.json", 12, 7);
    assert_eq!(md2.snapshot_by_id(12).unwrap().first_row_id, Some(5));
    assert_eq!(md2.next_row_id, 12);
    assert_eq!(md2.last_sequence_number, 2);
    assert_eq!(md2.metadata_log.len(), 2);

    // a snapshot built on an old base is behind: CommitFailed, so the writer retries
    let mut b = MetadataBuilder::from_state(&state(md2.clone(), "m/v3.json"));
    let stale = snapshot(&md1, 13, 1);
    let e = b
        .apply(TableUpdate::AddSnapshot { snapshot: stale })
        .unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");
    // a v3 snapshot needs a first row id
    let mut no_row_id = snapshot(&md2, 13, 1);
    no_row_id.first_row_id = None;
    let e = b
        .apply(TableUpdate::AddSnapshot {
            snapshot: no_row_id,
        })
        .unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e}");
}

#[test]
fn metadata_log_is_trimmed_to_previous_versions_max() {
    let mut md = new_table(Some(2));
    let mut b = MetadataBuilder::from_state(&state(md.clone(), "m/v0.json"));
    b.apply(TableUpdate::SetProperties {
        updates: vec![("write.metadata.previous-versions-max".into(), "2".into())],
    })
    .unwrap();
    md = b.build().unwrap();
    for i in 1..5 {
        md = append(&md, &format!("m/v{i}.json"), 100 + i, 1);
    }
    let files: Vec<&str> = md
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.as_str())
        .collect();
    assert_eq!(files, vec!["m/v3.json", "m/v4.json"]);
}

#[test]
fn intermediate_snapshots_leave_the_snapshot_log() {
    let md = new_table(Some(2));
    let mut b = MetadataBuilder::from_state(&state(md.clone(), "m/v1.json"));
    let s1 = snapshot(&md, 1, 1);
    b.apply(TableUpdate::AddSnapshot { snapshot: s1 }).unwrap();
    b.set_branch_snapshot(1, "main").unwrap();
    let s2 = snapshot(b.current(), 2, 1);
    b.apply(TableUpdate::AddSnapshot { snapshot: s2 }).unwrap();
    b.set_branch_snapshot(2, "main").unwrap();
    let out = b.build().unwrap();
    let ids: Vec<i64> = out.snapshot_log.iter().map(|e| e.snapshot_id).collect();
    assert_eq!(ids, vec![2]);
    assert_eq!(out.snapshots.len(), 2);
    assert_eq!(out.last_sequence_number, 2);
}

#[test]
fn ids_reuse_and_last_added() {
    let md = new_table(Some(2));
    let mut b = MetadataBuilder::from_state(&state(md.clone(), "m/v1.json"));
    // the same schema again is the existing one; -1 then means "none added": error
    b.apply(TableUpdate::AddSchema {
        schema: md.current_schema().unwrap().with_schema_id(5),
        last_column_id: None,
    })
    .unwrap();
    assert!(!b.has_changes());
    let e = b
        .apply(TableUpdate::SetCurrentSchema { schema_id: -1 })
        .unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }));
    // a new schema gets the next id, -1 selects it
    let mut fields = md.current_schema().unwrap().fields().to_vec();
    fields.push(NestedField::optional(
        4,
        "x",
        Type::Primitive(PrimitiveType::Int),
    ));
    b.apply(TableUpdate::AddSchema {
        schema: Schema::new(0, fields, vec![]).unwrap(),
        last_column_id: Some(4),
    })
    .unwrap();
    b.apply(TableUpdate::SetCurrentSchema { schema_id: -1 })
        .unwrap();
    assert_eq!(b.current().current_schema_id, 1);
    assert_eq!(b.current().last_column_id, 4);
    // a spec equal to the default is reused; a new one gets id 1 and keeps its field ids
    b.apply(TableUpdate::AddSpec {
        spec: md.default_spec().unwrap().clone(),
    })
    .unwrap();
    assert_eq!(b.current().partition_specs.len(), 1);
    b.apply(TableUpdate::AddSpec {
        spec: PartitionSpec::new(
            0,
            vec![PartitionField::new(4, 1002, "x", Transform::Identity)],
        ),
    })
    .unwrap();
    b.apply(TableUpdate::SetDefaultSpec { spec_id: -1 })
        .unwrap();
    assert_eq!(b.current().default_spec_id, 1);
    assert_eq!(b.current().last_partition_id, 1002);
    // unknown ids are errors, and so is a downgrade
    assert!(matches!(
        b.apply(TableUpdate::SetDefaultSortOrder { sort_order_id: 42 }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        b.apply(TableUpdate::UpgradeFormatVersion { format_version: 1 }),
        Err(Error::InvalidArgument { .. })
    ));
    // 4 is written since v4 commits were built (docs/v4.md); 5 is above every version
    assert!(matches!(
        b.apply(TableUpdate::UpgradeFormatVersion { format_version: 5 }),
        Err(Error::Unsupported { .. })
    ));
    b.apply(TableUpdate::UpgradeFormatVersion { format_version: 3 })
        .unwrap();
    let out = b.build().unwrap();
    assert_eq!(out.format_version, 3);
    TableMetadata::from_json_value(&out.to_json_value()).unwrap();
}

#[test]
fn upgrade_1_to_2_to_3() {
    let v1 = new_table(Some(1));
    let v1 = append(&v1, "m/v1.json", 1, 1);
    assert_eq!(v1.last_sequence_number, 0);
    let mut b = MetadataBuilder::from_state(&state(v1, "m/v2.json"));
    b.apply(TableUpdate::UpgradeFormatVersion { format_version: 2 })
        .unwrap();
    let v2 = b.build().unwrap();
    let v2 = append(&v2, "m/v3.json", 2, 1);
    assert_eq!(v2.snapshot_by_id(2).unwrap().sequence_number, 1);
    let mut b = MetadataBuilder::from_state(&state(v2, "m/v4.json"));
    b.apply(TableUpdate::UpgradeFormatVersion { format_version: 3 })
        .unwrap();
    let v3 = b.build().unwrap();
    assert_eq!(v3.next_row_id, 0);
    let v3 = append(&v3, "m/v5.json", 3, 10);
    assert_eq!(v3.next_row_id, 10);
    let text = v3.to_json_string(true);
    assert_eq!(TableMetadata::from_json_str(&text).unwrap(), v3);
}

#[test]
fn replacement_keeps_history_and_ids() {
    let md = new_table(Some(2));
    let md = append(&md, "m/v1.json", 1, 1);
    let cur = md.current_schema().unwrap().clone();
    // new schema: keeps "cat" and "id", adds "extra"
    let new_schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "extra", Type::Primitive(PrimitiveType::Int)),
            NestedField::optional(2, "cat", Type::Primitive(PrimitiveType::String)),
            NestedField::required(3, "id", Type::Primitive(PrimitiveType::Long)),
        ],
        vec![],
    )
    .unwrap();
    let new_spec = PartitionSpec::new(
        0,
        vec![
            PartitionField::new(2, 1000, "cat_bucket", Transform::Bucket(4)),
            PartitionField::new(3, 1001, "id_b", Transform::Bucket(8)),
        ],
    );
    let out = MetadataBuilder::replace(
        &state(md.clone(), "m/v2.json"),
        &new_schema,
        &new_spec,
        &SortOrder::unsorted(),
        &md.location,
        &[],
        None,
    )
    .unwrap()
    .build()
    .unwrap();
    let s = out.current_schema().unwrap();
    assert_eq!(s.id_by_name("cat", true), cur.id_by_name("cat", true));
    assert_eq!(s.id_by_name("id", true), cur.id_by_name("id", true));
    assert_eq!(s.id_by_name("extra", true), Some(4));
    assert_eq!(out.current_schema_id, 1);
    let spec = out.default_spec().unwrap();
    // cat bucket[4] keeps 1001; the new field gets the next id after last-partition-id
    let ids: Vec<i32> = spec.fields.iter().map(|f| f.field_id).collect();
    assert_eq!(ids, vec![1001, 1002]);
    assert_eq!(out.current_snapshot_id, None);
    assert_eq!(out.snapshots.len(), 1);
    assert!(out.snapshot_ref("main").is_none());
    assert_eq!(out.snapshot_log.len(), 1);
    assert_eq!(out.default_sort_order_id, 0);
    TableMetadata::from_json_value(&out.to_json_value()).unwrap();
}

#[test]
fn updates_round_trip_through_rest_json() {
    let md = new_table(Some(3));
    let s = snapshot(&md, 5, 3);
    let updates = vec![
        TableUpdate::AssignUuid { uuid: "a-b".into() },
        TableUpdate::UpgradeFormatVersion { format_version: 3 },
        TableUpdate::AddSchema {
            schema: md.current_schema().unwrap().clone(),
            last_column_id: Some(3),
        },
        TableUpdate::SetCurrentSchema { schema_id: -1 },
        TableUpdate::AddSpec {
            spec: md.default_spec().unwrap().clone(),
        },
        TableUpdate::SetDefaultSpec { spec_id: -1 },
        TableUpdate::AddSortOrder {
            sort_order: md.default_sort_order().unwrap().clone(),
        },
        TableUpdate::SetDefaultSortOrder { sort_order_id: -1 },
        TableUpdate::AddSnapshot { snapshot: s },
        TableUpdate::SetSnapshotRef {
            ref_name: "b".into(),
            reference: SnapshotRef {
                max_ref_age_ms: Some(5),
                ..SnapshotRef::branch(5)
            },
        },
        TableUpdate::RemoveSnapshots {
            snapshot_ids: vec![1, 2],
        },
        TableUpdate::RemoveSnapshotRef {
            ref_name: "b".into(),
        },
        TableUpdate::SetLocation {
            location: "x".into(),
        },
        TableUpdate::SetProperties {
            updates: vec![("a".into(), "1".into())],
        },
        TableUpdate::RemoveProperties {
            removals: vec!["a".into()],
        },
        TableUpdate::RemoveStatistics { snapshot_id: 3 },
    ];
    for u in updates {
        let j = u.to_json();
        assert_eq!(j["action"], u.action());
        assert_eq!(TableUpdate::from_json(&j, "", 3).unwrap(), u, "{j}");
    }
    let j = json!({"action": "set-properties", "updated": {"a": "b"}});
    assert_eq!(
        TableUpdate::from_json(&j, "", 2).unwrap(),
        TableUpdate::SetProperties {
            updates: vec![("a".into(), "b".into())]
        }
    );
    let e = TableUpdate::from_json(&json!({"action": "frobnicate"}), "updates[0]", 2).unwrap_err();
    assert_eq!(e.location().unwrap().field, "updates[0].action");
}

#[test]
fn requirements_check_against_the_base() {
    let md = new_table(Some(2));
    let md = append(&md, "m/v1.json", 1, 1);
    let uuid = md.table_uuid.clone().unwrap();
    let ok = vec![
        TableRequirement::AssertTableUuid {
            uuid: uuid.to_uppercase(),
        },
        TableRequirement::AssertRefSnapshotId {
            ref_name: "main".into(),
            snapshot_id: Some(1),
        },
        TableRequirement::AssertRefSnapshotId {
            ref_name: "dev".into(),
            snapshot_id: None,
        },
        TableRequirement::AssertLastAssignedFieldId {
            last_assigned_field_id: 3,
        },
        TableRequirement::AssertCurrentSchemaId {
            current_schema_id: 0,
        },
        TableRequirement::AssertLastAssignedPartitionId {
            last_assigned_partition_id: 1001,
        },
        TableRequirement::AssertDefaultSpecId { default_spec_id: 0 },
        TableRequirement::AssertDefaultSortOrderId {
            default_sort_order_id: 1,
        },
    ];
    check_requirements(&ok, Some(&md)).unwrap();
    for r in &ok {
        assert_eq!(&TableRequirement::from_json(&r.to_json(), "").unwrap(), r);
    }
    let bad = vec![
        TableRequirement::AssertCreate,
        TableRequirement::AssertTableUuid { uuid: "x".into() },
        TableRequirement::AssertRefSnapshotId {
            ref_name: "main".into(),
            snapshot_id: Some(2),
        },
        TableRequirement::AssertRefSnapshotId {
            ref_name: "main".into(),
            snapshot_id: None,
        },
        TableRequirement::AssertRefSnapshotId {
            ref_name: "dev".into(),
            snapshot_id: Some(1),
        },
        TableRequirement::AssertLastAssignedFieldId {
            last_assigned_field_id: 4,
        },
        TableRequirement::AssertCurrentSchemaId {
            current_schema_id: 1,
        },
        TableRequirement::AssertLastAssignedPartitionId {
            last_assigned_partition_id: 1,
        },
        TableRequirement::AssertDefaultSpecId { default_spec_id: 1 },
        TableRequirement::AssertDefaultSortOrderId {
            default_sort_order_id: 0,
        },
    ];
    for r in bad {
        let e = r.check(Some(&md)).unwrap_err();
        assert!(matches!(e, Error::CommitFailed { .. }), "{r:?}: {e}");
    }
    TableRequirement::AssertCreate.check(None).unwrap();
    assert!(TableRequirement::AssertCurrentSchemaId {
        current_schema_id: 0
    }
    .check(None)
    .is_err());
}
