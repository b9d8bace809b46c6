"""Push notifications for a 0.3 client (a2a-sdk 0.3.x).

Usage: push_check.py BASE_URL {jsonrpc|rest}

The agent must be a switchboard server with push enabled and 127.0.0.1
allowed as a webhook host (`serve --push-allow-host 127.0.0.1`). This script
runs a webhook receiver on 127.0.0.1, starts a task with the demo agent over
the chosen 0.3 transport, registers the receiver with the SDK's own
`set_task_callback`, and checks what arrives: every notification parses as
the SDK's 0.3 `Task` (pydantic, `kind: "task"`), is about our task, carries
the token header and a signature JWT whose `kid` is in the server's JWKS,
and the series ends with the task completed. A 0.3 agent (a2a-python 0.3)
sends exactly this: the task as JSON, per update.

Prints one line per step and, last, "interop: N passed, M failed".
"""

import asyncio
import base64
import http.server
import json
import sys
import threading
import traceback
import uuid

import httpx
from a2a.client.transports import JsonRpcTransport, RestTransport
from a2a.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TextPart,
)

BASE = sys.argv[1].rstrip("/")
BINDING = sys.argv[2]
TOKEN = "py03-token-" + uuid.uuid4().hex
passed = 0
failed = 0


class Hook(http.server.BaseHTTPRequestHandler):
    received: list = []
    lock = threading.Lock()

    def do_POST(self):  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with Hook.lock:
            Hook.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):  # keep stdout for the step lines
        pass


def step(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def b64url_json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


async def run(hook_url):
    async with httpx.AsyncClient(timeout=30) as http:
        if BINDING == "jsonrpc":
            t = JsonRpcTransport(http, url=f"{BASE}/")
        else:
            t = RestTransport(http, url=BASE)
        # 1. A task that runs for a moment.
        r = await t.send_message(
            MessageSendParams(
                message=Message(
                    message_id=str(uuid.uuid4()), role=Role.user, parts=[TextPart(text="/long 3")]
                ),
                configuration=MessageSendConfiguration(blocking=False),
            )
        )
        step("start task", isinstance(r, Task), r)
        task_id = r.id
        # 2. The SDK's own push-config call.
        s = await t.set_task_callback(
            TaskPushNotificationConfig(
                task_id=task_id,
                push_notification_config=PushNotificationConfig(
                    id="py03-hook", url=hook_url, token=TOKEN
                ),
            )
        )
        step("set push config", s.push_notification_config.url == hook_url, s)
        # 3. Deliveries until the task is completed, each a 0.3 Task.
        tasks = []
        deadline = asyncio.get_running_loop().time() + 20
        while asyncio.get_running_loop().time() < deadline:
            with Hook.lock:
                got = list(Hook.received)
            tasks = [Task.model_validate_json(body) for _h, body in got]
            if tasks and tasks[-1].status.state == TaskState.completed:
                break
            await asyncio.sleep(0.1)
        step(
            "deliveries are 0.3 Tasks",
            tasks
            and all(x.kind == "task" and x.id == task_id for x in tasks)
            and all(json.loads(b).get("kind") == "task" for _h, b in got),
            [x.status.state for x in tasks],
        )
        step(
            "last is completed",
            tasks and tasks[-1].status.state == TaskState.completed and tasks[-1].artifacts,
            tasks[-1] if tasks else None,
        )
        # 4. Headers and signature as for 1.0.
        headers = got[0][0] if got else {}
        jwt = headers.get("x-a2a-notification-signature", "").split(".")
        jwks = (await http.get(f"{BASE}/.well-known/jwks.json")).json()
        kids = [k.get("kid") for k in jwks.get("keys", [])]
        step(
            "token and signature",
            headers.get("x-a2a-notification-token") == TOKEN
            and len(jwt) == 3
            and b64url_json(jwt[0]).get("kid") in kids
            and b64url_json(jwt[1]).get("task_id") == task_id,
            headers,
        )


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
threading.Thread(target=server.serve_forever, daemon=True).start()
try:
    asyncio.run(run(f"http://127.0.0.1:{server.server_address[1]}/hook"))
except Exception:
    traceback.print_exc()
    failed += 1
server.shutdown()
print(f"interop: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
