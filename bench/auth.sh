#!/usr/bin/env bash
# bench/auth.sh - what authentication costs: task-mode SendMessage (JSON-RPC, echo-task, CONC
# connections) against two `switchboard serve` processes up at once, one without
# authentication and one that accepts only bearer JWTs (RS256) verified with a JWKS served on
# 127.0.0.1. Every request of both loads carries the same `Authorization: Bearer <token>`
# header, so the bytes on the wire are the same and only the verification differs.
# Goal (issue "security"): with auth on, req/s at least 0.9x auth off (costs < 10 %).
#
#   bench/auth.sh            # ~1.5 min: REPS=5 DUR=5 CONC=64
#
# Rounds alternate the order (ABBA). Before the loads: the auth-on server must answer 401
# without a token and a completed task with it. The key pair and the token are made here
# (python3 `cryptography`); the JWKS is served by `python3 -m http.server` on 127.0.0.1.
# Loopback only; every load is bounded by -z and wrapped in `timeout`; only the processes
# started here are stopped.
set -euo pipefail
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
REPS=${REPS:-5}
DUR=${DUR:-5}
WARM=${WARM:-2}
CONC=${CONC:-64}
PORT_OFF=${PORT_OFF:-7305} PORT_ON=${PORT_ON:-7306} JWKS_PORT=${JWKS_PORT:-7307}
OUT=${OUT:-$BENCH/out/results/auth-$(date +%Y%m%d-%H%M%S)}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
for f in "$SB" "$OHA"; do [ -x "$f" ] || { echo "missing $f - run bench/setup.sh first" >&2; exit 1; }; done
HOST=127.0.0.1
for p in "$PORT_OFF" "$PORT_ON" "$JWKS_PORT"; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT/jwks"
BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'

