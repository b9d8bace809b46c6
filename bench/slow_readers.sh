#!/usr/bin/env bash
# Slow readers and many bodies against one `switchboard serve` (memory store, echo-task agent,
# default limits unless SB_FLAGS adds some), on 127.0.0.1 only. For each attack: the server's
# RSS idle before, its peak during (VmHWM, reset with clear_refs before each attack), and RSS
# after; meanwhile a normal client (one keep-alive connection, a small SendMessage every 50 ms)
# records its median and p99 latency.
#
#   SB=path/to/switchboard   (default $CARGO_TARGET_DIR/release/switchboard, else target/debug)
#   EX=path/to/slow_readers  (default: cargo build --example slow_readers, debug)
#   SB_FLAGS="--max-buffered-bytes 0 --write-timeout-ms 0"   (e.g. to see the server without them)
#   CHARS=4000000 STREAMS=60 CONNS=30 BODIES=50 BODY_BYTES=9900000 HOLD=40 OUT=dir
#
# Attacks (from the issue): one HTTP/2 connection with SETTINGS_INITIAL_WINDOW_SIZE = 0 opening
# STREAMS GetTask streams on two tasks holding CHARS characters (twice: history + artifact);
# CONNS HTTP/1.1 connections asking for such a task and never reading; BODIES concurrent
# BODY_BYTES request bodies from one address. Each attack holds for HOLD s (> the 30 s write
# timeout), so "after" shows whether the server let go.
set -euo pipefail
cd "$(dirname "$0")/.."
CHARS=${CHARS:-4000000}; STREAMS=${STREAMS:-60}; CONNS=${CONNS:-30}
BODIES=${BODIES:-50}; BODY_BYTES=${BODY_BYTES:-9900000}; HOLD=${HOLD:-40}
OUT=${OUT:-bench/out/slow_readers/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
if [ -z "${SB:-}" ]; then
  SB=${CARGO_TARGET_DIR:-target}/release/switchboard
  [ -x "$SB" ] || SB=target/debug/switchboard
fi
if [ -z "${EX:-}" ]; then
  cargo build -q -p switchboard --example slow_readers
  EX=target/debug/examples/slow_readers
fi
echo "server: $SB $(${SB} --version 2>/dev/null || true); flags: ${SB_FLAGS:-none}" | tee "$OUT/env.txt"

PORT_FILE=$OUT/serve.out
# shellcheck disable=SC2086
SWITCHBOARD_LOG=error "$SB" serve --listen 127.0.0.1:0 --store memory --agent echo-task --no-push \
  ${SB_FLAGS:-} >"$PORT_FILE" 2>"$OUT/serve.err" &
PID=$!
trap 'kill $PID 2>/dev/null || true; sleep 1; kill -9 $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "127.0.0.1:" "$PORT_FILE" 2>/dev/null && break; sleep 0.1; done
PORT=$(grep -o "127.0.0.1:[0-9]*" "$PORT_FILE" | head -1 | cut -d: -f2)
echo "pid $PID port $PORT"

rss() { awk '/^VmRSS:/ {print int($2/1024)}' /proc/$PID/status; }
hwm() { awk '/^VmHWM:/ {print int($2/1024)}' /proc/$PID/status; }

T1=$("$EX" task "$PORT" "$CHARS"); T2=$("$EX" task "$PORT" "$CHARS")
sleep 2
printf '| attack | RSS idle before | peak during | RSS after | grew (peak − before) | what the attacker got | normal client |\n|---|---|---|---|---|---|---|\n' > "$OUT/table.md"

attack() {
  local name=$1; shift
  echo 5 > /proc/$PID/clear_refs
  local before; before=$(rss)
  "$EX" latency "$PORT" "$((HOLD - 5))" > "$OUT/$name.latency" &
  local lat=$!
  "$@" > "$OUT/$name.attack" 2>&1 || echo "attack failed: $?" >> "$OUT/$name.attack"
  wait $lat || true
  local peak; peak=$(hwm)
  sleep 2
  local after; after=$(rss)
  printf '| %s | %s MiB | %s MiB | %s MiB | %s MiB | %s | %s |\n' "$name" "$before" "$peak" "$after" \
    "$((peak - before))" "$(tr '\n' ' ' < "$OUT/$name.attack")" "$(cat "$OUT/$name.latency")" | tee -a "$OUT/table.md"
}

attack h2-zero-window "$EX" h2-zero-window "$PORT" "$STREAMS" "$HOLD" "$T1" "$T2"
attack h1-never-read "$EX" h1-no-read "$PORT" "$CONNS" "$HOLD" "$T1"
attack many-bodies "$EX" bodies "$PORT" "$BODIES" "$BODY_BYTES"
echo; cat "$OUT/table.md"
