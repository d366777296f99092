//! Schemas ("Schemas and Data Types", "Schema Evolution", "Identifier Field IDs",
//! "Reserved Field IDs") and their JSON form (Appendix C).

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use super::json::Obj;
use super::types::{NestedField, PrimitiveType, StructType, Type};
use crate::error::{Error, Location, Result};

/// Reserved field ids and names of metadata columns ("Reserved Field IDs").
pub mod reserved {
    /// Tables must not use field ids above this (`Integer.MAX_VALUE - 200`).
    pub const MAX_USER_FIELD_ID: i32 = i32::MAX - 200;

    pub const FILE_PATH_ID: i32 = 2147483646; // _file
    pub const POS_ID: i32 = 2147483645; // _pos
    pub const DELETED_ID: i32 = 2147483644; // _deleted
    pub const SPEC_ID_ID: i32 = 2147483643; // _spec_id
    pub const PARTITION_ID: i32 = 2147483642; // _partition
    pub const DELETE_FILE_PATH_ID: i32 = 2147483546; // file_path
    pub const DELETE_POS_ID: i32 = 2147483545; // pos
    pub const DELETE_ROW_ID: i32 = 2147483544; // row
    pub const CHANGE_TYPE_ID: i32 = 2147483543; // _change_type
    pub const CHANGE_ORDINAL_ID: i32 = 2147483542; // _change_ordinal
    pub const COMMIT_SNAPSHOT_ID_ID: i32 = 2147483541; // _commit_snapshot_id
    pub const ROW_ID_ID: i32 = 2147483540; // _row_id
    pub const LAST_UPDATED_SEQUENCE_NUMBER_ID: i32 = 2147483539; // _last_updated_sequence_number

    /// `(id, name, type)` of every reserved column; `_partition` and `row` are structs
    /// whose fields depend on the table, shown as `struct`.
    pub const COLUMNS: &[(i32, &str, &str)] = &[
        (FILE_PATH_ID, "_file", "string"),
        (POS_ID, "_pos", "long"),
        (DELETED_ID, "_deleted", "boolean"),
        (SPEC_ID_ID, "_spec_id", "int"),
        (PARTITION_ID, "_partition", "struct"),
        (DELETE_FILE_PATH_ID, "file_path", "string"),
        (DELETE_POS_ID, "pos", "long"),
        (DELETE_ROW_ID, "row", "struct"),
        (CHANGE_TYPE_ID, "_change_type", "string"),
        (CHANGE_ORDINAL_ID, "_change_ordinal", "int"),
        (COMMIT_SNAPSHOT_ID_ID, "_commit_snapshot_id", "long"),
        (ROW_ID_ID, "_row_id", "long"),
        (
            LAST_UPDATED_SEQUENCE_NUMBER_ID,
            "_last_updated_sequence_number",
            "long",
        ),
    ];

    /// The reserved column with this id, if any.
    pub fn by_id(id: i32) -> Option<(i32, &'static str, &'static str)> {
        COLUMNS.iter().copied().find(|c| c.0 == id)
    }

    /// The reserved column with this name, if any.
    pub fn by_name(name: &str) -> Option<(i32, &'static str, &'static str)> {
        COLUMNS.iter().copied().find(|c| c.1 == name)
    }
}

/// A table schema: a struct with a schema id and optional identifier fields.
/// Lookups by id and by (dotted, nested) name are indexed when the schema is built.
#[derive(Debug, Clone)]
pub struct Schema {
    schema_id: i32,
    identifier_field_ids: Vec<i32>,
    fields: StructType,
    /// id -> path of positions from the root (struct field index, 0 for list element,
    /// 0/1 for map key/value), so the field can be reached without cloning it.
    id_to_path: HashMap<i32, Vec<u32>>,
    /// full dotted name (and Java's short alias) -> id
    name_to_id: HashMap<String, i32>,
    /// lower-cased names -> id, for case-insensitive lookup
    lower_name_to_id: HashMap<String, i32>,
    /// id -> canonical full name
    id_to_name: HashMap<i32, String>,
    highest_field_id: i32,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.schema_id == other.schema_id
            && self.identifier_field_ids == other.identifier_field_ids
            && self.fields == other.fields
    }
}

