# shellcheck shell=bash disable=SC2154,SC2034
# (Sourced: the scripts that source it set the variables it reads and read those it sets.)
# What scripts/live-acp.sh and scripts/live-tui.sh share, sourced by both: installing the
# real CLIs, the mock model they point them at (with each CLI's settings in the throw-away
# HOME), running agent-loop in that HOME, and counting the checks.
# They set $dir, $clis, $package (and $command where a CLI's command is not its name) before
# install_clis, and $run, $work, $home before start_mock.

# Installs with npm into $dir/npm, in one go, the package of each CLI in $clis not there yet;
# sets $bin, where their commands are.
install_clis() {
  local cli missing=()
  declare -p command >/dev/null 2>&1 || declare -gA command=()
  for cli in "${clis[@]}"; do
    [ -n "${package[$cli]:-}" ] || { echo "$(basename "$0"): no such agent: $cli (${!package[*]})" >&2; exit 2; }
    [ -x "$dir/npm/node_modules/.bin/${command[$cli]:-$cli}" ] || missing+=("${package[$cli]}")
  done
  mkdir -p "$dir/npm"
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} into $dir/npm"
    npm install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error "${missing[@]}"
  fi
  bin=$dir/npm/node_modules/.bin
  for cli in "${clis[@]}"; do
    python3 scripts/record-fixtures/node_enough.py "$dir/npm" "${package[$cli]}" || exit 2
  done
}

mock_pid=
stop_mock() { if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; mock_pid=; fi; }

# Starts the mock model with SCENARIO (and any further mock_provider.py options) and points
# every CLI at it: the environment, and the settings files in $home (which also turn off
# each CLI's self-update and its traffic elsewhere). Sets $port.
start_mock() {
  local scenario=$1
  shift
  python3 scripts/record-fixtures/mock_provider.py --scenario "$scenario" --port 0 \
    --port-file "$run/port" --log "$run/mock.log" "$@" 2>/dev/null &
  mock_pid=$!
  for _ in $(seq 100); do [ -s "$run/port" ] && break; sleep 0.05; done
  port=$(cat "$run/port")
  local url=http://127.0.0.1:$port
  export OPENAI_BASE_URL=$url/v1 OPENAI_API_KEY=mock-key OPENAI_MODEL=mock-model
  export GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=mock-key GEMINI_CLI_TRUST_WORKSPACE=true
  export ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=mock-key CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
  # Claude Code refuses its permission bypass (the claude-acp preset's auto mode) to root
  # unless IS_SANDBOX is exactly 1.
  [ "$(id -u)" != 0 ] || export IS_SANDBOX=1
  export OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
  export CODEX_HOME=$home/.codex MOCK_API_KEY=mock-key
  mkdir -p "$home/.qwen" "$home/.gemini" "$home/.config/opencode" "$home/.codex"
  # qwen 0.15.10 reads general.enableAutoUpdate; without it, it updates itself with npm -g.
  echo '{"general":{"enableAutoUpdate":false,"disableAutoUpdate":true,"disableUpdateNag":true}}' \
    >"$home/.qwen/settings.json"
  echo '{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}' \
    >"$home/.gemini/settings.json"
  # opencode writes files without asking unless its permission says "ask".
  cat >"$home/.config/opencode/opencode.json" <<JSON
{"\$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
 "model": "mock/mock-model", "small_model": "mock/mock-model",
 "permission": {"edit": "ask", "bash": "ask"},
 "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
   "options": {"baseURL": "$url/v1", "apiKey": "mock-key"},
   "models": {"mock-model": {"name": "Mock Model"}}}}}
JSON
  # A model Codex knows: for others it sends a warning as the answer's first line.
  cat >"$home/.codex/config.toml" <<TOML
model = "gpt-5.4"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "$url/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
TOML
}

# Writes into $work the project settings of CLI $1 that start commands unasked, as a cloned
# repository's may: an MCP server and hooks (qwen, gemini), a local MCP server and a plugin
# (opencode), each appending its name to $run/project-ran when it runs. Sets $kept_off, a
# pattern of those the preset keeps from starting without --yes, $left, a note on those it
# cannot, and $refused when the preset is not started there at all (docs/acp.md, "A
# project's settings that run commands"). For qwen and gemini also a `.env` naming another
# provider's address, while the mock's is no longer in the environment but in the HOME's own
# `.env` (until the next start_mock): $address names the variable. gemini is not started
# where the project has hooks: without_hooks then takes them out for a run of the rest.
plant_project() {
  local ran=$run/project-ran
  left= refused= address= hooks_refused=
  case $1 in
  qwen | gemini)
    mkdir -p "$work/.$1"
    address=OPENAI_BASE_URL
    [ "$1" = qwen ] || address=GOOGLE_GEMINI_BASE_URL
    echo "$address=http://127.0.0.1:9" >"$work/.env"
    echo "$address=${!address}" >"$home/.$1/.env"
    unset "$address"
    python3 - "$work/.$1/settings.json" "$ran" "$1" <<'PY'
import json, shlex, sys
path, ran, cli = sys.argv[1:]
def run(what):
    return "echo %s >> %s" % (what, shlex.quote(ran))
def hook(what):
    return [{"hooks": [{"type": "command", "command": run(what)}]}]
prompt = "BeforeAgent" if cli == "gemini" else "UserPromptSubmit"
settings = {"mcpServers": {"x": {"command": "sh", "args": ["-c", run("mcp-server") + "; cat"]}},
            "hooks": {"SessionStart": hook("session-hook"), prompt: hook("prompt-hook")}}
