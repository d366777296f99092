//! Manifests and manifest lists from arbitrary bytes: every reader may fail, none may panic.
#![no_main]

use icefloe::manifest::{read_manifest_bytes, read_manifest_list_bytes, ManifestReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_manifest_bytes(data, &ManifestReadOptions::all());
    // the projected read takes other paths through the decoder (skipping instead of decoding)
    let _ = read_manifest_bytes(data, &ManifestReadOptions::scan(vec![1, 2, 1000]));
    let _ = read_manifest_list_bytes(data);
});
