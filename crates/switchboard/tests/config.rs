//! Every `serve` setting is a flag, a `SWITCHBOARD_*` variable and a TOML
//! key, and they rank flag > variable > file > default.
//!
//! The settings are walked from clap's own definitions
//! (`ServeArgs::command()`, flattened structs included), so a flag added
//! later is checked without touching this file. Each way of setting a
//! value is tried on the real binary (`switchboard config check`), whose
//! output says the effective value and where it came from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proc;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use clap::ArgAction;
use switchboard::serve::ServeArgs;

/// Values tried, in order, until one is accepted and differs from the
/// default. A new flag whose values none of these fit fails `sample` with
/// a message to add one here.
const CANDIDATES: &[&str] = &[
    "7",
    "8",
    "9",
    "127.0.0.1:7",
    "memory",
    "echo-task",
    "echo-message",
    "GRPC=127.0.0.1:7",
    "JSONRPC=http://127.0.0.1:8/",
    "HTTP+JSON=http://127.0.0.1:9/",
    "http://127.0.0.1:7/",
    "sqlite://x.db",
];

/// One run of `config check`: what it printed per key, as (value, source).
fn check(
    args: &[String],
    env: &[(String, String)],
    file: Option<&str>,
) -> Result<BTreeMap<String, (String, String)>, String> {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = proc::switchboard_without_env();
    cmd.args(["config", "check"]);
    if let Some(text) = file {
        let path = dir.path().join("sb.toml");
        std::fs::write(&path, text).unwrap();
        cmd.arg("--config").arg(&path);
    }
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(parse(&String::from_utf8(out.stdout).unwrap()))
}

/// `key = value   # source, VAR` lines (and `# key is unset   # source`).
fn parse(text: &str) -> BTreeMap<String, (String, String)> {
    text.lines()
        .map(|line| {
            let (setting, comment) = line.rsplit_once(" # ").unwrap();
            let source = comment.split(',').next().unwrap().trim().to_string();
            let setting = setting.trim();
            if let Some(unset) = setting.strip_prefix("# ") {
                let key = unset.strip_suffix(" is unset").unwrap();
                return (key.to_string(), (String::new(), source));
            }
            let (key, value) = setting.split_once(" = ").unwrap();
            (key.to_string(), (value.to_string(), source))
        })
        .collect()
}

struct Setting {
    id: String,
    long: String,
    env: String,
    action: ArgAction,
}

impl Setting {
    /// The setting `arg` declares, or `None` for the arguments that are no
    /// setting: `--help`, `--version` and `--config` (the file itself).
    fn of(arg: &clap::Arg) -> Option<Setting> {
        let id = arg.get_id().as_str();
        if matches!(arg.get_action(), ArgAction::Help | ArgAction::Version) || id == "config" {
            return None;
        }
        Some(Setting {
            id: id.to_string(),
            long: arg.get_long().unwrap_or_default().to_string(),
            env: arg
                .get_env()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default(),
            action: arg.get_action().clone(),
        })
    }
}

fn settings() -> Vec<Setting> {
    ServeArgs::command()
        .get_arguments()
        .filter_map(Setting::of)
        .collect()
}

/// How a setting is given each way: flag args, variable, TOML line.
fn ways(s: &Setting, value: &str) -> (Vec<String>, (String, String), String) {
    let toml_value = toml::Value::String(value.to_string()).to_string();
    match s.action {
        ArgAction::SetTrue => (
            vec![format!("--{}", s.long)],
            (s.env.clone(), "true".into()),
            format!("{} = true\n", s.id),
        ),
        ArgAction::Append => (
            vec![format!("--{}={value}", s.long)],
            (s.env.clone(), value.into()),
            format!("{} = [{toml_value}]\n", s.id),
        ),
        _ => (
            vec![format!("--{}={value}", s.long)],
            (s.env.clone(), value.into()),
            format!("{} = {toml_value}\n", s.id),
        ),
    }
}

/// Accepted values for `s` that differ from its default.
fn samples(s: &Setting, defaults: &BTreeMap<String, (String, String)>) -> Vec<String> {
    if matches!(s.action, ArgAction::SetTrue) {
        return vec!["true".into()];
    }
    let possible: Vec<String> = ServeArgs::command()
        .get_arguments()
        .find(|a| a.get_id() == s.id.as_str())
        .unwrap()
        .get_possible_values()
        .iter()
        .map(|p| p.get_name().to_string())
        .collect();
    let candidates: Vec<String> = if possible.is_empty() {
        CANDIDATES.iter().map(|c| c.to_string()).collect()
    } else {
        possible
    };
    candidates
        .into_iter()
        .filter(|v| {
            let (args, _, _) = ways(s, v);
            check(&args, &[], None).is_ok_and(|got| got[&s.id].0 != defaults[&s.id].0)
        })
        .take(3)
        .collect()
}

