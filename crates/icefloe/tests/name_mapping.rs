#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Name mappings: the spec's example, nested lookup, the default mapping of a schema,
//! and bad input.

use icefloe::error::Error;
use icefloe::spec::name_mapping::{MappedField, NameMapping};
use icefloe::spec::{ListType, MapType, NestedField, PrimitiveType, Schema, StructType};
use serde_json::{json, Value};

/// The example of "Name Mapping Serialization" (Appendix C).
const SPEC_EXAMPLE: &str = r#"
[ { "field-id": 1, "names": ["id", "record_id"] },
  { "field-id": 2, "names": ["data"] },
  { "field-id": 3, "names": ["location"], "fields": [
    { "field-id": 4, "names": ["latitude", "lat"] },
    { "field-id": 5, "names": ["longitude", "long"] }
  ] } ]
"#;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn spec_example_parses() {
    let m = NameMapping::from_json_str(SPEC_EXAMPLE).unwrap();
    let expected = NameMapping::new(vec![
        MappedField::new(Some(1), names(&["id", "record_id"]), vec![]),
        MappedField::new(Some(2), names(&["data"]), vec![]),
        MappedField::new(
            Some(3),
            names(&["location"]),
            vec![
                MappedField::new(Some(4), names(&["latitude", "lat"]), vec![]),
                MappedField::new(Some(5), names(&["longitude", "long"]), vec![]),
            ],
        ),
    ])
    .unwrap();
    assert_eq!(m, expected);
}

#[test]
fn spec_example_round_trips() {
    let m = NameMapping::from_json_str(SPEC_EXAMPLE).unwrap();
    let written: Value = serde_json::from_str(&m.to_json_string()).unwrap();
    let original: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    assert_eq!(written, original);
    assert_eq!(NameMapping::from_json(&written).unwrap(), m);
}

#[test]
fn lookup_by_path_of_names() {
    let m = NameMapping::from_json_str(SPEC_EXAMPLE).unwrap();
    assert_eq!(m.find(&["id"]), Some(1));
    assert_eq!(m.find(&["record_id"]), Some(1));
    assert_eq!(m.find(&["data"]), Some(2));
    assert_eq!(m.find(&["location"]), Some(3));
    assert_eq!(m.find(&["location", "lat"]), Some(4));
    assert_eq!(m.find(&["location", "latitude"]), Some(4));
    assert_eq!(m.find(&["location", "long"]), Some(5));
    // no such names, or a name at the wrong level
    assert_eq!(m.find(&["lat"]), None);
    assert_eq!(m.find(&["location", "lat", "x"]), None);
    assert_eq!(m.find(&["location.lat"]), None);
    assert_eq!(
        m.find(&["Location", "lat"]),
        None,
        "names are case-sensitive"
    );
    assert_eq!(m.find(&[]), None);
    assert_eq!(m.find_field(&["location"]).unwrap().fields.len(), 2);
    assert_eq!(
        m.find_by_id(5).unwrap().names,
        names(&["longitude", "long"])
    );
    assert!(m.find_by_id(6).is_none());
}

#[test]
fn dots_in_names_are_literal() {
    let m = NameMapping::from_json(&json!([
        {"field-id": 1, "names": ["a.b"]},
        {"field-id": 2, "names": ["a"], "fields": [{"field-id": 3, "names": ["b"]}]}
    ]))
    .unwrap();
    assert_eq!(m.find(&["a.b"]), Some(1));
    assert_eq!(m.find(&["a", "b"]), Some(3));
}

#[test]
fn field_id_and_names_are_optional() {
    let m = NameMapping::from_json(&json!([
        {"names": ["only_in_files"]},
        {"field-id": 7, "names": []},
        {"field-id": 8}
    ]))
    .unwrap();
    assert_eq!(m.fields[0].field_id, None);
    assert_eq!(
        m.find(&["only_in_files"]),
        None,
        "mapped, but without an id"
    );
    assert!(m.find_field(&["only_in_files"]).is_some());
    assert_eq!(m.fields[2].names, Vec::<String>::new());
    let written = m.to_json();
    assert_eq!(
        written,
        json!([
            {"names": ["only_in_files"]},
            {"field-id": 7, "names": []},
            {"field-id": 8, "names": []}
        ])
    );
}

fn schema_with_nesting() -> Schema {
    let location = StructType::new(vec![
        NestedField::required(4, "lat", PrimitiveType::Float.into()),
        NestedField::optional(5, "long", PrimitiveType::Float.into()),
    ]);
    let point = StructType::new(vec![
        NestedField::required(9, "x", PrimitiveType::Double.into()),
        NestedField::required(10, "y", PrimitiveType::Double.into()),
    ]);
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(3, "location", location.into()),
            NestedField::optional(
                6,
                "tags",
                MapType::new(
                    7,
                    PrimitiveType::String.into(),
                    8,
                    true,
                    ListType::new(11, false, PrimitiveType::Int.into()).into(),
                )
                .into(),
            ),
            NestedField::optional(12, "points", ListType::new(13, true, point.into()).into()),
        ],
        vec![],
    )
    .unwrap()
}

