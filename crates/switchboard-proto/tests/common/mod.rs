//! What the descriptor tests share: finding the python of an official SDK's
//! venv, and running `interop/py/compare_descriptor.py` on a descriptor set.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The python of `interop/<venv>`, or `None` (test skipped) when it is not
/// installed, unless `SWITCHBOARD_REQUIRE_INTEROP` is set: then it fails.
pub fn python(venv: &str) -> Option<PathBuf> {
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
pub fn compare(py: &Path, bytes: &[u8], package: &str) -> (bool, String) {
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
pub fn renumbered(
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
