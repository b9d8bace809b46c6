#!/usr/bin/env bash
# bench/observe.sh - issue 22's "tracing and metrics on vs off": one build, two servers up at
# once (bench/ab.sh pairs them, rounds alternating), "before" = observability off, "after" =
# OpenTelemetry traces exported over OTLP to a real collector (examples/otlp_sink.rs: spans are
# encoded, batched and sent as in production) and /metrics scraped once a second.
#
#   SB=/path/switchboard SINK=/path/otlp_sink bench/observe.sh
#
# OFF_ARGS: extra serve flags of the off side (e.g. the flag that turns metrics off).
# ON_ENV: extra VAR=value words of the on side, e.g. a production sampler:
#   ON_ENV="OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.01"
# LOADS, REPS, DUR, WARM, CONC as bench/ab.sh. Loopback only; bounded by ab.sh's limits.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
TARGET=${CARGO_TARGET_DIR:-/work/target-bench}
SB=${SB:-$TARGET/dist/switchboard}
SINK=${SINK:-$TARGET/dist/examples/otlp_sink}
SINK_ADDR=${SINK_ADDR:-127.0.0.1:7317}
PORT_B=${PORT_B:-7312}
OUT=${OUT:-$BENCH/out/results/observe-$(date +%Y%m%d-%H%M%S)}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
mkdir -p "$OUT"
"$SINK" "$SINK_ADDR" >"$OUT/sink.log" 2>&1 &
SINK_PID=$!
SCRAPER=""
cleanup() { for p in $SCRAPER $SINK_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# The on side's /metrics, read every second while it is up (as Prometheus would, more often).
( while sleep 1; do curl -fsS -o /dev/null "http://127.0.0.1:$PORT_B/metrics" 2>/dev/null && echo ok; done >"$OUT/scrapes.log" ) &
SCRAPER=$!
SB_BEFORE=$SB SB=$SB SB_BEFORE_REV="observability off" PORT_B=$PORT_B OUT=$OUT \
  SB_BEFORE_ARGS="${OFF_ARGS:-}" \
  SB_ENV="OTEL_EXPORTER_OTLP_ENDPOINT=http://$SINK_ADDR OTEL_SERVICE_NAME=bench-observe ${ON_ENV:-}" \
  "$BENCH/ab.sh"
sleep 6  # the batch exporter's last flush (5 s schedule) reaches the sink
echo "scrapes of /metrics: $(grep -c ok "$OUT/scrapes.log" || true)" | tee -a "$OUT/env.txt"
echo "sink: $(tail -1 "$OUT/sink.log")" | tee -a "$OUT/env.txt"
echo "before = off, after = on (traces exported + metrics scraped)" | tee -a "$OUT/env.txt"
