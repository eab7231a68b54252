//! `summarize` mode, the agent's part: planning a request may need one extra backend call
//! that summarises the older messages (`context::summarize` decides which, and how to ask).
//! When that call fails, the older part is trimmed instead and an event says so.
//! The call is the agent's own business, not an answer: its streamed text never reaches the
//! observer (a display would print it as the answer, `--output jsonl` would make it
//! `assistant_delta`), but what it cost does, counted like any other call.

use std::path::Path;

use super::error::AgentError;
use crate::backend::{Backend, Emit, Request};
use crate::context::budget::Plan;
use crate::context::conversation::{Conversation, Message, Summary};
use crate::context::manager::ContextManager;
use crate::context::summarize::instruction;
use crate::context::window::Window;
use crate::event::{CallPurpose, Event, OutputStream};
use crate::parse::{ByBackend, Totals};
use crate::Error;

/// Where a summary call's tokens and cost are added up: the agent's totals, and its split by
/// backend.
pub struct Counts<'a> {
    pub totals: &'a mut Totals,
    pub by_backend: &'a mut ByBackend,
}

/// Plans the next request to `backend`, having the older part summarised first when the
/// context mode asks for it.
pub async fn prepare(
    context: &mut ContextManager,
    conversation: &mut Conversation,
    backend: &dyn Backend,
    cwd: &Path,
    counts: Counts<'_>,
    emit: &mut Emit<'_>,
) -> Result<Plan, Error> {
    let name = backend.name().to_string();
    let (mut plan, range) = context.plan_next(conversation, &name)?;
    // An agent that keeps its own conversation is sent the newest message (or, in a new
    // session of its own, the window as planned): a summary request would land in its
    // history, and in a new session take the place of the conversation.
    if let Some(range) = range.filter(|_| !backend.keeps_conversation()) {
        let max = context.settings().max_tokens;
        match summarize(backend, conversation, range, max, cwd, counts, emit).await {
            Ok(text) => {
                conversation.set_summary(Summary {
                    text,
                    upto: range.1,
                });
                plan = context.plan(conversation, &name)?;
            }
            Err(e) => {
                let n = range.1 - range.0;
                emit(Event::ContextNotice {
                    message: format!(
                        "could not summarise {} ({}); the oldest messages were dropped \
                         instead",
                        crate::plural::count(n, "older message", "older messages"),
                        e.message
                    ),
                })
            }
        }
    }
    Ok(context.planned(plan))
}

impl super::Agent {
    /// Summarises everything before the last turn now (`/compact`) and sends the summary in
    /// its place from then on (context mode `summarize`). Returns how many messages it
    /// covers; 0 when there is nothing before the last turn.
    pub async fn compact(&mut self, obs: &mut dyn crate::event::Observer) -> Result<usize, Error> {
        let messages = &self.conversation.messages;
        let cut = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .unwrap_or(0);
        let from = self.conversation.summary().map_or(0, |s| s.upto.min(cut));
        if cut <= from {
            return Ok(0);
        }
        let max = self.context.settings().max_tokens;
        let cwd = self.options().cwd.clone();
        let text = {
            let mut emit = |e: Event| obs.event(&e);
            let counts = Counts {
                totals: &mut self.totals,
                by_backend: &mut self.by_backend,
            };
            summarize(
                &*self.backend,
                &self.conversation,
                (from, cut),
                max,
                &cwd,
                counts,
                &mut emit,
            )
            .await?
        };
        self.conversation.set_summary(Summary { text, upto: cut });
        self.context
            .set_mode(crate::context::ContextMode::Summarize);
        Ok(cut - from)
    }
}

/// Asks `backend` to summarise messages `from..cut` (after the previous summary, if any).
/// Emits [`Event::Summarized`] when it did, then the call's [`Event::Usage`] (also when the
/// summary came back empty: the call was made), and adds that usage to `counts`.
pub async fn summarize(
    backend: &dyn Backend,
    conversation: &Conversation,
    (from, cut): (usize, usize),
    max_tokens: u64,
    cwd: &Path,
    counts: Counts<'_>,
    emit: &mut Emit<'_>,
) -> Result<String, Error> {
    let ask = Message::user(instruction(max_tokens));
    let base = conversation.summary().map_or(0, |s| s.upto.min(from));
    let mut messages: Vec<&Message> = conversation.messages[from..cut].iter().collect();
    messages.push(&ask);
    let window = Window {
        memory: None,
        system: None,
        skills: None,
        summary: conversation
            .summary()
            .filter(|s| s.upto <= from)
            .map(|s| s.text.as_str()),
        omitted: from - base,
        messages,
    };
    let request = Request {
        window: &window,
        tools: &[],
        cwd,
    };
    let started = std::time::Instant::now();
    let reply = {
        let mut progress = |e: Event| {
            if is_progress(&e) {
                emit(e)
            }
        };
        backend.call(request, &mut progress).await?
    };
    let latency_ms = started.elapsed().as_millis() as u64;
    let text = reply.text.trim();
    let name = backend.name().to_string();
    if !text.is_empty() {
        emit(Event::Summarized {
            backend: name.clone(),
            messages: cut - from,
        });
    }
    let split = counts.by_backend.entry(name.clone()).or_default();
    if let Some(usage) = reply.usage {
        counts.totals.add(&usage);
        split.add(&usage);
        emit(Event::Usage {
            backend: name,
            usage,
            latency_ms,
            purpose: CallPurpose::Summary,
        });
    } else {
        counts.totals.add_uncounted();
        split.add_uncounted();
    }
    if text.is_empty() {
        return Err(AgentError::NoSummary.into());
    }
    Ok(text.to_string())
}

