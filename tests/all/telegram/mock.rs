//! A mock of the Telegram Bot API on 127.0.0.1: `getUpdates` long polling served from a queue
//! the test feeds (updates stay until a later call's `offset` acknowledges them, as on
//! Telegram), and every other call recorded and answered as Telegram would. `getFile` answers
//! with a path under `/file/bot{token}/` for the files a test gave, which the mock serves
//! there (with or without a length), recording each download. A test can make the next
//! matching call fail with a given status and body.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const TOKEN: &str = "123456:TEST-token-of-the-mock-bot";

/// A call the bot made: the method and its JSON body.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub body: Value,
    /// The id the mock gave the message a `sendMessage` sent.
    pub message_id: i64,
}

impl Call {
    pub fn chat(&self) -> i64 {
        self.body["chat_id"].as_i64().unwrap_or(0)
    }

    pub fn text(&self) -> &str {
        self.body["text"].as_str().unwrap_or("")
    }

    /// The callback data of the button labelled `label` under this question.
    pub fn button(&self, label: &str) -> String {
        self.body["reply_markup"]["inline_keyboard"][0]
            .as_array()
            .and_then(|row| row.iter().find(|b| b["text"] == label))
            .and_then(|b| b["callback_data"].as_str())
            .unwrap_or_else(|| panic!("no {label} button under {}", self.body))
            .to_string()
    }
}

type Matcher = Box<dyn Fn(&Call) -> bool + Send>;

#[derive(Default)]
struct State {
    updates: Vec<Value>,
    /// Updates that join the queue once a `getUpdates` answer has carried the queued ones.
    later: Vec<Value>,
    next_update: i64,
    next_message: i64,
    calls: Vec<Call>,
    /// Calls made to a path without the bot's token.
    wrong_token: usize,
    /// The next call a matcher accepts gets this status and body instead.
    failures: VecDeque<(Matcher, u16, Value)>,
    /// The highest `offset` a getUpdates carried.
    acked: i64,
    /// This many getUpdates calls are dropped without an answer, as a network failure.
    dropped_polls: usize,
    /// By file id: the bytes `getFile`'s path serves, and whether with a `Content-Length`.
    files: HashMap<String, (Vec<u8>, bool)>,
    /// The file ids downloaded, in order.
    downloads: Vec<String>,
    /// Files whose download, once asked for, waits until they are released.
    held: Vec<String>,
}

