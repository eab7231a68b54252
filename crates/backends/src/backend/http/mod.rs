//! HTTP backends: one request to an LLM API per model step, in one of three wire formats
//! (Anthropic Messages, OpenAI Chat Completions, Ollama chat), with the tools as native tool
//! definitions, the reply streamed or whole, and failed requests retried when another try
//! can help. The API key is read from the environment when the backend is built, before
//! any request, and never appears in a message.

mod anthropic;
mod clients;
mod count;
mod failure;
mod ids;
mod ollama;
mod openai;
mod plain;
mod reply;
#[cfg(test)]
mod status_tests;
mod stream;
mod wire;

pub use clients::HttpClients;
pub use count::token_method;
pub(crate) use wire::system_prompt as builtin_system_prompt;

use std::time::SystemTime;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};

use crate::backend::{ratelimit, retry, Backend, BackendError, Emit, Reply, Request};
use crate::config::{HttpDef, WireFormat};
use crate::error::root_cause;
use crate::event::Event;
use crate::{BoxFuture, Error};
use failure::chain;
use reply::Piece;
use wire::{BodyInput, Wire};

/// How much of an error reply is read: enough for any provider's message.
const ERROR_BODY_MAX: usize = 64 * 1024;

pub struct HttpBackend {
    def: HttpDef,
    model: String,
    /// `base_url` and the format's path.
    url: String,
    key: Option<String>,
    headers: HeaderMap,
    client: reqwest::Client,
    wire: &'static dyn Wire,
    limiter: Option<ratelimit::Limiter>,
    /// A count through the provider's API failed: the estimate from then on.
    count_failed: std::sync::atomic::AtomicBool,
}

impl HttpBackend {
    /// Checks the model and reads the API key, so a missing one is reported before any
    /// request. The client comes from `clients`, shared with the other chats given the same.
    pub fn new(def: HttpDef, clients: &HttpClients) -> Result<Self, Error> {
        let wire = wire_for(def.format);
        let model = def
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| BackendError::NoModel {
                backend: def.name.clone(),
                at: def.defined_at.clone(),
            })?;
        let key = match &def.api_key_env {
            Some(var) => Some(read_key(&def, var)?),
            None => None,
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in wire.headers(key.as_deref()) {
            let carries_key = key.as_deref().is_some_and(|k| value.contains(k));
            let mut value =
                HeaderValue::from_str(&value).map_err(|_| BackendError::KeyNotHeader {
                    backend: def.name.clone(),
                    var: def
                        .api_key_env
                        .as_deref()
                        .unwrap_or("its environment variable")
                        .to_string(),
                })?;
            // Keeps the key out of any debug output of the request.
            value.set_sensitive(carries_key);
            headers.insert(HeaderName::from_static(name), value);
        }
        let client = clients
            .get(def.connect_timeout, def.timeout)
            .map_err(|source| BackendError::Client {
                backend: def.name.clone(),
                why: chain(&source),
                source,
            })?;
        Ok(HttpBackend {
            limiter: ratelimit::Limiter::new(def.requests_per_minute, def.tokens_per_minute),
            url: format!("{}{}", def.base_url, wire.path()),
            def,
            model,
            key,
            headers,
            client,
            wire,
            count_failed: Default::default(),
        })
    }

