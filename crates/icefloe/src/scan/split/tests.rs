#![allow(clippy::unwrap_used, clippy::panic)]

//! Expected values come from Java's own tests where one exists (cited per test) and are
//! otherwise worked out by hand from Java's code (the trace is in the comment).

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::expr::BoundExpression;

const MIB: i64 = 1024 * 1024;

fn scan_file(
    path: &str,
    format: FileFormat,
    size: i64,
    offsets: Option<Vec<i64>>,
) -> Arc<ScanFile> {
    let mut file = DataFile::new(DataContentType::Data, path, format, vec![], 1, size);
    file.split_offsets = offsets;
    Arc::new(ScanFile {
        tree_position: None,
        spec_id: 0,
        data_sequence_number: 1,
        file_sequence_number: Some(1),
        file,
    })
}

fn delete_file(
    path: &str,
    content: DataContentType,
    format: FileFormat,
    size: i64,
) -> Arc<ScanFile> {
    Arc::new(ScanFile {
        tree_position: None,
        spec_id: 0,
        data_sequence_number: 2,
        file_sequence_number: Some(2),
        file: DataFile::new(content, path, format, vec![], 1, size),
    })
}

fn pos_deletes(path: &str, size: i64) -> Arc<ScanFile> {
    delete_file(
        path,
        DataContentType::PositionDeletes,
        FileFormat::Parquet,
        size,
    )
}

fn dv(path: &str, file_size: i64, content_size: Option<i64>) -> Arc<ScanFile> {
    let mut f = DataFile::new(
        DataContentType::PositionDeletes,
        path,
        FileFormat::Puffin,
        vec![],
        1,
        file_size,
    );
    f.content_offset = content_size.map(|_| 4);
    f.content_size_in_bytes = content_size;
    f.referenced_data_file = Some("data".into());
    Arc::new(ScanFile {
        tree_position: None,
        spec_id: 0,
        data_sequence_number: 2,
        file_sequence_number: Some(2),
        file: f,
    })
}

fn task_with(file: Arc<ScanFile>, deletes: Vec<Arc<ScanFile>>) -> FileScanTask {
    FileScanTask::whole_file(file, deletes, Arc::new(BoundExpression::True))
}

fn parquet(path: &str, size: i64) -> FileScanTask {
    task_with(scan_file(path, FileFormat::Parquet, size, None), vec![])
}

fn parquet_with_offsets(size: i64, offsets: Vec<i64>) -> FileScanTask {
    task_with(
        scan_file("f.parquet", FileFormat::Parquet, size, Some(offsets)),
        vec![],
    )
}

fn ranges(tasks: &[FileScanTask]) -> Vec<(i64, i64)> {
    tasks.iter().map(|t| (t.start, t.length)).collect()
}

fn split(task: &FileScanTask, target: i64) -> Vec<(i64, i64)> {
    ranges(&split_file(task, target).unwrap())
}

/// Each combined task as the (path, start) of its ranges.
fn grouping(combined: &[CombinedScanTask]) -> Vec<Vec<(String, i64)>> {
    combined
        .iter()
        .map(|c| {
            c.tasks
                .iter()
                .map(|t| (t.file.file.file_path.clone(), t.start))
                .collect()
        })
        .collect()
}

/// Each combined task as the paths of its (whole-file) tasks.
fn paths(combined: &[CombinedScanTask]) -> Vec<Vec<String>> {
    combined
        .iter()
        .map(|c| {
            c.tasks
                .iter()
                .map(|t| t.file.file.file_path.clone())
                .collect()
        })
        .collect()
}

fn names(groups: &[&[&str]]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| g.iter().map(|s| s.to_string()).collect())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Splitting
// ---------------------------------------------------------------------------------------

/// TestFixedSizeSplitScanTaskIterator.testSplits.
#[test]
fn fixed_size_splits() {
    assert_eq!(
        split(&parquet("a", 100), 15),
        vec![
            (0, 15),
            (15, 15),
            (30, 15),
            (45, 15),
            (60, 15),
            (75, 15),
            (90, 10)
        ]
    );
    assert_eq!(split(&parquet("a", 10), 10), vec![(0, 10)]);
    assert_eq!(split(&parquet("a", 10), 20), vec![(0, 10)]);
}

