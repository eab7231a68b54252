//! The environment every program a test starts begins from. Nothing of the developer's
//! passes: not their PATH (where their agent CLIs are, which a test must never run: they
//! could spend tokens, and they make results depend on the machine), not HOME (their logins)
//! and not the XDG folders (their settings and sessions). PATH is one folder of links to the
//! system programs the tests and their fake agents use.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The programs a test may run, besides agent-loop and the fake agents (which are named by
/// path): the shell tools of the fake agents and of the tool calls the tests make, and the
/// programs the tests drive (node for MCP servers, python3, git, jq, tmux, script, tic, ps, and
/// zsh and fish where installed).
/// A name not installed here is left out.
const TOOLS: &str = "sh bash dash env cat echo printf ls mkdir rmdir rm cp mv ln touch chmod \
    head tail sed awk grep egrep tr wc sort uniq cut paste tee xargs find sleep kill date \
    dirname basename readlink realpath mktemp test true false seq yes dd od base64 sha256sum \
    md5sum cmp diff stat id whoami uname hostname nproc timeout nohup setsid expr pwd stty tput \
    mkfifo tac rev fold nl split comm join file which \
    python3 node npm npx git jq tmux script tic infocmp ps pgrep pkill zsh fish";

/// The folder of links that is every test program's whole PATH, made once per test run
/// under Cargo's temporary folder for tests (never under /tmp).
fn tools_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hermetic-bin");
        std::fs::create_dir_all(&dir).expect("the hermetic PATH folder");
        let outer = std::env::var_os("PATH").unwrap_or_default();
        for name in TOOLS.split_whitespace() {
            let link = dir.join(name);
            let Some(target) = std::env::split_paths(&outer)
                .map(|d| d.join(name))
                .find(|p| is_executable(p))
            else {
                continue;
            };
            // Another test binary may have made it already; a stale link is replaced.
            if std::fs::read_link(&link).ok().as_deref() != Some(target.as_path()) {
                let fresh = dir.join(format!(".{name}.{}", std::process::id()));
                let _ = std::fs::remove_file(&fresh);
                std::os::unix::fs::symlink(&target, &fresh).expect("link a tool");
                std::fs::rename(&fresh, &link).expect("link a tool");
            }
        }
        dir
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// PATH for a test program: `first` (agent-loop's folder, shims), then the tools.
pub fn path_with(first: &[&Path]) -> OsString {
    std::env::join_paths(first.iter().copied().chain([tools_dir()])).expect("a PATH")
}

/// Clears `cmd`'s environment and gives it only: PATH of the tools, HOME, the XDG folders
/// and TMPDIR under `root` (HOME in `root/home`, the config, data, cache and state homes in
/// `root/xdg`, `root/data`, `root/cache`, `root/state`, TMPDIR `root/tmp`), a UTF-8 locale,
/// and no Ollama server (OLLAMA_HOST is port 9, discard, closed on a test machine; the
/// default would ask the machine's own). The folders are made when used, except `tmp/`.
pub fn hermetic<'a>(cmd: &'a mut Command, root: &Path) -> &'a mut Command {
    std::fs::create_dir_all(root.join("tmp")).expect("the run's TMPDIR");
    cmd.env_clear()
        .env("PATH", path_with(&[]))
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("xdg"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env("TMPDIR", root.join("tmp"))
        .env("LANG", "C.UTF-8")
        .env("OLLAMA_HOST", "127.0.0.1:9")
}
