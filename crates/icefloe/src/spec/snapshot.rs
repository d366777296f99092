//! Snapshots ("Snapshots", "Snapshot Row IDs"), snapshot references ("Snapshot
//! References", "Snapshot Retention Policy") and the snapshot and metadata logs of
//! table metadata, with their JSON forms (Appendix C).

use std::fmt;

use serde_json::{Map, Value};

use super::json::{index, join, kind, Obj};
use crate::error::{Error, Result};

/// The snapshot summary's `operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Only data files were added and no files were removed.
    Append,
    /// Files were added and removed without changing table data (compaction).
    Replace,
    /// Files were added and removed in a logical overwrite.
    Overwrite,
    /// Data files were removed or delete files added.
    Delete,
}

impl Operation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Operation::Append => "append",
            Operation::Replace => "replace",
            Operation::Overwrite => "overwrite",
            Operation::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "append" => Some(Operation::Append),
            "replace" => Some(Operation::Replace),
            "overwrite" => Some(Operation::Overwrite),
            "delete" => Some(Operation::Delete),
            _ => None,
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A snapshot summary: the operation and the other string entries, in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub operation: Operation,
    /// Every entry other than `operation`, in file order.
    pub properties: Vec<(String, String)>,
}

impl Summary {
    pub fn new(operation: Operation) -> Summary {
        Summary {
            operation,
            properties: Vec::new(),
        }
    }

    /// The value of a summary entry other than `operation`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Reads `summary` as Java's `SnapshotParser` does: an empty object is no summary, and
    /// a summary without `operation` is an `overwrite` (Java's default, so that such
    /// snapshots stay readable). An operation outside the spec's four is refused.
    fn from_json(o: &Obj<'_>) -> Result<Option<Summary>> {
        let Some(entries) = o.opt_str_map("summary")? else {
            return Ok(None);
        };
        if entries.is_empty() {
            return Ok(None);
        }
        let path = o.field("summary");
        let mut operation = None;
        let mut properties = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            if k == "operation" {
                operation = Some(Operation::parse(&v).ok_or_else(|| {
                    Error::invalid_metadata(
                        join(&path, "operation"),
                        format!("unknown operation '{v}' (expected append, replace, overwrite or delete)"),
                    )
                })?);
            } else {
                properties.push((k, v));
            }
        }
        Ok(Some(Summary {
            operation: operation.unwrap_or(Operation::Overwrite),
            properties,
        }))
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("operation".into(), self.operation.as_str().into());
        for (k, v) in &self.properties {
            m.insert(k.clone(), v.clone().into());
        }
        Value::Object(m)
    }
}

/// A snapshot of the table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub snapshot_id: i64,
    pub parent_snapshot_id: Option<i64>,
    /// 0 for snapshots of v1 tables (Appendix E).
    pub sequence_number: i64,
    pub timestamp_ms: i64,
    /// The manifest list location; `None` only for old v1 snapshots that embed `manifests`.
    pub manifest_list: Option<String>,
    /// v1 only: manifest locations embedded in the snapshot (when there is no manifest list).
    pub manifests: Option<Vec<String>>,
    /// Optional in v1; written by v2+ writers (always with `operation`).
    pub summary: Option<Summary>,
    pub schema_id: Option<i32>,
    /// v3: the first row id assigned in this snapshot.
    pub first_row_id: Option<i64>,
    /// v3: upper bound of the number of rows with assigned row ids.
    pub added_rows: Option<i64>,
    /// v3: id of the key that encrypts the manifest list key metadata.
    pub key_id: Option<String>,
}

impl Snapshot {
    pub fn operation(&self) -> Option<Operation> {
        self.summary.as_ref().map(|s| s.operation)
    }

