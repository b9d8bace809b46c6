// The Tasks view: a filtered, paged list; a task's timeline (each event
// the console saw, with its sequence number, raw JSON on demand, and a
// live subscription for a running task) and its push configs.

import { call, stream } from "./api.js";
import { h, replace, stateBadge, stateLabel, announce } from "./dom.js";
import { jsonTree, rawJson } from "./render.js";

/** Events per task, as the console received them (bounded). */
const timelines = new Map();
const MAX_TASKS = 200;
const MAX_EVENTS = 2000;

/** Remembers an event of a task for its timeline. */
export function recordEvent(taskId, seq, event) {
  if (!taskId) return;
  let list = timelines.get(taskId);
  if (!list) {
    if (timelines.size >= MAX_TASKS) timelines.delete(timelines.keys().next().value);
    list = [];
    timelines.set(taskId, list);
  }
  if (seq !== null && seq !== undefined && list.some((e) => e.seq === seq)) return;
  if (list.length < MAX_EVENTS) list.push({ seq, event, at: new Date() });
}

const STATES = ["", "submitted", "working", "input-required", "auth-required", "completed", "failed", "canceled", "rejected"];
const pages = [""];
let page = 0;

export function initTasks() {
  const form = document.getElementById("task-filters");
  const select = document.getElementById("filter-state");
  replace(select, STATES.map((s) => h("option", { value: s }, s || "any state")));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    pages.length = 1;
    page = 0;
    loadTasks();
  });
  document.getElementById("tasks-prev").addEventListener("click", () => {
    if (page > 0) {
      page -= 1;
      loadTasks();
    }
  });
  document.getElementById("tasks-next").addEventListener("click", () => {
    if (pages[page + 1]) {
      page += 1;
      loadTasks();
    }
  });
}

/** Forgets the list's pages and the open task (another agent's tasks). */
export function resetTasks() {
  pages.length = 1;
  page = 0;
  replace(document.getElementById("tasks-list"));
  document.getElementById("tasks-page").textContent = "";
  document.getElementById("tasks-prev").disabled = true;
  document.getElementById("tasks-next").disabled = true;
  replace(document.getElementById("task-detail"), h("p", { class: "muted" }, "Pick a task to see its timeline."));
}

