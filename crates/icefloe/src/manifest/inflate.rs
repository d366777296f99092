//! A small raw-deflate decoder for the streams that are made of fixed-Huffman and stored
//! blocks only: what zlib writes for small inputs, and so what writers that put a few
//! entries in each Avro block produce (PyIceberg writes one manifest entry per block).
//! For such tiny streams the general decoder's per-stream and per-call costs dominate;
//! this one is a plain loop over one 512-entry table.
//!
//! It is only a fast path: on anything else (a dynamic-Huffman block, or any error) it
//! gives up and the caller decodes the stream with the general decoder, which is then
//! also what reports errors. On a stream that it accepts, it writes exactly what any
//! conforming inflater writes (RFC 1951).

/// Fixed literal/length codes (RFC 1951, 3.2.6), indexed by the next 9 input bits (the
/// code bits come first in stream order, i.e. least significant): the symbol in the low
/// 9 bits, the code length above them.
static LITLEN: [u16; 512] = litlen_table();

/// The length of the fixed code that starts the input, by its first 5 bits (as read, i.e.
/// least significant first), two bits per entry holding the length minus 7: computing it
/// from a constant keeps the table load off the chain from one symbol to the next.
const FIXED_LENGTHS: u64 = fixed_lengths();

const fn fixed_lengths() -> u64 {
    let mut k = 0u64;
    let mut x = 0u32;
    while x < 32 {
        // the code's first five bits, most significant first
        let v = reverse(x, 5);
        let len = if v <= 5 {
            7
        } else if v <= 24 {
            8
        } else {
            9
        };
        k |= ((len - 7) as u64) << (2 * x);
        x += 1;
    }
    k
}

/// Base lengths and extra bits of length symbols 257..=285.
const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// Base distances and extra bits of distance symbols 0..=29.
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

const fn reverse(code: u32, len: u32) -> u32 {
    let mut out = 0;
    let mut i = 0;
    while i < len {
        out |= ((code >> i) & 1) << (len - 1 - i);
        i += 1;
    }
    out
}

const fn litlen_table() -> [u16; 512] {
    let mut t = [0u16; 512];
    let mut sym = 0u32;
    while sym < 288 {
        // the canonical fixed code of `sym` and its length
        let (code, len) = if sym < 144 {
            (0x30 + sym, 8)
        } else if sym < 256 {
            (0x190 + sym - 144, 9)
        } else if sym < 280 {
            (sym - 256, 7)
        } else {
            (0xc0 + sym - 280, 8)
        };
        let r = reverse(code, len);
        let mut fill = 0u32;
        while fill < (1 << (9 - len)) {
            t[(r | (fill << len)) as usize] = (sym | (len << 12)) as u16;
            fill += 1;
        }
        sym += 1;
    }
    t
}

/// Reads bits least significant first from a byte slice.
struct Bits<'a> {
    input: &'a [u8],
    pos: usize,
    buf: u64,
    count: u32,
}

impl Bits<'_> {
    /// Tops the buffer up to at least 56 bits, or to what is left of the input.
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(w) = self.input.get(self.pos..self.pos + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            self.buf |= u64::from_le_bytes(a) << self.count;
            let took = (63 - self.count) / 8;
            self.pos += took as usize;
            self.count += took * 8;
            return;
        }
        while self.count <= 56 {
            let Some(&b) = self.input.get(self.pos) else {
                return;
            };
            self.buf |= u64::from(b) << self.count;
            self.pos += 1;
            self.count += 8;
        }
    }

    /// Takes `n` (at most 32) bits, which the caller made sure are buffered.
    #[inline(always)]
    fn take(&mut self, n: u32) -> u32 {
        let v = (self.buf & ((1u64 << n) - 1)) as u32;
        self.buf >>= n;
        self.count -= n;
        v
    }

    /// Takes `n` bits, refilling first; `None` at the end of the input.
    #[inline(always)]
    fn need(&mut self, n: u32) -> Option<u32> {
        if self.count < n {
            self.refill();
            if self.count < n {
                return None;
            }
        }
        Some(self.take(n))
    }
}

