//! Tests of the delete file index: one per scope rule of "Scan Planning" and per pruning
//! rule of Java's `DeleteFileIndex`, plus a randomised comparison with a direct reading
//! of the rules.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use super::delete_index::DeleteFileIndex;
use super::task::ScanFile;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::schema::reserved::DELETE_FILE_PATH_ID;
use crate::spec::types::{NestedField, PrimitiveType as P, StructType};
use crate::spec::{Literal, Schema, Transform};
use crate::Error;

const UNPARTITIONED: i32 = 0;
/// identity(category)
const BY_CATEGORY: i32 = 1;
/// identity(x), a double
const BY_DOUBLE: i32 = 2;
/// an unknown transform of `data`, stored as a string
const BY_UNKNOWN: i32 = 3;
/// identity(category) again, under another id
const BY_CATEGORY_AGAIN: i32 = 4;
/// void(category): unpartitioned
const VOID: i32 = 5;
/// identity(f), a float
const BY_FLOAT: i32 = 6;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", P::Long.into()),
            NestedField::optional(2, "data", P::String.into()),
            NestedField::optional(3, "category", P::String.into()),
            NestedField::optional(4, "x", P::Double.into()),
            NestedField::optional(
                5,
                "point",
                StructType::new(vec![NestedField::required(6, "lat", P::Double.into())]).into(),
            ),
            NestedField::optional(7, "f", P::Float.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn specs() -> HashMap<i32, Arc<PartitionSpec>> {
    let one = |id, source, transform| {
        PartitionSpec::new(id, vec![PartitionField::new(source, 1000, "p", transform)])
    };
    [
        PartitionSpec::new(UNPARTITIONED, vec![]),
        one(BY_CATEGORY, 3, Transform::Identity),
        one(BY_DOUBLE, 4, Transform::Identity),
        one(BY_UNKNOWN, 2, Transform::Unknown("zorder".into())),
        one(BY_CATEGORY_AGAIN, 3, Transform::Identity),
        one(VOID, 3, Transform::Void),
        one(BY_FLOAT, 7, Transform::Identity),
    ]
    .into_iter()
    .map(|s| (s.spec_id, Arc::new(s)))
    .collect()
}

fn s(v: &str) -> Option<Literal> {
    Some(Literal::String(v.into()))
}

/// The partition tuple of a spec with one field (none for the unpartitioned spec).
fn part(spec: i32, value: Option<Literal>) -> Vec<Option<Literal>> {
    if spec == UNPARTITIONED {
        vec![]
    } else {
        vec![value]
    }
}

fn file(
    content: DataContentType,
    format: FileFormat,
    spec: i32,
    path: &str,
    partition: Vec<Option<Literal>>,
    seq: i64,
) -> ScanFile {
    ScanFile {
        tree_position: None,
        spec_id: spec,
        data_sequence_number: seq,
        file_sequence_number: Some(seq),
        file: DataFile::new(content, path, format, partition, 10, 100),
    }
}

fn data(spec: i32, path: &str, value: Option<Literal>, seq: i64) -> ScanFile {
    file(
        DataContentType::Data,
        FileFormat::Parquet,
        spec,
        path,
        part(spec, value),
        seq,
    )
}

fn pos(spec: i32, path: &str, value: Option<Literal>, seq: i64) -> ScanFile {
    file(
        DataContentType::PositionDeletes,
        FileFormat::Parquet,
        spec,
        path,
        part(spec, value),
        seq,
    )
}

fn pos_for(spec: i32, path: &str, value: Option<Literal>, seq: i64, target: &str) -> ScanFile {
    let mut f = pos(spec, path, value, seq);
    f.file.referenced_data_file = Some(target.into());
    f
}

fn dv(spec: i32, path: &str, value: Option<Literal>, seq: i64, target: &str) -> ScanFile {
    let mut f = pos_for(spec, path, value, seq, target);
    f.file.file_format = FileFormat::Puffin;
    f.file.content_offset = Some(4);
    f.file.content_size_in_bytes = Some(40);
    f
}

fn eq(spec: i32, path: &str, value: Option<Literal>, seq: i64, ids: &[i32]) -> ScanFile {
    let mut f = file(
        DataContentType::EqualityDeletes,
        FileFormat::Parquet,
        spec,
        path,
        part(spec, value),
        seq,
    );
    f.file.equality_ids = Some(ids.to_vec());
    f
}

fn try_index(deletes: Vec<ScanFile>) -> crate::Result<DeleteFileIndex> {
    DeleteFileIndex::new(
        deletes.into_iter().map(Arc::new).collect(),
        &specs(),
        &[schema()],
    )
}

fn index(deletes: Vec<ScanFile>) -> DeleteFileIndex {
    try_index(deletes).unwrap()
}

/// The paths of the deletes for `data`, in the order returned.
fn deletes_for(index: &DeleteFileIndex, data: &ScanFile) -> Vec<String> {
    index
        .for_data_file(data)
        .unwrap()
        .iter()
        .map(|f| f.file.file_path.clone())
        .collect()
}

fn long(v: i64) -> Vec<u8> {
    Literal::Long(v).to_bytes(&P::Long).unwrap()
}

fn text(v: &str) -> Vec<u8> {
    v.as_bytes().to_vec()
}

/// Sets lower and upper bounds of one column.
fn with_bounds(mut f: ScanFile, id: i32, lower: Vec<u8>, upper: Vec<u8>) -> ScanFile {
    f.file
        .lower_bounds
        .get_or_insert_with(Vec::new)
        .push((id, lower));
    f.file
        .upper_bounds
        .get_or_insert_with(Vec::new)
        .push((id, upper));
    f
}

/// Sets the null and value counts of one column.
fn with_counts(mut f: ScanFile, id: i32, nulls: i64, values: i64) -> ScanFile {
    f.file
        .null_value_counts
        .get_or_insert_with(Vec::new)
        .push((id, nulls));
    f.file
        .value_counts
        .get_or_insert_with(Vec::new)
        .push((id, values));
    f
}

#[test]
fn same_commit_position_deletes_apply_equality_deletes_do_not() {
    let idx = index(vec![
        pos(BY_CATEGORY, "pos6", s("a"), 6),
        eq(BY_CATEGORY, "eq5", s("a"), 5, &[1]),
        pos(BY_CATEGORY, "pos4", s("a"), 4),
        eq(BY_CATEGORY, "eq6", s("a"), 6, &[1]),
        pos(BY_CATEGORY, "pos5", s("a"), 5),
        eq(BY_CATEGORY, "eq4", s("a"), 4, &[1]),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 5)),
        ["eq6", "pos5", "pos6"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 3)),
        ["eq4", "eq5", "eq6", "pos4", "pos5", "pos6"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 6)),
        ["pos6"]
    );
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 7)).is_empty());
}

