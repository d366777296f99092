//! A small Avro object container reader and writer, just what manifests and manifest
//! lists need: the writer schema parsed from the header, binary decoding with bounds
//! checks on every read (no input can panic), skipping of any value by its schema or by
//! a plan compiled from it, and blocks compressed with a codec (deflate with libdeflate,
//! the others with the `apache-avro` crate's codecs; deflate blocks are inflated with
//! libdeflate into one buffer reused across blocks). What blocks decompress to is bounded (see [`crate::limits`]).
//!
//! Decoding goes straight from the block bytes to the manifest structs (see `reader.rs`)
//! instead of through a generic value tree, so that a scan pays only for the fields it
//! keeps.

use std::collections::HashMap;

use serde_json::Value;

use super::Codec;
use crate::error::{Error, Result};

pub(crate) const MAGIC: &[u8; 4] = b"Obj\x01";
/// Uncompressed block size at which the writer starts a new block: Avro Java's
/// `DataFileConstants.DEFAULT_SYNC_INTERVAL` (16 * 4000), which Iceberg does not change.
const BLOCK_TARGET: usize = 64_000;

fn corrupt(message: impl Into<String>) -> Error {
    Error::invalid_metadata("", message)
}

fn eof() -> Error {
    corrupt("unexpected end of data (truncated file?)")
}

// ---------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------

/// An Avro schema, with the Iceberg `field-id` / `element-id` properties kept.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AvroSchema {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record(Record),
    Enum(usize),
    Array(Box<AvroSchema>),
    Map(Box<AvroSchema>),
    Union(Vec<AvroSchema>),
    Fixed(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    pub name: String,
    pub fields: Vec<AvroField>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AvroField {
    pub name: String,
    pub field_id: Option<i32>,
    pub schema: AvroSchema,
}

impl AvroSchema {
    /// Parses the JSON text of a writer schema.
    pub(crate) fn parse(text: &str) -> Result<AvroSchema> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| corrupt(format!("the Avro schema is not valid JSON: {e}")))?;
        let mut names = HashMap::new();
        parse_schema(&v, &mut names, 0)
    }

    /// The record this schema is, or the record inside a `["null", record]` union.
    pub(crate) fn as_record(&self) -> Option<&Record> {
        match self {
            AvroSchema::Record(r) => Some(r),
            AvroSchema::Union(b) => b.iter().find_map(|s| match s {
                AvroSchema::Record(r) => Some(r),
                _ => None,
            }),
            _ => None,
        }
    }
}

const MAX_SCHEMA_DEPTH: usize = 64;

fn parse_schema(
    v: &Value,
    names: &mut HashMap<String, AvroSchema>,
    depth: usize,
) -> Result<AvroSchema> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(corrupt("the Avro schema is nested too deeply"));
    }
    match v {
        Value::String(s) => primitive(s)
            .or_else(|| names.get(s.as_str()).cloned())
            .or_else(|| {
                s.rsplit('.')
                    .next()
                    .and_then(|short| names.get(short).cloned())
            })
            .ok_or_else(|| corrupt(format!("unknown Avro type '{s}' in the schema"))),
        Value::Array(branches) => {
            let mut out = Vec::with_capacity(branches.len());
            for b in branches {
                out.push(parse_schema(b, names, depth + 1)?);
            }
            Ok(AvroSchema::Union(out))
        }
        Value::Object(o) => {
            let ty = o
                .get("type")
                .ok_or_else(|| corrupt("an Avro schema object has no 'type'"))?;
            let ty = match ty {
                Value::String(s) => s.as_str(),
                other => return parse_schema(other, names, depth + 1),
            };
            let name = o.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = match ty {
                "record" | "error" => {
                    let fields = o
                        .get("fields")
                        .and_then(Value::as_array)
                        .ok_or_else(|| corrupt(format!("Avro record '{name}' has no fields")))?;
                    let mut out = Vec::with_capacity(fields.len());
                    for f in fields {
                        let fname = f
                            .get("name")
                            .and_then(Value::as_str)
                            .ok_or_else(|| corrupt(format!("a field of '{name}' has no name")))?;
                        let ftype = f.get("type").ok_or_else(|| {
                            corrupt(format!("field '{fname}' of '{name}' has no type"))
                        })?;
                        out.push(AvroField {
                            name: fname.to_string(),
                            field_id: f.get("field-id").and_then(json_i32),
                            schema: parse_schema(ftype, names, depth + 1)?,
                        });
                    }
                    AvroSchema::Record(Record {
                        name: name.to_string(),
                        fields: out,
                    })
                }
                "enum" => AvroSchema::Enum(
                    o.get("symbols")
                        .and_then(Value::as_array)
                        .map(Vec::len)
                        .ok_or_else(|| corrupt(format!("Avro enum '{name}' has no symbols")))?,
                ),
                "array" => AvroSchema::Array(Box::new(parse_schema(
                    o.get("items")
                        .ok_or_else(|| corrupt("an Avro array has no items"))?,
                    names,
                    depth + 1,
                )?)),
                "map" => AvroSchema::Map(Box::new(parse_schema(
                    o.get("values")
                        .ok_or_else(|| corrupt("an Avro map has no values"))?,
                    names,
                    depth + 1,
                )?)),
                "fixed" => AvroSchema::Fixed(
                    o.get("size")
                        .and_then(Value::as_u64)
                        .and_then(|s| usize::try_from(s).ok())
                        .ok_or_else(|| corrupt(format!("Avro fixed '{name}' has no size")))?,
                ),
                other => primitive(other)
                    .or_else(|| names.get(other).cloned())
                    .ok_or_else(|| corrupt(format!("unknown Avro type '{other}' in the schema")))?,
            };
            if matches!(ty, "record" | "error" | "enum" | "fixed") && !name.is_empty() {
                names.insert(name.to_string(), schema.clone());
                if let Some(ns) = o.get("namespace").and_then(Value::as_str) {
                    names.insert(format!("{ns}.{name}"), schema.clone());
                }
            }
            Ok(schema)
        }
        _ => Err(corrupt(
            "an Avro schema must be a string, a list or an object",
        )),
    }
}

