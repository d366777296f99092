//! Transactions: several changes to one table committed as one new metadata file, with
//! optimistic retries ("Commit Conflict Resolution and Retry").
//!
//! Each attempt starts from the table as the catalog has it, re-applies every pending
//! change in order (each one re-validates against that base: appends always apply, file
//! removals check the files are still live, metadata changes check their requirements),
//! and asks the catalog to swap the pointer from that base. When another writer won
//! (`CommitFailed`), the attempt is retried with exponential backoff per `commit.retry.*`.
//! When the commit finally fails, the files the attempts wrote are deleted, and so are the
//! files the caller wrote for the transaction and handed over with
//! [`Transaction::own_files`] (the data and delete files of an append, an overwrite, a
//! row-level delete) — except after `CommitStateUnknown`, when they may be part of the
//! table: they are kept, and the error says so.

use std::sync::Arc;
use std::time::Instant;

use super::builder::{
    format_version_property, MetadataBuilder, DEFAULT_FORMAT_VERSION, RESERVED_PROPERTIES,
};
use super::properties::RetryPolicy;
use super::schema_change::SchemaChange;
use super::snapshot::SnapshotProducer;
use super::update::{check_requirements, TableRequirement, TableUpdate};
use crate::catalog::{Catalog, TableCommit, TableIdent, TableState};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::DataFile;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::schema_update::UpdateSchema;
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;

/// One change of a transaction, applied anew to the base of every attempt.
pub trait PendingChange: Send {
    /// Applies the change on top of `builder` (the attempt's base plus the changes before
    /// this one). Files it writes go through `io`.
    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()>;

    /// Called once when the transaction is over: `committed` tells whether the last
    /// attempt's metadata is now the table's. Deletes the files no longer needed.
    fn clean_up(&mut self, _io: &dyn FileIO, _committed: bool) {}
}

/// Metadata updates with the requirements they need of each attempt's base (e.g.
/// `assert-current-schema-id` for a schema change, so that it fails rather than
/// silently applying to a schema it was not made for).
#[derive(Debug, Clone, Default)]
pub struct MetadataChange {
    pub requirements: Vec<TableRequirement>,
    pub updates: Vec<TableUpdate>,
}

impl PendingChange for MetadataChange {
    fn apply(&mut self, _io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        // requirements concern the table as committed, not earlier changes of this transaction
        let base = builder.base().map(|b| b.as_ref());
        check_requirements(&self.requirements, base).map_err(|e| match e {
            // a requirement that no longer holds cannot hold on a retry either
            Error::CommitFailed { message } => Error::validation_failed(message),
            other => other,
        })?;
        builder.apply_all(self.updates.iter().cloned())
    }
}

/// How a transaction starts.
#[derive(Debug, Clone)]
enum Start {
    /// Changes to an existing table.
    Existing,
    /// A new table; fails with `AlreadyExists` if it exists.
    Create(NewTable),
    /// A new table, or a replacement of the existing one that keeps its history.
    CreateOrReplace(NewTable),
}

/// What a new table is made of (see [`MetadataBuilder::new_table`]).
#[derive(Debug, Clone)]
pub struct NewTable {
    pub schema: Schema,
    pub spec: PartitionSpec,
    pub sort_order: SortOrder,
    /// `None`: the catalog's default location for the table.
    pub location: Option<String>,
    pub properties: Vec<(String, String)>,
    /// `None`: the `format-version` property, else v3.
    pub format_version: Option<i32>,
}

impl NewTable {
    pub fn new(schema: Schema) -> NewTable {
        NewTable {
            schema,
            spec: PartitionSpec::unpartitioned(),
            sort_order: SortOrder::unsorted(),
            location: None,
            properties: Vec::new(),
            format_version: None,
        }
    }
}

/// Changes to one table, committed together by [`Transaction::commit`].
pub struct Transaction {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    start: Start,
    /// The base of the first attempt (`None` for a table that is to be created).
    base: Option<TableState>,
    changes: Vec<Box<dyn PendingChange>>,
    /// Files written for this transaction that only it references (see [`Self::own_files`]).
    owned_files: Vec<String>,
    /// Overrides the table's `commit.retry.*` (tests).
    retry: Option<RetryPolicy>,
    /// For a table to be created: what the catalog's staged create answered (asked once,
    /// so that every attempt, and the data files written before the commit, agree on
    /// the location and ids). `Some(None)`: asked, the catalog has no say.
    staged: Option<Option<Arc<TableMetadata>>>,
    /// The format version of a table this transaction creates when neither the new table
    /// nor its `format-version` property names one (see [`Self::default_format_version`]).
    default_format_version: Option<i32>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("ident", &self.ident)
            .field("start", &self.start)
            .field("changes", &self.changes.len())
            .finish()
    }
}

