//! Fetching one URL for read_url, safely: only http and https, every hop of a redirect chain
//! checked, names resolved here and every address checked before connecting, and the
//! connection made to the checked address (reqwest is told the address, so a second DNS
//! answer cannot switch it: no DNS rebinding). Timeouts bound the connection and the whole
//! fetch; the body is capped.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::header::{
    HeaderMap, ACCEPT, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, USER_AGENT,
};
use reqwest::{redirect, StatusCode, Url};

use super::address::{own_addresses, refused_kind};
use super::failure::FetchError;
use super::WebOptions;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// What read_url sends as its `User-Agent`.
pub const USER_AGENT_VALUE: &str = concat!("agent-loop/", env!("CARGO_PKG_VERSION"));

const ACCEPT_VALUE: &str =
    "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5";

/// A response whose head has arrived; its body is read with [`Reply::body`].
pub struct Reply {
    /// Where the last hop went (after redirects).
    pub url: Url,
    pub status: StatusCode,
    /// The media type, lower case, without parameters (`text/html`); empty when not given.
    pub media_type: String,
    /// The `charset` parameter of `Content-Type`, if any.
    pub charset: Option<String>,
    /// `Content-Length`, if given.
    pub length: Option<u64>,
    response: reqwest::Response,
}

/// A body read up to the cap.
pub struct Body {
    pub bytes: Vec<u8>,
    /// Whether the body went on past the cap (the rest was not read).
    pub cut: bool,
}

impl Reply {
    /// The body, up to `max_bytes` once decoded (a gzip bomb stops at the cap, like any
    /// other page).
    pub async fn body(mut self, max_bytes: usize) -> Result<Body, FetchError> {
        let mut bytes = Vec::new();
        loop {
            let chunk = match self.response.chunk().await {
                Ok(chunk) => chunk,
                Err(source) => {
                    let url = self.url.to_string();
                    return Err(FetchError::Read { url, source });
                }
            };
            let Some(chunk) = chunk else {
                return Ok(Body { bytes, cut: false });
            };
            let room = max_bytes - bytes.len();
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                return Ok(Body { bytes, cut: true });
            }
            bytes.extend_from_slice(&chunk);
        }
    }
}

/// Fetches `url`, following up to [`MAX_REDIRECTS`] redirects; each hop is checked as the
/// first. The error is the message for the model.
pub async fn get(url: &str, opts: &WebOptions) -> Result<Reply, FetchError> {
    let mut url = Url::parse(url).map_err(|source| FetchError::NotUrl {
        url: url.to_string(),
        source,
    })?;
    for _ in 0..=MAX_REDIRECTS {
        let response = hop(&url, opts).await?;
        let status = response.status();
        let location = response.headers().get(LOCATION);
        if status.is_redirection() && location.is_some() {
            let location = location.and_then(|l| l.to_str().ok()).unwrap_or("");
            url = url
                .join(location)
                .map_err(|source| FetchError::BadRedirect {
                    from: url.to_string(),
                    location: location.to_string(),
                    source,
                })?;
            continue;
        }
        if let Some(coding) = compression(response.headers()) {
            let status = (!status.is_success()).then_some(status);
            return Err(FetchError::Compressed {
                url: url.to_string(),
                status,
                coding,
            });
        }
        let (media_type, charset) = content_type(response.headers());
        let length = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok());
        return Ok(Reply {
            url,
            status,
            media_type,
            charset,
            length,
            response,
        });
    }
    Err(FetchError::TooManyRedirects {
        limit: MAX_REDIRECTS,
        last: url.to_string(),
    })
}

/// One request, no redirects followed, to an address checked first.
async fn hop(url: &Url, opts: &WebOptions) -> Result<reqwest::Response, FetchError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Scheme {
            url: url.to_string(),
        });
    }
    let Some(host) = url.host_str() else {
        return Err(FetchError::NoHost {
            url: url.to_string(),
        });
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs = resolve(url, port, opts).await?;
    if !opts.names(url.as_str()) {
        let own = own_addresses();
        if let Some((ip, kind)) = addrs
            .iter()
            .find_map(|a| refused_kind(a.ip(), &own).map(|k| (a.ip(), k)))
        {
            return Err(FetchError::Private {
                url: url.to_string(),
                host: host.to_string(),
                ip,
                kind,
                origin: origin(url),
            });
        }
    }
    let mut client = crate::tls::client()
        .redirect(redirect::Policy::none())
        .connect_timeout(opts.connect_timeout)
        // The checked address, whatever the system's proxy settings say.
        .no_proxy();
    if url.domain().is_some() {
        client = client.resolve_to_addrs(host, &addrs);
    }
    let client = client
        .build()
        .map_err(|source| FetchError::Client { source })?;
    client
        .get(url.clone())
        .header(USER_AGENT, USER_AGENT_VALUE)
        // reqwest asks for gzip (`Accept-Encoding: gzip`) and decodes it as it reads.
        .header(ACCEPT, ACCEPT_VALUE)
        .send()
        .await
        .map_err(|source| FetchError::Request {
            url: url.to_string(),
            source,
        })
}

/// The addresses to connect to: the literal address, or every address the name resolves to.
async fn resolve(url: &Url, port: u16, opts: &WebOptions) -> Result<Vec<SocketAddr>, FetchError> {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => return Ok(vec![SocketAddr::new(IpAddr::V4(ip), port)]),
        Some(url::Host::Ipv6(ip)) => return Ok(vec![SocketAddr::new(IpAddr::V6(ip), port)]),
        _ => {}
    }
    let host = url.host_str().unwrap_or_default();
    let lookup = tokio::net::lookup_host((host, port));
    let addrs: Vec<SocketAddr> = tokio::time::timeout(opts.connect_timeout, lookup)
        .await
        .map_err(|_| FetchError::LookupSlow {
            host: host.to_string(),
            after: opts.connect_timeout,
        })?
        .map_err(|source| FetchError::Lookup {
            host: host.to_string(),
            source,
        })?
        .collect();
    if addrs.is_empty() {
        let host = host.to_string();
        return Err(FetchError::NoAddress { host });
    }
    Ok(addrs)
}

/// `scheme://host:port/`, for the allow rule the refusal suggests.
fn origin(url: &Url) -> String {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    origin.to_string()
}

fn content_type(headers: &HeaderMap) -> (String, Option<String>) {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return (String::new(), None);
    };
    let mut parts = value.split(';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (key, value) = p.split_once('=')?;
        let value = value.trim().trim_matches('"').trim();
        // An empty charset is no charset (the Fetch standard's rule).
        (key.trim().eq_ignore_ascii_case("charset") && !value.is_empty()).then(|| value.to_string())
    });
    (media_type, charset)
}

/// Seconds for messages (`30s`).
pub fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// The compression a `Content-Encoding` names, if it is one reqwest has not decoded (it takes
/// gzip off): misconfigured servers also send `none`, `utf-8` or an empty value over a plain
/// body, which reads fine.
fn compression(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_ENCODING)?.to_str().ok()?;
    value
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .find(|c| {
            matches!(
                c.as_str(),
                "gzip" | "x-gzip" | "deflate" | "br" | "zstd" | "compress" | "x-compress"
            )
        })
}
