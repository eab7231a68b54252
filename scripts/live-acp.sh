#!/usr/bin/env bash
# The ACP presets (`gemini-acp`, `qwen-acp`, `opencode-acp`, `claude-acp`, `codex-acp`) on
# the real agents over the Agent Client Protocol, against the scripted mock provider on
# 127.0.0.1 (scripts/record-fixtures/mock_provider.py): an answer with its token counts, the
# time from its end to agent-loop's exit, and the same stdout with --debug; a file write the
# agent asks permission for, allowed (--yes: the agent's auto mode where it has one), through
# agent-loop's fs capability where the agent uses it (in the session log), then refused by a
# run without --yes in the same HOME and folder (nothing the agent kept of the --yes run
# widens it), allowed by an --allow rule (the question relayed) and refused in a pipe (exit
# 4, `[not done` on stderr); the agent's own settings allowing its writes and commands
# (`widen`): without --yes both are still refused (the preset's guard, docs/acp.md), with
# --yes they run; a project whose settings start an MCP server, hooks or a plugin: without
# --yes none starts, gemini and opencode-acp are not started there (gemini: for its hooks,
# then again without them),
# and its `.env` naming another provider's address is not taken (qwen, gemini); a
# turn cancelled with Ctrl-C (SIGINT); `doctor`. Prints each outcome and
# its time. Not part of CI: it installs npm packages and takes a few minutes.
#
#   scripts/live-acp.sh [gemini|qwen|opencode|claude|codex ...]   (default: all five)
#
# The agents are installed (once) with npm into $LIVE_ACP_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-acp); each run gets a throw-away HOME there
# whose settings point the agent at the mock and turn its self-update off (qwen:
# general.enableAutoUpdate), see live-common.sh.
# AGENT_LOOP names the binary to run (default: `cargo build`, then target/debug/agent-loop).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${LIVE_ACP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-acp}
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=(gemini qwen opencode claude codex)

# claude-agent-acp brings Claude Code with it (@anthropic-ai/claude-agent-sdk), codex-acp
# Codex (a native binary per platform): neither needs the CLI's own package.
declare -A package=([gemini]=@google/gemini-cli@0.61.0 [qwen]=@qwen-code/qwen-code@0.24.4
  [opencode]=opencode-ai@1.18.33 [claude]=@agentclientprotocol/claude-agent-acp@0.101.0
  [codex]=@zed-industries/codex-acp@0.16.0)
declare -A command=([claude]=claude-agent-acp [codex]=codex-acp)
# gemini without -m asks a router model first: the preset with the mock's model named.
declare -A model_args=([gemini]="-m gemini-2.5-flash")
# codex-acp reports only the context's size (usage_update), no token counts of a turn.
declare -A no_tokens=([codex]=1)

. scripts/live-common.sh
prepare

# A fresh HOME, working folder (and backends.toml where the preset needs other arguments)
# for agent $1, the mock on scenario $2 with options $3...; sets $run, $home, $work.
fresh() {
  local cli=$1 scenario=$2
  shift 2
  stop_mock
  run=$dir/run/$cli-$scenario
  rm -rf "$run"
  home=$run/home work=$run/work
  mkdir -p "$home/.config/agent-loop" "$work"
  if [ -n "${model_args[$cli]:-}" ]; then
    local args='"--acp"' a
    for a in ${model_args[$cli]}; do args="$args, \"$a\""; done
    printf '[backends.%s-acp]\nargs = [%s]\n' "$cli" "$args" >"$home/.config/agent-loop/backends.toml"
  fi
  start_mock "$scenario" --write-path "$work/made.txt" "$@"
}

# Runs agent-loop with "$@" in the background, sends it SIGINT once the mock holds the model
# request, and waits; sets $code, $seconds (from the signal to the exit), $out and $err.
agent_loop_interrupted() {
  local start end pid
  (in_home "$@") &
  pid=$!
  for _ in $(seq 1200); do grep -qs '^=== .* POST ' "$run/mock.log" && break; sleep 0.05; done
  start=$(date +%s.%N)
  kill -INT "$pid"
  set +e
  wait "$pid"
  code=$?
  set -e
  end=$(date +%s.%N)
  seconds=$(python3 -c "print('%.1f' % ($end - $start))")
  out=$(cat "$run/stdout") err=$(cat "$run/stderr")
}

# Writes into $home the agent's own settings that allow its file writes and commands without
# asking (what a user may have saved): the rules the preset's guard must outrank.
widen() {
  case $1 in
  gemini) python3 - "$home/.gemini/settings.json" <<'PY'
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
settings["tools"] = {"allowed": ["write_file", "replace", "run_shell_command"]}
json.dump(settings, open(path, "w"))
PY
  ;;
  qwen) python3 - "$home/.qwen/settings.json" <<'PY'
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
settings["permissions"] = {"allow": ["Write", "Edit", "Bash"]}
json.dump(settings, open(path, "w"))
PY
  ;;
  # Its own only: opencode-acp is not started at all in a project with a config of its own
  # (its guard's `refuse`, checked by plant_project).
  opencode)
    sed -i 's/"permission": {"edit": "ask", "bash": "ask"}/"permission": {"edit": "allow", "bash": "allow"}, "agent": {"build": {"permission": {"edit": "allow", "bash": "allow"}}}/' \
      "$home/.config/opencode/opencode.json" ;;
  claude) mkdir -p "$home/.claude" "$work/.claude"
    echo '{"permissions": {"allow": ["Write", "Edit", "Bash"]}}' >"$home/.claude/settings.json"
    echo '{"permissions": {"allow": ["Write", "Edit", "Bash"]}}' >"$work/.claude/settings.local.json" ;;
  codex) printf '\n[projects."%s"]\ntrust_level = "trusted"\n' "$work" >>"$home/.codex/config.toml" ;;
  esac
}