/// TestTableScanUtil.testSplitFallsThroughWhenFileExceedsTargetSplitSize and
/// testSplitSkipsWrapWhenFileFitsSingleSplit / ...FileSizeEqualsTargetSplitSize.
#[test]
fn fixed_size_splits_around_the_target() {
    assert_eq!(split(&parquet("a", 256), 128), vec![(0, 128), (128, 128)]);
    assert_eq!(split(&parquet("a", 64), 128), vec![(0, 64)]);
    assert_eq!(split(&parquet("a", 128), 128), vec![(0, 128)]);
    assert_eq!(split(&parquet("a", 129), 128), vec![(0, 128), (128, 1)]);
}

/// TestTableScanUtil.testSplitUsesOffsetsWhenFileFitsSingleSplit: one range per offset even
/// when the file is below the target size.
#[test]
fn offsets_split_even_below_the_target() {
    assert_eq!(
        split(&parquet_with_offsets(64, vec![0, 32]), 128),
        vec![(0, 32), (32, 32)]
    );
}

/// Offsets ignore the target size in both directions: ranges larger than the target are
/// not cut further, and the bytes before the first offset belong to no range
/// (OffsetsAwareSplitScanTaskIterator).
#[test]
fn offsets_ignore_the_target_size() {
    let task = parquet_with_offsets(200 * MIB, vec![4, 100 * MIB]);
    assert_eq!(
        split(&task, 16 * MIB),
        vec![(4, 100 * MIB - 4), (100 * MIB, 100 * MIB)]
    );
    assert_eq!(
        split(&parquet_with_offsets(100, vec![10, 20, 90]), 1),
        vec![(10, 10), (20, 70), (90, 10)]
    );
}

/// TestTableScanUtil.testTaskGroupPlanningCorruptedOffset: the last offset (12) is past the
/// end of the 10-byte file, so the offsets are ignored: ten 1-byte ranges.
#[test]
fn offsets_past_the_end_are_ignored() {
    let got = split(&parquet_with_offsets(10, vec![2, 12]), 1);
    assert_eq!(got, (0..10).map(|i| (i, 1)).collect::<Vec<_>>());
    // an offset equal to the file size is past the end too (BaseFile: last < size)
    assert_eq!(
        split(&parquet_with_offsets(10, vec![0, 10]), 4),
        vec![(0, 4), (4, 4), (8, 2)]
    );
    // an offset just below the end is used
    assert_eq!(
        split(&parquet_with_offsets(10, vec![0, 9]), 4),
        vec![(0, 9), (9, 1)]
    );
}

/// TestTableScanUtil.testSplitSkipsWrapWhenOffsetsNotStrictlyAscending, plus repeated and
/// empty offsets: all fall back to fixed-size ranges.
#[test]
fn unordered_or_empty_offsets_are_ignored() {
    assert_eq!(
        split(&parquet_with_offsets(64, vec![32, 0]), 128),
        vec![(0, 64)]
    );
    assert_eq!(
        split(&parquet_with_offsets(100, vec![0, 50, 50]), 40),
        vec![(0, 40), (40, 40), (80, 20)]
    );
    assert_eq!(
        split(&parquet_with_offsets(100, vec![]), 60),
        vec![(0, 60), (60, 40)]
    );
}

/// TestTableScanUtil.testSplitPreservesOldBehaviorForEmptyFile(WithOffsets): a 0-byte
/// splittable file gives no range at all.
#[test]
fn empty_files_give_no_range() {
    assert!(split(&parquet("a", 0), 128).is_empty());
    assert!(split(&parquet_with_offsets(0, vec![0]), 128).is_empty());
    // plan_tasks drops them too
    let planned = plan_tasks(vec![parquet("a", 0)], &SplitOptions::default()).unwrap();
    assert!(planned.is_empty());
}

/// Java's FileFormat.isSplittable: Avro and ORC split like Parquet; Puffin stays whole,
/// even with offsets; so does a format Java does not know.
#[test]
fn splittable_formats() {
    for format in [FileFormat::Avro, FileFormat::Orc, FileFormat::Parquet] {
        let t = task_with(scan_file("a", format, 25, None), vec![]);
        assert_eq!(split(&t, 10), vec![(0, 10), (10, 10), (20, 5)]);
    }
    for format in [FileFormat::Puffin, FileFormat::Unknown("lance".into())] {
        let t = task_with(scan_file("a", format.clone(), 25, Some(vec![0, 5])), vec![]);
        assert_eq!(split(&t, 10), vec![(0, 25)]);
        // a non-splittable empty file stays as it is
        let t = task_with(scan_file("a", format, 0, None), vec![]);
        assert_eq!(split(&t, 10), vec![(0, 0)]);
    }
}