/// Whether an event of the summary call reaches the observer: what tells the user it is
/// waiting, retrying or failing does; the model's text, thinking, plan and stdout (records
/// `assistant_delta` in `--output jsonl` and the log) do not, as they are no answer.
fn is_progress(event: &Event) -> bool {
    match event {
        Event::BackendOutput { stream, .. } => {
            matches!(stream, OutputStream::Stderr | OutputStream::Screen)
        }
        Event::Waiting { .. }
        | Event::RateLimitWait { .. }
        | Event::Retrying { .. }
        | Event::Notice { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use super::*;
    use crate::backend::Reply;
    use crate::context::testing::chat;
    use crate::context::{
        render_prompt, Artifacts, ContextFormat, ContextMode, ContextSettings, PromptStyle,
    };
    use crate::parse::Usage;
    use crate::BoxFuture;

    /// A backend that answers from a list and keeps the plain prompts it was sent.
    struct Scripted {
        replies: Mutex<VecDeque<Result<Reply, Error>>>,
        prompts: Mutex<Vec<String>>,
    }

    impl Scripted {
        fn new(replies: Vec<Result<Reply, Error>>) -> Self {
            Scripted {
                replies: Mutex::new(replies.into()),
                prompts: Mutex::new(Vec::new()),
            }
        }
    }

    impl Backend for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }

        fn call<'a>(
            &'a self,
            request: Request<'a>,
            _emit: &'a mut Emit<'_>,
        ) -> BoxFuture<'a, Result<Reply, Error>> {
            let style = PromptStyle {
                tool_call_format: "<tool_call>{json}</tool_call>".into(),
                format: ContextFormat::Plain,
                own_tools: false,
            };
            let prompt = render_prompt(request.window, request.tools, &style, request.cwd);
            self.prompts.lock().unwrap().push(prompt);
            let reply = self.replies.lock().unwrap().pop_front().expect("a reply");
            Box::pin(async move { reply })
        }
    }

    fn manager(mode: ContextMode, max_tokens: u64, artifacts: &Path) -> ContextManager {
        let settings = ContextSettings {
            mode,
            max_tokens,
            tool_result_max_chars: 100,
        };
        ContextManager::new(settings, Artifacts::new(artifacts), &[])
    }

    fn text_reply(text: &str) -> Result<Reply, Error> {
        Ok(Reply {
            text: text.into(),
            ..Reply::default()
        })
    }

    async fn prepare(
        m: &mut ContextManager,
        c: &mut Conversation,
        backend: &Scripted,
    ) -> (Plan, Vec<Event>) {
        let mut events = Vec::new();
        let mut emit = |e: Event| events.push(e);
        let (mut totals, mut by_backend) = (Totals::default(), ByBackend::new());
        let counts = Counts {
            totals: &mut totals,
            by_backend: &mut by_backend,
        };
        let plan = super::prepare(m, c, backend, Path::new("/w"), counts, &mut emit)
            .await
            .unwrap();
        (plan, events)
    }

    #[tokio::test]
    async fn summarize_replaces_the_older_part_with_the_backends_summary() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = manager(ContextMode::Summarize, 2_000, tmp.path());
        let mut c = chat(10);
        let backend = Scripted::new(vec![text_reply("  The user asked ten things.  ")]);
        let (plan, events) = prepare(&mut m, &mut c, &backend).await;
        assert_eq!(
            events,
            vec![Event::Summarized {
                backend: "scripted".into(),
                messages: 10
            }]
        );
        assert_eq!(
            c.summary(),
            Some(&Summary {
                text: "The user asked ten things.".into(),
                upto: 10
            })
        );
        assert!(plan.summary && !plan.trimmed);
        assert_eq!((plan.start, plan.end), (10, 21));
        // The summarisation request: no tools, the older messages, then the instruction.
        let prompts = backend.prompts.lock().unwrap();
        let asked = &prompts[0];
        assert!(asked.contains("No tools are available"), "{asked}");
        assert!(asked.contains("\nUser: 0 xxx"), "{asked}");
        assert!(asked.contains("\nUser: 4 xxx"), "{asked}");
        assert!(!asked.contains("\nUser: 5 xxx"), "{asked}");
        assert!(asked.ends_with("call no tool.\n\nAssistant:"), "{asked}");
        // The next request carries the summary and the newest messages.
        let window = Window::planned(&c, &plan, None);
        assert_eq!(window.summary, Some("The user asked ten things."));
        assert_eq!(window.messages.len(), 11);
    }

    #[tokio::test]
    async fn a_failed_summary_falls_back_to_trimming_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = manager(ContextMode::Summarize, 2_000, tmp.path());
        let mut c = chat(10);
        let backend = Scripted::new(vec![Err(Error::backend("exit status 1"))]);
        let (plan, events) = prepare(&mut m, &mut c, &backend).await;
        assert_eq!(
            events,
            vec![Event::ContextNotice {
                message: "could not summarise 10 older messages (exit status 1); the oldest \
                          messages were dropped instead"
                    .into()
            }]
        );
        assert!(c.summary().is_none());
        assert!(plan.trimmed && !plan.summary);
        assert!(plan.tokens <= 2_000 * 3 / 4, "{plan:?}");
        // The trim point is kept for the next request.
        assert_eq!(m.plan(&c, "scripted").unwrap().start, plan.start);
    }

    #[tokio::test]
    async fn under_the_budget_nothing_is_summarised() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = manager(ContextMode::Summarize, 100_000, tmp.path());
        let mut c = chat(10);
        let backend = Scripted::new(vec![]);
        let (plan, events) = prepare(&mut m, &mut c, &backend).await;
        assert!(events.is_empty());
        assert_eq!((plan.start, plan.messages()), (0, 21));
        assert_eq!(plan.tokens, 160 + 20 * 104 + 5);
        assert_eq!(
            m.take_last_stats().unwrap().to_string(),
            "21 messages, 2.2k tokens, 2% of 100k"
        );
        assert_eq!(m.take_last_stats(), None);
    }

    #[tokio::test]
    async fn reported_input_tokens_calibrate_the_estimate() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = manager(ContextMode::Continue, 100_000, tmp.path());
        let mut c = chat(10);
        let backend = Scripted::new(vec![]);
        let (plan, _) = prepare(&mut m, &mut c, &backend).await;
        let before = plan.tokens;
        // The backend counted a third more tokens than estimated: 3 bytes per token.
        let usage = Usage {
            input: Some((plan.bytes / 3) as u64),
            ..Usage::default()
        };
        m.observe_usage("scripted", &plan, &usage);
        assert!((m.calibration().bytes_per_token("scripted") - 3.0).abs() < 0.01);
        let after = m.plan(&c, "scripted").unwrap().tokens;
        assert!(
            after > before * 13 / 10 && after < before * 14 / 10,
            "{before} -> {after}"
        );
        // A reply without an input count changes nothing.
        m.observe_usage("scripted", &plan, &Usage::default());
        assert_eq!(m.plan(&c, "scripted").unwrap().tokens, after);
    }

    #[test]
    fn long_tool_output_is_cut_and_saved_as_an_artifact() {
        let tmp = tempfile::tempdir().unwrap();
        let m = manager(
            ContextMode::Continue,
            100_000,
            &tmp.path().join("s/artifacts"),
        );
        let full: String = (1..=50).map(|i| format!("line {i:03}\n")).collect();
        let cut = m.fit_tool_output("call_7", "bash", full.clone());
        let path = tmp.path().join("s/artifacts/call_7-bash.txt");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
        assert!(cut.starts_with("line 001\n"), "{cut}");
        assert!(
            cut.contains(&format!("the full output is saved in {}", path.display())),
            "{cut}"
        );
        assert!(cut.ends_with("line 050\n"), "{cut}");
        assert!(cut.len() < 400, "{cut}");
        // Short output stays as it is and saves nothing.
        assert_eq!(m.fit_tool_output("call_8", "bash", "ok".into()), "ok");
        assert!(!tmp.path().join("s/artifacts/call_8-bash.txt").exists());
    }

    #[test]
    fn the_memory_file_counts_against_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = manager(ContextMode::Continue, 100_000, tmp.path());
        let c = chat(1);
        let without = m.plan(&c, "x").unwrap().tokens;
        std::fs::write(tmp.path().join("AGENTS.md"), "m".repeat(4_000)).unwrap();
        m.reload_memory(tmp.path()).unwrap();
        assert_eq!(m.memory().unwrap().text.len(), 4_000);
        assert!(m.plan(&c, "x").unwrap().tokens >= without + 1_000);
    }
}
