#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use serde_json::json;

/// id long, data string, ts timestamptz, category string, s struct{x int}, l list<struct{y int}>
fn schema() -> Schema {
    let v = json!({
    "type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"},
        {"id": 2, "name": "data", "required": false, "type": "string"},
        {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
        {"id": 4, "name": "category", "required": false, "type": "string"},
        {"id": 5, "name": "s", "required": false, "type": {
            "type": "struct", "fields": [
                {"id": 6, "name": "x", "required": false, "type": "int"}]}},
        {"id": 7, "name": "l", "required": false, "type": {
            "type": "list", "element-id": 8, "element-required": false, "element": {
                "type": "struct", "fields": [
                    {"id": 9, "name": "y", "required": false, "type": "int"}]}}}]});
    Schema::from_json(&v, "").unwrap()
}

/// category identity (1000), ts day (1001), id bucket[16] "shard" (1002)
fn partitioned() -> PartitionSpec {
    PartitionSpec::new(
        0,
        vec![
            PartitionField::new(4, 1000, "category", Transform::Identity),
            PartitionField::new(3, 1001, "ts_day", Transform::Day),
            PartitionField::new(1, 1002, "shard", Transform::Bucket(16)),
        ],
    )
}

fn update(v: i32, spec: &PartitionSpec) -> UpdatePartitionSpec {
    UpdatePartitionSpec::new(
        v,
        &schema(),
        spec,
        std::slice::from_ref(spec),
        spec.last_assigned_field_id(),
    )
    .unwrap()
}

fn fields(spec: &PartitionSpec) -> Vec<(i32, i32, String, String)> {
    spec.fields
        .iter()
        .map(|f| {
            (
                f.source_id(),
                f.field_id,
                f.name.clone(),
                f.transform.to_string(),
            )
        })
        .collect()
}

fn f(source: i32, id: i32, name: &str, t: &str) -> (i32, i32, String, String) {
    (source, id, name.to_string(), t.to_string())
}

#[test]
fn default_names_and_ids_from_last_partition_id() {
    let mut u = update(2, &PartitionSpec::unpartitioned());
    u.add_identity("category").unwrap();
    u.add_field("id", Transform::Bucket(16), None).unwrap();
    u.add_field("data", Transform::Truncate(4), None).unwrap();
    u.add_field("ts", Transform::Hour, None).unwrap();
    u.add_field("s.x", Transform::Bucket(2), None).unwrap();
    u.add_field("id", Transform::Void, None).unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        fields(&out),
        vec![
            f(4, 1000, "category", "identity"),
            f(1, 1001, "id_bucket_16", "bucket[16]"),
            f(2, 1002, "data_trunc_4", "truncate[4]"),
            f(3, 1003, "ts_hour", "hour"),
            f(6, 1004, "s.x_bucket_2", "bucket[2]"),
            f(1, 1005, "id_null", "void"),
        ]
    );
    assert_eq!(u.last_partition_id(), 1005);
    // ids continue from the table's last-partition-id, not the spec's highest id
    let mut u =
        UpdatePartitionSpec::new(2, &schema(), &partitioned(), &[partitioned()], 1010).unwrap();
    u.add_field("ts", Transform::Year, Some("y")).unwrap();
    assert_eq!(u.apply().unwrap().fields[3].field_id, 1011);
}

#[test]
fn v2_remove_and_rename() {
    let mut u = update(2, &partitioned());
    u.remove_field("ts_day").unwrap();
    u.rename_field("shard", "id_bucket").unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        fields(&out),
        vec![
            f(4, 1000, "category", "identity"),
            f(1, 1002, "id_bucket", "bucket[16]"),
        ]
    );
    assert_eq!(u.last_partition_id(), 1002);
    // remove by term
    let mut u = update(2, &partitioned());
    u.remove_field_by_term("id", Transform::Bucket(16)).unwrap();
    assert_eq!(u.apply().unwrap().fields.len(), 2);
    assert!(u.remove_field_by_term("id", Transform::Bucket(8)).is_err());
}

#[test]
fn v1_removed_fields_become_void_and_make_way_for_new_names() {
    let mut u = update(1, &partitioned());
    u.remove_field("ts_day").unwrap();
    u.add_field("ts", Transform::Hour, None).unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        fields(&out),
        vec![
            f(4, 1000, "category", "identity"),
            f(3, 1001, "ts_day", "void"),
            f(1, 1002, "shard", "bucket[16]"),
            f(3, 1003, "ts_hour", "hour"),
        ]
    );
    // the next update: adding a field with the void field's name renames the void field
    let mut u = update(1, &out);
    u.add_field("ts", Transform::Day, None).unwrap();
    assert_eq!(
        fields(&u.apply().unwrap())[1..],
        [
            f(3, 1001, "ts_day_1001", "void"),
            f(1, 1002, "shard", "bucket[16]"),
            f(3, 1003, "ts_hour", "hour"),
            f(3, 1004, "ts_day", "day"),
        ]
    );
    // removing a field and adding another with its name renames the removed one
    let mut u = update(1, &partitioned());
    u.remove_field("shard").unwrap();
    u.add_field("id", Transform::Bucket(8), Some("shard"))
        .unwrap();
    assert_eq!(
        fields(&u.apply().unwrap())[2..],
        [
            f(1, 1002, "shard_1002", "void"),
            f(1, 1003, "shard", "bucket[8]"),
        ]
    );
}

