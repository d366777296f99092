//! The results of planning: files with what planning inherited for them, and tasks.

use std::sync::Arc;

use crate::expr::BoundExpression;
use crate::manifest::v4::tree::TreePosition;
use crate::manifest::DataFile;

/// A live data or delete file of a snapshot, with what its manifest and manifest-list row
/// gave it (inheritance applied).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanFile {
    /// The id of the partition spec the file was written with (its manifest's spec).
    pub spec_id: i32,
    /// The data sequence number (inherited when the entry had none).
    pub data_sequence_number: i64,
    /// The file sequence number, when known (null in v1 manifests and old entries).
    pub file_sequence_number: Option<i64>,
    pub file: DataFile,
    /// Where a data file planned from a v4 snapshot sits in its metadata tree (`None` for
    /// delete files and other formats): a row-level write passes it back to its commit
    /// (`SnapshotProducer::data_file_position`), which then reads the one leaf entry
    /// instead of searching the leaves for the file.
    pub tree_position: Option<TreePosition>,
}

/// A byte range of one data file to read, with the delete files to apply and the part of
/// the row filter that its partition does not already decide.
#[derive(Debug, Clone, PartialEq)]
pub struct FileScanTask {
    pub file: Arc<ScanFile>,
    /// Byte offset of the range in the file.
    pub start: i64,
    /// Byte length of the range.
    pub length: i64,
    /// The deletes that apply: deletion vectors, position delete files, equality delete
    /// files.
    pub deletes: Vec<Arc<ScanFile>>,
    /// The filter rows of this file must still pass (shared by the files of one partition).
    pub residual: Arc<BoundExpression>,
}

impl FileScanTask {
    /// A task over the whole file.
    pub fn whole_file(
        file: Arc<ScanFile>,
        deletes: Vec<Arc<ScanFile>>,
        residual: Arc<BoundExpression>,
    ) -> FileScanTask {
        let length = file.file.file_size_in_bytes;
        FileScanTask {
            file,
            start: 0,
            length,
            deletes,
            residual,
        }
    }
}

/// Tasks packed together for one reader (one Spark partition).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CombinedScanTask {
    pub tasks: Vec<FileScanTask>,
}
