//! One manifest decoded as it is on disk and again after icefloe's writer rewrote the same
//! entries: how much of a manifest's decode is its layout. PyIceberg writes one entry per
//! Avro block, each its own deflate stream (no matches across entries), so its 10,000-entry
//! manifests of the 1,000,000-file bench table are about 14 times the bytes icefloe writes
//! for them. Projection: the planner's for an `id` point lookup (`scan([id])`); best of 15.
//!
//! ```sh
//! cargo build --profile quick -p icefloe --bench manifest_layout
//! target/quick/deps/manifest_layout-<hash> <manifest.avro>
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use icefloe::manifest::{
    read_manifest, visit_manifest, Codec, ManifestProjection, ManifestSource, ManifestWriter,
    ReadManifestOptions,
};

/// Milliseconds of the fastest of 15 decodes of `bytes`, projected for a filter on field `id`.
fn best_ms(bytes: &[u8], id: i32) -> f64 {
    let p = ManifestProjection::scan(vec![id]);
    let opts = ReadManifestOptions::default().projection(&p);
    let mut best = f64::MAX;
    for _ in 0..15 {
        let t = Instant::now();
        visit_manifest(ManifestSource::Bytes(bytes), &opts, |_| Ok(())).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best * 1e3
}

fn main() {
    let path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .expect("usage: manifest_layout <manifest.avro>");
    let bytes = std::fs::read(&path).unwrap();
    let m = read_manifest(
        ManifestSource::Bytes(&bytes),
        &ReadManifestOptions::default(),
    )
    .unwrap();
    let md = &m.metadata;
    let id = md
        .schema
        .field_by_name("id", true)
        .expect("a column named id")
        .id;
    let mut w = ManifestWriter::new(
        md.format_version.max(2),
        md.content,
        &md.schema,
        &md.partition_spec,
        1,
        Codec::Deflate,
    )
    .unwrap();
    for e in &m.entries {
        w.add(e.data_file.clone()).unwrap();
    }
    let ours = w.finish_to_bytes("rewritten.avro").unwrap().0;
    for _ in 0..3 {
        println!(
            "{} entries: as written {} bytes, {:.2} ms; rewritten by icefloe {} bytes, {:.2} ms",
            m.entries.len(),
            bytes.len(),
            best_ms(&bytes, id),
            ours.len(),
            best_ms(&ours, id)
        );
    }
}
