//! A short fuzzing campaign in the test suite: every target, a few thousand
//! inputs each, a fixed seed (so a failure here reproduces with
//! `cargo run -p switchboard-fuzz -- --seed 20261125 --inputs 3000`).

use switchboard_fuzz::{Finding, Harness, Target};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_decoder_survives_a_short_campaign() {
    let harness = Harness::start().await;
    let report = switchboard_fuzz::run(&harness, Target::ALL, 3_000, 20_261_125, |_, _| {}).await;
    for (target, n) in &report.inputs {
        println!("{target}: {n} inputs");
    }
    println!(
        "fuzz: {} inputs, {} findings",
        report.total(),
        report.failures.len()
    );
    let shown: Vec<String> = report
        .failures
        .iter()
        .map(|f| {
            let head = String::from_utf8_lossy(&f.input[..f.input.len().min(60)]).into_owned();
            format!("{} #{}: {:?} ({head:?})", f.target, f.index, f.finding)
        })
        .collect();
    assert!(report.findings == 0, "{}", shown.join("\n"));
    assert_eq!(report.total(), 3_000 * Target::ALL.len() as u64);
}

#[tokio::test(start_paused = true)]
async fn the_oracle_reports_panics_server_errors_and_hangs() {
    use axum::routing::post;
    // The oracle must be able to fail: a valid seed passes the real server,
    // and a server that panics, answers 500 or never answers is reported.
    let harness = Harness::start().await;
    let seed = harness.seeds(Target::JsonRpc).remove(0);
    assert_eq!(harness.run(Target::JsonRpc, &seed).await, Ok(()));

    let broken = |router| Harness::with_router(router);
    let panics = broken(axum::Router::new().route(
        "/",
        post(|| async {
            if true {
                panic!("decoder bug");
            }
        }),
    ));
    assert_eq!(
        panics.run(Target::JsonRpc, b"{}").await,
        Err(Finding::Panic("decoder bug".into()))
    );
    let fails = broken(axum::Router::new().route(
        "/",
        post(|| async { (http::StatusCode::INTERNAL_SERVER_ERROR, "oops") }),
    ));
    assert_eq!(
        fails.run(Target::JsonRpc, b"{}").await,
        Err(Finding::ServerError(500, "oops".into()))
    );
    let hangs = broken(axum::Router::new().route("/", post(std::future::pending::<()>)));
    assert_eq!(hangs.run(Target::JsonRpc, b"{}").await, Err(Finding::Hang));
}
