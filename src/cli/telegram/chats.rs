//! The chats the bot is in: one worker task per chat, which owns its [`Chat`] and handles
//! the chat's messages one after another, in the order they came (a message sent during a
//! turn waits in the chat's queue); the photos of an album are one turn, the first waiting
//! for the rest to come (Telegram sends them together, but long polling may answer with the
//! first alone).
//! Turns of different chats run at once, up to `max_concurrent`; more wait for a slot.
//! Everything runs on one thread (a `LocalSet`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify, Semaphore};
use tokio::task::JoinHandle;

use agent_loop::chat::Prompt;
use agent_loop::chat::{Chat, ChatOptions, Outcome, RunSettings, SessionChoice};

use super::api::{Api, Mode};
use super::approval::Approvals;
use agent_loop::chat::commands::{Invocation, RunBy, SlashCommand};

use super::commands;
use super::format::to_html;
use super::media::{fetch, Photos};
use super::progress::{report, Progress};
use super::split::{split, MESSAGE_LIMIT};

/// What the bot's chats share.
pub struct Shared {
    pub api: Api,
    pub settings: RunSettings,
    /// The run's flags as chat options; each chat sets its own session.
    pub options: ChatOptions,
    pub approvals: Approvals,
    pub approval_timeout: Duration,
    pub slots: Semaphore,
    /// Becomes true when running turns are to be cancelled (shutdown, after the drain).
    pub cancel_all: watch::Receiver<bool>,
    /// Shutting down: queued messages are not run.
    pub draining: Cell<bool>,
    /// How many `getUpdates` answers the poll loop has handled; closed when it stops.
    pub polls: watch::Receiver<u64>,
    pub debug: bool,
}

/// A queued message of a chat.
enum Job {
    Task(String),
    Command(Invocation),
    /// With the number of `getUpdates` answers handled before the one that brought them.
    Photos(Photos, u64),
}

/// The longest a photo of an album waits for the rest when no `getUpdates` answer comes.
const ALBUM_WAIT: Duration = Duration::from_secs(1);

struct Handle {
    queue: mpsc::UnboundedSender<Job>,
    /// A turn is running.
    busy: Rc<Cell<bool>>,
    stop: Rc<Notify>,
}

/// The chats, by id.
pub struct Chats {
    shared: Rc<Shared>,
    chats: RefCell<HashMap<i64, Handle>>,
    workers: RefCell<Vec<JoinHandle<()>>>,
}

impl Chats {
    pub fn new(shared: Shared) -> Chats {
        Chats {
            shared: Rc::new(shared),
            chats: RefCell::default(),
            workers: RefCell::default(),
        }
    }

    pub fn api(&self) -> &Api {
        &self.shared.api
    }

    /// Takes a text message of an allowed user in `chat_id`.
    pub fn message(&self, chat_id: i64, text: &str) {
        let job = match commands::parse(text) {
            // Answered at once, not after the running turn.
            Some(Some(Invocation {
                command: SlashCommand::Help,
                ..
            })) => return self.reply(chat_id, commands::help()),
            Some(None) => {
                return self.reply(chat_id, format!("Unknown command.\n\n{}", commands::help()))
            }
            Some(Some(Invocation {
                command: SlashCommand::Stop,
                ..
            })) => {
                let chats = self.chats.borrow();
                match chats.get(&chat_id).filter(|h| h.busy.get()) {
                    // The worker says "stopped" when the turn has ended.
                    Some(handle) => handle.stop.notify_one(),
                    None => self.reply(chat_id, "Nothing is running.".into()),
                }
                return;
            }
            Some(Some(command)) => Job::Command(command),
            None => Job::Task(text.to_string()),
        };
        self.queue(chat_id, job);
    }

    /// Takes a photo or image of an allowed user in `chat_id` (fetched when its turn comes).
    pub fn photos(&self, chat_id: i64, photos: Photos) {
        let polls = *self.shared.polls.borrow();
        self.queue(chat_id, Job::Photos(photos, polls));
    }

    /// Queues `job` for the chat's worker, starting the worker at the chat's first.
    fn queue(&self, chat_id: i64, job: Job) {
        let mut chats = self.chats.borrow_mut();
        let handle = chats.entry(chat_id).or_insert_with(|| {
            let (queue, jobs) = mpsc::unbounded_channel();
            let busy = Rc::new(Cell::new(false));
            let stop = Rc::new(Notify::new());
            let worker = Worker {
                shared: Rc::clone(&self.shared),
                chat_id,
                busy: Rc::clone(&busy),
                stop: Rc::clone(&stop),
                chat: None,
            };
            self.workers
                .borrow_mut()
                .push(tokio::task::spawn_local(worker.run(jobs)));
            Handle { queue, busy, stop }
        });
        let _ = handle.queue.send(job);
    }