impl Schema {
    /// Builds a schema, checking that field ids are unique.
    pub fn new(
        schema_id: i32,
        fields: Vec<NestedField>,
        identifier_field_ids: Vec<i32>,
    ) -> Result<Schema> {
        let fields = StructType::new(fields);
        let mut index = Indexer::default();
        index.visit_struct(&fields, "", None, &mut Vec::new())?;
        Ok(Schema {
            schema_id,
            identifier_field_ids,
            fields,
            id_to_path: index.id_to_path,
            name_to_id: index.name_to_id,
            lower_name_to_id: index.lower_name_to_id,
            id_to_name: index.id_to_name,
            highest_field_id: index.highest,
        })
    }

    pub fn schema_id(&self) -> i32 {
        self.schema_id
    }

    pub fn identifier_field_ids(&self) -> &[i32] {
        &self.identifier_field_ids
    }

    /// The top-level struct.
    pub fn as_struct(&self) -> &StructType {
        &self.fields
    }

    pub fn fields(&self) -> &[NestedField] {
        &self.fields.fields
    }

    /// The highest field id used anywhere in the schema (0 when empty).
    pub fn highest_field_id(&self) -> i32 {
        self.highest_field_id
    }

    /// The field with this id, at any depth.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        let path = self.id_to_path.get(&id)?;
        let (first, rest) = path.split_first()?;
        let mut field = self.fields.fields.get(*first as usize)?;
        for &pos in rest {
            field = match &field.field_type {
                Type::Struct(s) => s.fields.get(pos as usize)?,
                Type::List(l) => &l.element_field,
                Type::Map(m) if pos == 0 => &m.key_field,
                Type::Map(m) => &m.value_field,
                _ => return None,
            };
        }
        Some(field)
    }

    /// The positions of the field with this id among the fields of each struct from the
    /// root down, when every ancestor is a struct; `None` for fields inside a list or map
    /// (a row holds no single value for them) and for unknown ids.
    pub fn struct_path(&self, id: i32) -> Option<&[u32]> {
        let path = self.id_to_path.get(&id)?;
        let (first, rest) = path.split_first()?;
        let mut field = self.fields.fields.get(*first as usize)?;
        for &pos in rest {
            field = match &field.field_type {
                Type::Struct(s) => s.fields.get(pos as usize)?,
                _ => return None,
            };
        }
        Some(path)
    }

    /// The schema of the selected columns, by full name (Java's `Schema.select`):
    /// selecting a struct keeps all of it; selecting a nested field keeps its parents with
    /// only the selected children; a list or map is kept whole when anything in it is
    /// selected. The schema id and identifier fields are kept.
    pub fn select(&self, names: &[String], case_sensitive: bool) -> Result<Schema> {
        let mut ids = std::collections::HashSet::new();
        for name in names {
            let id = self.id_by_name(name, case_sensitive).ok_or_else(|| {
                crate::error::Error::not_found(format!(
                    "cannot find column '{name}' in the schema{}",
                    if case_sensitive {
                        ""
                    } else {
                        " (ignoring case)"
                    }
                ))
            })?;
            ids.insert(id);
        }
        let fields = select_fields(&self.fields.fields, &ids);
        let identifiers = self
            .identifier_field_ids
            .iter()
            .copied()
            .filter(|id| ids.contains(id))
            .collect();
        Schema::new(self.schema_id, fields, identifiers)
    }

    /// The full dotted name of the field with this id (`location.lat`, `tags.key`).
    pub fn name_by_id(&self, id: i32) -> Option<&str> {
        self.id_to_name.get(&id).map(String::as_str)
    }

    /// The id of a field by its full dotted name. Names of fields inside a list element
    /// or map value struct may also omit `element`/`value`, as in Java.
    pub fn id_by_name(&self, name: &str, case_sensitive: bool) -> Option<i32> {
        if case_sensitive {
            self.name_to_id.get(name).copied()
        } else {
            self.lower_name_to_id.get(&name.to_lowercase()).copied()
        }
    }

    pub fn field_by_name(&self, name: &str, case_sensitive: bool) -> Option<&NestedField> {
        self.field_by_name_and_id(name, case_sensitive)
            .map(|(_, f)| f)
    }

    fn field_by_name_and_id(
        &self,
        name: &str,
        case_sensitive: bool,
    ) -> Option<(i32, &NestedField)> {
        let id = self.id_by_name(name, case_sensitive)?;
        Some((id, self.field_by_id(id)?))
    }

    /// Every (id, full name) pair, sorted by id.
    pub fn field_names(&self) -> Vec<(i32, &str)> {
        let mut v: Vec<_> = self
            .id_to_name
            .iter()
            .map(|(id, n)| (*id, n.as_str()))
            .collect();
        v.sort_unstable();
        v
    }

    /// Checks the identifier fields: they must exist, be primitive, required, not float or
    /// double, and not nested in a list, a map or an optional struct.
    pub fn validate_identifier_fields(&self) -> Result<()> {
        for &id in &self.identifier_field_ids {
            let bad = |msg: &str| {
                Error::invalid_metadata(
                    "identifier-field-ids",
                    format!("identifier field {id}: {msg}"),
                )
            };
            let path = self
                .id_to_path
                .get(&id)
                .ok_or_else(|| bad("no field with this id"))?;
            let field = self
                .field_by_id(id)
                .ok_or_else(|| bad("no field with this id"))?;
            match &field.field_type {
                Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => {
                    return Err(bad("float and double fields cannot be identifiers"))
                }
                Type::Primitive(_) => {}
                _ => return Err(bad("must be a primitive field")),
            }
            if !field.required {
                return Err(bad("must be required"));
            }
            // Walk the parents: all must be required structs.
            let mut parent = &self.fields;
            for &pos in &path[..path.len() - 1] {
                let f = parent
                    .fields
                    .get(pos as usize)
                    .ok_or_else(|| bad("no field with this id"))?;
                match &f.field_type {
                    Type::Struct(s) if f.required => parent = s,
                    Type::Struct(_) => return Err(bad("must not be nested in an optional struct")),
                    _ => return Err(bad("must not be nested in a list or map")),
                }
            }
        }
        Ok(())
    }

    /// Parses a schema object; `path` names it for errors (e.g. `schemas[0]`).
    ///
    /// `"type": "struct"` is required: Appendix C writes a schema as a struct, and Java's
    /// `SchemaParser` refuses an object without it (its type is read before anything else).
    pub fn from_json(value: &Value, path: &str) -> Result<Schema> {
        let o = Obj::new(value, path)?;
        let t = o.req_str("type")?;
        if t != "struct" {
            return Err(Error::invalid_metadata(
                o.field("type"),
                format!("a schema must be a struct, found '{t}'"),
            ));
        }
        let st = StructType::from_json(value, path)?;
        let schema_id = o.opt_i32("schema-id")?.unwrap_or(0);
        let identifier_field_ids = o.opt_i32_list("identifier-field-ids")?.unwrap_or_default();
        Schema::new(schema_id, st.fields, identifier_field_ids).map_err(|e| e.under(path))
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "struct".into());
        m.insert("schema-id".into(), self.schema_id.into());
        if !self.identifier_field_ids.is_empty() {
            m.insert(
                "identifier-field-ids".into(),
                self.identifier_field_ids.clone().into(),
            );
        }
        m.insert(
            "fields".into(),
            Value::Array(
                self.fields
                    .fields
                    .iter()
                    .map(NestedField::to_json)
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    /// The same fields under another schema id.
    pub fn with_schema_id(&self, schema_id: i32) -> Schema {
        let mut s = self.clone();
        s.schema_id = schema_id;
        s
    }

    /// True if the two schemas have the same fields and identifier fields (ignoring ids).
    pub fn same_schema(&self, other: &Schema) -> bool {
        self.fields == other.fields && self.identifier_field_ids == other.identifier_field_ids
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "table {{")?;
        for field in &self.fields.fields {
            write_field(f, field, 1)?;
        }
        write!(f, "}}")
    }
}

