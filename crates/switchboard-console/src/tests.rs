#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::validate_card;

fn valid_card() -> Value {
    json!({
        "name": "demo",
        "description": "a demo agent",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "127.0.0.1:8080", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "extensions": [{"uri": "https://example.com/ext"}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": "a", "name": "A", "description": "does a", "tags": ["x"]}],
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
        "securityRequirements": [{"schemes": {"key": {"list": []}}}]
    })
}

fn broken(card: &Value) -> Vec<(String, String)> {
    validate_card(card)
        .into_iter()
        .map(|i| (i.path, i.rule))
        .collect()
}

#[test]
fn a_valid_card_breaks_nothing() {
    assert_eq!(broken(&valid_card()), []);
}

#[test]
fn each_broken_rule_names_its_field() {
    let mut card = valid_card();
    card["supportedInterfaces"][0]
        .as_object_mut()
        .unwrap()
        .remove("protocolVersion");
    card["supportedInterfaces"][1]["protocolVersion"] = json!("one");
    card["supportedInterfaces"]
        .as_array_mut()
        .unwrap()
        .push(json!({"url": "/relative", "protocolBinding": "SOAP", "protocolVersion": "1.0"}));
    card.as_object_mut().unwrap().remove("description");
    card["defaultOutputModes"] = json!(["text"]);
    card["skills"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "a", "name": "again", "description": "", "tags": "no"}));
    card["securityRequirements"] = json!([{"schemes": {"oauth": {"list": []}}}]);
    card["securitySchemes"]["both"] = json!({"apiKeySecurityScheme": {"location": "header", "name": "k"}, "mtlsSecurityScheme": {}});
    card["capabilities"]["streaming"] = json!("yes");
    let issues = broken(&card);
    let has = |path: &str, fragment: &str| {
        assert!(
            issues
                .iter()
                .any(|(p, r)| p == path && r.contains(fragment)),
            "no issue {path}: {fragment} in {issues:#?}"
        )
    };
    has(
        "supportedInterfaces[0].protocolVersion",
        "required field is missing",
    );
    has("supportedInterfaces[1].protocolVersion", "not a version");
    has("supportedInterfaces[2].url", "absolute");
    has(
        "supportedInterfaces[2].protocolBinding",
        "not a core binding",
    );
    has("description", "required field is missing");
    has("defaultOutputModes[0]", "not a media type");
    has("skills[1].id", "used by an earlier skill");
    has("skills[1].description", "empty");
    has("skills[1].tags", "must be an array");
    has("securityRequirements[0].schemes.oauth", "does not declare");
    has("securitySchemes.both", "exactly one");
    has("capabilities.streaming", "boolean");
    assert_eq!(issues.len(), 12, "{issues:#?}");
}

#[test]
fn a_card_that_is_not_an_object_is_one_issue() {
    assert_eq!(
        broken(&json!([1])),
        [(String::new(), "must be an object".to_owned())]
    );
}

#[test]
fn an_empty_card_lists_every_required_field() {
    let paths: Vec<String> = broken(&json!({})).into_iter().map(|(p, _)| p).collect();
    for field in [
        "name",
        "description",
        "version",
        "supportedInterfaces",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ] {
        assert!(paths.iter().any(|p| p == field), "{field} in {paths:?}");
    }
}

mod router {
    use axum::body::Body;
    use http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::{ConsoleConfig, router};

    fn console() -> axum::Router {
        router(ConsoleConfig::new(
            "http://127.0.0.1:9",
            switchboard_client::ClientBuilder::new(),
        ))
    }

    async fn get(path: &str, console_header: bool) -> (StatusCode, http::HeaderMap, String) {
        let mut request = Request::get(path);
        if console_header {
            request = request.header("x-switchboard-console", "1");
        }
        let response = console()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 22).await.unwrap();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    #[tokio::test]
    async fn the_page_and_its_modules_are_served_with_a_strict_policy() {
        let (status, headers, body) = get("/console/", false).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("<title>"), "{body}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'"), "{csp}");
        let (status, _, _) = get("/console", false).await;
        assert!(status.is_redirection());
        let (status, headers, _) = get("/console/assets/app.js", false).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/javascript")
        );
        let (status, _, _) = get("/console/assets/nope.js", false).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn api_calls_without_the_console_header_are_refused() {
        let (status, _, _) = get("/console/api/tasks", false).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        // With it, the call goes to the agent (here: nothing listens).
        let (status, _, body) = get("/console/api/tasks", true).await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
        assert!(body.contains("\"error\""), "{body}");
    }

    async fn call(method: &str, path: &str, body: &str) -> (StatusCode, http::HeaderMap, String) {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("x-switchboard-console", "1")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let response = console().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 22).await.unwrap();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    #[tokio::test]
    async fn the_api_answers_unknown_calls_and_wrong_methods_before_the_agent() {
        let (status, _, body) = call("GET", "/console/api/nope", "").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert!(body.contains("no console API call"), "{body}");
        let (status, _, _) = call("GET", "/console/api/tasks/a/b/c", "").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _, _) = call("GET", "/console/api/tasks//cancel", "").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, headers, body) = call("GET", "/console/api/send", "").await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
        assert_eq!(headers["allow"], "POST");
        let (status, headers, _) = call("POST", "/console/api/tasks/t-1", "").await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(headers["allow"], "GET");
    }

    #[tokio::test]
    async fn a_send_or_a_list_the_agent_could_not_read_is_refused_here() {
        for (body, says) in [
            ("[]", "not a JSON object"),
            (
                r#"{"stream": 1, "request": {}}"#,
                "`stream` is not a boolean",
            ),
            (r#"{"stream": false}"#, "no `request`"),
            (r#"{"request": {"message": 7}}"#, "SendMessageRequest"),
        ] {
            let (status, _, answer) = call("POST", "/console/api/send", body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
            assert!(answer.contains(says), "{body}: {answer}");
        }
        let (status, _, answer) = call("GET", "/console/api/tasks?state=SLEEPING", "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer.contains("ListTasksRequest"), "{answer}");
        let (status, _, answer) = call("GET", "/console/api/tasks?pageSize=many", "").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        // A known state, a task id with an escaped `/`: on to the agent
        // (here: nothing listens).
        for path in [
            "/console/api/tasks?state=TASK_STATE_WORKING&pageSize=5",
            "/console/api/tasks/a%2Fb",
        ] {
            let (status, _, answer) = call("GET", path, "").await;
            assert_eq!(status, StatusCode::BAD_GATEWAY, "{path}: {answer}");
        }
    }

    #[test]
    fn the_assets_stay_small() {
        let total: usize = crate::assets::ASSETS.iter().map(|a| a.body.len()).sum();
        assert!(total < 300 * 1024, "{total} bytes of assets");
    }
}
