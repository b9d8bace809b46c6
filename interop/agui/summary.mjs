// One run of an @ag-ui/client agent, summarised for the Rust tests: the
// event types it saw, its run errors, the failure that ended it (a verifier
// or schema error), and what its reducer built (messages, state, interrupts).
export async function summarize(agent) {
  const types = [];
  const runErrors = [];
  let failure = null;
  try {
    await agent.runAgent(
      { runId: "run-under-test" },
      {
        onEvent: ({ event }) => {
          types.push(event.type);
        },
        onRunErrorEvent: ({ event }) => {
          runErrors.push({ message: event.message, code: event.code });
        },
        onRunFailed: ({ error }) => {
          failure = String(error && error.message ? error.message : error);
        },
      },
    );
  } catch (e) {
    failure = failure ?? String(e && e.message ? e.message : e);
  }
  return {
    failure,
    types,
    runErrors,
    messages: agent.messages,
    state: agent.state,
    pendingInterrupts: agent.pendingInterrupts ?? [],
  };
}
