#!/usr/bin/env bash
# The `gemini-acp` and `qwen-acp` presets on the real agents over the Agent Client Protocol,
# against the scripted mock provider on 127.0.0.1 (scripts/record-fixtures/mock_provider.py):
# an answer with its token counts; a file write the agent asks permission for, allowed
# (--yes: the agent's auto mode), served through agent-loop's fs capability (in the session
# log), allowed by an --allow rule (the question relayed) and refused in a pipe; `doctor`. Prints each outcome and its time. Not part of CI: it installs two
# npm packages and takes a few minutes.
#
#   scripts/live-acp.sh [gemini|qwen ...]
#
# The CLIs are installed (once) with npm into $LIVE_ACP_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-acp); each run gets a throw-away HOME there
# whose settings turn the CLI's self-update off (qwen: general.enableAutoUpdate).
# AGENT_LOOP names the binary to run (default: `cargo build`, then target/debug/agent-loop).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${LIVE_ACP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-acp}
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=(gemini qwen)

declare -A package=([gemini]=@google/gemini-cli@0.61.0 [qwen]=@qwen-code/qwen-code@0.15.10)
declare -A model_args=([gemini]="-m gemini-2.5-flash" [qwen]="")
mkdir -p "$dir/npm"
for cli in "${clis[@]}"; do
  [ -n "${package[$cli]:-}" ] || { echo "live-acp.sh: no such agent: $cli (gemini, qwen)" >&2; exit 2; }
  if [ ! -x "$dir/npm/node_modules/.bin/$cli" ]; then
    echo "installing ${package[$cli]} into $dir/npm"
    npm install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error "${package[$cli]}"
  fi
done
bin=$dir/npm/node_modules/.bin
if [ -z "${AGENT_LOOP:-}" ]; then
  cargo build --quiet
  AGENT_LOOP=$root/target/debug/agent-loop
fi

. scripts/live-common.sh
trap stop_mock EXIT

# A fresh HOME, working folder and backends.toml for CLI $1, the mock on scenario $2; sets
# $run, $home, $work and exports the CLI's provider settings.
fresh() {
  local cli=$1 scenario=$2
  stop_mock
  run=$dir/run/$cli-$scenario
  rm -rf "$run"
  home=$run/home work=$run/work
  mkdir -p "$home/.qwen" "$home/.gemini" "$home/.config/agent-loop" "$work"
  # qwen 0.15.10 reads general.enableAutoUpdate; without it, it updates itself with npm -g.
  echo '{"general":{"enableAutoUpdate":false,"disableAutoUpdate":true,"disableUpdateNag":true}}' \
    >"$home/.qwen/settings.json"
  echo '{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}' \
    >"$home/.gemini/settings.json"
  # gemini without -m asks a router model first: the preset with the mock's model named.
  local args='"--acp"'
  for a in ${model_args[$cli]}; do args="$args, \"$a\""; done
  printf '[backends.%s-acp]\nargs = [%s]\n' "$cli" "$args" >"$home/.config/agent-loop/backends.toml"
  start_mock "$scenario" --write-path "$work/made.txt"
}


ask="What is six times seven? Answer in one short sentence."
write_it="Write the file made.txt."
for cli in "${clis[@]}"; do
  preset=$cli-acp
  echo "== $preset ($("$bin/$cli" --version 2>/dev/null </dev/null | tail -1))"

  fresh "$cli" plain
  agent_loop --backend "$preset" --display plain "$ask"
  echo "answer: exit $code in ${seconds}s: $out; $(grep -m1 -o '\[tokens[^]]*\]' <<<"$err" || echo 'no token line')"
  check "the answer is the model's text" "$([ "$code" = 0 ] && [ "$out" = "The answer is 42." ]; echo $?)"
  check "token counts reported" "$(grep -q '\[tokens in [0-9]' <<<"$err"; echo $?)"

  fresh "$cli" write
  agent_loop --backend "$preset" --display plain --yes --session live "$write_it"
  log=$home/.local/share/agent-loop/sessions/live/log.jsonl
  echo "allowed: exit $code in ${seconds}s: $out"
  grep -E '^\[' <<<"$err" | grep -v '^\[context\|^\[session' | sed 's/^/  /' || true
  check "allowed: the file was written" "$([ "$code" = 0 ] && [ -e "$work/made.txt" ]; echo $?)"
  if grep -q '"tool":"write"' "$log" 2>/dev/null; then
    echo "  the write went through agent-loop's fs capability (log: tool_call write)"
  else
    echo "  the agent wrote the file itself (no fs/write_text_file request)"
  fi

  fresh "$cli" write
  agent_loop --backend "$preset" --display plain --allow 'edit:*made.txt*' "$write_it"
  echo "allowed by --allow (the agent's question relayed): exit $code in ${seconds}s: $out"
  check "allowed by a rule: the file was written" "$([ "$code" = 0 ] && [ -e "$work/made.txt" ]; echo $?)"

  fresh "$cli" write
  agent_loop --backend "$preset" --display plain "$write_it"
  echo "refused in a pipe: exit $code in ${seconds}s: $(head -c 300 <<<"$out")"
  check "refused: nothing written" "$([ ! -e "$work/made.txt" ]; echo $?)"

  fresh "$cli" plain
  agent_loop doctor "$preset"
  echo "doctor: exit $code in ${seconds}s"
  grep -E '^(agent|protocol|capabilities|auth|modes|models|slash|tokens):' <<<"$out" | sed 's/^/  /'
  check "doctor got an answer" "$([ "$code" = 0 ]; echo $?)"
done
stop_mock
[ "$failures" = 0 ] && echo "live-acp: all checks held" || { echo "live-acp: $failures checks failed"; exit 1; }