#[test]
fn equality_deletes_of_unpartitioned_specs_are_global() {
    let idx = index(vec![
        eq(UNPARTITIONED, "eq-global", None, 10, &[1]),
        eq(VOID, "eq-void", None, 11, &[1]),
        pos(UNPARTITIONED, "pos-unpartitioned", None, 10),
        eq(BY_CATEGORY, "eq-a", s("a"), 10, &[1]),
    ]);
    // any spec, any partition
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("b"), 1)),
        ["eq-global", "eq-void"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)),
        ["eq-global", "eq-void", "eq-a"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_DOUBLE, "d", Some(Literal::Double(1.0)), 1)),
        ["eq-global", "eq-void"]
    );
    // position deletes of an unpartitioned spec are not global
    assert_eq!(
        deletes_for(&idx, &data(UNPARTITIONED, "d", None, 1)),
        ["eq-global", "eq-void", "pos-unpartitioned"]
    );
    // the sequence number rule still holds for global deletes
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("b"), 10)),
        ["eq-void"]
    );
    assert!(idx.has_equality_deletes());
}

#[test]
fn deletes_of_other_partitions_do_not_apply() {
    let idx = index(vec![
        eq(BY_CATEGORY, "eq-a", s("a"), 10, &[1]),
        pos(BY_CATEGORY, "pos-a", s("a"), 10),
        eq(BY_CATEGORY, "eq-null", None, 10, &[1]),
        pos(BY_CATEGORY, "pos-null", None, 10),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)),
        ["eq-a", "pos-a"]
    );
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("b"), 1)).is_empty());
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("A"), 1)).is_empty());
    // a null partition value equals a null
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", None, 1)),
        ["eq-null", "pos-null"]
    );
}

#[test]
fn deletes_of_other_specs_do_not_apply() {
    // same fields and values, another spec id
    let idx = index(vec![
        eq(BY_CATEGORY_AGAIN, "eq", s("a"), 10, &[1]),
        pos(BY_CATEGORY_AGAIN, "pos", s("a"), 10),
    ]);
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)).is_empty());
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY_AGAIN, "d", s("a"), 1)),
        ["eq", "pos"]
    );
}

#[test]
fn deletion_vector_replaces_position_delete_files() {
    let idx = index(vec![
        eq(BY_CATEGORY, "eq", s("a"), 5, &[1]),
        pos(BY_CATEGORY, "pos-partition", s("a"), 5),
        pos_for(BY_CATEGORY, "pos-d1", s("a"), 5, "d1"),
        pos_for(BY_CATEGORY, "pos-d2", s("a"), 5, "d2"),
        dv(BY_CATEGORY, "dv-d1.puffin", s("a"), 4, "d1"),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("a"), 3)),
        ["eq", "dv-d1.puffin"]
    );
    // the same commit
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("a"), 4)),
        ["eq", "dv-d1.puffin"]
    );
    // no DV for d2: its position delete files apply
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d2", s("a"), 3)),
        ["eq", "pos-partition", "pos-d2"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d3", s("a"), 3)),
        ["eq", "pos-partition"]
    );
    // a DV older than its data file is invalid (Java's validation)
    let e = idx
        .for_data_file(&data(BY_CATEGORY, "d1", s("a"), 5))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e}");
    assert!(e.to_string().contains("dv-d1.puffin"), "{e}");
    assert!(e.to_string().contains("d1"), "{e}");
}

