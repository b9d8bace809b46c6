// The Chat view: conversations (one A2A context each) side by side. A
// message streams its task's events in; each event updates the
// conversation: status and its message, artifacts (chunks appended),
// progress bars, and an input-required question or form answered in place.

import { call, stream } from "./api.js";
import { h, replace, stateBadge, stateLabel, announce } from "./dom.js";
import { renderParts, findForm, PROGRESS_URI } from "./render.js";
import { recordEvent } from "./tasks.js";

const FORM_RESPONSE_TYPE = "a2a.hitl.formResponse";
const WAITING = ["input-required", "auth-required"];
const FINAL = ["completed", "failed", "canceled", "rejected"];

let counter = 0;
let streaming = true;
const conversations = [];

/** Whether messages go out streaming (off for agents that cannot stream). */
export function setStreaming(on) {
  streaming = on;
}

function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `m-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** Adds a conversation column; returns it. */
export function addConversation() {
  counter += 1;
  const n = counter;
  const conv = { n, contextId: null, taskId: null, state: null, artifacts: new Map(), trackers: new Map(), abort: null };
  const inputId = `chat-input-${n}`;
  conv.log = h("div", { class: "log", role: "log", tabindex: "0", "aria-live": "polite", "aria-label": `Conversation ${n} messages` });
  conv.status = h("div", { class: "conv-status" }, h("span", { class: "muted" }, "No task yet"));
  conv.progress = h("div", { class: "progress-area", role: "group", "aria-label": `Conversation ${n} progress` });
  conv.input = h("textarea", { id: inputId, rows: 2, placeholder: "Message the agent (Enter sends, Shift+Enter for a new line)" });
  conv.cancelButton = h("button", { type: "button", class: "secondary", disabled: true, onclick: () => cancel(conv) }, "Cancel task");
  conv.resubscribeButton = h("button", { type: "button", class: "secondary", disabled: true, onclick: () => resubscribe(conv) }, "Resubscribe");
  conv.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      submit(conv);
    }
  });
  conv.el = h("section", { class: "conversation", "aria-label": `Conversation ${n}`, dataset: { conversation: String(n) } },
    h("header", { class: "conv-head" },
      h("h2", {}, `Conversation ${n}`),
      h("button", { type: "button", class: "icon", "aria-label": `Close conversation ${n}`, onclick: () => close(conv) }, "×")),
    conv.status,
    h("div", { class: "conv-actions" }, conv.cancelButton, conv.resubscribeButton),
    conv.log,
    conv.progress,
    h("form", { class: "composer", onsubmit: (e) => { e.preventDefault(); submit(conv); } },
      h("label", { for: inputId, class: "sr-only" }, `Message for conversation ${n}`),
      conv.input,
      h("button", { type: "submit" }, "Send")));
  conversations.push(conv);
  document.getElementById("conversations").append(conv.el);
  return conv;
}

/** Closes every conversation (their streams end) and opens a new one. */
export function resetConversations() {
  for (const conv of conversations.splice(0)) {
    if (conv.abort) conv.abort.abort();
    conv.el.remove();
  }
  counter = 0;
  return addConversation();
}

function close(conv) {
  if (conv.abort) conv.abort.abort();
  conv.el.remove();
  conversations.splice(conversations.indexOf(conv), 1);
  if (!conversations.length) addConversation();
}

/** Puts `text` in the first conversation's box and focuses it. */
export function prefill(text) {
  const conv = conversations[0] || addConversation();
  conv.input.value = text;
  document.getElementById("tab-chat").click();
  conv.input.focus();
}

function turn(conv, who, ...body) {
  const el = h("div", { class: `turn turn-${who}` }, h("div", { class: "who" }, who === "user" ? "You" : "Agent"), h("div", { class: "turn-body" }, body));
  conv.log.append(el);
  conv.log.scrollTop = conv.log.scrollHeight;
  return el;
}

function note(conv, text, cls = "note") {
  conv.log.append(h("div", { class: cls, role: cls === "error" ? "alert" : null }, text));
}

function setState(conv, task) {
  if (task.id) conv.taskId = task.id;
  if (task.contextId) conv.contextId = task.contextId;
  if (task.status && task.status.state) conv.state = stateLabel(task.status.state);
  replace(conv.status,
    "Task ", h("code", { class: "task-id" }, conv.taskId || "–"), " ",
    conv.state ? stateBadge(conv.state) : null,
    conv.contextId ? h("span", { class: "muted" }, " context ", h("code", {}, conv.contextId)) : null);
  const live = conv.taskId && !FINAL.includes(conv.state);
  conv.cancelButton.disabled = !live;
  conv.resubscribeButton.disabled = !live;
  if (FINAL.includes(conv.state)) conv.trackersDone = true;
}

function artifact(conv, art, append) {
  let entry = conv.artifacts.get(art.artifactId);
  if (!entry) {
    const body = h("div", { class: "artifact-body" });
    const el = h("section", { class: "artifact", "aria-label": `Artifact ${art.name || art.artifactId}` },
      h("div", { class: "artifact-title" }, "Artifact ", h("strong", {}, art.name || art.artifactId)), body);
    entry = { parts: [], el, body };
    conv.artifacts.set(art.artifactId, entry);
    turn(conv, "agent", el);
  }
  entry.parts = append ? entry.parts.concat(art.parts || []) : (art.parts || []).slice();
  replace(entry.body, renderParts(entry.parts));
  conv.log.scrollTop = conv.log.scrollHeight;
}

function progress(conv, payload) {
  if (!payload || !Array.isArray(payload.trackers)) return;
  const seen = new Set();
  for (const t of payload.trackers) {
    if (!t || typeof t.id !== "string") continue;
    seen.add(t.id);
    let bar = conv.trackers.get(t.id);
    if (!bar) {
      const id = `bar-${conv.n}-${conv.trackers.size}`;
      bar = { label: h("label", { for: id }), meter: h("progress", { id, max: 100 }) };
      bar.el = h("div", { class: "tracker", dataset: { tracker: t.id } }, bar.label, bar.meter);
      conv.trackers.set(t.id, bar);
      conv.progress.append(bar.el);
    }
    const total = typeof t.total === "number" ? t.total : null;
    const done = t.status === "completed";
    if (total && total > 0) {
      bar.meter.max = total;
      bar.meter.value = done ? total : Math.min(t.progress || 0, total);
    } else if (done) {
      bar.meter.max = 1;
      bar.meter.value = 1;
    } else {
      bar.meter.removeAttribute("value");
    }
    const count = total ? `${t.progress || 0}/${total}` : `${t.progress || 0}`;
    bar.label.textContent = `${t.message || t.id} (${t.status || "running"}, ${count})`;
    bar.el.classList.toggle("tracker-failed", t.status === "failed");
  }
  for (const [id, bar] of conv.trackers) {
    if (!seen.has(id) && !bar.el.classList.contains("tracker-gone")) {
      bar.el.classList.add("tracker-gone");
    }
  }
}

function form(conv, data) {
  const fields = Array.isArray(data.fields) ? data.fields : [];
  const inputs = [];
  const el = h("form", { class: "hitl-form", "aria-label": data.title || "Form" });
  el.append(h("h3", {}, data.title || "The agent asks you to fill in a form"));
  if (data.description) el.append(h("p", {}, String(data.description)));
  fields.forEach((f, i) => {
    if (!f || typeof f.name !== "string") return;
    const id = `form-${conv.n}-${data.formId}-${i}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const label = String(f.label || f.name);
    let input;
    if (f.type === "boolean") {
      input = h("input", { id, type: "checkbox", name: f.name });
      el.append(h("div", { class: "field field-check" }, input, h("label", { for: id }, label)));
    } else {
      if (Array.isArray(f.options)) {
        input = h("select", { id, name: f.name }, f.options.map((o) => h("option", { value: String(o) }, String(o))));
      } else if (f.type === "number" || f.type === "integer") {
        input = h("input", { id, type: "number", name: f.name, step: f.type === "integer" ? 1 : "any" });
      } else if (f.type === "textarea") {
        input = h("textarea", { id, name: f.name, rows: 2 });
      } else {
        input = h("input", { id, type: "text", name: f.name });
      }
      if (f.required) input.required = true;
      el.append(h("div", { class: "field" }, h("label", { for: id }, label), input));
    }
    if (f.description) el.append(h("p", { class: "muted" }, String(f.description)));
    inputs.push([f, input]);
  });
  const submitButton = h("button", { type: "submit" }, "Submit");
  el.append(h("div", { class: "form-actions" }, submitButton,
    h("button", { type: "button", class: "secondary", onclick: () => cancel(conv) }, "Cancel task")));
  el.addEventListener("submit", (e) => {
    e.preventDefault();
    const values = {};
    for (const [f, input] of inputs) {
      if (f.type === "boolean") values[f.name] = input.checked;
      else if (f.type === "number" || f.type === "integer") values[f.name] = input.value === "" ? null : Number(input.value);
      else values[f.name] = input.value;
    }
    for (const control of el.querySelectorAll("input, select, textarea, button")) control.disabled = true;
    send(conv, [{ data: { type: FORM_RESPONSE_TYPE, formId: data.formId, values } }], `Form "${data.title || data.formId}" answered`);
  });
  turn(conv, "agent", el);
  const first = el.querySelector("input, select, textarea");
  if (first) first.focus();
}

