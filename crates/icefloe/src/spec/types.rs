//! Iceberg data types ("Schemas and Data Types", "Primitive Types", "Nested Types")
//! and their JSON form (Appendix C).

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::json::{index, kind, Obj};
use super::literal::Literal;
use crate::error::{Error, Location, Result};

/// Edge-interpolation algorithm of a `geography` type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeAlgorithm {
    Spherical,
    Vincenty,
    Thomas,
    Andoyer,
    Karney,
}

impl EdgeAlgorithm {
    pub fn as_str(&self) -> &'static str {
        match self {
            EdgeAlgorithm::Spherical => "spherical",
            EdgeAlgorithm::Vincenty => "vincenty",
            EdgeAlgorithm::Thomas => "thomas",
            EdgeAlgorithm::Andoyer => "andoyer",
            EdgeAlgorithm::Karney => "karney",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "spherical" => EdgeAlgorithm::Spherical,
            "vincenty" => EdgeAlgorithm::Vincenty,
            "thomas" => EdgeAlgorithm::Thomas,
            "andoyer" => EdgeAlgorithm::Andoyer,
            "karney" => EdgeAlgorithm::Karney,
            _ => return None,
        })
    }
}

/// The default CRS of geometry and geography types.
pub const DEFAULT_CRS: &str = "OGC:CRS84";

/// A primitive type. `timestamp_ns`/`timestamptz_ns`, `unknown`, `geometry` and
/// `geography` were added in v3.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Unknown,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal {
        precision: u32,
        scale: u32,
    },
    Date,
    Time,
    Timestamp,
    Timestamptz,
    TimestampNs,
    TimestamptzNs,
    String,
    Uuid,
    Fixed(u64),
    Binary,
    /// `crs` is `None` when the JSON omitted it (meaning [`DEFAULT_CRS`]); kept as
    /// written so that a round trip does not change the metadata.
    Geometry {
        crs: Option<String>,
    },
    Geography {
        crs: Option<String>,
        algorithm: Option<EdgeAlgorithm>,
    },
}

/// The largest decimal precision the spec allows.
pub const MAX_DECIMAL_PRECISION: u32 = 38;

impl PrimitiveType {
    /// Parses a primitive type string of Appendix C. Returns `None` for unknown strings.
    pub fn parse(s: &str) -> Option<PrimitiveType> {
        let s = s.trim();
        let t = match s {
            "unknown" => PrimitiveType::Unknown,
            "boolean" => PrimitiveType::Boolean,
            "int" => PrimitiveType::Int,
            "long" => PrimitiveType::Long,
            "float" => PrimitiveType::Float,
            "double" => PrimitiveType::Double,
            "date" => PrimitiveType::Date,
            "time" => PrimitiveType::Time,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamptz" => PrimitiveType::Timestamptz,
            "timestamp_ns" => PrimitiveType::TimestampNs,
            "timestamptz_ns" => PrimitiveType::TimestamptzNs,
            "string" => PrimitiveType::String,
            "uuid" => PrimitiveType::Uuid,
            "binary" => PrimitiveType::Binary,
            "geometry" => PrimitiveType::Geometry { crs: None },
            "geography" => PrimitiveType::Geography {
                crs: None,
                algorithm: None,
            },
            _ => return Self::parse_parameterized(s),
        };
        Some(t)
    }

