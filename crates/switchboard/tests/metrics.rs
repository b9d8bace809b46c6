//! `/metrics` on a real `serve`: the exposition parses as Prometheus text
//! (a strict parser below: names, labels, escapes, one TYPE per family
//! before its samples, no duplicate series, histograms cumulative with a
//! `+Inf` bucket equal to their count) and its counters move with traffic:
//! requests by operation, binding and code, task transitions, stream
//! subscribers and running agents, push deliveries, connections.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use proc::Serve;
use serde_json::{Value, json};

/// One series: metric name and its labels, sorted.
type Series = (String, BTreeMap<String, String>);

/// A parsed exposition: every sample by series, and each family's type.
#[derive(Debug)]
struct Exposition {
    samples: HashMap<Series, f64>,
    types: HashMap<String, String>,
}

impl Exposition {
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let key = (
            name.to_string(),
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        self.samples.get(&key).copied().unwrap_or(0.0)
    }
}

fn metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn label_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse().map_err(|_| format!("bad value {s:?}")),
    }
}

/// `{a="x",b="y\"z"}` → labels; the rest of the line after `}`.
fn labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut out = BTreeMap::new();
    let mut rest = s.strip_prefix('{').ok_or("no {")?;
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((out, after));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let name = &rest[..eq];
        if !label_name(name) {
            return Err(format!("bad label name {name:?}"));
        }
        let mut chars = rest[eq + 1..].char_indices();
        if chars.next().map(|(_, c)| c) != Some('"') {
            return Err("label value not quoted".into());
        }
        let mut val = String::new();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next().map(|(_, c)| c) {
                    Some('\\') => val.push('\\'),
                    Some('"') => val.push('"'),
                    Some('n') => val.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                '"' => {
                    end = Some(eq + 1 + i + 1);
                    break;
                }
                '\n' => return Err("newline in label value".into()),
                c => val.push(c),
            }
        }
        let end = end.ok_or("unterminated label value")?;
        if out.insert(name.to_string(), val).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[end..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

/// The family a sample name belongs to, given the declared types.
fn family<'a>(name: &'a str, types: &HashMap<String, String>) -> Option<&'a str> {
    if types.contains_key(name) {
        return Some(name);
    }
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix)
            && types.get(base).is_some_and(|t| t == "histogram")
        {
            return Some(base);
        }
    }
    None
}

/// Parses the text format strictly; any deviation is an error naming the line.
fn parse(text: &str) -> Result<Exposition, String> {
    let mut samples = HashMap::new();
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps = HashMap::new();
    let mut seen_samples: HashMap<String, bool> = HashMap::new();
    if !text.ends_with('\n') {
        return Err("the exposition must end with a newline".into());
    }
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.trim_start().splitn(3, ' ');
            match words.next() {
                Some("HELP") => {
                    let name = words.next().ok_or_else(|| at("HELP without name".into()))?;
                    if !metric_name(name) || helps.insert(name.to_string(), ()).is_some() {
                        return Err(at("bad or repeated HELP".into()));
                    }
                }
                Some("TYPE") => {
                    let name = words.next().ok_or_else(|| at("TYPE without name".into()))?;
                    let kind = words.next().ok_or_else(|| at("TYPE without type".into()))?;
                    if !metric_name(name) {
                        return Err(at("bad metric name".into()));
                    }
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                        return Err(at(format!("unknown type {kind}")));
                    }
                    if seen_samples.contains_key(name) {
                        return Err(at("TYPE after the family's samples".into()));
                    }
                    if types.insert(name.to_string(), kind.to_string()).is_some() {
                        return Err(at("TYPE repeated".into()));
                    }
                }
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
        let name = &line[..name_end];
        if !metric_name(name) {
            return Err(at("bad metric name".into()));
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            labels(&line[name_end..]).map_err(at)?
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let mut fields = rest
            .strip_prefix(' ')
            .ok_or_else(|| at("no space before the value".into()))?
            .split(' ');
        let v = value(fields.next().unwrap_or_default()).map_err(at)?;
        if let Some(ts) = fields.next() {
            ts.parse::<i64>().map_err(|_| at("bad timestamp".into()))?;
        }
        if fields.next().is_some() {
            return Err(at("trailing fields".into()));
        }
        let fam =
            family(name, &types).ok_or_else(|| at("sample of an undeclared family".into()))?;
        seen_samples.insert(fam.to_string(), true);
        if types[fam] == "counter" && v < 0.0 {
            return Err(at("negative counter".into()));
        }
        if samples.insert((name.to_string(), labels), v).is_some() {
            return Err(at("duplicate series".into()));
        }
    }
    let exposition = Exposition { samples, types };
    check_histograms(&exposition)?;
    Ok(exposition)
}