function statusMessage(conv, status) {
  const message = status && status.message;
  if (!message || !(message.parts || []).length) return;
  const data = findForm(message);
  const parts = (message.parts || []).filter((p) => !(p.data && p.data.type === "a2a.hitl.form"));
  if (parts.length) turn(conv, "agent", renderParts(parts));
  if (data && conv.state === "input-required") form(conv, data);
  else if (WAITING.includes(conv.state)) note(conv, `The task waits (${conv.state}): your next message answers it.`);
}

/** Applies one A2A stream event to a conversation. */
function apply(conv, item) {
  const event = item.event || {};
  if (event.task) {
    const task = event.task;
    recordEvent(task.id, item.seq, event);
    const first = conv.taskId !== task.id;
    setState(conv, task);
    if (first) statusMessage(conv, task.status);
    for (const art of task.artifacts || []) artifact(conv, art, false);
  } else if (event.statusUpdate) {
    const u = event.statusUpdate;
    recordEvent(u.taskId, item.seq, event);
    setState(conv, { id: u.taskId, contextId: u.contextId, status: u.status });
    progress(conv, (u.metadata && u.metadata[PROGRESS_URI]) || (u.status && u.status.message && u.status.message.metadata && u.status.message.metadata[PROGRESS_URI]));
    statusMessage(conv, u.status);
  } else if (event.artifactUpdate) {
    const u = event.artifactUpdate;
    recordEvent(u.taskId, item.seq, event);
    artifact(conv, u.artifact || {}, !!u.append);
  } else if (event.message) {
    const m = event.message;
    if (m.contextId) conv.contextId = m.contextId;
    if (m.taskId) recordEvent(m.taskId, item.seq, event);
    turn(conv, "agent", renderParts(m.parts));
    setState(conv, { contextId: m.contextId });
  }
  announce(`Conversation ${conv.n}: ${conv.state || "reply"}`);
}