#[test]
fn path_lookups_ignore_partitions_as_in_java() {
    // DVs and targeted position deletes are found by path alone
    let idx = index(vec![
        dv(BY_CATEGORY, "dv.puffin", s("a"), 5, "d1"),
        pos_for(BY_CATEGORY_AGAIN, "pos-d2", s("z"), 5, "d2"),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("b"), 1)),
        ["dv.puffin"]
    );
    assert_eq!(
        deletes_for(&idx, &data(UNPARTITIONED, "d2", None, 1)),
        ["pos-d2"]
    );
}

#[test]
fn referenced_data_file_limits_position_deletes() {
    let idx = index(vec![pos_for(BY_CATEGORY, "pos", s("a"), 5, "d1")]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("a"), 5)),
        ["pos"]
    );
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d1", s("a"), 6)).is_empty());
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d2", s("a"), 1)).is_empty());
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d1-other", s("a"), 1)).is_empty());
}

#[test]
fn file_path_bounds_target_one_data_file() {
    let id = DELETE_FILE_PATH_ID;
    let idx = index(vec![
        // equal bounds: only d1
        with_bounds(
            pos(BY_CATEGORY, "pos-d1", s("a"), 5),
            id,
            text("d1"),
            text("d1"),
        ),
        // a range: the whole partition (Java does not prune by the range)
        with_bounds(
            pos(BY_CATEGORY, "pos-range", s("a"), 5),
            id,
            text("d5"),
            text("d6"),
        ),
        // equal bounds that are not UTF-8 name no file: the whole partition
        with_bounds(
            pos(BY_CATEGORY, "pos-bad", s("a"), 5),
            id,
            vec![0xff],
            vec![0xff],
        ),
        // bounds of other columns do not count
        with_bounds(
            pos(BY_CATEGORY, "pos-other", s("a"), 5),
            1,
            long(1),
            long(1),
        ),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("a"), 1)),
        ["pos-bad", "pos-other", "pos-range", "pos-d1"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d2", s("a"), 1)),
        ["pos-bad", "pos-other", "pos-range"]
    );
    // found by path in any partition
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d1", s("b"), 1)),
        ["pos-d1"]
    );
    // a lower bound alone names no file
    let mut only_lower = pos(BY_CATEGORY, "pos-lower", s("a"), 5);
    only_lower.file.lower_bounds = Some(vec![(id, text("d1"))]);
    let idx = index(vec![only_lower]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d2", s("a"), 1)),
        ["pos-lower"]
    );
}

#[test]
fn equality_deletes_pruned_by_value_ranges() {
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 1, long(10), long(20));
    let d = with_bounds(d, 2, text("apple"), text("banana"));
    // `data` is optional: without a null count of 0 it may hold nulls, and then only
    // deletes that hold no nulls can be pruned by range
    let d = with_counts(d, 2, 0, 10);
    let e = |name: &str, ids: &[i32]| eq(BY_CATEGORY, name, s("a"), 5, ids);
    let idx = index(vec![
        with_bounds(e("below", &[1]), 1, long(1), long(9)),
        with_bounds(e("above", &[1]), 1, long(21), long(30)),
        with_bounds(e("overlap", &[1]), 1, long(15), long(25)),
        with_bounds(e("touch-low", &[1]), 1, long(5), long(10)),
        with_bounds(e("touch-high", &[1]), 1, long(20), long(20)),
        e("no-bounds", &[1]),
        // bounds of a column that is not an equality column do not prune
        with_bounds(e("other-column", &[1]), 2, text("x"), text("y")),
        // strings
        with_bounds(e("str-after", &[2]), 2, text("cherry"), text("date")),
        with_bounds(e("str-overlap", &[2]), 2, text("b"), text("c")),
        // several columns: one disjoint column suffices
        with_bounds(
            with_bounds(e("multi-disjoint", &[2, 1]), 1, long(11), long(12)),
            2,
            text("x"),
            text("z"),
        ),
        with_bounds(
            with_bounds(e("multi-overlap", &[2, 1]), 1, long(11), long(12)),
            2,
            text("a"),
            text("z"),
        ),
        // nested columns keep no stats: never pruned
        with_bounds(e("nested", &[5]), 5, long(1), long(1)),
    ]);
    let mut got = deletes_for(&idx, &d);
    got.sort();
    assert_eq!(
        got,
        [
            "multi-overlap",
            "nested",
            "no-bounds",
            "other-column",
            "overlap",
            "str-overlap",
            "touch-high",
            "touch-low",
        ]
    );
    // a data file without bounds is never pruned by ranges
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)).len(),
        idx.referenced_delete_files().len()
    );
    // ranges prune global deletes too
    let idx = index(vec![with_bounds(
        eq(UNPARTITIONED, "g", None, 5, &[1]),
        1,
        long(50),
        long(60),
    )]);
    assert!(deletes_for(&idx, &d).is_empty());
}

