//! The stdio transport: the server as a child process, one JSON-RPC message a line on its
//! stdin and stdout. A task reads its stdout, hands each answer to the request waiting for it
//! and answers the server's own requests; when that output ends, the transport is closed and
//! every request still waiting fails.

use std::collections::HashMap;
use std::process::Stdio as Pipe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use super::lock;
use super::rpc::{self, Failure, Incoming};

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;
type Input = Arc<tokio::sync::Mutex<ChildStdin>>;

/// A running stdio server.
pub struct Stdio {
    input: Input,
    waiting: Waiting,
    closed: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
    /// Killed when dropped (`kill_on_drop`); its process group goes with the connection.
    _child: Child,
}

impl Stdio {
    /// Starts `command` with piped stdin, stdout and stderr; its stderr is the caller's to read.
    pub fn start(
        mut command: Command,
    ) -> std::io::Result<(Stdio, Option<ChildStderr>, Option<u32>)> {
        command
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::piped());
        let mut child = command.spawn()?;
        let pid = child.id();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other(
                "its stdin and stdout could not be piped",
            ));
        };
        let stderr = child.stderr.take();
        let input: Input = Arc::new(tokio::sync::Mutex::new(stdin));
        let waiting = Waiting::default();
        let closed = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn(read(stdout, input.clone(), waiting.clone(), closed.clone()));
        let stdio = Stdio {
            input,
            waiting,
            closed,
            reader,
            _child: child,
        };
        Ok((stdio, stderr, pid))
    }

    /// Sends request `id` (`message`, built by [`rpc::request`]) and waits for its answer.
    /// Dropping the future forgets the request; a late answer is then passed over.
    pub async fn request(&self, id: u64, message: Vec<u8>) -> Result<Value, Failure> {
        let (sender, answer) = oneshot::channel();
        lock(&self.waiting).insert(id, sender);
        let _forget = Forget(&self.waiting, id);
        self.send(message).await?;
        match answer.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(message)) => Err(Failure::Refused(message)),
            Err(_) => Err(Failure::Closed(String::new())),
        }
    }

    /// Writes one message as a line.
    pub async fn send(&self, message: Vec<u8>) -> Result<(), Failure> {
        write_line(&self.input, message)
            .await
            .map_err(|e| Failure::Closed(format!("writing to it failed: {e}")))
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Removes a request that is no longer awaited.
struct Forget<'a>(&'a Waiting, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(self.0).remove(&self.1);
    }
}

async fn write_line(input: &Input, mut message: Vec<u8>) -> std::io::Result<()> {
    message.push(b'\n');
    let mut stdin = input.lock().await;
    stdin.write_all(&message).await?;
    stdin.flush().await
}

/// Reads the server's stdout to its end.
async fn read(stdout: ChildStdout, input: Input, waiting: Waiting, closed: Arc<AtomicBool>) {
    let mut lines = BufReader::new(stdout).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        for message in rpc::parse(&line) {
            match message {
                Incoming::Answer { id, outcome } => {
                    if let Some(sender) = lock(&waiting).remove(&id) {
                        let _ = sender.send(outcome);
                    }
                }
                Incoming::Request { id, method } => {
                    // A server that cannot take the answer is gone; the end of its output
                    // says so.
                    let _ = write_line(&input, rpc::reply(&id, &method)).await;
                }
                Incoming::Notification => {}
            }
        }
    }
    // Closed first: a request that sees its answer dropped finds the transport closed.
    closed.store(true, Ordering::SeqCst);
    lock(&waiting).clear();
}
