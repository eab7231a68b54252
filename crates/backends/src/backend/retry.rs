//! Which failed calls are worth another try, and how long to wait first: the server's own
//! word when it gives one (`retry-after-ms`, `Retry-After`, Anthropic's
//! `anthropic-ratelimit-*-reset`, or a CLI's "try again in N s"), else exponential backoff with
//! jitter so that clients throttled together do not come back together. Shared by the HTTP
//! and CLI backends.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::config::RetrySettings;

/// What to do after a failed try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Wait this long, then try again.
    Wait(Duration),
    /// The tries allowed (`retries`) are used up.
    OutOfTries,
    /// The provider asked for a longer wait than `retry_max_s` allows: giving up now beats
    /// waiting the limit, failing again, and giving up later. Says what the provider asked.
    TooLong(String),
}

/// The plan after failed try number `tries` (1 for the first), given the wait the provider
/// asked for, if any.
pub fn plan(settings: &RetrySettings, tries: u32, asked: Option<Duration>) -> Plan {
    if tries > settings.retries {
        return Plan::OutOfTries;
    }
    match asked {
        Some(wait) if wait > settings.max_wait => Plan::TooLong(format!(
            "the provider asked to wait {}, longer than retry_max_s = {}s; not retried",
            human(wait),
            settings.max_wait.as_secs()
        )),
        Some(wait) => Plan::Wait(wait),
        None => Plan::Wait(backoff(settings.base, tries).min(settings.max_wait)),
    }
}

/// The wait a CLI's message asks for: "try again in 20s", "retry after 1.5 minutes",
/// "Retry-After: 30". The longest one mentioned, if several are.
pub fn hinted_wait(text: &str) -> Option<Duration> {
    static HINT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = HINT.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(?:try(?:ing)? again|retry(?:ing)?)[- ](?:in|after)[:\s]*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b",
        )
        .expect("a fixed pattern")
    });
    re.captures_iter(text)
        .filter_map(|c| {
            let n: f64 = c[1].parse().ok()?;
            let unit = c.get(2).map_or("s", |u| u.as_str()).to_ascii_lowercase();
            let secs = match unit.as_str() {
                "ms" | "millisecond" | "milliseconds" => n / 1000.0,
                u if u.starts_with('m') => n * 60.0,
                u if u.starts_with('h') => n * 3600.0,
                _ => n,
            };
            Duration::try_from_secs_f64(secs).ok()
        })
        .max()
}

/// `45s`, `2m30s`, `250ms`.
fn human(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0 => format!("{}ms", d.as_millis()),
        1..=59 => format!("{secs}s"),
        _ if secs.is_multiple_of(60) => format!("{}m", secs / 60),
        _ => format!("{}m{}s", secs / 60, secs % 60),
    }
}

/// Rate limited (429), server errors (5xx) and Anthropic's overloaded (529). Other 4xx mean
/// the request itself is wrong, and sending it again would not help.
pub fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait before retry number `retry` (1 for the first): `base`, doubled for each later
/// retry, then scaled by a random factor between 0.5 and 1.
pub fn backoff(base: Duration, retry: u32) -> Duration {
    let doubled = base.saturating_mul(1 << retry.saturating_sub(1).min(16));
    doubled.mul_f64(0.5 + 0.5 * random_fraction())
}

/// How long the server asked us to wait, if it said.
pub fn server_wait(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    if let Some(value) = header("retry-after") {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<f64>() {
            return Duration::try_from_secs_f64(seconds.max(0.0)).ok();
        }
        if let Ok(when) = httpdate::parse_http_date(value) {
            return Some(when.duration_since(now).unwrap_or_default());
        }
    }
    anthropic_reset(headers, now)
}

/// The latest reset time among Anthropic's rate limits that are used up.
fn anthropic_reset(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    const LIMITS: [&str; 4] = ["requests", "tokens", "input-tokens", "output-tokens"];
    LIMITS
        .iter()
        .filter(|limit| {
            headers
                .get(format!("anthropic-ratelimit-{limit}-remaining"))
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim() == "0")
        })
        .filter_map(|limit| {
            let reset = headers.get(format!("anthropic-ratelimit-{limit}-reset"))?;
            // RFC 3339 in UTC, as Anthropic sends it (`2025-01-01T00:00:30Z`).
            humantime::parse_rfc3339(reset.to_str().ok()?.trim()).ok()
        })
        .map(|when| when.duration_since(now).unwrap_or_default())
        .max()
}

