//! End-to-end tests of the JSON-RPC binding over real loopback HTTP: every
//! operation, every error code, every task state, with the demo agent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_protocol::AgentCard;
use util::edge::{FailingStore, edge_card, edge_handler};
use util::*;

async fn demo_server() -> TestServer {
    TestServer::start(demo_handler()).await
}

#[tokio::test]
async fn agent_card_is_served_with_interfaces_and_caching() {
    let s = demo_server().await;
    let card_path = "/.well-known/agent-card.json";
    let (status, body, headers) = s.send(Method::GET, card_path, None, &[]).await;
    assert_eq!(status, 200);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert!(
        headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    let card: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(card["name"], "switchboard demo");
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/", s.base)
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    for field in [
        "description",
        "version",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ] {
        assert!(card.get(field).is_some(), "card lacks REQUIRED {field}");
    }
    let (status, _, _) = s
        .send(Method::GET, card_path, None, &[("If-None-Match", &etag)])
        .await;
    assert_eq!(status, 304);
    s.stop().await;
}

#[tokio::test]
async fn send_blocking_returns_completed_task_with_streamed_artifact() {
    let s = demo_server().await;
    let v = s.rpc_send_text("hello big world").await;
    let task = &result(&v)["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(task["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
    let text = artifact_text(&task["artifacts"][0]);
    assert!(text.contains("You said: hello big world"), "{text}");
    assert!(text.contains("Words: 3"), "{text}");
    assert!(text.contains("Reversed: dlrow gib olleh"), "{text}");
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert_eq!(task["history"][0]["taskId"], task["id"]);
    assert_eq!(task["history"][0]["contextId"], task["contextId"]);
    // historyLength 0 omits the history field.
    let v = s
        .rpc_send_configured("x", json!({"historyLength": 0}))
        .await;
    assert!(result(&v)["task"].get("history").is_none());
    s.stop().await;
}

#[tokio::test]
async fn direct_message_reply_and_help() {
    let s = demo_server().await;
    let mut msg = user_msg("/message hi there");
    msg["contextId"] = json!("ctx-given");
    let v = s.rpc("SendMessage", json!({"message": msg})).await;
    let m = &result(&v)["message"];
    assert_eq!(m["role"], "ROLE_AGENT");
    assert_eq!(m["parts"][0]["text"], "You said: hi there");
    assert_eq!(
        m["contextId"], "ctx-given",
        "a client-provided contextId is preserved"
    );
    assert!(m.get("taskId").is_none());
    let v = s.rpc_send_text("/help").await;
    assert!(
        result(&v)["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/long")
    );
    // Streaming a message reply: exactly one event, then the stream closes.
    let frames = s
        .sse(
            "SendStreamingMessage",
            json!({"message": user_msg("/message yo")}),
        )
        .await
        .collect()
        .await;
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0].data["result"]["message"]["parts"][0]["text"],
        "You said: yo"
    );
    s.stop().await;
}

