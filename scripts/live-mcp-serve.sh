#!/usr/bin/env bash
# `agent-loop mcp serve` registered with the real agent CLIs as docs/mcp-server.md says
# (`claude mcp add`, `codex mcp add`, the `mcpServers` entry of Gemini CLI's and Qwen Code's
# settings.json, the `mcp` entry of opencode.json), each CLI pointed at the scripted mock
# provider on 127.0.0.1 (scripts/record-fixtures/mock_provider.py, scenario `ask`): its model
# calls agent-loop's `ask` tool, agent-loop runs the turn on its `openai` preset against the
# same mock (whose answer carries a mark), and the CLI answers with the mock's text, which says
# whether the tool's result the CLI gave its model held that answer. Checked: the CLI's answer
# (its model was shown agent-loop's answer), the session agent-loop saved (the question it was
# asked), and the mock's log (a request from agent-loop). Prints each outcome and its time.
# Not part of CI: it installs npm packages and takes a few minutes.
#
#   scripts/live-mcp-serve.sh [claude|codex|gemini|qwen|opencode ...]   (default: all five)
#
# Each CLI offers MCP tools its own way, and the mock answers each as the real API would:
# Codex inside a Responses API `namespace` tool (the call names the namespace), Qwen Code by
# name only until its `tool_search` loads them (the mock searches first). Claude Code's own
# ToolSearch is turned off with ENABLE_TOOL_SEARCH=false.
#
# The CLIs are installed (once) with npm into $LIVE_MCP_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-mcp); each run gets a throw-away HOME there
# whose settings point the CLI at the mock (live-common.sh).
# AGENT_LOOP names the binary to run (default: `cargo build`, then target/debug/agent-loop).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${LIVE_MCP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-mcp}
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=(claude codex gemini qwen opencode)

declare -A package=([gemini]=@google/gemini-cli@0.61.0 [qwen]=@qwen-code/qwen-code@0.24.4
  [claude]=@anthropic-ai/claude-code@2.1.337 [codex]=@openai/codex@0.171.0
  [opencode]=opencode-ai@1.18.33)

. scripts/live-common.sh
prepare

# What the server needs from the throw-away HOME: where its settings and sessions are, and the
# mock as its `openai` backend (a CLI may pass the server only part of its own environment).
server_env() {
  echo "HOME=$home" "XDG_CONFIG_HOME=$home/.config" "XDG_DATA_HOME=$home/.local/share" \
    "XDG_STATE_HOME=$home/.local/state" "XDG_CACHE_HOME=$home/.cache" \
    "OPENAI_API_KEY=mock-key" "OPENAI_BASE_URL=http://127.0.0.1:$port/v1"
}

# Adds the server to a settings.json (Gemini CLI's, Qwen Code's): the docs' entry, with the
# server's environment and `trust` (the CLI runs its tools without asking: `-p` cannot ask).
add_to_settings() {
  python3 - "$1" "$AGENT_LOOP" $(server_env) <<'PY'
import json, sys
path, program, env = sys.argv[1], sys.argv[2], dict(v.split("=", 1) for v in sys.argv[3:])
settings = json.load(open(path))
settings["mcpServers"] = {"agent-loop": {
    "command": program, "args": ["mcp", "serve", "--allow-backend", "openai"],
    "env": env, "trust": True, "timeout": 900000}}
json.dump(settings, open(path, "w"))
PY
}

# Adds the server to opencode.json: the docs' entry, with the server's environment.
add_to_opencode() {
  python3 - "$1" "$AGENT_LOOP" $(server_env) <<'PY'
import json, sys
path, program, env = sys.argv[1], sys.argv[2], dict(v.split("=", 1) for v in sys.argv[3:])
settings = json.load(open(path))
settings["mcp"] = {"agent-loop": {
    "type": "local", "command": [program, "mcp", "serve", "--allow-backend", "openai"],
    "enabled": True, "environment": env}}
json.dump(settings, open(path, "w"))
PY
}

# Runs the program "$1" with arguments "$@" in $work with the fresh HOME, stdin closed; sets
# $code, $seconds, $out and $err.
timed() {
  local start end
  start=$(date +%s.%N)
  set +e
  (cd "$work" && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache PATH=$bin:$PATH \
    exec "$@" </dev/null >"$run/stdout" 2>"$run/stderr")
  code=$?
  set -e
  end=$(date +%s.%N)
  seconds=$(python3 -c "print('%.1f' % ($end - $start))")
  out=$(cat "$run/stdout") err=$(cat "$run/stderr")
}

prompt="Ask agent-loop what six times seven is."
for cli in "${clis[@]}"; do
  echo "== $cli (${package[$cli]})"
  run=$dir/run/$cli
  rm -rf "$run"
  home=$run/home work=$run/work
  mkdir -p "$home/.config/agent-loop" "$work"
  start_mock ask
  envs=()
  for v in $(server_env); do envs+=("$v"); done
  case $cli in
    gemini)
      add_to_settings "$home/.gemini/settings.json"
      timed gemini -m gemini-2.5-flash -p "$prompt" ;;
    qwen)
      add_to_settings "$home/.qwen/settings.json"
      timed qwen -p "$prompt" ;;
    claude)
      e=()
      for v in "${envs[@]}"; do e+=(-e "$v"); done
      # `-e` takes several values: the name goes before it.
      timed claude mcp add agent-loop "${e[@]}" -- "$AGENT_LOOP" mcp serve --allow-backend openai
      check "claude mcp add" "$code"
      # Claude Code offers MCP tools through its ToolSearch unless told not to.
      ENABLE_TOOL_SEARCH=false timed claude -p "$prompt" --allowedTools mcp__agent-loop__ask ;;
    codex)
      e=()
      for v in "${envs[@]}"; do e+=(--env "$v"); done
      timed codex mcp add "${e[@]}" agent-loop -- "$AGENT_LOOP" mcp serve --allow-backend openai
      check "codex mcp add" "$code"
      # `codex exec` cannot ask, and refuses an MCP tool that changes things (as `ask`
      # says it does) unless the server's tools are approved in advance.
      sed -i '/^\[mcp_servers.agent-loop\]$/a default_tools_approval_mode = "approve"\
tool_timeout_sec = 900' "$home/.codex/config.toml"
      timed codex exec --skip-git-repo-check "$prompt" ;;
    opencode)
      add_to_opencode "$home/.config/opencode/opencode.json"
      timed opencode run "$prompt" ;;
  esac
  echo "answer: exit $code in ${seconds}s: $(tail -n 3 <<<"$out")"
  check "the CLI answered after the tool, its model shown agent-loop's answer" \
    "$([ "$code" = 0 ] && grep -q 'DONE asked: the answer reached the model' <<<"$out"; echo $?)"
  saved=$(cat "$home"/.local/share/agent-loop/sessions/*/session.json 2>/dev/null || true)
  check "agent-loop ran the turn and saved it" \
    "$(grep -q 'asked through agent-loop' <<<"$saved"; echo $?)"
  check "agent-loop's turn reached the mock (its openai preset)" \
    "$(grep -qi '"user-agent": *"agent-loop/' "$run/mock.log"; echo $?)"
  stop_mock
  [ "$code" = 0 ] || sed 's/^/  stderr: /' "$run/stderr" | tail -n 15
done
[ "$failures" = 0 ] && echo "live-mcp-serve: all checks held" || { echo "live-mcp-serve: $failures checks failed"; exit 1; }
