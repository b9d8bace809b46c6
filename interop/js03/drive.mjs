// Drive switchboard's A2A 0.3 dialects with the official JS SDK of the 0.3
// line (@a2a-js/sdk 0.3.x).
//
// Usage: node drive.mjs BASE_URL {jsonrpc|rest}
//
// Reads the hybrid card, then runs send (blocking and not), get, cancel,
// stream, resubscribe, push config set/get/list/delete and an error case over
// the chosen transport. Prints one line per step and, last,
// "interop: N passed, M failed". Exit code 0 only if every step passed.
import { randomUUID } from 'node:crypto';
import { DefaultAgentCardResolver, JsonRpcTransport, RestTransport } from '@a2a-js/sdk/client';

const [base, binding] = [process.argv[2].replace(/\/$/, ''), process.argv[3]];
let passed = 0;
let failed = 0;
function step(name, ok, detail) {
  if (ok) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name} ${JSON.stringify(detail)}`);
  }
}

const msg = (text) => ({
  kind: 'message',
  messageId: randomUUID(),
  role: 'user',
  parts: [{ kind: 'text', text }],
});
const params = (text, blocking = true) => ({ message: msg(text), configuration: { blocking } });

async function collect(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

async function run() {
  const card = await new DefaultAgentCardResolver().resolve(base);
  step('card', card.url.replace(/\/$/, '') === base && card.protocolVersion.startsWith('0.3'), card);
  const t = binding === 'jsonrpc'
    ? new JsonRpcTransport({ endpoint: `${base}/` })
    : new RestTransport({ endpoint: base });

  let r = await t.sendMessage(params('hello from js 0.3'));
  step('send blocking', r.kind === 'task' && r.status.state === 'completed', r);
  const done = r.id;

  r = await t.sendMessage(params('/long 20', false));
  step('send non-blocking', r.kind === 'task' && ['submitted', 'working'].includes(r.status.state), r);
  const longId = r.id;

  const g = await t.getTask({ id: done, historyLength: 1 });
  step('get', g.id === done && (g.history ?? []).length === 1, g);

  const c = await t.cancelTask({ id: longId });
  step('cancel', c.status.state === 'canceled', c);

  let events = await collect(t.sendMessageStream(params('stream from js 0.3')));
  let last = events[events.length - 1];
  step('stream', events[0].kind === 'task' && last.kind === 'status-update' && last.final === true
    && last.status.state === 'completed', events);

  // The demo agent's AG-UI-hinted parts (issue 18) are ordinary 0.3 parts
  // whose metadata carries the agui_* hints. The SDK's REST transport drops
  // every part's metadata when it converts the protobuf JSON form (its
  // `FromProto.part` copies only the content), so over REST only the parts
  // themselves can be checked; the server does send the hints there
  // (crates/switchboard/tests/agui_stream.rs and the Python 0.3 driver see them).
  events = await collect(t.sendMessageStream(params('/tool count these words')));
  last = events[events.length - 1];
  const hinted = events.filter((e) => e.kind === 'artifact-update').flatMap((e) => e.artifact.parts);
  const hintsKept = binding !== 'rest';
  step('agui hints', last.kind === 'status-update' && last.final === true && last.status.state === 'completed'
    && hinted.length > 0
    && hinted.some((p) => p.kind === 'data' && p.data.name === 'word_count')
    && (!hintsKept || (hinted.every((p) => Object.keys(p.metadata ?? {}).some((k) => k.startsWith('agui_')))
      && hinted.some((p) => p.metadata.agui_event_type === 'tool_call')
      && hinted.filter((p) => p.metadata.agui_is_error === true).length === 1)), events);

  r = await t.sendMessage(params('/long 1', false));
  events = await collect(t.resubscribeTask({ id: r.id }));
  last = events[events.length - 1];
  step('resubscribe', last.kind === 'status-update' && last.final === true && last.status.state === 'completed', events);

  const set = await t.setTaskPushNotificationConfig({
    taskId: done,
    pushNotificationConfig: { id: 'cfg-js', url: 'https://hooks.example.com/js03', token: 'tok' },
  });
  step('push set', set.taskId === done && set.pushNotificationConfig.url === 'https://hooks.example.com/js03', set);
  const cid = set.pushNotificationConfig.id;

  const got = await t.getTaskPushNotificationConfig({ id: done, pushNotificationConfigId: cid });
  step('push get', got.pushNotificationConfig.id === cid, got);

  const list = await t.listTaskPushNotificationConfig({ id: done });
  step('push list', list.length === 1 && list[0].pushNotificationConfig.id === cid, list);

  await t.deleteTaskPushNotificationConfig({ id: done, pushNotificationConfigId: cid });
  const after = await t.listTaskPushNotificationConfig({ id: done });
  step('push delete', after.length === 0, after);

  try {
    await t.getTask({ id: 'no-such-task' });
    step('unknown task', false, 'no error');
  } catch (e) {
    step('unknown task', /not found|404|-32001/i.test(String(e?.message ?? e)), String(e));
  }
}

try {
  await run();
} catch (e) {
  console.log(String(e?.stack ?? e));
  failed += 1;
}
console.log(`interop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
