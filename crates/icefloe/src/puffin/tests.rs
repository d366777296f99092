//! Tests of the Puffin container and of deletion vectors: byte layouts, corrupt input
//! (never a panic), range reads, merge and keep-mask semantics.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Mutex;

use super::dv::*;
use super::file::*;
use crate::error::{Error, Result};
use crate::io::FileIO;

/// In-memory files that record every read, to check that only ranges are fetched.
#[derive(Default)]
struct MemIO {
    files: Mutex<HashMap<String, Vec<u8>>>,
    whole_reads: Mutex<Vec<String>>,
    range_reads: Mutex<Vec<(u64, u64)>>,
}

impl MemIO {
    fn with(location: &str, bytes: Vec<u8>) -> Self {
        let io = MemIO::default();
        io.files.lock().unwrap().insert(location.to_string(), bytes);
        io
    }
    fn get(&self, location: &str) -> Vec<u8> {
        self.files.lock().unwrap()[location].clone()
    }
}

impl FileIO for MemIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.whole_reads.lock().unwrap().push(location.to_string());
        self.files
            .lock()
            .unwrap()
            .get(location)
            .cloned()
            .ok_or_else(|| Error::not_found(location.to_string()))
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        let mut files = self.files.lock().unwrap();
        if files.contains_key(location) {
            return Err(Error::invalid_argument("exists"));
        }
        files.insert(location.to_string(), bytes.to_vec());
        Ok(())
    }
    fn exists(&self, location: &str) -> Result<bool> {
        Ok(self.files.lock().unwrap().contains_key(location))
    }
    fn delete(&self, location: &str) -> Result<()> {
        self.files.lock().unwrap().remove(location);
        Ok(())
    }
    fn list(&self, _location: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.range_reads.lock().unwrap().push((offset, len));
        let files = self.files.lock().unwrap();
        let bytes = files
            .get(location)
            .ok_or_else(|| Error::not_found(location.to_string()))?;
        let start = offset as usize;
        let end = start.checked_add(len as usize).unwrap();
        bytes
            .get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::io(location, std::io::ErrorKind::UnexpectedEof.into()))
    }
    fn file_size(&self, location: &str) -> Result<u64> {
        Ok(self.get(location).len() as u64)
    }
}

fn field_of(e: &Error) -> String {
    e.location()
        .map(|l| l.field.clone())
        .unwrap_or_else(|| panic!("no location in {e}"))
}

// ---------------------------------------------------------------- deletion vectors

/// {0, 1, 2^32 + 5}, written out byte by byte from the format description.
fn tiny_vector_bytes() -> Vec<u8> {
    let mut v = vec![];
    v.extend([2, 0, 0, 0, 0, 0, 0, 0]); // 2 bitmaps, u64 LE
    v.extend([0, 0, 0, 0]); // key 0
                            // 32-bit portable roaring {0, 1}: no-run cookie 12346, 1 container,
                            // (key 0, cardinality-1 = 1), offset of data = 16, values 0 and 1 (u16 LE)
    v.extend([
        0x3A, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 0, 0, 1, 0,
    ]);
    v.extend([1, 0, 0, 0]); // key 1
                            // {5}: cookie, 1 container, (key 0, cardinality-1 = 0), offset 16, value 5
    v.extend([0x3A, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 5, 0]);
    v
}

fn tiny_dv() -> DeletionVector {
    DeletionVector::from_positions([1, (1 << 32) + 5, 0, 1]).unwrap()
}

#[test]
fn crc32_is_the_standard_one() {
    // the CRC-32 (ISO-HDLC / zlib) check value
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
}

