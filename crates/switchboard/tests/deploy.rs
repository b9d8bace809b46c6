//! Packaging: `cargo install` works and installs a binary that runs, and
//! the files in `deploy/` agree with the binary and with each other.
//!
//! - `cargo install --path crates/switchboard --debug --locked --offline`
//!   into a temporary root, reusing this build's target directory (so it
//!   only links), then the installed `switchboard --version`. Skipped, with
//!   a message, only when `cargo` cannot be run.
//! - The Dockerfile, the systemd unit and the compose file: what each
//!   passes to `serve` (flags and `SWITCHBOARD_*` variables) is accepted by
//!   `switchboard config check`; the health check probes the port the
//!   server listens on; the binary path is the one the image installs; the
//!   unit is hardened and restarts.
//! - The image is built and the compose file run only where `docker` or
//!   `podman` exists; otherwise the test says it skipped that part.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn deploy_file(name: &str) -> String {
    let path = proc::repo_root().join("deploy").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `switchboard config check ARGS` with exactly the `SWITCHBOARD_*`
/// variables in `env`; panics with its stderr unless it succeeds, and
/// returns the printed configuration.
fn config_check(args: &[String], env: &BTreeMap<String, String>, what: &str) -> String {
    let out = proc::switchboard_without_env()
        .args(["config", "check"])
        .args(args)
        .envs(env)
        .output()
        .unwrap();
    stdout_of(out, &format!("{what}: config check {args:?} with {env:?}"))
}

/// What a finished command printed; it must have succeeded (`what` names
/// it, beside its stderr, when it did not).
fn stdout_of(out: std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The Dockerfile's final stage: its `ENV` settings, `ENTRYPOINT` + `CMD`
/// words, `HEALTHCHECK` command, and the paths `COPY --from=build` puts
/// the binary at.
struct Dockerfile {
    env: BTreeMap<String, String>,
    entrypoint: Vec<String>,
    cmd: Vec<String>,
    healthcheck: String,
    copied_to: Vec<String>,
    user: Option<String>,
    stages: usize,
}

/// `["a", "b"]` (exec form) as words.
fn exec_form(s: &str) -> Vec<String> {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not exec form: {s}: {e}"))
}

fn parse_dockerfile(text: &str) -> Dockerfile {
    // Join continuation lines, drop comments.
    let mut lines = Vec::new();
    let mut cur = String::new();
    for l in text.lines() {
        let l = l.trim_end();
        if cur.is_empty() && (l.trim_start().starts_with('#') || l.trim().is_empty()) {
            continue;
        }
        match l.strip_suffix('\\') {
            Some(part) => cur.push_str(part),
            None => {
                cur.push_str(l);
                lines.push(std::mem::take(&mut cur));
            }
        }
    }
    let mut d = Dockerfile {
        env: BTreeMap::new(),
        entrypoint: Vec::new(),
        cmd: Vec::new(),
        healthcheck: String::new(),
        copied_to: Vec::new(),
        user: None,
        stages: 0,
    };
    for line in lines {
        let (instr, rest) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
        match instr {
            "FROM" => d.stages += 1,
            "ENV" => {
                let (k, v) = rest.split_once('=').expect("ENV KEY=value");
                d.env.insert(k.trim().into(), v.trim().into());
            }
            "ENTRYPOINT" => d.entrypoint = exec_form(rest),
            "CMD" => d.cmd = exec_form(rest),
            "HEALTHCHECK" => d.healthcheck = rest.to_string(),
            "USER" => d.user = Some(rest.trim().to_string()),
            "COPY" if rest.starts_with("--from=build") => {
                d.copied_to
                    .push(rest.split_whitespace().last().unwrap().to_string());
            }
            _ => {}
        }
    }
    d
}

/// The port of `host:port`.
fn port_of(addr: &str) -> &str {
    addr.rsplit(':').next().unwrap()
}

#[test]
fn dockerfile_agrees_with_the_binary() {
    let d = parse_dockerfile(&deploy_file("Dockerfile"));
    assert!(d.stages >= 2, "multi-stage: {} FROM", d.stages);
    let user = d.user.as_deref().expect("a USER");
    assert!(user != "root" && user != "0", "runs as {user}");
    assert_eq!(d.entrypoint.len(), 1, "{:?}", d.entrypoint);
    assert!(
        d.copied_to.contains(&d.entrypoint[0]),
        "ENTRYPOINT {:?} is not where the binary is copied: {:?}",
        d.entrypoint,
        d.copied_to
    );
    assert_eq!(
        d.cmd.first().map(String::as_str),
        Some("serve"),
        "{:?}",
        d.cmd
    );
    let shown = config_check(&d.cmd[1..], &d.env, "Dockerfile");
    let listen = &d.env["SWITCHBOARD_LISTEN"];
    assert!(shown.contains(listen.as_str()), "{shown}");
    assert!(
        d.healthcheck
            .contains(&format!("127.0.0.1:{}/healthz", port_of(listen))),
        "the health check must probe /healthz on the listening port: {}",
        d.healthcheck
    );
}

/// `Key=value` lines of a unit file, repeated keys kept in order.
fn unit_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[test]
fn systemd_unit_agrees_with_the_binary_and_is_hardened() {
    let settings = unit_settings(&deploy_file("switchboard.service"));
    let get = |key: &str| {
        settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {key}= in the unit"))
    };
    let exec: Vec<String> = get("ExecStart")
        .split_whitespace()
        .map(String::from)
        .collect();
    assert!(exec[0].ends_with("/switchboard"), "{exec:?}");
    assert_eq!(exec[1], "serve", "{exec:?}");
    config_check(&exec[2..], &BTreeMap::new(), "switchboard.service");
    assert_eq!(get("DynamicUser"), "yes");
    assert_eq!(get("Restart"), "on-failure");
    for (key, want) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("CapabilityBoundingSet", ""),
    ] {
        assert_eq!(get(key), want, "{key}");
    }
    // The store lives in the state directory systemd makes writable.
    let state = get("StateDirectory");
    assert!(
        get("ExecStart").contains(&format!("/var/lib/{state}/")),
        "the SQLite store is outside StateDirectory={state}"
    );
}

