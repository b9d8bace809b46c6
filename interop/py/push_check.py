"""Push notifications with the official Python client (a2a-sdk 1.3.0).

Usage: python push_check.py URL     (agent card at URL/.well-known/agent-card.json)

The agent must be a switchboard server with push enabled and 127.0.0.1
allowed as a webhook host (`serve --push-allow-host 127.0.0.1`). This script
runs a webhook receiver on 127.0.0.1, starts a task with the demo agent,
registers the receiver with the client's own push-config method, and checks
that our deliveries reach it: the updates that follow arrive up to the
task's completion, with the token header, the a2a+json content type and a
signature JWT whose `kid` is in the server's JWKS. It also exercises the
client's get/list/delete push-config methods.

Prints one JSON line per step {"step", "ok", "detail"} and a final line
"interop: N passed, M failed". Exit code 0 only if every step passed.
"""

import asyncio
import base64
import http.server
import json
import sys
import threading
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

STEP_TIMEOUT_S = 20.0
TOKEN = 'interop-token-' + uuid.uuid4().hex


class Hook(http.server.BaseHTTPRequestHandler):
    received: list = []
    lock = threading.Lock()

    def do_POST(self):  # noqa: N802 - http.server's naming
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        with Hook.lock:
            Hook.received.append((dict(self.headers.items()), body))
        self.send_response(200)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):  # keep stdout for the step lines
        pass


def b64url_json(part: str):
    return json.loads(base64.urlsafe_b64decode(part + '=' * (-len(part) % 4)))


class CheckFailed(Exception):
    pass


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


class Driver:
    def __init__(self, url: str, hook_url: str) -> None:
        self.url = url.rstrip('/')
        self.hook_url = hook_url
        self.passed = 0
        self.failed = 0
        self.client = None
        self.task = None
        self.config = None

    def report(self, step: str, ok: bool, detail) -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(json.dumps({'step': step, 'ok': ok, 'detail': detail}), flush=True)

    async def run_step(self, name: str, fn) -> None:
        try:
            self.report(name, True, await asyncio.wait_for(fn(), STEP_TIMEOUT_S))
        except CheckFailed as e:
            self.report(name, False, str(e))
        except asyncio.TimeoutError:
            self.report(name, False, f'timed out after {STEP_TIMEOUT_S:.0f}s')
        except Exception as e:  # noqa: BLE001 - report any SDK/transport error
            self.report(name, False, f'{type(e).__name__}: {e}')

    async def step_card(self):
        async with httpx.AsyncClient(timeout=STEP_TIMEOUT_S) as http:
            card = await A2ACardResolver(http, self.url).get_agent_card()
        check(card.capabilities.push_notifications, 'card does not announce pushNotifications')
        self.client = ClientFactory(ClientConfig(streaming=False)).create(card)
        return {'push_notifications': card.capabilities.push_notifications}

    async def step_start_task(self):
        request = SendMessageRequest(
            message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text='/long 3')]),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        results = [r async for r in self.client.send_message(request)]
        check(len(results) == 1 and results[0].HasField('task'), f'expected a Task, got {results}')
        self.task = results[0].task
        return {'task_id': self.task.id}

    async def step_create_config(self):
        check(self.task is not None, 'skipped: no task')
        cfg = await self.client.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=self.task.id,
                url=self.hook_url,
                token=TOKEN,
                authentication=AuthenticationInfo(scheme='Bearer', credentials='interop-cred'),
            )
        )
        check(bool(cfg.id), 'the server assigned no config id')
        check(cfg.task_id == self.task.id, f'config task id {cfg.task_id!r}')
        check(cfg.url == self.hook_url, f'config url {cfg.url!r}')
        self.config = cfg
        return {'id': cfg.id}

    async def step_get_list_delete(self):
        check(self.config is not None, 'skipped: no config')
        got = await self.client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=self.task.id, id=self.config.id)
        )
        check(got.url == self.hook_url and got.token == TOKEN, f'get returned {got}')
        extra = await self.client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=self.task.id, id='extra', url=self.hook_url + '?extra')
        )
        listed = await self.client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=self.task.id)
        )
        ids = [c.id for c in listed.configs]
        check(ids == [self.config.id, 'extra'], f'list returned {ids}')
        await self.client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=self.task.id, id=extra.id)
        )
        listed = await self.client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=self.task.id)
        )
        ids = [c.id for c in listed.configs]
        check(ids == [self.config.id], f'after delete, list returned {ids}')
        return {'listed': ids}

    async def step_delivery(self):
        check(self.config is not None, 'skipped: no config')
        while True:
            with Hook.lock:
                got = list(Hook.received)
            states = []
            for _headers, body in got:
                event = json.loads(body)
                update = event.get('statusUpdate')
                if update:
                    states.append(update['status']['state'])
            if 'TASK_STATE_COMPLETED' in states:
                break
            await asyncio.sleep(0.1)
        headers, body = got[0]
        lower = {k.lower(): v for k, v in headers.items()}
        check(lower.get('x-a2a-notification-token') == TOKEN, f'token header {lower.get("x-a2a-notification-token")!r}')
        check(lower.get('authorization') == 'Bearer interop-cred', f'authorization {lower.get("authorization")!r}')
        check(lower.get('content-type', '').startswith('application/a2a+json'), f'content type {lower.get("content-type")!r}')
        jwt = lower.get('x-a2a-notification-signature', '')
        parts = jwt.split('.')
        check(len(parts) == 3, 'no signature JWT')
        header, claims = b64url_json(parts[0]), b64url_json(parts[1])
        check(header.get('alg') == 'ES256', f'alg {header.get("alg")!r}')
        check(claims.get('task_id') == self.task.id, f'task_id claim {claims.get("task_id")!r}')
        check(claims.get('aud') == self.hook_url, f'aud claim {claims.get("aud")!r}')
        async with httpx.AsyncClient(timeout=STEP_TIMEOUT_S) as http:
            jwks = (await http.get(self.url + '/.well-known/jwks.json')).json()
        kids = [k.get('kid') for k in jwks.get('keys', [])]
        check(header.get('kid') in kids, f'kid {header.get("kid")!r} not in the JWKS {kids}')
        task_ids = {json.loads(b).get('statusUpdate', {}).get('taskId') for _h, b in got} - {None}
        check(task_ids == {self.task.id}, f'notifications for {task_ids}')
        return {'notifications': len(got), 'last_state': 'TASK_STATE_COMPLETED', 'kid': header.get('kid')}


async def main(url: str) -> int:
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook_url = f'http://127.0.0.1:{server.server_address[1]}/hook'
    d = Driver(url, hook_url)
    await d.run_step('card', d.step_card)
    await d.run_step('start_task', d.step_start_task)
    await d.run_step('create_push_config', d.step_create_config)
    await d.run_step('get_list_delete_push_config', d.step_get_list_delete)
    await d.run_step('delivery', d.step_delivery)
    server.shutdown()
    print(f'interop: {d.passed} passed, {d.failed} failed', flush=True)
    return 0 if d.failed == 0 else 1


if __name__ == '__main__':
    sys.exit(asyncio.run(main(sys.argv[1])))
