#!/usr/bin/env bash
# The `gemini-tui` and `qwen-tui` presets on the real TUIs, against the scripted mock
# provider on 127.0.0.1 (scripts/record-fixtures/mock_provider.py): an answer, the TUI's own
# clean-up run to its end when it was closed, the time from the answer's end to agent-loop's
# exit, and the same stdout with --debug; a project whose settings start an MCP server and
# hooks, which start nothing without --yes (gemini is not started for its hooks: then again
# without them), and whose
# `.env` names another provider's address, not taken (the HOME's own `.env` names the mock's); a shell
# command allowed (--yes), then refused by a
# run without --yes in the same HOME and folder (nothing the TUI kept of the --yes run widens
# it), one denied in a fresh HOME (exit 4, `[not done` on stderr), one too long for a row
# denied (its note quotes the command whole, or says it is cut), one taller than the screen
# (said to be cut), and one its own settings
# allow (gemini's `tools.allowed`, qwen's `permissions.allow`), refused all the same without
# --yes (the preset's guard, docs/acp.md), each through agent-loop; then `doctor` for each,
# and the TUI's own answer time measured on a screen recording (record-pty.py --measure).
# Prints the timings. Not part of CI: it installs two npm packages and takes several minutes.
#
#   scripts/live-tui.sh [gemini|qwen ...]
#
# The CLIs are installed (once) with npm into $LIVE_TUI_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-tui); each run gets a throw-away HOME
# there whose settings turn the CLI's self-update off (qwen: general.enableAutoUpdate).
# AGENT_LOOP names the binary to run (default: `cargo build`, then target/debug/agent-loop).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${LIVE_TUI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-loop/live-tui}
clis=("$@")
[ ${#clis[@]} -gt 0 ] || clis=(gemini qwen)

declare -A package=([gemini]=@google/gemini-cli@0.61.0 [qwen]=@qwen-code/qwen-code@0.24.4)

. scripts/live-common.sh
prepare

# A fresh HOME and working folder for CLI $1, the mock on scenario $2 (and the mock options
# that follow); sets $run, $home,
# $work and exports the CLI's provider settings (start_mock). The CLI's SessionEnd hook, the
# last of the clean-up it runs when it quits, appends a line to $run/session-ended.
fresh() {
  local cli=$1 scenario=$2
  shift 2
  stop_mock
  run=$dir/run/$cli-$scenario
  rm -rf "$run"
  home=$run/home work=$run/work
  mkdir -p "$work"
  start_mock "$scenario" "$@"
  python3 - "$home/.$cli/settings.json" "$run/session-ended" <<'PY'
import json, shlex, sys
path, mark = sys.argv[1:]
with open(path) as f:
    settings = json.load(f)
hook = {"type": "command", "command": "echo ended >> " + shlex.quote(mark)}
settings["hooks"] = {"SessionEnd": [{"hooks": [hook]}]}
with open(path, "w") as f:
    json.dump(settings, f)
PY
}


ask="What is six times seven? Answer in one short sentence."
touch_it="Create the file made.txt with touch."
for cli in "${clis[@]}"; do
  preset=$cli-tui
  echo "== $preset ($("$bin/$cli" --version 2>/dev/null </dev/null | tail -1))"

  # qwen's guard turns every hook off, the user's too (docs/acp.md): its clean-up is seen
  # through the SessionEnd hook under --yes only.
  yes=()
  [ "$cli" != qwen ] || yes=(--yes)
  fresh "$cli" plain
  agent_loop --backend "$preset" --display plain "${yes[@]}" "$ask"
  echo "answer: exit $code in ${seconds}s: $out"
  check "the answer is the model's text" "$([ "$code" = 0 ] && [ "$out" = "The answer is 42." ]; echo $?)"
  check "the TUI's clean-up ran to its end (its SessionEnd hook ran)" "$([ -s "$run/session-ended" ]; echo $?)"
  exit_and_debug --backend "$preset" --display plain "$ask"

  planted_project_kept_off "$cli" "$preset" "$ask"

  fresh "$cli" shell
  agent_loop --backend "$preset" --display plain --yes "$touch_it"
  echo "allowed: exit $code in ${seconds}s: $out"
  check "allowed: the command ran and only the model's text is the answer" \
    "$([ "$code" = 0 ] && [ "$out" = "DONE touched" ] && [ -e "$work/made.txt" ]; echo $?)"
  # The same HOME and folder, without --yes: whatever the TUI kept of the --yes run, it
  # asks, and in a pipe that is a refusal.
  rm -f "$work/made.txt"
  agent_loop --backend "$preset" --display plain "$touch_it"
  echo "then without --yes: exit $code in ${seconds}s: $(grep -m1 '^\[not done' <<<"$err")"
  check "without --yes after --yes: refused, exit 4, nothing ran" \
    "$([ "$code" = 4 ] && [ ! -e "$work/made.txt" ] && grep -q '^\[not done' <<<"$err"; echo $?)"

  fresh "$cli" shell
  agent_loop --backend "$preset" --display plain "$touch_it"
  echo "denied: exit $code in ${seconds}s: $(grep -m1 '^error:' <<<"$err" | cut -d';' -f1)"
  grep '^\[not done' <<<"$err" | sed 's/^/  /' || true
  check "denied: nothing ran, no answer, exit 4, and stderr says so" \
    "$([ "$code" = 4 ] && [ -z "$out" ] && [ ! -e "$work/made.txt" ] && grep -q 'was denied' <<<"$err" &&
      grep -q '^\[not done' <<<"$err"; echo $?)"

  # A command too long for a row, denied in a pipe: the note quotes what was asked, whole
  # (gemini, qwen 0.24), or says it is cut (qwen 0.15 clips the rows it wraps).
  long=$(cd scripts/record-fixtures && python3 -c 'from mock_tools import LONG_COMMAND; print(LONG_COMMAND)')
  fresh "$cli" shell --shell-command "$long"
  agent_loop --backend "$preset" --display plain "$touch_it"
  asked=$(grep -m1 '(approval of' <<<"$err" || true)
  echo "a long command, denied: exit $code: ${asked:0:160}..."
  whole="(approval of $long: denied"
  cut='(approval of [cut: '
  [ "$cli" = qwen ] || cut=$whole
  check "a long command: asked about whole, or said to be cut; denied, nothing ran" \
    "$([ "$code" = 4 ] && [ ! -e "$work/made.txt" ] && { grep -qF "$whole" <<<"$asked" ||
      grep -qF "$cut" <<<"$asked"; }; echo $?)"

  # A command taller than the screen, without --yes: said to be cut (gemini hides its first
  # rows), or denied unread (qwen's question is taller than the screen); nothing ran.
  tall=$(cd scripts/record-fixtures && python3 -c 'from mock_tools import TALL_COMMAND; print(TALL_COMMAND)')
  fresh "$cli" shell --shell-command "$tall"
  agent_loop --backend "$preset" --display plain "$touch_it"
  asked=$(grep -m1 '(approval of' <<<"$err" || true)
  echo "a command taller than the screen: exit $code: ${asked:0:160}..."
  check "a command taller than the screen: said to be cut, nothing ran" \
    "$([ "$code" != 0 ] && [ ! -e "$work/made.txt" ] && grep -qF '(approval of [cut: ' <<<"$asked"; echo $?)"

  # Its own settings allow the command: without --yes, refused all the same.
  fresh "$cli" shell
  python3 - "$home/.$cli/settings.json" <<'PY'
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
if ".gemini" in path:
    settings["tools"] = {"allowed": ["run_shell_command"]}
