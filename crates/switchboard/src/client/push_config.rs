//! `switchboard push-config create|get|list|delete`: a task's webhooks,
//! through the A2A push-notification-config operations
//! (`CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`,
//! `ListTaskPushNotificationConfigs`, `DeleteTaskPushNotificationConfig`).
//!
//! They run through the typed client like every other client command, so
//! they work over each binding and version the client speaks (`--binding`,
//! `--protocol-version`). Not to be confused with `switchboard push …`,
//! which manages the local server's delivery store.
//!
//! The webhook's own flags are named `--webhook-url` and `--webhook-token`:
//! `--url` and `--token` already mean the agent's URL and the bearer token
//! sent to the agent.
//!
//! A config's secrets for its receiver (`token`, authentication
//! `credentials`) are sent but printed back as `****`, in human output and
//! in `--json` alike (`switchboard_printer::push_config`).
//!
//! Output: human lines (`push config ID  task T`, then `url`, `token`,
//! `authentication`), or one JSON line: `{"type":"pushConfig","data":…}`
//! for create and get, `{"type":"pushConfigList","data":{"configs":[…],
//! "nextPageToken":…}}` for list, `{"type":"deleted","data":{"taskId":…,
//! "id":…}}` for delete.

use std::io::Write;

use switchboard_protocol::{
    AuthenticationInfo, ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};

use super::args::ConnectArgs;
use switchboard_printer::{Failure, Output};

use super::run::connect;

/// `switchboard push-config …` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PushConfigCommand {
    /// Register a webhook for a task's updates (CreateTaskPushNotificationConfig).
    Create {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task whose updates are delivered.
        #[arg(long, value_name = "ID")]
        task_id: String,
        /// Where the agent POSTs the notifications.
        #[arg(long, value_name = "URL")]
        webhook_url: String,
        /// A token the agent echoes to the webhook (in
        /// `X-A2A-Notification-Token`), so it can tell real deliveries.
        #[arg(
            long,
            env = "SWITCHBOARD_WEBHOOK_TOKEN",
            value_name = "TOKEN",
            hide_env_values = true
        )]
        webhook_token: Option<String>,
        /// HTTP authentication scheme the agent uses towards the webhook,
        /// e.g. `Bearer`.
        #[arg(long, value_name = "SCHEME")]
        auth_scheme: Option<String>,
        /// The credentials for `--auth-scheme` (never printed back).
        #[arg(
            long,
            env = "SWITCHBOARD_WEBHOOK_CREDENTIALS",
            value_name = "CREDENTIALS",
            requires = "auth_scheme",
            hide_env_values = true
        )]
        credentials: Option<String>,
        /// The config's id (the agent picks one when omitted).
        #[arg(long, value_name = "ID")]
        id: Option<String>,
    },
    /// Show one webhook of a task (GetTaskPushNotificationConfig).
    Get {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task.
        #[arg(long, value_name = "ID")]
        task_id: String,
        /// The config id.
        id: String,
    },
    /// List the webhooks of a task (ListTaskPushNotificationConfigs).
    List {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task.
        #[arg(long, value_name = "ID")]
        task_id: String,
        /// Configs per page.
        #[arg(long, value_name = "N")]
        page_size: Option<i32>,
        /// Continue from this page token (printed after a full page).
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
    },
    /// Remove one webhook of a task (DeleteTaskPushNotificationConfig).
    Delete {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task.
        #[arg(long, value_name = "ID")]
        task_id: String,
        /// The config id.
        id: String,
    },
}

impl PushConfigCommand {
    /// The connection and output options.
    pub(super) fn conn(&self) -> &ConnectArgs {
        match self {
            PushConfigCommand::Create { conn, .. }
            | PushConfigCommand::Get { conn, .. }
            | PushConfigCommand::List { conn, .. }
            | PushConfigCommand::Delete { conn, .. } => conn,
        }
    }
}

/// Runs one push-config command; exit code 0, or a failure (exit 2).
pub(super) async fn execute<O: Write, E: Write>(
    cmd: PushConfigCommand,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    let client = connect(cmd.conn(), false).await?;
    match cmd {
        PushConfigCommand::Create {
            conn: _,
            task_id,
            webhook_url,
            webhook_token,
            auth_scheme,
            credentials,
            id,
        } => {
            let config = TaskPushNotificationConfig {
                tenant: None,
                id,
                task_id: Some(task_id),
                url: webhook_url,
                token: webhook_token,
                authentication: auth_scheme.map(|scheme| AuthenticationInfo {
                    scheme,
                    credentials,
                }),
            };
            let created = client.create_push_config(config).await?;
            out.push_config(&created);
        }
        PushConfigCommand::Get { task_id, id, .. } => {
            let config = client
                .get_push_config(TaskPushNotificationConfigRef {
                    tenant: None,
                    task_id,
                    id,
                })
                .await?;
            out.push_config(&config);
        }
        PushConfigCommand::List {
            task_id,
            page_size,
            page_token,
            ..
        } => {
            let page = client
                .list_push_configs(ListTaskPushNotificationConfigsRequest {
                    tenant: None,
                    task_id,
                    page_size,
                    page_token,
                })
                .await?;
            out.push_config_list(&page);
        }
        PushConfigCommand::Delete { task_id, id, .. } => {
            client
                .delete_push_config(TaskPushNotificationConfigRef {
                    tenant: None,
                    task_id: task_id.clone(),
                    id: id.clone(),
                })
                .await?;
            out.push_config_deleted(&task_id, &id);
        }
    }
    Ok(0)
}
