"""A 0.3 client against a default `switchboard serve` (no card flags).

Usage: default_card.py BASE_URL

With the official A2A 0.3 Python SDK (a2a-sdk 0.3.x): reads the server's
default card with the SDK's card resolver, lets the SDK's ClientFactory pick
the transport from it (what an A2A 0.3 caller does), completes a send and a
stream, then streams to an unknown task and to a finished one (both
`tasks/resubscribe` and `message/stream` with that task id) and checks that
each fails with the A2A error (TaskNotFound -32001, UnsupportedOperation
-32004 for a finished task), not a transport error. Prints one line per step
and, last, "interop: N passed, M failed".
"""

import asyncio
import sys
import traceback
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import Message, Role, Task, TaskIdParams, TaskState, TextPart

BASE = sys.argv[1].rstrip("/")
passed = 0
failed = 0


def step(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def msg(text, task_id=None):
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[TextPart(text=text)],
        task_id=task_id,
    )


async def a2a_error(events):
    """Drains an event stream; returns the A2A error code it failed with,
    or the other exception / the events if it did not fail that way."""
    got = []
    try:
        async for e in events:
            got.append(e)
    except A2AClientJSONRPCError as e:
        return e.error.code
    except Exception as e:  # a transport error is the failure under test
        return repr(e)
    return got


async def run():
    async with httpx.AsyncClient(timeout=30) as http:
        # 1. The default card is a valid 0.3 card.
        card = await A2ACardResolver(http, BASE).get_agent_card()
        step(
            "default card reads as 0.3",
            card.url.rstrip("/") == BASE and card.preferred_transport == "JSONRPC",
            card,
        )
        # 2. The SDK picks a transport from the card alone.
        sender = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        streamer = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        # 3. Send.
        out = [e async for e in sender.send_message(msg("hello from 0.3"))]
        task = out[-1][0] if out and isinstance(out[-1], tuple) else None
        step(
            "send",
            isinstance(task, Task) and task.status.state == TaskState.completed,
            out,
        )
        done = task.id if task else "missing"
        # 4. Stream.
        out = [e async for e in streamer.send_message(msg("stream from 0.3"))]
        last = out[-1][0] if out and isinstance(out[-1], tuple) else None
        step(
            "stream",
            isinstance(last, Task) and last.status.state == TaskState.completed,
            out,
        )
        # 5-8. Streams that fail before their first event.
        code = await a2a_error(streamer.resubscribe(TaskIdParams(id="no-such-task")))
        step("resubscribe to an unknown task: TaskNotFound", code == -32001, code)
        code = await a2a_error(streamer.resubscribe(TaskIdParams(id=done)))
        step("resubscribe to a finished task: UnsupportedOperation", code == -32004, code)
        code = await a2a_error(streamer.send_message(msg("more", task_id="no-such-task")))
        step("stream to an unknown task: TaskNotFound", code == -32001, code)
        code = await a2a_error(streamer.send_message(msg("more", task_id=done)))
        step("stream to a finished task: UnsupportedOperation", code == -32004, code)


try:
    asyncio.run(run())
except Exception:
    traceback.print_exc()
    failed += 1
print(f"interop: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
