//! The slot decoder's fast path (`fast.rs`) against the step decoder (`slot.rs`) and the
//! value-tree decoder (`avro.rs`): taken for every entry of the files this crate writes
//! and for none of a foreign layout; the same entries for every field kind, partition
//! type, projection and table partitioning; the same results (values or typed errors,
//! to the message) on every corrupted byte.

use super::slot::visit_slots;
use super::slot_tests::{
    bare_file, equality_delete, full_file, other_specs, partitioning, projections, root_manifest,
};
use super::*;
use crate::error::Result;
use crate::manifest::{Codec, ManifestProjection};
use crate::spec::{Literal, PrimitiveType};

/// Every entry of `bytes` as the slot visitor reads it with the fast path (`fast`) or
/// without, each cloned out of the slot, and the number of entries the fast path
/// decoded.
fn by(
    fast: bool,
    bytes: &[u8],
    p: &V4Layout,
    projection: Option<&ManifestProjection>,
) -> Result<(Vec<TrackedFile>, usize)> {
    let mut out = Vec::new();
    let (_, n) = visit_slots(bytes, p, projection, fast, |i, e| {
        assert_eq!(i, out.len());
        out.push(e.clone());
        Ok(())
    })?;
    Ok((out, n))
}

fn by_tree(
    bytes: &[u8],
    p: &V4Layout,
    projection: Option<&ManifestProjection>,
) -> Result<Vec<TrackedFile>> {
    let mut out = Vec::new();
    let push = |_: usize, e: TrackedFile| {
        out.push(e);
        Ok(())
    };
    match projection {
        Some(pr) => visit_v4_manifest_projected(bytes, "f.avro", p, pr, push)?,
        None => visit_v4_manifest_with(bytes, "f.avro", p, push)?,
    };
    Ok(out)
}

/// The three decoders agree on `bytes` read with `p` under every projection; returns
/// the entries the fast path decoded under each (the same number every time).
fn agree(bytes: &[u8], p: &V4Layout) -> usize {
    let mut fast_entries = None;
    for pr in projections() {
        let (fast, n) = by(true, bytes, p, pr.as_ref()).unwrap();
        let (step, none) = by(false, bytes, p, pr.as_ref()).unwrap();
        assert_eq!(none, 0);
        assert_eq!(fast, step, "{pr:?}");
        assert_eq!(step, by_tree(bytes, p, pr.as_ref()).unwrap(), "{pr:?}");
        assert!(fast_entries.is_none_or(|m| m == n));
        fast_entries = Some(n);
    }
    fast_entries.unwrap()
}

/// A table whose partition fields have every type a tuple holds, in one spec, and a
/// file of entries with values, nulls and no tuple.
fn every_partition_type() -> (V4Layout, Vec<TrackedFile>) {
    use PrimitiveType as P;
    let types = [
        P::Boolean,
        P::Int,
        P::Long,
        P::Float,
        P::Double,
        P::Decimal {
            precision: 9,
            scale: 2,
        },
        P::Date,
        P::Time,
        P::Timestamp,
        P::Timestamptz,
        P::TimestampNs,
        P::TimestamptzNs,
        P::String,
        P::Uuid,
        P::Fixed(3),
        P::Binary,
    ];
    let mut p = V4Layout {
        fields: types
            .iter()
            .enumerate()
            .map(|(i, ty)| (2000 + i as i32, format!("f{i}"), ty.clone()))
            .collect(),
        specs: Default::default(),
        location: None,
    };
    p.specs
        .insert(7, (0..types.len() as i32).map(|i| 2000 + i).collect());
    let values = |k: i64| -> Vec<Option<Literal>> {
        vec![
            Some(Literal::Boolean(k % 2 == 0)),
            Some(Literal::Int(-(k as i32))),
            Some(Literal::Long(k << 40)),
            Some(Literal::Float(1.5)),
            None,
            Some(Literal::Decimal(-12345 - i128::from(k))),
            Some(Literal::Date(19_000)),
            Some(Literal::Time(k)),
            Some(Literal::Timestamp(-k)),
            Some(Literal::Timestamptz(k * 1000)),
            Some(Literal::TimestampNs(k)),
            None,
            Some(Literal::String(format!("s{k}"))),
            Some(Literal::Uuid(u128::MAX - k as u128)),
            Some(Literal::Fixed(vec![1, 2, k as u8])),
            Some(Literal::Binary(vec![k as u8; k as usize])),
        ]
    };
    let entries = (0..6)
        .map(|k| {
            let mut e = full_file(k);
            if k == 3 {
                e.spec_id = None;
                e.partition = Vec::new();
            } else {
                e.spec_id = Some(7);
                e.partition = values(k);
            }
            e
        })
        .collect();
    (p, entries)
}

