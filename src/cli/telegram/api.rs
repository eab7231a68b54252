//! The Telegram Bot API, the part the bot uses: typed requests and replies with the Bot API's
//! own field names, sent as JSON over reqwest (already a dependency; a Bot API crate would add
//! a second HTTP stack or hundreds of types for the eight methods used here), a document as a
//! form upload. Calls go to
//! `{base}/bot{token}/{method}`, file downloads to `{base}/file/bot{token}/{file_path}`. A
//! 429 is waited out as `retry_after` says and the call sent again; a network error is
//! retried with a growing pause. Errors never carry the URL, which holds the token.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The default API base.
pub const DEFAULT_BASE: &str = "https://api.telegram.org";

/// How many times a call is sent again after a network error (polling has its own loop).
const NETWORK_RETRIES: u32 = 4;
/// How many 429s in a row a call waits out before it gives up.
const RATE_LIMIT_RETRIES: u32 = 20;

/// A call's body.
enum Payload<'a> {
    Json(Vec<u8>),
    /// `sendDocument`'s form: the chat and the file.
    Document {
        chat_id: i64,
        name: &'a str,
        bytes: &'a [u8],
    },
}

#[derive(Debug, Clone)]
pub struct Api {
    client: reqwest::Client,
    /// `{base}/bot{token}`: secret.
    root: String,
    /// `{base}/file/bot{token}`, where `getFile`'s paths are downloaded: secret.
    files: String,
    /// Masked in every error.
    token: String,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiError {
    /// No answer: connection refused, reset, timed out (the description has no URL).
    Network(String),
    /// Telegram answered `ok: false`.
    Refused { code: i64, description: String },
}

impl ApiError {
    /// Telegram could not parse the message's HTML or Markdown.
    pub fn bad_entities(&self) -> bool {
        matches!(self, ApiError::Refused { code: 400, description } if description.contains("can't parse entities"))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Network(why) => write!(f, "network error: {why}"),
            ApiError::Refused { code, description } => write!(f, "{code} {description}"),
        }
    }
}

/// Every reply of the Bot API.
#[derive(Debug, Deserialize)]
struct Reply<T> {
    ok: bool,
    result: Option<T>,
    description: Option<String>,
    error_code: Option<i64>,
    parameters: Option<ResponseParameters>,
}

#[derive(Debug, Deserialize)]
struct ResponseParameters {
    retry_after: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Update {
    pub update_id: i64,
    pub message: Option<Message>,
    pub callback_query: Option<CallbackQuery>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub message_id: i64,
    pub from: Option<User>,
    pub chat: Chat,
    pub text: Option<String>,
    /// A photo's or a document's text.
    pub caption: Option<String>,
    /// A photo: the sizes Telegram made of it, smallest first.
    pub photo: Option<Vec<PhotoSize>>,
    pub document: Option<Document>,
    /// The album the photo or document is part of.
    pub media_group_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PhotoSize {
    pub file_id: String,
    pub width: u64,
    pub height: u64,
    pub file_size: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Document {
    pub file_id: String,
    pub file_name: Option<String>,
    pub mime_type: Option<String>,
    pub file_size: Option<u64>,
}

/// What `getFile` answers: where to download the file.
#[derive(Debug, Clone, Deserialize)]
pub struct File {
    pub file_path: Option<String>,
}

#[derive(Debug, Serialize)]
struct GetFile<'a> {
    file_id: &'a str,
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Chat {
    pub id: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CallbackQuery {
    pub id: String,
    pub from: User,
    pub message: Option<Message>,
    pub data: Option<String>,
}

#[derive(Debug, Serialize)]
struct GetUpdates {
    offset: i64,
    timeout: u64,
    allowed_updates: [&'static str; 2],
}

#[derive(Debug, Clone, Serialize)]
pub struct InlineKeyboardButton {
    pub text: String,
    pub callback_data: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct InlineKeyboardMarkup {
    pub inline_keyboard: Vec<Vec<InlineKeyboardButton>>,
}

#[derive(Debug, Serialize)]
struct SendMessage<'a> {
    chat_id: i64,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parse_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply_markup: Option<&'a InlineKeyboardMarkup>,
}

#[derive(Debug, Serialize)]
struct EditMessageText<'a> {
    chat_id: i64,
    message_id: i64,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parse_mode: Option<&'static str>,
}

#[derive(Debug, Serialize)]
struct SendChatAction {
    chat_id: i64,
    action: &'static str,
}

#[derive(Debug, Serialize)]
pub struct BotCommand {
    pub command: &'static str,
    pub description: &'static str,
}

#[derive(Debug, Serialize)]
struct SetMyCommands<'a> {
    commands: &'a [BotCommand],
}

#[derive(Debug, Serialize)]
struct AnswerCallbackQuery<'a> {
    callback_query_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

/// How a message's text is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Plain,
    Html,
}

impl Mode {
    fn parse_mode(self) -> Option<&'static str> {
        match self {
            Mode::Plain => None,
            Mode::Html => Some("HTML"),
        }
    }
}

impl Api {
    pub fn new(base: &str, token: &str) -> Result<Api, String> {
        let client = agent_loop::process::tls::client()
            .no_gzip()
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let base = base.trim_end_matches('/');
        Ok(Api {
            client,
            root: format!("{base}/bot{token}"),
            files: format!("{base}/file/bot{token}"),
            token: token.to_string(),
        })
    }

