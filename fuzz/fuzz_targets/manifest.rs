//! Manifests and manifest lists from arbitrary bytes: every reader may fail, none may panic,
//! and the manifest reader's fast path must agree with its plan alone (the same entries or
//! the same error). Decompressed blocks are bounded at a low ceiling (see bombs.rs).
#![no_main]

use icefloe::manifest::{
    read_manifest_list_bytes, visit_manifest, Codec, ManifestProjection, ManifestSource,
    ReadManifestOptions,
};
use libfuzzer_sys::fuzz_target;

mod bombs;

/// Blocks of each codec claiming far more than the ceiling, in a manifest list: refused
/// (manifests share the list's block reader).
fn check_bombs() {
    let ceiling_mib = (bombs::FUZZ_CEILING >> 20) as usize;
    for (what, codec, block) in [
        (
            "snappy declaring 4 GiB",
            Codec::Snappy,
            bombs::snappy_declaring_4_gib(),
        ),
        (
            "deflate of 4 x ceiling",
            Codec::Deflate,
            bombs::deflate_zeros(4 * ceiling_mib),
        ),
        (
            "zstd declaring 1 TiB",
            Codec::Zstd,
            bombs::zstd_rle(1, Some(1 << 40)),
        ),
        (
            "zstd of 4 x ceiling",
            Codec::Zstd,
            bombs::zstd_rle(32 * ceiling_mib, None),
        ),
    ] {
        let file = bombs::manifest_list_with_block(codec, &block);
        bombs::assert_refused(what, read_manifest_list_bytes(&file));
    }
}

fuzz_target!(|data: &[u8]| {
    bombs::setup(check_bombs);
    // the projected read takes other paths through the decoder (skipping instead of decoding)
    for options in [
        ManifestProjection::all(),
        ManifestProjection::scan(vec![1, 2, 1000]),
    ] {
        let mut fast = Vec::new();
        let a = visit_manifest(
            ManifestSource::Bytes(data),
            &ReadManifestOptions::default().projection(&options),
            |e| {
                fast.push(format!("{e:?}"));
                Ok(())
            },
        );
        let mut plan = Vec::new();
        let b = visit_manifest(
            ManifestSource::Bytes(data),
            &ReadManifestOptions::default()
                .projection(&options)
                .fast_path(false),
            |e| {
                plan.push(format!("{e:?}"));
                Ok(())
            },
        );
        match (a, b) {
            (Ok(_), Ok(_)) => assert_eq!(fast, plan),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("fast path {a:?}, plan alone {b:?}"),
        }
    }
    let _ = read_manifest_list_bytes(data);
});
