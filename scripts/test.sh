#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs them.
# The README's test command and .ci/run both call this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Programs the integration tests drive besides cargo: `script` (util-linux) gives the REPL
# tests a pseudo-terminal; node and npm run the MCP servers of tests/all/mcp/; `tic`
# compiles the fake terminfo entries of the terminfo tests; tmux is the terminal emulator of
# the screen tests; jq reads the JSON lines output; git makes the repository the aider preset
# must leave untouched (tests/all/preset_args.rs); python3 runs the fake TUI agent and the
# recorded-session replayer of the `type = "pty"` tests, and measures agent-loop's peak memory
# (tests/all/common/peak_rss.py); ps (procps) is run by the approval and isolation tests of the
# fault suite.
need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
command -v script >/dev/null || need_apt+=(bsdutils)
command -v npm >/dev/null || need_apt+=(nodejs npm)
command -v tic >/dev/null || need_apt+=(ncurses-bin)
command -v tmux >/dev/null || need_apt+=(tmux)
command -v jq >/dev/null || need_apt+=(jq)
command -v ps >/dev/null || need_apt+=(procps)
command -v git >/dev/null || need_apt+=(git)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "scripts/test.sh: please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi

# Real MCP servers from npm, at the versions pinned in tests/mcp-servers/package-lock.json,
# into tests/mcp-servers/node_modules (reinstalled only when the lock file changed).
if [ ! tests/mcp-servers/node_modules/.package-lock.json -nt tests/mcp-servers/package-lock.json ]; then
  npm ci --prefix tests/mcp-servers --no-audit --no-fund --loglevel=error
fi

# The suite runs as on a stranger's machine, whatever this one holds: with HOME, the XDG
# folders and TMPDIR fresh and empty, nothing of this environment but what cargo and rustup
# need, and a failing stand-in first on PATH for the command of every preset of
# backends.toml, which notes each run. No test may run one (each test also gives the programs
# it starts a PATH of its own, tests/all/common/hermetic.rs); nothing may be left in TMPDIR.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir "$root/standins" "$root/home" "$root/tmp"
for cli in $(sed -n 's/^command = "\([^"{}/]*\)"$/\1/p' backends.toml | sort -u); do
  printf '#!/bin/sh\necho "%s $*" >> "%s"\necho "%s: a stand-in for the agent CLI; tests must not run it" >&2\nexit 97\n' \
    "$cli" "$root/standin-calls" "$cli" > "$root/standins/$cli"
  chmod +x "$root/standins/$cli"
done
# Most tests wait on the processes, pipes and sockets they drive rather than compute: four
# test threads a core (at most 16) keep the cores busy (RUST_TEST_THREADS set by the caller wins).
threads=$(( $(nproc 2>/dev/null || echo 2) * 4 ))
threads=${RUST_TEST_THREADS:-$(( threads > 16 ? 16 : threads ))}
keep=(PATH="$root/standins:$PATH" HOME="$root/home" TMPDIR="$root/tmp" LANG=C.UTF-8
  RUST_TEST_THREADS="$threads"
  CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}")
while IFS= read -r var; do
  keep+=("$var=${!var}")
done < <(compgen -e | grep -E '^(CARGO_|RUSTUP_TOOLCHAIN$|RUSTC|RUSTFLAGS$|RUSTDOCFLAGS$|PROPTEST_)' \
  | grep -vE '^(CARGO_HOME|RUSTUP_HOME)$')
status=0
env -i "${keep[@]}" cargo test --locked "$@" || status=$?
if [ -s "$root/standin-calls" ]; then
  echo "scripts/test.sh: the tests ran agent CLIs of the machine (stand-ins here):" >&2
  cat "$root/standin-calls" >&2
  status=1
fi
if [ -n "$(ls -A "$root/tmp")" ]; then
  echo "scripts/test.sh: the tests left files in TMPDIR:" >&2
  ls -A "$root/tmp" >&2
  status=1
fi
exit "$status"
