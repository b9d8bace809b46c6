//! Unit tests of the client commands: exit codes and argument parsing (the
//! output itself is `switchboard_printer`'s, tested there).

use switchboard_protocol::TaskState;

use super::args::parse_state;
use super::run::{EXIT_TASK_FAILED, exit_for};

#[test]
fn exit_codes_follow_the_final_state() {
    assert_eq!(exit_for(Some(TaskState::Completed), true), 0);
    assert_eq!(exit_for(Some(TaskState::InputRequired), true), 0);
    assert_eq!(exit_for(Some(TaskState::Failed), false), EXIT_TASK_FAILED);
    assert_eq!(exit_for(Some(TaskState::Rejected), true), EXIT_TASK_FAILED);
    assert_eq!(exit_for(Some(TaskState::Canceled), true), EXIT_TASK_FAILED);
    assert_eq!(exit_for(Some(TaskState::Canceled), false), 0);
    assert_eq!(exit_for(None, true), 0);
}

#[test]
fn states_parse_by_label_or_proto_name() {
    assert_eq!(parse_state("working"), Ok(TaskState::Working));
    assert_eq!(
        parse_state("TASK_STATE_INPUT_REQUIRED"),
        Ok(TaskState::InputRequired)
    );
    assert!(parse_state("nope").is_err_and(|e| e.contains("completed")));
}
