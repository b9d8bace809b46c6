#!/usr/bin/env bash
# bench/proxy.sh - what `runtime = "proxy"` adds per request: the official Python SDK's
# helloworld sample (interop/py/helloworld_sample.py) called directly vs through
# `switchboard serve`'s proxy agent in front of it, the same load on each: SendMessage
# (JSON-RPC, blocking: the answer is the completed task) driven by oha, -n REQS requests
# at -c CONC connections per round, REPS rounds per path, alternating ABBA. Reports per
# path the median over rounds of p50/p90 latency and req/s, and the added p50.
#
#   SWITCHBOARD_BIN=/path/to/release/switchboard bash bench/proxy.sh
#
# REQS=400 CONC=4 REPS=4 STORE=sqlite|memory (the proxy's mirror store; default sqlite).
# Needs the interop venv (interop/setup.sh) for the sample and oha (bench/setup.sh).
# Everything on 127.0.0.1, every load bounded (-n, `timeout 120`); only the processes
# started here are stopped. A debug binary is refused unless PROXY_ALLOW_DEBUG=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=../scripts/procs.sh
. scripts/procs.sh
REQS=${REQS:-400} CONC=${CONC:-4} REPS=${REPS:-4} STORE=${STORE:-sqlite}
BIN=${SWITCHBOARD_BIN:-target/release/switchboard}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
PY=${PY:-$ROOT/interop/.venv/bin/python}
for f in "$BIN" "$OHA" "$PY"; do [ -x "$f" ] || { echo "proxy: missing $f" >&2; exit 2; }; done
case "$BIN" in
  *target/debug/*) [ "${PROXY_ALLOW_DEBUG:-0}" = 1 ] || { echo "proxy: $BIN is a debug build; use a release one" >&2; exit 2; } ;;
esac
case "$STORE" in sqlite|memory) ;; *) echo "proxy: STORE is sqlite or memory" >&2; exit 2 ;; esac
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local rc=$?
  set +e
  stop_started
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

SAMPLE_PORT=$(free_port)
"$PY" interop/py/helloworld_sample.py --port "$SAMPLE_PORT" > "$WORK/sample.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$SAMPLE_PORT/.well-known/agent-card.json" 60 || { tail -20 "$WORK/sample.log"; exit 1; }

SERVE_PORT=$(free_port)
cat > "$WORK/serve.toml" <<TOML
agent = "echo-message"
[[agents]]
name = "hello"
path = "/hello"
runtime = "proxy"
url = "http://127.0.0.1:$SAMPLE_PORT"
max_concurrent = 64
TOML
SWITCHBOARD_LOG=warn SWITCHBOARD_RATE_PER_SECOND=0 "$BIN" serve --config "$WORK/serve.toml" \
  --listen "127.0.0.1:$SERVE_PORT" \
  --store "$([ "$STORE" = sqlite ] && echo "sqlite://$WORK/proxy.db" || echo memory)" \
  > "$WORK/serve.out" 2> "$WORK/serve.log" &
PIDS+=($!)
wait_http "http://127.0.0.1:$SERVE_PORT/hello/.well-known/agent-card.json" 30 || { cat "$WORK/serve.log"; exit 1; }

BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
load() { # load NAME URL N OUT
  timeout 120 "$OHA" --no-tui --output-format json -n "$3" -c "$CONC" -m POST \
    -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY" "$2" > "$4"
}
DIRECT="http://127.0.0.1:$SAMPLE_PORT/"
PROXY="http://127.0.0.1:$SERVE_PORT/hello"
# Each path's answer checked once (a completed task with the sample's greeting).
for url in "$DIRECT" "$PROXY"; do
  curl -fsS -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY" "$url" \
    | grep -q 'Hello, World! I have received your request (hi)' || { echo "proxy: no greeting from $url" >&2; exit 1; }
done
echo "binary: $BIN ($("$BIN" --version)), store: $STORE, REQS=$REQS CONC=$CONC REPS=$REPS, loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
load direct "$DIRECT" 50 "$WORK/warm-direct.json"
load proxy "$PROXY" 50 "$WORK/warm-proxy.json"
for r in $(seq "$REPS"); do
  if [ $((r % 2)) = 1 ]; then order="direct proxy"; else order="proxy direct"; fi
  for path in $order; do
    url=$DIRECT; [ "$path" = proxy ] && url=$PROXY
    load "$path" "$url" "$REQS" "$WORK/$path.$r.json"
  done
done
echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" "$REPS" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
res = {}
for path in ("direct", "proxy"):
    rows = []
    for r in range(1, reps + 1):
        d = json.load(open(f"{work}/{path}.{r}.json"))
        codes = d.get("statusCodeDistribution") or {}
        bad = sum(v for c, v in codes.items() if c != "200") + sum((d.get("errorDistribution") or {}).values())
        rows.append((d["latencyPercentiles"]["p50"] * 1e3, d["latencyPercentiles"]["p90"] * 1e3,
                     d["summary"]["requestsPerSec"], bad))
    res[path] = {
        "p50_ms": round(statistics.median(r[0] for r in rows), 2),
        "p90_ms": round(statistics.median(r[1] for r in rows), 2),
        "req_s": round(statistics.median(r[2] for r in rows), 1),
        "failed": sum(r[3] for r in rows),
        "rounds_p50_ms": [round(r[0], 2) for r in rows],
    }
res["added_p50_ms"] = round(res["proxy"]["p50_ms"] - res["direct"]["p50_ms"], 2)
res["req_s_ratio"] = round(res["proxy"]["req_s"] / res["direct"]["req_s"], 3) if res["direct"]["req_s"] else None
print(json.dumps(res))
PY