async function run(conv, label, path, options) {
  if (conv.abort) conv.abort.abort();
  const abort = new AbortController();
  conv.abort = abort;
  conv.el.classList.add("busy");
  try {
    await stream(label, path, {
      ...options,
      signal: abort.signal,
      onEvent: (item) => apply(conv, item),
      onError: (message) => note(conv, `Error: ${message}`, "error"),
    });
  } catch (e) {
    if (!abort.signal.aborted) note(conv, `Error: ${e.message}`, "error");
  } finally {
    if (conv.abort === abort) conv.abort = null;
    conv.el.classList.remove("busy");
    // How many streams have ended: lets a script wait for this one.
    conv.el.dataset.streams = String(Number(conv.el.dataset.streams || 0) + 1);
  }
}

async function send(conv, parts, shown) {
  const message = { messageId: newId(), role: "ROLE_USER", parts };
  if (conv.contextId) message.contextId = conv.contextId;
  if (conv.taskId && WAITING.includes(conv.state)) message.taskId = conv.taskId;
  else conv.artifacts = new Map();
  if (!WAITING.includes(conv.state)) {
    conv.trackers = new Map();
    replace(conv.progress);
  }
  turn(conv, "user", shown);
  if (!streaming) {
    try {
      const result = await call("send", "send", { method: "POST", body: { request: { message }, stream: false } });
      apply(conv, { seq: null, event: result });
    } catch (e) {
      note(conv, `Error: ${e.message}`, "error");
    }
    conv.el.dataset.streams = String(Number(conv.el.dataset.streams || 0) + 1);
    return;
  }
  await run(conv, "send", "send", { method: "POST", body: { request: { message }, stream: true } });
}

function submit(conv) {
  const text = conv.input.value.trim();
  if (!text) return;
  conv.input.value = "";
  send(conv, [{ text }], text);
}

async function cancel(conv) {
  if (!conv.taskId) return;
  try {
    const task = await call("cancel", `tasks/${encodeURIComponent(conv.taskId)}/cancel`, { method: "POST" });
    apply(conv, { seq: null, event: { task } });
    note(conv, "Cancel requested.");
  } catch (e) {
    note(conv, `Cancel failed: ${e.message}`, "error");
  }
}

async function resubscribe(conv) {
  if (!conv.taskId) return;
  note(conv, "Resubscribed to the task.");
  await run(conv, "subscribe", `tasks/${encodeURIComponent(conv.taskId)}/subscribe`, {});
}

/** Opens a task in a new conversation, following it. */
export function followTask(task) {
  const conv = addConversation();
  setState(conv, task);
  document.getElementById("tab-chat").click();
  if (!FINAL.includes(conv.state)) resubscribe(conv);
}
