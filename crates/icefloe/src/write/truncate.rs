//! Truncated bounds for strings and binary (Java's `UnicodeUtil` and `BinaryUtil`): a lower
//! bound is a prefix; an upper bound is a prefix whose last character (byte) is incremented,
//! so it stays above every value it covers, and is dropped when no prefix can be incremented.

/// The lower bound of `s` cut to `len` code points.
pub fn truncate_string_min(s: &str, len: u32) -> &str {
    crate::spec::transform::truncate_str(s, len)
}

/// The upper bound of `s` cut to `len` code points: `s` itself when it is short enough,
/// else the prefix with its last code point incremented (skipping the surrogate range,
/// carrying past U+10FFFF); `None` when every code point of the prefix is U+10FFFF.
pub fn truncate_string_max(s: &str, len: u32) -> Option<String> {
    let prefix = crate::spec::transform::truncate_str(s, len);
    if prefix.len() == s.len() {
        return Some(s.to_string());
    }
    let chars: Vec<char> = prefix.chars().collect();
    for i in (0..chars.len()).rev() {
        if let Some(next) = next_char(chars[i]) {
            let mut out: String = chars[..i].iter().collect();
            out.push(next);
            return Some(out);
        }
    }
    None
}

/// The next Unicode scalar value, `None` after U+10FFFF.
fn next_char(c: char) -> Option<char> {
    match c as u32 {
        0xD7FF => char::from_u32(0xE000),
        0x10FFFF => None,
        cp => char::from_u32(cp + 1),
    }
}

/// The lower bound of `b` cut to `len` bytes.
pub fn truncate_binary_min(b: &[u8], len: u32) -> &[u8] {
    b.get(..len as usize).unwrap_or(b)
}

/// The upper bound of `b` cut to `len` bytes: `b` itself when short enough, else the prefix
/// with its last byte that is not 0xFF incremented (and the bytes after it dropped); `None`
/// when all bytes of the prefix are 0xFF.
pub fn truncate_binary_max(b: &[u8], len: u32) -> Option<Vec<u8>> {
    let len = len as usize;
    if len >= b.len() {
        return Some(b.to_vec());
    }
    let prefix = &b[..len];
    let last = prefix.iter().rposition(|x| *x != 0xFF)?;
    let mut out = prefix[..=last].to_vec();
    out[last] += 1;
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn strings() {
        assert_eq!(truncate_string_min("iceberg", 3), "ice");
        assert_eq!(truncate_string_min("ice", 3), "ice");
        assert_eq!(truncate_string_max("iceberg", 3).unwrap(), "icf");
        assert_eq!(truncate_string_max("ice", 3).unwrap(), "ice");
        // code points, not bytes or UTF-16 units
        assert_eq!(truncate_string_min("😀😁😂", 2), "😀😁");
        assert_eq!(truncate_string_max("😀😁😂", 2).unwrap(), "😀😂");
        assert_eq!(truncate_string_max("冰山表格", 1).unwrap(), "冱");
        // the surrogate range is skipped
        assert_eq!(truncate_string_max("a\u{D7FF}b", 2).unwrap(), "a\u{E000}");
        // U+10FFFF carries into the previous code point, or there is no bound
        assert_eq!(
            truncate_string_max("a\u{10FFFF}\u{10FFFF}x", 3).unwrap(),
            "b"
        );
        assert_eq!(truncate_string_max("\u{10FFFF}\u{10FFFF}x", 2), None);
        // a combining sequence is two code points
        assert_eq!(truncate_string_min("e\u{301}xyz", 2), "e\u{301}");
    }

    #[test]
    fn binary() {
        assert_eq!(truncate_binary_min(&[1, 2, 3], 2), &[1, 2]);
        assert_eq!(truncate_binary_min(&[1, 2, 3], 5), &[1, 2, 3]);
        assert_eq!(truncate_binary_max(&[1, 2, 3], 2).unwrap(), vec![1, 3]);
        assert_eq!(truncate_binary_max(&[1, 0xFF, 3], 2).unwrap(), vec![2]);
        assert_eq!(truncate_binary_max(&[0xFF, 0xFF, 3], 2), None);
        assert_eq!(
            truncate_binary_max(&[0xFF, 0xFF], 2).unwrap(),
            vec![0xFF, 0xFF]
        );
        assert_eq!(truncate_binary_max(&[], 2).unwrap(), Vec::<u8>::new());
    }
}
