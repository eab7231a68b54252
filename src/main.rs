//! The `agent-loop` binary; everything lives in `cli`.

mod cli;

fn main() -> std::process::ExitCode {
    // Exit codes are documented in the README; all fit a byte.
    std::process::ExitCode::from(u8::try_from(cli::main()).unwrap_or(1))
}
