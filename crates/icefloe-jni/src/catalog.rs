//! Catalogs and tables for the Spark catalog (`io.icefloe.spark.SparkCatalog`).

use std::sync::Arc;

use icefloe::catalog::load::load_catalog;
use icefloe::catalog::TableIdent;
use icefloe::{Catalog, Error, FileIO, TableMetadata};
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};
use serde_json::{json, Map, Value};

use crate::errors::{Failure, Outcome, ThrowIcefloe};

/// An open catalog (handle from `catalogOpen`).
pub(crate) struct CatalogHandle(pub(crate) Arc<dyn Catalog>);

/// A table as the catalog last loaded it, with the FileIO planning reads it through.
pub(crate) struct LoadedTable {
    pub(crate) metadata_location: String,
    pub(crate) metadata: Arc<TableMetadata>,
    pub(crate) io: Arc<dyn FileIO>,
}

pub(crate) fn into_handle<T>(value: T) -> jlong {
    Box::into_raw(Box::new(value)) as jlong
}

/// The value behind a handle. Java keeps each handle in an object of its own class that
/// passes it only to the methods of that kind, and frees it once.
///
/// # Safety
/// `handle` must come from [`into_handle`] with the same `T` and not be closed yet.
pub(crate) unsafe fn handle_ref<'a, T>(handle: jlong) -> Outcome<&'a T> {
    if handle == 0 {
        return Err(Error::invalid_argument("a closed or null icefloe handle").into());
    }
    // SAFETY: see the function's contract
    Ok(unsafe { &*(handle as *const T) })
}

/// # Safety
/// As [`handle_ref`]; the handle is not used again.
pub(crate) unsafe fn close_handle<T>(handle: jlong) {
    if handle != 0 {
        // SAFETY: see the function's contract
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
}

pub(crate) fn string(env: &Env<'_>, s: &JString<'_>) -> Outcome<String> {
    Ok(s.try_to_string(env)?)
}

pub(crate) fn parse_json(text: &str, what: &str) -> Outcome<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::invalid_argument(format!("{what} is not valid JSON: {e}")).into())
}

fn strings(value: &Value, what: &str) -> Outcome<Vec<String>> {
    let items = value
        .as_array()
        .ok_or_else(|| Error::invalid_argument(format!("{what} must be a list of strings")))?;
    items
        .iter()
        .map(|v| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                Failure::from(Error::invalid_argument(format!(
                    "{what} must be a list of strings"
                )))
            })
        })
        .collect()
}

fn string_pairs(value: Option<&Value>, what: &str) -> Outcome<Vec<(String, String)>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let object = value
        .as_object()
        .ok_or_else(|| Error::invalid_argument(format!("{what} must be an object of strings")))?;
    object
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_string())),
            None => Err(Error::invalid_argument(format!("{what}: '{k}' is not a string")).into()),
        })
        .collect()
}

fn pairs_json(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>(),
    )
}

