//! Decoding one v4 data leaf against one v3 manifest of the same 10,000 files (the
//! fixture of `manifest.rs`: full metrics for 4 columns, day(ts) partitions, deflate),
//! with the planner's projections: `unfiltered` (no column metrics: `scan(vec![])`) and
//! `id` (the counts and bounds of column 2, a point lookup's). Each entry is taken out of
//! the decoding slot as the planner takes a kept file. Cases:
//!
//! - `v3`: `visit_manifest`, the v3 planner's decoder;
//! - `v4_tree`: `visit_v4_manifest_projected` (a value tree per entry, then the entry
//!   copied into v3's shape), what planning used before the slot decoder;
//! - `v4_step`: `visit_v4_manifest_slots_stepwise` (the slot decoder's steps alone) and
//!   `tree::take_v3_entry`, what planning used before the fast path;
//! - `v4_slot`: `visit_v4_manifest_slots` (the fast path for the layout icefloe writes)
//!   and `tree::take_v3_entry`, what planning uses; the leaf stores its paths relative to
//!   the table location, as icefloe writes them, and each is resolved when decoded;
//! - `v4_slot_abs`: the same on a leaf of absolute paths read without a location (what
//!   v4 leaves were before relative paths): the cost of resolving them.
//!
//! Best of N decodes per case, cases alternating within each round, in ns an entry:
//! `cargo build --profile quick -p icefloe --bench v4_leaf_decode` and run
//! `target/quick/deps/v4_leaf_decode-* [--rounds R] [--iters N] [--only TEXT]`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use icefloe::manifest::v4::tree::{from_data_file, take_v3_entry, v3_entry};
use icefloe::manifest::v4::{
    visit_v4_manifest_projected, visit_v4_manifest_slots, visit_v4_manifest_slots_stepwise,
    write_v4_manifest_with, Tracking, TrackingStatus, V4Layout, V4ManifestKind,
};
use icefloe::manifest::{
    read_manifest, visit_manifest, Codec, DataContentType, DataFile, FileFormat,
    ManifestProjection, ManifestSource, ReadManifestOptions,
};
use icefloe::spec::{Literal, PrimitiveType};

#[path = "common/manifest_fixture.rs"]
#[allow(dead_code)]
mod fixture;
use fixture::{manifest, ENTRIES};

fn arg(flag: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

fn empty_data_file() -> DataFile {
    DataFile::new(
        DataContentType::Data,
        String::new(),
        FileFormat::Parquet,
        Vec::new(),
        0,
        0,
    )
}

#[derive(Clone, Copy)]
enum Case {
    V3,
    V4Tree,
    V4Step,
    V4Slot,
}

fn decode(case: Case, bytes: &[u8], p: &V4Layout, options: &ManifestProjection) -> usize {
    let mut n = 0usize;
    match case {
        Case::V3 => {
            visit_manifest(
                ManifestSource::Bytes(bytes),
                &ReadManifestOptions::default().projection(options),
                |e| {
                    n += 1;
                    black_box(std::mem::replace(&mut e.data_file, empty_data_file()));
                    Ok(())
                },
            )
            .unwrap();
        }
        Case::V4Tree => {
            visit_v4_manifest_projected(bytes, "leaf", p, options, |_, e| {
                n += 1;
                black_box((v3_entry(&e), e));
                Ok(())
            })
            .unwrap();
        }
        Case::V4Step => {
            visit_v4_manifest_slots_stepwise(bytes, p, Some(options), |_, e| {
                n += 1;
                black_box(take_v3_entry(e));
                Ok(())
            })
            .unwrap();
        }
        Case::V4Slot => {
            visit_v4_manifest_slots(bytes, p, Some(options), |_, e| {
                n += 1;
                black_box(take_v3_entry(e));
                Ok(())
            })
            .unwrap();
        }
    }
    n
}

fn main() {
    let rounds = arg("--rounds", 3);
    let iters = arg("--iters", 20);
    let v3 = manifest(Codec::Deflate);
    let m = read_manifest(ManifestSource::Bytes(&v3), &ReadManifestOptions::default()).unwrap();
    let mut p = V4Layout {
        fields: vec![(1000, "ts_day".into(), PrimitiveType::Date)],
        specs: Default::default(),
        // the fixture's files are under this location: stored relative, resolved on read
        location: Some("s3://bucket/warehouse/db/table".to_string()),
    };
    p.specs.insert(0, vec![1000]);
    let absolute = V4Layout {
        location: None,
        ..p.clone()
    };
    let entries: Vec<_> = m
        .entries
        .iter()
        .map(|e| {
            let mut t = Tracking::new(TrackingStatus::Existing);
            t.snapshot_id = Some(1);
            t.sequence_number = Some(1);
            t.file_sequence_number = Some(1);
            let mut f = e.data_file.clone();
            // the fixture's day values are written as ints; the day transform's type is date
            for v in f.partition.iter_mut() {
                if let Some(Literal::Int(d)) = v {
                    *v = Some(Literal::Date(*d));
                }
            }
            from_data_file(&f, 0, t).unwrap()
        })
        .collect();
    let v4 =
        write_v4_manifest_with(V4ManifestKind::DataLeaf, &entries, Codec::Deflate, &p).unwrap();
    let v4_abs = write_v4_manifest_with(
        V4ManifestKind::DataLeaf,
        &entries,
        Codec::Deflate,
        &absolute,
    )
    .unwrap();
    println!(
        "{ENTRIES} entries: v3 manifest {} bytes, v4 leaf {} bytes; best of {iters}, {rounds} rounds",
        v3.len(),
        v4.len()
    );
    let unfiltered = ManifestProjection::scan(vec![]);
    let point = ManifestProjection::scan(vec![2]);
    let mut cases = Vec::new();
    for (pname, proj) in [("unfiltered", &unfiltered), ("id", &point)] {
        for (cname, case, bytes, layout) in [
            ("v3", Case::V3, &v3, &p),
            ("v4_tree", Case::V4Tree, &v4, &p),
            ("v4_step", Case::V4Step, &v4, &p),
            ("v4_slot", Case::V4Slot, &v4, &p),
            ("v4_slot_abs", Case::V4Slot, &v4_abs, &absolute),
        ] {
            let name = format!("{pname:<10} {cname}");
            // `--only TEXT` keeps the cases whose name contains TEXT (for a profile)
            let args: Vec<String> = std::env::args().collect();
            let only = args
                .iter()
                .position(|a| a == "--only")
                .and_then(|i| args.get(i + 1));
            if only.is_none_or(|o| name.contains(o.as_str())) {
                cases.push((name, case, bytes, proj, layout));
            }
        }
    }
    let mut best = vec![f64::MAX; cases.len()];
    for _ in 0..rounds {
        for (i, (_, case, bytes, proj, layout)) in cases.iter().enumerate() {
            for _ in 0..iters {
                let t = Instant::now();
                let n = decode(*case, bytes, layout, proj);
                assert_eq!(n, ENTRIES as usize);
                best[i] = best[i].min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
            }
        }
    }
    for ((name, _, _, _, _), b) in cases.iter().zip(&best) {
        println!("{name:<20} {b:7.1} ns an entry");
    }
}
