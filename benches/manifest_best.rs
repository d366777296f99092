//! The best of N decodes of the bench manifest (`common/manifest_fixture.rs`) with
//! `visit_manifest`, for each codec and for all fields and the scan fields the
//! manifests issue names. On a shared machine whose speed moves by more than the changes
//! being measured, the fastest of many runs is steadier than criterion's mean; the cases
//! alternate within each round so that a slow spell touches all of them.
//!
//! `cargo bench -p icefloe --bench manifest_best -- [--rounds R] [--iters N] [--only TEXT]`
//! (`--only` keeps the cases whose name contains TEXT, e.g. `named_Null` for a profile)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use icefloe::manifest::{
    visit_manifest, Codec, ManifestProjection, ManifestSource, ReadManifestOptions,
};

#[path = "common/manifest_fixture.rs"]
mod fixture;
use fixture::{manifest, named_options, ENTRIES};

/// The text after `flag` on the command line, if any (cargo adds `--bench`, ignored).
fn text_arg(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).cloned()
}

/// The number after `flag` on the command line, or `default`.
fn arg(flag: &str, default: usize) -> usize {
    text_arg(flag)
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{flag} takes a number, not '{v}'"))
        })
        .unwrap_or(default)
}

/// Nanoseconds an entry of the fastest of `iters` decodes.
fn best_of(bytes: &[u8], options: &ManifestProjection, iters: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..iters {
        let t = Instant::now();
        let mut n = 0usize;
        visit_manifest(
            ManifestSource::Bytes(bytes),
            &ReadManifestOptions::default().projection(options),
            |e| {
                n += 1;
                black_box(e.data_file.record_count);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(n, ENTRIES as usize);
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    best
}

fn main() {
    let rounds = arg("--rounds", 3);
    let iters = arg("--iters", 100);
    let all = ManifestProjection::all();
    let named = named_options();
    let cases: Vec<(String, Vec<u8>, &ManifestProjection)> = [Codec::Deflate, Codec::Null]
        .into_iter()
        .flat_map(|codec| {
            let bytes = manifest(codec);
            [("all", &all), ("named", &named)]
                .map(|(name, o)| (format!("visit_{name}_{codec:?}"), bytes.clone(), o))
        })
        .filter(|(name, _, _)| text_arg("--only").is_none_or(|o| name.contains(&o)))
        .collect();
    println!("best of {iters} decodes of {ENTRIES} entries, {rounds} rounds");
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for _ in 0..rounds {
        for (i, (_, bytes, options)) in cases.iter().enumerate() {
            results[i].push(best_of(bytes, options, iters));
        }
    }
    for ((name, _, _), r) in cases.iter().zip(&results) {
        let lo = r.iter().copied().fold(f64::MAX, f64::min);
        let hi = r.iter().copied().fold(0.0, f64::max);
        println!(
            "{name:<20} {lo:7.1}–{hi:7.1} ns an entry  ({:.2}–{:.2} M entries/s)",
            1e3 / hi,
            1e3 / lo
        );
    }
}
