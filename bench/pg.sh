#!/usr/bin/env bash
# bench/pg.sh - PostgreSQL for switchboard's benchmarks.
#
#   bench/pg.sh start DIR PORT   # a throwaway cluster (run.sh's sb-task-pg row); prints its URL
#   bench/pg.sh stop DIR PORT    # stops it and deletes DIR
#   bench/pg.sh ratio            # names the limit: pgbench's one-task transaction beside
#                                # `serve --store postgres://…` on ONE throwaway cluster
#   bench/pg.sh replicas         # one replica vs two replicas on one database, same total load
#   bench/pg.sh growth           # MINUTES (10) one-minute loads back to back: last ÷ first
#
# The cluster: Debian's server binaries (crates/switchboard-store-postgres/install-postgres.sh
# installs them), initdb in DIR as the `postgres` user, listening on 127.0.0.1:PORT only,
# fsync and synchronous_commit on (the defaults).
#
# `ratio` runs, back to back and alternating (so both see the same machine noise and the
# same table growth), REPS rounds of:
#   - pgbench, CONC clients, DUR: the transaction a task needs at least (BEGIN; insert a
#     ~500-byte task row; insert two ~300-byte event rows; COMMIT), prepared statements;
#   - task-mode SendMessage (JSON-RPC, echo-task agent) at CONC connections for DUR against
#     `switchboard serve --store postgres://…` on the same database, every task durable
#     before its reply.
# Then prints both rates per round, the medians and serve ÷ pgbench (the issue's goal: ≥ 0.5),
# and checks that the store holds a completed task for every successful reply.
#
# `replicas` (issue's goal: two ≥ 0.9× one) alternates REPS rounds of:
#   - one: task-mode SendMessage at CONC connections for DUR to replica A, the only serve;
#   - two: replica B (a second `serve` on the same database, started for the round, warmed up
#     with WARM seconds of CONC/2 connections, stopped after the round) beside A, the same total
#     load split in two: CONC/2 connections to each, at once; the round's rate is the sum of both.
#   "one" is loaded by the same two load generators of CONC/2 connections (both to A), so that
#   only the number of replicas differs between the two loads; ONE_SPLIT=0 loads it with one
#   generator of CONC connections instead (as before session 16).
#   Every load's CPU per task is printed too (serve A, serve B, the cluster's backends,
#   autovacuum and writers, the whole machine) with PostgreSQL's transactions per task.
# `growth` (issue's goal: within 10 %): one serve, MINUTES loads of 60 s back to back at CONC
# connections, the tasks/s of each minute and last ÷ first. SB_ARGS adds serve flags to every
# command (e.g. SB_ARGS="--retention-max-finished 50000 --retention-interval-secs 5").
# `growth` also samples PostgreSQL's counters at the start and end of every minute and prints
# them per task of that minute (WAL records/bytes/full-page images/flushes, buffers written by
# the checkpointer, bgwriter and backends, blocks read, statement time, checkpoints,
# autovacuums, sizes) with the wait events of its busy processes, and the kernel's page reclaim
# (kswapd and direct scans, allocation stalls, free and cached memory): on a shared machine tasks/s
# is noise, what a task costs PostgreSQL is not. PGOPTS adds server settings (`-c name=value`).
# PG_SIZING=production starts the cluster as PostgreSQL's docs size a dedicated server instead of
# initdb's 128 MB defaults: shared_buffers a quarter of RAM, WAL sized and checkpoints spread so
# that checkpoints are minutes apart (max_wal_size 16 GB, checkpoint_timeout 15 min); PGOPTS
# still applies after it. The ratio and replicas figures of earlier sessions used the defaults.
# `growth` first warms the machine's memory (WARM_MEMORY=1, the default): it reads a sparse
# file as large as RAM, so that the page cache holds every free page before minute 1. These
# VMs return free memory to their host (virtio-balloon free page reporting); a page the guest
# then takes back costs a host fault, so while the cluster's files grow into memory that was
# free, every page they take costs ~2.3x the kernel time of one reclaimed from the cache
# (reading 22 GB of holes: 26.5 s of system time cold, 0.52 s per GB warm). Unwarmed, that
# showed as PostgreSQL's backends spending up to +18 µs of system time per task for a few
# minutes (a dip to 0.80-0.89 of minute 1), then recovering once memory was full. It is the
# machine's, not the tables': WARM_MEMORY=0 measures it.
# GROWTH_LOAD=pgbench makes `growth` load PostgreSQL with pgbench's one-task transaction
# instead of serve (same minutes, clients and counters, on its own fresh cluster): what the
# same disk and cluster do with the least a task needs, as tables grow — the growth curve's
# limit, as `ratio` names the throughput's. GROWTH_LOAD=both runs the two in one cluster, 30 s
# each per minute (order alternating), and prints serve ÷ pgbench per minute: the machine's
# speed drifts by ±15 % within ten minutes here (serve's own CPU per task, which no table size
# touches, went 56 → 67 µs in one run), so the peer in the same minute is what tells table
# growth from the machine. The cluster's per-task figures then include pgbench's work (its
# backends exit after each load, so their CPU lands in the autovacuum column's reaped children).
# Both end with the same durability check as `ratio` (serve only).
# PROFILE=1 also loads pg_stat_statements and prints, for one more serve round, statements,
# transactions, WAL records and WAL flushes per task, and the wait events sampled meanwhile.
#
# Environment: SB (switchboard binary; default $CARGO_TARGET_DIR or /work/target-bench
# dist build), CONC=64, DUR=10 (seconds), REPS=3, WARM=3 (seconds), PG_PORT=7399,
# SB_PORT=7302, PROFILE=0, OUT (default bench/out/pg/<timestamp>).
# Load generator: oha if installed (as run.sh), else wrk. Safety: 127.0.0.1 only; every load
# is bounded in time and wrapped in `timeout`; only the PIDs started here are stopped.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
cmd=${1:-ratio}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "no PostgreSQL server binaries; run crates/switchboard-store-postgres/install-postgres.sh" >&2; exit 1; }
# sizing: the server settings of PG_SIZING (see the header), as `-c` options
sizing() {
  case ${PG_SIZING:-default} in
    default) ;;
    production)
      local mb; mb=$(awk '/^MemTotal:/{print int($2 / 1024 / 4)}' /proc/meminfo)
      echo "-c shared_buffers=${mb}MB -c max_wal_size=16GB -c checkpoint_timeout=15min -c checkpoint_completion_target=0.9" ;;
    *) echo "PG_SIZING is default or production, not $PG_SIZING" >&2; exit 2 ;;
  esac
}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_start() {  # pg_start DIR PORT: prints the URL
  local dir=$1 port=$2
  mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown postgres "$dir"
  as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 $(sizing) ${PGOPTS:-}" start >/dev/null
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres bench
  echo "postgres://postgres@127.0.0.1:$port/bench"
}
pg_stop() {
  as_pg "$bin/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$1"
}