else:
    # And its default mode yolo, which asks nothing whatever the ask rules say.
    settings["permissions"] = {"allow": ["Bash"]}
    settings["tools"] = {"approvalMode": "yolo"}
json.dump(settings, open(path, "w"))
PY
  agent_loop --backend "$preset" --display plain "$touch_it"
  echo "allowed by its own settings, without --yes: exit $code in ${seconds}s"
  check "its settings allow the command (qwen: in yolo mode): refused all the same, exit 4, nothing ran" \
    "$([ "$code" = 4 ] && [ ! -e "$work/made.txt" ]; echo $?)"

  fresh "$cli" plain
  agent_loop doctor "$preset"
  echo "doctor: exit $code in ${seconds}s"
  grep -E '^(start|ready|taken|done|warning):' <<<"$out" | sed 's/^/  /'
  check "doctor reached done" "$(grep -q '^done: *[0-9]' <<<"$out"; echo $?)"

  fresh "$cli" plain
  echo "the TUI itself, on a screen recording:"
  REC_TMP=$run python3 scripts/record-fixtures/record-pty.py --measure "$cli" "$bin/$cli" | sed 's/^/  /'
done
stop_mock
if [ "$failures" != 0 ]; then
  echo "live-tui: $failures checks failed"
  exit 1
fi
echo "live-tui: all checks held"
