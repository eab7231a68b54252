//! The CLI backend: runs an agent CLI once per model step, as `backends.toml` describes it.
//! The prompt goes in as an argument, a temporary file or stdin; the output is drained,
//! capped, made text (as a terminal would show it, or ANSI-stripped: `render`) and parsed
//! with the backend's own regexes.

use std::path::PathBuf;

use crate::backend::kept::Kept;
use crate::backend::lines::LineSplitter;
use crate::backend::offered;
use crate::backend::retry::{self, with_note, Plan};
use crate::backend::streamed::Streamed;
use crate::backend::{Backend, BackendError, Emit, Reply, Request};
use crate::config::{BackendDef, PromptVia};
use crate::context::render_prompt;
use crate::event::{Event, OutputStream, RawOutput};
use crate::parse::{OutputFormat, Parsed};
use crate::process::{self, Progress, Spec};
use crate::{BoxFuture, Error};

/// Lines of stderr quoted in an error message.
const ERROR_TAIL_LINES: usize = 20;

/// One run of a CLI, before it is judged: what it printed, raw and stripped, how it ended,
/// and what the parsers read from it.
#[derive(Debug, Clone)]
pub struct Probe {
    pub raw: RawOutput,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Bytes of stdout past `max_output_bytes`, dropped.
    pub stdout_dropped: u64,
    pub parsed: Parsed,
}

pub struct CliBackend {
    def: BackendDef,
    program: PathBuf,
    limiter: Option<crate::backend::ratelimit::Limiter>,
}

impl CliBackend {
    /// Checks that the command exists (through `PATH` unless it is a path) before any turn.
    pub fn new(def: BackendDef) -> Result<Self, Error> {
        let program = resolve_command(&def)?;
        let limiter =
            crate::backend::ratelimit::Limiter::new(def.requests_per_minute, def.tokens_per_minute);
        Ok(CliBackend {
            def,
            program,
            limiter,
        })
    }

    /// The command line this backend runs, for messages.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// Runs the CLI once and parses what it printed, without judging the outcome: what
    /// `agent-loop doctor` shows.
    pub async fn probe(&self, request: Request<'_>, emit: &mut Emit<'_>) -> Result<Probe, Error> {
        let finished = self.execute(request, emit, None).await?;
        let stdout = self.def.render.text(finished.stdout.bytes());
        let stderr = self.def.render.text(finished.stderr.bytes());
        let parsed = self.def.parsers.parse(&stdout, &stderr);
        Ok(Probe {
            exit_code: finished.exit_code(),
            timed_out: finished.timed_out,
            stdout_dropped: finished.stdout.dropped(),
            raw: RawOutput {
                stdout_dropped: finished.stdout.dropped(),
                stderr_dropped: finished.stderr.dropped(),
                stdout: finished.stdout.into_bytes(),
                stderr: finished.stderr.into_bytes(),
                ..RawOutput::default()
            },
            stdout,
            stderr,
            parsed,
        })
    }