fn write_field(f: &mut fmt::Formatter<'_>, field: &NestedField, depth: usize) -> fmt::Result {
    let pad = "  ".repeat(depth);
    let req = if field.required {
        "required"
    } else {
        "optional"
    };
    match &field.field_type {
        Type::Struct(s) => {
            writeln!(f, "{pad}{}: {} {req} struct {{", field.id, field.name)?;
            for c in &s.fields {
                write_field(f, c, depth + 1)?;
            }
            writeln!(f, "{pad}}}")
        }
        other => {
            write!(f, "{pad}{}: {} {req} {other}", field.id, field.name)?;
            if let Some(doc) = &field.doc {
                write!(f, " ({doc})")?;
            }
            writeln!(f)
        }
    }
}

#[derive(Default)]
struct Indexer {
    id_to_path: HashMap<i32, Vec<u32>>,
    id_to_name: HashMap<i32, String>,
    name_to_id: HashMap<String, i32>,
    lower_name_to_id: HashMap<String, i32>,
    highest: i32,
}

impl Indexer {
    fn add(
        &mut self,
        field: &NestedField,
        full: &str,
        short: Option<&str>,
        path: &[u32],
    ) -> Result<()> {
        if let Some(first) = self.id_to_name.get(&field.id) {
            return Err(Error::FieldIdClash {
                at: Location {
                    file: String::new(),
                    field: "fields".into(),
                },
                id: field.id,
                first: first.clone(),
                second: full.to_string(),
            });
        }
        self.highest = self.highest.max(field.id);
        self.id_to_path.insert(field.id, path.to_vec());
        self.id_to_name.insert(field.id, full.to_string());
        // Full names win over short aliases: insert aliases only where free.
        self.name_to_id.insert(full.to_string(), field.id);
        self.lower_name_to_id
            .entry(full.to_lowercase())
            .or_insert(field.id);
        if let Some(short) = short {
            self.name_to_id.entry(short.to_string()).or_insert(field.id);
            self.lower_name_to_id
                .entry(short.to_lowercase())
                .or_insert(field.id);
        }
        Ok(())
    }