/// DeleteFileIndex.Builder.build: equality columns are looked up in every schema of the
/// table (`Schema.indexFields(schemasById)`), the highest schema id winning.
#[test]
fn equality_columns_are_found_in_every_schema() {
    let old = |id: i32, required: bool| {
        let mut fields = schema().as_struct().fields.clone();
        fields.push(if required {
            NestedField::required(8, "old", P::Long.into())
        } else {
            NestedField::optional(8, "old", P::Long.into())
        });
        Schema::new(id, fields, vec![]).unwrap()
    };
    // `old` was dropped: the current schema (id 1) does not have it
    let current = Schema::new(1, schema().as_struct().fields.clone(), vec![]).unwrap();
    let delete = with_bounds(
        eq(BY_CATEGORY, "eq-old", s("a"), 5, &[8]),
        8,
        long(50),
        long(60),
    );
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 8, long(10), long(20));
    let d = with_counts(d, 8, 0, 10);
    let idx = DeleteFileIndex::new(
        vec![Arc::new(delete)],
        &specs(),
        &[current.clone(), old(0, false)],
    )
    .unwrap();
    assert!(deletes_for(&idx, &d).is_empty());
    let overlapping = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 8, long(55), long(70));
    assert_eq!(deletes_for(&idx, &overlapping), ["eq-old"]);

    // the field of the schema with the highest id decides: here `old` is required there,
    // so the counts saying "all null" are not believed
    let delete = with_counts(eq(BY_CATEGORY, "eq-old", s("a"), 5, &[8]), 8, 0, 4);
    let nulls = with_counts(data(BY_CATEGORY, "d", s("a"), 1), 8, 10, 10);
    let idx = |schemas: &[Schema]| {
        DeleteFileIndex::new(vec![Arc::new(delete.clone())], &specs(), schemas).unwrap()
    };
    assert!(deletes_for(&idx(&[old(0, false)]), &nulls).is_empty());
    assert_eq!(
        deletes_for(
            &idx(&[old(2, true), current.clone(), old(0, false)]),
            &nulls
        ),
        ["eq-old"]
    );
    assert!(deletes_for(&idx(&[old(2, false), old(0, true)]), &nulls).is_empty());
}

/// EqualityDeleteFile.equalityFields: an equality field id that no schema has fails the
/// lookup of any data file the delete file could apply to.
#[test]
fn unknown_equality_fields_are_errors() {
    let idx = index(vec![
        eq(BY_CATEGORY, "eq-unknown", s("a"), 5, &[1, 99]),
        pos(BY_CATEGORY, "pos", s("a"), 5),
    ]);
    let e = idx
        .for_data_file(&data(BY_CATEGORY, "d", s("a"), 1))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e}");
    assert!(e.to_string().contains("99"), "{e}");
    assert_eq!(e.location().unwrap().file, "eq-unknown");
    // data files it cannot apply to are planned
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 5)),
        ["pos"]
    );
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("b"), 1)).is_empty());
}

/// canContainEqDeletesForFile reads bounds only to compare ranges, and then fails on
/// bounds it cannot read (the delete file's bounds of every equality column at once).
#[test]
fn unreadable_bounds_fail_when_ranges_are_compared() {
    let bad = with_bounds(
        eq(BY_CATEGORY, "eq-bad", s("a"), 5, &[1]),
        1,
        vec![1, 2, 3],
        long(9),
    );
    let idx = index(vec![bad]);
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 1, long(10), long(20));
    let e = idx.for_data_file(&d).unwrap_err();
    assert_eq!(e.location().unwrap().file, "eq-bad", "{e}");
    // without data bounds no range is compared
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)),
        ["eq-bad"]
    );
    // the bound of another equality column is read too, even when this one has none
    let bad = with_bounds(
        eq(BY_CATEGORY, "eq-bad2", s("a"), 5, &[2, 1]),
        1,
        vec![1, 2, 3],
        long(9),
    );
    let idx = index(vec![bad]);
    let d2 = with_counts(d.clone(), 2, 0, 10);
    assert!(idx.for_data_file(&d2).is_err());
    // null counts that decide come first: a data file of nulls only and deletes of no nulls
    let idx = index(vec![with_counts(
        with_bounds(
            eq(BY_CATEGORY, "eq-bad3", s("a"), 5, &[2]),
            2,
            vec![0xff],
            text("z"),
        ),
        2,
        0,
        4,
    )]);
    let nulls = with_counts(with_bounds(d.clone(), 2, text("a"), text("b")), 2, 10, 10);
    assert!(deletes_for(&idx, &nulls).is_empty());
    assert!(idx
        .for_data_file(&with_counts(
            with_bounds(d.clone(), 2, text("a"), text("b")),
            2,
            0,
            10
        ))
        .is_err());
    // a data bound that cannot be read
    let idx = index(vec![with_bounds(
        eq(BY_CATEGORY, "eq", s("a"), 5, &[1]),
        1,
        long(1),
        long(30),
    )]);
    let bad_data = with_bounds(data(BY_CATEGORY, "d-bad", s("a"), 1), 1, vec![7], long(20));
    let e = idx.for_data_file(&bad_data).unwrap_err();
    assert_eq!(e.location().unwrap().file, "d-bad", "{e}");
}

