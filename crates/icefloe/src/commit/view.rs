//! Creating and replacing views (`view-spec.md`), with the rules of Java 1.11's
//! `ViewMetadata.Builder` as its catalogs' view builders use it:
//!
//! - a new view gets version 1, schema id 0, a fresh `view-uuid`, and one `version-log`
//!   entry at the version's timestamp;
//! - a replacement adds a version with id `max + 1`, unless an identical version (same
//!   summary, representations, default catalog and namespace, schema) exists, whose id is
//!   then reused; the schema likewise reuses the id of an equal schema (same struct and
//!   identifier fields), else takes `max + 1`;
//! - the log gets an entry only when the current version changes;
//! - a replacement must keep every SQL dialect of the version it replaces unless
//!   `replace.drop-dialect.allowed` is true;
//! - at most `version.history.num-entries` (default 10) versions are kept: the current one
//!   and the highest ids, never fewer than were added; log entries of dropped versions go,
//!   and so does everything before them.
//!
//! Java's builder also refuses two SQL representations of one dialect (case-insensitive)
//! in a version it adds, which [`ViewDefinition`]'s check does here. Versions already in
//! the view are not checked: Java reads a view whose version breaks that rule, and a
//! replacement with one query per dialect repairs it.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::{Catalog, TableIdent, ViewState};
use crate::error::{Error, Result};
use crate::spec::view_metadata::{
    SqlViewRepresentation, ViewHistoryEntry, ViewMetadata, ViewRepresentation, ViewVersion,
    SUPPORTED_VIEW_FORMAT_VERSION,
};
use crate::spec::Schema;

/// `version.history.num-entries`: how many versions a view keeps.
pub const VERSION_HISTORY_SIZE: &str = "version.history.num-entries";
const VERSION_HISTORY_SIZE_DEFAULT: i64 = 10;
/// `replace.drop-dialect.allowed`: whether a replacement may drop a SQL dialect.
pub const REPLACE_DROP_DIALECT_ALLOWED: &str = "replace.drop-dialect.allowed";

/// The summary icefloe gives the versions it makes (Java puts its `EnvironmentContext`,
/// e.g. `engine-name=spark`, there).
pub fn engine_summary() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("engine-name".to_string(), "icefloe".to_string()),
        (
            "engine-version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
    ])
}

/// What a view version is made of: the arguments of Java's `ViewBuilder`.
#[derive(Debug, Clone)]
pub struct ViewDefinition {
    /// The view's output schema (its id is reassigned; field ids are kept).
    pub schema: Schema,
    /// The SQL text per dialect, in order.
    pub queries: Vec<(String, String)>,
    /// The namespace that unqualified names in the SQL resolve in (required, as Java).
    pub default_namespace: Vec<String>,
    pub default_catalog: Option<String>,
    /// The version's summary (e.g. `engine-name`, `engine-version`).
    pub summary: BTreeMap<String, String>,
    /// View properties to set (existing ones are kept on replace).
    pub properties: BTreeMap<String, String>,
    /// The view's location (`None`: the catalog's default on create, unchanged on replace).
    pub location: Option<String>,
}

impl ViewDefinition {
    fn check(&self, verb: &str) -> Result<()> {
        if self.queries.is_empty() {
            return Err(Error::invalid_argument(format!(
                "cannot {verb} a view without a query"
            )));
        }
        let mut dialects = BTreeSet::new();
        for (dialect, _) in &self.queries {
            if !dialects.insert(dialect.to_lowercase()) {
                return Err(Error::invalid_argument(format!(
                    "invalid view version: more than one query for dialect '{}'",
                    dialect.to_lowercase()
                )));
            }
        }
        Ok(())
    }

    fn version(&self, version_id: i32, schema_id: i32, timestamp_ms: i64) -> ViewVersion {
        ViewVersion {
            version_id,
            parent_version_id: None,
            timestamp_ms,
            schema_id: Some(schema_id),
            summary: self.summary.clone(),
            default_catalog: self.default_catalog.clone(),
            default_namespace: Some(self.default_namespace.clone()),
            representations: self
                .queries
                .iter()
                .map(|(dialect, sql)| {
                    ViewRepresentation::Sql(SqlViewRepresentation::new(sql, dialect))
                })
                .collect(),
        }
    }
}