    /// Visits a struct whose fields are named `prefix.name` (and `short.name`, where a
    /// shorter alias exists because the struct is a list element or map value).
    fn visit_struct(
        &mut self,
        s: &StructType,
        prefix: &str,
        short: Option<&str>,
        path: &mut Vec<u32>,
    ) -> Result<()> {
        for (i, field) in s.fields.iter().enumerate() {
            let full = dotted(prefix, &field.name);
            let short_name = short.map(|p| dotted(p, &field.name));
            path.push(i as u32);
            self.add(field, &full, short_name.as_deref(), path)?;
            self.visit_type(&field.field_type, &full, short_name.as_deref(), path)?;
            path.pop();
        }
        Ok(())
    }

    fn visit_type(
        &mut self,
        t: &Type,
        full: &str,
        short: Option<&str>,
        path: &mut Vec<u32>,
    ) -> Result<()> {
        match t {
            Type::Struct(s) => self.visit_struct(s, full, short, path),
            Type::List(l) => {
                let elem = &l.element_field;
                let elem_full = dotted(full, "element");
                let elem_short = short.map(|p| dotted(p, "element"));
                path.push(0);
                self.add(elem, &elem_full, elem_short.as_deref(), path)?;
                // Fields of a struct element can be named without "element" (Java's short names).
                let alias = short.unwrap_or(full).to_string();
                self.visit_type(&elem.field_type, &elem_full, Some(&alias), path)?;
                path.pop();
                Ok(())
            }
            Type::Map(m) => {
                let key_full = dotted(full, "key");
                path.push(0);
                self.add(&m.key_field, &key_full, None, path)?;
                self.visit_type(&m.key_field.field_type, &key_full, None, path)?;
                path.pop();
                let value_full = dotted(full, "value");
                path.push(1);
                self.add(&m.value_field, &value_full, None, path)?;
                let alias = short.unwrap_or(full).to_string();
                self.visit_type(&m.value_field.field_type, &value_full, Some(&alias), path)?;
                path.pop();
                Ok(())
            }
            Type::Primitive(_) | Type::Variant => Ok(()),
        }
    }
}