/// Opens the catalog `name` from its properties (a JSON object of strings, the properties
/// `icefloe.load_catalog` takes).
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_catalogOpen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    name: JString<'local>,
    properties: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        let name = string(env, &name)?;
        let properties = parse_json(&string(env, &properties)?, "the catalog properties")?;
        let properties = string_pairs(Some(&properties), "the catalog properties")?;
        let catalog = load_catalog(&name, &properties)?;
        Ok(into_handle(CatalogHandle(catalog)))
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_catalogClose<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Outcome<()> {
        // SAFETY: Java's NativeCatalog closes its handle once
        unsafe { close_handle::<CatalogHandle>(handle) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

/// One catalog operation, from a JSON request `{"op": ..., "namespace": [...], ...}`;
/// the answer is JSON (`null` for operations without one).
fn catalog_call(catalog: &dyn Catalog, request: &Value) -> Outcome<Value> {
    let op = request.get("op").and_then(Value::as_str).unwrap_or("");
    let namespace = match request.get("namespace") {
        Some(ns) => strings(ns, "namespace")?,
        None => Vec::new(),
    };
    let table_name = || -> Outcome<String> {
        request
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| Error::invalid_argument(format!("'{op}' needs a table name")).into())
    };
    Ok(match op {
        "list-namespaces" => Value::Array(
            catalog
                .list_namespaces(&namespace)?
                .into_iter()
                .map(|ns| json!(ns))
                .collect(),
        ),
        "namespace-exists" => json!(catalog.namespace_exists(&namespace)?),
        "namespace-properties" => pairs_json(&catalog.namespace_properties(&namespace)?),
        "create-namespace" => {
            let properties = string_pairs(request.get("properties"), "namespace properties")?;
            catalog.create_namespace(&namespace, &properties)?;
            Value::Null
        }
        "update-namespace-properties" => {
            let set = string_pairs(request.get("set"), "namespace properties")?;
            let remove = match request.get("remove") {
                Some(r) => strings(r, "removed namespace properties")?,
                None => Vec::new(),
            };
            catalog.update_namespace_properties(&namespace, &remove, &set)?;
            Value::Null
        }
        "drop-namespace" => {
            catalog.drop_namespace(&namespace)?;
            Value::Null
        }
        "list-tables" => Value::Array(
            catalog
                .list_tables(&namespace)?
                .into_iter()
                .map(|t| json!(t.name))
                .collect(),
        ),
        "table-exists" => json!(catalog.table_exists(&TableIdent::new(namespace, table_name()?))?),
        "drop-table" => {
            catalog.drop_table(&TableIdent::new(namespace, table_name()?))?;
            Value::Null
        }
        // DROP TABLE ... PURGE: the files inside the table's location too (Java's
        // CatalogUtil.dropTableData, as the Python catalog's purge_table)
        "purge-table" => {
            catalog.purge_table(
                &TableIdent::new(namespace, table_name()?),
                icefloe::catalog::PurgeScope::default(),
            )?;
            Value::Null
        }
        "rename-table" => {
            let to = request
                .get("to")
                .ok_or_else(|| Error::invalid_argument("'rename-table' needs 'to'"))?;
            let to_namespace = strings(
                to.get("namespace").unwrap_or(&Value::Null),
                "the new namespace",
            )?;
            let to_name = to
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::invalid_argument("'rename-table' needs 'to.name'"))?;
            catalog.rename_table(
                &TableIdent::new(namespace, table_name()?),
                &TableIdent::new(to_namespace, to_name),
            )?;
            Value::Null
        }
        other => {
            return Err(
                Error::invalid_argument(format!("unknown catalog operation '{other}'")).into(),
            )
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_catalogCall<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the catalog request")?;
        let answer = catalog_call(catalog.0.as_ref(), &request)?;
        Ok(JString::from_str(env, answer.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Loads a table (`{"namespace": [...], "name": ...}`); the handle is a [`LoadedTable`].
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableLoad<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    ident: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Outcome<jlong> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let ident = parse_json(&string(env, &ident)?, "the table identifier")?;
        let namespace = strings(ident.get("namespace").unwrap_or(&Value::Null), "namespace")?;
        let name = ident
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid_argument("a table identifier needs a name"))?;
        let state = catalog.0.load_table(&TableIdent::new(namespace, name))?;
        Ok(into_handle(LoadedTable {
            metadata_location: state.metadata_location,
            metadata: state.metadata,
            io: catalog.0.io(),
        }))
    })
    .resolve::<ThrowIcefloe>()
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableClose<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_| -> Outcome<()> {
        // SAFETY: Java's NativeTable closes its handle once
        unsafe { close_handle::<LoadedTable>(handle) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

/// What the Spark layer needs of a loaded table: its metadata location, location, format
/// version, current snapshot, properties, the current schema's JSON, the default spec and
/// sort order, and the FileIO
/// properties executors open the data files with (credentials included: the Java side
/// never prints them).
fn table_info(table: &LoadedTable) -> Outcome<Value> {
    let md = &table.metadata;
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: the current schema is missing",
            table.metadata_location
        ))
    })?;
    let io_properties = table
        .io
        .properties_for(&md.location)
        .map(|pairs| pairs_json(&pairs));
    Ok(json!({
        "metadata-location": table.metadata_location,
        "location": md.location,
        "format-version": md.format_version,
        "current-snapshot-id": md.current_snapshot_id,
        "properties": pairs_json(&md.properties),
        "schema": schema.to_json(),
        "spec": md.default_spec().map(|s| s.to_json()),
        "sort-order": md.default_sort_order().map(|o| o.to_json()),
        "io-properties": io_properties,
    }))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableInfo<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a table handle from NativeTable
        let table = unsafe { handle_ref::<LoadedTable>(handle)? };
        Ok(JString::from_str(env, table_info(table)?.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}