/// The metadata of a new view at `location`, its version made at `timestamp_ms`.
pub fn new_view_metadata(
    def: &ViewDefinition,
    location: &str,
    timestamp_ms: i64,
) -> Result<ViewMetadata> {
    def.check("create")?;
    let schema = def.schema.with_schema_id(0);
    let version = def.version(1, 0, timestamp_ms);
    let metadata = ViewMetadata {
        view_uuid: Some(uuid::Uuid::new_v4().to_string()),
        format_version: SUPPORTED_VIEW_FORMAT_VERSION,
        location: def.location.clone().unwrap_or_else(|| location.to_string()),
        schemas: vec![schema],
        current_schema_id: None,
        current_version_id: 1,
        versions: vec![version],
        version_log: vec![ViewHistoryEntry {
            timestamp_ms,
            version_id: 1,
        }],
        properties: def.properties.clone(),
    };
    history_size(&metadata.properties)?;
    metadata.validate()?;
    Ok(metadata)
}

/// `base` with `def` as its new current version, made at `timestamp_ms`.
pub fn replace_view_metadata(
    base: &ViewMetadata,
    def: &ViewDefinition,
    timestamp_ms: i64,
) -> Result<ViewMetadata> {
    def.check("replace")?;
    let mut md = base.clone();
    md.properties
        .extend(def.properties.iter().map(|(k, v)| (k.clone(), v.clone())));
    if let Some(location) = &def.location {
        md.location = location.clone();
    }

    // the schema: an equal one's id, else the highest + 1
    let schema_id = match md.schemas.iter().find(|s| same_schema(s, &def.schema)) {
        Some(s) => s.schema_id(),
        None => {
            let id = md
                .schemas
                .iter()
                .map(|s| s.schema_id() + 1)
                .max()
                .unwrap_or(0);
            md.schemas.push(def.schema.with_schema_id(id));
            id
        }
    };

    // the version: an identical one's id, else the highest + 1
    let max_id = md.versions.iter().map(|v| v.version_id).max().unwrap_or(0);
    let candidate = def.version(max_id + 1, schema_id, timestamp_ms);
    let mut added = None;
    let version_id = match md.versions.iter().find(|v| same_version(v, &candidate)) {
        Some(v) => v.version_id,
        None => {
            md.versions.push(candidate);
            added = Some(max_id + 1);
            max_id + 1
        }
    };
    if version_id != md.current_version_id {
        md.current_version_id = version_id;
        // a re-activated old version is logged now, a new one at its own timestamp
        md.version_log.push(ViewHistoryEntry {
            timestamp_ms,
            version_id,
        });
    }

    if !property_bool(&md.properties, REPLACE_DROP_DIALECT_ALLOWED)? {
        check_no_dialect_dropped(base, &md)?;
    }
    expire_versions(&mut md, added)?;
    md.validate()?;
    Ok(md)
}

/// Java's `Schema.sameSchema`: the same struct and identifier fields, whatever the id.
fn same_schema(a: &Schema, b: &Schema) -> bool {
    a.as_struct() == b.as_struct() && a.identifier_field_ids() == b.identifier_field_ids()
}

/// Java's `sameViewVersion`: equal but for the id and the timestamp.
fn same_version(a: &ViewVersion, b: &ViewVersion) -> bool {
    a.summary == b.summary
        && a.representations == b.representations
        && a.default_catalog == b.default_catalog
        && a.default_namespace == b.default_namespace
        && a.schema_id == b.schema_id
}

fn dialects(version: Option<&ViewVersion>) -> BTreeSet<String> {
    version
        .map(|v| {
            v.sql_representations()
                .map(|r| r.dialect.to_lowercase())
                .collect()
        })
        .unwrap_or_default()
}

