//! A catalog in memory for the commit tests: tables in a `Mutex<HashMap>`, files in a
//! [`MemoryFileIO`], commits as check-and-put on the metadata location. Faults can be
//! injected at each step of a commit: writing a file whose name contains a pattern,
//! after the metadata file is written, and at the swap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::catalog::{
    Catalog, Namespace, PurgeResult, PurgeScope, TableIdent, TableState, ViewState,
};
use crate::error::{Error, Result};
use crate::io::{FileIO, MemoryFileIO};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

/// What to do wrong, and how often.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    /// Writes of files whose location contains this fail (e.g. `"/snap-"`: after the
    /// manifests were written, the manifest list cannot be).
    pub fail_write_containing: Option<String>,
    /// The metadata file is written, then the commit fails with this error kind.
    pub fail_after_metadata_write: Option<FaultKind>,
    /// The swap itself fails with this error kind, before anything is written.
    pub fail_swap: Option<FaultKind>,
    /// Deletes of files whose location contains this fail (the file stays).
    pub fail_delete_containing: Option<String>,
    /// Each delete takes this long, so that deletes running at once overlap.
    pub delete_delay: Option<std::time::Duration>,
    /// Each read (whole or a range) takes this long, so that reads running at once overlap.
    pub read_delay: Option<std::time::Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaultKind {
    CommitFailed,
    StateUnknown,
}

impl FaultKind {
    fn error(self) -> Error {
        match self {
            FaultKind::CommitFailed => Error::commit_failed("injected fault"),
            FaultKind::StateUnknown => Error::CommitStateUnknown {
                message: "injected fault".into(),
            },
        }
    }
}

/// A [`MemoryFileIO`] that can refuse writes and deletes, and counts the deletes running
/// at once.
#[derive(Debug, Default)]
pub(crate) struct FaultyIO {
    pub inner: MemoryFileIO,
    pub faults: Mutex<Faults>,
    deletes_in_flight: std::sync::atomic::AtomicUsize,
    /// The most deletes seen running at once.
    pub max_deletes_in_flight: std::sync::atomic::AtomicUsize,
    /// Every location read (whole or a range), in order: tests count what a commit reads.
    pub reads: Mutex<Vec<String>>,
    reads_in_flight: std::sync::atomic::AtomicUsize,
    /// The most reads seen running at once.
    pub max_reads_in_flight: std::sync::atomic::AtomicUsize,
}

impl FaultyIO {
    /// The locations read since the last call, and the log cleared.
    pub(crate) fn take_reads(&self) -> Vec<String> {
        self.reads
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    fn log_read(&self, location: &str) {
        if let Ok(mut r) = self.reads.lock() {
            r.push(location.to_string());
        }
    }

    /// `read` counted among the reads in flight, after the injected delay.
    fn timed_read<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        use std::sync::atomic::Ordering;
        let delay = self.faults.lock().ok().and_then(|f| f.read_delay);
        let now = self.reads_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_reads_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some(d) = delay {
            std::thread::sleep(d);
        }
        let r = read();
        self.reads_in_flight.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

impl FileIO for FaultyIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.log_read(location);
        self.timed_read(|| self.inner.read(location))
    }
    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.log_read(location);
        self.timed_read(|| self.inner.read_range(location, offset, len))
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        let fail = self
            .faults
            .lock()
            .map_err(|_| Error::unsupported("poisoned"))?
            .fail_write_containing
            .clone();
        if let Some(p) = fail {
            if location.contains(&p) {
                return Err(Error::io(
                    location,
                    std::io::Error::other("injected write failure"),
                ));
            }
        }
        self.inner.write_new(location, bytes)
    }
    fn exists(&self, location: &str) -> Result<bool> {
        self.inner.exists(location)
    }
    fn list(&self, location: &str) -> Result<Vec<String>> {
        self.inner.list(location)
    }
    fn list_files(&self, location: &str) -> Result<Vec<crate::io::ListedFile>> {
        self.inner.list_files(location)
    }
    fn delete(&self, location: &str) -> Result<()> {
        use std::sync::atomic::Ordering;
        let faults = self
            .faults
            .lock()
            .map_err(|_| Error::unsupported("poisoned"))?
            .clone();
        let now = self.deletes_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_deletes_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some(d) = faults.delete_delay {
            std::thread::sleep(d);
        }
        let r = match faults.fail_delete_containing {
            Some(p) if location.contains(&p) => Err(Error::io(
                location,
                std::io::Error::other("injected delete failure"),
            )),
            _ => self.inner.delete(location),
        };
        self.deletes_in_flight.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

#[derive(Debug, Default)]
pub(crate) struct MemoryCatalog {
    pub io: Arc<FaultyIO>,
    tables: Mutex<HashMap<TableIdent, TableState>>,
}

impl MemoryCatalog {
    pub(crate) fn new() -> Arc<MemoryCatalog> {
        Arc::new(MemoryCatalog::default())
    }

    pub(crate) fn set_faults(&self, faults: Faults) {
        if let Ok(mut f) = self.io.faults.lock() {
            *f = faults;
        }
    }

    fn faults(&self) -> Faults {
        self.io.faults.lock().map(|f| f.clone()).unwrap_or_default()
    }

    fn tables(&self) -> Result<std::sync::MutexGuard<'_, HashMap<TableIdent, TableState>>> {
        self.tables
            .lock()
            .map_err(|_| Error::unsupported("catalog poisoned"))
    }
}

