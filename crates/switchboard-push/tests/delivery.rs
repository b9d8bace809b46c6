//! The delivery worker against real receivers on 127.0.0.1: every event in
//! order, nothing lost across a receiver outage (503s, then not listening
//! at all), dead letters after the retry limit, the headers a receiver gets,
//! and the SSRF guard (every blocked class refused with a clear error, for
//! IP literals and for names resolved by a stub resolver; the allowlist).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use common::options;
use switchboard_core::push::{OutboxItem, OutboxState, PushConfigLimits, PushStore};
use switchboard_core::store::conformance::fixtures::log_of;
use switchboard_core::{CallContext, InMemoryStore, RequestHandler, agent_fn};
use switchboard_protocol::{
    AgentCard, AuthenticationInfo, Message, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, TaskPushNotificationConfig,
};
use switchboard_push::testing::{Received, Receiver, outbox_item};
use switchboard_push::{
    Blocked, CreationRefusal, Deliverer, DeliveryError, FixedAddresses, GuardedResolver,
    InterfaceAddresses, KeySet, PushOptions, PushWorker, Resolve, RetryPolicy, SsrfPolicy,
    StaticResolver, SystemResolver,
};
use tokio_util::sync::CancellationToken;

/// A push worker delivering from a store until [`RunningWorker::stop`].
struct RunningWorker {
    shutdown: CancellationToken,
    worker: PushWorker,
}

impl RunningWorker {
    fn spawn(store: Arc<InMemoryStore>, options: PushOptions) -> RunningWorker {
        let shutdown = CancellationToken::new();
        let worker = PushWorker::spawn(store, options, shutdown.clone()).unwrap();
        RunningWorker { shutdown, worker }
    }

    /// Tells the worker to stop and waits until it has.
    async fn stop(self) {
        self.shutdown.cancel();
        self.worker.join().await;
    }
}

/// The dead letters of `task` once `done` holds of them (polled; panics
/// after `secs`).
async fn dead_letters_when(
    store: &InMemoryStore,
    task: &str,
    secs: u64,
    done: impl Fn(&[OutboxItem]) -> bool,
) -> Vec<OutboxItem> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let dead = store.list_dead_letters("", Some(task), 100).await.unwrap();
        if done(&dead) {
            return dead;
        }
        assert!(tokio::time::Instant::now() < deadline, "{dead:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An agent that emits `steps` working statuses and a chunked artifact.
fn handler(store: Arc<InMemoryStore>) -> RequestHandler {
    let agent = agent_fn(|ctx, events| async move {
        let steps: usize = ctx.text().parse().unwrap_or(5);
        for i in 0..steps {
            events.working(format!("step {i}")).await?;
        }
        let mut w = events.artifact_writer("out");
        for i in 0..steps {
            w.append(switchboard_protocol::Part::text(format!("c{i}")))
                .await?;
        }
        w.finish(switchboard_protocol::Part::text("end")).await?;
        Ok(())
    });
    let limits = PushConfigLimits {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Default::default()
    };
    RequestHandler::builder(agent, AgentCard::new("t", "t", "1"))
        .store(store.clone())
        .push(store, limits)
        .build()
}

fn hook(url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: Some("h1".into()),
        task_id: None,
        url: url.into(),
        token: Some("tok-1".into()),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("s3cret".into()),
        }),
    }
}

async fn run_task(h: &RequestHandler, steps: usize, url: &str) -> String {
    let req = SendMessageRequest {
        tenant: None,
        message: Message::user_text(steps.to_string()),
        configuration: Some(SendMessageConfiguration {
            task_push_notification_config: Some(hook(url)),
            ..Default::default()
        }),
        metadata: None,
    };
    match h
        .send_message(&CallContext::anonymous(), req)
        .await
        .unwrap()
    {
        SendMessageResponse::Task(t) => t.id,
        other => panic!("{other:?}"),
    }
}