/// Ranges keep the task's file, deletes and residual.
#[test]
fn ranges_keep_deletes_and_residual() {
    let deletes = vec![pos_deletes("d1", 7), dv("d2", 100, Some(9))];
    let t = task_with(
        scan_file("a", FileFormat::Parquet, 30, None),
        deletes.clone(),
    );
    let parts = split_file(&t, 10).unwrap();
    assert_eq!(parts.len(), 3);
    for p in &parts {
        assert!(Arc::ptr_eq(&p.file, &t.file));
        assert_eq!(p.deletes, deletes);
        assert!(Arc::ptr_eq(&p.residual, &t.residual));
    }
    let all = split_files(vec![t.clone(), parquet("b", 5)], 10).unwrap();
    assert_eq!(ranges(&all), vec![(0, 10), (10, 10), (20, 10), (0, 5)]);
}

#[test]
fn split_rejects_bad_input() {
    let t = parquet("a", 100);
    for target in [0, -1, i64::MIN] {
        let e = split_file(&t, target).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        assert!(e.to_string().contains("split size must be > 0"), "{e}");
        assert!(split_files(vec![t.clone()], target).is_err());
    }
    // Java: "Cannot split a task which is already split"
    let range = split_file(&t, 40).unwrap().remove(1);
    let e = split_file(&range, 40).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("already split"), "{e}");
    let e = plan_tasks(vec![range], &SplitOptions::default()).unwrap_err();
    assert!(e.to_string().contains("already split"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Bin packing (TestBinPacking)
// ---------------------------------------------------------------------------------------

const UNLIMITED: usize = i32::MAX as usize;

fn pk(items: &[i64], target: i64, lookback: usize, largest_first: bool) -> Vec<Vec<i64>> {
    pack(items.to_vec(), target, lookback, largest_first, |w| *w).unwrap()
}

fn pk_end(items: &[i64], target: i64, lookback: usize) -> Vec<Vec<i64>> {
    pack_end(items.to_vec(), target, lookback, false, |w| *w).unwrap()
}

fn l(groups: &[&[i64]]) -> Vec<Vec<i64>> {
    groups.iter().map(|g| g.to_vec()).collect()
}

/// TestBinPacking.testBasicBinPacking.
#[test]
fn basic_bin_packing() {
    let items = [1, 2, 3, 4, 5];
    let cases: &[(i64, &[&[i64]])] = &[
        (3, &[&[1, 2], &[3], &[4], &[5]]),
        (5, &[&[1, 2], &[3], &[4], &[5]]),
        (6, &[&[1, 2, 3], &[4], &[5]]),
        (8, &[&[1, 2, 3], &[4], &[5]]),
        (9, &[&[1, 2, 3], &[4, 5]]),
        (10, &[&[1, 2, 3, 4], &[5]]),
        (14, &[&[1, 2, 3, 4], &[5]]),
        (15, &[&[1, 2, 3, 4, 5]]),
    ];
    for (target, expected) in cases {
        assert_eq!(
            pk(&items, *target, UNLIMITED, false),
            l(expected),
            "target {target}"
        );
    }
}

/// TestBinPacking.testReverseBinPackingSingleLookback.
#[test]
fn reverse_bin_packing_single_lookback() {
    let items = [1, 2, 3, 4, 5];
    let cases: &[(i64, &[&[i64]])] = &[
        (3, &[&[1, 2], &[3], &[4], &[5]]),
        (4, &[&[1, 2], &[3], &[4], &[5]]),
        (5, &[&[1], &[2, 3], &[4], &[5]]),
        (6, &[&[1, 2, 3], &[4], &[5]]),
        (7, &[&[1, 2], &[3, 4], &[5]]),
        (8, &[&[1, 2], &[3, 4], &[5]]),
        (9, &[&[1, 2, 3], &[4, 5]]),
        (11, &[&[1, 2, 3], &[4, 5]]),
        (12, &[&[1, 2], &[3, 4, 5]]),
        (14, &[&[1], &[2, 3, 4, 5]]),
        (15, &[&[1, 2, 3, 4, 5]]),
    ];
    for (target, expected) in cases {
        assert_eq!(pk_end(&items, *target, 1), l(expected), "target {target}");
    }
}

/// TestBinPacking.testReverseBinPackingUnlimitedLookback.
#[test]
fn reverse_bin_packing_unlimited_lookback() {
    let items = [1, 2, 3, 4, 5];
    let cases: &[(i64, &[&[i64]])] = &[
        (3, &[&[1, 2], &[3], &[4], &[5]]),
        (4, &[&[2], &[1, 3], &[4], &[5]]),
        (5, &[&[2, 3], &[1, 4], &[5]]),
        (6, &[&[3], &[2, 4], &[1, 5]]),
        (7, &[&[1], &[3, 4], &[2, 5]]),
        (8, &[&[1, 2, 4], &[3, 5]]),
        (9, &[&[1, 2, 3], &[4, 5]]),
        (10, &[&[2, 3], &[1, 4, 5]]),
        (11, &[&[1, 3], &[2, 4, 5]]),
        (12, &[&[1, 2], &[3, 4, 5]]),
        (13, &[&[2], &[1, 3, 4, 5]]),
        (14, &[&[1], &[2, 3, 4, 5]]),
        (15, &[&[1, 2, 3, 4, 5]]),
    ];
    for (target, expected) in cases {
        assert_eq!(
            pk_end(&items, *target, UNLIMITED),
            l(expected),
            "target {target}"
        );
    }
}

/// TestBinPacking.testBinPackingLookBack, including the two largest-bin-first cases.
#[test]
fn bin_packing_lookback() {
    let items = [5, 1, 5, 1, 5, 1];
    assert_eq!(
        pk(&items, 8, UNLIMITED, false),
        l(&[&[5, 1, 1, 1], &[5], &[5]])
    );
    assert_eq!(pk(&items, 8, 2, false), l(&[&[5, 1, 1], &[5, 1], &[5]]));
    assert_eq!(pk(&items, 8, 1, false), l(&[&[5, 1], &[5, 1], &[5, 1]]));
    // 2 bin look-back, largest first: when 128 opens a third bin, the heaviest open bin
    // (the 128 itself) leaves, not the oldest ([36, 65])
    assert_eq!(
        pk(&[36, 36, 36, 36, 65, 65, 128], 128, 2, true),
        l(&[&[36, 36, 36], &[128], &[36, 65], &[65]])
    );
    // the oldest-first order gives a different grouping on the same input
    assert_eq!(
        pk(&[36, 36, 36, 36, 65, 65, 128], 128, 2, false),
        l(&[&[36, 36, 36], &[36, 65], &[65], &[128]])
    );
    // 1 bin look-back, largest first: [64, 64] and [128] weigh the same; the older leaves
    assert_eq!(
        pk(&[64, 64, 128, 32, 32, 32, 32], 128, 1, true),
        l(&[&[64, 64], &[128], &[32, 32, 32, 32]])
    );
}

/// First fit, not best fit: 30 goes into the first bin it fits in.
#[test]
fn first_fit() {
    assert_eq!(pk(&[60, 50, 30], 100, 10, true), l(&[&[60, 30], &[50]]));
    // an item heavier than the target gets a bin of its own
    assert_eq!(pk(&[10, 500, 10], 100, 10, true), l(&[&[10, 10], &[500]]));
}

/// `binWeight + weight <= target` in Java's `long`: a sum that overflows wraps negative and
/// "fits".
#[test]
fn bin_weight_wraps_like_java() {
    assert_eq!(pk(&[i64::MAX, 1], i64::MAX, 10, true), l(&[&[i64::MAX, 1]]));
}

#[test]
fn packer_rejects_zero_lookback() {
    let e = pack(vec![1i64], 10, 0, true, |w| *w).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
}

// ---------------------------------------------------------------------------------------
// Weights and planning
// ---------------------------------------------------------------------------------------

/// TestTableScanUtil.testFileScanTaskSizeEstimation: a deletion vector counts its content
/// size (20), not the Puffin file's size.
#[test]
fn deletion_vectors_count_their_content_size() {
    let t = task_with(
        scan_file("a", FileFormat::Parquet, 100, None),
        vec![dv("dv.puffin", 5000, Some(20))],
    );
    assert_eq!(task_weight(&t, 0).unwrap(), 120);
    assert_eq!(task_weight(&t, 50).unwrap(), 120);
    assert_eq!(task_weight(&t, 70).unwrap(), 140);
    // position and equality delete files count their file size
    let t = task_with(
        scan_file("a", FileFormat::Parquet, 100, None),
        vec![
            pos_deletes("p", 30),
            delete_file("e", DataContentType::EqualityDeletes, FileFormat::Avro, 40),
        ],
    );
    assert_eq!(task_weight(&t, 1).unwrap(), 170);
    assert_eq!(task_weight(&t, 100).unwrap(), 300);
}

#[test]
fn deletion_vector_without_content_size_is_an_error() {
    let t = task_with(
        scan_file("a", FileFormat::Parquet, 100, None),
        vec![dv("dv.puffin", 5000, None)],
    );
    let e = task_weight(&t, 0).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e}");
    assert!(e.to_string().contains("dv.puffin"), "{e}");
    assert!(plan_tasks(vec![t.clone()], &SplitOptions::default()).is_err());
    assert!(pack_tasks(vec![t], &SplitOptions::default()).is_err());
}

/// TestTableScanUtil.testPlanTaskWithDeleteFiles: target 300, lookback 3, open-file cost
/// 50. Weights: 300, max(101, 150) = 150, 150, max(3, 150) = 150, 150 -> [0], [1, 2], [3, 4].
#[test]
fn plan_with_delete_files() {
    let sizes: [(i64, &[i64]); 5] = [
        (150, &[50, 100]),
        (50, &[1, 50]),
        (50, &[100]),
        (1, &[1, 1]),
        (75, &[75]),
    ];
    let tasks: Vec<FileScanTask> = sizes
        .iter()
        .enumerate()
        .map(|(i, (size, deletes))| {
            let deletes = deletes
                .iter()
                .enumerate()
                .map(|(j, s)| pos_deletes(&format!("d{i}-{j}"), *s))
                .collect();
            task_with(
                scan_file(&format!("t{i}"), FileFormat::Parquet, *size, None),
                deletes,
            )
        })
        .collect();
    let options = SplitOptions::new(300, 3, 50).unwrap();
    let expected = names(&[&["t0"], &["t1", "t2"], &["t3", "t4"]]);
    assert_eq!(
        paths(&pack_tasks(tasks.clone(), &options).unwrap()),
        expected
    );
    // every file is below the target, so splitting first changes nothing
    assert_eq!(paths(&plan_tasks(tasks, &options).unwrap()), expected);
}

/// The largest-bin-first cases of TestBinPacking through planTasks (no deletes, open-file
/// cost 0, so a task weighs its length).
#[test]
fn plan_evicts_the_heaviest_bin() {
    let tasks = |sizes: &[i64]| -> Vec<FileScanTask> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, s)| parquet(&format!("t{i}"), *s))
            .collect()
    };
    let options = SplitOptions::new(128, 2, 0).unwrap();
    let planned = plan_tasks(tasks(&[36, 36, 36, 36, 65, 65, 128]), &options).unwrap();
    assert_eq!(
        paths(&planned),
        names(&[&["t0", "t1", "t2"], &["t6"], &["t3", "t4"], &["t5"]])
    );
    let options = SplitOptions::new(128, 1, 0).unwrap();
    let planned = plan_tasks(tasks(&[64, 64, 128, 32, 32, 32, 32]), &options).unwrap();
    assert_eq!(
        paths(&planned),
        names(&[&["t0", "t1"], &["t2"], &["t3", "t4", "t5", "t6"]])
    );
    // open-file cost 4 on 1-byte files, target 10, lookback 1: weights 4, 4, 4; the third
    // does not fit (12 > 10) and pushes the full bin [t0, t1] out
    let options = SplitOptions::new(10, 1, 4).unwrap();
    let planned = plan_tasks(tasks(&[1, 1, 1]), &options).unwrap();
    assert_eq!(paths(&planned), names(&[&["t0", "t1"], &["t2"]]));
}

