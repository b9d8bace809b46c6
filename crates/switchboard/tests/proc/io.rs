//! What a finished command or a whole HTTP answer says, shared by the
//! process harness (`proc`) and the in-process one (`util`): the checks
//! on a command's exit, one request read to its end under time bounds,
//! and the `--api-key-hash` value for a few keys.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::time::Duration;

/// The standard output of a command that must have succeeded (a failure
/// shows `what` and both outputs).
pub fn success_stdout_of(what: &str, out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The standard output of a command that must have succeeded (a failure
/// shows both outputs).
pub fn success_stdout(out: &std::process::Output) -> String {
    success_stdout_of("", out)
}

/// The standard error of a command that must have failed.
pub fn failure_stderr(out: &std::process::Output) -> String {
    assert!(
        !out.status.success(),
        "it succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Sends `request` with `headers` added and reads its whole answer: the
/// status, the headers and the body. The answer must start within 30 s and
/// end within 60 s more.
pub async fn whole_answer(
    mut request: reqwest::RequestBuilder,
    headers: &[(&str, &str)],
) -> (
    reqwest::StatusCode,
    reqwest::header::HeaderMap,
    bytes::Bytes,
) {
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = tokio::time::timeout(Duration::from_secs(30), request.send())
        .await
        .expect("the request is answered within 30 s")
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(Duration::from_secs(60), response.bytes())
        .await
        .expect("the answer ends within 60 s")
        .unwrap();
    (status, headers, body)
}

/// A message id unique to this moment.
pub fn uuid() -> String {
    format!(
        "m-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// The `--api-key-hash` value that gives each `(key, caller)` its caller
/// name: `hash=caller,hash=caller`.
pub fn api_key_hashes(keys: &[(&str, &str)]) -> String {
    keys.iter()
        .map(|(key, caller)| format!("{}={caller}", switchboard_auth::hash_api_key(key)))
        .collect::<Vec<_>>()
        .join(",")
}
