//! What the benchmarks of a streamed answer share (benches/view.rs, benches/stream_latency.rs):
//! an OpenAI-style server on 127.0.0.1 that streams the pieces it is given as a Chat
//! Completions stream, one event at a time, as a model does.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Answers every request with `chunks`, one event every `pace`, calling `before_each` just
/// before each event is written; its port.
pub fn server(chunks: &[String], pace: Duration, before_each: impl Fn() + Send + 'static) -> u16 {
    let events: Vec<String> = chunks
        .iter()
        .map(|chunk| {
            let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": chunk}}]});
            format!("data: {delta}\n\n")
        })
        .collect();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // Each event sent as it is written, not held back for an acknowledgement.
            let _ = stream.set_nodelay(true);
            read_request(&mut stream);
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            // One event at a time: each is a read of its own for agent-loop, not one read of
            // them all.
            for event in &events {
                before_each();
                if stream.write_all(event.as_bytes()).is_err() {
                    break;
                }
                std::thread::sleep(pace);
            }
            let _ = stream.write_all(b"data: [DONE]\n\n");
        }
    });
    port
}

/// Reads a request, head and body, to its end.
fn read_request(stream: &mut TcpStream) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if got.len() >= end + 4 + length {
            return;
        }
    }
}