fn json_i32(v: &Value) -> Option<i32> {
    match v {
        Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn primitive(s: &str) -> Option<AvroSchema> {
    Some(match s {
        "null" => AvroSchema::Null,
        "boolean" => AvroSchema::Boolean,
        "int" => AvroSchema::Int,
        "long" => AvroSchema::Long,
        "float" => AvroSchema::Float,
        "double" => AvroSchema::Double,
        "bytes" => AvroSchema::Bytes,
        "string" => AvroSchema::String,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// Binary decoding
// ---------------------------------------------------------------------------------------

/// A position in a byte slice; every read checks bounds.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Reads a zigzag variable-length long. One-byte values (most ids, counts, lengths
    /// and union branches) take the first branch.
    #[inline(always)]
    pub(crate) fn long(&mut self) -> Result<i64> {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                let v = u64::from(b);
                Ok(unzigzag(v))
            }
            _ => match self.long_word() {
                Some(v) => Ok(v),
                None => self.long_multi(),
            },
        }
    }

    /// A value of up to 8 bytes with 8 bytes at hand, decoded without a loop; `None`
    /// otherwise. Returning an `Option` (two registers) rather than a `Result` (through
    /// memory) keeps the common multi-byte case cheap at every call site.
    #[inline(never)]
    fn long_word(&mut self) -> Option<i64> {
        let w = self.buf.get(self.pos..)?.first_chunk::<8>()?;
        let (v, len) = word_varint(u64::from_le_bytes(*w))?;
        self.pos += len;
        Some(v)
    }

    /// The rest of [`Cursor::long`], after [`Cursor::long_word`]: values of 9 or 10
    /// bytes, values near the end of the data, and the errors.
    #[inline(never)]
    fn long_multi(&mut self) -> Result<i64> {
        if let Some(w) = self.buf.get(self.pos..self.pos.saturating_add(10)) {
            let mut v: u64 = 0;
            for (i, &b) in w.iter().enumerate() {
                v |= u64::from(b & 0x7f) << (7 * i);
                if b & 0x80 == 0 {
                    self.pos += i + 1;
                    return Ok(unzigzag(v));
                }
            }
            return Err(corrupt("a variable-length integer is longer than 10 bytes"));
        }
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let mut v: u64 = 0;
        for (i, &b) in rest.iter().take(10).enumerate() {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(unzigzag(v));
            }
        }
        if rest.len() < 10 {
            Err(eof())
        } else {
            Err(corrupt("a variable-length integer is longer than 10 bytes"))
        }
    }

    /// Skips `n` variable-length integers (see [`Cursor::try_skip_longs`]); values
    /// longer than 10 bytes are errors, as in [`Cursor::long`].
    #[inline]
    pub(crate) fn skip_longs(&mut self, n: usize) -> Result<()> {
        let start = self.pos;
        if self.try_skip_longs(n).is_some() {
            return Ok(());
        }
        self.pos = start;
        self.skip_longs_slow(n)
    }

    /// [`Cursor::skip_longs`] one byte at a time, for the errors that the word-wise loop
    /// gives up on.
    #[cold]
    #[inline(never)]
    fn skip_longs_slow(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            let mut len = 0usize;
            loop {
                let b = *self.buf.get(self.pos).ok_or_else(eof)?;
                self.pos += 1;
                len += 1;
                if b & 0x80 == 0 {
                    break;
                }
                if len == 10 {
                    return Err(corrupt("a variable-length integer is longer than 10 bytes"));
                }
            }
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn int(&mut self) -> Result<i32> {
        let v = self.long()?;
        i32::try_from(v).map_err(|_| corrupt(format!("int value {v} is out of range")))
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(eof)?;
        let s = self.buf.get(self.pos..end).ok_or_else(eof)?;
        self.pos = end;
        Ok(s)
    }

    #[inline]
    pub(crate) fn len_prefix(&mut self) -> Result<usize> {
        let n = self.long()?;
        usize::try_from(n).map_err(|_| corrupt(format!("negative length {n}")))
    }

    #[inline(always)]
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8]> {
        // the common case: a length under 64 in one byte
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 && b & 1 == 0 {
                let start = self.pos + 1;
                if let Some(s) = self.buf.get(start..start + usize::from(b >> 1)) {
                    self.pos = start + s.len();
                    return Ok(s);
                }
            }
        }
        self.bytes_slow()
    }

    #[inline(never)]
    fn bytes_slow(&mut self) -> Result<&'a [u8]> {
        let n = self.len_prefix()?;
        self.take(n)
    }

    #[inline]
    pub(crate) fn string(&mut self) -> Result<&'a str> {
        utf8(self.bytes()?)
    }

    pub(crate) fn boolean(&mut self) -> Result<bool> {
        match self.take(1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(corrupt("a boolean byte is neither 0 nor 1")),
        }
    }

    pub(crate) fn float(&mut self) -> Result<f32> {
        let b = self.take(4)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn double(&mut self) -> Result<f64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }

    /// Reads a union branch index and returns the branch's schema.
    #[inline]
    pub(crate) fn branch<'s>(&mut self, branches: &'s [AvroSchema]) -> Result<&'s AvroSchema> {
        let i = self.long()?;
        usize::try_from(i)
            .ok()
            .and_then(|i| branches.get(i))
            .ok_or_else(|| corrupt(format!("union branch {i} does not exist")))
    }

    /// Reads the next block count of an array or map: 0 at the end. A count larger than
    /// the bytes left cannot be real (every item takes at least one byte).
    #[inline(always)]
    pub(crate) fn block_count(&mut self) -> Result<usize> {
        // the common case: a small positive count in one byte
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 && b & 1 == 0 {
                let n = usize::from(b >> 1);
                if n < self.buf.len() - self.pos {
                    self.pos += 1;
                    return Ok(n);
                }
            }
        }
        self.block_count_slow()
    }

    #[inline(never)]
    fn block_count_slow(&mut self) -> Result<usize> {
        let n = self.long()?;
        let n = if n < 0 {
            self.long()?; // byte size of the block, not needed
            n.unsigned_abs()
        } else {
            n as u64
        };
        let n = usize::try_from(n).map_err(|_| corrupt("array block count out of range"))?;
        if n > self.remaining() {
            return Err(corrupt(format!(
                "array block of {n} items is longer than the data left"
            )));
        }
        Ok(n)
    }

    /// Skips one value of `schema`.
    pub(crate) fn skip(&mut self, schema: &AvroSchema) -> Result<()> {
        match schema {
            AvroSchema::Null => {}
            AvroSchema::Boolean => {
                self.take(1)?;
            }
            AvroSchema::Int | AvroSchema::Long | AvroSchema::Enum(_) => {
                self.long()?;
            }
            AvroSchema::Float => {
                self.take(4)?;
            }
            AvroSchema::Double => {
                self.take(8)?;
            }
            AvroSchema::Bytes | AvroSchema::String => {
                self.bytes()?;
            }
            AvroSchema::Fixed(n) => {
                self.take(*n)?;
            }
            AvroSchema::Record(r) => {
                for f in &r.fields {
                    self.skip(&f.schema)?;
                }
            }
            AvroSchema::Array(items) => {
                // Fast path for int-keyed maps (records of ints, longs and bytes): no
                // recursion per item.
                let flat = match items.as_ref() {
                    AvroSchema::Record(r) => r.fields.iter().all(|f| {
                        matches!(
                            f.schema,
                            AvroSchema::Int | AvroSchema::Long | AvroSchema::Bytes
                        )
                    }),
                    _ => false,
                };
                loop {
                    let n = self.block_count()?;
                    if n == 0 {
                        break;
                    }
                    match (flat, items.as_ref()) {
                        (true, AvroSchema::Record(r)) => {
                            for _ in 0..n {
                                for f in &r.fields {
                                    if f.schema == AvroSchema::Bytes {
                                        self.bytes()?;
                                    } else {
                                        self.long()?;
                                    }
                                }
                            }
                        }
                        _ => {
                            for _ in 0..n {
                                self.skip(items)?;
                            }
                        }
                    }
                }
            }
            AvroSchema::Map(values) => loop {
                let n = self.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.bytes()?;
                    self.skip(values)?;
                }
            },
            AvroSchema::Union(b) => {
                let s = self.branch(b)?;
                self.skip(s)?;
            }
        }
        Ok(())
    }
}