# An RSA key, its JWKS and one RS256 token valid for an hour.
python3 - "$OUT" <<'PY'
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
out = sys.argv[1]
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b'=').decode()
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pub = key.public_key().public_numbers()
n = pub.n.to_bytes((pub.n.bit_length() + 7) // 8, 'big')
jwk = {'kty': 'RSA', 'kid': 'bench', 'alg': 'RS256', 'use': 'sig', 'n': b64(n), 'e': b64(pub.e.to_bytes(3, 'big'))}
json.dump({'keys': [jwk]}, open(f'{out}/jwks/jwks.json', 'w'))
now = int(time.time())
head = b64(json.dumps({'alg': 'RS256', 'typ': 'JWT', 'kid': 'bench'}).encode())
claims = b64(json.dumps({'iss': 'bench', 'aud': 'switchboard', 'sub': 'bench-user', 'iat': now, 'exp': now + 3600}).encode())
sig = key.sign(f'{head}.{claims}'.encode(), padding.PKCS1v15(), hashes.SHA256())
open(f'{out}/token', 'w').write(f'{head}.{claims}.{b64(sig)}')
PY
TOKEN=$(cat "$OUT/token")

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
python3 -m http.server --bind "$HOST" "$JWKS_PORT" --directory "$OUT/jwks" >"$OUT/jwks.log" 2>&1 &
PIDS+=($!)
# The per-caller request rate (default 50/s, burst 200) applies to authenticated callers only:
# the auth-on server would answer 429 to nearly every request of the load. It is off on both.
SWITCHBOARD_LOG=warn "$SB" serve --listen "$HOST:$PORT_OFF" --store memory --agent echo-task --rate-per-second 0 \
  >"$OUT/serve-off.log" 2>&1 &
PIDS+=($!); PID_OFF=$!
SWITCHBOARD_LOG=warn "$SB" serve --listen "$HOST:$PORT_ON" --store memory --agent echo-task --rate-per-second 0 \
  --jwks-url "http://$HOST:$JWKS_PORT/jwks.json" --jwt-issuer bench --jwt-audience switchboard --jwt-algorithms RS256 \
  >"$OUT/serve-on.log" 2>&1 &
PIDS+=($!); PID_ON=$!
for p in "$PORT_OFF" "$PORT_ON" "$JWKS_PORT"; do
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://$HOST:$p/" 2>/dev/null && break; sleep 0.1; done
done

post() { curl -sS --max-time 10 -o "$OUT/$1.answer.json" -w '%{http_code}' -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' "${@:3}" -d "$BODY" "http://$HOST:$2/"; }
code=$(post on-no-token "$PORT_ON")
[ "$code" = 401 ] || { echo "auth on, no token: HTTP $code, want 401" >&2; cat "$OUT/on-no-token.answer.json" >&2; exit 1; }
for k in on off; do
  port=$PORT_OFF; [ $k = on ] && port=$PORT_ON
  code=$(post "$k" "$port" -H "Authorization: Bearer $TOKEN")
  [ "$code" = 200 ] && grep -q TASK_STATE_COMPLETED "$OUT/$k.answer.json" ||
    { echo "auth $k with token: HTTP $code" >&2; cat "$OUT/$k.answer.json" >&2; exit 1; }
done
echo "checks: auth on without token -> 401; with token -> completed task; auth off -> completed task" | tee "$OUT/checks.txt"

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
load() {  # load on|off TAG OHA-ARGS...
  local k=$1 tag=$2 port=$PORT_OFF pid=$PID_OFF c0 c1 t0 t1; shift 2
  [ "$k" = on ] && { port=$PORT_ON; pid=$PID_ON; }
  c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
  timeout 90 "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H "Authorization: Bearer $TOKEN" -d "$BODY" "$@" "http://$HOST:$port/" >"$OUT/$k.$tag.json"
  c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
  python3 "$BENCH/oha_row.py" "$OUT/$k.$tag.json" "$c0" "$c1" "$hz" "$t0" "$t1" "$k" "$tag" >>"$OUT/runs.tsv"
}
printf 'kind\ttag\t%s\n' "$(python3 "$BENCH/oha_row.py" --header)" >"$OUT/runs.tsv"
{ echo "date: $(date -Is)"; echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: REPS=$REPS DUR=${DUR}s WARM=${WARM}s CONC=$CONC; JWT RS256 2048-bit, JWKS on 127.0.0.1"
  echo "switchboard: $SB ($(stat -c '%y' "$SB" | cut -d. -f1)), git $(git -C "$BENCH/.." rev-parse --short HEAD)"; } | tee "$OUT/env.txt"
load off warm -z "${WARM}s" -c "$CONC"; load on warm -z "${WARM}s" -c "$CONC"
for r in $(seq 1 "$REPS"); do
  if [ $(( r % 2 )) = 1 ]; then order=(off on); else order=(on off); fi
  for k in "${order[@]}"; do load "$k" "r$r" -z "${DUR}s" -c "$CONC"; done
done
echo "loadavg at end: $(cat /proc/loadavg)" | tee -a "$OUT/env.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(f'{sys.argv[1]}/runs.tsv'), delimiter='\t') if r['tag'] != 'warm']
med = statistics.median
print('| auth | req/s (median) | server CPU µs/req | p50 ms | failed |')
print('|---|---:|---:|---:|---:|')
m = {}
for k in ('off', 'on'):
    rs = [r for r in rows if r['kind'] == k]
    m[k] = med([float(r['req_s']) for r in rs])
    print(f"| {k} | {m[k]:,.0f} | {med([float(r['server_cpu_us_per_req']) for r in rs]):.1f} "
          f"| {med([float(r['p50_ms']) for r in rs]):.2f} | {sum(int(r['failed']) for r in rs)} |")
per = [next(float(r['req_s']) for r in rows if r['kind'] == 'on' and r['tag'] == t) /
       next(float(r['req_s']) for r in rows if r['kind'] == 'off' and r['tag'] == t)
       for t in sorted({r['tag'] for r in rows}, key=lambda t: int(t[1:]))]
x = med(per)
print()
print(f"on ÷ off req/s per round: {' '.join(f'{p:.3f}' for p in per)}; median {x:.3f}, i.e. auth costs "
      f"{100 * (1 - x):.1f} % (goal < 10 %): {'PASS' if x >= 0.9 else 'FAIL'}")
PY
echo "results: $OUT"