pub struct Mock {
    pub url: String,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Mock {
    pub fn start() -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Mock { url, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.0.lock().unwrap()
    }

    fn push(&self, update: impl FnOnce(i64) -> Value) {
        let mut state = self.lock();
        state.next_update += 1;
        let id = state.next_update;
        state.updates.push(update(id));
        self.state.1.notify_all();
    }

    /// A text message from `user` in the private chat `chat`.
    pub fn message(&self, chat: i64, user: i64, text: &str) {
        self.media(chat, user, &[json!({ "text": text })]);
    }

    /// Messages from `user` in `chat` with `fields` each (`photo`, `document`, `caption`,
    /// `media_group_id`...), in one `getUpdates` answer, as an album's arrive.
    pub fn media(&self, chat: i64, user: i64, fields: &[Value]) {
        self.media_in(chat, user, fields, false)
    }

    /// [`Mock::media`], in the `getUpdates` answer after the one that carries what is queued
    /// now: an album that comes apart across answers.
    pub fn media_later(&self, chat: i64, user: i64, fields: &[Value]) {
        self.media_in(chat, user, fields, true)
    }

    fn media_in(&self, chat: i64, user: i64, fields: &[Value], later: bool) {
        let mut state = self.lock();
        for extra in fields {
            state.next_update += 1;
            let id = state.next_update;
            let mut update = json!({"update_id": id, "message": {
                "message_id": id, "date": 0,
                "from": {"id": user, "is_bot": false, "first_name": "Test"},
                "chat": {"id": chat, "type": "private"}}});
            for (k, v) in extra.as_object().expect("fields are an object") {
                update["message"][k] = v.clone();
            }
            match later {
                true => state.later.push(update),
                false => state.updates.push(update),
            }
        }
        self.state.1.notify_all();
    }

    /// The file `id` is `data`; `sized`: served with its `Content-Length`, else its end is
    /// where the connection closes.
    pub fn file(&self, id: &str, data: Vec<u8>, sized: bool) {
        self.lock().files.insert(id.to_string(), (data, sized));
    }

    /// The file `id`'s download waits, once asked for, until [`Mock::release`].
    pub fn hold(&self, id: &str) {
        self.lock().held.push(id.to_string());
    }

    pub fn release(&self, id: &str) {
        self.lock().held.retain(|h| h != id);
        self.state.1.notify_all();
    }

    /// The file ids downloaded so far (asked for, when held).
    pub fn downloads(&self) -> Vec<String> {
        self.lock().downloads.clone()
    }

    /// A sticker (no text) from `user`.
    pub fn sticker(&self, chat: i64, user: i64) {
        self.media(chat, user, &[json!({"sticker": {"file_id": "x"}})]);
    }

    /// `user` pressed the button with `data` under the message `message` of `chat`.
    pub fn press(&self, chat: i64, user: i64, message: i64, data: &str) {
        self.push(|id| {
            json!({"update_id": id, "callback_query": {
                "id": format!("cb{id}"), "chat_instance": "1", "data": data,
                "from": {"id": user, "is_bot": false, "first_name": "Test"},
                "message": {"message_id": message, "date": 0, "chat": {"id": chat, "type": "private"}}}})
        });
    }

    /// The next call `matches` accepts is answered with `status` and `body`.
    pub fn fail_next(
        &self,
        matches: impl Fn(&Call) -> bool + Send + 'static,
        status: u16,
        body: Value,
    ) {
        self.lock()
            .failures
            .push_back((Box::new(matches), status, body));
    }

    /// The next `n` getUpdates calls get no answer (the connection is closed).
    pub fn drop_polls(&self, n: usize) {
        self.lock().dropped_polls = n;
    }

    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The texts of the `sendMessage` calls to `chat`, in order.
    pub fn sent(&self, chat: i64) -> Vec<String> {
        self.calls()
            .iter()
            .filter(|c| c.method == "sendMessage" && c.chat() == chat)
            .map(|c| c.text().to_string())
            .collect()
    }

    /// Each message the bot sent to `chat`, in the order sent, with its text as its last
    /// edit left it: what the chat shows once the bot is done, however the bot timed its
    /// sends and edits.
    pub fn shown(&self, chat: i64) -> Vec<String> {
        let mut shown: Vec<(i64, String)> = Vec::new();
        for call in self.calls() {
            match call.method.as_str() {
                "sendMessage" if call.chat() == chat => {
                    shown.push((call.message_id, call.text().to_string()))
                }
                "editMessageText" if call.chat() == chat => {
                    let id = call.body["message_id"].as_i64();
                    if let Some(m) = shown.iter_mut().find(|(m, _)| Some(*m) == id) {
                        m.1 = call.text().to_string();
                    }
                }
                _ => {}
            }
        }
        shown.into_iter().map(|(_, text)| text).collect()
    }

    pub fn wrong_token(&self) -> usize {
        self.lock().wrong_token
    }

    /// The highest offset the bot has acknowledged.
    pub fn acked(&self) -> i64 {
        self.lock().acked
    }

    /// Waits (bounded, polling the recorded calls) until `found` finds something in them.
    pub fn wait_for<T>(&self, what: &str, found: impl Fn(&[Call]) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(t) = found(&self.calls()) {
                return t;
            }
            if Instant::now() > deadline {
                panic!("waited in vain for {what}; calls: {:#?}", self.calls());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the `n`th question with buttons (from 0) is sent; returns it.
    pub fn question(&self, n: usize) -> Call {
        self.wait_for(&format!("question {n}"), |calls| {
            calls
                .iter()
                .filter(|c| c.method == "sendMessage" && !c.body["reply_markup"].is_null())
                .nth(n)
                .cloned()
        })
    }

    /// Waits until a `sendMessage` to `chat` contains `needle`; returns its text.
    pub fn wait_sent(&self, chat: i64, needle: &str) -> String {
        self.wait_for(&format!("a message to {chat} with {needle:?}"), |calls| {
            calls
                .iter()
                .find(|c| {
                    c.method == "sendMessage" && c.chat() == chat && c.text().contains(needle)
                })
                .map(|c| c.text().to_string())
        })
    }
}

fn serve(mut stream: TcpStream, state: &(Mutex<State>, Condvar)) {
    let Some((path, body)) = read_request(&mut stream) else {
        return;
    };
    if let Some(id) = path.strip_prefix(&format!("/file/bot{TOKEN}/photos/")) {
        let file = {
            let mut s = state.0.lock().unwrap();
            s.downloads.push(id.to_string());
            while s.held.iter().any(|h| h == id) {
                s = state.1.wait(s).unwrap();
            }
            s.files.get(id).cloned()
        };
        let Some((data, sized)) = file else {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            return;
        };
        let length = match sized {
            true => format!("Content-Length: {}\r\n", data.len()),
            false => String::new(),
        };
        let head = format!("HTTP/1.1 200 OK\r\nConnection: close\r\n{length}\r\n");
        // The bot may stop reading once it has seen enough.
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(&data);
        return;
    }
    let (status, reply) = answer(&path, body, state);
    if status == 0 {
        // Dropped: the connection closes with no answer.
        return;
    }
    let body = reply.to_string();
    let head = format!(
        "HTTP/1.1 {status} Status\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn answer(path: &str, body: Value, state: &(Mutex<State>, Condvar)) -> (u16, Value) {
    let mut s = state.0.lock().unwrap();
    let Some(method) = path.strip_prefix(&format!("/bot{TOKEN}/")) else {
        s.wrong_token += 1;
        return (
            404,
            json!({"ok": false, "error_code": 404, "description": "Not Found"}),
        );
    };
    let mut call = Call {
        method: method.to_string(),
        body,
        message_id: 0,
    };
    if method == "getUpdates" && s.dropped_polls > 0 {
        s.dropped_polls -= 1;
        return (0, Value::Null);
    }
    if method == "getUpdates" {
        if let Some(i) = s.failures.iter().position(|(m, _, _)| m(&call)) {
            let (_, status, body) = s.failures.remove(i).unwrap();
            return (status, body);
        }
        let offset = call.body["offset"].as_i64().unwrap_or(0);
        let timeout = call.body["timeout"].as_u64().unwrap_or(0);
        s.acked = s.acked.max(offset);
        s.updates
            .retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
        let deadline = Instant::now() + Duration::from_secs(timeout);
        while s.updates.is_empty() && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            s = state.1.wait_timeout(s, left).unwrap().0;
        }
        let answer = json!({"ok": true, "result": s.updates});
        if !s.updates.is_empty() {
            let later = std::mem::take(&mut s.later);
            s.updates.extend(later);
        }
        return (200, answer);
    }
    if method == "sendMessage" || method == "sendDocument" {
        s.next_message += 1;
        call.message_id = s.next_message;
    }
    s.calls.push(call.clone());
    if let Some(i) = s.failures.iter().position(|(m, _, _)| m(&call)) {
        let (_, status, body) = s.failures.remove(i).unwrap();
        return (status, body);
    }
    let result = match method {
        "sendMessage" => {
            json!({"message_id": call.message_id, "date": 0,
                   "chat": {"id": call.chat(), "type": "private"}, "text": call.text()})
        }
        "sendDocument" => json!({"message_id": call.message_id, "date": 0,
                   "chat": {"id": call.chat(), "type": "private"}}),
        "editMessageText" => json!({"message_id": call.body["message_id"], "date": 0,
                   "chat": {"id": call.chat(), "type": "private"}, "text": call.text()}),
        "getFile" => {
            let id = call.body["file_id"].as_str().unwrap_or("");
            let Some((data, _)) = s.files.get(id) else {
                return (
                    400,
                    json!({"ok": false, "error_code": 400,
                           "description": "Bad Request: invalid file_id"}),
                );
            };
            json!({"file_id": id, "file_unique_id": id, "file_size": data.len(),
                   "file_path": format!("photos/{id}")})
        }
        _ => json!(true),
    };
    (200, json!({"ok": true, "result": result}))
}

/// One request: its path and JSON body (a form's fields as one: a file as its `filename`
/// and `content`).
fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let request = crate::http::server::read_request(stream)?;
    let boundary = request
        .header("content-type")
        .and_then(|t| t.strip_prefix("multipart/form-data; boundary="))
        .map(str::to_string);
    let body = match boundary {
        Some(boundary) => form(&request.body, &boundary),
        None => serde_json::from_slice(&request.body).unwrap_or(Value::Null),
    };
    Some((request.path, body))
}

/// A `multipart/form-data` body's fields; `chat_id` as a number, as in JSON.
fn form(body: &[u8], boundary: &str) -> Value {
    let text = String::from_utf8_lossy(body);
    let mut fields = serde_json::Map::new();
    for part in text.split(&format!("--{boundary}")) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let content = content.strip_suffix("\r\n").unwrap_or(content);
        let quoted = |key: &str| {
            let start = head.find(&format!("{key}=\""))? + key.len() + 2;
            let end = head[start..].find('"')? + start;
            Some(head[start..end].to_string())
        };
        let Some(name) = quoted("name") else { continue };
        let value = match (quoted("filename"), content.parse::<i64>()) {
            (Some(filename), _) => json!({"filename": filename, "content": content}),
            (None, Ok(number)) => json!(number),
            (None, Err(_)) => json!(content),
        };
        fields.insert(name, value);
    }
    Value::Object(fields)
}
