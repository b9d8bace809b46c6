//! The exec runtime through a real engine: Python and Node programs (the
//! examples under `examples/exec/` and small ones written here), each
//! message a real process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine;

use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::status_text;
use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{A2AError, Message, PartContent, StreamResponse, Task, TaskState};
use switchboard_runtimes::exec::{ExecAgent, ExecConfig, ExecMode};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/exec")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A handler over an exec agent; the agent is shared so tests can watch it.
fn serve(config: ExecConfig) -> (RequestHandler, std::sync::Arc<ExecAgent>) {
    let agent = std::sync::Arc::new(ExecAgent::new(config).unwrap());
    let card = agent.card("exec test", "runs a program");
    (RequestHandler::builder(agent.clone(), card).build(), agent)
}

/// The Python interpreter itself: `python3` on `PATH` may be a wrapper
/// script (pyenv's shim) that adds variables of its own.
fn interpreter() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A Python program given as source, written to `dir`.
fn python(dir: &tempfile::TempDir, source: &str) -> ExecConfig {
    let path = dir.path().join("program.py");
    std::fs::write(&path, source).unwrap();
    ExecConfig::new(interpreter()).args(["-u", path.to_str().unwrap()])
}

fn call() -> CallContext {
    let mut call = CallContext::anonymous();
    call.activated_extensions
        .push(TASK_PROGRESS_URI.to_string());
    call
}

async fn send(h: &RequestHandler, message: Message) -> Task {
    engine::send(h, &call(), message).await
}

/// Starts a task and returns as soon as it exists.
async fn start(h: &RequestHandler, text: &str) -> Result<Task, A2AError> {
    engine::start(h, &call(), text).await
}

async fn get(h: &RequestHandler, id: &str) -> Task {
    engine::get(h, &call(), id).await
}

fn artifact_text(task: &Task, name: &str) -> String {
    task.artifacts
        .iter()
        .flatten()
        .find(|a| a.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no artifact {name}: {task:?}"))
        .parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => t.as_str(),
            _ => "",
        })
        .collect()
}

/// Polls `cond` every 20 ms until it holds, for at most 20 s.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn alive(pid: u32) -> bool {
    // Reaped processes leave no /proc entry; a zombie would still have one.
    PathBuf::from(format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn a_program_written_for_a2a_cli_exec_runs_unchanged() {
    let (h, _) = serve(ExecConfig::new("python3").args(["-u", &example("a2a_cli_reverse.py")]));
    let task = send(&h, Message::user_text("hello world\nabc")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(artifact_text(&task, "output"), "dlrow olleh\ncba\n");

    // Its failure: exit 2, stderr quoted in the failed status.
    let task = send(&h, Message::user_text("   ")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = status_text(&task.status);
    assert!(why.contains("exited with code 2"), "{why}");
    assert!(why.contains("nothing to reverse"), "{why}");
}

#[tokio::test]
async fn text_mode_streams_chunks_at_the_delimiter() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = python(
        &dir,
        "import sys\nfor w in sys.stdin.read().split():\n    print(w)\n",
    );
    config.chunk = Some("\n".into());
    let (h, _) = serve(config);
    let events = engine::stream(&h, &call(), "one two three").await;
    assert_eq!(
        chunks(&events),
        vec![
            ("one".to_string(), false, false),
            ("two".to_string(), true, false),
            ("three".to_string(), true, false),
            (String::new(), true, true),
        ]
    );
    let Some(StreamResponse::StatusUpdate(last)) = events.last() else {
        panic!("ends with a status: {events:?}")
    };
    assert_eq!(last.status.state, TaskState::Completed);
}

/// Each artifact update's text, `append` and `last_chunk`, in order.
fn chunks(events: &[StreamResponse]) -> Vec<(String, bool, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(u) => Some((u.artifact.text(), u.append, u.last_chunk)),
            _ => None,
        })
        .collect()
}