#[test]
fn tiny_dv_layout_byte_by_byte() {
    let dv = tiny_dv();
    let vector = tiny_vector_bytes();
    assert_eq!(vector.len(), 54);
    assert_eq!(dv.serialize_vector(), vector);

    let blob = dv.serialize().unwrap();
    assert_eq!(blob.len(), 4 + 4 + 54 + 4);
    assert_eq!(&blob[..4], &[0, 0, 0, 58]); // 4 + 54, big-endian
    assert_eq!(&blob[4..8], &[0xD1, 0xD3, 0x39, 0x64]);
    assert_eq!(&blob[8..62], &vector[..]);
    let crc = crc32fast::hash(&blob[4..62]);
    assert_eq!(&blob[62..], &crc.to_be_bytes());

    let back = DeletionVector::deserialize(&blob).unwrap();
    assert_eq!(back, dv);
    assert_eq!(back.iter().collect::<Vec<_>>(), vec![0, 1, (1 << 32) + 5]);
    assert_eq!(back.cardinality(), 3);
}

#[test]
fn empty_dv_round_trips() {
    let dv = DeletionVector::new();
    let blob = dv.serialize().unwrap();
    assert_eq!(&blob[..4], &[0, 0, 0, 12]);
    assert_eq!(&blob[8..16], &[0; 8]);
    let back = DeletionVector::deserialize(&blob).unwrap();
    assert!(back.is_empty());
    assert_eq!(back.cardinality(), 0);
}

