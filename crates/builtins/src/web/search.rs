//! A search at web_search's provider (agent-loop-tools' `web::provider`, chosen from the
//! environment): the Brave Search API's or a SearXNG instance's JSON, read into hits.

use std::time::Duration;

use reqwest::header::{ACCEPT, RETRY_AFTER, USER_AGENT};
use serde_json::Value;

use agent_loop_tools::web::provider::Provider;

use super::failure::SearchError;
use super::fetch::USER_AGENT_VALUE;

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub description: String,
}

/// Up to `count` results for `query`; the error is the message for the model.
pub async fn search(
    provider: &Provider,
    query: &str,
    count: usize,
    timeout: Duration,
) -> Result<Vec<Hit>, SearchError> {
    let client = crate::tls::client()
        .timeout(timeout)
        .build()
        .map_err(|source| SearchError::Client { source })?;
    let (name, request) = match provider {
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
        .map_err(|e| SearchError::Unreachable {
            provider: name,
            why: without_url(e),
        })?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response.bytes().await.map_err(|e| SearchError::Read {
        provider: name,
        why: without_url(e),
    })?;
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    if !status.is_success() {
        let message = json
            .as_ref()
            .and_then(provider_message)
            .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(500)]).into());
        return Err(SearchError::Status {
            provider: name,
            status,
            message: message.trim().to_string(),
            retry_after,
        });
    }
    let json = json.ok_or(SearchError::NotJson { provider: name })?;
    let (list, text_key) = match provider {
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
