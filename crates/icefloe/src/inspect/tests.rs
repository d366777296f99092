use super::*;

#[test]
fn names_parse_case_insensitively() {
    for t in MetadataTableType::ALL {
        assert_eq!(MetadataTableType::parse(t.name()), Some(t));
        assert_eq!(MetadataTableType::parse(&t.name().to_uppercase()), Some(t));
    }
    assert_eq!(MetadataTableType::parse("nope"), None);
}
