#!/usr/bin/env bash
# Record byte-exact stdout, stderr and exit codes of real agent CLIs run
# against the scripted mock provider (mock_provider.py) on 127.0.0.1.
#
#   scripts/record-fixtures/record.sh                 # install if needed, record all
#   scripts/record-fixtures/record.sh claude codex    # only these CLIs
#   NO_INSTALL=1 scripts/record-fixtures/record.sh    # use what .cache/ has
#   PIECE_DELAY=1 REC_OUT=/var/tmp/timing scripts/record-fixtures/record.sh codex
#                                                     # when does stdout come? (see below)
#
# Writes fixtures/<cli>/<scenario>.{stdout,stderr,rc}, fixtures/<cli>/VERSION
# and fixtures/<cli>/COMMAND. CLIs are installed into scripts/record-fixtures/.cache/
# (npm prefixes and Python venvs, ignored by git), never globally. Each run gets
# a fresh HOME and config folder under $REC_TMP (default /var/tmp/agent-loop-rec), so
# the real home is never read or written. stdin is /dev/null, or the prompt where the
# preset passes it on stdin.
#
# The preset scenarios (json, error-json, model, big, and every aider and llm one) run the
# exact command line of the preset in backends.toml (`args`, `loop_args`, `model_args`,
# `env`; see preset.py), so re-recording follows the presets. The others run the CLI's own
# text mode, as a user would type it.
#
# The mock's request log for each run is kept in $CACHE/logs/<cli>-<scenario>.log, and a
# summary (endpoint, model, tools the CLI declared) in fixtures/<cli>/<scenario>.requests.
# REC_CACHE=DIR installs and keeps the CLIs in DIR instead of .cache.
#
# Timing mode: PIECE_DELAY=S makes the mock send the pieces of its streamed answers S seconds
# apart, and writes beside each stdout a <scenario>.timing file: when each read of the CLI's
# stdout came, in seconds since it started, and when it closed (stamp.py). A CLI that prints
# its answer as it comes has reads spread over the pieces; one that prints it whole, none
# before the last piece. REC_OUT=DIR writes the recordings there instead of fixtures/ (the
# paced runs are no fixtures).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${REC_CACHE:-$HERE/.cache}
FIXTURES=${REC_OUT:-$ROOT/fixtures}
PIECE_DELAY=${PIECE_DELAY:-0}
# Not under /tmp: codex refuses to set up its helper files below the temp dir.
REC_TMP=${REC_TMP:-/var/tmp/agent-loop-rec}
TIMEOUT=${TIMEOUT:-120}
PY=${PYTHON:-python3}
# The runs get a PATH of their own: the node on this one goes in it (qwen-code 0.24 and
# claude-code 2.1.337 need Node 22, which may not be the system's: put its bin folder first
# on PATH; node_enough.py says so when the node found is too old).
NODE_DIR=$(dirname "$(command -v node 2>/dev/null || echo /usr/bin/node)")
case $NODE_DIR in /usr/bin | /usr/local/bin | /bin) NODE_DIR= ;; *) NODE_DIR=$NODE_DIR: ;; esac

# ---- pinned versions --------------------------------------------------------
declare -A NPM_PKG=(
  [claude]=@anthropic-ai/claude-code@2.1.337  # needs Node 22 (see below)
  [codex]=@openai/codex@0.169.0
  [gemini]=@google/gemini-cli@0.61.0
  [qwen]=@qwen-code/qwen-code@0.24.4    # needs Node 22 (see below)
  [opencode]=opencode-ai@1.18.33
  [crush]=@charmland/crush@0.96.1       # postinstall downloads from GitHub: fails here
)
declare -A PIP_PKG=(
  [llm]="llm==0.30 httpx"   # llm 0.30 imports httpx, which today's openai no longer brings
  [aider]=aider-chat==0.86.2
)
ALL_CLIS=(claude codex gemini qwen llm aider opencode crush)

PROMPT_PLAIN="What is six times seven? Answer in one short sentence."
PROMPT_TOOL="Show the text hi by running echo hi in the shell."

log() { printf '[record] %s\n' "$*" >&2; }

# ---- installation -----------------------------------------------------------
bin_of() {  # path of a CLI's executable inside .cache
  case $1 in
    llm) echo "$CACHE/venv-llm/bin/llm" ;;
    aider) echo "$CACHE/venv-aider/bin/aider" ;;
    *) echo "$CACHE/npm/$1/node_modules/.bin/$1" ;;
  esac
}

