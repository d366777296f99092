//! Table statistics files ("Table Statistics") and partition statistics files
//! ("Partition Statistics") as listed in table metadata, with their JSON forms.

use serde_json::{Map, Value};

use super::json::{index, Obj};
use crate::error::Result;

/// Metadata of one blob of a Puffin statistics file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMetadata {
    /// The blob type, e.g. `apache-datasketches-theta-v1`.
    pub blob_type: String,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    /// Field ids the statistic was computed on, in order.
    pub fields: Vec<i32>,
    pub properties: Vec<(String, String)>,
}

impl BlobMetadata {
    pub fn from_json(value: &Value, path: &str) -> Result<BlobMetadata> {
        let o = Obj::new(value, path)?;
        let blob_type = o.req_str("type")?.to_string();
        let snapshot_id = o.req_i64("snapshot-id")?;
        let sequence_number = o.req_i64("sequence-number")?;
        o.req("fields")?;
        let fields = o.opt_i32_list("fields")?.unwrap_or_default();
        let properties = o.opt_str_map("properties")?.unwrap_or_default();
        Ok(BlobMetadata {
            blob_type,
            snapshot_id,
            sequence_number,
            fields,
            properties,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), self.blob_type.clone().into());
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        m.insert("sequence-number".into(), self.sequence_number.into());
        m.insert("fields".into(), self.fields.clone().into());
        if !self.properties.is_empty() {
            m.insert("properties".into(), str_map(&self.properties));
        }
        Value::Object(m)
    }
}

pub(crate) fn str_map(entries: &[(String, String)]) -> Value {
    Value::Object(
        entries
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// A table statistics file (a Puffin file) for one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatisticsFile {
    pub snapshot_id: i64,
    pub statistics_path: String,
    pub file_size_in_bytes: i64,
    pub file_footer_size_in_bytes: i64,
    /// Base64-encoded key metadata, kept as written.
    pub key_metadata: Option<String>,
    pub blob_metadata: Vec<BlobMetadata>,
}

impl StatisticsFile {
    pub fn from_json(value: &Value, path: &str) -> Result<StatisticsFile> {
        let o = Obj::new(value, path)?;
        let snapshot_id = o.req_i64("snapshot-id")?;
        let statistics_path = o.req_str("statistics-path")?.to_string();
        let file_size_in_bytes = o.req_i64("file-size-in-bytes")?;
        let file_footer_size_in_bytes = o.req_i64("file-footer-size-in-bytes")?;
        let key_metadata = o.opt_str("key-metadata")?.map(str::to_string);
        let blobs = o.req_array("blob-metadata")?;
        let bpath = o.field("blob-metadata");
        let blob_metadata = blobs
            .iter()
            .enumerate()
            .map(|(i, b)| BlobMetadata::from_json(b, &index(&bpath, i)))
            .collect::<Result<Vec<_>>>()?;
        Ok(StatisticsFile {
            snapshot_id,
            statistics_path,
            file_size_in_bytes,
            file_footer_size_in_bytes,
            key_metadata,
            blob_metadata,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        m.insert(
            "statistics-path".into(),
            self.statistics_path.clone().into(),
        );
        m.insert("file-size-in-bytes".into(), self.file_size_in_bytes.into());
        m.insert(
            "file-footer-size-in-bytes".into(),
            self.file_footer_size_in_bytes.into(),
        );
        if let Some(k) = &self.key_metadata {
            m.insert("key-metadata".into(), k.clone().into());
        }
        m.insert(
            "blob-metadata".into(),
            Value::Array(
                self.blob_metadata
                    .iter()
                    .map(BlobMetadata::to_json)
                    .collect(),
            ),
        );
        Value::Object(m)
    }
}

/// A partition statistics file for one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionStatisticsFile {
    pub snapshot_id: i64,
    pub statistics_path: String,
    pub file_size_in_bytes: i64,
}

impl PartitionStatisticsFile {
    pub fn from_json(value: &Value, path: &str) -> Result<PartitionStatisticsFile> {
        let o = Obj::new(value, path)?;
        Ok(PartitionStatisticsFile {
            snapshot_id: o.req_i64("snapshot-id")?,
            statistics_path: o.req_str("statistics-path")?.to_string(),
            file_size_in_bytes: o.req_i64("file-size-in-bytes")?,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("snapshot-id".into(), self.snapshot_id.into());
        m.insert(
            "statistics-path".into(),
            self.statistics_path.clone().into(),
        );
        m.insert("file-size-in-bytes".into(), self.file_size_in_bytes.into());
        Value::Object(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statistics_round_trip_and_errors() {
        let v = json!({
            "snapshot-id": 3055729675574597004i64,
            "statistics-path": "s3://a/b/stats.puffin",
            "file-size-in-bytes": 413,
            "file-footer-size-in-bytes": 42,
            "blob-metadata": [{"type": "ndv", "snapshot-id": 3055729675574597004i64,
                "sequence-number": 1, "fields": [1, 2], "properties": {"ndv": "12"}}]
        });
        let s = StatisticsFile::from_json(&v, "statistics[0]").unwrap();
        assert_eq!(s.blob_metadata[0].fields, vec![1, 2]);
        assert_eq!(
            s.blob_metadata[0].properties,
            vec![("ndv".to_string(), "12".to_string())]
        );
        assert_eq!(s.to_json(), v);
        let mut bad = v.clone();
        bad["blob-metadata"][0]
            .as_object_mut()
            .unwrap()
            .remove("sequence-number");
        let e = StatisticsFile::from_json(&bad, "statistics[0]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "statistics[0].blob-metadata[0].sequence-number"
        );
        let mut bad = v.clone();
        bad["blob-metadata"][0]
            .as_object_mut()
            .unwrap()
            .remove("fields");
        let e = StatisticsFile::from_json(&bad, "statistics[0]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "statistics[0].blob-metadata[0].fields"
        );
        let mut bad = v;
        bad.as_object_mut()
            .unwrap()
            .remove("file-footer-size-in-bytes");
        let e = StatisticsFile::from_json(&bad, "statistics[0]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "statistics[0].file-footer-size-in-bytes"
        );
    }

    #[test]
    fn partition_statistics() {
        let v = json!({"snapshot-id": 1, "statistics-path": "p.parquet", "file-size-in-bytes": 10});
        let p = PartitionStatisticsFile::from_json(&v, "partition-statistics[0]").unwrap();
        assert_eq!(p.to_json(), v);
        let e = PartitionStatisticsFile::from_json(
            &json!({"snapshot-id": 1, "statistics-path": "p"}),
            "ps[1]",
        )
        .unwrap_err();
        assert_eq!(e.location().unwrap().field, "ps[1].file-size-in-bytes");
    }
}
