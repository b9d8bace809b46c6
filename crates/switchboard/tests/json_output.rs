//! `--json` on the commands outside `switchboard client`, run as the real
//! binary: each prints one JSON document that a script can read (the
//! client commands' JSON Lines are tested in `cli.rs`; that every leaf
//! command has the flag is checked by walking clap's tree in `main.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use serde_json::Value;

/// Runs `switchboard ARGS` (no `SWITCHBOARD_*` from the caller's
/// environment, `env` added, `stdin` fed); returns (exit code, stdout, stderr).
fn run(args: &[&str], env: &[(&str, &str)], stdin: &str) -> (i32, String, String) {
    let out = proc::output_with_stdin(
        proc::switchboard_without_env()
            .args(args)
            .envs(env.iter().copied()),
        stdin.as_bytes(),
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The one JSON document of `out`.
fn document(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not one JSON document: {out:?}: {e}"))
}

#[test]
fn auth_commands_print_json() {
    let (code, out, err) = run(&["auth", "new-key", "--json"], &[], "");
    assert_eq!(code, 0, "{err}");
    let made = document(&out);
    let key = made["key"].as_str().unwrap();
    let hash = made["hash"].as_str().unwrap();
    assert_ne!(key, hash);
    // hash-key of the same key gives the same hash.
    let (code, out, err) = run(&["auth", "hash-key", "--json"], &[], &format!("{key}\n"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(document(&out), serde_json::json!({ "hash": hash }));
}

#[test]
fn config_check_prints_json_with_sources_and_secrets_masked() {
    let (code, out, err) = run(
        &["config", "check", "--json", "--listen", "127.0.0.1:9999"],
        &[(
            "SWITCHBOARD_STORE",
            "postgres://app:pw-SECRET@127.0.0.1:5432/db",
        )],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let settings = document(&out);
    assert_eq!(settings["listen"]["value"], "127.0.0.1:9999");
    assert_eq!(settings["listen"]["source"], "flag");
    assert_eq!(settings["listen"]["env"], "SWITCHBOARD_LISTEN");
    assert_eq!(settings["store"]["source"], "env");
    assert_eq!(settings["agent"]["source"], "default");
    assert!(!out.contains("pw-SECRET"), "{out}");
    // The same settings as the TOML form.
    let (code, toml_out, _) = run(&["config", "check", "--listen", "127.0.0.1:9999"], &[], "");
    assert_eq!(code, 0);
    let keys = settings.as_object().unwrap();
    for line in toml_out.lines() {
        let key = line
            .trim_start_matches("# ")
            .split([' ', '='])
            .next()
            .unwrap();
        assert!(keys.contains_key(key), "{key} missing from the JSON");
    }
    // A bad value is still an error, not JSON.
    let (code, out, err) = run(
        &["config", "check", "--json", "--store", "nope://"],
        &[],
        "",
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty() && err.contains("config check"), "{err}");
}

#[test]
fn push_store_commands_print_json() {
    let (code, out, err) = run(
        &["push", "dead-letters", "--json", "--store", "memory"],
        &[],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(document(&out), serde_json::json!([]));
    let (code, out, err) = run(
        &["push", "retry", "--all", "--json", "--store", "memory"],
        &[],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        document(&out),
        serde_json::json!({ "requeued": [], "failed": [] })
    );
    let (code, out, _) = run(
        &["push", "retry", "7", "--json", "--store", "memory"],
        &[],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(
        document(&out),
        serde_json::json!({ "requeued": [], "failed": [{ "id": 7, "reason": "no such dead letter" }] })
    );

    // Keys: rotate, then retire the old one.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("push-keys.json");
    let old = switchboard_push::KeySet::load_or_create(&file)
        .unwrap()
        .current_kid();
    let path = file.to_str().unwrap();
    let (code, out, err) = run(
        &["push", "rotate-key", "--json", "--push-key-file", path],
        &[],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let rotated = document(&out);
    assert_eq!(rotated["previous"], old.as_str());
    assert!(rotated["kid"].as_str().is_some_and(|k| k != old), "{out}");
    let (code, out, err) = run(
        &[
            "push",
            "retire-key",
            &old,
            "--json",
            "--push-key-file",
            path,
        ],
        &[],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(document(&out), serde_json::json!({ "retired": old }));
}
