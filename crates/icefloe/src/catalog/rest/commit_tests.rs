#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use super::*;
use crate::commit::MetadataBuilder;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::snapshot::{Operation, Snapshot, Summary};
use crate::spec::sort::SortOrder;

fn ident() -> TableIdent {
    TableIdent::new(vec!["db".to_string()], "t")
}

fn schema(extra: bool) -> Schema {
    let mut fields =
        vec![serde_json::json!({"id": 1, "name": "id", "required": true, "type": "long"})];
    if extra {
        fields.push(serde_json::json!({"id": 2, "name": "x", "required": false, "type": "string"}));
    }
    Schema::from_json(
        &serde_json::json!({"type": "struct", "schema-id": 0, "fields": fields}),
        "",
    )
    .unwrap()
}

fn new_table(format_version: i32) -> TableMetadata {
    MetadataBuilder::new_table(
        &schema(false),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        "file:///w/db/t",
        &[
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ],
        Some(format_version),
    )
    .unwrap()
    .build()
    .unwrap()
}

fn snapshot(md: &TableMetadata, id: i64) -> Snapshot {
    Snapshot {
        snapshot_id: id,
        parent_snapshot_id: md.current_snapshot_id,
        sequence_number: md.last_sequence_number + 1,
        timestamp_ms: 1000 + id,
        manifest_list: Some(format!("file:///w/db/t/metadata/snap-{id}.avro")),
        summary: Some(Summary::new(Operation::Append)),
        schema_id: Some(md.current_schema_id),
        first_row_id: (md.format_version >= 3).then_some(md.next_row_id),
        added_rows: (md.format_version >= 3).then_some(5),
        ..Snapshot::default()
    }
}

/// `base` with `updates` applied by icefloe's own builder (what a server does).
fn apply(base: &TableMetadata, updates: &[TableUpdate]) -> TableMetadata {
    let mut b = MetadataBuilder::from_metadata(Arc::new(base.clone()), None);
    b.apply_all(updates.iter().cloned()).unwrap();
    b.build().unwrap()
}

/// The parts of metadata a commit decides (not the logs and timestamps a server derives).
fn decided(md: &TableMetadata) -> serde_json::Value {
    let mut v = md.to_json_value();
    let m = v.as_object_mut().unwrap();
    for k in ["last-updated-ms", "metadata-log", "snapshot-log"] {
        m.remove(k);
    }
    v
}

#[test]
fn a_create_sends_the_whole_table_with_assert_create() {
    let md = new_table(2);
    let c = CommitRequest::for_create(&ident(), &md).unwrap();
    assert_eq!(c.requirements, vec![TableRequirement::AssertCreate]);
    let actions: Vec<&str> = c.updates.iter().map(TableUpdate::action).collect();
    assert_eq!(
        actions,
        vec![
            "assign-uuid",
            "upgrade-format-version",
            "add-schema",
            "set-current-schema",
            "add-spec",
            "set-default-spec",
            "add-sort-order",
            "set-default-sort-order",
            "set-location",
            "set-properties",
        ]
    );
    // "the one added last", as Java sends it
    assert!(c.updates.contains(&TableUpdate::SetCurrentSchema {
        schema_id: LAST_ADDED
    }));
    let body = c.to_json(&ident());
    assert_eq!(body["identifier"]["namespace"], serde_json::json!(["db"]));
    assert_eq!(body["requirements"][0]["type"], "assert-create");
    assert_eq!(body["updates"][1]["format-version"], 2);
}

