//! The fields of the `data_file` struct of a manifest entry (the spec's "Manifests"), by
//! field id and name: the one list the reader matches writer schemas against and the
//! writer writes its schemas from.

/// A field of `data_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataFileField {
    Content,
    FilePath,
    FileFormat,
    Partition,
    RecordCount,
    FileSize,
    /// Deprecated, v1 only (Java still writes it there).
    BlockSize,
    ColumnSizes,
    ValueCounts,
    NullValueCounts,
    NanValueCounts,
    LowerBounds,
    UpperBounds,
    KeyMetadata,
    SplitOffsets,
    EqualityIds,
    SortOrderId,
    FirstRowId,
    ReferencedDataFile,
    ContentOffset,
    ContentSize,
}

use DataFileField as F;

impl DataFileField {
    /// Every field.
    pub(crate) const ALL: [DataFileField; 21] = [
        F::Content,
        F::FilePath,
        F::FileFormat,
        F::Partition,
        F::RecordCount,
        F::FileSize,
        F::BlockSize,
        F::ColumnSizes,
        F::ValueCounts,
        F::NullValueCounts,
        F::NanValueCounts,
        F::LowerBounds,
        F::UpperBounds,
        F::KeyMetadata,
        F::SplitOffsets,
        F::EqualityIds,
        F::SortOrderId,
        F::FirstRowId,
        F::ReferencedDataFile,
        F::ContentOffset,
        F::ContentSize,
    ];

    /// The field's id in the spec.
    pub(crate) const fn id(self) -> i32 {
        match self {
            F::Content => 134,
            F::FilePath => 100,
            F::FileFormat => 101,
            F::Partition => 102,
            F::RecordCount => 103,
            F::FileSize => 104,
            F::BlockSize => 105,
            F::ColumnSizes => 108,
            F::ValueCounts => 109,
            F::NullValueCounts => 110,
            F::NanValueCounts => 137,
            F::LowerBounds => 125,
            F::UpperBounds => 128,
            F::KeyMetadata => 131,
            F::SplitOffsets => 132,
            F::EqualityIds => 135,
            F::SortOrderId => 140,
            F::FirstRowId => 142,
            F::ReferencedDataFile => 143,
            F::ContentOffset => 144,
            F::ContentSize => 145,
        }
    }

    /// The field's name in the spec.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            F::Content => "content",
            F::FilePath => "file_path",
            F::FileFormat => "file_format",
            F::Partition => "partition",
            F::RecordCount => "record_count",
            F::FileSize => "file_size_in_bytes",
            F::BlockSize => "block_size_in_bytes",
            F::ColumnSizes => "column_sizes",
            F::ValueCounts => "value_counts",
            F::NullValueCounts => "null_value_counts",
            F::NanValueCounts => "nan_value_counts",
            F::LowerBounds => "lower_bounds",
            F::UpperBounds => "upper_bounds",
            F::KeyMetadata => "key_metadata",
            F::SplitOffsets => "split_offsets",
            F::EqualityIds => "equality_ids",
            F::SortOrderId => "sort_order_id",
            F::FirstRowId => "first_row_id",
            F::ReferencedDataFile => "referenced_data_file",
            F::ContentOffset => "content_offset",
            F::ContentSize => "content_size_in_bytes",
        }
    }

    /// The field a writer schema's field is: by its field id, or by its name when the
    /// writer left ids out.
    pub(crate) fn find(field_id: Option<i32>, name: &str) -> Option<DataFileField> {
        Self::ALL.into_iter().find(|f| match field_id {
            Some(id) => f.id() == id,
            None => f.name() == name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_distinct_and_found_back() {
        for (i, f) in DataFileField::ALL.iter().enumerate() {
            for g in &DataFileField::ALL[i + 1..] {
                assert_ne!(f.id(), g.id());
                assert_ne!(f.name(), g.name());
            }
            assert_eq!(DataFileField::find(Some(f.id()), "x"), Some(*f));
            assert_eq!(DataFileField::find(None, f.name()), Some(*f));
        }
        assert_eq!(DataFileField::find(Some(999), "file_path"), None);
    }
}
