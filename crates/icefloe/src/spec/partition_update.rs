//! Partition evolution ("Partition Evolution" in the spec): pending changes to a table's
//! current partition spec — add a field (a source column and a transform), remove one,
//! rename one — applied at once to give the fields of the next spec.
//!
//! The rules follow Java's `BaseUpdatePartitionSpec`, so a table evolved by icefloe gets
//! the spec Java would have given it:
//! - new fields get ids above `last-partition-id`, except that in v2+ a field that some
//!   earlier spec had with the same source and transform is re-used (its id and, when no
//!   name is given, its name), so data written under that spec keeps matching;
//! - a field removed and added again in the same update is simply kept;
//! - in v1 tables, whose partition field ids are positional, removed fields stay as `void`
//!   transforms and new fields are appended after them; a `void` field in the way of a new
//!   or renamed field's name is renamed to `<name>_<field id>`;
//! - two time transforms (`year`, `month`, `day`, `hour`) of one column cannot both be
//!   added in one update;
//! - every change is validated when it is made, and the whole spec when it is applied
//!   (names unique and not another column's name, sources partitionable).
//!
//! The spec id of the result is not decided here: the table metadata builder re-uses the
//! id of an equal earlier spec or takes the next one.

use std::collections::{HashMap, HashSet};

use super::partition::{PartitionField, PartitionSpec};
use super::schema::Schema;
use super::transform::Transform;
use crate::error::{Error, Result};

/// A partition field's identity for duplicate checks: source id and transform string
/// (Java compares transforms by their string here).
type TransformKey = (i32, String);

fn bad(message: impl Into<String>) -> Error {
    Error::invalid_argument(message)
}

fn describe(f: &PartitionField) -> String {
    format!(
        "{}: {}({}) [{}]",
        f.field_id,
        f.name,
        f.source_id(),
        f.transform
    )
}

fn is_time(t: &Transform) -> bool {
    matches!(
        t,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    )
}

/// Pending changes to a partition spec. Build with [`UpdatePartitionSpec::new`], record
/// changes, then [`UpdatePartitionSpec::apply`] (which can be called again).
#[derive(Debug, Clone)]
pub struct UpdatePartitionSpec {
    format_version: i32,
    schema: Schema,
    spec: PartitionSpec,
    /// Every field of every spec of the table, newest spec first, for re-use (v2+).
    historical: Vec<PartitionField>,
    /// The table's `last-partition-id` before the changes.
    base_last_partition_id: i32,
    /// The last id handed out; ids of refused adds are used up, as in Java.
    last_assigned_partition_id: i32,
    case_sensitive: bool,
    name_to_field: HashMap<String, PartitionField>,
    transform_to_field: HashMap<TransformKey, PartitionField>,
    adds: Vec<PartitionField>,
    added_time_fields: HashMap<i32, PartitionField>,
    transform_to_added_field: HashMap<TransformKey, PartitionField>,
    name_to_added_field: HashMap<String, PartitionField>,
    deletes: HashSet<i32>,
    renames: HashMap<String, String>,
}

impl UpdatePartitionSpec {
    /// Changes to `spec`, the current spec of a table of `format_version` whose current
    /// schema is `schema`, whose specs (all of them, the current one included) are `specs`
    /// and whose `last-partition-id` is `last_partition_id`.
    ///
    /// Refused when the current spec has a transform this library does not know: the
    /// result could not be validated.
    pub fn new(
        format_version: i32,
        schema: &Schema,
        spec: &PartitionSpec,
        specs: &[PartitionSpec],
        last_partition_id: i32,
    ) -> Result<UpdatePartitionSpec> {
        if let Some(f) = spec
            .fields
            .iter()
            .find(|f| matches!(f.transform, Transform::Unknown(_)))
        {
            return Err(bad(format!(
                "Cannot update partition spec with unknown transform: {}",
                describe(f)
            )));
        }
        let mut by_age: Vec<&PartitionSpec> = specs.iter().collect();
        // Java searches an unordered set; when several old fields match, prefer the newest
        // spec's (its name is the one users saw last). Stable, so equal ids keep list order.
        by_age.sort_by_key(|s| std::cmp::Reverse(s.spec_id));
        let historical = by_age
            .iter()
            .flat_map(|s| s.fields.iter().cloned())
            .collect();
        let mut name_to_field = HashMap::new();
        let mut transform_to_field = HashMap::new();
        for f in &spec.fields {
            name_to_field.insert(f.name.clone(), f.clone());
            transform_to_field.insert((f.source_id(), f.transform.to_string()), f.clone());
        }
        Ok(UpdatePartitionSpec {
            format_version,
            schema: schema.clone(),
            spec: spec.clone(),
            historical,
            base_last_partition_id: last_partition_id,
            last_assigned_partition_id: last_partition_id,
            case_sensitive: true,
            name_to_field,
            transform_to_field,
            adds: Vec::new(),
            added_time_fields: HashMap::new(),
            transform_to_added_field: HashMap::new(),
            name_to_added_field: HashMap::new(),
            deletes: HashSet::new(),
            renames: HashMap::new(),
        })
    }

