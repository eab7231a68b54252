//! Helpers shared by the integration tests: a temporary workspace with a scripted fake agent,
//! running the built binary, and checks on its output.

#![allow(dead_code)]

mod hermetic;
mod pty;

pub use hermetic::{hermetic, path_with};
pub use pty::{command_line, poll, sh_quote, Pty};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The built binary under test; `AGENT_LOOP_TEST_BIN` names another build of it, which
/// scripts/cross-check.sh's smoke suite sets to an aarch64 build run under qemu.
pub fn bin() -> PathBuf {
    std::env::var_os("AGENT_LOOP_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_agent-loop")))
}

/// A file under `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// The `tokens_regex` line of the fake backends: `Tokens: 1,234 in, 56 out`.
pub const TOKENS: &str =
    "tokens_regex = 'Tokens: (?P<input>[\\d.,]+[kKmM]?) in, (?P<output>[\\d.,]+[kKmM]?) out'\n";

/// A temporary folder with: `work/` (the working directory of the run), `fake/` (the script
/// of the scripted fake agent), `xdg/` (an empty XDG config home), `data/` (the XDG data home,
/// made on demand), `tmp/` (the TMPDIR of every run, so that nothing a run leaves in its
/// temporary folder outlives the test), `home/` (HOME, made on demand) and `backends.toml`.
/// Every program run for it starts from [`Workspace::hermetic`]'s environment.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        for sub in ["work", "fake", "xdg", "tmp"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let ws = Workspace { dir };
        ws.config(&format!(
            "[backends.fake]\ncommand = \"{}\"\n{TOKENS}timeout_s = 300\n",
            fixture("agents/scripted.sh").display()
        ));
        ws
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn work(&self) -> PathBuf {
        self.path("work")
    }

    /// Replaces `backends.toml` (passed with `--config`).
    pub fn config(&self, text: &str) {
        std::fs::write(self.path("backends.toml"), text).unwrap();
    }

    /// Gives a fake backend (`fake`, `slow`) `model_args`, for a test that chooses a model
    /// (`/model`): the scripts read their prompt from stdin whatever the arguments.
    pub fn takes_models(&self, backend: &str) {
        let text = std::fs::read_to_string(self.path("backends.toml")).unwrap();
        let table = format!("[backends.{backend}]\n");
        let with = format!("{table}model_args = [\"--model\", \"{{model}}\"]\n");
        self.config(&text.replacen(&table, &with, 1));
    }

    /// Appends to `backends.toml`.
    pub fn add_config(&self, text: &str) {
        let mut old = std::fs::read_to_string(self.path("backends.toml")).unwrap();
        old.push_str(text);
        self.config(&old);
    }

    /// The records of session `name`'s `log.jsonl`, each line parsed.
    pub fn session_log(&self, name: &str) -> Vec<serde_json::Value> {
        let path = self.path(&format!("data/agent-loop/sessions/{name}/log.jsonl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// What the fake agent prints on its `n`th run (`n` = 0: every run without its own).
    pub fn reply(&self, n: usize, bytes: impl AsRef<[u8]>) {
        let name = if n == 0 {
            "reply.default".to_string()
        } else {
            format!("reply.{n}")
        };
        std::fs::write(self.path("fake").join(name), bytes).unwrap();
    }

    pub fn fake_file(&self, name: &str, bytes: impl AsRef<[u8]>) {
        std::fs::write(self.path("fake").join(name), bytes).unwrap();
    }

    /// The prompt the fake agent received on its `n`th run.
    pub fn prompt(&self, n: usize) -> String {
        std::fs::read_to_string(self.path("fake").join(format!("prompt.{n}")))
            .unwrap_or_else(|e| panic!("the fake agent has no prompt.{n}: {e}"))
    }

    /// How many times the fake agent ran.
    pub fn runs(&self) -> usize {
        std::fs::read_to_string(self.path("fake").join("count"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0)
    }

    /// Clears `cmd`'s environment and gives it this workspace's: [`hermetic`]'s (HOME, the
    /// XDG folders and TMPDIR in the workspace, PATH of the system tools only), `FAKE_DIR` and
    /// a colour terminal's TERM.
    pub fn hermetic<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        hermetic(cmd, self.dir.path())
            .env("FAKE_DIR", self.path("fake"))
            .env("TERM", "xterm-256color")
    }

    /// A command for the binary with this workspace's config, cwd and environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        self.hermetic(&mut cmd)
            .current_dir(self.work())
            .arg("--config")
            .arg(self.path("backends.toml"))
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the binary to completion and checks the append-only promise on its output.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_cmd(self.cmd(args))
    }

    pub fn run_cmd(&self, mut cmd: Command) -> Run {
        let output = cmd.output().expect("run agent-loop");
        let run = Run { output };
        run.assert_append_only();
        run
    }
}

/// A finished run of the binary.
pub struct Run {
    pub output: Output,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Exit code, with both streams shown if it differs.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code(),
            code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// No escape byte and no bare carriage return in anything written (plain display).
    pub fn assert_append_only(&self) {
        assert_append_only("stdout", &self.output.stdout);
        assert_append_only("stderr", &self.output.stderr);
    }
}

/// No escape byte and no carriage return in `bytes` (the output `name`).
pub fn assert_append_only(name: &str, bytes: &[u8]) {
    assert!(
        !bytes.contains(&0x1b),
        "{name} contains an escape byte:\n{}",
        String::from_utf8_lossy(bytes)
    );
    assert!(
        !bytes.contains(&b'\r'),
        "{name} contains a carriage return:\n{}",
        String::from_utf8_lossy(bytes)
    );
}

/// Whether a process is gone (or a zombie nobody has reaped yet).
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// Waits (polling the condition, not sleeping a guessed time, for at most `pty::PATIENCE`,
/// far above what a busy machine needs) until `pid` is gone.
pub fn wait_gone(pid: i32) -> bool {
    poll(|| process_gone(pid).then_some(())).is_some()
}

impl Workspace {
    /// The one saved session's `session.json`, parsed: it must exist and be whole JSON.
    pub fn saved_session(&self) -> serde_json::Value {
        let dir = self.path("data/agent-loop/sessions");
        let folders: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("no sessions folder {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(folders.len(), 1, "{folders:?}");
        let file = folders[0].join("session.json");
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", file.display()))
    }

    /// The saved session's messages as one text, to look for what a turn left.
    pub fn saved_messages(&self) -> String {
        self.saved_session()["conversation"].to_string()
    }

    /// Live processes started for this workspace (they inherit its `FAKE_DIR`): agent-loop,
    /// the fake agents and the tools they ran. Each as (pid, command name).
    pub fn processes(&self) -> Vec<(i32, String)> {
        let needle = format!("FAKE_DIR={}", self.path("fake").display()).into_bytes();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| !process_gone(*pid))
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == needle))
            })
            .map(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                (pid, comm.trim().to_string())
            })
            .collect()
    }

    /// Waits (bounded, polling) until nothing started for this workspace is running.
    pub fn assert_no_leftovers(&self) {
        if poll(|| self.processes().is_empty().then_some(())).is_none() {
            panic!("processes left running: {:?}", self.processes());
        }
    }

    /// Waits (bounded, polling) until a process named `comm` runs for this workspace.
    pub fn wait_for_process(&self, comm: &str) -> i32 {
        poll(|| {
            self.processes()
                .into_iter()
                .find_map(|(pid, c)| (c == comm).then_some(pid))
        })
        .unwrap_or_else(|| panic!("no `{comm}` process started"))
    }

    /// Runs the binary to completion with its output in files, and returns the run and its
    /// own peak resident memory in KiB. It is measured by `common/peak_rss.py`, which forks
    /// it: the ru_maxrss of a child of this test process would count this process's own peak
    /// (all the tests running beside it), not just agent-loop's.
    pub fn run_measured(&self, cmd: Command) -> (Run, u64) {
        self.run_measured_from(cmd, Stdio::null())
    }

    /// [`Workspace::run_measured`] with `stdin` as its input.
    pub fn run_measured_from(&self, cmd: Command, stdin: Stdio) -> (Run, u64) {
        let out = self.path("measured.out");
        let err = self.path("measured.err");
        let peak = self.path("measured.peak");
        let mut wrapped = Command::new("python3");
        wrapped
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/all/common/peak_rss.py"))
            .arg(&peak)
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .stdin(stdin)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        if let Some(dir) = cmd.get_current_dir() {
            wrapped.current_dir(dir);
        }
        for (var, value) in cmd.get_envs() {
            match value {
                Some(value) => wrapped.env(var, value),
                None => wrapped.env_remove(var),
            };
        }
        let status = wrapped.status().expect("run python3 peak_rss.py");
        let run = Run {
            output: Output {
                status,
                stdout: std::fs::read(&out).unwrap(),
                stderr: std::fs::read(&err).unwrap(),
            },
        };
        run.assert_append_only();
        let peak = std::fs::read_to_string(&peak).expect("peak_rss.py wrote the peak");
        (run, peak.trim().parse().expect("a number of KiB"))
    }
}

/// Sends SIGINT to a process, as Ctrl-C on its terminal would.
pub fn interrupt(pid: u32) {
    send_signal(pid, libc::SIGINT);
}

/// Sends `signal` to a process.
pub fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) only sends a signal to a process id; no memory is involved.
    unsafe { libc::kill(pid as i32, signal) };
}