install_cli() {
  local cli=$1 bin
  bin=$(bin_of "$cli")
  if [[ -n ${NPM_PKG[$cli]:-} ]]; then
    local want=${NPM_PKG[$cli]} stamp="$CACHE/npm/$cli/.installed"
    if [[ -x $bin && -f $stamp && $(cat "$stamp") == "$want" ]]; then return 0; fi
    [[ -n ${NO_INSTALL:-} ]] && { log "$cli: not installed"; return 1; }
    log "$cli: npm install $want"
    rm -rf "$CACHE/npm/$cli"; mkdir -p "$CACHE/npm/$cli"
    npm install --prefix "$CACHE/npm/$cli" --no-audit --no-fund --loglevel=error "$want" \
      >"$CACHE/npm/$cli.install.log" 2>&1 || { log "$cli: install failed, see $CACHE/npm/$cli.install.log"; return 1; }
    echo "$want" >"$stamp"
  else
    local want=${PIP_PKG[$cli]} venv="$CACHE/venv-$cli" stamp="$CACHE/venv-$cli/.installed"
    if [[ -x $bin && -f $stamp && $(cat "$stamp") == "$want" ]]; then return 0; fi
    [[ -n ${NO_INSTALL:-} ]] && { log "$cli: not installed"; return 1; }
    log "$cli: pip install $want"
    rm -rf "$venv"
    "$PY" -m venv "$venv" && "$venv/bin/pip" install -q $want >"$CACHE/venv-$cli.install.log" 2>&1 \
      || { log "$cli: install failed, see $CACHE/venv-$cli.install.log"; return 1; }
    echo "$want" >"$stamp"
  fi
}

# ---- mock provider ----------------------------------------------------------
MOCK_PID=
PORT=
start_mock() {  # start_mock SCENARIO LOGFILE
  local pf="$RUN_DIR/port"
  rm -f "$pf"
  "$PY" "$HERE/mock_provider.py" --scenario "$1" --port 0 --port-file "$pf" --log "$2" \
    --piece-delay "$PIECE_DELAY" 2>>"$2" &
  MOCK_PID=$!
  for _ in $(seq 100); do [[ -s $pf ]] && break; sleep 0.05; done
  PORT=$(cat "$pf")
}
stop_mock() {
  [[ -n $MOCK_PID ]] && kill "$MOCK_PID" 2>/dev/null && wait "$MOCK_PID" 2>/dev/null
  MOCK_PID=
}
trap stop_mock EXIT

# ---- per-CLI setup: fills ENV_VARS (K=V) and CMD (argv) for MODE -----------
# MODE is plain, json (the JSON output flag) or usage (llm -u).
# Runs with HOME=$H and cwd=$W (both empty folders), mock at 127.0.0.1:$PORT.
# Config files written here are listed in CONFIG_FILES for the COMMAND file.
setup_claude() {
  ENV_VARS+=(ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=mock-key
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
    DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
    CLAUDE_CODE_MAX_RETRIES=2)  # the error scenarios would otherwise retry for minutes
  CMD=(claude -p "$PROMPT")
}

setup_codex() {
  mkdir -p "$H/.codex"
  cat >"$H/.codex/config.toml" <<EOF
model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$PORT/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
EOF
  CONFIG_FILES+=("$H/.codex/config.toml")
  ENV_VARS+=(CODEX_HOME="$H/.codex" MOCK_API_KEY=mock-key)
  CMD=(codex exec --skip-git-repo-check "$PROMPT")
}

setup_gemini() {
  mkdir -p "$H/.gemini"
  echo '{"security":{"auth":{"selectedType":"gemini-api-key"}}}' >"$H/.gemini/settings.json"
  CONFIG_FILES+=("$H/.gemini/settings.json")
  ENV_VARS+=(GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_API_KEY=mock-key
    GEMINI_CLI_TRUST_WORKSPACE=true)
  CMD=(gemini -m gemini-2.5-flash -p "$PROMPT")
}

setup_qwen() {
  # No self-update from npm when it starts.
  mkdir -p "$H/.qwen"
  echo '{"general":{"enableAutoUpdate":false,"disableAutoUpdate":true,"disableUpdateNag":true}}' \
    >"$H/.qwen/settings.json"
  CONFIG_FILES+=("$H/.qwen/settings.json")
  ENV_VARS+=(OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=mock-key
    OPENAI_MODEL=mock-model)
  CMD=(qwen -p "$PROMPT")
}