    /// Runs the CLI once, reporting its output as it comes, and the answer's pieces with
    /// `json_text_delta` (`streamed`); what it printed is then parsed by the caller.
    async fn execute(
        &self,
        request: Request<'_>,
        emit: &mut Emit<'_>,
        mut streamed: Option<&mut Streamed>,
    ) -> Result<process::Finished, Error> {
        let def = &self.def;
        let prompt = render_prompt(request.window, request.tools, &def.style, request.cwd);
        if let Some(limiter) = &self.limiter {
            let tokens = crate::backend::ratelimit::estimate_tokens(prompt.len());
            crate::backend::ratelimit::wait_turn(limiter, tokens, &def.name, emit).await;
        }
        // Kept alive until the child is done; removed when dropped. Honours TMPDIR.
        let prompt_file = match def.prompt_via {
            PromptVia::File => {
                let file = tempfile::Builder::new()
                    .prefix("agent-loop-prompt-")
                    .suffix(".txt")
                    .tempfile()
                    .and_then(|mut f| {
                        std::io::Write::write_all(&mut f, prompt.as_bytes())?;
                        Ok(f)
                    })
                    .map_err(|source| BackendError::PromptFile {
                        backend: def.name.clone(),
                        source,
                    })?;
                Some(file)
            }
            _ => None,
        };
        let file_arg = prompt_file.as_ref().map(|f| f.path().display().to_string());
        let args = def.expand_args(&prompt, file_arg.as_deref(), request.cwd)?;
        // In `loop` mode its guard, whatever the approval: agent-loop runs the tools there.
        let guard = def.guard.as_ref().filter(|_| !def.style.own_tools);
        let dir = match &def.cwd {
            Some(dir) => request.cwd.join(dir),
            None => request.cwd.to_path_buf(),
        };
        if let Some(found) = crate::backend::guard::refused(guard, &dir) {
            // In `loop` mode its guard stands under --yes too.
            let why = crate::backend::guard::refusal(&found, false);
            return Err(self.spawn_error(std::io::Error::other(why)));
        }
        // Kept alive, as the prompt file, until the child is done.
        let start =
            crate::backend::guard::start(guard, args, &def.env, &[], &dir).map_err(|e| {
                self.spawn_error(std::io::Error::other(format!(
                    "cannot set up its guard: {e}"
                )))
            })?;
        let spec = Spec {
            program: self.program.clone(),
            args: start.args.clone(),
            env: start.env.clone(),
            // A backend needs its own keys.
            env_remove: Vec::new(),
            cwd: Some(dir),
            stdin: (def.prompt_via == PromptVia::Stdin).then(|| prompt.clone().into_bytes()),
            timeout: def.timeout,
            cap: def.max_output_bytes,
            // A stream's lines are kept below, but those taken as pieces of its answer.
            keep_stdout: streamed.is_none(),
            // Claude Code drops what its pipe could not take when it exits: stdout is read
            // whatever the display or a slow `--output jsonl` reader does meanwhile.
            read_ahead: true,
            tick: Some(def.progress_every),
        };
        let mut kept = Kept::new(def.max_output_bytes);
        let name = def.name.clone();
        // A stream's lines are read whole up to the cap (one pending at most), so that one
        // longer than a read (Gemini CLI repeats the whole prompt on its second line) is still
        // told from a piece.
        let mut out_lines = match streamed {
            Some(_) => LineSplitter::with_limit(def.max_output_bytes),
            None => LineSplitter::default(),
        };
        let mut err_lines = LineSplitter::default();
        let line_event = |stream: OutputStream, line: &[u8]| Event::BackendOutput {
            backend: name.clone(),
            stream,
            line: def.render.text(line),
        };
        // The CLI's own tool activity is reported as it happens (`tools = "own"`).
        let mut last_activity = None;
        let stdout = match streamed {
            Some(_) => OutputStream::StreamedStdout,
            None => OutputStream::Stdout,
        };
        // The bytes of the lines taken as pieces that were reported as lines (--verbose,
        // --tail): up to the cap, as the lines kept are.
        let mut piece_lines = 0;
        // In `loop` mode, the tools of its own it lists: its process group is killed at once.
        let (watch, stop) = (offered::watched(def), tokio::sync::Notify::new());
        let offered = std::sync::OnceLock::new();
        let mut stdout_line = |line: &[u8], ended: bool, emit: &mut Emit<'_>| {
            if watch && offered.get().is_none() {
                let tools = def.parsers.json.offered_in_line(line);
                if !tools.is_empty() && offered.set(tools).is_ok() {
                    stop.notify_one();
                }
            }
            // A piece of the answer is shown, not kept: the answer's own line says it again.
            // Past the room for pieces and the cap, a flood's line costs a copy at most.
            let mut text = None;
            let taken = match streamed.as_mut() {
                // A line longer than the cap comes in parts: no piece, and dropped whole
                // (kept.rs), so nothing of it comes after the pieces taken.
                Some(_) if !ended && line.len() > def.max_output_bytes => None,
                Some(s) if s.has_room() => {
                    let piece = def.parsers.json.delta(text.insert(def.render.text(line)));
                    piece.filter(|p| s.room_for(p)).map(|p| s.push(&p))
                }
                _ => None,
            };
            // Past the cap a line is only kept, as `process::run` does: no events.
            let reaches_text = |l: &[u8]| def.parsers.json.may_hold_text(l);
            if taken.is_none() && streamed.is_some() && !kept.push(line, ended, &reaches_text) {
                return;
            }
            let report = taken.is_none() || piece_lines + line.len() <= def.max_output_bytes;
            if taken.is_some() && report {
                piece_lines += line.len();
            }
            let text = text.unwrap_or_else(|| def.render.text(line));
            let activity = def.parsers.activity_line(&text);
            if report {
                emit(Event::BackendOutput {
                    backend: name.clone(),
                    stream: stdout,
                    line: text,
                });
            }
            if let Some(text) = taken.flatten() {
                emit(Event::TextDelta {
                    backend: name.clone(),
                    text,
                });
            }
            if let Some(activity) = activity.filter(|a| last_activity.as_ref() != Some(a)) {
                last_activity = Some(activity.clone());
                emit(Event::OwnTool {
                    backend: name.clone(),
                    activity,
                    call_id: None,
                });
            }
        };
        let finished = {
            let mut progress = |p: Progress| match p {
                // The patterns are compiled while the CLI runs, not after it printed.
                Progress::Started => def.parsers.warm(),
                Progress::Stdout(chunk) => {
                    out_lines.push_ends(chunk, &mut |l, ended| stdout_line(l, ended, emit))
                }
                Progress::Stderr(chunk) => {
                    err_lines.push(chunk, &mut |l| emit(line_event(OutputStream::Stderr, l)))
                }
                Progress::Tick(elapsed) => emit(Event::Waiting {
                    backend: name.clone(),
                    elapsed_s: elapsed.as_secs(),
                }),
            };
            // Dropping the run kills the CLI's process group.
            tokio::select! {
                finished = process::run(&spec, &mut progress) => Some(finished),
                _ = stop.notified() => None,
            }
        };
        if let Some(tools) = offered.get() {
            return Err(offered::error(def, tools, finished.is_none()));
        }
        let mut finished = finished
            .expect("stopped only once it offered tools")
            .map_err(|e| self.spawn_error(e))?;
        out_lines.finish(&mut |l| stdout_line(l, false, emit));
        if let Some(s) = streamed.as_mut().filter(|_| kept.text_dropped()) {
            s.text_dropped();
        }
        if !spec.keep_stdout {
            finished.stdout = kept.into_capture();
        }
        err_lines.finish(&mut |l| emit(line_event(OutputStream::Stderr, l)));
        drop(prompt_file);
        drop(start);
        Ok(finished)
    }

    /// One model step, tried again when a failed run's output matches `retry_regex`: after
    /// the wait its output asks for ("try again in 20s"), if any and under `retry_max_s`,
    /// else after a backoff with jitter, as HTTP backends do.
    async fn run(&self, request: Request<'_>, emit: &mut Emit<'_>) -> Result<Reply, Error> {
        let settings = self.def.retry;
        let mut tries = 0;
        loop {
            tries += 1;
            let (error, retry, shown) = match self.run_once(request, emit).await {
                Ok(reply) => return Ok(reply),
                Err(Failed {
                    error,
                    retry,
                    shown,
                }) => (error, retry, shown),
            };
            let Some((reason, asked)) = retry else {
                if tries == 1 {
                    return Err(error);
                }
                let message = with_note(&error.message, &format!("after {tries} tries"));
                return Err(Error::caused(error.kind, message, error));
            };
            let gave_up = match retry::plan(&settings, tries, asked) {
                // A run that showed pieces of its answer is not run again: they cannot be
                // taken back, and the next run's would follow them (an HTTP backend retries
                // only before its stream starts).
                Plan::Wait(_) if shown => "not run again: part of its answer was shown".into(),
                Plan::Wait(wait) => {
                    emit(Event::Retrying {
                        backend: self.def.name.clone(),
                        retry: tries,
                        retries: settings.retries,
                        wait_ms: wait.as_millis() as u64,
                        reason,
                    });
                    tokio::time::sleep(wait).await;
                    continue;
                }
                Plan::OutOfTries if tries > 1 => format!("gave up after {tries} tries"),
                Plan::OutOfTries => return Err(error),
                Plan::TooLong(why) => why,
            };
            let message = with_note(&error.message, &gave_up);
            return Err(Error::caused(error.kind, message, error));
        }
    }

    /// Whether a failed run is worth another: its stdout or stderr matches `retry_regex`.
    /// The reason to show, and the wait its output asks for.
    fn retry_reason(
        &self,
        stdout: &str,
        stderr: &str,
    ) -> Option<(String, Option<std::time::Duration>)> {
        let re = self.def.retry_regex.as_ref()?;
        let stdout = &*self.def.parsers.error_report(stdout);
        let found = [stderr, stdout]
            .into_iter()
            .find_map(|text| re.find_all(text).next().map(|r| text[r].trim().to_string()))?;
        let mut reason: String = found.chars().take(80).collect();
        if reason.is_empty() {
            reason = "a retry_regex match".into();
        }
        let asked = retry::hinted_wait(stderr).or_else(|| retry::hinted_wait(stdout));
        Some((format!("\"{reason}\""), asked))
    }

    /// One run of the CLI: the reply, or why it failed and whether to try again. The output
    /// is taken, not copied, from the capture to the reply's raw record, and the stripped
    /// stdout becomes the answer in place: about twice the output is held, the raw and the
    /// stripped.
    async fn run_once(&self, request: Request<'_>, emit: &mut Emit<'_>) -> Result<Reply, Failed> {
        let def = &self.def;
        let mut streamed = def
            .parsers
            .json
            .text_delta
            .as_ref()
            .and_then(|_| Streamed::new(&def.style, def.max_output_bytes))
            .map(|s| match def.parsers.json.text {
                Some(_) => s,
                None => s.keeping_pieces(),
            });
        let result = self.run_streamed(request, emit, &mut streamed).await;
        result.map_err(|mut failed| {
            failed.shown = streamed.as_ref().is_some_and(Streamed::shown_any);
            failed
        })
    }

    async fn run_streamed(
        &self,
        request: Request<'_>,
        emit: &mut Emit<'_>,
        streamed: &mut Option<Streamed>,
    ) -> Result<Reply, Failed> {
        let def = &self.def;
        let finished = self.execute(request, emit, streamed.as_mut()).await?;
        let stderr = def.render.text(finished.stderr.bytes());
        if finished.timed_out {
            return Err(Failed::from(BackendError::TimedOut {
                backend: def.name.clone(),
                secs: def.timeout.as_secs(),
                at: def.defined_at.clone(),
                tail: quote_tail("stderr", &stderr),
            }));
        }
        let stdout = def.render.text(finished.stdout.bytes());
        let code = finished.exit_code().unwrap_or(-1);
        // A failed run has no answer, but its stdout may be quoted, and `retry_regex` reads
        // it; else the answer is parsed out of it in place.
        let pieces = streamed.as_mut().and_then(Streamed::take_pieces);
        let (mut parsed, kept_stdout) = match pieces {
            Some(pieces) => (
                def.parsers.parse_pieces(pieces, &stdout, &stderr),
                Some(stdout),
            ),
            None if code == 0 && def.retry_regex.is_none() => {
                (def.parsers.parse_owned(stdout, &stderr), None)
            }
            None => (def.parsers.parse(&stdout, &stderr), Some(stdout)),
        };
        if !parsed.offered_tools.is_empty() {
            return Err(offered::error(def, &parsed.offered_tools, false).into());
        }
        if let Some(message) = parsed.error.take() {
            let retry = self.retry_reason(kept_stdout.as_deref().unwrap_or(&message), &stderr);
            return Err(Failed {
                error: BackendError::Reported {
                    backend: def.name.clone(),
                    message,
                }
                .into(),
                retry,
                shown: false,
            });
        }
        if let Some(stdout) = kept_stdout.filter(|_| code != 0) {
            let (label, text) = if stderr.trim().is_empty() {
                ("stdout", &stdout)
            } else {
                ("stderr", &stderr)
            };
            return Err(Failed {
                error: BackendError::Exited {
                    backend: def.name.clone(),
                    program: self.program.clone(),
                    status: code,
                    tail: quote_tail(label, text),
                }
                .into(),
                retry: self.retry_reason(&stdout, &stderr),
                shown: false,
            });
        }
        if parsed.text.is_empty() && parsed.calls.is_empty() && finished.stdout.dropped() > 0 {
            return Err(Failed::from(BackendError::AnswerCut {
                backend: def.name.clone(),
                cap: def.max_output_bytes,
                at: def.defined_at.clone(),
                tail: quote_tail("stderr", &stderr),
            }));
        }
        if parsed.text.is_empty() && parsed.calls.is_empty() {
            return Err(Failed::from(BackendError::NoAnswer {
                backend: def.name.clone(),
                tail: quote_tail("stderr", &stderr),
            }));
        }
        let dropped = finished.stdout.dropped();
        let cut = (dropped > 0).then(|| {
            format!(
                "{} dropped past max_output_bytes ({})",
                crate::plural::count(dropped, "byte was", "bytes were"),
                def.max_output_bytes
            )
        });
        // A stream's answer read from its own line (the last, kept past the cap: Claude
        // Code's result) is whole: what was dropped (its own tools' results, a flood) is said
        // beside it, not in it, where the model would read it in every later turn.
        let answer_whole =
            def.parsers.json.text.is_some() && streamed.as_ref().is_some_and(|s| !s.lost_text());
        if let Some(cut) = cut.as_ref().filter(|_| !answer_whole) {
            parsed.text.push_str(&format!("\n[output cut: {cut}]"));
        }
        // What was shown piece by piece is not shown again: the rest of the answer, if any.
        let clean = |text: &str| def.parsers.clean(text);
        if let Some(rest) = streamed.as_ref().and_then(|s| s.rest(&parsed.text, &clean)) {
            emit(Event::TextDelta {
                backend: def.name.clone(),
                text: rest.into_owned(),
            });
        }
        if let Some(cut) = cut.filter(|_| answer_whole) {
            emit(Event::Notice {
                message: format!(
                    "backend `{}`: {cut}; its last line, the answer, kept",
                    def.name
                ),
            });
        }
        let mut raw = RawOutput {
            stdout_dropped: finished.stdout.dropped(),
            stderr_dropped: finished.stderr.dropped(),
            stdout: finished.stdout.into_bytes(),
            stderr: finished.stderr.into_bytes(),
            ..RawOutput::default()
        };
        // A text answer is the output itself, so the log need not hold it twice; a JSON
        // backend's answer is a small extract, and its events stay in the raw record whole.
        if def.parsers.output == OutputFormat::Text {
            raw.share_cap(parsed.text.len(), def.max_output_bytes);
        }
        Ok(Reply {
            text: parsed.text,
            calls: parsed.calls,
            usage: parsed.usage.map(|u| u.priced(def.prices)),
            raw: Some(raw),
            ran: Vec::new(),
        })
    }

    fn spawn_error(&self, source: std::io::Error) -> Error {
        let (backend, program) = (self.def.name.clone(), self.program.clone());
        if source.raw_os_error() == Some(libc::E2BIG) {
            BackendError::PromptTooLong {
                backend,
                program,
                source,
            }
            .into()
        } else {
            let source = crate::process::explained(&program, source);
            BackendError::Spawn {
                backend,
                program,
                source,
            }
            .into()
        }
    }
}

