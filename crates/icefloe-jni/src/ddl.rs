//! DDL for the Spark catalog: creating, replacing and altering tables through the core's
//! commits (`commit::Transaction`, `spec::schema_update::UpdateSchema`), as Java Iceberg's
//! SparkCatalog does through its `Catalog`.

use std::sync::Arc;

use icefloe::catalog::TableIdent;
use icefloe::commit::transaction::NewTable;
use icefloe::spec::partition::{default_field_name, PartitionField, PARTITION_DATA_ID_START};
use icefloe::spec::schema_update::UpdateSchema;
use icefloe::spec::transform::Transform;
use icefloe::spec::types::{PrimitiveType, Type};
use icefloe::spec::Schema;
use icefloe::{Error, PartitionSpec, SortOrder, Transaction};
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use serde_json::{json, Value};

use crate::catalog::{handle_ref, parse_json, string, CatalogHandle};
use crate::errors::{Outcome, ThrowIcefloe};

pub(crate) fn ident_of(request: &Value) -> Outcome<TableIdent> {
    let namespace = request
        .get("namespace")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let name = request
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_argument("the request needs a table name"))?;
    Ok(TableIdent::new(namespace, name))
}

fn str_field<'a>(v: &'a Value, key: &str, what: &str) -> Outcome<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_argument(format!("{what} needs '{key}'")).into())
}

fn properties(request: &Value) -> Vec<(String, String)> {
    match request.get("properties") {
        Some(Value::Object(o)) => o
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
            .collect(),
        _ => Vec::new(),
    }
}

/// The partition spec of `PARTITIONED BY`: `[[column, transform], ...]`, fields named as
/// Java's `PartitionSpec.Builder` names them (`payload.b_trunc`).
fn spec_of(schema: &Schema, partitioning: Option<&Value>) -> Outcome<PartitionSpec> {
    let Some(Value::Array(items)) = partitioning else {
        return Ok(PartitionSpec::unpartitioned());
    };
    let mut fields = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let column = item.get(0).and_then(Value::as_str).unwrap_or("");
        let transform_text = item.get(1).and_then(Value::as_str).unwrap_or("");
        let transform: Transform = transform_text.parse().map_err(|_| {
            Error::invalid_argument(format!("unknown partition transform '{transform_text}'"))
        })?;
        if let Transform::Unknown(t) = &transform {
            return Err(
                Error::invalid_argument(format!("unknown partition transform '{t}'")).into(),
            );
        }
        let field = schema.field_by_name(column, false).ok_or_else(|| {
            Error::invalid_argument(format!("Cannot find source column: {column}"))
        })?;
        let source_type = match &field.field_type {
            Type::Primitive(p) => p.clone(),
            other => {
                return Err(Error::invalid_argument(format!(
                    "Cannot partition by {column}: {other} is not a primitive type"
                ))
                .into())
            }
        };
        if transform
            .result_type(&Type::Primitive(source_type.clone()))
            .is_err()
        {
            return Err(Error::invalid_argument(format!(
                "Invalid source type {source_type} for transform: {transform}"
            ))
            .into());
        }
        // Java's PartitionSpec.Builder names (Spark3Util.toPartitionSpec): the column's
        // name as given, dots kept, with the transform's suffix
        let suffix = default_field_name("x", &transform);
        let name = format!("{column}{}", suffix.get(1..).unwrap_or(""));
        if fields.iter().any(|f: &PartitionField| f.name == name) {
            return Err(Error::invalid_argument(format!(
                "Cannot use partition name more than once: {name}"
            ))
            .into());
        }
        fields.push(PartitionField::new(
            field.id,
            PARTITION_DATA_ID_START + i as i32,
            name,
            transform,
        ));
    }
    Ok(PartitionSpec::new(0, fields))
}

/// The transaction that creates or replaces a table. Request: `namespace`, `name`,
/// `schema` (Iceberg JSON, ids assigned by the caller; fresh ids are assigned as Java
/// does), `partitioning`, `location`, `properties`, `default-format-version` (for a
/// created table whose properties name no `format-version`; a replaced table keeps its
/// version, as Java's `buildReplacement`), `mode` (`create`: the table must not exist,
/// `replace`: it must, `create-or-replace`). A replaced table keeps its history (Java's
/// replace transaction).
pub(crate) fn create_transaction(catalog: &CatalogHandle, request: &Value) -> Outcome<Transaction> {
    let ident = ident_of(request)?;
    let schema = Schema::from_json(
        request
            .get("schema")
            .ok_or_else(|| Error::invalid_argument("a create request needs a schema"))?,
        "schema",
    )?;
    let spec = spec_of(&schema, request.get("partitioning"))?;
    let table = NewTable {
        schema,
        spec,
        sort_order: SortOrder::unsorted(),
        location: request
            .get("location")
            .and_then(Value::as_str)
            .map(str::to_string),
        properties: properties(request),
        format_version: None,
    };
    let mode = request
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("create");
    let tx = match mode {
        "create" => Transaction::create(Arc::clone(&catalog.0), ident, table),
        "replace" => {
            // REPLACE TABLE needs the table (Spark checks too, but not atomically)
            catalog.0.load_table(&ident)?;
            Transaction::create_or_replace(Arc::clone(&catalog.0), ident, table)?
        }
        "create-or-replace" => {
            Transaction::create_or_replace(Arc::clone(&catalog.0), ident, table)?
        }
        other => {
            return Err(Error::invalid_argument(format!("unknown create mode '{other}'")).into())
        }
    };
    Ok(
        match request
            .get("default-format-version")
            .and_then(Value::as_i64)
        {
            Some(v) => tx.default_format_version(v as i32),
            None => tx,
        },
    )
}