setup_llm() {
  local d="$H/llm"
  mkdir -p "$d"
  cat >"$d/extra-openai-models.yaml" <<EOF
- model_id: mock
  model_name: mock-model
  api_base: http://127.0.0.1:$PORT/v1
  api_key_name: mock
EOF
  echo '{"mock": "mock-key"}' >"$d/keys.json"
  CONFIG_FILES+=("$d/extra-openai-models.yaml" "$d/keys.json")
  ENV_VARS+=(LLM_USER_PATH="$d")
  MODEL=mock  # every llm scenario runs the preset (`llm -u -m mock`)
}

setup_aider() {
  mkdir -p "$H/.aider/caches"
  # A non-empty price list stops aider from downloading one (an empty {} does not),
  # and gives the model prices so the usage line has its "Cost:" part.
  cat >"$H/.aider/caches/model_prices_and_context_window.json" <<'JSON'
{"mock-model": {"litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000,
 "max_output_tokens": 16384, "max_tokens": 16384,
 "input_cost_per_token": 0.000003, "output_cost_per_token": 0.000015}}
JSON
  # Analytics question already answered: no notice printed.
  echo '{"uuid": "00000000-0000-4000-8000-000000000000", "permanently_disable": true, "asked_opt_in": true}' \
    >"$H/.aider/analytics.json"
  CONFIG_FILES+=("$H/.aider/caches/model_prices_and_context_window.json" "$H/.aider/analytics.json")
  # Every aider scenario runs the preset; the provider comes from the environment.
  ENV_VARS+=(OPENAI_API_BASE="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=mock-key)
  MODEL=openai/mock-model
}

setup_opencode() {
  mkdir -p "$H/.config/opencode"
  cat >"$H/.config/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "mock/mock-model",
  "small_model": "mock/mock-model",
  "provider": {
    "mock": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Mock",
      "options": { "baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "mock-key" },
      "models": { "mock-model": { "name": "Mock Model" }, "other-model": { "name": "Other Model" } }
    }
  }
}
EOF
  CONFIG_FILES+=("$H/.config/opencode/opencode.json")
  ENV_VARS+=(OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1
    OPENCODE_DISABLE_LSP_DOWNLOAD=1 XDG_CONFIG_HOME="$H/.config"
    XDG_CACHE_HOME="$H/.cache" XDG_DATA_HOME="$H/.local/share" XDG_STATE_HOME="$H/.local/state")
  CMD=(opencode run "$PROMPT")
}

setup_crush() {
  mkdir -p "$H/.config/crush"
  cat >"$H/.config/crush/crush.json" <<EOF
{
  "providers": {
    "mock": {
      "type": "openai",
      "base_url": "http://127.0.0.1:$PORT/v1",
      "api_key": "mock-key",
      "models": [{ "id": "mock-model", "name": "Mock Model",
                   "context_window": 128000, "default_max_tokens": 4096 }]
    }
  },
  "models": { "large": { "model": "mock-model", "provider": "mock" },
              "small": { "model": "mock-model", "provider": "mock" } }
}
EOF
  CONFIG_FILES+=("$H/.config/crush/crush.json")
  ENV_VARS+=(CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1 XDG_CONFIG_HOME="$H/.config"
    XDG_DATA_HOME="$H/.local/share")
  CMD=(crush run "$PROMPT")
}

# Scenarios: plain (an answer), toolcall (an answer with a <tool_call> line),
# json (the preset's command line: its JSON output mode), toolcall-json (claude, gemini: the
# same with the toolcall reply, whose pieces stream up to the call's markup), error (the provider answers
# every request with its 401 / bad-key error), error-json (the same through the preset),
# model (the preset given a model: its model_args), big (the preset with a prompt over
# 128 KiB on stdin), long (aider: a long prompt, so its own token count passes 1000) and
# git-repo (aider in a git repository whose files the reply names).
scenarios_of() {
  case $1 in
    llm) echo plain toolcall error ;;
    aider) echo plain toolcall long error git-repo ;;   # long: >1000 tokens, shown as "2.1k"
    crush) echo plain toolcall error ;;
    gemini) echo plain toolcall json toolcall-json error error-json model big ;;
    qwen) echo plain toolcall json error error-json model big ;;
    claude) echo plain toolcall json toolcall-json error error-json model ;;
    *) echo plain toolcall json error error-json model ;;
  esac
}

# The model the `model` scenario gives each preset (the mock answers any).
model_for() {
  case $1 in
    claude) echo claude-sonnet-4-5 ;;
    gemini) echo gemini-2.5-flash ;;
    opencode) echo mock/other-model ;;
    *) echo other-model ;;
  esac
}

