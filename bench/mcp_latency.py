"""Latency of one tool call through `switchboard mcp` against the same A2A call made directly.

    python mcp_latency.py A2A_BASE MCP_URL N TOOL

One keep-alive HTTP client per path, calls one at a time, the three kinds interleaved
(direct SendMessage, direct SendStreamingMessage read to its end, MCP tools/call read to its
result over a legacy session), after N/10 warm-up rounds. Prints one TSV row per kind:
kind, calls, p50 ms, p90 ms, p99 ms; then the MCP call's added p50 against each direct kind.
"""

import json
import statistics
import sys
import time
import uuid

import httpx

a2a, mcp_url, n, tool = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
A2A_HEADERS = {"content-type": "application/json", "A2A-Version": "1.0"}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def message(text):
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}}


def direct(client):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message("hello world")}
    r = client.post(a2a + "/", json=body, headers=A2A_HEADERS)
    assert r.status_code == 200 and "result" in r.json(), r.text


def direct_stream(client):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": message("hello world")}
    with client.stream("POST", a2a + "/", json=body, headers={**A2A_HEADERS, "accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        for _ in r.iter_lines():
            pass


def sse_result(text):
    for line in reversed(text.splitlines()):
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return json.loads(text)


with httpx.Client(timeout=30) as mcp:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    r = mcp.post(mcp_url, json=init, headers=MCP_HEADERS)
    session = {**MCP_HEADERS, "mcp-session-id": r.headers["mcp-session-id"]}
    mcp.post(mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    ids = iter(range(2, 10**9))

    def via_mcp(_client):
        body = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                "params": {"name": tool, "arguments": {"message": "hello world"}}}
        answer = sse_result(mcp.post(mcp_url, json=body, headers=session).text)
        assert not answer["result"].get("isError"), answer

    kinds = {"direct SendMessage": direct, "direct SendStreamingMessage": direct_stream, "mcp tools/call": via_mcp}
    times = {k: [] for k in kinds}
    with httpx.Client(timeout=30) as client:
        for i in range(n + n // 10):
            for kind, call in kinds.items():
                t0 = time.perf_counter()
                call(client)
                if i >= n // 10:
                    times[kind].append((time.perf_counter() - t0) * 1000)

for kind, ts in times.items():
    q = statistics.quantiles(ts, n=100)
    print(f"{kind}\t{len(ts)}\t{statistics.median(ts):.3f}\t{q[89]:.3f}\t{q[98]:.3f}")
mcp_p50 = statistics.median(times["mcp tools/call"])
for kind in ("direct SendMessage", "direct SendStreamingMessage"):
    print(f"added p50 vs {kind}\t{mcp_p50 - statistics.median(times[kind]):.3f} ms")
