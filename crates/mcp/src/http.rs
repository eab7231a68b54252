//! The HTTP side of the Streamable HTTP transport: rmcp's worker drives the protocol
//! (sessions, the revision header, resumption from the last event) and asks this client only
//! to POST a message, open an event stream or end a session. It runs on the same reqwest
//! (rustls, no OpenSSL) as the HTTP backends, and holds agent-loop's caps on what comes back
//! (a body, an event: [`super::caps`]), the server's credentials (sent with every request)
//! and its redirect rule: only to the same origin, and, for a server on the public internet,
//! never to an address that is not (read_url's address policy).

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE,
};
use reqwest::{redirect, RequestBuilder, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use super::caps::{self, Breach};
use crate::config::mcp::Credentials;
use crate::error::root_cause;
use crate::failure::{HeaderError, NotPublic};
use crate::tools::web::address::private_kind;

const SESSION_ID: &str = "Mcp-Session-Id";
const LAST_EVENT_ID: &str = "Last-Event-Id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// Redirects followed for one request, all within the server's origin.
const MAX_REDIRECTS: usize = 5;

type Failure = StreamableHttpError<HttpError>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// A failed request, as its root cause (`Connection refused`), not reqwest's wrapping.
#[derive(Debug)]
pub struct HttpError(pub String);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HttpError {}

fn client_error(e: reqwest::Error) -> Failure {
    StreamableHttpError::Client(HttpError(root_cause(&e)))
}

/// A reqwest client speaking the HTTP half of Streamable HTTP to one server.
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    breach: Breach,
    /// Set when the server answered 401 with a challenge: it wants a login.
    pub challenged: Arc<AtomicBool>,
}

impl HttpClient {
    /// A client for the server at `url`, sending `headers` (its credentials) with every
    /// request. `public`: the server's own address is on the public internet, so nothing it
    /// redirects to may be a private or loopback address.
    pub fn new(headers: HeaderMap, public: bool, breach: Breach) -> Result<Self, reqwest::Error> {
        let client = builder(public).default_headers(headers).build()?;
        Ok(HttpClient {
            client,
            breach,
            challenged: Arc::default(),
        })
    }
}

/// A client builder with the rules of every request to a server and its authorization
/// server: redirects only within an origin, and for a `public` server no private address.
pub fn builder(public: bool) -> reqwest::ClientBuilder {
    let builder = crate::tls::client()
        // An event stream a server gzips could hold a request of its own (a ping awaiting
        // our answer) in its buffer: read_url alone asks for gzip.
        .no_gzip()
        .user_agent(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
        .redirect(redirect::Policy::custom(same_origin));
    if public {
        builder.dns_resolver(Arc::new(PublicOnly))
    } else {
        builder
    }
}

/// What a server that answers 401 with a challenge needs: said at start-up.
pub fn login_needed(server: &str) -> String {
    let server = server.to_string();
    crate::failure::StartError::LoginNeeded { server }.to_string()
}

/// The headers a server's credentials make: the bearer token and the headers, from their
/// variables at the time of the call. Secret values are marked sensitive (never shown by
/// reqwest); a variable that is not set is an error naming it.
pub fn headers(credentials: &Credentials) -> Result<HeaderMap, HeaderError> {
    let read = |key: &'static str, var: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| HeaderError::Unset {
                key,
                var: var.to_string(),
            })
    };
    let secret = |value: String, var: &str| {
        let mut value = HeaderValue::from_str(&value).map_err(|_| HeaderError::SecretValue {
            var: var.to_string(),
        })?;
        value.set_sensitive(true);
        Ok::<_, HeaderError>(value)
    };
    let mut headers = HeaderMap::new();
    for (name, value) in &credentials.http_headers {
        let mut header = HeaderValue::from_str(value).map_err(|source| HeaderError::Value {
            name: name.clone(),
            source,
        })?;
        if secret_header(name) {
            header.set_sensitive(true);
            // Masked like a variable's value: the whole of it, and a scheme's token alone.
            let token = value.split_once(' ').map(|(_, t)| t.trim().to_string());
            crate::redact::learn(std::iter::once(value.clone()).chain(token));
        }
        headers.insert(header_name(name)?, header);
    }
    for (name, var) in &credentials.env_http_headers {
        let value = read("env_http_headers", var)?;
        headers.insert(header_name(name)?, secret(value, var)?);
    }
    if let Some(var) = &credentials.bearer_token_env_var {
        let token = read("bearer_token_env_var", var)?;
        headers.insert(
            AUTHORIZATION,
            secret(format!("Bearer {}", token.trim()), var)?,
        );
    }
    Ok(headers)
}