    /// Whether column names given to later calls are matched case-sensitively (default
    /// true). Partition field names are always matched exactly.
    pub fn case_sensitive(&mut self, case_sensitive: bool) -> &mut Self {
        self.case_sensitive = case_sensitive;
        self
    }

    /// The table's `last-partition-id` once the result is committed: the highest field
    /// id of the result, never lower than before (what Java's metadata builder records;
    /// ids used up by refused adds are not counted).
    pub fn last_partition_id(&self) -> i32 {
        self.adds
            .iter()
            .map(|f| f.field_id)
            .chain(self.spec.fields.iter().map(|f| f.field_id))
            .fold(self.base_last_partition_id, i32::max)
    }

    /// Adds an identity partition on column `source`, named after the column.
    pub fn add_identity(&mut self, source: &str) -> Result<&mut Self> {
        self.add_field(source, Transform::Identity, None)
    }

    /// Adds a partition field: `transform` of column `source` (a dotted name for nested
    /// columns), named `name` or, without one, as Java names it (`id_bucket_16`,
    /// `name_trunc_4`, `ts_day`, the column name for identity).
    pub fn add_field(
        &mut self,
        source: &str,
        transform: Transform,
        name: Option<&str>,
    ) -> Result<&mut Self> {
        if let Some(already) = name.and_then(|n| self.name_to_added_field.get(n)) {
            return Err(bad(format!(
                "Cannot add duplicate partition field: {}",
                describe(already)
            )));
        }
        let (source_id, transform) = self.resolve(source, transform)?;
        let key = (source_id, transform.to_string());
        let term = format!("{transform}({source})");

        if let Some(existing) = self.transform_to_field.get(&key).cloned() {
            if self.deletes.contains(&existing.field_id) && existing.transform == transform {
                // removed and added back: keep the field, renamed if a new name was given
                self.deletes.remove(&existing.field_id);
                return match name {
                    Some(n) if n != existing.name => self.rename_field(&existing.name, n),
                    _ => Ok(self),
                };
            }
            return Err(bad(format!(
                "Cannot add duplicate partition field {}={term}, conflicts with {}",
                name.unwrap_or("null"),
                describe(&existing)
            )));
        }
        if let Some(added) = self.transform_to_added_field.get(&key) {
            return Err(bad(format!(
                "Cannot add duplicate partition field {}={term}, already added: {}",
                name.unwrap_or("null"),
                describe(added)
            )));
        }

        let mut new_field = self.recycle_or_create(source_id, &transform, name);
        if new_field.name.is_empty() && name.is_none() {
            new_field.name = self.default_name(source_id, &transform);
        }

        // The order of the checks and of the state they change is Java's, so that a
        // failed call leaves the same state behind.
        if is_time(&new_field.transform) {
            if let Some(time_field) = self.added_time_fields.get(&source_id) {
                return Err(bad(format!(
                    "Cannot add redundant partition field: {} conflicts with {}",
                    describe(time_field),
                    describe(&new_field)
                )));
            }
            self.added_time_fields.insert(source_id, new_field.clone());
        }
        self.transform_to_added_field.insert(key, new_field.clone());

        if let Some(existing) = self.name_to_field.get(&new_field.name).cloned() {
            if !self.deletes.contains(&existing.field_id) {
                if existing.transform == Transform::Void {
                    // a v1 void field that holds the name steps aside
                    let renamed = format!("{}_{}", existing.name, existing.field_id);
                    self.rename_field(&existing.name, &renamed)?;
                } else {
                    return Err(bad(format!(
                        "Cannot add duplicate partition field name: {}",
                        name.unwrap_or("null")
                    )));
                }
            } else {
                let renamed = format!("{}_{}", existing.name, existing.field_id);
                self.renames.insert(existing.name.clone(), renamed);
            }
        }

        self.name_to_added_field
            .insert(new_field.name.clone(), new_field.clone());
        self.adds.push(new_field);
        Ok(self)
    }