#[test]
fn empty_bitmaps_and_run_containers_are_read() {
    // a writer that keeps an (empty) bitmap for every key below the largest
    let mut v = vec![];
    v.extend(2u64.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend([0x3A, 0x30, 0, 0, 0, 0, 0, 0]); // empty bitmap
    v.extend(1u32.to_le_bytes());
    // run container format: cookie 12347 with (size-1)=0 in the high 16 bits, run
    // bitmap 0x01, (key 0, card-1 = 9), no offsets (< 4 containers), 1 run: start 100, len 9
    v.extend([0x3B, 0x30, 0, 0, 0x01, 0, 0, 9, 0, 1, 0, 100, 0, 9, 0]);
    let dv = DeletionVector::deserialize_vector(&v).unwrap();
    let expected: Vec<i64> = (100..110).map(|p| (1i64 << 32) + p).collect();
    assert_eq!(dv.iter().collect::<Vec<_>>(), expected);
    // a long run is written as a run container (smaller), and read back
    let dv = DeletionVector::from_positions(0..100_000).unwrap();
    let bytes = dv.serialize().unwrap();
    assert!(bytes.len() < 100, "{} bytes", bytes.len());
    assert_eq!(DeletionVector::deserialize(&bytes).unwrap(), dv);
}

#[test]
fn framing_errors_are_typed() {
    let blob = tiny_dv().serialize().unwrap();

    for n in 0..12 {
        let e = DeletionVector::deserialize(&blob[..n]).unwrap_err();
        assert_eq!(field_of(&e), "deletion-vector.length", "{e}");
    }
    // truncated: the declared length no longer matches
    let e = DeletionVector::deserialize(&blob[..blob.len() - 1]).unwrap_err();
    assert_eq!(field_of(&e), "deletion-vector.length");
    let mut longer = blob.clone();
    longer.push(0);
    let e = DeletionVector::deserialize(&longer).unwrap_err();
    assert_eq!(field_of(&e), "deletion-vector.length");
    // little-endian length is wrong
    let mut le = blob.clone();
    le[..4].copy_from_slice(&58u32.to_le_bytes());
    assert_eq!(
        field_of(&DeletionVector::deserialize(&le).unwrap_err()),
        "deletion-vector.length"
    );

    let mut bad_magic = blob.clone();
    bad_magic[5] ^= 0xFF;
    let e = DeletionVector::deserialize(&bad_magic).unwrap_err();
    assert_eq!(field_of(&e), "deletion-vector.magic");
    assert!(matches!(e, Error::InvalidMetadata { .. }));

    let mut bad_crc = blob.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    assert_eq!(
        field_of(&DeletionVector::deserialize(&bad_crc).unwrap_err()),
        "deletion-vector.crc"
    );
    let mut bad_body = blob.clone();
    bad_body[20] ^= 1;
    assert_eq!(
        field_of(&DeletionVector::deserialize(&bad_body).unwrap_err()),
        "deletion-vector.crc"
    );
}

/// Frames a vector with a valid length, magic and CRC.
fn frame(vector: &[u8]) -> Vec<u8> {
    let mut out = ((vector.len() + 4) as u32).to_be_bytes().to_vec();
    out.extend(DV_MAGIC);
    out.extend(vector);
    let crc = crc32fast::hash(&out[4..]);
    out.extend(crc.to_be_bytes());
    out
}

#[test]
fn vector_errors_are_typed() {
    let vector = tiny_vector_bytes();
    // negative positions: key with the top bit set
    let mut neg = vector.clone();
    neg[32..36].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    let e = DeletionVector::deserialize(&frame(&neg)).unwrap_err();
    assert_eq!(field_of(&e), "deletion-vector.vector");
    assert!(e.to_string().contains("negative"), "{e}");
    // keys out of order
    let mut unsorted = vector.clone();
    unsorted[32..36].copy_from_slice(&0u32.to_le_bytes());
    let e = DeletionVector::deserialize(&frame(&unsorted)).unwrap_err();
    assert!(e.to_string().contains("ascending"), "{e}");
    // count larger than the bitmaps present, and trailing bytes
    let mut more = vector.clone();
    more[0] = 3;
    assert!(DeletionVector::deserialize(&frame(&more)).is_err());
    let mut huge = vector.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(DeletionVector::deserialize(&frame(&huge)).is_err());
    let mut trailing = vector.clone();
    trailing.push(0);
    let e = DeletionVector::deserialize(&frame(&trailing)).unwrap_err();
    assert!(e.to_string().contains("left after"), "{e}");
    // an unsorted array container
    let mut bad_array = vector.clone();
    bad_array[28..32].copy_from_slice(&[1, 0, 0, 0]);
    assert!(DeletionVector::deserialize(&frame(&bad_array)).is_err());
}

#[test]
fn corrupt_vectors_never_panic() {
    // array, bitmap and run containers, several keys
    let mut dv = DeletionVector::from_positions((0..5000).map(|i| i * 3)).unwrap();
    dv.insert_all(70_000..70_100).unwrap();
    dv.insert_all([(1 << 32) + 7, (5 << 32) + 65_536]).unwrap();
    let vector = dv.serialize_vector();
    assert_eq!(DeletionVector::deserialize_vector(&vector).unwrap(), dv);
    let small = tiny_vector_bytes();
    for v in [&vector[..], &small[..]] {
        for n in 0..v.len() {
            let _ = DeletionVector::deserialize_vector(&v[..n]);
            let _ = DeletionVector::deserialize(&frame(&v[..n]));
        }
    }
    // every byte of the small vector and the headers of the big one, every bit flipped
    for v in [&vector[..200], &small[..]] {
        for i in 0..v.len() {
            for bit in 0..8 {
                let mut m = if v.len() == 200 {
                    vector.clone()
                } else {
                    small.clone()
                };
                m[i] ^= 1 << bit;
                let _ = DeletionVector::deserialize(&frame(&m));
            }
        }
    }
}

#[test]
fn negative_positions_are_rejected() {
    assert!(matches!(
        DeletionVector::from_positions([1, -1]).unwrap_err(),
        Error::InvalidArgument { .. }
    ));
    let mut dv = DeletionVector::new();
    // a failed batch adds nothing
    assert!(dv.insert_all([3, 4, -5]).is_err());
    assert!(dv.is_empty());
    assert!(dv.insert(i64::MIN).is_err());
    assert!(dv.insert(i64::MAX).unwrap());
    assert!(!dv.insert(i64::MAX).unwrap());
    assert!(dv.contains(i64::MAX));
    assert!(!dv.contains(-1));
    let back = DeletionVector::deserialize(&dv.serialize().unwrap()).unwrap();
    assert_eq!(back.iter().collect::<Vec<_>>(), vec![i64::MAX]);
}

#[test]
fn insert_all_matches_insert() {
    // unsorted, duplicated, interleaved keys, added to a non-empty vector
    let positions: Vec<i64> = (0..20_000i64)
        .map(|i| (i * 7919) % 150_000 + if i % 3 == 0 { 1 << 32 } else { 0 })
        .collect();
    let mut one_by_one = DeletionVector::from_positions([5, 1 << 32]).unwrap();
    for &p in &positions {
        one_by_one.insert(p).unwrap();
    }
    let mut batched = DeletionVector::from_positions([5, 1 << 32]).unwrap();
    batched.insert_all(positions.iter().copied()).unwrap();
    assert_eq!(batched, one_by_one);
    let mut sorted: Vec<i64> = one_by_one.iter().collect();
    assert!(sorted.windows(2).all(|w| w[0] < w[1]));
    sorted.dedup();
    assert_eq!(sorted.len() as u64, batched.cardinality());
}

#[test]
fn merge_is_a_union() {
    let mut a = DeletionVector::from_positions([1, 5, (2 << 32) + 1]).unwrap();
    let b = DeletionVector::from_positions([5, 6, (3 << 32)]).unwrap();
    a.merge(&b);
    assert_eq!(
        a.iter().collect::<Vec<_>>(),
        vec![1, 5, 6, (2 << 32) + 1, 3 << 32]
    );
    assert_eq!(a.cardinality(), 5);
    // merging is idempotent and merging an empty DV changes nothing
    let before = a.clone();
    a.merge(&b);
    a.merge(&DeletionVector::new());
    assert_eq!(a, before);
    // old position deletes folded in
    merge_position_deletes(&mut a, [0, 1, 7]).unwrap();
    assert_eq!(a.cardinality(), 7);
    assert!(merge_position_deletes(&mut a, [-3]).is_err());
}

#[test]
fn keep_mask_at_bitmap_boundaries() {
    let two32: i64 = 1 << 32;
    let deleted = [0, 65_535, 65_536, 131_071, two32 - 1, two32, two32 + 65_536];
    let dv = DeletionVector::from_positions(deleted).unwrap();
    let check = |start: u64, len: usize| {
        let mask = dv.keep_mask(start, len);
        let bits = dv.keep_mask_buffer(start, len);
        assert_eq!(mask.len(), len);
        assert_eq!(bits.len(), len);
        for (i, keep) in mask.iter().enumerate() {
            let pos = start as i64 + i as i64;
            assert_eq!(*keep, !dv.contains(pos), "row {pos}");
            assert_eq!(bits.value(i), *keep, "row {pos}");
        }
    };
    check(0, 10);
    check(65_530, 10);
    check(65_535, 1);
    check(65_536, 1);
    check(65_000, 200_000);
    check(two32 as u64 - 5, 10);
    check(two32 as u64, 1);
    check(two32 as u64 - 1, 65_540);
    check(two32 as u64 + 1, 0);
    check(u64::MAX - 3, 3); // no overflow at the end of the range
    assert_eq!(dv.keep_mask(65_534, 4), vec![true, false, false, true]);
    let mask = dv.keep_mask(two32 as u64 - 2, 4);
    assert_eq!(mask, vec![true, false, false, true]);
}

// ---------------------------------------------------------------- puffin container

fn blob(kind: &str, compression: Option<CompressionCodec>) -> NewBlob {
    NewBlob {
        blob_type: kind.to_string(),
        fields: vec![1, 2],
        snapshot_id: 42,
        sequence_number: 7,
        compression,
        properties: vec![("k".into(), "v".into())],
    }
}

fn sample_file() -> (Vec<u8>, WrittenPuffin) {
    let mut w = PuffinWriter::new();
    w.add_blob(blob("a", None), b"hello").unwrap();
    w.add_blob(blob("b", Some(CompressionCodec::Lz4)), &[7u8; 1000])
        .unwrap();
    w.add_blob(blob("c", Some(CompressionCodec::Zstd)), &[9u8; 1000])
        .unwrap();
    w.finish().unwrap()
}

#[test]
fn writer_layout() {
    let (bytes, written) = sample_file();
    assert_eq!(&bytes[..4], b"PFA1");
    assert_eq!(&bytes[bytes.len() - 4..], b"PFA1");
    assert_eq!(written.file_size, bytes.len() as u64);
    assert_eq!(written.blobs[0].offset, 4);
    assert_eq!(written.blobs[0].length, 5);
    assert_eq!(&bytes[4..9], b"hello");
    let n = bytes.len();
    assert_eq!(&bytes[n - 8..n - 4], &[0, 0, 0, 0]); // flags
    let payload_size = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().unwrap()) as usize;
    assert_eq!(written.footer_size as usize, payload_size + 16);
    let footer_start = n - payload_size - 16;
    assert_eq!(&bytes[footer_start..footer_start + 4], b"PFA1");
    let payload: serde_json::Value =
        serde_json::from_slice(&bytes[footer_start + 4..n - 12]).unwrap();
    assert_eq!(payload["blobs"][0]["type"], "a");
    assert_eq!(payload["blobs"][0]["fields"], serde_json::json!([1, 2]));
    assert_eq!(payload["blobs"][0]["snapshot-id"], 42);
    assert_eq!(payload["blobs"][0]["sequence-number"], 7);
    assert!(payload["blobs"][0].get("compression-codec").is_none());
    assert_eq!(payload["blobs"][1]["compression-codec"], "lz4");
    assert_eq!(payload["blobs"][2]["compression-codec"], "zstd");
    assert!(payload["properties"]["created-by"]
        .as_str()
        .unwrap()
        .starts_with("icefloe"));
}