case $cmd in
  start) pg_start "$2" "$3"; exit 0 ;;
  stop) pg_stop "$2"; exit 0 ;;
  ratio|replicas|growth) ;;
  *) echo "usage: $0 start|stop DIR PORT | $0 ratio|replicas|growth" >&2; exit 2 ;;
esac

BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
CONC=${CONC:-64} DUR=${DUR:-10} REPS=${REPS:-3} WARM=${WARM:-3} PROFILE=${PROFILE:-0}
PG_PORT=${PG_PORT:-7399} SB_PORT=${SB_PORT:-7302}
OUT=${OUT:-$BENCH/out/pg/$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1
[ -x "$SB" ] || { echo "missing $SB: cargo build --profile dist -p switchboard (or set SB)" >&2; exit 1; }
OHA=$(command -v oha || true); [ -n "$OHA" ] || [ ! -x "$HOME/.cargo/bin/oha" ] || OHA=$HOME/.cargo/bin/oha
[ -n "$OHA" ] || command -v wrk >/dev/null || { echo "needs oha (cargo install oha) or wrk (apt-get install wrk)" >&2; exit 1; }
for p in "$PG_PORT" "$SB_PORT"; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT"
PG_DIR=$(mktemp -d /tmp/sb-pg-ratio.XXXXXX) SPID="" SPID2=""
MINUTES=${MINUTES:-10} GROWTH_LOAD=${GROWTH_LOAD:-serve} WARM_MEMORY=${WARM_MEMORY:-1}
case $GROWTH_LOAD in serve|pgbench|both) ;; *) echo "GROWTH_LOAD must be serve, pgbench or both" >&2; exit 2 ;; esac
TASKS_REL=tasks; [ "$GROWTH_LOAD" != pgbench ] || TASKS_REL=pgb_tasks
read -r -a SB_ARGS <<<"${SB_ARGS:-}"
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  if [ -n "$SPID2" ]; then kill "$SPID2" 2>/dev/null || true; wait "$SPID2" 2>/dev/null || true; fi
  pg_stop "$PG_DIR"
}
trap cleanup EXIT
[ "$PROFILE" = 1 ] && PGOPTS="${PGOPTS:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c track_wal_io_timing=on -c track_io_timing=on"
URL=$(PGOPTS=${PGOPTS:-} pg_start "$PG_DIR" "$PG_PORT")
psql_() { timeout 60 psql -X -q -At -h "$HOST" -p "$PG_PORT" -U postgres -d bench "$@"; }

# pgbench's tables: shaped like the store's (text keys, JSON-sized bodies), in their own names.
psql_ -c "CREATE TABLE pgb_tasks (client INT, n BIGINT, body TEXT NOT NULL, PRIMARY KEY (client, n));
          CREATE TABLE pgb_events (client INT, n BIGINT, seq INT, body TEXT NOT NULL, PRIMARY KEY (client, n, seq))"
