// One run of an @ag-ui/client agent, summarised for the Rust tests: the
// event types it saw, its run errors, the failure that ended it (a verifier
// or schema error), and what its reducer built (messages, state, interrupts).
//
// `parameters` are runAgent's (runId, forwardedProps, resume, …). `abortAfter`,
// when given, is asked after every event whether to abort the run there
// (`agent.abortRun()`, as a UI's stop button does).
export async function summarize(agent, parameters = { runId: "run-under-test" }, { abortAfter } = {}) {
  const types = [];
  const runErrors = [];
  let failure = null;
  let outcome = null;
  let aborted = false;
  let ran = null;
  try {
    ran = await agent.runAgent(parameters, {
      onEvent: ({ event }) => {
        types.push(event.type);
        if (!aborted && abortAfter && abortAfter(event, types)) {
          aborted = true;
          agent.abortRun();
        }
      },
      onRunErrorEvent: ({ event }) => {
        runErrors.push({ message: event.message, code: event.code });
      },
      onRunFinishedEvent: ({ outcome: finished }) => {
        outcome = finished;
      },
      onRunFailed: ({ error }) => {
        failure = String(error && error.message ? error.message : error);
      },
    });
  } catch (e) {
    failure = failure ?? String(e && e.message ? e.message : e);
  }
  return {
    failure,
    aborted,
    types,
    runErrors,
    // RUN_FINISHED's outcome as the client read it ("success", "interrupt",
    // "cancelled"; null when the run did not finish).
    outcome,
    // What runAgent resolved to: the run's result and the messages it added.
    result: ran?.result ?? null,
    newMessages: ran?.newMessages ?? [],
    messages: agent.messages,
    state: agent.state,
    pendingInterrupts: agent.pendingInterrupts ?? [],
  };
}