impl Backend for CliBackend {
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
}

/// A run that gave no reply: why, and, when another try may help, the reason to show and
/// the wait the output asked for.
struct Failed {
    error: Error,
    retry: Option<(String, Option<std::time::Duration>)>,
    /// Pieces of its answer were shown (`json_text_delta`).
    shown: bool,
}

impl<E: Into<Error>> From<E> for Failed {
    fn from(error: E) -> Self {
        Failed {
            error: error.into(),
            retry: None,
            shown: false,
        }
    }
}

/// `{self}` is this executable; a name without `/` is looked up on `PATH`.
fn resolve_command(def: &BackendDef) -> Result<PathBuf, BackendError> {
    if def.command == "{self}" {
        return super::own_program::resolve(&def.name, std::env::var_os("PATH").as_deref());
    }
    if def.command.contains('/') {
        return Ok(PathBuf::from(&def.command));
    }
    which::which(&def.command).map_err(|source| BackendError::NotOnPath {
        backend: def.name.clone(),
        command: def.command.clone(),
        at: def.defined_at.clone(),
        source,
    })
}

/// The last lines of a stream, for an error message; empty when there is nothing to quote.
fn quote_tail(label: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(ERROR_TAIL_LINES)..];
    format!("; its {label} ended with:\n{}", tail.join("\n"))
}