impl Transaction {
    /// A transaction on an existing table, starting from `base` (as loaded).
    pub fn new(catalog: Arc<dyn Catalog>, ident: TableIdent, base: TableState) -> Transaction {
        Transaction {
            catalog,
            ident,
            start: Start::Existing,
            base: Some(base),
            changes: Vec::new(),
            owned_files: Vec::new(),
            retry: None,
            staged: None,
            default_format_version: None,
        }
    }

    /// A transaction on the table as the catalog has it now.
    pub fn load(catalog: Arc<dyn Catalog>, ident: TableIdent) -> Result<Transaction> {
        let base = catalog.load_table(&ident)?;
        Ok(Self::new(catalog, ident, base))
    }

    /// A transaction that creates the table (further changes, e.g. a first append, are
    /// committed with it).
    pub fn create(catalog: Arc<dyn Catalog>, ident: TableIdent, table: NewTable) -> Transaction {
        Transaction {
            catalog,
            ident,
            start: Start::Create(table),
            base: None,
            changes: Vec::new(),
            owned_files: Vec::new(),
            retry: None,
            staged: None,
            default_format_version: None,
        }
    }

    /// A transaction that creates the table, or replaces it keeping its history.
    pub fn create_or_replace(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        table: NewTable,
    ) -> Result<Transaction> {
        let base = match catalog.load_table(&ident) {
            Ok(s) => Some(s),
            Err(Error::NoSuchTable { .. }) => None,
            Err(e) => return Err(e),
        };
        Ok(Transaction {
            catalog,
            ident,
            start: Start::CreateOrReplace(table),
            base,
            changes: Vec::new(),
            owned_files: Vec::new(),
            retry: None,
            staged: None,
            default_format_version: None,
        })
    }

    pub fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The format version of the table when this transaction creates it and neither the
    /// [`NewTable`] nor its `format-version` property names one (an engine's own default,
    /// e.g. Spark's v2 where icefloe's is v3). A replacement keeps the table's version
    /// unless the property names another, as Java's `buildReplacement` does: this default
    /// does not apply to it.
    pub fn default_format_version(mut self, version: i32) -> Self {
        self.default_format_version = Some(version);
        self
    }

    /// The format version a created table gets (`None`: the property, else icefloe's
    /// default).
    fn created_format_version(&self, t: &NewTable) -> Result<Option<i32>> {
        Ok(match t.format_version {
            Some(v) => Some(v),
            None if format_version_property(&t.properties)?.is_some() => None,
            None => self.default_format_version,
        })
    }

    /// Whether the transaction replaces an existing table (create-or-replace of a table
    /// that existed when the transaction started).
    pub fn replaces(&self) -> bool {
        matches!(self.start, Start::CreateOrReplace(_)) && self.base.is_some()
    }

