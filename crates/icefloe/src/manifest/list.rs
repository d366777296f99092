//! Manifest lists: reading (v1 lists get the v2 defaults of Appendix E: sequence numbers
//! 0, content data) and writing with the Avro schema Java writes for each version,
//! assigning sequence numbers to new manifests and, in v3, first row ids to data
//! manifests that have none ("First Row ID Assignment").

use serde_json::{json, Value};

use super::avro::{
    put_bool, put_bytes, put_int, put_long, AvroSchema, Container, ContainerWriter, Cursor,
};
use super::avro_values::{for_each_item, opt_bool, opt_bytes, opt_int, opt_long, opt_str, req};
use super::writer::{avro_field, avro_list};
use super::{Codec, FieldSummary, ManifestContent, ManifestFile, UNASSIGNED_SEQUENCE_NUMBER};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::MAX_FORMAT_VERSION;

/// Reads a manifest list.
pub fn read_manifest_list(io: &dyn FileIO, location: &str) -> Result<Vec<ManifestFile>> {
    let bytes = io.read(location)?;
    read_manifest_list_bytes(&bytes).map_err(|e| e.in_file(location))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    Path,
    Length,
    SpecId,
    Content,
    Seq,
    MinSeq,
    SnapshotId,
    AddedFiles,
    ExistingFiles,
    DeletedFiles,
    AddedRows,
    ExistingRows,
    DeletedRows,
    Partitions,
    KeyMetadata,
    FirstRowId,
    Skip,
}

const FIELDS: &[(i32, &str, &str, T)] = &[
    (500, "manifest_path", "", T::Path),
    (501, "manifest_length", "", T::Length),
    (502, "partition_spec_id", "", T::SpecId),
    (517, "content", "", T::Content),
    (515, "sequence_number", "", T::Seq),
    (516, "min_sequence_number", "", T::MinSeq),
    (503, "added_snapshot_id", "", T::SnapshotId),
    (
        504,
        "added_files_count",
        "added_data_files_count",
        T::AddedFiles,
    ),
    (
        505,
        "existing_files_count",
        "existing_data_files_count",
        T::ExistingFiles,
    ),
    (
        506,
        "deleted_files_count",
        "deleted_data_files_count",
        T::DeletedFiles,
    ),
    (512, "added_rows_count", "", T::AddedRows),
    (513, "existing_rows_count", "", T::ExistingRows),
    (514, "deleted_rows_count", "", T::DeletedRows),
    (507, "partitions", "", T::Partitions),
    (519, "key_metadata", "", T::KeyMetadata),
    (520, "first_row_id", "", T::FirstRowId),
];

fn name_of(t: T) -> &'static str {
    FIELDS.iter().find(|f| f.3 == t).map(|f| f.1).unwrap_or("")
}

/// Reads a manifest list from its bytes.
pub fn read_manifest_list_bytes(bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    let c = Container::open(bytes)?;
    if let Some(v) = c.meta_str("format-version")? {
        let v: i64 = v.trim().parse().map_err(|_| {
            Error::invalid_metadata("format-version", format!("'{v}' is not a number"))
        })?;
        if !(1..=i64::from(MAX_FORMAT_VERSION)).contains(&v) {
            return Err(Error::UnsupportedFormatVersion {
                at: crate::error::Location {
                    file: String::new(),
                    field: "format-version".into(),
                },
                version: v,
                max: MAX_FORMAT_VERSION,
            });
        }
    }
    let not_list =
        |m: String| Error::invalid_metadata("avro.schema", format!("not a manifest list: {m}"));
    let AvroSchema::Record(top) = &c.schema else {
        return Err(not_list("the Avro schema is not a record".into()));
    };
    let plan: Vec<(T, &AvroSchema)> = top
        .fields
        .iter()
        .map(|f| {
            let t = FIELDS
                .iter()
                .find(|(id, n1, n2, _)| match f.field_id {
                    Some(fid) => fid == *id,
                    None => f.name == *n1 || (!n2.is_empty() && f.name == *n2),
                })
                .map_or(T::Skip, |x| x.3);
            (t, &f.schema)
        })
        .collect();
    for t in [T::Path, T::Length, T::SpecId, T::SnapshotId] {
        if !plan.iter().any(|(p, _)| *p == t) {
            return Err(not_list(format!(
                "required field '{}' is missing",
                name_of(t)
            )));
        }
    }
    let mut out = Vec::new();
    c.for_each_block(|count, block| {
        let mut cur = Cursor::new(block);
        for _ in 0..count {
            let i = out.len();
            let mf = decode(&mut cur, &plan).map_err(|e| e.under(&format!("manifests[{i}]")))?;
            out.push(mf);
        }
        Ok(())
    })?;
    Ok(out)
}

