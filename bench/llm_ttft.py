"""Time to first token, direct to an OpenAI-compatible model server vs
through `switchboard serve`'s llm agent in front of it (bench/llm-ttft.sh).

Usage: python llm_ttft.py MODEL_BASE_URL AGENT_URL N

Alternates the two paths, N short chats each (the same prompt, temperature
0, a few tokens), on plain sockets (http.client) so both pay the same
client cost. Direct: from sending the request to the first `data:` event
with a content delta. Through serve: from sending SendStreamingMessage
(JSON-RPC) to the first artifact-update event (which carries the first
token). Each answer is read to its end before the next request. Prints one JSON object with p50/p90 of each and the added p50.
"""

import http.client
import json
import statistics
import sys
import time
import urllib.parse
import uuid

PROMPT = "Say hi."


def first_event(url: str, body: dict, headers: dict, is_first) -> float:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    payload = json.dumps(body)
    start = time.perf_counter()
    conn.request("POST", u.path or "/", body=payload, headers={"Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"{url}: {resp.status} {resp.read()[:300]!r}")
    first = None
    try:
        # Read the whole answer: the next request then finds the model idle
        # (closing early would leave a serve task generating on, or stop a
        # direct one, and the paths would not be measured alike).
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.strip()
            if first is None and line.startswith(b"data:"):
                data = line[5:].strip()
                if data != b"[DONE]" and is_first(json.loads(data)):
                    first = time.perf_counter() - start
    finally:
        conn.close()
    if first is None:
        raise RuntimeError(f"{url}: the stream ended without a token")
    return first


def direct(model_base: str) -> float:
    body = {
        "model": "smollm2",
        "stream": True,
        "temperature": 0,
        "max_tokens": 8,
        "messages": [{"role": "user", "content": PROMPT}],
    }

    def is_first(ev):
        return bool(ev) and any(c.get("delta", {}).get("content") for c in ev.get("choices", []))

    return first_event(model_base.rstrip("/") + "/chat/completions", body, {}, is_first)


def through(agent_url: str) -> float:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": PROMPT}]}},
    }

    def is_first(ev):
        return bool(ev) and "artifactUpdate" in (ev.get("result") or {})

    return first_event(agent_url.rstrip("/") + "/", body, {"A2A-Version": "1.0", "Accept": "text/event-stream"}, is_first)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> int:
    model_base, agent_url, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # Warm both paths (model load, connections, the agent's first run).
    for _ in range(3):
        direct(model_base)
        through(agent_url)
    d, t = [], []
    for _ in range(n):
        d.append(direct(model_base))
        t.append(through(agent_url))
    ms = lambda s: round(s * 1000, 2)  # noqa: E731
    print(json.dumps({
        "n": n,
        "direct_p50_ms": ms(statistics.median(d)),
        "direct_p90_ms": ms(pct(d, 0.9)),
        "serve_p50_ms": ms(statistics.median(t)),
        "serve_p90_ms": ms(pct(t, 0.9)),
        "added_p50_ms": ms(statistics.median(t) - statistics.median(d)),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