    /// Uses `policy` instead of the table's `commit.retry.*` properties.
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Hands over files written for this transaction (data files to append, delete files of
    /// a row delta): nothing else references them, so when the commit fails they are
    /// deleted, as the manifests the attempts wrote are. When the commit's outcome is
    /// unknown (`CommitStateUnknown`) they are kept, since the table may reference them,
    /// and the error names them. Files added to the table that existed before (imported
    /// files) must not be handed over.
    pub fn own_files(&mut self, files: impl IntoIterator<Item = String>) -> &mut Self {
        for f in files {
            if !self.owned_files.contains(&f) {
                self.owned_files.push(f);
            }
        }
        self
    }

    /// The files handed over with [`Self::own_files`].
    pub fn owned_files(&self) -> &[String] {
        &self.owned_files
    }

    /// Gives the transaction up without committing: the files handed over with
    /// [`Self::own_files`] are deleted (no attempt ran, so nothing else was written).
    pub fn abort(self) {
        let io = self.catalog.io();
        delete_files(io.as_ref(), &self.owned_files);
    }

    /// Adds a change; changes apply in the order they were added.
    pub fn add_change(&mut self, change: Box<dyn PendingChange>) -> &mut Self {
        self.changes.push(change);
        self
    }

    /// Adds metadata updates (no requirements).
    pub fn update(&mut self, updates: Vec<TableUpdate>) -> &mut Self {
        self.add_change(Box::new(MetadataChange {
            requirements: Vec::new(),
            updates,
        }))
    }

    /// Sets table properties as Java's `UpdateProperties` does: `format-version` upgrades
    /// the table to that version (a lower one is an error when the change applies) and,
    /// like the other reserved properties (`uuid`, `current-snapshot-id`, ...), is not
    /// stored. An error only when `format-version` is not an integer.
    pub fn set_properties(&mut self, updates: Vec<(String, String)>) -> Result<&mut Self> {
        let version = format_version_property(&updates)?;
        let stored: Vec<(String, String)> = updates
            .into_iter()
            .filter(|(k, _)| !RESERVED_PROPERTIES.contains(&k.as_str()))
            .collect();
        let mut changes = vec![TableUpdate::SetProperties { updates: stored }];
        if let Some(format_version) = version {
            changes.push(TableUpdate::UpgradeFormatVersion { format_version });
        }
        Ok(self.update(changes))
    }

    pub fn remove_properties(&mut self, removals: Vec<String>) -> &mut Self {
        self.update(vec![TableUpdate::RemoveProperties { removals }])
    }

    /// Evolves the schema: the new schema becomes current, and the name mapping and
    /// column-keyed properties follow renames, additions and deletions (see
    /// [`super::schema_change`]). The change is tied to the schema
    /// it was made against (`assert-current-schema-id` and `assert-last-assigned-field-id`),
    /// so it fails with `ValidationFailed` rather than apply to a schema changed meanwhile.
    pub fn update_schema(&mut self, update: &UpdateSchema) -> Result<&mut Self> {
        let schema = update.apply()?;
        let base = update.base_schema();
        let requirements = vec![
            TableRequirement::AssertCurrentSchemaId {
                current_schema_id: base.schema_id(),
            },
            TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: self
                    .base
                    .as_ref()
                    .map_or(base.highest_field_id(), |b| b.metadata.last_column_id),
            },
        ];
        let (deleted_columns, renamed_columns) = update.column_name_changes(&schema);
        Ok(self.add_change(Box::new(SchemaChange {
            schema: MetadataChange {
                requirements,
                updates: vec![
                    TableUpdate::AddSchema {
                        schema,
                        last_column_id: Some(update.last_column_id()),
                    },
                    TableUpdate::SetCurrentSchema {
                        schema_id: super::update::LAST_ADDED,
                    },
                ],
            },
            updated_fields: update.updated_fields().clone(),
            added_fields: update.added_fields().to_vec(),
            deleted_columns,
            renamed_columns,
        })))
    }

    /// Makes `spec` (from [`crate::spec::partition_update::UpdatePartitionSpec`]) the default
    /// partition spec, if the table's default spec and last partition id are still the ones
    /// it was made against (else `ValidationFailed`).
    pub fn update_spec(
        &mut self,
        spec: PartitionSpec,
        base_default_spec_id: i32,
        base_last_partition_id: i32,
    ) -> &mut Self {
        self.add_change(Box::new(MetadataChange {
            requirements: vec![
                TableRequirement::AssertDefaultSpecId {
                    default_spec_id: base_default_spec_id,
                },
                TableRequirement::AssertLastAssignedPartitionId {
                    last_assigned_partition_id: base_last_partition_id,
                },
            ],
            updates: vec![
                TableUpdate::AddSpec { spec },
                TableUpdate::SetDefaultSpec {
                    spec_id: super::update::LAST_ADDED,
                },
            ],
        }))
    }

    /// Makes `order` the default sort order, if the default is still `base_order_id`.
    pub fn replace_sort_order(&mut self, order: SortOrder, base_order_id: i32) -> &mut Self {
        self.add_change(Box::new(MetadataChange {
            requirements: vec![TableRequirement::AssertDefaultSortOrderId {
                default_sort_order_id: base_order_id,
            }],
            updates: vec![
                TableUpdate::AddSortOrder { sort_order: order },
                TableUpdate::SetDefaultSortOrder {
                    sort_order_id: super::update::LAST_ADDED,
                },
            ],
        }))
    }

    /// Appends data files (fast append) to `main`.
    pub fn append_files(&mut self, files: Vec<DataFile>) -> &mut Self {
        let mut p = SnapshotProducer::fast_append();
        for f in files {
            p.add_file(f);
        }
        self.add_change(Box::new(p))
    }

