//! The HTTP status of a failed reply reaches the library's user as a field of the error, not
//! only inside its message: a front end tells a wrong key (401) from a rate limit (429) or a
//! server's fault (5xx) without reading words.

use std::io::{Read, Write};
use std::net::TcpListener;

use super::*;
use crate::context::{Message, Window};

/// A server on 127.0.0.1 that answers every request with `status` and an error body.
fn server(status: u16) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 65536];
            let _ = stream.read(&mut buf);
            let body = r#"{"error":{"message":"bad key"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn backend(url: &str) -> HttpBackend {
    let text = format!(
        "[backends.t]\ntype = \"openai\"\nbase_url = \"{url}\"\nmodel = \"m\"\nretries = 0\n"
    );
    let source = crate::config::Source {
        name: "t.toml".into(),
        text,
    };
    let config = crate::config::Config::from_sources(&[source]).unwrap();
    let crate::config::Definition::Http(def) = config.backend("t").unwrap() else {
        unreachable!()
    };
    HttpBackend::new(def.clone(), &HttpClients::default()).unwrap()
}

#[tokio::test]
async fn a_failed_reply_carries_its_status() {
    let backend = backend(&server(401));
    let hello = Message::user("hello");
    let window = Window {
        messages: vec![&hello],
        ..Window::default()
    };
    let request = Request {
        window: &window,
        tools: &[],
        cwd: std::path::Path::new("/"),
    };
    let mut emit = |_: Event| {};
    let error = backend.call(request, &mut emit).await.unwrap_err();
    let source = std::error::Error::source(&error).expect("the backend's error");
    let Some(BackendError::Request { status, why, .. }) = source.downcast_ref() else {
        panic!("not a request error: {error}");
    };
    assert_eq!(*status, Some(401));
    assert!(why.contains("HTTP 401"), "{why}");
}
