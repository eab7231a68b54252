//! The context manager seen from outside: the prompt a CLI backend receives honours
//! `--context` over the backend's `context` key and its `context_format`; long tool results
//! are cut with an artifact; the memory file reaches the preamble; metrics are shown.

use crate::common::Workspace;

const READ_A: &str =
    "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a.txt\"}}</tool_call>\n";
/// The same call as agent-loop writes it back into the history.
const CALL: &str = "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a.txt\"}}</tool_call>";

/// The conversation part of a prompt.
fn conversation(prompt: &str) -> &str {
    prompt
        .split_once("\n# Conversation\n")
        .unwrap_or_else(|| panic!("no conversation in:\n{prompt}"))
        .1
}

/// A turn of three backend calls: two reads of `a.txt`, then the answer.
fn three_calls(ws: &Workspace) {
    std::fs::write(ws.work().join("a.txt"), "hello\n").unwrap();
    ws.reply(1, format!("First look.\n{READ_A}"));
    ws.reply(2, format!("Again.\n{READ_A}"));
    ws.reply(3, "Done.\n");
}

#[test]
fn context_flag_overrides_the_backend_key_and_the_format_is_honoured() {
    let ws = Workspace::new();
    ws.add_config("context = \"continue\"\ncontext_format = \"xml\"\n");
    three_calls(&ws);
    ws.run(&[
        "--backend",
        "fake",
        "--context",
        "sliding:2",
        "read a.txt twice",
    ])
    .expect_code(0);
    assert_eq!(ws.runs(), 3);
    let result = |id: u32| {
        format!(
            "<message role=\"tool\" name=\"read\" call_id=\"call_{id}\" status=\"ok\">\n     1\thello\n</message>\n"
        )
    };
    // The last two messages are the second call and its result; the task is always kept.
    assert_eq!(
        conversation(&ws.prompt(3)),
        format!(
            "\n(2 earlier messages of this conversation are left out.)\n\n<conversation>\n\
             <message role=\"user\">\nread a.txt twice\n</message>\n\
             <message role=\"assistant\">\nAgain.\n{CALL}\n</message>\n{}\
             </conversation>\n\nWrite the assistant's next reply in plain text, without the XML tags.",
            result(2)
        )
    );

    // Without the flag, the backend's `continue` sends the whole exchange.
    let ws2 = Workspace::new();
    ws2.add_config("context = \"continue\"\ncontext_format = \"xml\"\n");
    three_calls(&ws2);
    ws2.run(&["--backend", "fake", "read a.txt twice"])
        .expect_code(0);
    assert_eq!(
        conversation(&ws2.prompt(3)),
        format!(
            "\n<conversation>\n<message role=\"user\">\nread a.txt twice\n</message>\n\
             <message role=\"assistant\">\nFirst look.\n{CALL}\n</message>\n{}\
             <message role=\"assistant\">\nAgain.\n{CALL}\n</message>\n{}\
             </conversation>\n\nWrite the assistant's next reply in plain text, without the XML tags.",
            result(1),
            result(2)
        )
    );
}

#[test]
fn markdown_format_reaches_the_backend() {
    let ws = Workspace::new();
    ws.add_config("context_format = \"markdown\"\n");
    three_calls(&ws);
    ws.run(&["--backend", "fake", "read a.txt twice"])
        .expect_code(0);
    assert_eq!(
        conversation(&ws.prompt(2)),
        format!(
            "\n## User\n\nread a.txt twice\n\n## Assistant\n\nFirst look.\n\n{CALL}\n\n\
             ## Tool result: read (call_1, ok)\n\n```\n     1\thello\n```\n\n## Assistant\n"
        )
    );
}

#[test]
fn long_tool_result_is_cut_and_saved_and_metrics_are_shown() {
    let ws = Workspace::new();
    ws.add_config("tool_result_max_chars = 60\n");
    let big: String = (1..=200).map(|i| format!("row {i}\n")).collect();
    std::fs::write(ws.work().join("a.txt"), &big).unwrap();
    ws.reply(1, READ_A);
    ws.reply(2, "Read it.\n");
    let run = ws.run(&["--backend", "fake", "read a.txt"]);
    run.expect_code(0);
    let sessions = ws.path("data/agent-loop/sessions");
    let session = std::fs::read_dir(&sessions)
        .expect("a sessions folder")
        .next()
        .expect("one session")
        .unwrap()
        .path();
    let artifact = session.join("artifacts/call_1-read.txt");
    let saved = std::fs::read_to_string(&artifact).expect("the artifact");
    assert!(saved.starts_with("     1\trow 1\n") && saved.ends_with("   200\trow 200"));
    let prompt = ws.prompt(2);
    assert!(
        prompt.contains(&format!(
            "characters cut here (lines 4-199 of 200); the full output is saved in {}",
            artifact.display()
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains("\n   200\trow 200\n</tool_result>"),
        "{prompt}"
    );
    assert!(!prompt.contains("\n   100\trow 100\n"), "{prompt}");
    // One metrics line for the turn, on stderr.
    let stderr = run.stderr();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[context "))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("[context 3 messages, ") && lines[0].ends_with("% of 80k]"),
        "{stderr}"
    );
    assert_eq!(run.stdout(), "Read it.\n");
}

#[test]
fn the_memory_file_is_in_the_preamble() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("AGENTS.md"), "* Answer in French.\n").unwrap();
    ws.reply(1, "Bonjour.\n");
    ws.run(&["--backend", "fake", "hello"]).expect_code(0);
    let prompt = ws.prompt(1);
    assert!(
        prompt.contains(
            "\n# Memory\nNotes kept in AGENTS.md in the working directory; follow them.\n\n* Answer in French.\n\n# Conversation\n"
        ),
        "{prompt}"
    );
}

