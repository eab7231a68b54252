//! Keys kept from the model (issue 30): bash does not inherit the environment's secrets,
//! config.toml's `[tools.bash]` adjusts which, `agent-loop config` shows the policy, and a
//! known key that shows up in a tool result anyway is masked before the model sees it.

use crate::common::{fixture, Workspace};

#[test]
fn bash_gets_no_secrets_and_results_mask_known_keys() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "[tools.bash]\nenv_keep = [\"KEEP_TOKEN\"]\nenv_remove = [\"PLAIN_VAR\"]\n",
    )
    .unwrap();
    // The key also sits in a file: reading it prints it, and the result masks it.
    std::fs::write(ws.work().join("leak.txt"), "sk-service-0123456789\n").unwrap();
    let call = serde_json::json!({"name": "bash", "arguments": {"command":
        "echo \"a=$MY_SERVICE_TOKEN b=$TELEGRAM_BOT_TOKEN c=$PLAIN_VAR d=$KEEP_TOKEN e=$DB_PASSWORD f=$ANTHROPIC_API_KEY g=$HOME_OK\"; cat leak.txt"
    }});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "go"]);
    cmd.env("MY_SERVICE_TOKEN", "sk-service-0123456789")
        .env("TELEGRAM_BOT_TOKEN", "123456:telegram-secret")
        .env("PLAIN_VAR", "plain-but-removed")
        .env("KEEP_TOKEN", "kept-on-purpose")
        .env("DB_PASSWORD", "hunter2hunter2")
        .env("ANTHROPIC_API_KEY", "sk-ant-0123456789abcdef")
        .env("HOME_OK", "visible");
    ws.run_cmd(cmd).expect_code(0);
    let result = ws.prompt(2);
    assert!(
        result.contains("a= b= c= d=kept-on-purpose e= f= g=visible"),
        "{result}"
    );
    assert!(!result.contains("sk-service-0123456789"), "{result}");
    assert!(result.contains("[REDACTED]"), "{result}");

    let mut cmd = ws.cmd(&["config"]);
    cmd.env("MY_SERVICE_TOKEN", "x");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.contains("Tools (bash, MCP servers) do not inherit:"),
        "{out}"
    );
    assert!(out.contains("env_keep: KEEP_TOKEN"), "{out}");
    assert!(out.contains("env_remove: PLAIN_VAR"), "{out}");
    assert!(out.contains("removed now: MY_SERVICE_TOKEN"), "{out}");
    assert!(out.contains("file tools open files with: "), "{out}");
}

/// An MCP stdio server does not inherit the secrets either, but gets what its own `env` names.
#[test]
fn mcp_servers_get_no_secrets_but_their_own_env() {
    let ws = Workspace::new();
    let names = ws.path("env-names");
    ws.add_config(&format!(
        "\n[mcp.servers.tiny]\ncommand = '{}'\nenv = {{ TINY_ENV_FILE = '{}', GIVEN_TOKEN = 'for-it' }}\n",
        fixture("mcp/tiny-server.js").display(),
        names.display()
    ));
    ws.reply(1, "Done.\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "nothing"]);
    cmd.env("MY_SERVICE_TOKEN", "sk-service-0123456789")
        .env("PLAIN_SETTING", "fine");
    ws.run_cmd(cmd).expect_code(0);
    let names = std::fs::read_to_string(&names).expect("the server wrote its variables");
    let has = |name: &str| names.lines().any(|l| l == name);
    assert!(!has("MY_SERVICE_TOKEN"), "{names}");
    assert!(has("GIVEN_TOKEN"), "{names}");
    assert!(has("PLAIN_SETTING"), "{names}");
}

/// agent-loop is not dumpable: a command the user approved, running as the same user, cannot
/// read agent-loop's environment (and its keys) from /proc/PPID/environ, base64 or not.
/// `agent-loop config` says so, from the process's own flag. Root may read any process's
/// environment (CAP_SYS_PTRACE), so run as root the command's read is not judged.
#[test]
fn an_approved_command_cannot_read_agent_loops_environment() {
    let ws = Workspace::new();
    let config = ws.run(&["config"]);
    config.expect_code(0);
    assert!(
        config
            .stdout()
            .contains("agent-loop's own environment (its keys): not dumpable"),
        "{}",
        config.stdout()
    );
    let command = "p=$PPID; cat /proc/$p/environ | base64 -w0; echo; echo \"ppid=$p\"";
    let call = serde_json::json!({"name": "bash", "arguments": {"command": command}});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "go"]);
    cmd.env("MY_SERVICE_TOKEN", "sk-service-0123456789");
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent_loop = child.id();
    assert!(child.wait().unwrap().success());
    let result = ws.prompt(2);
    // The command ran under agent-loop itself.
    assert!(result.contains(&format!("ppid={agent_loop}")), "{result}");
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        assert!(result.contains("Permission denied"), "{result}");
        // base64 of "MY_SERVICE_TOKEN=" at any of the three alignments.
        for piece in [
            "TVlfU0VSVklDRV9UT0tFTj",
            "1ZX1NFUlZJQ0VfVE9LRU49",
            "NWV9TRVJWSUNFX1RPS0VOP",
        ] {
            assert!(!result.contains(piece), "{result}");
        }
    }
}
