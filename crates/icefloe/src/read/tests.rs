#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    new_empty_array, Array, ArrayRef, BooleanArray, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::*;
use crate::arrow::PARQUET_FIELD_ID;
use crate::io::{FileIO, MemoryFileIO};
use crate::puffin::dv::write_deletion_vectors;
use crate::puffin::DeletionVector;
use crate::scan::plan_batches::{
    delete_fields, FILTER_KEY, NAME_MAPPING_KEY, PROJECTED_SCHEMA_KEY, RESIDUALS_KEY, SCHEMA_KEY,
    SPECS_KEY,
};

const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"id","required":true,"type":"long"},
    {"id":2,"name":"name","required":false,"type":"string"},
    {"id":3,"name":"score","required":false,"type":"double"}]}"#;

fn field(name: &str, t: DataType, id: Option<i32>) -> Field {
    let f = Field::new(name, t, true);
    match id {
        Some(id) => f.with_metadata(HashMap::from([(
            PARQUET_FIELD_ID.to_string(),
            id.to_string(),
        )])),
        None => f,
    }
}

/// A Parquet file of `columns` (name, field id, array), row groups of `rows_per_group`.
fn parquet(columns: Vec<(&str, Option<i32>, ArrayRef)>, rows_per_group: usize) -> Vec<u8> {
    let schema = Arc::new(ArrowSchema::new(
        columns
            .iter()
            .map(|(n, id, a)| field(n, a.data_type().clone(), *id))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        columns.into_iter().map(|c| c.2).collect(),
    )
    .unwrap();
    let mut out = Vec::new();
    let props = WriterProperties::builder()
        .set_max_row_group_size(rows_per_group)
        .build();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

fn ids_file(ids: std::ops::Range<i64>) -> Vec<u8> {
    let n = ids.end - ids.start;
    parquet(
        vec![
            (
                "id",
                Some(1),
                Arc::new(Int64Array::from_iter_values(ids.clone())),
            ),
            (
                "name",
                Some(2),
                Arc::new(StringArray::from_iter_values(
                    ids.clone().map(|i| format!("n{i}")),
                )),
            ),
            (
                "score",
                Some(3),
                Arc::new(arrow_array::Float64Array::from_iter_values(
                    (0..n).map(|i| i as f64),
                )),
            ),
        ],
        1000,
    )
}

struct Task<'a> {
    path: &'a str,
    size: i64,
    start: i64,
    length: i64,
    deletes: Vec<Dv>,
}

struct Dv {
    path: String,
    offset: i64,
    length: i64,
    count: i64,
    referenced: String,
}

fn task(path: &str, size: usize) -> Task<'_> {
    Task {
        path,
        size: size as i64,
        start: 0,
        length: size as i64,
        deletes: vec![],
    }
}

