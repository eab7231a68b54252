#!/usr/bin/env bash
# Writes link/startup-order.txt: the functions that short runs of the release binary execute,
# which build.rs asks the linker to place side by side (see build.rs for why). Run it after a
# dependency or toolchain update, or a large change to the start-up path; a stale list costs
# speed, never correctness.
#
# How: builds release with a linker map (which function went where), runs each scenario
# below under callgrind (valgrind, installed from Debian's packages if missing), takes the
# address of every instruction that ran, and names its function from the map. Instructions,
# not callgrind's functions: code entered by a jump (a tail call, which opt-level "z" makes of
# most `drop_in_place` glue) is counted as part of its caller's function by callgrind, and
# would be missed. Functions are listed by scenario, those of the first scenario first:
# `--version` (every start), then a CLI turn before its backend is spawned (what the user
# waits for), the rest of that turn, an HTTP turn and a turn that runs a tool.
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
  valgrind --tool=callgrind --dump-instr=yes --dump-line=no --compress-pos=no \
    --callgrind-out-file="$work/$name.cg" "$@" "$bin" "${run[@]}" \
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
    """Addresses of the binary's instructions that ran, from a callgrind output written with
    --dump-instr=yes --compress-pos=no: each cost line starts with its instruction's address
    (relative to the binary, so a map address) and belongs to the object of the last `ob=`."""
    objects, ours, current = {}, set(), ""
    for line in open(path, errors="replace"):
        if line.startswith("0x"):
            if current.endswith("/agent-loop"):
                ours.add(int(line.split(None, 1)[0], 16))
        elif line.startswith(("ob=", "cob=")):
            # An object is named at its first mention, which may be a call's `cob=`.
            m = re.match(r"^(c?)ob=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                if m.group(3) is not None:
                    objects[m.group(2)] = m.group(3)
                if not m.group(1):
                    current = objects.get(m.group(2), "")
    return ours

def parts(scenario):
    """A run's outputs in the order they were written: NAME.cg.1, .2, ... (one per
    --dump-before), then NAME.cg, what ran after the last dump."""
    dumps = glob.glob(os.path.join(work, scenario + ".cg.*"))
    return sorted(dumps, key=lambda p: int(p.rsplit(".", 1)[1])) + [os.path.join(work, scenario + ".cg")]

listed = set()
scenarios = sorted({os.path.basename(p).split(".cg")[0] for p in glob.glob(os.path.join(work, "*.cg"))})
for path in [part for scenario in scenarios for part in parts(scenario)]:
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