/// The Python and Node examples hold the same conversation: artifact
/// chunks with a progress tracker, a question, the answer on stdin.
async fn lines_conversation(config: ExecConfig) {
    let (h, agent) = serve(config.mode(ExecMode::Lines));
    let events = engine::stream(&h, &call(), "to be or not").await;
    assert_eq!(
        chunks(&events),
        vec![
            ("TO ".to_string(), false, false),
            ("BE ".to_string(), true, false),
            ("OR ".to_string(), true, false),
            ("NOT ".to_string(), true, false),
            ("!".to_string(), true, true),
        ]
    );
    let progress: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::StatusUpdate(u) => u.metadata.as_ref()?.get(TASK_PROGRESS_URI).cloned(),
            _ => None,
        })
        .collect();
    assert!(!progress.is_empty(), "progress reported: {events:?}");
    let last = progress.last().unwrap().to_string();
    assert!(last.contains("\"words\""), "{last}");
    let Some(StreamResponse::StatusUpdate(asked)) = events.last() else {
        panic!("ends with a status: {events:?}")
    };
    assert_eq!(asked.status.state, TaskState::InputRequired);
    assert!(status_text(&asked.status).contains("What is your name?"));
    assert_eq!(agent.running(), 1, "the program waits for the answer");

    let answer = Message::user_text("Ada")
        .with_task_id(asked.task_id.clone())
        .with_context_id(asked.context_id.clone());
    let task = send(&h, answer).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(artifact_text(&task, "shout"), "TO BE OR NOT !");
    assert_eq!(
        artifact_text(&task, "greeting"),
        "Hello, Ada! You sent 4 words."
    );
    eventually("the program to exit and free its slot", || {
        agent.running() == 0
    })
    .await;
}

#[tokio::test]
async fn lines_mode_python_example_streams_progress_and_asks() {
    lines_conversation(ExecConfig::new("python3").args(["-u", &example("lines_agent.py")])).await;
}

#[tokio::test]
async fn lines_mode_node_example_streams_progress_and_asks() {
    lines_conversation(ExecConfig::new("node").args([example("lines_agent.mjs")])).await;
}

#[tokio::test]
async fn an_answer_with_no_program_waiting_fails_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = python(
        &dir,
        "import json,sys\nsys.stdin.readline()\nprint(json.dumps({'type':'ask','text':'well?'}), flush=True)\nsys.stdin.readline()\n",
    )
    .mode(ExecMode::Lines);
    config.ask_timeout = Duration::from_millis(100);
    let (h, agent) = serve(config);
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::InputRequired, "{task:?}");
    eventually("the unanswered program to be stopped", || {
        agent.running() == 0
    })
    .await;
    let answer = Message::user_text("late").with_task_id(task.id.clone());
    let task = send(&h, answer).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert!(
        status_text(&task.status).contains("no program is waiting"),
        "{task:?}"
    );
}

#[tokio::test]
async fn a_crash_fails_the_task_with_a_bounded_stderr_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = python(
        &dir,
        "import sys\nsys.stderr.write('x' * 100000)\nsys.stderr.write('\\nTraceback: boom')\nsys.exit(3)\n",
    );
    config.stderr_tail_bytes = 200;
    let (h, _) = serve(config);
    let task = send(&h, Message::user_text("go")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = status_text(&task.status);
    assert!(why.contains("exited with code 3"), "{why}");
    assert!(why.ends_with("Traceback: boom"), "{why}");
    assert!(why.len() < 400, "the tail is bounded: {} bytes", why.len());
}

#[tokio::test]
async fn a_malformed_line_fails_the_task_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = python(
        &dir,
        "import sys, time\nprint('{\"type\":\"status\",\"text\":\"ok\"}', flush=True)\nprint('not json', flush=True)\ntime.sleep(60)\n",
    )
    .mode(ExecMode::Lines);
    let (h, agent) = serve(config);
    let task = send(&h, Message::user_text("go")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert!(
        status_text(&task.status).contains("stdout line 2"),
        "{task:?}"
    );
    eventually("the program to be stopped", || agent.running() == 0).await;
}

