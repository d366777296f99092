//! Encryption keys tracked in table metadata ("Encryption Keys", v3).

use serde_json::{Map, Value};

use super::json::Obj;
use super::statistics::str_map;
use crate::error::Result;

/// A key of the table's `encryption-keys` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptedKey {
    pub key_id: String,
    /// Encrypted key and metadata, base64 encoded; kept as written.
    pub encrypted_key_metadata: String,
    /// Id of the key that encrypts (wraps) this one.
    pub encrypted_by_id: Option<String>,
    pub properties: Vec<(String, String)>,
}

impl EncryptedKey {
    pub fn from_json(value: &Value, path: &str) -> Result<EncryptedKey> {
        let o = Obj::new(value, path)?;
        Ok(EncryptedKey {
            key_id: o.req_str("key-id")?.to_string(),
            encrypted_key_metadata: o.req_str("encrypted-key-metadata")?.to_string(),
            encrypted_by_id: o.opt_str("encrypted-by-id")?.map(str::to_string),
            properties: o.opt_str_map("properties")?.unwrap_or_default(),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("key-id".into(), self.key_id.clone().into());
        m.insert(
            "encrypted-key-metadata".into(),
            self.encrypted_key_metadata.clone().into(),
        );
        if let Some(by) = &self.encrypted_by_id {
            m.insert("encrypted-by-id".into(), by.clone().into());
        }
        if !self.properties.is_empty() {
            m.insert("properties".into(), str_map(&self.properties));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_and_required_fields() {
        let v = json!({"key-id": "5f819b", "encrypted-key-metadata": "aWNlYmVyZwo=",
            "encrypted-by-id": "kek-1", "properties": {"algo": "AES_GCM"}});
        let k = EncryptedKey::from_json(&v, "encryption-keys[0]").unwrap();
        assert_eq!(k.encrypted_key_metadata, "aWNlYmVyZwo=");
        assert_eq!(k.encrypted_by_id.as_deref(), Some("kek-1"));
        assert_eq!(k.to_json(), v);
        let e = EncryptedKey::from_json(&json!({"key-id": "a"}), "encryption-keys[1]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "encryption-keys[1].encrypted-key-metadata"
        );
        let e = EncryptedKey::from_json(&json!({"encrypted-key-metadata": "a"}), "k").unwrap_err();
        assert_eq!(e.location().unwrap().field, "k.key-id");
    }
}