    /// Sends `text` to `chat_id` without waiting for it.
    pub fn reply(&self, chat_id: i64, text: String) {
        let api = self.shared.api.clone();
        tokio::task::spawn_local(async move {
            if let Err(e) = api.send_message(chat_id, &text, Mode::Plain, None).await {
                eprintln!("agent-loop telegram: cannot send to chat {chat_id}: {e}");
            }
        });
    }

    /// Stops taking messages: each worker finishes its running turn, tells the chat about
    /// the messages it will not run, and ends. Returns the workers to wait for.
    pub fn close(&self) -> Vec<JoinHandle<()>> {
        self.shared.draining.set(true);
        self.chats.borrow_mut().clear();
        std::mem::take(&mut *self.workers.borrow_mut())
    }
}

struct Worker {
    shared: Rc<Shared>,
    chat_id: i64,
    busy: Rc<Cell<bool>>,
    stop: Rc<Notify>,
    /// Opened at the chat's first message.
    chat: Option<Chat>,
}

impl Worker {
    fn session(&self) -> String {
        format!("telegram-{}", self.chat_id)
    }

    async fn run(mut self, mut jobs: mpsc::UnboundedReceiver<Job>) {
        // A job taken from the queue while gathering an album, not part of it.
        let mut next = None;
        while let Some(job) = match next.take() {
            Some(job) => Some(job),
            None => jobs.recv().await,
        } {
            if self.shared.draining.get() {
                self.send_plain(
                    "Not run: the bot is shutting down. Send it again when it is back.",
                )
                .await;
                continue;
            }
            if let Err(e) = self.open().await {
                self.send_plain(&format!("error: {e}")).await;
                continue;
            }
            match job {
                Job::Task(task) => self.turn(task.into(), None).await,
                Job::Command(command) => self.command(command).await,
                Job::Photos(mut photos, polls) => {
                    let stopped = photos.group.is_some() && !self.album_wait(polls).await;
                    // The rest of the album is queued behind it by now.
                    while let Some(group) = &photos.group {
                        match jobs.try_recv() {
                            Ok(Job::Photos(more, _)) if more.group.as_ref() == Some(group) => {
                                photos.join(more)
                            }
                            Ok(other) => {
                                next = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    if stopped {
                        self.busy.set(false);
                        self.send_plain("Stopped before it started.").await
                    } else {
                        self.photos(photos).await
                    }
                }
            }
        }
        if let Some(chat) = &mut self.chat {
            let _ = chat.save();
            chat.shutdown().await;
        }
    }

    /// Waits, as part of the photo's turn, for the rest of an album whose photo came in the
    /// answer after the first `polls`: until the poll loop has handled the answer after it
    /// (Telegram sends an album's photos together), stopped, or [`ALBUM_WAIT`] passed.
    /// False when `/stop` ended it.
    async fn album_wait(&self, polls: u64) -> bool {
        // A /stop that came as the last turn ended is not for this one.
        let _ = futures_util::FutureExt::now_or_never(self.stop.notified());
        self.busy.set(true);
        let mut answers = self.shared.polls.clone();
        let next = answers.wait_for(|&n| n > polls + 1);
        tokio::select! {
            _ = tokio::time::timeout(ALBUM_WAIT, next) => true,
            () = self.stop.notified() => false,
        }
    }

    async fn open(&mut self) -> Result<(), agent_loop::Error> {
        if self.chat.is_some() {
            return Ok(());
        }
        let options = ChatOptions {
            session: SessionChoice::Named(self.session()),
            ..self.shared.options.clone()
        };
        let id = self.chat_id;
        let mut chat = Chat::open(&self.shared.settings, &options, &mut |n| {
            eprintln!("agent-loop telegram: chat {id}: {n}")
        })?;
        for notice in chat.start_mcp().await {
            eprintln!("agent-loop telegram: chat {id}: {notice}");
        }
        self.chat = Some(chat);
        Ok(())
    }

    async fn command(&mut self, command: Invocation) {
        let Some(chat) = &mut self.chat else { return };
        if command.command == SlashCommand::Export {
            return self.export(&command.args).await;
        }
        if command.spec().run_by == RunBy::Chat {
            return self.library(&command).await;
        }
        let text = match command.command {
            SlashCommand::Start => commands::start(chat),
            SlashCommand::Status => commands::status(chat, self.busy.get()),
            SlashCommand::New => {
                let session = format!("telegram-{}", self.chat_id);
                commands::new(chat, &session).unwrap_or_else(|e| format!("error: {e}"))
            }
            _ => commands::help(),
        };
        self.send_plain(&text).await;
    }

    /// `/export NAME.md` (or `.json`): the conversation sent to the chat as a document. It is
    /// not written on the bot's machine: a chat names no place there, and a file the bot's
    /// user could write outside `--root`, asked for by a chat, would pass the tools' confinement.
    async fn export(&mut self, args: &str) {
        let Some(chat) = &self.chat else { return };
        let text = match commands::export_name(args).and_then(|name| {
            let text = chat.export_text(&name)?;
            Ok((name, text))
        }) {
            Ok((_, text)) if text.len() > commands::DOCUMENT_LIMIT => format!(
                "error: the conversation is {} bytes, more than Telegram takes in a document",
                text.len()
            ),
            Ok((name, text)) => match self
                .shared
                .api
                .send_document(self.chat_id, &name, text.as_bytes())
                .await
            {
                Ok(()) => return,
                Err(e) => format!("error: cannot send {name}: {e}"),
            },
            Err(e) => format!("error: {e}"),
        };
        self.send_plain(&text).await;
    }

    /// One of the library's commands; one that runs a turn (`/retry`, `/compare`) runs it as
    /// a task is run.
    async fn library(&mut self, command: &Invocation) {
        let Some(chat) = &mut self.chat else { return };
        let (mut observer, reporter) = progress(&self.shared, self.chat_id, chat);
        let result = chat.command(command, &mut observer).await;
        drop(observer);
        let _ = reporter.await;
        let text = match result {
            Ok(Outcome::Reply(text)) if text.is_empty() => return,
            Ok(Outcome::Reply(text)) | Ok(Outcome::Session { reply: text, .. }) => text,
            Ok(Outcome::Turn { notice, input }) => {
                self.send_plain(&notice).await;
                return self.turn(input, None).await;
            }
            Ok(Outcome::Compare { backends, task }) => {
                return self.turn(task.into(), Some(&backends)).await
            }
            Ok(Outcome::Unknown(_)) => commands::help(),
            Err(e) => format!("error: {e}"),
        };
        let text = chat_redact(self.chat.as_ref(), &text);
        self.send_plain(&text).await;
    }

    /// Fetches the photos and runs them as a turn; a backend that takes no images, or a
    /// photo that cannot be fetched or is no image the model takes, is the reply instead (the
    /// backend is asked first, so its refusal comes without a download), and there is no turn.
    /// The check and the download are the chat's running work as the turn is: `/stop` ends
    /// them, and the chat's next message waits for them.
    async fn photos(&mut self, photos: Photos) {
        let Some(chat) = &mut self.chat else { return };
        let shared = &self.shared;
        // A /stop that came as the last turn ended is not for this one.
        let _ = futures_util::FutureExt::now_or_never(self.stop.notified());
        self.busy.set(true);
        let (mut observer, reporter) = progress(shared, self.chat_id, chat);
        let mut cancel_all = shared.cancel_all.clone();
        let chat_id = self.chat_id;
        let fetched = async {
            chat.check_images(&mut observer)
                .await
                .map_err(|e| format!("error: {}", chat.redactor().redact(&e.to_string())))?;
            let _ = shared.api.typing(chat_id).await;
            fetch(&shared.api, &photos.files).await
        };
        let outcome = tokio::select! {
            fetched = fetched => fetched,
            () = self.stop.notified() => Err("Stopped before it started.".into()),
            _ = cancel_all.wait_for(|cancel| *cancel) => Err("Cancelled: the bot is shutting down.".into()),
        };
        drop(observer);
        let _ = reporter.await;
        match outcome {
            // Still busy: a /stop sent since is for the turn.
            Ok(images) => {
                self.busy_turn(Prompt::new(photos.text(), images), None)
                    .await
            }
            Err(why) => {
                self.busy.set(false);
                self.send_plain(&why).await
            }
        }
    }

    /// Runs one turn (on every backend of `compare`, at once); sends its answer, or why
    /// there is none.
    async fn turn(&mut self, prompt: Prompt, compare: Option<&[String]>) {
        // A /stop that came as the last turn ended is not for this one.
        let _ = futures_util::FutureExt::now_or_never(self.stop.notified());
        self.busy.set(true);
        self.busy_turn(prompt, compare).await
    }

    /// [`Worker::turn`] once the chat is busy with it.
    async fn busy_turn(&mut self, prompt: Prompt, compare: Option<&[String]>) {
        let Some(chat) = &mut self.chat else { return };
        let shared = &self.shared;
        // A slot among the chats that may run at once; /stop also ends the wait for one.
        let slot = tokio::select! {
            slot = shared.slots.acquire() => slot.ok(),
            _ = self.stop.notified() => None,
        };
        let Some(_slot) = slot else {
            self.busy.set(false);
            return self.send_plain("Stopped before it started.").await;
        };
        let (mut observer, reporter) = progress(shared, self.chat_id, chat);
        let mut cancel_all = shared.cancel_all.clone();
        // /stop cancels a turn through the chat's canceller, as Ctrl-C does: the turn then
        // ends on its own, its backend told (an ACP agent gets `session/cancel`) and the
        // answer so far recorded. A comparison is dropped instead.
        let canceller = chat.canceller();
        let stop = &self.stop;
        let stopped = async move {
            stop.notified().await;
            if compare.is_none() {
                canceller.cancel();
                std::future::pending::<()>().await;
            }
        };
        let run = async {
            match compare {
                None => chat.turn(prompt, &mut observer).await,
                Some(backends) => chat
                    .compare(backends, &prompt.text, &mut observer)
                    .await
                    .map(|kept| format!("{}\n\n{}", kept.answer, kept.notice(true))),
            }
        };
        let outcome = tokio::select! {
            result = run => Ok(result),
            () = stopped => Err("Stopped."),
            _ = cancel_all.wait_for(|cancel| *cancel) => Err("Cancelled: the bot is shutting down."),
        };
        // A turn dropped (the bot shutting down) is recorded as cancelled; a comparison
        // leaves the conversation as it was.
        if outcome.is_err() && compare.is_none() {
            if let Err(e) = chat.cancelled(Some("cancelled as the bot shut down"), &mut observer) {
                eprintln!("agent-loop telegram: chat {}: {e}", self.chat_id);
            }
        }
        drop(observer);
        let _ = reporter.await;
        self.busy.set(false);
        let reply = match outcome {
            Ok(Ok(answer)) => {
                let answer = chat.redactor().redact(&answer);
                return self.send_answer(&answer).await;
            }
            Ok(Err(e)) if e.kind == agent_loop::ErrorKind::Cancelled => "Stopped.".to_string(),
            Ok(Err(e)) => {
                let e = chat.with_prompt_stays(e);
                format!("error: {}", chat.redactor().redact(&e.to_string()))
            }
            Err(why) if compare.is_some() => format!("{why} The conversation is unchanged."),
            Err(why) => why.to_string(),
        };
        self.send_plain(&reply).await;
    }

    /// Sends an answer in pieces, as HTML; a piece Telegram cannot parse goes again as
    /// plain text.
    async fn send_answer(&self, answer: &str) {
        let answer = if answer.trim().is_empty() {
            "(no answer)"
        } else {
            answer
        };
        let api = &self.shared.api;
        for piece in split(answer, MESSAGE_LIMIT) {
            let sent = match api
                .send_message(self.chat_id, &to_html(&piece), Mode::Html, None)
                .await
            {
                Err(e) if e.bad_entities() => {
                    api.send_message(self.chat_id, &piece, Mode::Plain, None)
                        .await
                }
                other => other,
            };
            if let Err(e) = sent {
                eprintln!(
                    "agent-loop telegram: cannot send to chat {}: {e}",
                    self.chat_id
                );
            }
        }
    }

    async fn send_plain(&self, text: &str) {
        for piece in split(text, MESSAGE_LIMIT) {
            if let Err(e) = self
                .shared
                .api
                .send_message(self.chat_id, &piece, Mode::Plain, None)
                .await
            {
                eprintln!(
                    "agent-loop telegram: cannot send to chat {}: {e}",
                    self.chat_id
                );
            }
        }
    }
}

/// The observer of a chat's turn or command, and the task that shows its progress.
fn progress(shared: &Shared, chat_id: i64, chat: &Chat) -> (Progress, JoinHandle<()>) {
    let (lines, received) = mpsc::unbounded_channel();
    let reporter = tokio::task::spawn_local(report(shared.api.clone(), chat_id, received));
    let observer = Progress {
        api: shared.api.clone(),
        approvals: shared.approvals.clone(),
        chat_id,
        approval_timeout: shared.approval_timeout,
        lines,
        redactor: chat.redactor().clone(),
        debug: shared.debug,
        calls: Default::default(),
    };
    (observer, reporter)
}

/// `text` with the chat's secrets masked.
fn chat_redact(chat: Option<&Chat>, text: &str) -> String {
    chat.map_or_else(|| text.to_string(), |c| c.redactor().redact(text))
}
