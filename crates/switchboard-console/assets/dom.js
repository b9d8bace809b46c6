// Building the DOM without HTML: every string becomes a text node, so
// nothing an agent says is ever parsed as markup.

/** Makes an element: `h("button", {class: "x", onclick: f}, "text", child)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value") {
      el.value = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children (nodes, strings as text, arrays flattened, null skipped). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A short, stable label for an A2A task state (`TASK_STATE_INPUT_REQUIRED` → `input-required`). */
export function stateLabel(state) {
  if (!state) return "unknown";
  return String(state).replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}

/** A badge for a task state. */
export function stateBadge(state) {
  const label = stateLabel(state);
  return h("span", { class: `badge state-${label}` }, label);
}

/** Announces a message to screen readers and shows it in the status bar. */
export function announce(text) {
  const live = document.getElementById("live");
  if (live) live.textContent = text;
}