/// What the receiver got, as (task id, seq) from the signature claims,
/// checked against the task's log: same events, same order, same bytes.
async fn assert_matches_log(store: &InMemoryStore, task: &str, got: &[Received]) {
    let log = log_of(store, "", task).await;
    assert_eq!(got.len(), log.len(), "one notification per event");
    for (r, ev) in got.iter().zip(&log) {
        let body: StreamResponse = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::to_value(&ev.event).unwrap(),
            "event {} in order",
            ev.seq
        );
    }
}

#[tokio::test]
async fn every_event_arrives_in_order_with_the_right_headers() {
    let store = Arc::new(InMemoryStore::new());
    let h = handler(store.clone());
    let rx = Receiver::start().await;
    let keys = Arc::new(KeySet::generate().unwrap());
    let worker = RunningWorker::spawn(store.clone(), options(keys.clone()));

    let task = run_task(&h, 8, &rx.url()).await;
    let n = log_of(&*store, "", &task).await.len();
    assert!(n >= 18, "a task with many events ({n})");
    let got = rx.wait_for(n, 20).await;
    assert_matches_log(&store, &task, &got).await;

    let first = &got[0];
    assert!(
        matches!(
            serde_json::from_slice::<StreamResponse>(&first.body).unwrap(),
            StreamResponse::Task(_)
        ),
        "the Task-created event is delivered first"
    );
    assert_eq!(
        first.header("content-type").unwrap(),
        "application/a2a+json"
    );
    assert_eq!(first.header("authorization").unwrap(), "Bearer s3cret");
    assert_eq!(first.header("x-a2a-notification-token").unwrap(), "tok-1");
    let verifier = switchboard_client::push::PushVerifier::from_jwk_set(keys.jwk_set(), rx.url())
        .issuer("http://agent.test");
    for (i, r) in got.iter().enumerate() {
        let v = verifier.verify(&r.headers, &r.body).await.unwrap();
        assert_eq!(v.claims.task_id, task);
        assert_eq!(v.claims.seq, i as u64 + 1, "seq in the claims, in order");
        assert_eq!(v.token.as_deref(), Some("tok-1"));
    }
    // The last ack may still be on its way back from the receiver; a stop
    // lets attempts in flight settle.
    worker.stop().await;
    assert_eq!(store.pending_count().await.unwrap(), 0);
}