/// rangesOverlap compares with `Comparators.forType`: UUIDs as signed halves
/// (`UUID.compareTo`) and every NaN above every number (`Double.compareTo`).
#[test]
fn ranges_compare_in_java_order() {
    let mut fields = schema().as_struct().fields.clone();
    fields.push(NestedField::optional(8, "u", P::Uuid.into()));
    let with_uuid = Schema::new(0, fields, vec![]).unwrap();
    let uuid = |hi: u8| {
        let mut b = vec![0u8; 16];
        b[0] = hi;
        b
    };
    let delete = with_counts(
        with_bounds(
            eq(BY_CATEGORY, "eq-u", s("a"), 5, &[8]),
            8,
            uuid(0x20),
            uuid(0x30),
        ),
        8,
        0,
        4,
    );
    let idx = DeleteFileIndex::new(vec![Arc::new(delete)], &specs(), &[with_uuid]).unwrap();
    // unsigned, 0x10.. to 0x90.. contains 0x20..; signed, 0x90.. is below 0x20..
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 8, uuid(0x10), uuid(0x90));
    assert!(deletes_for(&idx, &d).is_empty());
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 8, uuid(0x10), uuid(0x25));
    assert_eq!(deletes_for(&idx, &d), ["eq-u"]);

    let dbl = |v: f64| Literal::Double(v).to_bytes(&P::Double).unwrap();
    let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
    let delete = with_counts(
        with_bounds(
            eq(BY_CATEGORY, "eq-x", s("a"), 5, &[4]),
            4,
            dbl(5.0),
            dbl(6.0),
        ),
        4,
        0,
        4,
    );
    let idx = index(vec![delete]);
    let d = with_bounds(
        data(BY_CATEGORY, "d", s("a"), 1),
        4,
        dbl(1.0),
        dbl(negative_nan),
    );
    assert_eq!(deletes_for(&idx, &d), ["eq-x"]);
    let d = with_bounds(data(BY_CATEGORY, "d", s("a"), 1), 4, dbl(1.0), dbl(2.0));
    assert!(deletes_for(&idx, &d).is_empty());
}

#[test]
fn equality_deletes_pruned_by_null_counts() {
    let category = 3; // optional
    let id = 1; // required
    let d = |nulls: i64, values: i64| {
        with_counts(data(BY_CATEGORY, "d", s("a"), 1), category, nulls, values)
    };
    let e = |name: &str, nulls: i64, values: i64| {
        with_counts(
            eq(BY_CATEGORY, name, s("a"), 5, &[category]),
            category,
            nulls,
            values,
        )
    };
    let idx = index(vec![
        e("no-nulls", 0, 4),
        e("some-nulls", 1, 4),
        e("only-nulls", 3, 3),
        eq(BY_CATEGORY, "unknown-counts", s("a"), 5, &[category]),
    ]);
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    // data only null: deletes without nulls cannot match
    assert_eq!(
        sorted(deletes_for(&idx, &d(10, 10))),
        ["only-nulls", "some-nulls", "unknown-counts"]
    );
    // data without nulls: deletes of only nulls cannot match
    assert_eq!(
        sorted(deletes_for(&idx, &d(0, 10))),
        ["no-nulls", "some-nulls", "unknown-counts"]
    );
    // data with some nulls, or unknown counts: everything may match
    assert_eq!(deletes_for(&idx, &d(2, 10)).len(), 4);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 1)).len(),
        4
    );

    // when both sides may hold nulls, disjoint ranges do not prune
    let both_null = with_bounds(e("both-null", 1, 4), category, text("x"), text("y"));
    let idx = index(vec![both_null]);
    let dn = with_bounds(d(2, 10), category, text("a"), text("b"));
    assert_eq!(deletes_for(&idx, &dn), ["both-null"]);
    // unknown data null counts count as "may hold nulls"
    let dn = with_bounds(
        data(BY_CATEGORY, "d", s("a"), 1),
        category,
        text("a"),
        text("b"),
    );
    assert_eq!(deletes_for(&idx, &dn), ["both-null"]);
    // but a delete without nulls against such a file is pruned by range
    let idx = index(vec![with_bounds(
        e("nonnull", 0, 4),
        category,
        text("x"),
        text("y"),
    )]);
    assert!(deletes_for(&idx, &dn).is_empty());

    // a required column never holds nulls, whatever the counts say
    let idx = index(vec![with_counts(
        eq(BY_CATEGORY, "required", s("a"), 5, &[id]),
        id,
        3,
        3,
    )]);
    let dr = with_counts(data(BY_CATEGORY, "d", s("a"), 1), id, 0, 10);
    assert_eq!(deletes_for(&idx, &dr), ["required"]);
    let idx = index(vec![with_counts(
        eq(BY_CATEGORY, "required", s("a"), 5, &[id]),
        id,
        0,
        3,
    )]);
    let dr = with_counts(data(BY_CATEGORY, "d", s("a"), 1), id, 10, 10);
    assert_eq!(deletes_for(&idx, &dr), ["required"]);
}

