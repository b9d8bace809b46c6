//! Inputs from seeds: a small deterministic PRNG and a mutator that knows
//! both bytes and JSON.
//!
//! Coverage-guided fuzzers (libFuzzer, AFL) need a nightly compiler or
//! instrumentation this project cannot assume, so the fuzzer is
//! *structure-aware* instead: it starts from valid requests of every
//! operation and applies the edits that find decoder bugs in practice —
//! bit flips, truncation, splices between two requests, boundary numbers,
//! deep nesting, huge or odd strings, and, when the input parses as JSON,
//! replacing a random node with a value of another type. Everything derives
//! from one `u64` seed, so a finding is reproduced by its seed and index.

use serde_json::{Map, Value};

/// splitmix64: fast, and every seed gives a full-period stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Byte strings that break parsers more often than random bytes do.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"null",
    b"true",
    b"-",
    b"0",
    b"-1",
    b"1e999",
    b"-0.0",
    b"18446744073709551616",
    b"9223372036854775807",
    b"\\u0000",
    b"\\ud800",
    b"\\\"",
    b"\xff",
    b"\x00",
    b"\xc3\x28",
    b"\r\n",
    b"%00",
    b"%2F",
    b"..",
    b"/",
    b":",
    b"\"taskId\"",
    b"\"contextId\"",
    b"\"messageId\"",
    b"\"parts\"",
    b"\"metadata\"",
    b"\"historyLength\"",
    b"\"pageSize\"",
    b"\"pageToken\"",
    b"\"role\"",
    b"\"kind\"",
    b"\"text\"",
    b"\"data\"",
    b"\"url\"",
    b"\"raw\"",
    b"\"id\"",
    b"\"tenant\"",
];

/// Field names of A2A and AG-UI objects, for JSON mutations.
const NAMES: &[&str] = &[
    "id",
    "taskId",
    "contextId",
    "messageId",
    "parts",
    "text",
    "data",
    "url",
    "raw",
    "mediaType",
    "filename",
    "metadata",
    "role",
    "kind",
    "status",
    "state",
    "message",
    "history",
    "artifacts",
    "artifactId",
    "historyLength",
    "pageSize",
    "pageToken",
    "configuration",
    "acceptedOutputModes",
    "returnImmediately",
    "pushNotificationConfig",
    "authentication",
    "scheme",
    "credentials",
    "token",
    "tenant",
    "extensions",
    "referenceTaskIds",
    "trackers",
    "progress",
    "total",
    "threadId",
    "runId",
    "tools",
    "messages",
    "state",
    "forwardedProps",
    "context",
    "content",
    "toolCalls",
];

/// An input derived from `seed` (and, for splices, `other`), at most
/// `max_len` bytes long.
pub fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(11) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next_u64() as u8;
            }
            2 => {
                let at = rng.below(data.len() + 1);
                let token = *rng.pick(TOKENS);
                data.splice(at..at, token.iter().copied());
            }
            3 if !data.is_empty() => {
                let from = rng.below(data.len());
                let to = (from + 1 + rng.below(16)).min(data.len());
                data.drain(from..to);
            }
            4 if !data.is_empty() => {
                let from = rng.below(data.len());
                let to = (from + 1 + rng.below(32)).min(data.len());
                let copy: Vec<u8> = data[from..to].to_vec();
                let at = rng.below(data.len() + 1);
                data.splice(at..at, copy);
            }
            5 if !other.is_empty() => {
                let cut = rng.below(data.len() + 1);
                let from = rng.below(other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            6 => {
                let len = rng.below(data.len() + 1);
                data.truncate(len);
            }
            7..=9 => {
                if let Some(json) = mutate_json(rng, &data) {
                    data = json;
                }
            }
            _ => {
                // Nesting far past any sane depth.
                let depth = 1 + rng.below(20_000);
                let open = if rng.below(2) == 0 { b'[' } else { b'{' };
                let at = rng.below(data.len() + 1);
                data.splice(at..at, std::iter::repeat_n(open, depth));
            }
        }
    }
    data.truncate(max_len);
    data
}

/// Replaces one random node of `data` (if it is JSON) with a random value,
/// or adds a random member to a random object.
fn mutate_json(rng: &mut Rng, data: &[u8]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(data).ok()?;
    let count = count_nodes(&value);
    let target = rng.below(count);
    let mut seen = 0;
    replace_node(rng, &mut value, target, &mut seen);
    serde_json::to_vec(&value).ok()
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count_nodes).sum(),
        Value::Object(o) => o.values().map(count_nodes).sum(),
        _ => 0,
    }
}

fn replace_node(rng: &mut Rng, v: &mut Value, target: usize, seen: &mut usize) -> bool {
    if *seen == target {
        if let (Value::Object(o), 0) = (&mut *v, rng.below(3)) {
            o.insert((*rng.pick(NAMES)).to_string(), random_value(rng, 3));
        } else {
            *v = random_value(rng, 3);
        }
        return true;
    }
    *seen += 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace_node(rng, x, target, seen)),
        Value::Object(o) => o.values_mut().any(|x| replace_node(rng, x, target, seen)),
        _ => false,
    }
}

/// A value of a random type, chosen among the ones decoders get wrong.
pub fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 8 } else { 11 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => Value::from(*rng.pick(&[0i64, -1, 1, i64::MAX, i64::MIN, 2_147_483_648])),
        3 => Value::from(*rng.pick(&[u64::MAX, 1 << 53, 4_294_967_296])),
        4 => Value::from(*rng.pick(&[0.5f64, -0.0, 1e308, -1e-308, 3.9e15])),
        5 => Value::from(""),
        6 => Value::from(*rng.pick(&[
            "TASK_STATE_WORKING",
            "ROLE_USER",
            "user",
            "agent",
            "completed",
            "\u{0}",
            "🦀",
            "../../etc",
            "a:b/c",
        ])),
        7 => Value::from("x".repeat(1 + rng.below(70_000))),
        8 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        9 => {
            let mut o = Map::new();
            for _ in 0..rng.below(4) {
                o.insert((*rng.pick(NAMES)).to_string(), random_value(rng, depth - 1));
            }
            Value::Object(o)
        }
        _ => Value::Array(vec![Value::Null; rng.below(5_000)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let seed = br#"{"a":[1,2,{"b":"c"}]}"#;
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..200)
                .map(|_| mutate(&mut rng, seed, b"[true]", 1 << 20))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|i| i.len() <= 1 << 20));
    }
}
