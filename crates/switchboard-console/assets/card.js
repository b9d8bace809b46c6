// The Card view: what the agent says about itself, and every rule of the
// spec its card breaks.

import { call } from "./api.js";
import { h, replace, announce } from "./dom.js";
import { jsonTree, rawJson, safeUrl } from "./render.js";
import { setAgentUrl } from "./debug.js";

let onExample = () => {};

/** Called with a skill's example when the user picks it. */
export function onSkillExample(f) {
  onExample = f;
}

function section(title, ...body) {
  return h("section", { class: "card-section", "aria-label": title }, h("h2", {}, title), body);
}

function table(caption, head, rows) {
  return h("table", {},
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
}

export async function loadCard() {
  const panel = document.getElementById("card-body");
  replace(panel, h("p", { class: "muted" }, "Loading the card…"));
  let result;
  try {
    result = await call("card", "card");
  } catch (e) {
    replace(panel, h("p", { class: "error", role: "alert" }, `Cannot read the card: ${e.message}`));
    return null;
  }
  const card = result.card || {};
  setAgentUrl(result.url);
  document.getElementById("agent-name").textContent = card.name || "(no name)";
  const issues = result.issues || [];
  const sig = result.signature || {};
  const iface = result.interface || {};
  replace(panel,
    h("header", { class: "card-head" },
      h("h2", { class: "card-title" }, card.name || "(no name)", " ", h("span", { class: "muted" }, card.version || "")),
      h("p", {}, card.description || ""),
      h("p", { class: "muted" }, "Card URL: ", h("code", {}, result.url || "")),
      card.provider ? h("p", { class: "muted" }, "Provider: ", card.provider.organization || "", " ",
        safeUrl(card.provider.url) ? h("a", { href: safeUrl(card.provider.url), rel: "noopener noreferrer" }, card.provider.url) : "") : null,
      h("p", {},
        h("span", { class: `badge sig-${sig.status || "unknown"}` }, `signature: ${sig.status || "unknown"}`),
        sig.reason ? h("span", { class: "muted" }, ` ${sig.reason}`) : null,
        " ",
        iface.binding ? h("span", { class: "badge" }, `console uses ${iface.binding} ${iface.version}`) : null,
        iface.error ? h("span", { class: "badge state-failed" }, `no usable interface: ${iface.error}`) : null)),
    section(`Spec check (${issues.length ? `${issues.length} issue${issues.length > 1 ? "s" : ""}` : "valid"})`,
      issues.length
        ? h("ul", { class: "issues", id: "card-issues" }, issues.map((i) =>
          h("li", { class: `issue issue-${i.severity}` },
            h("span", { class: "badge" }, i.severity), " ",
            h("code", {}, i.path || "(card)"), " — ", i.rule)))
        : h("p", { class: "ok", id: "card-issues" }, "The card follows every rule the console checks.")),
    section("Interfaces",
      table("Interfaces", ["Binding", "Version", "URL", "Tenant"], (card.supportedInterfaces || []).map((i) =>
        [i.protocolBinding || "", i.protocolVersion || "(missing)", h("code", {}, i.url || ""), i.tenant || ""]))),
    section("Skills",
      h("ul", { class: "skills" }, (card.skills || []).map((s) =>
        h("li", { class: "skill" },
          h("h3", {}, s.name || s.id || "(unnamed)"),
          h("p", {}, s.description || ""),
          h("p", {}, (s.tags || []).map((t) => h("span", { class: "tag" }, String(t)))),
          (s.examples || []).length
            ? h("p", {}, "Try: ", (s.examples || []).map((ex) =>
              h("button", { type: "button", class: "example", onclick: () => onExample(String(ex)) }, String(ex))))
            : null)))),
    section("Capabilities and extensions",
      h("p", {}, ["streaming", "pushNotifications", "extendedAgentCard"].map((k) =>
        h("span", { class: `badge ${card.capabilities && card.capabilities[k] ? "on" : "off"}` }, `${k}: ${card.capabilities && card.capabilities[k] ? "yes" : "no"}`))),
      table("Extensions", ["URI", "Required", "Description"], ((card.capabilities || {}).extensions || []).map((e) =>
        [h("code", {}, e.uri || ""), e.required ? "yes" : "no", e.description || ""]))),
    section("Security",
      Object.keys(card.securitySchemes || {}).length
        ? jsonTree(card.securitySchemes, "securitySchemes", true)
        : h("p", { class: "muted" }, "No security schemes: the agent takes anonymous calls."),
      (card.securityRequirements || []).length ? jsonTree(card.securityRequirements, "securityRequirements", false) : null),
    rawJson(card, "Raw card JSON"));
  announce(`Card of ${card.name || "the agent"} loaded, ${issues.length} issues`);
  return card;
}
