#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn the_extended_card_file_adds_skills_and_replaces_members() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("extended.json");
    std::fs::write(
        &path,
        r#"{"description": "for customers", "skills": [{"id": "secret", "name": "Secret", "description": "s", "tags": []}]}"#,
    )
    .unwrap();
    let public = switchboard_runtimes::builtin::echo_card();
    let card = extended_card(&public, &path).unwrap();
    assert_eq!(card.description, "for customers");
    assert_eq!(card.name, public.name);
    assert_eq!(card.skills.len(), public.skills.len() + 1);
    assert_eq!(card.skills.last().map(|k| k.id.as_str()), Some("secret"));
    std::fs::write(&path, "[1]").unwrap();
    let err = extended_card(&public, &path).unwrap_err().to_string();
    assert!(err.contains("must be a JSON object"), "{err}");
}

#[test]
fn push_keys_live_beside_the_sqlite_file_by_default() {
    assert_eq!(
        push_key_path("sqlite:///var/lib/sb/tasks.db?mode=rwc", None).unwrap(),
        PathBuf::from("/var/lib/sb/tasks.push-keys.json"),
    );
    assert_eq!(
        push_key_path("memory", None),
        None,
        "memory store: keys in memory"
    );
    assert_eq!(push_key_path("sqlite::memory:", None), None);
    let file = std::path::Path::new("/etc/sb/keys.json");
    assert_eq!(
        push_key_path("memory", Some(file)).as_deref(),
        Some(file),
        "a configured file wins"
    );
}

#[tokio::test]
async fn an_unknown_store_is_an_error_without_its_password() {
    let settings = HostSettings {
        store: "redis://u:hunter2@x".into(),
        ..HostSettings::default()
    };
    let err = open_store(&settings).await.err().unwrap();
    let shown = error_chain(&err);
    assert!(
        shown.contains("unknown store") && !shown.contains("hunter2"),
        "{shown}"
    );
}

#[tokio::test]
async fn half_a_tls_pair_and_sign_card_without_push_are_refused() {
    let agent = || switchboard_runtimes::builtin::by_name("echo-task").unwrap();
    let settings = HostSettings {
        listen: "127.0.0.1:0".into(),
        tls_cert: Some("cert.pem".into()),
        ..HostSettings::default()
    };
    let (executor, card) = agent();
    let err = Host::bind(executor, card, settings).await.err().unwrap();
    assert_eq!(
        err.to_string(),
        "tls_cert is set but tls_key is not: TLS needs both"
    );
    let settings = HostSettings {
        listen: "127.0.0.1:0".into(),
        push: None,
        sign_card: true,
        ..HostSettings::default()
    };
    let (executor, card) = agent();
    let err = Host::bind(executor, card, settings).await.err().unwrap();
    assert!(matches!(err, HostError::SignCardWithoutPush), "{err}");
}

#[tokio::test]
async fn a_host_serves_its_agent_with_probes_and_stops_on_shutdown() {
    let (executor, card) = switchboard_runtimes::builtin::by_name("echo-task").unwrap();
    let settings = HostSettings {
        listen: "127.0.0.1:0".into(),
        ..HostSettings::default()
    };
    let host = Host::bind(executor, card, settings).await.unwrap();
    let url = host.url().to_owned();
    assert_eq!(host.public_url(), url, "no public URL: the listening one");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(host.serve(async move {
        let _ = stopped.await;
    }));
    let text = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let card: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        card["name"],
        switchboard_runtimes::builtin::echo_card().name
    );
    let health = reqwest::get(format!("{url}/healthz")).await.unwrap();
    assert!(health.status().is_success(), "{}", health.status());
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
}
