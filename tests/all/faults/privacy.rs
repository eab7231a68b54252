//! Session data private to the user (issue 30): session folders 0700; `session.json`,
//! `log.jsonl`, artifacts and `--log` files 0600, even under `umask 000`; and the temporary
//! file of a save cut short is gone when its session is next opened.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{bin, Workspace};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn session_files_are_private_whatever_the_umask() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    // Results longer than this are saved in full as artifacts.
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "tool_result_max_chars = 50\n",
    )
    .unwrap();
    // Half a save of s1, by a process killed while writing it.
    let leftover = ws.path("data/agent-loop/sessions/s1/.session.json.agent-loop-999999999.tmp");
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(&leftover, "{\"half").unwrap();
    let call = serde_json::json!({"name": "bash", "arguments": {"command": "seq 1 200"}});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
    let log = ws.path("extra/run.jsonl");
    // `umask 000`: what is not created private would be world-writable.
    let line = format!(
        "umask 000; exec \"$0\" --config {} --backend fake --yes --session s1 --log {} go",
        ws.path("backends.toml").display(),
        log.display()
    );
    let mut sh = std::process::Command::new("sh");
    ws.hermetic(&mut sh)
        .arg("-c")
        .arg(line)
        .arg(bin())
        .current_dir(ws.work());
    ws.run_cmd(sh).expect_code(0);
    let folder = ws.path("data/agent-loop/sessions/s1");
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(&folder.join("session.json")), 0o600);
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    let artifacts = folder.join("artifacts");
    assert_eq!(mode(&artifacts), 0o700);
    let saved: Vec<_> = std::fs::read_dir(&artifacts).unwrap().collect();
    assert_eq!(saved.len(), 1);
    assert_eq!(mode(&saved[0].as_ref().unwrap().path()), 0o600);
    assert!(
        !leftover.exists(),
        "the leftover of a cut save is still there"
    );

    // The session's own log, without --log.
    ws.reply(3, "again\n");
    let run = ws.run(&["--backend", "fake", "--session", "s2", "hello"]);
    run.expect_code(0);
    let own = ws.path("data/agent-loop/sessions/s2");
    assert_eq!(mode(&own.join("log.jsonl")), 0o600);
    assert_eq!(mode(&own.join("session.json")), 0o600);
}
