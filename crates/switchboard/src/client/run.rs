//! Running a parsed command: connect, make the A2A call, and hand every
//! result to [`Output`]. Streams (`stream`, `subscribe`) are followed to
//! their end; `get --watch` polls. The exit code is decided here, from the
//! last task state seen.

use std::io::Write;
use std::time::Duration;

use futures::StreamExt;
use switchboard_client::{A2AClient, ClientBuilder, ConnectOptions, EventStream};
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{
    A2aRequest, GetTaskRequest, ListTasksRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, Task, TaskState,
};

use super::args::{AgentArgs, ClientCommand, ConnectArgs, MessageArgs};
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
    Ok(options(&conn.agent)?.builder())
}

/// What the flags say about reaching the agent, checked: the client's
/// [`ConnectOptions`] (secret values trimmed, files read).
pub(super) fn options(agent: &AgentArgs) -> Result<ConnectOptions, Failure> {
    let mut options = ConnectOptions::default();
    for h in &agent.headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(Failure::Usage(format!(
                "--header {h:?} is not in the form \"Name: value\""
            )));
        };
        options
            .headers
            .push((name.trim().to_owned(), value.trim().to_owned()));
    }
    options.api_key = agent.api_key.as_ref().map(|key| key.trim().to_owned());
    options.bearer_token = agent.token.as_ref().map(|token| token.trim().to_owned());
    if let Some(secs) = agent.timeout {
        let t = Duration::try_from_secs_f64(secs)
            .map_err(|e| Failure::Usage(format!("--timeout {secs}: {e}")))?;
        options.timeout = Some(t);
    }
    options.bindings = agent
        .binding
        .map(|b| b.card_name().to_owned())
        .into_iter()
        .collect();
    options.versions = agent.protocol_version.iter().cloned().collect();
    options.verify_card = agent.verify_card;
    if let Some(path) = &agent.ca_cert {
        let pem = std::fs::read(path)
            .map_err(|e| Failure::Usage(format!("--ca-cert {}: {e}", path.display())))?;
        options.root_certificates_pem.push(pem);
    }
    options.oauth = oauth_credentials(agent)?;
    Ok(options)
}

/// The OAuth 2.0 client credentials the flags ask for, if any.
fn oauth_credentials(
    agent: &AgentArgs,
) -> Result<Option<switchboard_client::ClientCredentials>, Failure> {
    let conn = &agent.oauth;
    let Some(token_url) = &conn.oauth_token_url else {
        if conn.oauth_client_id.is_some() || conn.oauth_client_secret_file.is_some() {
            return Err(Failure::Usage(
                "--oauth-client-id and --oauth-client-secret-file need --oauth-token-url".into(),
            ));
        }
        return Ok(None);
    };
    let Some(id) = &conn.oauth_client_id else {
        return Err(Failure::Usage(
            "--oauth-token-url needs --oauth-client-id".into(),
        ));
    };
    let secret = match &conn.oauth_client_secret_file {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            Failure::Usage(format!(
                "--oauth-client-secret-file {}: {e}",
                path.display()
            ))
        })?,
        None => std::env::var(super::args::OAUTH_CLIENT_SECRET_ENV).map_err(|_| {
            Failure::Usage(format!(
                "--oauth-token-url needs the client secret in {} or --oauth-client-secret-file",
                super::args::OAUTH_CLIENT_SECRET_ENV
            ))
        })?,
    };
    let credentials = conn.oauth_scopes.iter().fold(
        switchboard_client::ClientCredentials::new(token_url, id.trim(), secret.trim()),
        |c, scope| c.scope(scope),
    );
    Ok(Some(credentials))
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
    let mut last_state = None;
    let mut task_id = None;
    while let Some(item) = stream.next().await {
        let item = item?;
        if let Some(state) = item.event.state() {
            last_state = Some(state);
        }
        if task_id.is_none() {
            task_id = item
                .event
                .task_id()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
        out.event(&item.event, item.seq);
    }
    out.close_artifact();
    out.end_progress();
    if let (Some(id), Some(state)) = (&task_id, last_state) {
        out.summary(id, state);
    }
    Ok(last_state)
}

/// `get --watch`: polls the task until it is terminal or interrupted and
/// prints what changed; returns the exit code (as `get` does).
async fn watch<O: Write, E: Write>(
    client: &A2AClient,
    request: GetTaskRequest,
    pause: Duration,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    let mut previous: Option<Task> = None;
    loop {
        let task = client.get_task(request.clone()).await?;
        out.watched(previous.as_ref(), &task);
        let state = task.status.state;
        if state.is_terminal() || state.is_interrupted() {
            out.end_progress();
            out.summary(&task.id, state);
            return Ok(exit_for(Some(state), false));
        }
        previous = Some(task);
        tokio::time::sleep(pause).await;
    }
}
