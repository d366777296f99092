//! Schema evolution ("Schema Evolution" in the spec): a set of pending changes to a
//! schema — add, delete, rename, promote, make optional or required, document, set
//! defaults, move, identifier fields, union by name — applied at once to give the next
//! schema.
//!
//! The rules and the resulting field order and ids follow Java's `SchemaUpdate`, so a
//! table evolved by icefloe has the schema Java would have given it: changes are recorded
//! by field id against the *base* schema (names are resolved when the change is made),
//! new columns get ids above `last-column-id` in the order they are added (nested types
//! numbered as `assign_fresh_ids` does), adds are applied before moves, and every change
//! is validated when it is made, not when the schema is built.

use std::collections::HashMap;

use super::literal::Literal;
use super::schema::{is_promotion_allowed, Schema};
use super::types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
use crate::error::{Error, Result};

/// The id Java gives the table's root struct as the parent of top-level fields.
const ROOT: i32 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    First(i32),
    Before(i32, i32),
    After(i32, i32),
}

impl Move {
    fn field_id(self) -> i32 {
        match self {
            Move::First(id) | Move::Before(id, _) | Move::After(id, _) => id,
        }
    }
}

/// Pending changes to a schema. Build with [`UpdateSchema::new`], record changes, then
/// [`UpdateSchema::apply`] (which does not consume the changes, so it can be re-applied).
#[derive(Debug, Clone)]
pub struct UpdateSchema {
    schema: Schema,
    last_column_id: i32,
    id_to_parent: HashMap<i32, i32>,
    deletes: Vec<i32>,
    updates: HashMap<i32, NestedField>,
    /// (parent id, added id) in the order the columns were added.
    added: Vec<(i32, i32)>,
    added_name_to_id: HashMap<String, i32>,
    /// (parent id, move) in the order the moves were requested.
    moves: Vec<(i32, Move)>,
    allow_incompatible_changes: bool,
    identifier_field_names: Vec<String>,
    case_sensitive: bool,
}

fn bad(message: impl Into<String>) -> Error {
    Error::invalid_argument(message)
}

impl UpdateSchema {
    /// Changes to `schema`, in a table whose `last-column-id` is `last_column_id`.
    pub fn new(schema: &Schema, last_column_id: i32) -> UpdateSchema {
        let mut identifier_field_names: Vec<String> = schema
            .identifier_field_ids()
            .iter()
            .filter_map(|id| schema.name_by_id(*id).map(str::to_string))
            .collect();
        identifier_field_names.sort();
        UpdateSchema {
            id_to_parent: index_parents(schema.as_struct()),
            schema: schema.clone(),
            last_column_id: last_column_id.max(schema.highest_field_id()),
            deletes: Vec::new(),
            updates: HashMap::new(),
            added: Vec::new(),
            added_name_to_id: HashMap::new(),
            moves: Vec::new(),
            allow_incompatible_changes: false,
            identifier_field_names,
            case_sensitive: true,
        }
    }

    /// The schema the changes were made against.
    pub fn base_schema(&self) -> &Schema {
        &self.schema
    }

    /// The table's `last-column-id` after the changes.
    pub fn last_column_id(&self) -> i32 {
        self.last_column_id
    }

    /// Allows changes that can break readers or writers: adding a required column without
    /// a default, making an optional column required.
    pub fn allow_incompatible_changes(&mut self) -> &mut Self {
        self.allow_incompatible_changes = true;
        self
    }

    /// Whether names given to later calls are matched case-sensitively (default true).
    pub fn case_sensitive(&mut self, case_sensitive: bool) -> &mut Self {
        self.case_sensitive = case_sensitive;
        self
    }

    fn find_field(&self, name: &str) -> Option<&NestedField> {
        self.schema.field_by_name(name, self.case_sensitive)
    }

    fn name_key(&self, name: &str) -> String {
        if self.case_sensitive {
            name.to_string()
        } else {
            name.to_lowercase()
        }
    }

    fn is_deleted(&self, id: i32) -> bool {
        self.deletes.contains(&id)
    }