/// Each histogram series: buckets non-decreasing in `le`, a `+Inf` bucket
/// equal to `_count`, and a `_sum`.
fn check_histograms(e: &Exposition) -> Result<(), String> {
    for (fam, _) in e.types.iter().filter(|(_, t)| *t == "histogram") {
        let bucket = format!("{fam}_bucket");
        let mut groups: BTreeMap<BTreeMap<String, String>, Vec<(f64, f64)>> = BTreeMap::new();
        for ((name, labels), v) in &e.samples {
            if *name == bucket {
                let mut rest = labels.clone();
                let le = rest.remove("le").ok_or(format!("{bucket} without le"))?;
                groups.entry(rest).or_default().push((value(&le)?, *v));
            }
        }
        for (labels, mut buckets) in groups {
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            if buckets.windows(2).any(|w| w[1].1 < w[0].1) {
                return Err(format!("{fam}{labels:?}: buckets not cumulative"));
            }
            let inf = buckets.last().filter(|b| b.0.is_infinite()).map(|b| b.1);
            let count = e.samples.get(&(format!("{fam}_count"), labels.clone()));
            if inf.is_none() || inf != count.copied() {
                return Err(format!(
                    "{fam}{labels:?}: +Inf bucket {inf:?} != count {count:?}"
                ));
            }
            if !e
                .samples
                .contains_key(&(format!("{fam}_sum"), labels.clone()))
            {
                return Err(format!("{fam}{labels:?}: no _sum"));
            }
        }
    }
    Ok(())
}

#[test]
fn the_parser_is_strict() {
    let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"q\\\"\"} 3\n";
    assert_eq!(parse(good).unwrap().get("a_total", &[("x", "q\"")]), 3.0);
    for bad in [
        "a_total 1\n",                               // undeclared
        "# TYPE a counter\na 1\na 2\n",              // duplicate
        "# TYPE a counter\na{x=\"1\",x=\"2\"} 1\n",  // label twice
        "# TYPE a counter\na{1x=\"1\"} 1\n",         // label name
        "# TYPE a counter\na{x=1} 1\n",              // unquoted
        "# TYPE a counter\na -1\n",                  // negative counter
        "# TYPE a counter\na 1",                     // no final newline
        "# TYPE a counter\na one\n",                 // value
        "# TYPE a counter\na 1\n# TYPE a counter\n", // TYPE twice
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n",
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?}");
    }
}

