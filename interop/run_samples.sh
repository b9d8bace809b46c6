#!/usr/bin/env bash
# Self-check of the harness: start both SDK sample servers, run both drivers
# against both (py->py, py->js, js->py, js->js), stop the servers by PID.
# Ports: PY_PORT (default 18101), JS_PORT (default 18102), on 127.0.0.1 only.
# Exit code 0 only if all four runs pass.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
./setup.sh >/dev/null || exit 1

PY_PORT=${PY_PORT:-18101}
JS_PORT=${JS_PORT:-18102}
LOG_DIR=${LOG_DIR:-$(mktemp -d)}
mkdir -p "$LOG_DIR"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done; }
trap cleanup EXIT

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_card() {  # wait up to 15 s for the agent card
  for _ in $(seq 1 150); do
    curl -sf "http://127.0.0.1:$1/.well-known/agent-card.json" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

for port in "$PY_PORT" "$JS_PORT"; do
  if port_busy "$port"; then echo "port $port is already in use" >&2; exit 1; fi
done
.venv/bin/python py/sample_server.py --port "$PY_PORT" >"$LOG_DIR/py_server.log" 2>&1 &
PIDS+=($!)
node js/sample_server.mjs --port "$JS_PORT" >"$LOG_DIR/js_server.log" 2>&1 &
PIDS+=($!)
wait_card "$PY_PORT" || { echo "python sample server did not start" >&2; cat "$LOG_DIR/py_server.log" >&2; exit 1; }
wait_card "$JS_PORT" || { echo "js sample server did not start" >&2; cat "$LOG_DIR/js_server.log" >&2; exit 1; }

rc=0
run() {  # name, command...
  local name=$1; shift
  echo "== $name"
  if timeout 300 "$@" >"$LOG_DIR/$name.out" 2>"$LOG_DIR/$name.err"; then :; else rc=1; fi
  grep -v '"ok": true' "$LOG_DIR/$name.out" | grep -v '"ok":true' || true
}
run py-to-py .venv/bin/python py/drive.py "http://127.0.0.1:$PY_PORT"
run py-to-js .venv/bin/python py/drive.py "http://127.0.0.1:$JS_PORT"
run js-to-py node js/drive.mjs "http://127.0.0.1:$PY_PORT"
run js-to-js node js/drive.mjs "http://127.0.0.1:$JS_PORT"
echo "logs: $LOG_DIR"
# One closing line for the whole matrix, summed from the four "interop: N passed, M failed" lines.
cat "$LOG_DIR"/*.out | awk '/^interop: [0-9]+ passed, [0-9]+ failed$/ {p += $2; f += $4; n++}
  END {if (n != 4) f += 4 - n; printf "samples: %d passed, %d failed\n", p, f}'
exit $rc