#[test]
fn v2_reuses_the_id_of_a_field_an_earlier_spec_had() {
    let old = partitioned();
    let current = PartitionSpec::new(
        1,
        vec![PartitionField::new(
            4,
            1000,
            "category",
            Transform::Identity,
        )],
    );
    let mut u = UpdatePartitionSpec::new(
        2,
        &schema(),
        &current,
        &[old.clone(), current.clone()],
        1002,
    )
    .unwrap();
    // same source and transform: the old field comes back whole, name included
    u.add_field("id", Transform::Bucket(16), None).unwrap();
    // a different name does not match, so a new id is taken
    u.add_field("ts", Transform::Day, Some("day_of_ts"))
        .unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        fields(&out),
        vec![
            f(4, 1000, "category", "identity"),
            f(1, 1002, "shard", "bucket[16]"),
            f(3, 1003, "day_of_ts", "day"),
        ]
    );
    assert_eq!(u.last_partition_id(), 1003);
    // v1 never re-uses
    let mut u =
        UpdatePartitionSpec::new(1, &schema(), &current, &[old, current.clone()], 1002).unwrap();
    u.add_field("id", Transform::Bucket(16), None).unwrap();
    assert_eq!(
        fields(&u.apply().unwrap())[1],
        f(1, 1003, "id_bucket_16", "bucket[16]")
    );
}

#[test]
fn remove_then_add_back_keeps_the_field() {
    let mut u = update(2, &partitioned());
    u.remove_field("shard").unwrap();
    u.add_field("id", Transform::Bucket(16), Some("b16"))
        .unwrap();
    assert_eq!(
        fields(&u.apply().unwrap())[2],
        f(1, 1002, "b16", "bucket[16]")
    );
    assert_eq!(u.last_partition_id(), 1002);
}

#[test]
fn refusals() {
    let spec = partitioned();
    // already partitioned that way
    assert!(update(2, &spec).add_identity("category").is_err());
    // two time transforms of one column in one update; the current spec does not count
    let mut u = update(2, &spec);
    u.add_field("ts", Transform::Hour, None).unwrap();
    let e = u.add_field("ts", Transform::Month, None).unwrap_err();
    assert!(e.to_string().contains("redundant"), "{e}");
    // the same field twice
    let mut u = update(2, &PartitionSpec::unpartitioned());
    u.add_field("id", Transform::Bucket(4), None).unwrap();
    assert!(u
        .add_field("id", Transform::Bucket(4), Some("other"))
        .is_err());
    assert!(u
        .add_field("data", Transform::Identity, Some("id_bucket_4"))
        .is_err());
    // a name taken by the current spec
    assert!(update(2, &spec)
        .add_field("data", Transform::Identity, Some("shard"))
        .is_err());
    // a name that is another column's
    let mut u = update(2, &spec);
    u.add_field("id", Transform::Bucket(8), Some("data"))
        .unwrap();
    let e = u.apply().unwrap_err();
    assert!(e.to_string().contains("different field"), "{e}");
    // but a transform may be named after its own column
    let mut u = update(2, &spec);
    u.add_field("id", Transform::Bucket(8), Some("id")).unwrap();
    u.apply().unwrap();
    // unknown columns, unsuitable transforms
    assert!(update(2, &spec).add_identity("nope").is_err());
    assert!(update(2, &spec)
        .add_field("data", Transform::Day, None)
        .is_err());
    // a bare column binds whatever its type; the spec is then refused
    let mut u = update(2, &spec);
    u.add_identity("s").unwrap();
    assert!(u.apply().is_err());
    // a source inside a list binds, but the spec is refused
    let mut u = update(2, &spec);
    u.add_identity("l.y").unwrap();
    assert!(u.apply().is_err());
    // remove or rename what was just added, rename and remove the same field
    let mut u = update(2, &spec);
    u.add_identity("data").unwrap();
    assert!(u.remove_field("data").is_err());
    assert!(u.rename_field("data", "d").is_err());
    assert!(u.remove_field_by_term("data", Transform::Identity).is_err());
    let mut u = update(2, &spec);
    u.rename_field("shard", "s2").unwrap();
    assert!(u.remove_field("shard").is_err());
    let mut u = update(2, &spec);
    u.remove_field("shard").unwrap();
    assert!(u.rename_field("shard", "s2").is_err());
    assert!(update(2, &spec).remove_field("nope").is_err());
    assert!(update(2, &spec).rename_field("nope", "x").is_err());
    // renaming onto another field's name
    let mut u = update(2, &spec);
    u.rename_field("shard", "category").unwrap();
    assert!(u.apply().is_err());
    // a spec with a transform this library does not know cannot be evolved
    let unknown = PartitionSpec::new(
        0,
        vec![PartitionField::new(
            1,
            1000,
            "z",
            Transform::Unknown("zorder".into()),
        )],
    );
    assert!(UpdatePartitionSpec::new(2, &schema(), &unknown, &[], 1000).is_err());
}

#[test]
fn case_insensitive_columns_keep_the_schema_name() {
    let mut u = update(2, &PartitionSpec::unpartitioned());
    assert!(u.add_identity("DATA").is_err());
    u.case_sensitive(false);
    u.add_identity("DATA").unwrap();
    u.add_field("TS", Transform::Day, None).unwrap();
    assert_eq!(
        fields(&u.apply().unwrap()),
        vec![f(2, 1000, "data", "identity"), f(3, 1001, "ts_day", "day")]
    );
}

#[test]
fn a_refused_add_still_uses_up_its_id() {
    // as Java: the id is taken before the name is checked
    let mut u = update(2, &partitioned());
    assert!(u
        .add_field("data", Transform::Identity, Some("shard"))
        .is_err());
    assert_eq!(u.last_partition_id(), 1002);
    u.add_field("data", Transform::Truncate(2), None).unwrap();
    assert_eq!(fields(&u.apply().unwrap())[3].1, 1004);
    assert_eq!(u.last_partition_id(), 1004);
}
