//! The Streamable HTTP transport: each message is a POST to the server's URL, and the answer
//! comes back as a JSON body or in a stream of server-sent events, after any requests and
//! notifications of the server's own. The session the server names at `initialize`
//! (`Mcp-Session-Id`) and the revision it chose (`MCP-Protocol-Version`) go with every later
//! request. As the specification asks, a session the server has forgotten (404) is begun
//! again, once per request, and an event stream that ends or breaks before its answer is
//! resumed from its last event (`Last-Event-ID`, after the server's `retry`), for as long as
//! the request's timeout allows. It runs on the same reqwest (rustls, no OpenSSL) as the HTTP
//! backends.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};

use super::events::Events;
use super::lock;
use super::protocol;
use super::rpc::{self, Failure, Incoming};
use crate::error::root_cause;

const SESSION_ID: &str = "Mcp-Session-Id";
const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// How long to wait before resuming an event stream when the server set no `retry`.
const RESUME_WAIT: Duration = Duration::from_secs(1);
/// The least wait before resuming, whatever `retry` says: a server that ends every stream at
/// once with `retry: 0` is not asked thousands of times a second.
const MIN_RESUME_WAIT: Duration = Duration::from_millis(250);

/// A Streamable HTTP server.
pub struct Http {
    client: reqwest::Client,
    url: String,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
}

impl Http {
    pub fn new(url: &str) -> Result<Http, String> {
        let client = reqwest::Client::builder()
            // An event stream a server gzips could hold a request of its own (a ping awaiting
            // our answer) in its buffer: read_url alone asks for gzip.
            .no_gzip()
            .user_agent(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| root_cause(&e))?;
        Ok(Http {
            client,
            url: url.to_string(),
            session: Mutex::new(None),
            version: Mutex::new(None),
        })
    }

    /// `initialize` (request 0 of every session) and the `initialized` notification; the
    /// server's `initialize` result.
    pub async fn handshake(&self) -> Result<Value, Failure> {
        *lock(&self.session) = None;
        *lock(&self.version) = None;
        let initialize = rpc::request(0, "initialize", protocol::initialize());
        let response = checked(self.post(&initialize).await?).await?;
        if let Some(id) = header(&response, SESSION_ID) {
            *lock(&self.session) = Some(id);
        }
        let result = self.answer(0, response).await?;
        // Sent back as a header: a revision that could not be one is not kept.
        let version = protocol::chosen_version(&result)
            .filter(|v| v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        *lock(&self.version) = version.map(str::to_string);
        self.send(rpc::notification("notifications/initialized", json!({})))
            .await?;
        Ok(result)
    }

    /// Sends request `id` (`message`, built by [`rpc::request`]) and waits for its answer.
    pub async fn request(&self, id: u64, message: Vec<u8>) -> Result<Value, Failure> {
        let mut response = self.post(&message).await?;
        if response.status() == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
            // The server no longer knows the session (it restarted, or let it expire).
            self.handshake().await?;
            response = self.post(&message).await?;
        }
        self.answer(id, checked(response).await?).await
    }

    /// Sends a notification, or the answer to a server's request.
    pub async fn send(&self, message: Vec<u8>) -> Result<(), Failure> {
        checked(self.post(&message).await?).await.map(drop)
    }

    async fn post(&self, message: &[u8]) -> Result<Response, Failure> {
        let request = self
            .client
            .post(&self.url)
            .header(ACCEPT, format!("{JSON}, {EVENT_STREAM}"))
            .header(CONTENT_TYPE, JSON)
            .body(message.to_vec());
        self.with_session(request)
            .send()
            .await
            .map_err(|e| Failure::Closed(root_cause(&e)))
    }

    fn with_session(&self, mut request: RequestBuilder) -> RequestBuilder {
        if let Some(id) = lock(&self.session).as_deref() {
            request = request.header(SESSION_ID, id);
        }
        if let Some(version) = lock(&self.version).as_deref() {
            request = request.header(PROTOCOL_VERSION, version);
        }
        request
    }

