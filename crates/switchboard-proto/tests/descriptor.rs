//! Our two `a2a.proto` files against the official ones: the compiled
//! descriptor is written to a file and `interop/py/compare_descriptor.py
//! <fds> <package>` compares it, message by message, field by field, enum
//! value by enum value and method by method, with the descriptor the
//! official Python SDK carries:
//!
//! - 1.0, package `lf.a2a.v1`: `a2a.types.a2a_pb2.DESCRIPTOR` of a2a-sdk
//!   1.3.0 in `interop/.venv`;
//! - 0.3, package `a2a.v1`: `a2a.grpc.a2a_pb2` of a2a-sdk 0.3.x in
//!   `interop/.venv03`.
//!
//! Any difference fails the test. Skipped when a venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The python of `interop/<venv>`, or `None` (test skipped) when it is not
/// installed, unless `SWITCHBOARD_REQUIRE_INTEROP` is set: then it fails.
fn python(venv: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop")
        .join(venv)
        .join("bin/python");
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_none(),
        "the a2a-sdk venv is missing at {}: run interop/setup.sh",
        p.display()
    );
    eprintln!("skipping: interop/{venv} not installed (run interop/setup.sh)");
    None
}

/// Compares the descriptor set `bytes` with the official one of `package`:
/// whether they match, and the script's report.
fn compare(py: &Path, bytes: &[u8], package: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a2a.fds");
    std::fs::write(&file, bytes).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/py/compare_descriptor.py");
    let out = Command::new(py)
        .arg(script)
        .arg(&file)
        .arg(package)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Our descriptor set with one field of one message of `package` given
/// another number: a change the comparison must report.
fn renumbered(
    package: &str,
    message: &str,
    field: &str,
    number: i32,
) -> prost_types::FileDescriptorSet {
    use prost::Message as _;
    let mut fds =
        prost_types::FileDescriptorSet::decode(switchboard_proto::FILE_DESCRIPTOR_SET).unwrap();
    let file = fds
        .file
        .iter_mut()
        .find(|f| f.package() == package)
        .unwrap();
    let msg = file
        .message_type
        .iter_mut()
        .find(|m| m.name() == message)
        .unwrap();
    let f = msg.field.iter_mut().find(|f| f.name() == field).unwrap();
    f.number = Some(number);
    fds
}

const VENV_10: &str = ".venv";
const PACKAGE_10: &str = "lf.a2a.v1";
const VENV_03: &str = ".venv03";
const PACKAGE_03: &str = "a2a.v1";

/// Asserts our descriptor of `package` matches the official one, methods
/// included (`methods`: the count line the script prints).
fn assert_matches_the_official_one(venv: &str, package: &str, methods: &str) {
    let Some(py) = python(venv) else { return };
    let (ok, text) = compare(&py, switchboard_proto::FILE_DESCRIPTOR_SET, package);
    println!("{text}");
    assert!(
        ok,
        "our {package} a2a.proto differs from the official one:\n{text}"
    );
    assert!(text.contains(methods), "{text}");
}

#[test]
fn our_descriptor_matches_the_official_one() {
    assert_matches_the_official_one(VENV_10, PACKAGE_10, "11 methods match");
}

#[test]
fn our_03_descriptor_matches_the_official_one() {
    assert_matches_the_official_one(VENV_03, PACKAGE_03, "10 methods match");
}

/// The comparison is not vacuous: a descriptor with one field renumbered
/// is reported.
#[test]
fn a_renumbered_field_is_caught() {
    use prost::Message as _;
    let Some(py) = python(VENV_10) else {
        return;
    };
    let fds = renumbered(PACKAGE_10, "Task", "id", 99);
    let (ok, text) = compare(&py, &fds.encode_to_vec(), PACKAGE_10);
    assert!(!ok, "a renumbered Task.id went unnoticed:\n{text}");
    assert!(
        text.contains("field Task.id: number ours 99, official 1"),
        "{text}"
    );
}

/// The comparison is not vacuous: a renumbered field and a dropped method
/// are both reported.
#[test]
fn a_changed_03_descriptor_is_caught() {
    use prost::Message as _;
    let Some(py) = python(VENV_03) else {
        return;
    };
    let mut fds = renumbered(PACKAGE_03, "Message", "content", 8);
    let file = fds
        .file
        .iter_mut()
        .find(|f| f.package() == PACKAGE_03)
        .unwrap();
    file.service[0]
        .method
        .retain(|m| m.name() != "TaskSubscription");
    let (ok, text) = compare(&py, &fds.encode_to_vec(), PACKAGE_03);
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