    /// Parses a snapshot object.
    ///
    /// `snapshot-id` and `timestamp-ms` are required, and either `manifest-list` or (old v1)
    /// `manifests`. Like the reference implementation, a missing `sequence-number` reads as
    /// 0 and `summary` may be absent in any version: snapshots of tables upgraded from v1
    /// keep those gaps. A `summary` must hold a known `operation`. `first-row-id` and
    /// `added-rows` are optional (snapshots from before a v3 upgrade have none), but
    /// `added-rows` is required when `first-row-id` is set, and neither may be negative.
    pub fn from_json(value: &Value, path: &str) -> Result<Snapshot> {
        let o = Obj::new(value, path)?;
        let snapshot_id = o.req_i64("snapshot-id")?;
        let parent_snapshot_id = o.opt_i64("parent-snapshot-id")?;
        let sequence_number = o.opt_i64("sequence-number")?.unwrap_or(0);
        if sequence_number < 0 {
            return Err(Error::invalid_metadata(
                o.field("sequence-number"),
                format!("must not be negative, found {sequence_number}"),
            ));
        }
        let timestamp_ms = o.req_i64("timestamp-ms")?;
        let manifest_list = o.opt_str("manifest-list")?.map(str::to_string);
        let manifests = if manifest_list.is_some() {
            None
        } else {
            match o.opt_array("manifests")? {
                Some(items) => {
                    let mpath = o.field("manifests");
                    Some(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, v)| {
                                v.as_str().map(str::to_string).ok_or_else(|| {
                                    Error::invalid_metadata(
                                        index(&mpath, i),
                                        format!("expected a string, found {}", kind(v)),
                                    )
                                })
                            })
                            .collect::<Result<Vec<_>>>()?,
                    )
                }
                None => {
                    return Err(Error::invalid_metadata(
                        o.field("manifest-list"),
                        "required field is missing (and there is no v1 'manifests' list)",
                    ))
                }
            }
        };
        let summary = Summary::from_json(&o)?;
        let schema_id = o.opt_i32("schema-id")?;
        let first_row_id = o.opt_i64("first-row-id")?;
        let added_rows = o.opt_i64("added-rows")?;
        if let Some(n) = first_row_id.filter(|n| *n < 0) {
            return Err(Error::invalid_metadata(
                o.field("first-row-id"),
                format!("must not be negative, found {n}"),
            ));
        }
        if let Some(n) = added_rows.filter(|n| *n < 0) {
            return Err(Error::invalid_metadata(
                o.field("added-rows"),
                format!("must not be negative, found {n}"),
            ));
        }
        if first_row_id.is_some() && added_rows.is_none() {
            return Err(Error::invalid_metadata(
                o.field("added-rows"),
                "required when first-row-id is set",
            ));
        }
        let key_id = o.opt_str("key-id")?.map(str::to_string);
        Ok(Snapshot {
            snapshot_id,
            parent_snapshot_id,
            sequence_number,
            timestamp_ms,
            manifest_list,
            manifests,
            summary,
            schema_id,
            first_row_id,
            added_rows,
            key_id,
        })
    }

    /// Writes the snapshot as Java's `SnapshotParser` does: `sequence-number` only when
    /// above 0 (the value a missing one reads as), whatever the format version, so that
    /// neither v1 snapshots nor those a v2+ table kept from its v1 days get one.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if self.sequence_number > 0 {
            m.insert("sequence-number".into(), self.sequence_number.into());
        }
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        if let Some(p) = self.parent_snapshot_id {
            m.insert("parent-snapshot-id".into(), p.into());
        }
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        if let Some(s) = &self.summary {
            m.insert("summary".into(), s.to_json());
        }
        if let Some(l) = &self.manifest_list {
            m.insert("manifest-list".into(), l.clone().into());
        } else {
            let list = self.manifests.clone().unwrap_or_default();
            m.insert("manifests".into(), list.into());
        }
        if let Some(id) = self.schema_id {
            m.insert("schema-id".into(), id.into());
        }
        if let Some(id) = self.first_row_id {
            m.insert("first-row-id".into(), id.into());
        }
        if let Some(n) = self.added_rows {
            m.insert("added-rows".into(), n.into());
        }
        if let Some(k) = &self.key_id {
            m.insert("key-id".into(), k.clone().into());
        }
        Value::Object(m)
    }
}

/// Whether a reference is a branch or a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SnapshotRefType {
    Branch,
    Tag,
}

impl SnapshotRefType {
    pub fn as_str(&self) -> &'static str {
        match self {
            SnapshotRefType::Branch => "branch",
            SnapshotRefType::Tag => "tag",
        }
    }
}

