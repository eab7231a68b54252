#!/usr/bin/env bash
# A Termux-shaped run: agent-loop inside a bubblewrap sandbox laid out like Termux on Android
# (programs under $PREFIX/bin, a busybox `sh` and no bash, HOME and TMPDIR under
# /data/data/com.termux/files, the terminfo entry only under $PREFIX/share/terminfo, and no
# /bin, /usr, /tmp or /etc at all), doing real work there: the demo, a bash tool call, a
# write and an edit, the terminfo display, a session saved and resumed, read_url against a
# local server, `doctor`. It runs as an ordinary user (uid 10123, as an Android app does, never
# root), so the checks that mean something only there are made too: agent-loop's
# /proc/PID/environ (its keys) is unreadable from the bash tool, and the session's folder and
# files, a `--log` file and an `mcp login`'s token file are private (0700, 0600). Fails when
# any of them does.
#
#   scripts/termux-sandbox.sh [--install] [BINARY]
#
# BINARY defaults to target/debug/agent-loop (built first). The host's C library stands in
# for Android's /system: it is mounted at /lib/x86_64-linux-gnu and /lib64, nothing else of
# the host is. Needs bwrap and a static busybox (Debian `bubblewrap`, `busybox-static`),
# installed with apt-get when run as root with CI=true or --install.
set -euo pipefail
cd "$(dirname "$0")/.."

install=false
if [ "${1:-}" = --install ]; then install=true; shift; fi
if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then install=true; fi

need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
busybox=$(command -v busybox || true)
# A static one: the sandbox holds no library it could load.
if [ -z "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
  need+=(busybox-static)
fi
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  if $install && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    busybox=$(command -v busybox)
  else
    echo "termux-sandbox: SKIPPED: missing ${need[*]} (run as root with --install, or install them)" >&2
    exit 0
  fi
fi
if ! bwrap --ro-bind / / true 2>/dev/null; then
  echo "termux-sandbox: FAILED: bwrap cannot make a sandbox here (no user namespaces?)" >&2
  exit 1
fi

bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --locked --quiet
  bin=target/debug/agent-loop
fi
bin=$(realpath "$bin")

# The Termux tree, on the host: $PREFIX is usr/, HOME is home/.
top=$(mktemp -d)
server=
oauth=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  [ -n "$oauth" ] && kill "$oauth" 2>/dev/null
  rm -rf "$top"
}
trap cleanup EXIT
mkdir -p "$top/usr/bin" "$top/usr/tmp" "$top/usr/share/terminfo/x" "$top/home/.config/agent-loop" \
  "$top/home/fake" "$top/home/project"
cp "$busybox" "$top/usr/bin/busybox"
for applet in sh cat echo ls grep mkdir rm sleep printf test tr wc head env uname id stat wget seq; do
  ln -s busybox "$top/usr/bin/$applet"
done
entry=$(find /usr/share/terminfo /lib/terminfo -name xterm-256color 2>/dev/null | head -1)
cp "$entry" "$top/usr/share/terminfo/x/"
# The fake agent of the tests, its shebang fixed as `termux-fix-shebang` would.
sed '1s|^#!/bin/sh|#!/data/data/com.termux/files/usr/bin/sh|' fixtures/agents/scripted.sh \
  > "$top/usr/bin/fake-agent"
chmod +x "$top/usr/bin/fake-agent"
cat > "$top/home/.config/agent-loop/backends.toml" <<'EOF'
[backends.fake]
command = "fake-agent"
EOF

# A local page for read_url, served from the host (the sandbox shares its loopback).
mkdir -p "$top/site"
printf '<html><head><title>Termux page</title></head><body><p>The phone says 42.</p></body></html>' \
  > "$top/site/page.html"
coproc SERVER { exec python3 - "$top/site" <<'EOF'
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=sys.argv[1])
httpd = http.server.HTTPServer(("127.0.0.1", 0), handler)
print(httpd.server_port, flush=True)
httpd.serve_forever()
EOF
}
server=$SERVER_PID
read -r port <&"${SERVER[0]}"

