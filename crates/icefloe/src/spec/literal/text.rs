//! Decimal and hex text forms.

// ---------------------------------------------------------------------------------------
// Decimal text
// ---------------------------------------------------------------------------------------

/// Plain decimal text of `unscaled * 10^-scale` with exactly `scale` fraction digits.
pub fn decimal_to_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Parses decimal text (plain or scientific, as Java's `BigDecimal(String)`) into its
/// unscaled value and scale.
pub fn parse_decimal(s: &str) -> Option<(i128, i64)> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut unscaled: i128 = 0;
    let mut ndigits = 0usize;
    let mut frac_digits: i64 = 0;
    let mut seen_point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                unscaled = unscaled
                    .checked_mul(10)?
                    .checked_add(i128::from(c - b'0'))?;
                ndigits += 1;
                if seen_point {
                    frac_digits += 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if ndigits == 0 {
        return None;
    }
    let mut exponent: i64 = 0;
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let exp_neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while let Some(c @ b'0'..=b'9') = b.get(i) {
            exponent = exponent.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
            if exponent > i64::from(i32::MAX) {
                return None;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        if exp_neg {
            exponent = -exponent;
        }
    }
    if i != b.len() {
        return None;
    }
    Some((
        if neg { -unscaled } else { unscaled },
        frac_digits - exponent,
    ))
}

pub(super) fn decimal_digits(unscaled: i128) -> u32 {
    let mut v = unscaled.unsigned_abs();
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

// ---------------------------------------------------------------------------------------
// Hex
// ---------------------------------------------------------------------------------------

pub(super) fn hex_upper(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    s
}

pub(super) fn parse_hex(s: &str) -> Option<Vec<u8>> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks_exact(2)
        .map(|p| Some((nibble(p[0])? << 4) | nibble(p[1])?))
        .collect()
}