    /// Adds an optional column, top-level when `parent` is `None`, else inside the struct
    /// `parent` names (for a list or map, inside its element or value struct). With a
    /// `default`, rows written before the change read it (v3 tables only).
    pub fn add_column(
        &mut self,
        parent: Option<&str>,
        name: &str,
        field_type: Type,
        doc: Option<&str>,
        default: Option<Literal>,
    ) -> Result<&mut Self> {
        self.internal_add_column(parent, name, false, field_type, doc, default)
    }

    /// Adds a required column; without a `default` this is an incompatible change.
    pub fn add_required_column(
        &mut self,
        parent: Option<&str>,
        name: &str,
        field_type: Type,
        doc: Option<&str>,
        default: Option<Literal>,
    ) -> Result<&mut Self> {
        self.internal_add_column(parent, name, true, field_type, doc, default)
    }

    fn internal_add_column(
        &mut self,
        parent: Option<&str>,
        name: &str,
        required: bool,
        field_type: Type,
        doc: Option<&str>,
        default: Option<Literal>,
    ) -> Result<&mut Self> {
        if name.contains('.') && parent.is_none() {
            // Java would accept it and create an ambiguous name; a dotted name almost always
            // means the caller meant a nested column.
            return Err(bad(format!(
                "Cannot add column with ambiguous name: {name}, use add_column(parent, name, ...)"
            )));
        }
        let (parent_id, full_name) = match parent {
            Some(parent) => {
                let mut parent_field = self
                    .find_field(parent)
                    .ok_or_else(|| bad(format!("Cannot find parent struct: {parent}")))?;
                match &parent_field.field_type {
                    Type::Map(m) => parent_field = &m.value_field,
                    Type::List(l) => parent_field = &l.element_field,
                    _ => {}
                }
                if !matches!(parent_field.field_type, Type::Struct(_)) {
                    return Err(bad(format!(
                        "Cannot add to non-struct column: {parent}: {}",
                        parent_field.field_type
                    )));
                }
                let parent_id = parent_field.id;
                if self.is_deleted(parent_id) {
                    return Err(bad(format!(
                        "Cannot add to a column that will be deleted: {parent}"
                    )));
                }
                if let Some(current) = self.find_field(&format!("{parent}.{name}")) {
                    if !self.is_deleted(current.id) {
                        return Err(bad(format!(
                            "Cannot add column, name already exists: {parent}.{name}"
                        )));
                    }
                }
                let parent_name = self.schema.name_by_id(parent_id).unwrap_or(parent);
                (parent_id, format!("{parent_name}.{name}"))
            }
            None => {
                if let Some(current) = self.find_field(name) {
                    if !self.is_deleted(current.id) {
                        return Err(bad(format!(
                            "Cannot add column, name already exists: {name}"
                        )));
                    }
                }
                (ROOT, name.to_string())
            }
        };
        if default.is_none() && required && !self.allow_incompatible_changes {
            return Err(bad(format!(
                "Incompatible change: cannot add required column without a default value: {full_name}"
            )));
        }
        if let Some(d) = &default {
            check_default(d, &field_type, &full_name)?;
        }
        let new_id = self.assign_new_column_id();
        self.added_name_to_id
            .insert(self.name_key(&full_name), new_id);
        if parent_id != ROOT {
            self.id_to_parent.insert(new_id, parent_id);
        }
        let mut next = self.last_column_id;
        let fresh = field_type.with_fresh_ids(&mut |_| {
            next += 1;
            Ok(next)
        })?;
        self.last_column_id = next;
        let mut field = NestedField::new(new_id, name, fresh, required);
        field.doc = doc.map(str::to_string);
        field.initial_default = default.clone();
        field.write_default = default;
        self.updates.insert(new_id, field);
        self.added.push((parent_id, new_id));
        Ok(self)
    }

    fn assign_new_column_id(&mut self) -> i32 {
        self.last_column_id += 1;
        self.last_column_id
    }

