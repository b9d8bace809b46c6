// Rendering what agents send: parts (text, data, files, AG-UI hinted
// blocks), markdown and JSON. Everything is built with `h` (text nodes
// only): markdown is parsed into elements here, never handed to the
// browser as HTML, and links keep only http(s) and mailto targets.

import { h } from "./dom.js";

export const PROGRESS_URI = "https://a2a-protocol.org/extensions/task-progress/v1";
export const FORM_TYPE = "a2a.hitl.form";

/** Whether a URL may become a link or download target. */
export function safeUrl(url) {
  try {
    const u = new URL(url, document.baseURI);
    return ["http:", "https:", "mailto:"].includes(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

// ---- markdown ------------------------------------------------------------

/** Inline markdown (code, bold, italic, links) as nodes. */
function inline(text) {
  const out = [];
  const pattern = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const token = m[0];
    if (m[1]) out.push(h("code", {}, token.slice(1, -1)));
    else if (m[2]) out.push(h("strong", {}, inline(token.slice(2, -2))));
    else if (m[3]) out.push(h("em", {}, inline(token.slice(1, -1))));
    else {
      const close = token.indexOf("](");
      const label = token.slice(1, close);
      const href = safeUrl(token.slice(close + 2, -1));
      out.push(href ? h("a", { href, rel: "noopener noreferrer", target: "_blank" }, label) : label);
    }
    last = m.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Markdown as a DOM fragment: headings, paragraphs, lists, quotes, fenced code. */
export function markdown(text) {
  const root = h("div", { class: "markdown" });
  const lines = String(text).split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const lang = line.slice(3).trim();
      const body = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
      i++;
      root.append(h("pre", { class: "code", tabindex: "0", "data-lang": lang || null }, h("code", {}, body.join("\n"))));
    } else if (/^#{1,6}\s/.test(line)) {
      const level = Math.min(line.match(/^#+/)[0].length + 2, 6);
      root.append(h(`h${level}`, {}, inline(line.replace(/^#+\s*/, ""))));
      i++;
    } else if (/^\s*([-*+]|\d+[.)])\s/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s/.test(lines[i])) {
        list.append(h("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i++;
      }
      root.append(list);
    } else if (/^>\s?/.test(line)) {
      const quote = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) quote.push(lines[i++].replace(/^>\s?/, ""));
      root.append(h("blockquote", {}, inline(quote.join(" "))));
    } else if (line.trim() === "") {
      i++;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() !== "" && !/^(```|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) {
        para.push(lines[i++]);
      }
      root.append(h("p", {}, inline(para.join(" "))));
    }
  }
  return root;
}

// ---- JSON ----------------------------------------------------------------

/** A JSON value as a collapsible tree. */
export function jsonTree(value, label = null, open = true) {
  if (value === null || typeof value !== "object") {
    const kind = value === null ? "null" : typeof value;
    return h("div", { class: "json-leaf" },
      label !== null ? h("span", { class: "json-key" }, `${label}: `) : null,
      h("span", { class: `json-${kind}` }, JSON.stringify(value)));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h("details", { class: "json-node", open: open || null },
    h("summary", {}, label !== null ? h("span", { class: "json-key" }, `${label}: `) : null, summary),
    h("div", { class: "json-children" }, entries.map(([k, v]) => jsonTree(v, k, false))));
}

/** Raw JSON, shown on demand. */
export function rawJson(value, label = "Raw JSON") {
  return h("details", { class: "raw" }, h("summary", {}, label),
    h("pre", { class: "code", tabindex: "0" }, JSON.stringify(value, null, 2)));
}

// ---- parts -----------------------------------------------------------------

function hint(part, key) {
  return part && part.metadata ? part.metadata[`agui_${key}`] : undefined;
}

function fileLink(part) {
  const name = part.filename || "file";
  const type = part.mediaType || "application/octet-stream";
  if (part.raw !== undefined) {
    let href = null;
    try {
      const bytes = Uint8Array.from(atob(part.raw), (c) => c.charCodeAt(0));
      href = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
    } catch {
      href = null;
    }
    return h("div", { class: "file" }, "📎 ",
      href ? h("a", { href, download: name }, `Download ${name}`) : `${name} (undecodable)`,
      h("span", { class: "muted" }, ` ${type}`));
  }
  const href = safeUrl(part.url);
  return h("div", { class: "file" }, "📎 ",
    href ? h("a", { href, download: name, rel: "noopener noreferrer", target: "_blank" }, `Download ${name}`) : `${name}: ${part.url}`,
    h("span", { class: "muted" }, ` ${type}`));
}

/** The body of one part, by its content. */
export function partBody(part) {
  if (part.text !== undefined) {
    if ((part.mediaType || "").startsWith("text/markdown")) return markdown(part.text);
    return h("div", { class: "text" }, part.text);
  }
  if (part.data !== undefined) return jsonTree(part.data, null, true);
  if (part.raw !== undefined || part.url !== undefined) return fileLink(part);
  return jsonTree(part, null, false);
}

/**
 * Parts as blocks: consecutive parts of one AG-UI hinted block (reasoning,
 * tool call, code, error) are shown together, labelled; plain parts as
 * they are.
 */
export function renderParts(parts) {
  const out = [];
  let current = null;
  for (const part of parts || []) {
    const type = hint(part, "event_type");
    const block = hint(part, "block_type");
    const key = type ? `${type}/${block || ""}/${hint(part, "block_id") || hint(part, "tool_call_id") || ""}` : null;
    if (!type) {
      current = null;
      out.push(h("div", { class: "part" }, partBody(part)));
      continue;
    }
    if (!current || current.key !== key) {
      current = { key, el: blockFor(type, block, part) };
      out.push(current.el);
    }
    const body = current.el.querySelector(".block-body");
    if (type === "tool_call" && part.data && typeof part.data === "object") {
      body.append(toolLine(part.data));
      if (hint(part, "is_error")) current.el.classList.add("block-error");
      continue;
    }
    if (part.text !== undefined && body.lastChild && body.lastChild.classList && body.lastChild.classList.contains("text") && type !== "tool_call") {
      body.lastChild.textContent += part.text;
    } else {
      body.append(part.text !== undefined && block === "code" ? h("pre", { class: "code", tabindex: "0" }, h("code", {}, part.text)) : partBody(part));
    }
    if (hint(part, "is_error")) current.el.classList.add("block-error");
  }
  return out;
}

/** A tool call's arguments or its result, on one line. */
function toolLine(data) {
  if (typeof data.name === "string" && "arguments" in data) {
    return h("div", { class: "tool-call" }, h("code", {}, `${data.name}(${JSON.stringify(data.arguments)})`));
  }
  if ("content" in data || "error" in data) {
    if (data.error) return h("div", { class: "tool-result error" }, `✗ ${typeof data.error === "string" ? data.error : JSON.stringify(data.error)}`);
    const content = typeof data.content === "string" ? data.content : JSON.stringify(data.content);
    return h("div", { class: "tool-result" }, `→ ${content}`);
  }
  return jsonTree(data, null, true);
}

function blockFor(type, block, part) {
  let title = type;
  let cls = `block block-${type}`;
  if (type === "thinking") title = "Reasoning";
  else if (type === "tool_call") title = `Tool call: ${hint(part, "tool_name") || "?"}`;
  else if (type === "error") title = "Error";
  else if (block === "code") title = "Code";
  else if (type === "content_block") title = !block || block === "text" ? "Answer" : `Block: ${block}`;
  if (type === "content_block" && block !== "code") cls += " block-plain";
  return h("section", { class: cls, "aria-label": title },
    h("div", { class: "block-title" }, title),
    h("div", { class: "block-body" }));
}

/** The hitl form in a message, if any. */
export function findForm(message) {
  for (const part of (message && message.parts) || []) {
    if (part.data && part.data.type === FORM_TYPE && typeof part.data.formId === "string") return part.data;
  }
  return null;
}

/** The text of a message's text parts. */
export function messageText(message) {
  return ((message && message.parts) || []).filter((p) => p.text !== undefined).map((p) => p.text).join("");
}
