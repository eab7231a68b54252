#!/usr/bin/env bash
# The release binary's size against its 16 MiB budget, for a check on every change without
# the release build CI has no time for. The optimised, link-time-optimised build is made only
# when what decides its size outside the sources changes (Cargo.lock, a Cargo.toml, the
# compiler); in between, an unoptimised install build stands for it, through the ratio of
# the two recorded together.
#
#   scripts/size-check.sh record [RELEASE_BINARY INSTALL_BINARY]
#       builds both (the release profile; the profile .ci/run installs with, in target/install)
#       unless given binaries built from this tree, and writes .ci/binary-size: a digest of
#       `rustc -V`, Cargo.lock and every Cargo.toml, and the two sizes. Commit it.
#   scripts/size-check.sh check INSTALL_BINARY
#       (for .ci/run, after its install) fails when the digest differs from the recorded one (run
#       `record` again), when the install build grew more than 5 % over the recorded one, or
#       when the release size it implies is over the budget.
set -euo pipefail
cd "$(dirname "$0")/.."

record_file=.ci/binary-size
budget=16777216

digest() {
  { rustc -V; cat Cargo.lock; git ls-files -- Cargo.toml '*/Cargo.toml' | sort | xargs cat; } \
    | sha256sum | cut -d' ' -f1
}

field() {
  sed -n "s/^$1=//p" "$record_file"
}

case "${1:-}" in
  record)
    if [ $# -eq 3 ]; then
      release=$2 install=$3
    elif [ $# -eq 1 ]; then
      cargo build --release --locked --quiet
      release=target/release/agent-loop
      CARGO_TARGET_DIR=target/install CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
        CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        cargo build --release --locked --quiet
      install=target/install/release/agent-loop
    else
      echo "scripts/size-check.sh: record takes no binary or both: record [RELEASE_BINARY INSTALL_BINARY]" >&2
      exit 2
    fi
    {
      echo "# The release binary's size and the unoptimised install build's, recorded together"
      echo "# by scripts/size-check.sh record; \`scripts/size-check.sh check\` holds an install build to them."
      echo "digest=$(digest)"
      echo "release=$(stat -c %s "$release")"
      echo "install=$(stat -c %s "$install")"
    } > "$record_file"
    cat "$record_file"
    ;;
  check)
    if [ $# -ne 2 ]; then
      echo "scripts/size-check.sh: check takes the install build's binary: check INSTALL_BINARY" >&2
      exit 2
    fi
    if [ ! -f "$record_file" ] || [ "$(field digest)" != "$(digest)" ]; then
      echo "scripts/size-check.sh: Cargo.lock, a Cargo.toml or the compiler changed since $record_file was recorded:" >&2
      echo "  run scripts/size-check.sh record (a release build, many minutes) and commit $record_file" >&2
      exit 1
    fi
    size=$(stat -c %s "$2")
    python3 - "$size" "$(field install)" "$(field release)" "$budget" <<'PY'
import sys
size, install, release, budget = map(int, sys.argv[1:])
estimate = size * release / install
print(f"size-check: install build {size:,} bytes (recorded {install:,}, {(size - install) / install * 100:+.1f} %); "
      f"release estimated {estimate:,.0f} bytes (recorded {release:,}), budget {budget:,}")
if size > install * 1.05:
    sys.exit(f"size-check: the install build grew more than 5 % since .ci/binary-size was recorded: "
             f"run scripts/size-check.sh record to see the release size, and say why in the commit")
if estimate > budget:
    sys.exit(f"size-check: the release binary would be about {estimate / 2**20:.2f} MiB, over its 16 MiB budget")
PY
    ;;
  *)
    echo "scripts/size-check.sh: record [RELEASE_BINARY INSTALL_BINARY] | check INSTALL_BINARY" >&2
    exit 2
    ;;
esac