/// Reads that give up instead of failing: each returns `None` on anything but the common
/// encodings (a block count without a byte size, a string that is all there), including
/// every error. They serve the entry decoder's fast path, which then decodes the entry
/// again with the reads above, so that the errors (and the rare encodings) have one
/// implementation. The `Option` results live in registers, where a `Result` with its
/// error goes through memory. They are [`Rest`]'s reads, on the bytes after the position.
impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(crate) fn try_long(&mut self) -> Option<i64> {
        let mut rest = self.rest();
        let v = rest.try_long()?;
        self.set_rest(rest);
        Some(v)
    }

    #[inline(always)]
    pub(crate) fn try_skip_longs(&mut self, n: usize) -> Option<()> {
        let mut rest = self.rest();
        rest.try_skip_longs(n)?;
        self.set_rest(rest);
        Some(())
    }

    /// The bytes after the position.
    #[inline(always)]
    pub(crate) fn rest(&self) -> Rest<'a> {
        Rest(self.buf.get(self.pos..).unwrap_or_default())
    }

    /// Moves the position to where `rest` starts (a rest taken from this cursor).
    #[inline(always)]
    pub(crate) fn set_rest(&mut self, rest: Rest<'a>) {
        self.pos = self.buf.len() - rest.0.len();
    }
}

/// The fast path's cursor: the bytes not read yet, as a slice that shrinks. Two values,
/// where a [`Cursor`] has three (the buffer, its length and the position), so that the
/// position stays in a register through the entry decoder's fast path: with a `Cursor`,
/// the compiler kept it on the stack between varints in the bounds loops
/// (docs/benchmarks.md).
#[derive(Clone, Copy)]
pub(crate) struct Rest<'a>(&'a [u8]);

impl<'a> Rest<'a> {
    /// Reads with a [`Cursor`] over the rest (the plan's `Result` readers); `None` on its
    /// error. The reader gets a cursor of its own, taken back on success, so that the rest
    /// is never lent out of line and can stay in registers.
    #[inline(always)]
    pub(crate) fn by_cursor(
        &mut self,
        read: impl FnOnce(&mut Cursor<'a>) -> Result<()>,
    ) -> Option<()> {
        let mut c = Cursor::new(self.0);
        read(&mut c).ok()?;
        *self = c.rest();
        Some(())
    }

    /// A long: one byte inline, up to 8 from one word, longer values and the last bytes
    /// out of line.
    #[inline(always)]
    pub(crate) fn try_long(&mut self) -> Option<i64> {
        if let [b, rest @ ..] = self.0 {
            if *b < 0x80 {
                self.0 = rest;
                return Some(unzigzag(u64::from(*b)));
            }
        }
        let (v, len) = match self.0.first_chunk::<8>() {
            Some(w) => match word_varint(u64::from_le_bytes(*w)) {
                Some(r) => r,
                None => long_by_bytes(self.0, 0)?,
            },
            None => long_by_bytes(self.0, 0)?,
        };
        self.0 = self.0.get(len..)?;
        Some(v)
    }

    #[inline(always)]
    pub(crate) fn try_int(&mut self) -> Option<i32> {
        i32::try_from(self.try_long()?).ok()
    }

    /// A value from 0 to 63, which is one even byte (its zigzag decoding a shift), read;
    /// `None`, with nothing read, for any other value.
    #[inline(always)]
    fn try_small(&mut self) -> Option<u8> {
        match self.0 {
            [b, rest @ ..] if *b & 0x81 == 0 => {
                self.0 = rest;
                Some(*b >> 1)
            }
            _ => None,
        }
    }

    /// A long that is not negative, as a length or count.
    #[inline(always)]
    pub(crate) fn try_len(&mut self) -> Option<usize> {
        match self.try_small() {
            Some(v) => Some(usize::from(v)),
            None => usize::try_from(self.try_long()?).ok(),
        }
    }

    /// A map key (a field id).
    #[inline(always)]
    pub(crate) fn try_key(&mut self) -> Option<i32> {
        match self.try_small() {
            Some(v) => Some(i32::from(v)),
            None => self.try_int(),
        }
    }

    /// A map item of an int key and a byte string (a bound): both lengths under 64 in
    /// one read of two bytes.
    #[inline(always)]
    pub(crate) fn try_key_bytes(&mut self) -> Option<(i32, &'a [u8])> {
        if let [k, n, rest @ ..] = self.0 {
            if (*k | *n) & 0x81 == 0 {
                let n = usize::from(*n >> 1);
                if n > rest.len() {
                    return None;
                }
                let (v, rest) = rest.split_at(n);
                self.0 = rest;
                return Some((i32::from(*k >> 1), v));
            }
        }
        let k = self.try_key()?;
        Some((k, self.try_bytes()?))
    }

    /// The branch of a union of two: `false` for branch 0, `true` for branch 1, in their
    /// one-byte encodings (0 and 2); `None` for anything else.
    #[inline(always)]
    pub(crate) fn try_branch(&mut self) -> Option<bool> {
        match self.0 {
            [0, rest @ ..] => {
                self.0 = rest;
                Some(false)
            }
            [2, rest @ ..] => {
                self.0 = rest;
                Some(true)
            }
            _ => None,
        }
    }

    #[inline(always)]
    pub(crate) fn try_bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.try_len()?;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(s)
    }