    /// Removes the partition field named `name`.
    pub fn remove_field(&mut self, name: &str) -> Result<&mut Self> {
        if let Some(added) = self.name_to_added_field.get(name) {
            return Err(bad(format!(
                "Cannot delete newly added field: {}",
                describe(added)
            )));
        }
        if self.renames.contains_key(name) {
            return Err(bad(format!(
                "Cannot rename and delete partition field: {name}"
            )));
        }
        let field = self
            .name_to_field
            .get(name)
            .ok_or_else(|| bad(format!("Cannot find partition field to remove: {name}")))?;
        self.deletes.insert(field.field_id);
        Ok(self)
    }

    /// Removes the partition field that applies `transform` to column `source`.
    pub fn remove_field_by_term(
        &mut self,
        source: &str,
        transform: Transform,
    ) -> Result<&mut Self> {
        let (source_id, transform) = self.resolve(source, transform)?;
        let key = (source_id, transform.to_string());
        if let Some(added) = self.transform_to_added_field.get(&key) {
            return Err(bad(format!(
                "Cannot delete newly added field: {}",
                describe(added)
            )));
        }
        let field = self.transform_to_field.get(&key).ok_or_else(|| {
            bad(format!(
                "Cannot find partition field to remove: {transform}({source})"
            ))
        })?;
        if self.renames.contains_key(&field.name) {
            return Err(bad(format!(
                "Cannot rename and delete partition field: {}",
                field.name
            )));
        }
        self.deletes.insert(field.field_id);
        Ok(self)
    }

    /// Renames the partition field `name` to `new_name`.
    pub fn rename_field(&mut self, name: &str, new_name: &str) -> Result<&mut Self> {
        if let Some(existing) = self.name_to_field.get(new_name).cloned() {
            if existing.transform == Transform::Void {
                // a v1 void field that holds the name steps aside
                let renamed = format!("{}_{}", existing.name, existing.field_id);
                self.rename_field(&existing.name, &renamed)?;
            }
        }
        if self.name_to_added_field.contains_key(name) {
            return Err(bad(format!(
                "Cannot rename newly added partition field: {name}"
            )));
        }
        let field = self
            .name_to_field
            .get(name)
            .ok_or_else(|| bad(format!("Cannot find partition field to rename: {name}")))?;
        if self.deletes.contains(&field.field_id) {
            return Err(bad(format!(
                "Cannot delete and rename partition field: {name}"
            )));
        }
        self.renames.insert(name.to_string(), new_name.to_string());
        Ok(self)
    }

    /// The fields of the next spec: the current fields that stay (renamed where asked;
    /// in v1 removed ones as `void`), then the added ones. The spec id is left 0 for the
    /// metadata builder to assign.
    pub fn apply(&self) -> Result<PartitionSpec> {
        let mut fields = Vec::with_capacity(self.spec.fields.len() + self.adds.len());
        for f in &self.spec.fields {
            let deleted = self.deletes.contains(&f.field_id);
            if deleted && self.format_version >= 2 {
                continue;
            }
            let mut kept = f.clone();
            if let Some(new_name) = self.renames.get(&f.name) {
                kept.name = new_name.clone();
            }
            if deleted {
                // v1 field ids are positional: the field stays, producing only nulls
                kept.transform = Transform::Void;
            }
            fields.push(kept);
        }
        fields.extend(self.adds.iter().cloned());
        let spec = PartitionSpec::new(0, fields);
        self.validate(&spec)?;
        Ok(spec)
    }

