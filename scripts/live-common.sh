# What scripts/live-acp.sh and scripts/live-tui.sh share, sourced by both: the mock model they
# point the real CLIs at, running agent-loop in the fresh HOME, and counting the checks.
# They set $run, $work, $home, $bin and $AGENT_LOOP before calling these.

mock_pid=
stop_mock() { if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; mock_pid=; fi; }

# Starts the mock model with SCENARIO (and any further mock_provider.py options) and points
# both CLIs' environment at it.
start_mock() {
  local scenario=$1
  shift
  python3 scripts/record-fixtures/mock_provider.py --scenario "$scenario" --port 0 \
    --port-file "$run/port" --log "$run/mock.log" "$@" 2>/dev/null &
  mock_pid=$!
  for _ in $(seq 100); do [ -s "$run/port" ] && break; sleep 0.05; done
  local port; port=$(cat "$run/port")
  export OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=mock-key OPENAI_MODEL=mock-model
  export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$port GEMINI_API_KEY=mock-key GEMINI_CLI_TRUST_WORKSPACE=true
}

# Runs agent-loop with arguments "$@" in the fresh HOME. Sets $code, $seconds, $out
# (stdout) and $err (stderr).
agent_loop() {
  local start end
  start=$(date +%s.%N)
  set +e
  (cd "$work" && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_DATA_HOME=$home/.local/share \
    XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache PATH=$bin:$PATH \
    "$AGENT_LOOP" "$@" </dev/null >"$run/stdout" 2>"$run/stderr")
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
