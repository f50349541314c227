//! The catalog's clock and how its times are shown: milliseconds since the Unix epoch,
//! formatted as UTC.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch: the catalog's clock for first-seen and
/// last-verified times.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Formats milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn format_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Formats milliseconds since the epoch as RFC 3339 UTC (`2026-11-23T12:00:00Z`).
pub fn format_rfc3339(ms: i64) -> String {
    format_time(ms).replacen(' ', "T", 1) + "Z"
}

/// Formats milliseconds since the epoch as RFC 3339 UTC with milliseconds
/// (`2026-11-23T12:00:00.123Z`): exact, for texts read back ([`parse_rfc3339_ms`]).
pub fn format_rfc3339_ms(ms: i64) -> String {
    format!("{}.{:03}Z", format_time(ms).replacen(' ', "T", 1), ms.rem_euclid(1000))
}

/// The inverse of [`format_rfc3339_ms`] (exactly that form: `YYYY-MM-DDTHH:MM:SS.mmmZ`).
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    // [`parse_iso8601_ns`]'s form narrowed to this one: milliseconds, then `Z`.
    let t = text.as_bytes();
    if t.len() != 24 || t[10] != b'T' || t[19] != b'.' || t[23] != b'Z' {
        return None;
    }
    let (ns, _) = parse_iso8601_ns(text)?;
    i64::try_from(ns.div_euclid(1_000_000)).ok()
}

/// An ISO 8601 time with seconds, `YYYY-MM-DDTHH:MM:SS`, any number of fraction digits
/// (up to 9 count, as .NET's round-trip form `2022-09-16T16:43:32.2740000Z` has 7), and
/// `Z`, an offset `+HH:MM`, or nothing (taken as UTC): nanoseconds since the epoch, and
/// how many fraction digits the text has.
pub fn parse_iso8601_ns(text: &str) -> Option<(i128, u32)> {
    let t = text.as_bytes();
    if t.len() < 19 || t[4] != b'-' || t[7] != b'-' || !matches!(t[10], b'T' | b't' | b' ') {
        return None;
    }
    if t[13] != b':' || t[16] != b':' {
        return None;
    }
    let num = |a: usize, b: usize| -> Option<i64> {
        let s = std::str::from_utf8(t.get(a..b)?).ok()?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(y, m as u32, d as u32);
    if civil_from_days(days) != (y, m as u32, d as u32) {
        return None;
    }
    let mut rest = &t[19..];
    let (mut frac_ns, mut digits) = (0i128, 0u32);
    if let Some(after) = rest.strip_prefix(b".") {
        let n = after.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        (frac_ns, digits) = fraction_ns(&after[..n]);
        rest = &after[n..];
    }
    let offset_s: i64 = match rest {
        b"" | b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let two = |a: u8, b: u8| -> Option<i64> {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
            };
            let (oh, om) = (two(*h1, *h2)?, two(*m1, *m2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_s;
    Some((i128::from(secs) * 1_000_000_000 + frac_ns, digits))
}

/// Formats an mtime the way cshatag does: `%010d.%09d`.
pub fn format_ts(mtime_ns: i128) -> String {
    format!("{:010}.{:09}", mtime_ns.div_euclid(1_000_000_000), mtime_ns.rem_euclid(1_000_000_000))
}

/// Parses `SECONDS[.FRACTION]` into (ns, fraction digits). Fractions longer than 9
/// digits are cut to nanoseconds.
pub fn parse_ts(text: &[u8]) -> Option<(i128, u32)> {
    let text =
        std::str::from_utf8(text).ok()?.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let (secs, frac) = match text.split_once('.') {
        Some((s, f)) => (s, f),
        None => (text, ""),
    };
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let s: i128 = secs.parse().ok()?;
    let (ns, digits) = fraction_ns(frac.as_bytes());
    // Found by fuzzing: 30+ digit "seconds" overflowed the multiplication.
    Some((s.checked_mul(1_000_000_000)?.checked_add(ns)?, digits))
}

/// The nanoseconds a second's decimal fraction `digits` (ASCII digits) says, and how
/// many of its digits count (at most 9: longer ones are cut to nanoseconds).
fn fraction_ns(digits: &[u8]) -> (i128, u32) {
    let counted = digits.len().min(9);
    let ns = digits[..counted].iter().fold(0i128, |ns, &c| ns * 10 + i128::from(c - b'0'));
    (ns * 10i128.pow(9 - counted as u32), counted as u32)
}

/// A proleptic Gregorian (year, month, day) to days since 1970-01-01: the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day): Howard Hinnant's
/// `civil_from_days` algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00");
        // 2000-02-29 (a leap day) 12:34:56 UTC.
        assert_eq!(format_time(951_827_696_000), "2000-02-29 12:34:56");
        assert_eq!(format_rfc3339(1_795_000_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn times_with_milliseconds_read_back() {
        for ms in [0, 951_827_696_007, 1_795_000_000_123, 4_102_444_799_999] {
            let text = format_rfc3339_ms(ms);
            assert_eq!(parse_rfc3339_ms(&text), Some(ms), "{text}");
        }
        assert_eq!(format_rfc3339_ms(951_827_696_007), "2000-02-29T12:34:56.007Z");
        for bad in ["2001-02-29T00:00:00.000Z", "2026-11-18T11:06:40Z", "2026-13-01T00:00:00.000Z"]
        {
            assert_eq!(parse_rfc3339_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn iso_times_with_fractions_and_offsets() {
        // .NET's round-trip form, as MD5Stream and TeraCopy write a file's write time.
        let (ns, digits) = parse_iso8601_ns("2022-09-16T16:43:32.2740000Z").unwrap();
        assert_eq!((ns, digits), (1_663_346_612_274_000_000, 7));
        assert_eq!(format_rfc3339_ms((ns / 1_000_000) as i64), "2022-09-16T16:43:32.274Z");
        assert_eq!(parse_iso8601_ns("2022-09-16T16:43:32Z"), Some((1_663_346_612_000_000_000, 0)));
        assert_eq!(parse_iso8601_ns("2022-09-16T16:43:32"), Some((1_663_346_612_000_000_000, 0)));
        // An offset is taken off; digits past nanoseconds are dropped.
        assert_eq!(
            parse_iso8601_ns("2022-09-16T18:43:32.1234567891+02:00"),
            Some((1_663_346_612_123_456_789, 9))
        );
        assert_eq!(
            parse_iso8601_ns("1969-12-31T23:59:59.5Z"),
            Some((-500_000_000, 1)),
            "before the epoch"
        );
        for bad in [
            "2022-09-16",
            "2022-02-30T00:00:00Z",
            "2022-09-16T16:43:32.Z",
            "2022-09-16T16:43:32+2:00",
            "2022-09-16T16:43:32 junk",
            "2022-09-16T24:00:00Z",
        ] {
            assert_eq!(parse_iso8601_ns(bad), None, "{bad}");
        }
    }
}