fn check_no_dialect_dropped(base: &ViewMetadata, new: &ViewMetadata) -> Result<()> {
    let before = dialects(base.current_version());
    let after = dialects(new.current_version());
    if before.is_subset(&after) {
        return Ok(());
    }
    Err(Error::validation_failed(format!(
        "cannot replace view: it would lose the dialects {:?} ({REPLACE_DROP_DIALECT_ALLOWED}=false); \
         previous dialects {before:?}, new dialects {after:?}",
        before.difference(&after).collect::<Vec<_>>()
    )))
}

fn property_bool(props: &BTreeMap<String, String>, key: &str) -> Result<bool> {
    match props.get(key).map(|v| v.to_ascii_lowercase()).as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(Error::invalid_argument(format!(
            "invalid view property {key}='{other}': expected true or false"
        ))),
    }
}

fn history_size(props: &BTreeMap<String, String>) -> Result<usize> {
    let size = match props.get(VERSION_HISTORY_SIZE) {
        None => VERSION_HISTORY_SIZE_DEFAULT,
        Some(v) => v.trim().parse::<i64>().map_err(|_| {
            Error::invalid_argument(format!(
                "invalid view property {VERSION_HISTORY_SIZE}='{v}': not an integer"
            ))
        })?,
    };
    if size <= 0 {
        return Err(Error::invalid_argument(format!(
            "{VERSION_HISTORY_SIZE} must be positive but was {size}"
        )));
    }
    Ok(usize::try_from(size).unwrap_or(usize::MAX))
}