#[test]
fn reader_reads_footer_and_blobs_by_range() {
    let (bytes, written) = sample_file();
    let io = MemIO::with("f.puffin", bytes.clone());
    let r = PuffinReader::open(&io, "f.puffin", Some(bytes.len() as u64)).unwrap();
    assert_eq!(r.blobs(), &written.blobs[..]);
    assert_eq!(r.footer_size(), written.footer_size);
    assert!(r.metadata().property("created-by").is_some());
    assert_eq!(r.read_blob(&r.blobs()[0]).unwrap(), b"hello");
    assert_eq!(r.read_blob(&r.blobs()[1]).unwrap(), vec![7u8; 1000]);
    assert_eq!(r.read_blob(&r.blobs()[2]).unwrap(), vec![9u8; 1000]);
    assert!(io.whole_reads.lock().unwrap().is_empty());
    let reads = io.range_reads.lock().unwrap().clone();
    // one tail read (the file is smaller than the guess), then exactly each blob's range
    assert_eq!(reads[0], (0, bytes.len() as u64));
    for (read, b) in reads[1..].iter().zip(&written.blobs) {
        assert_eq!(*read, (b.offset, b.length));
    }
}

#[test]
fn large_footer_takes_a_second_read() {
    let mut w = PuffinWriter::new();
    w.add_blob(blob("x", None), &vec![1u8; 50_000]).unwrap();
    w.set_property("big", &"y".repeat(40_000));
    let (bytes, _) = w.finish().unwrap();
    let io = MemIO::with("f", bytes.clone());
    let r = PuffinReader::open(&io, "f", None).unwrap();
    assert_eq!(r.metadata().property("big").unwrap().len(), 40_000);
    let reads = io.range_reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0].1, 16 * 1024);
    assert_eq!(reads[1].1, r.footer_size());
    assert!(r.footer_size() < bytes.len() as u64 - 50_000);
}

