//! The gRPC side of the load benchmark (`bench/run.sh`, row `sb-grpc-task`).
//!
//! A load generator that only speaks HTTP (oha) can still drive a gRPC
//! server: a unary gRPC call is an HTTP/2 POST to `/<package>.<Service>/<Rpc>`
//! with `content-type: application/grpc`, `te: trailers` and a body that is
//! one *length-prefixed message*: 1 byte "compressed" flag (0), 4 bytes
//! big-endian length, then the protobuf bytes (gRPC over HTTP/2, "Requests").
//! The answer has the same framing, and the call's outcome is in the
//! `grpc-status` trailer, which such a generator never reads: HTTP 200 only
//! says the call reached the server. Hence the second mode, used by the
//! bench's check step, which decodes a saved answer body and insists on a
//! real `Task`.
//!
//! ```text
//! grpc_bench_frame request FILE   # writes the SendMessageRequest frame (same message as the JSON-RPC body)
//! grpc_bench_frame check FILE     # FILE = a response body; prints the task id if it holds a completed Task
//! ```

use std::error::Error;
use std::process::ExitCode;

use prost::Message as _;
use switchboard_proto::v1 as pb;

/// The request every benchmark row sends: user message `m1`, "hello world"
/// (the JSON-RPC and REST rows send the same message as JSON).
fn request() -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: "m1".into(),
            role: pb::Role::User as i32,
            parts: vec![pb::Part {
                content: Some(pb::part::Content::Text("hello world".into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Wraps protobuf bytes in one uncompressed gRPC length-prefixed message.
fn frame(payload: &[u8]) -> Result<Vec<u8>, Box<dyn Error>> {
    let len = u32::try_from(payload.len())?;
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(0);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// The payload of the single message in `body`, refusing compressed or
/// truncated frames and trailing bytes (a unary answer has exactly one).
fn unframe(body: &[u8]) -> Result<&[u8], Box<dyn Error>> {
    let [flag, a, b, c, d, rest @ ..] = body else {
        return Err(format!("{} bytes: not a gRPC message (need at least 5)", body.len()).into());
    };
    if *flag != 0 {
        return Err("compressed gRPC message (flag 1): not what the server should send".into());
    }
    let len = usize::try_from(u32::from_be_bytes([*a, *b, *c, *d]))?;
    if rest.len() != len {
        return Err(format!("frame says {len} bytes, body has {}", rest.len()).into());
    }
    Ok(rest)
}

fn check(body: &[u8]) -> Result<String, Box<dyn Error>> {
    let resp = pb::SendMessageResponse::decode(unframe(body)?)?;
    match resp.payload {
        Some(pb::send_message_response::Payload::Task(task)) => {
            let state = task.status.as_ref().map_or(0, |s| s.state);
            if state != pb::TaskState::Completed as i32 {
                return Err(format!("task {} is in state {state}, not COMPLETED", task.id).into());
            }
            if task.id.is_empty() {
                return Err("task without an id".into());
            }
            Ok(task.id)
        }
        Some(pb::send_message_response::Payload::Message(_)) => {
            Err("a Message, not a Task (is the server in task mode?)".into())
        }
        None => Err("an empty SendMessageResponse".into()),
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.as_slice() {
        [_, mode, path] if mode == "request" => {
            std::fs::write(path, frame(&request().encode_to_vec())?)?;
            Ok(())
        }
        [_, mode, path] if mode == "check" => {
            println!("{}", check(&std::fs::read(path)?)?);
            Ok(())
        }
        _ => Err("usage: grpc_bench_frame request|check FILE".into()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grpc_bench_frame: {e}");
            ExitCode::FAILURE
        }
    }
}
