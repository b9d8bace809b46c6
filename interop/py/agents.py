"""Drive several agents of one switchboard server with the official Python
client (a2a-sdk 1.x): each agent's card resolved at its own path, a blocking
message sent over JSON-RPC and over HTTP+JSON, the answer checked.

Usage: python agents.py URL PATH TEXT EXPECTED [PATH TEXT EXPECTED ...]
       (the card of each agent at URL PATH/.well-known/agent-card.json)

Prints one JSON line per step {"step", "ok", "detail"} and a final line
"interop: N passed, M failed". Exit code 0 only if every step passed.
"""

import asyncio
import json
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState

TIMEOUT_S = 20.0


def text_of(task) -> str:
    return ''.join(p.text for a in task.artifacts for p in a.parts if p.HasField('text'))


async def step(base: str, path: str, text: str, expected: str, binding: str) -> dict:
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        card = await A2ACardResolver(http, base + path).get_agent_card()
    urls = [i.url for i in card.supported_interfaces if i.protocol_binding == binding]
    if not urls or not all(u.rstrip('/').startswith(base + path) for u in urls):
        raise AssertionError(f'{binding} interfaces {urls} are not under {base + path}')
    client = ClientFactory(
        ClientConfig(streaming=False, supported_protocol_bindings=[binding])
    ).create(card)
    request = SendMessageRequest(
        message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    )
    results = [r async for r in client.send_message(request)]
    task = results[0].task
    state = TaskState.Name(task.status.state)
    answer = text_of(task)
    if task.status.state != TaskState.TASK_STATE_COMPLETED or expected not in answer:
        raise AssertionError(f'{state}, answer {answer!r}, expected {expected!r}')
    return {'agent': card.name, 'state': state, 'answer': answer}


async def main() -> int:
    base, rest = sys.argv[1].rstrip('/'), sys.argv[2:]
    passed = failed = 0
    for i in range(0, len(rest), 3):
        path, text, expected = rest[i : i + 3]
        for binding in ('JSONRPC', 'HTTP+JSON'):
            name = f'{path} {binding}'
            try:
                detail = await step(base, path, text, expected, binding)
                print(json.dumps({'step': name, 'ok': True, 'detail': detail}))
                passed += 1
            except Exception as e:  # noqa: BLE001 - every failure is a failed step
                print(json.dumps({'step': name, 'ok': False, 'detail': repr(e)}))
                failed += 1
    print(f'interop: {passed} passed, {failed} failed')
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