#[test]
fn the_fast_path_decodes_every_entry_this_crate_writes_as_the_step_decoder_does() {
    let p = partitioning();
    // full and bare entries alternate, so that a value left in the slot by the entry
    // before would show
    let data: Vec<TrackedFile> = (0..40)
        .map(|i| match i % 3 {
            0 => full_file(i),
            1 => bare_file(i),
            _ => other_specs(i),
        })
        .collect();
    let deletes: Vec<TrackedFile> = (0..5).map(equality_delete).collect();
    let mut root: Vec<TrackedFile> = (0..6).map(root_manifest).collect();
    root.extend(data.iter().take(7).cloned());
    root.push(equality_delete(9));
    // the table's partitioning evolved after the files were written: a field dropped
    // (read as unknown and skipped) and one added (null in every tuple)
    let mut evolved = partitioning();
    evolved.fields.retain(|(id, _, _)| *id != 1001);
    evolved
        .fields
        .push((1004, "later".into(), PrimitiveType::Long));
    evolved.specs.insert(4, vec![1004, 1000]);
    for codec in [Codec::Null, Codec::Deflate] {
        for (kind, entries) in [
            (V4ManifestKind::DataLeaf, &data),
            (V4ManifestKind::DeleteLeaf, &deletes),
            (V4ManifestKind::Root, &root),
        ] {
            let bytes = write_v4_manifest_with(kind, entries, codec, &p).unwrap();
            assert_eq!(agree(&bytes, &p), entries.len(), "{kind:?}");
            assert_eq!(&by(true, &bytes, &p, None).unwrap().0, entries);
            // read without the table's partitioning (the tuple skipped) and with an
            // evolved one
            let none = V4Layout::none();
            assert_eq!(agree(&bytes, &none), entries.len());
            assert_eq!(agree(&bytes, &evolved), entries.len());
            // written without a tuple
            let bytes = write_v4_manifest_with(
                kind,
                &entries
                    .iter()
                    .cloned()
                    .map(|mut e| {
                        e.partition.clear();
                        e
                    })
                    .collect::<Vec<_>>(),
                codec,
                &none,
            )
            .unwrap();
            assert_eq!(agree(&bytes, &none), entries.len());
            assert_eq!(agree(&bytes, &p), entries.len());
        }
    }
    let (p, entries) = every_partition_type();
    let bytes =
        write_v4_manifest_with(V4ManifestKind::DataLeaf, &entries, Codec::Null, &p).unwrap();
    assert_eq!(agree(&bytes, &p), entries.len());
    assert_eq!(by(true, &bytes, &p, None).unwrap().0, entries);
}

#[test]
fn the_fast_path_projects_metrics_as_the_step_decoder_does() {
    let p = partitioning();
    let bytes =
        write_v4_manifest_with(V4ManifestKind::DataLeaf, &[full_file(1)], Codec::Null, &p).unwrap();
    let get = |pr: &ManifestProjection| {
        let (mut e, n) = by(true, &bytes, &p, Some(pr)).unwrap();
        assert_eq!(n, 1);
        e.remove(0).metrics
    };
    let m = get(&ManifestProjection::scan(vec![2]));
    assert_eq!(m.column_sizes, None);
    assert_eq!(m.value_counts, Some(vec![(2, 6)]));
    assert_eq!(m.nan_value_counts, Some(vec![]));
    assert_eq!(m.lower_bounds, Some(vec![(2, b"a".to_vec())]));
    let m = get(&ManifestProjection::scan(vec![]));
    assert_eq!(m.column_sizes, None);
    assert_eq!(m.value_counts, None);
    assert_eq!(m.null_value_counts, None);
    assert_eq!(m.nan_value_counts, None);
    assert_eq!(m.upper_bounds, Some(vec![]));
    assert_eq!(get(&ManifestProjection::all()), full_file(1).metrics);
}

/// Files whose schema is not exactly this crate's are decoded by the step decoder alone,
/// to the same entries.
#[test]
fn the_fast_path_is_not_taken_for_a_foreign_layout() {
    let p = partitioning();
    let entries = [full_file(1), bare_file(2)];
    let own = super::avro::schema_for(&p).unwrap();
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "data".to_string()),
    ];
    // the same bytes under schemas that read them alike: a required long as an int, a
    // field renamed, a field's doc-less twin with another id, a field appended
    let foreign = [
        own.replace(
            r#"{"name":"record_count","field-id":103,"type":"long"}"#,
            r#"{"name":"record_count","field-id":103,"type":"int"}"#,
        ),
        own.replace(r#""name":"file_format""#, r#""name":"format""#),
        own.replace(
            r#"{"name":"format_version","field-id":157,"type":"int"}"#,
            r#"{"name":"format_version","field-id":157,"type":"long"}"#,
        ),
        own.replace(
            "\n]}",
            ",\n{\"name\":\"extra\",\"field-id\":9999,\"type\":\"null\"}\n]}",
        ),
    ];
    let mut body = Vec::new();
    for e in &entries {
        super::avro::encode(&mut body, e, &p).unwrap();
    }
    for schema in &foreign {
        assert_ne!(schema, &own);
        let mut w = crate::manifest::avro::ContainerWriter::new(schema, &meta, Codec::Null);
        // one block of both entries
        w.block.extend_from_slice(&body);
        for _ in &entries {
            w.end_object().unwrap();
        }
        let bytes = w.finish().unwrap();
        assert_eq!(agree(&bytes, &p), 0, "{schema}");
        assert_eq!(by(true, &bytes, &p, None).unwrap().0, entries);
    }
    // and the same bytes under this crate's own schema take it
    let mut w = crate::manifest::avro::ContainerWriter::new(&own, &meta, Codec::Null);
    w.block.extend_from_slice(&body);
    w.end_object().unwrap();
    w.end_object().unwrap();
    assert_eq!(agree(&w.finish().unwrap(), &p), entries.len());
}