/// Whether a header written in the config holds a secret: `Authorization`, `Cookie`, or one
/// named like a secret variable (`X-Api-Key`, `X-Auth-Token`), `-` read as `_`.
fn secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || crate::tools::secret_name(&name.replace('-', "_"))
}

fn header_name(name: &str) -> Result<HeaderName, HeaderError> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| HeaderError::Name {
        name: name.to_string(),
    })
}

/// Follows a redirect only within the origin it came from: a server's credentials are not
/// sent to another, and a public server cannot point agent-loop at the user's own network.
fn same_origin(attempt: redirect::Attempt) -> redirect::Action {
    let first = attempt.previous().first();
    let next = attempt.url();
    let same = first.is_some_and(|first| {
        first.scheme() == next.scheme()
            && first.host_str() == next.host_str()
            && first.port_or_known_default() == next.port_or_known_default()
    });
    if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
    } else if !same {
        let to = next.to_string();
        attempt.error(format!(
            "it redirected to {to}, another origin; MCP requests follow redirects only within \
             the server's own"
        ))
    } else {
        attempt.follow()
    }
}

/// Whether a server at `url` is on the public internet: its host is a public address, or a
/// name that resolves to public addresses only.
pub async fn is_public(url: &reqwest::Url) -> bool {
    let port = url.port_or_known_default().unwrap_or(443);
    match url.host() {
        Some(url::Host::Ipv4(ip)) => private_kind(ip.into()).is_none(),
        Some(url::Host::Ipv6(ip)) => private_kind(ip.into()).is_none(),
        Some(url::Host::Domain(name)) => match tokio::net::lookup_host((name, port)).await {
            Ok(addrs) => {
                let addrs: Vec<SocketAddr> = addrs.collect();
                !addrs.is_empty() && addrs.iter().all(|a| private_kind(a.ip()).is_none())
            }
            // Unknown for now: treated as public, the stricter of the two.
            Err(_) => true,
        },
        None => true,
    }
}

/// For a public server's clients: a URL whose host is an address off the public internet
/// is refused. reqwest connects to an address written in the URL without asking the
/// resolver, and the URL parser reads every way of writing one (`127.0.0.1`,
/// `[::ffff:127.0.0.1]`, `2130706433`, `0x7f.1`, `0177.0.0.1`) as the address it means.
pub fn public_literal(url: &reqwest::Url) -> Result<(), NotPublic> {
    let ip: std::net::IpAddr = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.into(),
        Some(url::Host::Ipv6(ip)) => ip.into(),
        _ => return Ok(()),
    };
    match private_kind(ip) {
        Some(kind) => Err(NotPublic {
            url: url.to_string(),
            ip,
            kind,
        }),
        None => Ok(()),
    }
}

