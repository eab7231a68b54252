//! The floor of `agent-loop --version` for scripts/bench.sh: a Rust program that prints one
//! line and exits, built with the flags of agent-loop's release profile. Every Rust program
//! on this target pays what it costs: the dynamic loader with the unwinder's library, and the
//! standard library's start (its stack guard, the signal handlers). The time agent-loop's
//! `--version` takes over it is agent-loop's own start: its size, its relocations, its
//! libraries beyond these, and its argument parsing.

fn main() {
    println!("hello 0.1.0");
}