cat >"$OUT/one-task.sql" <<'SQL'
\set n random(1, 9000000000000000000)
BEGIN;
INSERT INTO pgb_tasks VALUES (:client_id, :n, repeat('t', 500));
INSERT INTO pgb_events VALUES (:client_id, :n, 1, repeat('e', 300));
INSERT INTO pgb_events VALUES (:client_id, :n, 2, repeat('e', 300));
COMMIT;
SQL
pgbench_run() {  # prints transactions/s
  local secs=${2:-$DUR}
  timeout $(( secs + 60 )) pgbench -n -h "$HOST" -p "$PG_PORT" -U postgres -M prepared -c "$CONC" -j 2 \
    -T "$secs" -f "$OUT/one-task.sql" bench >"$OUT/pgbench.$1.txt" 2>&1
  awk '/^tps = /{printf "%.0f\n", $3; exit}' "$OUT/pgbench.$1.txt"
}

BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
cat >"$OUT/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(99)))
end
LUA
load_run() {  # load_run TAG SECONDS [CONNECTIONS [PORT]]: prints "req/s ok_replies"
  local f=$OUT/serve.$1 c=${3:-$CONC} port=${4:-$SB_PORT}
  if [ -n "$OHA" ]; then
    timeout $(( $2 + 60 )) "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' \
      -H 'A2A-Version: 1.0' -d "$BODY" -z "${2}s" -c "$c" "http://$HOST:$port/" >"$f.json"
    python3 - "$f.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r.get("statusCodeDistribution", {}).get("200", 0)
print(round(ok / r["summary"]["total"]), ok)
PY
  else
    timeout $(( $2 + 60 )) wrk -t2 -c"$c" -d"${2}s" --timeout 30s -s "$OUT/post.lua" "http://$HOST:$port/" >"$f.txt" 2>&1
    awk '/^RESULT/{printf "%.0f %d\n", ($2 - $3) / ($4 / 1e6), $2 - $3}' "$f.txt"
  fi
}

# serve_start PORT LOG: starts a replica on the cluster; sets STARTED to its PID
serve_start() {
  ( SWITCHBOARD_LOG=warn exec "$SB" serve --listen "$HOST:$1" --store "$URL" --agent echo-task "${SB_ARGS[@]}" ) >"$2" 2>&1 &
  STARTED=$!
  for _ in $(seq 1 100); do
    kill -0 "$STARTED" 2>/dev/null || { echo "serve died:" >&2; cat "$2" >&2; exit 1; }
    curl -fsS -o /dev/null --max-time 2 "http://$HOST:$1/.well-known/agent-card.json" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "serve on port $1 did not answer in 10 s" >&2; exit 1
}
serve_start "$SB_PORT" "$OUT/serve.log"; SPID=$STARTED
resp=$(curl -fsS --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY" "http://$HOST:$SB_PORT/")
case $resp in *'"TASK_STATE_COMPLETED"'*) ;; *) echo "SendMessage did not complete a task: $resp" >&2; exit 1 ;; esac
ok_total=1
if [ "$cmd" = growth ] && [ "$GROWTH_LOAD" != serve ]; then
  pgbench_run warm "$WARM" >/dev/null
fi
if [ "$cmd" != growth ] || [ "$GROWTH_LOAD" != pgbench ]; then
  read -r _ ok < <(load_run warm "$WARM"); ok_total=$(( ok_total + ok ))
fi
[ "$cmd" != ratio ] || pgbench_run warm >/dev/null

pg_version="PostgreSQL $("$bin/postgres" --version | awk '{print $3}'), fsync on, synchronous_commit on"
med() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# durability LOADS: every successful reply's task is stored completed (see the end of `ratio`)
durability() {
  local tasks
  tasks=$(psql_ -c "SELECT count(*) FROM tasks WHERE state = 'TASK_STATE_COMPLETED'")
  if [ "$tasks" -ge "$ok_total" ] && [ "$tasks" -le $(( ok_total + CONC * $1 )) ]; then
    echo "durability check: $tasks completed tasks stored for $ok_total successful replies (+ at most $CONC cut per load)" | tee -a "$OUT/summary.txt"
  else
    echo "durability check FAILED: $tasks completed tasks stored, $ok_total successful replies" | tee -a "$OUT/summary.txt"; exit 1
  fi
}


