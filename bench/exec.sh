#!/usr/bin/env bash
# bench/exec.sh - round trip of one message through `switchboard serve`'s exec runtime
# (`runtime = "exec"`, the a2a-cli contract: text on stdin, stdout the answer) vs spawning
# the same program directly: p50/p90 over N messages (default 200), alternating the two
# paths, one message at a time (bench/exec_rtt.py). The program is the Python example
# examples/exec/a2a_cli_reverse.py, run by the same python3 on both paths.
#
#   SWITCHBOARD_BIN=/path/to/release/switchboard bash bench/exec.sh [N]
#
# Everything on 127.0.0.1; only the server started here is stopped. A debug binary is
# refused unless EXEC_ALLOW_DEBUG=1 (for trying the script itself).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=../scripts/procs.sh
. scripts/procs.sh
N=${1:-200}
BIN=${SWITCHBOARD_BIN:-target/release/switchboard}
[ -x "$BIN" ] || { echo "exec: no binary at $BIN (set SWITCHBOARD_BIN to a release build)" >&2; exit 2; }
case "$BIN" in
  *target/debug/*) [ "${EXEC_ALLOW_DEBUG:-0}" = 1 ] || { echo "exec: $BIN is a debug build; use a release one" >&2; exit 2; } ;;
esac
PY=$(command -v python3)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local rc=$?
  stop_started
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

PORT=$(free_port)
PROGRAM="$ROOT/examples/exec/a2a_cli_reverse.py"
cat > "$WORK/serve.toml" <<TOML
agent = "echo-message"
[[agents]]
name = "reverse"
path = "/reverse"
runtime = "exec"
command = "$PY"
args = ["-u", "$PROGRAM"]
max_concurrent = 4
TOML
SWITCHBOARD_LOG=warn SWITCHBOARD_RATE_PER_SECOND=0 "$BIN" serve --config "$WORK/serve.toml" \
  --listen "127.0.0.1:$PORT" --store "sqlite://$WORK/exec.db" > "$WORK/serve.out" 2> "$WORK/serve.log" &
PIDS+=($!)
wait_http "http://127.0.0.1:$PORT/reverse/.well-known/agent-card.json" 30 || { cat "$WORK/serve.log"; exit 1; }

echo "binary: $BIN ($("$BIN" --version)), loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" bench/exec_rtt.py "http://127.0.0.1:$PORT/reverse" "$N" "$PY" -u "$PROGRAM"
echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)"
