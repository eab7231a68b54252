//! The providers behind web_search, chosen from the environment: the Brave Search API when
//! `BRAVE_API_KEY` is set (`BRAVE_SEARCH_BASE_URL` moves it, for tests and proxies), else a
//! SearXNG instance's JSON API when `SEARXNG_URL` is set. Neither: web_search is not offered.

use std::time::Duration;

use reqwest::header::{ACCEPT, RETRY_AFTER, USER_AGENT};
use serde_json::Value;

use super::fetch::USER_AGENT_VALUE;

pub const BRAVE_KEY_ENV: &str = "BRAVE_API_KEY";
pub const BRAVE_BASE_ENV: &str = "BRAVE_SEARCH_BASE_URL";
pub const SEARXNG_ENV: &str = "SEARXNG_URL";
const BRAVE_BASE: &str = "https://api.search.brave.com";

/// Where searches go.
#[derive(Debug, Clone, PartialEq)]
pub enum Provider {
    Brave { base: String, key: String },
    Searxng { base: String },
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub description: String,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Provider {
    /// The provider the environment sets up, if any.
    pub fn from_env() -> Option<Provider> {
        if let Some(key) = env(BRAVE_KEY_ENV) {
            let base = env(BRAVE_BASE_ENV).unwrap_or_else(|| BRAVE_BASE.into());
            return Some(Provider::Brave { base, key });
        }
        env(SEARXNG_ENV).map(|base| Provider::Searxng { base })
    }

    /// The provider in a few words, for `agent-loop backends` and `config`.
    pub fn describe(&self) -> String {
        match self {
            Provider::Brave { base, .. } if base == BRAVE_BASE => {
                format!("Brave Search ({BRAVE_KEY_ENV} is set)")
            }
            Provider::Brave { base, .. } => {
                format!("Brave Search at {base} ({BRAVE_KEY_ENV} is set)")
            }
            Provider::Searxng { base } => format!("SearXNG at {base} ({SEARXNG_ENV})"),
        }
    }

    /// Up to `count` results for `query`; the error is the message for the model.
    pub async fn search(
        &self,
        query: &str,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<Hit>, String> {
        let client = crate::tls::client()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("cannot set up an HTTP client: {e}"))?;
        let (name, request) = match self {
            Provider::Brave { base, key } => (
                "Brave Search",
                client
                    .get(format!("{}/res/v1/web/search", base.trim_end_matches('/')))
                    .query(&[("q", query), ("count", &count.to_string())])
                    .header("X-Subscription-Token", key),
            ),
            Provider::Searxng { base } => (
                "SearXNG",
                client
                    .get(format!("{}/search", base.trim_end_matches('/')))
                    .query(&[("q", query), ("format", "json")]),
            ),
        };
        let response = request
            .header(USER_AGENT, USER_AGENT_VALUE)
            .header(ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{name} could not be reached: {}", without_url(e)))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("{name} answered, but reading it failed: {}", without_url(e)))?;
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        if !status.is_success() {
            let message = json
                .as_ref()
                .and_then(provider_message)
                .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(500)]).into());
            let mut error = format!("{name} answered HTTP {status}: {}", message.trim());
            if let Some(after) = retry_after {
                error.push_str(&format!(" (Retry-After: {after})"));
            }
            return Err(error);
        }
        let json = json.ok_or_else(|| format!("{name} answered with something else than JSON"))?;
        let (list, text_key) = match self {
            Provider::Brave { .. } => (&json["web"]["results"], "description"),
            Provider::Searxng { .. } => (&json["results"], "content"),
        };
        let hits = list
            .as_array()
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                Some(Hit {
                    title: strip_tags(r["title"].as_str()?),
                    url: r["url"].as_str()?.to_string(),
                    description: strip_tags(r[text_key].as_str().unwrap_or("")),
                })
            })
            .take(count)
            .collect();
        Ok(hits)
    }
}

/// The message of a provider's error body: Brave's `error.detail`, else `message`/`error`.
fn provider_message(json: &Value) -> Option<String> {
    [
        &json["error"]["detail"],
        &json["error"]["message"],
        &json["message"],
        &json["error"],
    ]
    .into_iter()
    .find_map(|v| v.as_str().map(str::to_string))
}

/// reqwest's error without the URL (it carries the query, which the message repeats anyway).
fn without_url(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Text with HTML tags removed and the common entities decoded (`<strong>x</strong> &amp; y`
/// is `x & y`), whitespace collapsed.
pub fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&nbsp;", " "),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text, |t, (entity, c)| t.replace(entity, c));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_entities_go() {
        assert_eq!(
            strip_tags("The <strong>Rust</strong> book &amp; <em>more</em>&nbsp;&lt;3"),
            "The Rust book & more <3"
        );
    }

    #[test]
    fn provider_messages() {
        let brave = serde_json::json!({"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan."}});
        assert_eq!(
            provider_message(&brave).as_deref(),
            Some("Request rate limit exceeded for plan.")
        );
    }
}
