//! Catalogs: where a table's (or view's) current metadata file is found, and the one
//! atomic step of every commit: swapping that pointer.
//!
//! A [`Catalog`] stores names and pointers only. What the next metadata *is* (applying
//! schema changes, adding snapshots, validating against concurrent writers) is decided by
//! `commit/`; the catalog writes the new metadata file and swaps the pointer if, and only
//! if, the table still points where the writer started from ("check-and-put").

pub mod filesystem;
pub mod load;
pub mod metadata_file;
#[cfg(feature = "rest")]
pub mod rest;
pub mod sql;
#[cfg(test)]
pub(crate) mod testing;

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;
pub use metadata_file::{PurgeResult, PurgeScope};

/// A namespace: one or more levels, e.g. `["db"]` or `["prod", "sales"]`.
pub type Namespace = Vec<String>;

/// The name of a table or view: a namespace and a name within it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    pub namespace: Namespace,
    pub name: String,
}

impl TableIdent {
    pub fn new(namespace: Namespace, name: impl Into<String>) -> TableIdent {
        TableIdent {
            namespace,
            name: name.into(),
        }
    }

    /// Parses a dotted name (`"db.table"`, `"a.b.table"`): the last part is the name, the
    /// rest the namespace. Names whose parts contain dots must be built with [`TableIdent::new`].
    pub fn parse(dotted: &str) -> Result<TableIdent> {
        let parts: Vec<&str> = dotted.split('.').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(Error::invalid_argument(format!(
                "'{dotted}' is not a table name of the form 'namespace.name'"
            )));
        }
        let (name, namespace) = parts
            .split_last()
            .ok_or_else(|| Error::invalid_argument(format!("'{dotted}' is not a table name")))?;
        Ok(TableIdent::new(
            namespace.iter().map(|s| s.to_string()).collect(),
            *name,
        ))
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for level in &self.namespace {
            write!(f, "{level}.")?;
        }
        write!(f, "{}", self.name)
    }
}

/// Checks that `part` (a namespace level or a table or view name) can be used as one
/// folder name of a location derived from it: not empty, not `.` or `..`, and without `/`,
/// `\` or NUL. Anything else could make `<warehouse>/<levels>/<name>` point outside the
/// warehouse (`..`), at its parent folder (`.`), at another identifier's folder (`a/b`), or
/// be cut short by a system call (NUL); `\` separates folders on Windows file systems.
/// Catalogs call this wherever they derive a location from an identifier, never for a
/// location given explicitly or read from metadata.
pub fn check_location_part(part: &str, identifier: &str) -> Result<()> {
    let why = if part.is_empty() {
        "an empty name"
    } else if part == "." || part == ".." {
        "'.' and '..' name other folders"
    } else if part.contains('/') || part.contains('\\') {
        "'/' and '\\' separate folders"
    } else if part.contains('\0') {
        "NUL ends a file name"
    } else {
        return Ok(());
    };
    Err(Error::InvalidIdentifier {
        identifier: identifier.to_string(),
        message: format!(
            "'{}' cannot be used as a folder name of a location ({why})",
            part.escape_debug()
        ),
    })
}

/// [`check_location_part`] for every namespace level (a namespace must have one).
pub fn check_location_namespace(namespace: &[String]) -> Result<()> {
    let shown = namespace.join(".");
    if namespace.is_empty() {
        return Err(Error::InvalidIdentifier {
            identifier: shown,
            message: "the empty namespace has no location".to_string(),
        });
    }
    namespace
        .iter()
        .try_for_each(|level| check_location_part(level, &shown))
}

/// [`check_location_part`] for every level of the identifier's namespace and its name.
pub fn check_location_ident(ident: &TableIdent) -> Result<()> {
    let shown = ident.to_string();
    if ident.namespace.is_empty() {
        return Err(Error::InvalidIdentifier {
            identifier: shown,
            message: "an identifier without a namespace has no location".to_string(),
        });
    }
    ident
        .namespace
        .iter()
        .chain(std::iter::once(&ident.name))
        .try_for_each(|part| check_location_part(part, &shown))
}

/// A table as the catalog last saw it: the location of its current metadata file and the
/// metadata read from it. Commits name their base by this value.
#[derive(Debug, Clone)]
pub struct TableState {
    pub metadata_location: String,
    pub metadata: Arc<TableMetadata>,
}

/// A view as the catalog last saw it.
#[derive(Debug, Clone)]
pub struct ViewState {
    pub metadata_location: String,
    pub metadata: Arc<ViewMetadata>,
}

/// One table's part of a multi-table commit ([`Catalog::commit_tables`]): the table moves
/// from `base` (`None`: it must not exist yet) to `metadata`.
#[derive(Debug, Clone)]
pub struct TableCommit {
    pub ident: TableIdent,
    pub base: Option<TableState>,
    pub metadata: TableMetadata,
}

