"""The official A2A samples' helloworld agent, as the a2a-sdk 1.3 line publishes it.

The published sample (a2a-samples `samples/python/agents/helloworld`) is a
JSON-RPC agent on the official Python SDK whose card differs from what the
A2A 1.0 spec requires in one way that matters to clients: its one
`supportedInterfaces` entry names `protocolBinding` and `url` but no
`protocolVersion` (the SDK only warns about it). It also declares an
extended card. This server keeps that card shape and the sample's
behaviour (a task: WORKING "Processing request...", an artifact
"Hello, World! I have received your request (<text>)", COMPLETED "Request is
completed!"), with the port as an argument instead of the sample's fixed
9999, so tests can check that our client, CLI and bridge accept such an
agent as published.

Usage: python helloworld_sample.py --port 9999
"""

import argparse

import uvicorn
from starlette.applications import Starlette

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


class HelloWorldExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(
            event_queue=event_queue, task_id=task.id, context_id=task.context_id
        )
        await updater.update_status(
            state=TaskState.TASK_STATE_WORKING,
            message=new_text_message('Processing request...'),
        )
        text = get_message_text(context.message)
        reply = (
            f'Hello, World! I have received your request ({text})'
            if text
            else 'No text input is provided!'
        )
        await updater.add_artifact(parts=[new_text_part(text=reply, media_type='text/plain')])
        await updater.update_status(
            state=TaskState.TASK_STATE_COMPLETED,
            message=new_text_message('Request is completed!'),
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError('Cancel is not supported.')


def card(port: int, name: str, skills: list) -> AgentCard:
    return AgentCard(
        name=name,
        description='Just a hello world agent',
        version='0.0.1',
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        capabilities=AgentCapabilities(streaming=True, extended_agent_card=True),
        # As published: no protocol_version on the interface.
        supported_interfaces=[
            AgentInterface(protocol_binding='JSONRPC', url=f'http://127.0.0.1:{port}')
        ],
        skills=skills,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, default=9999)
    port = parser.parse_args().port
    skill = AgentSkill(
        id='echo_bot',
        name='Echo Bot',
        description='Acknowledges the request with a "Hello World" message.',
        input_modes=['text/plain'],
        output_modes=['text/plain'],
        tags=['a2a', 'echo-example'],
        examples=['hi', 'how are you'],
    )
    extended = AgentSkill(
        id='echo_bot_super_mode',
        name='Echo Bot (Super Mode)',
        description='The same, with extra enthusiasm.',
        tags=['a2a', 'echo-example', 'extended'],
        examples=['super hi'],
    )
    public_card = card(port, 'Hello World Agent', [skill])
    handler = DefaultRequestHandler(
        agent_executor=HelloWorldExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=public_card,
        extended_agent_card=card(port, 'Hello World Agent - Extended Edition', [skill, extended]),
    )
    routes = []
    routes.extend(create_agent_card_routes(public_card))
    routes.extend(create_jsonrpc_routes(handler, '/'))
    uvicorn.run(Starlette(routes=routes), host='127.0.0.1', port=port, log_level='warning')


if __name__ == '__main__':
    main()