#[test]
fn every_flag_has_its_variable_and_key_and_they_agree() {
    let defaults = check(&[], &[], None).unwrap();
    let all = settings();
    assert!(all.len() > 15, "walked the definitions");
    for s in &all {
        assert_eq!(s.long, s.id.replace('_', "-"), "flag of `{}`", s.id);
        assert_eq!(
            s.env,
            format!("SWITCHBOARD_{}", s.id.to_ascii_uppercase()),
            "variable of `{}`",
            s.id
        );
        assert!(
            defaults.contains_key(&s.id),
            "`config check` prints `{}`",
            s.id
        );
        let values = samples(s, &defaults);
        let value = values.first().unwrap_or_else(|| {
            panic!("no sample value fits `--{}`: add one to CANDIDATES", s.long)
        });
        let (args, env, file) = ways(s, value);
        let by_flag = check(&args, &[], None).unwrap();
        let by_env = check(&[], &[env], None).unwrap();
        let by_file = check(&[], &[], Some(&file)).unwrap();
        assert_eq!(by_flag[&s.id].1, "flag", "{}", s.id);
        assert_eq!(by_env[&s.id].1, "env", "{}", s.id);
        assert_eq!(by_file[&s.id].1, "file", "{}", s.id);
        assert_ne!(by_flag[&s.id].0, defaults[&s.id].0, "{}", s.id);
        assert_eq!(
            by_flag[&s.id].0, by_env[&s.id].0,
            "flag and variable of `{}`",
            s.id
        );
        assert_eq!(
            by_flag[&s.id].0, by_file[&s.id].0,
            "flag and key of `{}`",
            s.id
        );
    }
}

#[test]
fn flag_beats_variable_beats_file() {
    let defaults = check(&[], &[], None).unwrap();
    let mut ranked = 0;
    for s in settings() {
        // Settings with three distinct non-default values: a repeatable
        // flag adds to the file, so only single-valued ones rank.
        if matches!(s.action, ArgAction::Append | ArgAction::SetTrue) {
            continue;
        }
        let values = samples(&s, &defaults);
        let [a, b, c, ..] = values.as_slice() else {
            continue;
        };
        let (flag, _, _) = ways(&s, a);
        let (_, env, _) = ways(&s, b);
        let (_, _, file) = ways(&s, c);
        let all = check(&flag, std::slice::from_ref(&env), Some(&file)).unwrap();
        let no_flag = check(&[], &[env], Some(&file)).unwrap();
        let file_only = check(&[], &[], Some(&file)).unwrap();
        let (by_flag, _) = &check(&flag, &[], None).unwrap()[&s.id];
        assert_eq!(&all[&s.id], &(by_flag.clone(), "flag".into()), "{}", s.id);
        assert_eq!(no_flag[&s.id].1, "env", "{}", s.id);
        assert_eq!(file_only[&s.id].1, "file", "{}", s.id);
        assert!(
            all[&s.id].0 != no_flag[&s.id].0 && no_flag[&s.id].0 != file_only[&s.id].0,
            "{}: three different values",
            s.id
        );
        ranked += 1;
    }
    assert!(ranked >= 8, "ranked {ranked} settings");
}

#[test]
fn repeatable_flags_add_to_the_file() {
    let got = check(
        &["--push-allow-host=b".into()],
        &[],
        Some("push_allow_hosts = [\"a\"]\n[interface_urls]\nGRPC = \"g:1\"\n"),
    )
    .unwrap();
    assert_eq!(got["push_allow_host"].0, "[\"a\", \"b\"]");
    assert_eq!(got["interface_url"].0, "[\"GRPC=g:1\"]");
}

#[test]
fn secrets_are_masked_and_errors_name_the_key() {
    let got = check(
        &["--store=postgres://sb:hunter2@127.0.0.1:5432/sb".into()],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(got["store"].0, "\"postgres://sb:***@127.0.0.1:5432/sb\"");
    let err = check(&[], &[], Some("replica_lease_ms = \"soon\"\n")).unwrap_err();
    assert!(err.contains("--replica-lease-ms"), "{err}");
    let err = check(&[], &[], Some("agent = \"nobody\"\n")).unwrap_err();
    assert!(err.contains("unknown agent"), "{err}");
    let err = check(
        &[],
        &[("SWITCHBOARD_MAX_BODY_BYTES".into(), "-1".into())],
        None,
    )
    .unwrap_err();
    assert!(err.contains("max-body-bytes"), "{err}");
}

#[test]
fn the_example_config_loads_and_says_the_defaults() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/switchboard.toml");
    let text = std::fs::read_to_string(&example).unwrap();
    let loaded = check(&[], &[], Some(&text)).unwrap();
    let defaults = check(&[], &[], None).unwrap();
    for (key, (value, _)) in &loaded {
        assert_eq!(
            value, &defaults[key].0,
            "the example's `{key}` is the default"
        );
    }
    // Every setting is at least mentioned in the example.
    for s in settings() {
        let aliases = [s.id.clone(), format!("{}s", s.id)];
        assert!(
            aliases
                .iter()
                .any(|k| text.contains(&format!("{k} =")) || text.contains(&format!("[{k}]"))),
            "deploy/switchboard.toml documents `{}`",
            s.id
        );
    }
}

