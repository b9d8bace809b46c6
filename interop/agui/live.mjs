// Runs the official @ag-ui/client 1.0.0 HttpAgent against a live
// switchboard server's A2A streaming endpoints, opted in to AG-UI: the
// agent's request is an A2A SendStreamingMessage (JSON-RPC, or REST with
// ?format=agui), the answer AG-UI events that go through the client's own
// schema enforcement and verifyEvents, then its reducer.
//
//   node live.mjs BASE TEXT...
//
// Prints {TEXT: {jsonrpc: summary, rest: summary, proto: summary}} on stdout;
// crates/switchboard/tests/agui_node.rs asserts on it.
import { HttpAgent } from "@ag-ui/client";
import { summarize } from "./summary.mjs";

const [base, ...texts] = process.argv.slice(2);
if (!base || texts.length === 0) {
  console.error("usage: node live.mjs BASE TEXT...");
  process.exit(2);
}

// An HttpAgent whose request is an A2A one; everything after the fetch is
// the official pipeline.
class A2aOptInAgent extends HttpAgent {
  constructor(binding, text) {
    const root = base.replace(/\/$/, "");
    const url = binding === "rest" ? `${root}/message:stream?format=agui` : `${root}/`;
    super({ url, threadId: "thread-under-test" });
    this.binding = binding;
    this.text = text;
  }

  requestInit() {
    const message = {
      role: "ROLE_USER",
      messageId: `m-${this.binding}-${Math.random().toString(16).slice(2)}`,
      parts: [{ text: this.text }],
    };
    const accept = {
      jsonrpc: "application/x-agui-events",
      rest: "text/event-stream",
      proto: "application/vnd.ag-ui.event+proto",
    }[this.binding];
    const body =
      this.binding === "rest"
        ? { message }
        : { jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } };
    return {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Accept: accept },
      body: JSON.stringify(body),
      signal: this.abortController.signal,
    };
  }
}

async function run(binding, text) {
  return summarize(new A2aOptInAgent(binding, text));
}

const out = {};
for (const text of texts) {
  out[text] = {};
  for (const binding of ["jsonrpc", "rest", "proto"]) {
    out[text][binding] = await run(binding, text);
  }
}
console.log(JSON.stringify(out));
