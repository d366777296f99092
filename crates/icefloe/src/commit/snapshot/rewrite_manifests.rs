//! Rewriting manifests: a `replace` snapshot whose live files do not change, only the
//! manifests that list them. Entries are kept as EXISTING with the snapshot id and the
//! data and file sequence numbers they had.
//!
//! Two layouts:
//! - [`ManifestLayout::Compact`] (the default) is what Java users run: Iceberg's Spark
//!   action and the `rewrite_manifests` procedure (`RewriteManifestsSparkAction`, Java
//!   1.11). The data manifests of one partition spec (the table's default spec unless
//!   another is given), then its delete manifests, are rewritten into
//!   `ceil(total manifest bytes / commit.manifest.target-size-bytes)` manifests. For a
//!   partitioned spec the entries are sorted by partition (or by the given partition
//!   fields), nulls first, and cut into that many runs, so each new manifest covers a
//!   narrow range of partitions and prunes well; new manifests roll at 1.2 times the target
//!   size, checked every 250 entries (Java's `RollingManifestWriter`). A content with no
//!   manifest of the spec, or with a single manifest that already fits the target, is left
//!   alone. Java's action spreads the entries with Spark's `repartitionByRange` (bounds
//!   from a sample); icefloe cuts the sorted entries into runs of equal counts instead,
//!   never splitting the entries of one partition key, so the number and ranges of the new
//!   manifests can differ from Java's when keys are skewed. As in Java, manifests without
//!   file counts cannot be rewritten, and the summary has `entries-processed` 0 (Java
//!   commits the action through `deleteManifest`/`addManifest`).
//! - [`ManifestLayout::ByPartition`] is Java's core `RewriteManifests` with
//!   `clusterBy(partition)`: every data manifest rewritten, one manifest per spec and
//!   partition (rolling as soon as the target size is reached, checked on every entry),
//!   delete manifests kept.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use super::rolling::{Roll, WriteContext, ROLL_ROWS_DIVISOR};
use super::{manifest_spec, manifest_target_size, SnapshotProducer};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, ManifestContent, ManifestEntry, ManifestFile, ManifestSource, ManifestWriter,
    ReadManifestOptions,
};
use crate::spec::partition::PartitionSpec;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::Literal;

/// How a rewrite of manifests regroups the live entries (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestLayout {
    /// Java's Spark action `rewrite_manifests`.
    Compact {
        /// The partition spec whose manifests are rewritten (the default spec if `None`).
        spec_id: Option<i32>,
        /// Partition field names to sort entries by, in order (all fields if `None`).
        sort_by: Option<Vec<String>>,
    },
    /// Java's `RewriteManifests.clusterBy(partition)`: one manifest per spec and partition.
    ByPartition,
}

impl Default for ManifestLayout {
    fn default() -> Self {
        ManifestLayout::Compact {
            spec_id: None,
            sort_by: None,
        }
    }
}

/// What a rewrite made of the parent's manifests.
pub(super) struct Rewritten {
    /// The new manifests, then the kept ones in their order.
    pub manifests: Vec<ManifestFile>,
    /// How many of the parent's manifests were replaced.
    pub replaced: usize,
    /// The summary's `entries-processed`.
    pub entries_processed: usize,
}

/// The manifests of one content that a compaction rewrites.
struct Selection<'a> {
    content: ManifestContent,
    manifests: Vec<&'a ManifestFile>,
    /// How many manifests to write (before rolling).
    target_count: u64,
}

/// The spec and sort-key positions of a compaction, checked against the table.
fn compact_spec<'m>(
    md: &'m TableMetadata,
    spec_id: Option<i32>,
    sort_by: Option<&[String]>,
) -> Result<(&'m PartitionSpec, Vec<usize>)> {
    let id = spec_id.unwrap_or(md.default_spec_id);
    let spec = md
        .spec_by_id(id)
        .ok_or_else(|| Error::invalid_argument(format!("invalid spec id {id}: no such spec")))?;
    let keys = match sort_by {
        None => (0..spec.fields.len()).collect(),
        Some(names) => {
            let missing: Vec<&String> = names
                .iter()
                .filter(|n| !spec.fields.iter().any(|f| &f.name == *n))
                .collect();
            if !missing.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "cannot sort manifests by {missing:?}: not fields of partition spec {id}"
                )));
            }
            names
                .iter()
                .filter_map(|n| spec.fields.iter().position(|f| &f.name == n))
                .collect()
        }
    };
    Ok((spec, keys))
}

