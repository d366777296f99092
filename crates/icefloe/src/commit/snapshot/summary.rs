//! Snapshot summaries (Appendix F "Optional Snapshot Summary Fields"), built as Java's
//! `SnapshotSummary.Builder` builds them: counts of what a snapshot added and removed,
//! only where non-zero, the number of changed partitions, and running totals carried
//! from the branch's previous snapshot.

use std::collections::HashSet;

use crate::manifest::{DataContentType, DataFile};
use crate::spec::snapshot::{Operation, Snapshot, Summary};

/// What one snapshot changed, accumulated file by file.
#[derive(Debug, Clone, Default)]
pub struct SummaryBuilder {
    added_size: i64,
    removed_size: i64,
    added_files: i64,
    removed_files: i64,
    added_eq_delete_files: i64,
    removed_eq_delete_files: i64,
    added_pos_delete_files: i64,
    removed_pos_delete_files: i64,
    added_dvs: i64,
    removed_dvs: i64,
    added_delete_files: i64,
    removed_delete_files: i64,
    added_records: i64,
    deleted_records: i64,
    added_pos_deletes: i64,
    removed_pos_deletes: i64,
    added_eq_deletes: i64,
    removed_eq_deletes: i64,
    partitions: HashSet<String>,
    /// Entries set by the operation (manifest counts, user properties), in order.
    properties: Vec<(String, String)>,
}

fn is_dv(f: &DataFile) -> bool {
    f.content == DataContentType::PositionDeletes && f.content_offset.is_some()
}

/// The bytes a file contributes: a DV's blob, otherwise the whole file.
fn content_size(f: &DataFile) -> i64 {
    if is_dv(f) {
        f.content_size_in_bytes.unwrap_or(f.file_size_in_bytes)
    } else {
        f.file_size_in_bytes
    }
}

impl SummaryBuilder {
    pub fn added_file(&mut self, spec_id: i32, f: &DataFile) {
        self.partitions.insert(partition_key(spec_id, f));
        self.added_size += content_size(f);
        match f.content {
            DataContentType::Data => {
                self.added_files += 1;
                self.added_records += f.record_count;
            }
            DataContentType::PositionDeletes => {
                if is_dv(f) {
                    self.added_dvs += 1;
                } else {
                    self.added_pos_delete_files += 1;
                }
                self.added_delete_files += 1;
                self.added_pos_deletes += f.record_count;
            }
            DataContentType::EqualityDeletes => {
                self.added_delete_files += 1;
                self.added_eq_delete_files += 1;
                self.added_eq_deletes += f.record_count;
            }
        }
    }

    pub fn removed_file(&mut self, spec_id: i32, f: &DataFile) {
        self.partitions.insert(partition_key(spec_id, f));
        self.removed_size += content_size(f);
        match f.content {
            DataContentType::Data => {
                self.removed_files += 1;
                self.deleted_records += f.record_count;
            }
            DataContentType::PositionDeletes => {
                if is_dv(f) {
                    self.removed_dvs += 1;
                } else {
                    self.removed_pos_delete_files += 1;
                }
                self.removed_delete_files += 1;
                self.removed_pos_deletes += f.record_count;
            }
            DataContentType::EqualityDeletes => {
                self.removed_delete_files += 1;
                self.removed_eq_delete_files += 1;
                self.removed_eq_deletes += f.record_count;
            }
        }
    }