/// The name of the branch that tracks `current-snapshot-id`.
pub const MAIN_BRANCH: &str = "main";

/// A named reference to a snapshot, with its retention policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRef {
    pub snapshot_id: i64,
    pub kind: SnapshotRefType,
    /// Branches only.
    pub min_snapshots_to_keep: Option<i32>,
    /// Branches only.
    pub max_snapshot_age_ms: Option<i64>,
    pub max_ref_age_ms: Option<i64>,
}

impl SnapshotRef {
    /// A branch with no retention settings of its own.
    pub fn branch(snapshot_id: i64) -> SnapshotRef {
        SnapshotRef {
            snapshot_id,
            kind: SnapshotRefType::Branch,
            min_snapshots_to_keep: None,
            max_snapshot_age_ms: None,
            max_ref_age_ms: None,
        }
    }

    /// A tag with no retention settings of its own.
    pub fn tag(snapshot_id: i64) -> SnapshotRef {
        SnapshotRef {
            kind: SnapshotRefType::Tag,
            ..SnapshotRef::branch(snapshot_id)
        }
    }

    pub fn is_branch(&self) -> bool {
        self.kind == SnapshotRefType::Branch
    }

    /// Parses a reference object. The retention settings must be positive, and tags
    /// cannot have `min-snapshots-to-keep` or `max-snapshot-age-ms`.
    pub fn from_json(value: &Value, path: &str) -> Result<SnapshotRef> {
        let o = Obj::new(value, path)?;
        let snapshot_id = o.req_i64("snapshot-id")?;
        let t = o.req_str("type")?;
        let kind = match t.to_ascii_lowercase().as_str() {
            "branch" => SnapshotRefType::Branch,
            "tag" => SnapshotRefType::Tag,
            _ => {
                return Err(Error::invalid_metadata(
                    o.field("type"),
                    format!("unknown reference type '{t}' (expected branch or tag)"),
                ))
            }
        };
        let min_snapshots_to_keep = o.opt_i32("min-snapshots-to-keep")?;
        let max_snapshot_age_ms = o.opt_i64("max-snapshot-age-ms")?;
        let max_ref_age_ms = o.opt_i64("max-ref-age-ms")?;
        let positive = |key: &str, v: Option<i64>| -> Result<()> {
            match v {
                Some(n) if n <= 0 => Err(Error::invalid_metadata(
                    o.field(key),
                    format!("must be positive, found {n}"),
                )),
                _ => Ok(()),
            }
        };
        positive(
            "min-snapshots-to-keep",
            min_snapshots_to_keep.map(i64::from),
        )?;
        positive("max-snapshot-age-ms", max_snapshot_age_ms)?;
        positive("max-ref-age-ms", max_ref_age_ms)?;
        if kind == SnapshotRefType::Tag {
            for (key, set) in [
                ("min-snapshots-to-keep", min_snapshots_to_keep.is_some()),
                ("max-snapshot-age-ms", max_snapshot_age_ms.is_some()),
            ] {
                if set {
                    return Err(Error::invalid_metadata(
                        o.field(key),
                        "only branches can set this",
                    ));
                }
            }
        }
        Ok(SnapshotRef {
            snapshot_id,
            kind,
            min_snapshots_to_keep,
            max_snapshot_age_ms,
            max_ref_age_ms,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        m.insert("type".into(), self.kind.as_str().into());
        if let Some(n) = self.min_snapshots_to_keep {
            m.insert("min-snapshots-to-keep".into(), n.into());
        }
        if let Some(n) = self.max_snapshot_age_ms {
            m.insert("max-snapshot-age-ms".into(), n.into());
        }
        if let Some(n) = self.max_ref_age_ms {
            m.insert("max-ref-age-ms".into(), n.into());
        }
        Value::Object(m)
    }
}

/// An entry of the `snapshot-log`: the current snapshot changed at `timestamp_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLogEntry {
    pub timestamp_ms: i64,
    pub snapshot_id: i64,
}

impl SnapshotLogEntry {
    pub fn from_json(value: &Value, path: &str) -> Result<SnapshotLogEntry> {
        let o = Obj::new(value, path)?;
        Ok(SnapshotLogEntry {
            timestamp_ms: o.req_i64("timestamp-ms")?,
            snapshot_id: o.req_i64("snapshot-id")?,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        Value::Object(m)
    }
}

/// An entry of the `metadata-log`: a previous metadata file and when it was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataLogEntry {
    pub timestamp_ms: i64,
    pub metadata_file: String,
}

impl MetadataLogEntry {
    pub fn from_json(value: &Value, path: &str) -> Result<MetadataLogEntry> {
        let o = Obj::new(value, path)?;
        Ok(MetadataLogEntry {
            timestamp_ms: o.req_i64("timestamp-ms")?,
            metadata_file: o.req_str("metadata-file")?.to_string(),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        m.insert("metadata-file".into(), self.metadata_file.clone().into());
        Value::Object(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_example_snapshot() {
        // Appendix C's example (with the missing comma restored).
        let v = json!({
            "snapshot-id": 3051729675574597004i64,
            "timestamp-ms": 1515100955770i64,
            "summary": {"operation": "append"},
            "manifest-list": "s3://b/wh/.../s1.avro",
            "schema-id": 0
        });
        let s = Snapshot::from_json(&v, "snapshots[0]").unwrap();
        assert_eq!(
            s,
            Snapshot {
                snapshot_id: 3051729675574597004,
                timestamp_ms: 1515100955770,
                summary: Some(Summary::new(Operation::Append)),
                manifest_list: Some("s3://b/wh/.../s1.avro".into()),
                schema_id: Some(0),
                ..Snapshot::default()
            }
        );
        assert_eq!(s.sequence_number, 0);
        assert_eq!(Snapshot::from_json(&s.to_json(), "x").unwrap(), s);
        // Java writes no sequence number 0, in any format version
        assert!(s.to_json().get("sequence-number").is_none());
        let later = Snapshot {
            sequence_number: 7,
            ..s.clone()
        };
        assert_eq!(later.to_json()["sequence-number"], 7);
    }

    #[test]
    fn summary_keeps_entry_order_and_checks_operation() {
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {"z-last": "1", "operation": "overwrite", "added-records": "10", "a": "x"}});
        let s = Snapshot::from_json(&v, "snapshots[3]").unwrap();
        let sum = s.summary.as_ref().unwrap();
        assert_eq!(sum.operation, Operation::Overwrite);
        let keys: Vec<_> = sum.properties.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z-last", "added-records", "a"]);
        assert_eq!(sum.get("added-records"), Some("10"));
        // operation is written first
        let out = s.to_json();
        let keys: Vec<_> = out["summary"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["operation", "z-last", "added-records", "a"]);

        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {"operation": "merge"}});
        let e = Snapshot::from_json(&v, "snapshots[3]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "snapshots[3].summary.operation"
        );
        // Java reads a summary without operation as an overwrite, and an empty one as none
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {"added-records": "1"}});
        let s = Snapshot::from_json(&v, "snapshots[3]").unwrap();
        assert_eq!(s.operation(), Some(Operation::Overwrite));
        assert_eq!(s.summary.as_ref().unwrap().get("added-records"), Some("1"));
        assert_eq!(s.to_json()["summary"]["operation"], "overwrite");
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {}});
        let s = Snapshot::from_json(&v, "snapshots[3]").unwrap();
        assert_eq!(s.summary, None);
        assert!(s.to_json().get("summary").is_none());
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {"operation": "append", "added-records": 1}});
        let e = Snapshot::from_json(&v, "snapshots[3]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "snapshots[3].summary.added-records"
        );
    }

    #[test]
    fn v1_manifests_and_required_fields() {
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifests": ["a.avro", "b.avro"]});
        let s = Snapshot::from_json(&v, "s").unwrap();
        assert_eq!(
            s.manifests,
            Some(vec!["a.avro".to_string(), "b.avro".to_string()])
        );
        assert_eq!(s.manifest_list, None);
        let out = s.to_json();
        assert_eq!(out["manifests"], json!(["a.avro", "b.avro"]));
        assert_eq!(Snapshot::from_json(&out, "s").unwrap(), s);

        for (missing, field) in [
            ("snapshot-id", "s.snapshot-id"),
            ("timestamp-ms", "s.timestamp-ms"),
            ("manifest-list", "s.manifest-list"),
        ] {
            let mut v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m"});
            v.as_object_mut().unwrap().remove(missing);
            let e = Snapshot::from_json(&v, "s").unwrap_err();
            assert_eq!(e.location().unwrap().field, field);
        }
    }

    #[test]
    fn row_lineage_fields() {
        let v = json!({"snapshot-id": 1, "sequence-number": 4, "timestamp-ms": 2, "manifest-list": "m",
            "summary": {"operation": "append"}, "first-row-id": 1000, "added-rows": 375, "key-id": "k1"});
        let s = Snapshot::from_json(&v, "s").unwrap();
        assert_eq!(
            (s.first_row_id, s.added_rows, s.key_id.as_deref()),
            (Some(1000), Some(375), Some("k1"))
        );
        assert_eq!(s.to_json(), v);
        let v =
            json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m", "first-row-id": 5});
        let e = Snapshot::from_json(&v, "s").unwrap_err();
        assert_eq!(e.location().unwrap().field, "s.added-rows");
        let v = json!({"snapshot-id": 1, "timestamp-ms": 2, "manifest-list": "m", "first-row-id": -5, "added-rows": 1});
        assert!(Snapshot::from_json(&v, "s").is_err());
    }

    #[test]
    fn spec_example_refs() {
        let v = json!({"test": {"snapshot-id": 123456789000i64, "type": "tag", "max-ref-age-ms": 10000000}});
        let r = SnapshotRef::from_json(&v["test"], "refs.test").unwrap();
        assert_eq!(
            r,
            SnapshotRef {
                max_ref_age_ms: Some(10000000),
                ..SnapshotRef::tag(123456789000)
            }
        );
        assert_eq!(r.to_json(), v["test"]);
        let b = json!({"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 2,
            "max-snapshot-age-ms": 3, "max-ref-age-ms": 4});
        let r = SnapshotRef::from_json(&b, "refs.b").unwrap();
        assert!(r.is_branch());
        assert_eq!(r.min_snapshots_to_keep, Some(2));
        assert_eq!(r.to_json(), b);
    }

    #[test]
    fn bad_refs() {
        let cases = [
            (json!({"snapshot-id": 1, "type": "label"}), "refs.x.type"),
            (json!({"type": "tag"}), "refs.x.snapshot-id"),
            (json!({"snapshot-id": 1}), "refs.x.type"),
            (
                json!({"snapshot-id": 1, "type": "tag", "min-snapshots-to-keep": 1}),
                "refs.x.min-snapshots-to-keep",
            ),
            (
                json!({"snapshot-id": 1, "type": "branch", "max-ref-age-ms": 0}),
                "refs.x.max-ref-age-ms",
            ),
            (
                json!({"snapshot-id": "1", "type": "branch"}),
                "refs.x.snapshot-id",
            ),
        ];
        for (v, field) in cases {
            let e = SnapshotRef::from_json(&v, "refs.x").unwrap_err();
            assert!(matches!(e, Error::InvalidMetadata { .. }));
            assert_eq!(e.location().unwrap().field, field, "{v}");
        }
    }

    #[test]
    fn log_entries() {
        let v = json!({"timestamp-ms": 5, "snapshot-id": 7});
        let e = SnapshotLogEntry::from_json(&v, "snapshot-log[0]").unwrap();
        assert_eq!(
            e,
            SnapshotLogEntry {
                timestamp_ms: 5,
                snapshot_id: 7
            }
        );
        assert_eq!(e.to_json(), v);
        let v = json!({"timestamp-ms": 5, "metadata-file": "s3://b/v1.json"});
        let m = MetadataLogEntry::from_json(&v, "metadata-log[0]").unwrap();
        assert_eq!(m.metadata_file, "s3://b/v1.json");
        assert_eq!(m.to_json(), v);
        let err = MetadataLogEntry::from_json(&json!({"timestamp-ms": 5}), "metadata-log[2]")
            .unwrap_err();
        assert_eq!(
            err.location().unwrap().field,
            "metadata-log[2].metadata-file"
        );
    }
}
