//! Running a child process the way agent-loop needs it, for both CLI backends and the bash
//! tool: in its own session and process group (no controlling terminal), stdin closed (or
//! fed a prompt), stdout and stderr drained together so a noisy stderr can never deadlock it,
//! each capped in memory while the child keeps being drained (or stdout handed whole to a
//! caller that keeps it under its own bound: `Spec::keep_stdout`), and on timeout or
//! cancellation the whole group killed. The run ends
//! when the child exits, even if something it started in the background still holds its pipes.

mod ahead;
pub mod capped;
mod capture;
mod group;
mod interpreter;
mod isolate;
pub mod oversize;
pub mod watchdog;

pub use capture::Capture;
pub use group::GroupGuard;
pub use interpreter::explained;
pub use isolate::{isolate, tied};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// How much is read from a pipe at a time.
const CHUNK: usize = 64 * 1024;

/// What a pipe holds unless it was made bigger (Linux's default).
const PIPE_BUF_DEFAULT: usize = 64 * 1024;

/// How long the pipes are still drained after the child exited with nothing read. Output it
/// wrote is already in the pipe (or read ahead): while that much comes, the wait starts again,
/// however slowly the caller takes it; only something it left running can keep them open past
/// that, and its group is then killed.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Variables the child does not inherit (the bash tool's secrets).
    pub env_remove: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Bytes written to stdin, which is then closed; `None` means stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// How many bytes of each stream to keep in memory; the rest is counted and dropped.
    pub cap: usize,
    /// `false`: stdout is not kept here (`Finished::stdout` stays empty) and every chunk of
    /// it is reported, for a caller that keeps what it needs under its own bound (a
    /// streaming CLI's answer pieces are shown, not kept: crates/backends' cli.rs).
    pub keep_stdout: bool,
    /// Stdout read on a thread of its own, ahead of the caller's work on each chunk
    /// (`ahead`): for an agent CLI, which may lose what its pipe could not take when it exits.
    pub read_ahead: bool,
    /// How often to report [`Progress::Tick`] while the child runs.
    pub tick: Option<Duration>,
}

