// The Debug view: each console action's calls to the agent, frame by
// frame: the bytes on the wire of the HTTP bindings (the request, the
// answer, a stream's body as it arrived; credentials masked by the server)
// and the A2A 1.0 JSON of each object (request, answer, stream events,
// errors; for gRPC, which carries protobuf, only these, decoded). A request
// is copyable as `curl` (HTTP bindings of A2A 1.0) or as a `switchboard
// client` command.

import { h, replace } from "./dom.js";

const MAX_RECORDS = 200;
const records = [];
let agentUrl = "";

export function setAgentUrl(url) {
  agentUrl = url || "";
}

function shellQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

const REST_ROUTES = {
  SendMessage: (p) => ["POST", "/message:send", p],
  SendStreamingMessage: (p) => ["POST", "/message:stream", p],
  GetTask: (p) => ["GET", `/tasks/${encodeURIComponent(p.id)}`, null],
  ListTasks: () => ["GET", "/tasks", null],
  CancelTask: (p) => ["POST", `/tasks/${encodeURIComponent(p.id)}:cancel`, {}],
  SubscribeToTask: (p) => ["GET", `/tasks/${encodeURIComponent(p.id)}:subscribe`, null],
  ListTaskPushNotificationConfigs: (p) => ["GET", `/tasks/${encodeURIComponent(p.taskId)}/pushNotificationConfigs`, null],
};

/** The call as `curl`, or why there is none. */
export function curlFor(iface, operation, params) {
  if (!iface || !iface.url) return "# no interface known for this call";
  if (!String(iface.version || "").startsWith("1.")) return `# curl is shown for A2A 1.0 interfaces; this call went over ${iface.binding} ${iface.version}`;
  const streaming = operation === "SendStreamingMessage" || operation === "SubscribeToTask";
  const accept = streaming ? "text/event-stream" : "application/json";
  if (iface.binding === "JSONRPC") {
    const body = { jsonrpc: "2.0", id: 1, method: operation, params };
    return `curl -sN -X POST ${shellQuote(iface.url)} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H ${shellQuote(`Accept: ${accept}`)} -d ${shellQuote(JSON.stringify(body))}`;
  }
  if (iface.binding === "HTTP+JSON" && REST_ROUTES[operation]) {
    const [method, path, body] = REST_ROUTES[operation](params || {});
    const url = iface.url.replace(/\/$/, "") + path;
    return `curl -sN -X ${method} ${shellQuote(url)} -H 'A2A-Version: 1.0' -H ${shellQuote(`Accept: ${accept}`)}${body ? ` -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(body))}` : ""}`;
  }
  return `# no curl for ${iface.binding}: use the switchboard command`;
}

/** The call as a `switchboard client` command. */
export function commandFor(iface, operation, params) {
  const url = shellQuote(agentUrl || (iface && iface.url) || "URL");
  const p = params || {};
  const text = () => ((p.message && p.message.parts) || []).filter((x) => x.text !== undefined).map((x) => x.text).join(" ");
  const ids = () => `${p.message && p.message.contextId ? ` --context-id ${shellQuote(p.message.contextId)}` : ""}${p.message && p.message.taskId ? ` --task-id ${shellQuote(p.message.taskId)}` : ""}`;
  switch (operation) {
    case "SendMessage": return `switchboard client send --url ${url}${ids()} ${shellQuote(text())}`;
    case "SendStreamingMessage": return `switchboard client stream --url ${url}${ids()} ${shellQuote(text())}`;
    case "GetTask": return `switchboard client get --url ${url} ${shellQuote(p.id)}`;
    case "ListTasks": return `switchboard client list --url ${url}${p.contextId ? ` --context-id ${shellQuote(p.contextId)}` : ""}${p.status ? ` --state ${shellQuote(String(p.status).replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-"))}` : ""}${p.pageSize ? ` --page-size ${p.pageSize}` : ""}`;
    case "CancelTask": return `switchboard client cancel --url ${url} ${shellQuote(p.id)}`;
    case "SubscribeToTask": return `switchboard client subscribe --url ${url} ${shellQuote(p.id)}`;
    case "ListTaskPushNotificationConfigs": return `switchboard client push-config list --url ${url} ${shellQuote(p.taskId)}`;
    default: return `# ${operation}: no switchboard command`;
  }
}

async function copy(text, output) {
  output.value = text;
  output.hidden = false;
  output.select();
  try {
    await navigator.clipboard.writeText(text);
    output.setAttribute("aria-label", "Copied to the clipboard");
  } catch {
    output.setAttribute("aria-label", "Copy this text");
  }
}

function frameView(record, frame) {
  let pretty = frame.body;
  let parsed = null;
  try {
    parsed = JSON.parse(frame.body);
    pretty = JSON.stringify(parsed, null, 2);
  } catch {
    parsed = null;
  }
  const wire = String(frame.kind).startsWith("wire-");
  const what = wire
    ? (frame.kind === "wire-chunk" ? `${frame.body.length} characters as received` : frame.body.split("\n", 1)[0])
    : frame.operation;
  const el = h("li", { class: `frame frame-${frame.kind}${wire ? " frame-wire" : ""}` },
    h("details", {},
      h("summary", {}, h("span", { class: "badge" }, wire ? frame.kind.replace("wire-", "wire: ") : `${frame.kind} JSON`), " ", what,
        frame.seq !== null && frame.seq !== undefined ? ` #${frame.seq}` : "", ` (call ${frame.call})`),
      h("pre", { class: "code", tabindex: "0" }, pretty)));
  if (frame.kind === "request") {
    const output = h("textarea", { class: "copy-output", readonly: true, rows: 3, hidden: true, "aria-label": "Command" });
    el.append(h("div", { class: "frame-actions" },
      h("button", { type: "button", class: "secondary", onclick: () => copy(curlFor(record.iface, frame.operation, parsed), output) }, "Copy as curl"),
      h("button", { type: "button", class: "secondary", onclick: () => copy(commandFor(record.iface, frame.operation, parsed), output) }, "Copy as switchboard command")),
      output);
  }
  return el;
}

/** Records one console action's frames; returns a handle to add more. */
export function debugRecord(label, iface, frames, error) {
  const list = h("ol", { class: "frames" });
  const errorEl = h("p", { class: "error" });
  const ifaceEl = h("span", { class: "muted" });
  const noteEl = h("p", { class: "muted" });
  const record = { label, iface, frames: [], el: null };
  record.el = h("li", { class: "debug-call" },
    h("h3", {}, label, " ", ifaceEl),
    noteEl,
    list,
    errorEl);
  record.setInterface = (i) => {
    record.iface = i;
    ifaceEl.textContent = i ? `${i.binding} ${i.version} → ${i.url}` : "";
    noteEl.textContent = i && i.binding === "GRPC"
      ? "gRPC carries protobuf, not text: its messages are shown decoded, as A2A JSON."
      : "";
  };
  record.addFrame = (f) => {
    record.frames.push(f);
    list.append(frameView(record, f));
  };
  record.setError = (e) => {
    errorEl.textContent = e ? `Error: ${e.message}${e.code !== null && e.code !== undefined ? ` (code ${e.code})` : ""}` : "";
  };
  record.setInterface(iface);
  frames.forEach(record.addFrame);
  record.setError(error);
  records.unshift(record);
  if (records.length > MAX_RECORDS) records.pop().el.remove();
  const container = document.getElementById("debug-calls");
  if (container) container.prepend(record.el);
  return record;
}

export function clearDebug() {
  records.length = 0;
  replace(document.getElementById("debug-calls"));
}
