//! Tests of compaction planning on the in-memory catalog (the Java comparison is
//! `tests/test_rewrite_data_files_oracle.py`).

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::catalog::{TableIdent, TableState};
use crate::commit::snapshot::SnapshotProducer;
use crate::commit::test_catalog::MemoryCatalog;
use crate::commit::transaction::{create_table, Transaction};
use crate::io::FileIO;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::sort::SortOrder;
use crate::spec::types::{NestedField, PrimitiveType, Type};

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn create(catalog: &Arc<MemoryCatalog>) -> TableState {
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
        vec![],
    )
    .unwrap();
    create_table(
        catalog.clone(),
        &ident(),
        &schema,
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[(
            "write.target-file-size-bytes".to_string(),
            "1000".to_string(),
        )],
        Some(2),
    )
    .unwrap()
}

/// Appends data files of the given sizes (bytes) in one snapshot.
fn append(catalog: &Arc<MemoryCatalog>, sizes: &[i64]) -> TableState {
    let mut p = SnapshotProducer::fast_append();
    for (i, size) in sizes.iter().enumerate() {
        let path = format!("mem://warehouse/db/t/data/{i}-{size}.parquet");
        catalog.io.write_new(&path, b"rows").unwrap();
        p.add_file(DataFile::new(
            DataContentType::Data,
            path,
            FileFormat::Parquet,
            vec![],
            10,
            *size,
        ));
    }
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap()
}

fn opts(md: &TableMetadata, pairs: &[(&str, &str)]) -> Result<RewriteDataFilesOptions> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RewriteDataFilesOptions::parse(md, RewriteStrategy::BinPack, &map)
}

fn plan(catalog: &Arc<MemoryCatalog>, state: &TableState, pairs: &[(&str, &str)]) -> Vec<usize> {
    let md = state.metadata.clone();
    let options = opts(&md, pairs).unwrap();
    let io: Arc<dyn FileIO> = catalog.io.clone();
    let scan = TableScan::new(md.clone(), io);
    let plan = plan_rewrite_data_files(&md, &scan, &options).unwrap();
    plan.groups.iter().map(|g| g.tasks.len()).collect()
}

#[test]
fn defaults_follow_the_target_size_property() {
    let catalog = MemoryCatalog::new();
    let state = create(&catalog);
    let o = opts(&state.metadata, &[]).unwrap();
    assert_eq!(
        (o.target_file_size, o.min_file_size, o.max_file_size),
        (1000, 750, 1800)
    );
    assert_eq!(o.write_max_file_size(), 1400);
    assert_eq!((o.min_input_files, o.max_commits), (5, 10));
    assert!(o.use_starting_sequence_number && !o.partial_progress_enabled);
}