/// Creates or replaces a table (see [`create_transaction`] for the request).
fn create(catalog: &CatalogHandle, request: &Value) -> Outcome<Value> {
    let state = create_transaction(catalog, request)?.commit()?;
    Ok(json!({ "metadata-location": state.metadata_location }))
}

fn primitive(v: &Value, what: &str) -> Outcome<PrimitiveType> {
    let text = v
        .as_str()
        .ok_or_else(|| Error::invalid_argument(format!("{what}: not a primitive type: {v}")))?;
    PrimitiveType::parse(text)
        .ok_or_else(|| Error::invalid_argument(format!("{what}: unknown type '{text}'")).into())
}

/// Alters a table in one commit (Java's SparkCatalog.alterTable): property changes and
/// schema changes. Request: `namespace`, `name`, `changes`, each with an `action`:
/// `set-property` (`key`, `value`), `remove-property` (`key`), `add-column` (`parent`,
/// `name`, `type` as Iceberg JSON, `doc`, `required`, `position`: `first` or `after` with
/// `after`), `rename-column` (`name`, `new-name`), `delete-column` (`name`),
/// `update-column-type` (`name`, `type`), `update-column-doc` (`name`, `doc`),
/// `set-nullability` (`name`, `nullable`), `move` (`name`, `position`, `after`).
fn alter(catalog: &CatalogHandle, request: &Value) -> Outcome<Value> {
    let ident = ident_of(request)?;
    let mut tx = Transaction::load(Arc::clone(&catalog.0), ident)?;
    let base = catalog.0.load_table(tx.ident())?;
    let schema = base
        .metadata
        .current_schema()
        .ok_or_else(|| Error::invalid_argument("the table has no current schema"))?;
    let mut update = UpdateSchema::new(schema, base.metadata.last_column_id);
    update.case_sensitive(false);
    let mut schema_changed = false;
    let mut set = Vec::new();
    let mut remove = Vec::new();
    let empty = Vec::new();
    let changes = request
        .get("changes")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for change in changes {
        let action = str_field(change, "action", "a table change")?;
        let name = || str_field(change, "name", action);
        match action {
            "set-property" => set.push((
                str_field(change, "key", action)?.to_string(),
                str_field(change, "value", action)?.to_string(),
            )),
            "remove-property" => remove.push(str_field(change, "key", action)?.to_string()),
            "add-column" => {
                schema_changed = true;
                let field_type = Type::from_json(
                    change
                        .get("type")
                        .ok_or_else(|| Error::invalid_argument("add-column needs 'type'"))?,
                    "type",
                )?;
                let parent = change.get("parent").and_then(Value::as_str);
                let doc = change.get("doc").and_then(Value::as_str);
                if change.get("required").and_then(Value::as_bool) == Some(true) {
                    return Err(Error::invalid_argument(format!(
                        "Incompatible change: cannot add required column: {}",
                        name()?
                    ))
                    .into());
                }
                update.add_column(parent, name()?, field_type, doc, None)?;
                let full = match parent {
                    Some(p) => format!("{p}.{}", name()?),
                    None => name()?.to_string(),
                };
                move_column(&mut update, change, &full)?;
            }
            "rename-column" => {
                schema_changed = true;
                update.rename_column(name()?, str_field(change, "new-name", action)?)?;
            }
            "delete-column" => {
                schema_changed = true;
                update.delete_column(name()?)?;
            }
            "update-column-type" => {
                schema_changed = true;
                let ty = primitive(change.get("type").unwrap_or(&Value::Null), name()?)?;
                update.update_column(name()?, ty)?;
            }
            "update-column-doc" => {
                schema_changed = true;
                update.update_column_doc(name()?, change.get("doc").and_then(Value::as_str))?;
            }
            "set-nullability" => {
                schema_changed = true;
                if change
                    .get("nullable")
                    .and_then(Value::as_bool)
                    .unwrap_or(true)
                {
                    update.make_column_optional(name()?)?;
                } else {
                    update.require_column(name()?)?;
                }
            }
            "move" => {
                schema_changed = true;
                move_column(&mut update, change, name()?)?;
            }
            other => {
                return Err(
                    Error::unsupported(format!("unsupported table change '{other}'")).into(),
                )
            }
        }
    }
    if !set.is_empty() {
        tx.set_properties(set)?;
    }
    if !remove.is_empty() {
        tx.remove_properties(remove);
    }
    if schema_changed {
        tx.update_schema(&update)?;
    }
    let state = tx.commit()?;
    Ok(json!({ "metadata-location": state.metadata_location }))
}

fn move_column(update: &mut UpdateSchema, change: &Value, name: &str) -> Outcome<()> {
    match change.get("position").and_then(Value::as_str) {
        Some("first") => {
            update.move_first(name)?;
        }
        Some("after") => {
            let after = str_field(change, "after", "a column move")?;
            update.move_after(name, after)?;
        }
        _ => {}
    }
    Ok(())
}

/// `tableCreate(catalog, request)`: see [`create`].
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableCreate<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the create request")?;
        let answer = create(catalog, &request)?;
        Ok(JString::from_str(env, answer.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// `tableAlter(catalog, request)`: see [`alter`].
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_tableAlter<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    request: JString<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        // SAFETY: a catalog handle from NativeCatalog
        let catalog = unsafe { handle_ref::<CatalogHandle>(handle)? };
        let request = parse_json(&string(env, &request)?, "the alter request")?;
        let answer = alter(catalog, &request)?;
        Ok(JString::from_str(env, answer.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}