    /// A block count of an array or map, 0 at the end; gives up on the negative counts
    /// that carry a byte size, and on counts that [`Cursor::block_count`] rejects.
    #[inline(always)]
    pub(crate) fn try_block_count(&mut self) -> Option<usize> {
        let n = self.try_len()?;
        (n <= self.0.len()).then_some(n)
    }

    /// An array's items into `out` (cleared first), each read by `item`; gives up as
    /// [`Rest::try_block_count`] and `item` do.
    #[inline(always)]
    pub(crate) fn try_array_into<T>(
        &mut self,
        out: &mut Vec<T>,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<()> {
        out.clear();
        loop {
            let n = self.try_block_count()?;
            if n == 0 {
                return Some(());
            }
            for _ in 0..n {
                out.push(item(self)?);
            }
        }
    }

    /// Skips `n` varints eight bytes at a time: the bytes without the continuation bit
    /// end a value. Gives up on a value longer than 10 bytes (an error).
    #[inline(always)]
    pub(crate) fn try_skip_longs(&mut self, n: usize) -> Option<()> {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let buf = self.0;
        let mut left = n;
        // continuation bytes of the value being skipped, before `pos`
        let mut run = 0usize;
        let mut pos = 0usize;
        while left > 0 {
            let Some(word) = buf.get(pos..).and_then(<[u8]>::first_chunk::<8>) else {
                // the last bytes, one value at a time (a value begun before them is
                // read from its start)
                self.0 = buf.get(pos.checked_sub(run)?..)?;
                for _ in 0..left {
                    self.try_long()?;
                }
                return Some(());
            };
            let ends = !u64::from_le_bytes(*word) & HIGH;
            if ends == 0 {
                run += 8;
                if run >= 10 {
                    return None;
                }
                pos += 8;
                continue;
            }
            if run + (ends.trailing_zeros() / 8) as usize >= 10 {
                return None;
            }
            // byte i of `prefix`: how many of bytes 0..=i end a value (a multiply sums
            // the one-bit flags; no popcnt on baseline x86-64)
            let prefix = (ends >> 7).wrapping_mul(0x0101_0101_0101_0101);
            let count = (prefix >> 56) as usize;
            if count < left {
                left -= count;
                run = (ends.leading_zeros() / 8) as usize;
                pos += 8;
                continue;
            }
            // the first byte whose prefix count reaches `left` (at most 8 here): prefix
            // bytes are at most 8, so `(p | 0x80) - left` keeps its high bit iff p >= left
            let reached = (prefix | HIGH)
                .wrapping_sub(0x0101_0101_0101_0101u64.wrapping_mul(left as u64))
                & HIGH;
            pos += (reached.trailing_zeros() / 8) as usize + 1;
            break;
        }
        self.0 = buf.get(pos..)?;
        Some(())
    }
}

/// A varint of up to 8 bytes at the start of the little-endian word `w`, and its length;
/// `None` when the word holds no end of a value. Without a loop: the 7-bit groups are
/// gathered in pairs, then quads, then the two halves.
#[inline(always)]
fn word_varint(w: u64) -> Option<(i64, usize)> {
    let ends = !w & 0x8080_8080_8080_8080;
    if ends == 0 {
        return None;
    }
    let len = (ends.trailing_zeros() / 8 + 1) as usize;
    let keep = if len == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * len)) - 1
    };
    let x = w & keep & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    let v = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((unzigzag(v), len))
}

/// The varint at `pos` and its length, for the values that [`Cursor::long_word`] leaves:
/// those of 9 or 10 bytes (Java's random snapshot ids) and those with fewer than 8 bytes
/// after them. `None` on any error. Out of line, and by value, so that the fast path's
/// cursor stays in registers; cold, so that the compiler keeps the registers it would
/// save around the call off the common path (the bench manifest's scan fields: 5 % less
/// time).
#[cold]
#[inline(never)]
fn long_by_bytes(buf: &[u8], pos: usize) -> Option<(i64, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in buf.get(pos..)?.iter().take(10).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((unzigzag(v), i + 1));
        }
    }
    None
}

/// The value of a zigzag-encoded long.
#[inline(always)]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// An Avro string's bytes as text.
pub(crate) fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| corrupt("a string is not valid UTF-8"))
}

/// How to skip one value of a schema, worked out once per file so that skipping does not
/// walk the schema per value: runs of ints and longs collapse into one count, and arrays
/// of records of ints and longs (Iceberg's int-keyed count maps) skip all the varints of
/// a block in one loop.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SkipPlan {
    Nothing,
    /// This many variable-length integers in a row (at least one).
    Longs(usize),
    /// A length-prefixed byte string.
    Bytes,
    Fixed(usize),
    /// The fields of a record, in order.
    Seq(Vec<SkipPlan>),
    /// A union: a branch index, then the branch.
    Union(Vec<SkipPlan>),
    /// An array whose items are this many variable-length integers each.
    LongArray(usize),
    /// A union of null (branch `null`) and a [`SkipPlan::LongArray`] (the other of
    /// two branches): Iceberg's optional count maps and lists.
    OptLongArray {
        null: i64,
        items: usize,
    },
    Array(Box<SkipPlan>),
    Map(Box<SkipPlan>),
}