async fn scrape(base: &str) -> Exposition {
    let resp = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let text = resp.text().await.unwrap();
    parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Scrapes until `ok` holds of the exposition (a condition polled with a
/// deadline: gauges fall when the server notices a closed stream).
async fn scrape_until(base: &str, what: &str, ok: impl Fn(&Exposition) -> bool) -> Exposition {
    let every = Duration::from_millis(20);
    proc::poll_until(Duration::from_secs(20), every, what, || scrape(base), ok).await
}

const SEND_OK: [(&str, &str); 3] = [
    ("operation", "SendMessage"),
    ("binding", "jsonrpc"),
    ("code", "OK"),
];
const GET_MISSING: [(&str, &str); 3] = [
    ("operation", "GetTask"),
    ("binding", "rest"),
    ("code", "TASK_NOT_FOUND"),
];

#[tokio::test(flavor = "multi_thread")]
async fn counters_move_with_traffic() {
    let serve = Serve::start_with("memory", &["--push-allow-host", "127.0.0.1"]);
    let base = serve.base();
    let before = scrape(&base).await;
    for (family, kind) in [
        ("switchboard_requests_total", "counter"),
        ("switchboard_request_duration_seconds", "histogram"),
        ("switchboard_task_transitions_total", "counter"),
        ("switchboard_running_agents", "gauge"),
        ("switchboard_stream_subscribers", "gauge"),
        ("switchboard_store_commit_duration_seconds", "histogram"),
        ("switchboard_push_deliveries_total", "counter"),
        ("switchboard_push_outbox_depth", "gauge"),
        ("switchboard_open_connections", "gauge"),
    ] {
        assert_eq!(
            before.types.get(family).map(String::as_str),
            Some(kind),
            "{family}"
        );
    }
    assert!(
        before.get("switchboard_open_connections", &[]) >= 1.0,
        "this scrape's own"
    );

    // A blocking send with a webhook: the task completes and is pushed.
    let (hook, mut pushed) =
        proc::webhook(|_, body| serde_json::from_slice(body).unwrap_or(Value::Null)).await;
    let r = proc::rpc(
        &base,
        "SendMessage",
        json!({"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]},
               "configuration": {"taskPushNotificationConfig": {"url": hook}}}),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    // An unknown task over REST: an error with its reason.
    let resp = reqwest::Client::new()
        .get(format!("{base}/tasks/no-such-task"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    tokio::time::timeout(Duration::from_secs(20), pushed.recv())
        .await
        .expect("a push notification arrives")
        .unwrap();

    // The task's notifications go out one after another: wait for the
    // outbox to drain, then every one the webhook got is counted.
    let after = scrape_until(&base, "the outbox drains", |e| {
        e.get("switchboard_push_outbox_depth", &[]) == 0.0
            && e.get(
                "switchboard_push_deliveries_total",
                &[("outcome", "delivered")],
            ) > before.get(
                "switchboard_push_deliveries_total",
                &[("outcome", "delivered")],
            )
    })
    .await;
    let mut received = 1.0;
    while pushed.try_recv().is_ok() {
        received += 1.0;
    }
    assert!(received > 1.0, "a demo task sends several notifications");
    assert_eq!(
        after.get(
            "switchboard_push_deliveries_total",
            &[("outcome", "delivered")]
        ) - before.get(
            "switchboard_push_deliveries_total",
            &[("outcome", "delivered")]
        ),
        received
    );
    assert_eq!(
        after.get("switchboard_requests_total", &SEND_OK),
        before.get("switchboard_requests_total", &SEND_OK) + 1.0
    );
    assert_eq!(
        after.get("switchboard_requests_total", &GET_MISSING),
        before.get("switchboard_requests_total", &GET_MISSING) + 1.0
    );
    assert!(
        after.get(
            "switchboard_request_duration_seconds_count",
            &[("operation", "SendMessage"), ("binding", "jsonrpc")]
        ) >= 1.0
    );
    for state in ["submitted", "working", "completed"] {
        assert!(
            after.get("switchboard_task_transitions_total", &[("state", state)])
                > before.get("switchboard_task_transitions_total", &[("state", state)]),
            "{state}"
        );
    }
    assert!(
        after.get("switchboard_store_commit_duration_seconds_count", &[])
            > before.get("switchboard_store_commit_duration_seconds_count", &[])
    );
    assert!(after.get("switchboard_agent_runs_total", &[]) >= 1.0);
    assert!(after.get("switchboard_connections_total", &[]) >= 3.0);
    // The scrapes themselves are requests of no operation.
    assert!(
        after.get(
            "switchboard_requests_total",
            &[
                ("operation", "none"),
                ("binding", "metrics"),
                ("code", "OK")
            ]
        ) >= 1.0
    );

    // A long task streamed: one subscriber and one running agent while the
    // stream is open, none once it is canceled and closed.
    let resp = reqwest::Client::new()
        .post(&base)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"role": "ROLE_USER", "messageId": "m2", "parts": [{"text": "/long 60"}]}}}))
        .send()
        .await
        .unwrap();
    let mut events = resp.bytes_stream().eventsource();
    let first: Value = serde_json::from_str(&events.next().await.unwrap().unwrap().data).unwrap();
    let task_id = first["result"]["task"]["id"].as_str().unwrap().to_string();
    let open = scrape(&base).await;
    assert_eq!(open.get("switchboard_stream_subscribers", &[]), 1.0);
    assert_eq!(open.get("switchboard_running_agents", &[]), 1.0);
    let r = proc::rpc(&base, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(r["status"]["state"], "TASK_STATE_CANCELED", "{r}");
    // The stream ends with the terminal event.
    while let Some(Ok(_)) = events.next().await {}
    drop(events);
    let closed = scrape_until(&base, "the stream and the run are gone", |e| {
        e.get("switchboard_stream_subscribers", &[]) == 0.0
            && e.get("switchboard_running_agents", &[]) == 0.0
    })
    .await;
    assert!(
        closed.get(
            "switchboard_task_transitions_total",
            &[("state", "canceled")]
        ) >= 1.0
    );
    assert_eq!(
        closed.get(
            "switchboard_requests_total",
            &[
                ("operation", "CancelTask"),
                ("binding", "jsonrpc"),
                ("code", "OK")
            ]
        ),
        1.0
    );
    assert_eq!(closed.get("switchboard_push_outbox_depth", &[]), 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_listen_moves_metrics_off_the_a2a_port() {
    let serve = Serve::start_with("memory", &["--metrics-listen", "127.0.0.1:0"]);
    let line = serve
        .next_line(Duration::from_secs(30))
        .expect("serve prints the metrics address");
    let url = line
        .strip_prefix("switchboard metrics on ")
        .unwrap_or_else(|| panic!("{line}"));
    let base = url.strip_suffix("/metrics").unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    assert_ne!(base, serve.base());
    let resp = reqwest::get(format!("{}/metrics", serve.base()))
        .await
        .unwrap();
    assert_ne!(resp.status(), 200, "not on the A2A port any more");
    // That refused request on the A2A port shows on the metrics port (whose
    // own scrapes are not requests to the A2A server).
    let e = scrape(base).await;
    let refused: Vec<(&BTreeMap<String, String>, f64)> = e
        .samples
        .iter()
        .filter(|((name, labels), _)| {
            name == "switchboard_requests_total" && labels["binding"] == "metrics"
        })
        .map(|((_, labels), v)| (labels, *v))
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].1, 1.0, "{refused:?}");
    assert_ne!(refused[0].0["code"], "OK", "{refused:?}");
    assert_eq!(e.get("switchboard_connections_total", &[]), 1.0);
}
