//! The embedded default catalog: a SQL catalog in a SQLite file, laid out exactly as Java's
//! `JdbcCatalog` (schema version V1) lays it out, so that Java, PyIceberg's `SqlCatalog`
//! and icefloe can all open the same file:
//!
//! - `iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
//!   previous_metadata_location, iceberg_type)`: one row per table (`iceberg_type` `TABLE`,
//!   or NULL as PyIceberg and Java's V0 schema write it) or view (`VIEW`); the primary key
//!   is (catalog_name, table_namespace, table_name), so a table and a view never share a name;
//! - `iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)`.
//!
//! Namespaces are their levels joined by `.`. A namespace exists when it has property rows
//! (creating one always writes the reserved property `exists=true`, as Java does, so it
//! survives the removal of every other property) or when a table, view or namespace below
//! it does. Every row is scoped by `catalog_name`, so one file may hold several catalogs.
//!
//! Commits are a check-and-put on `metadata_location` in one `BEGIN IMMEDIATE`
//! transaction: the update only matches the row that still points at the base.
//! Concurrent writers (threads with their own catalog, and processes) wait on SQLite's
//! lock for up to the busy timeout instead of failing.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use super::metadata_file::{
    delete_removed_metadata_files, drop_table_data, drop_view_metadata, write_table_metadata,
    write_view_metadata,
};
use super::{Catalog, Namespace, PurgeResult, PurgeScope, TableIdent, TableState, ViewState};
use crate::error::{Error, Result};
use crate::io::{local_path, FileIO};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

/// How long a writer waits for another connection's lock before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The reserved namespace property that marks a namespace as existing (Java's
/// `NAMESPACE_EXISTS_PROPERTY`); hidden from the namespace's properties.
const NAMESPACE_EXISTS_PROPERTY: &str = "exists";

// Java 1.11 `JdbcUtil`: the V0 table, then the V1 upgrade that adds `iceberg_type`.
const CREATE_TABLES_SQL: &str = "CREATE TABLE iceberg_tables(\
    catalog_name VARCHAR(255) NOT NULL,\
    table_namespace VARCHAR(255) NOT NULL,\
    table_name VARCHAR(255) NOT NULL,\
    metadata_location VARCHAR(1000),\
    previous_metadata_location VARCHAR(1000),\
    PRIMARY KEY (catalog_name, table_namespace, table_name))";
const ADD_RECORD_TYPE_SQL: &str = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)";
const CREATE_NAMESPACE_PROPERTIES_SQL: &str = "CREATE TABLE iceberg_namespace_properties(\
    catalog_name VARCHAR(255) NOT NULL,\
    namespace VARCHAR(255) NOT NULL,\
    property_key VARCHAR(255),\
    property_value VARCHAR(1000),\
    PRIMARY KEY (catalog_name, namespace, property_key))";

/// Tables and views share `iceberg_tables`; they differ by `iceberg_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Table,
    View,
}

impl Kind {
    /// The rows of this kind. Rows without a type were written by PyIceberg or by a V0
    /// Java catalog, which know only tables.
    fn filter(self) -> &'static str {
        match self {
            Kind::Table => "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)",
            Kind::View => "iceberg_type = 'VIEW'",
        }
    }

    fn record_type(self) -> &'static str {
        match self {
            Kind::Table => "TABLE",
            Kind::View => "VIEW",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Kind::Table => "table",
            Kind::View => "view",
        }
    }

    fn missing(self, ident: &TableIdent) -> Error {
        match self {
            Kind::Table => Error::NoSuchTable {
                table: ident.to_string(),
            },
            Kind::View => Error::NoSuchView {
                view: ident.to_string(),
            },
        }
    }
}

