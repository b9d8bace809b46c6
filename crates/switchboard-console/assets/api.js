// The console's API, as the page calls it: JSON answers and SSE streams,
// every call carrying the console header and, when given, the caller's
// credentials (kept in this tab's memory only). Every answer's frames go to
// the Debug view.

import { debugRecord } from "./debug.js";

const base = new URL("api/", document.baseURI).pathname;
let credential = null; // {name, value}
let agentPath = "/"; // the picked agent's path in the server's listing

/** Sends every later call to the agent at `path` (`/`: the server's own). */
export function setAgent(path) {
  agentPath = path || "/";
}

/** The picked agent's path. */
export function currentAgent() {
  return agentPath;
}

export function setCredential(kind, value) {
  if (!value) {
    credential = null;
  } else if (kind === "key") {
    credential = { name: "X-API-Key", value };
  } else {
    credential = { name: "Authorization", value: `Bearer ${value}` };
  }
}

function headers(extra = {}) {
  const out = { "X-Switchboard-Console": "1", "X-Switchboard-Agent": agentPath, ...extra };
  if (credential) out[credential.name] = credential.value;
  return out;
}

/** What an API call failed with. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error ? body.error.code : null;
  }
}

/** A Debug record's label: the action, and the agent it went to. */
function labelled(label) {
  return agentPath === "/" ? label : `${label} · ${agentPath}`;
}

function askForCredentials(status) {
  if (status === 401 || status === 403) {
    document.dispatchEvent(new CustomEvent("console-auth", { detail: { status } }));
  }
}

/** A unary API call: the `result`, after recording the frames. */
export async function call(label, path, { method = "GET", body } = {}) {
  label = labelled(label);
  const response = await fetch(base + path, {
    method,
    headers: headers(body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  debugRecord(label, answer && answer.interface, (answer && answer.frames) || [], answer && answer.error);
  if (!response.ok) {
    askForCredentials(response.status);
    throw new ApiError(response.status, answer);
  }
  return answer.result;
}

/**
 * A streaming API call: `onEvent({seq, event})` for each A2A event,
 * `onError(message)` for an error; resolves when the stream ends.
 * `signal` aborts it.
 */
export async function stream(label, path, { method = "GET", body, onEvent, onError, signal }) {
  label = labelled(label);
  const response = await fetch(base + path, {
    method,
    headers: headers(body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
    signal,
  });
  if (!response.ok) {
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    debugRecord(label, null, (answer && answer.frames) || [], answer && answer.error);
    askForCredentials(response.status);
    throw new ApiError(response.status, answer);
  }
  const record = debugRecord(label, null, [], null);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const dispatch = (name, data) => {
    let value = null;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    if (name === "interface") record.setInterface(value);
    else if (name === "frame") record.addFrame(value);
    else if (name === "event") onEvent(value);
    else if (name === "error") {
      record.setError(value);
      onError(value.message || "error");
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) dispatch(name, data.join("\n"));
      }
    }
  } catch (e) {
    if (!(signal && signal.aborted)) onError(String(e));
  }
}
