#!/usr/bin/env bash
# Whole-process performance figures for docs/performance.md, against the targets there: builds release,
# then measures with hyperfine (wall time) and /usr/bin/time -v (peak memory), each paired
# with its peer or floor where one exists, and prints a Markdown table (also written to
# target/bench.md). In-process figures come from `cargo bench` (benches/parse.rs,
# benches/context.rs, benches/web.rs: the last has a target, so its figures are in the table;
# the benches that run the built binary, such as benches/view.rs and benches/stream_latency.rs,
# print their figures against their targets themselves).
# Options: --clean-build also times a release build from scratch; --install installs the
# missing measuring tools with apt-get (without it, the script names them and stops) and
# downloads the real page below (without it, that row is left out). No apt-get otherwise.
#
# `--compare A B` compares two builds instead (scripts/bench-compare.py: paired rounds in
# random order against floors, medians of the paired differences with 95 % intervals,
# callgrind's instructions where valgrind is installed). A and B are binaries, or commits:
# each commit is built in release in a git worktree under target/compare/ (all of them in one
# target directory there, so only what differs is built again), once, and the worktree removed
# when its binary is copied out. ROUNDS sets the rounds.
set -euo pipefail
cd "$(dirname "$0")/.."

# The release binary of $1: itself if it is a file, else the commit's, built once.
compare_binary() {
  if [ -f "$1" ]; then
    echo "$1"
    return
  fi
  local sha
  sha=$(git rev-parse --verify --quiet "$1^{commit}") || {
    echo "scripts/bench.sh: --compare: $1 is neither a file nor a commit" >&2
    exit 2
  }
  sha=${sha:0:12}
  local dir=$PWD/target/compare bin=$PWD/target/compare/bin/$sha
  if [ ! -x "$bin" ]; then
    mkdir -p "$dir/bin"
    [ -d "$dir/src-$sha" ] || git worktree add --detach --quiet "$dir/src-$sha" "$sha"
    (cd "$dir/src-$sha" && CARGO_TARGET_DIR="$dir/target" cargo build --release --locked --quiet) >&2
    cp "$dir/target/release/agent-loop" "$bin"
    # The binary is kept; the checkout is not left registered in the repository.
    git worktree remove --force "$dir/src-$sha"
  fi
  echo "$bin"
}

if [ "${1:-}" = --compare ]; then
  if [ $# -ne 3 ]; then
    echo "scripts/bench.sh: --compare takes two binaries or commits: --compare A B" >&2
    exit 2
  fi
  a=$(compare_binary "$2")
  b=$(compare_binary "$3")
  exec python3 scripts/bench-compare.py "$a" "$b" "$2" "$3"
fi

clean_build="" install=""
for arg in "$@"; do
  case $arg in
    --clean-build) clean_build=1 ;;
    --install) install=1 ;;
    *) echo "scripts/bench.sh: unknown option $arg (options: --clean-build, --install, --compare A B)" >&2; exit 2 ;;
  esac
done

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
[ -x /usr/bin/time ] || need+=(time)
command -v curl >/dev/null || need+=(curl)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  if [ -z "$install" ]; then
    echo "scripts/bench.sh: please install: ${need[*]} (or pass --install to have apt-get do it)" >&2
    exit 1
  fi
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi

build_s=""
if [ -n "$clean_build" ]; then
  scratch=$(mktemp -d)
  start=$(date +%s)
  CARGO_TARGET_DIR="$scratch" cargo build --release --locked --quiet
  build_s=$(( $(date +%s) - start ))
  rm -rf "$scratch"
