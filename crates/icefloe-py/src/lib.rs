//! PyO3 bindings of icefloe: type conversions and error mapping only; all logic is in
//! the `icefloe` crate. Exposed to Python as the private module `icefloe._native`.

mod alloc;
mod catalog;
mod commit;
mod deletes;
mod error;
mod expr;
mod fileio;
mod inspect;
mod io_config;
mod maintenance;
mod manifest;
mod metadata;
mod position_delete_maintenance;
mod projection;
mod puffin;
mod read;
mod rules;
mod scan;
mod schema;
mod schema_update;
mod snapshots;
mod spec_update;
mod transaction;
mod transforms;
mod view;
mod write;

use pyo3::prelude::*;
use pyo3::types::PyAnyMethods;

/// Rust allocations of the extension go through mimalloc (Python's own do not).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Converts a JSON value to Python objects through the `json` module (used for small
/// values such as defaults and property maps, never on a hot path).
pub(crate) fn json_to_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let json = py.import("json")?;
    Ok(json.call_method1("loads", (value.to_string(),))?.unbind())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    alloc::configure();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<schema::PySchema>()?;
    m.add_class::<schema::PyNestedField>()?;
    m.add_class::<metadata::PyTableMetadata>()?;
    m.add_class::<metadata::PyPartitionSpec>()?;
    m.add_class::<metadata::PyPartitionField>()?;
    m.add_class::<metadata::PySortOrder>()?;
    m.add_class::<metadata::PySortField>()?;
    m.add_class::<metadata::PySnapshot>()?;
    m.add_class::<metadata::PySnapshotRef>()?;
    m.add_class::<view::PyViewMetadata>()?;
    m.add_class::<catalog::PyCatalog>()?;
    m.add_class::<fileio::PyFileIO>()?;
    m.add_class::<view::PyViewVersion>()?;
    m.add_class::<view::PyNameMapping>()?;
    transforms::register(m)?;
    puffin::register(m)?;
    read::register(m)?;
    manifest::register(m)?;
    scan::register(m)?;
    inspect::register(m)?;
    expr::register(m)?;
    projection::register(m)?;
    schema_update::register(m)?;
    spec_update::register(m)?;
    write::register(m)?;
    io_config::register(m)?;
    commit::register(m)?;
    transaction::register(m)?;
    deletes::register(m)?;
    snapshots::register(m)?;
    maintenance::register(m)?;
    position_delete_maintenance::register(m)?;
    rules::register(m)?;
    Ok(())
}