    async fn run(&self, request: Request<'_>, emit: &mut Emit<'_>) -> Result<Reply, Error> {
        let system = crate::context::native_system(
            wire::system_prompt(request.cwd),
            request.window,
            request.tools,
            request.cwd,
        );
        let mut messages = wire::with_all_results(request.window.messages.iter().copied());
        if !self.def.images {
            wire::images_as_notes(&mut messages, &self.def.name);
        }
        ids::fit(&mut messages, self.def.tool_call_ids);
        let body = self.wire.body(&BodyInput {
            base_url: &self.def.base_url,
            model: &self.model,
            max_tokens: self.def.max_tokens,
            temperature: self.def.temperature,
            stream: self.def.stream,
            system: &system,
            messages: &messages,
            tools: request.tools,
        });
        let body = body.to_string().into_bytes();
        if let Some(message) = plain::warning(&self.def).await {
            emit(Event::Notice { message });
        }
        // An image counts as its tokens, not as its base64 bytes (thousands of times more).
        let (encoded, image_tokens) = messages
            .iter()
            .flat_map(|m| match m {
                crate::context::Message::User { images, .. } => images.as_slice(),
                _ => &[],
            })
            .fold((0, 0), |(bytes, tokens), i| {
                (bytes + i.data.len().div_ceil(3) * 4, tokens + i.tokens())
            });
        let tokens = ratelimit::estimate_tokens(body.len().saturating_sub(encoded))
            + image_tokens
            + u64::from(self.def.max_tokens.unwrap_or(0));
        let response = self.send(body, tokens, emit).await?;
        // A captive portal or a wrong base_url: say so rather than fail to parse a page.
        if content_type(&response).starts_with("text/html") {
            let page = stream::read_prefix(response, ERROR_BODY_MAX).await;
            let page = wire::html_page(&String::from_utf8_lossy(&page))
                .unwrap_or_else(|| "an HTML page".into());
            return Err(self.error(&format!(
                "the server answered with {page}, not the API's JSON; is base_url ({}) the API's address?",
                crate::config::shown_url(&self.def.base_url)
            )));
        }
        // A server that ignores `stream` answers with one JSON document.
        let whole = !self.def.stream || content_type(&response).starts_with("application/json");
        let name = &self.def.name;
        let mut on_piece = |piece: Piece| {
            let backend = name.clone();
            emit(match piece {
                Piece::Text(text) => Event::TextDelta { backend, text },
                Piece::Thinking(text) => Event::ThinkingDelta { backend, text },
            })
        };
        let reply = if whole {
            stream::whole(response, self.wire).await.map(|mut reply| {
                // Only its thinking: the text is the reply's, shown as a whole.
                if let Some(thinking) = reply
                    .take_pieces()
                    .find(|p| matches!(p, Piece::Thinking(_)))
                {
                    on_piece(thinking);
                }
                reply
            })
        } else {
            stream::streamed(response, self.wire, &mut on_piece).await
        }
        .map_err(|why| self.error(&why.to_string()))?;
        if let Some(reason) = reply.cut {
            emit(Event::CutShort {
                backend: name.clone(),
                reason,
            });
        }
        // A refusal may come with nothing at all: that is its answer.
        if reply.is_empty() && reply.cut.is_none() {
            return Err(self.error("the model's reply had neither text nor a tool call"));
        }
        let mut reply = reply.finish();
        reply.usage = reply.usage.map(|u| u.priced(self.def.prices));
        for call in &mut reply.calls {
            call.name = wire::tool_name(&call.name, request.tools);
        }
        Ok(reply)
    }

    /// Sends the request, trying again after rate limits, server errors and broken
    /// connections, and reporting each wait; `tokens` is what the rate limiter counts it as.
    async fn send(
        &self,
        body: Vec<u8>,
        tokens: u64,
        emit: &mut Emit<'_>,
    ) -> Result<reqwest::Response, Error> {
        let settings = self.def.retry;
        let mut tries = 0;
        loop {
            tries += 1;
            if let Some(limiter) = &self.limiter {
                ratelimit::wait_turn(limiter, tokens, &self.def.name, emit).await;
            }
            let sent = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .body(body.clone())
                .send()
                .await;
            if let (Some(limiter), Ok(response)) = (&self.limiter, &sent) {
                limiter.observe(response.headers(), std::time::Instant::now());
            }
            let (status, failure, retry_reason, server_wait) = match sent {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let wait = retry::server_wait(response.headers(), SystemTime::now());
                    let text = stream::read_prefix(response, ERROR_BODY_MAX).await;
                    let text = String::from_utf8_lossy(&text);
                    let code = status.as_u16();
                    let status_line = match status.canonical_reason() {
                        Some(reason) => format!("HTTP {code} {reason}"),
                        None => format!("HTTP {code}"),
                    };
                    (
                        Some(code),
                        format!("{status_line}: {}", wire::error_message(&text)),
                        retry::retryable_status(code).then(|| format!("HTTP {code}")),
                        wait,
                    )
                }
                Err(e) if refused(&e) && self.def.unreachable.is_some() => {
                    // A local server that is not running: retrying will not start it.
                    let hint = self.def.unreachable.as_deref().unwrap_or_default();
                    return Err(BackendError::Unreachable {
                        backend: self.def.name.clone(),
                        hint: hint.replace("{url}", &crate::config::shown_url(&self.def.base_url)),
                    }
                    .into());
                }
                Err(e) => (
                    None,
                    self.transport_failure(&e),
                    transport_retry_reason(&e),
                    None,
                ),
            };
            let plan = retry::plan(&settings, tries, server_wait);
            match (retry_reason, plan) {
                (Some(reason), retry::Plan::Wait(wait)) => {
                    emit(Event::Retrying {
                        backend: self.def.name.clone(),
                        retry: tries,
                        retries: settings.retries,
                        wait_ms: wait.as_millis() as u64,
                        reason: self.redact(reason),
                    });
                    tokio::time::sleep(wait).await;
                }
                (retry_reason, plan) => {
                    let gave_up = match plan {
                        retry::Plan::TooLong(why) if retry_reason.is_some() => format!(" ({why})"),
                        _ if tries > 1 => format!(" (gave up after {tries} tries)"),
                        _ => String::new(),
                    };
                    return Err(self.failed(status, &format!("{failure}{gave_up}")));
                }
            }
        }
    }

    fn transport_failure(&self, e: &reqwest::Error) -> String {
        let def = &self.def;
        if e.is_timeout() && e.is_connect() {
            format!(
                "could not connect within {}s (connect_timeout_s in {})",
                def.connect_timeout.as_secs(),
                def.defined_at
            )
        } else if e.is_timeout() {
            format!(
                "no complete reply within {}s (timeout_s in {})",
                def.timeout.as_secs(),
                def.defined_at
            )
        } else if e.is_connect() {
            format!("cannot connect: {}", root_cause(e))
        } else {
            chain(e)
        }
    }

    /// A message naming the backend and the URL; the key, should a provider echo it, is
    /// masked.
    fn error(&self, why: &str) -> Error {
        self.failed(None, why)
    }

    /// [`HttpBackend::error`] of a reply with an HTTP `status`.
    fn failed(&self, status: Option<u16>, why: &str) -> Error {
        BackendError::Request {
            backend: self.def.name.clone(),
            url: self.redact(self.url.clone()),
            status,
            why: self.redact(why.to_string()),
        }
        .into()
    }

    fn redact(&self, text: String) -> String {
        match &self.key {
            Some(key) if !key.is_empty() => text.replace(key.as_str(), "[API key]"),
            _ => text,
        }
    }
}