/// The manifests of `spec` a compaction rewrites, data first, as Java's action chooses
/// them (see the module documentation).
fn select<'a>(
    md: &TableMetadata,
    spec: &PartitionSpec,
    manifests: &'a [ManifestFile],
) -> Result<Vec<Selection<'a>>> {
    let target = manifest_target_size(md).max(1);
    let mut out = Vec::new();
    for content in [ManifestContent::Data, ManifestContent::Deletes] {
        let matching: Vec<&ManifestFile> = manifests
            .iter()
            .filter(|m| m.content == content && m.partition_spec_id == spec.spec_id)
            .collect();
        let mut total = 0u64;
        for m in &matching {
            let counted = m.added_files_count.is_some()
                && m.existing_files_count.is_some()
                && m.deleted_files_count.is_some();
            if !counted {
                return Err(Error::validation_failed(format!(
                    "no file counts in manifest {}: it cannot be rewritten",
                    m.manifest_path
                )));
            }
            total = total.saturating_add(u64::try_from(m.manifest_length).unwrap_or(0));
        }
        let target_count = total.div_ceil(target);
        if matching.is_empty() || (target_count == 1 && matching.len() == 1) {
            continue;
        }
        out.push(Selection {
            content,
            manifests: matching,
            target_count,
        });
    }
    Ok(out)
}

/// How many of the table's current manifests a compaction with these settings would
/// rewrite (0: nothing to do, and Java's action would not commit).
pub fn manifests_to_rewrite(
    io: &dyn FileIO,
    md: &TableMetadata,
    spec_id: Option<i32>,
    sort_by: Option<&[String]>,
) -> Result<usize> {
    let (spec, _) = compact_spec(md, spec_id, sort_by)?;
    let Some(list) = md
        .current_snapshot()
        .and_then(|s| s.manifest_list.as_deref())
    else {
        return Ok(0);
    };
    if md.format_version >= 4 {
        if let Some(n) = v4_entries_to_compact(io, md)? {
            return Ok(n);
        }
    }
    let manifests = crate::manifest::read_manifest_list(io, list)?;
    Ok(select(md, spec, &manifests)?
        .iter()
        .map(|s| s.manifests.len())
        .sum())
}

/// On a v4 snapshot whose top is a root: how many of its entries a rewrite of manifests
/// (the compaction of the whole tree, `docs/v4.md`) would change: root files, leaves with
/// a manifest DV, and leaves written before an upgrade. 0 when the tree is already
/// compact (only v4 leaves without DVs). `None` for a manifest list.
fn v4_entries_to_compact(io: &dyn FileIO, md: &TableMetadata) -> Result<Option<usize>> {
    use crate::manifest::v4::tree::{is_live, read_snapshot_top, SnapshotTop};
    let Some(snapshot) = md.current_snapshot() else {
        return Ok(Some(0));
    };
    let partitioning = crate::manifest::v4::V4Layout::for_table(md)?;
    let SnapshotTop::Root(root) = read_snapshot_top(io, &partitioning, snapshot)? else {
        return Ok(None);
    };
    Ok(Some(
        root.iter()
            .filter(|e| is_live(&e.tracking))
            .filter(|e| {
                !e.content_type.is_manifest()
                    || e.format_version < 4
                    || e.manifest_info.as_ref().is_some_and(|i| i.dv.is_some())
            })
            .count(),
    ))
}

