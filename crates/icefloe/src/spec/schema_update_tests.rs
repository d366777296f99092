#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::spec::types::PrimitiveType as P;
use serde_json::json;

/// id, name (required), location struct {lat, long}, points list<struct{x, y}>,
/// props map<string, struct{v}>
fn base() -> Schema {
    let v = json!({
    "type": "struct", "schema-id": 0, "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": true, "type": "int"},
        {"id": 2, "name": "name", "required": false, "type": "string"},
        {"id": 3, "name": "location", "required": false, "type": {
            "type": "struct", "fields": [
                {"id": 4, "name": "lat", "required": true, "type": "float"},
                {"id": 5, "name": "long", "required": true, "type": "float"}]}},
        {"id": 6, "name": "points", "required": false, "type": {
            "type": "list", "element-id": 7, "element-required": true, "element": {
                "type": "struct", "fields": [
                    {"id": 8, "name": "x", "required": true, "type": "long"},
                    {"id": 9, "name": "y", "required": true, "type": "long"}]}}},
        {"id": 10, "name": "props", "required": false, "type": {
            "type": "map", "key-id": 11, "key": "string", "value-id": 12,
            "value-required": false, "value": {
                "type": "struct", "fields": [
                    {"id": 13, "name": "v", "required": false, "type": "decimal(9, 2)"}]}}}
    ]});
    Schema::from_json(&v, "").unwrap()
}

fn names(s: &Schema) -> Vec<(i32, String)> {
    s.field_names()
        .into_iter()
        .map(|(id, n)| (id, n.to_string()))
        .collect()
}

fn top(s: &Schema) -> Vec<&str> {
    s.fields().iter().map(|f| f.name.as_str()).collect()
}

fn prim(p: P) -> Type {
    Type::Primitive(p)
}

#[test]
fn no_changes_gives_the_same_fields() {
    let s = base();
    let out = UpdateSchema::new(&s, 13).apply().unwrap();
    assert_eq!(out.as_struct(), s.as_struct());
    assert_eq!(out.identifier_field_ids(), &[1]);
}

#[test]
fn adds_get_ids_above_last_column_id_with_nested_types_numbered_in_order() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 20);
    let nested: Type = StructType::new(vec![
        NestedField::optional(1, "a", ListType::new(2, false, prim(P::Int)).into()),
        NestedField::optional(3, "b", prim(P::String)),
    ])
    .into();
    u.add_column(None, "extra", nested, Some("doc"), None)
        .unwrap();
    u.add_column(Some("location"), "alt", prim(P::Double), None, None)
        .unwrap();
    u.add_column(Some("points"), "z", prim(P::Long), None, None)
        .unwrap();
    u.add_column(Some("props"), "w", prim(P::Int), None, None)
        .unwrap();
    let out = u.apply().unwrap();
    assert_eq!(u.last_column_id(), 27);
    // the struct's own fields (22, 23) before the list element (24)
    let n = names(&out);
    for (id, name) in [
        (21, "extra"),
        (22, "extra.a"),
        (23, "extra.b"),
        (24, "extra.a.element"),
        (25, "location.alt"),
        (26, "points.element.z"),
        (27, "props.value.w"),
    ] {
        assert!(n.contains(&(id, name.to_string())), "{id} {name} in {n:?}");
    }
    assert_eq!(
        top(&out),
        ["id", "name", "location", "points", "props", "extra"]
    );
    assert_eq!(out.field_by_id(21).unwrap().doc.as_deref(), Some("doc"));
}

#[test]
fn delete_rename_promote_optional() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.delete_column("location.long").unwrap();
    u.rename_column("name", "full_name").unwrap();
    u.update_column("points.x", P::Long).unwrap(); // no-op: same type
    u.update_column(
        "props.value.v",
        P::Decimal {
            precision: 12,
            scale: 2,
        },
    )
    .unwrap();
    u.make_column_optional("location.lat").unwrap();
    u.update_column_doc("id", Some("the key")).unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        top(&out),
        ["id", "full_name", "location", "points", "props"]
    );
    assert!(out.field_by_id(5).is_none());
    assert!(!out.field_by_id(4).unwrap().required);
    assert_eq!(
        out.field_by_id(13).unwrap().field_type,
        prim(P::Decimal {
            precision: 12,
            scale: 2
        })
    );
    assert_eq!(out.field_by_id(1).unwrap().doc.as_deref(), Some("the key"));
}

