// Drives the switchboard console in headless Chromium (playwright-core)
// and checks what the page shows, flow by flow.
//
//   node interop/console/drive.mjs demo   <console URL> <screenshot dir>
//   node interop/console/drive.mjs sample <console URL> <screenshot dir>
//   node interop/console/drive.mjs agents <console URL> <screenshot dir>
//
// `demo`: a console on `switchboard serve --agent demo` — the card, chat
// for each demo behaviour (text, reasoning, tools, progress bars, a form
// answered, a question answered, a task cancelled), two conversations side
// by side, an XSS attempt, the task list and a timeline, the raw frames of
// a call copied as curl and as a command, keyboard navigation, both themes.
// `sample`: `switchboard console --agent` in front of the official Python
// helloworld sample — its card (with the spec rule it breaks) and a chat.
// `agents`: a console on a `serve` hosting the demo at `/`, a demo agent at
// `/demo` and an echo agent at `/echo` — the picker lists the three; picked
// with the keyboard alone, each one's card, chat and tasks are its own.
// Every view is scanned with axe-core (no serious or critical violation);
// any browser console error or page error fails the run. Prints `ok`/`not
// ok` per step and `interop: N passed, M failed` last.

import { chromium } from "playwright-core";
import { createRequire } from "node:module";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const AXE = require.resolve("axe-core/axe.min.js");
const [mode, url, shots] = process.argv.slice(2);
if (!mode || !url || !shots) {
  console.error("usage: drive.mjs demo|sample|agents <console URL> <screenshot dir>");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const browserPath = process.env.CHROMIUM || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox", "--disable-gpu"] });
// Without the page's CSP: an agent's markup must stay inert by how the
// page builds its DOM, not only because the policy would block it.
const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, bypassCSP: true, colorScheme: "light" });
const page = await context.newPage();
const problems = [];
page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));

