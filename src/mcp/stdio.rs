//! The stdio transport: the server as a child process, one JSON-RPC message a line on its
//! stdin and stdout. One task owns its stdin and writes the queued messages whole, one after
//! the other, so a request abandoned at its timeout never leaves half a line behind (nor is
//! written at all if its turn had not come), and answering the server never waits on a
//! request being written. Another reads its stdout,
//! hands each answer to the request waiting for it and queues the answers to the server's own
//! requests; when that output ends, the transport is closed and every request still waiting
//! fails.

use std::collections::HashMap;
use std::process::Stdio as Pipe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::lock;
use super::rpc::{self, Failure, Incoming};

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;
/// A message for the server's stdin, with the id of the request it is, if it is one.
type Outgoing = mpsc::Sender<(Option<u64>, Vec<u8>)>;

/// Messages that may wait for the server to read its stdin. A server that stops reading does
/// not make agent-loop hold ever more of them: its requests fail, and answers to its pings
/// are dropped.
const QUEUE: usize = 64;

/// A running stdio server.
pub struct Stdio {
    outgoing: Outgoing,
    waiting: Waiting,
    closed: Arc<AtomicBool>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
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
        let (outgoing, queue) = mpsc::channel(QUEUE);
        let waiting = Waiting::default();
        let closed = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn(write(stdin, queue, waiting.clone()));
        let reader = tokio::spawn(read(
            stdout,
            outgoing.clone(),
            waiting.clone(),
            closed.clone(),
        ));
        let stdio = Stdio {
            outgoing,
            waiting,
            closed,
            reader,
            writer,
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
        // Closed after the reader's last clearing of `waiting`: nobody would answer.
        if self.is_closed() {
            return Err(Failure::Closed(String::new()));
        }
        self.queue(Some(id), message)?;
        match answer.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(message)) => Err(Failure::Refused(message)),
            Err(_) => Err(Failure::Closed(String::new())),
        }
    }

    /// Queues a notification, to be written as a line.
    pub fn send(&self, message: Vec<u8>) -> Result<(), Failure> {
        self.queue(None, message)
    }

    fn queue(&self, request: Option<u64>, message: Vec<u8>) -> Result<(), Failure> {
        self.outgoing
            .try_send((request, message))
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => Failure::Refused(format!(
                    "it has stopped reading its stdin ({QUEUE} messages wait)"
                )),
                mpsc::error::TrySendError::Closed(_) => {
                    Failure::Closed("its stdin is closed".into())
                }
            })
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}

/// Removes a request that is no longer awaited.
struct Forget<'a>(&'a Waiting, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(self.0).remove(&self.1);
    }
}

/// Writes the queued messages to the server's stdin, a line each, until it is closed. A
/// request abandoned (at its timeout) before its turn came is not written: it is not run late,
/// after the model was told it was abandoned.
async fn write(
    mut stdin: ChildStdin,
    mut queue: mpsc::Receiver<(Option<u64>, Vec<u8>)>,
    waiting: Waiting,
) {
    while let Some((request, mut message)) = queue.recv().await {
        if request.is_some_and(|id| !lock(&waiting).contains_key(&id)) {
            continue;
        }
        message.push(b'\n');
        if stdin.write_all(&message).await.is_err() || stdin.flush().await.is_err() {
            // The server is gone; the end of its output says so.
            return;
        }
    }
}

/// Reads the server's stdout to its end.
async fn read(stdout: ChildStdout, outgoing: Outgoing, waiting: Waiting, closed: Arc<AtomicBool>) {
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
                    let _ = outgoing.try_send((None, rpc::reply(&id, &method)));
                }
                Incoming::Notification => {}
            }
        }
    }
    // Closed first: a request that sees its answer dropped finds the transport closed.
    closed.store(true, Ordering::SeqCst);
    lock(&waiting).clear();
}