/// Default options: 1 MiB files weigh the 4 MiB open-file cost, so 32 fit in 128 MiB.
#[test]
fn plan_small_files_with_default_options() {
    let tasks: Vec<FileScanTask> = (0..100).map(|i| parquet(&format!("t{i}"), MIB)).collect();
    let planned = plan_tasks(tasks, &SplitOptions::default()).unwrap();
    let sizes: Vec<usize> = planned.iter().map(|c| c.tasks.len()).collect();
    assert_eq!(sizes, vec![32, 32, 32, 4]);
    assert_eq!(planned[3].tasks[0].file.file.file_path, "t96");
}

/// A 300 MiB file is cut into 128 + 128 + 44 MiB; a 10 MiB file after it joins the bin of
/// the 44 MiB range, the first it fits in.
#[test]
fn plan_splits_then_packs() {
    let tasks = vec![parquet("big", 300 * MIB), parquet("small", 10 * MIB)];
    let planned = plan_tasks(tasks, &SplitOptions::default()).unwrap();
    let g = |p: &str, s: i64| (p.to_string(), s);
    assert_eq!(
        grouping(&planned),
        vec![
            vec![g("big", 0)],
            vec![g("big", 128 * MIB)],
            vec![g("big", 256 * MIB), g("small", 0)],
        ]
    );
    assert_eq!(planned[2].tasks[0].length, 44 * MIB);
    // with row-group offsets the ranges follow them instead
    let mut file = scan_file("rg", FileFormat::Parquet, 300 * MIB, None);
    Arc::make_mut(&mut file).file.split_offsets = Some(vec![4, 100 * MIB, 200 * MIB]);
    let planned = plan_tasks(vec![task_with(file, vec![])], &SplitOptions::default()).unwrap();
    let lengths: Vec<Vec<i64>> = planned
        .iter()
        .map(|c| c.tasks.iter().map(|t| t.length).collect())
        .collect();
    assert_eq!(
        lengths,
        vec![vec![100 * MIB - 4], vec![100 * MIB], vec![100 * MIB]]
    );
}

