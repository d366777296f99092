//! Manifest merging for merge appends, as Java's `ManifestMergeManager`: manifests are
//! grouped by partition spec (highest spec id first), each group is bin-packed by
//! manifest length to `commit.manifest.target-size-bytes` from the end with a lookback of
//! one (so the order of manifests is kept and the under-filled bin is the newest), and a
//! bin of several manifests becomes one manifest — except the bin that holds the first
//! manifest (this commit's new files), which is merged only once it has at least
//! `commit.manifest.min-count-to-merge` manifests.

use std::collections::HashMap;

use super::{current_schema, manifest_spec};
use crate::error::Result;
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, Codec, ManifestContent, ManifestEntry, ManifestFile, ManifestSource,
    ManifestStatus, ManifestWriter, ReadManifestOptions,
};
use crate::spec::table_metadata::TableMetadata;

pub(super) struct MergeSettings {
    pub enabled: bool,
    pub target_size_bytes: u64,
    pub min_count_to_merge: usize,
}

pub(super) struct MergeContext<'a> {
    pub io: &'a dyn FileIO,
    pub md: &'a TableMetadata,
    pub snapshot_id: i64,
    pub codec: Codec,
    pub dir: &'a str,
    pub cache: &'a mut HashMap<Vec<String>, ManifestFile>,
    pub written: &'a mut Vec<String>,
    pub manifest_count: &'a mut u32,
    pub commit_uuid: &'a str,
    /// Manifests of earlier snapshots merged away.
    pub replaced: usize,
    /// The data sequence number this snapshot's new data files were given (a rewrite's).
    pub own_sequence_number: Option<i64>,
    /// The data sequence numbers of this snapshot's new delete files that keep one.
    pub own_delete_sequence_numbers: &'a HashMap<(String, Option<i64>), i64>,
}

/// Java's `BinPacking.ListPacker.packEnd` with lookback 1: packs from the end, a new bin
/// whenever the item does not fit the open one; bins and their items keep list order.
pub(super) fn pack_end(weights: &[u64], target: u64) -> Vec<Vec<usize>> {
    let mut bins: Vec<Vec<usize>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut open_weight: u64 = 0;
    for i in (0..weights.len()).rev() {
        let w = weights[i];
        if !open.is_empty() && open_weight.saturating_add(w) > target {
            bins.push(std::mem::take(&mut open));
            open_weight = 0;
        }
        open.push(i);
        open_weight = open_weight.saturating_add(w);
    }
    if !open.is_empty() {
        bins.push(open);
    }
    for b in &mut bins {
        b.reverse();
    }
    bins.reverse();
    bins
}

pub(super) fn merge_manifests(
    ctx: &mut MergeContext<'_>,
    settings: &MergeSettings,
    manifests: Vec<ManifestFile>,
) -> Result<Vec<ManifestFile>> {
    if !settings.enabled || manifests.is_empty() {
        return Ok(manifests);
    }
    let first_path = manifests[0].manifest_path.clone();
    let mut spec_ids: Vec<i32> = manifests.iter().map(|m| m.partition_spec_id).collect();
    spec_ids.sort_unstable_by(|a, b| b.cmp(a));
    spec_ids.dedup();
    let mut out = Vec::with_capacity(manifests.len());
    for spec_id in spec_ids {
        let group: Vec<&ManifestFile> = manifests
            .iter()
            .filter(|m| m.partition_spec_id == spec_id)
            .collect();
        let weights: Vec<u64> = group
            .iter()
            .map(|m| u64::try_from(m.manifest_length).unwrap_or(0))
            .collect();
        for bin in pack_end(&weights, settings.target_size_bytes) {
            let bin: Vec<&ManifestFile> = bin.iter().map(|i| group[*i]).collect();
            let has_first = bin.iter().any(|m| m.manifest_path == first_path);
            if bin.len() == 1 || (has_first && bin.len() < settings.min_count_to_merge) {
                out.extend(bin.into_iter().cloned());
            } else {
                out.push(merge_bin(ctx, spec_id, &bin)?);
            }
        }
    }
    Ok(out)
}

fn merge_bin(
    ctx: &mut MergeContext<'_>,
    spec_id: i32,
    bin: &[&ManifestFile],
) -> Result<ManifestFile> {
    let key: Vec<String> = bin.iter().map(|m| m.manifest_path.clone()).collect();
    let replaced = bin
        .iter()
        .filter(|m| m.added_snapshot_id != ctx.snapshot_id)
        .count();
    if let Some(m) = ctx.cache.get(&key) {
        ctx.replaced += replaced;
        return Ok(m.clone());
    }
    let schema = current_schema(ctx.md)?;
    let spec = manifest_spec(ctx.md, spec_id)?;
    let content = bin.first().map_or(ManifestContent::Data, |m| m.content);
    let mut w = ManifestWriter::new(
        ctx.md.format_version,
        content,
        schema,
        spec,
        ctx.snapshot_id,
        ctx.codec,
    )?;
    for mf in bin {
        let m = read_manifest(
            ManifestSource::file(ctx.io, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(mf),
        )?;
        let own = mf.added_snapshot_id == ctx.snapshot_id;
        for e in m.entries {
            let from_this_snapshot = e.snapshot_id == Some(ctx.snapshot_id);
            match e.status {
                // only this snapshot's deletes are kept; older ones are history
                ManifestStatus::Deleted if from_this_snapshot => w.add_entry(e)?,
                ManifestStatus::Deleted => {}
                ManifestStatus::Added if from_this_snapshot => {
                    // sequence numbers stay unassigned (inherited from the new list row)
                    let entry = if own {
                        let seq = match mf.content {
                            ManifestContent::Data => ctx.own_sequence_number,
                            ManifestContent::Deletes => ctx
                                .own_delete_sequence_numbers
                                .get(&(e.data_file.file_path.clone(), e.data_file.content_offset))
                                .copied(),
                        };
                        ManifestEntry {
                            sequence_number: seq,
                            file_sequence_number: None,
                            ..e
                        }
                    } else {
                        e
                    };
                    w.add_entry(entry)?
                }
                _ => {
                    let seq = e.sequence_number.unwrap_or(0);
                    let sid = e.snapshot_id.unwrap_or(mf.added_snapshot_id);
                    w.existing(e.data_file, sid, seq, e.file_sequence_number)?
                }
            }
        }
    }
    let n = *ctx.manifest_count;
    *ctx.manifest_count += 1;
    let path = format!("{}/{}-m{n}.avro", ctx.dir, ctx.commit_uuid);
    ctx.written.push(path.clone());
    let merged = w.finish(ctx.io, &path)?;
    ctx.cache.insert(key, merged.clone());
    ctx.replaced += replaced;
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::pack_end;

    #[test]
    fn packs_from_the_end_keeping_order() {
        // target 10: from the end 4+5 fit, then 6 does not; 6+3 fit; 8 alone
        assert_eq!(
            pack_end(&[8, 3, 6, 5, 4], 10),
            vec![vec![0], vec![1, 2], vec![3, 4]]
        );
        assert_eq!(pack_end(&[20], 10), vec![vec![0]]);
        assert!(pack_end(&[], 10).is_empty());
    }
}
