"""Drives a switchboard server with the official A2A 0.3 Python SDK (a2a-sdk 0.3.x).

Usage: drive.py BASE_URL {jsonrpc|rest|grpc}

Reads the server's hybrid card with the SDK's card resolver, then runs send
(blocking and not), get, cancel, stream, resubscribe, the four push-config
operations and an error case over the chosen 0.3 transport. The SDK has no
list/delete push-config calls in 0.3, so those two steps go over the same
binding with httpx (JSON-RPC, REST) or the generated 0.3 stub (gRPC). Over
gRPC the transport is the SDK's GrpcTransport on the card's GRPC interface
(`a2a.v1.A2AService`), and the card step also fetches the card with the
GetAgentCard RPC. Prints one line per step and, last,
"interop: N passed, M failed".
"""

import asyncio
import sys
import traceback
import uuid

import httpx
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports import JsonRpcTransport, RestTransport
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

BASE = sys.argv[1].rstrip("/")
BINDING = sys.argv[2]
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


def msg(text):
    return Message(
        message_id=str(uuid.uuid4()), role=Role.user, parts=[TextPart(text=text)]
    )


def params(text, blocking=True):
    return MessageSendParams(
        message=msg(text), configuration=MessageSendConfiguration(blocking=blocking)
    )


async def raw_rpc(http, method, params):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = await http.post(f"{BASE}/", json=body)
    return r.json()


async def run():
    async with httpx.AsyncClient(timeout=30) as http:
        # 1. The hybrid card is a valid 0.3 card.
        card = await A2ACardResolver(http, BASE).get_agent_card()
        step(
            "card",
            card.url.rstrip("/") == BASE and card.protocol_version.startswith("0.3"),
            card,
        )
        stub = None
        if BINDING == "jsonrpc":
            t = JsonRpcTransport(http, url=f"{BASE}/")
        elif BINDING == "grpc":
            # Imported here: only the grpc extra has them.
            import grpc
            from a2a.client.transports import GrpcTransport
            from a2a.grpc import a2a_pb2, a2a_pb2_grpc

            target = next(
                (i.url for i in card.additional_interfaces or [] if i.transport == "GRPC"),
                None,
            )
            step("card has a GRPC interface", target is not None, card.additional_interfaces)
            channel = grpc.aio.insecure_channel(target)
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            # No card given: the transport fetches it with GetAgentCard.
            t = GrpcTransport(channel, None)
            got = await t.get_card()
            step(
                "card over grpc",
                got.name == card.name
                and got.protocol_version.startswith("0.3")
                and any(i.transport == "GRPC" for i in got.additional_interfaces or []),
                got,
            )
        else:
            t = RestTransport(http, url=BASE)
        # 2. Blocking send.
        r = await t.send_message(params("hello from 0.3"))
        step("send blocking", isinstance(r, Task) and r.status.state == TaskState.completed, r)
        done = r.id
        # 3. Non-blocking send.
        r = await t.send_message(params("/long 20", blocking=False))
        step(
            "send non-blocking",
            isinstance(r, Task) and r.status.state in (TaskState.submitted, TaskState.working),
            r,
        )
        long_id = r.id
        # 4. Get.
        g = await t.get_task(TaskQueryParams(id=done, history_length=1))
        step("get", g.id == done and len(g.history or []) == 1, g)
        # 5. Cancel.
        c = await t.cancel_task(TaskIdParams(id=long_id))
        step("cancel", c.status.state == TaskState.canceled, c)
        # 6. Stream: ends with a final completed status.
        events = [e async for e in t.send_message_streaming(params("stream from 0.3"))]
        last = events[-1]
        step(
            "stream",
            isinstance(events[0], Task)
            and isinstance(last, TaskStatusUpdateEvent)
            and last.final
            and last.status.state == TaskState.completed,
            events,
        )
        # 6b. The demo agent's AG-UI-hinted parts (issue 18) are ordinary 0.3
        # parts whose metadata carries the agui_* hints.
        events = [e async for e in t.send_message_streaming(params("/tool count these words"))]
        last = events[-1]
        hinted = [
            p.root for e in events if isinstance(e, TaskArtifactUpdateEvent) for p in e.artifact.parts
        ]
        step(
            "agui hints",
            isinstance(last, TaskStatusUpdateEvent) and last.final
            and last.status.state == TaskState.completed
            and len(hinted) > 0
            and all(any(k.startswith("agui_") for k in (p.metadata or {})) for p in hinted)
            and any((p.metadata or {}).get("agui_event_type") == "tool_call" for p in hinted)
            and sum((p.metadata or {}).get("agui_is_error") is True for p in hinted) == 1,
            events,
        )
        # 7. Resubscribe to a running task.
        r = await t.send_message(params("/long 1", blocking=False))
        events = [e async for e in t.resubscribe(TaskIdParams(id=r.id))]
        last = events[-1]
        step(
            "resubscribe",
            isinstance(last, TaskStatusUpdateEvent) and last.final
            and last.status.state == TaskState.completed,
            events,
        )
        # 8. Push config set.
        cfg = TaskPushNotificationConfig(
            task_id=done,
            push_notification_config=PushNotificationConfig(
                id="cfg-1", url="https://hooks.example.com/py03", token="tok"
            ),
        )
        s = await t.set_task_callback(cfg)
        step(
            "push set",
            s.task_id == done and s.push_notification_config.url == "https://hooks.example.com/py03",
            s,
        )
        cid = s.push_notification_config.id
        # 9. Push config get.
        g = await t.get_task_callback(
            GetTaskPushNotificationConfigParams(id=done, push_notification_config_id=cid)
        )
        step("push get", g.push_notification_config.id == cid, g)
        # 10/11. List and delete (no SDK call in 0.3: raw requests on the same binding).
        if BINDING == "grpc":
            lst = await stub.ListTaskPushNotificationConfig(
                a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{done}")
            )
            step(
                "push list",
                [c.name for c in lst.configs]
                == [f"tasks/{done}/pushNotificationConfigs/{cid}"],
                lst,
            )
            await stub.DeleteTaskPushNotificationConfig(
                a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                    name=f"tasks/{done}/pushNotificationConfigs/{cid}"
                )
            )
            lst = await stub.ListTaskPushNotificationConfig(
                a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{done}")
            )
            step("push delete", len(lst.configs) == 0, lst)
        elif BINDING == "jsonrpc":
            lst = await raw_rpc(http, "tasks/pushNotificationConfig/list", {"id": done})
            step("push list", len(lst.get("result", [])) == 1, lst)
            d = await raw_rpc(
                http,
                "tasks/pushNotificationConfig/delete",
                {"id": done, "pushNotificationConfigId": cid},
            )
            step("push delete", "error" not in d and d.get("result") is None, d)
        else:
            lst = (await http.get(f"{BASE}/v1/tasks/{done}/pushNotificationConfigs")).json()
            step("push list", len(lst.get("configs", [])) == 1, lst)
            d = await http.delete(f"{BASE}/v1/tasks/{done}/pushNotificationConfigs/{cid}")
            step("push delete", d.status_code == 200, d.text)
        # 12. An unknown task is an error, not a result.
        try:
            await t.get_task(TaskQueryParams(id="no-such-task"))
            step("unknown task", False, "no error")
        except Exception as e:  # the SDK raises its own error types
            text = str(e).lower()
            step(
                "unknown task",
                "not found" in text or "404" in text or "not_found" in text,
                repr(e),
            )
        if stub is not None:
            await t.close()


try:
    asyncio.run(run())
except Exception:
    traceback.print_exc()
    failed += 1
print(f"interop: {passed} passed, {failed} failed")
