//! Manifests and manifest lists from arbitrary bytes: every reader may fail, none may panic,
//! and the manifest reader's fast path must agree with its plan alone (the same entries or
//! the same error).
#![no_main]

use icefloe::manifest::{
    read_manifest_list_bytes, read_manifest_visit, read_manifest_visit_without_fast_path,
    ManifestReadOptions,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // the projected read takes other paths through the decoder (skipping instead of decoding)
    for options in [
        ManifestReadOptions::all(),
        ManifestReadOptions::scan(vec![1, 2, 1000]),
    ] {
        let mut fast = Vec::new();
        let a = read_manifest_visit(data, &options, None, |e| {
            fast.push(format!("{e:?}"));
            Ok(())
        });
        let mut plan = Vec::new();
        let b = read_manifest_visit_without_fast_path(data, &options, None, |e| {
            plan.push(format!("{e:?}"));
            Ok(())
        });
        match (a, b) {
            (Ok(_), Ok(_)) => assert_eq!(fast, plan),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("fast path {a:?}, plan alone {b:?}"),
        }
    }
    let _ = read_manifest_list_bytes(data);
});
