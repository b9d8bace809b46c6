// Drive an A2A 1.0 JSON-RPC agent with the official JS client (@a2a-js/sdk 1.3.0).
//
// Usage: node drive.mjs [--agui-hints] URL     (agent card at URL/.well-known/agent-card.json)
//
// --agui-hints also runs the `think` and `tool` steps: switchboard's demo agent's
// AG-UI-hinted parts must reach the SDK as ordinary, valid A2A.
//
// Runs the demo-agent scenario (see interop/README.md), printing one JSON line
// per step {"step", "ok", "detail"} and a final line
// "interop: N passed, M failed". Exit code 0 only if every step passed.
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentCardResolver, ClientFactory } from '@a2a-js/sdk/client';

const STEP_TIMEOUT_MS = 20_000;
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const stateName = (s) => TaskState[s] ?? `UNKNOWN(${s})`;

class CheckFailed extends Error {}
function check(cond, msg) {
  if (!cond) throw new CheckFailed(msg);
}

function userMessage(text, taskId = '', contextId = '') {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const partsText = (parts = []) =>
  parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
const artifactsText = (task) => (task.artifacts ?? []).map((a) => partsText(a.parts)).join('');
// The client returns Task | Message for SendMessage; the SDK itself tells them apart by messageId.
const isMessage = (result) => 'messageId' in result;

function eventSummary(ev) {
  const p = ev.payload;
  if (!p) return 'empty';
  if (p.$case === 'task') return `task:${stateName(p.value.status?.state)}`;
  if (p.$case === 'statusUpdate') return `status:${stateName(p.value.status?.state)}`;
  if (p.$case === 'artifactUpdate') return `artifact:${JSON.stringify(partsText(p.value.artifact?.parts))}`;
  return p.$case;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class Driver {
  constructor(url, hinted = false) {
    this.url = url.endsWith('/') ? url : `${url}/`;
    this.aguiHints = hinted; // also run the `think` and `tool` steps (switchboard's demo agent)
    this.passed = 0;
    this.failed = 0;
    this.agentCard = undefined;
    this.client = undefined;
    this.longTask = undefined;
    this.subEvents = [];
    this.subAbort = new AbortController();
    this.subDone = undefined; // Promise of the background subscription
    this.subFirst = undefined; // Promise resolved at the first event (or end)
  }

  report(step, ok, detail) {
    if (ok) this.passed += 1;
    else this.failed += 1;
    console.log(JSON.stringify({ step, ok, detail }));
  }

  async runStep(name, fn) {
    try {
      const detail = await withTimeout(fn.call(this), STEP_TIMEOUT_MS, name);
      this.report(name, true, detail);
    } catch (e) {
      const detail = e instanceof CheckFailed ? e.message : `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
      this.report(name, false, detail);
    }
  }

  opts() {
    return { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) };
  }

  send(text, { taskId = '', contextId = '', returnImmediately } = {}) {
    const params = { tenant: '', message: userMessage(text, taskId, contextId), metadata: undefined };
    if (returnImmediately !== undefined) params.configuration = { returnImmediately };
    return this.client.sendMessage(params, this.opts());
  }

  // ---- steps ---------------------------------------------------------------

  async card() {
    this.agentCard = await AgentCardResolver.default.resolve(this.url);
    check(typeof this.agentCard?.name === 'string' && this.agentCard.name.length > 0, 'card name is empty');
    this.client = await new ClientFactory().createFromAgentCard(this.agentCard);
    const interfaces = (this.agentCard.supportedInterfaces ?? []).map((i) => [i.protocolBinding, i.url, i.protocolVersion]);
    return {
      name: this.agentCard.name,
      streaming: this.agentCard.capabilities?.streaming,
      interfaces,
      transport: this.client.transport.protocolName,
    };
  }

  async sendBlocking() {
    const result = await this.send('hello interop');
    check(!isMessage(result), 'expected a Task, got a Message');
    const state = stateName(result.status?.state);
    check(result.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${state}, expected COMPLETED`);
    const text = artifactsText(result);
    check(text.includes('hello interop'), `artifact text ${JSON.stringify(text)} lacks the input`);
    return { task_id: result.id, state, artifact_text: text };
  }

  async sendMessageReply() {
    const result = await this.send('/message hi');
    check(isMessage(result), `expected a Message, got a Task in ${stateName(result.status?.state)}`);
    const text = partsText(result.parts);
    check(text.includes('hi'), `reply text ${JSON.stringify(text)} lacks "hi"`);
    check(result.role === Role.ROLE_AGENT, `reply role ${Role[result.role]}, expected ROLE_AGENT`);
    return { text, role: Role[result.role], task_id: result.taskId };
  }

  async sendNonblocking() {
    const result = await this.send('/long 30', { returnImmediately: true });
    check(!isMessage(result), 'expected a Task, got a Message');
    const state = stateName(result.status?.state);
    check(
      [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(result.status?.state),
      `state ${state}, expected SUBMITTED or WORKING`
    );
    check(Boolean(result.id), 'task has no id');
    this.longTask = result;
    return { task_id: result.id, context_id: result.contextId, state };
  }

  async get() {
    check(this.longTask, 'skipped: send_nonblocking produced no task');
    const task = await this.client.getTask({ tenant: '', id: this.longTask.id }, this.opts());
    const state = stateName(task.status?.state);
    check(task.id === this.longTask.id, `got task id ${JSON.stringify(task.id)}, expected ${this.longTask.id}`);
    check(!TERMINAL.has(task.status?.state), `state ${state} is terminal, expected the long task running`);
    return { task_id: task.id, state };
  }

  async list() {
    check(this.longTask, 'skipped: send_nonblocking produced no task');
    const ctx = this.longTask.contextId;
    // Pass the full request shape: the client's toJSON turns an omitted `status`
    // into "UNRECOGNIZED" (see README, SDK quirks).
    const request = {
      tenant: '', contextId: ctx, status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: undefined, pageToken: '',
      historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined,
    };
    const resp = await this.client.listTasks(request, this.opts());
    const ids = resp.tasks.map((t) => t.id);
    check(ids.includes(this.longTask.id), `task ${this.longTask.id} not in ListTasks(contextId) result ${JSON.stringify(ids)}`);
    const others = resp.tasks.filter((t) => t.contextId !== ctx).map((t) => t.id);
    check(others.length === 0, `contextId filter not applied: ${JSON.stringify(others)}`);
    return { count: ids.length, total_size: resp.totalSize, page_size: resp.pageSize };
  }

  async subscribe() {
    check(this.longTask, 'skipped: send_nonblocking produced no task');
    let markFirst;
    this.subFirst = new Promise((resolve) => (markFirst = resolve));
    this.subDone = (async () => {
      try {
        const stream = this.client.resubscribeTask(
          { tenant: '', id: this.longTask.id },
          { signal: this.subAbort.signal }
        );
        for await (const ev of stream) {
          this.subEvents.push(ev);
          markFirst();
        }
      } finally {
        markFirst();
      }
    })();
    this.subDone.catch(() => {}); // errors are inspected in cancel()
    await this.subFirst;
    if (this.subEvents.length === 0) await this.subDone; // surfaces the stream error, if any
    check(this.subEvents.length > 0, 'subscription ended without any event');
    const first = this.subEvents[0];
    check(first.payload?.$case === 'task', `first event is ${eventSummary(first)}, expected the Task`);
    check(first.payload.value.id === this.longTask.id, `first event is task ${first.payload.value.id}`);
    return { first: eventSummary(first) };
  }

  async cancel() {
    check(this.longTask, 'skipped: send_nonblocking produced no task');
    // Let the subscription see a few WORKING updates first.
    await new Promise((r) => setTimeout(r, 1200));
    const task = await this.client.cancelTask({ tenant: '', id: this.longTask.id, metadata: undefined }, this.opts());
    const state = stateName(task.status?.state);
    check(task.id === this.longTask.id, `cancel returned task ${task.id}`);
    check(task.status?.state === TaskState.TASK_STATE_CANCELED, `cancel returned state ${state}, expected CANCELED`);
    check(this.subDone, 'no subscription was started');
    try {
      await withTimeout(this.subDone, 10_000, 'subscribe stream close after CancelTask');
    } catch (e) {
      this.subAbort.abort();
      throw e;
    }
    const summary = this.subEvents.map(eventSummary);
    check(summary.length >= 2, `subscribe stream had only ${JSON.stringify(summary)}`);
    const last = this.subEvents.at(-1).payload;
    const lastState = last?.$case === 'statusUpdate' || last?.$case === 'task' ? last.value.status?.state : undefined;
    check(lastState === TaskState.TASK_STATE_CANCELED, `subscribe stream ended with ${summary.at(-1)}, expected CANCELED`);
    const working = summary.filter((s) => s === 'status:TASK_STATE_WORKING').length;
    return { state, subscribe_events: summary.length, working_updates: working, last: summary.at(-1) };
  }

  async stream() {
    const events = [];
    const params = { tenant: '', message: userMessage('hello stream'), metadata: undefined };
    for await (const ev of this.client.sendMessageStream(params, this.opts())) events.push(ev);
    const summary = events.map(eventSummary);
    check(events.length > 0, 'stream produced no events');
    check(events[0].payload?.$case === 'task', `first event ${summary[0]}, expected a Task`);
    const arts = events.filter((e) => e.payload?.$case === 'artifactUpdate').map((e) => e.payload.value);
    check(arts.length >= 1, `no artifact update in ${JSON.stringify(summary)}`);
    const last = events.at(-1).payload;
    check(
      last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_COMPLETED,
      `last event ${summary.at(-1)}, expected status COMPLETED`
    );
    const taskId = events[0].payload.value.id;
    check(arts.every((a) => a.taskId === taskId), 'artifact update for another task id');
    const text = arts.map((a) => partsText(a.artifact?.parts)).join('');
    check(text.includes('hello stream'), `streamed artifact text ${JSON.stringify(text)} lacks the input`);
    return { events: summary, artifact_text: text };
  }

  async inputRequired() {
    const first = await this.send('/ask');
    check(!isMessage(first), 'expected a Task, got a Message');
    check(
      first.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      `/ask returned state ${stateName(first.status?.state)}, expected INPUT_REQUIRED`
    );
    const question = partsText(first.status?.message?.parts);
    const done = await this.send('Ada', { taskId: first.id, contextId: first.contextId });
    check(!isMessage(done), 'follow-up: expected a Task, got a Message');
    check(done.id === first.id, `follow-up returned task ${done.id}, expected ${first.id}`);
    check(
      done.status?.state === TaskState.TASK_STATE_COMPLETED,
      `follow-up returned state ${stateName(done.status?.state)}, expected COMPLETED`
    );
    const text = artifactsText(done);
    check(text.includes('Ada'), `artifact text ${JSON.stringify(text)} lacks "Ada"`);
    return { task_id: first.id, question, artifact_text: text };
  }

  async getUnknown() {
    const missing = `no-such-task-${randomUUID()}`;
    let task;
    try {
      task = await this.client.getTask({ tenant: '', id: missing }, this.opts());
    } catch (e) {
      // The client bundle has its own copy of the error classes, so
      // `instanceof TaskNotFoundError` (from '@a2a-js/sdk/errors') is false; use name + code.
      check(
        e?.name === 'TaskNotFoundError' && e?.envelopeCode === -32001,
        `expected TaskNotFoundError (-32001), got ${e?.name} (${e?.envelopeCode}): ${e?.message}`
      );
      return { error: e.name, code: e.envelopeCode, message: e.message, data: e.data ?? null };
    }
    throw new CheckFailed(`GetTask(${missing}) returned a task: ${JSON.stringify(task?.id)}`);
  }

  // A demo behaviour whose artifact parts carry AG-UI hints (`agui_*`
  // metadata): the SDK must parse every frame as ordinary A2A, the hints are
  // plain part metadata, and GetTask holds the same artifact text.
  async hinted(command, want, wantError) {
    const events = [];
    const params = { tenant: '', message: userMessage(command), metadata: undefined };
    for await (const ev of this.client.sendMessageStream(params, this.opts())) events.push(ev);
    check(events.length > 0, 'no events');
    const last = events.at(-1).payload;
    const state = last?.$case === 'task' ? last.value.status?.state : last?.value?.status?.state;
    check(state === TaskState.TASK_STATE_COMPLETED, `ended ${stateName(state)}, expected COMPLETED`);
    const parts = events
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .flatMap((e) => e.payload.value.artifact?.parts ?? []);
    check(parts.length > 0, 'no artifact parts streamed');
    const seen = new Set();
    let errors = 0;
    for (const part of parts) {
      const meta = part.metadata ?? {};
      check(Object.keys(meta).some((k) => k.startsWith('agui_')), `part without agui_* hints: ${JSON.stringify(meta)}`);
      for (const k of ['agui_event_type', 'agui_block_type']) if (k in meta) seen.add(String(meta[k]));
      if (meta.agui_is_error === true) errors += 1;
    }
    const missing = want.filter((w) => !seen.has(w));
    check(missing.length === 0, `hints ${JSON.stringify([...seen])} lack ${JSON.stringify(missing)}`);
    check(errors > 0 === wantError, `${errors} parts marked agui_is_error`);
    const taskId = events[0].payload.value.id;
    const stored = await this.client.getTask({ tenant: '', id: taskId }, this.opts());
    check(artifactsText(stored) === partsText(parts), 'GetTask artifact text differs from the stream');
    return { task_id: taskId, parts: parts.length, hints: [...seen].sort(), errors };
  }

  async think() {
    return this.hinted('/think why is the sky blue', ['thinking', 'text', 'code'], false);
  }

  async tool() {
    return this.hinted('/tool count these words', ['tool_call'], true);
  }

  async run() {
    await this.runStep('card', this.card);
    const steps = [
      ['send_blocking', this.sendBlocking],
      ['send_message_reply', this.sendMessageReply],
      ['send_nonblocking', this.sendNonblocking],
      ['get', this.get],
      ['list', this.list],
      ['subscribe', this.subscribe],
      ['cancel', this.cancel],
      ['stream', this.stream],
      ['input_required', this.inputRequired],
      ['get_unknown', this.getUnknown],
    ];
    if (this.aguiHints) steps.push(['think', this.think], ['tool', this.tool]);
    for (const [name, fn] of steps) {
      if (!this.client) this.report(name, false, 'skipped: no agent card / client');
      else await this.runStep(name, fn);
    }
    this.subAbort.abort();
    console.log(`interop: ${this.passed} passed, ${this.failed} failed`);
    return this.failed === 0 ? 0 : 1;
  }
}

const argv = process.argv.slice(2);
const hinted = argv[0] === '--agui-hints';
if (argv.length !== (hinted ? 2 : 1)) {
  console.error('usage: node drive.mjs [--agui-hints] URL');
  process.exit(2);
}
const code = await new Driver(argv.at(-1), hinted).run();
process.exit(code);
