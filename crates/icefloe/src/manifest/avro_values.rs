//! Decoders of the optional Avro values Iceberg's manifests and manifest lists hold:
//! unions with null of longs, ints, booleans, bytes and strings, arrays, and the maps of
//! field id to count or bound (as arrays of key-value records, or Avro maps with string
//! keys); and the big-endian decimals of partition values and bounds. Each checks the
//! writer schema it is given and fails with a typed error on anything else.

use super::avro::{AvroSchema, Cursor, Record};
use crate::error::{Error, Result};

pub(crate) fn mismatch(s: &AvroSchema, expected: &str) -> Error {
    Error::invalid_metadata("", format!("expected Avro {expected}, found {s:?}"))
}

/// A required value: an error naming the field when it is null.
#[inline]
pub(crate) fn req<T>(v: Result<Option<T>>, field: &str) -> Result<T> {
    match v {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(Error::invalid_metadata(field, "required field is null")),
        Err(e) => Err(e.under(field)),
    }
}

#[inline]
pub(crate) fn opt_long(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<i64>> {
    match s {
        AvroSchema::Long | AvroSchema::Int => cur.long().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_long(cur, s)
        }
        _ => Err(mismatch(s, "long")),
    }
}

#[inline]
pub(crate) fn opt_int(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<i32>> {
    match s {
        AvroSchema::Int => cur.int().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int(cur, s)
        }
        _ => Err(mismatch(s, "int")),
    }
}

#[inline]
pub(crate) fn opt_bool(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<bool>> {
    match s {
        AvroSchema::Boolean => cur.boolean().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_bool(cur, s)
        }
        _ => Err(mismatch(s, "boolean")),
    }
}

#[inline]
pub(crate) fn opt_bytes<'a>(cur: &mut Cursor<'a>, s: &AvroSchema) -> Result<Option<&'a [u8]>> {
    match s {
        AvroSchema::Bytes | AvroSchema::String => cur.bytes().map(Some),
        AvroSchema::Fixed(n) => cur.take(*n).map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_bytes(cur, s)
        }
        _ => Err(mismatch(s, "bytes")),
    }
}

#[inline]
pub(crate) fn opt_str<'a>(cur: &mut Cursor<'a>, s: &AvroSchema) -> Result<Option<&'a str>> {
    match s {
        AvroSchema::String | AvroSchema::Bytes => cur.string().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_str(cur, s)
        }
        _ => Err(mismatch(s, "string")),
    }
}

/// Column bounds by field id.
pub(crate) type BoundsMap = Vec<(i32, Vec<u8>)>;

/// Calls `f` for each item of an array (the cursor is at the first block count).
#[inline]
pub(crate) fn for_each_item(
    cur: &mut Cursor<'_>,
    mut f: impl FnMut(&mut Cursor<'_>) -> Result<()>,
) -> Result<()> {
    loop {
        let n = cur.block_count()?;
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            f(cur)?;
        }
    }
}

pub(crate) fn opt_long_list(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<Vec<i64>>> {
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_long_list(cur, s)
        }
        AvroSchema::Array(items) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                out.push(req(opt_long(c, items), "element")?);
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "array")),
    }
}

/// The key and value fields of a map stored as an array of records (`logicalType: map`).
pub(crate) fn kv_fields(items: &AvroSchema) -> Result<(&Record, usize, usize)> {
    let rec = match items {
        AvroSchema::Record(r) => r,
        other => return Err(mismatch(other, "record of key and value")),
    };
    let k = rec.fields.iter().position(|f| f.name == "key");
    let v = rec.fields.iter().position(|f| f.name == "value");
    match (k, v) {
        (Some(k), Some(v)) => Ok((rec, k, v)),
        _ => Err(mismatch(items, "record of key and value")),
    }
}

pub(crate) fn opt_int_long_map(
    cur: &mut Cursor<'_>,
    s: &AvroSchema,
) -> Result<Option<Vec<(i32, i64)>>> {
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int_long_map(cur, s)
        }
        AvroSchema::Array(items) => {
            let (rec, ki, vi) = kv_fields(items)?;
            let mut out = Vec::with_capacity(8);
            let fast = ki == 0
                && vi == 1
                && rec.fields.len() == 2
                && rec.fields[0].schema == AvroSchema::Int
                && rec.fields[1].schema == AvroSchema::Long;
            if fast {
                for_each_item(cur, |c| {
                    let k = c.int()?;
                    let v = c.long()?;
                    out.push((k, v));
                    Ok(())
                })?;
            } else {
                for_each_item(cur, |c| {
                    let (mut k, mut v) = (None, None);
                    for (i, f) in rec.fields.iter().enumerate() {
                        if i == ki {
                            k = opt_int(c, &f.schema)?;
                        } else if i == vi {
                            v = opt_long(c, &f.schema)?;
                        } else {
                            c.skip(&f.schema)?;
                        }
                    }
                    match (k, v) {
                        (Some(k), Some(v)) => out.push((k, v)),
                        (None, _) => return Err(Error::invalid_metadata("key", "map key is null")),
                        (Some(_), None) => {}
                    }
                    Ok(())
                })?;
            }
            Ok(Some(out))
        }
        AvroSchema::Map(values) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                let k = string_key(c)?;
                if let Some(v) = opt_long(c, values)? {
                    out.push((k, v));
                }
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "map")),
    }
}

pub(crate) fn string_key(c: &mut Cursor<'_>) -> Result<i32> {
    let k = c.string()?;
    k.parse()
        .map_err(|_| Error::invalid_metadata("key", format!("map key '{k}' is not a field id")))
}

pub(crate) fn opt_int_bytes_map(
    cur: &mut Cursor<'_>,
    s: &AvroSchema,
    only: Option<&[i32]>,
) -> Result<Option<BoundsMap>> {
    let keep = |k: i32| only.is_none_or(|ids| ids.contains(&k));
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int_bytes_map(cur, s, only)
        }
        AvroSchema::Array(items) => {
            let (rec, ki, vi) = kv_fields(items)?;
            let mut out = Vec::with_capacity(8);
            let fast = ki == 0
                && vi == 1
                && rec.fields.len() == 2
                && rec.fields[0].schema == AvroSchema::Int
                && rec.fields[1].schema == AvroSchema::Bytes;
            if fast {
                for_each_item(cur, |c| {
                    let k = c.int()?;
                    let v = c.bytes()?;
                    if keep(k) {
                        out.push((k, v.to_vec()));
                    }
                    Ok(())
                })?;
            } else {
                for_each_item(cur, |c| {
                    let (mut k, mut v) = (None, None);
                    for (i, f) in rec.fields.iter().enumerate() {
                        if i == ki {
                            k = opt_int(c, &f.schema)?;
                        } else if i == vi {
                            v = opt_bytes(c, &f.schema)?;
                        } else {
                            c.skip(&f.schema)?;
                        }
                    }
                    match (k, v) {
                        (Some(k), Some(v)) if keep(k) => out.push((k, v.to_vec())),
                        (None, _) => return Err(Error::invalid_metadata("key", "map key is null")),
                        _ => {}
                    }
                    Ok(())
                })?;
            }
            Ok(Some(out))
        }
        AvroSchema::Map(values) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                let k = string_key(c)?;
                if let Some(v) = opt_bytes(c, values)? {
                    if keep(k) {
                        out.push((k, v.to_vec()));
                    }
                }
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "map")),
    }
}

/// A big-endian two's complement integer of 1 to 16 bytes.
pub(crate) fn decimal_from_be(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut a = [fill; 16];
    a[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(a))
}
