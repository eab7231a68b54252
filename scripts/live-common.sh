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

# Runs agent-loop with arguments "$@" in $work with the fresh HOME, stdin closed, its output
# in $run; meant for a subshell (it ends with exec).
in_home() {
  cd "$work" && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache PATH=$bin:$PATH \
    exec "$AGENT_LOOP" "$@" </dev/null >"$run/stdout" 2>"$run/stderr"
}

# Runs agent-loop with arguments "$@" in the fresh HOME. Sets $code, $seconds, $out
# (stdout) and $err (stderr).
agent_loop() {
  local start end
  start=$(date +%s.%N)
  set +e
  (in_home "$@")
  code=$?
  set -e
  end=$(date +%s.%N)
  seconds=$(python3 -c "print('%.1f' % ($end - $start))")
  out=$(cat "$run/stdout") err=$(cat "$run/stderr")
}

failures=0
check() { # $1: what, $2: 0 if it held
  if [ "$2" = 0 ]; then echo "  ok: $1"; else echo "  FAILED: $1"; failures=$((failures + 1)); fi
}