/// Java's `BaseCombinedScanTask` merges consecutive ranges of one file (`mergeTasks`): a
/// file whose row groups all fit in one task is one range again.
#[test]
fn plan_merges_consecutive_ranges_of_a_file() {
    let mut a = scan_file("a", FileFormat::Parquet, 3000, None);
    Arc::make_mut(&mut a).file.split_offsets = Some(vec![4, 1000, 2000]);
    let tasks = vec![task_with(a, vec![]), parquet("b", 100)];
    let planned = plan_tasks(tasks, &SplitOptions::default()).unwrap();
    assert_eq!(planned.len(), 1);
    let ranges: Vec<(&str, i64, i64)> = planned[0]
        .tasks
        .iter()
        .map(|t| (t.file.file.file_path.as_str(), t.start, t.length))
        .collect();
    assert_eq!(ranges, vec![("a", 4, 2996), ("b", 0, 100)]);
    // fixed-size ranges merge too; with a small target each range is alone in its task
    let planned = plan_tasks(
        vec![parquet("c", 10)],
        &SplitOptions::new(4, 10, 0).unwrap(),
    )
    .unwrap();
    assert_eq!(
        grouping(&planned),
        vec![
            vec![("c".to_string(), 0)],
            vec![("c".to_string(), 4)],
            vec![("c".to_string(), 8)]
        ]
    );
    let planned = plan_tasks(
        vec![parquet("c", 10)],
        &SplitOptions::new(8, 10, 0).unwrap(),
    )
    .unwrap();
    let lengths: Vec<Vec<(i64, i64)>> = planned
        .iter()
        .map(|c| c.tasks.iter().map(|t| (t.start, t.length)).collect())
        .collect();
    // 4 + 4 fit in 8 and merge into one range; the last 2 bytes go to a second task
    assert_eq!(lengths, vec![vec![(0, 8)], vec![(8, 2)]]);
}

