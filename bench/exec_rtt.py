"""Round trip of one message through `switchboard serve`'s exec runtime vs
spawning the same program directly (bench/exec.sh).

Usage: python exec_rtt.py AGENT_URL N PROGRAM [ARGS...]

Alternates the two paths, N messages each, one at a time. Direct: spawn
PROGRAM ARGS, write the text on stdin, close it, read stdout to its end and
wait for the exit. Through serve: SendMessage (JSON-RPC, blocking) on one
kept-alive connection (http.client), answered when the program has exited
and its output is the task's artifact. Each answer is checked. Prints one
JSON object: p50/p90 of both and the added p50 (ms).
"""

import http.client
import json
import statistics
import subprocess
import sys
import time
import urllib.parse
import uuid

TEXT = "hello exec"
EXPECTED = TEXT[::-1]


def direct(program: list) -> float:
    start = time.perf_counter()
    out = subprocess.run(program, input=TEXT.encode(), capture_output=True, check=True)
    took = time.perf_counter() - start
    if out.stdout.decode().strip() != EXPECTED:
        raise RuntimeError(f"direct: {out.stdout!r}")
    return took


class Through:
    def __init__(self, url: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.path = u.path or "/"
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

    def __call__(self) -> float:
        body = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                                   "parts": [{"text": TEXT}]}},
        })
        start = time.perf_counter()
        self.conn.request("POST", self.path, body=body,
                          headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
        resp = self.conn.getresponse()
        data = resp.read()
        took = time.perf_counter() - start
        answer = json.loads(data)
        task = (answer.get("result") or {}).get("task") or {}
        state = (task.get("status") or {}).get("state")
        text = "".join(p.get("text", "") for a in task.get("artifacts") or [] for p in a.get("parts") or [])
        if resp.status != 200 or state != "TASK_STATE_COMPLETED" or text.strip() != EXPECTED:
            raise RuntimeError(f"serve: {resp.status} {data[:300]!r}")
        return took


def pct(xs: list, p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    url, n, program = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    through = Through(url)
    for _ in range(5):  # warm-up: caches, the first spawn, the connection
        direct(program)
        through()
    d, s = [], []
    for i in range(n):
        # Alternate which goes first, so drift hits both alike.
        if i % 2:
            d.append(direct(program))
            s.append(through())
        else:
            s.append(through())
            d.append(direct(program))
    ms = lambda x: round(x * 1000, 2)
    print(json.dumps({
        "n": n,
        "direct_p50_ms": ms(statistics.median(d)), "direct_p90_ms": ms(pct(d, 0.9)),
        "serve_p50_ms": ms(statistics.median(s)), "serve_p90_ms": ms(pct(s, 0.9)),
        "added_p50_ms": ms(statistics.median(s) - statistics.median(d)),
    }))


if __name__ == "__main__":
    main()