impl SkipPlan {
    pub(crate) fn new(schema: &AvroSchema) -> SkipPlan {
        match schema {
            AvroSchema::Null => SkipPlan::Nothing,
            AvroSchema::Boolean => SkipPlan::Fixed(1),
            AvroSchema::Int | AvroSchema::Long | AvroSchema::Enum(_) => SkipPlan::Longs(1),
            AvroSchema::Float => SkipPlan::Fixed(4),
            AvroSchema::Double => SkipPlan::Fixed(8),
            AvroSchema::Bytes | AvroSchema::String => SkipPlan::Bytes,
            AvroSchema::Fixed(0) => SkipPlan::Nothing,
            AvroSchema::Fixed(n) => SkipPlan::Fixed(*n),
            AvroSchema::Record(r) => {
                let mut out: Vec<SkipPlan> = Vec::with_capacity(r.fields.len());
                for f in &r.fields {
                    match (SkipPlan::new(&f.schema), out.last_mut()) {
                        (SkipPlan::Nothing, _) => {}
                        (SkipPlan::Longs(n), Some(SkipPlan::Longs(m))) => *m += n,
                        (SkipPlan::Fixed(n), Some(SkipPlan::Fixed(m))) => *m += n,
                        (p, _) => out.push(p),
                    }
                }
                match out.len() {
                    0 => SkipPlan::Nothing,
                    1 => out.pop().unwrap_or(SkipPlan::Nothing),
                    _ => SkipPlan::Seq(out),
                }
            }
            AvroSchema::Array(items) => match SkipPlan::new(items) {
                SkipPlan::Longs(k) => SkipPlan::LongArray(k),
                p => SkipPlan::Array(Box::new(p)),
            },
            AvroSchema::Map(values) => SkipPlan::Map(Box::new(SkipPlan::new(values))),
            AvroSchema::Union(b) => {
                let plans: Vec<SkipPlan> = b.iter().map(SkipPlan::new).collect();
                match plans.as_slice() {
                    [SkipPlan::Nothing, SkipPlan::LongArray(k)] => {
                        SkipPlan::OptLongArray { null: 0, items: *k }
                    }
                    [SkipPlan::LongArray(k), SkipPlan::Nothing] => {
                        SkipPlan::OptLongArray { null: 1, items: *k }
                    }
                    _ => SkipPlan::Union(plans),
                }
            }
        }
    }
}

impl Cursor<'_> {
    /// Skips an array whose items are `k` variable-length integers each.
    #[inline]
    fn skip_long_array(&mut self, k: usize) -> Result<()> {
        loop {
            let n = self.block_count()?;
            if n == 0 {
                return Ok(());
            }
            self.skip_longs(n.checked_mul(k).ok_or_else(eof)?)?;
        }
    }

    /// Skips one value by its plan (see [`SkipPlan`]).
    pub(crate) fn skip_by(&mut self, plan: &SkipPlan) -> Result<()> {
        match plan {
            SkipPlan::Nothing => {}
            SkipPlan::Longs(1) => {
                self.long()?;
            }
            SkipPlan::Longs(n) => self.skip_longs(*n)?,
            SkipPlan::Bytes => {
                self.bytes()?;
            }
            SkipPlan::Fixed(n) => {
                self.take(*n)?;
            }
            SkipPlan::Seq(fields) => {
                for f in fields {
                    self.skip_by(f)?;
                }
            }
            SkipPlan::Union(branches) => {
                let i = self.long()?;
                let b = usize::try_from(i)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .ok_or_else(|| corrupt(format!("union branch {i} does not exist")))?;
                self.skip_by(b)?;
            }
            SkipPlan::LongArray(k) => self.skip_long_array(*k)?,
            SkipPlan::OptLongArray { null, items } => {
                let i = self.long()?;
                if i == 1 - *null {
                    self.skip_long_array(*items)?;
                } else if i != *null {
                    return Err(corrupt(format!("union branch {i} does not exist")));
                }
            }
            SkipPlan::Array(items) => loop {
                let n = self.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.skip_by(items)?;
                }
            },
            SkipPlan::Map(values) => loop {
                let n = self.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.bytes()?;
                    self.skip_by(values)?;
                }
            },
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Object container files
// ---------------------------------------------------------------------------------------

/// The header of a container file and where its blocks start.
pub(crate) struct Container<'a> {
    pub metadata: Vec<(String, Vec<u8>)>,
    pub schema: AvroSchema,
    codec: Codec,
    sync: [u8; 16],
    data: &'a [u8],
    blocks_start: usize,
}