    /// `text` from the server, fit to show: the token masked (also percent-encoded), every
    /// control or invisible character (`agent_loop::text::shown`) a space.
    fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        if !self.token.is_empty() {
            let encoded = self.token.replace(':', "%3A");
            for form in [
                self.token.as_str(),
                &encoded,
                &encoded.replace("%3A", "%3a"),
            ] {
                text = text.replace(form, "[REDACTED]");
            }
        }
        text.chars()
            .map(|c| {
                if agent_loop::text::shown::hides(c) {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    }

    /// Sends `method` with `body`, waiting out 429s and retrying network errors (up to
    /// `network_retries` times); `timeout` bounds each try.
    async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        body: &impl Serialize,
        timeout: Duration,
        network_retries: u32,
    ) -> Result<T, ApiError> {
        let body = serde_json::to_vec(body).map_err(|e| ApiError::Network(e.to_string()))?;
        self.send(method, &Payload::Json(body), timeout, network_retries)
            .await
    }

    /// [`Api::call`] with its body made: JSON, or a form with a file.
    async fn send<T: DeserializeOwned>(
        &self,
        method: &str,
        payload: &Payload<'_>,
        timeout: Duration,
        network_retries: u32,
    ) -> Result<T, ApiError> {
        let url = format!("{}/{method}", self.root);
        let (mut failures, mut limited) = (0, 0);
        loop {
            let request = self.client.post(&url).timeout(timeout);
            // A form is made again for each try: it is read as it is sent.
            let request = match payload {
                Payload::Json(body) => request
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.clone()),
                Payload::Document {
                    chat_id,
                    name,
                    bytes,
                } => request.multipart(
                    reqwest::multipart::Form::new()
                        .text("chat_id", chat_id.to_string())
                        .part(
                            "document",
                            reqwest::multipart::Part::bytes(bytes.to_vec())
                                .file_name(name.to_string()),
                        ),
                ),
            };
            let sent = request.send().await;
            let reply = match sent {
                Ok(response) => response.bytes().await.map(|bytes| {
                    serde_json::from_slice::<Reply<T>>(&bytes).map_err(|e| {
                        // Masked before it is cut: a cut could leave half a token. The parse
                        // error quotes the body too.
                        let body = self.scrub(&String::from_utf8_lossy(&bytes));
                        let shown: String = body.chars().take(200).collect();
                        let why: String = self.scrub(&e.to_string()).chars().take(200).collect();
                        format!("{method}: not a Bot API reply ({why}): {shown}")
                    })
                }),
                Err(e) => Err(e),
            };
            let error = match reply {
                Ok(Ok(Reply {
                    ok: true,
                    result: Some(result),
                    ..
                })) => return Ok(result),
                Ok(Err(garbled)) => ApiError::Network(garbled),
                Ok(Ok(reply)) => {
                    let code = reply.error_code.unwrap_or(0);
                    let retry_after = reply.parameters.and_then(|p| p.retry_after);
                    if code == 429 && limited < RATE_LIMIT_RETRIES {
                        limited += 1;
                        tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1))).await;
                        continue;
                    }
                    return Err(ApiError::Refused {
                        code,
                        description: self.scrub(&reply.description.unwrap_or_default()),
                    });
                }
                // Without the URL: it holds the token.
                Err(e) => ApiError::Network(self.scrub(&e.without_url().to_string())),
            };
            if failures >= network_retries {
                return Err(error);
            }
            tokio::time::sleep(backoff(failures)).await;
            failures += 1;
        }
    }

    /// The updates after `offset` (which acknowledges those before it), waiting up to
    /// `timeout` for one to arrive.
    pub async fn get_updates(
        &self,
        offset: i64,
        timeout: Duration,
    ) -> Result<Vec<Update>, ApiError> {
        let body = GetUpdates {
            offset,
            timeout: timeout.as_secs(),
            allowed_updates: ["message", "callback_query"],
        };
        self.call("getUpdates", &body, timeout + Duration::from_secs(15), 0)
            .await
    }

    /// Sends a message; returns its id.
    pub async fn send_message(
        &self,
        chat_id: i64,
        text: &str,
        mode: Mode,
        keyboard: Option<&InlineKeyboardMarkup>,
    ) -> Result<i64, ApiError> {
        let body = SendMessage {
            chat_id,
            text,
            parse_mode: mode.parse_mode(),
            reply_markup: keyboard,
        };
        let sent: Message = self
            .call("sendMessage", &body, REQUEST_TIMEOUT, NETWORK_RETRIES)
            .await?;
        Ok(sent.message_id)
    }

    /// Sends `bytes` to the chat as a document named `name`.
    pub async fn send_document(
        &self,
        chat_id: i64,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), ApiError> {
        let payload = Payload::Document {
            chat_id,
            name,
            bytes,
        };
        let _: Message = self
            .send("sendDocument", &payload, UPLOAD_TIMEOUT, NETWORK_RETRIES)
            .await?;
        Ok(())
    }

    /// Replaces a message's text (and drops its buttons).
    pub async fn edit_message_text(
        &self,
        chat_id: i64,
        message_id: i64,
        text: &str,
        mode: Mode,
    ) -> Result<(), ApiError> {
        let body = EditMessageText {
            chat_id,
            message_id,
            text,
            parse_mode: mode.parse_mode(),
        };
        // The result is the edited Message, or `true`: either way only success matters.
        self.call::<serde_json::Value>("editMessageText", &body, REQUEST_TIMEOUT, NETWORK_RETRIES)
            .await
            .map(drop)
    }

    /// "typing…" under the chat's title for a few seconds.
    pub async fn typing(&self, chat_id: i64) -> Result<(), ApiError> {
        let body = SendChatAction {
            chat_id,
            action: "typing",
        };
        self.call::<bool>("sendChatAction", &body, REQUEST_TIMEOUT, 0)
            .await
            .map(drop)
    }

    pub async fn set_my_commands(&self, commands: &[BotCommand]) -> Result<(), ApiError> {
        self.call::<bool>(
            "setMyCommands",
            &SetMyCommands { commands },
            REQUEST_TIMEOUT,
            NETWORK_RETRIES,
        )
        .await
        .map(drop)
    }

    pub async fn answer_callback_query(
        &self,
        id: &str,
        text: Option<&str>,
    ) -> Result<(), ApiError> {
        let body = AnswerCallbackQuery {
            callback_query_id: id,
            text,
        };
        self.call::<bool>(
            "answerCallbackQuery",
            &body,
            REQUEST_TIMEOUT,
            NETWORK_RETRIES,
        )
        .await
        .map(drop)
    }
}