#[test]
fn default_mapping_of_a_schema() {
    let m = NameMapping::from_schema(&schema_with_nesting());
    let expected = json!([
        {"field-id": 1, "names": ["id"]},
        {"field-id": 3, "names": ["location"], "fields": [
            {"field-id": 4, "names": ["lat"]},
            {"field-id": 5, "names": ["long"]}
        ]},
        {"field-id": 6, "names": ["tags"], "fields": [
            {"field-id": 7, "names": ["key"]},
            {"field-id": 8, "names": ["value"], "fields": [
                {"field-id": 11, "names": ["element"]}
            ]}
        ]},
        {"field-id": 12, "names": ["points"], "fields": [
            {"field-id": 13, "names": ["element"], "fields": [
                {"field-id": 9, "names": ["x"]},
                {"field-id": 10, "names": ["y"]}
            ]}
        ]}
    ]);
    assert_eq!(m.to_json(), expected);
    m.validate().unwrap();
    assert_eq!(m.find(&["location", "long"]), Some(5));
    assert_eq!(m.find(&["tags", "key"]), Some(7));
    assert_eq!(m.find(&["tags", "value", "element"]), Some(11));
    assert_eq!(m.find(&["points", "element", "y"]), Some(10));
    assert_eq!(
        m.find(&["points", "y"]),
        None,
        "no short names in a mapping"
    );
    // every field of the schema is reachable by its own id
    for (id, _) in schema_with_nesting().field_names() {
        assert_eq!(m.find_by_id(id).unwrap().field_id, Some(id));
    }
    // and the mapping round trips
    assert_eq!(NameMapping::from_json_str(&m.to_json_string()).unwrap(), m);
}

#[test]
fn duplicate_names_at_one_level_are_refused() {
    let e = NameMapping::from_json(&json!([
        {"field-id": 1, "names": ["a"]},
        {"field-id": 2, "names": ["b"], "fields": [
            {"field-id": 3, "names": ["x", "y"]},
            {"field-id": 4, "names": ["z", "x"]}
        ]}
    ]))
    .unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
    assert_eq!(e.location().unwrap().field, "[1].fields[1].names");
    assert!(e.to_string().contains("'x'"), "{e}");

    let e = NameMapping::from_json(&json!([
        {"field-id": 1, "names": ["a"]},
        {"names": ["a"]}
    ]))
    .unwrap_err();
    assert_eq!(e.location().unwrap().field, "[1].names");

    // the same name at different levels, or twice in one field, is fine
    let m = NameMapping::from_json(&json!([
        {"field-id": 1, "names": ["a", "a"], "fields": [{"field-id": 2, "names": ["a"]}]}
    ]))
    .unwrap();
    assert_eq!(m.fields[0].names, names(&["a"]));
    assert_eq!(m.find(&["a", "a"]), Some(2));

    // hand-built mappings are checked too
    let e = NameMapping::new(vec![
        MappedField::new(Some(1), names(&["a"]), vec![]),
        MappedField::new(Some(2), names(&["a"]), vec![]),
    ])
    .unwrap_err();
    assert_eq!(e.location().unwrap().field, "[1].names");
}

#[test]
fn duplicate_ids_at_one_level_are_refused() {
    let e = NameMapping::from_json(&json!([
        {"field-id": 1, "names": ["a"]},
        {"field-id": 1, "names": ["b"]}
    ]))
    .unwrap_err();
    assert_eq!(e.location().unwrap().field, "[1].field-id");
}

#[test]
fn wrong_types_are_named() {
    let cases = [
        (json!({"field-id": 1}), ""),
        (json!([1]), "[0]"),
        (json!([{"field-id": "1", "names": ["a"]}]), "[0].field-id"),
        (json!([{"field-id": 1, "names": "a"}]), "[0].names"),
        (json!([{"field-id": 1, "names": ["a", 2]}]), "[0].names[1]"),
        (
            json!([{"field-id": 1, "names": ["a"], "fields": {}}]),
            "[0].fields",
        ),
        (
            json!([{"field-id": 1, "names": ["a"], "fields": [{"field-id": 2.5}]}]),
            "[0].fields[0].field-id",
        ),
    ];
    for (v, path) in cases {
        let e = NameMapping::from_json(&v).unwrap_err();
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{v}: {e:?}");
        assert_eq!(e.location().unwrap().field, path, "{v}");
    }
    let e = NameMapping::from_json_str("[{\"names\": [").unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
}

#[test]
fn truncated_text_never_panics() {
    let text = SPEC_EXAMPLE.trim();
    for len in 0..text.len() {
        assert!(
            NameMapping::from_json_str(&text[..len]).is_err(),
            "parsed at {len}"
        );
    }
}