    fn parse_parameterized(s: &str) -> Option<PrimitiveType> {
        if let Some(len) = s.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
            return len.trim().parse::<u64>().ok().map(PrimitiveType::Fixed);
        }
        if let Some(args) = s.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
            let (p, sc) = args.split_once(',')?;
            let precision = p.trim().parse::<u32>().ok()?;
            let scale = sc.trim().parse::<u32>().ok()?;
            if precision == 0 || precision > MAX_DECIMAL_PRECISION || scale > precision {
                return None;
            }
            return Some(PrimitiveType::Decimal { precision, scale });
        }
        if let Some(args) = s
            .strip_prefix("geometry(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let crs = args.trim();
            if crs.is_empty() || crs.contains(',') {
                return None;
            }
            return Some(PrimitiveType::Geometry {
                crs: Some(crs.to_string()),
            });
        }
        if let Some(args) = s
            .strip_prefix("geography(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let (crs, algorithm) = match args.split_once(',') {
                Some((c, a)) => (c.trim(), Some(EdgeAlgorithm::parse(a)?)),
                None => (args.trim(), None),
            };
            if crs.is_empty() {
                return None;
            }
            return Some(PrimitiveType::Geography {
                crs: Some(crs.to_string()),
                algorithm,
            });
        }
        None
    }

    /// True for the types that are new in format version 3.
    pub fn min_format_version(&self) -> u8 {
        match self {
            PrimitiveType::Unknown
            | PrimitiveType::TimestampNs
            | PrimitiveType::TimestamptzNs
            | PrimitiveType::Geometry { .. }
            | PrimitiveType::Geography { .. } => 3,
            _ => 1,
        }
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrimitiveType::Unknown => write!(f, "unknown"),
            PrimitiveType::Boolean => write!(f, "boolean"),
            PrimitiveType::Int => write!(f, "int"),
            PrimitiveType::Long => write!(f, "long"),
            PrimitiveType::Float => write!(f, "float"),
            PrimitiveType::Double => write!(f, "double"),
            PrimitiveType::Decimal { precision, scale } => {
                write!(f, "decimal({precision}, {scale})")
            }
            PrimitiveType::Date => write!(f, "date"),
            PrimitiveType::Time => write!(f, "time"),
            PrimitiveType::Timestamp => write!(f, "timestamp"),
            PrimitiveType::Timestamptz => write!(f, "timestamptz"),
            PrimitiveType::TimestampNs => write!(f, "timestamp_ns"),
            PrimitiveType::TimestamptzNs => write!(f, "timestamptz_ns"),
            PrimitiveType::String => write!(f, "string"),
            PrimitiveType::Uuid => write!(f, "uuid"),
            PrimitiveType::Fixed(len) => write!(f, "fixed[{len}]"),
            PrimitiveType::Binary => write!(f, "binary"),
            PrimitiveType::Geometry { crs: None } => write!(f, "geometry"),
            PrimitiveType::Geometry { crs: Some(c) } => write!(f, "geometry({c})"),
            PrimitiveType::Geography {
                crs: None,
                algorithm: None,
            } => write!(f, "geography"),
            PrimitiveType::Geography { crs, algorithm } => {
                let c = crs.as_deref().unwrap_or(DEFAULT_CRS);
                match algorithm {
                    Some(a) => write!(f, "geography({c}, {})", a.as_str()),
                    None => write!(f, "geography({c})"),
                }
            }
        }
    }
}

/// A field of a struct, or the element of a list, or the key or value of a map.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: Type,
    pub doc: Option<String>,
    /// v3: value for rows written before the field was added.
    pub initial_default: Option<Literal>,
    /// v3: value written when a writer does not supply one.
    pub write_default: Option<Literal>,
}

impl NestedField {
    pub fn new(id: i32, name: impl Into<String>, field_type: Type, required: bool) -> Self {
        NestedField {
            id,
            name: name.into(),
            required,
            field_type,
            doc: None,
            initial_default: None,
            write_default: None,
        }
    }

    pub fn required(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, true)
    }

    pub fn optional(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, false)
    }

    pub fn with_doc(mut self, doc: impl Into<String>) -> Self {
        self.doc = Some(doc.into());
        self
    }

    pub fn with_initial_default(mut self, value: Literal) -> Self {
        self.initial_default = Some(value);
        self
    }

    pub fn with_write_default(mut self, value: Literal) -> Self {
        self.write_default = Some(value);
        self
    }
}

/// A struct: an ordered list of fields. A schema is a struct.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    pub fields: Vec<NestedField>,
}

impl StructType {
    /// The struct with every nested field renumbered, in the order Java's
    /// `TypeUtil.assignFreshIds` gives: a struct's own fields first, then, field by field,
    /// the ids inside each one (a list's element; a map's key then value, then their types).
    /// `next_id` gets the field's old id (to keep ids by name when replacing a schema).
    pub fn with_fresh_ids(
        &self,
        next_id: &mut dyn FnMut(i32) -> crate::error::Result<i32>,
    ) -> crate::error::Result<StructType> {
        let ids = self
            .fields
            .iter()
            .map(|f| next_id(f.id))
            .collect::<crate::error::Result<Vec<_>>>()?;
        let mut fields = Vec::with_capacity(self.fields.len());
        for (f, id) in self.fields.iter().zip(ids) {
            fields.push(NestedField {
                id,
                field_type: f.field_type.with_fresh_ids(next_id)?,
                ..f.clone()
            });
        }
        Ok(StructType::new(fields))
    }