fn unsupported<T>() -> Result<T> {
    Err(Error::unsupported("not in the test catalog"))
}

impl Catalog for MemoryCatalog {
    fn name(&self) -> &str {
        "memory"
    }
    fn io(&self) -> Arc<dyn FileIO> {
        self.io.clone()
    }
    fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        Ok(format!(
            "mem://warehouse/{}/{}",
            ident.namespace.join("/"),
            ident.name
        ))
    }
    fn create_namespace(&self, _: &[String], _: &[(String, String)]) -> Result<()> {
        Ok(())
    }
    fn list_namespaces(&self, _: &[String]) -> Result<Vec<Namespace>> {
        Ok(Vec::new())
    }
    fn namespace_exists(&self, _: &[String]) -> Result<bool> {
        Ok(true)
    }
    fn namespace_properties(&self, _: &[String]) -> Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }
    fn update_namespace_properties(
        &self,
        _: &[String],
        _: &[String],
        _: &[(String, String)],
    ) -> Result<()> {
        Ok(())
    }
    fn drop_namespace(&self, _: &[String]) -> Result<()> {
        Ok(())
    }
    fn list_tables(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        Ok(self
            .tables()?
            .keys()
            .filter(|t| t.namespace == namespace)
            .cloned()
            .collect())
    }
    fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        Ok(self.tables()?.contains_key(ident))
    }
    fn load_table(&self, ident: &TableIdent) -> Result<TableState> {
        let location = self
            .tables()?
            .get(ident)
            .map(|s| s.metadata_location.clone())
            .ok_or_else(|| Error::NoSuchTable {
                table: ident.to_string(),
            })?;
        // read the file, as a real catalog would: it must be readable
        let md = TableMetadata::read(self.io.as_ref(), &location)?;
        Ok(TableState {
            metadata_location: location,
            metadata: Arc::new(md),
        })
    }
    fn register_table(&self, _: &TableIdent, _: &str) -> Result<TableState> {
        unsupported()
    }
    fn rename_table(&self, _: &TableIdent, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    fn drop_table(&self, ident: &TableIdent) -> Result<()> {
        self.tables()?.remove(ident);
        Ok(())
    }
    fn purge_table(&self, _: &TableIdent, _: PurgeScope) -> Result<PurgeResult> {
        unsupported()
    }
    fn commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState> {
        let faults = self.faults();
        if let Some(k) = faults.fail_swap {
            return Err(k.error());
        }
        let version = base
            .and_then(|b| {
                b.metadata_location
                    .rsplit('/')
                    .next()
                    .and_then(|n| n.split('-').next())
                    .and_then(|v| v.parse::<u64>().ok())
            })
            .map_or(0, |v| v + 1);
        let location = format!(
            "{}/metadata/{version:05}-{}.metadata.json",
            metadata.location,
            uuid::Uuid::new_v4()
        );
        metadata.write(self.io.as_ref(), &location, false)?;
        if let Some(k) = faults.fail_after_metadata_write {
            return Err(k.error());
        }
        let mut tables = self.tables()?;
        let current = tables.get(ident).map(|s| s.metadata_location.clone());
        match (current, base) {
            (None, None) => {}
            (Some(_), None) => {
                let _ = self.io.delete(&location);
                return Err(Error::already_exists(format!("table exists: {ident}")));
            }
            (Some(cur), Some(b)) if cur == b.metadata_location => {}
            (_, Some(b)) => {
                let _ = self.io.delete(&location);
                return Err(Error::commit_failed(format!(
                    "{ident} no longer points at {}",
                    b.metadata_location
                )));
            }
        }
        let state = TableState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        };
        tables.insert(ident.clone(), state.clone());
        Ok(state)
    }
    fn list_views(&self, _: &[String]) -> Result<Vec<TableIdent>> {
        Ok(Vec::new())
    }
    fn view_exists(&self, _: &TableIdent) -> Result<bool> {
        Ok(false)
    }
    fn load_view(&self, _: &TableIdent) -> Result<ViewState> {
        unsupported()
    }
    fn rename_view(&self, _: &TableIdent, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    fn drop_view(&self, _: &TableIdent) -> Result<()> {
        unsupported()
    }
    fn commit_view(
        &self,
        _: &TableIdent,
        _: Option<&ViewState>,
        _: ViewMetadata,
    ) -> Result<ViewState> {
        unsupported()
    }
}

/// Creates `ident` in `catalog`: `id` long (required) and `cat` int, partitioned by
/// identity(`cat`), in format `version`. The table most commit tests start from.
pub(crate) fn create_id_cat_table(
    catalog: &Arc<MemoryCatalog>,
    ident: &TableIdent,
    version: i32,
) -> TableState {
    use crate::spec::partition::{PartitionField, PartitionSpec};
    use crate::spec::schema::Schema;
    use crate::spec::sort::SortOrder;
    use crate::spec::transform::Transform;
    use crate::spec::types::{NestedField, PrimitiveType, Type};
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "cat", Type::Primitive(PrimitiveType::Int)),
        ],
        vec![],
    )
    .unwrap();
    let spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(2, 1000, "cat", Transform::Identity)],
    );
    let sort = SortOrder::unsorted();
    super::transaction::create_table(
        catalog.clone(),
        ident,
        &schema,
        &spec,
        &sort,
        None,
        &[],
        Some(version),
    )
    .unwrap()
}
