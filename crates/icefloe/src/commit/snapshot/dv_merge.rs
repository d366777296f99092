//! Several new DVs for one data file in one commit ("Deletion Vectors": a data file has at
//! most one): merged into one new DV, as Java 1.11's `MergingSnapshotProducer.mergeDVs`
//! and `DVUtil.mergeAndWriteDVsIfRequired` do. The DVs of a data file must share their
//! partition spec and partition; their positions are unioned and written, one blob per
//! data file, to one new Puffin file `merged-dvs-<snapshot id>-<n>.puffin` where the table's
//! location provider puts data files. A data file with a single new DV keeps it unchanged.

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::puffin::dv::deletion_vector_blob;
use crate::puffin::{read_entry_deletion_vector, DeletionVector, DvEntry, PuffinWriter};
use crate::spec::table_metadata::TableMetadata;
use crate::write::location::LocationProvider;

use super::validate::is_dv;

/// A new delete file with its partition spec id (`None`: the default spec).
type NewDelete = (Option<i32>, DataFile);

/// The new delete files after merging: in Java's order (DVs kept as they are, then the
/// merged DVs, then the other delete files), and the Puffin file written, if any.
pub(super) struct Merged {
    pub files: Vec<NewDelete>,
    pub written: Option<String>,
}

/// Merges the new DVs that share a referenced data file; `n` numbers the merged Puffin file
/// (Java counts merge attempts from 1).
pub(super) fn merge_new_dvs(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshot_id: i64,
    n: u32,
    deletes: &[NewDelete],
) -> Result<Merged> {
    // DVs by referenced data file, in the order the data files first appear
    let mut by_target: Vec<(&str, Vec<&NewDelete>)> = Vec::new();
    let mut others = Vec::new();
    for d in deletes {
        match d.1.referenced_data_file.as_deref().filter(|_| is_dv(&d.1)) {
            Some(t) => match by_target.iter_mut().find(|(k, _)| *k == t) {
                Some((_, v)) => v.push(d),
                None => by_target.push((t, vec![d])),
            },
            None => others.push(d.clone()),
        }
    }
    let mut files = Vec::new();
    let mut to_merge = Vec::new();
    for (target, dvs) in by_target {
        match dvs.as_slice() {
            [one] => files.push((*one).clone()),
            _ => to_merge.push((target, dvs)),
        }
    }
    if to_merge.is_empty() {
        files.extend(others);
        return Ok(Merged {
            files,
            written: None,
        });
    }
    // Java: the table's LocationProvider.newDataLocation(file name)
    let location = LocationProvider::new(&md.location, &md.properties, None)?
        .new_data_location("", &format!("merged-dvs-{snapshot_id}-{n}.puffin"));
    let mut writer = PuffinWriter::new();
    let mut blobs = Vec::new();
    for (target, dvs) in &to_merge {
        let (spec, first) = (dvs[0].0.unwrap_or(md.default_spec_id), &dvs[0].1);
        let mut merged = DeletionVector::new();
        for (s, f) in dvs {
            check_can_merge(target, spec, first, s.unwrap_or(md.default_spec_id), f)?;
            merged.merge(&read_dv(io, f)?);
        }
        let (blob, bytes) = deletion_vector_blob(target, &merged)?;
        let meta = writer.add_blob(blob, &bytes)?;
        blobs.push((dvs[0].0, first, meta, merged.cardinality()));
    }
    let written = writer.write(io, &location)?;
    for (spec_id, first, meta, cardinality) in blobs {
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            location.clone(),
            FileFormat::Puffin,
            first.partition.clone(),
            i64::try_from(cardinality).unwrap_or(i64::MAX),
            i64::try_from(written.file_size).unwrap_or(i64::MAX),
        );
        f.referenced_data_file = first.referenced_data_file.clone();
        f.content_offset = Some(meta.offset as i64);
        f.content_size_in_bytes = Some(meta.length as i64);
        files.push((spec_id, f));
    }
    files.extend(others);
    Ok(Merged {
        files,
        written: Some(location),
    })
}

/// Java's `DVUtil.validateCanMerge` (new files carry no data sequence number yet).
fn check_can_merge(
    target: &str,
    spec: i32,
    first: &DataFile,
    other_spec: i32,
    other: &DataFile,
) -> Result<()> {
    if spec != other_spec {
        return Err(Error::invalid_argument(format!(
            "Cannot merge DVs, mismatched partition specs ({spec}, {other_spec}) for {target}"
        )));
    }
    if first.partition != other.partition {
        return Err(Error::invalid_argument(format!(
            "Cannot merge DVs, mismatched partition tuples ({:?}, {:?}) for {target}",
            first.partition, other.partition
        )));
    }
    Ok(())
}

/// Reads a new DV by its manifest fields, checked against them (its cardinality is its
/// record count; the Puffin footer agrees on its data file).
fn read_dv(io: &dyn FileIO, f: &DataFile) -> Result<DeletionVector> {
    read_entry_deletion_vector(io, &DvEntry::of(f)?)
}