fn dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Whether a column of type `from` may be promoted to `to` in a table of `format_version`
/// ("Schema Evolution": int→long, float→double, decimal precision widening; v3 adds
/// unknown→any and date→timestamp/timestamp_ns).
pub fn is_promotion_allowed(from: &Type, to: &Type, format_version: u8) -> bool {
    use PrimitiveType as P;
    if from == to {
        return true;
    }
    let v3 = format_version >= 3;
    match (from, to) {
        (Type::Primitive(P::Unknown), _) => v3,
        (Type::Primitive(a), Type::Primitive(b)) => match (a, b) {
            (P::Int, P::Long) | (P::Float, P::Double) => true,
            (
                P::Decimal {
                    precision: p1,
                    scale: s1,
                },
                P::Decimal {
                    precision: p2,
                    scale: s2,
                },
            ) => s1 == s2 && p2 > p1,
            (P::Date, P::Timestamp | P::TimestampNs) => v3,
            _ => false,
        },
        _ => false,
    }
}

/// The fields that are selected or have a selected descendant (see [`Schema::select`]).
fn select_fields(fields: &[NestedField], ids: &std::collections::HashSet<i32>) -> Vec<NestedField> {
    let mut out = Vec::new();
    for f in fields {
        if ids.contains(&f.id) {
            out.push(f.clone());
            continue;
        }
        match &f.field_type {
            Type::Struct(s) => {
                let children = select_fields(&s.fields, ids);
                if !children.is_empty() {
                    let mut kept = f.clone();
                    kept.field_type = Type::Struct(std::sync::Arc::new(StructType::new(children)));
                    out.push(kept);
                }
            }
            Type::List(_) | Type::Map(_) if contains_any(&f.field_type, ids) => {
                out.push(f.clone());
            }
            _ => {}
        }
    }
    out
}

