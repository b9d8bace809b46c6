// Drives `switchboard mcp` with the official MCP TypeScript SDK
// (npm `@modelcontextprotocol/sdk`).
//
//   node drive.mjs SUITE (--url URL | --stdio CMD [ARG ...])
//
// SUITE is `demo` (in front of `switchboard serve --agent demo`) or `sample`
// (in front of the official Python A2A sample); the steps are those of
// drive.py. Prints one line per step and `interop: N passed, 0 failed` last.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

let passed = 0;
let failed = 0;

function step(name, ok, detail) {
  if (ok) {
    passed += 1;
    console.log(`ok ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${JSON.stringify(detail)}`);
  }
}

const textOf = (result) =>
  result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

const [suite, how, ...rest] = process.argv.slice(2);

function transport() {
  if (how === "--url") return new StreamableHTTPClientTransport(new URL(rest[0]));
  if (how === "--stdio") return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
  throw new Error(`usage: drive.mjs SUITE (--url URL | --stdio CMD ...), got ${how}`);
}

async function connect(elicits) {
  const client = new Client(
    { name: "switchboard-interop", version: "1.0.0" },
    { capabilities: elicits ? { elicitation: {} } : {} },
  );
  if (elicits) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      // /approve asks with its own form: approve it.
      if (request.params.message.includes("approve")) {
        if (request.params.requestedSchema.properties.approved?.type !== "boolean") {
          throw new Error(JSON.stringify(request.params.requestedSchema));
        }
        return { action: "accept", content: { approved: true, comment: "looks good" } };
      }
      if (!request.params.message.includes("name")) throw new Error(request.params.message);
      return { action: "accept", content: { answer: "Ada" } };
    });
  }
  await client.connect(transport());
  return client;
}

async function demo() {
  let client = await connect(true);
  const info = client.getServerVersion();
  step("server is the card", info?.name === "switchboard demo", info);
  const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
  step("tools are the skills", ["analyse", "agui", "lifecycle"].every((n) => n in tools), Object.keys(tools));
  step("input schema", JSON.stringify(tools.analyse.inputSchema.required) === '["message"]', tools.analyse.inputSchema);

  let result = await client.callTool({ name: "analyse", arguments: { message: "hello world" } });
  step("call", !result.isError && textOf(result).includes("dlrow olleh"), textOf(result));

  const seen = [];
  result = await client.callTool({ name: "lifecycle", arguments: { message: "/steps 5" } }, undefined, {
    onprogress: (p) => seen.push(p),
  });
  const counts = seen.map((p) => p.progress);
  step(
    "progress",
    seen.length >= 5 &&
      counts.every((c, i) => i === 0 || c > counts[i - 1]) &&
      seen.some((p) => (p.message ?? "").includes("step 5 of 5")) &&
      textOf(result).includes("finished 5 steps"),
    { seen, text: textOf(result) },
  );

  result = await client.callTool({ name: "lifecycle", arguments: { message: "/ask" } });
  step("elicitation answered", !result.isError && textOf(result).includes("Hello, Ada"), textOf(result));
  result = await client.callTool({ name: "lifecycle", arguments: { message: "/approve the deploy" } });
  step(
    "form elicitation answered",
    !result.isError && textOf(result).includes("approved: the deploy (looks good)"),
    textOf(result),
  );

  // Cancel a long task once it is under way.
  const abort = new AbortController();
  let progressed = 0;
  const long = client
    .callTool({ name: "lifecycle", arguments: { message: "/long 30" } }, undefined, {
      signal: abort.signal,
      onprogress: () => {
        progressed += 1;
        abort.abort("enough");
      },
    })
    .then(
      () => "finished",
      (e) => `rejected: ${e}`,
    );
  const outcome = await long;
  step("cancel", progressed >= 1 && outcome.startsWith("rejected"), { progressed, outcome });
  console.log(`canceled-after: ${progressed}`);

  result = await client.callTool({ name: "lifecycle", arguments: { message: "/fail disk on fire" } });
  step("failed task", result.isError && textOf(result).includes("disk on fire"), textOf(result));
  result = await client.callTool({ name: "lifecycle", arguments: { message: "/reject" } });
  step("rejected task", result.isError && textOf(result).includes("rejected"), textOf(result));
  result = await client.callTool({ name: "lifecycle", arguments: { message: "/auth" } });
  step("auth required", result.isError && textOf(result).includes("authentication"), textOf(result));
  try {
    await client.callTool({ name: "no_such_tool", arguments: { message: "x" } });
    step("unknown tool", false, "no error");
  } catch (e) {
    step("unknown tool", String(e).includes("no_such_tool"), String(e));
  }
  await client.close();

  // A host without elicitation: the result tells the question and how to answer.
  client = await connect(false);
  result = await client.callTool({ name: "lifecycle", arguments: { message: "/ask" } });
  const taskId = result.structuredContent?.taskId;
  step("question told", !result.isError && taskId && textOf(result).includes(taskId), textOf(result));
  result = await client.callTool({ name: "lifecycle", arguments: { message: "Bob", task_id: taskId } });
  step("answered by task_id", textOf(result).includes("Hello, Bob"), textOf(result));
  result = await client.callTool({ name: "lifecycle", arguments: { message: "x", task_id: "not-a-task" } });
  step("unknown task", result.isError, textOf(result));
  await client.close();
}

async function sample() {
  const client = await connect(false);
  const tools = (await client.listTools()).tools;
  step("tools", tools.length >= 1, tools);
  const result = await client.callTool({ name: tools[0].name, arguments: { message: "hi" } });
  step("call", !result.isError && textOf(result).includes("Hello"), textOf(result));
  await client.close();
}

await ({ demo, sample }[suite] ?? (() => Promise.reject(new Error(`unknown suite ${suite}`))))();
console.log(`interop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
