#!/usr/bin/env bash
# The property tests at length: PROPTEST_CASES cases for each of the 16 properties (default
# 100000, so 1.6 million in all), in the unit tests (stream decoders; scan's fast paths
# against the full parser and the line model; the view's screen against random streams) and
# in tests/all/props.rs (ANSI stripping, parsers, config loader), in release mode for speed.
# CI runs them with 64 cases each (the view's with 1,000).
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${PROPTEST_CASES:-100000}"
echo "proptest-long: $PROPTEST_CASES cases per property"
time cargo test --release --locked --lib -- props::
time cargo test --release --locked --bin agent-loop -- props::
time cargo test --release --locked -p agent-loop-scan -- props::
time cargo test --release --locked --test all -- props::