#[tokio::test]
async fn cancel_sends_sigterm_then_sigkill_to_a_program_ignoring_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("signals");
    let pid_file = dir.path().join("pid");
    let mut config = python(
        &dir,
        &format!(
            "import os, signal, sys, time\n\
             def term(*_):\n    open({marker:?}, 'a').write('TERM\\n')\n\
             signal.signal(signal.SIGTERM, term)\n\
             open({pid:?} + '.tmp', 'w').write(str(os.getpid()))\n\
             os.rename({pid:?} + '.tmp', {pid:?})\n\
             while True:\n    time.sleep(0.05)\n",
            marker = marker.to_str().unwrap(),
            pid = pid_file.to_str().unwrap(),
        ),
    );
    config.kill_grace = Duration::from_millis(300);
    let (h, agent) = serve(config);
    let task = start(&h, "go").await.unwrap();
    eventually("the program to start", || pid_file.exists()).await;
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().parse().unwrap();
    assert!(alive(pid));

    let canceled = engine::cancel(&h, &call(), &task.id).await;
    assert_eq!(canceled.status.state, TaskState::Canceled);
    eventually("the program to be killed and reaped", || !alive(pid)).await;
    let signals = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(signals, "TERM\n", "SIGTERM came first, then SIGKILL");
    eventually("its slot to be freed", || agent.running() == 0).await;
    assert_eq!(get(&h, &task.id).await.status.state, TaskState::Canceled);
}

#[tokio::test]
async fn beyond_max_concurrent_a_message_is_refused_not_queued() {
    let dir = tempfile::tempdir().unwrap();
    // Waits for stdin to close... which text mode does at once: so it
    // waits on a file instead, until the test is done with it.
    let gate = dir.path().join("gate");
    let mut config = python(
        &dir,
        &format!(
            "import os, time\nwhile not os.path.exists({gate:?}):\n    time.sleep(0.02)\nprint('done')\n",
            gate = gate.to_str().unwrap()
        ),
    );
    config.max_concurrent = 1;
    let (h, agent) = serve(config);
    let first = start(&h, "one").await.unwrap();
    assert_eq!(agent.running(), 1);
    let refused = start(&h, "two").await.unwrap_err();
    assert!(
        matches!(&refused, A2AError::ResourceExhausted(m) if m.contains("max_concurrent")),
        "{refused:?}"
    );
    std::fs::write(&gate, "").unwrap();
    eventually("the first run to end", || agent.running() == 0).await;
    let first = get(&h, &first.id).await;
    assert_eq!(first.status.state, TaskState::Completed, "{first:?}");
    let again = send(&h, Message::user_text("three")).await;
    assert_eq!(again.status.state, TaskState::Completed, "{again:?}");
}

#[tokio::test]
async fn huge_output_is_cut_off_at_max_output_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = python(
        &dir,
        "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n",
    );
    config.max_output_bytes = 100_000;
    let (h, agent) = serve(config);
    let task = send(&h, Message::user_text("go")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert!(
        status_text(&task.status).contains("more than 100000 bytes"),
        "{task:?}"
    );
    assert!(
        task.artifacts.as_ref().is_none_or(Vec::is_empty),
        "nothing of it kept: {task:?}"
    );
    eventually("the program to be stopped", || agent.running() == 0).await;
}

#[tokio::test]
async fn the_environment_and_working_dir_are_explicit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = python(
        &dir,
        "import os\nprint(sorted(k for k in os.environ if k not in ('LC_CTYPE',)))\nprint(os.getcwd())\nprint(os.environ['GREETING'])\n",
    );
    config.working_dir = Some(dir.path().to_path_buf());
    config.env.insert("GREETING".into(), "hi".into());
    let (h, _) = serve(config);
    let task = send(&h, Message::user_text("$(touch pwned) `id`")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    let out = artifact_text(&task, "output");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("['A2A_CONTEXT_ID', 'A2A_TASK_ID', 'GREETING', 'PATH']")
    );
    assert_eq!(
        lines.next().map(PathBuf::from),
        Some(dir.path().canonicalize().unwrap())
    );
    assert_eq!(lines.next(), Some("hi"));
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn canceling_a_task_waiting_for_an_answer_stops_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let config = python(
        &dir,
        "import json, sys\nsys.stdin.readline()\nprint(json.dumps({'type': 'ask', 'text': 'well?'}), flush=True)\nsys.stdin.readline()\n",
    )
    .mode(ExecMode::Lines);
    // ask_timeout stays at its default (10 minutes): only the cancel can free the slot.
    let (h, agent) = serve(config);
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::InputRequired, "{task:?}");
    assert_eq!(agent.running(), 1);
    engine::cancel(&h, &call(), &task.id).await;
    eventually("the waiting program to be stopped", || agent.running() == 0).await;
}
