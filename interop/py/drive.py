"""Drive an A2A 1.0 agent with the official Python client (a2a-sdk 1.3.0),
over a chosen protocol binding (JSON-RPC by default).

Usage: python drive.py [--transport JSONRPC|HTTP+JSON|GRPC] [--agui-hints] URL
       (agent card at URL/.well-known/agent-card.json; default JSONRPC)

The clients are built with ClientConfig(supported_protocol_bindings=[TRANSPORT]),
so the SDK picks the card's interface for that binding. For GRPC the SDK
needs a channel factory: an insecure grpc.aio channel to the interface's
`host:port` target (needs the `a2a-sdk[grpc]` extra). The `card` step fails
unless the SDK really chose that binding.

Runs the demo-agent scenario (see interop/README.md), printing one JSON line
per step {"step", "ok", "detail"} and a final line
(with --agui-hints also the `think` and `tool` steps: switchboard's demo
agent's AG-UI-hinted parts must reach the SDK as ordinary, valid A2A)
"interop: N passed, M failed". Exit code 0 only if every step passed.
"""

import asyncio
import json
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import MessageToDict

STEP_TIMEOUT_S = 20.0
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


class CheckFailed(Exception):
    pass


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


def state_name(state: int) -> str:
    return TaskState.Name(state)


def user_message(text: str, task_id: str = '', context_id: str = '') -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def parts_text(parts) -> str:
    return ''.join(p.text for p in parts if p.HasField('text'))


def artifacts_text(task) -> str:
    return ''.join(parts_text(a.parts) for a in task.artifacts)


def event_kind(ev) -> str:
    return ev.WhichOneof('payload') or 'empty'


def event_summary(ev) -> str:
    kind = event_kind(ev)
    if kind == 'task':
        return f'task:{state_name(ev.task.status.state)}'
    if kind == 'status_update':
        return f'status:{state_name(ev.status_update.status.state)}'
    if kind == 'artifact_update':
        return f'artifact:{parts_text(ev.artifact_update.artifact.parts)!r}'
    return kind


TRANSPORT_CLASSES = {
    'HTTP+JSON': 'RestTransport',
    'JSONRPC': 'JsonRpcTransport',
    'GRPC': 'GrpcTransport',
}