#[test]
fn errors_match_java_rules() {
    let s = base();
    let err = |f: &dyn Fn(&mut UpdateSchema) -> Result<()>| {
        let mut u = UpdateSchema::new(&s, 13);
        match f(&mut u) {
            Err(e) => e.to_string(),
            Ok(()) => match u.apply() {
                Err(e) => e.to_string(),
                Ok(_) => panic!("expected an error"),
            },
        }
    };
    assert!(err(&|u| u
        .add_column(None, "name", prim(P::Int), None, None)
        .map(|_| ()))
    .contains("name already exists: name"));
    assert!(err(&|u| u
        .add_required_column(None, "r", prim(P::Int), None, None)
        .map(|_| ()))
    .contains("cannot add required column without a default value: r"));
    assert!(err(&|u| u
        .add_column(Some("id"), "x", prim(P::Int), None, None)
        .map(|_| ()))
    .contains("Cannot add to non-struct column: id"));
    assert!(err(&|u| u.delete_column("nope").map(|_| ())).contains("missing column: nope"));
    assert!(err(&|u| u.update_column("id", P::String).map(|_| ()))
        .contains("Cannot change column type: id: int -> string"));
    assert!(
        err(&|u| u.update_column("location.lat", P::Long).map(|_| ())).contains("float -> long")
    );
    assert!(err(&|u| u.require_column("name").map(|_| ())).contains("optional -> required"));
    assert!(err(&|u| u.delete_column("id").map(|_| ())).contains("Cannot delete identifier field"));
    assert!(err(&|u| {
        u.rename_column("name", "n")?;
        u.delete_column("name").map(|_| ())
    })
    .contains("has updates"));
    assert!(err(&|u| u.delete_column("props.key").map(|_| ())).contains("Cannot delete map keys"));
    assert!(
        err(&|u| u.move_before("location.lat", "id").map(|_| ())).contains("to a different struct")
    );
    assert!(err(&|u| u.move_first("nope").map(|_| ())).contains("Cannot move missing column"));
    assert!(err(&|u| {
        u.set_identifier_fields(&["name"]);
        Ok(())
    })
    .contains("must be required"));
    assert!(err(&|u| {
        u.set_identifier_fields(&["nope"]);
        Ok(())
    })
    .contains("not found in current schema or added columns"));
}

#[test]
fn required_column_with_default_and_incompatible_changes() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.add_required_column(None, "n", prim(P::Int), None, Some(Literal::Int(7)))
        .unwrap();
    let out = u.apply().unwrap();
    let f = out.field_by_id(14).unwrap();
    assert!(f.required);
    assert_eq!(f.initial_default, Some(Literal::Int(7)));
    assert_eq!(f.write_default, Some(Literal::Int(7)));
    // a default of the wrong type is refused
    let mut u = UpdateSchema::new(&s, 13);
    assert!(u
        .add_column(
            None,
            "m",
            prim(P::Int),
            None,
            Some(Literal::String("x".into()))
        )
        .is_err());
    // with incompatible changes allowed
    let mut u = UpdateSchema::new(&s, 13);
    u.allow_incompatible_changes();
    u.require_column("name").unwrap();
    u.add_required_column(None, "r", prim(P::Long), None, None)
        .unwrap();
    let out = u.apply().unwrap();
    assert!(out.field_by_id(2).unwrap().required);
    assert!(out.field_by_id(14).unwrap().required);
}

#[test]
fn moves_apply_after_adds_in_order() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.add_column(None, "ts", prim(P::Timestamp), None, None)
        .unwrap();
    u.move_first("ts").unwrap();
    u.move_after("id", "props").unwrap();
    u.move_before("points", "name").unwrap();
    u.add_column(Some("location"), "alt", prim(P::Double), None, None)
        .unwrap();
    u.move_first("location.alt").unwrap();
    u.move_after("location.lat", "location.long").unwrap();
    let out = u.apply().unwrap();
    assert_eq!(
        top(&out),
        ["ts", "points", "name", "location", "props", "id"]
    );
    let Type::Struct(loc) = &out.field_by_id(3).unwrap().field_type else {
        panic!()
    };
    let loc: Vec<&str> = loc.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(loc, ["alt", "long", "lat"]);
}

