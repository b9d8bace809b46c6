//! Our 0.3 `a2a.proto` (package `a2a.v1`) against the official one:
//! `interop/py/compare_descriptor.py <fds> a2a.v1`, run with the python of
//! `interop/.venv03` (a2a-sdk 0.3.x, whose `a2a.grpc.a2a_pb2` carries the
//! 0.3 descriptor), compares every message, field, enum value and method.
//! Skipped when the venv is missing, unless `SWITCHBOARD_REQUIRE_INTEROP` is set.

#![allow(clippy::unwrap_used)]

mod common;

const VENV: &str = ".venv03";
const PACKAGE: &str = "a2a.v1";

#[test]
fn our_03_descriptor_matches_the_official_one() {
    let Some(py) = common::python(VENV) else {
        return;
    };
    let (ok, text) = common::compare(&py, switchboard_proto::FILE_DESCRIPTOR_SET, PACKAGE);
    println!("{text}");
    assert!(
        ok,
        "our 0.3 a2a.proto differs from the official one:\n{text}"
    );
    assert!(text.contains("10 methods match"), "{text}");
}

/// The comparison is not vacuous: a renumbered field and a dropped method
/// are both reported.
#[test]
fn a_changed_03_descriptor_is_caught() {
    use prost::Message as _;
    let Some(py) = common::python(VENV) else {
        return;
    };
    let mut fds = common::renumbered(PACKAGE, "Message", "content", 8);
    let file = fds
        .file
        .iter_mut()
        .find(|f| f.package() == PACKAGE)
        .unwrap();
    file.service[0]
        .method
        .retain(|m| m.name() != "TaskSubscription");
    let (ok, text) = common::compare(&py, &fds.encode_to_vec(), PACKAGE);
    assert!(!ok, "a changed descriptor went unnoticed:\n{text}");
    assert!(
        text.contains("field Message.content: number ours 8, official 5"),
        "{text}"
    );
    assert!(
        text.contains("method A2AService.TaskSubscription: only in official"),
        "{text}"
    );
}
