//! Snapshot summaries (Appendix F "Optional Snapshot Summary Fields"), built as Java's
//! `SnapshotSummary.Builder` builds them: counts of what a snapshot added and removed,
//! only where non-zero, the number of changed partitions, and running totals carried
//! from the branch's previous snapshot.

use std::collections::HashMap;

use crate::manifest::{DataContentType, DataFile};
use crate::spec::partition::PartitionSpec;
use crate::spec::snapshot::{Operation, Snapshot, Summary};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::PrimitiveType;
use crate::write::human::partition_to_path;

/// Java's `write.summary.partition-limit` (default 0: no per-partition summaries).
pub const PARTITION_SUMMARY_LIMIT: &str = "write.summary.partition-limit";

/// What a snapshot changed (or changed in one partition), accumulated file by file (Java's
/// `SnapshotSummary.UpdateMetrics`).
#[derive(Debug, Clone, Default)]
struct Metrics {
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
}

/// What one snapshot changed, accumulated file by file.
#[derive(Debug, Clone, Default)]
pub struct SummaryBuilder {
    metrics: Metrics,
    /// Metrics by partition path (Java keys partitions by `PartitionSpec.partitionToPath`).
    partitions: HashMap<String, Metrics>,
    /// Partition specs by id with their partition field types, to name partitions.
    specs: HashMap<i32, (PartitionSpec, Vec<PrimitiveType>)>,
    /// `write.summary.partition-limit`: per-partition summaries when at most this many
    /// partitions changed.
    partition_limit: i64,
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

impl Metrics {
    fn added_file(&mut self, f: &DataFile) {
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

    fn removed_file(&mut self, f: &DataFile) {
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

    /// The non-zero counts, in Java's order.
    fn add_to(&self, out: &mut Vec<(String, String)>) {
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
    }
}

impl SummaryBuilder {
    /// A builder naming partitions by `md`'s partition specs and limiting per-partition
    /// summaries by its `write.summary.partition-limit`.
    pub fn for_table(md: &TableMetadata) -> SummaryBuilder {
        let mut specs = HashMap::new();
        if let Some(schema) = md.current_schema() {
            for spec in &md.partition_specs {
                let types = spec
                    .partition_type(schema)
                    .map(|t| {
                        t.fields
                            .iter()
                            .filter_map(|f| f.field_type.as_primitive().cloned())
                            .collect()
                    })
                    .unwrap_or_default();
                specs.insert(spec.spec_id, (spec.clone(), types));
            }
        }
        SummaryBuilder {
            specs,
            partition_limit: md
                .property(PARTITION_SUMMARY_LIMIT)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            ..Default::default()
        }
    }

    fn partition(&mut self, spec_id: i32, f: &DataFile) -> &mut Metrics {
        let path = match self.specs.get(&spec_id) {
            Some((spec, types)) => partition_to_path(spec, types, &f.partition),
            None => format!("{:?}", f.partition),
        };
        self.partitions.entry(path).or_default()
    }

    pub fn added_file(&mut self, spec_id: i32, f: &DataFile) {
        self.metrics.added_file(f);
        self.partition(spec_id, f).added_file(f);
    }

    pub fn removed_file(&mut self, spec_id: i32, f: &DataFile) {
        self.metrics.removed_file(f);
        self.partition(spec_id, f).removed_file(f);
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
        self.metrics.add_to(&mut out);
        out.push((
            "changed-partition-count".to_string(),
            self.partitions.len().to_string(),
        ));
        // Java's per-partition summaries: `partitions.<path>` (not for the unpartitioned
        // path "") with the partition's counts as `key=value` pairs joined by commas
        if !self.partitions.is_empty() && self.partitions.len() as i64 <= self.partition_limit {
            out.push((
                "partition-summaries-included".to_string(),
                "true".to_string(),
            ));
            let mut paths: Vec<&String> = self.partitions.keys().collect();
            paths.sort();
            for path in paths.into_iter().filter(|p| !p.is_empty()) {
                let mut kv = Vec::new();
                self.partitions[path].add_to(&mut kv);
                let text: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push((format!("partitions.{path}"), text.join(",")));
            }
        }

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