/// A number in [0, 1) from the standard library's per-process random hash keys: jitter needs
/// no better randomness, and no extra dependency.
fn random_fraction() -> f64 {
    let bits = RandomState::new().build_hasher().finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// `message` with agent-loop's `note` in brackets: before the lines it quotes of the CLI's
/// output (`; its stderr ended with:`), so that the note is not read as the CLI's, else at
/// its end.
pub fn with_note(message: &str, note: &str) -> String {
    let at = message.find("; its ").filter(|&at| {
        message[at..]
            .split_once('\n')
            .is_some_and(|(line, _)| line.ends_with(" ended with:"))
    });
    match at {
        Some(at) => format!("{} ({note}){}", &message[..at], &message[at..]),
        None => format!("{message} ({note})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn a_wait_over_the_limit_gives_up_at_once_saying_so() {
        let settings = RetrySettings {
            retries: 2,
            base: Duration::from_millis(10),
            max_wait: Duration::from_secs(60),
        };
        assert_eq!(
            plan(&settings, 1, Some(Duration::from_secs(3))),
            Plan::Wait(Duration::from_secs(3))
        );
        assert_eq!(
            plan(&settings, 1, Some(Duration::from_secs(150))),
            Plan::TooLong(
                "the provider asked to wait 2m30s, longer than retry_max_s = 60s; not retried"
                    .into()
            )
        );
        assert_eq!(plan(&settings, 3, None), Plan::OutOfTries);
        assert!(
            matches!(plan(&settings, 2, None), Plan::Wait(w) if w <= Duration::from_millis(20))
        );
    }

    #[test]
    fn hints_in_cli_output() {
        let s = Duration::from_secs;
        assert_eq!(
            hinted_wait("Rate limited. Please try again in 20s."),
            Some(s(20))
        );
        assert_eq!(hinted_wait("429: retry after 3 seconds"), Some(s(3)));
        assert_eq!(hinted_wait("Retry-After: 30"), Some(s(30)));
        assert_eq!(
            hinted_wait("quota hit, try again in 2 minutes"),
            Some(s(120))
        );
        assert_eq!(
            hinted_wait("retrying in 500ms"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(hinted_wait("try again later"), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for s in [429, 500, 502, 503, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!retryable_status(s), "{s}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter() {
        let base = Duration::from_millis(100);
        for _ in 0..20 {
            let first = backoff(base, 1);
            assert!(first >= base / 2 && first <= base, "{first:?}");
            let third = backoff(base, 3);
            assert!(third >= base * 2 && third <= base * 4, "{third:?}");
        }
    }

    #[test]
    fn server_wait_from_each_header() {
        let now = humantime::parse_rfc3339("2025-01-01T00:00:00Z").unwrap();
        let wait = |pairs| server_wait(&headers(pairs), now);
        assert_eq!(
            wait(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(wait(&[("retry-after", "3")]), Some(Duration::from_secs(3)));
        assert_eq!(
            wait(&[("retry-after", "Wed, 01 Jan 2025 00:00:07 GMT")]),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            wait(&[
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", "2025-01-01T00:00:05Z"),
                ("anthropic-ratelimit-tokens-remaining", "1000"),
                ("anthropic-ratelimit-tokens-reset", "2025-01-01T00:01:00Z"),
            ]),
            Some(Duration::from_secs(5))
        );
        assert_eq!(wait(&[("retry-after", "later")]), None);
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn a_note_goes_before_the_quoted_output_so_it_is_not_read_as_the_clis() {
        assert_eq!(
            with_note(
                "backend `f` exited with status 1; its stderr ended with:\nboom",
                "after 2 tries"
            ),
            "backend `f` exited with status 1 (after 2 tries); its stderr ended with:\nboom"
        );
        assert_eq!(
            with_note(
                "backend `f` reported an error: overloaded; its own words",
                "x"
            ),
            "backend `f` reported an error: overloaded; its own words (x)"
        );
    }
}