impl<'a> Container<'a> {
    pub(crate) fn open(data: &'a [u8]) -> Result<Container<'a>> {
        if data.len() < 4 || &data[..4] != MAGIC {
            return Err(corrupt("not an Avro file: wrong magic bytes"));
        }
        let mut cur = Cursor::new(data);
        cur.pos = 4;
        let mut metadata = Vec::new();
        loop {
            let n = cur.block_count()?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let k = cur.string()?.to_string();
                let v = cur.bytes()?.to_vec();
                metadata.push((k, v));
            }
        }
        let sync_bytes = cur.take(16)?;
        let mut sync = [0u8; 16];
        sync.copy_from_slice(sync_bytes);
        let get = |k: &str| metadata.iter().find(|(mk, _)| mk == k).map(|(_, v)| v);
        let schema_text =
            get("avro.schema").ok_or_else(|| corrupt("the Avro header has no avro.schema"))?;
        let schema_text =
            std::str::from_utf8(schema_text).map_err(|_| corrupt("avro.schema is not UTF-8"))?;
        let schema = AvroSchema::parse(schema_text)?;
        let codec = match get("avro.codec").map(|v| v.as_slice()) {
            None | Some(b"null") => Codec::Null,
            Some(b"deflate") => Codec::Deflate,
            Some(b"snappy") => Codec::Snappy,
            Some(b"zstandard") => Codec::Zstd,
            Some(other) => {
                return Err(Error::unsupported(format!(
                    "Avro codec '{}' is not supported",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        Ok(Container {
            blocks_start: cur.pos,
            metadata,
            schema,
            codec,
            sync,
            data,
        })
    }

    /// Where each block sits, found by hopping from block header to block header (nothing
    /// is decompressed): its first object's ordinal, its byte offset (at its object count)
    /// and its length through its sync marker. A reader holding a block's span can read
    /// the leaf up to that block's end by one range (`manifest::v4::leaf_block`).
    pub(crate) fn block_spans(&self) -> Result<Vec<(usize, u64, u64)>> {
        let mut cur = Cursor::new(self.data);
        cur.pos = self.blocks_start;
        let mut out = Vec::new();
        let mut ordinal = 0usize;
        while cur.remaining() > 0 {
            let start = cur.pos;
            let at = |e: Error| e.under(&format!("block {}", out.len()));
            let count = cur.long().map_err(at)?;
            let count = usize::try_from(count)
                .map_err(|_| at(corrupt(format!("negative object count {count}"))))?;
            let size = cur.len_prefix().map_err(at)?;
            cur.take(size).map_err(at)?;
            if cur.take(16).map_err(at)? != self.sync {
                return Err(at(corrupt("sync marker does not match the header")));
            }
            out.push((ordinal, start as u64, (cur.pos - start) as u64));
            ordinal = ordinal.saturating_add(count);
        }
        Ok(out)
    }

    pub(crate) fn meta(&self, key: &str) -> Option<&[u8]> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    pub(crate) fn meta_str(&self, key: &str) -> Result<Option<&str>> {
        match self.meta(key) {
            None => Ok(None),
            Some(v) => std::str::from_utf8(v)
                .map(Some)
                .map_err(|_| Error::invalid_metadata(key, "not valid UTF-8")),
        }
    }

    /// Calls `f` with each block's object count and decompressed bytes. Compressed blocks
    /// are inflated into one buffer reused from block to block. The blocks together may
    /// decompress to at most the ceiling of [`crate::limits`].
    pub(crate) fn for_each_block(&self, f: impl FnMut(usize, &[u8]) -> Result<()>) -> Result<()> {
        let ceiling = match self.codec {
            // nothing is decompressed: the blocks are the file's own bytes
            Codec::Null => usize::MAX,
            _ => crate::limits::max_decompressed_usize()?,
        };
        self.for_each_block_within(ceiling, f)
    }

    /// [`Container::for_each_block`] with the ceiling given.
    pub(crate) fn for_each_block_within(
        &self,
        ceiling: usize,
        mut f: impl FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        self.blocks_from(ceiling, 0, |_, count, bytes| f(count, bytes).map(|()| true))
    }

    /// Calls `f` with each block's first object ordinal, object count and decompressed
    /// bytes, from the block holding object `first` on, until `f` returns `false`. The
    /// blocks before it are skipped by their headers, without decompressing them: finding
    /// one entry of a large manifest decodes one block.
    pub(crate) fn for_each_block_from(
        &self,
        first: usize,
        f: impl FnMut(usize, usize, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let ceiling = match self.codec {
            Codec::Null => usize::MAX,
            _ => crate::limits::max_decompressed_usize()?,
        };
        self.blocks_from(ceiling, first, f)
    }

    fn blocks_from(
        &self,
        ceiling: usize,
        first: usize,
        mut f: impl FnMut(usize, usize, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let mut cur = Cursor::new(self.data);
        cur.pos = self.blocks_start;
        let mut inflater: Option<Inflater> = None;
        // what the blocks still to come may decompress to
        let mut left = ceiling;
        let mut i = 0usize;
        // the ordinal of the block's first object
        let mut ordinal = 0usize;
        while cur.remaining() > 0 {
            let at = |e: Error| e.under(&format!("block {i}"));
            let count = cur.long().map_err(at)?;
            let count = usize::try_from(count)
                .map_err(|_| at(corrupt(format!("negative object count {count}"))))?;
            let size = cur.len_prefix().map_err(at)?;
            let raw = cur.take(size).map_err(at)?;
            let sync = cur.take(16).map_err(at)?;
            if sync != self.sync {
                return Err(at(corrupt("sync marker does not match the header")));
            }
            let block_first = ordinal;
            ordinal = ordinal.saturating_add(count);
            if ordinal <= first {
                i += 1;
                continue;
            }
            let owned;
            let bytes: Option<&[u8]> = match self.codec {
                Codec::Null => Some(raw),
                Codec::Deflate => inflater
                    .get_or_insert_with(Inflater::new)
                    .inflate(raw, left)
                    .map_err(at)?,
                Codec::Snappy => {
                    owned = snappy(raw, left).map_err(at)?;
                    owned.as_deref()
                }
                Codec::Zstd => {
                    owned = zstd(raw, left).map_err(at)?;
                    owned.as_deref()
                }
            };
            let Some(bytes) = bytes else {
                let room = if left == ceiling {
                    "the limit".to_string()
                } else {
                    format!("the {left} bytes that the blocks before it leave of the limit")
                };
                return Err(at(Error::decompression_limit(
                    "",
                    format!(
                        "the {} block decompresses to more than {room}: {}",
                        self.codec.avro_name(),
                        crate::limits::ceiling_note(ceiling as u64)
                    ),
                )));
            };
            if self.codec != Codec::Null {
                left = left.saturating_sub(bytes.len());
            }
            if count > bytes.len() {
                return Err(at(corrupt(format!(
                    "{count} objects cannot fit in a block of {} bytes",
                    bytes.len()
                ))));
            }
            if !f(block_first, count, bytes)? {
                return Ok(());
            }
            i += 1;
        }
        Ok(())
    }
}

/// Raw deflate (Avro's `deflate` codec) into a buffer kept across blocks. Whole blocks
/// are inflated in one call with libdeflate, which is about 1.5 times as fast as a
/// streaming inflater (zlib-rs) on manifest blocks (docs/benchmarks.md): a scan spends a
/// third of its decoding time here.
struct Inflater {
    state: libdeflater::Decompressor,
    out: Vec<u8>,
}

impl Inflater {
    fn new() -> Inflater {
        Inflater {
            state: libdeflater::Decompressor::new(),
            out: Vec::new(),
        }
    }

    /// Inflates one whole block of at most `limit` bytes; `None` when it is larger. The
    /// output buffer starts at a guess (the largest block so far, or eight times the
    /// input) and doubles while a block does not fit, up to `limit` or to what the input
    /// can hold (deflate cannot expand more than 1032:1), whichever is smaller: so a bomb
    /// costs at most `limit` bytes and about twice that much inflating, and the common
    /// case only two comparisons more.
    fn inflate(&mut self, raw: &[u8], limit: usize) -> Result<Option<&[u8]>> {
        let can_hold = raw.len().saturating_mul(1032).saturating_add(1024);
        let bound = can_hold.min(limit);
        let want = raw.len().saturating_mul(8).max(1024).min(bound);
        if self.out.len() < want {
            self.grow(want)?;
        }
        fn written(out: &[u8], n: usize, cap: usize) -> Result<Option<&[u8]>> {
            match out.get(..n) {
                Some(bytes) if n <= cap => Ok(Some(bytes)),
                _ => Err(corrupt("deflate wrote past its buffer")),
            }
        }
        // a buffer kept from a larger block may be longer than this block may be
        let mut cap = self.out.len().min(bound);
        // small blocks (a few entries each, as PyIceberg writes them) are fixed-Huffman
        // streams, for which the general decoder's set-up costs more than the decoding
        if let Some(n) = super::inflate::inflate_simple(raw, &mut self.out[..cap]) {
            return written(&self.out, n, cap);
        }
        loop {
            match self.state.deflate_decompress(raw, &mut self.out[..cap]) {
                Ok(n) => return written(&self.out, n, cap),
                Err(libdeflater::DecompressionError::InsufficientSpace) if cap < bound => {
                    let grown = cap.saturating_mul(2).max(1024).min(bound);
                    if self.out.len() < grown {
                        self.grow(grown)?;
                    }
                    cap = grown;
                }
                // larger than the limit, though it could be a real stream
                Err(libdeflater::DecompressionError::InsufficientSpace) if limit < can_hold => {
                    return Ok(None)
                }
                Err(_) => {
                    return Err(corrupt(
                        "cannot decompress a deflate block: the stream is truncated or corrupt",
                    ))
                }
            }
        }
    }

    /// Grows the buffer to `len` bytes; failing to allocate is an error, not an abort.
    fn grow(&mut self, len: usize) -> Result<()> {
        self.out
            .try_reserve_exact(len.saturating_sub(self.out.len()))
            .map_err(|_| {
                corrupt(format!(
                    "cannot allocate {len} bytes to inflate a deflate block into"
                ))
            })?;
        self.out.resize(len, 0);
        Ok(())
    }
}

/// Avro's snappy codec: a raw snappy stream, then the CRC-32 (big-endian) of the
/// uncompressed bytes; `None` when it holds more than `limit` bytes. The stream starts with
/// its uncompressed length, which the decoder allocates: it is checked first.
fn snappy(raw: &[u8], limit: usize) -> Result<Option<Vec<u8>>> {
    let Some(stream) = raw.len().checked_sub(4).and_then(|n| raw.get(..n)) else {
        return Err(corrupt("snappy block is shorter than its checksum"));
    };
    let declared = snappy_len(stream)
        .ok_or_else(|| corrupt("a snappy block does not start with a valid length"))?;
    // Each element of a snappy stream writes at most 64 bytes per 3 of its own (a copy
    // with a 2-byte offset), so a block can never hold more than 22 times its size.
    let can_hold = (stream.len() as u64).saturating_mul(22);
    if declared > can_hold {
        return Err(Error::decompression_limit(
            "",
            format!(
                "a snappy block of {} bytes says it decompresses to {declared} bytes, more \
                 than it can hold (at most 22 times its size)",
                raw.len()
            ),
        ));
    }
    if declared > limit as u64 {
        return Ok(None);
    }
    let mut v = raw.to_vec();
    apache_avro::Codec::Snappy
        .decompress(&mut v)
        .map_err(|e| corrupt(format!("cannot decompress a snappy block: {e}")))?;
    Ok(Some(v))
}

/// The uncompressed length a raw snappy stream starts with: a varint of at most 32 bits.
fn snappy_len(stream: &[u8]) -> Option<u64> {
    let mut n = 0u64;
    for (i, &b) in stream.iter().take(5).enumerate() {
        n |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (n <= u64::from(u32::MAX)).then_some(n);
        }
    }
    None
}

/// Avro's zstandard codec: `None` when the block holds more than `limit` bytes.
fn zstd(raw: &[u8], limit: usize) -> Result<Option<Vec<u8>>> {
    crate::limits::zstd_at_most(raw, limit)
        .map_err(|e| corrupt(format!("cannot decompress a zstandard block: {e}")))
}

fn avro_codec(codec: Codec) -> apache_avro::Codec {
    match codec {
        Codec::Null => apache_avro::Codec::Null,
        Codec::Deflate => apache_avro::Codec::Deflate(apache_avro::DeflateSettings::default()),
        Codec::Snappy => apache_avro::Codec::Snappy,
        Codec::Zstd => apache_avro::Codec::Zstandard(apache_avro::ZstandardSettings::default()),
    }
}

// ---------------------------------------------------------------------------------------
// Binary encoding and the container writer
// ---------------------------------------------------------------------------------------

#[inline]
pub(crate) fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

#[inline]
pub(crate) fn put_int(out: &mut Vec<u8>, v: i32) {
    put_long(out, i64::from(v));
}

#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

pub(crate) fn put_bool(out: &mut Vec<u8>, b: bool) {
    out.push(u8::from(b));
}

/// Writes a container file: header with the schema and metadata, then blocks.
pub(crate) struct ContainerWriter {
    out: Vec<u8>,
    sync: [u8; 16],
    codec: Codec,
    /// The current block's encoded objects; callers append one object then call `end_object`.
    pub block: Vec<u8>,
    count: usize,
}

impl ContainerWriter {
    pub(crate) fn new(
        schema_json: &str,
        metadata: &[(&str, String)],
        codec: Codec,
    ) -> ContainerWriter {
        let sync = new_sync_marker();
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(MAGIC);
        let n = metadata.len() + 2;
        put_long(&mut out, n as i64);
        put_bytes(&mut out, b"avro.schema");
        put_bytes(&mut out, schema_json.as_bytes());
        put_bytes(&mut out, b"avro.codec");
        put_bytes(&mut out, codec.avro_name().as_bytes());
        for (k, v) in metadata {
            put_bytes(&mut out, k.as_bytes());
            put_bytes(&mut out, v.as_bytes());
        }
        put_long(&mut out, 0);
        out.extend_from_slice(&sync);
        ContainerWriter {
            out,
            sync,
            codec,
            block: Vec::with_capacity(BLOCK_TARGET + 4096),
            count: 0,
        }
    }

    /// Bytes written so far: the header and the finished blocks (what Java's Avro appender
    /// reports as its length; the open block is not counted).
    pub(crate) fn written_len(&self) -> u64 {
        self.out.len() as u64
    }

    pub(crate) fn end_object(&mut self) -> Result<()> {
        self.count += 1;
        if self.block.len() >= BLOCK_TARGET {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let mut data = std::mem::take(&mut self.block);
        match self.codec {
            Codec::Deflate => data = deflate(&data)?,
            codec => avro_codec(codec)
                .compress(&mut data)
                .map_err(|e| Error::unsupported(format!("cannot compress a block: {e}")))?,
        }
        put_long(&mut self.out, self.count as i64);
        put_bytes(&mut self.out, &data);
        self.out.extend_from_slice(&self.sync);
        self.count = 0;
        self.block.clear();
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        self.flush()?;
        Ok(self.out)
    }
}

/// Avro's `deflate` codec (raw deflate) at zlib's default level 6, which is what Java's
/// Avro writes when Iceberg's `write.avro.compression-level` is unset. libdeflate, kept
/// per thread: `apache-avro`'s deflate (miniz_oxide) allocated and freed a few hundred KB
/// of state a block and compressed more slowly, which was a third of the CPU of a v4
/// commit writing its root (docs/benchmarks.md).
fn deflate(data: &[u8]) -> Result<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<libdeflater::Compressor> =
            std::cell::RefCell::new(libdeflater::Compressor::new(libdeflater::CompressionLvl::default()));
    }
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let mut out = vec![0u8; c.deflate_compress_bound(data.len())];
        let n = c
            .deflate_compress(data, &mut out)
            .map_err(|e| Error::unsupported(format!("cannot compress a block: {e}")))?;
        out.truncate(n);
        Ok(out)
    })
}

fn new_sync_marker() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let mut out = [0u8; 16];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write_usize(i);
        if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            h.write_u128(d.as_nanos());
        }
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{deflate as libdeflate_block, put_long, Cursor, Inflater, Rest};
    use std::io::Write;

    fn rest(b: &[u8]) -> Rest<'_> {
        Cursor::new(b).rest()
    }