export async function loadTasks() {
  const body = document.getElementById("tasks-list");
  const params = new URLSearchParams();
  const state = document.getElementById("filter-state").value;
  const context = document.getElementById("filter-context").value.trim();
  const size = document.getElementById("filter-size").value;
  if (state) params.set("state", state);
  if (context) params.set("contextId", context);
  if (size) params.set("pageSize", size);
  if (pages[page]) params.set("pageToken", pages[page]);
  replace(body, h("p", { class: "muted" }, "Loading…"));
  let result;
  try {
    result = await call("tasks", `tasks?${params}`);
  } catch (e) {
    replace(body, h("p", { class: "error", role: "alert" }, `Cannot list tasks: ${e.message}`));
    return;
  }
  const tasks = result.tasks || [];
  pages[page + 1] = result.nextPageToken || "";
  document.getElementById("tasks-prev").disabled = page === 0;
  document.getElementById("tasks-next").disabled = !result.nextPageToken;
  document.getElementById("tasks-page").textContent = `Page ${page + 1}${result.totalSize !== undefined ? ` · ${result.totalSize} tasks` : ""}`;
  if (!tasks.length) {
    replace(body, h("p", { class: "muted" }, "No tasks match."));
    return;
  }
  replace(body, h("table", { class: "tasks" },
    h("caption", { class: "sr-only" }, "Tasks"),
    h("thead", {}, h("tr", {}, ["Task", "State", "Context", "Updated"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, tasks.map((t) => h("tr", {},
      h("td", {}, h("button", { type: "button", class: "link", onclick: () => openTask(t.id) }, t.id)),
      h("td", {}, stateBadge(t.status && t.status.state)),
      h("td", {}, h("code", {}, t.contextId || "")),
      h("td", {}, (t.status && t.status.timestamp) || ""))))));
  announce(`${tasks.length} tasks`);
}

function summary(event) {
  if (event.task) return `Task · ${stateLabel(event.task.status && event.task.status.state)}`;
  if (event.statusUpdate) {
    const s = event.statusUpdate.status || {};
    const text = ((s.message && s.message.parts) || []).filter((p) => p.text !== undefined).map((p) => p.text).join(" ");
    return `Status · ${stateLabel(s.state)}${text ? ` · ${text}` : ""}`;
  }
  if (event.artifactUpdate) {
    const a = event.artifactUpdate.artifact || {};
    return `Artifact · ${a.name || a.artifactId}${event.artifactUpdate.append ? " (append)" : ""}${event.artifactUpdate.lastChunk ? " (last chunk)" : ""}`;
  }
  if (event.message) return "Message";
  return Object.keys(event).join(", ");
}

function timelineList(taskId) {
  const list = timelines.get(taskId) || [];
  if (!list.length) return h("p", { class: "muted" }, "The console has seen no events of this task yet: subscribe to a running task, or send it a message.");
  return h("ol", { class: "timeline", "aria-label": "Events" }, list.map((e) =>
    h("li", { class: "timeline-event" },
      h("span", { class: "seq", title: "Sequence number" }, e.seq === null || e.seq === undefined ? "–" : `#${e.seq}`),
      h("span", { class: "what" }, summary(e.event)),
      rawJson(e.event, "Raw JSON"))));
}

export async function openTask(taskId) {
  const detail = document.getElementById("task-detail");
  replace(detail, h("p", { class: "muted" }, "Loading…"));
  let task;
  try {
    task = await call("task", `tasks/${encodeURIComponent(taskId)}`);
  } catch (e) {
    replace(detail, h("p", { class: "error", role: "alert" }, `Cannot get the task: ${e.message}`));
    return;
  }
  const timeline = h("div", { id: "timeline" }, timelineList(taskId));
  const configs = h("div", { id: "push-configs" }, h("p", { class: "muted" }, "Loading push configs…"));
  const state = stateLabel(task.status && task.status.state);
  const live = !["completed", "failed", "canceled", "rejected"].includes(state);
  const follow = h("button", { type: "button", class: "secondary", disabled: !live || null }, "Subscribe to live events");
  follow.addEventListener("click", async () => {
    follow.disabled = true;
    await stream("subscribe", `tasks/${encodeURIComponent(taskId)}/subscribe`, {
      onEvent: (item) => {
        const id = (item.event.task && item.event.task.id) || taskId;
        recordEvent(id, item.seq, item.event);
        replace(timeline, timelineList(taskId));
      },
      onError: (m) => timeline.append(h("p", { class: "error" }, m)),
    }).catch((e) => timeline.append(h("p", { class: "error" }, e.message)));
    follow.disabled = false;
  });
  const cancelButton = h("button", { type: "button", class: "secondary", disabled: !live || null }, "Cancel task");
  cancelButton.addEventListener("click", async () => {
    try {
      const t = await call("cancel", `tasks/${encodeURIComponent(taskId)}/cancel`, { method: "POST" });
      recordEvent(taskId, null, { task: t });
      openTask(taskId);
    } catch (e) {
      detail.append(h("p", { class: "error", role: "alert" }, `Cancel failed: ${e.message}`));
    }
  });
  replace(detail,
    h("h2", { id: "task-heading", tabindex: "-1" }, "Task ", h("code", {}, task.id), " ", stateBadge(task.status && task.status.state)),
    h("p", { class: "muted" }, "Context ", h("code", {}, task.contextId || "")),
    h("div", { class: "conv-actions" }, follow, cancelButton),
    h("h3", {}, "Timeline"),
    timeline,
    h("h3", {}, "Artifacts"),
    (task.artifacts || []).length ? jsonTree(task.artifacts, "artifacts", false) : h("p", { class: "muted" }, "None."),
    h("h3", {}, "Push configs"),
    configs,
    rawJson(task, "Raw task JSON"));
  document.getElementById("task-heading").focus();
  try {
    const result = await call("push-configs", `tasks/${encodeURIComponent(taskId)}/push-configs`);
    const list = result.configs || [];
    replace(configs, list.length
      ? h("ul", {}, list.map((c) => h("li", {}, h("code", {}, c.id || ""), " → ", h("code", {}, c.url || ""))))
      : h("p", { class: "muted" }, "No push configs."));
  } catch (e) {
    replace(configs, h("p", { class: "muted" }, `Push configs unavailable: ${e.message}`));
  }
}
