//! Calendar arithmetic and ISO-8601 text for dates, times and timestamps, as java.time
//! writes and reads them.

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_HOUR: i64 = 3_600 * MICROS_PER_SECOND;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
pub const NANOS_PER_MICRO: i64 = 1_000;
pub const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub const NANOS_PER_HOUR: i64 = 3_600 * NANOS_PER_SECOND;
pub const NANOS_PER_DAY: i64 = 24 * NANOS_PER_HOUR;

// ---------------------------------------------------------------------------------------
// Calendar arithmetic (proleptic Gregorian, as java.time). Pure integer math on i64 so
// that any i32 day count or i64 micro/nano count works without overflow or panics.
// ---------------------------------------------------------------------------------------

/// Days from 1970-01-01 to the date `year-month-day` (month 1..=12, day 1..=31).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Count years from March so that the leap day is the last day of the counted year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (i64::from(month) + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719_468 days from 0000-03-01 to 1970-01-01
    era * 146_097 + day_of_era - 719_468
}

/// The date `(year, month, day)` that is `days` days from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

pub(super) fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

pub(super) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Years from 1970 of the date `days` days from 1970-01-01 (floor semantics before 1970).
pub fn days_to_years(days: i64) -> i64 {
    civil_from_days(days).0 - 1970
}

/// Months from 1970-01 of the date `days` days from 1970-01-01.
pub fn days_to_months(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    (y - 1970) * 12 + i64::from(m) - 1
}

// ---------------------------------------------------------------------------------------
// ISO-8601 text, in the shapes java.time's ISO_LOCAL_DATE / ISO_LOCAL_TIME write and read.
// ---------------------------------------------------------------------------------------

pub(super) fn write_iso_date(out: &mut String, days: i64) {
    use std::fmt::Write;
    let (y, m, d) = civil_from_days(days);
    // Java pads the year to 4 digits and adds a '+' only above 9999.
    let _ = if y > 9999 {
        write!(out, "+{y}-{m:02}-{d:02}")
    } else if y < 0 {
        write!(out, "-{:04}-{m:02}-{d:02}", -y)
    } else {
        write!(out, "{y:04}-{m:02}-{d:02}")
    };
}