    pub fn new(fields: Vec<NestedField>) -> Self {
        StructType { fields }
    }

    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.id == id)
    }

    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A list; its element is a field named `element`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    pub element_field: NestedField,
}

impl ListType {
    pub fn new(element_id: i32, element_required: bool, element_type: Type) -> Self {
        ListType {
            element_field: NestedField::new(element_id, "element", element_type, element_required),
        }
    }
}

/// A map; its key and value are fields named `key` and `value`. Keys are always required.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    pub key_field: NestedField,
    pub value_field: NestedField,
}

impl MapType {
    pub fn new(
        key_id: i32,
        key_type: Type,
        value_id: i32,
        value_required: bool,
        value_type: Type,
    ) -> Self {
        MapType {
            key_field: NestedField::required(key_id, "key", key_type),
            value_field: NestedField::new(value_id, "value", value_type, value_required),
        }
    }
}

/// Any Iceberg type. Nested types are behind `Arc` so that schemas are cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Primitive(PrimitiveType),
    Struct(Arc<StructType>),
    List(Arc<ListType>),
    Map(Arc<MapType>),
    /// v3 semi-structured type.
    Variant,
}

impl From<PrimitiveType> for Type {
    fn from(p: PrimitiveType) -> Self {
        Type::Primitive(p)
    }
}

impl From<StructType> for Type {
    fn from(s: StructType) -> Self {
        Type::Struct(Arc::new(s))
    }
}

impl From<ListType> for Type {
    fn from(l: ListType) -> Self {
        Type::List(Arc::new(l))
    }
}

impl From<MapType> for Type {
    fn from(m: MapType) -> Self {
        Type::Map(Arc::new(m))
    }
}

