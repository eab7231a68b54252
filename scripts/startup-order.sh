#!/usr/bin/env bash
# Writes link/startup-order.txt: the functions that short runs of the release binary execute,
# which build.rs asks the linker to place side by side (see build.rs for why). Run it after a
# dependency or toolchain update, or a large change to the start-up path; a stale list costs
# speed, never correctness.
#
# How: builds release with a linker map (which function went where), runs each scenario
# below under callgrind (valgrind, installed from Debian's packages if missing), takes the
# address of every piece of code that ran, and names its function from the map. Functions are
# listed by scenario, those of the first scenario first: `--version` (every start), then a CLI
# turn before its backend is spawned (what the user waits for), the rest of that turn, an
# HTTP turn and a turn that runs a tool.
#
# With --check it writes nothing and fails when the committed list lacks more than 5% of the
# functions those runs now execute (.ci/run does this, so the list cannot go stale unseen).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }

work=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null; rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"

AGENT_LOOP_LINK_MAP="$work/agent-loop.map" cargo build --release --locked --quiet
bin=$PWD/target/release/agent-loop

python3 benches/whole/server.py > "$work/port" &
server_pid=$!
while [ ! -s "$work/port" ]; do sleep 0.05; done
sed -e "s|ROOT|$PWD|" -e "s|PORT|$(head -1 "$work/port")|" benches/whole/backends.toml \
  > "$work/backends.toml"

# One callgrind run; its output files (one per part) are named $work/NAME.cg*.
profile() {
  local name=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" "$@" "$bin" "${run[@]}" \
    >/dev/null 2>"$work/$name.log" </dev/null
}
run=(--version)
profile 1-version
run=(--no-save --config "$work/backends.toml" --backend sleepy --display plain 'what is the answer?')
SLEEPY_S=0 profile 2-cli --dump-before='posix_spawn*'
run=(--no-save --config "$work/backends.toml" --backend local --tools read 'what is the answer?')
profile 3-http
run=(--no-save --backend demo 'list the files here')
profile 4-tool

python3 - "$work/agent-loop.map" "$work" > "$work/order.txt" <<'PY'
import bisect, glob, os, re, sys

map_path, work = sys.argv[1], sys.argv[2]
# lld's map: "VMA LMA Size Align Out In Symbol"; an input section line ends in
# "file:(.text.SYMBOL)" when each function has its own section.
starts, ends, names = [], [], []
section = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S.*:\(\.text\.(\S+)\)$")
for line in open(map_path, errors="replace"):
    m = section.match(line)
    if m and int(m.group(2), 16):
        starts.append(int(m.group(1), 16))
        ends.append(int(m.group(1), 16) + int(m.group(2), 16))
        # .text.unlikely.NAME holds code the compiler thinks cold; the symbol is NAME.
        names.append(re.sub(r"^(unlikely|hot|startup|exit)\.", "", m.group(3)))
order = sorted(range(len(starts)), key=starts.__getitem__)
starts, ends, names = [starts[i] for i in order], [ends[i] for i in order], [names[i] for i in order]

def executed(path):
    """Addresses of the binary's code in a callgrind output (a stripped binary's functions are
    named by address)."""
    objects, functions, ours, current = {}, {}, set(), None
    for line in open(path, errors="replace"):
        m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, ref, text = m.groups()
        table = objects if kind.endswith("ob") else functions
        if text is not None:
            table[ref] = text
        if kind == "ob":
            current = objects[ref]
        elif kind == "fn" and current.endswith("/agent-loop") and functions[ref].startswith("0x"):
            # "'2" marks a recursive call's cost.
            ours.add(int(functions[ref].split("'")[0], 16))
    return ours

listed = set()
for path in sorted(p for p in glob.glob(os.path.join(work, "*.cg*")) if not p.endswith(".log")):
    found = set()
    for address in executed(path):
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < ends[i] and names[i] not in listed:
            found.add(i)
    for i in sorted(found):
        listed.add(names[i])
        print(names[i])
PY
if [ "${1:-}" = "--check" ]; then
  python3 - "$work/order.txt" link/startup-order.txt <<'PY'
import sys
fresh = [l.strip() for l in open(sys.argv[1])]
listed = {l.strip() for l in open(sys.argv[2])}
missing = [name for name in fresh if name not in listed]
print("link/startup-order.txt: %d of the %d functions these runs execute are missing"
      % (len(missing), len(fresh)), file=sys.stderr)
if len(missing) > 0.05 * len(fresh):
    print("the list is stale: run scripts/startup-order.sh and commit link/startup-order.txt",
          file=sys.stderr)
    sys.exit(1)
PY
  exit
fi
mv "$work/order.txt" link/startup-order.txt
echo "link/startup-order.txt: $(wc -l < link/startup-order.txt) functions" >&2