/// The SQLite file named by a catalog URI: SQLAlchemy's `sqlite:///relative.db` and
/// `sqlite:////absolute.db` (as PyIceberg takes them), Java's `jdbc:sqlite:path`, a
/// `file:` URI or a plain path; `:memory:` (in any of these forms) is a private
/// in-memory database.
pub fn sqlite_path(uri: &str) -> Result<String> {
    let path = if let Some(rest) = uri.strip_prefix("sqlite://") {
        // sqlite:///x is the relative path x; sqlite:////x the absolute path /x
        rest.strip_prefix('/').ok_or_else(|| {
            Error::invalid_argument(format!(
                "'{uri}' is not a SQLite URI: expected sqlite:///relative/path or sqlite:////absolute/path"
            ))
        })?
    } else if let Some(rest) = uri.strip_prefix("jdbc:sqlite:") {
        local_path(rest)
    } else if uri.contains("://") && !uri.starts_with("file:") {
        return Err(Error::unsupported(format!(
            "'{uri}': only SQLite catalogs are supported (sqlite:///path or jdbc:sqlite:path)"
        )));
    } else {
        local_path(uri)
    };
    if path.is_empty() {
        return Err(Error::invalid_argument(format!(
            "'{uri}' names no SQLite file"
        )));
    }
    Ok(path.to_string())
}

/// A catalog in a SQLite database. One connection per instance: threads that want to
/// commit concurrently may each open their own instance on the same file.
pub struct SqlCatalog {
    name: String,
    warehouse: String,
    db: String,
    io: Arc<dyn FileIO>,
    conn: Mutex<Connection>,
    /// Tests: make the next swap fail at its final COMMIT, as a lost connection would.
    #[cfg(test)]
    fail_at_commit: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for SqlCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlCatalog")
            .field("name", &self.name)
            .field("db", &self.db)
            .field("warehouse", &self.warehouse)
            .finish()
    }
}

fn db_error(db: &str, e: rusqlite::Error) -> Error {
    Error::io(db, std::io::Error::other(e))
}

fn is_constraint_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation)
}

/// A namespace as stored: its levels joined by `.`. Levels must be non-empty and must not
/// contain `.`, or the stored name would read back as other levels.
fn namespace_string(namespace: &[String]) -> Result<String> {
    if namespace.is_empty() {
        return Err(Error::invalid_argument(
            "the empty namespace cannot be used here",
        ));
    }
    if let Some(bad) = namespace.iter().find(|l| l.is_empty() || l.contains('.')) {
        return Err(Error::invalid_argument(format!(
            "invalid namespace level '{bad}' in {namespace:?}: levels must be non-empty and \
             must not contain '.'"
        )));
    }
    Ok(namespace.join("."))
}

fn namespace_levels(stored: &str) -> Namespace {
    if stored.is_empty() {
        Vec::new()
    } else {
        stored.split('.').map(str::to_string).collect()
    }
}

fn display_namespace(namespace: &[String]) -> String {
    namespace.join(".")
}

impl SqlCatalog {
    /// Opens (creating if needed) the catalog `name` in the SQLite database at `uri` (see
    /// [`sqlite_path`]), with new tables under `warehouse`.
    pub fn open(name: &str, uri: &str, warehouse: &str, io: Arc<dyn FileIO>) -> Result<Self> {
        Self::open_with_timeout(name, uri, warehouse, io, DEFAULT_BUSY_TIMEOUT)
    }