# The OAuth authorization server and MCP server of the tests (fixtures/mcp/oauth-server.js),
# served from the host, for an `mcp login` whose token file must be private. Needs node.
oauth_port=
if command -v node >/dev/null; then
  oauth_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PORT=$oauth_port node fixtures/mcp/oauth-server.js 2>"$top/oauth.log" &
  oauth=$!
  for _ in $(seq 1 600); do
    grep -q "listening on port" "$top/oauth.log" && break
    kill -0 "$oauth" 2>/dev/null || { echo "termux-sandbox: FAILED: the OAuth fixture: $(cat "$top/oauth.log")" >&2; exit 1; }
    sleep 0.1
  done
  printf "\n[mcp.servers.docs]\nurl = 'http://127.0.0.1:%s/mcp'\ntrust = true\n" "$oauth_port" \
    > "$top/home/oauth.toml"
else
  echo "termux-sandbox: no node here: the mcp login step is skipped" >&2
fi

# The steps, run by busybox sh inside the sandbox.
cat > "$top/home/steps.sh" <<EOF
set -eu
port=$port
oauth_port=$oauth_port
EOF
cat >> "$top/home/steps.sh" <<'EOF'
fail() { echo "termux-sandbox: FAILED: $*" >&2; exit 1; }
step() { echo "termux-sandbox: $*" >&2; }
for gone in /bin/sh /usr /tmp /etc; do [ ! -e "$gone" ] || fail "$gone exists in the sandbox"; done
cd "$HOME/project"
echo 'first line' > notes.txt
reply() { printf '%s\n' "$2" > "$HOME/fake/reply.$1"; }

step "the demo"
out=$(agent-loop --backend demo "list the files here" 2>err) || fail "demo: $(cat err)"
echo "$out" | grep -q notes.txt || fail "demo: no notes.txt in: $out"

step "a bash tool call (with busybox sh, no bash installed)"
out=$(agent-loop --backend demo --yes 'run echo $((6 * 7)) > sum.txt; echo $TMPDIR' 2>err) \
  || fail "bash tool: $(cat err)"
[ "$(cat sum.txt)" = 42 ] || fail "bash tool: sum.txt holds $(cat sum.txt)"
echo "$out" | grep -q "$PREFIX/tmp" || fail "bash tool: TMPDIR not passed on: $out"

step "a write and an edit"
reply 1 '<tool_call>{"name":"write","arguments":{"path":"todo.md","content":"- buy milk\n"}}</tool_call>'
reply 2 '<tool_call>{"name":"edit","arguments":{"path":"todo.md","old_string":"milk","new_string":"bread"}}</tool_call>'
reply 3 'Written and edited.'
agent-loop --backend fake --yes --session phone "make a todo list" >out 2>err || fail "write/edit: $(cat err)"
[ "$(cat todo.md)" = "- buy bread" ] || fail "write/edit: todo.md holds $(cat todo.md)"
grep -q "Written and edited." out || fail "write/edit: answer $(cat out)"

step "the session saved under HOME, and resumed"
[ -f "$HOME/.local/share/agent-loop/sessions/phone/session.json" ] \
  || fail "session: not under $HOME/.local/share: $(ls -R "$HOME/.local" 2>&1)"
reply 4 'Resumed.'
agent-loop --session phone "and now?" >out 2>err || fail "resume: $(cat err)"
grep -q "make a todo list" "$HOME/fake/prompt.4" || fail "resume: the first turn is not in the prompt"
grep -q "Resumed." out || fail "resume: answer $(cat out)"

step "as an ordinary user: agent-loop's environment unreadable from the bash tool"
[ "$(id -u)" = 10123 ] || fail "not running as uid 10123 but $(id -u)"
agent-loop --backend demo --yes \
  'run cat /proc/$PPID/comm > parent.txt; cat /proc/$$/environ > own.txt; cat /proc/$PPID/environ > keys.txt 2>/dev/null; echo $? > keys.rc' \
  >out 2>err || fail "environ: $(cat err)"
[ "$(cat parent.txt)" = agent-loop ] || fail "environ: the command's parent is $(cat parent.txt)"
[ -s own.txt ] || fail "environ: the command cannot read its own environment, so the check proves nothing"
[ "$(cat keys.rc)" != 0 ] || fail "environ: agent-loop's /proc/PID/environ was readable"
[ ! -s keys.txt ] || fail "environ: agent-loop's environment was read: $(cat keys.txt)"

step "as an ordinary user: the session's folder and files, and the log, are private"
sessions="$HOME/.local/share/agent-loop/sessions"
[ "$(stat -c %a "$sessions/phone")" = 700 ] || fail "modes: the session folder is $(stat -c %a "$sessions/phone")"
for f in session.json log.jsonl; do
  [ "$(stat -c %a "$sessions/phone/$f")" = 600 ] || fail "modes: $f is $(stat -c %a "$sessions/phone/$f")"