#[test]
fn an_update_is_the_difference_and_applies_back_to_the_same_table() {
    for version in [1, 2, 3] {
        let base = new_table(version);
        // a new schema, properties set and removed, a snapshot on main, a tag, a new location
        let mut b = MetadataBuilder::from_metadata(Arc::new(base.clone()), None);
        b.apply(TableUpdate::AddSchema {
            schema: schema(true),
            last_column_id: None,
        })
        .unwrap();
        b.apply(TableUpdate::SetCurrentSchema {
            schema_id: LAST_ADDED,
        })
        .unwrap();
        b.apply(TableUpdate::SetProperties {
            updates: vec![("b".into(), "3".into()), ("c".into(), "4".into())],
        })
        .unwrap();
        b.apply(TableUpdate::RemoveProperties {
            removals: vec!["a".into()],
        })
        .unwrap();
        let snap = snapshot(b.current(), 42);
        b.apply(TableUpdate::AddSnapshot { snapshot: snap })
            .unwrap();
        b.set_branch_snapshot(42, "main").unwrap();
        b.apply(TableUpdate::SetLocation {
            location: "file:///w/db/t2".into(),
        })
        .unwrap();
        let new = b.build().unwrap();

        let c = CommitRequest::for_update(&ident(), &base, &new).unwrap();
        assert_eq!(
            decided(&apply(&base, &c.updates)),
            decided(&new),
            "v{version}"
        );
        assert!(c.requirements.contains(&TableRequirement::AssertTableUuid {
            uuid: base.table_uuid.clone().unwrap()
        }));
        assert!(c
            .requirements
            .contains(&TableRequirement::AssertRefSnapshotId {
                ref_name: "main".into(),
                snapshot_id: None
            }));
        assert!(c
            .requirements
            .contains(&TableRequirement::AssertCurrentSchemaId {
                current_schema_id: base.current_schema_id
            }));
        assert!(c
            .requirements
            .contains(&TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: base.last_column_id
            }));
        // the requirements hold on the base, and fail once main has moved
        crate::commit::update::check_requirements(&c.requirements, Some(&base)).unwrap();
        assert!(crate::commit::update::check_requirements(&c.requirements, Some(&new)).is_err());

        // the next commit (a second snapshot, then the first expired) diffs from `new`
        let mut b = MetadataBuilder::from_metadata(Arc::new(new.clone()), None);
        let snap = snapshot(b.current(), 43);
        b.apply(TableUpdate::AddSnapshot { snapshot: snap })
            .unwrap();
        b.set_branch_snapshot(43, "main").unwrap();
        let newer = b.build().unwrap();
        let c = CommitRequest::for_update(&ident(), &new, &newer).unwrap();
        let actions: Vec<&str> = c.updates.iter().map(TableUpdate::action).collect();
        assert_eq!(
            actions,
            vec!["add-snapshot", "set-snapshot-ref"],
            "v{version}"
        );
        assert!(c
            .requirements
            .contains(&TableRequirement::AssertRefSnapshotId {
                ref_name: "main".into(),
                snapshot_id: Some(42)
            }));
        assert_eq!(decided(&apply(&new, &c.updates)), decided(&newer));
    }
}

#[test]
fn nothing_changed_is_no_update() {
    let base = new_table(2);
    let c = CommitRequest::for_update(&ident(), &base, &base).unwrap();
    assert!(c.updates.is_empty());
}

#[test]
fn changes_the_spec_cannot_express_are_refused_not_dropped() {
    let base = new_table(2);
    let refuse = |new: TableMetadata, what: &str| {
        let e = CommitRequest::for_update(&ident(), &base, &new).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains(what), "{e}");
        assert!(e.to_string().contains("db.t"), "{e}");
    };
    let mut m = base.clone();
    m.table_uuid = Some("00000000-0000-0000-0000-000000000000".into());
    refuse(m, "uuid");
    let mut m = base.clone();
    m.format_version = 1;
    refuse(m, "downgrade");
    let mut m = base.clone();
    m.schemas[0] = schema(true);
    refuse(m, "schema 0");
    let mut m = base.clone();
    m.current_snapshot_id = Some(7);
    refuse(m, "main");
    let mut m = base.clone();
    m.sort_orders.clear();
    m.default_sort_order_id = 0;
    refuse(m, "sort order 0");
}
