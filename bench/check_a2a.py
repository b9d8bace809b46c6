#!/usr/bin/env python3
"""Shape check of one sb-* server's saved answers (A2A 1.0, JSON-RPC or HTTP+JSON binding).

Usage: check_a2a.py NAME RESULTS_DIR
Reads NAME.unary-response.json, NAME.stream-response.txt, NAME.stream-headers.txt,
NAME.agent-card.json (written by run.sh) and prints one line: "NAME: OK ..." or
"NAME: FAIL <reasons>". NAME ending in -message expects a Message reply (stream: 1
event); otherwise a COMPLETED Task with artifact + history (stream: task,
artifactUpdate, statusUpdate). NAME containing -rest- was driven over HTTP+JSON: the
answers are the bare SendMessageResponse / StreamResponse objects, no JSON-RPC envelope.
(The gRPC row is checked by run.sh with grpc_bench_frame, not here.)
"""

import json
import sys
from pathlib import Path

TEXT = 'hello world'


def sse_events(text):
    """data: payloads of an SSE body (events separated by blank lines)."""
    events, data = [], []
    for line in text.splitlines():
        if line == '':
            if data:
                events.append('\n'.join(data))
                data = []
        elif line.startswith('data:'):
            data.append(line[5:].lstrip(' '))
    if data:
        events.append('\n'.join(data))
    return events


def texts(parts):
    return [p.get('text') for p in parts or [] if isinstance(p, dict)]


def main():
    name, out = sys.argv[1], Path(sys.argv[2])
    task_mode = not name.endswith('-message')
    rest = '-rest-' in name
    errs, notes = [], []

    def need(cond, msg):
        if not cond:
            errs.append(msg)
        return cond

    # Card
    try:
        card = json.loads((out / f'{name}.agent-card.json').read_text())
        need(bool(card.get('name')), 'card: no name')
        ifs = card.get('supportedInterfaces') or []
        need(ifs and all('url' in i and 'protocolBinding' in i for i in ifs), 'card: supportedInterfaces missing/incomplete')
        need(any(i.get('protocolVersion') == '1.0' for i in ifs), 'card: no interface with protocolVersion 1.0')
    except Exception as e:  # noqa: BLE001
        errs.append(f'card unreadable: {e}')

    # Unary
    try:
        raw = (out / f'{name}.unary-response.json').read_text().strip()
        r = json.loads(raw)
        if rest:
            res = r
        else:
            need(r.get('jsonrpc') == '2.0' and r.get('id') == 1, 'unary: jsonrpc/id wrong')
            need('error' not in r, f'unary: error {r.get("error")}')
            res = r.get('result') or {}
        if task_mode:
            if need(list(res) == ['task'], f'unary: result keys {list(res)} != [task]'):
                t = res['task']
                need(bool(t.get('id')) and bool(t.get('contextId')), 'unary task: id/contextId missing')
                need((t.get('status') or {}).get('state') == 'TASK_STATE_COMPLETED', f'unary task: state {(t.get("status") or {}).get("state")}')
                arts = t.get('artifacts') or []
                need(arts and TEXT in texts(arts[0].get('parts')) and arts[0].get('artifactId'), 'unary task: artifact with echo text missing')
                hist = t.get('history') or []
                need(any(m.get('role') == 'ROLE_USER' and m.get('messageId') == 'm1' and TEXT in texts(m.get('parts')) for m in hist),
                     'unary task: history lacks the user message')
                need(all(m.get('taskId') in (None, t.get('id')) for m in hist), 'unary task: history taskId mismatch')
                notes.append(f'unary task {len(raw)} B, history {len(hist)}, artifacts {len(arts)}')
        else:
            if need(list(res) == ['message'], f'unary: result keys {list(res)} != [message]'):
                m = res['message']
                need(m.get('role') == 'ROLE_AGENT' and bool(m.get('messageId')), 'unary message: role/messageId wrong')
                need(TEXT in texts(m.get('parts')), 'unary message: echo text missing')
                notes.append(f'unary message {len(raw)} B')
    except Exception as e:  # noqa: BLE001
        errs.append(f'unary unreadable: {e}')

    # Stream
    try:
        hdr = (out / f'{name}.stream-headers.txt').read_text().lower()
        need('content-type: text/event-stream' in hdr, 'stream: content-type is not text/event-stream')
        body = (out / f'{name}.stream-response.txt').read_text()
        evs = [json.loads(e) for e in sse_events(body)]
        if rest:  # same shape as the JSON-RPC results below
            evs = [{'result': e} for e in evs]
        else:
            need(all(e.get('jsonrpc') == '2.0' and e.get('id') == 1 and 'result' in e for e in evs), 'stream: an event is not a JSON-RPC result for id 1')
        kinds = [next(iter(e.get('result') or {'?': 0})) for e in evs]
        if task_mode:
            if need(kinds == ['task', 'artifactUpdate', 'statusUpdate'], f'stream kinds {kinds}'):
                t, a, s = (e['result'][k] for e, k in zip(evs, kinds))
                tid = t.get('id')
                need(a.get('taskId') == tid and s.get('taskId') == tid, 'stream: taskId mismatch between events')
                need(TEXT in texts((a.get('artifact') or {}).get('parts')), 'stream: artifactUpdate lacks echo text')
                need((s.get('status') or {}).get('state') == 'TASK_STATE_COMPLETED', f'stream: final state {(s.get("status") or {}).get("state")}')
                notes.append(f'stream 3 events {len(body)} B, first task state {(t.get("status") or {}).get("state")}')
        else:
            if need(kinds == ['message'], f'stream kinds {kinds}'):
                need(TEXT in texts(evs[0]['result']['message'].get('parts')), 'stream: message lacks echo text')
                notes.append(f'stream 1 event {len(body)} B')
    except Exception as e:  # noqa: BLE001
        errs.append(f'stream unreadable: {e}')

    if errs:
        print(f'{name}: FAIL ' + '; '.join(errs))
        return 1
    print(f'{name}: OK (' + '; '.join(notes) + ')')
    return 0


if __name__ == '__main__':
    sys.exit(main())