let passed = 0;
let failed = 0;
async function step(name, f) {
  try {
    await f();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok - ${name}: ${String(e && e.stack || e).split("\n").slice(0, 3).join(" | ")}`);
  }
}
function check(cond, what) {
  if (!cond) throw new Error(what);
}
const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
const T = { timeout: 20000 };

async function axe(what) {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
  });
  check(result.length === 0, `${what}: ${result.join("; ")}`);
}

async function tab(name) {
  await page.click(`#tab-${name}`);
  await page.waitForSelector(`#panel-${name}:not([hidden])`, T);
}

const conv = (n) => page.locator(`[data-conversation="${n}"]`);

// Sends `text` in conversation `n` and waits until its stream has ended
// (the page counts ended streams in `data-streams`).
async function send(n, text, { wait = true } = {}) {
  const c = conv(n);
  const before = Number((await c.getAttribute("data-streams")) || 0);
  await c.locator("textarea").fill(text);
  await c.locator("textarea").press("Enter");
  if (wait) {
    await page.waitForFunction(([n, before]) =>
      Number(document.querySelector(`[data-conversation="${n}"]`).dataset.streams || 0) > before, [n, before], T);
  }
}

async function lastState(n, state) {
  await conv(n).locator(`.conv-status .badge.state-${state}`).waitFor(T);
}

async function nextConversation() {
  await page.click("#new-conversation");
  return page.locator("[data-conversation]").count().then(async () => {
    const all = await page.locator("[data-conversation]").all();
    return Number(await all[all.length - 1].getAttribute("data-conversation"));
  });
}

await page.goto(url);

if (mode === "demo") {
  await step("the card shows the agent, its skills and the spec check", async () => {
    await page.waitForSelector(".card-title", T);
    check((await page.textContent("#agent-name")).includes("switchboard demo"), "agent name");
    await page.waitForSelector(".skill", T);
    check(await page.locator(".skill").count() >= 2, "skills listed");
    check((await page.textContent("#panel-card")).includes("Spec check"), "spec check section");
    check((await page.textContent("#panel-card")).includes("signature: unsigned"), "signature status");
    check((await page.textContent("#panel-card")).includes("task-progress"), "extensions listed");
    const agents = await page.locator("#agent-picker option").allTextContents();
    check(agents.length === 1 && agents[0] === "switchboard demo (/)", `a server with one agent: the picker shows just it (${agents})`);
    await shot("card");
    await axe("card view");
  });

  await step("keyboard alone moves between the views", async () => {
    await page.focus("#tab-card");
    await page.keyboard.press("ArrowRight");
    check(await page.evaluate(() => document.activeElement.id) === "tab-chat", "focus on the chat tab");
    check(await page.isVisible("#panel-chat"), "chat panel shown");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    check(await page.evaluate(() => document.activeElement.id) === "new-conversation", `Tab reaches the first control, got ${await page.evaluate(() => document.activeElement.id || document.activeElement.tagName)}`);
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("ArrowLeft");
    check(await page.isVisible("#panel-card"), "back on the card");
  });

  await step("chat: a text message streams its reply artifact", async () => {
    await tab("chat");
    await send(1, "hello console world");
    await lastState(1, "completed");
    const text = await conv(1).locator(".artifact").last().textContent();
    check(text.includes("You said: hello console world") && text.includes("Words: 3"), `reply artifact: ${text}`);
  });

  await step("chat: reasoning and code blocks from AG-UI hints", async () => {
    await send(1, "/think count these words");
    await lastState(1, "completed");
    await conv(1).locator(".block-thinking").last().waitFor(T);
    const reasoning = await conv(1).locator(".block-thinking").last().textContent();
    check(reasoning.includes("Reasoning") && reasoning.includes("words"), `reasoning: ${reasoning}`);
    check(await conv(1).locator(".block pre.code").count() > 0, "a code block");
  });

  await step("chat: tool calls with their results and a failure", async () => {
    await send(1, "/tool hello there");
    await lastState(1, "completed");
    const tools = await conv(1).locator(".block-tool_call").allTextContents();
    check(tools.some((t) => t.includes("word_count")), `word_count call: ${tools}`);
    check(tools.some((t) => t.includes("dictionary")), `dictionary call: ${tools}`);
    check(await conv(1).locator(".block-tool_call.block-error").count() > 0, "the failing tool is marked");
    await shot("chat");
  });

  await step("chat: live progress bars from the task-progress trackers", async () => {
    await send(1, "/progress 3", { wait: false });
    await conv(1).locator(".tracker progress").first().waitFor(T);
    // The trackers arrive one event at a time: wait for all three, then
    // check that no more came.
    await page.waitForFunction(() => document.querySelectorAll('[data-conversation="1"] .tracker').length >= 3, null, T)
      .catch(() => {});
    const trackers = await conv(1).locator(".tracker").count();
    check(trackers === 3, `three trackers, got ${trackers}`);
    // The bars move while the task works.
    await page.waitForFunction(() => [...document.querySelectorAll('[data-conversation="1"] .tracker progress')]
      .some((p) => p.hasAttribute("value") && p.value >= 10), null, T);
    await shot("progress");
    await lastState(1, "completed");
    const labels = await conv(1).locator(".tracker label").allTextContents();
    check(labels.some((l) => l.includes("completed")), `trackers completed: ${labels}`);
  });

  await step("chat: an a2a.hitl.form answered in place", async () => {
    await send(1, "/approve the deploy", { wait: false });
    await conv(1).locator(".hitl-form").waitFor(T);
    await lastState(1, "input-required");
    await conv(1).locator(".hitl-form input[type=checkbox]").check();
    await conv(1).locator(".hitl-form input[type=text]").fill("ship it");
    await shot("form");
    await conv(1).locator(".hitl-form button[type=submit]").click();
    await lastState(1, "completed");
    const text = await conv(1).locator(".artifact").last().textContent();
    check(text.includes("approved: the deploy (ship it)"), `decision: ${text}`);
  });

  await step("chat: an input-required question answered on the same task", async () => {
    await send(1, "/ask");
    await lastState(1, "input-required");
    const task = await conv(1).locator(".task-id").textContent();
    await send(1, "Ada");
    await lastState(1, "completed");
    check(await conv(1).locator(".task-id").textContent() === task, "the same task");
    check((await conv(1).locator(".log").textContent()).includes("Ada"), "greeting");
  });

  let second = 0;
  await step("chat: two conversations side by side, one task cancelled", async () => {
    second = await nextConversation();
    await send(second, "/long 30", { wait: false });
    await lastState(second, "working");
    await send(1, "side by side");
    await lastState(1, "completed");
    const contexts = await page.locator(".conv-status code").allTextContents();
    check(new Set(contexts.filter((c) => c.length > 20)).size >= 3, `separate contexts and tasks: ${contexts}`);
    await conv(second).getByRole("button", { name: "Cancel task" }).click();
    await lastState(second, "canceled");
    await shot("conversations");
    await axe("chat view");
  });

  await step("chat: resubscribe follows a running task to its end", async () => {
    await send(second, "/long 3", { wait: false });
    await lastState(second, "working");
    const task = await conv(second).locator(".task-id").textContent();
    const before = Number((await conv(second).getAttribute("data-streams")) || 0);
    await conv(second).getByRole("button", { name: "Resubscribe" }).click();
    await lastState(second, "completed");
    await page.waitForFunction(([n, before]) =>
      Number(document.querySelector(`[data-conversation="${n}"]`).dataset.streams || 0) >= before + 2, [second, before], T);
    check(await conv(second).locator(".task-id").textContent() === task, "the same task");
    check((await conv(second).locator(".log").textContent()).includes("Resubscribed"), "noted");
  });

  await step("agent text with <script> and <img onerror> renders inert", async () => {
    const evil = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>**bold** [x](javascript:window.__xss=3)`;
    await send(1, evil);
    await lastState(1, "completed");
    const art = conv(1).locator(".artifact").last();
    check((await art.textContent()).includes("<img src=x onerror="), "shown as text");
    check(await page.locator(".log img, .log script").count() === 0, "no element made from agent text");
    // The page's markdown renderer: markup stays text, unsafe links are no links.
    const md = await page.evaluate(async (text) => {
      const { markdown } = await import("./assets/render.js");
      const el = markdown(text);
      document.body.append(el);
      const out = { html: el.innerHTML, imgs: el.querySelectorAll("img,script").length, links: [...el.querySelectorAll("a")].map((a) => a.href), strong: el.querySelectorAll("strong").length };
      el.remove();
      return out;
    }, evil);
    check(md.imgs === 0 && md.strong === 1 && md.links.length === 0, `markdown: ${JSON.stringify(md)}`);
    await page.waitForTimeout(200);
    check(await page.evaluate(() => window.__xss === undefined), "no agent script ran");
  });

  await step("tasks: the list filters by state and context, a task's timeline opens", async () => {
    await tab("tasks");
    await page.selectOption("#filter-state", "canceled");
    await page.click("#task-filters button[type=submit]");
    await page.waitForSelector("table.tasks", T);
    const states = await page.locator("table.tasks .badge").allTextContents();
    check(states.length >= 1 && states.every((s) => s === "canceled"), `canceled only: ${states}`);
    await page.selectOption("#filter-state", "");
    await page.fill("#filter-size", "2");
    await page.click("#task-filters button[type=submit]");
    await page.waitForSelector("table.tasks", T);
    check(await page.locator("table.tasks tbody tr").count() === 2, "a page of two");
    check(!(await page.isDisabled("#tasks-next")), "a next page");
    await page.click("#tasks-next");
    await page.waitForFunction(() => document.getElementById("tasks-page").textContent.startsWith("Page 2"), null, T);
    await page.fill("#filter-size", "20");
    await page.selectOption("#filter-state", "completed");
    await page.click("#task-filters button[type=submit]");
    await page.waitForSelector("table.tasks", T);
    await page.locator("table.tasks button.link").first().click();
    await page.waitForSelector("#task-heading", T);
    await page.waitForSelector(".timeline-event", T);
    const seqs = await page.locator(".timeline-event .seq").allTextContents();
    check(seqs.includes("#1") && seqs.includes("#2"), `sequence numbers: ${seqs}`);
    await page.locator(".timeline-event .raw summary").first().click();
    check((await page.locator(".timeline-event .raw pre").first().textContent()).includes("\"task\""), "raw JSON shown");
    await page.waitForSelector("#push-configs p, #push-configs ul", T);
    await shot("tasks");
    await axe("tasks view");
  });

  await step("debug: the raw frames of a call, copied as curl and as a command", async () => {
    await tab("debug");
    const call = page.locator(".debug-call").filter({ hasText: "send" }).first();
    await call.waitFor(T);
    check(await call.locator(".frame-event").count() > 1, "stream event frames");
    await call.locator(".frame-request summary").click();
    check((await call.locator(".frame-request pre").textContent()).includes("\"messageId\""), "request frame body");
    // The bytes on the wire: the HTTP request as sent, the stream as it arrived.
    await call.locator(".frame-wire-request summary").first().click();
    const sent = await call.locator(".frame-wire-request pre").first().textContent();
    check(sent.startsWith("POST http") && sent.includes("a2a-version: 1.0") && sent.includes('"jsonrpc":"2.0"'), `request bytes: ${sent}`);
    check(await call.locator(".frame-wire-chunk").count() > 0, "the stream's bytes");
    await call.locator(".frame-wire-chunk summary").first().click();
    check((await call.locator(".frame-wire-chunk pre").first().textContent()).includes("data:"), "SSE as received");
    await call.getByRole("button", { name: "Copy as curl" }).click();
    const curl = await call.locator(".copy-output").inputValue();
    check(curl.startsWith("curl -sN -X POST") && curl.includes("SendStreamingMessage"), `curl: ${curl}`);
    await call.getByRole("button", { name: "Copy as switchboard command" }).click();
    const cmd = await call.locator(".copy-output").inputValue();
    check(cmd.startsWith("switchboard client stream --url"), `command: ${cmd}`);
    await shot("debug");
    await axe("debug view");
  });

  await step("dark theme, and a narrow screen", async () => {
    await page.click("#theme-button");
    check(await page.evaluate(() => document.documentElement.dataset.theme) === "dark", "dark");
    await tab("card");
    await shot("card-dark");
    await axe("card view, dark");
    await tab("chat");
    await axe("chat view, dark");
    await page.setViewportSize({ width: 420, height: 860 });
    await shot("chat-narrow-dark");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 1, `no horizontal scrolling on a narrow screen (${overflow}px)`);
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.click("#theme-button");
  });
} else if (mode === "agents") {
  await step("the picker lists every agent of the server", async () => {
    await page.waitForSelector("#agent-picker option[value='/echo']", { ...T, state: "attached" });
    const options = await page.locator("#agent-picker option").allTextContents();
    check(options.length === 3, `three agents: ${options}`);
    check(options[0].includes("(/)") && options.some((o) => o.includes("demo agent (/demo)")) && options.some((o) => o.includes("echo agent (/echo)")), `names and paths: ${options}`);
    await page.waitForSelector(".card-title", T);
    check((await page.textContent("#agent-name")).includes("switchboard demo"), "the server's own agent first");
    await shot("agents");
    await axe("agent picker");
  });

  const taskIds = {};
  for (const [path, name, text, reply] of [
    ["/echo", "echo agent", "hello echo", "hello echo"],
    ["/demo", "demo agent", "hello demo", "You said: hello demo"],
  ]) {
    await step(`keyboard alone picks ${path}: its card, its chat, its tasks, its frames`, async () => {
      await page.focus("#agent-picker");
      const paths = await page.locator("#agent-picker option").evaluateAll((os) => os.map((o) => o.value));
      for (let i = 0; i < paths.length && (await page.inputValue("#agent-picker")) !== path; i += 1) {
        const at = paths.indexOf(await page.inputValue("#agent-picker"));
        await page.keyboard.press(paths.indexOf(path) > at ? "ArrowDown" : "ArrowUp");
      }
      check((await page.inputValue("#agent-picker")) === path, `picked ${path}`);
      await page.waitForFunction((name) => (document.querySelector(".card-title") || {}).textContent?.startsWith(name), name, T);
      check((await page.textContent("#agent-name")) === name, "the header names it");
      check((await page.textContent("#panel-card")).includes(`${path}/.well-known/agent-card.json`), "its own card URL");
      await tab("chat");
      await send(1, text);
      await lastState(1, "completed");
      const log = await conv(1).locator(".log").textContent();
      check(log.includes(reply), `reply from ${path}: ${log}`);
      taskIds[path] = await conv(1).locator(".task-id").textContent();
      await tab("tasks");
      await page.click("#task-filters button[type=submit]");
      await page.waitForSelector("table.tasks", T);
      const listed = await page.locator("table.tasks button.link").allTextContents();
      check(listed.length === 1 && listed[0] === taskIds[path], `only ${path}'s task: ${listed} (want ${taskIds[path]})`);
      await tab("debug");
      const call = page.locator(".debug-call").filter({ hasText: `send · ${path}` }).first();
      await call.waitFor(T);
      const head = await call.locator("h3").textContent();
      check(new RegExp(`:\\d+${path}\\b`).test(head), `the call went to the agent's URL: ${head}`);
      await shot(`agents-${path.slice(1)}`);
      await axe(`${path} views`);
      await tab("card");
    });
  }
  await step("each agent's task is its own", async () => {
    check(taskIds["/echo"] && taskIds["/demo"] && taskIds["/echo"] !== taskIds["/demo"], `two tasks: ${JSON.stringify(taskIds)}`);
  });
} else {
  await step("the sample's card, with the rule it breaks", async () => {
    await page.waitForSelector(".card-title", T);
    const issues = await page.textContent("#card-issues");
    check(issues.includes("supportedInterfaces[0].protocolVersion") && issues.includes("required field is missing"), `issues: ${issues}`);
    await shot("sample-card");
    await axe("sample card view");
  });
  await step("chat with the sample through the console's client", async () => {
    await tab("chat");
    await send(1, "hi from the console");
    await page.waitForFunction(() => document.querySelector('[data-conversation="1"] .log').textContent.includes("Hello"), null, T);
    await lastState(1, "completed");
    await shot("sample-chat");
    await axe("sample chat view");
  });
  await step("debug: the sample's frames", async () => {
    await tab("debug");
    const call = page.locator(".debug-call").filter({ hasText: "send" }).first();
    await call.waitFor(T);
    check((await call.textContent()).includes("JSONRPC"), "the binding the console's client used");
    check(await call.locator(".frame").count() >= 2, "request and answer frames");
  });
}

await step("no browser console errors", async () => {
  check(problems.length === 0, problems.join("; "));
});

await browser.close();
console.log(`interop: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