# counters MINUTE: one JSON line of PostgreSQL's cumulative counters (growth's per-minute
# profile; the load does not distort them, unlike tasks/s on a shared machine).
# cpu_ms PID...: the CPU time (user + system) the processes have used, in ms.
cpu_ms() {
  local tick; tick=$(getconf CLK_TCK)
  for pid in "$@"; do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true; done |
    awk -v t="$tick" '{s += $1} END {printf "%d", s * 1000 / t}'
}
# The cluster's processes: the postmaster and its children (backends, checkpointer, …).
pg_pids() {
  local pm; pm=$(head -1 "$PG_DIR/data/postmaster.pid")
  echo "$pm"; pgrep -P "$pm" || true
}
# pg_cpu_kinds: the cluster's CPU time in ms by kind of process, "backends autovac writers
# backends_sys backends_minflt": client backends, autovacuum (its launcher and live workers, plus
# every child the postmaster has reaped: workers exit after each table, and a reaped child's time
# is only in its parent's cutime/cstime), and the background writers (checkpointer, background
# writer, WAL writer); then the client backends' system time alone and their minor page faults
# (is a backend's extra CPU the kernel's: faults, copies, reclaim?).
pg_cpu_kinds() {
  local tick pm; tick=$(getconf CLK_TCK); pm=$(head -1 "$PG_DIR/data/postmaster.pid")
  {
    awk '{print "reaped", $16 + $17, 0, 0}' "/proc/$pm/stat" 2>/dev/null || true
    for pid in $(pgrep -P "$pm"); do
      local title; title=$( { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || continue
      local kind=other
      case $title in
        *autovacuum*) kind=autovac ;;
        *checkpointer*|*"background writer"*|*walwriter*) kind=writers ;;
        *bench*|*postgres\ postgres*) kind=backends ;;
      esac
      awk -v k="$kind" '{print k, $14 + $15, $15, $10}' "/proc/$pid/stat" 2>/dev/null || true
    done
  } | awk -v t="$tick" '{s[$1] += $2; sys[$1] += $3; flt[$1] += $4} END {
      printf "%d %d %d %d %d", s["backends"] * 1000 / t, (s["autovac"] + s["reaped"]) * 1000 / t,
        s["writers"] * 1000 / t, sys["backends"] * 1000 / t, flt["backends"] }'
}
# pg_cpu_split: the same, as json_build_object arguments
pg_cpu_split() {
  local b a w bs bf; read -r b a w bs bf < <(pg_cpu_kinds)
  printf "\x27pg_backends_ms\x27, %d, \x27pg_autovac_ms\x27, %d, \x27pg_writers_ms\x27, %d, " "$b" "$a" "$w"
  printf "\x27pg_backends_sys_ms\x27, %d, \x27pg_backends_minflt\x27, %d" "$bs" "$bf"
}
# busy_ms: the CPU time the whole machine has spent busy (not idle, not waiting for I/O), in ms
busy_ms() {
  awk -v t="$(getconf CLK_TCK)" '/^cpu /{print int(($2 + $3 + $4 + $7 + $8 + $9) * 1000 / t); exit}' /proc/stat
}
# vm_counters: the kernel's page reclaim so far (pages scanned by kswapd and by allocating
# processes themselves, allocation stalls) and free and page-cache memory now, as
# json_build_object arguments: a cluster whose files outgrow free memory makes the kernel
# reclaim, and direct reclaim is CPU charged to whoever was writing.
vm_counters() {
  awk '/^pgscan_kswapd /{k=$2} /^pgscan_direct /{d=$2} /^allocstall_/{s+=$2} END{
    printf "\x27pgscan_kswapd\x27, %d, \x27pgscan_direct\x27, %d, \x27allocstall\x27, %d", k, d, s}' /proc/vmstat
  awk '/^MemFree:/{f=$2} /^Cached:/{c=$2} END{printf ", \x27free_mb\x27, %d, \x27cached_mb\x27, %d", f / 1024, c / 1024}' /proc/meminfo
}
counters() {
  local stmt_ms=0
  [ "$PROFILE" != 1 ] || stmt_ms="(SELECT sum(total_exec_time) FROM pg_stat_statements)"
  psql_ -c "SELECT json_build_object('minute', $1,
      'tasks', (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = '$TASKS_REL'),
      'wal_records', w.wal_records, 'wal_fpi', w.wal_fpi, 'wal_bytes', w.wal_bytes, 'wal_sync', w.wal_sync, 'wal_sync_ms', w.wal_sync_time, 'wal_write_ms', w.wal_write_time,
      'blk_write_ms', d.blk_write_time, 'blk_read_ms', d.blk_read_time,
      'ckpt', b.checkpoints_timed + b.checkpoints_req, 'ckpt_req', b.checkpoints_req,
      'buf_ckpt', b.buffers_checkpoint, 'buf_clean', b.buffers_clean, 'buf_backend', b.buffers_backend,
      'buf_alloc', b.buffers_alloc,
      'blks_read', d.blks_read, 'blks_hit', d.blks_hit, 'xact', d.xact_commit,
      'idx_blks_read', (SELECT sum(idx_blks_read) FROM pg_statio_user_indexes),
      'heap_blks_read', (SELECT sum(heap_blks_read) FROM pg_statio_user_tables),
      'autovacuum', (SELECT sum(autovacuum_count) FROM pg_stat_user_tables),
      'autoanalyze', (SELECT sum(autoanalyze_count) FROM pg_stat_user_tables),
      'dead_tup', (SELECT sum(n_dead_tup) FROM pg_stat_user_tables),
      'hot_upd', (SELECT sum(n_tup_hot_upd) FROM pg_stat_user_tables),
      'upd', (SELECT sum(n_tup_upd) FROM pg_stat_user_tables),
      'tasks_mb', pg_total_relation_size('$TASKS_REL') / 1048576,
      'events_mb', pg_total_relation_size('$( [ "$GROWTH_LOAD" != pgbench ] && echo task_events || echo pgb_events )') / 1048576,
      'stmt_ms', $stmt_ms,
      'serve_cpu_ms', $(cpu_ms "$SPID"), 'pg_cpu_ms', $(cpu_ms $(pg_pids)), $(pg_cpu_split), $(vm_counters))
    FROM pg_stat_wal AS w, pg_stat_bgwriter AS b, pg_stat_database AS d WHERE d.datname = 'bench'"
}
# waits_sample SECONDS: what every busy PostgreSQL process waits on, every 0.5 s
waits_sample() {
  local end=$(( $(date +%s) + $1 - 1 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    psql_ -c "SELECT backend_type || ' ' || coalesce(wait_event_type || ':' || wait_event, 'CPU')
              FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'
                AND coalesce(wait_event_type, '') NOT IN ('Activity', 'Client')" || true
    sleep 0.5
  done
}
# The per-minute differences of `counters`, per task of that minute, and each minute's top waits.
per_task_counters() {
  python3 - "$OUT" <<'PY'
import collections, json, sys
out = sys.argv[1]
lines = [json.loads(l) for l in open(f"{out}/counters.jsonl") if l.strip()]
# two snapshots per minute, at its start and at its end
pairs = list(zip(lines[0::2], lines[1::2]))
print("per task of each minute: CPU µs of serve and of the cluster's processes (all; client backends, autovacuum, checkpointer + bgwriter + walwriter); PostgreSQL counters: WAL records, WAL bytes, full-page images, WAL flushes,"
      " buffers written by checkpointer / bgwriter / backends, blocks read (of which index), hit %, stmt ms;"
      " per minute: checkpoints (requested), autovacuums, autoanalyzes; sizes at the end of the minute")
cols = "minute tasks serve_us pg_us pg_backends_us (sys) minflt pg_autovac_us pg_writers_us wal_rec wal_B fpi flush ms/flush buf_ckpt buf_clean buf_backend blks_read idx_read hit% stmt_ms ckpt(req) autovac autoanl tasks_MB events_MB".split()
print("\t".join(cols))
for a, b in pairs:
    d = {k: (b[k] or 0) - (a[k] or 0) for k in b if isinstance(b[k], (int, float)) and k != "minute"}
    n = max(d["tasks"], 1)
    hit = 100.0 * d["blks_hit"] / max(d["blks_hit"] + d["blks_read"], 1)
    print("\t".join(str(x) for x in [b["minute"], d["tasks"], f"{1000*d.get('serve_cpu_ms', 0)/n:.1f}", f"{1000*d.get('pg_cpu_ms', 0)/n:.1f}",
        f"{1000*d.get('pg_backends_ms', 0)/n:.1f}", f"({1000*d.get('pg_backends_sys_ms', 0)/n:.1f})", f"{d.get('pg_backends_minflt', 0)/n:.2f}",
        *(f"{1000*d.get(k, 0)/n:.1f}" for k in ("pg_autovac_ms", "pg_writers_ms")), f"{d['wal_records']/n:.2f}", f"{d['wal_bytes']/n:.0f}",
        f"{d['wal_fpi']/n:.3f}", f"{d['wal_sync']/n:.3f}", f"{d['wal_sync_ms']/max(d['wal_sync'], 1):.2f}", f"{d['buf_ckpt']/n:.3f}", f"{d['buf_clean']/n:.3f}",
        f"{d['buf_backend']/n:.3f}", f"{d['blks_read']/n:.3f}", f"{d['idx_blks_read']/n:.3f}", f"{hit:.2f}",
        f"{d['stmt_ms']/n:.3f}", f"{d['ckpt']}({d['ckpt_req']})", d["autovacuum"], d["autoanalyze"],
        b["tasks_mb"], b["events_mb"]]))
print("the kernel per minute: pages scanned by kswapd and by direct reclaim, allocation stalls; free and page-cache MB at the minute's end")
print("minute\tkswapd_scan\tdirect_scan\tallocstall\tfree_MB\tcached_MB")
for a, b in pairs:
    if "pgscan_direct" in b:
        print("\t".join(str(x) for x in [b["minute"], b["pgscan_kswapd"] - a["pgscan_kswapd"], b["pgscan_direct"] - a["pgscan_direct"],
            b["allocstall"] - a["allocstall"], b["free_mb"], b["cached_mb"]]))
print("top waits of busy PostgreSQL processes per minute (samples every 0.5 s)")
for _, b in pairs:
    m = b["minute"]
    c = collections.Counter(l.strip() for l in open(f"{out}/waits.{m}.txt") if l.strip())
    print(f"{m}: " + ", ".join(f"{k} {v}" for k, v in c.most_common(6)))
PY
}

# snap: one line of cumulative CPU ms: serve A, serve B (0 if none), the cluster's backends,
# autovacuum and writers, the whole machine busy; then the cluster's committed transactions.
snap() {
  local b a w; read -r b a w _ < <(pg_cpu_kinds)
  echo "$(cpu_ms "$SPID") $( [ -n "$SPID2" ] && cpu_ms "$SPID2" || echo 0) $b $a $w $(busy_ms)" \
    "$(psql_ -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'")"
}
# cost TASKS BEFORE AFTER: what one load cost per task, "µs: serve_a serve_b backends autovac
# writers machine_busy; transactions per task"
cost() {
  awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN {
    split(a, x, " "); split(b, y, " "); n = (n > 0 ? n : 1)
    for (i = 1; i <= 6; i++) printf "%.1f\t", 1000 * (y[i] - x[i]) / n
    printf "%.3f\n", (y[7] - x[7]) / n }'
}

if [ "$cmd" = replicas ]; then
  half=$(( CONC / 2 )) SB_PORT2=$(( SB_PORT + 1 ))
  if (exec 3<>"/dev/tcp/$HOST/$SB_PORT2") 2>/dev/null; then echo "port $SB_PORT2 on $HOST is in use" >&2; exit 1; fi
  # The loads differ only in the number of replicas: "one" is loaded like "two", by two load
  # generators of CONC/2 connections (both to A); ONE_SPLIT=0: by one of CONC connections.
  ONE_SPLIT=${ONE_SPLIT:-1}
  echo "settings: CONC=$CONC (two: $half + $half) DUR=${DUR}s REPS=$REPS WARM=${WARM}s ONE_SPLIT=$ONE_SPLIT loadgen=${OHA:-wrk} $(nproc) cpus; $pg_version; serve flags: ${SB_ARGS[*]:-none}; loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/summary.txt"
  printf 'round\tone_tasks_s\ttwo_tasks_s (A + B)\tratio\n' | tee -a "$OUT/summary.txt"
  : >"$OUT/rounds.tsv" ; : >"$OUT/costs.tsv"
  for r in $(seq 1 "$REPS"); do
    s0=$(snap)
    if [ "$ONE_SPLIT" = 1 ]; then
      load_run "one-b.$r" "$DUR" "$half" "$SB_PORT" >"$OUT/one-b.$r.txt" &
      lb=$!
      read -r a oka < <(load_run "one-a.$r" "$DUR" "$half" "$SB_PORT")
      wait "$lb"; read -r b okb <"$OUT/one-b.$r.txt"
      one=$(( a + b )) ok=$(( oka + okb ))
    else
      read -r one ok < <(load_run "one.$r" "$DUR")
    fi
    ok_total=$(( ok_total + ok ))
    s1=$(snap)
    printf 'one\t%s\t%s\t%s\n' "$r" "$ok" "$(cost "$ok" "$s0" "$s1")" >>"$OUT/costs.tsv"
    # B joins warmed up, as a replica in service would be (connections open, statements prepared)
    serve_start "$SB_PORT2" "$OUT/serve-b.$r.log"; SPID2=$STARTED
    read -r _ okw < <(load_run "warm-b.$r" "$WARM" "$half" "$SB_PORT2"); ok_total=$(( ok_total + okw ))
    s0=$(snap)
    load_run "two-b.$r" "$DUR" "$half" "$SB_PORT2" >"$OUT/two-b.$r.txt" &
    lb=$!
    read -r a oka < <(load_run "two-a.$r" "$DUR" "$half" "$SB_PORT")
    wait "$lb"; read -r b okb <"$OUT/two-b.$r.txt"
    s1=$(snap)
    ok_total=$(( ok_total + oka + okb ))
    printf 'two\t%s\t%s\t%s\n' "$r" "$(( oka + okb ))" "$(cost "$(( oka + okb ))" "$s0" "$s1")" >>"$OUT/costs.tsv"
    kill "$SPID2"; wait "$SPID2" 2>/dev/null || true; SPID2=""
    printf '%s\t%s\t%s (%s + %s)\t%s\n' "$r" "$one" "$(( a + b ))" "$a" "$b" "$(awk -v a="$(( a + b ))" -v b="$one" 'BEGIN{printf "%.2f", a/b}')" \
      | tee -a "$OUT/summary.txt"
    printf '%s\t%s\t%s\n' "$r" "$one" "$(( a + b ))" >>"$OUT/rounds.tsv"
  done
  m1=$(cut -f2 "$OUT/rounds.tsv" | med) m2=$(cut -f3 "$OUT/rounds.tsv" | med)
  printf 'median\t%s\t%s\t%s   (two ÷ one; goal ≥ 0.90)\n' "$m1" "$m2" "$(awk -v a="$m2" -v b="$m1" 'BEGIN{printf "%.2f", a/b}')" | tee -a "$OUT/summary.txt"
  { echo "CPU µs per task of each load (serve A, serve B, the cluster's backends, autovacuum, writers; the whole machine busy, load generators included) and PostgreSQL transactions per task"
    printf 'load\tround\ttasks\tserve_a\tserve_b\tbackends\tautovac\twriters\tmachine\txact\n'
    cat "$OUT/costs.tsv"; } | tee -a "$OUT/summary.txt"
  echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"
  durability $(( 1 + REPS * (ONE_SPLIT == 1 ? 5 : 4) ))
  echo "results: $OUT"; exit 0
fi

if [ "$cmd" = growth ]; then
  warmed="no (WARM_MEMORY=0)"
  if [ "$WARM_MEMORY" = 1 ]; then
    # A sparse file takes no disk; reading its holes fills the page cache with clean pages,
    # which the kernel reclaims as the cluster needs them. It goes with $PG_DIR at the end.
    truncate -s "$(awk '/^MemTotal:/{print $2}' /proc/meminfo)K" "$PG_DIR/warm-memory"
    secs=$( { TIMEFORMAT=%R; time cat "$PG_DIR/warm-memory" >/dev/null; } 2>&1 )
    warmed="yes, in ${secs} s; $(awk '/^MemFree:/{print int($2 / 1024)}' /proc/meminfo) MB free after"
  fi
  echo "settings: CONC=$CONC, $MINUTES loads of 60 s back to back, load=$GROWTH_LOAD ($( [ "$GROWTH_LOAD" = pgbench ] && echo "pgbench one-task transaction" || echo "loadgen=${OHA:-wrk}, serve flags: ${SB_ARGS[*]:-none}" )), $(nproc) cpus; $pg_version; sizing: ${PG_SIZING:-default} $(sizing); PGOPTS: ${PGOPTS:-none}; memory warmed: $warmed; loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/summary.txt"
  if [ "$GROWTH_LOAD" = both ]; then
    printf 'minute\ttasks_s\tpgbench_tps\tserve÷pgbench\ttasks_in_store\tloadavg\n' | tee -a "$OUT/summary.txt"
  else
    printf 'minute\ttasks_s\ttasks_in_store\tloadavg\n' | tee -a "$OUT/summary.txt"
  fi
  : >"$OUT/minutes.tsv"
  : >"$OUT/counters.jsonl"
  [ "$PROFILE" != 1 ] || psql_ -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
  for m in $(seq 1 "$MINUTES"); do
    counters "$m" >>"$OUT/counters.jsonl"
    waits_sample 60 >"$OUT/waits.$m.txt" &
    sampler=$!
    tps=""
    case $GROWTH_LOAD in
      serve) read -r rps ok < <(load_run "minute.$m" 60); ok_total=$(( ok_total + ok )) ;;
      pgbench) rps=$(pgbench_run "minute.$m" 60) ;;
      both)
        if [ $(( m % 2 )) = 1 ]; then
          read -r rps ok < <(load_run "minute.$m" 30); tps=$(pgbench_run "minute.$m" 30)
        else
          tps=$(pgbench_run "minute.$m" 30); read -r rps ok < <(load_run "minute.$m" 30)
        fi
        ok_total=$(( ok_total + ok )) ;;
    esac
    wait "$sampler" || true
    counters "$m" >>"$OUT/counters.jsonl"  # the minute's end: the count(*) below is not in it
    both_cols=""
    [ -z "$tps" ] || both_cols="$tps	$(awk -v a="$rps" -v b="$tps" 'BEGIN{printf "%.3f", a/b}')	"
    printf '%s\t%s\t%s%s\t%s\n' "$m" "$rps" "$both_cols" "$(psql_ -c "SELECT count(*) FROM $TASKS_REL")" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"
    printf '%s\t%s\t%s\n' "$m" "$rps" "$tps" >>"$OUT/minutes.tsv"
  done
  per_task_counters | tee -a "$OUT/summary.txt"
  echo "relation sizes at the end (MB): $(psql_ -c "SELECT string_agg(relname || ' ' || pg_relation_size(oid) / 1048576, ', ' ORDER BY relname)
       FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relname ~ '^(task|pgb_)' AND relkind IN ('r', 'i')")" | tee -a "$OUT/summary.txt"
  first=$(head -1 "$OUT/minutes.tsv" | cut -f2) last=$(tail -1 "$OUT/minutes.tsv" | cut -f2)
  echo "last ÷ first minute: $last / $first = $(awk -v a="$last" -v b="$first" 'BEGIN{printf "%.3f", a/b}') (goal: within 10 %, i.e. ≥ 0.90)" | tee -a "$OUT/summary.txt"
  if [ "$GROWTH_LOAD" = both ]; then
    awk -F'\t' 'NR == 1 {s1 = $2; p1 = $3; r1 = $2 / $3} {s = $2; p = $3; r = $2 / $3; lo = (NR == 1 || r / r1 < lo) ? r / r1 : lo}
      END {printf "pgbench last ÷ first: %.3f; serve ÷ pgbench, last ÷ first: %.3f, lowest minute ÷ first: %.3f (goal: within 10 %%)\n", p / p1, r / r1, lo}' \
      "$OUT/minutes.tsv" | tee -a "$OUT/summary.txt"
  fi
  echo "serve RSS at end: $(awk '/^VmRSS:/{print $2, $3}' "/proc/$SPID/status"); database size: $(psql_ -c "SELECT pg_size_pretty(pg_database_size('bench'))")" | tee -a "$OUT/summary.txt"
  if [ "$GROWTH_LOAD" = pgbench ]; then echo "durability check: not applicable (pgbench load)" | tee -a "$OUT/summary.txt"
  elif [ -z "${SB_ARGS[*]:-}" ]; then durability $(( 1 + MINUTES )); else echo "durability check skipped: retention (SB_ARGS) deletes finished tasks" | tee -a "$OUT/summary.txt"; fi
  echo "results: $OUT"; exit 0
