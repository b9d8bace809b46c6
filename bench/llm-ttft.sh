#!/usr/bin/env bash
# bench/llm-ttft.sh - time to first token of a real model (SmolLM2-135M,
# llama-cpp-python's OpenAI-compatible server, 1 thread) called directly vs
# through `switchboard serve`'s llm agent: p50 over N short chats (default
# 100), alternating the two paths. Everything on 127.0.0.1.
#
#   SWITCHBOARD_BIN=/path/to/release/switchboard bash bench/llm-ttft.sh [N]
#
# STORE=sqlite (default, the durable store as shipped) or memory (what the
# store's commits add, by difference).
#
# Needs a RELEASE binary with the llm runtime (debug numbers are not for the
# record; the script refuses a binary under target/debug unless
# LLM_TTFT_ALLOW_DEBUG=1, for trying the script itself). Installs the model
# with scripts/llm-setup.sh (10-25 min the first time).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=../scripts/procs.sh
. scripts/procs.sh
N=${1:-100}
STORE=${STORE:-sqlite}
case "$STORE" in sqlite|memory) ;; *) echo "llm-ttft: STORE is sqlite or memory" >&2; exit 2 ;; esac
BIN=${SWITCHBOARD_BIN:-target/release/switchboard}
[ -x "$BIN" ] || { echo "llm-ttft: no binary at $BIN (set SWITCHBOARD_BIN to a release build)" >&2; exit 2; }
case "$BIN" in
  *target/debug/*) [ "${LLM_TTFT_ALLOW_DEBUG:-0}" = 1 ] || { echo "llm-ttft: $BIN is a debug build; use a release one" >&2; exit 2; } ;;
esac
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
GGUF=$(bash scripts/llm-setup.sh | tail -n 1)

MODEL_PORT=$(free_port)
interop/.venv-llm/bin/python -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --n_ctx 2048 \
  --n_threads 1 --interrupt_requests False --host 127.0.0.1 --port "$MODEL_PORT" > "$WORK/model.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$MODEL_PORT/v1/models" 120 || { tail -20 "$WORK/model.log"; exit 1; }

SERVE_PORT=$(free_port)
cat > "$WORK/serve.toml" <<TOML
agent = "echo-message"
[[agents]]
name = "chat"
path = "/chat"
runtime = "llm"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
model = "smollm2"
temperature = 0
max_tokens = 8
history_tasks = 0
TOML
SWITCHBOARD_LOG=warn "$BIN" serve --config "$WORK/serve.toml" --listen "127.0.0.1:$SERVE_PORT" \
  --store "$([ "$STORE" = sqlite ] && echo "sqlite://$WORK/ttft.db" || echo memory)" > "$WORK/serve.out" 2> "$WORK/serve.log" &
PIDS+=($!)
wait_http "http://127.0.0.1:$SERVE_PORT/chat/.well-known/agent-card.json" 30 || { cat "$WORK/serve.log"; exit 1; }

echo "binary: $BIN ($("$BIN" --version)), store: $STORE, loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
interop/.venv-llm/bin/python bench/llm_ttft.py "http://127.0.0.1:$MODEL_PORT/v1" "http://127.0.0.1:$SERVE_PORT/chat" "$N"
