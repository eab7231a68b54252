//! The `agent-loop` binary; everything lives in `cli`.

mod cli;
mod logf;

fn main() {
    agent_loop::on_panic::install_hook();
    std::process::exit(cli::main());
}