fi
# read_url's conversion of a 1 MB page: the CPU-time median and the peak memory it adds, on
# the bench's dense article and on a real reference page, Rust 1.63's docs of `u8` (1.2 MB,
# from Debian's rust-doc package, downloaded once into target/bench-pages). First: `cargo
# bench` links target/release/agent-loop with the dev-dependencies' features, and the
# release build below must be the binary measured.
web_row() {
  local out rate peak
  out=$(cargo bench --bench web --quiet -- --warm-up-time 1 --measurement-time 2 2>&1 | grep '^web: ')
  rate=$(sed -n 's/^web: \([0-9.]*\) MB\/s of CPU time.*; \(.*\))$/\1 MB\/s (batches: \2)/p' <<<"$out")
  peak=$(sed -n 's/.* raised the peak resident size by \([0-9]*\) KiB.*/\1/p' <<<"$out")
  echo "${rate}, +$((peak / 1024)) MiB"
}
web_dense=$(web_row)
pages=$PWD/target/bench-pages
u8_page=$pages/x/usr/share/doc/rust-doc/html/std/primitive.u8.html
if [ ! -f "$u8_page" ] && [ -z "$install" ]; then
  echo "scripts/bench.sh: no real-page row: --install downloads Rust's u8 docs (Debian's rust-doc) into $pages" >&2
elif [ ! -f "$u8_page" ]; then
  mkdir -p "$pages"
  (cd "$pages" && apt-get download -qq rust-doc 2>/dev/null && dpkg-deb -x rust-doc_*.deb x) || true
fi
web_real=""
[ -f "$u8_page" ] && web_real=$(AGENT_LOOP_WEB_PAGE=$u8_page web_row)

cargo build --release --locked --quiet
work=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null; rm -rf "$work"' EXIT
# A copy is timed, not cargo's freshly linked file, which starts slower as the page cache
# holds it (docs/performance.md, "Comparing two builds").
cp target/release/agent-loop "$work/agent-loop"
bin=$work/agent-loop
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"