fi

echo "settings: CONC=$CONC DUR=${DUR}s REPS=$REPS loadgen=${OHA:-wrk} $(nproc) cpus; PostgreSQL $("$bin/postgres" --version | awk '{print $3}'), fsync on, synchronous_commit on" | tee "$OUT/summary.txt"
printf 'round\tpgbench_tps\tserve_tasks_s\tratio\n' | tee -a "$OUT/summary.txt"
: >"$OUT/rounds.tsv"
for r in $(seq 1 "$REPS"); do
  tps=$(pgbench_run "$r")
  read -r rps ok < <(load_run "$r" "$DUR"); ok_total=$(( ok_total + ok ))
  printf '%s\t%s\t%s\t%s\n' "$r" "$tps" "$rps" "$(awk -v a="$rps" -v b="$tps" 'BEGIN{printf "%.2f", a/b}')" | tee -a "$OUT/rounds.tsv" | tee -a "$OUT/summary.txt"
done
mt=$(cut -f2 "$OUT/rounds.tsv" | med) ms=$(cut -f3 "$OUT/rounds.tsv" | med)
printf 'median\t%s\t%s\t%s   (serve ÷ pgbench; goal ≥ 0.50)\n' "$mt" "$ms" "$(awk -v a="$ms" -v b="$mt" 'BEGIN{printf "%.2f", a/b}')" | tee -a "$OUT/summary.txt"

