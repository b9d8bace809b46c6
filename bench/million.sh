#!/usr/bin/env bash
# bench/million.sh - does memory stay flat with retention on? One `switchboard serve`
# (echo-task agent) gets 100k task-mode SendMessage requests, then 900k more; its RSS is
# read after each phase. Goal (issue "durability"): RSS after 1M within 10% of RSS after 100k.
# The 900k are sent as nine loads of 100k, so the table also has tasks/s per 100k: the last
# ÷ the first (issue "postgres": throughput after 1M tasks with retention within 10 %).
#
#   STORE=memory bench/million.sh                   # default: --memory-max-terminal-tasks 50000
#   STORE=sqlite bench/million.sh                   # SQLite file, --retention-max-finished 50000,
#                                                   # retention every INTERVAL (default 5) seconds
#   STORE=postgres bench/million.sh                 # a throwaway PostgreSQL (bench/pg.sh start),
#                                                   # same retention flags as sqlite
#
# Loopback only; each phase is bounded by a request count and a timeout. Writes
# million-<store>.tsv into OUT (default bench/out/results/million-<timestamp>).
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
STORE=${STORE:-memory}
KEEP=${KEEP:-50000}
INTERVAL=${INTERVAL:-5}   # SQLite: seconds between retention runs, so the 100k phase is steady state too
CONC=${CONC:-64}
PORT=${PORT:-7302}
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
OUT=${OUT:-$BENCH/out/results/million-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'

case $STORE in
  memory) ARGS=(--store memory --memory-max-terminal-tasks "$KEEP") ;;
  sqlite) rm -f "$OUT"/million.db*; ARGS=(--store "sqlite://$OUT/million.db" --retention-max-finished "$KEEP"
                --retention-interval-secs "$INTERVAL") ;;
  postgres) PG_DIR=$(mktemp -d /tmp/sb-million-pg.XXXXXX)
            PG_URL=$("$BENCH/pg.sh" start "$PG_DIR" "${PG_PORT:-7398}")
            ARGS=(--store "$PG_URL" --retention-max-finished "$KEEP" --retention-interval-secs "$INTERVAL") ;;
  *) echo "STORE must be memory, sqlite or postgres" >&2; exit 2 ;;
esac
SWITCHBOARD_LOG=warn "$SB" serve --listen "127.0.0.1:$PORT" --agent echo-task "${ARGS[@]}" >"$OUT/million-$STORE.log" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null || true; wait $SPID 2>/dev/null || true; [ -z "${PG_DIR:-}" ] || "$BENCH/pg.sh" stop "$PG_DIR" "${PG_PORT:-7398}"' EXIT
for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.1; done
rss() { awk '/^VmRSS:/{print $2}' "/proc/$SPID/status"; }
# VmRSS split into anonymous memory, mapped files (the binary, libraries) and shared memory
# (SQLite's WAL index), to tell a heap that grows from pages that were merely touched.
rss_parts() { awk '/^RssAnon:/{a=$2} /^RssFile:/{f=$2} /^RssShmem:/{s=$2} END{printf "%s\t%s\t%s", a, f, s}' "/proc/$SPID/status"; }
load() {  # load <requests> <report>
  timeout 900 "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' -d "$BODY" -n "$1" -c "$CONC" "http://127.0.0.1:$PORT/" >"$2"
}
printf 'phase\ttasks\trss_kb\tanon_kb\tfile_kb\tshmem_kb\n' >"$OUT/million-$STORE.tsv"
printf 'start\t0\t%s\t%s\n' "$(rss)" "$(rss_parts)" >>"$OUT/million-$STORE.tsv"
load 100000 "$OUT/million-$STORE-100k.json"; sleep 2
r100=$(rss); printf '100k\t100000\t%s\t%s\n' "$r100" "$(rss_parts)" >>"$OUT/million-$STORE.tsv"
# PostgreSQL: after each 100k, what the store holds and what the phase cost per task (CPU of serve
# and of the cluster's processes), to tell a store that retention keeps bounded from one it does not.
cpu_ms() { local t; t=$(getconf CLK_TCK); for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || true; done |
  awk -v t="$t" '{s += $1} END {printf "%d", s * 1000 / t}'; }