    /// Java's checks of a built spec: unique, non-empty names that are not the name of a
    /// column other than the field's source, and sources that exist, are primitive, are
    /// not inside a list or map, and suit the transform (void fields excepted).
    fn validate(&self, spec: &PartitionSpec) -> Result<()> {
        let mut names = HashSet::new();
        for f in &spec.fields {
            if self.schema.field_by_id(f.source_id()).is_some() {
                if let Some(column) = self.schema.field_by_name(&f.name, true) {
                    if column.id != f.source_id() {
                        return Err(bad(format!(
                            "Cannot create identity partition sourced from different field in schema: {}",
                            f.name
                        )));
                    }
                }
            }
            if f.name.is_empty() {
                return Err(bad("Cannot use empty partition name: "));
            }
            if !names.insert(f.name.as_str()) {
                return Err(bad(format!(
                    "Cannot use partition name more than once: {}",
                    f.name
                )));
            }
        }
        for f in &spec.fields {
            if f.transform == Transform::Void {
                continue;
            }
            let source = self.schema.field_by_id(f.source_id()).ok_or_else(|| {
                bad(format!(
                    "Cannot find source column for partition field: {}",
                    describe(f)
                ))
            })?;
            if !source.field_type.is_primitive() {
                return Err(bad(format!(
                    "Cannot partition by non-primitive source field: {}",
                    source.field_type
                )));
            }
            if !f.transform.can_transform(&source.field_type) {
                return Err(bad(format!(
                    "Invalid source type {} for transform: {}",
                    source.field_type, f.transform
                )));
            }
            if self.schema.struct_path(f.source_id()).is_none() {
                return Err(bad(format!(
                    "Invalid partition field parent: {} is inside a list or map",
                    f.name
                )));
            }
        }
        Ok(())
    }

    /// Binds a column name and checks the transform accepts its type.
    fn resolve(&self, source: &str, transform: Transform) -> Result<(i32, Transform)> {
        let field = self
            .schema
            .field_by_name(source, self.case_sensitive)
            .ok_or_else(|| {
                bad(format!(
                    "Cannot find field '{source}' in schema {}",
                    self.schema.schema_id()
                ))
            })?;
        // identity is a bare column reference, which Java binds without a type check
        // (the check comes when the result is applied)
        if transform != Transform::Identity && !transform.can_transform(&field.field_type) {
            return Err(bad(format!(
                "Cannot bind: {transform} cannot transform {} values from '{source}'",
                field.field_type
            )));
        }
        Ok((field.id, transform))
    }

    /// In v2+, a field of an earlier spec with this source and transform (and name, when
    /// one is given) is re-used whole; otherwise a new field gets the next id. A new field
    /// without a name gets an empty one, replaced by the default name by the caller.
    fn recycle_or_create(
        &mut self,
        source_id: i32,
        transform: &Transform,
        name: Option<&str>,
    ) -> PartitionField {
        if self.format_version >= 2 {
            let found = self.historical.iter().find(|f| {
                f.source_id() == source_id
                    && &f.transform == transform
                    && name.is_none_or(|n| f.name == n)
            });
            if let Some(f) = found {
                return f.clone();
            }
        }
        // Java counts ids from the table's last-partition-id and never hands one out twice,
        // even when the add it was for is then refused.
        self.last_assigned_partition_id += 1;
        PartitionField::new(
            source_id,
            self.last_assigned_partition_id,
            name.unwrap_or_default(),
            transform.clone(),
        )
    }

    /// Java's default partition field names, from the column's full name.
    fn default_name(&self, source_id: i32, transform: &Transform) -> String {
        let column = self.schema.name_by_id(source_id).unwrap_or_default();
        match transform {
            Transform::Identity => column.to_string(),
            Transform::Bucket(n) => format!("{column}_bucket_{n}"),
            Transform::Truncate(w) => format!("{column}_trunc_{w}"),
            Transform::Year => format!("{column}_year"),
            Transform::Month => format!("{column}_month"),
            Transform::Day => format!("{column}_day"),
            Transform::Hour => format!("{column}_hour"),
            Transform::Void => format!("{column}_null"),
            // unreachable: unknown transforms cannot be bound to a column
            Transform::Unknown(t) => format!("{column}_{t}"),
        }
    }
}

#[cfg(test)]
#[path = "partition_update_tests.rs"]
mod tests;