    /// Deletes a column (and everything nested in it).
    pub fn delete_column(&mut self, name: &str) -> Result<&mut Self> {
        let id = self
            .find_field(name)
            .ok_or_else(|| bad(format!("Cannot delete missing column: {name}")))?
            .id;
        if self.added.iter().any(|(p, _)| *p == id) {
            return Err(bad(format!(
                "Cannot delete a column that has additions: {name}"
            )));
        }
        if self.updates.contains_key(&id) {
            return Err(bad(format!(
                "Cannot delete a column that has updates: {name}"
            )));
        }
        self.deletes.push(id);
        Ok(self)
    }

    /// Renames a column; its id, and so its data, stay.
    pub fn rename_column(&mut self, name: &str, new_name: &str) -> Result<&mut Self> {
        let field = self
            .find_field(name)
            .ok_or_else(|| bad(format!("Cannot rename missing column: {name}")))?;
        if self.is_deleted(field.id) {
            return Err(bad(format!(
                "Cannot rename a column that will be deleted: {}",
                field.name
            )));
        }
        let id = field.id;
        let mut updated = self.updates.get(&id).unwrap_or(field).clone();
        updated.name = new_name.to_string();
        self.updates.insert(id, updated);
        if let Some(pos) = self.identifier_field_names.iter().position(|n| n == name) {
            self.identifier_field_names.remove(pos);
            self.identifier_field_names.push(new_name.to_string());
        }
        Ok(self)
    }

    /// Makes a column required; an incompatible change unless the column is being added
    /// with a default in this same update.
    pub fn require_column(&mut self, name: &str) -> Result<&mut Self> {
        self.update_requirement(name, true)
    }

    pub fn make_column_optional(&mut self, name: &str) -> Result<&mut Self> {
        self.update_requirement(name, false)
    }

    /// The updated and added fields by id (Java's `updates`: renames, promotions, docs,
    /// nullability and new columns).
    pub fn updated_fields(&self) -> &HashMap<i32, NestedField> {
        &self.updates
    }

    /// The added columns as (parent id, id) in the order they were added; the parent of a
    /// top-level column is `-1`.
    pub fn added_fields(&self) -> &[(i32, i32)] {
        &self.added
    }

    /// What the update does to column names, for properties keyed by them: the full names
    /// of deleted columns, and (old full name, new full name) of updated columns whose
    /// name changed (added columns excluded), as Java's `SchemaUpdate` passes them to
    /// `PropertyUtil.applySchemaChanges`. `new_schema` is the result of [`Self::apply`].
    pub fn column_name_changes(&self, new_schema: &Schema) -> (Vec<String>, Vec<(String, String)>) {
        let deleted = self
            .deletes
            .iter()
            .filter_map(|id| self.schema.name_by_id(*id).map(str::to_string))
            .collect();
        let added: std::collections::HashSet<i32> = self.added.iter().map(|(_, id)| *id).collect();
        let mut renamed: Vec<(String, String)> = self
            .updates
            .keys()
            .filter(|id| !added.contains(id))
            .filter_map(|id| {
                let old = self.schema.name_by_id(*id)?;
                let new = new_schema.name_by_id(*id)?;
                (old != new).then(|| (old.to_string(), new.to_string()))
            })
            .collect();
        renamed.sort();
        (deleted, renamed)
    }

    /// The field a name refers to with the pending changes to it (renames, promotions,
    /// docs), or a column added by this update; `None` when there is none.
    pub fn pending_field(&self, name: &str) -> Option<&NestedField> {
        if let Some(existing) = self.find_field(name) {
            return Some(self.updates.get(&existing.id).unwrap_or(existing));
        }
        let id = self.added_name_to_id.get(&self.name_key(name))?;
        self.updates.get(id)
    }

    fn update_requirement(&mut self, name: &str, required: bool) -> Result<&mut Self> {
        let field = self
            .pending_field(name)
            .ok_or_else(|| bad(format!("Cannot update missing column: {name}")))?;
        if field.required == required {
            return Ok(self);
        }
        let is_defaulted_add = self.added_name_to_id.contains_key(&self.name_key(name))
            && field.initial_default.is_some();
        if required && !is_defaulted_add && !self.allow_incompatible_changes {
            return Err(bad(format!(
                "Cannot change column nullability: {name}: optional -> required"
            )));
        }
        if self.is_deleted(field.id) {
            return Err(bad(format!(
                "Cannot update a column that will be deleted: {}",
                field.name
            )));
        }
        let mut updated = field.clone();
        updated.required = required;
        self.updates.insert(updated.id, updated);
        Ok(self)
    }

