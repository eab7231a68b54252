//! A proactive rate limiter per backend (`requests_per_minute`, `tokens_per_minute`): token
//! buckets that refill continuously at the configured rate, holding at most a minute's worth.
//! A request takes one request and its estimated tokens (input plus `max_tokens`); when a
//! bucket is short, the request waits before it is sent rather than be refused with a 429.
//! The provider's own counters (`x-ratelimit-remaining-*`, `anthropic-ratelimit-*-remaining`)
//! lower a bucket to what the provider says is left.
//!
//! The arithmetic takes the time as an argument, so it is tested without waiting.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use crate::backend::Emit;
use crate::event::Event;

/// One bucket: `level` units of `capacity`, refilled at `capacity` per minute.
#[derive(Debug, Clone)]
struct Bucket {
    capacity: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_minute: u64, now: Instant) -> Self {
        Bucket {
            capacity: per_minute as f64,
            level: per_minute as f64,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + secs * self.capacity / 60.0).min(self.capacity);
        self.at = now;
    }

    /// How long until `cost` (at most the capacity: a request bigger than a minute's worth
    /// waits for a full bucket) is available.
    fn wait_for(&self, cost: f64) -> Duration {
        let short = cost.min(self.capacity) - self.level;
        if short <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(short * 60.0 / self.capacity)
        }
    }

    fn take(&mut self, cost: f64) {
        self.level -= cost.min(self.capacity);
    }
}

/// The limits of one backend; `None` when it has neither.
#[derive(Debug)]
pub struct Limiter {
    requests: Option<Mutex<Bucket>>,
    tokens: Option<Mutex<Bucket>>,
}

/// Why and how long a request must wait.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    pub wait: Duration,
    /// `30k tokens/min`, `60 requests/min`.
    pub limit: String,
}

impl Limiter {
    pub fn new(requests_per_minute: Option<u64>, tokens_per_minute: Option<u64>) -> Option<Self> {
        let now = Instant::now();
        let bucket = |n: Option<u64>| n.map(|n| Mutex::new(Bucket::new(n, now)));
        (requests_per_minute.is_some() || tokens_per_minute.is_some()).then(|| Limiter {
            requests: bucket(requests_per_minute),
            tokens: bucket(tokens_per_minute),
        })
    }

    /// The wait before a request costing `tokens` may go, at `now` (zero: go now).
    pub fn check(&self, tokens: u64, now: Instant) -> Option<Wait> {
        let mut longest: Option<Wait> = None;
        for (bucket, cost, unit) in [
            (&self.requests, 1.0, "requests"),
            (&self.tokens, tokens as f64, "tokens"),
        ] {
            let Some(bucket) = bucket else { continue };
            let Ok(mut b) = bucket.lock() else { continue };
            b.refill(now);
            let wait = b.wait_for(cost);
            if wait > Duration::ZERO && longest.as_ref().is_none_or(|l| wait > l.wait) {
                longest = Some(Wait {
                    wait,
                    limit: format!("{} {unit}/min", short_count(b.capacity as u64)),
                });
            }
        }
        longest
    }

    /// Takes the request's share, once it is sent.
    pub fn take(&self, tokens: u64, now: Instant) {
        for (bucket, cost) in [(&self.requests, 1.0), (&self.tokens, tokens as f64)] {
            if let Some(Ok(mut b)) = bucket.as_ref().map(Mutex::lock) {
                b.refill(now);
                b.take(cost);
            }
        }
    }

    /// Lowers the buckets to what the provider says is left.
    pub fn observe(&self, headers: &HeaderMap, now: Instant) {
        let number = |names: &[&str]| {
            names.iter().find_map(|n| {
                headers
                    .get(*n)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<f64>().ok())
            })
        };
        let requests = number(&[
            "x-ratelimit-remaining-requests",
            "anthropic-ratelimit-requests-remaining",
        ]);
        let tokens = number(&[
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-input-tokens-remaining",
        ]);
        for (bucket, left) in [(&self.requests, requests), (&self.tokens, tokens)] {
            if let (Some(Ok(mut b)), Some(left)) = (bucket.as_ref().map(Mutex::lock), left) {
                b.refill(now);
                b.level = b.level.min(left);
            }
        }
    }
}

/// Waits, if a bucket is short, as long as the emptiest one needs (saying so with a
/// [`Event::RateLimitWait`]), then takes the request's share.
pub async fn wait_turn(limiter: &Limiter, tokens: u64, backend: &str, emit: &mut Emit<'_>) {
    if let Some(wait) = limiter.check(tokens, Instant::now()) {
        emit(Event::RateLimitWait {
            backend: backend.to_string(),
            wait_ms: wait.wait.as_millis() as u64,
            limit: wait.limit,
        });
        tokio::time::sleep(wait.wait).await;
    }
    limiter.take(tokens, Instant::now());
}

/// `30k`, `1.5M`, `60`.
fn short_count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6).replace(".0M", "M"),
    }
}

/// A rough count of a request's input tokens: 4 bytes of JSON body per token.
pub fn estimate_tokens(body_len: usize) -> u64 {
    (body_len as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_full_bucket_goes_at_once_and_an_empty_one_waits_for_its_refill() {
        let t0 = Instant::now();
        let limiter = Limiter::new(Some(60), None).unwrap();
        for _ in 0..60 {
            assert_eq!(limiter.check(0, t0), None);
            limiter.take(0, t0);
        }
        let wait = limiter.check(0, t0).unwrap();
        assert_eq!(wait.limit, "60 requests/min");
        assert!((wait.wait.as_secs_f64() - 1.0).abs() < 1e-6, "{wait:?}");
        // Half a second later, half a second to go; a second later, none.
        let half = limiter.check(0, t0 + Duration::from_millis(500)).unwrap();
        assert!((half.wait.as_secs_f64() - 0.5).abs() < 1e-6, "{half:?}");
        assert_eq!(limiter.check(0, t0 + Duration::from_secs(1)), None);
    }

    #[test]
    fn tokens_count_input_and_max_tokens_and_a_huge_request_waits_for_a_full_bucket() {
        let t0 = Instant::now();
        let limiter = Limiter::new(None, Some(30_000)).unwrap();
        limiter.take(20_000, t0);
        let wait = limiter.check(20_000, t0).unwrap();
        assert_eq!(wait.limit, "30k tokens/min");
        // 10k short at 500 tokens a second.
        assert!((wait.wait.as_secs_f64() - 20.0).abs() < 1e-6, "{wait:?}");
        let huge = limiter.check(90_000, t0).unwrap();
        assert!((huge.wait.as_secs_f64() - 40.0).abs() < 1e-6, "{huge:?}");
    }

    #[test]
    fn provider_headers_lower_the_buckets() {
        let t0 = Instant::now();
        let limiter = Limiter::new(Some(600), Some(1_000_000)).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-ratelimit-remaining-requests",
            HeaderValue::from_static("0"),
        );
        headers.insert(
            "anthropic-ratelimit-tokens-remaining",
            HeaderValue::from_static("1000"),
        );
        limiter.observe(&headers, t0);
        let wait = limiter.check(5_000, t0).unwrap();
        // Tokens: 4000 short at 16_667 a second = 0.24 s; requests: 0.1 s.
        assert_eq!(wait.limit, "1M tokens/min");
        assert!((wait.wait.as_secs_f64() - 0.24).abs() < 1e-3, "{wait:?}");
    }
}