pg_probe() {  # pg_probe PHASE: one line of million-postgres-store.tsv
  [ "$STORE" = postgres ] || return 0
  local pm; pm=$(head -1 "$PG_DIR/data/postmaster.pid")
  printf '%s\t%s\t%s\t%s\n' "$1" "$(cpu_ms "$SPID")" "$(cpu_ms "$pm" $(pgrep -P "$pm"))" \
    "$(timeout 60 psql -X -At -F $'\t' "$PG_URL" -c "SELECT (SELECT count(*) FROM tasks), (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'tasks'),
       (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'task_events'),
       pg_total_relation_size('tasks') / 1048576, pg_total_relation_size('task_events') / 1048576,
       (SELECT sum(autovacuum_count) FROM pg_stat_user_tables)")" >>"$OUT/million-$STORE-store.tsv"
}
[ "$STORE" != postgres ] || printf 'phase\tserve_cpu_ms\tpg_cpu_ms\ttasks\tdead_tasks\tdead_events\ttasks_mb\tevents_mb\tautovacuums\n' >"$OUT/million-$STORE-store.tsv"
pg_probe 100k
for i in 2 3 4 5 6 7 8 9 10; do load 100000 "$OUT/million-$STORE-$(( i * 100 ))k.json"; pg_probe "$(( i * 100 ))k"; done
cp "$OUT/million-$STORE-1000k.json" "$OUT/million-$STORE-1m.json"; sleep 2
r1m=$(rss); printf '1m\t1000000\t%s\t%s\n' "$r1m" "$(rss_parts)" >>"$OUT/million-$STORE.tsv"
[ "$STORE" = sqlite ] && du -b "$OUT"/million.db* >>"$OUT/million-$STORE.db-size.txt" 2>/dev/null || true
python3 - "$OUT" "$STORE" "$KEEP" <<'PY'
import json, sys
out, store = sys.argv[1], sys.argv[2]
rows = [l.split('\t') for l in open(f'{out}/million-{store}.tsv').read().split('\n')[1:] if l]
rss = {r[0]: int(r[2]) for r in rows}
ok = []
for ph in ('100k', '1m'):
    d = json.load(open(f'{out}/million-{store}-{ph}.json'))
    codes = d.get('statusCodeDistribution', {})
    ok.append(f"{'first 100k' if ph == '100k' else 'last 100k (900k-1M)'}: {d['summary']['requestsPerSec']:.0f} req/s, status {codes}")
ratio = rss['1m'] / rss['100k']
verdict = 'PASS' if ratio <= 1.10 else 'FAIL'
print(f"million ({store}, keep {sys.argv[3]} finished): RSS start {rss['start']/1024:.1f} MiB, after 100k {rss['100k']/1024:.1f} MiB, "
      f"after 1M {rss['1m']/1024:.1f} MiB; 1M/100k = {ratio:.3f} (goal ≤ 1.10) {verdict}")
print('; '.join(ok))
rates = [json.load(open(f'{out}/million-{store}-{k}k.json'))['summary']['requestsPerSec'] for k in range(100, 1001, 100)]
print('tasks/s per 100k: ' + ' '.join(f'{r:.0f}' for r in rates)
      + f'; last ÷ first = {rates[-1] / rates[0]:.3f} (within 10 %: {"PASS" if rates[-1] / rates[0] >= 0.9 else "FAIL"})')
PY
if [ "$STORE" = postgres ]; then
  echo "PostgreSQL store after each 100k (CPU ms cumulative; dead tuples; sizes in MB):"
  column -t -s $'\t' "$OUT/million-$STORE-store.tsv"
fi
