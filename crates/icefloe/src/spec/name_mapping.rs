//! Name mappings (`table-spec.md`, "Column Projection" and "Name Mapping Serialization"):
//! fallback field ids for data files written without field ids, stored as JSON in the
//! table property `schema.name-mapping.default`.
//!
//! Reading follows Java's parser: `field-id` and `fields` are optional, a missing
//! `names` reads as an empty list, and repeated names within one field's `names` are
//! kept once. Two fields of one level that share a name (or a field id) are an error, as
//! a name must resolve to one field.
//!
//! A name may contain `.`: it is a literal name, never a nested path. Lookups therefore
//! take the path as a list of names ([`NameMapping::find`]).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::json::{index, join, kind, parse_text, Obj};
use super::schema::Schema;
use super::types::{NestedField, Type};
use crate::error::{Error, Result};

/// The table property holding the default name mapping.
pub const DEFAULT_NAME_MAPPING_PROPERTY: &str = "schema.name-mapping.default";

/// A name mapping: the mapped fields of the top level.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NameMapping {
    pub fields: Vec<MappedField>,
}

/// One field mapping: names found in data files and the field id they map to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MappedField {
    /// `field-id`; `None` for fields that exist only in data files.
    pub field_id: Option<i32>,
    /// `names`: every name (alias) the field may have in a data file.
    pub names: Vec<String>,
    /// `fields`: mappings of the children (struct fields, list `element`, map `key` and `value`).
    pub fields: Vec<MappedField>,
}

impl MappedField {
    pub fn new(field_id: Option<i32>, names: Vec<String>, fields: Vec<MappedField>) -> Self {
        MappedField {
            field_id,
            names,
            fields,
        }
    }

    fn from_json(value: &Value, path: &str) -> Result<MappedField> {
        let o = Obj::new(value, path)?;
        let field_id = o.opt_i32("field-id")?;
        let mut names: Vec<String> = Vec::new();
        if let Some(items) = o.opt_array("names")? {
            let names_path = o.field("names");
            for (i, v) in items.iter().enumerate() {
                let name = v.as_str().ok_or_else(|| {
                    Error::invalid_metadata(
                        index(&names_path, i),
                        format!("expected a string, found {}", kind(v)),
                    )
                })?;
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        let fields = match o.opt("fields") {
            None => Vec::new(),
            Some(v) => fields_from_json(v, &o.field("fields"))?,
        };
        Ok(MappedField {
            field_id,
            names,
            fields,
        })
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(id) = self.field_id {
            m.insert("field-id".into(), id.into());
        }
        m.insert("names".into(), self.names.clone().into());
        if !self.fields.is_empty() {
            m.insert("fields".into(), fields_to_json(&self.fields));
        }
        Value::Object(m)
    }

    /// The direct child mapped under `name`.
    pub fn child(&self, name: &str) -> Option<&MappedField> {
        find_in(&self.fields, name)
    }
}

fn find_in<'a>(fields: &'a [MappedField], name: &str) -> Option<&'a MappedField> {
    fields.iter().find(|f| f.names.iter().any(|n| n == name))
}

fn fields_from_json(value: &Value, path: &str) -> Result<Vec<MappedField>> {
    let items = value.as_array().ok_or_else(|| {
        Error::invalid_metadata(path, format!("expected a list, found {}", kind(value)))
    })?;
    let fields = items
        .iter()
        .enumerate()
        .map(|(i, v)| MappedField::from_json(v, &index(path, i)))
        .collect::<Result<Vec<_>>>()?;
    check_level(&fields, path)?;
    Ok(fields)
}

