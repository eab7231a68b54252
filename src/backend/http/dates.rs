//! The two date formats in rate-limit headers: HTTP dates (`Retry-After: Wed, 21 Oct 2015
//! 07:28:00 GMT`) and RFC 3339 (`anthropic-ratelimit-requests-reset: 2025-01-01T00:00:30Z`).
//! Only what these headers use is parsed; anything else is `None`, and the caller falls back
//! to its own backoff.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT` (the IMF-fixdate every server sends today).
pub fn parse_http_date(text: &str) -> Option<SystemTime> {
    let mut parts = text.split_whitespace().skip(1);
    let day: u32 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as u32 + 1;
    let year: i64 = parts.next()?.parse().ok()?;
    let (h, m, s) = clock(parts.next()?)?;
    if parts.next()? != "GMT" {
        return None;
    }
    at(year, month, day, h * 3600 + m * 60 + s, 0.0)
}

/// `2025-01-01T00:00:30Z`, `2025-01-01T00:00:30.5+01:00`.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let (date, time) = text.trim().split_once(['T', 't', ' '])?;
    let mut ymd = date.splitn(3, '-');
    let year: i64 = ymd.next()?.parse().ok()?;
    let month: u32 = ymd.next()?.parse().ok()?;
    let day: u32 = ymd.next()?.parse().ok()?;
    let (time, offset_s) = if let Some(t) = time.strip_suffix(['Z', 'z']) {
        (t, 0)
    } else {
        let sign_at = time.rfind(['+', '-'])?;
        let (t, off) = time.split_at(sign_at);
        let (oh, om) = off[1..].split_once(':')?;
        let minutes = oh.parse::<i64>().ok()? * 60 + om.parse::<i64>().ok()?;
        (
            t,
            if off.starts_with('-') {
                -minutes * 60
            } else {
                minutes * 60
            },
        )
    };
    let (whole, fraction) = match time.split_once('.') {
        Some((w, f)) => (w, format!("0.{f}").parse::<f64>().ok()?),
        None => (time, 0.0),
    };
    let (h, m, s) = clock(whole)?;
    let utc = i64::from(h * 3600 + m * 60 + s) - offset_s;
    at(year, month, day, 0, 0.0).and_then(|midnight| shift(midnight, utc as f64 + fraction))
}

/// `08:49:37`.
fn clock(text: &str) -> Option<(u32, u32, u32)> {
    let mut hms = text.splitn(3, ':').map(|p| p.parse::<u32>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    (h < 24 && m < 60 && s <= 60).then_some((h, m, s))
}

/// The instant `seconds` (plus `fraction`) after midnight UTC of the given day.
fn at(year: i64, month: u32, day: u32, seconds: u32, fraction: f64) -> Option<SystemTime> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    shift(
        UNIX_EPOCH,
        (days * 86_400 + i64::from(seconds)) as f64 + fraction,
    )
}

fn shift(from: SystemTime, seconds: f64) -> Option<SystemTime> {
    let d = Duration::try_from_secs_f64(seconds.abs()).ok()?;
    if seconds >= 0.0 {
        from.checked_add(d)
    } else {
        from.checked_sub(d)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(t: SystemTime) -> f64 {
        t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
    }

    #[test]
    fn http_date() {
        let t = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(secs(t), 784_111_777.0);
        assert!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT").is_none());
        assert!(parse_http_date("120").is_none());
    }

    #[test]
    fn rfc3339_with_zone_and_fraction() {
        let z = parse_rfc3339("2025-01-01T00:00:30Z").unwrap();
        assert_eq!(secs(z), 1_735_689_630.0);
        let plus = parse_rfc3339("2025-01-01T01:00:30.5+01:00").unwrap();
        assert_eq!(secs(plus), 1_735_689_630.5);
        let minus = parse_rfc3339("2024-12-31T23:30:30-00:30").unwrap();
        assert_eq!(secs(minus), 1_735_689_630.0);
        assert!(parse_rfc3339("soon").is_none());
        assert!(parse_rfc3339("2025-13-01T00:00:00Z").is_none());
    }
}