/// Entries the fast path gives up on (an unknown status, a block count with its byte
/// size) are decoded again by the step decoder: its error, or its value.
#[test]
fn entries_the_fast_path_gives_up_on_go_to_the_step_decoder() {
    let p = partitioning();
    let entries = [bare_file(0), full_file(1)];
    let bytes =
        write_v4_manifest_with(V4ManifestKind::DataLeaf, &entries, Codec::Null, &p).unwrap();
    // the first entry's status is the first byte of the block: 9 is no status
    let start = bytes.len() - 16 - {
        let mut out = Vec::new();
        for e in &entries {
            super::avro::encode(&mut out, e, &p).unwrap();
        }
        out.len()
    };
    let mut bad = bytes.clone();
    bad[start] = 18;
    let fast = by(true, &bad, &p, None).unwrap_err();
    let step = by(false, &bad, &p, None).unwrap_err();
    assert_eq!(fast.to_string(), step.to_string());
    assert!(matches!(fast, crate::error::Error::InvalidMetadata { .. }));
    assert_eq!(
        fast.location().unwrap().field,
        "entries[0].tracking.status",
        "{fast}"
    );
    // split offsets written as one block with its byte size (a negative count): the
    // fast path gives up on that entry only
    let mut e = bare_file(0);
    e.split_offsets = Some(vec![3, 4]);
    let plain = {
        let mut out = Vec::new();
        super::avro::encode(&mut out, &e, &p).unwrap();
        out
    };
    // [branch 1, count 2, 3, 4, 0] becomes [branch 1, count -2, size 2, 3, 4, 0]
    let at = plain.windows(5).position(|w| w == [2, 4, 6, 8, 0]).unwrap();
    let mut sized = plain[..at].to_vec();
    sized.extend_from_slice(&[2, 3, 4, 6, 8, 0]);
    sized.extend_from_slice(&plain[at + 5..]);
    let schema = super::avro::schema_for(&p).unwrap();
    let meta = [
        ("format-version", "4".to_string()),
        ("content", "data".to_string()),
    ];
    let mut w = crate::manifest::avro::ContainerWriter::new(&schema, &meta, Codec::Null);
    for body in [&plain, &sized, &plain] {
        w.block.extend_from_slice(body);
        w.end_object().unwrap();
    }
    let bytes = w.finish().unwrap();
    let (got, n) = by(true, &bytes, &p, None).unwrap();
    assert_eq!(n, 2);
    assert_eq!(got, vec![e.clone(), e.clone(), e]);
}

/// On every corrupted byte the fast path gives what the step decoder gives: the same
/// entries, or the same typed error, to the message; never a panic.
#[test]
fn corrupted_bytes_read_alike_with_and_without_the_fast_path() {
    let p = partitioning();
    let root = [
        root_manifest(1),
        root_manifest(2),
        full_file(1),
        other_specs(2),
        equality_delete(3),
    ];
    let bytes = write_v4_manifest_with(V4ManifestKind::Root, &root, Codec::Null, &p).unwrap();
    let scan = ManifestProjection::scan(vec![1]);
    let mut differing = 0;
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x02, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            let projection = (flip == 0x80).then_some(&scan);
            let fast = by(true, &b, &p, projection);
            let step = by(false, &b, &p, projection);
            match (fast, step) {
                (Ok((fast, _)), Ok((step, _))) => {
                    assert_eq!(fast, step, "byte {i} ^ {flip:#x}");
                    differing += usize::from(projection.is_none() && fast != root);
                }
                (Err(fast), Err(step)) => {
                    assert_eq!(fast.to_string(), step.to_string(), "byte {i} ^ {flip:#x}");
                    assert_eq!(std::mem::discriminant(&fast), std::mem::discriminant(&step));
                }
                (fast, step) => panic!("byte {i} ^ {flip:#x}: {fast:?} / {step:?}"),
            }
        }
    }
    // some flips change values without breaking the file
    assert!(differing > 0);
}
