//! Runs the example as written: serves it on 127.0.0.1:0 and talks to it
//! with switchboard's client: the card (extension, gRPC URL override, the
//! 0.3 fields), a streamed task with its chunked artifact, the extension
//! honoured when activated, and a push notification delivered to a webhook
//! on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use futures::StreamExt;
use switchboard_client::A2AClient;
use switchboard_sdk::protocol::{
    Message, SendMessageConfiguration, SendMessageRequest, StreamResponse,
    TaskPushNotificationConfig, TaskState,
};
use tokio::sync::{mpsc, oneshot};

/// A webhook on loopback that forwards each notification body.
async fn receiver() -> (String, mpsc::UnboundedReceiver<serde_json::Value>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: String| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(serde_json::from_str(&body).unwrap_or_default());
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

fn numbered(artifact_text: &str) -> Vec<&str> {
    artifact_text.lines().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_streams_writes_an_artifact_and_pushes() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = word_stats::server(&base, "grpc.word-stats.test:443").unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));

    // The card, as served.
    // Read as JSON, so that the 0.3 top-level fields show too.
    let card: serde_json::Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["capabilities"]["extensions"][0]["uri"],
        word_stats::WORD_LENGTHS
    );
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    let grpc: Vec<_> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(grpc.len(), 2, "1.0 and 0.3: {card}");
    assert!(grpc.iter().all(|i| i["url"] == "grpc.word-stats.test:443"));
    assert_eq!(
        card["url"],
        format!("{base}/"),
        "the 0.3 fields, by default"
    );

    // A streamed task with a push config for the webhook.
    let (hook, mut pushed) = receiver().await;
    let client = A2AClient::connect(&base).await.unwrap();
    let mut req = SendMessageRequest::new(Message::user_text("the quick brown fox"));
    req.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(TaskPushNotificationConfig {
            tenant: None,
            id: None,
            task_id: None,
            url: hook,
            token: Some("secret".into()),
            authentication: None,
        }),
        ..Default::default()
    });
    let mut stream = client.send_streaming_message(req).await.unwrap();
    let mut report = String::new();
    let mut states = Vec::new();
    while let Some(ev) = stream.next().await {
        match ev.unwrap().event {
            StreamResponse::ArtifactUpdate(a) => report.push_str(&a.artifact.text()),
            other => states.extend(other.state()),
        }
    }
    assert!(states.contains(&TaskState::Working), "{states:?}");
    assert_eq!(states.last(), Some(&TaskState::Completed));
    assert_eq!(
        numbered(&report),
        ["1. the", "2. quick", "3. brown", "4. fox", "4 words"]
    );

    // The webhook hears the task complete (push is on and wired).
    let completed = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(body) = pushed.recv().await {
            if body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED" {
                return body;
            }
        }
        panic!("the webhook receiver stopped");
    })
    .await
    .expect("no completed notification within 30 s");
    assert!(completed["statusUpdate"]["taskId"].is_string());

    // With the extension activated, the report gives each word's length.
    let client = A2AClient::builder()
        .extension(word_stats::WORD_LENGTHS)
        .connect(&base)
        .await
        .unwrap();
    let mut stream = client
        .send_streaming_message(Message::user_text("hello A2A"))
        .await
        .unwrap();
    let mut report = String::new();
    while let Some(ev) = stream.next().await {
        if let StreamResponse::ArtifactUpdate(a) = ev.unwrap().event {
            report.push_str(&a.artifact.text());
        }
    }
    assert_eq!(numbered(&report), ["1. hello (5)", "2. A2A (3)", "2 words"]);

    // A data part is refused, naming the modes the card accepts.
    let mut data = Message::user_text("x");
    data.parts = vec![
        switchboard_sdk::protocol::Part::data(serde_json::json!({"n": 1}))
            .with_media_type("application/json"),
    ];
    let err = client.send_message(data).await.unwrap_err().to_string();
    assert!(
        err.contains("message.parts[0]") && err.contains("accepts text/plain"),
        "{err}"
    );

    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