json.dump(settings, open(path, "w"))
PY
    kept_off='mcp-server|hook'
    [ "$1" = qwen ] || refused=1 hooks_refused=1 ;;
  opencode)
    mkdir -p "$work/.opencode/plugin"
    printf '{"mcp": {"x": {"type": "local", "command": ["sh", "-c", "echo mcp-server >> %s; cat"]}}}\n' \
      "$ran" >"$work/opencode.json"
    printf 'import fs from "fs";\nfs.appendFileSync(%s, "plugin\\n");\nexport const P = async () => ({});\n' \
      "\"$ran\"" >"$work/.opencode/plugin/p.js"
    kept_off='mcp-server|plugin'
    [ "$preset" != opencode-acp ] || refused=1 ;;
  *) kept_off= ;;
  esac
}

# After a run refused for the hooks plant_project wrote (gemini): takes them out of the
# project's settings, so that a run of the same in that folder checks the rest; false where
# no run was refused so.
without_hooks() {
  [ -n "$hooks_refused" ] || return 1
  python3 - "$work/.gemini/settings.json" <<'PY'
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
del settings["hooks"]
json.dump(settings, open(path, "w"))
PY
  refused= hooks_refused=
  rm -f "$run/project-ran"
}

# A project whose settings start commands unasked, for CLI $1 through preset $2 asked $3:
# without --yes the preset's guard keeps them from starting (docs/acp.md, "A project's
# settings that run commands"); again without the hooks where those refused the start.
# Calls the sourcing script's `fresh`.
planted_project_kept_off() {
  fresh "$1" plain
  plant_project "$1"
  agent_loop --backend "$2" --display plain "$3"
  project_kept_off
  if without_hooks; then
    agent_loop --backend "$2" --display plain "$3"
    project_kept_off
  fi
}

# After a run in a folder plant_project wrote: prints what of the project ran, and checks
# that nothing agent-loop keeps from starting did.
project_kept_off() {
  local ran
  ran=$(sort -u "$run/project-ran" 2>/dev/null | tr '\n' ' ' || true)
  echo "a project's settings, without --yes: exit $code; of them ran: ${ran:-nothing}${left:+ (not kept off: $left)}"
  if [ -n "$refused" ]; then
    grep -m1 'not started: ' <<<"$err" | sed 's/^/  /' || true
    check "not started in that project: an error says why, nothing of it ran" \
      "$([ "$code" != 0 ] && grep -q 'not started: ' <<<"$err" && [ ! -s "$run/project-ran" ]; echo $?)"
    return
  fi
  check "the project's settings started nothing it keeps off" \
    "$([ "$code" = 0 ] && ! grep -Eqs "$kept_off" "$run/project-ran"; echo $?)"
  [ -z "$address" ] ||
    check "the project's .env did not name the provider's address ($address): the mock was asked" \
      "$([ "$code" = 0 ] && [ -s "$run/mock.log" ]; echo $?)"
}

# Runs agent-loop with arguments "$@" in $work with the fresh HOME, stdin closed, stderr in
# $run; meant for a subshell (it ends with exec).
run_in_home() {
  cd "$work" && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache PATH=$bin:$PATH \
    exec "$AGENT_LOOP" "$@" </dev/null 2>"$run/stderr"
}

# As run_in_home, stdout in $run too.
in_home() { run_in_home "$@" >"$run/stdout"; }

# Copies stdin to stdout and writes to stderr the seconds from the last byte to the end of
# stdin: in a pipe after agent-loop, from its answer's end to its exit (and to that of
# anything it left holding its stdout).
stamp() {
  python3 -c '
import os, sys, time
last = end = time.monotonic()
while True:
    data = os.read(0, 65536)
    end = time.monotonic()
    if not data:
        break
    last = end
    os.write(1, data)
print("%.2f" % (end - last), file=sys.stderr)'
}

# Runs agent-loop with arguments "$@" in the fresh HOME. Sets $code, $seconds, $out
# (stdout), $err (stderr) and $after (the seconds from the end of its answer to its exit).
agent_loop() {
  local start end
  start=$(date +%s.%N)
  set +e
  (run_in_home "$@") | stamp >"$run/stdout" 2>"$run/after"
  code=${PIPESTATUS[0]}
  set -e
  end=$(date +%s.%N)
  seconds=$(python3 -c "print('%.1f' % ($end - $start))")
  out=$(cat "$run/stdout") err=$(cat "$run/stderr") after=$(cat "$run/after")
}

# After an answer of agent_loop: checks the time from its end to agent-loop's exit, then runs
# agent-loop with "$@" and --debug, and checks that stdout is the same.
exit_and_debug() {
  local answer=$out
  echo "exit after the answer: ${after}s"
  check "agent-loop exits within 1 s of the answer's end" "$(within "$after" 1; echo $?)"
  agent_loop --debug "$@"
  echo "with --debug: exit $code in ${seconds}s, $(wc -l <"$run/stderr") lines on stderr"
  check "stdout is the same with --debug" "$([ "$code" = 0 ] && [ "$out" = "$answer" ]; echo $?)"
}

# Whether $1 (seconds) is at most $2.
within() { python3 -c "import sys; sys.exit(not $1 <= $2)"; }

failures=0
check() { # $1: what, $2: 0 if it held
  if [ "$2" = 0 ]; then echo "  ok: $1"; else echo "  FAILED: $1"; failures=$((failures + 1)); fi
}

# What every live script does first: installs the CLIs, builds agent-loop unless $AGENT_LOOP
# names a binary, and stops the mock when the script exits.
prepare() {
  install_clis
  if [ -z "${AGENT_LOOP:-}" ]; then
    cargo build --quiet
    AGENT_LOOP=$root/target/debug/agent-loop
  fi
  trap stop_mock EXIT
}