/// A Puffin file with an LZ4-compressed footer, as Java writes when asked to.
fn lz4_footer_file(blob_bytes: &[u8], payload_json: &str) -> Vec<u8> {
    use std::io::Write;
    let info = lz4_flex::frame::FrameInfo::new().content_size(Some(payload_json.len() as u64));
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    enc.write_all(payload_json.as_bytes()).unwrap();
    let payload = enc.finish().unwrap();
    let mut f = b"PFA1".to_vec();
    f.extend(blob_bytes);
    f.extend(b"PFA1");
    f.extend(&payload);
    f.extend((payload.len() as i32).to_le_bytes());
    f.extend([1, 0, 0, 0]);
    f.extend(b"PFA1");
    f
}

#[test]
fn lz4_compressed_footer() {
    let json = r#"{"blobs":[{"type":"t","fields":[3],"snapshot-id":1,"sequence-number":2,"offset":4,"length":3}],"properties":{"created-by":"test"}}"#;
    let f = lz4_footer_file(b"abc", json);
    let io = MemIO::with("f", f);
    let r = PuffinReader::open(&io, "f", None).unwrap();
    assert_eq!(r.blobs()[0].fields, vec![3]);
    assert_eq!(r.metadata().property("created-by"), Some("test"));
    assert_eq!(r.read_blob(&r.blobs()[0]).unwrap(), b"abc");
}

