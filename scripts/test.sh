#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs them.
# The README's test command and .ci/run both call this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Programs the integration tests drive besides cargo: `script` (util-linux) gives the REPL
# tests a pseudo-terminal; `tic` compiles the fake terminfo entries of the terminfo tests;
# tmux is the terminal emulator of the screen tests; jq reads the JSON lines output.
need_apt=()
command -v script >/dev/null || need_apt+=(bsdutils)
command -v tic >/dev/null || need_apt+=(ncurses-bin)
command -v tmux >/dev/null || need_apt+=(tmux)
command -v jq >/dev/null || need_apt+=(jq)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "scripts/test.sh: please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi

cargo test --locked "$@"
