//! Decoding a manifest of 10,000 entries with full column metrics (sizes, value, null
//! and NaN counts, lower and upper bounds) for 4 columns, partitioned by day(ts),
//! written by our own writer (deflate, Java's default): all fields, then only the scan
//! fields (bounds of one filtered column); then the same with `visit_manifest`,
//! which decodes every entry into one reused slot (what the scan planner does: no
//! allocation per entry, nothing kept), also with only the fields the manifests issue
//! names for its scan target (`visit_named_*`); and every field straight into Arrow
//! columns (`manifest_bytes_to_batch`, Python's `read_manifest`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::arrow::manifest::manifest_bytes_to_batch;
use icefloe::manifest::{
    read_manifest, visit_manifest, Codec, ManifestProjection, ManifestSource, ReadManifestOptions,
};

#[path = "common/manifest_fixture.rs"]
mod fixture;
use fixture::{manifest, named_options, ENTRIES};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("manifest_10k");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.sample_size(20);
    for codec in [Codec::Deflate, Codec::Null] {
        let bytes = manifest(codec);
        let all = ManifestProjection::all();
        let scan = ManifestProjection::scan(vec![1]);
        let named = named_options();
        assert_eq!(
            read_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default().projection(&all)
            )
            .unwrap()
            .entries
            .len(),
            ENTRIES as usize
        );
        g.bench_function(format!("decode_all_{codec:?}"), |b| {
            b.iter(|| {
                black_box(
                    read_manifest(
                        ManifestSource::Bytes(&bytes),
                        &ReadManifestOptions::default().projection(&all),
                    )
                    .unwrap(),
                )
            })
        });
        g.bench_function(format!("decode_scan_{codec:?}"), |b| {
            b.iter(|| {
                black_box(
                    read_manifest(
                        ManifestSource::Bytes(&bytes),
                        &ReadManifestOptions::default().projection(&scan),
                    )
                    .unwrap(),
                )
            })
        });
        // every field, decoded into one slot and appended to Arrow columns (Python's
        // read_manifest): no entry is materialised
        g.bench_function(format!("arrow_all_{codec:?}"), |b| {
            b.iter(|| black_box(manifest_bytes_to_batch(&bytes, &all, None).unwrap()))
        });
        for (name, options) in [("all", &all), ("scan", &scan), ("named", &named)] {
            g.bench_function(format!("visit_{name}_{codec:?}"), |b| {
                b.iter(|| {
                    let mut n = 0usize;
                    visit_manifest(
                        ManifestSource::Bytes(&bytes),
                        &ReadManifestOptions::default().projection(options),
                        |e| {
                            n += black_box(e.data_file.record_count) as usize;
                            Ok(())
                        },
                    )
                    .unwrap();
                    black_box(n)
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
