// Drives switchboard's AG-UI → A2A bridge (`switchboard bridge`, POST /agui)
// with the official @ag-ui/client 1.0.0 HttpAgent: the client's own schema
// enforcement, verifyEvents and reducer run on every event, and the runs are
// made the way an AG-UI app makes them (agent.addMessage, then runAgent with
// forwardedProps.a2a = {mode, taskId?} and resume entries).
//
//   node bridge.mjs BRIDGE_URL SCENARIO...
//
// Prints {SCENARIO: report} on stdout, where a report holds the summary of
// each run (summary.mjs) under a name; crates/switchboard/tests/bridge_node.rs
// asserts on it. The scenarios, each on one HttpAgent (one thread) unless
// said otherwise:
//   demo       (demo agent) four streamed runs on one thread: plain text,
//              /tool, /think, /steps 3. Only the first run starts a context;
//              the others name none, so the bridge takes the one it projected
//              into the state the client sends back (/view/contextId).
//   text       (a text-only agent) two runs of direct message replies.
//   approve    (demo) /approve → interrupt with a form; resume resolved
//              {approved: true} → the task completes.
//   cancel     (demo) /approve → interrupt; resume cancelled → canceled.
//   inject     (demo) /ask streamed → interrupt (no form). A second client
//              (an operator's console, its own thread) injects the name into
//              the task with a send-mode run and then reconnects to it with a
//              stream run, which shows the task completed. (The asking
//              thread cannot send a plain message itself: @ag-ui/client
//              refuses any run of a thread with a pending interrupt that
//              does not resume it.)
//   reconnect  (demo) /long 3 streamed, aborted by the client after the first
//              status text; the UI comes back (a new HttpAgent on the same
//              thread with the messages and state it had) and reconnects with
//              a stream run naming the taskId and sending nothing new.
//   sample     (any agent on the demo-agent contract, e.g. the Python SDK's
//              sample) one thread: text → artifact "echo: …"; /message X →
//              a direct reply; /ask → interrupt, answered by a send-mode run
//              that resumes it with the name → the task completes.
import { HttpAgent } from "@ag-ui/client";
import { summarize } from "./summary.mjs";

const [url, ...scenarios] = process.argv.slice(2);
if (!url || scenarios.length === 0) {
  console.error("usage: node bridge.mjs BRIDGE_URL SCENARIO...");
  process.exit(2);
}

let counter = 0;
const nextId = (what) => `${what}-${++counter}`;

function agent(threadId, init = {}) {
  return new HttpAgent({ url, threadId, ...init });
}

function say(a, text) {
  a.addMessage({ id: nextId("user"), role: "user", content: text });
}

/** One run of `a` with `text` as the user's new message (if any). */
function run(a, text, parameters = {}, options = {}) {
  if (text !== undefined) say(a, text);
  return summarize(a, { runId: nextId("run"), ...parameters }, options);
}

/** The ids of the tasks in the client's state (in the order they came). */
function taskIds(a) {
  return Object.keys(a.state?.view?.tasksById ?? {});
}

const a2a = (options) => ({ forwardedProps: { a2a: options } });

async function demo() {
  const thread = agent("thread-demo");
  const runs = {};
  for (const [name, text] of [
    ["analyse", "hello world"],
    ["tool", "/tool hello there"],
    ["think", "/think count these words"],
    ["steps", "/steps 3"],
  ]) {
    runs[name] = await run(thread, text);
  }
  return { runs, final: { messages: thread.messages, state: thread.state } };
}

async function text() {
  const thread = agent("thread-text");
  const runs = {
    first: await run(thread, "hello there"),
    second: await run(thread, "and again"),
  };
  return { runs, final: { messages: thread.messages, state: thread.state } };
}

/** /approve on a new thread, then the resume `status` (with `payload`). */
async function approval(threadId, status, payload) {
  const thread = agent(threadId);
  const ask = await run(thread, "/approve the deploy");
  const interruptId = thread.pendingInterrupts[0]?.id;
  const entry = payload === undefined ? { interruptId, status } : { interruptId, status, payload };
  const resume = await run(thread, undefined, { resume: [entry] });
  return {
    interruptId,
    runs: { ask, resume },
    final: { messages: thread.messages, state: thread.state },
  };
}

async function inject() {
  const ui = agent("thread-inject");
  const ask = await run(ui, "/ask");
  const [taskId] = taskIds(ui);
  const consoleAgent = agent("thread-operator");
  const injected = await run(consoleAgent, "Ada", a2a({ mode: "send", taskId }));
  const reconnect = await run(consoleAgent, undefined, a2a({ mode: "stream", taskId }));
  return {
    taskId,
    runs: { ask, injected, reconnect },
    final: { messages: consoleAgent.messages, state: consoleAgent.state },
  };
}

async function reconnect() {
  const first = agent("thread-reconnect");
  // Abort once the first status text has been shown in full.
  const started = await run(first, "/long 3", {}, {
    abortAfter: (event) => event.type === "TEXT_MESSAGE_END",
  });
  const [taskId] = taskIds(first);
  // The UI comes back with what it had; a new agent, since an HttpAgent's
  // abort signal stays aborted.
  const again = agent("thread-reconnect", {
    initialMessages: first.messages,
    initialState: first.state,
  });
  const resumed = await run(again, undefined, a2a({ mode: "stream", taskId }));
  return {
    taskId,
    runs: { started, resumed },
    final: { messages: again.messages, state: again.state },
  };
}

async function sample() {
  const thread = agent("thread-sample");
  const runs = {
    echo: await run(thread, "hello sample"),
    message: await run(thread, "/message hi there"),
    ask: await run(thread, "/ask"),
  };
  const [interrupt] = thread.pendingInterrupts;
  const taskId = interrupt ? thread.state?.view?.pendingInterrupts?.[interrupt.id]?.taskId : undefined;
  runs.answer = await run(thread, undefined, {
    ...a2a({ mode: "send", taskId }),
    resume: [{ interruptId: interrupt?.id, status: "resolved", payload: "Ada" }],
  });
  return { taskId, runs, final: { messages: thread.messages, state: thread.state } };
}

const all = {
  demo,
  text,
  approve: () => approval("thread-approve", "resolved", { approved: true, comment: "ship it" }),
  cancel: () => approval("thread-cancel", "cancelled"),
  inject,
  reconnect,
  sample,
};

const out = {};
for (const name of scenarios) {
  const scenario = all[name];
  if (!scenario) {
    console.error(`unknown scenario ${name}; known: ${Object.keys(all).join(", ")}`);
    process.exit(2);
  }
  out[name] = await scenario();
}
process.stdout.write(JSON.stringify(out));