/// Orders partition tuples by the values at `keys`, nulls first (Spark's ascending sort).
fn compare_keys(a: &[Option<Literal>], b: &[Option<Literal>], keys: &[usize]) -> Ordering {
    for &k in keys {
        let order = match (a.get(k).cloned().flatten(), b.get(k).cloned().flatten()) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.compare(&y).unwrap_or(Ordering::Equal),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// Cuts `n` sorted entries into at most `count` runs of about equal length: the k-th cut
/// is at `k * n / count`, moved past entries equal to the one before it (`same(i)`: entry
/// `i` has the key of entry `i - 1`), so that one key is never split between runs.
fn runs(n: usize, count: u64, same: impl Fn(usize) -> bool) -> Vec<std::ops::Range<usize>> {
    let count = u128::from(count.max(1));
    let mut out = Vec::new();
    let mut start = 0;
    for k in 1..=count {
        let ideal = usize::try_from(n as u128 * k / count).unwrap_or(n);
        let mut end = ideal.max(start);
        if end == start {
            continue;
        }
        while end < n && same(end) {
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

impl SnapshotProducer {
    /// Rewrites the parent's manifests with this producer's layout.
    pub(super) fn rewrite_manifests_of(
        &mut self,
        ctx: &WriteContext<'_>,
        parent_manifests: Vec<ManifestFile>,
    ) -> Result<Rewritten> {
        match self.layout.clone() {
            ManifestLayout::ByPartition => self.cluster_by_partition(ctx, parent_manifests),
            ManifestLayout::Compact { spec_id, sort_by } => {
                self.compact(ctx, parent_manifests, spec_id, sort_by.as_deref())
            }
        }
    }

    /// Java's Spark action: the manifests of one spec sorted into target-sized runs.
    fn compact(
        &mut self,
        ctx: &WriteContext<'_>,
        parent_manifests: Vec<ManifestFile>,
        spec_id: Option<i32>,
        sort_by: Option<&[String]>,
    ) -> Result<Rewritten> {
        let (spec, keys) = compact_spec(ctx.md, spec_id, sort_by)?;
        let partitioned = !spec.is_unpartitioned();
        let roll = Roll {
            max_size: (1.2 * manifest_target_size(ctx.md) as f64) as u64,
            check_every: ROLL_ROWS_DIVISOR,
        };
        let mut out = Vec::new();
        let mut rewritten = HashSet::new();
        for s in select(ctx.md, spec, &parent_manifests)? {
            let mut entries = Vec::new();
            for mf in &s.manifests {
                rewritten.insert(mf.manifest_path.clone());
                entries.extend(live_entries(ctx.io, mf)?);
            }
            let order = |a: &ManifestEntry, b: &ManifestEntry| {
                compare_keys(&a.data_file.partition, &b.data_file.partition, &keys)
            };
            if partitioned {
                // stable: entries of one partition keep their manifest order
                entries.sort_by(order);
            }
            let same = |i: usize| partitioned && order(&entries[i - 1], &entries[i]).is_eq();
            let cuts = runs(entries.len(), s.target_count, same);
            let mut entries = entries.into_iter();
            for run in cuts {
                let run_entries = entries.by_ref().take(run.len());
                out.extend(self.write_rolling(
                    ctx,
                    s.content,
                    spec,
                    roll,
                    run_entries,
                    existing(ctx.snapshot_id),
                )?);
            }
        }
        let replaced = rewritten.len();
        out.extend(
            parent_manifests
                .into_iter()
                .filter(|m| !rewritten.contains(&m.manifest_path)),
        );
        Ok(Rewritten {
            manifests: out,
            replaced,
            entries_processed: 0,
        })
    }

    /// The parent's data manifests rewritten one per spec and partition (the rewritten
    /// manifests first, then the kept delete manifests).
    fn cluster_by_partition(
        &mut self,
        ctx: &WriteContext<'_>,
        parent_manifests: Vec<ManifestFile>,
    ) -> Result<Rewritten> {
        let mut kept = Vec::new();
        let mut replaced = 0;
        let mut clusters: BTreeMap<(i32, String), Vec<ManifestEntry>> = BTreeMap::new();
        let mut entries = 0;
        for mf in parent_manifests {
            if mf.content != ManifestContent::Data {
                kept.push(mf);
                continue;
            }
            replaced += 1;
            for e in live_entries(ctx.io, &mf)? {
                entries += 1;
                let key = (mf.partition_spec_id, format!("{:?}", e.data_file.partition));
                clusters.entry(key).or_default().push(e);
            }
        }
        // Java's RewriteManifests writer rolls as soon as the target size is reached
        let roll = Roll {
            max_size: manifest_target_size(ctx.md),
            check_every: 1,
        };
        let mut out = Vec::new();
        for ((spec_id, _), group) in clusters {
            let spec = manifest_spec(ctx.md, spec_id)?;
            let data = ManifestContent::Data;
            out.extend(self.write_rolling(
                ctx,
                data,
                spec,
                roll,
                group,
                existing(ctx.snapshot_id),
            )?);
        }
        out.extend(kept);
        Ok(Rewritten {
            manifests: out,
            replaced,
            entries_processed: entries,
        })
    }
}

/// Adds rewritten entries as EXISTING, with the snapshot ids and sequence numbers they had
/// (`snapshot_id` for an entry without one).
fn existing(snapshot_id: i64) -> impl FnMut(&mut ManifestWriter, ManifestEntry) -> Result<()> {
    move |w, e| {
        let sid = e.snapshot_id.unwrap_or(snapshot_id);
        let seq = e.sequence_number.unwrap_or(0);
        w.existing(e.data_file, sid, seq, e.file_sequence_number)
    }
}

/// The live entries of a manifest, with the snapshot id the manifest gives them when they
/// have none.
fn live_entries(io: &dyn FileIO, mf: &ManifestFile) -> Result<Vec<ManifestEntry>> {
    let m = read_manifest(
        ManifestSource::file(io, &mf.manifest_path),
        &ReadManifestOptions::default().inherit_from(mf),
    )?;
    Ok(m.entries
        .into_iter()
        .filter(ManifestEntry::is_live)
        .map(|mut e| {
            e.snapshot_id = e.snapshot_id.or(Some(mf.added_snapshot_id));
            e
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_are_about_equal_and_never_split_a_key() {
        let keys = [1, 1, 1, 2, 3, 3, 4, 4, 4, 4];
        let same = |i: usize| keys[i] == keys[i - 1];
        assert_eq!(runs(10, 2, same), vec![0..6, 6..10]);
        assert_eq!(runs(10, 3, same), vec![0..3, 3..6, 6..10]);
        assert_eq!(runs(7, 2, |_| false), vec![0..3, 3..7]);
        assert_eq!(runs(10, 1, same), vec![0..10]);
        // one key: one run whatever the count
        assert_eq!(runs(5, 4, |_| true), vec![0..5]);
        assert_eq!(runs(0, 3, |_| false), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(runs(4, 8, |_| false), vec![0..1, 1..2, 2..3, 3..4]);
    }
}