ask="What is six times seven? Answer in one short sentence."
write_it="Write the file made.txt."
for cli in "${clis[@]}"; do
  preset=$cli-acp
  echo "== $preset (${package[$cli]})"

  fresh "$cli" plain
  agent_loop --backend "$preset" --display plain --verbose "$ask"
  echo "answer: exit $code in ${seconds}s: $out; $(grep -m1 -o '\[tokens[^]]*\]' <<<"$err" || echo 'no token line')"
  check "the answer is the model's text" "$([ "$code" = 0 ] && [ "$out" = "The answer is 42." ]; echo $?)"
  if [ -n "${no_tokens[$cli]:-}" ]; then
    check "no token counts (the agent reports none)" "$(grep -q 'tokens unknown' <<<"$err"; echo $?)"
  else
    check "token counts reported" "$(grep -q '\[tokens in [0-9]' <<<"$err"; echo $?)"
  fi
  exit_and_debug --backend "$preset" --display plain "$ask"

  if [[ $cli =~ ^(gemini|qwen|opencode)$ ]]; then
    planted_project_kept_off "$cli" "$preset" "$ask"
  fi

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
  # The same HOME and folder, without --yes: whatever the agent kept of the --yes run (codex
  # trusts the folder in ~/.codex/config.toml), it asks, and in a pipe that is a refusal.
  kept=$(grep -rls 'trust_level\|"allow"\|defaultMode\|trustedFolders' "$home" 2>/dev/null | sed "s|$home/||" | tr '\n' ' ' || true)
  rm -f "$work/made.txt"
  agent_loop --backend "$preset" --display plain --verbose "$write_it"
  echo "then without --yes (the agent's settings that name trust or allow: ${kept:-none}): exit $code in ${seconds}s"
  grep -E '^(\[[a-z-]+\] )?\((the agent.s session was|agent mode)|^\[not done' <<<"$err" | sed 's/^/  /' || true
  grep -h 'trust_level' "$home/.codex/config.toml" 2>/dev/null | sed 's/^/  the agent kept: /' || true
  check "without --yes after --yes: refused, exit 4, nothing written" \
    "$([ "$code" = 4 ] && [ ! -e "$work/made.txt" ] && grep -q '^\[not done' <<<"$err"; echo $?)"

  fresh "$cli" write
  agent_loop --backend "$preset" --display plain --allow 'edit:*made.txt*' "$write_it"
  echo "allowed by --allow (the agent's question relayed): exit $code in ${seconds}s: $out"
  check "allowed by a rule: the file was written" "$([ "$code" = 0 ] && [ -e "$work/made.txt" ]; echo $?)"

  fresh "$cli" write
  agent_loop --backend "$preset" --display plain "$write_it"
  echo "refused in a pipe: exit $code in ${seconds}s: $(head -c 300 <<<"$out")"
  grep '^\[not done' <<<"$err" | sed 's/^/  /' || true
  check "refused: nothing written, exit 4, [not done on stderr" \
    "$([ ! -e "$work/made.txt" ] && [ "$code" = 4 ] && grep -q '^\[not done' <<<"$err"; echo $?)"

  # Its own settings allow its writes and commands: without --yes, still refused.
  for scenario in shell write; do
    fresh "$cli" "$scenario"
    widen "$cli"
    agent_loop --backend "$preset" --display plain "Do what you are asked with made.txt."
    echo "$scenario allowed by its own settings, without --yes: exit $code in ${seconds}s"
    grep -E '^\[not done|without asking' <<<"$err" | sed 's/^/  /' || true
    if [ "$cli.$scenario" = codex.shell ]; then
      # codex-acp asks nothing for a command in its read-only sandbox, which refuses writes.
      check "its trust allows the shell: no made.txt (its read-only sandbox)" \
        "$([ ! -e "$work/made.txt" ]; echo $?)"
    else
      check "its settings allow the $scenario: refused all the same, exit 4, no made.txt" \
        "$([ "$code" = 4 ] && [ ! -e "$work/made.txt" ]; echo $?)"
    fi
  done
  agent_loop --backend "$preset" --display plain --yes "Do what you are asked with made.txt."
  echo "the write with --yes: exit $code in ${seconds}s"
  check "with --yes it writes" "$([ "$code" = 0 ] && [ -e "$work/made.txt" ]; echo $?)"

  fresh "$cli" plain --delay 60
  agent_loop_interrupted --backend "$preset" --display plain "$ask"
  echo "cancelled by SIGINT while the model answers: exit $code ${seconds}s after it: $(grep -m1 -v '^\[context' <<<"$err")"
  check "cancelled: agent-loop ended soon, with no answer" \
    "$([ "$code" != 0 ] && [ -z "$out" ] && python3 -c "import sys; sys.exit($seconds > 15)"; echo $?)"

  fresh "$cli" plain
  agent_loop doctor "$preset"
  echo "doctor: exit $code in ${seconds}s"
  grep -E '^(agent|protocol|capabilities|auth|modes|models|slash|tokens):' <<<"$out" | sed 's/^/  /'
  check "doctor got an answer" "$([ "$code" = 0 ]; echo $?)"
done
stop_mock
if [ "$failures" != 0 ]; then
  echo "live-acp: $failures checks failed"
  exit 1
fi
echo "live-acp: all checks held"