/// Ranges of one file in one task that do not follow each other stay apart (the middle one
/// went to another task).
#[test]
fn plan_keeps_ranges_that_do_not_follow_each_other() {
    let mut a = scan_file("a", FileFormat::Parquet, 18, None);
    Arc::make_mut(&mut a).file.split_offsets = Some(vec![0, 6, 14]);
    let planned = plan_tasks(
        vec![task_with(a, vec![])],
        &SplitOptions::new(10, 10, 0).unwrap(),
    )
    .unwrap();
    let ranges: Vec<Vec<(i64, i64)>> = planned
        .iter()
        .map(|c| c.tasks.iter().map(|t| (t.start, t.length)).collect())
        .collect();
    assert_eq!(ranges, vec![vec![(0, 6), (14, 4)], vec![(6, 8)]]);
}

#[test]
fn plan_rejects_bad_options() {
    for options in [
        SplitOptions {
            target_size: 0,
            ..SplitOptions::default()
        },
        SplitOptions {
            lookback: 0,
            ..SplitOptions::default()
        },
        SplitOptions {
            lookback: -3,
            ..SplitOptions::default()
        },
        SplitOptions {
            open_file_cost: -1,
            ..SplitOptions::default()
        },
    ] {
        let e = plan_tasks(vec![parquet("a", 1)], &options).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        assert!(pack_tasks(vec![parquet("a", 1)], &options).is_err());
        assert!(SplitOptions::new(
            options.target_size,
            options.lookback,
            options.open_file_cost
        )
        .is_err());
    }
    // an open-file cost of 0 is allowed
    assert!(SplitOptions::new(1, 1, 0).is_ok());
}