/// Inflates `raw` into the start of `out` when it has only stored and fixed-Huffman
/// blocks, is valid and fits: returns the number of bytes written, or `None` (with `out`
/// in any state) for anything else.
pub(crate) fn inflate_simple(raw: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut bits = Bits {
        input: raw,
        pos: 0,
        buf: 0,
        count: 0,
    };
    let mut n = 0usize;
    loop {
        let last = bits.need(1)? == 1;
        n = match bits.need(2)? {
            0 => stored(&mut bits, out, n)?,
            1 => fixed(&mut bits, out, n)?,
            _ => return None,
        };
        if last {
            return Some(n);
        }
    }
}

/// A stored block, written at `out[n..]`; returns the new length.
fn stored(bits: &mut Bits<'_>, out: &mut [u8], mut n: usize) -> Option<usize> {
    // skip to the byte boundary, then LEN and its complement
    let skip = bits.count % 8;
    bits.take(skip);
    let len = bits.need(16)?;
    let nlen = bits.need(16)?;
    if len != !nlen & 0xffff {
        return None;
    }
    let mut len = len as usize;
    // whole bytes still in the bit buffer come first
    while len > 0 && bits.count >= 8 {
        *out.get_mut(n)? = bits.take(8) as u8;
        n += 1;
        len -= 1;
    }
    if len > 0 {
        // the buffer is empty (the block started on a byte boundary); it may still hold
        // look-ahead copies of the bytes taken here, which must not come back
        let bytes = bits.input.get(bits.pos..bits.pos.checked_add(len)?)?;
        out.get_mut(n..n + len)?.copy_from_slice(bytes);
        n += len;
        bits.pos += len;
        bits.buf = 0;
    }
    Some(n)
}

/// A fixed-Huffman block, written at `out[n..]`; returns the new length.
fn fixed(bits: &mut Bits<'_>, out: &mut [u8], mut n: usize) -> Option<usize> {
    loop {
        // a symbol with all its extra bits and a distance code take at most 9 + 5 + 5 + 13
        if bits.count < 32 {
            bits.refill();
        }
        let len = ((FIXED_LENGTHS >> (2 * (bits.buf & 31))) & 3) as u32 + 7;
        let entry = LITLEN[(bits.buf & 511) as usize];
        if bits.count < len {
            return None;
        }
        bits.buf >>= len;
        bits.count -= len;
        let sym = usize::from(entry & 0x1ff);
        if sym < 256 {
            *out.get_mut(n)? = sym as u8;
            n += 1;
            continue;
        }
        if sym == 256 {
            return Some(n);
        }
        let i = sym - 257;
        let extra = u32::from(*LEN_EXTRA.get(i)?);
        let length = usize::from(*LEN_BASE.get(i)?) + bits.need(extra)? as usize;
        let d = reverse_bits5(bits.need(5)?);
        let extra = u32::from(*DIST_EXTRA.get(d)?);
        let dist = usize::from(*DIST_BASE.get(d)?) + bits.need(extra)? as usize;
        let start = n.checked_sub(dist)?;
        if out.len() < n + length {
            return None;
        }
        if dist >= length {
            out.copy_within(start..start + length, n);
        } else {
            // an overlapping copy repeats the last `dist` bytes
            for k in 0..length {
                out[n + k] = out[start + k];
            }
        }
        n += length;
    }
}

