//! The context manager the agent keeps beside its conversation: it plans each request (mode,
//! budget, summary), calibrates the token estimate from reported counts, cuts long tool
//! results into artifacts, and carries the memory file.

use std::path::Path;

use super::budget::{self, Limits, Plan};
use super::memory::{self, Memory};
use super::summarize::{summarize, summary_range};
use super::tokens::{preamble_bytes, Calibration};
use super::truncate::fit_tool_output;
use super::{Artifacts, ContextMode, ContextSettings, ContextStats, Conversation, Summary};
use crate::backend::{Backend, Emit};
use crate::event::Event;
use crate::parse::Usage;
use crate::tools::ToolSpec;
use crate::Error;

/// Bytes of the memory section's heading and framing in the preamble.
const MEMORY_OVERHEAD: usize = 96;

pub struct ContextManager {
    settings: ContextSettings,
    calibration: Calibration,
    artifacts: Artifacts,
    memory: Option<Memory>,
    /// Instructions and tool descriptions: fixed for the agent's life.
    preamble_bytes: usize,
    /// The first message kept by the last trim.
    hint: usize,
    /// The plan of the last request, for the per-turn metrics.
    last: Option<Plan>,
}

impl ContextManager {
    /// Cut tool outputs go to this folder from now on (the session changed).
    pub fn set_artifacts(&mut self, artifacts: Artifacts) {
        self.artifacts = artifacts;
    }

    pub fn new(settings: ContextSettings, artifacts: Artifacts, tools: &[ToolSpec]) -> Self {
        ContextManager {
            settings,
            calibration: Calibration::default(),
            artifacts,
            memory: None,
            preamble_bytes: preamble_bytes(tools),
            hint: 0,
            last: None,
        }
    }

    /// `/context MODE` in the REPL.
    pub fn set_mode(&mut self, mode: ContextMode) {
        self.settings.mode = mode;
        self.hint = 0;
    }

    pub fn settings(&self) -> &ContextSettings {
        &self.settings
    }

    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    pub fn memory(&self) -> Option<&Memory> {
        self.memory.as_ref()
    }

    /// Reads the memory file of `cwd` again (it may have changed since the last turn).
    pub fn reload_memory(&mut self, cwd: &Path) -> Result<(), Error> {
        let loaded = memory::load(cwd);
        self.memory = loaded.as_ref().ok().cloned().flatten();
        loaded.map(|_| ())
    }

    /// Forgets the trim point and the last plan (with the conversation's `clear`).
    pub fn clear(&mut self) {
        self.hint = 0;
        self.last = None;
    }

    fn limits(&self, backend: &str) -> Limits {
        Limits {
            mode: self.settings.mode,
            max_tokens: self.settings.max_tokens,
            bytes_per_token: self.calibration.bytes_per_token(backend),
            fixed_bytes: self.preamble_bytes
                + self
                    .memory
                    .as_ref()
                    .map_or(0, |m| MEMORY_OVERHEAD + m.text.len()),
            hint: self.hint,
        }
    }

    /// What the next request to `backend` would carry, changing nothing (for `/tokens`).
    pub fn plan(&self, conversation: &Conversation, backend: &str) -> Result<Plan, Error> {
        budget::plan(conversation, &self.limits(backend))
            .map_err(|e| Error::new(e.kind, format!("backend `{backend}`: {}", e.message)))
    }

    /// The metrics of the next request to `backend`, as [`plan`](Self::plan) sees it.
    pub fn stats(&self, conversation: &Conversation, backend: &str) -> Result<ContextStats, Error> {
        self.plan(conversation, backend)
            .map(|p| ContextStats::from_plan(&p))
    }

    /// Plans the next request. In `summarize` mode, when the history passes the budget, the
    /// backend is asked to summarise the older part first; if that fails, the older part is
    /// trimmed and an event says so.
    pub async fn prepare(
        &mut self,
        conversation: &mut Conversation,
        backend: &dyn Backend,
        cwd: &Path,
        emit: &mut Emit<'_>,
    ) -> Result<Plan, Error> {
        let name = backend.name().to_string();
        let mut plan = self.plan(conversation, &name)?;
        if self.settings.mode == ContextMode::Summarize && plan.trimmed {
            if let Some(range) = summary_range(conversation, &self.limits(&name)) {
                let max = self.settings.max_tokens;
                match summarize(backend, conversation, range, max, cwd, emit).await {
                    Ok(text) => {
                        conversation.set_summary(Summary {
                            text,
                            upto: range.1,
                        });
                        emit(Event::Summarized {
                            backend: name.clone(),
                            messages: range.1 - range.0,
                        });
                        plan = self.plan(conversation, &name)?;
                    }
                    Err(e) => {
                        let n = range.1 - range.0;
                        emit(Event::ContextNotice {
                            message: format!(
                                "could not summarise {n} older message{} ({}); the oldest \
                                 messages were dropped instead",
                                if n == 1 { "" } else { "s" },
                                e.message
                            ),
                        })
                    }
                }
            }
        }
        if plan.trimmed {
            self.hint = plan.hint();
        }
        self.last = Some(plan);
        Ok(plan)
    }

    /// A backend reported the usage of a request made from `plan`: its input count corrects
    /// the bytes-per-token ratio of that backend.
    pub fn observe_usage(&mut self, backend: &str, plan: &Plan, usage: &Usage) {
        if let Some(input) = usage.input {
            self.calibration.observe(backend, plan.bytes, input);
        }
    }

    /// The metrics of the last request, once (the display shows them once per turn).
    pub fn take_last_stats(&mut self) -> Option<ContextStats> {
        self.last.take().map(|p| ContextStats::from_plan(&p))
    }

    /// The tool output as it goes into the context: cut past `tool_result_max_chars`, the
    /// full text saved as an artifact.
    pub fn fit_tool_output(&self, call_id: &str, tool: &str, output: String) -> String {
        fit_tool_output(output, self.settings.tool_result_max_chars, |full| {
            self.artifacts.save(call_id, tool, full)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use super::*;
    use crate::backend::{Reply, Request};
    use crate::context::testing::chat;
    use crate::context::{render_prompt, ContextFormat, PromptStyle, Window};
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
        let plan = m
            .prepare(c, backend, Path::new("/w"), &mut emit)
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