/// A catalog of namespaces, tables and views.
///
/// Every implementation must make [`Catalog::commit_table`] and [`Catalog::commit_view`]
/// atomic: either the pointer moves from exactly `base` to the new file, or nothing
/// changes and the error says which (`CommitFailed` when another writer won, so the
/// caller may retry; `CommitStateUnknown` when the outcome cannot be known).
pub trait Catalog: Send + Sync {
    /// The catalog's name (the `catalog_name` column of SQL catalogs).
    fn name(&self) -> &str;

    /// How this catalog's tables read and write files.
    fn io(&self) -> Arc<dyn FileIO>;

    /// Where a new table is placed when its creator gives no location.
    fn default_table_location(&self, ident: &TableIdent) -> Result<String>;

    // --- namespaces ---

    /// Creates a namespace; `AlreadyExists` if it exists.
    fn create_namespace(&self, namespace: &[String], properties: &[(String, String)])
        -> Result<()>;
    /// The namespaces directly under `parent` (all top-level ones when `parent` is empty).
    fn list_namespaces(&self, parent: &[String]) -> Result<Vec<Namespace>>;
    fn namespace_exists(&self, namespace: &[String]) -> Result<bool>;
    /// The namespace's properties; `NoSuchNamespace` if it does not exist.
    fn namespace_properties(&self, namespace: &[String]) -> Result<Vec<(String, String)>>;
    /// Removes `removals` and sets `updates` in one step.
    fn update_namespace_properties(
        &self,
        namespace: &[String],
        removals: &[String],
        updates: &[(String, String)],
    ) -> Result<()>;
    /// Drops an empty namespace; `NamespaceNotEmpty` if it holds tables or views.
    fn drop_namespace(&self, namespace: &[String]) -> Result<()>;

    // --- tables ---

    fn list_tables(&self, namespace: &[String]) -> Result<Vec<TableIdent>>;
    fn table_exists(&self, ident: &TableIdent) -> Result<bool>;
    /// Reads the table's current metadata; `NoSuchTable` if it does not exist.
    fn load_table(&self, ident: &TableIdent) -> Result<TableState>;
    /// Adds an existing metadata file to the catalog under `ident`.
    fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<TableState>;
    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()>;
    /// Removes the table from the catalog; its files stay.
    fn drop_table(&self, ident: &TableIdent) -> Result<()>;
    /// Removes the table from the catalog and deletes the files its metadata reaches
    /// (data, deletes, manifests, lists, statistics, metadata) that `scope` allows; see
    /// [`metadata_file::drop_table_data`].
    fn purge_table(&self, ident: &TableIdent, scope: PurgeScope) -> Result<PurgeResult>;
    /// Asks the catalog how a new table starts, before anything is written or created (the
    /// REST spec's staged create, `stage-create: true`): the metadata it would give the
    /// table (its location, the properties it adds). The table is created later by a
    /// [`Catalog::commit_table`] without a base, which fails if the name was taken
    /// meanwhile. `None` (the default): the catalog has no say, the creator builds the
    /// metadata itself. `properties` may hold `format-version`.
    fn stage_create(
        &self,
        _ident: &TableIdent,
        _schema: &Schema,
        _spec: &PartitionSpec,
        _sort_order: &SortOrder,
        _location: Option<&str>,
        _properties: &[(String, String)],
    ) -> Result<Option<TableMetadata>> {
        Ok(None)
    }
    /// Writes `metadata` as the table's next metadata file and points the table at it, if
    /// the table still points at `base` (`None`: the table must not exist yet, i.e. create).
    fn commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState>;

    /// Commits several tables at once: every table moves from its base to its new
    /// metadata, or none does (`CommitFailed` when a base is stale, `CommitStateUnknown`
    /// when the outcome cannot be known). A table may appear once. Catalogs that cannot
    /// swap several pointers atomically refuse with `Unsupported`, which is the default.
    fn commit_tables(&self, commits: Vec<TableCommit>) -> Result<()> {
        let names: Vec<String> = commits.iter().map(|c| c.ident.to_string()).collect();
        Err(Error::unsupported(format!(
            "catalog {}: committing several tables atomically ({}) is not supported by this \
             catalog (the REST catalog supports it)",
            self.name(),
            names.join(", ")
        )))
    }

    // --- views ---

    fn list_views(&self, namespace: &[String]) -> Result<Vec<TableIdent>>;
    fn view_exists(&self, ident: &TableIdent) -> Result<bool>;
    fn load_view(&self, ident: &TableIdent) -> Result<ViewState>;
    fn rename_view(&self, from: &TableIdent, to: &TableIdent) -> Result<()>;
    fn drop_view(&self, ident: &TableIdent) -> Result<()>;
    /// As [`Catalog::commit_table`], for views.
    fn commit_view(
        &self,
        ident: &TableIdent,
        base: Option<&ViewState>,
        metadata: ViewMetadata,
    ) -> Result<ViewState>;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn table_ident_parses_and_prints() {
        let t = TableIdent::parse("a.b.t").unwrap();
        assert_eq!(t.namespace, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(t.name, "t");
        assert_eq!(t.to_string(), "a.b.t");
        assert!(TableIdent::parse("t").is_err());
        assert!(TableIdent::parse("a..t").is_err());
    }
}
