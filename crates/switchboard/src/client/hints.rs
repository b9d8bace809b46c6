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
//! `--binding` and `--protocol-version` the user chose, not the secrets
//! (`--token`, `--api-key`, headers): those stay in the user's own shell
//! history or environment.

use switchboard_protocol::TaskState;

use super::args::ConnectArgs;

/// The task a command last showed: id, context id and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen {
    pub(super) task_id: String,
    pub(super) context_id: String,
    pub(super) state: TaskState,
}

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
        .binding
        .and_then(|b| clap::ValueEnum::to_possible_value(&b))
    {
        cmd.push_str(&format!(" --binding {}", value.get_name()));
    }
    if let Some(v) = &conn.protocol_version {
        cmd.push_str(&format!(" --protocol-version {}", shell_word(v)));
    }
    cmd.push_str(&format!(
        " --task-id {} --context-id {} '{placeholder}'",
        shell_word(&seen.task_id),
        shell_word(&seen.context_id)
    ));
    Some(format!("hint: {what}\n  {cmd}"))
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
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("http://127.0.0.1:8/a"), "http://127.0.0.1:8/a");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
