//! The `agent-loop` binary; everything lives in `cli`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