impl Backend for HttpBackend {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn call<'a>(
        &'a self,
        request: Request<'a>,
        emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        Box::pin(self.run(request, emit))
    }
    fn images_known(&self) -> Option<bool> {
        Some(self.def.images)
    }

    fn token_method(&self) -> crate::context::Method {
        self.method()
    }

    fn count_tokens<'a>(
        &'a self,
        message: &'a crate::context::Message,
    ) -> BoxFuture<'a, Result<u64, crate::backend::CountError>> {
        Box::pin(self.count_by_api(message))
    }

    fn check_images<'a>(
        &'a self,
        _cwd: &'a std::path::Path,
        _host: &'a mut dyn crate::backend::Host,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let result = match self.def.images {
            true => Ok(()),
            false => Err(Error::config(format!(
                "backend `{}` does not take images: if its model does, set `images = true` in \
                 its entry in backends.toml ({})",
                self.def.name, self.def.defined_at
            ))),
        };
        Box::pin(async move { result })
    }
}

/// The key from `api_key_env`, trimmed; missing or empty is a configuration error.
fn wire_for(format: WireFormat) -> &'static dyn Wire {
    match format {
        WireFormat::Anthropic => &anthropic::Anthropic,
        WireFormat::OpenAi => &openai::OpenAi,
        WireFormat::Ollama => &ollama::Ollama,
    }
}

/// Decodes a recorded streamed body (SSE, or NDJSON for Ollama) handed over in `chunk`-byte
/// pieces as a network would hand it, through the same framing and wire format as a live
/// reply: the reply, and how many text pieces the display would have been given. For the
/// benchmarks, and for checking a recording.
pub fn decode_recorded(
    format: WireFormat,
    body: &[u8],
    chunk: usize,
) -> Result<(Reply, usize), failure::ReplyError> {
    use futures_util::FutureExt;
    let chunks = futures_util::stream::iter(body.chunks(chunk.max(1)).map(Ok));
    let mut pieces = 0;
    let mut count = |_: Piece| pieces += 1;
    let decoding = stream::decode(chunks, wire_for(format), &mut count);
    // An in-memory stream never waits, so the decoding finishes in one poll.
    let reply = decoding
        .now_or_never()
        .expect("an in-memory body is decoded without waiting")?;
    Ok((reply.finish(), pieces))
}

fn read_key(def: &HttpDef, var: &str) -> Result<String, BackendError> {
    let (backend, var, at) = (def.name.clone(), var.to_string(), def.defined_at.clone());
    match std::env::var(&var) {
        Ok(key) if !key.trim().is_empty() => Ok(key.trim().to_string()),
        Ok(_) | Err(std::env::VarError::NotPresent) => {
            Err(BackendError::NoKey { backend, var, at })
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(BackendError::KeyNotUnicode { backend, var, at })
        }
    }
}

/// Broken connections are worth another try (the reason is shown); timeouts are not, as
/// each already waited the whole timeout.
fn transport_retry_reason(e: &reqwest::Error) -> Option<String> {
    (!e.is_timeout() && (e.is_connect() || e.is_request())).then(|| root_cause(e))
}

/// Whether nothing listens at the address: the connection was refused.
fn refused(e: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(now) = cause {
        if let Some(io) = now.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        cause = now.source();
    }
    false
}

fn content_type(response: &reqwest::Response) -> &str {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}