#[test]
fn footer_errors() {
    let json_of = |blob: &str| format!(r#"{{"blobs":[{blob}]}}"#);
    let file = |json: &str| {
        let mut f = b"PFA1abcPFA1".to_vec();
        f.extend(json.as_bytes());
        f.extend((json.len() as i32).to_le_bytes());
        f.extend([0, 0, 0, 0]);
        f.extend(b"PFA1");
        f
    };
    let open_err = |f: Vec<u8>| {
        let io = MemIO::with("f", f);
        PuffinReader::open(&io, "f", None).unwrap_err()
    };
    // blob outside the blob area
    let e = open_err(file(&json_of(
        r#"{"type":"t","fields":[],"snapshot-id":1,"sequence-number":2,"offset":4,"length":4}"#,
    )));
    assert_eq!(field_of(&e), "blobs[0]");
    assert_eq!(e.location().unwrap().file, "f");
    // missing field
    let e = open_err(file(&json_of(
        r#"{"type":"t","snapshot-id":1,"sequence-number":2,"offset":4,"length":3}"#,
    )));
    assert_eq!(field_of(&e), "blobs[0].fields");
    // negative length
    let e = open_err(file(&json_of(
        r#"{"type":"t","fields":[],"snapshot-id":1,"sequence-number":2,"offset":4,"length":-3}"#,
    )));
    assert_eq!(field_of(&e), "blobs[0].length");
    // unknown codec
    let e = open_err(file(&json_of(
        r#"{"type":"t","fields":[],"snapshot-id":1,"sequence-number":2,"offset":4,"length":3,"compression-codec":"snappy"}"#,
    )));
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    // not JSON
    assert!(matches!(open_err(file("{")), Error::InvalidJson { .. }));
    // unknown flags
    let mut f = file(r#"{"blobs":[]}"#);
    let n = f.len();
    f[n - 7] = 1;
    assert!(matches!(open_err(f), Error::Unsupported { .. }));
    // bad trailing magic, bad footer magic
    let mut f = file(r#"{"blobs":[]}"#);
    let n = f.len();
    f[n - 1] = b'2';
    assert_eq!(field_of(&open_err(f)), "footer.magic");
    let mut f = file(r#"{"blobs":[]}"#);
    f[7] = b'X';
    assert_eq!(field_of(&open_err(f)), "footer.magic");
    // an empty file with just a footer is fine
    let io = MemIO::with("f", file(r#"{"blobs":[]}"#));
    assert!(PuffinReader::open(&io, "f", None)
        .unwrap()
        .blobs()
        .is_empty());
}

#[test]
fn truncated_and_corrupt_files_never_panic() {
    let (bytes, _) = sample_file();
    let json = r#"{"blobs":[{"type":"t","fields":[3],"snapshot-id":1,"sequence-number":2,"offset":4,"length":3,"compression-codec":"lz4"}]}"#;
    let lz4 = lz4_footer_file(b"abc", json);
    for f in [&bytes, &lz4] {
        // truncated at every byte: the stated size is the truncated one, or a stale one
        for n in 0..f.len() {
            let io = MemIO::with("f", f[..n].to_vec());
            assert!(PuffinReader::open(&io, "f", None).is_err(), "cut at {n}");
            assert!(PuffinReader::open(&io, "f", Some(f.len() as u64)).is_err());
        }
        // every byte of the footer area flipped
        for i in f.len().saturating_sub(300)..f.len() {
            for flip in [0x01, 0x80, 0xFF] {
                let mut m = f.clone();
                m[i] ^= flip;
                let io = MemIO::with("f", m);
                if let Ok(r) = PuffinReader::open(&io, "f", None) {
                    for b in r.blobs() {
                        let _ = r.read_blob(b);
                    }
                }
            }
        }
    }
    // a corrupt lz4 blob fails cleanly
    let io = MemIO::with("f", lz4);
    let r = PuffinReader::open(&io, "f", None).unwrap();
    assert!(r.read_blob(&r.blobs()[0]).is_err());
}

// ---------------------------------------------------------------- DVs in Puffin files

#[test]
fn deletion_vectors_in_a_puffin_file() {
    let io = MemIO::default();
    let a = DeletionVector::from_positions([3, 4, 5]).unwrap();
    let b = DeletionVector::from_positions((0..10_000).map(|i| i * 7)).unwrap();
    let refs = write_deletion_vectors(
        &io,
        "dv.puffin",
        [("s3://b/data/a.parquet", &a), ("s3://b/data/b.parquet", &b)],
    )
    .unwrap();
    assert_eq!(refs.len(), 2);
    assert_eq!(refs[0].offset, 4);
    assert_eq!(refs[0].cardinality, 3);
    assert_eq!(refs[1].offset, refs[0].offset + refs[0].length);
    assert_eq!(refs[1].cardinality, 10_000);

    // footer metadata exactly as the spec asks
    let r = PuffinReader::open(&io, "dv.puffin", None).unwrap();
    let meta = &r.blobs()[1];
    assert_eq!(meta.blob_type, "deletion-vector-v1");
    assert!(meta.fields.is_empty());
    assert_eq!(meta.snapshot_id, -1);
    assert_eq!(meta.sequence_number, -1);
    assert_eq!(meta.compression_codec, None);
    assert_eq!(
        meta.property("referenced-data-file"),
        Some("s3://b/data/b.parquet")
    );
    assert_eq!(meta.property("cardinality"), Some("10000"));
    assert_eq!((meta.offset, meta.length), (refs[1].offset, refs[1].length));
    assert_eq!(read_deletion_vector_blob(&r, meta).unwrap(), b);

    // by range only, as a manifest entry gives it
    io.range_reads.lock().unwrap().clear();
    let got = read_deletion_vector(&io, "dv.puffin", refs[0].offset, refs[0].length).unwrap();
    assert_eq!(got, a);
    assert_eq!(
        io.range_reads.lock().unwrap().clone(),
        vec![(refs[0].offset, refs[0].length)]
    );
    // a wrong range is a typed error naming the file
    let e = read_deletion_vector(&io, "dv.puffin", refs[0].offset + 1, refs[0].length).unwrap_err();
    assert_eq!(e.location().unwrap().file, "dv.puffin");

    // one DV per data file
    let e = write_deletion_vectors(&io, "dv2.puffin", [("x", &a), ("x", &b)]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }));
    assert!(!io.exists("dv2.puffin").unwrap());
}

#[test]
fn dv_blob_cardinality_property_is_checked() {
    let dv = DeletionVector::from_positions([1, 2]).unwrap();
    let (mut nb, bytes) = deletion_vector_blob("d.parquet", &dv).unwrap();
    nb.properties[1].1 = "3".into();
    let mut w = PuffinWriter::new();
    w.add_blob(nb, &bytes).unwrap();
    let io = MemIO::default();
    w.write(&io, "p").unwrap();
    let r = PuffinReader::open(&io, "p", None).unwrap();
    let e = read_deletion_vector_blob(&r, &r.blobs()[0]).unwrap_err();
    assert_eq!(field_of(&e), "deletion-vector.cardinality");
}

#[test]
fn local_file_round_trip() {
    let dir = std::env::temp_dir().join(format!("icefloe-puffin-{}", std::process::id()));
    let loc = format!("file://{}/dv.puffin", dir.display());
    let dv = DeletionVector::from_positions([0, 65_536, 1 << 33]).unwrap();
    let refs = write_deletion_vectors(&crate::io::LocalFileIO, &loc, [("d", &dv)]).unwrap();
    let got = read_deletion_vector(
        &crate::io::LocalFileIO,
        &loc,
        refs[0].offset,
        refs[0].length,
    )
    .unwrap();
    assert_eq!(got, dv);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A DV read for its manifest entry is checked against the entry, as Java checks the
/// cardinality ("Invalid cardinality"); the footer's `referenced-data-file`, length and
/// type must agree with the entry too. Each mismatch is a typed error naming the file.
#[test]
fn entry_deletion_vectors_are_checked_against_their_entry() {
    let io = MemIO::default();
    let a = DeletionVector::from_positions([3, 4, 5]).unwrap();
    let b = DeletionVector::from_positions([1]).unwrap();
    let refs = write_deletion_vectors(
        &io,
        "dv.puffin",
        [("data/a.parquet", &a), ("data/b.parquet", &b)],
    )
    .unwrap();
    let entry = DvEntry {
        location: "dv.puffin",
        offset: refs[0].offset,
        length: refs[0].length,
        record_count: 3,
        referenced_data_file: Some("data/a.parquet"),
        file_size: None,
    };
    assert_eq!(read_entry_deletion_vector(&io, &entry).unwrap(), a);

    let check = |e: DvEntry<'_>, field: &str, says: &str| {
        let err = read_entry_deletion_vector(&io, &e).unwrap_err();
        let at = err
            .location()
            .unwrap_or_else(|| panic!("no location: {err}"));
        assert_eq!(at.file, e.location, "{err}");
        assert!(at.field.ends_with(field), "{err}");
        assert!(err.to_string().contains(says), "{err}");
    };
    check(
        DvEntry {
            record_count: 4,
            ..entry
        },
        "record_count",
        "invalid cardinality",
    );
    check(
        DvEntry {
            referenced_data_file: Some("data/b.parquet"),
            ..entry
        },
        "referenced-data-file",
        "is for data/a.parquet",
    );
    // the second blob's bytes under the first blob's entry: both cardinalities are 1
    // and 3, so give the entry the right count and see the footer disagree on the file
    check(
        DvEntry {
            offset: refs[1].offset,
            length: refs[1].length,
            record_count: 1,
            ..entry
        },
        "referenced-data-file",
        "is for data/b.parquet",
    );
    // a DV's bytes at an offset the footer does not list
    let shifted = [vec![0_u8; 3], io.read("dv.puffin").unwrap()].concat();
    io.write_new("shifted.puffin", &shifted).unwrap();
    check(
        DvEntry {
            location: "shifted.puffin",
            offset: refs[0].offset + 3,
            ..entry
        },
        "offset",
        "no blob at offset",
    );
}

/// A v4 entry's DV records no Puffin file size (`UNKNOWN_DV_FILE_SIZE`): the blob is read
/// and checked on its own (length, magic, CRC, cardinality) without the footer, so a
/// wrong cardinality or damaged blob bytes are still refused.
#[test]
fn entry_deletion_vectors_of_unknown_file_size_check_the_blob_alone() {
    let io = MemIO::default();
    let a = DeletionVector::from_positions([3, 4, 5]).unwrap();
    let refs = write_deletion_vectors(&io, "dv.puffin", [("data/a.parquet", &a)]).unwrap();
    let unknown = u64::try_from(crate::puffin::dv::UNKNOWN_DV_FILE_SIZE).ok();
    let entry = DvEntry {
        location: "dv.puffin",
        offset: refs[0].offset,
        length: refs[0].length,
        record_count: 3,
        referenced_data_file: Some("data/a.parquet"),
        file_size: unknown,
    };
    assert_eq!(read_entry_deletion_vector(&io, &entry).unwrap(), a);
    let err = read_entry_deletion_vector(
        &io,
        &DvEntry {
            record_count: 4,
            ..entry
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("invalid cardinality"), "{err}");
    // one byte of the vector flipped: the blob's CRC refuses it
    let mut bytes = io.read("dv.puffin").unwrap();
    let at = usize::try_from(refs[0].offset).unwrap() + 10;
    bytes[at] ^= 0xff;
    io.write_new("bad.puffin", &bytes).unwrap();
    let err = read_entry_deletion_vector(
        &io,
        &DvEntry {
            location: "bad.puffin",
            ..entry
        },
    )
    .unwrap_err();
    assert_eq!(err.location().unwrap().file, "bad.puffin", "{err}");
}
