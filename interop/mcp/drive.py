"""Drives `switchboard mcp` with the official MCP Python SDK (PyPI `mcp`).

    drive.py SUITE (--url URL | --stdio CMD [ARG ...]) [--mode legacy|auto]

SUITE:
  demo      in front of `switchboard serve --agent demo`: list tools, call one,
            progress for `/steps 5`, an elicitation answered for `/ask` (and a
            form one for `/approve`), the
            question told (and answered by `task_id`) to a client without
            elicitation, `/long 30` canceled, errors for `/fail`, `/reject`,
            `/auth` and an unknown tool
  sample    in front of the official Python A2A sample: list tools, call one
  gone      the agent stopped after the front started: a call is a tool error
            naming the unreachable agent, quickly
  dead      the front cannot start (agent unreachable): connecting fails, quickly

--mode legacy is the initialize handshake (2025-11-25: elicitation/create);
auto lets the SDK pick (2026-07-28: input-required results).

Prints one line per step and `interop: N passed, 0 failed` last; on the
cancel step it prints `canceled-after: <progress count>`.
"""

import argparse
import sys

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

PASSED = 0
FAILED = 0


def step(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print(f"ok {name}")
    else:
        FAILED += 1
        print(f"FAIL {name}: {detail}")
    sys.stdout.flush()


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def server_of(args):
    if args.url:
        return args.url
    return StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])


async def answer_ada(_context, params):
    # /approve asks with its own form: approve it.
    if "approve" in params.message:
        schema = params.requested_schema
        assert schema["properties"]["approved"]["type"] == "boolean", schema
        return types.ElicitResult(action="accept", content={"approved": True, "comment": "looks good"})
    assert "name" in params.message, params.message
    return types.ElicitResult(action="accept", content={"answer": "Ada"})


async def demo(args):
    async with Client(server_of(args), mode=args.mode, elicitation_callback=answer_ada) as client:
        info = client.server_info
        step("server is the card", info is not None and info.name == "switchboard demo", info)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        step("tools are the skills", {"analyse", "agui", "lifecycle"} <= set(tools), sorted(tools))
        schema = tools["analyse"].input_schema
        step("input schema", schema.get("required") == ["message"], schema)

        result = await client.call_tool("analyse", {"message": "hello world"})
        step("call", not result.is_error and "dlrow olleh" in text_of(result), text_of(result))

        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, message))

        result = await client.call_tool("lifecycle", {"message": "/steps 5"}, progress_callback=on_progress)
        counts = [p for p, _ in seen]
        step(
            "progress",
            len(seen) >= 5
            and counts == sorted(set(counts))
            and any("step 5 of 5" in (m or "") for _, m in seen)
            and "finished 5 steps" in text_of(result),
            (seen, text_of(result)),
        )

        result = await client.call_tool("lifecycle", {"message": "/ask"})
        step("elicitation answered", not result.is_error and "Hello, Ada" in text_of(result), text_of(result))
        result = await client.call_tool("lifecycle", {"message": "/approve the deploy"})
        step(
            "form elicitation answered",
            not result.is_error and "approved: the deploy (looks good)" in text_of(result),
            text_of(result),
        )

        # Cancel a long task once it is under way.
        progressed = anyio.Event()
        count = []

        async def on_long(progress, total, message):
            count.append(progress)
            progressed.set()

        async with anyio.create_task_group() as group:

            async def long_call():
                await client.call_tool("lifecycle", {"message": "/long 30"}, progress_callback=on_long)

            group.start_soon(long_call)
            with anyio.fail_after(20):
                await progressed.wait()
            group.cancel_scope.cancel()
        step("cancel", len(count) >= 1, count)
        print(f"canceled-after: {len(count)}")

        result = await client.call_tool("lifecycle", {"message": "/fail disk on fire"})
        step("failed task", result.is_error and "disk on fire" in text_of(result), text_of(result))
        result = await client.call_tool("lifecycle", {"message": "/reject"})
        step("rejected task", result.is_error and "rejected" in text_of(result), text_of(result))
        result = await client.call_tool("lifecycle", {"message": "/auth"})
        step("auth required", result.is_error and "authentication" in text_of(result), text_of(result))
        try:
            await client.call_tool("no_such_tool", {"message": "x"})
            step("unknown tool", False, "no error")
        except MCPError as e:
            step("unknown tool", "no_such_tool" in str(e), e)

    # A host without elicitation: the result tells the question and how to answer.
    async with Client(server_of(args), mode=args.mode) as client:
        result = await client.call_tool("lifecycle", {"message": "/ask"})
        task_id = (result.structured_content or {}).get("taskId")
        step("question told", not result.is_error and task_id and task_id in text_of(result), text_of(result))
        result = await client.call_tool("lifecycle", {"message": "Bob", "task_id": task_id})
        step("answered by task_id", "Hello, Bob" in text_of(result), text_of(result))
        result = await client.call_tool("lifecycle", {"message": "x", "task_id": "not-a-task"})
        step("unknown task", result.is_error, text_of(result))


async def sample(args):
    async with Client(server_of(args), mode=args.mode) as client:
        tools = (await client.list_tools()).tools
        step("tools", len(tools) >= 1, tools)
        result = await client.call_tool(tools[0].name, {"message": "hi"})
        step("call", not result.is_error and "Hello" in text_of(result), text_of(result))


async def gone(args):
    async with Client(server_of(args), mode=args.mode) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("analyse", {"message": "anyone?"})
        step("unreachable agent", result.is_error and "cannot reach" in text_of(result), text_of(result))


async def dead(args):
    try:
        with anyio.fail_after(30):
            async with Client(server_of(args), mode=args.mode) as client:
                await client.list_tools()
        step("no server", False, "connected")
    except TimeoutError as e:
        step("no server", False, f"hung: {e!r}")
    except Exception as e:  # noqa: BLE001 - any error is the point, a hang is not
        step("no server", True)
        print(f"error: {e!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("suite", choices=["demo", "sample", "gone", "dead"])
    parser.add_argument("--url")
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    anyio.run({"demo": demo, "sample": sample, "gone": gone, "dead": dead}[args.suite], args)
    print(f"interop: {PASSED} passed, {FAILED} failed")
    sys.exit(0 if FAILED == 0 else 1)


if __name__ == "__main__":
    main()