#[inline(always)]
fn reverse_bits5(v: u32) -> usize {
    (v.reverse_bits() >> 27) as usize
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// What the general decoder makes of `raw` (as the Avro reader calls it).
    fn reference(raw: &[u8]) -> Option<Vec<u8>> {
        let mut d = flate2::Decompress::new(false);
        let mut out = vec![0u8; raw.len() * 1100 + 1024];
        match d.decompress(raw, &mut out, flate2::FlushDecompress::Finish) {
            Ok(flate2::Status::StreamEnd) => {
                out.truncate(d.total_out() as usize);
                Some(out)
            }
            _ => None,
        }
    }

    /// A deterministic generator (xorshift) for test inputs.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Inputs like manifest entries: text, small varints, repeats near and far.
    fn sample(rng: &mut Rng, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            match rng.next() % 4 {
                0 => v.extend_from_slice(b"/warehouse/db/t/data/ts_day=12/f0000123.parquet"),
                1 => v.push((rng.next() % 256) as u8),
                2 if !v.is_empty() => {
                    let back = 1 + (rng.next() as usize) % v.len().min(40);
                    let len = 3 + (rng.next() as usize) % 300;
                    for _ in 0..len {
                        v.push(v[v.len() - back]);
                    }
                }
                _ => v.extend_from_slice(&(rng.next() % 5000).to_le_bytes()[..3]),
            }
        }
        v.truncate(n);
        v
    }

    #[test]
    fn table_decodes_every_fixed_code() {
        // every symbol appears with its length once per 2^(9 - len) slots
        let mut seen = [0u32; 288];
        for e in LITLEN {
            let (sym, len) = (usize::from(e & 0x1ff), u32::from(e >> 12));
            seen[sym] += 1;
            assert!(seen[sym] <= 1 << (9 - len));
        }
        assert!(seen.iter().all(|&n| n > 0));
        // the lengths computed from the first five bits are the table's
        for (i, e) in LITLEN.iter().enumerate() {
            let len = ((FIXED_LENGTHS >> (2 * (i as u64 & 31))) & 3) + 7;
            assert_eq!(len, u64::from(e >> 12), "index {i}");
        }
    }

    #[test]
    fn agrees_with_the_general_decoder() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut fast = 0;
        let mut out = vec![0u8; 4096];
        for i in 0..3000 {
            let n = (rng.next() % 3000) as usize + usize::from(i % 7 == 0);
            let data = sample(&mut rng, n);
            for level in [0, 1, 6, 9] {
                let raw = deflate(&data, level);
                match inflate_simple(&raw, &mut out) {
                    Some(len) => {
                        fast += 1;
                        assert_eq!(out[..len], data[..], "level {level}, {n} bytes");
                    }
                    None => assert_eq!(reference(&raw).as_deref(), Some(&data[..])),
                }
            }
        }
        // small inputs come out as fixed or stored blocks: most go the fast way
        assert!(fast > 6000, "only {fast} streams took the fast path");
    }

    #[test]
    fn corrupt_streams_give_up_or_agree() {
        let mut rng = Rng(12345);
        let mut out = vec![0u8; 1 << 16];
        for _ in 0..20000 {
            let n = (rng.next() % 400) as usize;
            let data = sample(&mut rng, n);
            let mut raw = deflate(&data, (rng.next() % 10) as u32);
            match rng.next() % 3 {
                0 if !raw.is_empty() => {
                    let i = (rng.next() as usize) % raw.len();
                    raw[i] ^= 1 << (rng.next() % 8);
                }
                1 => {
                    let keep = (rng.next() as usize) % (raw.len() + 1);
                    raw.truncate(keep);
                }
                _ => raw.push((rng.next() % 256) as u8),
            }
            if let Some(len) = inflate_simple(&raw, &mut out) {
                assert_eq!(Some(&out[..len]), reference(&raw).as_deref());
            }
        }
    }

    #[test]
    fn empty_and_stored_streams() {
        let mut out = vec![0u8; 16];
        // an empty final fixed block
        assert_eq!(inflate_simple(&[0x03, 0x00], &mut out), Some(0));
        // a stored block of 3 bytes
        let raw = [0x01, 0x03, 0x00, 0xfc, 0xff, b'a', b'b', b'c'];
        assert_eq!(inflate_simple(&raw, &mut out), Some(3));
        assert_eq!(&out[..3], b"abc");
        // it does not fit
        assert_eq!(inflate_simple(&raw, &mut out[..2]), None);
        // LEN and NLEN disagree
        let raw = [0x01, 0x03, 0x00, 0xfc, 0xfe, b'a', b'b', b'c'];
        assert_eq!(inflate_simple(&raw, &mut out), None);
        // nothing at all
        assert_eq!(inflate_simple(&[], &mut out), None);
    }

    #[test]
    fn too_small_an_output_gives_up() {
        let mut rng = Rng(99);
        let mut checked = 0;
        for _ in 0..200 {
            let data = sample(&mut rng, 600);
            let raw = deflate(&data, 6);
            let mut out = vec![0u8; data.len()];
            if inflate_simple(&raw, &mut out) != Some(data.len()) {
                continue;
            }
            assert_eq!(out, data);
            assert_eq!(inflate_simple(&raw, &mut out[..data.len() - 1]), None);
            checked += 1;
        }
        assert!(checked > 50);
    }
}