fn contains_any(t: &Type, ids: &std::collections::HashSet<i32>) -> bool {
    match t {
        Type::Struct(s) => s
            .fields
            .iter()
            .any(|f| ids.contains(&f.id) || contains_any(&f.field_type, ids)),
        Type::List(l) => {
            ids.contains(&l.element_field.id) || contains_any(&l.element_field.field_type, ids)
        }
        Type::Map(m) => [&m.key_field, &m.value_field]
            .iter()
            .any(|f| ids.contains(&f.id) || contains_any(&f.field_type, ids)),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::spec::types::{ListType, MapType};

    fn nested() -> Schema {
        let point = StructType::new(vec![
            NestedField::required(4, "x", PrimitiveType::Double.into()),
            NestedField::required(5, "y", PrimitiveType::Double.into()),
        ]);
        let loc = StructType::new(vec![
            NestedField::required(7, "lat", PrimitiveType::Float.into()),
            NestedField::optional(8, "Long", PrimitiveType::Float.into()),
        ]);
        Schema::new(
            1,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "points", ListType::new(3, true, point.into()).into()),
                NestedField::optional(
                    6,
                    "locations",
                    MapType::new(9, PrimitiveType::String.into(), 10, true, loc.into()).into(),
                ),
            ],
            vec![1],
        )
        .unwrap()
    }

    #[test]
    fn lookup_by_nested_name_and_id() {
        let s = nested();
        assert_eq!(s.id_by_name("points.element.x", true), Some(4));
        assert_eq!(s.id_by_name("points.x", true), Some(4)); // Java's short name
        assert_eq!(s.id_by_name("locations.key", true), Some(9));
        assert_eq!(s.id_by_name("locations.value.lat", true), Some(7));
        assert_eq!(s.id_by_name("locations.lat", true), Some(7));
        assert_eq!(s.id_by_name("locations.value.long", true), None);
        assert_eq!(s.id_by_name("LOCATIONS.VALUE.LONG", false), Some(8));
        assert_eq!(s.field_by_id(8).unwrap().name, "Long");
        assert_eq!(s.field_by_id(3).unwrap().name, "element");
        assert_eq!(s.field_by_id(10).unwrap().name, "value");
        assert_eq!(s.name_by_id(5), Some("points.element.y"));
        assert!(s.field_by_id(11).is_none());
        assert_eq!(s.highest_field_id(), 10);
        s.validate_identifier_fields().unwrap();
    }

    #[test]
    fn field_id_clash_is_reported() {
        let e = Schema::new(
            0,
            vec![
                NestedField::required(1, "a", PrimitiveType::Int.into()),
                NestedField::optional(
                    2,
                    "b",
                    StructType::new(vec![NestedField::optional(
                        1,
                        "c",
                        PrimitiveType::Int.into(),
                    )])
                    .into(),
                ),
            ],
            vec![],
        )
        .unwrap_err();
        match e {
            Error::FieldIdClash {
                id, first, second, ..
            } => {
                assert_eq!((id, first.as_str(), second.as_str()), (1, "a", "b.c"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn identifier_rules() {
        let bad = |fields, ids| {
            Schema::new(0, fields, ids)
                .unwrap()
                .validate_identifier_fields()
        };
        assert!(bad(
            vec![NestedField::optional(1, "a", PrimitiveType::Int.into())],
            vec![1]
        )
        .is_err());
        assert!(bad(
            vec![NestedField::required(1, "a", PrimitiveType::Double.into())],
            vec![1]
        )
        .is_err());
        assert!(bad(
            vec![NestedField::required(1, "a", PrimitiveType::Int.into())],
            vec![2]
        )
        .is_err());
        let in_optional_struct = NestedField::optional(
            1,
            "s",
            StructType::new(vec![NestedField::required(
                2,
                "a",
                PrimitiveType::Int.into(),
            )])
            .into(),
        );
        assert!(bad(vec![in_optional_struct.clone()], vec![2]).is_err());
        let mut in_required = in_optional_struct;
        in_required.required = true;
        assert!(bad(vec![in_required], vec![2]).is_ok());
        // nested in a list
        assert!(nested().with_schema_id(2).field_by_id(4).is_some());
        let s = Schema::new(0, nested().fields().to_vec(), vec![4]).unwrap();
        assert!(s.validate_identifier_fields().is_err());
    }

    #[test]
    fn json_round_trip() {
        let s = nested();
        let back = Schema::from_json(&s.to_json(), "schema").unwrap();
        assert_eq!(back, s);
        assert_eq!(back.id_by_name("points.x", true), Some(4));
    }

    #[test]
    fn promotions() {
        use PrimitiveType as P;
        let t = |p: P| Type::Primitive(p);
        assert!(is_promotion_allowed(&t(P::Int), &t(P::Long), 1));
        assert!(is_promotion_allowed(&t(P::Float), &t(P::Double), 2));
        assert!(!is_promotion_allowed(&t(P::Long), &t(P::Int), 2));
        let d = |p, s| {
            t(P::Decimal {
                precision: p,
                scale: s,
            })
        };
        assert!(is_promotion_allowed(&d(9, 2), &d(18, 2), 1));
        assert!(!is_promotion_allowed(&d(9, 2), &d(18, 3), 1));
        assert!(!is_promotion_allowed(&d(18, 2), &d(9, 2), 1));
        assert!(!is_promotion_allowed(&t(P::Date), &t(P::Timestamp), 2));
        assert!(is_promotion_allowed(&t(P::Date), &t(P::Timestamp), 3));
        assert!(is_promotion_allowed(&t(P::Date), &t(P::TimestampNs), 3));
        assert!(!is_promotion_allowed(&t(P::Date), &t(P::Timestamptz), 3));
        assert!(is_promotion_allowed(&t(P::Unknown), &t(P::String), 3));
        assert!(!is_promotion_allowed(&t(P::Unknown), &t(P::String), 2));
        assert!(!is_promotion_allowed(&t(P::Int), &t(P::String), 3));
    }

    #[test]
    fn reserved_ids() {
        assert_eq!(reserved::by_name("_row_id").unwrap().0, 2147483540);
        assert_eq!(
            reserved::by_id(2147483539).unwrap().1,
            "_last_updated_sequence_number"
        );
        assert_eq!(reserved::MAX_USER_FIELD_ID, 2147483447);
    }
}