/// `HH:MM:SS` then the fraction of second without trailing zeros (none when zero).
pub(super) fn write_iso_time(out: &mut String, nanos_of_day: i64) {
    use std::fmt::Write;
    let secs = nanos_of_day / NANOS_PER_SECOND;
    let frac = nanos_of_day % NANOS_PER_SECOND;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let digits = format!("{frac:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

pub(super) fn iso_date(days: i64) -> String {
    let mut s = String::with_capacity(10);
    write_iso_date(&mut s, days);
    s
}

pub fn iso_time_from_micros(micros: i64) -> String {
    let mut s = String::with_capacity(15);
    // A time outside one day is not a valid value; wrap it rather than fail, so that
    // writing never panics (reading rejects such values).
    write_iso_time(&mut s, micros.rem_euclid(MICROS_PER_DAY) * NANOS_PER_MICRO);
    s
}

pub fn iso_timestamp(value: i64, units_per_day: i64, nanos_per_unit: i64, utc: bool) -> String {
    let mut s = String::with_capacity(32);
    write_iso_date(&mut s, value.div_euclid(units_per_day));
    s.push('T');
    write_iso_time(&mut s, value.rem_euclid(units_per_day) * nanos_per_unit);
    if utc {
        s.push_str("+00:00");
    }
    s
}

/// A small cursor over ASCII text for the ISO parsers.
pub(super) struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    fn new(s: &'a str) -> Self {
        Scan {
            b: s.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Reads between `min` and `max` ASCII digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<(i64, usize)> {
        let start = self.pos;
        let mut v: i64 = 0;
        while self.pos - start < max {
            match self.peek() {
                Some(c @ b'0'..=b'9') => {
                    v = v * 10 + i64::from(c - b'0');
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let n = self.pos - start;
        (n >= min).then_some((v, n))
    }

    fn done(&self) -> bool {
        self.pos == self.b.len()
    }
}

pub(super) fn parse_date_at(sc: &mut Scan<'_>) -> Option<i64> {
    // Java: 4 digits without sign; a sign allows up to 9 digits, and '+' only beyond 4.
    let (neg, signed) = match sc.peek() {
        Some(b'-') => (true, true),
        Some(b'+') => (false, true),
        _ => (false, false),
    };
    if signed {
        sc.pos += 1;
    }
    let (year, n) = if signed {
        sc.digits(4, 9)?
    } else {
        sc.digits(4, 4)?
    };
    if signed && !neg && n == 4 {
        return None;
    }
    let year = if neg { -year } else { year };
    if !sc.eat(b'-') {
        return None;
    }
    let (month, _) = sc.digits(2, 2)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (day, _) = sc.digits(2, 2)?;
    let month = u32::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
    let day = u32::try_from(day)
        .ok()
        .filter(|d| *d >= 1 && *d <= days_in_month(year, month))?;
    Some(days_from_civil(year, month, day))
}

/// `HH:MM[:SS[.fffffffff]]` as nanoseconds of the day.
pub(super) fn parse_time_at(sc: &mut Scan<'_>) -> Option<i64> {
    let (h, _) = sc.digits(2, 2)?;
    if !sc.eat(b':') {
        return None;
    }
    let (m, _) = sc.digits(2, 2)?;
    let mut s = 0;
    let mut frac = 0;
    if sc.eat(b':') {
        s = sc.digits(2, 2)?.0;
        if sc.eat(b'.') {
            let (f, n) = sc.digits(1, 9)?;
            frac = f * 10_i64.pow(9 - n as u32);
        }
    }
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + frac)
}

/// Days from 1970-01-01 of an ISO local date (`2017-11-16`).
pub fn parse_iso_date(s: &str) -> Option<i64> {
    let mut sc = Scan::new(s);
    let d = parse_date_at(&mut sc)?;
    sc.done().then_some(d)
}

/// Microseconds from midnight of an ISO local time (`22:31:08.123456`); digits beyond
/// microseconds are dropped, as in Java.
pub fn parse_iso_time(s: &str) -> Option<i64> {
    let mut sc = Scan::new(s);
    let n = parse_time_at(&mut sc)?;
    sc.done().then_some(n / NANOS_PER_MICRO)
}

/// Parses an ISO timestamp into (days, nanos of day, offset seconds if present).
pub fn parse_iso_timestamp(s: &str) -> Option<(i64, i64, Option<i64>)> {
    let mut sc = Scan::new(s);
    let days = parse_date_at(&mut sc)?;
    if !(sc.eat(b'T') || sc.eat(b't')) {
        return None;
    }
    let nod = parse_time_at(&mut sc)?;
    let offset = match sc.peek() {
        None => None,
        Some(b'Z' | b'z') => {
            sc.pos += 1;
            Some(0)
        }
        Some(c @ (b'+' | b'-')) => {
            sc.pos += 1;
            let (h, _) = sc.digits(2, 2)?;
            if !sc.eat(b':') {
                return None;
            }
            let (m, _) = sc.digits(2, 2)?;
            let sec = if sc.eat(b':') { sc.digits(2, 2)?.0 } else { 0 };
            if h > 18 || m > 59 || sec > 59 {
                return None;
            }
            let total = h * 3600 + m * 60 + sec;
            Some(if c == b'-' { -total } else { total })
        }
        Some(_) => return None,
    };
    sc.done().then_some((days, nod, offset))
}

/// Epoch offset in `unit_nanos` units of a parsed timestamp, truncated toward zero as Java's
/// `ChronoUnit.between` does; `None` when out of the i64 range.
pub fn timestamp_units(
    days: i64,
    nanos_of_day: i64,
    offset_secs: i64,
    unit_nanos: i64,
) -> Option<i64> {
    let total = i128::from(days) * i128::from(NANOS_PER_DAY) + i128::from(nanos_of_day)
        - i128::from(offset_secs) * i128::from(NANOS_PER_SECOND);
    i64::try_from(total / i128::from(unit_nanos)).ok()
}