    /// The metadata of the table this transaction creates, as it is before the
    /// transaction's changes (the catalog's staged create where it has one): what the
    /// table's first data files are written against. `InvalidArgument` for a transaction
    /// on an existing table.
    pub fn new_table_metadata(&mut self) -> Result<TableMetadata> {
        if matches!(self.start, Start::Existing) || self.base.is_some() {
            return Err(Error::invalid_argument(format!(
                "table {}: the transaction does not create a table",
                self.ident
            )));
        }
        self.start_builder(None)?.build()
    }

    /// The metadata a transaction that creates or replaces a table starts from, before its
    /// changes: the new table's (as [`Self::new_table_metadata`]) or the replacement's
    /// (new schema, spec and sort order with the table's history, no current snapshot).
    /// What the data files of a create-or-replace-as-select are written against.
    /// `InvalidArgument` for a transaction on an existing table.
    pub fn start_metadata(&mut self) -> Result<TableMetadata> {
        if matches!(self.start, Start::Existing) {
            return Err(Error::invalid_argument(format!(
                "table {}: the transaction neither creates nor replaces a table",
                self.ident
            )));
        }
        let base = self.base.clone();
        self.start_builder(base.as_ref())?.build()
    }

    /// Asks the catalog for a staged create, once.
    fn stage(&mut self, t: &NewTable) -> Result<Option<Arc<TableMetadata>>> {
        if let Some(staged) = &self.staged {
            return Ok(staged.clone());
        }
        let mut properties = t.properties.clone();
        // the server's default format version may differ from icefloe's: say which
        let version = match self.created_format_version(t)? {
            Some(v) => v,
            None => format_version_property(&t.properties)?.unwrap_or(DEFAULT_FORMAT_VERSION),
        };
        properties.retain(|(k, _)| k != "format-version");
        properties.push(("format-version".to_string(), version.to_string()));
        let staged = self
            .catalog
            .stage_create(
                &self.ident,
                &t.schema,
                &t.spec,
                &t.sort_order,
                t.location.as_deref(),
                &properties,
            )?
            .map(Arc::new);
        self.staged = Some(staged.clone());
        Ok(staged)
    }

    fn build_attempt(&mut self, base: Option<&TableState>) -> Result<MetadataBuilder> {
        // before any pending change writes a manifest for a format it does not know
        if let Some(b) = base {
            b.metadata
                .check_supported("commit to", Some(&b.metadata_location))?;
        }
        let mut builder = self.start_builder(base)?;
        let io = self.catalog.io();
        for c in &mut self.changes {
            c.apply(io.as_ref(), &mut builder)?;
        }
        Ok(builder)
    }

    fn start_builder(&mut self, base: Option<&TableState>) -> Result<MetadataBuilder> {
        let new_table = match (&self.start, base) {
            (Start::Create(t), None) | (Start::CreateOrReplace(t), None) => Some(t.clone()),
            _ => None,
        };
        if let Some(t) = new_table {
            if let Some(staged) = self.stage(&t)? {
                // the server's metadata (location, ids, the properties it adds) as the start
                let missing = |what: &str| {
                    Error::invalid_metadata(
                        what,
                        format!("table {}: the staged create has no {what}", self.ident),
                    )
                };
                let schema = staged
                    .current_schema()
                    .ok_or_else(|| missing("current-schema-id"))?;
                let spec = staged
                    .default_spec()
                    .ok_or_else(|| missing("default-spec-id"))?;
                let order = staged
                    .default_sort_order()
                    .ok_or_else(|| missing("default-sort-order-id"))?;
                return MetadataBuilder::new_table(
                    schema,
                    spec,
                    order,
                    staged.location.trim_end_matches('/'),
                    &staged.properties,
                    Some(staged.format_version),
                );
            }
        }
        Ok(match (&self.start, base) {
            (Start::Existing, Some(b)) => MetadataBuilder::from_state(b),
            (Start::Existing, None) => {
                return Err(Error::NoSuchTable {
                    table: self.ident.to_string(),
                })
            }
            (Start::Create(_), Some(_)) => {
                return Err(Error::already_exists(format!(
                    "table already exists: {}",
                    self.ident
                )))
            }
            (Start::Create(t), None) | (Start::CreateOrReplace(t), None) => {
                let location = match &t.location {
                    Some(l) => l.clone(),
                    None => self.catalog.default_table_location(&self.ident)?,
                };
                MetadataBuilder::new_table(
                    &t.schema,
                    &t.spec,
                    &t.sort_order,
                    location.trim_end_matches('/'),
                    &t.properties,
                    self.created_format_version(t)?,
                )?
            }
            (Start::CreateOrReplace(t), Some(b)) => {
                let location = t
                    .location
                    .clone()
                    .unwrap_or_else(|| b.metadata.location.clone());
                MetadataBuilder::replace(
                    b,
                    &t.schema,
                    &t.spec,
                    &t.sort_order,
                    location.trim_end_matches('/'),
                    &t.properties,
                    t.format_version,
                )?
            }
        })
    }

