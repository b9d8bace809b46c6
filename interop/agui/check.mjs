// Reads AG-UI event streams that switchboard wrote (SSE and protobuf) and
// runs each through the official @ag-ui/client 1.0.0 pipeline: HttpAgent
// against a loopback server that replays the bytes, so the client's own
// schema enforcement and event verification (verifyEvents) run, then its
// reducer builds messages, state and interrupts. Protobuf frames are also
// decoded one by one with @ag-ui/proto and compared with the SSE events.
//
//   node check.mjs DIR      DIR holds NAME.sse and NAME.proto files
//
// Prints one JSON object {NAME: {sse: summary, proto: summary, protoMatchesSse}}
// on stdout; the Rust test (crates/switchboard/tests/agui_node.rs) asserts on
// it. Exit code 1 on any failure to run.
import { createServer } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import { decode } from "@ag-ui/proto";
import { summarize } from "./summary.mjs";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node check.mjs DIR");
  process.exit(2);
}

function serve(body, contentType) {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": contentType });
        res.end(body);
      });
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

async function runThrough(body, contentType) {
  const server = await serve(body, contentType);
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    return await summarize(new HttpAgent({ url, threadId: "thread-under-test" }));
  } finally {
    server.close();
  }
}

function protoFrames(buf) {
  const events = [];
  let off = 0;
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    events.push(decode(new Uint8Array(buf.subarray(off + 4, off + 4 + len))));
    off += 4 + len;
  }
  return events;
}

function sseEvents(text) {
  return text
    .split("\n\n")
    .filter((f) => f.trim().length > 0)
    .map((f) =>
      JSON.parse(
        f
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, ""))
          .join("\n"),
      ),
    );
}

// Deep equality that ignores undefined-valued keys (ts-proto materialises them).
function same(a, b) {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

const out = {};
const names = readdirSync(dir)
  .filter((f) => f.endsWith(".sse"))
  .map((f) => f.slice(0, -4))
  .sort();
for (const name of names) {
  const sse = readFileSync(join(dir, `${name}.sse`));
  const proto = readFileSync(join(dir, `${name}.proto`));
  const fromSse = sseEvents(sse.toString("utf8"));
  let decoded;
  let protoDecodeError = null;
  try {
    decoded = protoFrames(proto);
  } catch (e) {
    protoDecodeError = String(e && e.message ? e.message : e);
  }
  const mismatches = [];
  if (decoded) {
    if (decoded.length !== fromSse.length) mismatches.push(`count ${decoded.length} != ${fromSse.length}`);
    decoded.forEach((e, i) => {
      if (!same(e, fromSse[i])) mismatches.push({ index: i, proto: e, sse: fromSse[i] });
    });
  }
  out[name] = {
    sse: await runThrough(sse, "text/event-stream"),
    proto: await runThrough(proto, "application/vnd.ag-ui.event+proto"),
    protoDecodeError,
    protoMismatches: mismatches.slice(0, 5),
  };
}
process.stdout.write(JSON.stringify(out));
