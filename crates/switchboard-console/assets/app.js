// The console's entry point: tabs (arrow keys move between them), theme,
// credentials, the agent picker, and the first load of each view.

import { call, currentAgent, setAgent, setCredential } from "./api.js";
import { loadCard, onSkillExample } from "./card.js";
import { addConversation, prefill, resetConversations, setStreaming } from "./chat.js";
import { initTasks, loadTasks, resetTasks } from "./tasks.js";
import { clearDebug } from "./debug.js";
import { h, replace, announce } from "./dom.js";

const tabs = [...document.querySelectorAll('[role="tab"]')];
const loaded = new Set();

function select(tab, focus = true) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
  if (focus) tab.focus();
  if (tab.id === "tab-tasks" && !loaded.has("tasks")) {
    loaded.add("tasks");
    loadTasks();
  }
  history.replaceState(null, "", `#${tab.id.slice(4)}`);
}

for (const tab of tabs) {
  tab.addEventListener("click", () => select(tab));
  tab.addEventListener("keydown", (e) => {
    const i = tabs.indexOf(tab);
    let next = null;
    if (e.key === "ArrowRight") next = tabs[(i + 1) % tabs.length];
    else if (e.key === "ArrowLeft") next = tabs[(i - 1 + tabs.length) % tabs.length];
    else if (e.key === "Home") next = tabs[0];
    else if (e.key === "End") next = tabs[tabs.length - 1];
    if (next) {
      e.preventDefault();
      select(next);
    }
  });
}

// Theme: the system's unless chosen here (remembered in this browser).
const themeButton = document.getElementById("theme-button");
function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  themeButton.setAttribute("aria-pressed", String(theme === "dark"));
  themeButton.textContent = theme === "dark" ? "Light theme" : "Dark theme";
}
const stored = localStorage.getItem("switchboard-console-theme");
applyTheme(stored || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
themeButton.addEventListener("click", () => {
  const theme = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  localStorage.setItem("switchboard-console-theme", theme);
  applyTheme(theme);
});

// Credentials: asked for when the API answers 401/403, kept in memory.
const dialog = document.getElementById("credentials-dialog");
function openCredentials(reason) {
  if (dialog.open) return;
  document.getElementById("credentials-reason").textContent = reason || "Sent with every console call, kept in this tab only.";
  dialog.showModal();
}
document.getElementById("credentials-button").addEventListener("click", () => openCredentials());
document.addEventListener("console-auth", (e) =>
  openCredentials(e.detail.status === 401 ? "The agent's server wants credentials (401)." : "These credentials are not allowed (403)."));
dialog.addEventListener("close", () => {
  if (dialog.returnValue === "save") {
    setCredential(document.getElementById("credential-kind").value, document.getElementById("credential-value").value.trim());
    loadAgents().then(start);
  }
});

document.getElementById("new-conversation").addEventListener("click", () => {
  const conv = addConversation();
  conv.input.focus();
});
document.getElementById("debug-clear").addEventListener("click", clearDebug);
onSkillExample(prefill);
initTasks();
addConversation();

async function start() {
  const card = await loadCard();
  if (card) {
    setStreaming(!card.capabilities || card.capabilities.streaming !== false);
  }
}

// The agent picker: the server's agents (`GET api/agents`); the card, chat,
// tasks and debug views then talk to the one picked. The choice is kept in
// the page's URL (`?agent=/path`), so a reload stays with it.
const picker = document.getElementById("agent-picker");
let agents = [];

function describe(path) {
  const agent = agents.find((a) => a.path === path);
  document.getElementById("agent-description").textContent = agent ? agent.description || "" : "";
  return agent;
}

async function loadAgents() {
  try {
    agents = (await call("agents", "agents")).agents || [];
  } catch {
    agents = [];
  }
  if (!agents.some((a) => a.path === currentAgent())) setAgent(agents.length ? agents[0].path : "/");
  replace(picker, agents.map((a) =>
    h("option", { value: a.path, selected: a.path === currentAgent() }, `${a.name || "(no name)"} (${a.path})`)));
  picker.value = currentAgent();
  describe(currentAgent());
}

picker.addEventListener("change", () => {
  setAgent(picker.value);
  const agent = describe(picker.value);
  const url = new URL(location.href);
  url.searchParams.set("agent", picker.value);
  history.replaceState(null, "", url);
  // Another agent: its own conversations and tasks.
  resetConversations();
  resetTasks();
  if (loaded.has("tasks")) {
    if (document.getElementById("panel-tasks").hidden) loaded.delete("tasks");
    else loadTasks();
  }
  start();
  announce(`Now talking to ${agent ? agent.name : picker.value} at ${picker.value}`);
});

const initial = tabs.find((t) => `#${t.id.slice(4)}` === location.hash);
if (initial) select(initial, false);
setAgent(new URLSearchParams(location.search).get("agent") || "/");
loadAgents().then(start);