# Median wall time in ms of a command, from hyperfine's JSON export.
median_ms() {
  hyperfine --warmup 5 --runs "${RUNS:-40}" -N --export-json "$work/h.json" "$1" >/dev/null 2>&1 \
    || hyperfine --warmup 5 --runs "${RUNS:-40}" --export-json "$work/h.json" "$1" >/dev/null
  python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$work/h.json"
}
# Median wall times in ms of commands compared with each other, as "A B ...": measured
# together in ROUNDS rounds of RUNS runs each, the order rotated every round, so that a slow
# spell of a shared machine, or a drift within a round, falls on all of them rather than on one.
paired_ms() {
  local exports=() order i
  for round in $(seq "${ROUNDS:-6}"); do
    order=()
    for i in $(seq 0 $(($# - 1))); do
      order+=("${@:$(( (i + round) % $# + 1 )):1}")
    done
    hyperfine --warmup 3 --runs "${RUNS:-40}" -N --export-json "$work/p$round.json" "${order[@]}" >/dev/null 2>&1 \
      || hyperfine --warmup 3 --runs "${RUNS:-40}" --export-json "$work/p$round.json" "${order[@]}" >/dev/null
    exports+=("$work/p$round.json")
  done
  python3 - "$#" "$@" "${exports[@]}" <<'PY'
import json, statistics, sys
n = int(sys.argv[1])
commands, paths = sys.argv[2:2 + n], sys.argv[2 + n:]
times = {c: [] for c in commands}
for path in paths:
    for result in json.load(open(path))["results"]:
        times[result["command"]].extend(result["times"])
print(" ".join("%.2f" % (statistics.median(times[c]) * 1000) for c in commands))
PY
}
# Peak resident memory in MiB.
peak_mib() {
  /usr/bin/time -v sh -c "$1" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {printf "%.1f", $2/1024}'
}

# The fake agent alone versus through agent-loop (spawn, strip, parse, display).
sed "s|ROOT|$PWD|" benches/whole/backends.toml > "$work/backends.toml"
# The agent run directly: hyperfine execs it itself (its stdin is empty; it reads and drops
# stdin, so a prompt there changes nothing but a pipe's worth of bytes). And the floor: benches/whole/wrap.c, the least a wrapper can do (spawn, pipes, copy, wait),
# which shows how much of agent-loop's overhead this machine charges any wrapper.
loop_cmd="$bin --no-save --config $work/backends.toml --backend sleepy --display plain 'what is the answer?'"
"${CC:-cc}" -O2 -o "$work/wrap" benches/whole/wrap.c
wrap_cmd="$work/wrap $PWD/fixtures/agents/sleepy.sh 'what is the answer?'"
read -r cli_alone cli_wrap cli_loop < <(paired_ms "$PWD/fixtures/agents/sleepy.sh" "$wrap_cmd" "$loop_cmd")
cli_mib=$(peak_mib "$bin --no-save --config $work/backends.toml --backend sleepy 'what is the answer?'")
# The same call with 2,000 sessions kept (each folder with its session file and log), against
# none: a start reads only the session it opens, so the difference should be noise.
python3 - "$work/kept/agent-loop/sessions" <<'PY'
import os, sys
for i in range(2000):
    folder = os.path.join(sys.argv[1], f"2026-01-01T00-00-{i:04}")
    os.makedirs(folder)
    for name in ("session.json", "log.jsonl"):
        open(os.path.join(folder, name), "w").write("{}\n")
PY
read -r cli_none cli_kept < <(paired_ms "env XDG_DATA_HOME=$work/data $loop_cmd" "env XDG_DATA_HOME=$work/kept $loop_cmd")
# A long session: a CLI call (the offline demo: a tool call, its result, the answer) continuing
# a session of 1,000 such turns, each result 2 KB (a 2.5 MB session file), against one of 2
# turns. Each run gets the session back as it was (hyperfine's --prepare), so that every run
# loads and saves the same size: what a turn costs for the session's length.
long_dir=$work/long/agent-loop/sessions
XDG_DATA_HOME=$work/long "$bin" --backend demo --session seed "list the files here" >/dev/null 2>&1
for turns in 1000 2; do
  python3 benches/whole/long_session.py "$long_dir" seed "$turns" 2048 "t$turns"
  cp -r "$long_dir/t$turns" "$long_dir/t$turns.kept"
done
printf 'rm -rf "%s/t$1" && cp -r "%s/t$1.kept" "%s/t$1"\n' "$long_dir" "$long_dir" "$long_dir" > "$work/restore.sh"
long_cmd() { echo "env XDG_DATA_HOME=$work/long $bin --backend demo --session t$1 --display plain 'list the files here'"; }
hyperfine --warmup 3 --runs "${RUNS:-40}" -N --export-json "$work/long.json" \
  --prepare "sh $work/restore.sh 2" "$(long_cmd 2)" --prepare "sh $work/restore.sh 1000" "$(long_cmd 1000)" >/dev/null
read -r long_short long_long < <(python3 -c 'import json,sys; print(" ".join("%.2f" % (r["median"]*1000) for r in json.load(open(sys.argv[1]))["results"]))' "$work/long.json")
sh "$work/restore.sh" 1000
long_mib=$(peak_mib "$(long_cmd 1000)")
# Memory against the size of the output: an agent printing 4 MiB (the default
# max_output_bytes, all of it kept) and 1 GiB (the rest drained and counted).
flood_mib() {
  FLOOD_BYTES=$1 peak_mib "$bin --no-save --config $work/backends.toml --backend flood --quiet 'flood'"
}
flood4_mib=$(flood_mib 4194304)
flood1g_mib=$(flood_mib 1073741824)
# The 1 GiB flood saved to a session: wall time (target: under 15 s, draining past the cap at
# pipe speed) and the size of the log it leaves (target: under 2x the 4 MiB cap).
rm -rf "$work/data"
/usr/bin/time -f "%e" -o "$work/flood.time" env FLOOD_BYTES=1073741824 "$bin" --config "$work/backends.toml" \
  --backend flood --session flood --quiet flood >/dev/null 2>&1
flood_s=$(tail -1 "$work/flood.time")
flood_log_mib=$(python3 -c 'import os,sys; print("%.1f" % (os.path.getsize(sys.argv[1])/2**20))' \
  "$work/data/agent-loop/sessions/flood/log.jsonl")
# Loading a generated config of N backends, each with a tokens_regex (the same one, as
# generated files have): wall time and peak memory should grow linearly with N.
config_load() {
  python3 - "$1" > "$work/many.toml" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print(f"[backends.b{i}]\ncommand = \"true\"\ntokens_regex = 'Tokens: (?P<input>\\d+) in'\n")
PY
  # b0 runs `true`, which prints no answer: the run fails after loading, as intended.
  /usr/bin/time -f "%e s, %M" -o "$work/load.time" "$bin" --no-save --config "$work/many.toml" --backend b0 x >/dev/null 2>&1 || true
  tail -1 "$work/load.time" | awk -F', ' '{printf "%s, %.0f MiB", $1, $2/1024}'
}
load40k=$(config_load 40000)
load200k=$(config_load 200000)

# One HTTP turn: curl versus agent-loop, same server, same reply.
python3 benches/whole/server.py > "$work/port" &
server_pid=$!
while [ ! -s "$work/port" ]; do sleep 0.05; done
port=$(head -1 "$work/port")
sed -i "s/PORT/$port/" "$work/backends.toml"
body='{"model":"bench","messages":[{"role":"user","content":"what is the answer?"}]}'
read -r curl_ms http_ms < <(paired_ms "curl -s -o /dev/null -H 'Content-Type: application/json' -d '$body' http://127.0.0.1:$port/v1/chat/completions" \
  "$bin --no-save --config $work/backends.toml --backend local --tools read 'what is the answer?'")
http_mib=$(peak_mib "$bin --no-save --config $work/backends.toml --backend local --tools read 'what is the answer?'")
# An editor's day against `agent-loop acp`: 1,000 sessions opened and prompted in one process,
# on the same server; memory and descriptors after 16 and at the end should match.
read -r acp16_mib acp16_fds acp1k_mib acp1k_fds < <(python3 benches/whole/acp_sessions.py \
  "$bin" "$work/backends.toml" local 1000)

# A real CLI turn: Claude Code (`claude -p`, with the preset's flags) against the scripted mock
# provider of the fixture recordings, run alone and through agent-loop's `claude` preset, paired: 120 runs of each
# (CLAUDE_RUNS=30 a round), as 40 left ±3 % of noise on a 2 % target. Claude Code is
# installed from npm into target/bench-clis (once); without npm the row is left out.
claude_pkg=@anthropic-ai/claude-code@2.1.197
claude_dir=$PWD/target/bench-clis/claude
claude_row=""
if [ ! -x "$claude_dir/node_modules/.bin/claude" ] && command -v npm >/dev/null; then
  npm install --prefix "$claude_dir" --no-audit --no-fund --loglevel=error "$claude_pkg" >/dev/null 2>&1 || true
fi
if [ -x "$claude_dir/node_modules/.bin/claude" ]; then
  python3 scripts/record-fixtures/mock_provider.py --scenario plain --port 0 \
    --port-file "$work/claude-port" --log "$work/claude-mock.log" 2>/dev/null &
  claude_mock=$!
  while [ ! -s "$work/claude-port" ]; do sleep 0.05; done
  mkdir -p "$work/claude-home"
  ask="What is six times seven? Answer in one short sentence."
  # The preset's own arguments, read from backends.toml, so the pair follows the preset.
  claude_cmd=$(python3 scripts/record-fixtures/preset.py args claude |
    python3 -c 'import shlex, sys; print(shlex.join(["claude"] + sys.stdin.read().split("\n")[:-1]))')
  read -r claude_alone claude_loop < <(
    HOME="$work/claude-home" PATH="$claude_dir/node_modules/.bin:$PATH" \
    ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$work/claude-port")" ANTHROPIC_API_KEY=mock-key \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
    DISABLE_ERROR_REPORTING=1 RUNS=${CLAUDE_RUNS:-30} ROUNDS=4 \
    paired_ms "$claude_cmd '$ask'" \
      "$bin --no-save --backend claude --display plain '$ask'")
  kill "$claude_mock" 2>/dev/null || true
  claude_row="| the same against a real CLI turn, Claude Code 2.1.197 (\`claude -p\`) against a local mock | $(python3 -c "import sys; a,b=map(float,sys.argv[1:]); print('%.1f %% (%.0f against %.0f ms)' % ((b-a)/a*100, b, a))" "$claude_alone" "$claude_loop") | ≤ 2 % |"
fi

# The floor of a start: a Rust program that prints a line, built as the release profile is.
rustc --edition 2021 -C opt-level=s -C lto -C codegen-units=1 -C strip=symbols \
  -o "$work/hello" benches/whole/hello.rs
read -r true_ms hello_ms version_ms < <(paired_ms "/bin/true" "$work/hello" "$bin --version")
version_mib=$(peak_mib "$bin --version")
size_bytes=$(stat -c %s "$bin")
size_mib=$(python3 -c 'import sys; print("%.2f" % (int(sys.argv[1])/2**20))' "$size_bytes")

ratio() { python3 -c "import sys; print('%.3f' % (float(sys.argv[1])/float(sys.argv[2])))" "$1" "$2"; }
minus() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1])-float(sys.argv[2])))" "$1" "$2"; }
{
  echo "| measure | figure | target |"
  echo "| --- | --- | --- |"
  echo "| \`--version\` above \`/bin/true\` (medians) | $(minus "$version_ms" "$true_ms") ms (${version_ms} against ${true_ms} ms) | ≤ 0.7 ms |"
  echo "| the same for a Rust program that prints a line (benches/whole/hello.rs), the floor any Rust program pays here | $(minus "$hello_ms" "$true_ms") ms | |"
  echo "| agent-loop's own time per backend call: a CLI turn around a 40 ms fake agent, minus the agent alone | $(minus "$cli_loop" "$cli_alone") ms (${cli_loop} against ${cli_alone} ms) | ≤ 3.5 ms |"
  echo "| the same with 2,000 sessions kept, minus with none | $(minus "$cli_kept" "$cli_none") ms (${cli_kept} against ${cli_none} ms) | ≈ 0 |"
  echo "| a CLI turn continuing a 1,000-turn session (2.5 MB), minus one of 2 turns; its peak memory | $(minus "$long_long" "$long_short") ms (${long_long} against ${long_short} ms); ${long_mib} MiB | ≤ 50 ms |"
  echo "| the same for a minimal wrapper in C (benches/whole/wrap.c), the floor any wrapper pays here | $(minus "$cli_wrap" "$cli_alone") ms | |"
  [ -n "$claude_row" ] && echo "$claude_row"
  echo "| peak memory while a backend floods 4 MiB, 1 GiB | ${flood4_mib}, ${flood1g_mib} MiB | ≤ 32 MiB |"
  echo "| a 1 GiB flood saved to a session: wall time, log size (cap 4 MiB) | ${flood_s} s, ${flood_log_mib} MiB | < 15 s, < 2 × the cap |"
  echo "| loading a config of 40k, 200k backends (time, peak memory) | ${load40k}; ${load200k} | linear |"
  echo "| CLI turn peak memory | ${cli_mib} MiB | |"
  echo "| HTTP turn against 127.0.0.1, against curl | ${http_ms} ms against ${curl_ms} ms, ${http_mib} MiB | |"
  echo "| \`agent-loop acp\` after 16 and after 1,000 sessions opened and prompted: resident memory, descriptors | ${acp16_mib} MiB, ${acp16_fds}; ${acp1k_mib} MiB, ${acp1k_fds} | the same |"
  echo "| read_url's HTML to Markdown, a dense 1 MB article (CPU time), peak memory added | ${web_dense} | ≥ 20 MB/s |"
  [ -n "$web_real" ] && echo "| the same for a real 1.2 MB page (Rust's \`u8\` docs) | ${web_real} | ≥ 20 MB/s |"
  echo "| release binary | ${size_mib} MiB (${size_bytes} bytes) | ≤ 16 MiB (16,777,216 bytes) |"
  if [ -n "$build_s" ]; then
    echo "| clean release build | ${build_s} s | ≤ 300 s |"
  fi
  # The Telegram bot, idle and with 20 chats at once, against a mock Bot API.
  python3 benches/telegram/bench.py "$bin"
} | tee target/bench.md