    /// Widens a primitive column's type (int→long, float→double, decimal precision).
    pub fn update_column(&mut self, name: &str, new_type: PrimitiveType) -> Result<&mut Self> {
        let field = self
            .pending_field(name)
            .ok_or_else(|| bad(format!("Cannot update missing column: {name}")))?;
        if self.is_deleted(field.id) {
            return Err(bad(format!(
                "Cannot update a column that will be deleted: {}",
                field.name
            )));
        }
        let new_type = Type::Primitive(new_type);
        if field.field_type == new_type {
            return Ok(self);
        }
        // Java's rules (the v3 promotions of the spec — unknown and date to timestamp —
        // are not applied by Java 1.11 yet, and its readers could not read them)
        if !is_promotion_allowed(&field.field_type, &new_type, 2) {
            return Err(bad(format!(
                "Cannot change column type: {name}: {} -> {new_type}",
                field.field_type
            )));
        }
        let mut updated = field.clone();
        updated.field_type = new_type;
        self.updates.insert(updated.id, updated);
        Ok(self)
    }

    pub fn update_column_doc(&mut self, name: &str, doc: Option<&str>) -> Result<&mut Self> {
        let field = self
            .pending_field(name)
            .ok_or_else(|| bad(format!("Cannot update missing column: {name}")))?;
        if self.is_deleted(field.id) {
            return Err(bad(format!(
                "Cannot update a column that will be deleted: {}",
                field.name
            )));
        }
        if field.doc.as_deref() == doc {
            return Ok(self);
        }
        let mut updated = field.clone();
        updated.doc = doc.map(str::to_string);
        self.updates.insert(updated.id, updated);
        Ok(self)
    }

    /// Sets the column's `write-default` (the value writers use when they have none).
    pub fn update_column_default(
        &mut self,
        name: &str,
        default: Option<Literal>,
    ) -> Result<&mut Self> {
        let field = self
            .pending_field(name)
            .ok_or_else(|| bad(format!("Cannot update missing column: {name}")))?;
        if self.is_deleted(field.id) {
            return Err(bad(format!(
                "Cannot update a column that will be deleted: {}",
                field.name
            )));
        }
        if let Some(d) = &default {
            check_default(d, &field.field_type, name)?;
            if field.write_default.as_ref() == Some(d) {
                return Ok(self);
            }
        }
        let mut updated = field.clone();
        updated.write_default = default;
        self.updates.insert(updated.id, updated);
        Ok(self)
    }

    fn find_for_move(&self, name: &str) -> Option<i32> {
        if let Some(id) = self.added_name_to_id.get(&self.name_key(name)) {
            return Some(*id);
        }
        self.find_field(name).map(|f| f.id)
    }

    pub fn move_first(&mut self, name: &str) -> Result<&mut Self> {
        let id = self
            .find_for_move(name)
            .ok_or_else(|| bad(format!("Cannot move missing column: {name}")))?;
        self.internal_move(name, Move::First(id))
    }

    pub fn move_before(&mut self, name: &str, before: &str) -> Result<&mut Self> {
        let id = self
            .find_for_move(name)
            .ok_or_else(|| bad(format!("Cannot move missing column: {name}")))?;
        let before_id = self.find_for_move(before).ok_or_else(|| {
            bad(format!(
                "Cannot move {name} before missing column: {before}"
            ))
        })?;
        if id == before_id {
            return Err(bad(format!("Cannot move {name} before itself")));
        }
        self.internal_move(name, Move::Before(id, before_id))
    }

