//! Push notification configs for people or scripts, their secrets masked.
//!
//! A config carries secrets for its receiver: its `token` and its
//! authentication `credentials`. They are sent, but never printed back, in
//! human output or in JSON: both show [`MASK`] instead (a script that needs
//! them already has them; a terminal log or a CI transcript must not).

use std::io::Write;

use serde_json::{Value, json};
use switchboard_protocol::{ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig};

use crate::Output;

/// What a secret is printed as.
pub const MASK: &str = "****";

/// The config with its secrets replaced by [`MASK`].
pub fn masked(config: &TaskPushNotificationConfig) -> TaskPushNotificationConfig {
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

impl<O: Write, E: Write> Output<O, E> {
    /// A push config: id, task, URL, token and authentication, secrets
    /// masked; JSON: `{"type":"pushConfig","data":…}`.
    pub fn push_config(&mut self, config: &TaskPushNotificationConfig) {
        if self.is_json() {
            return self.json_line("pushConfig", to_json(config), None);
        }
        let config = masked(config);
        self.line(format!(
            "push config {}  task {}",
            config.id.as_deref().unwrap_or("-"),
            config.task_id.as_deref().unwrap_or("-")
        ));
        self.line(format!("  url: {}", config.url));
        if let Some(token) = &config.token {
            self.line(format!("  token: {token}"));
        }
        if let Some(auth) = &config.authentication {
            let credentials = auth
                .credentials
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default();
            self.line(format!("  authentication: {}{credentials}", auth.scheme));
        }
    }

    /// A deleted push config; JSON: `{"type":"deleted","data":{"taskId":…,"id":…}}`.
    pub fn push_config_deleted(&mut self, task_id: &str, id: &str) {
        if self.is_json() {
            self.json_line("deleted", json!({ "taskId": task_id, "id": id }), None);
        } else {
            self.line(format!("deleted push config {id} of task {task_id}"));
        }
    }

    /// A page of push configs, one line each, secrets masked; JSON:
    /// `{"type":"pushConfigList","data":{"configs":[…],"nextPageToken":…}}`.
    pub fn push_config_list(&mut self, page: &ListTaskPushNotificationConfigsResponse) {
        if self.is_json() {
            let configs: Vec<Value> = page.configs.iter().map(to_json).collect();
            return self.json_line(
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
            self.line(format!(
                "{}  {}{auth}",
                config.id.as_deref().unwrap_or("-"),
                config.url
            ));
        }
        self.line(format!("{} push config(s)", page.configs.len()));
        if !page.next_page_token.is_empty() {
            self.line(format!("next page: --page-token {}", page.next_page_token));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_protocol::AuthenticationInfo;

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
