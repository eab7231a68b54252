#!/usr/bin/env bash
# The integration tests with every core busy: stress-ng keeps one CPU hog per core running
# while `cargo test --test all` runs, to show that no test's outcome depends on how fast the
# machine is (docs/reliability.md). The tests are built first, without the load; arguments go
# to cargo test (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v stress-ng >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq stress-ng
  else
    echo "scripts/test-under-load.sh: please install stress-ng" >&2
    exit 1
  fi
fi
cargo test --locked --test all --no-run
cores=$(getconf _NPROCESSORS_ONLN)
stress-ng --cpu "$cores" --cpu-method matrixprod --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true' EXIT
cargo test --locked --test all "$@"