impl Type {
    /// The type with every nested field renumbered (see [`StructType::with_fresh_ids`]).
    pub fn with_fresh_ids(
        &self,
        next_id: &mut dyn FnMut(i32) -> crate::error::Result<i32>,
    ) -> crate::error::Result<Type> {
        Ok(match self {
            Type::Struct(s) => Type::Struct(Arc::new(s.with_fresh_ids(next_id)?)),
            Type::List(l) => {
                let id = next_id(l.element_field.id)?;
                let element = l.element_field.field_type.with_fresh_ids(next_id)?;
                Type::List(Arc::new(ListType {
                    element_field: NestedField {
                        id,
                        field_type: element,
                        ..l.element_field.clone()
                    },
                }))
            }
            Type::Map(m) => {
                let key_id = next_id(m.key_field.id)?;
                let value_id = next_id(m.value_field.id)?;
                let key = m.key_field.field_type.with_fresh_ids(next_id)?;
                let value = m.value_field.field_type.with_fresh_ids(next_id)?;
                Type::Map(Arc::new(MapType {
                    key_field: NestedField {
                        id: key_id,
                        field_type: key,
                        ..m.key_field.clone()
                    },
                    value_field: NestedField {
                        id: value_id,
                        field_type: value,
                        ..m.value_field.clone()
                    },
                }))
            }
            Type::Primitive(_) | Type::Variant => self.clone(),
        })
    }

    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(p),
            _ => None,
        }
    }

    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            Type::Struct(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Primitive(_))
    }

    pub fn is_nested(&self) -> bool {
        matches!(self, Type::Struct(_) | Type::List(_) | Type::Map(_))
    }

    /// The lowest format version in which this type (and everything nested in it) may be used.
    pub fn min_format_version(&self) -> u8 {
        match self {
            Type::Primitive(p) => p.min_format_version(),
            Type::Variant => 3,
            Type::Struct(s) => s
                .fields
                .iter()
                .map(|f| f.field_type.min_format_version())
                .max()
                .unwrap_or(1),
            Type::List(l) => l.element_field.field_type.min_format_version(),
            Type::Map(m) => m
                .key_field
                .field_type
                .min_format_version()
                .max(m.value_field.field_type.min_format_version()),
        }
    }

    /// Parses a type from its JSON form; `path` names the field for errors.
    pub fn from_json(value: &Value, path: &str) -> Result<Type> {
        match value {
            Value::String(s) => {
                if s == "variant" {
                    return Ok(Type::Variant);
                }
                PrimitiveType::parse(s)
                    .map(Type::Primitive)
                    .ok_or_else(|| Error::UnknownType {
                        at: Location {
                            file: String::new(),
                            field: path.to_string(),
                        },
                        type_string: s.clone(),
                    })
            }
            Value::Object(_) => {
                let o = Obj::new(value, path)?;
                let t = o.req_str("type")?;
                match t {
                    "struct" => Ok(Type::Struct(Arc::new(StructType::from_json(value, path)?))),
                    "list" => {
                        let id = o.req_i32("element-id")?;
                        let required = o.req_bool("element-required")?;
                        let elem = Type::from_json(o.req("element")?, &o.field("element"))?;
                        Ok(ListType::new(id, required, elem).into())
                    }
                    "map" => {
                        let key_id = o.req_i32("key-id")?;
                        let key = Type::from_json(o.req("key")?, &o.field("key"))?;
                        let value_id = o.req_i32("value-id")?;
                        let value_required = o.req_bool("value-required")?;
                        let val = Type::from_json(o.req("value")?, &o.field("value"))?;
                        Ok(MapType::new(key_id, key, value_id, value_required, val).into())
                    }
                    other => Err(Error::UnknownType {
                        at: Location {
                            file: String::new(),
                            field: o.field("type"),
                        },
                        type_string: other.to_string(),
                    }),
                }
            }
            other => Err(Error::invalid_metadata(
                path,
                format!("expected a type string or object, found {}", kind(other)),
            )),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Type::Primitive(p) => Value::String(p.to_string()),
            Type::Variant => Value::String("variant".to_string()),
            Type::Struct(s) => s.to_json(),
            Type::List(l) => json!({
                "type": "list",
                "element-id": l.element_field.id,
                "element": l.element_field.field_type.to_json(),
                "element-required": l.element_field.required,
            }),
            Type::Map(m) => json!({
                "type": "map",
                "key-id": m.key_field.id,
                "key": m.key_field.field_type.to_json(),
                "value-id": m.value_field.id,
                "value": m.value_field.field_type.to_json(),
                "value-required": m.value_field.required,
            }),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Primitive(p) => write!(f, "{p}"),
            Type::Variant => write!(f, "variant"),
            Type::Struct(s) => {
                write!(f, "struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}: {}", field.id, field.name)?;
                    if field.required {
                        write!(f, " required")?;
                    }
                    write!(f, " {}", field.field_type)?;
                }
                write!(f, ">")
            }
            Type::List(l) => write!(f, "list<{}>", l.element_field.field_type),
            Type::Map(m) => write!(
                f,
                "map<{}, {}>",
                m.key_field.field_type, m.value_field.field_type
            ),
        }
    }
}

impl StructType {
    /// Parses a struct object (`{"type": "struct", "fields": [...]}`); `path` names it for errors.
    pub fn from_json(value: &Value, path: &str) -> Result<StructType> {
        let o = Obj::new(value, path)?;
        let fields_path = o.field("fields");
        let fields = o
            .req_array("fields")?
            .iter()
            .enumerate()
            .map(|(i, f)| NestedField::from_json(f, &index(&fields_path, i)))
            .collect::<Result<Vec<_>>>()?;
        Ok(StructType { fields })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "struct".into());
        m.insert(
            "fields".into(),
            Value::Array(self.fields.iter().map(NestedField::to_json).collect()),
        );
        Value::Object(m)
    }
}