/// A plan batch as `plan_batches` makes them, unpartitioned, for `tasks`.
fn plan(tasks: &[Task<'_>], projected: &str, extra: &[(&str, &str)]) -> RecordBatch {
    let n = tasks.len();
    let delete_type = DataType::Struct(delete_fields());
    let mut md: HashMap<String, String> = [
        (SCHEMA_KEY, SCHEMA),
        (PROJECTED_SCHEMA_KEY, projected),
        (SPECS_KEY, r#"[{"spec-id":0,"fields":[]}]"#),
        (RESIDUALS_KEY, "[true]"),
        (FILTER_KEY, "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        md.insert(k.to_string(), v.to_string());
    }
    let item = Arc::new(Field::new("item", delete_type.clone(), true));
    let schema = ArrowSchema::new_with_metadata(
        vec![
            Field::new("file_path", DataType::Utf8, false),
            Field::new("file_format", DataType::Utf8, false),
            Field::new("start", DataType::Int64, false),
            Field::new("length", DataType::Int64, false),
            Field::new("file_size_in_bytes", DataType::Int64, false),
            Field::new("spec_id", DataType::Int32, false),
            Field::new("partition", DataType::Struct(Fields::empty()), false),
            Field::new("data_sequence_number", DataType::Int64, false),
            Field::new("first_row_id", DataType::Int64, true),
            Field::new("residual", DataType::Int32, false),
            Field::new("deletes", DataType::List(Arc::clone(&item)), false),
        ],
        md,
    );
    let dvs: Vec<&Dv> = tasks.iter().flat_map(|t| t.deletes.iter()).collect();
    let m = dvs.len();
    let deletes = StructArray::try_new(
        delete_fields(),
        vec![
            Arc::new(Int32Array::from(vec![1; m])),
            Arc::new(StringArray::from_iter_values(
                dvs.iter().map(|d| d.path.as_str()),
            )),
            Arc::new(StringArray::from(vec!["puffin"; m])),
            Arc::new(Int64Array::from_iter_values(dvs.iter().map(|d| d.count))),
            Arc::new(Int64Array::from(vec![0; m])),
            Arc::new(Int64Array::from(vec![1; m])),
            Arc::new(StringArray::from_iter_values(
                dvs.iter().map(|d| d.referenced.as_str()),
            )),
            Arc::new(Int64Array::from_iter_values(dvs.iter().map(|d| d.offset))),
            Arc::new(Int64Array::from_iter_values(dvs.iter().map(|d| d.length))),
            new_null_list(m),
        ],
        None,
    )
    .unwrap();
    let deletes = ListArray::try_new(
        item,
        OffsetBuffer::from_lengths(tasks.iter().map(|t| t.deletes.len())),
        Arc::new(deletes),
        None,
    )
    .unwrap();
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from_iter_values(tasks.iter().map(|t| t.path))),
            Arc::new(StringArray::from(vec!["PARQUET"; n])),
            Arc::new(Int64Array::from_iter_values(tasks.iter().map(|t| t.start))),
            Arc::new(Int64Array::from_iter_values(tasks.iter().map(|t| t.length))),
            Arc::new(Int64Array::from_iter_values(tasks.iter().map(|t| t.size))),
            Arc::new(Int32Array::from(vec![0; n])),
            Arc::new(StructArray::new_empty_fields(n, None)),
            Arc::new(Int64Array::from(vec![1; n])),
            Arc::new(Int64Array::from(vec![None; n])),
            Arc::new(Int32Array::from(vec![0; n])),
            Arc::new(deletes),
        ],
    )
    .unwrap()
}

fn new_null_list(n: usize) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    Arc::new(ListArray::new_null(item, n))
}

fn read_all(
    batches: Vec<RecordBatch>,
    io: &Arc<MemoryFileIO>,
    options: ReadOptions,
) -> crate::error::Result<Vec<RecordBatch>> {
    let io: Arc<dyn FileIO> = Arc::clone(io) as Arc<dyn FileIO>;
    let mut reader = read_plan(batches, io, options)?;
    let mut out = Vec::new();
    while let Some(b) = reader.next_batch()? {
        out.push(b);
    }
    Ok(out)
}

