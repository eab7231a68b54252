//! Why read_url or web_search got no page or no results: each is the tool's failed output,
//! the message the model reads, naming the URL, the host or the provider.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::StatusCode;

/// Why a URL could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("`{url}` is not a URL: {source}")]
    NotUrl {
        url: String,
        source: url::ParseError,
    },
    #[error("{from} redirects to `{location}`, which is not a URL: {source}")]
    BadRedirect {
        from: String,
        location: String,
        source: url::ParseError,
    },
    #[error("more than {limit} redirects; the last one pointed to {last}")]
    TooManyRedirects { limit: usize, last: String },
    /// The body came compressed in a way read_url does not decode; `status` when it was not a
    /// success.
    #[error(
        "refused: {url}{} came {coding}-compressed; read_url asks for gzip or none, and \
         decodes gzip only",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
    )]
    Compressed {
        url: String,
        status: Option<StatusCode>,
        coding: String,
    },
    #[error("refused: {url} is not http or https; read_url reads web pages only")]
    Scheme { url: String },
    #[error("refused: {url} names no host")]
    NoHost { url: String },
    /// An address that is not the public internet (`kind` says which range), or this
    /// machine's own; `origin` is what an allow rule would name.
    #[error(
        "refused: {url} is a {kind} address{}, not the public internet. read_url only fetches \
         such addresses when an allow rule names the URL (--allow 'read_url:{origin}*').",
        resolved(host, *ip)
    )]
    Private {
        url: String,
        host: String,
        ip: IpAddr,
        kind: &'static str,
        origin: String,
    },
    #[error("cannot set up an HTTP client: {source}")]
    Client { source: reqwest::Error },
    #[error("fetching {url} failed: {}", describe(source))]
    Request { url: String, source: reqwest::Error },
    #[error("reading {url} failed: {}", describe(source))]
    Read { url: String, source: reqwest::Error },
    #[error("looking up {host} took over {after:?}")]
    LookupSlow { host: String, after: Duration },
    #[error("cannot look up {host}: {source}")]
    Lookup {
        host: String,
        source: std::io::Error,
    },
    #[error("{host} has no address")]
    NoAddress { host: String },
}

/// ` (HOST resolves to IP)` when the URL named the host rather than the address.
fn resolved(host: &str, ip: IpAddr) -> String {
    if host.trim_matches(['[', ']']) == ip.to_string() {
        String::new()
    } else {
        format!(" ({host} resolves to {ip})")
    }
}

/// reqwest's error with its causes (`error sending request` alone says little).
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Why a search gave no results; `provider` is its name (Brave Search, SearXNG).
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("cannot set up an HTTP client: {source}")]
    Client { source: reqwest::Error },
    /// `why` is reqwest's error and its causes, without the URL (it carries the query).
    #[error("{provider} could not be reached: {why}")]
    Unreachable { provider: &'static str, why: String },
    #[error("{provider} answered, but reading it failed: {why}")]
    Read { provider: &'static str, why: String },
    /// An error status, with the provider's message and its `Retry-After`, if any.
    #[error(
        "{provider} answered HTTP {status}: {message}{}",
        retry_after.as_ref().map(|a| format!(" (Retry-After: {a})")).unwrap_or_default()
    )]
    Status {
        provider: &'static str,
        status: StatusCode,
        message: String,
        retry_after: Option<String>,
    },
    #[error("{provider} answered with something else than JSON")]
    NotJson { provider: &'static str },
}