    fn refresh(&self) -> Result<Option<TableState>> {
        match self.catalog.load_table(&self.ident) {
            Ok(s) => Ok(Some(s)),
            Err(Error::NoSuchTable { .. }) if !matches!(self.start, Start::Existing) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn attempt(&mut self, base: Option<&TableState>) -> Result<TableState> {
        let builder = self.build_attempt(base)?;
        if let (Start::Existing, Some(b), false) = (&self.start, base, builder.has_changes()) {
            return Ok(b.clone());
        }
        let metadata = builder.build()?;
        self.catalog.commit_table(&self.ident, base, metadata)
    }

    /// Commits every change as one new metadata file; returns the table's new state.
    pub fn commit(mut self) -> Result<TableState> {
        let started = Instant::now();
        let mut base = self.base.take();
        let policy = self.retry.unwrap_or_else(|| match (&base, &self.start) {
            (Some(b), _) => RetryPolicy::for_table(&b.metadata),
            _ => RetryPolicy::default(),
        });
        let mut retries = 0u32;
        let io = self.catalog.io();
        let result = loop {
            match self.attempt(base.as_ref()) {
                Err(Error::CommitFailed { .. })
                    if retries < policy.num_retries && started.elapsed() < policy.total_timeout =>
                {
                    retries += 1;
                    std::thread::sleep(policy.backoff(retries));
                    // a table dropped meanwhile ends the retries with its own error
                    match self.refresh() {
                        Ok(fresh) => base = fresh,
                        Err(e) => break Err(e),
                    }
                }
                other => break other,
            }
        };
        match result {
            Ok(state) => {
                self.changes
                    .iter_mut()
                    .for_each(|c| c.clean_up(io.as_ref(), true));
                Ok(state)
            }
            // the new metadata may have been committed: its files must stay
            Err(Error::CommitStateUnknown { message }) => Err(Error::CommitStateUnknown {
                message: kept_files_note(message, &self.owned_files),
            }),
            Err(e) => {
                self.changes
                    .iter_mut()
                    .for_each(|c| c.clean_up(io.as_ref(), false));
                delete_files(io.as_ref(), &self.owned_files);
                Err(e)
            }
        }
    }
}

/// Commits several transactions, each on its own table of one catalog, atomically
/// ([`Catalog::commit_tables`]; the REST catalog's `/v1/{prefix}/transactions/commit`):
/// every table gets its changes, or none does. Returns each table's new state, in order
/// (loaded again after the commit: the REST answer has no metadata).
///
/// There is no automatic retry: a stale base on any table (`CommitFailed`) fails the whole
/// commit, and the files every transaction wrote are deleted (the spec makes the commit
/// atomic, so none is referenced). Re-applying each table's changes on its fresh state, as
/// a single-table commit does, would re-validate each change against its own table only,
/// while a multi-table commit usually keeps an invariant *between* tables that the caller
/// computed from what it read (rows moved from one table to another); the caller must read
/// again and redo. `CommitStateUnknown` keeps every transaction's files, as for one table.
/// A transaction with no change is not sent; its table's state is its base.
pub fn commit_transactions(transactions: Vec<Transaction>) -> Result<Vec<TableState>> {
    let Some(first) = transactions.first() else {
        return Ok(Vec::new());
    };
    let catalog = Arc::clone(&first.catalog);
    let same = |c: &Arc<dyn Catalog>| {
        std::ptr::eq(
            Arc::as_ptr(c).cast::<()>(),
            Arc::as_ptr(&catalog).cast::<()>(),
        )
    };
    if let Some(other) = transactions.iter().find(|t| !same(&t.catalog)) {
        return Err(Error::invalid_argument(format!(
            "table {} belongs to another catalog than {}: a multi-table commit goes through one \
             catalog",
            other.ident, first.ident
        )));
    }
    let mut transactions = transactions;
    let io = catalog.io();
    let mut commits = Vec::new();
    // (index, state) of the transactions that change nothing
    let mut unchanged = Vec::new();
    let built: Result<()> = (|| {
        for (i, tx) in transactions.iter_mut().enumerate() {
            let base = tx.base.clone();
            let builder = tx.build_attempt(base.as_ref())?;
            if let (Start::Existing, Some(b), false) = (&tx.start, &base, builder.has_changes()) {
                unchanged.push((i, b.clone()));
                continue;
            }
            commits.push(TableCommit {
                ident: tx.ident.clone(),
                base,
                metadata: builder.build()?,
            });
        }
        if commits.is_empty() {
            return Ok(());
        }
        catalog.commit_tables(commits)
    })();
    let owned: Vec<String> = transactions
        .iter()
        .flat_map(|t| t.owned_files.iter().cloned())
        .collect();
    match built {
        Ok(()) => {
            for tx in &mut transactions {
                tx.changes
                    .iter_mut()
                    .for_each(|c| c.clean_up(io.as_ref(), true));
            }
            let mut out = Vec::with_capacity(transactions.len());
            for (i, tx) in transactions.iter().enumerate() {
                match unchanged.iter().find(|(j, _)| *j == i) {
                    Some((_, state)) => out.push(state.clone()),
                    None => out.push(catalog.load_table(&tx.ident).map_err(|e| {
                        Error::ServiceFailure {
                            message: format!(
                                "the multi-table commit succeeded, but loading {} again \
                                 failed: {e}",
                                tx.ident
                            ),
                        }
                    })?),
                }
            }
            Ok(out)
        }
        Err(Error::CommitStateUnknown { message }) => Err(Error::CommitStateUnknown {
            message: kept_files_note(message, &owned),
        }),
        Err(e) => {
            for tx in &mut transactions {
                tx.changes
                    .iter_mut()
                    .for_each(|c| c.clean_up(io.as_ref(), false));
            }
            delete_files(io.as_ref(), &owned);
            Err(match e {
                Error::CommitFailed { message } => Error::commit_failed(format!(
                    "{message} (a multi-table commit is not retried: load the tables again and \
                     redo the changes)"
                )),
                other => other,
            })
        }
    }
}

/// Best effort: a file left behind is an orphan, harmless to the table; failing the
/// caller for it would hide the error that matters.
fn delete_files(io: &dyn FileIO, files: &[String]) {
    for f in files {
        let _ = io.delete(f);
    }
}

/// How many kept files an unknown-state error names (the count is always given).
const KEPT_FILES_NAMED: usize = 10;

/// The message of a `CommitStateUnknown` that kept the caller's files: which ones, so that
/// whoever resolves the state (is the new metadata the table's?) can delete them if not.
fn kept_files_note(message: String, owned: &[String]) -> String {
    if owned.is_empty() {
        return format!(
            "{message}; the files this commit wrote are kept, as the table may reference them"
        );
    }
    let named: Vec<&str> = owned
        .iter()
        .take(KEPT_FILES_NAMED)
        .map(String::as_str)
        .collect();
    let more = owned.len().saturating_sub(KEPT_FILES_NAMED);
    format!(
        "{message}; the {} data and delete files this commit wrote (and its manifests) are \
         kept, as the table may reference them: {}{}",
        owned.len(),
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// Creates a table (Java's `Catalog.createTable`): a new metadata file with fresh ids.
#[allow(clippy::too_many_arguments)]
pub fn create_table(
    catalog: Arc<dyn Catalog>,
    ident: &TableIdent,
    schema: &Schema,
    spec: &PartitionSpec,
    sort_order: &SortOrder,
    location: Option<&str>,
    properties: &[(String, String)],
    format_version: Option<i32>,
) -> Result<TableState> {
    Transaction::create(
        catalog,
        ident.clone(),
        NewTable {
            schema: schema.clone(),
            spec: spec.clone(),
            sort_order: sort_order.clone(),
            location: location.map(str::to_string),
            properties: properties.to_vec(),
            format_version,
        },
    )
    .commit()
}

/// Creates the table, or replaces the existing one keeping its history (Java's
/// `createOrReplaceTransaction`).
pub fn create_or_replace_table(
    catalog: Arc<dyn Catalog>,
    ident: &TableIdent,
    table: NewTable,
) -> Result<TableState> {
    Transaction::create_or_replace(catalog, ident.clone(), table)?.commit()
}