class Driver:
    def __init__(self, url: str, transport: str, hinted: bool = False) -> None:
        self.url = url.rstrip('/')
        self.transport = transport
        self.hinted_steps = hinted  # also run the `think` and `tool` steps (switchboard's demo agent)
        self.passed = 0
        self.failed = 0
        self.card = None
        self.blocking = None  # client that uses SendMessage (streaming=False)
        self.streaming = None  # client that uses SendStreamingMessage / SubscribeToTask
        self.long_task = None  # Task returned by send_nonblocking
        self.sub_task: asyncio.Task | None = None
        self.sub_events: list = []
        self.sub_first = asyncio.Event()

    def report(self, step: str, ok: bool, detail) -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(json.dumps({'step': step, 'ok': ok, 'detail': detail}), flush=True)

    async def run_step(self, name: str, fn, timeout: float = STEP_TIMEOUT_S) -> None:
        try:
            detail = await asyncio.wait_for(fn(), timeout)
            self.report(name, True, detail)
        except CheckFailed as e:
            self.report(name, False, str(e))
        except asyncio.TimeoutError:
            self.report(name, False, f'timed out after {timeout:.0f}s')
        except Exception as e:  # noqa: BLE001 - report any SDK/transport error
            self.report(name, False, f'{type(e).__name__}: {e}')

    async def send_blocking_text(self, text: str, task_id: str = '', context_id: str = ''):
        """SendMessage (blocking); returns the single StreamResponse the client yields."""
        request = SendMessageRequest(message=user_message(text, task_id, context_id))
        results = [r async for r in self.blocking.send_message(request)]
        check(len(results) == 1, f'expected 1 response from SendMessage, got {len(results)}')
        return results[0]

    # ---- steps -------------------------------------------------------------

    async def step_card(self):
        async with httpx.AsyncClient(timeout=STEP_TIMEOUT_S) as http:
            self.card = await A2ACardResolver(http, self.url).get_agent_card()
        check(bool(self.card.name), 'card name is empty')
        bindings = [self.transport]
        extra = {}
        if self.transport == 'GRPC':
            import grpc  # only needed, and only installed, for the gRPC extra

            extra['grpc_channel_factory'] = grpc.aio.insecure_channel
        self.blocking = ClientFactory(
            ClientConfig(streaming=False, supported_protocol_bindings=bindings, **extra)
        ).create(self.card)
        self.streaming = ClientFactory(
            ClientConfig(streaming=True, supported_protocol_bindings=bindings, **extra)
        ).create(self.card)
        used = type(self.blocking._transport).__name__
        want = TRANSPORT_CLASSES.get(self.transport, used)
        check(used == want, f'the SDK chose {used}, expected {want} for {self.transport}')
        ifaces = [(i.protocol_binding, i.url, i.protocol_version) for i in self.card.supported_interfaces]
        return {'name': self.card.name, 'streaming': self.card.capabilities.streaming, 'transport': used, 'interfaces': ifaces}

    async def step_send_blocking(self):
        resp = await self.send_blocking_text('hello interop')
        check(event_kind(resp) == 'task', f'expected a Task, got {event_kind(resp)}')
        task = resp.task
        state = state_name(task.status.state)
        check(task.status.state == TaskState.TASK_STATE_COMPLETED, f'state {state}, expected COMPLETED')
        text = artifacts_text(task)
        check('hello interop' in text, f'artifact text {text!r} lacks the input')
        return {'task_id': task.id, 'state': state, 'artifact_text': text}

    async def step_send_message_reply(self):
        resp = await self.send_blocking_text('/message hi')
        check(event_kind(resp) == 'message', f'expected a Message, got {event_kind(resp)}')
        msg = resp.message
        text = parts_text(msg.parts)
        check('hi' in text, f'reply text {text!r} lacks "hi"')
        check(msg.role == Role.ROLE_AGENT, f'reply role {Role.Name(msg.role)}, expected ROLE_AGENT')
        return {'text': text, 'role': Role.Name(msg.role), 'task_id': msg.task_id}

    async def step_send_nonblocking(self):
        request = SendMessageRequest(
            message=user_message('/long 30'),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        results = [r async for r in self.blocking.send_message(request)]
        check(len(results) == 1, f'expected 1 response, got {len(results)}')
        check(event_kind(results[0]) == 'task', f'expected a Task, got {event_kind(results[0])}')
        task = results[0].task
        state = state_name(task.status.state)
        check(
            task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING),
            f'state {state}, expected SUBMITTED or WORKING',
        )
        check(bool(task.id), 'task has no id')
        self.long_task = task
        return {'task_id': task.id, 'context_id': task.context_id, 'state': state}

    async def step_get(self):
        check(self.long_task is not None, 'skipped: send_nonblocking produced no task')
        task = await self.blocking.get_task(GetTaskRequest(id=self.long_task.id))
        state = state_name(task.status.state)
        check(task.id == self.long_task.id, f'got task id {task.id!r}, expected {self.long_task.id!r}')
        check(task.status.state not in TERMINAL, f'state {state} is terminal, expected the long task running')
        return {'task_id': task.id, 'state': state}

    async def step_list(self):
        check(self.long_task is not None, 'skipped: send_nonblocking produced no task')
        ctx = self.long_task.context_id
        resp = await self.blocking.list_tasks(ListTasksRequest(context_id=ctx))
        ids = [t.id for t in resp.tasks]
        check(self.long_task.id in ids, f'task {self.long_task.id} not in ListTasks(contextId) result {ids}')
        others = [t.id for t in resp.tasks if t.context_id != ctx]
        check(not others, f'contextId filter not applied: {others}')
        return {'count': len(ids), 'total_size': resp.total_size, 'page_size': resp.page_size}

    async def _consume_subscription(self):
        request = SubscribeToTaskRequest(id=self.long_task.id)
        try:
            async for ev in self.streaming.subscribe(request):
                self.sub_events.append(ev)
                self.sub_first.set()
        finally:
            self.sub_first.set()

    async def step_subscribe(self):
        check(self.long_task is not None, 'skipped: send_nonblocking produced no task')
        self.sub_task = asyncio.create_task(self._consume_subscription())
        await self.sub_first.wait()
        if not self.sub_events and self.sub_task.done():
            self.sub_task.result()  # raises the subscription error, if any
        check(bool(self.sub_events), 'subscription ended without any event')
        first = self.sub_events[0]
        check(event_kind(first) == 'task', f'first event is {event_summary(first)}, expected the Task')
        check(first.task.id == self.long_task.id, f'first event is task {first.task.id}, expected {self.long_task.id}')
        return {'first': event_summary(first)}

    async def step_cancel(self):
        check(self.long_task is not None, 'skipped: send_nonblocking produced no task')
        # Let the subscription see a few WORKING updates first.
        await asyncio.sleep(1.2)
        task = await self.blocking.cancel_task(CancelTaskRequest(id=self.long_task.id))
        state = state_name(task.status.state)
        check(task.id == self.long_task.id, f'cancel returned task {task.id}')
        check(task.status.state == TaskState.TASK_STATE_CANCELED, f'cancel returned state {state}, expected CANCELED')
        check(self.sub_task is not None, 'no subscription was started')
        try:
            await asyncio.wait_for(asyncio.shield(self.sub_task), 10)
        except asyncio.TimeoutError:
            self.sub_task.cancel()
            raise CheckFailed('subscribe stream did not close within 10 s after CancelTask') from None
        self.sub_task.result()  # re-raise a stream error, if any
        summary = [event_summary(e) for e in self.sub_events]
        check(len(self.sub_events) >= 2, f'subscribe stream had only {summary}')
        last = self.sub_events[-1]
        kind = event_kind(last)
        last_state = (
            last.status_update.status.state if kind == 'status_update'
            else last.task.status.state if kind == 'task' else None
        )
        check(last_state == TaskState.TASK_STATE_CANCELED, f'subscribe stream ended with {summary[-1]}, expected CANCELED')
        working = sum(1 for s in summary if s == 'status:TASK_STATE_WORKING')
        return {'state': state, 'subscribe_events': len(summary), 'working_updates': working, 'last': summary[-1]}

    async def step_stream(self):
        request = SendMessageRequest(message=user_message('hello stream'))
        events = [ev async for ev in self.streaming.send_message(request)]
        summary = [event_summary(e) for e in events]
        check(bool(events), 'stream produced no events')
        check(event_kind(events[0]) == 'task', f'first event {summary[0]}, expected a Task')
        arts = [e.artifact_update for e in events if event_kind(e) == 'artifact_update']
        check(len(arts) >= 1, f'no artifact update in {summary}')
        last = events[-1]
        check(
            event_kind(last) == 'status_update'
            and last.status_update.status.state == TaskState.TASK_STATE_COMPLETED,
            f'last event {summary[-1]}, expected status COMPLETED',
        )
        task_id = events[0].task.id
        check(all(a.task_id == task_id for a in arts), 'artifact update for another task id')
        text = ''.join(parts_text(a.artifact.parts) for a in arts)
        check('hello stream' in text, f'streamed artifact text {text!r} lacks the input')
        return {'events': summary, 'artifact_text': text}

    async def step_input_required(self):
        first = await self.send_blocking_text('/ask')
        check(event_kind(first) == 'task', f'expected a Task, got {event_kind(first)}')
        task = first.task
        check(
            task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f'/ask returned state {state_name(task.status.state)}, expected INPUT_REQUIRED',
        )
        question = parts_text(task.status.message.parts)
        second = await self.send_blocking_text('Ada', task_id=task.id, context_id=task.context_id)
        check(event_kind(second) == 'task', f'follow-up: expected a Task, got {event_kind(second)}')
        done = second.task
        check(done.id == task.id, f'follow-up returned task {done.id}, expected {task.id}')
        check(
            done.status.state == TaskState.TASK_STATE_COMPLETED,
            f'follow-up returned state {state_name(done.status.state)}, expected COMPLETED',
        )
        text = artifacts_text(done)
        check('Ada' in text, f'artifact text {text!r} lacks "Ada"')
        return {'task_id': task.id, 'question': question, 'artifact_text': text}

    async def step_get_unknown(self):
        missing = f'no-such-task-{uuid.uuid4()}'
        try:
            task = await self.blocking.get_task(GetTaskRequest(id=missing))
        except TaskNotFoundError as e:
            return {'error': type(e).__name__, 'message': e.message, 'data': e.data}
        raise CheckFailed(f'GetTask({missing}) returned a task: {task.id!r}')

    async def hinted(self, command: str, want: set, want_error: bool):
        """Streams a demo behaviour whose artifact parts carry AG-UI hints
        (`agui_*` metadata): the SDK must parse every frame as ordinary A2A,
        the hints must be plain part metadata, and GetTask must hold the same
        artifact text as the stream delivered."""
        request = SendMessageRequest(message=user_message(command))
        events = [ev async for ev in self.streaming.send_message(request)]
        check(len(events) > 0, 'no events')
        last = events[-1]
        kind = event_kind(last)
        state = last.task.status.state if kind == 'task' else last.status_update.status.state
        check(state == TaskState.TASK_STATE_COMPLETED, f'ended {state_name(state)}, expected COMPLETED')
        parts = [p for ev in events if event_kind(ev) == 'artifact_update' for p in ev.artifact_update.artifact.parts]
        check(len(parts) > 0, 'no artifact parts streamed')
        seen, errors = set(), 0
        for part in parts:
            meta = MessageToDict(part.metadata) if part.HasField('metadata') else {}
            check(any(k.startswith('agui_') for k in meta), f'part without agui_* hints: {meta}')
            seen.update(str(meta[k]) for k in ('agui_event_type', 'agui_block_type') if k in meta)
            errors += meta.get('agui_is_error') is True
        check(want <= seen, f'hints {sorted(seen)} lack {sorted(want - seen)}')
        check((errors > 0) == want_error, f'{errors} parts marked agui_is_error')
        task_id = last.task.id if kind == 'task' else last.status_update.task_id
        stored = await self.blocking.get_task(GetTaskRequest(id=task_id))
        check(artifacts_text(stored) == parts_text(parts), 'GetTask artifact text differs from the stream')
        return {'task_id': task_id, 'parts': len(parts), 'hints': sorted(seen), 'errors': errors}

    async def step_think(self):
        return await self.hinted('/think why is the sky blue', {'thinking', 'text', 'code'}, False)

    async def step_tool(self):
        return await self.hinted('/tool count these words', {'tool_call'}, True)

    async def run(self) -> int:
        await self.run_step('card', self.step_card)
        if self.card is None:
            for name in ('send_blocking', 'send_message_reply', 'send_nonblocking', 'get', 'list',
                         'subscribe', 'cancel', 'stream', 'input_required', 'get_unknown'):
                self.report(name, False, 'skipped: no agent card')
        else:
            await self.run_step('send_blocking', self.step_send_blocking)
            await self.run_step('send_message_reply', self.step_send_message_reply)
            await self.run_step('send_nonblocking', self.step_send_nonblocking)
            await self.run_step('get', self.step_get)
            await self.run_step('list', self.step_list)
            await self.run_step('subscribe', self.step_subscribe)
            await self.run_step('cancel', self.step_cancel)
            await self.run_step('stream', self.step_stream)
            await self.run_step('input_required', self.step_input_required)
            await self.run_step('get_unknown', self.step_get_unknown)
            if self.hinted_steps:
                await self.run_step('think', self.step_think)
                await self.run_step('tool', self.step_tool)
            if self.sub_task is not None and not self.sub_task.done():
                self.sub_task.cancel()
            for client in (self.blocking, self.streaming):
                try:
                    await client.close()
                except Exception:  # noqa: BLE001
                    pass
        print(f'interop: {self.passed} passed, {self.failed} failed', flush=True)
        return 0 if self.failed == 0 else 1


def main() -> int:
    args = sys.argv[1:]
    transport = 'JSONRPC'
    hinted = False
    while len(args) > 1 and args[0].startswith('--'):
        if args[0] == '--transport' and len(args) > 2:
            transport, args = args[1], args[2:]
        elif args[0] == '--agui-hints':
            hinted, args = True, args[1:]
        else:
            break
    if len(args) != 1:
        print('usage: drive.py [--transport JSONRPC|HTTP+JSON|GRPC] [--agui-hints] URL', file=sys.stderr)
        return 2
    return asyncio.run(Driver(args[0], transport, hinted).run())


if __name__ == '__main__':
    sys.exit(main())