/// A million tasks plan in one linear pass (quadratic work would not finish). They share
/// one file, which is fine for planning.
#[test]
fn plan_a_million_tasks() {
    let file = scan_file("a", FileFormat::Parquet, MIB, None);
    let residual = Arc::new(BoundExpression::True);
    let tasks: Vec<FileScanTask> = (0..1_000_000)
        .map(|_| FileScanTask::whole_file(file.clone(), vec![], residual.clone()))
        .collect();
    let planned = plan_tasks(tasks, &SplitOptions::default()).unwrap();
    assert_eq!(planned.len(), 31_250);
    assert!(planned.iter().all(|c| c.tasks.len() == 32));
}

// ---------------------------------------------------------------------------------------
// Options from properties
// ---------------------------------------------------------------------------------------

fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn table(pairs: &[(&str, &str)]) -> TableMetadata {
    let properties = pairs
        .iter()
        .map(|(k, v)| format!("\"{k}\": \"{v}\""))
        .collect::<Vec<_>>()
        .join(", ");
    TableMetadata::from_json_str(&format!(
        r#"{{"format-version": 1, "location": "x", "last-updated-ms": 0, "last-column-id": 1,
           "schema": {{"type": "struct", "fields": [{{"id": 1, "name": "a", "required": true, "type": "int"}}]}},
           "partition-spec": [], "properties": {{{properties}}}}}"#
    ))
    .unwrap()
}

/// TableProperties defaults: 128 MiB, 10, 4 MiB.
#[test]
fn options_default_to_java() {
    let expected = SplitOptions {
        target_size: 134_217_728,
        lookback: 10,
        open_file_cost: 4_194_304,
    };
    assert_eq!(SplitOptions::default(), expected);
    assert_eq!(
        SplitOptions::from_properties(&HashMap::new()).unwrap(),
        expected
    );
    assert_eq!(SplitOptions::from_table(&table(&[])).unwrap(), expected);
}

#[test]
fn options_from_properties() {
    let p = props(&[
        (SPLIT_SIZE, "268435456"),
        (SPLIT_LOOKBACK, "+5"),
        (SPLIT_OPEN_FILE_COST, "0"),
        (METADATA_SPLIT_SIZE, "7"),
    ]);
    assert_eq!(
        SplitOptions::from_properties(&p).unwrap(),
        SplitOptions {
            target_size: 268_435_456,
            lookback: 5,
            open_file_cost: 0
        }
    );
}

/// Long.parseLong / Integer.parseInt failures and values planTasks rejects: a typed error
/// naming the property.
#[test]
fn options_reject_bad_values() {
    let cases = [
        (SPLIT_SIZE, "128MB"),
        (SPLIT_SIZE, " 5"),
        (SPLIT_SIZE, ""),
        (SPLIT_SIZE, "0"),
        (SPLIT_SIZE, "9223372036854775808"),
        (SPLIT_LOOKBACK, "2147483648"),
        (SPLIT_LOOKBACK, "1.5"),
        (SPLIT_LOOKBACK, "0"),
        (SPLIT_LOOKBACK, "-1"),
        (SPLIT_OPEN_FILE_COST, "-1"),
        (SPLIT_OPEN_FILE_COST, "4 MiB"),
    ];
    for (key, value) in cases {
        let e = SplitOptions::from_properties(&props(&[(key, value)])).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { .. }),
            "{key}={value}: {e}"
        );
        assert!(e.to_string().contains(key), "{key}={value}: {e}");

        let e = SplitOptions::from_table(&table(&[(key, value)])).unwrap_err();
        assert!(
            matches!(e, Error::InvalidMetadata { .. }),
            "{key}={value}: {e}"
        );
        assert_eq!(e.location().unwrap().field, format!("properties.{key}"));
    }
}

