//! The spec's task-progress JSON Schema as an independent validator (the
//! `jsonschema` crate, draft 2020-12, `format` assertions on), for the tests
//! that hold our own validator and emitter to it (this crate's and the
//! core's, which includes this file by path).
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use switchboard_protocol::progress::TASK_PROGRESS_SCHEMA;

/// The validator of `TASK_PROGRESS_SCHEMA`.
pub fn progress_schema() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(TASK_PROGRESS_SCHEMA).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}