fn longs(batches: &[RecordBatch], name: &str) -> Vec<Option<i64>> {
    batches
        .iter()
        .flat_map(|b| {
            b.column_by_name(name)
                .unwrap()
                .as_primitive::<Int64Type>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect()
}

fn memory_with(files: &[(&str, Vec<u8>)]) -> Arc<MemoryFileIO> {
    let io = Arc::new(MemoryFileIO::default());
    for (p, bytes) in files {
        io.write_new(p, bytes).unwrap();
    }
    io
}

#[test]
fn reads_tasks_in_order_with_the_projected_schema() {
    let (a, b) = (ids_file(0..2500), ids_file(2500..3000));
    let io = memory_with(&[
        ("mem://t/a.parquet", a.clone()),
        ("mem://t/b.parquet", b.clone()),
    ]);
    let p = plan(
        &[
            task("mem://t/a.parquet", a.len()),
            task("mem://t/b.parquet", b.len()),
        ],
        SCHEMA,
        &[],
    );
    for concurrency in [1, 4] {
        let options = ReadOptions {
            batch_size: 700,
            concurrency,
            ..ReadOptions::default()
        };
        let out = read_all(vec![p.clone()], &io, options).unwrap();
        assert!(out.iter().all(|b| b.num_rows() <= 700));
        let ids: Vec<i64> = longs(&out, "id").into_iter().flatten().collect();
        assert_eq!(
            ids,
            (0..3000).collect::<Vec<_>>(),
            "concurrency {concurrency}"
        );
        let schema = out[0].schema();
        assert_eq!(schema.fields().len(), 3);
        assert_eq!(schema.field(0).metadata()[PARQUET_FIELD_ID], "1");
        assert!(!schema.field(0).is_nullable());
    }
}

#[test]
fn columns_are_matched_by_id_promoted_and_missing_ones_are_null() {
    // a file written before `name` was renamed and `score` added, with `id` as an int
    // and the columns in another order
    let f = parquet(
        vec![
            (
                "old_name",
                Some(2),
                Arc::new(StringArray::from(vec!["x", "y"])),
            ),
            ("id", Some(1), Arc::new(Int32Array::from(vec![7, 8]))),
        ],
        100,
    );
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let out = read_all(
        vec![plan(&[task("mem://t/f.parquet", f.len())], SCHEMA, &[])],
        &io,
        ReadOptions::default(),
    )
    .unwrap();
    let b = &out[0];
    assert_eq!(longs(&out, "id"), vec![Some(7), Some(8)]);
    assert_eq!(b.column(1).as_string::<i32>().value(1), "y");
    assert_eq!(b.column(2).null_count(), 2);
    assert_eq!(b.column(2).data_type(), &DataType::Float64);
}

#[test]
fn files_without_ids_use_the_name_mapping_or_positions() {
    let f = parquet(
        vec![
            ("id", None, Arc::new(Int64Array::from(vec![1, 2]))),
            ("label", None, Arc::new(StringArray::from(vec!["a", "b"]))),
        ],
        100,
    );
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let tasks = [task("mem://t/f.parquet", f.len())];
    // by position: id -> 1, label -> 2
    let out = read_all(vec![plan(&tasks, SCHEMA, &[])], &io, ReadOptions::default()).unwrap();
    assert_eq!(out[0].column(1).as_string::<i32>().value(0), "a");
    // a mapping that maps only `id`: `label` is not `name`
    let mapping = r#"[{"field-id":1,"names":["id"]},{"field-id":2,"names":["name"]}]"#;
    let out = read_all(
        vec![plan(&tasks, SCHEMA, &[(NAME_MAPPING_KEY, mapping)])],
        &io,
        ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(longs(&out, "id"), vec![Some(1), Some(2)]);
    assert_eq!(out[0].column(1).null_count(), 2);
}

#[test]
fn a_required_column_missing_from_a_file_is_an_error_naming_file_and_field() {
    let f = parquet(
        vec![("name", Some(2), Arc::new(StringArray::from(vec!["x"])))],
        100,
    );
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let err = read_all(
        vec![plan(&[task("mem://t/f.parquet", f.len())], SCHEMA, &[])],
        &io,
        ReadOptions::default(),
    )
    .unwrap_err();
    let at = err.location().unwrap();
    assert_eq!(
        (at.file.as_str(), at.field.as_str()),
        ("mem://t/f.parquet", "id"),
        "{err}"
    );
}

#[test]
fn splits_read_the_row_groups_whose_midpoint_they_hold_with_global_positions() {
    let f = ids_file(0..5000); // five row groups
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let size = f.len() as i64;
    let whole = Task {
        path: "mem://t/f.parquet",
        size,
        start: 0,
        length: size,
        deletes: vec![],
    };
    let _ = whole;
    let mut all = Vec::new();
    let cuts = [0, 4, size / 3, size / 2, size];
    for w in cuts.windows(2) {
        let t = Task {
            path: "mem://t/f.parquet",
            size,
            start: w[0],
            length: w[1] - w[0],
            deletes: vec![],
        };
        let options = ReadOptions {
            metadata_columns: vec!["_pos".into()],
            ..ReadOptions::default()
        };
        let out = read_all(vec![plan(&[t], SCHEMA, &[])], &io, options).unwrap();
        let ids = longs(&out, "id");
        assert_eq!(ids, longs(&out, "_pos"), "positions are file-global");
        all.extend(ids);
    }
    assert_eq!(all, (0..5000).map(Some).collect::<Vec<_>>());
}

#[test]
fn deletion_vectors_remove_rows_or_mark_them_deleted() {
    let f = ids_file(0..3000);
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let dv = DeletionVector::from_positions([0, 5, 1500, 2999]).unwrap();
    let refs = write_deletion_vectors(
        io.as_ref(),
        "mem://t/d.puffin",
        [("mem://t/f.parquet", &dv)],
    )
    .unwrap();
    let mut t = task("mem://t/f.parquet", f.len());
    t.deletes.push(Dv {
        path: "mem://t/d.puffin".into(),
        offset: refs[0].offset as i64,
        length: refs[0].length as i64,
        count: 4,
        referenced: "mem://t/f.parquet".into(),
    });
    let p = plan(&[t], SCHEMA, &[]);
    let options = ReadOptions {
        batch_size: 1000,
        metadata_columns: vec!["_pos".into(), "_file".into()],
        ..ReadOptions::default()
    };
    let out = read_all(vec![p.clone()], &io, options).unwrap();
    let ids: Vec<i64> = longs(&out, "id").into_iter().flatten().collect();
    assert_eq!(ids.len(), 2996);
    assert!(!ids.contains(&5) && !ids.contains(&2999) && ids.contains(&6));
    assert_eq!(
        longs(&out, "_pos")
            .into_iter()
            .flatten()
            .collect::<Vec<_>>(),
        ids
    );
    assert_eq!(
        out[0]
            .column_by_name("_file")
            .unwrap()
            .as_string::<i32>()
            .value(0),
        "mem://t/f.parquet"
    );

    let options = ReadOptions {
        metadata_columns: vec!["_deleted".into()],
        ..ReadOptions::default()
    };
    let out = read_all(vec![p], &io, options).unwrap();
    let deleted: Vec<bool> = out
        .iter()
        .flat_map(|b| {
            b.column_by_name("_deleted")
                .unwrap()
                .as_any()
                .downcast_ref::<BooleanArray>()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(deleted.len(), 3000);
    assert_eq!(deleted.iter().filter(|d| **d).count(), 4);
    assert!(deleted[1500]);
}

#[test]
fn a_deletion_vector_for_another_file_is_refused() {
    let f = ids_file(0..10);
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let mut t = task("mem://t/f.parquet", f.len());
    t.deletes.push(Dv {
        path: "mem://t/d.puffin".into(),
        offset: 4,
        length: 10,
        count: 1,
        referenced: "mem://t/other.parquet".into(),
    });
    let err = read_all(vec![plan(&[t], SCHEMA, &[])], &io, ReadOptions::default()).unwrap_err();
    assert_eq!(err.location().unwrap().file, "mem://t/d.puffin", "{err}");
}

#[test]
fn corrupt_truncated_and_missing_files_are_typed_errors_naming_the_file() {
    let good = ids_file(0..2000);
    let mut flipped = good.clone();
    // damage the footer's thrift bytes (keep the length and magic)
    let n = flipped.len();
    for b in &mut flipped[n - 40..n - 8] {
        *b ^= 0x5a;
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("mem://t/garbage.parquet", b"not parquet at all".repeat(10)),
        ("mem://t/tiny.parquet", b"PAR1".to_vec()),
        ("mem://t/truncated.parquet", good[..good.len() / 2].to_vec()),
        ("mem://t/no-head.parquet", good[good.len() / 2..].to_vec()),
        ("mem://t/flipped.parquet", flipped),
        ("mem://t/empty.parquet", Vec::new()),
    ];
    for (path, bytes) in &cases {
        let io = memory_with(&[(path, bytes.clone())]);
        let p = plan(&[task(path, bytes.len())], SCHEMA, &[]);
        let err = read_all(vec![p], &io, ReadOptions::default()).unwrap_err();
        assert!(
            matches!(err, crate::error::Error::InvalidMetadata { .. }),
            "{path}: {err:?}"
        );
        assert_eq!(err.location().unwrap().file, *path, "{err}");
    }
    let io = memory_with(&[]);
    let err = read_all(
        vec![plan(&[task("mem://t/gone.parquet", 100)], SCHEMA, &[])],
        &io,
        ReadOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, crate::error::Error::Io { ref path, .. } if path == "mem://t/gone.parquet"),
        "{err:?}"
    );
}

#[test]
fn data_pages_corrupted_inside_are_errors_not_panics() {
    let good = ids_file(0..2000);
    // flip bytes across the data pages (not the footer): decoding fails or yields
    // different values, but never panics
    for at in (8..good.len().saturating_sub(600)).step_by(97) {
        let mut bad = good.clone();
        bad[at] ^= 0xff;
        let io = memory_with(&[("mem://t/x.parquet", bad.clone())]);
        let p = plan(&[task("mem://t/x.parquet", bad.len())], SCHEMA, &[]);
        if let Err(e) = read_all(vec![p], &io, ReadOptions::default()) {
            assert!(
                e.location()
                    .is_some_and(|at| at.file == "mem://t/x.parquet")
                    || matches!(e, crate::error::Error::Io { .. }),
                "{e:?}"
            );
        }
    }
}

#[test]
fn metadata_columns_and_output_schema() {
    let f = ids_file(0..3);
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let p = plan(&[task("mem://t/f.parquet", f.len())], SCHEMA, &[]);
    let options = ReadOptions {
        metadata_columns: vec!["_spec_id".into(), "_partition".into(), "_row_id".into()],
        ..ReadOptions::default()
    };
    let schema = output_schema(&p.schema(), &options).unwrap();
    let out = read_all(vec![p.clone()], &io, options).unwrap();
    assert_eq!(out[0].schema(), schema);
    assert_eq!(
        out[0]
            .column_by_name("_spec_id")
            .unwrap()
            .as_primitive::<Int32Type>()
            .value(0),
        0
    );
    assert_eq!(out[0].column_by_name("_partition").unwrap().null_count(), 3);
    assert_eq!(out[0].column_by_name("_row_id").unwrap().null_count(), 3);
    let bad = ReadOptions {
        metadata_columns: vec!["_nope".into()],
        ..ReadOptions::default()
    };
    assert!(matches!(
        output_schema(&p.schema(), &bad),
        Err(crate::error::Error::InvalidArgument { .. })
    ));
    // an empty plan reads nothing
    let empty = RecordBatch::new_empty(p.schema());
    assert!(read_all(vec![empty], &io, ReadOptions::default())
        .unwrap()
        .is_empty());
    let _ = new_empty_array(&DataType::Int32);
}

#[test]
fn dropping_the_reader_early_stops_it() {
    let f = ids_file(0..5000);
    let io = memory_with(&[("mem://t/f.parquet", f.clone())]);
    let tasks: Vec<Task<'_>> = (0..20)
        .map(|_| task("mem://t/f.parquet", f.len()))
        .collect();
    let io_dyn: Arc<dyn FileIO> = io;
    let options = ReadOptions {
        batch_size: 100,
        concurrency: 3,
        ..ReadOptions::default()
    };
    let mut reader = read_plan(vec![plan(&tasks, SCHEMA, &[])], io_dyn, options).unwrap();
    assert!(reader.next_batch().unwrap().is_some());
    drop(reader);
}