    pub fn move_after(&mut self, name: &str, after: &str) -> Result<&mut Self> {
        let id = self
            .find_for_move(name)
            .ok_or_else(|| bad(format!("Cannot move missing column: {name}")))?;
        let after_id = self
            .find_for_move(after)
            .ok_or_else(|| bad(format!("Cannot move {name} after missing column: {after}")))?;
        if id == after_id {
            return Err(bad(format!("Cannot move {name} after itself")));
        }
        self.internal_move(name, Move::After(id, after_id))
    }

    fn internal_move(&mut self, name: &str, mv: Move) -> Result<&mut Self> {
        let parent = self.id_to_parent.get(&mv.field_id()).copied();
        let reference_parent = match mv {
            Move::First(_) => None,
            Move::Before(_, r) | Move::After(_, r) => Some(self.id_to_parent.get(&r).copied()),
        };
        match parent {
            Some(parent_id) => {
                let parent_field = self.schema.field_by_id(parent_id);
                if !matches!(parent_field.map(|f| &f.field_type), Some(Type::Struct(_))) {
                    let shown = parent_field
                        .map(|f| f.field_type.to_string())
                        .unwrap_or_default();
                    return Err(bad(format!(
                        "Cannot move fields in non-struct type: {shown}"
                    )));
                }
                if let Some(rp) = reference_parent {
                    if rp != Some(parent_id) {
                        return Err(bad(format!(
                            "Cannot move field {name} to a different struct"
                        )));
                    }
                }
                self.moves.push((parent_id, mv));
            }
            None => {
                if let Some(Some(_)) = reference_parent {
                    return Err(bad(format!(
                        "Cannot move field {name} to a different struct"
                    )));
                }
                self.moves.push((ROOT, mv));
            }
        }
        Ok(self)
    }

    /// Replaces the identifier fields (by name; resolved against the new schema).
    pub fn set_identifier_fields<S: AsRef<str>>(&mut self, names: &[S]) -> &mut Self {
        let mut set: Vec<String> = Vec::new();
        for n in names {
            if !set.iter().any(|s| s == n.as_ref()) {
                set.push(n.as_ref().to_string());
            }
        }
        self.identifier_field_names = set;
        self
    }

    /// Adds the columns of `new_schema` that the schema lacks (matched by name, at every
    /// level) and widens, documents and makes optional the ones that differ, as Java's
    /// `unionByNameWith`. Never deletes a column, never narrows one.
    pub fn union_by_name(&mut self, new_schema: &Schema) -> Result<&mut Self> {
        let base = self.schema.clone();
        self.union_struct(&base, new_schema.as_struct(), ROOT)?;
        Ok(self)
    }

    fn partner_struct(base: &Schema, partner_id: i32) -> Option<&StructType> {
        if partner_id == ROOT {
            Some(base.as_struct())
        } else {
            match &base.field_by_id(partner_id)?.field_type {
                Type::Struct(s) => Some(s),
                _ => None,
            }
        }
    }

    /// `partner_id` is the id of the field of the base schema whose type is the struct
    /// that `st` is matched against (`ROOT` for the schema itself).
    fn union_struct(&mut self, base: &Schema, st: &StructType, partner_id: i32) -> Result<()> {
        let Some(partner) = Self::partner_struct(base, partner_id) else {
            return Ok(());
        };
        // Java visits children first, then handles this struct's fields in order.
        let mut matches = Vec::with_capacity(st.fields.len());
        for field in &st.fields {
            let existing = if self.case_sensitive {
                partner.fields.iter().find(|f| f.name == field.name)
            } else {
                let lower = field.name.to_lowercase();
                partner
                    .fields
                    .iter()
                    .find(|f| f.name.to_lowercase() == lower)
            };
            matches.push(existing.cloned());
        }
        for (field, existing) in st.fields.iter().zip(&matches) {
            if let Some(existing) = existing {
                self.union_type(base, &field.field_type, existing)?;
            }
        }
        for (field, existing) in st.fields.iter().zip(matches) {
            match existing {
                None => {
                    let parent_name = if partner_id == ROOT {
                        None
                    } else {
                        base.name_by_id(partner_id).map(str::to_string)
                    };
                    let full = match &parent_name {
                        Some(p) => format!("{p}.{}", field.name),
                        None => field.name.clone(),
                    };
                    // always added as optional, as Java does: rows already written
                    // have no value for it
                    self.internal_add_column(
                        parent_name.as_deref(),
                        &field.name,
                        false,
                        field.field_type.clone(),
                        field.doc.as_deref(),
                        field.initial_default.clone(),
                    )?;
                    self.update_column_default(&full, field.write_default.clone())?;
                }
                Some(existing) => self.union_update(base, field, &existing)?,
            }
        }
        Ok(())
    }