#[test]
fn a_request_over_the_budget_is_refused_not_sent() {
    let ws = Workspace::new();
    ws.add_config("max_context_tokens = 1000\n");
    let task = "word ".repeat(2_000);
    let run = ws.run(&["--backend", "fake", &task]);
    run.expect_code(2);
    assert_eq!(ws.runs(), 0);
    assert!(
        run.stderr()
            .contains("does not fit in max_context_tokens (1000)"),
        "{}",
        run.stderr()
    );
}

/// Tool results that do not fit even alone with the task stop the turn (exit 3): nothing in
/// the configuration is wrong, the turn cannot go on.
#[test]
fn tool_results_past_the_budget_stop_the_turn_as_it_cannot_go_on() {
    let ws = Workspace::new();
    ws.add_config("max_context_tokens = 1000\ntool_result_max_chars = 20000\n");
    let big: String = (1..=2_000).map(|i| format!("row {i}\n")).collect();
    std::fs::write(ws.work().join("a.txt"), big).unwrap();
    ws.reply(1, READ_A);
    ws.reply(2, "Read it.\n");
    let run = ws.run(&["--backend", "fake", "read a.txt"]);
    run.expect_code(3);
    assert_eq!(ws.runs(), 1);
    let stderr = run.stderr();
    assert!(
        stderr.contains("does not fit in max_context_tokens (1000)")
            && stderr.contains("ask for a task that needs less output at once"),
        "{stderr}"
    );
}

mod across_turns {
    //! Several turns in one conversation, driven through the library with the scripted fake
    //! agent as a CLI backend (the binary runs one turn per process without a terminal).

    use agent_loop::BoxFuture;
    use agent_loop_backends::backend;
    use agent_loop_config::{Config, Source};
    use agent_loop_context::Artifacts;
    use agent_loop_core::agent::{
        Agent, AgentOptions, ApprovalRequest, Decision, Event, Observer, Policy,
    };
    use agent_loop_tools::Root;

    use super::conversation;
    use crate::common::{fixture, Workspace};

    #[derive(Default)]
    struct Events(Vec<Event>);

    impl Observer for Events {
        fn event(&mut self, event: &Event) {
            self.0.push(event.clone());
        }