#[test]
fn the_printed_configuration_is_a_config_file() {
    let first = check(
        &[
            "--listen=127.0.0.1:7".into(),
            "--interface-url=GRPC=g:1".into(),
        ],
        &[],
        None,
    )
    .unwrap();
    let text: String = first
        .iter()
        .filter(|(_, (v, _))| !v.is_empty())
        .map(|(k, (v, _))| format!("{k} = {v}\n"))
        .collect();
    let again = check(&[], &[], Some(&text)).unwrap();
    for (key, (value, _)) in &first {
        assert_eq!(&again[key].0, value, "{key}");
    }
}

#[test]
fn help_does_not_show_a_store_password_from_the_environment() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--help"])
        .env(
            "SWITCHBOARD_STORE",
            "postgres://app:hunter2-secret@127.0.0.1:5432/a2a",
        )
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(help.contains("SWITCHBOARD_STORE"), "{help}");
    assert!(!help.contains("hunter2-secret"), "{help}");
}

/// `switchboard bridge`'s settings follow the same rule with their own
/// variables (`SWITCHBOARD_BRIDGE_<KEY>`, the flags shared with `serve`
/// included), and the file layers under the flags the same way. Checked in
/// process on the same layered parse `bridge` runs: a flag and the file's
/// key give the same value, each reported with its source. (`bridge` has
/// no `config check` to print what a variable set, so the variable is
/// checked by its name on the definition.)
#[test]
fn every_bridge_flag_has_its_variable_and_key_and_they_agree() {
    use std::ffi::OsString;
    use switchboard::bridge_cmd::BridgeArgs;
    use switchboard::config::{Source, parse_layered};

    let cmd = BridgeArgs::command();
    let dir = tempfile::tempdir().unwrap();
    // What one setting parses to (its raw values) and where it came from.
    let parse = |id: &str, args: &[String], file: Option<&str>| {
        let mut argv: Vec<OsString> = Vec::new();
        if id != "agent" {
            argv.push("--agent=http://127.0.0.1:1".into());
        }
        if let Some(text) = file {
            let path = dir.path().join("bridge.toml");
            std::fs::write(&path, format!("[bridge]\n{text}")).unwrap();
            argv.push("--config".into());
            argv.push(path.into_os_string());
        }
        argv.extend(args.iter().map(OsString::from));
        let layered = parse_layered(&cmd, &argv, "config").ok()?;
        let values: Vec<String> = layered
            .matches
            .get_raw(id)
            .map(|v| v.map(|v| v.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let source = layered.sources.get(id).copied().unwrap_or(Source::Default);
        Some((values, source))
    };
    let mut walked = 0;
    for arg in cmd.get_arguments() {
        let Some(s) = Setting::of(arg) else {
            continue;
        };
        let id = s.id.as_str();
        assert_eq!(s.long, s.id.replace('_', "-"), "flag of `{id}`");
        assert_eq!(
            s.env,
            format!("SWITCHBOARD_BRIDGE_{}", id.to_ascii_uppercase()),
            "variable of `{id}`"
        );
        let default = if id == "agent" {
            Vec::new()
        } else {
            parse(id, &[], None).unwrap().0
        };
        let possible: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|p| p.get_name().to_string())
            .collect();
        let candidates: Vec<String> = if matches!(s.action, ArgAction::SetTrue) {
            vec!["true".into()]
        } else if !possible.is_empty() {
            possible
        } else {
            CANDIDATES
                .iter()
                .chain(&["X-Team: blue", "GRPC"])
                .map(|c| c.to_string())
                .collect()
        };
        let value = candidates
            .iter()
            .find(|v| {
                let (args, _, _) = ways(&s, v);
                parse(id, &args, None).is_some_and(|(got, _)| got != default)
            })
            .unwrap_or_else(|| panic!("no sample value fits `--{}`", s.long));
        let (args, _, file) = ways(&s, value);
        let by_flag = parse(id, &args, None).unwrap();
        let by_file = parse(id, &[], Some(&file))
            .unwrap_or_else(|| panic!("the file's `{id}` parses: {file}"));
        assert_eq!(by_flag.1, Source::Flag, "{id}");
        assert_eq!(by_file.1, Source::File, "{id}");
        assert_eq!(by_flag.0, by_file.0, "flag and key of `{id}`");
        walked += 1;
    }
    assert!(
        walked > 20,
        "walked {walked} settings, shared ones included"
    );
}