#[test]
fn case_insensitive_names() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.case_sensitive(false);
    u.rename_column("NAME", "n").unwrap();
    u.delete_column("Location.LONG").unwrap();
    let out = u.apply().unwrap();
    assert_eq!(out.field_by_id(2).unwrap().name, "n");
    assert!(out.field_by_id(5).is_none());
    let mut u = UpdateSchema::new(&s, 13);
    assert!(u.rename_column("NAME", "n").is_err());
}

#[test]
fn identifier_fields_follow_renames() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.rename_column("id", "key").unwrap();
    let out = u.apply().unwrap();
    assert_eq!(out.identifier_field_ids(), &[1]);
    assert_eq!(out.field_by_id(1).unwrap().name, "key");
    let mut u = UpdateSchema::new(&s, 13);
    u.set_identifier_fields(&["id", "location.lat"]);
    // location is optional: its fields cannot be identifiers
    assert!(u.apply().is_err());
}

#[test]
fn union_by_name_adds_missing_and_widens() {
    let s = base();
    let v = json!({"type": "struct", "fields": [
        {"id": 100, "name": "id", "required": false, "type": "long", "doc": "key"},
        {"id": 101, "name": "location", "required": false, "type": {
            "type": "struct", "fields": [
                {"id": 102, "name": "alt", "required": true, "type": "double"}]}},
        {"id": 103, "name": "new", "required": true, "type": {
            "type": "list", "element-id": 104, "element-required": false, "element": "int"}}
    ]});
    let other = Schema::from_json(&v, "").unwrap();
    let mut u = UpdateSchema::new(&s, 13);
    u.set_identifier_fields::<&str>(&[]);
    u.union_by_name(&other).unwrap();
    let out = u.apply().unwrap();
    let id = out.field_by_id(1).unwrap();
    assert_eq!(id.field_type, prim(P::Long));
    assert!(!id.required);
    assert_eq!(id.doc.as_deref(), Some("key"));
    // nested add first (14), then the top-level add (15) with its element (16)
    assert_eq!(out.name_by_id(14), Some("location.alt"));
    assert!(!out.field_by_id(14).unwrap().required);
    assert_eq!(out.name_by_id(15), Some("new"));
    assert_eq!(out.name_by_id(16), Some("new.element"));
    // a narrower type is ignored, an incompatible one refused
    let narrower = Schema::from_json(
        &json!({"type": "struct", "fields": [
            {"id": 1, "name": "points", "required": false, "type": {
                "type": "list", "element-id": 2, "element-required": true, "element": {
                    "type": "struct", "fields": [
                        {"id": 3, "name": "x", "required": true, "type": "int"}]}}}]}),
        "",
    )
    .unwrap();
    let mut u = UpdateSchema::new(&s, 13);
    u.union_by_name(&narrower).unwrap();
    assert_eq!(u.apply().unwrap().as_struct(), s.as_struct());
    let bad = Schema::from_json(
        &json!({"type": "struct", "fields": [
            {"id": 1, "name": "name", "required": false, "type": "int"}]}),
        "",
    )
    .unwrap();
    assert!(UpdateSchema::new(&s, 13).union_by_name(&bad).is_err());
}

#[test]
fn a_rename_onto_an_existing_name_is_refused() {
    let s = base();
    let mut u = UpdateSchema::new(&s, 13);
    u.rename_column("points", "name").unwrap();
    let e = u.apply().unwrap_err().to_string();
    assert!(e.contains("multiple fields for name name: 2 and 6"), "{e}");
    // swapping two names in one update is fine
    let mut u = UpdateSchema::new(&s, 13);
    u.rename_column("points", "name").unwrap();
    u.rename_column("name", "points").unwrap();
    let out = u.apply().unwrap();
    assert_eq!(out.field_by_id(6).unwrap().name, "name");
}
