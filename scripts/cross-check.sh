#!/usr/bin/env bash
# The phone platforms, proved:
#   1. `cargo check` (as clippy) for aarch64-linux-android (Termux's) of the library and the
#      binary, their unit tests included (`--profile test`): all the code that names Android;
#   2. with --qemu only: an aarch64 (musl, static) build run under qemu-aarch64 on a smoke
#      suite of integration tests: a CLI backend's tool round trip, HTTP backend turns against
#      the tests' mock server, the terminfo display, a session saved and resumed, the Telegram
#      bot against its mock Bot API. A whole second build of everything for another
#      architecture, two minutes and more on 2 cores: it does not fit in CI's ten minutes, so
#      it is run by hand before a release and after changes to process, terminal or
#      platform code;
#   3. the Termux-shaped run of scripts/termux-sandbox.sh.
# .ci/run calls it without --qemu.
#
#   scripts/cross-check.sh [--install] [--qemu]
#
# It installs what it needs: the Rust targets with rustup, zig (and for --qemu cargo-zigbuild)
# from PyPI into a venv under target/cross/, and the Debian packages qemu-user, bubblewrap and
# busybox-static with apt-get when run as root with CI=true or --install. Otherwise it says
# what is missing and skips that part. Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

install=false qemu_suite=false
for arg in "$@"; do
  case $arg in
    --install) install=true ;;
    --qemu) qemu_suite=true ;;
    *) echo "scripts/cross-check.sh: unknown option $arg (options: --install, --qemu)" >&2; exit 2 ;;
  esac
done
if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then install=true; fi
skipped=()
say() { echo "cross-check: $*" >&2; }
# `timed NAME COMMAND...`: runs it, then says how long it took.
timed() {
  local name=$1 start=$SECONDS
  shift
  say "$name ..."
  "$@"
  say "$name took $((SECONDS - start))s"
}

android=aarch64-linux-android
musl=aarch64-unknown-linux-musl
cross=$PWD/target/cross
mkdir -p "$cross/bin"

if command -v rustup >/dev/null; then
  timed "rustup target add" rustup target add "$android" "$musl"
else
  say "SKIPPED: no rustup to add $android and $musl; assuming they are installed"
fi

# zig, as the C compiler ring needs for the targets, and (for the qemu build only)
# cargo-zigbuild, as the linker.
wheels=ziglang
if $qemu_suite; then wheels="ziglang cargo-zigbuild"; fi
if [ ! -x "$cross/venv/bin/python" ]; then python3 -m venv "$cross/venv"; fi
for wheel in $wheels; do
  if ! "$cross/venv/bin/pip" show --quiet "$wheel" 2>/dev/null; then
    timed "pip install $wheel" "$cross/venv/bin/pip" install --quiet "$wheel"
  fi
done
export PATH="$cross/venv/bin:$PATH"
# cc-rs passes `--target=aarch64-linux-android`, which zig does not know: the wrapper drops
# it and names the target zig has (for `cargo check`, which compiles C but links nothing).
cat > "$cross/zigcc" <<EOF
#!/bin/sh
for a; do shift; case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac; done
exec "$cross/venv/bin/python" -m ziglang cc -target aarch64-linux-musl "\$@"
EOF
chmod +x "$cross/zigcc"

# Clippy, which checks as `cargo check` does and also lints the Android-only code paths. In
# a target directory of its own (so it never waits for the lock of a build beside it), unless
# CROSS_TARGET_DIR names one: .ci/run gives target/, where clippy has just built what this
# takes from it (the proc macros, for this machine).
timed "cargo clippy --target $android" env "CC_${android//-/_}=$cross/zigcc" \
  cargo clippy --locked --quiet --lib --bins --profile test --target "$android" \
  --target-dir "${CROSS_TARGET_DIR:-$cross/target}" -- -D warnings

if $qemu_suite; then
# Unoptimised and without debug information: the quickest build to make, and quick enough
# under qemu for the smoke suite.
timed "cargo zigbuild --target $musl" env CARGO_PROFILE_DEV_DEBUG=false CARGO_INCREMENTAL=0 \
  cargo zigbuild --locked --quiet --target "$musl" --bin agent-loop
arm_bin=$PWD/target/$musl/debug/agent-loop

if ! command -v qemu-aarch64 >/dev/null && $install && [ "$(id -u)" = 0 ]; then
  timed "apt-get install qemu-user" sh -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null'
fi
if command -v qemu-aarch64 >/dev/null; then
  # No binfmt registration is assumed: the tests run the aarch64 binary through this
  # wrapper, which counts its runs. None of the smoke tests uses the demo backend, which
  # re-executes the binary itself.
  runs=$cross/qemu-runs
  : > "$runs"
  # qemu by its full path: the tests give the programs they start a PATH of their own.
  qemu=$(command -v qemu-aarch64)
  cat > "$cross/bin/agent-loop" <<EOF
#!/bin/sh
echo run >> "$runs"
exec "$qemu" "$arm_bin" "\$@"
EOF
  chmod +x "$cross/bin/agent-loop"
  "$cross/bin/agent-loop" --version >/dev/null
  : > "$runs"
  timed "the aarch64 smoke suite under qemu" env AGENT_LOOP_TEST_BIN="$cross/bin/agent-loop" \
    cargo test --locked --quiet --test all -- --exact \
    cli_backend::tool_round_trip_feeds_the_result_into_the_next_prompt \
    http::formats::anthropic_streamed \
    http::formats::openai_whole \
    terminfo::every_control_sequence_comes_from_the_entry \
    sessions::a_named_session_resumes_in_a_second_process \
    telegram::a_tool_round_trip_from_an_allowed_user
  n=$(wc -l < "$runs")
  if [ "$n" -lt 6 ]; then
    say "FAILED: the smoke suite ran the aarch64 binary $n times, not once per test at least"
    exit 1
  fi
  say "the smoke suite ran the aarch64 binary $n times"
else
  say "SKIPPED: the aarch64 smoke suite: no qemu-aarch64 (Debian qemu-user; run as root with --install)"
  skipped+=("qemu smoke suite")
fi
else
  say "not run: the aarch64 smoke suite under qemu (scripts/cross-check.sh --qemu)"
fi

if $install; then
  timed "the Termux-shaped run" scripts/termux-sandbox.sh --install
else
  timed "the Termux-shaped run" scripts/termux-sandbox.sh
fi

if [ ${#skipped[@]} -gt 0 ]; then
  say "done, but SKIPPED: ${skipped[*]}"
else
  say "done"
fi
