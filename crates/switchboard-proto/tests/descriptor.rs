//! Our `a2a.proto` against the official one: the compiled descriptor is
//! written to a file and `interop/py/compare_descriptor.py` compares it with
//! `a2a.types.a2a_pb2.DESCRIPTOR` from the official Python SDK (a2a-sdk
//! 1.3.0 in `interop/.venv`). Any difference in a message, field, enum value
//! or method fails the test. Skipped when the venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set.

#![allow(clippy::unwrap_used)]

mod common;

const VENV: &str = ".venv";
const PACKAGE: &str = "lf.a2a.v1";

#[test]
fn our_descriptor_matches_the_official_one() {
    let Some(py) = common::python(VENV) else {
        return;
    };
    let (ok, text) = common::compare(&py, switchboard_proto::FILE_DESCRIPTOR_SET, PACKAGE);
    println!("{text}");
    assert!(ok, "our a2a.proto differs from the official one:\n{text}");
    assert!(text.contains("methods match"), "{text}");
    assert!(text.contains("11 methods"), "{text}");
}

/// The comparison is not vacuous: a descriptor with one field renumbered
/// is reported.
#[test]
fn a_renumbered_field_is_caught() {
    use prost::Message as _;
    let Some(py) = common::python(VENV) else {
        return;
    };
    let fds = common::renumbered(PACKAGE, "Task", "id", 99);
    let (ok, text) = common::compare(&py, &fds.encode_to_vec(), PACKAGE);
    assert!(!ok, "a renumbered Task.id went unnoticed:\n{text}");
    assert!(
        text.contains("field Task.id: number ours 99, official 1"),
        "{text}"
    );
}