/// Keeps the current version and the highest ids, `version.history.num-entries` in all
/// (never fewer than the versions this change added plus the current one); drops the
/// log entries of dropped versions and every entry before the last such one.
fn expire_versions(md: &mut ViewMetadata, added: Option<i32>) -> Result<()> {
    let mut must_keep: BTreeSet<i32> = added.into_iter().collect();
    must_keep.insert(md.current_version_id);
    let keep = history_size(&md.properties)?.max(must_keep.len());
    if md.versions.len() <= keep {
        return Ok(());
    }
    let mut ids: Vec<i32> = md.versions.iter().map(|v| v.version_id).collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    let mut retained = vec![md.current_version_id];
    for id in ids.into_iter().take(keep) {
        if retained.len() == keep {
            break;
        }
        if id != md.current_version_id {
            retained.push(id);
        }
    }
    // Java lists the current version first, then the others from the highest id down
    let mut by_id: BTreeMap<i32, ViewVersion> = std::mem::take(&mut md.versions)
        .into_iter()
        .map(|v| (v.version_id, v))
        .collect();
    md.versions = retained.iter().filter_map(|id| by_id.remove(id)).collect();

    let mut log = Vec::new();
    for entry in &md.version_log {
        if retained.contains(&entry.version_id) {
            log.push(*entry);
        } else {
            log.clear();
        }
    }
    md.version_log = log;
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Creates the view `ident` (`AlreadyExists` if a view or a table has that name).
pub fn create_view(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    def: &ViewDefinition,
) -> Result<ViewState> {
    if catalog.view_exists(ident)? {
        return Err(Error::already_exists(format!(
            "view already exists: {ident}"
        )));
    }
    if catalog.table_exists(ident)? {
        return Err(Error::already_exists(format!(
            "a table with the same name already exists: {ident}"
        )));
    }
    // the catalog's default only when none is given: deriving it checks the identifier
    let location = match &def.location {
        Some(l) => l.clone(),
        None => catalog.default_table_location(ident)?,
    };
    let metadata = new_view_metadata(def, &location, now_ms())?;
    catalog
        .commit_view(ident, None, metadata)
        .map_err(|e| match e {
            Error::CommitFailed { .. } => {
                Error::already_exists(format!("view was created concurrently: {ident}"))
            }
            other => other,
        })
}

/// Replaces the view `ident` with a new current version (`NoSuchView` if it does not
/// exist; `CommitFailed` if another writer changed it meanwhile, as Java fails then).
pub fn replace_view(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    def: &ViewDefinition,
) -> Result<ViewState> {
    if catalog.table_exists(ident)? {
        return Err(Error::already_exists(format!(
            "a table with the same name already exists: {ident}"
        )));
    }
    let base = catalog.load_view(ident)?;
    let metadata = replace_view_metadata(&base.metadata, def, now_ms())?;
    catalog
        .commit_view(ident, Some(&base), metadata)
        .map_err(|e| match e {
            Error::CommitFailed { .. } => {
                Error::commit_failed(format!("view was updated concurrently: {ident}"))
            }
            other => other,
        })
}

/// [`replace_view`] when the view exists, else [`create_view`].
pub fn create_or_replace_view(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    def: &ViewDefinition,
) -> Result<ViewState> {
    if catalog.view_exists(ident)? {
        replace_view(catalog, ident, def)
    } else {
        create_view(catalog, ident, def)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::spec::{NestedField, PrimitiveType, Type};

    fn schema(extra: bool) -> Schema {
        let mut fields = vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )];
        if extra {
            fields.push(NestedField::optional(
                2,
                "name",
                Type::Primitive(PrimitiveType::String),
            ));
        }
        Schema::new(7, fields, vec![]).unwrap()
    }

    fn def(queries: &[(&str, &str)], extra: bool) -> ViewDefinition {
        ViewDefinition {
            schema: schema(extra),
            queries: queries
                .iter()
                .map(|(d, q)| (d.to_string(), q.to_string()))
                .collect(),
            default_namespace: vec!["db".into()],
            default_catalog: None,
            summary: engine_summary(),
            properties: BTreeMap::new(),
            location: None,
        }
    }

    fn ids(md: &ViewMetadata) -> Vec<i32> {
        md.versions.iter().map(|v| v.version_id).collect()
    }

    fn log(md: &ViewMetadata) -> Vec<i32> {
        md.version_log.iter().map(|e| e.version_id).collect()
    }

    #[test]
    fn create_gives_version_1_schema_0_and_one_log_entry() {
        let md = new_view_metadata(&def(&[("spark", "SELECT 1")], false), "/w/db/v", 100).unwrap();
        assert_eq!(md.current_version_id, 1);
        assert_eq!(md.schemas.len(), 1);
        assert_eq!(md.schemas[0].schema_id(), 0);
        assert_eq!(md.versions[0].schema_id, Some(0));
        assert_eq!(
            md.version_log,
            vec![ViewHistoryEntry {
                timestamp_ms: 100,
                version_id: 1
            }]
        );
        assert_eq!(md.location, "/w/db/v");
        assert!(md.view_uuid.is_some());
        // it round-trips through the JSON reader
        let back = ViewMetadata::from_json_str(&md.to_json_string()).unwrap();
        assert_eq!(back, md);
    }

    #[test]
    fn replace_reuses_equal_schemas_and_identical_versions() {
        let v1 = new_view_metadata(&def(&[("spark", "SELECT 1")], false), "/w", 100).unwrap();
        let v2 = replace_view_metadata(&v1, &def(&[("spark", "SELECT 2")], false), 200).unwrap();
        assert_eq!(ids(&v2), vec![1, 2]);
        assert_eq!(v2.schemas.len(), 1, "the equal schema is reused");
        assert_eq!(v2.versions[1].schema_id, Some(0));
        assert_eq!(log(&v2), vec![1, 2]);

        let v3 = replace_view_metadata(&v2, &def(&[("spark", "SELECT 2")], true), 300).unwrap();
        assert_eq!(
            v3.schemas.iter().map(Schema::schema_id).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(v3.current_version().unwrap().schema_id, Some(1));

        // back to version 1's definition: its id is reused and logged now
        let v4 = replace_view_metadata(&v3, &def(&[("spark", "SELECT 1")], false), 400).unwrap();
        assert_eq!(ids(&v4), vec![1, 2, 3]);
        assert_eq!(v4.current_version_id, 1);
        assert_eq!(
            v4.version_log.last(),
            Some(&ViewHistoryEntry {
                timestamp_ms: 400,
                version_id: 1
            })
        );

        // the current definition again: nothing changes
        let v5 = replace_view_metadata(&v4, &def(&[("spark", "SELECT 1")], false), 500).unwrap();
        assert_eq!(v5, v4);
    }

    #[test]
    fn dropping_a_dialect_needs_the_property() {
        let v1 = new_view_metadata(
            &def(&[("spark", "SELECT 1"), ("trino", "SELECT 1")], false),
            "/w",
            100,
        )
        .unwrap();
        let only_spark = def(&[("Spark", "SELECT 2")], false);
        let err = replace_view_metadata(&v1, &only_spark, 200).unwrap_err();
        assert!(matches!(err, Error::ValidationFailed { .. }), "{err}");
        assert!(err.to_string().contains("trino"), "{err}");

        let mut allowed = only_spark.clone();
        allowed
            .properties
            .insert(REPLACE_DROP_DIALECT_ALLOWED.into(), "true".into());
        let v2 = replace_view_metadata(&v1, &allowed, 200).unwrap();
        assert_eq!(v2.sql_for("spark"), Some("SELECT 2"));
        assert_eq!(v2.sql_for("trino"), None);
    }

    #[test]
    fn history_size_keeps_current_and_newest_versions() {
        let mut d = def(&[("spark", "SELECT 0")], false);
        d.properties.insert(VERSION_HISTORY_SIZE.into(), "2".into());
        let mut md = new_view_metadata(&d, "/w", 0).unwrap();
        for i in 1..5 {
            let next = def(&[("spark", &format!("SELECT {i}"))], false);
            md = replace_view_metadata(&md, &next, i64::from(i) * 100).unwrap();
        }
        assert_eq!(ids(&md), vec![5, 4], "current first, then the highest ids");
        assert_eq!(log(&md), vec![4, 5]);

        // re-activating a version that is still kept logs it; older log entries of dropped
        // versions were cut
        let again = def(&[("spark", "SELECT 3")], false);
        let md = replace_view_metadata(&md, &again, 900).unwrap();
        assert_eq!(md.current_version_id, 4);
        assert_eq!(ids(&md), vec![5, 4]);
        assert_eq!(log(&md), vec![4, 5, 4]);
    }

    #[test]
    fn a_replacement_repairs_a_version_with_two_queries_for_one_dialect() {
        // Java reads such a view, and its builder replaces it as long as the new version
        // has one query per dialect (TestViewMetadataParser's replace of such a file)
        let mut broken =
            new_view_metadata(&def(&[("spark", "SELECT 1")], false), "/w", 100).unwrap();
        broken.versions[0]
            .representations
            .push(ViewRepresentation::Sql(SqlViewRepresentation::new(
                "SELECT 2", "Spark",
            )));
        let text = broken.to_json_string();
        let read = ViewMetadata::from_json_str(&text).unwrap();
        assert_eq!(read, broken);

        let fixed =
            replace_view_metadata(&read, &def(&[("spark", "SELECT 3")], false), 200).unwrap();
        assert_eq!(ids(&fixed), vec![1, 2]);
        assert_eq!(fixed.current_version_id, 2);
        assert_eq!(fixed.sql_for("spark"), Some("SELECT 3"));
        assert_eq!(fixed.current_version().unwrap().representations.len(), 1);
        // the old version is kept as it was
        assert_eq!(fixed.version_by_id(1), broken.version_by_id(1));
        assert_eq!(log(&fixed), vec![1, 2]);

        // a replacement with two queries for one dialect is still refused
        let err = replace_view_metadata(
            &read,
            &def(&[("spark", "SELECT 3"), ("SPARK", "SELECT 4")], false),
            200,
        )
        .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    }

    #[test]
    fn bad_definitions_are_refused() {
        let err = new_view_metadata(&def(&[], false), "/w", 1).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
        let err =
            new_view_metadata(&def(&[("spark", "a"), ("SPARK", "b")], false), "/w", 1).unwrap_err();
        assert!(err.to_string().contains("dialect 'spark'"), "{err}");
        let mut d = def(&[("spark", "a")], false);
        d.properties.insert(VERSION_HISTORY_SIZE.into(), "0".into());
        assert!(new_view_metadata(&d, "/w", 1).is_err());
    }
}