/// Scan options override table properties; a bad table value fails even when overridden
/// (Java parses it first); the checks apply to the value used.
#[test]
fn scan_options_override_table_properties() {
    let t = table(&[(SPLIT_SIZE, "1000"), (SPLIT_LOOKBACK, "3")]);
    let o = props(&[(SPLIT_SIZE, "2000"), (SPLIT_OPEN_FILE_COST, "1")]);
    assert_eq!(
        SplitOptions::from_table_with_options(&t, &o).unwrap(),
        SplitOptions {
            target_size: 2000,
            lookback: 3,
            open_file_cost: 1
        }
    );
    let t = table(&[(SPLIT_SIZE, "big")]);
    let e = SplitOptions::from_table_with_options(&t, &o).unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e}");
    let t = table(&[(SPLIT_SIZE, "0")]);
    assert_eq!(
        SplitOptions::from_table_with_options(&t, &o)
            .unwrap()
            .target_size,
        2000
    );
    let e = SplitOptions::from_table_with_options(&table(&[]), &props(&[(SPLIT_LOOKBACK, "0")]))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains(SPLIT_LOOKBACK), "{e}");
}

/// Metadata tables use read.split.metadata-target-size (32 MiB), not read.split.target-size;
/// the scan option read.split.target-size still overrides it.
#[test]
fn metadata_table_options() {
    let none = HashMap::new();
    let o = SplitOptions::for_metadata_table(&table(&[(SPLIT_SIZE, "5")]), &none).unwrap();
    assert_eq!(o.target_size, 32 * MIB);
    let o =
        SplitOptions::for_metadata_table(&table(&[(METADATA_SPLIT_SIZE, "1000")]), &none).unwrap();
    assert_eq!(o.target_size, 1000);
    let o = SplitOptions::for_metadata_table(
        &table(&[(METADATA_SPLIT_SIZE, "1000")]),
        &props(&[(SPLIT_SIZE, "77")]),
    )
    .unwrap();
    assert_eq!(o.target_size, 77);
    let e = SplitOptions::for_metadata_table(&table(&[(METADATA_SPLIT_SIZE, "-1")]), &none)
        .unwrap_err();
    assert_eq!(
        e.location().unwrap().field,
        format!("properties.{METADATA_SPLIT_SIZE}")
    );
}

/// Java's `TestTableScanUtil.testAdaptiveSplitSize` cases, worked from
/// `TableScanUtil.adjustSplitSize`: the configured size when it makes a split per slot,
/// else the scan shared by the slots with 16 MiB (or the configured size) as the floor.
#[test]
fn adaptive_split_size() {
    // enough splits for the slots: unchanged
    assert_eq!(
        adjust_split_size(1024 * MIB, 8, 128 * MIB).unwrap(),
        128 * MIB
    );
    assert_eq!(
        adjust_split_size(1024 * MIB, 4, 128 * MIB).unwrap(),
        128 * MIB
    );
    // fewer splits than slots: the scan shared
    assert_eq!(
        adjust_split_size(1024 * MIB, 16, 128 * MIB).unwrap(),
        64 * MIB
    );
    assert_eq!(
        adjust_split_size(100 * MIB, 2, 128 * MIB).unwrap(),
        50 * MIB
    );
    // with 16 MiB as the floor ...
    assert_eq!(adjust_split_size(40 * MIB, 8, 128 * MIB).unwrap(), 16 * MIB);
    assert_eq!(adjust_split_size(0, 2, 128 * MIB).unwrap(), 16 * MIB);
    // ... unless the configured size is below it
    assert_eq!(adjust_split_size(10 * MIB, 4, 8 * MIB).unwrap(), 8 * MIB);
    assert_eq!(adjust_split_size(10 * MIB, 2, 8 * MIB).unwrap(), 8 * MIB);
    // the split count rounds up: 129 MiB at 128 MiB are two splits, enough for two slots
    assert_eq!(
        adjust_split_size(129 * MIB, 2, 128 * MIB).unwrap(),
        128 * MIB
    );
    assert_eq!(
        adjust_split_size(128 * MIB, 2, 128 * MIB).unwrap(),
        64 * MIB
    );
    // bad arguments fail, as Java's preconditions
    assert!(adjust_split_size(MIB, 0, 128 * MIB).is_err());
    assert!(adjust_split_size(MIB, 2, 0).is_err());
}