#[test]
fn nan_partition_values_are_equal() {
    let nan_a = f64::from_bits(0x7ff0_0000_0000_0001);
    let nan_b = f64::from_bits(0xfff8_0000_0000_0002);
    let dbl = |v: f64| Some(Literal::Double(v));
    let idx = index(vec![
        eq(BY_DOUBLE, "eq-nan", dbl(nan_a), 5, &[1]),
        pos(BY_DOUBLE, "pos-zero", dbl(0.0), 5),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_DOUBLE, "d", dbl(nan_b), 1)),
        ["eq-nan"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_DOUBLE, "d", dbl(f64::NAN), 1)),
        ["eq-nan"]
    );
    assert_eq!(
        deletes_for(&idx, &data(BY_DOUBLE, "d", dbl(0.0), 1)),
        ["pos-zero"]
    );
    // -0.0 and 0.0 have different bits (Java's Double.compare tells them apart)
    assert!(deletes_for(&idx, &data(BY_DOUBLE, "d", dbl(-0.0), 1)).is_empty());

    let flt = |bits: u32| Some(Literal::Float(f32::from_bits(bits)));
    let idx = index(vec![pos(BY_FLOAT, "pos-nan", flt(0x7fc0_0000), 5)]);
    assert_eq!(
        deletes_for(&idx, &data(BY_FLOAT, "d", flt(0xff80_0001), 1)),
        ["pos-nan"]
    );
    assert!(deletes_for(&idx, &data(BY_FLOAT, "d", flt(0x3f80_0000), 1)).is_empty());
}

#[test]
fn values_of_unknown_transforms_are_compared() {
    let idx = index(vec![
        eq(BY_UNKNOWN, "eq-p", s("p"), 5, &[1]),
        pos(BY_UNKNOWN, "pos-p", s("p"), 5),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_UNKNOWN, "d", s("p"), 1)),
        ["eq-p", "pos-p"]
    );
    assert!(deletes_for(&idx, &data(BY_UNKNOWN, "d", s("q"), 1)).is_empty());
    assert!(deletes_for(&idx, &data(BY_UNKNOWN, "d", None, 1)).is_empty());
}

#[test]
fn promoted_partition_values_match() {
    // identity(int) promoted to long keeps its spec id: old tuples hold ints
    let idx = index(vec![pos(BY_CATEGORY, "pos", Some(Literal::Int(7)), 5)]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", Some(Literal::Long(7)), 1)),
        ["pos"]
    );
}

#[test]
fn deletes_without_a_positive_sequence_number_are_ignored() {
    // Java indexes deletes after sequence number 0; v1 metadata has only 0
    let idx = index(vec![
        eq(UNPARTITIONED, "eq0", None, 0, &[1]),
        pos(BY_CATEGORY, "pos0", s("a"), 0),
        dv(BY_CATEGORY, "dv0", s("a"), 0, "d"),
        pos(BY_CATEGORY, "pos-1", s("a"), -1),
    ]);
    assert!(idx.is_empty());
    assert!(deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 0)).is_empty());
    // v1 data files (sequence number 0) get the deletes of later commits
    let idx = index(vec![
        eq(UNPARTITIONED, "eq1", None, 1, &[1]),
        pos(BY_CATEGORY, "pos1", s("a"), 1),
    ]);
    assert_eq!(
        deletes_for(&idx, &data(BY_CATEGORY, "d", s("a"), 0)),
        ["eq1", "pos1"]
    );
}

#[test]
fn emptiness_and_kinds() {
    let idx = index(vec![]);
    assert!(idx.is_empty());
    assert!(!idx.has_equality_deletes() && !idx.has_position_deletes());
    // an empty index asks nothing of the data file
    assert!(deletes_for(&idx, &data(77, "d", s("a"), 1)).is_empty());

    let idx = index(vec![dv(BY_CATEGORY, "dv", s("a"), 1, "d")]);
    assert!(!idx.is_empty() && idx.has_position_deletes() && !idx.has_equality_deletes());
    let idx = index(vec![pos_for(BY_CATEGORY, "p", s("a"), 1, "d")]);
    assert!(!idx.is_empty() && idx.has_position_deletes() && !idx.has_equality_deletes());
    let idx = index(vec![eq(BY_CATEGORY, "e", s("a"), 1, &[1])]);
    assert!(!idx.is_empty() && !idx.has_position_deletes() && idx.has_equality_deletes());
    let idx = index(vec![eq(UNPARTITIONED, "e", None, 1, &[1])]);
    assert!(!idx.is_empty() && idx.has_equality_deletes());
    assert_eq!(idx.referenced_delete_files().len(), 1);
}