    fn union_type(&mut self, base: &Schema, new_type: &Type, existing: &NestedField) -> Result<()> {
        match (new_type, &existing.field_type) {
            (Type::Struct(s), Type::Struct(_)) => self.union_struct(base, s, existing.id),
            (Type::List(l), Type::List(el)) => {
                self.union_type(base, &l.element_field.field_type, &el.element_field)?;
                self.union_update(base, &l.element_field, &el.element_field)
            }
            (Type::Map(m), Type::Map(em)) => {
                self.union_type(base, &m.key_field.field_type, &em.key_field)?;
                self.union_type(base, &m.value_field.field_type, &em.value_field)?;
                self.union_update(base, &m.key_field, &em.key_field)?;
                self.union_update(base, &m.value_field, &em.value_field)
            }
            _ => Ok(()),
        }
    }

    fn union_update(
        &mut self,
        base: &Schema,
        field: &NestedField,
        existing: &NestedField,
    ) -> Result<()> {
        let full = base
            .name_by_id(existing.id)
            .unwrap_or(existing.name.as_str())
            .to_string();
        let needs_optional = !field.required && existing.required;
        let needs_type = !ignorable_type_update(&existing.field_type, &field.field_type);
        let needs_doc = field.doc.is_some() && field.doc != existing.doc;
        let needs_default =
            field.write_default.is_some() && field.write_default != existing.write_default;
        if needs_optional {
            self.make_column_optional(&full)?;
        }
        if needs_type {
            let Type::Primitive(p) = &field.field_type else {
                return Err(bad(format!(
                    "Cannot change column type: {full}: {} -> {}",
                    existing.field_type, field.field_type
                )));
            };
            self.update_column(&full, p.clone())?;
        }
        if needs_doc {
            self.update_column_doc(&full, field.doc.as_deref())?;
        }
        if needs_default {
            self.update_column_default(&full, field.write_default.clone())?;
        }
        Ok(())
    }

