//! Running the binary on a pseudo-terminal (util-linux `script`), reading what it draws while
//! it runs, and a fake agent that keeps running until the test opens its gate.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{bin, fixture, Workspace, TOKENS};

/// How long a test waits for something it expects to happen.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `check` every 20 ms until it gives a value, for at most [`PATIENCE`].
pub fn poll<T>(mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return Some(value);
        }
        if start.elapsed() > PATIENCE {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Quotes a word for `sh`.
pub fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl Workspace {
    /// Adds the backend `slow` (fixtures/agents/gated.sh, progress every second, token lines
    /// as `fake` reads them) and closes
    /// its gate: its first run waits until [`Workspace::open_gate`].
    pub fn gated_backend(&self) {
        self.add_config(&format!(
            "[backends.slow]\ncommand = \"{}\"\nprogress_s = 1\ntimeout_s = 300\n{TOKENS}",
            fixture("agents/gated.sh").display()
        ));
        let gate = self.path("fake/gate");
        let made = Command::new("mkfifo").arg(&gate).status().expect("mkfifo");
        assert!(made.success());
    }

    /// Whether the gated run has started and is waiting.
    pub fn gate_reached(&self) -> bool {
        self.path("fake/started").exists()
    }

    /// Lets the waiting run go on.
    pub fn open_gate(&self) {
        assert!(
            poll(|| self.gate_reached().then_some(())).is_some(),
            "the slow agent never started"
        );
        // Non-blocking: until the agent has opened its end, opening ours fails instead of
        // hanging the test.
        let mut gate = poll(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(self.path("fake/gate"))
                .ok()
        })
        .expect("the slow agent never opened its gate");
        gate.write_all(b"go\n").unwrap();
    }
}

/// `agent-loop --config WS/backends.toml ARGS`, quoted for `sh`.
pub fn command_line(ws: &Workspace, args: &[&str]) -> String {
    let mut line = format!(
        "{} --config {}",
        sh_quote(&bin().display().to_string()),
        sh_quote(&ws.path("backends.toml").display().to_string())
    );
    for arg in args {
        line.push(' ');
        line.push_str(&sh_quote(arg));
    }
    line
}

/// The binary running on a pseudo-terminal, with output translation off (`stty -onlcr`), so
/// the bytes read are exactly the bytes it wrote (and the terminal's echo of typed input).
pub struct Pty {
    child: Child,
    stdin: Option<ChildStdin>,
    output: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
}

impl Pty {
    /// Runs `agent-loop --config WS/backends.toml ARGS` with the workspace's environment plus
    /// `env`.
    pub fn spawn(ws: &Workspace, env: &[(&str, &str)], args: &[&str]) -> Pty {
        Pty::spawn_after(ws, env, "stty -onlcr", args)
    }

    /// Runs it as [`Pty::spawn`] does, after the shell command `setup` (`stty rows 24 cols
    /// 80`: a terminal of that size, with the output processing of a real one).
    pub fn spawn_after(ws: &Workspace, env: &[(&str, &str)], setup: &str, args: &[&str]) -> Pty {
        let line = format!("{setup}; exec {}", command_line(ws, args));
        Pty::spawn_shell(ws, env, &line)
    }

    /// Runs the shell command `line` on a pseudo-terminal: agent-loop ([`command_line`])
    /// under a shell that stays, for the tests of job control.
    pub fn spawn_shell(ws: &Workspace, env: &[(&str, &str)], line: &str) -> Pty {
        let mut cmd = Command::new("script");
        ws.hermetic(&mut cmd)
            .args(["-qec", line, "/dev/null"])
            .current_dir(ws.work())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("util-linux script");
        let mut stdout = child.stdout.take().unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            stdin: child.stdin.take(),
            child,
            output,
            reader: Some(reader),
        }
    }

    /// Everything written so far.
    pub fn output(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    /// Waits until the output contains `text`; panics with the output if it never does.
    pub fn wait_for(&self, text: &str) {
        let seen = poll(|| {
            String::from_utf8_lossy(&self.output())
                .contains(text)
                .then_some(())
        });
        assert!(
            seen.is_some(),
            "never saw {text:?} in:\n{}",
            String::from_utf8_lossy(&self.output())
        );
    }

    /// Waits until the output contains `text` at least `n` times.
    pub fn wait_for_nth(&self, text: &str, n: usize) {
        let seen = poll(|| {
            (String::from_utf8_lossy(&self.output())
                .matches(text)
                .count()
                >= n)
                .then_some(())
        });
        assert!(
            seen.is_some(),
            "never saw {text:?} {n} times in:\n{}",
            String::from_utf8_lossy(&self.output())
        );
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Its exit code once it has ended by itself; `None` if it still runs after [`PATIENCE`].
    pub fn exit_code(&mut self) -> Option<i32> {
        poll(|| self.child.try_wait().ok().flatten()).map(|status| status.code().unwrap_or(-1))
    }

    /// Waits for the program to end; its exit code and everything it wrote.
    pub fn finish(mut self) -> (i32, Vec<u8>) {
        let status = self.child.wait().unwrap();
        drop(self.stdin.take());
        self.reader.take().unwrap().join().unwrap();
        (status.code().unwrap_or(-1), self.output())
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // A test that failed half-way leaves no program behind.
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