#[test]
fn order_is_by_group_then_sequence_number_then_path() {
    let mut deletes = vec![
        eq(UNPARTITIONED, "g-b", None, 3, &[1]),
        eq(UNPARTITIONED, "g-a", None, 3, &[1]),
        eq(UNPARTITIONED, "g-c", None, 2, &[1]),
        eq(BY_CATEGORY, "e-b", s("a"), 2, &[1]),
        eq(BY_CATEGORY, "e-a", s("a"), 4, &[1]),
        pos(BY_CATEGORY, "p-z", s("a"), 2),
        pos(BY_CATEGORY, "p-y", s("a"), 2),
        pos(BY_CATEGORY, "p-a", s("a"), 9),
        pos_for(BY_CATEGORY, "t-b", s("a"), 2, "d"),
        pos_for(BY_CATEGORY, "t-a", s("a"), 3, "d"),
    ];
    let expected = [
        "g-c", "g-a", "g-b", "e-b", "e-a", "p-y", "p-z", "p-a", "t-b", "t-a",
    ];
    let d = data(BY_CATEGORY, "d", s("a"), 1);
    for rotation in 0..deletes.len() {
        deletes.rotate_left(1);
        let mut shuffled = deletes.clone();
        if rotation % 2 == 1 {
            shuffled.reverse();
        }
        assert_eq!(deletes_for(&index(shuffled), &d), expected);
    }
}

#[test]
fn invalid_delete_files_are_refused() {
    let check = |f: ScanFile, what: &str| {
        let path = f.file.file_path.clone();
        let e = try_index(vec![f]).unwrap_err();
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{e}");
        assert_eq!(e.location().unwrap().file, path, "{e}");
        assert!(e.to_string().contains(what), "{e}");
    };
    check(pos(42, "pos-bad-spec", None, 1), "spec id 42");
    let mut no_target = dv(BY_CATEGORY, "dv-no-target", s("a"), 1, "d");
    no_target.file.referenced_data_file = None;
    check(no_target, "referenced_data_file");
    check(data(BY_CATEGORY, "a-data-file", s("a"), 1), "data file");
    let mut no_ids = eq(BY_CATEGORY, "eq-no-ids", s("a"), 1, &[1]);
    no_ids.file.equality_ids = None;
    check(no_ids, "equality_ids");
    let mut puffin_eq = eq(BY_CATEGORY, "eq-puffin", s("a"), 1, &[1]);
    puffin_eq.file.file_format = FileFormat::Puffin;
    check(puffin_eq, "Puffin");
    check(
        pos(BY_CATEGORY, "pos-arity", None, 1).with_partition(vec![s("a"), s("b")]),
        "2 values",
    );
    check(
        eq(BY_CATEGORY, "eq-nested", None, 1, &[1])
            .with_partition(vec![Some(Literal::List(vec![]))]),
        "primitive",
    );

    // two DVs for one data file
    let e = try_index(vec![
        dv(BY_CATEGORY, "dv1", s("a"), 1, "d"),
        dv(BY_CATEGORY, "dv2", s("a"), 2, "d"),
    ])
    .unwrap_err();
    assert!(
        e.to_string().contains("more than one deletion vector"),
        "{e}"
    );
    assert!(
        e.to_string().contains("dv1") && e.to_string().contains("dv2"),
        "{e}"
    );
}

#[test]
fn invalid_data_files_are_refused() {
    let idx = index(vec![pos(BY_CATEGORY, "pos", s("a"), 5)]);
    let e = idx
        .for_data_file(&data(42, "d-bad", s("a"), 1))
        .unwrap_err();
    assert_eq!(e.location().unwrap().file, "d-bad");
    assert!(e.to_string().contains("spec id 42"), "{e}");
    let e = idx
        .for_data_file(&data(BY_CATEGORY, "d-arity", s("a"), 1).with_partition(vec![]))
        .unwrap_err();
    assert!(e.to_string().contains("0 values"), "{e}");
}

trait WithPartition {
    fn with_partition(self, partition: Vec<Option<Literal>>) -> Self;
}

impl WithPartition for ScanFile {
    fn with_partition(mut self, partition: Vec<Option<Literal>>) -> Self {
        self.file.partition = partition;
        self
    }
}