    /// The schema with every pending change applied (schema id 0: the table assigns it).
    pub fn apply(&self) -> Result<Schema> {
        let base = &self.schema;
        let parents = index_parents(base.as_struct());
        // existing identifier fields must not be deleted, nor any of their parents
        for name in &self.identifier_field_names {
            if let Some(field) = base.field_by_name(name, self.case_sensitive) {
                if self.is_deleted(field.id) {
                    return Err(bad(format!(
                        "Cannot delete identifier field {}. To force deletion, also call \
                         set_identifier_fields to update identifier fields.",
                        describe(field)
                    )));
                }
                let mut parent = parents.get(&field.id);
                while let Some(p) = parent {
                    if self.is_deleted(*p) {
                        let shown = base.field_by_id(*p).map(describe).unwrap_or_default();
                        return Err(bad(format!(
                            "Cannot delete field {shown} as it will delete nested identifier \
                             field {}",
                            describe(field)
                        )));
                    }
                    parent = parents.get(p);
                }
            }
        }

        let root_fields = self.apply_struct_fields(base.as_struct())?;
        let root_fields = self.add_and_move(root_fields, ROOT)?;
        check_unique_names(&root_fields)?;
        let provisional = Schema::new(0, root_fields.clone(), Vec::new())?;
        let mut ids = Vec::new();
        for name in &self.identifier_field_names {
            let id = provisional
                .id_by_name(name, self.case_sensitive)
                .ok_or_else(|| {
                    bad(format!(
                        "Cannot add field {name} as an identifier field: not found in current \
                         schema or added columns"
                    ))
                })?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let schema = Schema::new(0, root_fields, ids)?;
        schema
            .validate_identifier_fields()
            .map_err(|e| bad(e.to_string()))?;
        Ok(schema)
    }

    /// The fields of a struct after deletes and updates (not this struct's adds and moves,
    /// which the caller applies: for the root and for struct-typed fields).
    fn apply_struct_fields(&self, st: &StructType) -> Result<Vec<NestedField>> {
        let mut out = Vec::with_capacity(st.fields.len());
        for field in &st.fields {
            let Some(result) = self.apply_field(field)? else {
                continue;
            };
            let mut updated = self.updates.get(&field.id).unwrap_or(field).clone();
            updated.field_type = result;
            out.push(updated);
        }
        Ok(out)
    }

    /// The new type of a field, or `None` when it is deleted.
    fn apply_field(&self, field: &NestedField) -> Result<Option<Type>> {
        if self.is_deleted(field.id) {
            return Ok(None);
        }
        if let Some(update) = self.updates.get(&field.id) {
            if update.field_type != field.field_type {
                // a promoted primitive: nothing nested to visit
                return Ok(Some(update.field_type.clone()));
            }
        }
        let result = self.apply_type(&field.field_type)?;
        let has_changes = self.added.iter().any(|(p, _)| *p == field.id)
            || self.moves.iter().any(|(p, _)| *p == field.id);
        match result {
            Type::Struct(s) if has_changes => Ok(Some(
                StructType::new(self.add_and_move(s.fields.clone(), field.id)?).into(),
            )),
            other => Ok(Some(other)),
        }
    }

    fn apply_type(&self, t: &Type) -> Result<Type> {
        match t {
            Type::Struct(s) => Ok(StructType::new(self.apply_struct_fields(s)?).into()),
            Type::List(l) => {
                let element = &l.element_field;
                let element_type = self
                    .apply_field(element)?
                    .ok_or_else(|| bad(format!("Cannot delete element type from list: {t}")))?;
                let required = self
                    .updates
                    .get(&element.id)
                    .map_or(element.required, |u| u.required);
                Ok(ListType::new(element.id, required, element_type).into())
            }
            Type::Map(m) => {
                let key_id = m.key_field.id;
                if self.is_deleted(key_id) {
                    return Err(bad(format!("Cannot delete map keys: {t}")));
                }
                if self.updates.contains_key(&key_id) {
                    return Err(bad(format!("Cannot update map keys: {t}")));
                }
                if self.added.iter().any(|(p, _)| *p == key_id) {
                    return Err(bad(format!("Cannot add fields to map keys: {t}")));
                }
                if self.apply_type(&m.key_field.field_type)? != m.key_field.field_type {
                    return Err(bad(format!("Cannot alter map keys: {t}")));
                }
                let value = &m.value_field;
                let value_type = self
                    .apply_field(value)?
                    .ok_or_else(|| bad(format!("Cannot delete value type from map: {t}")))?;
                let required = self
                    .updates
                    .get(&value.id)
                    .map_or(value.required, |u| u.required);
                Ok(MapType::new(
                    key_id,
                    m.key_field.field_type.clone(),
                    value.id,
                    required,
                    value_type,
                )
                .into())
            }
            Type::Primitive(_) | Type::Variant => Ok(t.clone()),
        }
    }

    /// Appends the columns added under `parent`, then applies its moves in order.
    fn add_and_move(&self, mut fields: Vec<NestedField>, parent: i32) -> Result<Vec<NestedField>> {
        for (p, id) in &self.added {
            if *p == parent {
                if let Some(f) = self.updates.get(id) {
                    fields.push(f.clone());
                }
            }
        }
        for (p, mv) in &self.moves {
            if *p != parent {
                continue;
            }
            let position = |fields: &[NestedField], id: i32| {
                fields
                    .iter()
                    .position(|f| f.id == id)
                    .ok_or_else(|| bad(format!("Cannot move column {id}: it is not in the struct")))
            };
            let from = position(&fields, mv.field_id())?;
            let moving = fields.remove(from);
            match *mv {
                Move::First(_) => fields.insert(0, moving),
                Move::Before(_, r) => {
                    let at = position(&fields, r)?;
                    fields.insert(at, moving);
                }
                Move::After(_, r) => {
                    let at = position(&fields, r)?;
                    fields.insert(at + 1, moving);
                }
            }
        }
        Ok(fields)
    }
}

/// Two fields with one full name (after a rename, say) make an invalid schema; Java's
/// `Schema` refuses it with this message.
fn check_unique_names(fields: &[NestedField]) -> Result<()> {
    fn visit(t: &Type, prefix: &str, seen: &mut HashMap<String, i32>) -> Result<()> {
        let add = |name: String, id: i32, t: &Type, seen: &mut HashMap<String, i32>| {
            if let Some(first) = seen.insert(name.clone(), id) {
                return Err(bad(format!(
                    "Invalid schema: multiple fields for name {name}: {first} and {id}"
                )));
            }
            visit(t, &name, seen)
        };
        let dotted = |n: &str| {
            if prefix.is_empty() {
                n.to_string()
            } else {
                format!("{prefix}.{n}")
            }
        };
        match t {
            Type::Struct(s) => {
                for f in &s.fields {
                    add(dotted(&f.name), f.id, &f.field_type, seen)?;
                }
            }
            Type::List(l) => add(
                dotted("element"),
                l.element_field.id,
                &l.element_field.field_type,
                seen,
            )?,
            Type::Map(m) => {
                add(dotted("key"), m.key_field.id, &m.key_field.field_type, seen)?;
                add(
                    dotted("value"),
                    m.value_field.id,
                    &m.value_field.field_type,
                    seen,
                )?;
            }
            Type::Primitive(_) | Type::Variant => {}
        }
        Ok(())
    }
    let root: Type = StructType::new(fields.to_vec()).into();
    visit(&root, "", &mut HashMap::new())
}

/// `name` (id, type) as Java prints a field in messages.
fn describe(field: &NestedField) -> String {
    let req = if field.required {
        "required"
    } else {
        "optional"
    };
    format!("{}: {} {req} {}", field.id, field.name, field.field_type)
}

/// Whether changing `existing` to `new` needs no update (Java's `isIgnorableTypeUpdate`):
/// the new type is the same or narrower, or both are nested (handled field by field).
fn ignorable_type_update(existing: &Type, new: &Type) -> bool {
    match existing {
        Type::Primitive(_) => {
            matches!(new, Type::Primitive(_)) && is_promotion_allowed(new, existing, 2)
        }
        _ => !matches!(new, Type::Primitive(_)),
    }
}

fn check_default(default: &Literal, field_type: &Type, name: &str) -> Result<()> {
    default.try_to_json(field_type).map(|_| ()).map_err(|_| {
        bad(format!(
            "Invalid default value for {name}: {default:?} is not a {field_type}"
        ))
    })
}

/// Field id → the id of the field whose type holds it (a struct, list or map field), for
/// every nested field; top-level fields have no entry.
pub fn index_parents(st: &StructType) -> HashMap<i32, i32> {
    fn visit(t: &Type, parent: i32, out: &mut HashMap<i32, i32>) {
        match t {
            Type::Struct(s) => {
                for f in &s.fields {
                    out.insert(f.id, parent);
                    visit(&f.field_type, f.id, out);
                }
            }
            Type::List(l) => {
                out.insert(l.element_field.id, parent);
                visit(&l.element_field.field_type, l.element_field.id, out);
            }
            Type::Map(m) => {
                out.insert(m.key_field.id, parent);
                out.insert(m.value_field.id, parent);
                visit(&m.key_field.field_type, m.key_field.id, out);
                visit(&m.value_field.field_type, m.value_field.id, out);
            }
            Type::Primitive(_) | Type::Variant => {}
        }
    }
    let mut out = HashMap::new();
    for f in &st.fields {
        visit(&f.field_type, f.id, &mut out);
    }
    out
}

#[cfg(test)]
#[path = "schema_update_tests.rs"]
mod tests;
