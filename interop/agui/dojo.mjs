// The AG-UI Dojo's features, each shown end to end through switchboard's
// bridge (`switchboard bridge`, POST /agui) in front of an A2A agent (the demo
// agent; the relay for subagents), driven by the official @ag-ui/client 1.0.0
// HttpAgent: its schema enforcement, verifyEvents and reducer run on every
// event, as in any AG-UI app.
//
//   node dojo.mjs BRIDGE_URL FEATURE [ARG]
//
// Prints one JSON report on stdout (with `warnings`: what the client warned
// about); crates/switchboard/tests/dojo_node.rs asserts on it. Each run of a report is recorded by `record` below: the
// events as the client received them (after its checks), its run errors, the
// failure that ended it, RUN_FINISHED's outcome and pending tool calls, and
// what the reducer built (messages, state). The features (Dojo ids):
//   agentic_chat               "hello world": streamed assistant text.
//   human_in_the_loop          /approve → interrupt with a form; resume
//                              resolved {approved: true} → completed.
//   backend_tool_rendering     /tool: tool calls and their results.
//   tool_based_generative_ui   /ui with a frontend tool offered in `tools`:
//                              the run ends with the call pending; the
//                              client's result (a tool message) in the next
//                              run completes the same task.
//   shared_state               the UI's state {notes: [...]} reaches the agent
//                              (/note), the agent's notes come back in
//                              /view/state; the UI edits its notes and the
//                              next /note starts from the edit.
//   agentic_generative_ui      /plan 3: the plan's steps in /view/state,
//                              updated by STATE_DELTAs while the agent works.
//   predictive_state_updates   /write: a PredictState CUSTOM event, then the
//                              write_document call whose argument a UI turns
//                              into the predicted document (as CopilotKit's
//                              subscriber does), then the agent's state.
//   agentic_chat_reasoning     /think: reasoning, then the answer.
//   subagents                  (bridge in front of the relay; ARG = the demo
//                              agent's URL) the relay delegates to the demo
//                              agent: SUBAGENT_* and subagentRunId events.
import { HttpAgent } from "@ag-ui/client";

const [url, feature, arg] = process.argv.slice(2);
if (!url || !feature) {
  console.error("usage: node dojo.mjs BRIDGE_URL FEATURE [ARG]");
  process.exit(2);
}

// What the client warns about (stripped fields, unknown events, a newer
// protocol version, patches that do not apply): every report lists them.
const warnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => warnings.push(args.map(String).join(" "));
}

let counter = 0;
const nextId = (what) => `${what}-${++counter}`;

function agent(threadId, init = {}) {
  return new HttpAgent({ url, threadId, ...init });
}

/**
 * One run of `a` (with `text` as the user's new message, if any) and what
 * the client made of it. `subscriber` is added to the run's own.
 */
async function record(a, text, parameters = {}, subscriber = {}) {
  if (text !== undefined) a.addMessage({ id: nextId("user"), role: "user", content: text });
  const events = [];
  const runErrors = [];
  let failure = null;
  let outcome = null;
  let pendingToolCallIds = null;
  let ran = null;
  try {
    ran = await a.runAgent(
      { runId: nextId("run"), ...parameters },
      {
        ...subscriber,
        onEvent: (params) => {
          events.push(params.event);
          subscriber.onEvent?.(params);
        },
        onRunErrorEvent: ({ event }) => {
          runErrors.push({ message: event.message, code: event.code });
        },
        onRunFinishedEvent: (finished) => {
          outcome = finished.outcome;
          pendingToolCallIds = finished.pendingToolCallIds ?? null;
        },
        onRunFailed: ({ error }) => {
          failure = String(error && error.message ? error.message : error);
        },
      },
    );
  } catch (e) {
    failure = failure ?? String(e && e.message ? e.message : e);
  }
  return {
    failure,
    runErrors,
    events,
    types: events.map((e) => e.type),
    outcome,
    pendingToolCallIds,
    newMessages: ran?.newMessages ?? [],
    messages: a.messages,
    state: a.state,
    pendingInterrupts: a.pendingInterrupts ?? [],
  };
}

const features = {
  async agentic_chat() {
    const a = agent("dojo-chat");
    return { run: await record(a, "hello world") };
  },

  async human_in_the_loop() {
    const a = agent("dojo-hitl");
    const ask = await record(a, "/approve the deploy");
    const interruptId = a.pendingInterrupts[0]?.id;
    const resume = await record(a, undefined, {
      resume: [{ interruptId, status: "resolved", payload: { approved: true, comment: "ship it" } }],
    });
    return { interruptId, ask, resume };
  },

  async backend_tool_rendering() {
    const a = agent("dojo-backend-tools");
    return { run: await record(a, "/tool hello there") };
  },

  async tool_based_generative_ui() {
    const a = agent("dojo-frontend-tools");
    const tools = [
      {
        name: "show_card",
        description: "Shows a card with a text in the UI",
        parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    ];
    const call = await record(a, "/ui a haiku", { tools });
    // The UI runs the tool (renders the card) and answers the call.
    const toolCallId = call.pendingToolCallIds?.[0];
    a.addMessage({ id: nextId("tool"), role: "tool", toolCallId, content: "card shown" });
    const answer = await record(a, undefined, { tools });
    return { toolCallId, call, answer };
  },

  async shared_state() {
    const a = agent("dojo-shared-state", { initialState: { notes: ["buy milk"] } });
    const first = await record(a, "/note call mom");
    // The UI edits its own part of the state.
    a.setState({ ...a.state, notes: ["buy bread"] });
    const second = await record(a, "/note water plants");
    return { first, second };
  },

  async agentic_generative_ui() {
    const a = agent("dojo-generative-ui");
    return { run: await record(a, "/plan 3") };
  },

  async predictive_state_updates() {
    const a = agent("dojo-predictive");
    // What a UI predicts from the tool's arguments as they come (the
    // client hands a subscriber the arguments received before each
    // TOOL_CALL_ARGS, and all of them at TOOL_CALL_END), the way
    // CopilotKit's PredictState subscriber does.
    let mappings = [];
    const predicted = [];
    const predict = (toolCallName, args) => {
      for (const m of mappings) {
        if (m.tool === toolCallName && args?.[m.tool_argument] !== undefined) {
          predicted.push({ [m.state_key]: args[m.tool_argument] });
        }
      }
    };
    const subscriber = {
      onCustomEvent: ({ event }) => {
        if (event.name === "PredictState") mappings = event.value;
      },
      onToolCallArgsEvent: ({ toolCallName, partialToolCallArgs }) =>
        predict(toolCallName, partialToolCallArgs),
      onToolCallEndEvent: ({ toolCallName, toolCallArgs }) => predict(toolCallName, toolCallArgs),
    };
    const run = await record(a, "/write It was a dark and stormy night", {}, subscriber);
    return { run, predicted };
  },

  async agentic_chat_reasoning() {
    const a = agent("dojo-reasoning");
    return { run: await record(a, "/think count these words") };
  },

  async subagents() {
    const a = agent("dojo-subagents");
    return { run: await record(a, `${arg} hello subagent`) };
  },
};

const run = features[feature];
if (!run) {
  console.error(`unknown feature ${feature}`);
  process.exit(2);
}
const report = await run();
report.warnings = warnings;
console.log(JSON.stringify(report));