if [ "$PROFILE" = 1 ]; then
  psql_ -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
  psql_ -c "SELECT pg_stat_statements_reset(); SELECT pg_stat_reset_shared('wal'); SELECT pg_stat_reset();" >/dev/null
  xact0=$(psql_ -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'")
  : >"$OUT/waits.txt"
  ( end=$(( $(date +%s) + DUR - 1 ))
    while [ "$(date +%s)" -lt "$end" ]; do
      psql_ -c "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), state FROM pg_stat_activity
                WHERE application_name = 'switchboard' AND state <> 'idle'" >>"$OUT/waits.txt" || true
      sleep 0.2
    done ) &
  sampler=$!
  read -r rps ok < <(load_run profile "$DUR"); ok_total=$(( ok_total + ok ))
  wait "$sampler" || true
  sleep 1
  {
    echo "profile round: $rps tasks/s, $ok tasks"
    xact1=$(psql_ -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'")
    echo "transactions committed per task: $(awk -v a="$xact0" -v b="$xact1" -v n="$ok" 'BEGIN{printf "%.2f", (b-a)/n}') (includes the profiler's own few)"
    psql_ -F $'\t' -c "SELECT 'WAL per task: records ' || round(wal_records::numeric / $ok, 2) || ', bytes ' || round(wal_bytes / $ok)
                       || ', flushes (wal_sync) ' || round(wal_sync::numeric / $ok, 3) || ', writes ' || round(wal_write::numeric / $ok, 3)
                       || ', full-page images ' || round(wal_fpi::numeric / $ok, 2) FROM pg_stat_wal"
    echo "statements per task (pg_stat_statements, top by calls): calls/task, mean ms, rows/call, query"
    psql_ -F $'\t' -c "SELECT round(calls::numeric / $ok, 2), round(mean_exec_time::numeric, 3), round(rows::numeric / greatest(calls, 1), 2),
                              left(regexp_replace(query, '\s+', ' ', 'g'), 110)
                       FROM pg_stat_statements WHERE calls > $ok / 100 ORDER BY calls DESC LIMIT 15"
    echo "tables: HOT updates / updates, dead tuples"
    psql_ -F $'\t' -c "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_dead_tup FROM pg_stat_user_tables
                       WHERE relname IN ('tasks', 'task_events', 'push_outbox') ORDER BY relname"
    echo "wait events of switchboard's active sessions (samples every 0.2 s)"
    sort "$OUT/waits.txt" | uniq -c | sort -rn | head -12
  } | tee "$OUT/profile.txt"
fi

# A load cut at its deadline drops the replies in flight (up to CONC per load), whose tasks
# may still have been committed: so stored >= replied, and at most CONC more per load.
loads=$(( REPS + 1 + PROFILE ))
tasks=$(psql_ -c "SELECT count(*) FROM tasks WHERE state = 'TASK_STATE_COMPLETED'")
if [ "$tasks" -ge "$ok_total" ] && [ "$tasks" -le $(( ok_total + CONC * loads )) ]; then
  echo "durability check: $tasks completed tasks stored for $ok_total successful replies (+ at most $CONC cut per load)" | tee -a "$OUT/summary.txt"
else
  echo "durability check FAILED: $tasks completed tasks stored, $ok_total successful replies" | tee -a "$OUT/summary.txt"; exit 1
fi
echo "results: $OUT"