/// Live reports while the child runs.
pub enum Progress<'a> {
    /// The child started and was given all of its stdin: work that is only needed for its
    /// output can be done now, while it runs. Reported before any output it comes with.
    Started,
    Stdout(&'a [u8]),
    Stderr(&'a [u8]),
    /// The child is still running after this long.
    Tick(Duration),
}

/// Everything a finished (or killed) child left behind.
#[derive(Debug)]
pub struct Finished {
    pub stdout: Capture,
    pub stderr: Capture,
    /// `None` when the child was killed at the timeout.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Finished {
    /// The exit code, or the signal as `128 + n` the way shells report it.
    pub fn exit_code(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        let status = self.status?;
        status.code().or_else(|| status.signal().map(|s| 128 + s))
    }
}

/// Runs the child to completion, the timeout, or until the returned future is dropped (which
/// kills the whole process group too).
pub async fn run(
    spec: &Spec,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> std::io::Result<Finished> {
    let mut command = Command::new(&spec.program);
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    command
        .args(&spec.args)
        .envs(&spec.env)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own session, so its own group too: the guard below kills the group. The watchdog
    // is forked here if it is not yet, before the child starts.
    isolate(&mut command);
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    let started = Instant::now();
    let mut child = command.spawn()?;
    let guard = GroupGuard::new(child.id());
    // What a fresh pipe takes (64 KiB, at least a page) is written at once, and a short input
    // closed at once; the rest is fed from a task of its own, so a child that prints before
    // it reads cannot deadlock us.
    let mut feeder = match (child.stdin.take(), &spec.stdin) {
        (Some(mut stdin), Some(bytes)) => {
            // A child that exits without reading its stdin is not an error of ours.
            let written = stdin.write(bytes).await.unwrap_or(bytes.len());
            if written >= bytes.len() {
                drop(stdin);
                None
            } else {
                let rest = bytes[written..].to_vec();
                Some(tokio::spawn(async move {
                    let _ = stdin.write_all(&rest).await;
                    let _ = stdin.shutdown().await;
                }))
            }
        }
        _ => None,
    };
    // `Started` waits until the child has all of its stdin, so that the caller's work does
    // not keep the child waiting for input.
    let mut fed = feeder.is_none();
    let mut reported = false;
    report_start(fed, &mut reported, progress);
    let mut out_pipe = ahead::Stdout::new(
        child.stdout.take().expect("stdout is piped"),
        spec.read_ahead,
    )?;
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    // Read into capacity never written before: a page of it is touched (each a page fault,
    // several microseconds on a phone or a VM) only when a read fills it, not all 16 up front.
    let (mut out_buf, mut err_buf) = (Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK));
    let (mut out_open, mut err_open) = (true, true);
    let mut stdout = Capture::new(spec.cap);
    let mut stderr = Capture::new(spec.cap);
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    // Armed when the child exits: whatever it left in its group may hold the pipes open.
    let grace = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(grace);
    let tick_every = spec.tick.unwrap_or(Duration::from_secs(3600));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + tick_every, tick_every);
    let mut status = None;
    let mut timed_out = false;
    // What the pipes and the queue ahead could hold when the child exited, and how much of it
    // has been read since.
    let backlog = out_pipe.most_held() + PIPE_BUF_DEFAULT;
    let mut read_after_exit = 0;
    let mut after_exit = |n: usize, grace: std::pin::Pin<&mut tokio::time::Sleep>, exited: bool| {
        if exited {
            read_after_exit += n;
            if read_after_exit <= backlog {
                grace.reset(tokio::time::Instant::now() + PIPE_GRACE);
            }
        }
    };
    while out_open || err_open || status.is_none() {
        // Every branch is cancel-safe: a read or wait not chosen loses nothing.
        tokio::select! {
            _ = async { feeder.as_mut().expect("a feeder until fed").await }, if !fed => {
                fed = true;
                report_start(fed, &mut reported, progress);
            }
            n = out_pipe.read(&mut out_buf), if out_open => match n {
                Ok(n) if n > 0 => {
                    report_start(fed, &mut reported, progress);
                    after_exit(n, grace.as_mut(), status.is_some());
                    // Past the cap, output is only counted: no events, no lines, no log
                    // records for what is not kept, so draining runs at pipe speed.
                    let kept = match spec.keep_stdout {
                        true => stdout.push(&out_buf),
                        false => out_buf.len(),
                    };
                    if kept > 0 {
                        progress(Progress::Stdout(&out_buf[..kept]));
                    }
                }
                _ => out_open = false,
            },
            n = read_chunk(&mut err_pipe, &mut err_buf), if err_open => match n {
                Ok(n) if n > 0 => {
                    report_start(fed, &mut reported, progress);
                    after_exit(n, grace.as_mut(), status.is_some());
                    let kept = stderr.push(&err_buf);
                    if kept > 0 {
                        progress(Progress::Stderr(&err_buf[..kept]));
                    }
                }
                _ => err_open = false,
            },
            done = child.wait(), if status.is_none() => {
                report_start(fed, &mut reported, progress);
                status = Some(done?);
                grace.as_mut().reset(tokio::time::Instant::now() + PIPE_GRACE);
            }
            _ = &mut grace, if status.is_some() => break,
            _ = &mut deadline => {
                timed_out = true;
                break;
            }
            _ = ticks.tick(), if spec.tick.is_some() => progress(Progress::Tick(started.elapsed())),
        }
    }
    // Whatever the child left running in its group (or the child itself, at a timeout) goes.
    drop(guard);
    if let Some(feeder) = feeder.filter(|_| !fed) {
        feeder.abort();
    }
    Ok(Finished {
        stdout,
        stderr,
        status,
        timed_out,
        elapsed: started.elapsed(),
    })
}

/// Reports `Started` before anything else the child did, once it has its stdin.
fn report_start(fed: bool, reported: &mut bool, progress: &mut (dyn FnMut(Progress) + Send)) {
    if fed && !*reported {
        *reported = true;
        progress(Progress::Started);
    }
}

