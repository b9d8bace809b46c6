"""Sample A2A 1.0 agent on the official Python SDK (a2a-sdk 1.3.0).

Same layout as shared/peers-bench/py/server.py (AgentExecutor +
DefaultRequestHandler + InMemoryTaskStore, agent card route + JSON-RPC route
at "/", uvicorn on 127.0.0.1), with an agent that implements the
"demo-agent contract" used by interop/py/drive.py and interop/js/drive.mjs:

  ordinary text  -> Task: SUBMITTED, WORKING, artifact "echo: <text>" sent as
                    two chunks (append), COMPLETED
  /long S        -> Task that stays WORKING, with a status update every 0.5 s,
                    for S seconds (then artifact + COMPLETED) unless cancelled
  /message X     -> a direct agent Message "X" (no task)
  /ask           -> Task in INPUT_REQUIRED; the follow-up message on the same
                    taskId/contextId completes it with artifact "Hello, <answer>!"

Usage: python sample_server.py --port 9999 [--grpc-port 9998]

The same handler also serves the HTTP+JSON (REST) binding under /rest (the
card lists it after JSON-RPC). With --grpc-port the same handler is also served over gRPC (the SDK's
GrpcHandler on a grpc.aio server, insecure, 127.0.0.1) and the card lists a
GRPC interface `127.0.0.1:<grpc-port>` after the JSON-RPC one.
"""

import argparse
import asyncio
import logging

import uvicorn
from starlette.applications import Starlette

from a2a.helpers import get_message_text, new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.types.a2a_pb2 import TaskState

TICK_S = 0.5
# The HTTP+JSON (REST) binding's routes, beside JSON-RPC at '/'.
REST_PREFIX = '/rest'
log = logging.getLogger('sample_server')


def text_part(text: str):
    return new_text_part(text, media_type='text/plain')


class DemoAgentExecutor(AgentExecutor):
    def __init__(self) -> None:
        # task id -> asyncio.Event set once CancelTask reached the executor.
        self._cancelled: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        text = get_message_text(message).strip() if message else ''
        task = context.current_task

        if task is None and text.startswith('/message'):
            reply = text[len('/message'):].strip()
            await event_queue.enqueue_event(
                new_text_message(reply, media_type='text/plain', context_id=context.context_id)
            )
            return

        if task is None:
            task = new_task(
                context.task_id,
                context.context_id,
                TaskState.TASK_STATE_SUBMITTED,
                history=[message] if message else [],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        cancelled = self._cancelled.setdefault(task.id, asyncio.Event())

        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            # Follow-up to /ask: the user's text is the answer.
            await updater.start_work()
            await updater.add_artifact([text_part(f'Hello, {text}!')], name='answer')
            await updater.complete()
            return

        if text == '/ask':
            await updater.requires_input(
                updater.new_agent_message([text_part('What is your name?')])
            )
            return

        if text.startswith('/long'):
            arg = text[len('/long'):].strip()
            seconds = float(arg) if arg else 30.0
            await updater.start_work(updater.new_agent_message([text_part('long task started')]))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + seconds
            tick = 0
            while loop.time() < deadline:
                try:
                    await asyncio.wait_for(cancelled.wait(), TICK_S)
                except asyncio.TimeoutError:
                    pass
                if cancelled.is_set():
                    return  # cancel() already published CANCELED
                tick += 1
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    updater.new_agent_message([text_part(f'tick {tick}')]),
                )
            await updater.add_artifact([text_part(f'long task finished after {tick} ticks')], name='long')
            await updater.complete()
            return

        # Ordinary text: working, artifact in two chunks, completed.
        await updater.start_work(updater.new_agent_message([text_part('working')]))
        artifact_id = f'{task.id}-echo'
        await updater.add_artifact(
            [text_part('echo: ')], artifact_id=artifact_id, name='echo', append=False, last_chunk=False
        )
        await asyncio.sleep(0.05)
        await updater.add_artifact(
            [text_part(text)], artifact_id=artifact_id, name='echo', append=True, last_chunk=True
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id
        self._cancelled.setdefault(task_id, asyncio.Event()).set()
        updater = TaskUpdater(event_queue, task_id, context.context_id)
        await updater.cancel(updater.new_agent_message([text_part('canceled by request')]))


def build_app(port: int, grpc_port: int | None = None):
    card = AgentCard(
        name='Switchboard Interop Sample (python)',
        description='Demo-agent contract on a2a-sdk 1.3.0: echo, /long S, /message X, /ask',
        version='0.1.0',
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        supported_interfaces=[
            AgentInterface(
                url=f'http://127.0.0.1:{port}/',
                protocol_binding='JSONRPC',
                protocol_version='1.0',
            ),
            AgentInterface(
                url=f'http://127.0.0.1:{port}{REST_PREFIX}',
                protocol_binding='HTTP+JSON',
                protocol_version='1.0',
            ),
        ]
        + (
            [
                AgentInterface(
                    url=f'127.0.0.1:{grpc_port}',
                    protocol_binding='GRPC',
                    protocol_version='1.0',
                )
            ]
            if grpc_port
            else []
        ),
        skills=[
            AgentSkill(
                id='demo',
                name='Demo',
                description='Echo text as an artifact; /long S; /message X; /ask',
                tags=['demo', 'echo'],
                examples=['hello', '/long 5', '/message hi', '/ask'],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=DemoAgentExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = []
    routes.extend(create_agent_card_routes(card))
    routes.extend(create_jsonrpc_routes(handler, '/'))
    routes.extend(create_rest_routes(handler, path_prefix=REST_PREFIX))
    return Starlette(routes=routes), handler


async def serve(port: int, grpc_port: int | None) -> None:
    app, handler = build_app(port, grpc_port)
    grpc_server = None
    if grpc_port:
        import grpc

        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        grpc_server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
        grpc_server.add_insecure_port(f'127.0.0.1:{grpc_port}')
        await grpc_server.start()
    config = uvicorn.Config(
        app, host='127.0.0.1', port=port, log_level='warning', access_log=False
    )
    try:
        await uvicorn.Server(config).serve()
    finally:
        if grpc_server is not None:
            await grpc_server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=9999)
    parser.add_argument('--grpc-port', type=int, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f'python sample agent on http://127.0.0.1:{args.port}/', flush=True)
    asyncio.run(serve(args.port, args.grpc_port))


if __name__ == '__main__':
    main()