    /// As [`SqlCatalog::open`], with how long to wait for other writers' locks.
    pub fn open_with_timeout(
        name: &str,
        uri: &str,
        warehouse: &str,
        io: Arc<dyn FileIO>,
        busy_timeout: Duration,
    ) -> Result<Self> {
        if warehouse.is_empty() {
            return Err(Error::invalid_argument(
                "a SQL catalog needs a warehouse location",
            ));
        }
        let db = sqlite_path(uri)?;
        if db != ":memory:" {
            if let Some(parent) = Path::new(&db)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
            {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(&db, e))?;
            }
        }
        let mut conn = Connection::open(&db).map_err(|e| db_error(&db, e))?;
        conn.busy_timeout(busy_timeout)
            .map_err(|e| db_error(&db, e))?;
        init_schema(&mut conn).map_err(|e| db_error(&db, e))?;
        Ok(SqlCatalog {
            name: name.to_string(),
            warehouse: warehouse.trim_end_matches('/').to_string(),
            db,
            io,
            conn: Mutex::new(conn),
            #[cfg(test)]
            fail_at_commit: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The SQLite file (or `:memory:`).
    pub fn database(&self) -> &str {
        &self.db
    }

    /// The warehouse location, without a trailing slash.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // a panic while holding the lock cannot leave a transaction open (dropping a
        // rusqlite Transaction rolls it back), so the connection is still good
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        db_error(&self.db, e)
    }

    fn namespace_exists_in(&self, conn: &Connection, ns: &str) -> Result<bool> {
        // an exact prefix test rather than Java's LIKE, which SQLite compares without case
        let in_tables: Option<i64> = conn
            .prepare_cached(
                "SELECT 1 FROM iceberg_tables WHERE catalog_name = ?1 AND \
                 (table_namespace = ?2 OR substr(table_namespace, 1, length(?2) + 1) = ?2 || '.') \
                 LIMIT 1",
            )
            .and_then(|mut s| s.query_row(params![self.name, ns], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        if in_tables.is_some() {
            return Ok(true);
        }
        let in_props: Option<i64> = conn
            .prepare_cached(
                "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND \
                 (namespace = ?2 OR substr(namespace, 1, length(?2) + 1) = ?2 || '.') LIMIT 1",
            )
            .and_then(|mut s| s.query_row(params![self.name, ns], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        Ok(in_props.is_some())
    }

    fn require_namespace(&self, conn: &Connection, namespace: &[String]) -> Result<String> {
        let ns = namespace_string(namespace)?;
        if self.namespace_exists_in(conn, &ns)? {
            Ok(ns)
        } else {
            Err(Error::NoSuchNamespace {
                namespace: display_namespace(namespace),
            })
        }
    }

    /// Every namespace named by a row of this catalog, as stored.
    fn all_namespaces(&self, conn: &Connection) -> Result<Vec<Namespace>> {
        let mut stmt = conn
            .prepare_cached(
                "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1 \
                 UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![self.name], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(namespace_levels(&row.map_err(|e| self.err(e))?));
        }
        Ok(out)
    }

    /// The namespaces one level below `parent` named by any row.
    fn children(&self, conn: &Connection, parent: &[String]) -> Result<Vec<Namespace>> {
        let depth = parent.len() + 1;
        let children: BTreeSet<Namespace> = self
            .all_namespaces(conn)?
            .into_iter()
            .filter(|ns| ns.len() >= depth && ns[..parent.len()] == *parent)
            .map(|mut ns| {
                ns.truncate(depth);
                ns
            })
            .collect();
        Ok(children.into_iter().collect())
    }

    fn stored_properties(&self, conn: &Connection, ns: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = conn
            .prepare_cached(
                "SELECT property_key, property_value FROM iceberg_namespace_properties \
                 WHERE catalog_name = ?1 AND namespace = ?2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![self.name, ns], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            if let (Some(k), v) = row.map_err(|e| self.err(e))? {
                out.push((k, v.unwrap_or_default()));
            }
        }
        Ok(out)
    }

    fn insert_property(&self, conn: &Connection, ns: &str, key: &str, value: &str) -> Result<()> {
        conn.prepare_cached(
            "INSERT INTO iceberg_namespace_properties \
             (catalog_name, namespace, property_key, property_value) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute(params![self.name, ns, key, value]))
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn default_namespace_location(&self, namespace: &[String]) -> String {
        format!("{}/{}", self.warehouse, namespace.join("/"))
    }

    // --- tables and views: rows of iceberg_tables ---

    /// The kind of the row named `ident`, if any.
    fn row_kind(&self, conn: &Connection, ns: &str, name: &str) -> Result<Option<Kind>> {
        let t: Option<Option<String>> = conn
            .prepare_cached(
                "SELECT iceberg_type FROM iceberg_tables WHERE catalog_name = ?1 AND \
                 table_namespace = ?2 AND table_name = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![self.name, ns, name], |r| r.get(0))
                    .optional()
            })
            .map_err(|e| self.err(e))?;
        Ok(t.map(|t| match t.as_deref() {
            Some("VIEW") => Kind::View,
            _ => Kind::Table,
        }))
    }

    fn already_exists(ident: &TableIdent, found: Kind) -> Error {
        Error::already_exists(format!(
            "{} already exists: {ident}",
            match found {
                Kind::Table => "Table",
                Kind::View => "View",
            }
        ))
    }

    /// The metadata location of the `kind` row named `ident`.
    fn pointer(&self, conn: &Connection, kind: Kind, ident: &TableIdent) -> Result<String> {
        let ns = namespace_string(&ident.namespace)?;
        let sql = format!(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ?1 AND \
             table_namespace = ?2 AND table_name = ?3 AND {}",
            kind.filter()
        );
        let row: Option<Option<String>> = conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_row(params![self.name, ns, ident.name], |r| r.get(0))
                    .optional()
            })
            .map_err(|e| self.err(e))?;
        match row {
            None => Err(kind.missing(ident)),
            Some(None) => Err(Error::invalid_metadata(
                "metadata_location",
                format!("{} {ident} has no metadata location", kind.word()),
            )
            .in_file(&self.db)),
            Some(Some(loc)) => Ok(loc),
        }
    }

    fn list(&self, kind: Kind, namespace: &[String]) -> Result<Vec<TableIdent>> {
        let conn = self.conn();
        let ns = self.require_namespace(&conn, namespace)?;
        let sql = format!(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = ?1 AND \
             table_namespace = ?2 AND {} ORDER BY table_name",
            kind.filter()
        );
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![self.name, ns], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(TableIdent::new(
                namespace.to_vec(),
                row.map_err(|e| self.err(e))?,
            ));
        }
        Ok(out)
    }

    fn exists(&self, kind: Kind, ident: &TableIdent) -> Result<bool> {
        let conn = self.conn();
        match self.pointer(&conn, kind, ident) {
            Ok(_) => Ok(true),
            Err(Error::NoSuchTable { .. } | Error::NoSuchView { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn current_location(&self, kind: Kind, ident: &TableIdent) -> Result<String> {
        let conn = self.conn();
        self.pointer(&conn, kind, ident)
    }

    fn rename(&self, kind: Kind, from: &TableIdent, to: &TableIdent) -> Result<()> {
        if from == to {
            return Ok(());
        }
        let from_ns = namespace_string(&from.namespace)?;
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        self.pointer(&tx, kind, from)?;
        let to_ns = self.require_namespace(&tx, &to.namespace)?;
        if let Some(found) = self.row_kind(&tx, &to_ns, &to.name)? {
            return Err(Self::already_exists(to, found));
        }
        let sql = format!(
            "UPDATE iceberg_tables SET table_namespace = ?1, table_name = ?2 \
             WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 AND {}",
            kind.filter()
        );
        let updated = tx
            .prepare_cached(&sql)
            .and_then(|mut s| s.execute(params![to_ns, to.name, self.name, from_ns, from.name]))
            .map_err(|e| {
                if is_constraint_violation(&e) {
                    Self::already_exists(to, kind)
                } else {
                    self.err(e)
                }
            })?;
        if updated == 0 {
            return Err(kind.missing(from));
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// Deletes the row of `kind` named `ident`.
    fn drop_row(&self, kind: Kind, ident: &TableIdent) -> Result<()> {
        let ns = namespace_string(&ident.namespace)?;
        let sql = format!(
            "DELETE FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 \
             AND table_name = ?3 AND {}",
            kind.filter()
        );
        let conn = self.conn();
        let deleted = conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.execute(params![self.name, ns, ident.name]))
            .map_err(|e| self.err(e))?;
        if deleted == 0 {
            return Err(kind.missing(ident));
        }
        Ok(())
    }

    /// Points `ident` at `new_location` if it still points at `base` (`None`: inserts the
    /// row, which must not exist, in an existing namespace). Only an error of the final
    /// COMMIT leaves the outcome unknown; every other error means nothing changed.
    fn swap(
        &self,
        kind: Kind,
        ident: &TableIdent,
        base: Option<&str>,
        new_location: &str,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        match base {
            None => {
                let ns = self.require_namespace(&tx, &ident.namespace)?;
                if let Some(found) = self.row_kind(&tx, &ns, &ident.name)? {
                    return Err(Self::already_exists(ident, found));
                }
                tx.prepare_cached(
                    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, \
                     metadata_location, previous_metadata_location, iceberg_type) \
                     VALUES (?1, ?2, ?3, ?4, NULL, ?5)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        self.name,
                        ns,
                        ident.name,
                        new_location,
                        kind.record_type()
                    ])
                })
                .map_err(|e| {
                    if is_constraint_violation(&e) {
                        Self::already_exists(ident, kind)
                    } else {
                        self.err(e)
                    }
                })?;
            }
            Some(base) => {
                let ns = namespace_string(&ident.namespace)?;
                let sql = format!(
                    "UPDATE iceberg_tables SET metadata_location = ?1, \
                     previous_metadata_location = ?2 WHERE catalog_name = ?3 AND \
                     table_namespace = ?4 AND table_name = ?5 AND metadata_location = ?6 AND {}",
                    kind.filter()
                );
                let updated = tx
                    .prepare_cached(&sql)
                    .and_then(|mut s| {
                        s.execute(params![new_location, base, self.name, ns, ident.name, base])
                    })
                    .map_err(|e| self.err(e))?;
                if updated != 1 {
                    let why = match self.pointer(&tx, kind, ident) {
                        Ok(current) => format!("it now points at {current}"),
                        Err(e) => e.to_string(),
                    };
                    return Err(Error::commit_failed(format!(
                        "{} {ident} has changed since {base}: {why}",
                        kind.word()
                    )));
                }
            }
        }
        #[cfg(test)]
        if self
            .fail_at_commit
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            // dropping the transaction rolls it back; the caller cannot know that
            return Err(Error::CommitStateUnknown {
                message: "injected failure at COMMIT".to_string(),
            });
        }
        tx.commit().map_err(|e| Error::CommitStateUnknown {
            message: format!(
                "committing {} {ident} to {new_location} in {}: {e}",
                kind.word(),
                self.db
            ),
        })
    }

    /// Runs a swap for a metadata file that was just written: on any error but an unknown
    /// outcome the file is unreferenced, so it is deleted.
    fn swap_written(
        &self,
        kind: Kind,
        ident: &TableIdent,
        base: Option<&str>,
        new_location: &str,
    ) -> Result<()> {
        match self.swap(kind, ident, base, new_location) {
            Ok(()) => Ok(()),
            Err(e @ Error::CommitStateUnknown { .. }) => Err(e),
            Err(e) => {
                let _ = self.io.delete(new_location);
                Err(e)
            }
        }
    }
}

fn init_schema(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let has_table = |name: &str| -> rusqlite::Result<bool> {
        tx.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
    };
    if !has_table("iceberg_tables")? {
        tx.execute(CREATE_TABLES_SQL, [])?;
    }
    if !has_table("iceberg_namespace_properties")? {
        tx.execute(CREATE_NAMESPACE_PROPERTIES_SQL, [])?;
    }
    // Java upgrades to V1 only when asked (jdbc.schema-version=V1); icefloe always does,
    // as it supports views. The added nullable column is invisible to PyIceberg and to V0
    // readers, and Java reads NULL as a table.
    let has_type = {
        let mut stmt = tx.prepare("PRAGMA table_info(iceberg_tables)")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(1))?;
        let mut found = false;
        for n in names {
            found |= n?.eq_ignore_ascii_case("iceberg_type");
        }
        found
    };
    if !has_type {
        tx.execute(ADD_RECORD_TYPE_SQL, [])?;
    }
    tx.commit()
}

impl Catalog for SqlCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn io(&self) -> Arc<dyn FileIO> {
        Arc::clone(&self.io)
    }

