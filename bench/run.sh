#!/usr/bin/env bash
# bench/run.sh - switchboard's load benchmark: ONE run that measures the peer A2A servers
# (raw axum, official Rust SDK a2a-lf with TCP_NODELAY, tomtom215 a2a-rust, JS SDK,
# Python SDK) and switchboard (sb-message, sb-task, sb-task-sqlite; sb-rest-task and
# sb-grpc-task = sb-task's server driven over HTTP+JSON and gRPC) with the same load
# settings as /work/shared/peers-bench/run_all.sh (this script is derived from it),
# then an RSS-over-time check (sb-task vs rs-lf-nd-task) and the ratios of the targets.
#
#   bench/setup.sh              # once (peers copy + builds + oha + switchboard release)
#   bench/run.sh                # defaults: ~17 min, budget 20 min
#   TOTAL_BUDGET_S=600 SERVERS="raw-message sb-message" RSS_SERVERS= bench/run.sh
#
# Safety: every target is 127.0.0.1; every load is bounded (-z/-n) and wrapped in
# `timeout`; only PIDs started here are stopped; a total time budget skips what
# would not fit (and says so). Output: bench/out/results/<timestamp>/ + tables on stdout.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"

BENCH=$(cd "$(dirname "$0")" && pwd)
PEERS=${PEERS:-$BENCH/out/peers}
case ${OUT:-} in ''|/*) ;; *) OUT=$PWD/$OUT ;; esac   # a relative OUT is relative to the caller's directory
cd "$BENCH"

DUR=${DUR:-10s}          # unary load duration per repetition
SDUR=${SDUR:-5s}         # streaming load duration per repetition
CONC=${CONC:-64}         # concurrent keep-alive connections
REPS=${REPS:-3}          # repetitions; the table reports the median
WARM=${WARM:-3s}         # warm-up load before measuring (not recorded)
N1=${N1:-300}            # requests for the single-connection latency runs
PIN=${PIN:-0}            # 1: taskset server->CPU0, oha->CPU1
PY_LOOP=${PY_LOOP:-uvloop}
PY_HTTP=${PY_HTTP:-httptools}
SERVERS=${SERVERS:-"raw raw-message rs-lf-nd-message rs-lf-nd-task rs-tt-message rs-tt-task js-message js-task py-message py-task sb-message sb-task sb-rest-task sb-grpc-task sb-task-sqlite sb-task-pg"}
RSS_SERVERS=${RSS_SERVERS-"sb-task rs-lf-nd-task"}   # RSS-over-time check ("" to skip)
RSS_DUR=${RSS_DUR:-60}   # seconds of sustained unary load (-c CONC) per RSS server
RSS_WARM=${RSS_WARM:-10} # seconds into that load whose sample is the baseline of end/first ratio
SB_MAX_TASKS=${SB_MAX_TASKS:-}   # if set and `serve --help` has --memory-max-terminal-tasks: pass it
SB_PORT=${SB_PORT:-7301}
TOTAL_BUDGET_S=${TOTAL_BUDGET_S:-1200}
COUNT_N=${COUNT_N:-2000} # requests of the task-count check of the binding rows (sb-task, sb-rest-task, sb-grpc-task)
BINDINGS=${BINDINGS:-1}   # 1: end with bench/bindings.sh (one load generator, h2load, for all three bindings)
PG_RATIO=${PG_RATIO:-1}   # 1: then bench/pg.sh ratio (serve on PostgreSQL beside pgbench's one-task transaction)
KEEP_DB=${KEEP_DB:-0}    # 1: keep the sqlite file of sb-task-sqlite (it is deleted after its size is noted)
OUT=${OUT:-$BENCH/out/results/$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1

OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
PY=$PEERS/.venv/bin/python
RAW=$PEERS/raw-axum/target/release/raw-axum
RS_LF=$PEERS/rust-a2a-lf/target/release/rust-a2a-lf              # a2a-lf + a2a-server-lf (a2aproject/a2a-rs)
RS_TT=$PEERS/rust-a2a-protocol/target/release/rust-a2a-protocol  # a2a-protocol-server (tomtom215/a2a-rust)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
# A second switchboard build (e.g. the commit before a change): rows sbb-<x> run it exactly as
# the sb-<x> rows run $SB (same flags, port, bodies, checks), in the same run beside the peers,
# and summarize.py prints every ratio goal before (sbb-*) and after (sb-*) in one table.
SB_BEFORE=${SB_BEFORE:-}
# PAIRED=1 (default): a row sb-<x> and its twin sbb-<x> both in SERVERS run side by side (two
# servers up, ports SB_PORT and SB_PORT+1), their warm-ups, reps and single-connection runs
# alternating ABBA, so both builds see the same minutes of a noisy machine; summarize.py then
# adds the median of the per-rep after ÷ before ratios. PAIRED=0: one server after the other.
PAIRED=${PAIRED:-1}
# Writes/checks the gRPC request and answer frames (crates/switchboard-proto/examples/grpc_bench_frame.rs).
GRPC_FRAME=${GRPC_FRAME:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/examples/grpc_bench_frame}

# Check only what the selected servers need.
need=("$OHA")
for srv in $SERVERS $RSS_SERVERS; do
  case $srv in
    raw|raw-message) need+=("$RAW") ;; py-*) need+=("$PY") ;; js-*) need+=("$PEERS/js/node_modules/@a2a-js/sdk/package.json") ;;
    rs-lf-*) need+=("$RS_LF") ;; rs-tt-*) need+=("$RS_TT") ;; sb-grpc-*) need+=("$SB" "$GRPC_FRAME") ;; sb-*) need+=("$SB") ;;
    sbb-*) [ -n "$SB_BEFORE" ] || { echo "row $srv needs SB_BEFORE=/path/to/the/other/switchboard" >&2; exit 1; }
           need+=("$SB_BEFORE"); case $srv in sbb-grpc-*) need+=("$GRPC_FRAME") ;; esac ;;
    *) echo "unknown server $srv" >&2; exit 1 ;;
  esac
done
for f in "${need[@]}"; do
  [ -e "$f" ] || { echo "missing $f - run bench/setup.sh first" >&2; exit 1; }
done
mkdir -p "$OUT"
START_TS=$(date +%s)

# The request bodies every server gets (A2A 1.0 JSON-RPC; header A2A-Version: 1.0).
UNARY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
STREAM='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
# The same message over HTTP+JSON (POST /message:send and /message:stream: the bare SendMessageRequest)
# and over gRPC (an HTTP/2 POST whose body is one gRPC frame: flag 0, 4-byte big-endian length,
# protobuf SendMessageRequest; written below by grpc_bench_frame, deterministic).
REST_UNARY='{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}'
GRPC_PATH=/lf.a2a.v1.A2AService/SendMessage

if [ "$PIN" = 1 ]; then SRV_PIN=(taskset -c 0); OHA_PIN=(taskset -c 1); else SRV_PIN=(); OHA_PIN=(); fi

SPID=""
BGPID=""
declare -A P_PID=() P_PORT=()   # the servers up at once (name -> pid, port): see use_server
stop_pid() {  # stop_pid PID: SIGTERM, wait up to 10 s, then SIGKILL (only this PID)
  local p=$1 i
  kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
  kill "$p" 2>/dev/null || true
  for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then echo "pid $p ignored SIGTERM for 10 s; SIGKILL" >&2; kill -9 "$p" 2>/dev/null || true; fi
  wait "$p" 2>/dev/null || true
}
cleanup() {
  if [ -n "$BGPID" ]; then stop_pid "$BGPID"; BGPID=""; fi
  if [ -n "$SPID" ]; then stop_pid "$SPID"; SPID=""; fi
  local p; for p in "${!P_PID[@]}"; do stop_pid "${P_PID[$p]}"; done; P_PID=()
  if [ -n "${PG_DIR:-}" ]; then "$BENCH/pg.sh" stop "$PG_DIR" "${PG_PORT:-7399}"; PG_DIR=""; fi
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

secs() { local v=$1; case $v in *ms) echo 1 ;; *s) echo "${v%s}" ;; *m) echo $(( ${v%m} * 60 )) ;; *) echo "$v" ;; esac; }
budget_left() { echo $(( TOTAL_BUDGET_S - ($(date +%s) - START_TS) )); }
rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM:/{print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }  # utime+stime, all threads
now() { date +%s.%N; }
sys_busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }   # all CPUs: user nice system irq softirq steal
# CPU seconds (user+sys) of this shell's finished children (oha under timeout included), via the
# `times` builtin run in this shell (not in a subshell, whose children counters start at 0).
child_cpu_s() {  # sets CHILD_S (call it directly, not inside $(...))
  times >"$OUT/.times"
  CHILD_S=$(awk 'NR==2{t=0; for(i=1;i<=2;i++){v=$i; sub(/s$/,"",v); split(v,a,"m"); t+=a[1]*60+a[2]} printf "%.3f", t}' "$OUT/.times")
}

# Estimated seconds one server takes (start + checks + warm-up + loads + stop).
est_server() {
  local srv=${1/#sbb-/sb-} t
  t=$(( 8 + $(secs "$WARM") + REPS * $(secs "$DUR") ))
  case $srv in raw|raw-message|sb-grpc-task) ;; *) t=$(( t + 2 + REPS * $(secs "$SDUR") )) ;; esac
  case $srv in sb-task|sb-rest-task|sb-grpc-task) t=$(( t + 2 )) ;; esac   # count check
  case $srv in py-*) t=$(( t + 8 )) ;; esac   # 2 x 300 sequential requests at a few ms each
  echo "$t"
}
est_rss() { echo $(( RSS_DUR + 12 )); }

# Plan: if the whole list does not fit the budget, drop the least important servers first.
plan=($SERVERS); rss_plan=($RSS_SERVERS); skipped=()
plan_total() {
  local t=0 s
  for s in "${plan[@]}"; do t=$(( t + $(est_server "$s") )); done
  for s in "${rss_plan[@]}"; do t=$(( t + $(est_rss) )); done
  echo "$t"
}
for victim in py-task py-message js-message raw rs-tt-message rs-lf-nd-message js-task rss:rs-lf-nd-task \
              rs-tt-task py-message rs-lf-nd-task raw-message rss:sb-task sb-task-pg sb-grpc-task sb-rest-task sb-task-sqlite sb-message sb-task; do
  [ "$(plan_total)" -le "$TOTAL_BUDGET_S" ] && break
  case $victim in
    rss:*) v=${victim#rss:}; new=(); for s in "${rss_plan[@]}"; do [ "$s" = "$v" ] && skipped+=("rss:$s") || new+=("$s"); done
           rss_plan=("${new[@]}") ;;
    *) new=(); for s in "${plan[@]}"; do [ "$s" = "$victim" ] && skipped+=("$s") || new+=("$s"); done
       plan=("${new[@]}") ;;
  esac
done
if [ ${#skipped[@]} -gt 0 ]; then
  echo "time budget ${TOTAL_BUDGET_S}s: planned estimate too long, SKIPPING: ${skipped[*]}" >&2
fi

# How oha speaks to the current server (set by start_server): JSON over HTTP/1.1 by default;
# gRPC = HTTP/2 with prior knowledge (h2c), the gRPC content type and `te: trailers`.
OHA_PROTO=(-H 'Content-Type: application/json' -H 'A2A-Version: 1.0')

# oha_run <outfile> <oha args...>
oha_run() {
  local out=$1; shift
  timeout 90 "${OHA_PIN[@]}" "$OHA" --no-tui --output-format json -m POST \
    "${OHA_PROTO[@]}" "$@" >"$out"
}

# body_args <body>: oha's body options; a body "@FILE" is sent from FILE (binary-safe).
body_args() { case $1 in @*) BODY_ARGS=(-D "${1#@}") ;; *) BODY_ARGS=(-d "$1") ;; esac; }

# measure <name> <kind> <rep> <url> <body> <oha load args...>
measure() {
  local name=$1 kind=$2 rep=$3 url=$4 body=$5; shift 5
  local f="$OUT/$name.$kind.$rep.json"
  echo 5 >"/proc/$SPID/clear_refs"          # reset VmHWM so the peak is this run's
  local c0 t0 c1 t1 m0 m1 o0 o1 hz
  hz=$(getconf CLK_TCK)
  child_cpu_s; o0=$CHILD_S; m0=$(sys_busy); c0=$(cpu_ticks "$SPID"); t0=$(now)
  body_args "$body"
  oha_run "$f" "${BODY_ARGS[@]}" "$@" "$url"
  c1=$(cpu_ticks "$SPID"); m1=$(sys_busy); t1=$(now); child_cpu_s; o1=$CHILD_S
  # columns: server kind rep json server_cpu% VmHWM VmRSS | machine_busy% oha_cpu% (100 % = one core)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$rep" "$(basename "$f")" \
    "$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$hz" \
        'BEGIN{printf "%.1f", 100*(b-a)/hz/(e-s)}')" "$(hwm_kb "$SPID")" "$(rss_kb "$SPID")" \
    "$(awk -v a="$m0" -v b="$m1" -v s="$t0" -v e="$t1" -v hz="$hz" 'BEGIN{printf "%.1f", 100*(b-a)/hz/(e-s)}')" \
    "$(awk -v a="$o0" -v b="$o1" -v s="$t0" -v e="$t1" 'BEGIN{printf "%.1f", 100*(b-a)/(e-s)}')" >>"$OUT/runs.tsv"
}

SB_EXTRA=()
if [ -n "$SB_MAX_TASKS" ]; then
  if "$SB" serve --help 2>/dev/null | grep -q -- '--memory-max-terminal-tasks'; then
    SB_EXTRA=(--memory-max-terminal-tasks "$SB_MAX_TASKS")
  else
    echo "SB_MAX_TASKS set but 'switchboard serve --help' has no --memory-max-terminal-tasks; not passed" >&2
  fi
fi

# task_count: the number of tasks the sb-* server on $PORT holds (ListTasks totalSize, JSON-RPC).
task_count() {
  curl -fsS --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -d '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1}}' "http://$HOST:$PORT/" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["totalSize"])'
}

# count_check <name>: oha sees only HTTP statuses, and a gRPC error is an HTTP 200 with a
# non-zero grpc-status trailer. So a bounded load (-n COUNT_N, below the memory store's bound
# on finished tasks) must create exactly as many tasks as oha counted 200s. counts.tsv:
# server, requests, oha 200s, tasks created.
count_check() {
  local name=$1 before after ok
  before=$(task_count)
  body_args "$U_BODY"
  oha_run "$OUT/$name.count.json" "${BODY_ARGS[@]}" -n "$COUNT_N" -c "$CONC" "$U_URL"
  after=$(task_count)
  ok=$(python3 -c 'import json,sys; print((json.load(open(sys.argv[1])).get("statusCodeDistribution") or {}).get("200", 0))' "$OUT/$name.count.json")
  printf '%s\t%s\t%s\t%s\n' "$name" "$COUNT_N" "$ok" "$(( after - before ))" >>"$OUT/counts.tsv"
  if [ "$ok" != "$COUNT_N" ] || [ "$(( after - before ))" != "$ok" ]; then
    echo "$name: count check FAILED: $COUNT_N requests, oha 200s $ok, tasks created $(( after - before ))" >&2
  fi
}

# server_urls <kind>: how the load reaches the server on $PORT -> STREAMS, U_URL/U_BODY,
# S_URL/S_BODY, OHA_PROTO.
server_urls() {
  STREAMS=1
  OHA_PROTO=(-H 'Content-Type: application/json' -H 'A2A-Version: 1.0')
  U_URL="http://$HOST:$PORT/"; U_BODY=$UNARY; S_URL=$U_URL; S_BODY=$STREAM
  case $1 in
    raw|raw-message) STREAMS=0 ;;
    sb-rest-task) U_URL="http://$HOST:$PORT/message:send"; U_BODY=$REST_UNARY
                  S_URL="http://$HOST:$PORT/message:stream"; S_BODY=$REST_UNARY ;;
    sb-grpc-task) STREAMS=0   # unary only: the bindings table compares SendMessage
                  U_URL="http://$HOST:$PORT$GRPC_PATH"; U_BODY="@$OUT/grpc-send.bin"
                  OHA_PROTO=(--http2 -H 'content-type: application/grpc' -H 'te: trailers' -H 'a2a-version: 1.0') ;;
  esac
}

# use_server <name>: make a server started by start_server (and still up) the current one.
use_server() { SPID=${P_PID[$1]}; PORT=${P_PORT[$1]}; server_urls "${1/#sbb-/sb-}"; }

# start_server <name> -> sets SPID, PORT, STREAMS, U_URL/U_BODY, S_URL/S_BODY, OHA_PROTO
start_server() {
  local name=$1 log=${2:-$OUT/$1.log}
  # kind: the row as run.sh knows it (sbb-x is sb-x on the SB_BEFORE binary); sb: the binary
  local kind=${name/#sbb-/sb-} sb=$SB
  [ "$kind" = "$name" ] || sb=$SB_BEFORE
  case $kind in raw|raw-message) PORT=8088 ;; py-*) PORT=9999 ;; js-*) PORT=41241 ;; rs-lf-*) PORT=7101 ;; rs-tt-*) PORT=7201 ;;
    sb-*) PORT=$SB_PORT ;; esac
  [ "$kind" = "$name" ] || PORT=$(( SB_PORT + 1 ))   # sbb-x: beside sb-x when the two are paired
  if curl -s -o /dev/null --max-time 1 "http://$HOST:${PORT:-0}/" 2>/dev/null; then
    echo "port $PORT on $HOST is already in use; stop that process first" >&2; exit 1
  fi
  case $kind in
    raw)        ( cd "$PEERS/raw-axum" && exec "${SRV_PIN[@]}" "$RAW" ) >"$log" 2>&1 & ;;
    raw-message) # the 227-byte message-shaped fixed body
                ( cd "$PEERS/raw-axum" && RAW_BODY=message exec "${SRV_PIN[@]}" "$RAW" ) >"$log" 2>&1 & ;;
    py-message|py-task)
                ( cd "$PEERS/py" && ECHO_MODE=${name#py-} PORT=$PORT UVICORN_LOOP=$PY_LOOP UVICORN_HTTP=$PY_HTTP \
                    exec "${SRV_PIN[@]}" "$PY" server.py ) >"$log" 2>&1 & ;;
    js-message|js-task)
                ( cd "$PEERS/js" && NODE_ENV=production ECHO_MODE=${name#js-} PORT=$PORT \
                    exec "${SRV_PIN[@]}" node server.mjs ) >"$log" 2>&1 & ;;
    rs-lf-message|rs-lf-task)   # official Rust SDK (a2a-lf / a2a-server-lf), axum, as its helloworld
                ( ECHO_MODE=${name#rs-lf-} PORT=$PORT exec "${SRV_PIN[@]}" "$RS_LF" ) >"$log" 2>&1 & ;;
    rs-lf-nd-message|rs-lf-nd-task)   # same, with TCP_NODELAY on accepted sockets
                ( NODELAY=1 ECHO_MODE=${name#rs-lf-nd-} PORT=$PORT exec "${SRV_PIN[@]}" "$RS_LF" ) >"$log" 2>&1 & ;;
    rs-tt-message|rs-tt-task)   # tomtom215/a2a-rust (a2a-protocol-server), hyper
                ( ECHO_MODE=${name#rs-tt-} PORT=$PORT exec "${SRV_PIN[@]}" "$RS_TT" ) >"$log" 2>&1 & ;;
    sb-message) ( SWITCHBOARD_LOG=warn exec "${SRV_PIN[@]}" "$sb" serve --listen "$HOST:$PORT" --store memory \
                    --agent echo-message "${SB_EXTRA[@]}" ) >"$log" 2>&1 & ;;
    sb-task|sb-rest-task|sb-grpc-task)   # one server; the rows differ in the binding the load uses
                ( SWITCHBOARD_LOG=warn exec "${SRV_PIN[@]}" "$sb" serve --listen "$HOST:$PORT" --store memory \
                    --agent echo-task "${SB_EXTRA[@]}" ) >"$log" 2>&1 & ;;
    sb-task-pg) # a throwaway PostgreSQL (bench/pg.sh), one replica, every task durable before the reply
                PG_DIR=$(mktemp -d /tmp/sb-bench-pg.XXXXXX)
                PG_URL=$("$BENCH/pg.sh" start "$PG_DIR" "${PG_PORT:-7399}")
                ( SWITCHBOARD_LOG=warn exec "${SRV_PIN[@]}" "$sb" serve --listen "$HOST:$PORT" \
                    --store "$PG_URL" --agent echo-task ) >"$log" 2>&1 & ;;
    sb-task-sqlite)
                rm -f "$OUT/$name.db" "$OUT/$name.db-wal" "$OUT/$name.db-shm"
                ( SWITCHBOARD_LOG=warn exec "${SRV_PIN[@]}" "$sb" serve --listen "$HOST:$PORT" \
                    --store "sqlite://$OUT/$name.db" --agent echo-task ) >"$log" 2>&1 & ;;
    *) echo "unknown server $name" >&2; exit 1 ;;
  esac
  SPID=$!
  P_PID[$name]=$SPID; P_PORT[$name]=$PORT
  case $kind in sb-grpc-task) "$GRPC_FRAME" request "$OUT/grpc-send.bin" ;; esac
  server_urls "$kind"
  local i
  for i in $(seq 1 150); do
    kill -0 "$SPID" 2>/dev/null || { echo "$name died:" >&2; cat "$log" >&2; exit 1; }
    curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT/.well-known/agent-card.json" 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.2
  kill -0 "$SPID" 2>/dev/null || { echo "$name died (port $PORT busy?):" >&2; cat "$log" >&2; exit 1; }
  [ -n "${3:-}" ] && return 0   # RSS check: no extra requests before the load
  curl -fsS --max-time 5 -o "$OUT/$name.agent-card.json" "http://$HOST:$PORT/.well-known/agent-card.json"
  # Correctness check: the JSON-RPC result (REST: the task) must be a success.
  local resp
  case $kind in
    sb-grpc-task)   # a real gRPC answer: grpc-status 0 (trailer) and a completed Task in the frame
      curl -sS --http2-prior-knowledge --max-time 10 -D "$OUT/$name.unary-headers.txt" -o "$OUT/$name.unary-response.bin" \
        -H 'content-type: application/grpc' -H 'te: trailers' -H 'a2a-version: 1.0' \
        --data-binary "@$OUT/grpc-send.bin" "$U_URL"
      if grep -qi '^grpc-status: 0' "$OUT/$name.unary-headers.txt" &&
         resp=$("$GRPC_FRAME" check "$OUT/$name.unary-response.bin" 2>&1); then
        echo "$name: OK (gRPC $GRPC_PATH: grpc-status 0, completed task $resp)" >>"$OUT/checks.txt"
      else
        echo "$name: SendMessage over gRPC did not succeed: $(tr -d '\r' <"$OUT/$name.unary-headers.txt" | tr '\n' ' ') ${resp:-}" >&2; exit 1
      fi ;;
    *)
      resp=$(curl -fsS --max-time 10 "${OHA_PROTO[@]}" -d "$U_BODY" "$U_URL")
      echo "$resp" >"$OUT/$name.unary-response.json"
      case $resp in *'"result"'*|*'"task"'*) ;; *) echo "$name: SendMessage did not succeed: $resp" >&2; exit 1 ;; esac ;;
  esac
  if [ "$STREAMS" = 1 ]; then
    curl -fsS -N --max-time 10 -D "$OUT/$name.stream-headers.txt" "${OHA_PROTO[@]}" \
      -d "$S_BODY" "$S_URL" >"$OUT/$name.stream-response.txt"
    grep -q '"result"\|"task"' "$OUT/$name.stream-response.txt" || { echo "$name: stream failed" >&2; exit 1; }
  fi
  case $kind in sb-grpc-*) ;; sb-*)   # shape check of our own answers (A2A 1.0): recorded, and printed by summarize.py
    python3 "$BENCH/check_a2a.py" "$name" "$OUT" >>"$OUT/checks.txt" 2>&1 || true ;;
  esac
  case $kind in sb-task|sb-rest-task|sb-grpc-task) count_check "$name" ;; esac
  sleep 1
}

stop_server() {  # the current server
  local p; for p in "${!P_PID[@]}"; do [ "${P_PID[$p]}" != "$SPID" ] || { unset "P_PID[$p]"; unset "P_PORT[$p]"; }; done
  stop_pid "$SPID"; SPID=""
}

: >"$OUT/runs.tsv"; : >"$OUT/pairs.tsv"; : >"$OUT/counts.tsv"; : >"$OUT/idle.tsv"; : >"$OUT/after.tsv"; : >"$OUT/checks.txt"; : >"$OUT/load.tsv"
{
  echo "date: $(date -Is)"; echo "host: $(uname -srm), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), cpu MHz $(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: DUR=$DUR SDUR=$SDUR CONC=$CONC REPS=$REPS WARM=$WARM N1=$N1 COUNT_N=$COUNT_N PIN=$PIN PY_LOOP=$PY_LOOP PY_HTTP=$PY_HTTP TOTAL_BUDGET_S=$TOTAL_BUDGET_S"
  echo "servers: ${plan[*]}"
  echo "rss-over-time: ${rss_plan[*]:-none} (RSS_DUR=${RSS_DUR}s RSS_WARM=${RSS_WARM}s, -c $CONC)"
  echo "skipped by plan: ${skipped[*]:-none}"
  echo "switchboard: $SB ($(stat -c '%y' "$SB" 2>/dev/null | cut -d. -f1)) extra flags: ${SB_EXTRA[*]:-none}"
  [ -z "$SB_BEFORE" ] || echo "switchboard before (sbb-* rows): $SB_BEFORE ($(stat -c '%y' "$SB_BEFORE" 2>/dev/null | cut -d. -f1)), git ${SB_BEFORE_REV:-unknown}"
  echo "switchboard git: $(git -C "$BENCH/.." rev-parse --short HEAD 2>/dev/null) (+ $(git -C "$BENCH/.." status --porcelain 2>/dev/null | grep -vc '^??') modified files at run time)"
  echo "oha: $("$OHA" --version)"; echo "python: $("$PY" --version 2>&1 || true)"; echo "node: $(node --version 2>/dev/null || true)"
  echo "rustc: $(rustc --version 2>&1)"
} >"$OUT/env.txt"
"$SB" serve --help >"$OUT/switchboard-serve-help.txt" 2>&1 || true
cat "$OUT/env.txt"

# One server's part of the run, in phases, so that two servers can interleave them.
srv_begin() {  # start it; idle RSS after start + 1 request + 1 s
  printf '%s\t%s\n' "$1" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/load.tsv"
  start_server "$1"
  echo "== $1 (pid $SPID, port $PORT)  [$(( $(date +%s) - START_TS ))s elapsed]"
  printf '%s\t%s\n' "$1" "$(rss_kb "$SPID")" >>"$OUT/idle.tsv"
}
srv_warm() { use_server "$1"; body_args "$U_BODY"; oha_run /dev/null "${BODY_ARGS[@]}" -z "$WARM" -c "$CONC" "$U_URL"; }
srv_unary() { use_server "$1"; measure "$1" unary "$2" "$U_URL" "$U_BODY" -z "$DUR" -c "$CONC"; }
srv_single() {  # the single-connection latency runs
  use_server "$1"
  measure "$1" unary-1c 1 "$U_URL" "$U_BODY" -n "$N1" -c 1
  [ "$STREAMS" = 0 ] || measure "$1" stream-1c 1 "$S_URL" "$S_BODY" -n "$N1" -c 1
}
srv_stream() { use_server "$1"; [ "$STREAMS" = 0 ] || measure "$1" stream "$2" "$S_URL" "$S_BODY" -z "$SDUR" -c "$CONC"; }
srv_end() {  # RSS after the loads, stop, tidy up what the row left behind
  local srv=$1
  use_server "$srv"
  printf '%s\t%s\n' "$srv" "$(rss_kb "$SPID")" >>"$OUT/after.tsv"
  stop_server
  if [ "${srv/#sbb-/sb-}" = sb-task-pg ] && [ -n "${PG_DIR:-}" ]; then "$BENCH/pg.sh" stop "$PG_DIR" "${PG_PORT:-7399}"; PG_DIR=""; fi
  if [ "${srv/#sbb-/sb-}" = sb-task-sqlite ]; then
    { du -b "$OUT/$srv.db" "$OUT/$srv.db-wal" "$OUT/$srv.db-shm" 2>/dev/null || true
      python3 - "$OUT/$srv.db" <<'PY' || true
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (t,) in c.execute("select name from sqlite_master where type='table' order by name"):
    print('rows', t, c.execute(f'select count(*) from "{t}"').fetchone()[0])
PY
    } >"$OUT/$srv.db-size.txt"
    [ "$KEEP_DB" = 1 ] || rm -f "$OUT/$srv.db" "$OUT/$srv.db-wal" "$OUT/$srv.db-shm"
  fi
}

# twin <row>: the other build's row of a pairable row (sb-x <-> sbb-x), if pairing is on.
# sb-task-pg is not paired: its throwaway PostgreSQL is one per run.sh.
twin() {
  [ "$PAIRED" = 1 ] && [ -n "$SB_BEFORE" ] || return 1
  case $1 in sb-task-pg|sbb-task-pg) return 1 ;; sbb-*) echo "sb-${1#sbb-}" ;; sb-*) echo "sbb-${1#sb-}" ;; *) return 1 ;; esac
}

declare -A DONE=()
for srv in "${plan[@]}"; do
  [ -z "${DONE[$srv]:-}" ] || continue
  rows=("$srv")
  if tw=$(twin "$srv") && [[ " ${plan[*]} " == *" $tw "* ]]; then rows+=("$tw"); fi
  need_s=0; for s in "${rows[@]}"; do need_s=$(( need_s + $(est_server "$s") )); done
  if [ "$(budget_left)" -lt "$need_s" ]; then
    echo "time budget: $(budget_left)s left < ~${need_s}s needed, SKIPPING ${rows[*]}" | tee -a "$OUT/skipped.txt" >&2
    for s in "${rows[@]}"; do DONE[$s]=1; done; continue
  fi
  for s in "${rows[@]}"; do DONE[$s]=1; srv_begin "$s"; done
  if [ ${#rows[@]} = 2 ]; then printf '%s\t%s\n' "${rows[@]}" >>"$OUT/pairs.tsv"; fi
  # ABBA: odd reps in the listed order, even reps reversed (one server: the same thing).
  odd="${rows[*]}"; even=$odd; [ ${#rows[@]} = 1 ] || even="${rows[1]} ${rows[0]}"
  for s in "${rows[@]}"; do srv_warm "$s"; done
  for r in $(seq 1 "$REPS"); do for s in $( (( r % 2 )) && echo "$odd" || echo "$even" ); do srv_unary "$s" "$r"; done; done
  for s in "${rows[@]}"; do srv_single "$s"; done
  for r in $(seq 1 "$REPS"); do for s in $( (( r % 2 )) && echo "$odd" || echo "$even" ); do srv_stream "$s" "$r"; done; done
  for s in "${rows[@]}"; do srv_end "$s"; done
done

# RSS over time: a fresh process, RSS_DUR seconds of unary load at -c CONC, VmRSS every second.
# rss-<name>.tsv: t_s (since load start), VmRSS kB, server CPU ticks. rss-<name>.oha.json: the load's oha report.
for srv in "${rss_plan[@]}"; do
  need_s=$(est_rss)
  if [ "$(budget_left)" -lt "$need_s" ]; then
    echo "time budget: $(budget_left)s left < ~${need_s}s needed, SKIPPING rss:$srv" | tee -a "$OUT/skipped.txt" >&2; continue
  fi
  start_server "$srv" "$OUT/rss-$srv.log" norequests
  echo "== rss-over-time $srv (pid $SPID, port $PORT, ${RSS_DUR}s)  [$(( $(date +%s) - START_TS ))s elapsed]"
  f="$OUT/rss-$srv.tsv"
  printf 't_s\trss_kb\tcpu_ticks\n' >"$f"
  printf 'start\t%s\t%s\n' "$(rss_kb "$SPID")" "$(cpu_ticks "$SPID")" >>"$f"   # idle, before any request
  t0=$(now)
  body_args "$U_BODY"
  oha_run "$OUT/rss-$srv.oha.json" "${BODY_ARGS[@]}" -z "${RSS_DUR}s" -c "$CONC" "$U_URL" &
  BGPID=$!
  i=0
  while kill -0 "$BGPID" 2>/dev/null; do
    i=$(( i + 1 ))
    sleep "$(awk -v t0="$t0" -v i="$i" -v n="$(now)" 'BEGIN{d=t0+i-n; if (d<0) d=0; printf "%.3f", d}')"
    kill -0 "$BGPID" 2>/dev/null || break
    printf '%s\t%s\t%s\n' "$i" "$(rss_kb "$SPID")" "$(cpu_ticks "$SPID")" >>"$f"
  done
  wait "$BGPID" || echo "rss load of $srv: oha exited non-zero" >&2
  BGPID=""
  sleep 1
  printf 'after\t%s\t%s\n' "$(rss_kb "$SPID")" "$(cpu_ticks "$SPID")" >>"$f"   # 1 s after the load
  stop_server
done

# The bindings compared with one load generator (bench/bindings.sh explains why not oha).
# Part of the same run, after the peers, so its table sits beside theirs; judged in summarize.py.
if [ "$BINDINGS" = 1 ]; then
  if ! command -v "${H2LOAD:-h2load}" >/dev/null; then
    echo "h2load missing (bench/setup.sh installs it), SKIPPING the bindings table" | tee -a "$OUT/skipped.txt" >&2
  elif [ "$(budget_left)" -lt 240 ]; then
    echo "time budget: $(budget_left)s left < ~240s needed, SKIPPING the bindings table" | tee -a "$OUT/skipped.txt" >&2
  else
    # bindings.sh takes whole seconds; run.sh's DUR/WARM (e.g. "5s") are not its settings.
    BINDINGS_ENV=(env REPS="${BINDINGS_REPS:-5}" DUR="${BINDINGS_DUR:-10}" WARM=3 KINDS="${BINDINGS_KINDS:-jsonrpc rest grpc grpc-mux}")
    echo "== bindings (bench/bindings.sh, h2load)  [$(( $(date +%s) - START_TS ))s elapsed]"
    SB="$SB" OUT="$OUT/bindings" "${BINDINGS_ENV[@]}" "$BENCH/bindings.sh" >/dev/null || echo "bench/bindings.sh failed" | tee -a "$OUT/skipped.txt" >&2
    if [ -n "$SB_BEFORE" ]; then   # the same for the other build, right after (summarize.py: goal (f) before/after)
      echo "== bindings of SB_BEFORE  [$(( $(date +%s) - START_TS ))s elapsed]"
      SB="$SB_BEFORE" OUT="$OUT/bindings-before" "${BINDINGS_ENV[@]}" "$BENCH/bindings.sh" >/dev/null || echo "bench/bindings.sh (SB_BEFORE) failed" | tee -a "$OUT/skipped.txt" >&2
    fi
  fi
fi

# PostgreSQL's own limit beside serve on it, on one throwaway cluster (bench/pg.sh explains).
# pg.sh ratio takes about WARM + (REPS + 1) x 2 x DUR seconds plus start-up.
if [ "$PG_RATIO" = 1 ]; then
  if ! command -v pgbench >/dev/null; then
    echo "pgbench missing (crates/switchboard-store-postgres/install-postgres.sh), SKIPPING the PostgreSQL ratio" | tee -a "$OUT/skipped.txt" >&2
  elif [ "$(budget_left)" -lt 90 ]; then
    echo "time budget: $(budget_left)s left < ~90s needed, SKIPPING the PostgreSQL ratio" | tee -a "$OUT/skipped.txt" >&2
  else
    echo "== PostgreSQL ratio (bench/pg.sh ratio)  [$(( $(date +%s) - START_TS ))s elapsed]"
    SB="$SB" OUT="$OUT/pg" CONC="$CONC" WARM=3 DUR="${PG_DUR:-10}" REPS="${PG_REPS:-3}" "$BENCH/pg.sh" ratio \
      || echo "bench/pg.sh ratio failed" | tee -a "$OUT/skipped.txt" >&2
  fi
fi

python3 "$BENCH/summarize.py" "$OUT" | tee "$OUT/table.md"
echo "raw results: $OUT  (total $(( $(date +%s) - START_TS )) s)"