impl Api {
    /// Where the file `file_id` can be downloaded (`getFile`).
    pub async fn get_file(&self, file_id: &str) -> Result<File, ApiError> {
        let body = GetFile { file_id };
        self.call("getFile", &body, REQUEST_TIMEOUT, NETWORK_RETRIES)
            .await
    }

    /// The bytes of the file at `file_path` (from `getFile`), at most `limit` of them: a
    /// bigger file is refused as soon as its length or its bytes say so. The error says what
    /// failed, without the URL.
    pub async fn download(&self, file_path: &str, limit: usize) -> Result<Vec<u8>, String> {
        let url = format!("{}/{}", self.files, file_path.trim_start_matches('/'));
        let failed = |e: reqwest::Error| {
            format!(
                "the download failed: {}",
                self.scrub(&e.without_url().to_string())
            )
        };
        let over = || {
            format!(
                "the file is over the {} MiB an image may have",
                limit / (1024 * 1024)
            )
        };
        let mut response = self
            .client
            .get(&url)
            .timeout(DOWNLOAD_TIMEOUT)
            .send()
            .await
            .map_err(failed)?;
        if !response.status().is_success() {
            return Err(format!(
                "the download failed: HTTP {}",
                response.status().as_u16()
            ));
        }
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(over());
        }
        let mut data = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if data.len() + chunk.len() > limit {
                return Err(over());
            }
            data.extend_from_slice(&chunk);
        }
        Ok(data)
    }
}

/// How long downloading one file may take.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// How long one call other than a long poll may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// An upload: a long conversation on a phone's slow connection.
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// The pause before the next try after `failures` failed ones: 1, 2, 4, … up to 30 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs((1u64 << failures.min(5)).min(30))
}
