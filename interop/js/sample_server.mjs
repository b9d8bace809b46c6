// Sample A2A 1.0 agent on the official JS SDK (@a2a-js/sdk 1.3.0) + Express 5.
//
// Same layout as shared/peers-bench/js/server.mjs (AgentExecutor +
// DefaultRequestHandler + InMemoryTaskStore, agentCardHandler +
// jsonRpcHandler mounted at "/", one Node process on 127.0.0.1), with an agent
// that implements the "demo-agent contract" used by the interop drivers:
//
//   ordinary text  -> Task: SUBMITTED, WORKING, artifact "echo: <text>" sent
//                     as two chunks (append), COMPLETED
//   /long S        -> Task that stays WORKING, with a status update every
//                     0.5 s, for S seconds (then artifact + COMPLETED) unless
//                     cancelled
//   /message X     -> a direct agent Message "X" (no task)
//   /ask           -> Task in INPUT_REQUIRED; the follow-up message on the same
//                     taskId/contextId completes it with "Hello, <answer>!"
//
// Usage: node sample_server.mjs --port 41241
import express from 'express';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const TICK_MS = 500;
const { values: args } = parseArgs({ options: { port: { type: 'string', default: '41241' } } });
const PORT = Number(args.port);

const textPart = (value) => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const agentMessage = (text, taskId, contextId) => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class DemoAgentExecutor {
  // task id -> { contextId, cancelled }
  tasks = new Map();

  status(eventBus, taskId, contextId, state, text) {
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state,
          message: text === undefined ? undefined : agentMessage(text, taskId, contextId),
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      })
    );
  }

  artifact(eventBus, taskId, contextId, { artifactId, name, text, append, lastChunk }) {
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId, name, description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
        append,
        lastChunk,
        metadata: undefined,
      })
    );
  }

  async execute(requestContext, eventBus) {
    const { taskId, contextId, task: existing, userMessage } = requestContext;
    const text = userMessage.parts
      .filter((p) => p.content?.$case === 'text')
      .map((p) => p.content.value)
      .join('')
      .trim();

    if (!existing && text.startsWith('/message')) {
      eventBus.publish(AgentEvent.message(agentMessage(text.slice('/message'.length).trim(), '', contextId)));
      return;
    }

    // The JS SDK requires a Task (or Message) as the first event of every
    // execute() call, follow-up turns included.
    const task = existing ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [userMessage],
      metadata: undefined,
    };
    eventBus.publish(AgentEvent.task(task));
    const entry = this.tasks.get(taskId) ?? { contextId, cancelled: false };
    this.tasks.set(taskId, entry);

    try {
      if (existing?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        // Follow-up to /ask: the user's text is the answer.
        this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_WORKING);
        this.artifact(eventBus, taskId, contextId, {
          artifactId: `${taskId}-answer`, name: 'answer', text: `Hello, ${text}!`, append: false, lastChunk: true,
        });
        this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_COMPLETED);
        return;
      }

      if (text === '/ask') {
        this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'What is your name?');
        return;
      }

      if (text.startsWith('/long')) {
        const arg = text.slice('/long'.length).trim();
        const seconds = arg ? Number(arg) : 30;
        this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_WORKING, 'long task started');
        const deadline = Date.now() + seconds * 1000;
        let tick = 0;
        while (Date.now() < deadline) {
          await sleep(TICK_MS);
          if (entry.cancelled) return; // cancelTask already published CANCELED
          tick += 1;
          this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_WORKING, `tick ${tick}`);
        }
        this.artifact(eventBus, taskId, contextId, {
          artifactId: `${taskId}-long`, name: 'long', text: `long task finished after ${tick} ticks`,
          append: false, lastChunk: true,
        });
        this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_COMPLETED);
        return;
      }

      // Ordinary text: working, artifact in two chunks, completed.
      this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_WORKING, 'working');
      const artifactId = `${taskId}-echo`;
      this.artifact(eventBus, taskId, contextId, { artifactId, name: 'echo', text: 'echo: ', append: false, lastChunk: false });
      await sleep(50);
      this.artifact(eventBus, taskId, contextId, { artifactId, name: 'echo', text, append: true, lastChunk: true });
      this.status(eventBus, taskId, contextId, TaskState.TASK_STATE_COMPLETED);
    } finally {
      // Keep the entry (for cancelTask's contextId) only while the task waits for input.
      const waitsForInput = !existing && text === '/ask';
      if (!waitsForInput) this.tasks.delete(taskId);
    }
  }

  cancelTask = async (taskId, eventBus) => {
    const entry = this.tasks.get(taskId);
    if (entry) entry.cancelled = true;
    this.status(eventBus, taskId, entry?.contextId ?? '', TaskState.TASK_STATE_CANCELED, 'canceled by request');
  };
}

const agentCard = {
  name: 'Switchboard Interop Sample (js)',
  description: 'Demo-agent contract on @a2a-js/sdk 1.3.0: echo, /long S, /message X, /ask',
  supportedInterfaces: [
    { url: `http://127.0.0.1:${PORT}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
  ],
  version: '0.1.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'demo', name: 'Demo', description: 'Echo text as an artifact; /long S; /message X; /ask',
      tags: ['demo', 'echo'], examples: ['hello', '/long 5', '/message hi', '/ask'],
      inputModes: [], outputModes: [], securityRequirements: [],
    },
  ],
  documentationUrl: '',
  signatures: [],
};

const requestHandler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), new DemoAgentExecutor());
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.listen(PORT, '127.0.0.1', (err) => {
  if (err) throw err;
  console.log(`js sample agent on http://127.0.0.1:${PORT}/`);
});
