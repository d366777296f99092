//! View metadata (`view-spec.md`): the view metadata file, its versions, their
//! representations (SQL per dialect) and the version log.
//!
//! # Which layout
//!
//! `view-spec.md` in this repository is an early draft of the view spec. Its examples
//! put `schema-id`, `default-catalog` and `default-namespace` on each SQL
//! representation, have a top-level `current-schema-id` and no `view-uuid`, and give a
//! `parent-version-id` per version. The view format that Java Iceberg reads and writes
//! today has a required `view-uuid`, and `schema-id`, `default-catalog` and
//! `default-namespace` on the version. This module reads both layouts and writes back
//! exactly the fields that were read, so that:
//!
//! * the spec's examples parse and round-trip (no field is invented or dropped);
//! * a file with the current layout (it has a `view-uuid`) is written as Java's
//!   `ViewMetadataParser` writes it: Java's field order, `properties` only when
//!   non-empty, `schemas` always written, and none of the draft's fields (Java reads and
//!   drops a top-level `current-schema-id`, a version's `parent-version-id` and the
//!   draft's fields of a representation; a version's `schema-id`, `default-catalog` and
//!   `default-namespace` are written on the version, taken from its first SQL
//!   representation when only that has them).
//!
//! Fields outside both layouts are ignored (as Java does). Representations of a type
//! other than `sql` are kept verbatim and written back unchanged.
//!
//! Only `format-version` 1 exists; other versions are refused with
//! [`Error::UnsupportedFormatVersion`] (above 1) or [`Error::InvalidMetadata`] (below 1).
//!
//! # Validation (after parsing)
//!
//! What Java refuses when it reads a file, or as soon as the view is used:
//!
//! * version ids are unique, schema ids are unique (Java's id indexes refuse duplicates);
//! * `current-version-id` names a version in `versions`, and the current version's
//!   schema (its `schema-id`, the draft's `schema-id` of its SQL representations, the
//!   draft's top-level `current-schema-id`) is in `schemas` (Java's `currentVersion()` and
//!   `currentSchemaId()` fail otherwise).
//!
//! Older versions are not checked, as Java reads them unchecked. Neither is the rule of at
//! most one SQL representation per dialect (case-insensitive): Java's builder applies it to
//! the versions it adds, and reads a file that breaks it on purpose so that a replacement
//! can repair the view (`commit::view` applies the rule to the versions it makes).
//!
//! The spec lists `operation` as a summary key, but Java 1.11 writes view versions
//! without it (and reads them), so its absence is accepted.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::json::{
    index, is_gzip_file_name, kind, metadata_file_bytes, metadata_file_text, parse_text, Obj,
};
use super::schema::Schema;
use crate::error::{Error, Location, Result};
use crate::io::FileIO;

/// The only view format version defined by the spec.
pub const SUPPORTED_VIEW_FORMAT_VERSION: i32 = 1;

/// The SQL representation type name.
pub const SQL_REPRESENTATION: &str = "sql";

/// A view metadata file.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMetadata {
    /// `view-uuid`: required by the current spec, absent in the draft's examples.
    pub view_uuid: Option<String>,
    /// `format-version`: always 1 once parsed.
    pub format_version: i32,
    /// `location`: the view's base location.
    pub location: String,
    /// `schemas` (an empty list when the file has none).
    pub schemas: Vec<Schema>,
    /// `current-schema-id`: the draft's top-level current schema, if given.
    pub current_schema_id: Option<i32>,
    /// `current-version-id`.
    pub current_version_id: i32,
    /// `versions`.
    pub versions: Vec<ViewVersion>,
    /// `version-log`.
    pub version_log: Vec<ViewHistoryEntry>,
    /// `properties` (empty when absent).
    pub properties: BTreeMap<String, String>,
}

