//! Running a parsed command: connect, make the A2A call, and hand every
//! result to [`Output`]. Streams (`stream`, `subscribe`) are followed to
//! their end; `get --watch` polls. The exit code is decided here, from the
//! last task state seen.

use std::io::Write;
use std::time::Duration;

use futures::StreamExt;
use switchboard_client::follow::{self, Trail};
use switchboard_client::{A2AClient, ClientBuilder, EventStream};
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{
    A2aRequest, GetTaskRequest, ListTasksRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, Task, TaskState,
};

use super::args::{ClientCommand, ConnectArgs, MessageArgs};
use switchboard_printer::{Failure, Output};

/// Exit code: the task ended in a state the caller should notice.
pub(super) const EXIT_TASK_FAILED: u8 = 1;
/// Exit code: usage, connection or protocol error.
pub(super) const EXIT_ERROR: u8 = 2;
/// Default pause between two GetTask calls of `get --watch`.
const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_millis(500);

pub(super) async fn execute<O: Write, E: Write>(
    cmd: ClientCommand,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    match cmd {
        ClientCommand::Card { conn } => {
            let card = builder(&conn)?.fetch_card(&conn.url).await?;
            out.card(&card);
            Ok(0)
        }
        ClientCommand::Send {
            conn,
            message,
            return_immediately,
        } => {
            let client = connect(&conn, false).await?;
            let mut req = message_request(message);
            if return_immediately {
                req.configuration
                    .get_or_insert_with(SendMessageConfiguration::default)
                    .return_immediately = true;
            }
            out.waiting("waiting for the agent's answer");
            let answer = client.send_message(req).await;
            out.done_waiting();
            match answer? {
                SendMessageResponse::Task(task) => {
                    out.task(&task, false);
                    Ok(exit_for(Some(task.status.state), true))
                }
                SendMessageResponse::Message(msg) => {
                    out.message(&msg);
                    Ok(0)
                }
                other => {
                    out.unknown(&other);
                    Ok(0)
                }
            }
        }
        ClientCommand::Stream {
            conn,
            message,
            agui: true,
            no_progress,
            ..
        } => {
            // The extension's data reaches the AG-UI stream only when
            // activated, as on the A2A stream.
            let client = connect(&conn, !no_progress).await?;
            let request = A2aRequest::SendStreamingMessage(message_request(message));
            let mut stream = client.agui_stream(request, None).await?;
            let mut failed = false;
            while let Some(item) = stream.next().await {
                let item = item?;
                failed |= switchboard_printer::agui::is_run_error(&item.event);
                out.agui(&item.event);
            }
            Ok(if failed { EXIT_TASK_FAILED } else { 0 })
        }
        ClientCommand::Stream {
            conn,
            message,
            no_progress,
            ..
        } => {
            let client = connect(&conn, !no_progress).await?;
            let stream = client
                .send_streaming_message(message_request(message))
                .await?;
            let last = follow(stream, out).await?;
            Ok(exit_for(last, true))
        }
        ClientCommand::Get {
            conn,
            id,
            history_length,
            watch: watching,
            interval,
            no_progress,
        } => {
            let request = GetTaskRequest {
                tenant: None,
                id,
                history_length,
            };
            if !watching {
                let client = connect(&conn, false).await?;
                let task = client.get_task(request).await?;
                out.task(&task, true);
                return Ok(exit_for(Some(task.status.state), false));
            }
            let pause = match interval {
                None => DEFAULT_WATCH_INTERVAL,
                Some(secs) => Duration::try_from_secs_f64(secs)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        Failure::Usage(format!("--interval {secs}: must be a positive number"))
                    })?,
            };
            let client = connect(&conn, !no_progress).await?;
            watch(&client, request, pause, out).await
        }
        ClientCommand::List {
            conn,
            context_id,
            state,
            page_size,
            page_token,
            include_artifacts,
        } => {
            let client = connect(&conn, false).await?;
            let page = client
                .list_tasks(ListTasksRequest {
                    context_id,
                    status: state,
                    page_size,
                    page_token,
                    include_artifacts: include_artifacts.then_some(true),
                    ..Default::default()
                })
                .await?;
            out.list(&page);
            Ok(0)
        }
        ClientCommand::Cancel { conn, id } => {
            let client = connect(&conn, false).await?;
            let task = client.cancel_task(id.as_str()).await?;
            out.task(&task, false);
            Ok(0)
        }
        ClientCommand::PushConfig(cmd) => super::push_config::execute(cmd, out).await,
        ClientCommand::Subscribe {
            conn,
            id,
            no_progress,
        } => {
            let client = connect(&conn, !no_progress).await?;
            let stream = client.subscribe_to_task(id.as_str()).await?;
            let last = follow(stream, out).await?;
            Ok(exit_for(last, false))
        }
    }
}

/// 1 for FAILED and REJECTED (and CANCELED when `canceled_is_failure`).
pub(super) fn exit_for(state: Option<TaskState>, canceled_is_failure: bool) -> u8 {
    match state {
        Some(TaskState::Failed | TaskState::Rejected) => EXIT_TASK_FAILED,
        Some(TaskState::Canceled) if canceled_is_failure => EXIT_TASK_FAILED,
        _ => 0,
    }
}

pub(super) fn builder(conn: &ConnectArgs) -> Result<ClientBuilder, Failure> {
    let options = conn.agent.settings().options();
    Ok(options
        .map_err(|e| Failure::Usage(e.to_string()))?
        .builder())
}

/// Connects; `progress` activates the task-progress extension.
pub(super) async fn connect(conn: &ConnectArgs, progress: bool) -> Result<A2AClient, Failure> {
    let mut b = builder(conn)?;
    if progress {
        b = b.extension(TASK_PROGRESS_URI);
    }
    Ok(b.connect(&conn.url).await?)
}

fn message_request(args: MessageArgs) -> SendMessageRequest {
    let mut msg = Message::user_text(args.text.join(" "));
    msg.context_id = args.context_id;
    msg.task_id = args.task_id;
    msg.reference_task_ids = args.reference_tasks;
    let mut req = SendMessageRequest::new(msg);
    if args.history_length.is_some() {
        req.configuration = Some(SendMessageConfiguration {
            history_length: args.history_length,
            ..Default::default()
        });
    }
    req
}

/// Prints a stream to its end; returns the last task state seen.
async fn follow<O: Write, E: Write>(
    mut stream: EventStream,
    out: &mut Output<O, E>,
) -> Result<Option<TaskState>, Failure> {
    let mut trail = Trail::default();
    while let Some(item) = stream.next().await {
        let item = item?;
        trail.observe(&item.event);
        out.event(&item.event, item.seq);
    }
    out.close_artifact();
    out.end_progress();
    if let (Some(id), Some(state)) = (&trail.task_id, trail.state) {
        out.summary(id, state);
    }
    Ok(trail.state)
}

/// `get --watch`: prints what changed at each poll until the task is
/// terminal or interrupted; returns the exit code (as `get` does).
async fn watch<O: Write, E: Write>(
    client: &A2AClient,
    request: GetTaskRequest,
    pause: Duration,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    let mut tasks = std::pin::pin!(follow::watch(client, request, pause));
    let mut previous: Option<Task> = None;
    while let Some(task) = tasks.next().await {
        let task = task?;
        out.watched(previous.as_ref(), &task);
        previous = Some(task);
    }
    out.end_progress();
    let state = previous.map(|task| {
        out.summary(&task.id, task.status.state);
        task.status.state
    });
    Ok(exit_for(state, false))
}
