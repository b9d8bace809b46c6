//! Next-step hints: when a task stops to wait for the user, say exactly how
//! to go on, as a `switchboard send` command to copy.
//!
//! A task in `input-required` waits for an answer on the same task; one in
//! `auth-required` waits until the user authenticated (out of band, as the
//! agent's message says) and then sent a message on it. Either way the
//! next message needs the task id and the context id, which a person
//! would otherwise fish out of the output. So after a command that leaves
//! a task in one of these states, [`next_step`] gives:
//!
//! ```text
//! hint: the agent needs your input; answer with:
//!   switchboard send --url http://127.0.0.1:8080/ --task-id T --context-id C '<answer>'
//! ```
//!
//! [`Output::hint`](crate::Output::hint) writes it to stderr, so it is
//! never part of stdout (and never of `--json` output, which a script
//! parses). The command repeats the binding and version the user chose and
//! every setting the next call needs to get in (`--ca-cert`,
//! `--verify-card`, the `--oauth-*` settings), but never a secret:
//! `--api-key <KEY>`, `--token <TOKEN>` and `--header 'Name: <VALUE>'`
//! stand where the user gave one, to be filled in from their own shell
//! history or password store. What came from the environment
//! (`SWITCHBOARD_API_KEY`, …) is left out: the next command finds it there
//! too.

use switchboard_client::AgentSettings;
use switchboard_protocol::TaskState;
use switchboard_protocol::card::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};

use crate::Seen;

/// The hint for a task left in `seen`'s state, if it waits for the user;
/// `url` and `agent` are how this command reached the agent, `in_env(VAR)`
/// whether a setting's variable is set (the next command reads it from
/// there, so the flag is left out).
pub fn next_step(
    url: &str,
    agent: &AgentSettings,
    seen: &Seen,
    in_env: impl Fn(&str) -> bool,
) -> Option<String> {
    let (what, placeholder) = match seen.state {
        TaskState::InputRequired => ("the agent needs your input; answer with:", "<answer>"),
        TaskState::AuthRequired => (
            "the agent needs you to authenticate first (see its message); \
             then continue the task with:",
            "<message>",
        ),
        _ => return None,
    };
    let mut cmd = format!("switchboard send --url {}", shell_word(url));
    if let Some(value) = agent.binding.as_deref().and_then(binding_flag) {
        cmd.push_str(&format!(" --binding {value}"));
    }
    if let Some(v) = &agent.protocol_version {
        cmd.push_str(&format!(" --protocol-version {}", shell_word(v)));
    }
    cmd.push_str(&access_flags(agent, in_env));
    cmd.push_str(&format!(
        " --task-id {} --context-id {} '{placeholder}'",
        shell_word(&seen.task_id),
        shell_word(&seen.context_id)
    ));
    Some(format!("hint: {what}\n  {cmd}"))
}

/// `--binding`'s value for a binding's card name.
fn binding_flag(card_name: &str) -> Option<&'static str> {
    match card_name {
        BINDING_JSONRPC => Some("jsonrpc"),
        BINDING_HTTP_JSON => Some("rest"),
        BINDING_GRPC => Some("grpc"),
        _ => None,
    }
}

/// The flags that get the next call in, secrets replaced by placeholders.
fn access_flags(agent: &AgentSettings, in_env: impl Fn(&str) -> bool) -> String {
    let mut flags = String::new();
    let mut flag = |var: &str, set: bool, text: String| {
        if set && !in_env(var) {
            flags.push(' ');
            flags.push_str(&text);
        }
    };
    flag(
        "SWITCHBOARD_API_KEY",
        agent.api_key.is_some(),
        "--api-key <KEY>".into(),
    );
    flag(
        "SWITCHBOARD_TOKEN",
        agent.token.is_some(),
        "--token <TOKEN>".into(),
    );
    for header in &agent.headers {
        let name = header
            .split_once(':')
            .map_or(header.as_str(), |(n, _)| n)
            .trim();
        flag(
            "",
            true,
            format!("--header {}", shell_word(&format!("{name}: <VALUE>"))),
        );
    }
    if let Some(path) = &agent.ca_cert {
        let path = shell_word(&path.to_string_lossy());
        flag("SWITCHBOARD_CA_CERT", true, format!("--ca-cert {path}"));
    }
    flag(
        "SWITCHBOARD_VERIFY_CARD",
        agent.verify_card,
        "--verify-card".into(),
    );
    let oauth = &agent.oauth;
    if let Some(url) = &oauth.token_url {
        let url = shell_word(url);
        flag(
            "SWITCHBOARD_OAUTH_TOKEN_URL",
            true,
            format!("--oauth-token-url {url}"),
        );
    }
    if let Some(id) = &oauth.client_id {
        let id = shell_word(id);
        flag(
            "SWITCHBOARD_OAUTH_CLIENT_ID",
            true,
            format!("--oauth-client-id {id}"),
        );
    }
    if let Some(path) = &oauth.client_secret_file {
        let path = shell_word(&path.to_string_lossy());
        flag("", true, format!("--oauth-client-secret-file {path}"));
    }
    for scope in &oauth.scopes {
        flag("", true, format!("--oauth-scope {}", shell_word(scope)));
    }
    flags
}

/// `word` as one shell word: as is when it has nothing a shell would
/// interpret, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_placeholders_and_the_environment_is_not_repeated() {
        let mut agent = AgentSettings::default();
        agent.api_key = Some("sb_SECRET".into());
        agent.token = Some("tok-SECRET".into());
        agent.headers = vec!["X-Tenant-Auth: SECRET".into()];
        agent.ca_cert = Some("/etc/ca.pem".into());
        agent.oauth.client_id = Some("cli".into());
        agent.oauth.scopes = vec!["a2a".into()];
        let flags = access_flags(&agent, |_| false);
        assert_eq!(
            flags,
            " --api-key <KEY> --token <TOKEN> --header 'X-Tenant-Auth: <VALUE>' \
             --ca-cert /etc/ca.pem --oauth-client-id cli --oauth-scope a2a"
        );
        assert!(!flags.contains("SECRET"));
        let flags = access_flags(&agent, |var| var == "SWITCHBOARD_API_KEY");
        assert!(!flags.contains("--api-key"), "{flags}");
        assert!(flags.contains("--token <TOKEN>"), "{flags}");
    }

    #[test]
    fn the_binding_is_repeated_as_its_flag_value() {
        let mut agent = AgentSettings::default();
        agent.binding = Some(BINDING_HTTP_JSON.into());
        let seen = Seen {
            task_id: "t".into(),
            context_id: "c".into(),
            state: TaskState::InputRequired,
        };
        let hint = next_step("http://h/", &agent, &seen, |_| false).unwrap_or_default();
        assert!(hint.contains(" --binding rest "), "{hint}");
        let seen = Seen {
            state: TaskState::Completed,
            ..seen
        };
        assert_eq!(next_step("http://h/", &agent, &seen, |_| false), None);
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("http://127.0.0.1:8/a"), "http://127.0.0.1:8/a");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