/// Reads what the pipe has (up to `CHUNK` bytes) into `buf`, replacing what it held; as
/// cancel-safe as `read`.
async fn read_chunk<R: AsyncRead + Unpin>(
    pipe: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    buf.clear();
    pipe.read_buf(buf).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(program: &str, args: &[&str], stdin: Option<&[u8]>) -> Spec {
        Spec {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Default::default(),
            env_remove: Vec::new(),
            cwd: None,
            stdin: stdin.map(<[u8]>::to_vec),
            timeout: Duration::from_secs(30),
            cap: 1 << 20,
            keep_stdout: true,
            read_ahead: false,
            tick: None,
        }
    }

    /// What the child reported, in order: `S` for Started, then its stdout.
    async fn reports(spec: &Spec) -> String {
        let mut seen = String::new();
        let finished = run(spec, &mut |p| match p {
            Progress::Started => seen.push('S'),
            Progress::Stdout(bytes) => seen.push_str(&String::from_utf8_lossy(bytes)),
            _ => {}
        })
        .await
        .unwrap();
        assert_eq!(finished.exit_code(), Some(0));
        seen
    }

    /// `Started` comes once: when the feeder has written all of the child's stdin (so it may
    /// come after some of what the child printed), or before anything when there is none;
    /// a child that prints at once has it before its first output.
    #[tokio::test]
    async fn started_is_reported_once() {
        let fed = reports(&spec("cat", &[], Some(b"hello"))).await;
        assert_eq!(fed.matches('S').count(), 1, "{fed}");
        assert_eq!(fed.replace('S', ""), "hello");
        let none = reports(&spec("echo", &["hi"], None)).await;
        assert_eq!(none, "Shi\n");
    }

    /// An input larger than a pipe takes at once reaches the child whole: the first part is
    /// written at once, the rest by the feeder.
    #[tokio::test]
    async fn an_input_larger_than_the_pipe_arrives_whole() {
        let input = vec![b'x'; 1 << 20];
        let finished = run(&spec("wc", &["-c"], Some(&input)), &mut |_| {})
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(finished.stdout.bytes()).trim(),
            "1048576"
        );
    }

    /// `yes 0123456789` cut at `bytes`, with a cap of 25, stdout kept here or not: how many
    /// bytes of stdout were reported, and what was kept.
    async fn flood(bytes: usize, keep_stdout: bool) -> (usize, Finished) {
        flood_read(bytes, keep_stdout, false).await
    }

    /// [`flood`], its stdout read ahead or not.
    async fn flood_read(bytes: usize, keep_stdout: bool, ahead: bool) -> (usize, Finished) {
        let command = format!("yes 0123456789 | head -c {bytes}");
        let mut spec = spec("sh", &["-c", &command], None);
        spec.cap = 25;
        spec.keep_stdout = keep_stdout;
        spec.read_ahead = ahead;
        let mut reported = 0;
        let finished = run(&spec, &mut |p| {
            if let Progress::Stdout(bytes) = p {
                reported += bytes.len();
            }
        })
        .await
        .unwrap();
        (reported, finished)
    }

    /// Past the cap output is counted, never reported: no lines, events or log records for
    /// what is dropped.
    #[tokio::test]
    async fn nothing_past_the_cap_is_reported() {
        for ahead in [false, true] {
            let (reported, finished) = flood_read(1_000_000, true, ahead).await;
            assert_eq!(reported, 25, "read ahead: {ahead}");
            assert_eq!(finished.stdout.bytes(), b"0123456789\n0123456789\n012");
            assert_eq!(finished.stdout.dropped(), 1_000_000 - 25);
        }
    }

    /// A caller that keeps stdout itself gets all of it, past the cap too; nothing is kept.
    #[tokio::test]
    async fn stdout_not_kept_is_reported_whole() {
        let (reported, finished) = flood(100_000, false).await;
        assert_eq!(reported, 100_000);
        assert!(finished.stdout.bytes().is_empty());
    }

    /// Stdout read ahead: the reading thread ends once the run is over, though a process
    /// that left the child's group (here `setsid sleep 4`) still holds the pipe.
    #[tokio::test]
    async fn the_thread_reading_ahead_ends_with_the_run() {
        let readers = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.trim() == "child-stdout")
                .count()
        };
        let mut spec = spec("sh", &["-c", "setsid sleep 4 & echo hi"], None);
        spec.read_ahead = true;
        let mut seen = Vec::new();
        run(&spec, &mut |p| {
            if let Progress::Stdout(bytes) = p {
                seen.extend_from_slice(bytes);
            }
        })
        .await
        .unwrap();
        assert_eq!(seen, b"hi\n");
        let deadline = Instant::now() + Duration::from_secs(3);
        while readers() > 0 {
            assert!(
                Instant::now() < deadline,
                "the reading thread is still there"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
