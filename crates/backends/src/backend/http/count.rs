//! Exact token counts through the provider's count-tokens endpoint, for the HTTP backends
//! whose provider has one (Anthropic's `POST /v1/messages/count_tokens`, Gemini's
//! `models/MODEL:countTokens` beside its OpenAI-compatible endpoint), when a key is set and
//! the user opted in (`count_tokens = "api"`: a network call per message); and the encoding
//! of OpenAI's models, counted locally. Which method a backend uses is said by `/context` and
//! `agent-loop config`.
//!
//! Each message is counted alone, as a user message of its text: the endpoints check the
//! order of a conversation (a tool result must follow its call), which one message cannot
//! keep. Each count so includes the few tokens of a request's own framing: a little above
//! what the message adds to a conversation, which keeps the budget on the safe side.

use std::sync::atomic::Ordering;

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde_json::{json, Value};

use super::{failure, stream, wire, HttpBackend, ERROR_BODY_MAX};
use crate::backend::CountError;
use crate::config::{HttpDef, WireFormat};
use crate::context::exact::{CountTokens, Encoding, Method, Provider};
use crate::context::Message;

/// Where Gemini's OpenAI-compatible endpoint ends; its native API is the folder above.
const GEMINI_OPENAI_PATH: &str = "/openai";

/// How the tokens of the backend `def` describes, on `model`, are counted.
pub fn token_method(def: &HttpDef, model: &str) -> Method {
    let api = def.count_tokens == CountTokens::Api && def.api_key_env.is_some();
    match def.format {
        WireFormat::Anthropic if api => Method::Api(Provider::Anthropic),
        WireFormat::OpenAi if api && gemini_base(&def.base_url).is_some() => {
            Method::Api(Provider::Gemini)
        }
        WireFormat::OpenAi => Encoding::for_model(model).map_or(Method::Estimate, Method::Encoding),
        _ => Method::Estimate,
    }
}

/// The native API's base of Gemini's OpenAI-compatible `base_url`
/// (`https://generativelanguage.googleapis.com/v1beta/openai`).
fn gemini_base(base_url: &str) -> Option<&str> {
    base_url
        .strip_suffix(GEMINI_OPENAI_PATH)
        .filter(|base| base.ends_with("/v1beta") || base.ends_with("/v1"))
}

/// The text a message is counted as.
fn text_of(message: &Message) -> String {
    match message {
        Message::User { text, .. } => text.clone(),
        Message::Assistant { text, tool_calls } => {
            let mut all = text.clone();
            for call in tool_calls {
                all.push('\n');
                all.push_str(&call.name);
                all.push_str(&call.args.to_string());
            }
            all
        }
        Message::ToolResult { output, .. } => output.clone(),
    }
}

impl HttpBackend {
    /// How this backend's tokens are counted now: after a count through the API failed, by
    /// the estimate.
    pub(super) fn method(&self) -> Method {
        match token_method(&self.def, &self.model) {
            Method::Api(_) if self.count_failed.load(Ordering::Relaxed) => Method::Estimate,
            method => method,
        }
    }

    /// The tokens of `message` by the provider's endpoint. A failure turns the endpoint off
    /// for this run; its error says why.
    pub(super) async fn count_by_api(&self, message: &Message) -> Result<u64, CountError> {
        let counted = self.ask_count(message).await;
        if counted.is_err() {
            self.count_failed.store(true, Ordering::Relaxed);
        }
        let images: u64 = match message {
            Message::User { images, .. } => images.iter().map(|i| i.tokens()).sum(),
            _ => 0,
        };
        counted.map(|n| n + images)
    }

    async fn ask_count(&self, message: &Message) -> Result<u64, CountError> {
        let text = text_of(message);
        let key = self.key.as_deref().unwrap_or_default();
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let (url, body, field) = match self.method() {
            Method::Api(Provider::Anthropic) => {
                headers = self.headers.clone();
                (
                    format!("{}/v1/messages/count_tokens", self.def.base_url),
                    json!({"model": self.model, "messages": [{"role": "user", "content": text}]}),
                    "input_tokens",
                )
            }
            Method::Api(Provider::Gemini) => {
                let mut value = HeaderValue::from_str(key).map_err(|_| CountError::KeyNotHeader)?;
                value.set_sensitive(true);
                headers.insert("x-goog-api-key", value);
                let base = gemini_base(&self.def.base_url).unwrap_or_default();
                let model = self.model.strip_prefix("models/").unwrap_or(&self.model);
                (
                    format!("{base}/models/{model}:countTokens"),
                    json!({"contents": [{"role": "user", "parts": [{"text": text}]}]}),
                    "totalTokens",
                )
            }
            _ => return Err(CountError::NoEndpoint),
        };
        let redact = |s: String| CountError::Failed(self.redact(s));
        let response = self
            .client
            .post(&url)
            .headers(headers)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| redact(format!("{url}: {}", failure::chain(&e))))?;
        let status = response.status();
        let bytes = stream::read_prefix(response, ERROR_BODY_MAX).await;
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            return Err(redact(format!(
                "{url}: HTTP {}: {}",
                status.as_u16(),
                wire::error_message(&text)
            )));
        }
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v[field].as_u64())
            .ok_or_else(|| redact(format!("{url}: no `{field}` in the answer: {text}")))
    }
}
