//! The `agent-loop` binary; everything lives in `cli`.
#![deny(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    // Not dumpable: a command the user approved runs as the same user, and could otherwise
    // read agent-loop's environment (its keys) from /proc/PID/environ, or attach to it. The
    // programs it starts are dumpable again (exec resets it).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    // Exit codes are documented in the README; all fit a byte.
    std::process::ExitCode::from(u8::try_from(cli::main()).unwrap_or(1))
}
