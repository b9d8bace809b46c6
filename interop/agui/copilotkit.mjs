// Drives CopilotKit's runtime routes of switchboard (`switchboard bridge`'s
// /api/copilotkit, `serve`'s too) with CopilotKit's own client,
// @copilotkit/core's CopilotKitCore: it reads /info, makes its
// ProxiedCopilotRuntimeAgent per agent and runs, connects and stops them as
// a CopilotKit app does (no browser, no CopilotKit runtime in between).
//
//   node copilotkit.mjs RUNTIME_URL AGENT_ID TRANSPORT
//
// TRANSPORT is "auto" (the client's default: it probes GET /info, so the
// multi-route mode) or "single" (the one-route envelope mode). Prints one
// JSON report on stdout; crates/switchboard/tests/copilotkit_node.rs asserts
// on it:
//   info     what the client made of /info: its connection status, the agent
//            ids and the description of AGENT_ID, the transport it settled on.
//   run      two runs on a new thread (plain messages): the agent's messages.
//   connect  a second page (a fresh CopilotKitCore) connecting to the same
//            thread, as after a reload: the messages it got back.
//   stop     a long task on another thread, stopped from the UI
//            (copilotkit.stopAgent) after its first text: the answer of the
//            stop route, and the thread as a later connect shows it.
import { CopilotKitCore } from "@copilotkit/core";

// CopilotKitCore reads the runtime only in a browser (it skips the fetch
// while a page renders on a server): a bare `window` is all it looks for.
globalThis.window ??= {};

const [runtimeUrl, agentId, transport = "auto"] = process.argv.slice(2);
if (!runtimeUrl || !agentId) {
  console.error("usage: node copilotkit.mjs RUNTIME_URL AGENT_ID [auto|single]");
  process.exit(2);
}

// The stop request is the client's fire-and-forget fetch: record its answer.
const stops = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const response = await realFetch(input, init);
  const url = typeof input === "string" ? input : input.url ?? String(input);
  const body = typeof init?.body === "string" ? init.body : "";
  if (url.includes("/stop/") || body.includes('"agent/stop"')) {
    stops.push({ status: response.status, body: await response.clone().json() });
  }
  return response;
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it returns a value, for at most `ms`. */
async function until(what, check, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A page: a CopilotKitCore on the runtime, once it has read /info. */
async function page() {
  const core = new CopilotKitCore({ runtimeUrl, runtimeTransport: transport });
  await until("the runtime info", () =>
    core.runtimeConnectionStatus === "connected" || core.runtimeConnectionStatus === "error"
      ? true
      : undefined,
  );
  return core;
}

const text = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? null));
const messages = (agent) => agent.messages.map((m) => ({ id: m.id, role: m.role, content: text(m) }));

/** `agent`, or its failure to run, as the report shows it. */
async function attempt(f) {
  try {
    return { failure: null, ...(await f()) };
  } catch (e) {
    return { failure: String(e?.message ?? e) };
  }
}

const report = {};
const first = await page();
report.info = {
  status: first.runtimeConnectionStatus,
  agents: Object.keys(first.agents).sort(),
  description: first.getAgent(agentId)?.description ?? null,
  transport: first.getAgent(agentId)?.transport ?? null,
};

const errors = [];
first.subscribe({ onError: ({ error, code }) => errors.push(`${code}: ${error?.message ?? error}`) });

const thread = `ck-thread-${process.pid}`;
report.run = await attempt(async () => {
  const agent = first.getAgent(agentId);
  agent.threadId = thread;
  agent.addMessage({ id: `u-${process.pid}-1`, role: "user", content: "hello copilot" });
  await first.runAgent({ agent });
  agent.addMessage({ id: `u-${process.pid}-3`, role: "user", content: "second turn" });
  await first.runAgent({ agent });
  return { threadId: agent.threadId, messages: messages(agent), state: agent.state };
});

// A reload: a new page that knows only the thread.
report.connect = await attempt(async () => {
  const second = await page();
  const agent = second.getAgent(agentId);
  agent.threadId = thread;
  await second.connectAgent({ agent });
  return { messages: messages(agent), state: agent.state };
});

const long = `ck-long-${process.pid}`;
report.stop = await attempt(async () => {
  const third = await page();
  const agent = third.getAgent(agentId);
  agent.threadId = long;
  agent.addMessage({ id: `u-${process.pid}-2`, role: "user", content: "/long 30" });
  let stopping = false;
  const types = [];
  const sub = agent.subscribe({
    onEvent: ({ event }) => {
      types.push(event.type);
      if (!stopping && event.type === "TEXT_MESSAGE_CONTENT") {
        stopping = true;
        third.stopAgent({ agent });
      }
    },
  });
  await third.runAgent({ agent }).catch(() => undefined);
  sub.unsubscribe();
  const answer = await until("the stop answer", () => stops[0]);
  // The task as the thread now shows it, from another page.
  const later = await until("the stopped task", async () => {
    const other = await page();
    const a = other.getAgent(agentId);
    a.threadId = long;
    await other.connectAgent({ agent: a });
    const tasks = Object.values(a.state?.view?.tasksById ?? {});
    return tasks.length > 0 && tasks.every((t) => t.state && !/working|submitted/i.test(t.state))
      ? { tasks, messages: messages(a) }
      : undefined;
  });
  return { stopping, types, answer, later };
});

report.errors = errors;
console.log(JSON.stringify(report));
process.exit(0);
