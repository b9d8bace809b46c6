// One AG-UI run through the official @ag-ui/client 1.0.0 HttpAgent (schema
// enforcement, verifyEvents, reducer) against an AG-UI endpoint (`/agui` of
// `switchboard bridge` or `serve`), for scripts/llm-e2e.sh.
//
//   node llm.mjs AGUI_URL TEXT
//
// Prints the run's summary (summary.mjs) as one JSON line.
import { HttpAgent } from "@ag-ui/client";
import { summarize } from "./summary.mjs";

const [url, ...words] = process.argv.slice(2);
if (!url || words.length === 0) {
  console.error("usage: node llm.mjs AGUI_URL TEXT");
  process.exit(2);
}
const agent = new HttpAgent({ url, threadId: "llm-e2e" });
agent.addMessage({ id: "user-1", role: "user", content: words.join(" ") });
const summary = await summarize(agent, { runId: "llm-e2e-run" });
console.log(JSON.stringify(summary));