    /// `<warehouse>/<levels>/<name>`, as Java's `JdbcCatalog`, but only for identifiers
    /// whose parts are safe folder names ([`super::check_location_ident`]): Java would place
    /// `db.../x` outside the warehouse.
    fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        namespace_string(&ident.namespace)?;
        super::check_location_ident(ident)?;
        Ok(format!(
            "{}/{}",
            self.default_namespace_location(&ident.namespace),
            ident.name
        ))
    }

    fn create_namespace(
        &self,
        namespace: &[String],
        properties: &[(String, String)],
    ) -> Result<()> {
        let ns = namespace_string(namespace)?;
        // a namespace without a `location` property has the default one, derived from its
        // levels: they must be safe folder names
        if !properties.iter().any(|(k, _)| k == "location") {
            super::check_location_namespace(namespace)?;
        }
        if properties
            .iter()
            .any(|(k, _)| k == NAMESPACE_EXISTS_PROPERTY)
        {
            return Err(Error::invalid_argument(format!(
                "cannot set reserved property: {NAMESPACE_EXISTS_PROPERTY}"
            )));
        }
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        if self.namespace_exists_in(&tx, &ns)? {
            return Err(Error::already_exists(format!(
                "Namespace already exists: {ns}"
            )));
        }
        for (k, v) in properties {
            self.insert_property(&tx, &ns, k, v)?;
        }
        self.insert_property(&tx, &ns, NAMESPACE_EXISTS_PROPERTY, "true")?;
        tx.commit().map_err(|e| self.err(e))
    }

    fn list_namespaces(&self, parent: &[String]) -> Result<Vec<Namespace>> {
        let conn = self.conn();
        if !parent.is_empty() {
            self.require_namespace(&conn, parent)?;
        }
        self.children(&conn, parent)
    }

    fn namespace_exists(&self, namespace: &[String]) -> Result<bool> {
        let ns = namespace_string(namespace)?;
        let conn = self.conn();
        self.namespace_exists_in(&conn, &ns)
    }

    /// The stored properties without the reserved `exists`, plus `location` (the default
    /// `<warehouse>/<levels>`) when none is stored, as Java's `loadNamespaceMetadata` —
    /// except for a namespace (made by another catalog) whose levels are not safe folder
    /// names, which has no default location.
    fn namespace_properties(&self, namespace: &[String]) -> Result<Vec<(String, String)>> {
        let conn = self.conn();
        let ns = self.require_namespace(&conn, namespace)?;
        let mut props: Vec<(String, String)> = self
            .stored_properties(&conn, &ns)?
            .into_iter()
            .filter(|(k, _)| k != NAMESPACE_EXISTS_PROPERTY)
            .collect();
        if !props.iter().any(|(k, _)| k == "location")
            && super::check_location_namespace(namespace).is_ok()
        {
            props.push((
                "location".to_string(),
                self.default_namespace_location(namespace),
            ));
        }
        props.sort();
        Ok(props)
    }

    fn update_namespace_properties(
        &self,
        namespace: &[String],
        removals: &[String],
        updates: &[(String, String)],
    ) -> Result<()> {
        if let Some(k) = removals
            .iter()
            .chain(updates.iter().map(|(k, _)| k))
            .find(|k| *k == NAMESPACE_EXISTS_PROPERTY)
        {
            return Err(Error::invalid_argument(format!(
                "cannot change reserved property: {k}"
            )));
        }
        if let Some(k) = removals
            .iter()
            .find(|r| updates.iter().any(|(k, _)| k == *r))
        {
            return Err(Error::invalid_argument(format!(
                "property '{k}' is both removed and updated"
            )));
        }
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let ns = self.require_namespace(&tx, namespace)?;
        {
            let mut delete = tx
                .prepare_cached(
                    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND \
                     namespace = ?2 AND property_key = ?3",
                )
                .map_err(|e| self.err(e))?;
            for k in removals.iter().chain(updates.iter().map(|(k, _)| k)) {
                delete
                    .execute(params![self.name, ns, k])
                    .map_err(|e| self.err(e))?;
            }
        }
        for (k, v) in updates {
            self.insert_property(&tx, &ns, k, v)?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    fn drop_namespace(&self, namespace: &[String]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let ns = self.require_namespace(&tx, namespace)?;
        let not_empty = |what: String| Error::NamespaceNotEmpty {
            namespace: format!("{ns} (contains {what})"),
        };
        let children = self.children(&tx, namespace)?;
        if !children.is_empty() {
            return Err(not_empty(format!("{} namespace(s)", children.len())));
        }
        let rows: i64 = tx
            .query_row(
                "SELECT count(*) FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2",
                params![self.name, ns],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        if rows > 0 {
            return Err(not_empty(format!("{rows} table(s) or view(s)")));
        }
        tx.execute(
            "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND namespace = ?2",
            params![self.name, ns],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    fn list_tables(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        self.list(Kind::Table, namespace)
    }

    fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        self.exists(Kind::Table, ident)
    }

    fn load_table(&self, ident: &TableIdent) -> Result<TableState> {
        let location = self.current_location(Kind::Table, ident)?;
        let metadata = TableMetadata::read(&*self.io, &location)?;
        Ok(TableState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        })
    }

    fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<TableState> {
        // read first: a file that is not table metadata is not registered
        let metadata = TableMetadata::read(&*self.io, metadata_location)?;
        self.swap(Kind::Table, ident, None, metadata_location)?;
        Ok(TableState {
            metadata_location: metadata_location.to_string(),
            metadata: Arc::new(metadata),
        })
    }

    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.rename(Kind::Table, from, to)
    }

    fn drop_table(&self, ident: &TableIdent) -> Result<()> {
        self.drop_row(Kind::Table, ident)
    }

    fn purge_table(&self, ident: &TableIdent, scope: PurgeScope) -> Result<PurgeResult> {
        // as Java: read what to purge before the row goes; a table whose metadata cannot
        // be read is still dropped, without purging
        let location = self.current_location(Kind::Table, ident)?;
        let last = TableMetadata::read(&*self.io, &location).ok();
        self.drop_row(Kind::Table, ident)?;
        Ok(match last {
            Some(metadata) => drop_table_data(&*self.io, &metadata, &location, scope),
            None => PurgeResult {
                failed: vec![location],
                ..PurgeResult::default()
            },
        })
    }

    fn commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState> {
        namespace_string(&ident.namespace)?;
        let base_location = base.map(|b| b.metadata_location.as_str());
        let location = write_table_metadata(&*self.io, &metadata, base_location)?;
        self.swap_written(Kind::Table, ident, base_location, &location)?;
        if let Some(base) = base {
            delete_removed_metadata_files(&*self.io, &base.metadata, &metadata);
        }
        Ok(TableState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        })
    }

    fn list_views(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        self.list(Kind::View, namespace)
    }

    fn view_exists(&self, ident: &TableIdent) -> Result<bool> {
        self.exists(Kind::View, ident)
    }

    fn load_view(&self, ident: &TableIdent) -> Result<ViewState> {
        let location = self.current_location(Kind::View, ident)?;
        let metadata = ViewMetadata::read(&*self.io, &location)?;
        Ok(ViewState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        })
    }

    fn rename_view(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.rename(Kind::View, from, to)
    }

    /// Removes the view and, as Java's `dropView`, its current metadata file (unless
    /// `gc.enabled` is false).
    fn drop_view(&self, ident: &TableIdent) -> Result<()> {
        let location = self.current_location(Kind::View, ident)?;
        let last = ViewMetadata::read(&*self.io, &location).ok();
        self.drop_row(Kind::View, ident)?;
        if let Some(metadata) = last {
            drop_view_metadata(&*self.io, &metadata, &location);
        }
        Ok(())
    }

    fn commit_view(
        &self,
        ident: &TableIdent,
        base: Option<&ViewState>,
        metadata: ViewMetadata,
    ) -> Result<ViewState> {
        namespace_string(&ident.namespace)?;
        let base_location = base.map(|b| b.metadata_location.as_str());
        let location = write_view_metadata(&*self.io, &metadata, base_location)?;
        self.swap_written(Kind::View, ident, base_location, &location)?;
        Ok(ViewState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        })
    }
}

#[cfg(test)]
#[path = "sql_tests.rs"]
mod tests;