fn decode(cur: &mut Cursor<'_>, plan: &[(T, &AvroSchema)]) -> Result<ManifestFile> {
    let mut m = ManifestFile {
        manifest_path: String::new(),
        manifest_length: 0,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: 0,
        min_sequence_number: 0,
        added_snapshot_id: 0,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    };
    for (t, s) in plan {
        let name = name_of(*t);
        match t {
            T::Path => m.manifest_path = req(opt_str(cur, s), name)?.to_string(),
            T::Length => m.manifest_length = req(opt_long(cur, s), name)?,
            T::SpecId => m.partition_spec_id = req(opt_int(cur, s), name)?,
            T::Content => {
                if let Some(v) = opt_int(cur, s).map_err(|e| e.under(name))? {
                    m.content = ManifestContent::from_id(v).ok_or_else(|| {
                        Error::invalid_metadata(
                            name,
                            format!("unknown manifest content {v} (expected 0 or 1)"),
                        )
                    })?;
                }
            }
            T::Seq => m.sequence_number = opt_long(cur, s).map_err(|e| e.under(name))?.unwrap_or(0),
            T::MinSeq => {
                m.min_sequence_number = opt_long(cur, s).map_err(|e| e.under(name))?.unwrap_or(0)
            }
            T::SnapshotId => m.added_snapshot_id = req(opt_long(cur, s), name)?,
            T::AddedFiles => m.added_files_count = opt_int(cur, s).map_err(|e| e.under(name))?,
            T::ExistingFiles => {
                m.existing_files_count = opt_int(cur, s).map_err(|e| e.under(name))?
            }
            T::DeletedFiles => {
                m.deleted_files_count = opt_int(cur, s).map_err(|e| e.under(name))?
            }
            T::AddedRows => m.added_rows_count = opt_long(cur, s).map_err(|e| e.under(name))?,
            T::ExistingRows => {
                m.existing_rows_count = opt_long(cur, s).map_err(|e| e.under(name))?
            }
            T::DeletedRows => m.deleted_rows_count = opt_long(cur, s).map_err(|e| e.under(name))?,
            T::Partitions => m.partitions = summaries(cur, s).map_err(|e| e.under(name))?,
            T::KeyMetadata => {
                m.key_metadata = opt_bytes(cur, s)
                    .map_err(|e| e.under(name))?
                    .map(<[u8]>::to_vec)
            }
            T::FirstRowId => m.first_row_id = opt_long(cur, s).map_err(|e| e.under(name))?,
            T::Skip => cur.skip(s)?,
        }
    }
    Ok(m)
}

