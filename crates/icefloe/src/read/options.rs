//! What a caller chooses about a read: batch size, metadata columns, threads.

use serde_json::Value;

use crate::spec::schema::reserved;

/// Rows per batch unless the caller asks otherwise (pyarrow's default).
pub const DEFAULT_BATCH_SIZE: usize = 65536;

/// The metadata columns a scan reads, by name with their reserved field ids.
pub const METADATA_COLUMNS: [(&str, i32); 7] = [
    ("_file", reserved::FILE_PATH_ID),
    ("_pos", reserved::POS_ID),
    ("_deleted", reserved::DELETED_ID),
    ("_spec_id", reserved::SPEC_ID_ID),
    ("_partition", reserved::PARTITION_ID),
    ("_row_id", reserved::ROW_ID_ID),
    (
        "_last_updated_sequence_number",
        reserved::LAST_UPDATED_SEQUENCE_NUMBER_ID,
    ),
];

#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The most rows in one batch (fewer after deletes and filtering).
    pub batch_size: usize,
    /// Metadata columns to add after the projected columns, in this order (names of
    /// [`METADATA_COLUMNS`]).
    pub metadata_columns: Vec<String>,
    /// How many files are read at once; 0 for the machine's available parallelism.
    pub concurrency: usize,
    /// The residual filters the plan's `residual` column indexes, when they are not in the
    /// plan's schema metadata (a plan streamed while it is planned learns them as it goes).
    pub residuals: Option<Vec<Value>>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            batch_size: DEFAULT_BATCH_SIZE,
            metadata_columns: Vec::new(),
            concurrency: 0,
            residuals: None,
        }
    }
}

impl ReadOptions {
    /// The number of reading threads for `tasks` tasks.
    pub(crate) fn threads(&self, tasks: usize) -> usize {
        let wanted = if self.concurrency == 0 {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        } else {
            self.concurrency
        };
        wanted.clamp(1, tasks.max(1))
    }
}