        fn approve<'a>(&'a mut self, _: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
            Box::pin(async { Decision::Deny("not in this test".into()) })
        }
    }

    /// Runs `tasks` as turns of one conversation on the fake agent with `keys` in its entry.
    fn turns(ws: &Workspace, keys: &str, tasks: &[&str]) -> Vec<Event> {
        let text = format!(
            "[backends.fake]\ncommand = \"{}\"\nenv = {{ FAKE_DIR = \"{}\" }}\n{keys}",
            fixture("agents/scripted.sh").display(),
            ws.path("fake").display()
        );
        let config = Config::from_sources(&[Source {
            name: "test.toml".into(),
            text,
        }])
        .unwrap();
        let def = config.backend("fake").unwrap().clone();
        let options = AgentOptions {
            max_iterations: 3,
            max_tool_calls: 64,
            policy: Policy::default(),
            cwd: ws.work(),
            root: Root::new(&ws.work()).unwrap(),
            context: def.context(),
            artifacts: Artifacts::new(ws.path("data")),
            env: Default::default(),
            web: Default::default(),
        };
        let tools = agent_loop_builtins::registry(Some(&["read".to_string()])).unwrap();
        let backend = backend::build(&def, &Default::default(), &Default::default()).unwrap();
        let mut agent = Agent::new(backend, tools, options);
        let mut events = Events::default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for task in tasks {
            runtime
                .block_on(agent.run_turn(*task, &mut events))
                .unwrap();
        }
        events.0
    }

    #[test]
    fn fresh_sends_no_history_and_continue_sends_it_all() {
        let ws = Workspace::new();
        ws.reply(0, "Answer.\n");
        turns(&ws, "context = \"fresh\"\n", &["first", "second"]);
        assert_eq!(conversation(&ws.prompt(2)), "\nUser: second\n\nAssistant:");

        let ws = Workspace::new();
        ws.reply(0, "Answer.\n");
        turns(&ws, "", &["first", "second"]);
        assert_eq!(
            conversation(&ws.prompt(2)),
            "\nUser: first\n\nAssistant: Answer.\n\nUser: second\n\nAssistant:"
        );
    }

    /// Three turns of 600-character messages under a budget of 1,000 tokens: the third
    /// request passes it. Runs: turn 1, turn 2, the summary request, turn 3. The kept part
    /// starts at a user message, the third; the summary request has room for the second
    /// exchange only (the first is dropped unsummarised, as in a history far over budget).
    fn three_long_turns(ws: &Workspace) -> (Vec<Event>, impl Fn(&str) -> String) {
        let long = |tag: &str| format!("{tag} {}", "x".repeat(600));
        ws.reply(1, format!("{}\n", long("answer1")));
        ws.reply(2, format!("{}\n", long("answer2")));
        ws.reply(4, "Third answer.\n");
        let events = turns(
            ws,
            "context = \"summarize\"\nmax_context_tokens = 1000\n",
            &[&long("first"), &long("second"), &long("third")],
        );
        (events, long)
    }

    #[test]
    fn summarize_asks_the_backend_and_sends_its_summary() {
        let ws = Workspace::new();
        ws.reply(3, "The user asked twice; the agent answered.\n");
        let (events, long) = three_long_turns(&ws);
        assert!(
            events.contains(&Event::Summarized {
                backend: "fake".into(),
                messages: 2
            }),
            "{events:?}"
        );
        let asked = ws.prompt(3);
        assert!(asked.contains("No tools are available"), "{asked}");
        assert!(asked.contains("\nUser: second xxx"), "{asked}");
        assert!(asked.ends_with("call no tool.\n\nAssistant:"), "{asked}");
        assert_eq!(
            conversation(&ws.prompt(4)),
            format!(
                "\nSummary of earlier messages:\nThe user asked twice; the agent answered.\n\n\
                 User: {}\n\nAssistant:",
                long("third")
            )
        );
    }

    #[test]
    fn a_failed_summary_is_reported_and_the_history_trimmed() {
        let ws = Workspace::new();
        ws.fake_file("rc.3", "1");
        let (events, long) = three_long_turns(&ws);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::ContextNotice { message }
                if message.starts_with("could not summarise 2 older messages"))),
            "{events:?}"
        );
        let prompt = ws.prompt(4);
        let sent = conversation(&prompt);
        assert!(
            sent.starts_with(
                "\n(4 earlier messages of this conversation are left out.)\n\nUser: third "
            ),
            "{sent}"
        );
        assert!(!sent.contains("first xxx"), "{sent}");
        assert!(
            sent.ends_with(&format!("User: {}\n\nAssistant:", long("third"))),
            "{sent}"
        );
    }
}

/// The note of a cut result tells the model to read the rest with the read tool: it can,
/// although the session's folder is outside the root, and nothing else of that folder.
#[test]
fn the_model_reads_a_saved_output_back_and_nothing_beside_it() {
    let ws = Workspace::new();
    ws.add_config("tool_result_max_chars = 60\n");
    let big: String = (1..=200).map(|i| format!("row {i}\n")).collect();
    std::fs::write(ws.work().join("a.txt"), &big).unwrap();
    let artifacts = ws.path("data/agent-loop/sessions/art/artifacts");
    let read = |path: &std::path::Path, more: &str| {
        format!(
            "<tool_call>{{\"name\":\"read\",\"arguments\":{{\"path\":\"{}\"{more}}}}}</tool_call>\n",
            path.display()
        )
    };
    ws.reply(1, READ_A);
    ws.reply(
        2,
        read(
            &artifacts.join("call_1-read.txt"),
            ",\"offset\":100,\"limit\":1",
        ),
    );
    ws.reply(3, read(&artifacts.join("../log.jsonl"), ""));
    ws.reply(4, "Read it.\n");
    ws.run(&["--backend", "fake", "-s", "art", "read a.txt"])
        .expect_code(0);
    let prompt = ws.prompt(3);
    let result = prompt.rsplit("<tool_result").next().unwrap();
    assert!(
        result.contains(" status=\"ok\">\n   100\t   100\trow 100\n"),
        "{result}"
    );
    let prompt = ws.prompt(4);
    let result = prompt.rsplit("<tool_result").next().unwrap();
    assert!(
        result.contains(" status=\"error\">\nrefused: ") && !result.contains("session_start"),
        "{result}"
    );
}

/// A repository's `AGENTS.md` that links out of the folder is not sent: the turn goes on
/// without it, saying why.
#[test]
fn a_memory_file_linking_out_of_the_folder_is_not_sent() {
    let ws = Workspace::new();
    std::fs::write(ws.path("id_rsa"), "TOP SECRET KEY\n").unwrap();
    std::os::unix::fs::symlink(ws.path("id_rsa"), ws.work().join("AGENTS.md")).unwrap();
    ws.reply(1, "Hello.\n");
    let run = ws.run(&["--backend", "fake", "hello"]);
    run.expect_code(0);
    assert!(!ws.prompt(1).contains("TOP SECRET"), "{}", ws.prompt(1));
    assert!(
        run.stderr()
            .contains("outside the working directory; going on without it"),
        "{}",
        run.stderr()
    );
}