#[tokio::test]
async fn nonblocking_get_list_subscribe_cancel() {
    let s = demo_server().await;
    let v = s
        .rpc_send_configured("/long 30", json!({"returnImmediately": true}))
        .await;
    let task = result(&v)["task"].clone();
    let id = task["id"].as_str().unwrap().to_string();
    let state = task["status"]["state"].as_str().unwrap();
    assert!(
        state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING",
        "{state}"
    );

    let got = s.rpc("GetTask", json!({"id": id})).await;
    assert_eq!(result(&got)["id"], id.as_str());
    let list = s.rpc("ListTasks", json!({})).await;
    let list = result(&list);
    assert!(
        list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str())
    );
    for f in ["tasks", "nextPageToken", "pageSize", "totalSize"] {
        assert!(list.get(f).is_some(), "ListTasks lacks {f}");
    }
    assert!(
        list["tasks"][0].get("artifacts").is_none(),
        "artifacts omitted unless includeArtifacts"
    );

    // Two subscribers, then cancel: both see the same frames, ending in CANCELED.
    let sub1 = s.sse("SubscribeToTask", json!({"id": id})).await;
    let sub2 = s.sse("SubscribeToTask", json!({"id": id})).await;
    assert!(sub1.content_type().starts_with("text/event-stream"));
    // Both have their first frame (the task): both are subscribed.
    let h1 = sub1.follow().await;
    let h2 = sub2.follow().await;
    let c = s.rpc("CancelTask", json!({"id": id})).await;
    assert_eq!(result(&c)["status"]["state"], "TASK_STATE_CANCELED");
    let (f1, f2) = (h1.await.unwrap(), h2.await.unwrap());
    assert!(
        f1[0].data["result"]["task"].is_object(),
        "subscription starts with the task"
    );
    assert_eq!(
        f1.last().unwrap().data["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let ids = |f: &[Frame]| f.iter().map(|x| x.id.clone().unwrap()).collect::<Vec<_>>();
    let (i1, i2) = (ids(&f1), ids(&f2));
    assert_eq!(
        i1.last(),
        i2.last(),
        "both subscribers end at the same event"
    );
    let tail = i1.len().min(i2.len());
    assert_eq!(
        i1[i1.len() - tail + 1..],
        i2[i2.len() - tail + 1..],
        "same events in the same order"
    );

    // Terminal now: cancel, subscribe and new messages are refused.
    assert_eq!(
        err_code(&s.rpc("CancelTask", json!({"id": id})).await),
        -32002
    );
    assert_eq!(
        err_code(&s.rpc("SubscribeToTask", json!({"id": id})).await),
        -32004
    );
    let mut msg = user_msg("more");
    msg["taskId"] = json!(id);
    assert_eq!(
        err_code(&s.rpc("SendMessage", json!({"message": msg})).await),
        -32004
    );
    s.stop().await;
}

#[tokio::test]
async fn streaming_message_frames_carry_sequence_ids() {
    let s = demo_server().await;
    let call = s
        .sse(
            "SendStreamingMessage",
            json!({"message": user_msg("stream me")}),
        )
        .await;
    assert!(call.content_type().starts_with("text/event-stream"));
    let frames = call.collect().await;
    assert!(frames.len() >= 6, "{frames:?}");
    assert!(
        frames
            .iter()
            .all(|f| f.data["jsonrpc"] == "2.0" && f.data["id"] == "s1")
    );
    let seqs: Vec<u64> = frames
        .iter()
        .map(|f| f.id.as_ref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(seqs, (1..=frames.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        frames[0].data["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    let chunks: Vec<&Value> = frames
        .iter()
        .filter_map(|f| f.data["result"].get("artifactUpdate"))
        .collect();
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks[0].get("append"), None);
    assert_eq!(chunks[1]["append"], true);
    assert_eq!(chunks[3]["lastChunk"], true);
    let text: String = chunks
        .iter()
        .map(|c| artifact_text(&c["artifact"]))
        .collect();
    assert!(text.starts_with("You said: stream me"));
    assert_eq!(
        frames.last().unwrap().data["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    s.stop().await;
}

#[tokio::test]
async fn every_task_state_is_reachable() {
    let s = demo_server().await;
    let state_of = |v: &Value| {
        result(v)["task"]["status"]["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // working (multi-step) → completed
    let v = s.rpc_send_text("/steps 3").await;
    assert_eq!(state_of(&v), "TASK_STATE_COMPLETED");
    let hist: Vec<String> = result(&v)["task"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["parts"][0]["text"].as_str().unwrap().to_string())
        .collect();
    assert!(hist.contains(&"step 3 of 3".to_string()), "{hist:?}");
    // failed, rejected
    let v = s.rpc_send_text("/fail disk full").await;
    assert_eq!(state_of(&v), "TASK_STATE_FAILED");
    assert_eq!(
        result(&v)["task"]["status"]["message"]["parts"][0]["text"],
        "disk full"
    );
    let v = s.rpc_send_text("/reject").await;
    assert_eq!(state_of(&v), "TASK_STATE_REJECTED");
    // auth-required: a blocking call returns at the interruption; cancel ends it.
    let v = s.rpc_send_text("/auth").await;
    assert_eq!(state_of(&v), "TASK_STATE_AUTH_REQUIRED");
    let id = result(&v)["task"]["id"].clone();
    let c = s.rpc("CancelTask", json!({"id": id})).await;
    assert_eq!(result(&c)["status"]["state"], "TASK_STATE_CANCELED");
    // input-required → (follow-up) working → completed, same task and context.
    let v = s.rpc_send_text("/ask").await;
    assert_eq!(state_of(&v), "TASK_STATE_INPUT_REQUIRED");
    let t = result(&v)["task"].clone();
    let mut wrong = user_msg("Ada");
    wrong["taskId"] = t["id"].clone();
    wrong["contextId"] = json!("not-the-context");
    assert_eq!(
        err_code(&s.rpc("SendMessage", json!({"message": wrong})).await),
        -32602
    );
    let mut answer = user_msg("Ada");
    answer["taskId"] = t["id"].clone();
    let frames = s
        .sse("SendStreamingMessage", json!({"message": answer}))
        .await
        .collect()
        .await;
    assert_eq!(frames[0].data["result"]["task"]["id"], t["id"]);
    let states: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.data["result"]["statusUpdate"]["status"]["state"].as_str())
        .collect();
    assert_eq!(states.first(), Some(&"TASK_STATE_WORKING"));
    assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"));
    let got = s.rpc("GetTask", json!({"id": t["id"]})).await;
    let done = result(&got);
    assert_eq!(done["contextId"], t["contextId"]);
    assert!(artifact_text(&done["artifacts"][0]).contains("Hello, Ada!"));
    // A follow-up to the finished task: new task, same context, reference kept.
    let mut next = user_msg("thanks");
    next["contextId"] = t["contextId"].clone();
    next["referenceTaskIds"] = json!([t["id"]]);
    let v = s.rpc("SendMessage", json!({"message": next})).await;
    let t2 = &result(&v)["task"];
    assert_ne!(t2["id"], t["id"]);
    assert_eq!(t2["contextId"], t["contextId"]);
    assert_eq!(t2["history"][0]["referenceTaskIds"][0], t["id"]);
    s.stop().await;
}

#[tokio::test]
async fn approve_asks_with_a_form_and_completes_on_its_answer() {
    let s = demo_server().await;
    for (values, expected) in [
        (
            json!({"approved": true, "comment": "ship it"}),
            "approved: the deploy (ship it)",
        ),
        (json!({"approved": false}), "declined: the deploy"),
    ] {
        let v = s.rpc_send_text("/approve the deploy").await;
        let task = result(&v)["task"].clone();
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let parts = &task["status"]["message"]["parts"];
        assert!(
            parts[0]["text"]
                .as_str()
                .unwrap()
                .contains("approve the deploy"),
            "{parts}"
        );
        let form = &parts[1]["data"];
        assert_eq!(form["type"], "a2a.hitl.form");
        assert_eq!(form["formId"], "approve");
        assert_eq!(form["title"], "Approve the deploy?");
        assert_eq!(
            form["fields"],
            json!([
                {"name": "approved", "type": "boolean", "label": "Approve", "required": true},
                {"name": "comment", "type": "string", "label": "Comment"},
            ])
        );
        let answer = json!({
            "messageId": uuid(), "role": "ROLE_USER", "taskId": task["id"],
            "parts": [{"data": {"type": "a2a.hitl.formResponse", "formId": "approve", "values": values}}],
        });
        let done = s.rpc("SendMessage", json!({"message": answer})).await;
        let done = &result(&done)["task"];
        assert_eq!(done["id"], task["id"]);
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
        let decision = done["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "decision")
            .unwrap();
        assert_eq!(artifact_text(decision), expected);
    }
    // A cancel ends the waiting task.
    let v = s.rpc_send_text("/approve the deploy").await;
    let id = result(&v)["task"]["id"].clone();
    let c = s.rpc("CancelTask", json!({"id": id})).await;
    assert_eq!(result(&c)["status"]["state"], "TASK_STATE_CANCELED");
    s.stop().await;
}

#[tokio::test]
async fn protocol_errors_have_spec_codes() {
    let s = demo_server().await;
    let v1 = [("A2A-Version", "1.0")];
    // -32700: not JSON.
    let (st, v, _) = s.post_json("{\"jsonrpc\": \"2.0\", ", &v1).await;
    assert_eq!(st, 200);
    assert_eq!(err_code(&v), -32700);
    assert_eq!(v["id"], Value::Null);
    // -32600: not a request object; wrong jsonrpc version.
    assert_eq!(err_code(&s.post_json("[]", &v1).await.1), -32600);
    let (_, v, _) = s
        .post_json(r#"{"jsonrpc":"1.0","id":9,"method":"GetTask"}"#, &v1)
        .await;
    assert_eq!(err_code(&v), -32600);
    assert_eq!(v["id"], 9, "the id is echoed when it could be read");
    // -32601: unknown method.
    let v = s.rpc("DoSomething", json!({})).await;
    assert_eq!(err_code(&v), -32601);
    assert_eq!(v["error"]["data"][0]["reason"], "METHOD_NOT_FOUND");
    // -32602: wrong types, missing required fields, bad values.
    assert_eq!(
        err_code(
            &s.rpc(
                "SendMessage",
                json!({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}})
            )
            .await
        ),
        -32602
    );
    assert_eq!(err_code(&s.rpc("SendMessage", json!({})).await), -32602);
    assert_eq!(err_code(&s.rpc("GetTask", json!({"id": 42})).await), -32602);
    assert_eq!(
        err_code(&s.rpc("ListTasks", json!({"pageSize": 1000})).await),
        -32602
    );
    assert_eq!(err_code(&s.rpc("SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "data": 1}]}})).await), -32602);
    // -32001: unknown task, with ErrorInfo.
    let v = s.rpc("GetTask", json!({"id": "no-such-task"})).await;
    assert_eq!(err_code(&v), -32001);
    assert_eq!(
        v["error"]["data"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
    assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
    let mut m = user_msg("x");
    m["taskId"] = json!("no-such-task");
    assert_eq!(
        err_code(&s.rpc("SendMessage", json!({"message": m})).await),
        -32001
    );
    assert_eq!(
        err_code(&s.rpc("CancelTask", json!({"id": "nope"})).await),
        -32001
    );
    assert_eq!(
        err_code(&s.rpc("SubscribeToTask", json!({"id": "nope"})).await),
        -32001
    );
    // -32003: push configs are not supported yet.
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t", "url": "https://example.com/hook"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t", "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": "t"})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "t", "id": "c"}),
        ),
    ] {
        assert_eq!(err_code(&s.rpc(method, params).await), -32003, "{method}");
    }
    // -32004: extended card not offered.
    assert_eq!(
        err_code(&s.rpc("GetExtendedAgentCard", json!({})).await),
        -32004
    );
    // -32005: wrong Content-Type, unsupported part media type, output modes.
    let (_, v, _) = s
        .post_json(
            &json!({"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"x"}}).to_string(),
            &[("A2A-Version", "1.0"), ("Content-Type", "text/plain")],
        )
        .await;
    assert_eq!(err_code(&v), -32005);
    assert_eq!(v["id"], 3);
    let img = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"raw": "AAEC", "mediaType": "image/png"}]});
    assert_eq!(
        err_code(&s.rpc("SendMessage", json!({"message": img})).await),
        -32005
    );
    let modes = json!({"acceptedOutputModes": ["video/mp4"]});
    assert_eq!(err_code(&s.rpc_send_configured("x", modes).await), -32005);
    // A 1.0 method without A2A-Version is still served as 1.0 (the method
    // name decides, see switchboard_server::params); -32009 is for versions
    // nobody serves.
    let (_, v, _) = s
        .post_json(
            &json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}).to_string(),
            &[],
        )
        .await;
    assert_eq!(err_code(&v), -32001);
    let (_, v, _) = s
        .post_json(
            &json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}).to_string(),
            &[("A2A-Version", "2.0")],
        )
        .await;
    assert_eq!(err_code(&v), -32009);
    // ...and the query parameter form works.
    let resp = s
        .http
        .post(format!("{}/?A2A-Version=1.0", s.base))
        .header("Content-Type", "application/json")
        .body(json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(err_code(&resp.json::<Value>().await.unwrap()), -32001);
    s.stop().await;
}

#[tokio::test]
async fn oversize_bodies_and_trailing_slash() {
    let s = TestServer::start_with(
        |srv| srv.max_body_bytes(4096).rpc_path("/a2a"),
        demo_handler(),
    )
    .await;
    let big = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": user_msg(&"x".repeat(10_000))}});
    for path in ["/a2a", "/a2a/"] {
        let (status, body, _) = s.post_json_at(path, &big.to_string(), V1).await;
        assert_eq!(status, 413);
        assert_eq!(err_code(&body), -32600);
        let small = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": user_msg("small")}});
        let (_, ok, _) = s.post_json_at(path, &small.to_string(), V1).await;
        assert_eq!(
            result(&ok)["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    // Only the path and the path with one slash more are the endpoint.
    let small = json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}});
    for path in ["/", "/a2ax", "/a2a//", "/A2A"] {
        let (status, _, _) = s.post_json_at(path, &small.to_string(), V1).await;
        assert_eq!(status, 404, "POST {path}");
    }
    let card = s.card().await;
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/a2a", s.base)
    );
    s.stop().await;
}

#[tokio::test]
async fn agent_and_server_side_errors() {
    // -32006: the agent's reply is invalid. -32007: extended card declared
    // but not configured. -32008: a required extension not activated.
    let s = TestServer::start(edge_handler(edge_card(true, true), None)).await;
    let body = |text: &str| {
        json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": user_msg(text)}})
            .to_string()
    };
    let (_, v, _) = s.post_json(&body("hi"), &[("A2A-Version", "1.0")]).await;
    assert_eq!(err_code(&v), -32008);
    assert_eq!(
        v["error"]["data"][0]["metadata"]["extension"],
        "urn:x-required"
    );
    let (_, v, hdrs) = s
        .post_json(
            &body("hi"),
            &[
                ("A2A-Version", "1.0"),
                (
                    "A2A-Extensions",
                    "urn:x-required, urn:x-optional, urn:unknown",
                ),
            ],
        )
        .await;
    assert_eq!(
        result(&v)["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        hdrs["a2a-extensions"], "urn:x-required,urn:x-optional",
        "echo only what was applied"
    );
    let (_, v, _) = s
        .post_json(
            &body("empty-reply"),
            &[("A2A-Version", "1.0"), ("A2A-Extensions", "urn:x-required")],
        )
        .await;
    assert_eq!(err_code(&v), -32006);
    let (_, v, _) = s
        .post_json(
            &json!({"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}).to_string(),
            &[("A2A-Version", "1.0"), ("A2A-Extensions", "urn:x-required")],
        )
        .await;
    assert_eq!(err_code(&v), -32007);
    s.stop().await;

    // -32603: the store fails.
    let s = TestServer::start(edge_handler(
        AgentCard::new("x", "x", "1"),
        Some(Arc::new(FailingStore)),
    ))
    .await;
    let v = s.rpc("GetTask", json!({"id": "anything"})).await;
    assert_eq!(err_code(&v), -32603);
    // Streaming is not declared on this card: -32004 for both stream methods.
    assert_eq!(
        err_code(
            &s.rpc("SendStreamingMessage", json!({"message": user_msg("x")}))
                .await
        ),
        -32004
    );
    assert_eq!(
        err_code(&s.rpc("SubscribeToTask", json!({"id": "x"})).await),
        -32004
    );
    s.stop().await;
}

#[tokio::test]
async fn list_pagination_over_http() {
    let s = demo_server().await;
    s.send_tasks_in_context("paging", 7).await;
    let page = |token: String| {
        let s = &s;
        async move {
            let v = s.rpc("ListTasks", json!({"contextId": "paging", "pageSize": 3, "pageToken": token, "includeArtifacts": true})).await;
            result(&v).clone()
        }
    };
    for t in all_pages(page, 7, 3).await {
        assert!(t["artifacts"].is_array());
    }
    // The JS SDK sends status "UNRECOGNIZED" when no filter is set.
    for (status, total) in [("UNRECOGNIZED", 7), ("TASK_STATE_WORKING", 0)] {
        let params = json!({"contextId": "paging", "status": status});
        let v = s.rpc("ListTasks", params).await;
        assert_eq!(result(&v)["totalSize"], total, "{status}");
    }
    s.stop().await;
}