done
agent-loop --backend demo --log "$HOME/run.log" "list the files here" >out 2>err || fail "log: $(cat err)"
[ "$(stat -c %a "$HOME/run.log")" = 600 ] || fail "modes: the --log file is $(stat -c %a "$HOME/run.log")"

if [ -n "$oauth_port" ]; then
  step "as an ordinary user: an MCP login's token file is private"
  cat "$HOME/.config/agent-loop/backends.toml" > backends.toml.saved
  cat "$HOME/oauth.toml" >> "$HOME/.config/agent-loop/backends.toml"
  agent-loop mcp login docs >login.out 2>login.err &
  login=$!
  url=
  for _ in $(seq 1 600); do
    url=$(grep -m1 "^http://127.0.0.1:$oauth_port/authorize?" login.err || true)
    [ -n "$url" ] && break
    kill -0 "$login" 2>/dev/null || fail "mcp login ended before its URL: $(cat login.err)"
    sleep 0.1
  done
  [ -n "$url" ] || fail "mcp login printed no URL: $(cat login.err)"
  # The browser's part: the authorization page redirects to agent-loop's callback.
  wget -q -O browser.html "$url" || fail "mcp login: the browser's request failed"
  wait "$login" || fail "mcp login: $(cat login.err)"
  tokens="$HOME/.local/share/agent-loop/mcp-tokens"
  [ "$(stat -c %a "$tokens")" = 700 ] || fail "modes: the token folder is $(stat -c %a "$tokens")"
  [ "$(stat -c %a "$tokens/docs.json")" = 600 ] || fail "modes: the token file is $(stat -c %a "$tokens/docs.json")"
  cat backends.toml.saved > "$HOME/.config/agent-loop/backends.toml"
  rm -f login.out login.err browser.html backends.toml.saved
fi

step "the terminfo display, its entry found under \$PREFIX/share/terminfo only"
agent-loop --backend demo --display terminfo "list the files here" >out 2>err || fail "terminfo: $(cat err)"
esc=$(printf '\033')
grep -q "${esc}\[3[0-9]m" err || fail "terminfo: no colour from the entry: $(cat err)"
if env -u PREFIX agent-loop --backend demo --display terminfo "list the files here" >out 2>err; then
  fail "terminfo: an entry was found without \$PREFIX"
fi
grep -q "terminfo" err || fail "terminfo: the error without \$PREFIX does not say why: $(cat err)"

step "read_url against a local server"
reply 5 "<tool_call>{\"name\":\"read_url\",\"arguments\":{\"url\":\"http://127.0.0.1:$port/page.html\"}}</tool_call>"
reply 6 'Read.'
agent-loop --backend fake --allow "read_url:http://127.0.0.1:$port/*" "read the page" >out 2>err \
  || fail "read_url: $(cat err)"
grep -q "The phone says 42." "$HOME/fake/prompt.6" || fail "read_url: the page is not in the prompt"

step "doctor"
agent-loop doctor demo >out 2>err || fail "doctor demo: $(cat err)"
grep -q "exit: 0" out || fail "doctor demo: $(cat out)"
reply 7 'Doctor here.'
agent-loop doctor fake >out 2>err || fail "doctor fake: $(cat err)"
grep -q "Doctor here." out || fail "doctor fake: $(cat out)"

[ -z "$(ls "$TMPDIR")" ] || fail "left in TMPDIR: $(ls "$TMPDIR")"
step "all passed"
EOF

p=/data/data/com.termux/files
start=$(date +%s)
bwrap --unshare-all --share-net --die-with-parent --clearenv \
  --unshare-user --uid 10123 --gid 10123 \
  --bind "$top/usr" "$p/usr" --bind "$top/home" "$p/home" \
  --ro-bind "$bin" "$p/usr/bin/agent-loop" \
  --ro-bind /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu --ro-bind /usr/lib64 /lib64 \
  --proc /proc --dev /dev \
  --setenv PREFIX "$p/usr" --setenv HOME "$p/home" --setenv TMPDIR "$p/usr/tmp" \
  --setenv PATH "$p/usr/bin" --setenv TERM xterm-256color --setenv FAKE_DIR "$p/home/fake" \
  --setenv LANG en_US.UTF-8 --chdir "$p/home" \
  "$p/usr/bin/sh" "$p/home/steps.sh"
echo "termux-sandbox: passed in $(( $(date +%s) - start ))s" >&2