    /// Each of `Rest`'s reads with a one-byte shortcut gives what `Cursor`'s `Result`
    /// reads give wherever it does not give up, and gives up on every error; its shortcut
    /// and its general path agree on every value around the one-byte limit.
    #[test]
    fn rests_shortcuts_agree_with_the_cursors_reads() {
        let mut values: Vec<i64> = (-200..200).collect();
        values.extend([
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            1 << 40,
            i64::MAX,
            i64::MIN,
        ]);
        for v in values {
            let mut b = Vec::new();
            put_long(&mut b, v);
            let tail = [5u8; 70]; // a byte string's bytes, when `v` is read as a length
            b.extend_from_slice(&tail);
            let mut c = Cursor::new(&b);
            let want_len = c.len_prefix().ok();
            let mut r = rest(&b);
            assert_eq!(r.try_len(), want_len, "length {v}");
            if want_len.is_some() {
                assert_eq!(r.0.len(), c.remaining(), "length {v}");
            }
            let want_int = Cursor::new(&b).int().ok();
            assert_eq!(rest(&b).try_key(), want_int, "key {v}");
            let mut c = Cursor::new(&b);
            let want_bytes = c.bytes().ok();
            assert_eq!(rest(&b).try_bytes(), want_bytes, "bytes {v}");
            let mut c = Cursor::new(&b);
            let want_count = c.block_count().ok().filter(|_| v >= 0);
            assert_eq!(rest(&b).try_block_count(), want_count, "count {v}");
            let branch = match v {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            };
            assert_eq!(rest(&b).try_branch(), branch, "branch {v}");
            // a key and a byte string, as a bound: the two-byte shortcut and the reads
            // one at a time
            let mut kb = Vec::new();
            put_long(&mut kb, v);
            kb.extend_from_slice(&b);
            let mut c = Cursor::new(&kb);
            let want = c.int().ok().and_then(|k| Some((k, c.bytes().ok()?)));
            let mut r = rest(&kb);
            assert_eq!(r.try_key_bytes(), want, "key and bytes {v}");
            if want.is_some() {
                assert_eq!(r.0.len(), c.remaining(), "key and bytes {v}");
            }
        }
        // a union branch in a longer encoding than Avro writes, an empty rest, a byte
        // string longer than the data, a key without its bytes
        assert_eq!(rest(&[0x80, 0x00]).try_branch(), None);
        assert_eq!(rest(&[]).try_branch(), None);
        assert_eq!(rest(&[]).try_len(), None);
        assert_eq!(rest(&[6, 1, 2]).try_bytes(), None);
        assert_eq!(rest(&[2, 6, 1, 2]).try_key_bytes(), None);
        assert_eq!(rest(&[2]).try_key_bytes(), None);
        assert_eq!(
            rest(&[2, 4, 9, 8, 7]).try_key_bytes(),
            Some((1, &[9u8, 8][..]))
        );
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn inflates_blocks_of_every_shape_with_one_reused_buffer() {
        let text: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("s3://b/t/data/{}-{}.parquet;", i % 97, i * 7919).into_bytes())
            .collect();
        let blocks: Vec<Vec<u8>> = vec![
            b"tiny".to_vec(),   // fixed Huffman (the small-block fast path)
            vec![0u8; 300_000], // expands about 1000:1: the buffer must grow past its guess
            text,               // dynamic Huffman, over a MB
            (0..=255u8).cycle().take(70_000).collect(),
            Vec::new(),
        ];
        let mut inflater = Inflater::new();
        for b in &blocks {
            let raw = deflate(b);
            assert_eq!(
                inflater.inflate(&raw, usize::MAX).unwrap().unwrap(),
                &b[..],
                "{} bytes",
                b.len()
            );
        }
    }