/// A direct reading of the scope rules and Java's choices, one delete file at a time.
fn reference(deletes: &[ScanFile], d: &ScanFile) -> Vec<String> {
    let specs = specs();
    let live = || deletes.iter().filter(|f| f.data_sequence_number > 0);
    let same_partition = |f: &ScanFile| {
        f.spec_id == d.spec_id
            && f.file.partition.len() == d.file.partition.len()
            && f.file
                .partition
                .iter()
                .zip(&d.file.partition)
                .all(|(a, b)| match (a, b) {
                    (Some(Literal::Double(x)), Some(Literal::Double(y))) => {
                        (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
                    }
                    _ => a == b,
                })
    };
    let bounds = |f: &ScanFile| -> Option<(i64, i64)> {
        let get = |b: &Option<Vec<(i32, Vec<u8>)>>| {
            let (_, v) = b.as_ref()?.iter().find(|(id, _)| *id == 1)?;
            match Literal::from_bytes(v, &P::Long).ok()? {
                Literal::Long(x) => Some(x),
                _ => None,
            }
        };
        Some((get(&f.file.lower_bounds)?, get(&f.file.upper_bounds)?))
    };
    let overlaps = |f: &ScanFile| match (bounds(f), bounds(d)) {
        (Some((lo, hi)), Some((dlo, dhi))) => lo <= dhi && dlo <= hi,
        _ => true,
    };
    let mut out: Vec<String> = live()
        .filter(|f| f.file.content == DataContentType::EqualityDeletes)
        .filter(|f| f.data_sequence_number > d.data_sequence_number)
        .filter(|f| specs[&f.spec_id].is_unpartitioned() || same_partition(f))
        .filter(|f| overlaps(f))
        .map(|f| f.file.file_path.clone())
        .collect();
    let dvs: Vec<&ScanFile> = live()
        .filter(|f| f.file.file_format == FileFormat::Puffin)
        .filter(|f| f.file.referenced_data_file.as_deref() == Some(d.file.file_path.as_str()))
        .collect();
    if let Some(dv) = dvs.first() {
        assert!(dv.data_sequence_number >= d.data_sequence_number);
        out.push(dv.file.file_path.clone());
    } else {
        out.extend(
            live()
                .filter(|f| f.file.content == DataContentType::PositionDeletes)
                .filter(|f| f.file.file_format != FileFormat::Puffin)
                .filter(|f| f.data_sequence_number >= d.data_sequence_number)
                .filter(|f| match &f.file.referenced_data_file {
                    Some(target) => *target == d.file.file_path,
                    None => same_partition(f),
                })
                .map(|f| f.file.file_path.clone()),
        );
    }
    out.sort();
    out
}

#[test]
fn randomised_against_a_direct_reading_of_the_rules() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let categories = [s("a"), s("b"), None];
    let doubles = [
        Some(Literal::Double(f64::NAN)),
        Some(Literal::Double(f64::from_bits(0x7ff0_0000_0000_0009))),
        Some(Literal::Double(1.5)),
    ];
    let data_paths = ["d0", "d1", "d2", "d3", "d4", "d5"];
    for round in 0..60 {
        let mut deletes = Vec::new();
        let mut dv_targets = std::collections::HashSet::new();
        let count = 1 + next(40);
        for i in 0..count {
            let spec = [
                UNPARTITIONED,
                BY_CATEGORY,
                BY_CATEGORY_AGAIN,
                BY_DOUBLE,
                VOID,
            ][next(5) as usize];
            let value = match spec {
                BY_DOUBLE => doubles[next(3) as usize].clone(),
                VOID => None,
                _ => categories[next(3) as usize].clone(),
            };
            let seq = next(8) as i64 - 1;
            let path = format!("del-{round}-{i}");
            let target = data_paths[next(6) as usize];
            let f = match next(4) {
                0 => {
                    let f = eq(spec, &path, value, seq, &[1]);
                    if next(2) == 0 {
                        let lo = next(20) as i64;
                        with_bounds(f, 1, long(lo), long(lo + next(5) as i64))
                    } else {
                        f
                    }
                }
                1 => pos(spec, &path, value, seq),
                2 => pos_for(spec, &path, value, seq, target),
                _ if dv_targets.insert(target) => dv(spec, &path, value, seq.max(7), target),
                _ => pos(spec, &path, value, seq),
            };
            deletes.push(f);
        }
        let idx = index(deletes.clone());
        for probe in 0..40 {
            let spec = [UNPARTITIONED, BY_CATEGORY, BY_CATEGORY_AGAIN, BY_DOUBLE][next(4) as usize];
            let value = match spec {
                BY_DOUBLE => doubles[next(3) as usize].clone(),
                _ => categories[next(3) as usize].clone(),
            };
            let mut d = data(spec, data_paths[next(6) as usize], value, next(8) as i64);
            if next(2) == 0 {
                let lo = next(20) as i64;
                d = with_bounds(d, 1, long(lo), long(lo + next(5) as i64));
            }
            let mut got = deletes_for(&idx, &d);
            got.sort();
            assert_eq!(got, reference(&deletes, &d), "round {round} probe {probe}");
        }
    }
}