/// Name resolution for a public server's client: a name that resolves to an address off the
/// public internet is refused, whatever asked for it (a redirect, a changed DNS answer).
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some((ip, kind)) = addrs
                .iter()
                .find_map(|a| private_kind(a.ip()).map(|k| (a.ip(), k)))
            {
                let refused = format!(
                    "refused: {host} resolves to {ip}, a {kind} address, and this MCP server's \
                     own address is public"
                );
                return Err(refused.into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Adds the session and the headers rmcp asks for (the revision) to a request.
fn with_headers(
    mut request: RequestBuilder,
    session_id: Option<&str>,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> RequestBuilder {
    if let Some(id) = session_id {
        request = request.header(SESSION_ID, id);
    }
    if let Some(token) = auth {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom {
        request = request.header(name, value);
    }
    request
}

fn media_type(response: &Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next().unwrap_or("").trim();
    Some(essence.to_ascii_lowercase())
}

impl HttpClient {
    fn events(&self, response: Response, cap: usize) -> Events {
        let body = caps::capped_events(response.bytes_stream(), cap, self.breach.clone());
        SseStream::from_bytes_stream(body).boxed()
    }

    /// A refusal: 401 with a challenge (login needed), or the status and the start of the body.
    async fn refused(&self, response: Response) -> Failure {
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED {
            if let Some(challenge) = response.headers().get(WWW_AUTHENTICATE) {
                let challenge = String::from_utf8_lossy(challenge.as_bytes()).into_owned();
                self.challenged.store(true, Ordering::Relaxed);
                return StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge));
            }
        }
        let body = caps::body_start(response.bytes_stream(), caps::ERROR_BODY).await;
        let body: String = body.trim().chars().take(300).collect();
        StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}: {body}").into())
    }

    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        let body = serde_json::to_vec(&message)?;
        let request = self
            .client
            .post(uri.as_ref())
            .header(ACCEPT, format!("{JSON}, {EVENT_STREAM}"))
            .header(CONTENT_TYPE, JSON)
            .body(body);
        let request = with_headers(request, session_id.as_deref(), auth, custom);
        let response = request.send().await.map_err(client_error)?;
        match response.status() {
            StatusCode::ACCEPTED | StatusCode::NO_CONTENT => {
                return Ok(StreamableHttpPostResponse::Accepted)
            }
            StatusCode::NOT_FOUND if session_id.is_some() => {
                return Err(StreamableHttpError::SessionExpired)
            }
            s if !s.is_success() => return Err(self.refused(response).await),
            _ => {}
        }
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match media_type(&response).as_deref() {
            Some(EVENT_STREAM) => Ok(StreamableHttpPostResponse::Sse(
                self.events(response, limits.max_sse_event_size),
                session,
            )),
            Some(JSON) => {
                let length = response.content_length();
                let read = caps::read_body(
                    response.bytes_stream(),
                    length,
                    limits.max_json_response_size,
                );
                let bytes = match read.await {
                    Ok(bytes) => bytes,
                    Err(why) => {
                        let why = why.to_string();
                        caps::note(&self.breach, why.clone());
                        return Err(StreamableHttpError::UnexpectedServerResponse(why.into()));
                    }
                };
                if bytes.is_empty() && awaits_nothing {
                    return Ok(StreamableHttpPostResponse::Accepted);
                }
                match serde_json::from_slice::<ServerJsonRpcMessage>(&bytes) {
                    Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
                    Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!("its reply is not a JSON-RPC message: {e}"),
                    ))),
                }
            }
            _ if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let limits = limits(caps::EVENT);
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let request = with_headers(
            self.client.delete(uri.as_ref()),
            Some(&session_id),
            auth_header,
            custom_headers,
        );
        let response = request.send().await.map_err(client_error)?;
        // A server may not support ending sessions; that is no failure of ours.
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(self.refused(response).await)
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            caps::EVENT,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let mut request = self.client.get(uri.as_ref()).header(ACCEPT, EVENT_STREAM);
        if let Some(id) = last_event_id {
            request = request.header(LAST_EVENT_ID, id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(client_error)?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => {
                return Err(StreamableHttpError::ServerDoesNotSupportSse)
            }
            s if !s.is_success() => return Err(self.refused(response).await),
            _ => {}
        }
        match media_type(&response).as_deref() {
            Some(EVENT_STREAM) => Ok(self.events(response, max_sse_event_size)),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }
}

/// agent-loop's caps as rmcp's limits (which only a client can hold: they are passed to it).
pub fn limits(event: usize) -> StreamableHttpResponseLimits {
    let mut limits = StreamableHttpResponseLimits::default();
    limits.max_sse_event_size = event;
    limits.max_json_response_size = caps::BODY;
    limits.max_error_response_size = caps::ERROR_BODY;
    limits
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::dns::Resolve;
    use std::str::FromStr;

    #[tokio::test(flavor = "current_thread")]
    async fn a_public_servers_client_resolves_no_private_name() {
        let name = reqwest::dns::Name::from_str("localhost").unwrap();
        let refused = match PublicOnly.resolve(name).await {
            Ok(_) => panic!("localhost was resolved"),
            Err(e) => e.to_string(),
        };
        assert!(
            refused.starts_with("refused: localhost resolves to "),
            "{refused}"
        );
        assert!(refused.contains("a loopback address"), "{refused}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn servers_at_private_addresses_are_not_public() {
        for (url, public) in [
            ("http://127.0.0.1:3000/mcp", false),
            ("http://localhost/mcp", false),
            ("https://10.1.2.3/mcp", false),
            ("http://[::1]/mcp", false),
            ("https://93.184.216.34/mcp", true),
        ] {
            let parsed = reqwest::Url::parse(url).unwrap();
            assert_eq!(is_public(&parsed).await, public, "{url}");
        }
    }
}