pub(crate) fn summaries(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<Vec<FieldSummary>>> {
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            summaries(cur, s)
        }
        AvroSchema::Array(items) => {
            let rec = items
                .as_record()
                .ok_or_else(|| Error::invalid_metadata("", "a field summary is not a record"))?;
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                if let AvroSchema::Union(b) = items.as_ref() {
                    if matches!(c.branch(b)?, AvroSchema::Null) {
                        return Err(Error::invalid_metadata("", "a field summary is null"));
                    }
                }
                let mut fs = FieldSummary::default();
                let mut has_null = false;
                for f in &rec.fields {
                    match (f.field_id, f.name.as_str()) {
                        (Some(509), _) | (None, "contains_null") => {
                            fs.contains_null = req(opt_bool(c, &f.schema), "contains_null")?;
                            has_null = true;
                        }
                        (Some(518), _) | (None, "contains_nan") => {
                            fs.contains_nan = opt_bool(c, &f.schema)?
                        }
                        (Some(510), _) | (None, "lower_bound") => {
                            fs.lower_bound = opt_bytes(c, &f.schema)?.map(<[u8]>::to_vec)
                        }
                        (Some(511), _) | (None, "upper_bound") => {
                            fs.upper_bound = opt_bytes(c, &f.schema)?.map(<[u8]>::to_vec)
                        }
                        _ => c.skip(&f.schema)?,
                    }
                }
                if !has_null {
                    return Err(Error::invalid_metadata(
                        "contains_null",
                        "required field is missing",
                    ));
                }
                out.push(fs);
                Ok(())
            })?;
            Ok(Some(out))
        }
        other => Err(Error::invalid_metadata(
            "",
            format!("expected an Avro array, found {other:?}"),
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

fn list_schema(format_version: i32) -> Value {
    let summary = json!({
        "type": "record",
        "name": "r508",
        "fields": [
            avro_field("contains_null", 509, json!("boolean"), true),
            avro_field("contains_nan", 518, json!("boolean"), false),
            avro_field("lower_bound", 510, json!("bytes"), false),
            avro_field("upper_bound", 511, json!("bytes"), false),
        ]
    });
    let partitions = avro_field("partitions", 507, avro_list(508, summary), false);
    let v2 = format_version >= 2;
    let mut fields = vec![
        avro_field("manifest_path", 500, json!("string"), true),
        avro_field("manifest_length", 501, json!("long"), true),
        avro_field("partition_spec_id", 502, json!("int"), true),
    ];
    if v2 {
        fields.push(avro_field("content", 517, json!("int"), true));
        fields.push(avro_field("sequence_number", 515, json!("long"), true));
        fields.push(avro_field("min_sequence_number", 516, json!("long"), true));
    }
    fields.push(avro_field("added_snapshot_id", 503, json!("long"), true));
    fields.push(avro_field("added_files_count", 504, json!("int"), v2));
    fields.push(avro_field("existing_files_count", 505, json!("int"), v2));
    fields.push(avro_field("deleted_files_count", 506, json!("int"), v2));
    if v2 {
        fields.push(avro_field("added_rows_count", 512, json!("long"), true));
        fields.push(avro_field("existing_rows_count", 513, json!("long"), true));
        fields.push(avro_field("deleted_rows_count", 514, json!("long"), true));
        fields.push(partitions);
    } else {
        fields.push(partitions);
        fields.push(avro_field("added_rows_count", 512, json!("long"), false));
        fields.push(avro_field("existing_rows_count", 513, json!("long"), false));
        fields.push(avro_field("deleted_rows_count", 514, json!("long"), false));
    }
    fields.push(avro_field("key_metadata", 519, json!("bytes"), false));
    if format_version >= 3 {
        fields.push(avro_field("first_row_id", 520, json!("long"), false));
    }
    json!({"type": "record", "name": "manifest_file", "fields": fields})
}

/// What a manifest list writer wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenManifestList {
    /// The rows as written: sequence numbers and first row ids assigned.
    pub manifests: Vec<ManifestFile>,
    /// v3: the snapshot's first row id plus the rows assigned ids (the table's next row
    /// id after the commit); `None` before v3.
    pub next_row_id: Option<i64>,
    pub length: i64,
}

/// Writes the manifest list of one snapshot.
pub struct ManifestListWriter {
    format_version: i32,
    snapshot_id: i64,
    sequence_number: i64,
    next_row_id: Option<i64>,
    container: ContainerWriter,
    written: Vec<ManifestFile>,
}

impl ManifestListWriter {
    /// `sequence_number` is ignored for v1; `first_row_id` (the snapshot's) is required
    /// for v3 and ignored before.
    pub fn new(
        format_version: i32,
        snapshot_id: i64,
        parent_snapshot_id: Option<i64>,
        sequence_number: i64,
        first_row_id: Option<i64>,
        codec: Codec,
    ) -> Result<ManifestListWriter> {
        if !(1..=MAX_FORMAT_VERSION).contains(&format_version) {
            return Err(Error::invalid_argument(format!(
                "cannot write a manifest list of format version {format_version}"
            )));
        }
        let parent = parent_snapshot_id.map_or_else(|| "null".to_string(), |p| p.to_string());
        let mut meta: Vec<(&str, String)> = vec![
            ("snapshot-id", snapshot_id.to_string()),
            ("parent-snapshot-id", parent),
        ];
        if format_version >= 2 {
            meta.push(("sequence-number", sequence_number.to_string()));
        }
        let next_row_id = if format_version >= 3 {
            let f = first_row_id.ok_or_else(|| {
                Error::invalid_argument("a v3 manifest list needs the snapshot's first row id")
            })?;
            meta.push(("first-row-id", f.to_string()));
            Some(f)
        } else {
            None
        };
        meta.push(("format-version", format_version.to_string()));
        let container =
            ContainerWriter::new(&list_schema(format_version).to_string(), &meta, codec);
        Ok(ManifestListWriter {
            format_version,
            snapshot_id,
            sequence_number,
            next_row_id,
            container,
            written: Vec::new(),
        })
    }

    /// Adds a manifest; returns the row as written.
    pub fn add(&mut self, manifest: &ManifestFile) -> Result<ManifestFile> {
        let mut m = manifest.clone();
        let v2 = self.format_version >= 2;
        if v2 {
            if m.sequence_number == UNASSIGNED_SEQUENCE_NUMBER {
                if m.added_snapshot_id != self.snapshot_id {
                    return Err(Error::invalid_argument(format!(
                        "manifest {} of snapshot {} has no sequence number",
                        m.manifest_path, m.added_snapshot_id
                    )));
                }
                m.sequence_number = self.sequence_number;
            }
            if m.min_sequence_number == UNASSIGNED_SEQUENCE_NUMBER {
                m.min_sequence_number = self.sequence_number;
            }
        }
        if self.format_version >= 3
            && m.content == ManifestContent::Data
            && m.first_row_id.is_none()
        {
            if let Some(next) = self.next_row_id {
                let rows = |v: Option<i64>, what: &str| {
                    v.ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "manifest {} has no {what}, needed to assign row ids",
                            m.manifest_path
                        ))
                    })
                };
                let added = rows(m.added_rows_count, "added_rows_count")?;
                let existing = rows(m.existing_rows_count, "existing_rows_count")?;
                m.first_row_id = Some(next);
                self.next_row_id = Some(
                    next.checked_add(added)
                        .and_then(|n| n.checked_add(existing))
                        .ok_or_else(|| Error::invalid_argument("row ids overflow"))?,
                );
            }
        }
        if self.format_version < 3 {
            m.first_row_id = None;
        }
        let mark = self.container.block.len();
        if let Err(e) = self.encode(&m) {
            self.container.block.truncate(mark);
            return Err(e);
        }
        self.container.end_object()?;
        if !v2 {
            m.content = ManifestContent::Data;
            m.sequence_number = 0;
            m.min_sequence_number = 0;
        }
        self.written.push(m.clone());
        Ok(m)
    }

    fn encode(&mut self, m: &ManifestFile) -> Result<()> {
        let fv = self.format_version;
        let v2 = fv >= 2;
        let out = &mut self.container.block;
        let opt_long = |out: &mut Vec<u8>, v: Option<i64>| match v {
            None => put_long(out, 0),
            Some(v) => {
                put_long(out, 1);
                put_long(out, v);
            }
        };
        let required = |v: Option<i64>, what: &str| {
            v.ok_or_else(|| {
                Error::invalid_argument(format!(
                    "manifest {}: {what} is required in format version {}",
                    m.manifest_path, fv
                ))
            })
        };
        put_bytes(out, m.manifest_path.as_bytes());
        put_long(out, m.manifest_length);
        put_int(out, m.partition_spec_id);
        if v2 {
            put_int(out, m.content.id());
            put_long(out, m.sequence_number);
            put_long(out, m.min_sequence_number);
        } else if m.content != ManifestContent::Data {
            return Err(Error::invalid_argument(
                "format version 1 has no delete manifests",
            ));
        }
        put_long(out, m.added_snapshot_id);
        let counts = [
            (m.added_files_count.map(i64::from), "added_files_count"),
            (
                m.existing_files_count.map(i64::from),
                "existing_files_count",
            ),
            (m.deleted_files_count.map(i64::from), "deleted_files_count"),
        ];
        let rows = [
            (m.added_rows_count, "added_rows_count"),
            (m.existing_rows_count, "existing_rows_count"),
            (m.deleted_rows_count, "deleted_rows_count"),
        ];
        let put_partitions = |out: &mut Vec<u8>| match &m.partitions {
            None => put_long(out, 0),
            Some(p) => {
                put_long(out, 1);
                if !p.is_empty() {
                    put_long(out, p.len() as i64);
                    for s in p {
                        put_bool(out, s.contains_null);
                        match s.contains_nan {
                            None => put_long(out, 0),
                            Some(b) => {
                                put_long(out, 1);
                                put_bool(out, b);
                            }
                        }
                        for b in [&s.lower_bound, &s.upper_bound] {
                            match b {
                                None => put_long(out, 0),
                                Some(b) => {
                                    put_long(out, 1);
                                    put_bytes(out, b);
                                }
                            }
                        }
                    }
                }
                put_long(out, 0);
            }
        };
        if v2 {
            for (v, what) in counts.iter().chain(rows.iter()) {
                put_long(out, required(*v, what)?);
            }
            put_partitions(out);
        } else {
            for (v, _) in &counts {
                opt_long(out, *v);
            }
            put_partitions(out);
            for (v, _) in &rows {
                opt_long(out, *v);
            }
        }
        match &m.key_metadata {
            None => put_long(out, 0),
            Some(k) => {
                put_long(out, 1);
                put_bytes(out, k);
            }
        }
        if fv >= 3 {
            opt_long(out, m.first_row_id);
        }
        Ok(())
    }

    /// The next row id after the manifests added so far (v3).
    pub fn next_row_id(&self) -> Option<i64> {
        self.next_row_id
    }

    pub fn finish_to_bytes(self) -> Result<(Vec<u8>, WrittenManifestList)> {
        let bytes = self.container.finish()?;
        let length = bytes.len() as i64;
        Ok((
            bytes,
            WrittenManifestList {
                manifests: self.written,
                next_row_id: self.next_row_id,
                length,
            },
        ))
    }

    pub fn finish(self, io: &dyn FileIO, location: &str) -> Result<WrittenManifestList> {
        let (bytes, w) = self.finish_to_bytes()?;
        io.write_new(location, &bytes)?;
        Ok(w)
    }
}

/// Writes a manifest list in one call (see [`ManifestListWriter`]).
#[allow(clippy::too_many_arguments)]
pub fn write_manifest_list(
    io: &dyn FileIO,
    location: &str,
    format_version: i32,
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    first_row_id: Option<i64>,
    manifests: &[ManifestFile],
    codec: Codec,
) -> Result<WrittenManifestList> {
    let mut w = ManifestListWriter::new(
        format_version,
        snapshot_id,
        parent_snapshot_id,
        sequence_number,
        first_row_id,
        codec,
    )?;
    for m in manifests {
        w.add(m)?;
    }
    w.finish(io, location)
}