    pub fn set(&mut self, key: &str, value: impl ToString) {
        let value = value.to_string();
        match self.properties.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value,
            None => self.properties.push((key.to_string(), value)),
        }
    }

    /// The summary of a snapshot of `operation` whose branch's previous snapshot is
    /// `previous` (`None`: the branch is new, totals start at 0).
    pub fn build(&self, operation: Operation, previous: Option<&Snapshot>) -> Summary {
        let mut out: Vec<(String, String)> = self.properties.clone();
        let mut put_if = |cond: bool, key: &str, v: i64| {
            if cond {
                out.push((key.to_string(), v.to_string()));
            }
        };
        put_if(self.added_files > 0, "added-data-files", self.added_files);
        put_if(
            self.removed_files > 0,
            "deleted-data-files",
            self.removed_files,
        );
        put_if(
            self.added_eq_delete_files > 0,
            "added-equality-delete-files",
            self.added_eq_delete_files,
        );
        put_if(
            self.removed_eq_delete_files > 0,
            "removed-equality-delete-files",
            self.removed_eq_delete_files,
        );
        put_if(
            self.added_pos_delete_files > 0,
            "added-position-delete-files",
            self.added_pos_delete_files,
        );
        put_if(
            self.removed_pos_delete_files > 0,
            "removed-position-delete-files",
            self.removed_pos_delete_files,
        );
        put_if(
            self.added_delete_files > 0,
            "added-delete-files",
            self.added_delete_files,
        );
        put_if(
            self.removed_delete_files > 0,
            "removed-delete-files",
            self.removed_delete_files,
        );
        put_if(self.added_dvs > 0, "added-dvs", self.added_dvs);
        put_if(self.removed_dvs > 0, "removed-dvs", self.removed_dvs);
        put_if(self.added_records > 0, "added-records", self.added_records);
        put_if(
            self.deleted_records > 0,
            "deleted-records",
            self.deleted_records,
        );
        put_if(self.added_size > 0, "added-files-size", self.added_size);
        put_if(
            self.removed_size > 0,
            "removed-files-size",
            self.removed_size,
        );
        put_if(
            self.added_pos_deletes > 0,
            "added-position-deletes",
            self.added_pos_deletes,
        );
        put_if(
            self.removed_pos_deletes > 0,
            "removed-position-deletes",
            self.removed_pos_deletes,
        );
        put_if(
            self.added_eq_deletes > 0,
            "added-equality-deletes",
            self.added_eq_deletes,
        );
        put_if(
            self.removed_eq_deletes > 0,
            "removed-equality-deletes",
            self.removed_eq_deletes,
        );
        put_if(
            true,
            "changed-partition-count",
            self.partitions.len() as i64,
        );

        // running totals: previous total + added - removed; dropped when the previous
        // snapshot has no (valid) total or the result would be negative, as Java
        let previous_get = |key: &str| -> Option<i64> {
            match previous {
                None => Some(0),
                Some(s) => s
                    .summary
                    .as_ref()
                    .and_then(|sum| sum.get(key))
                    .and_then(|v| v.parse::<i64>().ok()),
            }
        };
        let get = |key: &str| -> Option<i64> {
            out.iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.parse().ok())
        };
        let totals = [
            ("total-records", "added-records", "deleted-records"),
            ("total-files-size", "added-files-size", "removed-files-size"),
            ("total-data-files", "added-data-files", "deleted-data-files"),
            (
                "total-delete-files",
                "added-delete-files",
                "removed-delete-files",
            ),
            (
                "total-position-deletes",
                "added-position-deletes",
                "removed-position-deletes",
            ),
            (
                "total-equality-deletes",
                "added-equality-deletes",
                "removed-equality-deletes",
            ),
        ];
        let mut computed = Vec::new();
        for (total, added, removed) in totals {
            if let Some(prev) = previous_get(total) {
                let mut t = prev;
                if t >= 0 {
                    t += get(added).unwrap_or(0);
                }
                if t >= 0 {
                    t -= get(removed).unwrap_or(0);
                }
                if t >= 0 {
                    computed.push((total.to_string(), t.to_string()));
                }
            }
        }
        out.extend(computed);
        Summary {
            operation,
            properties: out,
        }
    }
}

fn partition_key(spec_id: i32, f: &DataFile) -> String {
    // Java keys by the partition path, which does not name the spec
    let _ = spec_id;
    format!("{:?}", f.partition)
}
