//! Next-step hints: when a task stops to wait for the user, the client says
//! exactly how to go on, as a command to copy.
//!
//! A task in `input-required` waits for an answer on the same task; one in
//! `auth-required` waits until the user authenticated (out of band, as the
//! agent's message says) and then sent a message on it. Either way the
//! next message needs the task id and the context id, which a person
//! would otherwise fish out of the output. So after a command that leaves
//! a task in one of these states, stderr gets:
//!
//! ```text
//! hint: the agent needs your input; answer with:
//!   switchboard send --url http://127.0.0.1:8080/ --task-id T --context-id C '<answer>'
//! ```
//!
//! The hint goes to stderr, so it is never part of stdout (and never of
//! `--json` output, which a script parses). The command repeats the
//! `--binding` and `--protocol-version` the user chose and every flag the
//! next call needs to get in (`--ca-cert`, `--verify-card`, the `--oauth-*`
//! settings), but never a secret: `--api-key <KEY>`, `--token <TOKEN>` and
//! `--header 'Name: <VALUE>'` stand where the user gave one, to be filled
//! in from their own shell history or password store. What came from the
//! environment (`SWITCHBOARD_API_KEY`, …) is left out: the next command
//! finds it there too.

use switchboard_protocol::TaskState;

use switchboard_printer::Seen;

use super::args::ConnectArgs;

/// The hint for a task left in `seen`'s state, if it waits for the user.
pub(super) fn next_step(conn: &ConnectArgs, seen: &Seen) -> Option<String> {
    let (what, placeholder) = match seen.state {
        TaskState::InputRequired => ("the agent needs your input; answer with:", "<answer>"),
        TaskState::AuthRequired => (
            "the agent needs you to authenticate first (see its message); \
             then continue the task with:",
            "<message>",
        ),
        _ => return None,
    };
    let mut cmd = format!("switchboard send --url {}", shell_word(&conn.url));
    if let Some(value) = conn
        .agent
        .binding
        .and_then(|b| clap::ValueEnum::to_possible_value(&b))
    {
        cmd.push_str(&format!(" --binding {}", value.get_name()));
    }
    if let Some(v) = &conn.agent.protocol_version {
        cmd.push_str(&format!(" --protocol-version {}", shell_word(v)));
    }
    cmd.push_str(&access_flags(conn, |var| std::env::var_os(var).is_some()));
    cmd.push_str(&format!(
        " --task-id {} --context-id {} '{placeholder}'",
        shell_word(&seen.task_id),
        shell_word(&seen.context_id)
    ));
    Some(format!("hint: {what}\n  {cmd}"))
}

/// The flags that get the next call in, secrets replaced by placeholders;
/// `in_env(VAR)` says whether a flag's variable is set (the next command
/// reads it from there, so the flag is left out).
fn access_flags(conn: &ConnectArgs, in_env: impl Fn(&str) -> bool) -> String {
    let mut flags = String::new();
    let mut flag = |var: &str, set: bool, text: String| {
        if set && !in_env(var) {
            flags.push(' ');
            flags.push_str(&text);
        }
    };
    flag(
        "SWITCHBOARD_API_KEY",
        conn.agent.api_key.is_some(),
        "--api-key <KEY>".into(),
    );
    flag(
        "SWITCHBOARD_TOKEN",
        conn.agent.token.is_some(),
        "--token <TOKEN>".into(),
    );
    for header in &conn.agent.headers {
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
    if let Some(path) = &conn.agent.ca_cert {
        let path = shell_word(&path.to_string_lossy());
        flag("SWITCHBOARD_CA_CERT", true, format!("--ca-cert {path}"));
    }
    flag(
        "SWITCHBOARD_VERIFY_CARD",
        conn.agent.verify_card,
        "--verify-card".into(),
    );
    let oauth = &conn.agent.oauth;
    if let Some(url) = &oauth.oauth_token_url {
        let url = shell_word(url);
        flag(
            "SWITCHBOARD_OAUTH_TOKEN_URL",
            true,
            format!("--oauth-token-url {url}"),
        );
    }
    if let Some(id) = &oauth.oauth_client_id {
        let id = shell_word(id);
        flag(
            "SWITCHBOARD_OAUTH_CLIENT_ID",
            true,
            format!("--oauth-client-id {id}"),
        );
    }
    if let Some(path) = &oauth.oauth_client_secret_file {
        let path = shell_word(&path.to_string_lossy());
        flag("", true, format!("--oauth-client-secret-file {path}"));
    }
    for scope in &oauth.oauth_scopes {
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
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            conn: ConnectArgs,
        }
        let cli = Cli::try_parse_from([
            "x",
            "--url",
            "http://h/",
            "--api-key",
            "sb_SECRET",
            "--token",
            "tok-SECRET",
            "--header",
            "X-Tenant-Auth: SECRET",
            "--ca-cert",
            "/etc/ca.pem",
            "--oauth-client-id",
            "cli",
            "--oauth-scope",
            "a2a",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let flags = access_flags(&cli.conn, |_| false);
        assert_eq!(
            flags,
            " --api-key <KEY> --token <TOKEN> --header 'X-Tenant-Auth: <VALUE>' \
             --ca-cert /etc/ca.pem --oauth-client-id cli --oauth-scope a2a"
        );
        assert!(!flags.contains("SECRET"));
        let flags = access_flags(&cli.conn, |var| var == "SWITCHBOARD_API_KEY");
        assert!(!flags.contains("--api-key"), "{flags}");
        assert!(flags.contains("--token <TOKEN>"), "{flags}");
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("http://127.0.0.1:8/a"), "http://127.0.0.1:8/a");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