/// Names and ids must be unique within one level.
fn check_level(fields: &[MappedField], path: &str) -> Result<()> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut ids: HashMap<i32, usize> = HashMap::new();
    for (i, f) in fields.iter().enumerate() {
        for name in &f.names {
            if let Some(first) = names.insert(name, i) {
                if first != i {
                    return Err(Error::invalid_metadata(
                        join(&index(path, i), "names"),
                        format!(
                            "name '{name}' is mapped to more than one field (also {})",
                            index(path, first)
                        ),
                    ));
                }
            }
        }
        if let Some(id) = f.field_id {
            if let Some(first) = ids.insert(id, i) {
                return Err(Error::invalid_metadata(
                    join(&index(path, i), "field-id"),
                    format!(
                        "field id {id} is mapped by more than one field (also {})",
                        index(path, first)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn fields_to_json(fields: &[MappedField]) -> Value {
    Value::Array(fields.iter().map(MappedField::to_json).collect())
}

impl NameMapping {
    /// Builds a mapping, checking that names and ids are unique at every level.
    pub fn new(fields: Vec<MappedField>) -> Result<NameMapping> {
        let mapping = NameMapping { fields };
        mapping.validate()?;
        Ok(mapping)
    }

    /// Checks every level for duplicate names and ids; errors name the JSON path
    /// (`[2].fields[1].names`).
    pub fn validate(&self) -> Result<()> {
        fn walk(fields: &[MappedField], path: &str) -> Result<()> {
            check_level(fields, path)?;
            for (i, f) in fields.iter().enumerate() {
                walk(&f.fields, &join(&index(path, i), "fields"))?;
            }
            Ok(())
        }
        walk(&self.fields, "")
    }

    /// Parses the JSON text of a name mapping (a list of field mapping objects).
    pub fn from_json_str(text: &str) -> Result<NameMapping> {
        NameMapping::from_json(&parse_text(text)?)
    }

    pub fn from_json(value: &Value) -> Result<NameMapping> {
        Ok(NameMapping {
            fields: fields_from_json(value, "")?,
        })
    }

    pub fn to_json(&self) -> Value {
        fields_to_json(&self.fields)
    }

    /// Compact JSON text, as stored in the table property.
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }

    /// The mapped field reached by a path of names, one per level
    /// (`["location", "lat"]`; a list element is `element`, map parts `key`/`value`).
    pub fn find_field(&self, path: &[&str]) -> Option<&MappedField> {
        let (first, rest) = path.split_first()?;
        let mut field = find_in(&self.fields, first)?;
        for name in rest {
            field = field.child(name)?;
        }
        Some(field)
    }

    /// The field id mapped to a path of names, if the path is mapped and has an id.
    pub fn find(&self, path: &[&str]) -> Option<i32> {
        self.find_field(path)?.field_id
    }

    /// The mapped field with this id, at any depth.
    pub fn find_by_id(&self, field_id: i32) -> Option<&MappedField> {
        fn walk(fields: &[MappedField], id: i32) -> Option<&MappedField> {
            fields.iter().find_map(|f| {
                if f.field_id == Some(id) {
                    Some(f)
                } else {
                    walk(&f.fields, id)
                }
            })
        }
        walk(&self.fields, field_id)
    }

    /// The default mapping of a schema, as Java's `MappingUtil.create`: every field is
    /// mapped by its own name to its id; a list maps its `element`, a map its `key` and
    /// `value`, each with their children.
    pub fn from_schema(schema: &Schema) -> NameMapping {
        NameMapping {
            fields: schema
                .fields()
                .iter()
                .map(|f| map_field(f, &f.name))
                .collect(),
        }
    }
}

fn map_field(field: &NestedField, name: &str) -> MappedField {
    MappedField {
        field_id: Some(field.id),
        names: vec![name.to_string()],
        fields: map_children(&field.field_type),
    }
}

fn map_children(t: &Type) -> Vec<MappedField> {
    match t {
        Type::Struct(s) => s.fields.iter().map(|f| map_field(f, &f.name)).collect(),
        Type::List(l) => vec![map_field(&l.element_field, "element")],
        Type::Map(m) => vec![
            map_field(&m.key_field, "key"),
            map_field(&m.value_field, "value"),
        ],
        Type::Primitive(_) | Type::Variant => Vec::new(),
    }
}

/// The parent id of top-level columns in a schema update's additions.
const TABLE_ROOT_ID: i32 = -1;

impl NameMapping {
    /// The mapping after a schema update, as Java 1.11's `MappingUtil.update` (which
    /// `SchemaUpdate` applies to `schema.name-mapping.default`): a field whose id was
    /// updated also gets its new name (old names stay, so older data files still map),
    /// added columns are mapped by their names (nested types too), and a name now given
    /// to another field of the same struct is taken off the field that had it.
    ///
    /// `updates` are the updated and added fields by id, `adds` the (parent id, added id)
    /// pairs in the order they were added (parent `-1` for top-level columns). Returns
    /// `None` when the mapping has a field without an id, where Java's update fails and
    /// the table keeps its mapping unchanged. (Java also keeps only the last of several
    /// removals from one field, an accident of its loop; icefloe removes them all.)
    pub fn updated(
        &self,
        updates: &HashMap<i32, NestedField>,
        adds: &[(i32, i32)],
    ) -> Option<NameMapping> {
        let fields = update_level(&self.fields, updates, adds)?;
        Some(NameMapping {
            fields: add_new_fields(fields, TABLE_ROOT_ID, updates, adds),
        })
    }
}

fn update_level(
    fields: &[MappedField],
    updates: &HashMap<i32, NestedField>,
    adds: &[(i32, i32)],
) -> Option<Vec<MappedField>> {
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let id = f.field_id?;
        let nested = update_level(&f.fields, updates, adds)?;
        let mut names = f.names.clone();
        if let Some(update) = updates.get(&id) {
            if !names.contains(&update.name) {
                names.push(update.name.clone());
            }
        }
        out.push(MappedField {
            field_id: Some(id),
            names,
            fields: add_new_fields(nested, id, updates, adds),
        });
    }
    // a name an update gave to one field of this struct is no longer another's
    let assigned: HashMap<&str, i32> = out
        .iter()
        .filter_map(|f| updates.get(&f.field_id?))
        .map(|u| (u.name.as_str(), u.id))
        .collect();
    Some(
        out.iter()
            .map(|f| without_reassigned_names(f, &assigned))
            .collect(),
    )
}

fn without_reassigned_names(field: &MappedField, assigned: &HashMap<&str, i32>) -> MappedField {
    let mut f = field.clone();
    let own_id = f.field_id;
    f.names.retain(|n| match assigned.get(n.as_str()) {
        Some(id) => Some(*id) == own_id,
        None => true,
    });
    f
}

fn add_new_fields(
    mapping: Vec<MappedField>,
    parent_id: i32,
    updates: &HashMap<i32, NestedField>,
    adds: &[(i32, i32)],
) -> Vec<MappedField> {
    let to_add: Vec<&NestedField> = adds
        .iter()
        .filter(|(parent, _)| *parent == parent_id)
        .filter_map(|(_, id)| updates.get(id))
        .collect();
    if to_add.is_empty() {
        return mapping;
    }
    let new_fields: Vec<MappedField> = to_add.iter().map(|f| map_field(f, &f.name)).collect();
    if mapping.is_empty() {
        return new_fields;
    }
    let assigned: HashMap<&str, i32> = to_add.iter().map(|f| (f.name.as_str(), f.id)).collect();
    mapping
        .iter()
        .map(|f| without_reassigned_names(f, &assigned))
        .chain(new_fields)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod update_tests {
    use super::*;
    use crate::spec::types::{PrimitiveType, StructType};

    fn mapping(json: &str) -> NameMapping {
        NameMapping::from_json_str(json).unwrap()
    }

    fn long(id: i32, name: &str) -> NestedField {
        NestedField::optional(id, name, Type::Primitive(PrimitiveType::Long))
    }

    #[test]
    fn renames_keep_old_names_and_take_names_from_siblings() {
        let m = mapping(
            r#"[{"field-id": 1, "names": ["id", "key"]},
                {"field-id": 2, "names": ["data", "payload"]},
                {"field-id": 3, "names": ["loc"], "fields": [{"field-id": 4, "names": ["lat"]}]}]"#,
        );
        // 2 is renamed to "key" (which 1 had as an alias), 4 to "latitude"
        let updates = HashMap::from([(2, long(2, "key")), (4, long(4, "latitude"))]);
        let out = m.updated(&updates, &[]).unwrap();
        assert_eq!(out.fields[0].names, vec!["id"]);
        assert_eq!(out.fields[1].names, vec!["data", "payload", "key"]);
        assert_eq!(out.fields[2].fields[0].names, vec!["lat", "latitude"]);
    }

    #[test]
    fn additions_are_mapped_with_their_nested_types() {
        let m = mapping(
            r#"[{"field-id": 1, "names": ["id", "extra"]},
                {"field-id": 3, "names": ["loc"], "fields": [{"field-id": 4, "names": ["lat"]}]}]"#,
        );
        let nested = NestedField::optional(
            5,
            "extra",
            Type::Struct(std::sync::Arc::new(StructType::new(vec![long(6, "a")]))),
        );
        let updates = HashMap::from([(5, nested), (7, long(7, "lon"))]);
        let out = m.updated(&updates, &[(-1, 5), (3, 7)]).unwrap();
        assert_eq!(out.fields.len(), 3);
        assert_eq!(
            out.fields[0].names,
            vec!["id"],
            "'extra' now names the new column"
        );
        assert_eq!(out.fields[2].field_id, Some(5));
        assert_eq!(out.fields[2].fields[0].names, vec!["a"]);
        let loc: Vec<Option<i32>> = out.fields[1].fields.iter().map(|f| f.field_id).collect();
        assert_eq!(loc, vec![Some(4), Some(7)]);
        // an empty mapping gets just the additions
        let empty = NameMapping::default().updated(&HashMap::from([(7, long(7, "x"))]), &[(-1, 7)]);
        assert_eq!(empty.unwrap().fields[0].names, vec!["x"]);
    }

    #[test]
    fn a_field_without_id_leaves_the_mapping_unchanged() {
        let m = mapping(r#"[{"names": ["legacy"]}, {"field-id": 1, "names": ["id"]}]"#);
        assert!(m
            .updated(&HashMap::from([(1, long(1, "ident"))]), &[])
            .is_none());
    }
}