/// Each service of the compose file with its `environment:` and `ports:`
/// (the file keeps to the block style this reads).
fn compose_services(text: &str) -> BTreeMap<String, (BTreeMap<String, String>, Vec<String>)> {
    let mut services = BTreeMap::new();
    let mut service = None;
    let mut section = "";
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let l = line.trim();
        match indent {
            2 => {
                let name = l.trim_end_matches(':').to_string();
                services.insert(name.clone(), (BTreeMap::new(), Vec::new()));
                service = Some(name);
                section = "";
            }
            4 => {
                section = if l == "environment:" {
                    "env"
                } else if l == "ports:" {
                    "ports"
                } else {
                    ""
                }
            }
            6 => {
                let Some((env, ports)) = service.as_ref().and_then(|s| services.get_mut(s)) else {
                    continue;
                };
                match section {
                    "env" => {
                        let (k, v) = l.split_once(": ").unwrap();
                        env.insert(k.to_string(), v.to_string());
                    }
                    "ports" => ports.push(l.trim_start_matches("- ").trim_matches('"').to_string()),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    services
}

#[test]
fn compose_replicas_agree_with_the_binary() {
    let services = compose_services(&deploy_file("compose.yaml"));
    let replicas: Vec<_> = services
        .iter()
        .filter(|(_, (env, _))| env.contains_key("SWITCHBOARD_STORE"))
        .collect();
    assert_eq!(replicas.len(), 2, "{services:?}");
    let mut host_ports = Vec::new();
    for (name, (env, ports)) in replicas {
        assert!(
            env["SWITCHBOARD_STORE"].starts_with("postgres://"),
            "{name}"
        );
        let shown = config_check(&[], env, name);
        assert!(
            !shown.contains(":switchboard@"),
            "{name}: password printed: {shown}"
        );
        let [port] = ports.as_slice() else {
            panic!("{name}: one published port: {ports:?}")
        };
        assert!(
            port.starts_with("127.0.0.1:"),
            "{name}: publish on loopback: {port}"
        );
        let host_port = port.split(':').nth(1).unwrap().to_string();
        assert!(
            env["SWITCHBOARD_PUBLIC_URL"].ends_with(&format!(":{host_port}")),
            "{name}: the card must name the published port"
        );
        // The container side is the port the image listens on.
        let image_listen =
            parse_dockerfile(&deploy_file("Dockerfile")).env["SWITCHBOARD_LISTEN"].clone();
        assert_eq!(
            port.rsplit(':').next(),
            Some(port_of(&image_listen)),
            "{name}"
        );
        host_ports.push(host_port);
    }
    host_ports.dedup();
    assert_eq!(host_ports.len(), 2, "two replicas, two ports");
}

/// The target directory this test binary was built in (`…/target`), so
/// that `cargo install` reuses what is already compiled.
fn target_dir() -> PathBuf {
    let bin = Path::new(BIN);
    // target/<profile>/switchboard
    bin.parent().and_then(Path::parent).unwrap().to_path_buf()
}

#[test]
fn cargo_install_installs_a_working_binary() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if Command::new(&cargo).arg("--version").output().is_err() {
        eprintln!("skipping: cargo ({cargo}) cannot be run here");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(&cargo)
        .current_dir(proc::repo_root())
        .args([
            "install",
            "--path",
            "crates/switchboard",
            "--debug",
            "--locked",
            "--offline",
        ])
        .arg("--root")
        .arg(root.path())
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap();
    stdout_of(out, "cargo install");
    let installed = root.path().join("bin").join("switchboard");
    let out = Command::new(&installed).arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let version = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        version.trim(),
        format!("switchboard {}", env!("CARGO_PKG_VERSION")),
        "{version}"
    );
}

/// `docker` or `podman`, whichever runs.
fn container_runtime() -> Option<&'static str> {
    ["docker", "podman"].into_iter().find(|rt| {
        Command::new(rt)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn image_builds_and_two_replicas_answer_where_a_runtime_exists() {
    let Some(rt) = container_runtime() else {
        eprintln!(
            "skipping the image build and compose run: no container runtime answers \
             (`docker version` and `podman version` failed, or neither is installed)"
        );
        return;
    };
    let root = proc::repo_root();
    let status = Command::new(rt)
        .current_dir(&root)
        .args([
            "build",
            "-f",
            "deploy/Dockerfile",
            "-t",
            "switchboard:local",
            ".",
        ])
        .status()
        .unwrap();
    assert!(status.success(), "{rt} build failed");
    let compose = |args: &[&str]| {
        Command::new(rt)
            .current_dir(&root)
            .args([
                "compose",
                "-f",
                "deploy/compose.yaml",
                "-p",
                "switchboard-test",
            ])
            .args(args)
            .status()
            .unwrap()
    };
    assert!(
        compose(&["up", "-d", "--wait"]).success(),
        "compose up failed"
    );
    let healthy: Vec<bool> = ["8081", "8082"]
        .iter()
        .map(|port| {
            Command::new(BIN)
                .args(["card", "--url", &format!("http://127.0.0.1:{port}/")])
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    compose(&["down", "-v"]);
    assert_eq!(
        healthy,
        [true, true],
        "both replicas answer with their card"
    );
}