impl NestedField {
    pub fn from_json(value: &Value, path: &str) -> Result<NestedField> {
        let o = Obj::new(value, path)?;
        let id = o.req_i32("id")?;
        let name = o.req_str("name")?.to_string();
        let required = o.req_bool("required")?;
        let field_type = Type::from_json(o.req("type")?, &o.field("type"))?;
        let doc = o.opt_str("doc")?.map(str::to_string);
        let parse_default = |key: &str| -> Result<Option<Literal>> {
            match o.opt(key) {
                None => Ok(None),
                Some(v) => Literal::from_json(v, &field_type)
                    .map(Some)
                    .map_err(|e| match e {
                        Error::InvalidArgument { message } => {
                            Error::invalid_metadata(o.field(key), message)
                        }
                        other => other.under(&o.field(key)),
                    }),
            }
        };
        let initial_default = parse_default("initial-default")?;
        let write_default = parse_default("write-default")?;
        Ok(NestedField {
            id,
            name,
            required,
            field_type,
            doc,
            initial_default,
            write_default,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.into());
        m.insert("name".into(), self.name.clone().into());
        m.insert("required".into(), self.required.into());
        m.insert("type".into(), self.field_type.to_json());
        if let Some(doc) = &self.doc {
            m.insert("doc".into(), doc.clone().into());
        }
        if let Some(d) = &self.initial_default {
            m.insert("initial-default".into(), d.to_json(&self.field_type));
        }
        if let Some(d) = &self.write_default {
            m.insert("write-default".into(), d.to_json(&self.field_type));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn primitive_strings_round_trip() {
        for s in [
            "unknown",
            "boolean",
            "int",
            "long",
            "float",
            "double",
            "date",
            "time",
            "timestamp",
            "timestamptz",
            "timestamp_ns",
            "timestamptz_ns",
            "string",
            "uuid",
            "binary",
            "fixed[16]",
            "decimal(9, 2)",
            "geometry",
            "geometry(srid:4326)",
            "geography",
            "geography(srid:4326, spherical)",
            "geography(OGC:CRS84, karney)",
        ] {
            let t = PrimitiveType::parse(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(t.to_string(), s);
        }
        // the spec shows both spellings of decimal
        assert_eq!(
            PrimitiveType::parse("decimal(9,2)"),
            Some(PrimitiveType::Decimal {
                precision: 9,
                scale: 2
            })
        );
    }

    #[test]
    fn bad_type_strings_are_unknown_types() {
        for s in [
            "integer",
            "decimal(39, 2)",
            "decimal(2, 3)",
            "fixed[x]",
            "geography(a, flat)",
            "",
        ] {
            let e = Type::from_json(&Value::String(s.into()), "schema.fields[0].type").unwrap_err();
            match e {
                Error::UnknownType { at, type_string } => {
                    assert_eq!(at.field, "schema.fields[0].type");
                    assert_eq!(type_string, s);
                }
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    #[test]
    fn spec_nested_examples_parse() {
        let list = serde_json::from_str::<Value>(
            r#"{"type": "list", "element-id": 3, "element-required": true, "element": "string"}"#,
        )
        .unwrap();
        let t = Type::from_json(&list, "").unwrap();
        assert_eq!(
            t,
            ListType::new(3, true, PrimitiveType::String.into()).into()
        );
        assert_eq!(Type::from_json(&t.to_json(), "").unwrap(), t);

        let map = serde_json::from_str::<Value>(
            r#"{"type": "map", "key-id": 4, "key": "string", "value-id": 5, "value-required": false, "value": "double"}"#,
        )
        .unwrap();
        let t = Type::from_json(&map, "").unwrap();
        assert_eq!(
            t,
            MapType::new(
                4,
                PrimitiveType::String.into(),
                5,
                false,
                PrimitiveType::Double.into()
            )
            .into()
        );
        assert_eq!(Type::from_json(&t.to_json(), "").unwrap(), t);
    }

    #[test]
    fn field_defaults() {
        let v = serde_json::from_str::<Value>(
            r#"{"id": 1, "name": "a", "required": false, "type": "int", "initial-default": null, "write-default": 34}"#,
        )
        .unwrap();
        let f = NestedField::from_json(&v, "f").unwrap();
        assert_eq!(f.initial_default, None);
        assert_eq!(f.write_default, Some(Literal::Int(34)));
        assert_eq!(NestedField::from_json(&f.to_json(), "f").unwrap(), f);
        let bad = serde_json::from_str::<Value>(
            r#"{"id": 1, "name": "a", "required": false, "type": "date", "initial-default": 3}"#,
        )
        .unwrap();
        let e = NestedField::from_json(&bad, "schema.fields[0]").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "schema.fields[0].initial-default"
        );
    }

    #[test]
    fn missing_nested_field_names_the_path() {
        let v = serde_json::from_str::<Value>(
            r#"{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": {"type": "list", "element-id": 2, "element": "int"}}]}"#,
        )
        .unwrap();
        let e = Type::from_json(&v, "schema").unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "schema.fields[0].type.element-required"
        );
    }
}