/// One version of a view (an entry of `versions`).
#[derive(Debug, Clone, PartialEq)]
pub struct ViewVersion {
    /// `version-id`.
    pub version_id: i32,
    /// `parent-version-id` (draft layout only).
    pub parent_version_id: Option<i32>,
    /// `timestamp-ms`.
    pub timestamp_ms: i64,
    /// `schema-id` on the version (current layout); see [`ViewVersion::schema_id`].
    pub schema_id: Option<i32>,
    /// `summary`: usually has `operation` (Java may omit it).
    pub summary: BTreeMap<String, String>,
    /// `default-catalog` on the version (current layout).
    pub default_catalog: Option<String>,
    /// `default-namespace` on the version (current layout).
    pub default_namespace: Option<Vec<String>>,
    /// `representations`.
    pub representations: Vec<ViewRepresentation>,
}

/// A representation of a view version.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewRepresentation {
    /// `"type": "sql"`.
    Sql(SqlViewRepresentation),
    /// Any other type, kept as the JSON object it was read from (including `type`).
    Unknown {
        type_name: String,
        json: Map<String, Value>,
    },
}

/// The SQL representation: the original view definition and its dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlViewRepresentation {
    /// `sql`.
    pub sql: String,
    /// `dialect`.
    pub dialect: String,
    /// `schema-id` on the representation (draft layout).
    pub schema_id: Option<i32>,
    /// `default-catalog` on the representation (draft layout).
    pub default_catalog: Option<String>,
    /// `default-namespace` on the representation (draft layout).
    pub default_namespace: Option<Vec<String>>,
    /// `field-aliases` (draft layout).
    pub field_aliases: Option<Vec<String>>,
    /// `field-docs` (draft layout): one per top-level field, `null` for none.
    pub field_docs: Option<Vec<Option<String>>>,
}

impl SqlViewRepresentation {
    /// A representation with just `sql` and `dialect`.
    pub fn new(sql: impl Into<String>, dialect: impl Into<String>) -> Self {
        SqlViewRepresentation {
            sql: sql.into(),
            dialect: dialect.into(),
            schema_id: None,
            default_catalog: None,
            default_namespace: None,
            field_aliases: None,
            field_docs: None,
        }
    }
}

/// An entry of `version-log`: when a version became current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewHistoryEntry {
    /// `timestamp-ms`.
    pub timestamp_ms: i64,
    /// `version-id`.
    pub version_id: i32,
}

// ---------------------------------------------------------------------------------------
// Accessors

impl ViewMetadata {
    /// The version named by `current-version-id` (always present once validated).
    pub fn current_version(&self) -> Option<&ViewVersion> {
        self.version_by_id(self.current_version_id)
    }

    pub fn version_by_id(&self, version_id: i32) -> Option<&ViewVersion> {
        self.versions.iter().find(|v| v.version_id == version_id)
    }

    pub fn schema_by_id(&self, schema_id: i32) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id() == schema_id)
    }

    /// The schema of the current version; for a draft-layout file without one, the
    /// schema named by the top-level `current-schema-id`.
    pub fn current_schema(&self) -> Option<&Schema> {
        let id = self
            .current_version()
            .and_then(ViewVersion::schema_id)
            .or(self.current_schema_id)?;
        self.schema_by_id(id)
    }

    /// The SQL text of the current version for a dialect (compared case-insensitively).
    pub fn sql_for(&self, dialect: &str) -> Option<&str> {
        self.current_version()?
            .sql_for(dialect)
            .map(|r| r.sql.as_str())
    }

    /// The `version.history.num-entries`-independent log, oldest first.
    pub fn history(&self) -> &[ViewHistoryEntry] {
        &self.version_log
    }
}

impl ViewVersion {
    /// The schema id of this version: the version's own `schema-id`, or (draft layout)
    /// the `schema-id` of its first SQL representation that has one.
    pub fn schema_id(&self) -> Option<i32> {
        self.schema_id
            .or_else(|| self.sql_representations().find_map(|r| r.schema_id))
    }

    /// `summary["operation"]`.
    pub fn operation(&self) -> Option<&str> {
        self.summary.get("operation").map(String::as_str)
    }

    /// The default catalog: the version's, or (draft layout) the first SQL representation's.
    pub fn default_catalog(&self) -> Option<&str> {
        self.default_catalog.as_deref().or_else(|| {
            self.sql_representations()
                .find_map(|r| r.default_catalog.as_deref())
        })
    }

