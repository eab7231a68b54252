//! The Streamable HTTP transport: each message is a POST to the server's URL, and the answer
//! comes back as a JSON body or in a stream of server-sent events, after any requests and
//! notifications of the server's own. The session the server names at `initialize`
//! (`Mcp-Session-Id`) and the revision it chose (`MCP-Protocol-Version`) go with every later
//! request. As the specification asks, a session the server has forgotten (404) is begun
//! again, once per request, and an event stream that ends before its answer is resumed from
//! its last event. It runs on the same reqwest (rustls, no OpenSSL) as the HTTP backends.

use std::sync::Mutex;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};

use super::lock;
use super::protocol;
use super::rpc::{self, Failure, Incoming};

const SESSION_ID: &str = "Mcp-Session-Id";
const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

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
            .user_agent(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| cause(&e))?;
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
        *lock(&self.version) = protocol::chosen_version(&result).map(str::to_string);
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
            .map_err(|e| Failure::Closed(cause(&e)))
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
        let content_type = header(&response, CONTENT_TYPE.as_str()).unwrap_or_default();
        if content_type.starts_with(EVENT_STREAM) {
            return self.events(id, response).await;
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| Failure::Closed(cause(&e)))?;
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
    /// requests on the way, and resuming the stream (`Last-Event-ID`, after the `retry` the
    /// server set) while the server goes on sending events.
    async fn events(&self, id: u64, mut response: Response) -> Result<Value, Failure> {
        let mut resumed_from = String::new();
        let mut retry = None;
        loop {
            let mut events = response.bytes_stream().eventsource();
            while let Some(event) = events.next().await {
                let event =
                    event.map_err(|e| Failure::Closed(format!("its event stream broke: {e}")))?;
                retry = event.retry.or(retry);
                for message in rpc::parse(event.data.as_bytes()) {
                    if let Incoming::Request { id, method } = &message {
                        // A server that cannot take the answer fails the request itself.
                        let _ = self.send(rpc::reply(id, method)).await;
                    } else if let Some(outcome) = answer_to(id, message) {
                        return outcome.map_err(Failure::Refused);
                    }
                }
            }
            // Resumed only while the server goes on: each stream must end on a new event.
            let from = events.last_event_id().to_string();
            if from.is_empty() || from == resumed_from {
                return Err(Failure::Closed(
                    "its event stream ended before the answer".into(),
                ));
            }
            tokio::time::sleep(retry.unwrap_or_default()).await;
            let resume = self
                .client
                .get(&self.url)
                .header(ACCEPT, EVENT_STREAM)
                .header("Last-Event-ID", &from);
            let resumed = self.with_session(resume).send().await;
            response = checked(resumed.map_err(|e| Failure::Closed(cause(&e)))?).await?;
            resumed_from = from;
        }
    }
}

impl Drop for Http {
    /// Ends the session on the server, if a runtime is still there to send the request.
    fn drop(&mut self) {
        let Some(id) = lock(&self.session).take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let request = self.client.delete(&self.url).header(SESSION_ID, id);
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

/// The innermost cause of a failed request (`Connection refused (os error 111)`), rather than
/// reqwest's wrapping of it.
fn cause(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
