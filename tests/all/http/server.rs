//! A scripted HTTP/1.1 server on 127.0.0.1 for the HTTP backend tests: each connection gets
//! the next scripted answer, written byte for byte, and every request is recorded so a test
//! can check what the backend sent.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// What the server does with one request.
pub enum Answer {
    /// These bytes (status line, headers, body), then the connection is closed.
    Raw(Vec<u8>),
    /// No answer: the request is reported, then the server waits for the client to close
    /// the connection and reports that too.
    Hang,
    /// A 200 head with this content type and no length, then `chunk` again and again until
    /// the client closes the connection: a body that never ends.
    Endless(&'static str, Vec<u8>),
}

/// A complete response with `Content-Length`.
pub fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    Answer::Raw(response_bytes(status, headers, body))
}

fn response_bytes(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = head(status, headers);
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

/// A response with no length: the body ends where the connection closes, as a stream that
/// is cut off does.
pub fn until_close(content_type: &str, body: &[u8]) -> Answer {
    let mut out = head(200, &[("Content-Type", content_type)]);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Answer::Raw(out)
}

pub fn json(status: u16, body: &str) -> Answer {
    response(
        status,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

fn head(status: u16, headers: &[(&str, &str)]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut out = format!("HTTP/1.1 {status} {reason}\r\nConnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.into_bytes()
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// A message per hanging request received, then one when its connection closed.
    hang_events: mpsc::Receiver<&'static str>,
    /// The connections accepted.
    connections: Arc<Mutex<usize>>,
}

impl Server {
    /// Serves `answers` in order, one per connection; past the end every request gets a 500.
    pub fn start(answers: Vec<Answer>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (tx, hang_events) = mpsc::channel();
        let log = Arc::clone(&requests);
        let connections = Arc::new(Mutex::new(0));
        let accepted = Arc::clone(&connections);
        let mut answers: VecDeque<Answer> = answers.into();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                *accepted.lock().unwrap() += 1;
                let Some(request) = read_request(&mut stream) else {
                    continue;
                };
                log.lock().unwrap().push(request);
                match answers.pop_front() {
                    Some(Answer::Raw(bytes)) => {
                        let _ = stream.write_all(&bytes);
                        let _ = stream.flush();
                    }
                    Some(Answer::Hang) => {
                        let _ = tx.send("request");
                        let mut sink = [0u8; 1024];
                        while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                        let _ = tx.send("closed");
                    }
                    Some(Answer::Endless(content_type, chunk)) => {
                        let mut head = head(200, &[("Content-Type", content_type)]);
                        head.extend_from_slice(b"\r\n");
                        if stream.write_all(&head).is_ok() {
                            while stream.write_all(&chunk).is_ok() {}
                        }
                    }
                    None => {
                        let body = br#"{"error":"no scripted answer left"}"#;
                        let _ = stream.write_all(&response_bytes(500, &[], body));
                    }
                }
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        });
        Server {
            url,
            requests,
            hang_events,
            connections,
        }
    }

    /// Answers every request with the next of `bodies` (JSON, its length given) on
    /// connections kept open, each served until the client closes it, as an API does; past
    /// the end a 500.
    pub fn keep_alive(bodies: Vec<String>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let (log, accepted) = (Arc::clone(&requests), Arc::clone(&connections));
        let bodies = Arc::new(Mutex::new(VecDeque::from(bodies)));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                *accepted.lock().unwrap() += 1;
                let (log, bodies) = (Arc::clone(&log), Arc::clone(&bodies));
                std::thread::spawn(move || {
                    while let Some(request) = read_request(&mut stream) {
                        log.lock().unwrap().push(request);
                        let next = bodies.lock().unwrap().pop_front();
                        let (status, body) = next.map_or((500, String::new()), |b| (200, b));
                        let head = format!(
                            "HTTP/1.1 {status} Status\r\nContent-Type: application/json\r\n\
                             Content-Length: {}\r\n\r\n",
                            body.len()
                        );
                        let sent = stream.write_all(head.as_bytes());
                        if sent
                            .and_then(|()| stream.write_all(body.as_bytes()))
                            .is_err()
                        {
                            break;
                        }
                    }
                });
            }
        });
        Server {
            url,
            requests,
            hang_events: mpsc::channel().1,
            connections,
        }
    }

    /// How many connections the server has accepted.
    pub fn connections(&self) -> usize {
        *self.connections.lock().unwrap()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits (bounded) for the next event of a hanging request.
    pub fn hang_event(&self) -> Option<&'static str> {
        self.hang_events.recv_timeout(Duration::from_secs(20)).ok()
    }
}

/// Reads one request: headers up to the blank line, then `Content-Length` bytes of body (the
/// mock servers of the tests all read requests this way).
pub fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let header_end = loop {
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[header_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}