#[tokio::test]
async fn a_receiver_that_is_down_for_a_while_gets_everything() {
    let store = Arc::new(InMemoryStore::new());
    let h = handler(store.clone());
    let mut rx = Receiver::start().await;
    let keys = Arc::new(KeySet::generate().unwrap());
    let worker = RunningWorker::spawn(store.clone(), options(keys));

    // First it answers 503 to everything...
    rx.answer(503);
    let task = run_task(&h, 6, &rx.url()).await;
    rx.wait_refused(2, 10).await;
    assert!(rx.accepted().is_empty());
    // ...then it is not even listening...
    rx.go_down().await;
    let task2 = run_task(&h, 4, &rx.url()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // ...then it comes back.
    rx.answer(200);
    rx.restart().await;
    let n1 = log_of(&*store, "", &task).await.len();
    let n2 = log_of(&*store, "", &task2).await.len();
    let got = rx.wait_for(n1 + n2, 30).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got_after = rx.accepted();
    assert_eq!(got_after.len(), got.len(), "nothing extra arrives");
    let of = |t: &str| -> Vec<Received> {
        got.iter()
            .filter(|r| {
                serde_json::from_slice::<serde_json::Value>(&r.body)
                    .unwrap()
                    .to_string()
                    .contains(t)
            })
            .cloned()
            .collect()
    };
    assert_matches_log(&store, &task, &of(&task)).await;
    assert_matches_log(&store, &task2, &of(&task2)).await;
    assert_eq!(store.pending_count().await.unwrap(), 0, "0 lost, 0 pending");
    worker.stop().await;
}

#[tokio::test]
async fn dead_letter_after_the_retry_limit() {
    let store = Arc::new(InMemoryStore::new());
    let h = handler(store.clone());
    let rx = Receiver::start().await;
    rx.answer(500);
    let keys = Arc::new(KeySet::generate().unwrap());
    let mut o = options(keys);
    o.retry.max_attempts = 3;
    let worker = RunningWorker::spawn(store.clone(), o);
    let task = run_task(&h, 1, &rx.url()).await;
    let n = log_of(&*store, "", &task).await.len();
    let dead = dead_letters_when(&store, &task, 20, |dead| dead.len() == n).await;
    assert_eq!(
        dead.iter().map(|d| d.seq).collect::<Vec<_>>(),
        (1..=n as u64).collect::<Vec<_>>(),
        "every event was given up on, in order"
    );
    for d in &dead {
        assert_eq!(d.state, OutboxState::Dead);
        assert_eq!(d.attempts, 3, "exactly the retry limit");
        assert!(
            d.last_error.as_deref().unwrap().contains("HTTP 500"),
            "{:?}",
            d.last_error
        );
    }
    assert_eq!(rx.refused(), 3 * n, "3 attempts per event, no more");
    assert_eq!(store.pending_count().await.unwrap(), 0);
    worker.stop().await;
}

fn item(url: &str) -> OutboxItem {
    outbox_item(url, 1, "{}")
}

fn deliverer(policy: SsrfPolicy, resolver: StaticResolver) -> Deliverer {
    Deliverer::new(
        Arc::new(KeySet::generate().unwrap()),
        "http://agent.test",
        policy,
        Arc::new(resolver),
        Duration::from_secs(2),
        Duration::from_secs(300),
    )
    .unwrap()
}

/// Each blocked class, as an IP literal and behind a name, is refused
/// before any connection is made, with a message naming the class and the
/// allowlist flag. (No packet leaves: refusals happen before connecting.)
#[tokio::test]
async fn ssrf_guard_refuses_every_internal_class() {
    let cases: &[(&str, &str)] = &[
        ("127.0.0.1", "loopback"),
        ("127.9.9.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("::1", "IPv6 loopback"),
        ("::", "unspecified"),
        ("fd00::1", "unique-local"),
        ("fe80::1", "link-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "metadata"),
        ("64:ff9b::a00:1", "private"),
        ("198.18.0.1", "benchmarking"),
        ("240.0.0.1", "reserved"),
        ("192.0.0.9", "IETF protocol assignment"),
        ("192.0.2.2", "documentation"),
        ("2001:db8::1", "documentation"),
        ("2002:7f00:1::", "6to4"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo"),
    ];
    let mut resolver = StaticResolver::new();
    for (i, (ip, _)) in cases.iter().enumerate() {
        resolver = resolver.with(&format!("h{i}.internal.test"), &[ip.parse().unwrap()]);
    }
    // A name with one public and one internal answer is refused as a whole.
    resolver = resolver.with(
        "mixed.test",
        &[
            "93.184.215.14".parse().unwrap(),
            "10.0.0.9".parse().unwrap(),
        ],
    );
    let d = deliverer(SsrfPolicy::default(), resolver);
    for (i, (ip, class)) in cases.iter().enumerate() {
        let parsed: IpAddr = ip.parse().unwrap();
        let literal = match parsed {
            IpAddr::V4(_) => format!("http://{ip}:9/hook"),
            IpAddr::V6(_) => format!("http://[{ip}]:9/hook"),
        };
        for url in [literal, format!("http://h{i}.internal.test:9/hook")] {
            let err = d.deliver(&item(&url)).await.unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, DeliveryError::Refused(_)),
                "{url}: expected a refusal, got {msg}"
            );
            assert!(msg.contains(class), "{url}: {msg}");
            assert!(msg.contains("--push-allow-host"), "{url}: {msg}");
        }
    }
    let err = d
        .deliver(&item("http://mixed.test/hook"))
        .await
        .unwrap_err();
    assert!(matches!(err, DeliveryError::Refused(_)), "{err}");
    assert!(err.to_string().contains("resolved to 10.0.0.9"), "{err}");
}

#[tokio::test]
async fn the_allowlist_opens_exact_hosts_only() {
    let rx = Receiver::start().await;
    let port = rx.addr.port();
    let resolver = StaticResolver::new()
        .with("receiver.test", &["127.0.0.1".parse().unwrap()])
        .with("other.test", &["127.0.0.1".parse().unwrap()]);
    let policy = SsrfPolicy {
        guard: true,
        allow_hosts: vec!["receiver.test".into(), "127.0.0.1".into()],
        ..Default::default()
    };
    let d = deliverer(policy, resolver);
    let allowed = [
        ("127.0.0.1", "an allowlisted IP"),
        ("RECEIVER.test", "an allowlisted name (case-insensitive)"),
    ];
    for (host, what) in allowed {
        let url = format!("http://{host}:{port}/hook");
        assert_eq!(d.deliver(&item(&url)).await.unwrap(), 200, "{what}");
    }
    let err = d
        .deliver(&item(&format!("http://other.test:{port}/hook")))
        .await
        .unwrap_err();
    assert!(matches!(err, DeliveryError::Refused(_)), "{err}");
    assert_eq!(rx.accepted().len(), 2);

    // With the guard off, anything goes (tests, trusted networks).
    let d = Deliverer::new(
        Arc::new(KeySet::generate().unwrap()),
        "x",
        SsrfPolicy {
            guard: false,
            allow_hosts: vec![],
            ..Default::default()
        },
        Arc::new(SystemResolver),
        Duration::from_secs(2),
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(
        d.deliver(&item(&format!("http://localhost:{port}/hook")))
            .await
            .unwrap(),
        200
    );
}

/// A refusal is a failed attempt like any other: recorded on the outbox
/// item with its reason, retried, and dead-lettered at the limit.
#[tokio::test]
async fn refusals_are_recorded_on_the_outbox_item() {
    let store = Arc::new(InMemoryStore::new());
    let agent = agent_fn(|_ctx, events| async move {
        events.working("w").await?;
        Ok(())
    });
    // Configs accept any host here; the worker's guard must still refuse.
    let limits = PushConfigLimits {
        ssrf_guard: false,
        ..Default::default()
    };
    let h = RequestHandler::builder(agent, AgentCard::new("t", "t", "1"))
        .store(store.clone())
        .push(store.clone(), limits)
        .build();
    let mut o = PushOptions::new("http://agent.test", Arc::new(KeySet::generate().unwrap()));
    o.resolver = Arc::new(
        StaticResolver::new().with("metadata.test", &["169.254.169.254".parse().unwrap()]),
    );
    o.poll_interval = Duration::from_millis(20);
    o.retry = RetryPolicy {
        base: Duration::from_millis(10),
        max: Duration::from_millis(20),
        max_attempts: 2,
    };
    let worker = RunningWorker::spawn(store.clone(), o);
    let task = run_task(&h, 1, "http://metadata.test/latest/meta-data").await;
    let dead = dead_letters_when(&store, &task, 10, |dead| !dead.is_empty()).await;
    let e = dead[0].last_error.clone().unwrap();
    assert!(e.contains("SSRF guard refused metadata.test"), "{e}");
    assert!(e.contains("169.254.169.254"), "{e}");
    worker.stop().await;
}

/// The host's own addresses are refused at delivery: a listener bound to
/// every interface (as a service on `0.0.0.0` is) and a webhook to one of
/// this machine's non-loopback addresses, as a literal and behind a name,
/// are refused before any connection, so the listener is never reached.
#[tokio::test]
async fn the_hosts_own_addresses_are_refused_at_delivery() {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let interfaces = InterfaceAddresses::read().unwrap();
    assert!(
        interfaces.contains(&IpAddr::from([127, 0, 0, 1])),
        "the interfaces are read: {interfaces:?}"
    );
    let Some(own) = interfaces.iter().copied().find(|ip| !ip.is_loopback()) else {
        eprintln!("skipped: this machine has no non-loopback interface address");
        return;
    };
    let d = deliverer(
        SsrfPolicy::default(),
        StaticResolver::new().with("own.test", &[own]),
    );
    let literal = match own {
        IpAddr::V4(v4) => format!("http://{v4}:{port}/hook"),
        IpAddr::V6(v6) => format!("http://[{v6}]:{port}/hook"),
    };
    for url in [literal, format!("http://own.test:{port}/hook")] {
        let err = d.deliver(&item(&url)).await.unwrap_err();
        let DeliveryError::Refused(refusal) = &err else {
            panic!("{url}: expected a refusal, got {err}");
        };
        assert_eq!(refusal.ip, own, "{url}");
        eprintln!("{url}: {err}");
    }
    // A refusal comes before connecting: nothing is waiting to be accepted.
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener was reached: {accepted:?}"
    );
}

/// An address is refused as the host's own even when it is an ordinary
/// public address (as a host's public address is): the class says so.
#[test]
fn an_address_of_the_host_is_refused_as_such() {
    let public: IpAddr = "93.184.215.14".parse().unwrap();
    let policy = SsrfPolicy {
        local: Arc::new(FixedAddresses(vec![public])),
        ..Default::default()
    };
    let refusal = policy.check("agent.example", public).unwrap_err();
    assert_eq!(refusal.class, Blocked::ThisHost);
    assert!(
        refusal
            .to_string()
            .contains("an address of this server's host"),
        "{refusal}"
    );
    // IPv4-mapped, the same address.
    let mapped: IpAddr = "::ffff:93.184.215.14".parse().unwrap();
    assert_eq!(
        policy.check("agent.example", mapped).unwrap_err().class,
        Blocked::ThisHost
    );
    assert!(
        policy
            .check("other.example", "93.184.215.15".parse().unwrap())
            .is_ok()
    );
}

/// Configs are checked by the same guard when they are created: a name is
/// resolved and refused for a blocked or own address, a name that does not
/// resolve is refused, an ordinary name and literal pass, and an
/// allowlisted host is not looked at.
#[tokio::test]
async fn creation_resolves_the_host_with_the_delivery_guard() {
    let own: IpAddr = "93.184.215.14".parse().unwrap();
    let resolver = StaticResolver::new()
        .with("loop.test", &["127.0.0.1".parse().unwrap()])
        .with("meta.test", &["169.254.169.254".parse().unwrap()])
        .with("own.test", &[own])
        .with("public.test", &["93.184.215.15".parse().unwrap()]);
    let policy = SsrfPolicy {
        allow_hosts: vec!["allowed.test".into()],
        local: Arc::new(FixedAddresses(vec![own])),
        ..Default::default()
    };
    let guard = GuardedResolver::new(Arc::new(resolver), Arc::new(policy));
    for (host, class) in [
        ("loop.test", "loopback"),
        ("meta.test", "metadata"),
        ("own.test", "this server's host"),
        ("93.184.215.14", "this server's host"),
        ("[::1]", "loopback"),
    ] {
        let err = guard.check_host(host).await.unwrap_err();
        assert!(matches!(err, CreationRefusal::Refused(_)), "{host}: {err}");
        assert!(err.to_string().contains(class), "{host}: {err}");
        assert!(
            err.to_string().contains("--push-allow-host"),
            "{host}: {err}"
        );
    }
    let err = guard.check_host("missing.test").await.unwrap_err();
    assert!(
        matches!(err, CreationRefusal::Unresolved { .. }),
        "missing.test: {err}"
    );
    assert!(err.to_string().contains("does not resolve"), "{err}");
    for host in ["public.test", "93.184.215.15", "allowed.test"] {
        guard.check_host(host).await.unwrap();
    }
}

/// A resolver that never answers.
#[derive(Debug)]
struct Silent;

impl Resolve for Silent {
    fn resolve(
        &self,
        _host: &str,
    ) -> futures::future::BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        Box::pin(futures::future::pending())
    }
}

/// Creating a config stays bounded in time: a resolver that never answers
/// is given up on after `CREATION_RESOLVE_TIMEOUT` (paused clock).
#[tokio::test(start_paused = true)]
async fn creation_gives_up_on_a_resolver_that_never_answers() {
    let guard = GuardedResolver::new(
        Arc::new(Silent),
        Arc::new(SsrfPolicy {
            local: Arc::new(FixedAddresses::default()),
            ..Default::default()
        }),
    );
    let err = guard.check_host("slow.test").await.unwrap_err();
    assert!(matches!(err, CreationRefusal::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("took longer than 5s"), "{err}");
}