    /// The writer's deflate is raw deflate as Avro's codec means it (no zlib header): an
    /// independent inflater (zlib-rs, through flate2) gives back every block, and the
    /// per-thread compressor carries nothing from one block into the next.
    #[test]
    fn written_deflate_blocks_inflate_with_another_inflater() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("s3://b/t/data/{}-{}.parquet;", i % 97, i * 7919).into_bytes())
            .collect();
        for b in [
            b"x".to_vec(),
            text,
            (0..=255u8).cycle().take(70_000).collect(),
        ] {
            let raw = libdeflate_block(&b).unwrap();
            let mut out = Vec::new();
            let mut d = flate2::read::DeflateDecoder::new(&raw[..]);
            std::io::Read::read_to_end(&mut d, &mut out).unwrap();
            assert_eq!(out, b, "{} bytes", b.len());
        }
    }

    #[test]
    fn a_truncated_or_corrupt_block_is_an_error() {
        let raw = deflate(&vec![7u8; 100_000]);
        let mut inflater = Inflater::new();
        let e = inflater
            .inflate(&raw[..raw.len() / 2], usize::MAX)
            .unwrap_err();
        assert!(e.to_string().contains("truncated or corrupt"), "{e}");
        // a reserved block type (11) is invalid deflate
        assert!(inflater.inflate(&[0x07, 0x00], usize::MAX).is_err());
        // the decoder is still usable afterwards
        assert_eq!(
            inflater
                .inflate(&deflate(b"again"), usize::MAX)
                .unwrap()
                .unwrap(),
            b"again"
        );
    }
}