# Whether SCENARIO of CLI runs the preset's own command line.
is_preset() {
  case $1:$2 in
    aider:* | llm:* | *:json | *:toolcall-json | *:error-json | *:model | *:big) return 0 ;;
  esac
  return 1
}

# What is in the working folder (and its git status): written before and after a run.
tree_of() {
  (cd "$1" && find . -path ./.git -prune -o -print | LC_ALL=C sort
    [[ -d .git ]] && { echo "# git status:"; git status --porcelain --ignored; })
}

# ---- one run ----------------------------------------------------------------
shell_quote() { local out=() a; for a in "$@"; do out+=("$(printf '%q' "$a")"); done; echo "${out[*]}"; }

record_one() {  # record_one CLI SCENARIO
  local cli=$1 scen=$2 out="$FIXTURES/$1" mock_scen=$2 mode=plain
  case $scen in
    long | model | big) mock_scen=plain ;;
    json) mode=json ;;
    toolcall-json) mock_scen=toolcall mode=json ;;
    error) mock_scen=error401 ;;
    error-json) mock_scen=error401 mode=json ;;
    git-repo) mock_scen=mention ;;
  esac
  RUN_DIR="$REC_TMP/$cli-$scen"
  rm -rf "$RUN_DIR"; mkdir -p "$RUN_DIR/home" "$RUN_DIR/work" "$RUN_DIR/tmp" "$CACHE/logs" "$out"
  H="$RUN_DIR/home"; W="$RUN_DIR/work"
  local mlog="$CACHE/logs/$cli-$scen.log"
  : >"$mlog"
  start_mock "$mock_scen" "$mlog"
  PROMPT=$PROMPT_PLAIN
  [[ $scen == toolcall* ]] && PROMPT=$PROMPT_TOOL
  [[ $scen == long ]] && PROMPT="$(printf 'Here is some context you may ignore. %.0s' $(seq 120))$PROMPT_PLAIN"
  # 140 KB: over the 128 KiB a single argument may have on Linux.
  [[ $scen == big ]] && PROMPT="$(printf 'Here is some context you may ignore. %.0s' $(seq 3800))$PROMPT_PLAIN"
  if [[ $scen == git-repo ]]; then
    printf 'hello\n' >"$W/a.txt"; printf 'notes\n' >"$W/notes.md"
    (cd "$W" && git init -q && git add . && git -c user.name=rec -c user.email=rec@localhost commit -qm init)
  fi
  local bindir; bindir=$(dirname "$(bin_of "$cli")")
  ENV_VARS=(PATH="$bindir:$NODE_DIR/usr/local/bin:/usr/bin:/bin" HOME="$H" USER=root
    LANG=C.UTF-8 TERM=xterm-256color TMPDIR="$RUN_DIR/tmp")
  CONFIG_FILES=()
  CMD=()
  MODEL=
  STDIN=/dev/null
  "setup_$cli" "$mode"
  if is_preset "$cli" "$scen"; then
    [[ $scen == model ]] && MODEL=$(model_for "$cli")
    local args=() a kv
    mkdir -p "$RUN_DIR/guard"
    export GUARD_FILE
    GUARD_FILE=$("$PY" "$HERE/preset.py" guard-file "$cli" "$RUN_DIR/guard")
    [[ -z $GUARD_FILE ]] || CONFIG_FILES+=("$GUARD_FILE")
    mapfile -t args < <("$PY" "$HERE/preset.py" args "$cli" "$MODEL")
    while IFS= read -r kv; do ENV_VARS+=("$kv"); done < <("$PY" "$HERE/preset.py" env "$cli")
    printf '%s' "$PROMPT" >"$RUN_DIR/prompt.txt"
    if [[ $("$PY" "$HERE/preset.py" stdin "$cli") == yes ]]; then
      STDIN=$RUN_DIR/prompt.txt
    fi
    CMD=("$cli")
    for a in "${args[@]}"; do
      a=${a//\{prompt_file\}/$RUN_DIR/prompt.txt}
      CMD+=("${a//\{prompt\}/$PROMPT}")
    done
  fi
  tree_of "$W" >"$RUN_DIR/tree.before"
  # Config files as they are before the run (some CLIs rewrite theirs).
  local f cfg=""
  for f in "${CONFIG_FILES[@]}"; do
    cfg+="# file $f:"$'\n'"$(sed 's/^/#   /' "$f")"$'\n'
  done
  log "$cli $scen: ${CMD[*]:0:3} ... (port $PORT)"
  if [[ $PIECE_DELAY == 0 ]]; then
    (cd "$W" && exec env -i "${ENV_VARS[@]}" timeout -k 5 "$TIMEOUT" "${CMD[@]}" \
      <"$STDIN" >"$out/$scen.stdout" 2>"$out/$scen.stderr")
    echo $? >"$out/$scen.rc"
  else
    (cd "$W" && exec env -i "${ENV_VARS[@]}" timeout -k 5 "$TIMEOUT" "${CMD[@]}" \
      <"$STDIN" 2>"$out/$scen.stderr") \
      | "$PY" "$HERE/stamp.py" "$out/$scen.timing" >"$out/$scen.stdout"
    echo "${PIPESTATUS[0]}" >"$out/$scen.rc"
  fi
  stop_mock
  "$PY" "$HERE/requests.py" "$mlog" >"$out/$scen.requests"
  # A preset must leave the working folder as it found it.
  if is_preset "$cli" "$scen"; then
    tree_of "$W" >"$out/$scen.tree"
    cmp -s "$RUN_DIR/tree.before" "$out/$scen.tree" || log "$cli $scen: CHANGED the working folder"
  fi
  log "$cli $scen: rc=$(cat "$out/$scen.rc") stdout=$(wc -c <"$out/$scen.stdout")B stderr=$(wc -c <"$out/$scen.stderr")B"
  {
    echo "# scenario: $scen (mock scenario: $mock_scen)"
    [[ $STDIN != /dev/null ]] && echo "# stdin: the prompt ($(wc -c <"$STDIN") bytes)"
    [[ $scen == git-repo ]] && echo "# the working folder: a git repository, a.txt and notes.md committed"
    local cmdline
    cmdline="cd $(printf '%q' "$W") && env -i $(shell_quote "${ENV_VARS[@]}") $(shell_quote "${CMD[@]}") <$STDIN"
    # The big prompt is not written out.
    [[ $scen == big ]] && cmdline=${cmdline//$(printf '%q' "$PROMPT")/PROMPT_OF_140_KB}
    echo "$cmdline"
    printf '%s\n' "$cfg"
  } | sed "s/127\.0\.0\.1:$PORT/127.0.0.1:PORT/g" >>"$out/COMMAND.tmp"
}

record_cli() {
  local cli=$1
  install_cli "$cli" || return 1
  if [[ -n ${NPM_PKG[$cli]:-} ]]; then
    "$PY" "$HERE/node_enough.py" "$CACHE/npm/$cli" "${NPM_PKG[$cli]}" || return 1
  fi
  local out="$FIXTURES/$cli"
  mkdir -p "$out"
  rm -f "$out/COMMAND.tmp"
  {
    echo "# $cli, recorded by scripts/record-fixtures/record.sh against mock_provider.py"
    echo "# package: ${NPM_PKG[$cli]:-${PIP_PKG[$cli]:-}}; node $(node --version 2>/dev/null); $("$PY" --version 2>&1)"
    echo "# PATH's first entry is the CLI's install folder: $(dirname "$(bin_of "$cli")" | sed "s#^$ROOT/##")"
    echo
  } >"$out/COMMAND.tmp"
  local scen
  for scen in $(scenarios_of "$cli"); do record_one "$cli" "$scen"; done
  # Paths inside the repo are shown relative to it.
  # (and a REC_CACHE elsewhere as the default .cache).
  sed -e "s#$CACHE/#scripts/record-fixtures/.cache/#g" -e "s#$ROOT/##g" "$out/COMMAND.tmp" >"$out/COMMAND"
  rm -f "$out/COMMAND.tmp"
  rm -rf "$REC_TMP/version"; mkdir -p "$REC_TMP/version/home" "$REC_TMP/version/tmp"
  (cd "$REC_TMP/version" && env -i PATH="$(dirname "$(bin_of "$cli")"):$NODE_DIR/usr/bin:/bin" \
    HOME="$REC_TMP/version/home" TMPDIR="$REC_TMP/version/tmp" \
    timeout 30 "$(bin_of "$cli")" --version </dev/null 2>&1 | head -n 3) >"$out/VERSION"
}

main() {
  local clis=("$@")
  [[ ${#clis[@]} -eq 0 ]] && clis=("${ALL_CLIS[@]}")
  mkdir -p "$CACHE" "$REC_TMP"
  local cli failed=()
  for cli in "${clis[@]}"; do
    declare -F "setup_$cli" >/dev/null || { log "unknown CLI $cli"; failed+=("$cli"); continue; }
    record_cli "$cli" || failed+=("$cli")
  done
  [[ ${#failed[@]} -gt 0 ]] && log "not recorded: ${failed[*]} (see fixtures/README.md)"
  return 0
}

main "$@"