    /// The default namespace: the version's, or (draft layout) the first SQL representation's.
    pub fn default_namespace(&self) -> Option<&[String]> {
        self.default_namespace.as_deref().or_else(|| {
            self.sql_representations()
                .find_map(|r| r.default_namespace.as_deref())
        })
    }

    pub fn sql_representations(&self) -> impl Iterator<Item = &SqlViewRepresentation> {
        self.representations.iter().filter_map(|r| match r {
            ViewRepresentation::Sql(s) => Some(s),
            ViewRepresentation::Unknown { .. } => None,
        })
    }

    /// The SQL representation for a dialect (compared case-insensitively).
    pub fn sql_for(&self, dialect: &str) -> Option<&SqlViewRepresentation> {
        let wanted = dialect.to_lowercase();
        self.sql_representations()
            .find(|r| r.dialect.to_lowercase() == wanted)
    }
}

impl ViewRepresentation {
    /// The `type` of the representation.
    pub fn type_name(&self) -> &str {
        match self {
            ViewRepresentation::Sql(_) => SQL_REPRESENTATION,
            ViewRepresentation::Unknown { type_name, .. } => type_name,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading

fn nullable_string_list(o: &Obj<'_>, key: &str) -> Result<Option<Vec<Option<String>>>> {
    let Some(items) = o.opt_array(key)? else {
        return Ok(None);
    };
    let path = o.field(key);
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            other => Err(Error::invalid_metadata(
                index(&path, i),
                format!("expected a string or null, found {}", kind(other)),
            )),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn str_map(o: &Obj<'_>, key: &str) -> Result<Option<BTreeMap<String, String>>> {
    Ok(o.opt_str_map(key)?.map(|v| v.into_iter().collect()))
}

impl ViewHistoryEntry {
    pub fn from_json(value: &Value, path: &str) -> Result<ViewHistoryEntry> {
        let o = Obj::new(value, path)?;
        Ok(ViewHistoryEntry {
            timestamp_ms: o.req_i64("timestamp-ms")?,
            version_id: o.req_i32("version-id")?,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        m.insert("version-id".into(), self.version_id.into());
        Value::Object(m)
    }
}

impl ViewRepresentation {
    pub fn from_json(value: &Value, path: &str) -> Result<ViewRepresentation> {
        let o = Obj::new(value, path)?;
        let type_name = o.req_str("type")?;
        if !type_name.eq_ignore_ascii_case(SQL_REPRESENTATION) {
            return Ok(ViewRepresentation::Unknown {
                type_name: type_name.to_string(),
                json: o.map.clone(),
            });
        }
        Ok(ViewRepresentation::Sql(SqlViewRepresentation {
            sql: o.req_str("sql")?.to_string(),
            dialect: o.req_str("dialect")?.to_string(),
            schema_id: o.opt_i32("schema-id")?,
            default_catalog: o.opt_str("default-catalog")?.map(str::to_string),
            default_namespace: o.opt_str_list("default-namespace")?,
            field_aliases: o.opt_str_list("field-aliases")?,
            field_docs: nullable_string_list(&o, "field-docs")?,
        }))
    }

    pub fn to_json(&self) -> Value {
        match self {
            ViewRepresentation::Unknown { json, .. } => Value::Object(json.clone()),
            ViewRepresentation::Sql(r) => {
                let mut m = Map::new();
                m.insert("type".into(), SQL_REPRESENTATION.into());
                m.insert("sql".into(), r.sql.clone().into());
                m.insert("dialect".into(), r.dialect.clone().into());
                if let Some(id) = r.schema_id {
                    m.insert("schema-id".into(), id.into());
                }
                if let Some(c) = &r.default_catalog {
                    m.insert("default-catalog".into(), c.clone().into());
                }
                if let Some(ns) = &r.default_namespace {
                    m.insert("default-namespace".into(), ns.clone().into());
                }
                if let Some(a) = &r.field_aliases {
                    m.insert("field-aliases".into(), a.clone().into());
                }
                if let Some(d) = &r.field_docs {
                    let docs = d
                        .iter()
                        .map(|s| s.clone().map_or(Value::Null, Value::String))
                        .collect();
                    m.insert("field-docs".into(), Value::Array(docs));
                }
                Value::Object(m)
            }
        }
    }
}

impl ViewVersion {
    pub fn from_json(value: &Value, path: &str) -> Result<ViewVersion> {
        let o = Obj::new(value, path)?;
        let version_id = o.req_i32("version-id")?;
        let parent_version_id = o.opt_i32("parent-version-id")?;
        let timestamp_ms = o.req_i64("timestamp-ms")?;
        let schema_id = o.opt_i32("schema-id")?;
        let summary = match str_map(&o, "summary")? {
            Some(s) => s,
            None => {
                return Err(Error::invalid_metadata(
                    o.field("summary"),
                    "required field is missing",
                ))
            }
        };
        let default_catalog = o.opt_str("default-catalog")?.map(str::to_string);
        let default_namespace = o.opt_str_list("default-namespace")?;
        let representations = o.req_list("representations", ViewRepresentation::from_json)?;
        Ok(ViewVersion {
            version_id,
            parent_version_id,
            timestamp_ms,
            schema_id,
            summary,
            default_catalog,
            default_namespace,
            representations,
        })
    }

    /// JSON in Java's field order; optional fields only when set.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("version-id".into(), self.version_id.into());
        if let Some(p) = self.parent_version_id {
            m.insert("parent-version-id".into(), p.into());
        }
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        if let Some(id) = self.schema_id {
            m.insert("schema-id".into(), id.into());
        }
        m.insert("summary".into(), str_map_json(&self.summary));
        if let Some(c) = &self.default_catalog {
            m.insert("default-catalog".into(), c.clone().into());
        }
        if let Some(ns) = &self.default_namespace {
            m.insert("default-namespace".into(), ns.clone().into());
        }
        m.insert(
            "representations".into(),
            Value::Array(
                self.representations
                    .iter()
                    .map(ViewRepresentation::to_json)
                    .collect(),
            ),
        );
        Value::Object(m)
    }
}

impl ViewVersion {
    /// JSON as Java's `ViewVersionParser` writes it: no `parent-version-id`; `schema-id`,
    /// `default-catalog` and `default-namespace` on the version (from the first SQL
    /// representation when only that has them); SQL representations as `type`, `sql`
    /// and `dialect` alone.
    pub fn to_java_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("version-id".into(), self.version_id.into());
        m.insert("timestamp-ms".into(), self.timestamp_ms.into());
        if let Some(id) = self.schema_id() {
            m.insert("schema-id".into(), id.into());
        }
        m.insert("summary".into(), str_map_json(&self.summary));
        if let Some(c) = self.default_catalog() {
            m.insert("default-catalog".into(), c.into());
        }
        if let Some(ns) = self.default_namespace() {
            m.insert("default-namespace".into(), ns.to_vec().into());
        }
        let representations = self
            .representations
            .iter()
            .map(|r| match r {
                ViewRepresentation::Sql(sql) => {
                    ViewRepresentation::Sql(SqlViewRepresentation::new(&sql.sql, &sql.dialect))
                        .to_json()
                }
                other => other.to_json(),
            })
            .collect();
        m.insert("representations".into(), Value::Array(representations));
        Value::Object(m)
    }
}

fn str_map_json(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

impl ViewMetadata {
    /// Parses and validates view metadata JSON text. Errors carry no file name; see
    /// [`ViewMetadata::read`].
    pub fn from_json_str(text: &str) -> Result<ViewMetadata> {
        ViewMetadata::from_json(&parse_text(text)?)
    }

    /// Parses and validates a view metadata JSON value.
    pub fn from_json(value: &Value) -> Result<ViewMetadata> {
        let o = Obj::new(value, "")?;
        let format_version = o.req_i64("format-version")?;
        if format_version > i64::from(SUPPORTED_VIEW_FORMAT_VERSION) {
            return Err(Error::UnsupportedFormatVersion {
                at: Location {
                    file: String::new(),
                    field: "format-version".into(),
                },
                version: format_version,
                max: SUPPORTED_VIEW_FORMAT_VERSION,
            });
        }
        if format_version < 1 {
            return Err(Error::invalid_metadata(
                "format-version",
                format!("invalid view format version {format_version}: must be 1"),
            ));
        }
        let view_uuid = o.opt_str("view-uuid")?.map(str::to_string);
        let location = o.req_str("location")?.to_string();
        let properties = str_map(&o, "properties")?.unwrap_or_default();
        let schemas = o
            .opt_list("schemas", Schema::from_json)?
            .unwrap_or_default();
        let current_schema_id = o.opt_i32("current-schema-id")?;
        let current_version_id = o.req_i32("current-version-id")?;
        let versions = o.req_list("versions", ViewVersion::from_json)?;
        let version_log = o.req_list("version-log", ViewHistoryEntry::from_json)?;
        let metadata = ViewMetadata {
            view_uuid,
            format_version: SUPPORTED_VIEW_FORMAT_VERSION,
            location,
            schemas,
            current_schema_id,
            current_version_id,
            versions,
            version_log,
            properties,
        };
        metadata.validate()?;
        Ok(metadata)
    }

    /// Checks the cross-references (see the module documentation). Errors name the
    /// offending field path.
    pub fn validate(&self) -> Result<()> {
        if self.format_version != SUPPORTED_VIEW_FORMAT_VERSION {
            return Err(Error::UnsupportedFormatVersion {
                at: Location {
                    file: String::new(),
                    field: "format-version".into(),
                },
                version: i64::from(self.format_version),
                max: SUPPORTED_VIEW_FORMAT_VERSION,
            });
        }
        let mut schema_ids = HashSet::new();
        for (i, s) in self.schemas.iter().enumerate() {
            if !schema_ids.insert(s.schema_id()) {
                return Err(Error::invalid_metadata(
                    format!("schemas[{i}].schema-id"),
                    format!(
                        "schema id {} is used by more than one schema",
                        s.schema_id()
                    ),
                ));
            }
        }
        let check_schema = |id: i32, field: String| -> Result<()> {
            if schema_ids.contains(&id) {
                Ok(())
            } else {
                Err(Error::invalid_metadata(
                    field,
                    format!(
                        "unknown schema id {id} (schemas: {})",
                        sorted_ids(&schema_ids)
                    ),
                ))
            }
        };
        // Java does not read the draft's top-level `current-schema-id`: checked only in the
        // draft layout, where it is the view's current schema
        if let (Some(id), false) = (self.current_schema_id, self.is_java_layout()) {
            check_schema(id, "current-schema-id".into())?;
        }
        let mut version_ids = HashSet::new();
        for (i, v) in self.versions.iter().enumerate() {
            let vpath = format!("versions[{i}]");
            if !version_ids.insert(v.version_id) {
                return Err(Error::invalid_metadata(
                    format!("{vpath}.version-id"),
                    format!(
                        "version id {} is used by more than one version",
                        v.version_id
                    ),
                ));
            }
            if v.version_id != self.current_version_id {
                continue;
            }
            if let Some(id) = v.schema_id {
                check_schema(id, format!("{vpath}.schema-id"))?;
            }
            for (j, r) in v.representations.iter().enumerate() {
                if let ViewRepresentation::Sql(SqlViewRepresentation {
                    schema_id: Some(id),
                    ..
                }) = r
                {
                    check_schema(*id, format!("{vpath}.representations[{j}].schema-id"))?;
                }
            }
        }
        if !version_ids.contains(&self.current_version_id) {
            return Err(Error::invalid_metadata(
                "current-version-id",
                format!(
                    "unknown version id {} (versions: {})",
                    self.current_version_id,
                    sorted_ids(&version_ids)
                ),
            ));
        }
        Ok(())
    }

    /// Whether this is the view format Java reads and writes (it has a `view-uuid`), as
    /// opposed to the draft layout of `view-spec.md`'s examples.
    pub fn is_java_layout(&self) -> bool {
        self.view_uuid.is_some()
    }

    /// JSON in Java's field order: `view-uuid`, `format-version`, `location`,
    /// `properties` (only when non-empty), `schemas`, `current-schema-id` (draft layout,
    /// when set), `current-version-id`, `versions`, `version-log`. In Java's layout the
    /// draft's fields are not written (see the module documentation).
    pub fn to_json(&self) -> Value {
        let java = self.is_java_layout();
        let mut m = Map::new();
        if let Some(u) = &self.view_uuid {
            m.insert("view-uuid".into(), u.clone().into());
        }
        m.insert("format-version".into(), self.format_version.into());
        m.insert("location".into(), self.location.clone().into());
        if !self.properties.is_empty() {
            m.insert("properties".into(), str_map_json(&self.properties));
        }
        m.insert(
            "schemas".into(),
            Value::Array(self.schemas.iter().map(Schema::to_json).collect()),
        );
        if let (Some(id), false) = (self.current_schema_id, java) {
            m.insert("current-schema-id".into(), id.into());
        }
        m.insert("current-version-id".into(), self.current_version_id.into());
        m.insert(
            "versions".into(),
            Value::Array(
                self.versions
                    .iter()
                    .map(|v| if java { v.to_java_json() } else { v.to_json() })
                    .collect(),
            ),
        );
        m.insert(
            "version-log".into(),
            Value::Array(
                self.version_log
                    .iter()
                    .map(ViewHistoryEntry::to_json)
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    /// Pretty-printed JSON text.
    pub fn to_json_string(&self) -> String {
        // Serializing a Value to a String cannot fail (all keys are strings).
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default()
    }

    /// Reads a view metadata file. Gzip-compressed files are recognised by their magic
    /// bytes (whatever the file name). Every input error names `location`.
    pub fn read(io: &dyn FileIO, location: &str) -> Result<ViewMetadata> {
        let bytes = io.read(location)?;
        let text = metadata_file_text(&bytes).map_err(|e| e.in_file(location))?;
        ViewMetadata::from_json_str(&text).map_err(|e| e.in_file(location))
    }

    /// Validates and writes a new view metadata file (never overwrites). The file is
    /// gzip-compressed when its name ends in `.gz.metadata.json` or `.metadata.json.gz`,
    /// as Java's codec detection does.
    pub fn write(&self, io: &dyn FileIO, location: &str) -> Result<()> {
        self.validate().map_err(|e| e.in_file(location))?;
        let bytes = metadata_file_bytes(self.to_json_string(), is_gzip_file_name(location))
            .map_err(|e| Error::io(location, e))?;
        io.write_new(location, &bytes)
    }
}

fn sorted_ids(ids: &HashSet<i32>) -> String {
    let mut v: Vec<_> = ids.iter().copied().collect();
    v.sort_unstable();
    let parts: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{
      "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
      "format-version": 1,
      "location": "s3://bucket/v",
      "schemas": [{"schema-id": 0, "type": "struct", "fields": [
         {"id": 1, "name": "x", "required": false, "type": "long"}]}],
      "current-version-id": 1,
      "versions": [{"version-id": 1, "timestamp-ms": 5, "schema-id": 0,
        "summary": {"operation": "create"}, "default-namespace": ["ns"],
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "Spark"}]}],
      "version-log": [{"timestamp-ms": 5, "version-id": 1}]
    }"#;

    #[test]
    fn minimal_current_layout() {
        let m = ViewMetadata::from_json_str(MINIMAL).unwrap();
        assert_eq!(m.sql_for("SPARK"), Some("select 1"));
        assert_eq!(m.current_schema().unwrap().schema_id(), 0);
        assert_eq!(
            m.current_version().unwrap().default_namespace(),
            Some(&["ns".to_string()][..])
        );
        let back = ViewMetadata::from_json(&m.to_json()).unwrap();
        assert_eq!(back, m);
    }
}
