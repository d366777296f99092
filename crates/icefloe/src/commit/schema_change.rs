//! A schema update as a commit change: the new schema, and what Java's `SchemaUpdate`
//! does to the table properties along with it, computed on each attempt's base (another
//! writer may have changed the properties meanwhile):
//!
//! - `schema.name-mapping.default`, when set, is updated for the renames and additions
//!   ([`NameMapping::updated`]); a mapping that cannot be read or updated is left as it is,
//!   as Java logs and goes on;
//! - column-keyed properties (`write.metadata.metrics.column.<name>`,
//!   `write.parquet.bloom-filter-enabled.column.<name>`,
//!   `write.parquet.stats-enabled.column.<name>`) follow renamed columns and are dropped
//!   with deleted ones (Java's `PropertyUtil.applySchemaChanges`).

use std::collections::HashMap;

use super::builder::MetadataBuilder;
use super::transaction::{MetadataChange, PendingChange};
use super::update::TableUpdate;
use crate::error::Result;
use crate::io::FileIO;
use crate::spec::name_mapping::{NameMapping, DEFAULT_NAME_MAPPING_PROPERTY};
use crate::spec::types::NestedField;

/// Property prefixes keyed by a column's full name.
pub const COLUMN_PROPERTY_PREFIXES: [&str; 3] = [
    "write.metadata.metrics.column.",
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
];

/// A schema change with the property updates it implies.
pub struct SchemaChange {
    /// The requirements and the schema updates (add schema, set current schema).
    pub schema: MetadataChange,
    pub updated_fields: HashMap<i32, NestedField>,
    pub added_fields: Vec<(i32, i32)>,
    pub deleted_columns: Vec<String>,
    pub renamed_columns: Vec<(String, String)>,
}

impl PendingChange for SchemaChange {
    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        self.schema.apply(io, builder)?;
        let properties = &builder.current().properties;
        let mut set = Vec::new();
        let mut remove = Vec::new();
        if let Some((_, json)) = properties
            .iter()
            .find(|(k, _)| k == DEFAULT_NAME_MAPPING_PROPERTY)
        {
            let updated = NameMapping::from_json_str(json)
                .ok()
                .and_then(|m| m.updated(&self.updated_fields, &self.added_fields));
            if let Some(mapping) = updated {
                set.push((
                    DEFAULT_NAME_MAPPING_PROPERTY.to_string(),
                    mapping.to_json_string(),
                ));
            }
        }
        if !self.deleted_columns.is_empty() || !self.renamed_columns.is_empty() {
            for (key, value) in properties {
                let Some(prefix) = COLUMN_PROPERTY_PREFIXES
                    .iter()
                    .find(|p| key.starts_with(**p))
                else {
                    continue;
                };
                let column = &key[prefix.len()..];
                if let Some((_, new)) = self.renamed_columns.iter().find(|(old, _)| old == column) {
                    remove.push(key.clone());
                    set.push((format!("{prefix}{new}"), value.clone()));
                } else if self.deleted_columns.iter().any(|d| d == column) {
                    remove.push(key.clone());
                }
            }
        }
        // a renamed key may land on a key that is removed: set after removing
        let kept_removals: Vec<String> = remove
            .into_iter()
            .filter(|k| !set.iter().any(|(s, _)| s == k))
            .collect();
        if !kept_removals.is_empty() {
            builder.apply(TableUpdate::RemoveProperties {
                removals: kept_removals,
            })?;
        }
        if !set.is_empty() {
            builder.apply(TableUpdate::SetProperties { updates: set })?;
        }
        Ok(())
    }
}