    /// The answer to request `id` in a response: its JSON body, or its event stream.
    async fn answer(&self, id: u64, response: Response) -> Result<Value, Failure> {
        let content_type = header(&response, CONTENT_TYPE.as_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with(EVENT_STREAM) {
            return self.events(id, response).await;
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| Failure::Closed(root_cause(&e)))?;
        match rpc::parse(&body).into_iter().find_map(|m| answer_to(id, m)) {
            Some(outcome) => outcome.map_err(Failure::Refused),
            None => Err(Failure::Refused(format!(
                "its reply held no answer to request {id} ({})",
                if content_type.is_empty() {
                    "no content type"
                } else {
                    &content_type
                }
            ))),
        }
    }

    /// Reads an event stream up to the answer to request `id`, answering the server's own
    /// requests on the way, and resuming the stream from its last event (`Last-Event-ID`,
    /// after the `retry` the server set) whenever it ends or breaks first.
    async fn events(&self, id: u64, mut response: Response) -> Result<Value, Failure> {
        let mut events = Events::default();
        loop {
            let mut body = response.bytes_stream();
            let broke = loop {
                let chunk = match body.next().await {
                    None => break None,
                    Some(Err(e)) => break Some(root_cause(&e)),
                    Some(Ok(chunk)) => chunk,
                };
                for data in events.feed(&chunk).map_err(Failure::Closed)? {
                    for message in rpc::parse(data.as_bytes()) {
                        if let Incoming::Request { id, method } = &message {
                            // A server that cannot take the answer fails the request itself.
                            let _ = self.send(rpc::reply(id, method)).await;
                        } else if let Some(outcome) = answer_to(id, message) {
                            return outcome.map_err(Failure::Refused);
                        }
                    }
                }
            };
            // The stream ended or broke before the answer: resumed from its last event, for
            // as long as the caller waits, when the server named one.
            if events.last_id.is_empty() {
                return Err(Failure::Closed(match broke {
                    Some(e) => format!("its event stream broke: {e}"),
                    None => "its event stream ended before the answer".into(),
                }));
            }
            let wait = events.retry.unwrap_or(RESUME_WAIT).max(MIN_RESUME_WAIT);
            tokio::time::sleep(wait).await;
            let resume = self
                .client
                .get(&self.url)
                .header(ACCEPT, EVENT_STREAM)
                .header("Last-Event-ID", &events.last_id);
            let resumed = self.with_session(resume).send().await;
            let resumed = resumed.map_err(|e| Failure::Closed(root_cause(&e)))?;
            if resumed.status() == StatusCode::METHOD_NOT_ALLOWED {
                return Err(Failure::Closed(
                    "its event stream ended before the answer, and it cannot resume streams \
                     (HTTP 405)"
                        .into(),
                ));
            }
            response = checked(resumed).await?;
            events.new_stream();
        }
    }
}

impl Drop for Http {
    /// Ends the session on the server, if a runtime is still there to send the request.
    fn drop(&mut self) {
        if lock(&self.session).is_none() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let request = self.with_session(self.client.delete(&self.url));
        // Not left hanging on a server that is gone.
        let request = request.timeout(Duration::from_secs(5));
        runtime.spawn(async move {
            let _ = request.send().await;
        });
    }
}

fn header(response: &Response, name: &str) -> Option<String> {
    let value = response.headers().get(name)?.to_str().ok()?;
    Some(value.to_string())
}

/// The outcome in `message` if it answers request `id`.
fn answer_to(id: u64, message: Incoming) -> Option<Result<Value, String>> {
    match message {
        Incoming::Answer {
            id: answered,
            outcome,
        } if answered == id => Some(outcome),
        _ => None,
    }
}

/// A success status, or the server's refusal: the status and the start of its body.
async fn checked(response: Response) -> Result<Response, Failure> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let body: String = body.trim().chars().take(300).collect();
    Err(Failure::Refused(format!("HTTP {status}: {body}")))
}
