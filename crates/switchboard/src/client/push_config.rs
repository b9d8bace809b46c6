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
//! A config carries secrets for the receiver: its `token` and its
//! authentication `credentials`. They are sent, but never printed back,
//! in human output or in `--json`: both show [`MASK`] instead (a script
//! that needs them already has them; a terminal log or a CI transcript
//! must not).
//!
//! Output: human lines (`push config ID  task T`, then `url`, `token`,
//! `authentication`), or one JSON line: `{"type":"pushConfig","data":…}`
//! for create and get, `{"type":"pushConfigList","data":{"configs":[…],
//! "nextPageToken":…}}` for list, `{"type":"deleted","data":{"taskId":…,
//! "id":…}}` for delete.

use std::io::Write;

use serde_json::{Value, json};
use switchboard_protocol::{
    AuthenticationInfo, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};

use super::args::ConnectArgs;
use switchboard_printer::{Failure, Output};

use super::run::connect;

/// What a secret is printed as.
pub(super) const MASK: &str = "****";

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
            print_config(out, &created);
        }
        PushConfigCommand::Get { task_id, id, .. } => {
            let config = client
                .get_push_config(TaskPushNotificationConfigRef {
                    tenant: None,
                    task_id,
                    id,
                })
                .await?;
            print_config(out, &config);
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
            print_list(out, &page);
        }
        PushConfigCommand::Delete { task_id, id, .. } => {
            client
                .delete_push_config(TaskPushNotificationConfigRef {
                    tenant: None,
                    task_id: task_id.clone(),
                    id: id.clone(),
                })
                .await?;
            if out.is_json() {
                out.json_line("deleted", json!({ "taskId": task_id, "id": id }), None);
            } else {
                out.line(format!("deleted push config {id} of task {task_id}"));
            }
        }
    }
    Ok(0)
}

/// The config with its secrets replaced by [`MASK`].
pub(super) fn masked(config: &TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    let mut config = config.clone();
    if config.token.is_some() {
        config.token = Some(MASK.into());
    }
    if let Some(auth) = config.authentication.as_mut()
        && auth.credentials.is_some()
    {
        auth.credentials = Some(MASK.into());
    }
    config
}

fn to_json(config: &TaskPushNotificationConfig) -> Value {
    serde_json::to_value(masked(config)).unwrap_or(Value::Null)
}

fn print_config<O: Write, E: Write>(out: &mut Output<O, E>, config: &TaskPushNotificationConfig) {
    if out.is_json() {
        return out.json_line("pushConfig", to_json(config), None);
    }
    let config = masked(config);
    out.line(format!(
        "push config {}  task {}",
        config.id.as_deref().unwrap_or("-"),
        config.task_id.as_deref().unwrap_or("-")
    ));
    out.line(format!("  url: {}", config.url));
    if let Some(token) = &config.token {
        out.line(format!("  token: {token}"));
    }
    if let Some(auth) = &config.authentication {
        let credentials = auth
            .credentials
            .as_deref()
            .map(|c| format!(" {c}"))
            .unwrap_or_default();
        out.line(format!("  authentication: {}{credentials}", auth.scheme));
    }
}

fn print_list<O: Write, E: Write>(
    out: &mut Output<O, E>,
    page: &ListTaskPushNotificationConfigsResponse,
) {
    if out.is_json() {
        let configs: Vec<Value> = page.configs.iter().map(to_json).collect();
        return out.json_line(
            "pushConfigList",
            json!({ "configs": configs, "nextPageToken": page.next_page_token }),
            None,
        );
    }
    for config in &page.configs {
        let auth = config
            .authentication
            .as_ref()
            .map(|a| format!("  ({})", a.scheme))
            .unwrap_or_default();
        out.line(format!(
            "{}  {}{auth}",
            config.id.as_deref().unwrap_or("-"),
            config.url
        ));
    }
    out.line(format!("{} push config(s)", page.configs.len()));
    if !page.next_page_token.is_empty() {
        out.line(format!("next page: --page-token {}", page.next_page_token));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_the_rest_kept() {
        let config = TaskPushNotificationConfig {
            tenant: None,
            id: Some("c1".into()),
            task_id: Some("t1".into()),
            url: "http://127.0.0.1:9/hook".into(),
            token: Some("tok-secret".into()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some("cred-secret".into()),
            }),
        };
        let text = to_json(&config).to_string();
        assert!(!text.contains("secret"), "{text}");
        let shown = masked(&config);
        assert_eq!(shown.token.as_deref(), Some(MASK));
        assert_eq!(
            shown.authentication.and_then(|a| a.credentials).as_deref(),
            Some(MASK)
        );
        assert_eq!(shown.url, config.url);
        // Nothing to mask: nothing invented.
        let bare = TaskPushNotificationConfig {
            token: None,
            authentication: None,
            ..config
        };
        assert_eq!(masked(&bare), bare);
    }
}
