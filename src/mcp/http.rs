//! The HTTP side of the Streamable HTTP transport: rmcp drives the protocol (sessions, message
//! routing, reconnects) and asks this client only to POST a message, open or delete a session
//! stream. It runs on the same reqwest (rustls, no OpenSSL) as the HTTP backends, so the
//! binary carries one HTTP stack.

use std::collections::HashMap;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};
use tokio_stream::Stream;

const SESSION_ID: &str = "Mcp-Session-Id";
const LAST_EVENT_ID: &str = "Last-Event-Id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

type Failure = StreamableHttpError<HttpError>;
type Events = std::pin::Pin<Box<dyn Stream<Item = Result<Sse, SseError>> + Send>>;

/// A failed request, shown with its causes (`error sending request for url (...): client
/// error (Connect): tcp connect error: Connection refused (os error 111)`), since reqwest's own
/// message names only the first.
#[derive(Debug)]
pub struct HttpError(reqwest::Error);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = std::error::Error::source(&self.0);
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}

fn client(e: reqwest::Error) -> Failure {
    StreamableHttpError::Client(HttpError(e))
}

/// A reqwest client speaking the HTTP half of Streamable HTTP.
#[derive(Clone)]
pub struct HttpClient(reqwest::Client);

impl HttpClient {
    pub fn new() -> Result<Self, reqwest::Error> {
        reqwest::Client::builder()
            .user_agent(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(HttpClient)
    }
}

/// Adds the session, authorization and configured headers every request carries.
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

fn content_type(response: &Response) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn events(response: Response) -> Events {
    Box::pin(SseStream::from_bytes_stream(response.bytes_stream()))
}

/// A non-success status as an error that says what the server answered.
async fn refused(response: Response) -> Failure {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    let body: String = body.chars().take(300).collect();
    StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}: {body}").into())
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
        let body = serde_json::to_vec(&message)?;
        let request = self
            .0
            .post(uri.as_ref())
            .header(ACCEPT, format!("{JSON}, {EVENT_STREAM}"))
            .header(CONTENT_TYPE, JSON)
            .body(body);
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(client)?;
        match response.status() {
            StatusCode::ACCEPTED => return Ok(StreamableHttpPostResponse::Accepted),
            StatusCode::NOT_FOUND if session_id.is_some() => {
                return Err(StreamableHttpError::SessionExpired)
            }
            s if !s.is_success() => return Err(refused(response).await),
            _ => {}
        }
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match content_type(&response) {
            Some(t) if t.starts_with(EVENT_STREAM) => {
                Ok(StreamableHttpPostResponse::Sse(events(response), session))
            }
            Some(t) if t.starts_with(JSON) => {
                let bytes = response.bytes().await.map_err(client)?;
                let message: ServerJsonRpcMessage = serde_json::from_slice(&bytes)?;
                Ok(StreamableHttpPostResponse::Json(message, session))
            }
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let request = with_headers(
            self.0.delete(uri.as_ref()),
            Some(&session_id),
            auth_header,
            custom_headers,
        );
        let response = request.send().await.map_err(client)?;
        // A server may not support ending sessions; that is no failure of ours.
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(refused(response).await)
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
        let mut request = self.0.get(uri.as_ref()).header(ACCEPT, EVENT_STREAM);
        if let Some(id) = last_event_id {
            request = request.header(LAST_EVENT_ID, id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(client)?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => {
                return Err(StreamableHttpError::ServerDoesNotSupportSse)
            }
            s if !s.is_success() => return Err(refused(response).await),
            _ => {}
        }
        match content_type(&response) {
            Some(t) if t.starts_with(EVENT_STREAM) => Ok(events(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }
}