#[test]
fn options_are_validated_as_java() {
    let catalog = MemoryCatalog::new();
    let md = create(&catalog).metadata;
    let e = opts(&md, &[("nope", "1")]).unwrap_err().to_string();
    assert!(e.contains("Cannot use options [nope]"), "{e}");
    let e = opts(&md, &[("min-file-size-bytes", "1000")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be > 'min-file-size-bytes'"), "{e}");
    let e = opts(&md, &[("max-file-size-bytes", "10")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be < 'max-file-size-bytes'"), "{e}");
    let e = opts(&md, &[("min-input-files", "0")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be > 0"), "{e}");
    let e = opts(
        &md,
        &[
            ("partial-progress.enabled", "true"),
            ("partial-progress.max-commits", "0"),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("must be positive when"), "{e}");
    // compression-factor belongs to the sort rewriter only
    assert!(opts(&md, &[("compression-factor", "2")]).is_err());
    let map = HashMap::from([("compression-factor".to_string(), "2".to_string())]);
    assert!(RewriteDataFilesOptions::parse(&md, RewriteStrategy::Sort, &map).is_ok());
}

#[test]
fn expected_output_files_and_split_size_are_javas() {
    let catalog = MemoryCatalog::new();
    let md = create(&catalog).metadata;
    let o = opts(&md, &[]).unwrap();
    // below the target: one file
    assert_eq!(o.expected_output_files(999), 1);
    // remainder 800 > min 750: a file of its own
    assert_eq!(o.expected_output_files(2800), 3);
    // remainder 100: spread (average 1050 < 1100)
    assert_eq!(o.expected_output_files(2100), 2);
    // remainder 700 < min, but spreading makes 1350 > 1.1 * target: kept apart
    assert_eq!(o.expected_output_files(2700), 3);
    // split: input / files + 5 KiB overhead, capped at the write max
    assert_eq!(o.input_split_size(2100), 1400);
    assert_eq!(o.input_split_size(500), 1400);
}

#[test]
fn small_files_are_grouped_and_right_sized_ones_left_alone() {
    let catalog = MemoryCatalog::new();
    create(&catalog);
    // five small files and two in the desired range [750, 1800]
    let state = append(&catalog, &[100, 100, 100, 100, 100, 800, 1700]);
    assert_eq!(plan(&catalog, &state, &[]), vec![5]);
    // fewer small files than min-input-files and less than the target: nothing
    assert_eq!(
        plan(&catalog, &state, &[("min-input-files", "6")]),
        Vec::<usize>::new()
    );
    // everything, in groups of at most 300 bytes
    assert_eq!(
        plan(
            &catalog,
            &state,
            &[
                ("rewrite-all", "true"),
                ("max-file-group-size-bytes", "300")
            ]
        ),
        vec![3, 2, 1, 1]
    );
    // Java 1.11's procedure refuses max-file-group-input-files
    let md = state.metadata.clone();
    assert!(opts(&md, &[("max-file-group-input-files", "3")]).is_err());
    // groups of at most 250 bytes: 2+2+1 small files; the single-file groups are dropped
    assert_eq!(
        plan(
            &catalog,
            &state,
            &[
                ("max-file-group-size-bytes", "250"),
                ("min-input-files", "2")
            ]
        ),
        vec![2, 2]
    );
    // max-files-to-rewrite cuts the plan
    assert_eq!(
        plan(&catalog, &state, &[("max-files-to-rewrite", "3")]),
        vec![3]
    );
}

#[test]
fn a_file_larger_than_the_maximum_is_rewritten_alone() {
    let catalog = MemoryCatalog::new();
    create(&catalog);
    let state = append(&catalog, &[5000, 900]);
    assert_eq!(plan(&catalog, &state, &[]), vec![1]);
}

#[test]
fn packing_closes_a_group_when_the_next_file_does_not_fit() {
    let t = |len: i64| FileScanTask {
        file: Arc::new(ScanFile {
            tree_position: None,
            spec_id: 0,
            data_sequence_number: 1,
            file_sequence_number: Some(1),
            file: DataFile::new(
                DataContentType::Data,
                format!("f{len}"),
                FileFormat::Parquet,
                vec![],
                1,
                len,
            ),
        }),
        start: 0,
        length: len,
        deletes: vec![],
        residual: Arc::new(BoundExpression::True),
    };
    let sizes = |groups: Vec<Vec<FileScanTask>>| -> Vec<Vec<i64>> {
        groups
            .iter()
            .map(|g| g.iter().map(|t| t.length).collect())
            .collect()
    };
    let tasks = vec![t(6), t(3), t(20), t(1), t(2)];
    assert_eq!(
        sizes(pack_groups(tasks.clone(), 10, i64::MAX)),
        vec![vec![6, 3], vec![20], vec![1, 2]]
    );
    assert_eq!(
        sizes(pack_groups(tasks, 100, 2)),
        vec![vec![6, 3], vec![20, 1], vec![2]]
    );
}

#[test]
fn job_orders_sort_groups_stably_by_bytes_or_files() {
    // (name, bytes, files); b and c tie on bytes, a and c on files
    let groups = [("a", 30, 2), ("b", 10, 5), ("c", 10, 2)];
    let order = |o: RewriteJobOrder| {
        let mut g = groups.to_vec();
        o.sort(&mut g, |g| g.1, |g| g.2);
        g.iter().map(|g| g.0).collect::<Vec<_>>()
    };
    assert_eq!(order(RewriteJobOrder::None), ["a", "b", "c"]);
    assert_eq!(order(RewriteJobOrder::BytesAsc), ["b", "c", "a"]);
    assert_eq!(order(RewriteJobOrder::BytesDesc), ["a", "b", "c"]);
    assert_eq!(order(RewriteJobOrder::FilesAsc), ["a", "c", "b"]);
    assert_eq!(order(RewriteJobOrder::FilesDesc), ["b", "a", "c"]);
}
