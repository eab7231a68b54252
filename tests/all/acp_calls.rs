//! What the terminal displays say of an ACP agent's own call that it asks about: the agent
//! reports the call (status pending) before its question, so the call's line says no verb
//! (no `ran`: it has not run), and once answered a line says what became of it in the
//! question's words (`(allowed)`, `(denied)`, `(not answered)`), as the Telegram bot's line
//! does. What the agent reports of a call refused (`failed`) is no failure of the call, but
//! what it did anyway (a write it reports `completed`) is shown, marked as after the refusal.
//! Checked on the bytes of the plain and the terminfo display on a pty, and in a pipe.

use crate::acp::acp;
use crate::repl::dialogue_in;

/// The fake agent's call, as it reports it, in `ws`.
fn reported(ws: &crate::common::Workspace) -> String {
    format!(
        "[acp] WriteFile notes.txt ({})",
        ws.work().join("notes.txt").display()
    )
}

const ANSWERED: &str = "[acp] edit: WriteFile notes.txt [edit]";

#[test]
fn an_agents_call_asked_about_is_not_said_to_have_run_and_its_answer_is_shown() {
    let ws = acp("");
    for display in ["plain", "terminfo"] {
        let steps = [
            ("agent-loop with backend", 1, "permission\n"),
            ("[n]o", 1, "n\n"),
            ("permission: cancel", 1, "permission\n"),
            ("[n]o", 2, "y\n"),
            ("permission: proceed_once", 1, "exit\n"),
        ];
        let (code, screen) = dialogue_in(&ws, display, "--backend acp", &steps);
        assert_eq!(code, 0, "{screen}");
        assert!(!screen.contains("ran]"), "{display}: {screen}");
        // Reported before the question, answered after it.
        let call = screen.find(&reported(&ws)).expect(&screen);
        let question = screen.find("Allow edit?").expect(&screen);
        let denied = format!("{ANSWERED} (denied)");
        let denied_at = screen.find(&denied).expect(&screen);
        assert!(
            call < question && question < denied_at,
            "{display}: {screen}"
        );
        assert!(
            screen.contains(&format!("{ANSWERED} (allowed)")),
            "{screen}"
        );
        // The agent's `failed` after the refusal is not shown as the call failing.
        assert!(!screen.contains("(failed)"), "{display}: {screen}");
        if display == "plain" {
            // Its own line, ended where it says so.
            assert!(screen.contains(&format!("\n{denied}\n")), "{screen}");
        }
    }
}

#[test]
fn an_agents_call_nobody_can_be_asked_about_is_not_answered() {
    let ws = acp("");
    let run = ws.run(&["--backend", "acp", "permission"]);
    assert_eq!(run.stdout(), "permission: cancel\n");
    let err = run.stderr();
    let lines = format!("{}\n{ANSWERED} (not answered)\n", reported(&ws));
    assert!(err.contains(&lines), "{err}");
    assert!(!err.contains("ran]") && !err.contains("(failed)"), "{err}");
    // Allowed without a question (--yes), it has no answer to tell: its line says no verb.
    let run = ws.run(&["--backend", "acp", "--yes", "permission"]);
    assert_eq!(run.stdout(), "permission: proceed_once\n");
    let err = run.stderr();
    assert!(err.contains(&format!("{}\n", reported(&ws))), "{err}");
    assert!(!err.contains("ran]") && !err.contains(ANSWERED), "{err}");
}

/// An untrusted agent that, refused, writes the file itself and reports the call
/// `completed` with its diff: that report is shown, after the refusal and marked as such,
/// on a pty (plain and terminfo) and in a pipe (nobody asked).
#[test]
fn what_an_agent_does_after_its_call_was_refused_is_shown() {
    let ws = acp("");
    let done = format!("{} (done after it was refused)", reported(&ws));
    for display in ["plain", "terminfo"] {
        let steps = [
            ("agent-loop with backend", 1, "permission anyway\n"),
            ("[n]o", 1, "n\n"),
            ("permission: cancel", 1, "exit\n"),
        ];
        let (code, screen) = dialogue_in(&ws, display, "--backend acp", &steps);
        assert_eq!(code, 0, "{screen}");
        let denied = screen.find(&format!("{ANSWERED} (denied)")).expect(&screen);
        let shown = screen.find(&done).expect(&screen);
        assert!(denied < shown, "{display}: {screen}");
    }
    let notes = ws.work().join("notes.txt");
    std::fs::remove_file(&notes).unwrap();
    let run = ws.run(&["--backend", "acp", "permission anyway"]);
    assert_eq!(run.stdout(), "permission: cancel\n");
    let err = run.stderr();
    let lines = format!("{ANSWERED} (not answered)\n{done}\n");
    assert!(err.contains(&lines), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "written anyway\n");
}
