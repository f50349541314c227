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
}
