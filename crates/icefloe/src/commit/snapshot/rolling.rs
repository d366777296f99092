//! Writing entries into manifests that roll at a target size, as Java's
//! `RollingManifestWriter` (new files: the size checked every 250 entries) and
//! `BaseRewriteManifests` (the size checked before every entry) do. The size compared is
//! the manifest's length so far: its header and finished Avro blocks.

use super::SnapshotProducer;
use crate::error::Result;
use crate::io::FileIO;
use crate::manifest::{Codec, ManifestContent, ManifestFile, ManifestWriter};
use crate::spec::partition::PartitionSpec;
use crate::spec::table_metadata::TableMetadata;

/// Java's `RollingManifestWriter.ROWS_DIVISOR`: how often the size is checked.
pub(super) const ROLL_ROWS_DIVISOR: u64 = 250;

/// Where new manifests go: the table, the new snapshot, the metadata folder and the codec.
pub(super) struct WriteContext<'a> {
    pub io: &'a dyn FileIO,
    pub md: &'a TableMetadata,
    pub snapshot_id: i64,
    pub dir: &'a str,
    pub codec: Codec,
}

/// When a rolling writer starts a new manifest.
#[derive(Clone, Copy)]
pub(super) struct Roll {
    /// The length at which the current manifest is finished.
    pub max_size: u64,
    /// The length is checked before every this-many-th entry.
    pub check_every: u64,
}

impl SnapshotProducer {
    /// Adds `items` (with `add`) to new `content` manifests of `spec`, starting a new
    /// manifest when the current one has reached `roll.max_size`. Returns the manifests
    /// written (none for no items); they are this attempt's files.
    pub(super) fn write_rolling<T>(
        &mut self,
        ctx: &WriteContext<'_>,
        content: ManifestContent,
        spec: &PartitionSpec,
        roll: Roll,
        items: impl IntoIterator<Item = T>,
        mut add: impl FnMut(&mut ManifestWriter, T) -> Result<()>,
    ) -> Result<Vec<ManifestFile>> {
        let schema = super::current_schema(ctx.md)?;
        let fv = ctx.md.format_version;
        let new_writer =
            || ManifestWriter::new(fv, content, schema, spec, ctx.snapshot_id, ctx.codec);
        let mut out = Vec::new();
        let mut w = new_writer()?;
        let mut rows = 0u64;
        for item in items {
            if rows > 0 && rows.is_multiple_of(roll.check_every) && w.length() >= roll.max_size {
                let path = self.next_manifest_path(ctx.dir);
                self.written.push(path.clone());
                out.push(std::mem::replace(&mut w, new_writer()?).finish(ctx.io, &path)?);
                rows = 0;
            }
            rows += 1;
            add(&mut w, item)?;
        }
        if rows > 0 {
            let path = self.next_manifest_path(ctx.dir);
            self.written.push(path.clone());
            out.push(w.finish(ctx.io, &path)?);
        }
        Ok(out)
    }
}
