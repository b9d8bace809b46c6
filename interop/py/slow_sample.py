"""A remote agent on the official Python SDK (a2a-sdk 1.x) for tests of
switchboard's proxy runtime: one whose tasks take as long as the test wants,
ask for input, and can be canceled.

Messages (text):
  gate PATH   WORKING, an artifact chunk "before", then waits until the file
              PATH exists (at most 60 s), the chunk "after" (last), COMPLETED.
  ask         INPUT_REQUIRED "What is your name?"; the answer on the same task
              completes it with the artifact "hello <answer>".
  wait        WORKING, then waits until canceled (at most 60 s).
  anything    an artifact "echo: <text>", COMPLETED.

With --token T every JSON-RPC call must carry `Authorization: Bearer T`
(else HTTP 401); the card is public.

Usage: python slow_sample.py --port 9999 [--token T]
"""

import argparse
import asyncio
import os

import uvicorn
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.helpers import (
    get_message_text,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.types.a2a_pb2 import TaskState

LIMIT_S = 60.0


class SlowExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.canceled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        follow_up = task is not None
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        text = get_message_text(context.message).strip()
        if follow_up:
            await updater.add_artifact(parts=[new_text_part(text=f'hello {text}')], name='greeting')
            await updater.update_status(state=TaskState.TASK_STATE_COMPLETED)
            return
        if text.startswith('gate '):
            gate = text[len('gate '):].strip()
            await updater.update_status(
                state=TaskState.TASK_STATE_WORKING, message=new_text_message('waiting for the gate')
            )
            artifact_id = 'slow-output'
            await updater.add_artifact(
                parts=[new_text_part(text='before')], artifact_id=artifact_id, name='output',
                append=False, last_chunk=False,
            )
            waited = 0.0
            while not os.path.exists(gate) and waited < LIMIT_S:
                await asyncio.sleep(0.05)
                waited += 0.05
            await updater.add_artifact(
                parts=[new_text_part(text='after')], artifact_id=artifact_id, name='output',
                append=True, last_chunk=True,
            )
            await updater.update_status(state=TaskState.TASK_STATE_COMPLETED)
        elif text == 'ask':
            await updater.update_status(
                state=TaskState.TASK_STATE_INPUT_REQUIRED,
                message=new_text_message('What is your name?'),
            )
        elif text == 'wait':
            await updater.update_status(
                state=TaskState.TASK_STATE_WORKING, message=new_text_message('waiting')
            )
            waited = 0.0
            while task.id not in self.canceled and waited < LIMIT_S:
                await asyncio.sleep(0.05)
                waited += 0.05
        else:
            await updater.add_artifact(parts=[new_text_part(text=f'echo: {text}')], name='echo')
            await updater.update_status(state=TaskState.TASK_STATE_COMPLETED)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.canceled.add(context.task_id)
        updater = TaskUpdater(
            event_queue=event_queue, task_id=context.task_id, context_id=context.context_id
        )
        await updater.update_status(state=TaskState.TASK_STATE_CANCELED)


class BearerOnly(BaseHTTPMiddleware):
    def __init__(self, app, token: str) -> None:
        super().__init__(app)
        self.token = token

    async def dispatch(self, request, call_next):
        if request.url.path.startswith('/.well-known/'):
            return await call_next(request)
        if request.headers.get('authorization') != f'Bearer {self.token}':
            return JSONResponse({'error': 'unauthenticated'}, status_code=401)
        return await call_next(request)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, default=9999)
    parser.add_argument('--token', default=os.environ.get('SLOW_SAMPLE_TOKEN'))
    args = parser.parse_args()
    card = AgentCard(
        name='Slow Agent',
        description='Takes as long as you want',
        version='0.0.2',
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[
            AgentInterface(
                protocol_binding='JSONRPC',
                protocol_version='1.0',
                url=f'http://127.0.0.1:{args.port}',
            )
        ],
        skills=[
            AgentSkill(
                id='slow', name='Slow', description='Waits for a gate file', tags=['test'],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=SlowExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = []
    routes.extend(create_agent_card_routes(card))
    routes.extend(create_jsonrpc_routes(handler, '/'))
    app = Starlette(routes=routes)
    if args.token:
        app.add_middleware(BearerOnly, token=args.token)
    uvicorn.run(app, host='127.0.0.1', port=args.port, log_level='warning')


if __name__ == '__main__':
    main()
