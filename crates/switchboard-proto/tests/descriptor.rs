//! Our `a2a.proto` against the official one: the compiled descriptor is
//! written to a file and `interop/py/compare_descriptor.py` compares it with
//! `a2a.types.a2a_pb2.DESCRIPTOR` from the official Python SDK (a2a-sdk
//! 1.3.0 in `interop/.venv`). Any difference in a message, field, enum value
//! or method fails the test. Skipped when the venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn python() -> Option<std::path::PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/.venv/bin/python");
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_none(),
        "the a2a-sdk venv is missing at {}: run interop/setup.sh",
        p.display()
    );
    eprintln!("skipping: interop/.venv not installed (run interop/setup.sh)");
    None
}

fn compare(bytes: &[u8]) -> (bool, String) {
    let Some(py) = python() else {
        return (true, String::new());
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a2a.fds");
    std::fs::write(&file, bytes).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/py/compare_descriptor.py");
    let out = Command::new(py).arg(script).arg(&file).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn our_descriptor_matches_the_official_one() {
    let (ok, text) = compare(switchboard_proto::FILE_DESCRIPTOR_SET);
    println!("{text}");
    assert!(ok, "our a2a.proto differs from the official one:\n{text}");
    if python().is_some() {
        assert!(text.contains("methods match"), "{text}");
        assert!(text.contains("11 methods"), "{text}");
    }
}

/// The comparison is not vacuous: a descriptor with one field renumbered
/// is reported.
#[test]
fn a_renumbered_field_is_caught() {
    use prost::Message as _;
    if python().is_none() {
        return;
    }
    let mut fds =
        prost_types::FileDescriptorSet::decode(switchboard_proto::FILE_DESCRIPTOR_SET).unwrap();
    let file = fds
        .file
        .iter_mut()
        .find(|f| f.package() == "lf.a2a.v1")
        .unwrap();
    let task = file
        .message_type
        .iter_mut()
        .find(|m| m.name() == "Task")
        .unwrap();
    let id = task.field.iter_mut().find(|f| f.name() == "id").unwrap();
    id.number = Some(99);
    let (ok, text) = compare(&fds.encode_to_vec());
    assert!(!ok, "a renumbered Task.id went unnoticed:\n{text}");
    assert!(
        text.contains("field Task.id: number ours 99, official 1"),
        "{text}"
    );
}
